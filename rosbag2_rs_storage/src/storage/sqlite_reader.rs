//! SQLite3 (`.db3`) storage reader for schema versions 1 to 4, including bare databases with no
//! `schema` or `metadata` table (as the RealSense SDK 2.58+ writes them).
//!
//! Messages are read in pages ordered by `(timestamp, id)` and resumed after the last row read
//! (keyset pagination on the `timestamp` index), so seeking is an index lookup and no statement
//! outlives a call.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{Connection, OpenFlags, OptionalExtension};

use crate::error::{Result, StorageError};
use crate::filter::TopicFilter;
use crate::formats::StorageId;
use crate::message::{SerializedMessage, TopicMetadata};
use crate::metadata::{BagMetadata, FileInformation, TopicInformation};
use crate::qos;
use crate::storage::plugin::StorageReader;
use rosbag2_rs_codec::MessageDefinition;

/// A page ends after this many rows or bytes, whichever comes first.
const PAGE_ROWS: usize = 1024;
const PAGE_BYTES: usize = 16 << 20;

struct TopicEntry {
    name: Arc<str>,
    selected: bool,
}

/// Reads one `.db3` file.
pub struct SqliteReader {
    path: PathBuf,
    conn: Connection,
    schema_version: i64,
    topics: Vec<TopicInformation>,
    by_id: HashMap<i64, TopicEntry>,
    definitions: Vec<MessageDefinition>,
    info: FileInformation,
    embedded: Option<BagMetadata>,
    /// Next row to read: the first with `(timestamp, id) > cursor`.
    cursor: (i64, i64),
    selection_sql: String,
    buffer: VecDeque<SerializedMessage>,
    exhausted: bool,
}

/// Refuses a database file shorter than its header says: SQLite reads the missing pages as
/// zeros, so rows whose overflow pages were cut off would come back with zeros for data. Such a
/// file is recovered by `reindex` (its page-level salvage keeps only whole rows).
fn check_not_truncated(path: &Path) -> Result<()> {
    use std::io::Read;
    let io = |e| StorageError::io(path, e);
    let mut file = std::fs::File::open(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    let mut head = Vec::with_capacity(100);
    (&mut file).take(100).read_to_end(&mut head).map_err(io)?;
    match crate::recover::sqlite::missing_pages(&head, len) {
        Ok(0) | Err(_) => Ok(()),
        Ok(n) => Err(StorageError::corrupt(
            path,
            format!(
                "truncated SQLite3 database: {n} pages counted by its header are missing; \
                 `ros2bag-rs reindex` recovers the whole rows"
            ),
        )),
    }
}

impl SqliteReader {
    /// Opens `path` read-only.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with_pragmas(path, &[])
    }

    /// Opens `path` read-only and runs `pragmas` (`PRAGMA name = value;` statements, as
    /// [`crate::StorageConfig`] checks them) on it first.
    pub fn open_with_pragmas(path: &Path, pragmas: &[String]) -> Result<Self> {
        if !path.is_file() {
            return Err(StorageError::io(
                path,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            ));
        }
        check_not_truncated(path)?;
        let sql = |source| StorageError::Sqlite {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql)?;
        for pragma in pragmas {
            conn.execute_batch(pragma).map_err(sql)?;
        }
        let has_table = |name: &str| -> Result<bool> {
            conn.query_row(
                "SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?1",
                [name],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
            .map_err(sql)
        };
        if !has_table("messages")? || !has_table("topics")? {
            return Err(StorageError::corrupt(
                path,
                "not a rosbag2 SQLite3 bag: no 'messages' and 'topics' tables",
            ));
        }
        let columns: Vec<String> = conn
            .prepare("SELECT name FROM pragma_table_info('topics')")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .map_err(sql)?;
        let has_column = |c: &str| columns.iter().any(|x| x == c);
        let schema_version = if has_table("schema")? {
            conn.query_row("SELECT max(schema_version) FROM schema", [], |r| {
                r.get::<_, Option<i64>>(0)
            })
            .map_err(sql)?
            .unwrap_or(3)
        } else if has_column("offered_qos_profiles") {
            2
        } else {
            1
        };
        let (has_metadata, has_definitions) =
            (has_table("metadata")?, has_table("message_definitions")?);
        let embedded = if has_metadata {
            let text: Option<String> = conn
                .query_row(
                    "SELECT metadata FROM metadata ORDER BY id DESC LIMIT 1",
                    [],
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql)?;
            text.and_then(|t| match BagMetadata::from_yaml_str(&t, path) {
                Ok(m) => Some(m),
                Err(e) => {
                    log::warn!("embedded rosbag2 metadata ignored: {e}");
                    None
                }
            })
        } else {
            None
        };
        let mut reader = Self {
            path: path.to_path_buf(),
            conn,
            schema_version,
            topics: Vec::new(),
            by_id: HashMap::new(),
            definitions: Vec::new(),
            info: FileInformation {
                path: path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                ..Default::default()
            },
            embedded,
            cursor: (i64::MIN, i64::MIN),
            selection_sql: String::new(),
            buffer: VecDeque::new(),
            exhausted: false,
        };
        reader.load_topics(
            has_column("offered_qos_profiles"),
            has_column("type_description_hash"),
        )?;
        if has_definitions {
            reader.load_definitions()?;
        }
        reader.load_statistics()?;
        Ok(reader)
    }

    /// The database schema version (1 to 4; 3 is assumed for a `schema` table without rows).
    pub fn schema_version(&self) -> i64 {
        self.schema_version
    }

    fn sql_err(&self, source: rusqlite::Error) -> StorageError {
        StorageError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    fn load_topics(&mut self, with_qos: bool, with_hash: bool) -> Result<()> {
        let query = format!(
            "SELECT id, name, type, serialization_format, {}, {} FROM topics ORDER BY id",
            if with_qos {
                "offered_qos_profiles"
            } else {
                "''"
            },
            if with_hash {
                "type_description_hash"
            } else {
                "''"
            }
        );
        let rows: Vec<(i64, String, String, String, String, String)> = self
            .conn
            .prepare(&query)
            .and_then(|mut s| {
                s.query_map([], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                })?
                .collect()
            })
            .map_err(|e| self.sql_err(e))?;
        for (id, name, type_name, serialization_format, qos_text, hash) in rows {
            let offered_qos_profiles = qos::parse_profiles(&qos_text).unwrap_or_else(|e| {
                log::warn!(
                    "{}: topic '{name}': unreadable offered_qos_profiles ({e}); ignoring them",
                    self.path.display()
                );
                Vec::new()
            });
            self.by_id.insert(
                id,
                TopicEntry {
                    name: name.as_str().into(),
                    selected: true,
                },
            );
            self.topics.push(TopicInformation {
                topic_metadata: TopicMetadata {
                    name,
                    type_name,
                    serialization_format,
                    offered_qos_profiles,
                    type_description_hash: hash,
                },
                message_count: 0,
            });
        }
        Ok(())
    }

    fn load_definitions(&mut self) -> Result<()> {
        let rows = self
            .conn
            .prepare("SELECT topic_type, encoding, encoded_message_definition, type_description_hash FROM message_definitions ORDER BY id")
            .and_then(|mut s| {
                s.query_map([], |r| {
                    Ok(MessageDefinition {
                        topic_type: r.get(0)?,
                        encoding: r.get(1)?,
                        encoded_message_definition: r.get(2)?,
                        type_description_hash: r.get(3)?,
                    })
                })?
                .collect()
            });
        self.definitions = rows.map_err(|e| self.sql_err(e))?;
        Ok(())
    }

    fn load_statistics(&mut self) -> Result<()> {
        let rows: Vec<(i64, i64)> = self
            .conn
            .prepare(
                "SELECT topic_id, count(*) FROM messages WHERE typeof(timestamp) = 'integer' \
                 GROUP BY topic_id",
            )
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .map_err(|e| self.sql_err(e))?;
        for (id, count) in rows {
            let name = self.by_id.get(&id).map(|t| t.name.clone());
            match name.and_then(|n| {
                self.topics
                    .iter_mut()
                    .find(|t| *t.topic_metadata.name == *n)
            }) {
                Some(topic) => topic.message_count = count as u64,
                None => log::warn!(
                    "{}: {count} messages reference unknown topic id {id}",
                    self.path.display()
                ),
            }
        }
        // A row whose timestamp is not an integer (text, null) cannot be placed in time: it is
        // left out of reading and of the statistics, with a warning.
        let (first, last, count, rows): (Option<i64>, Option<i64>, Option<i64>, i64) = self
            .conn
            .query_row(
                "SELECT min(CASE WHEN typeof(timestamp) = 'integer' THEN timestamp END), \
                 max(CASE WHEN typeof(timestamp) = 'integer' THEN timestamp END), \
                 sum(typeof(timestamp) = 'integer'), count(*) FROM messages",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .map_err(|e| self.sql_err(e))?;
        let count = count.unwrap_or(0);
        if rows > count {
            log::warn!(
                "{}: {} messages have a timestamp that is not an integer; skipping them \
                 (`ros2bag-rs reindex` removes them)",
                self.path.display(),
                rows - count
            );
        }
        if let (Some(first), Some(last)) = (first, last) {
            self.info.starting_time = first;
            self.info.duration = last.saturating_sub(first);
        }
        self.info.message_count = count as u64;
        Ok(())
    }

    fn fetch_page(&mut self) -> Result<()> {
        let query = format!(
            "SELECT timestamp, topic_id, data, id FROM messages \
             WHERE (timestamp > ?1 OR (timestamp = ?1 AND id > ?2)) AND typeof(timestamp) = 'integer'{} \
             ORDER BY timestamp, id LIMIT {PAGE_ROWS}",
            self.selection_sql
        );
        let mut stmt = self
            .conn
            .prepare_cached(&query)
            .map_err(|e| StorageError::Sqlite {
                path: self.path.clone(),
                source: e,
            })?;
        let mut rows = stmt.query(self.cursor).map_err(|e| StorageError::Sqlite {
            path: self.path.clone(),
            source: e,
        })?;
        let (mut n, mut bytes) = (0, 0);
        while let Some(row) = rows.next().map_err(|e| StorageError::Sqlite {
            path: self.path.clone(),
            source: e,
        })? {
            let sql = |e| StorageError::Sqlite {
                path: self.path.clone(),
                source: e,
            };
            let (timestamp, id): (i64, i64) = (row.get(0).map_err(sql)?, row.get(3).map_err(sql)?);
            self.cursor = (timestamp, id);
            n += 1;
            let read = |row: &rusqlite::Row| -> rusqlite::Result<(i64, Vec<u8>)> {
                // Null data: an empty message bound without a buffer.
                Ok((row.get(1)?, row.get::<_, Option<_>>(2)?.unwrap_or_default()))
            };
            // A malformed row (a topic id or data of the wrong type) costs only itself.
            let (topic_id, data) = match read(row) {
                Ok(fields) => fields,
                Err(e) => {
                    log::warn!(
                        "{}: message row {id} at {timestamp} ns is malformed ({e}); skipping it \
                         (`ros2bag-rs reindex` removes it)",
                        self.path.display()
                    );
                    continue;
                }
            };
            bytes += data.len();
            if let Some(topic) = self.by_id.get(&topic_id).filter(|t| t.selected) {
                self.buffer
                    .push_back(SerializedMessage::new(topic.name.clone(), timestamp, data));
            }
            if bytes >= PAGE_BYTES {
                break;
            }
        }
        if n < PAGE_ROWS && bytes < PAGE_BYTES {
            self.exhausted = true;
        }
        Ok(())
    }
}

impl StorageReader for SqliteReader {
    fn path(&self) -> &Path {
        &self.path
    }

    fn storage_id(&self) -> StorageId {
        StorageId::Sqlite3
    }

    fn topics(&self) -> &[TopicInformation] {
        &self.topics
    }

    fn message_definitions(&self) -> &[MessageDefinition] {
        &self.definitions
    }

    fn set_filter(&mut self, filter: &TopicFilter) {
        for topic in self.by_id.values_mut() {
            topic.selected = filter.matches(&topic.name);
        }
        self.buffer.retain(|m| filter.matches(&m.topic));
        let mut ids: Vec<i64> = self
            .by_id
            .iter()
            .filter(|(_, t)| t.selected)
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        self.selection_sql = if ids.len() == self.by_id.len() {
            String::new()
        } else {
            format!(
                " AND topic_id IN ({})",
                ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
            )
        };
    }

    fn seek(&mut self, time_ns: i64) -> Result<()> {
        self.cursor = (time_ns, i64::MIN);
        self.buffer.clear();
        self.exhausted = false;
        Ok(())
    }

    fn read_next(&mut self) -> Result<Option<SerializedMessage>> {
        loop {
            if let Some(m) = self.buffer.pop_front() {
                return Ok(Some(m));
            }
            if self.exhausted {
                return Ok(None);
            }
            self.fetch_page()?;
        }
    }

    fn file_information(&self) -> FileInformation {
        self.info.clone()
    }

    fn embedded_metadata(&self) -> Option<BagMetadata> {
        self.embedded.clone()
    }
}
