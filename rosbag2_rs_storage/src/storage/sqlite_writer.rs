//! SQLite3 (`.db3`) storage writer, schema version 4, with rosbag2's presets: `none` (fast:
//! in-memory journal, no syncs) and `resilient` (write-ahead log, normal syncs).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::Connection;

use crate::error::{Result, StorageError};
use crate::formats::{StorageId, StoragePreset};
use crate::message::{SerializedMessage, TopicMetadata};
use crate::metadata::{BagMetadata, METADATA_VERSION};
use crate::qos;
use crate::storage::plugin::StorageWriter;
use rosbag2_rs_codec::MessageDefinition;

/// The schema version written.
pub const SCHEMA_VERSION: i64 = 4;
/// A transaction is committed after this many messages (and on every flush).
const COMMIT_EVERY: usize = 4096;

const CREATE_SCHEMA: &str = "
CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);
CREATE TABLE metadata(id INTEGER PRIMARY KEY, metadata_version INTEGER NOT NULL, metadata TEXT NOT NULL);
CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, serialization_format TEXT NOT NULL,
                    offered_qos_profiles TEXT NOT NULL, type_description_hash TEXT NOT NULL);
CREATE TABLE message_definitions(id INTEGER PRIMARY KEY, topic_type TEXT NOT NULL, encoding TEXT NOT NULL,
                                 encoded_message_definition TEXT NOT NULL, type_description_hash TEXT NOT NULL);
CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, data BLOB NOT NULL);
CREATE INDEX timestamp_idx ON messages (timestamp ASC);
";

/// Writes one `.db3` file.
pub struct SqliteWriter {
    path: PathBuf,
    conn: Connection,
    topics: HashMap<Arc<str>, i64>,
    definitions: HashSet<String>,
    uncommitted: usize,
    bytes: u64,
}

impl SqliteWriter {
    /// Creates `path` with the rosbag2 schema; `preset` is [`StoragePreset::None`] or
    /// [`StoragePreset::Resilient`].
    pub fn create(path: PathBuf, preset: StoragePreset, pragmas_after: &[String]) -> Result<Self> {
        preset.check_for(StorageId::Sqlite3)?;
        let pragmas = match preset {
            StoragePreset::Resilient => "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            _ => "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;",
        };
        let sql = |source| StorageError::Sqlite {
            path: path.clone(),
            source,
        };
        let conn = Connection::open(&path).map_err(sql)?;
        conn.execute_batch(pragmas).map_err(sql)?;
        // A storage configuration file's pragmas come after the preset's, as in rosbag2.
        for pragma in pragmas_after {
            conn.execute_batch(pragma).map_err(sql)?;
        }
        conn.execute_batch(CREATE_SCHEMA).map_err(sql)?;
        let distro = std::env::var("ROS_DISTRO").unwrap_or_default();
        conn.execute(
            "INSERT INTO schema (schema_version, ros_distro) VALUES (?1, ?2)",
            (SCHEMA_VERSION, distro),
        )
        .map_err(sql)?;
        Ok(Self {
            path,
            conn,
            topics: HashMap::new(),
            definitions: HashSet::new(),
            uncommitted: 0,
            bytes: 4096 * 8,
        })
    }

    fn sql_err(&self, source: rusqlite::Error) -> StorageError {
        StorageError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn commit(&mut self) -> Result<()> {
        if self.uncommitted > 0 {
            self.conn
                .execute_batch("COMMIT")
                .map_err(|e| self.sql_err(e))?;
            self.uncommitted = 0;
        }
        Ok(())
    }
}

impl StorageWriter for SqliteWriter {
    fn path(&self) -> &Path {
        &self.path
    }

    fn create_topic(
        &mut self,
        topic: &TopicMetadata,
        definition: &MessageDefinition,
    ) -> Result<()> {
        if self.topics.contains_key(topic.name.as_str()) {
            return Ok(());
        }
        self.commit()?;
        self.conn
            .execute(
                "INSERT INTO topics (name, type, serialization_format, offered_qos_profiles, type_description_hash) VALUES (?1, ?2, ?3, ?4, ?5)",
                (&topic.name, &topic.type_name, &topic.serialization_format, qos::serialize_profiles(&topic.offered_qos_profiles), &topic.type_description_hash),
            )
            .map_err(|e| self.sql_err(e))?;
        self.topics
            .insert(topic.name.as_str().into(), self.conn.last_insert_rowid());
        if !definition.topic_type.is_empty()
            && self.definitions.insert(definition.topic_type.clone())
        {
            let hash = if definition.type_description_hash.is_empty() {
                &topic.type_description_hash
            } else {
                &definition.type_description_hash
            };
            self.conn
                .execute(
                    "INSERT INTO message_definitions (topic_type, encoding, encoded_message_definition, type_description_hash) VALUES (?1, ?2, ?3, ?4)",
                    (&definition.topic_type, &definition.encoding, &definition.encoded_message_definition, hash),
                )
                .map_err(|e| self.sql_err(e))?;
        }
        Ok(())
    }

    fn write(&mut self, message: &SerializedMessage) -> Result<()> {
        let Some(&topic_id) = self.topics.get(&message.topic) else {
            return Err(StorageError::InvalidArgument(format!(
                "{}: topic '{}' was not created before writing to it",
                self.path.display(),
                message.topic
            )));
        };
        if self.uncommitted == 0 {
            self.conn
                .execute_batch("BEGIN")
                .map_err(|e| self.sql_err(e))?;
        }
        self.uncommitted += 1;
        let inserted = self
            .conn
            .prepare_cached("INSERT INTO messages (timestamp, topic_id, data) VALUES (?1, ?2, ?3)")
            .and_then(|mut s| s.execute((message.recv_timestamp, topic_id, &message.data[..])));
        inserted.map_err(|e| self.sql_err(e))?;
        self.bytes += message.data.len() as u64 + 3 * 8;
        if self.uncommitted >= COMMIT_EVERY {
            self.commit()?;
        }
        Ok(())
    }

    fn bytes_written(&self) -> u64 {
        self.bytes
    }

    fn flush(&mut self) -> Result<()> {
        self.commit()
    }

    fn update_metadata(&mut self, metadata: &BagMetadata) -> Result<()> {
        self.commit()?;
        self.conn
            .execute(
                "INSERT INTO metadata (metadata_version, metadata) VALUES (?1, ?2)",
                (METADATA_VERSION, metadata.to_yaml_string()),
            )
            .map_err(|e| self.sql_err(e))?;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<()> {
        self.commit()?;
        let path = self.path.clone();
        self.conn
            .close()
            .map_err(|(_, source)| StorageError::Sqlite { path, source })
    }
}
