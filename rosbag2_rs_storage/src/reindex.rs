//! `reindex`: rebuild a bag's `metadata.yaml` from its storage files, repairing MCAP files a
//! killed writer left without a footer so that every complete chunk can be read again.

use std::path::{Path, PathBuf};

use crate::bag::{metadata_from_readers, storage_files_in};
use crate::error::{Result, StorageError};
use crate::metadata::BagMetadata;
use crate::msgdefs::MessageDefinitionCache;
use crate::storage::mcap_reader::McapReader;
use crate::storage::mcap_writer::McapWriter;
use crate::storage::{open_reader, OpenMode, StorageReader, StorageWriter, WriterOptions};

/// What a reindex did.
#[derive(Debug, Clone, PartialEq)]
pub struct ReindexReport {
    /// The metadata written.
    pub metadata: BagMetadata,
    /// MCAP files that were rewritten from their intact parts, with the messages recovered.
    pub repaired: Vec<(PathBuf, u64)>,
}

/// Rewrites a damaged MCAP file from the parts that can still be read; the original is replaced
/// only after the repaired copy has been written completely. Returns the messages kept.
pub fn repair_mcap(path: &Path) -> Result<u64> {
    let mut reader = McapReader::open(path, OpenMode::Recover)?;
    let tmp = path.with_extension("mcap.repair");
    let _ = std::fs::remove_file(&tmp);
    let mut writer = Box::new(McapWriter::create(tmp.clone(), &WriterOptions::default())?);
    let mut cache = MessageDefinitionCache::new();
    for topic in reader.topics() {
        let def = reader
            .message_definitions()
            .iter()
            .find(|d| d.topic_type == topic.topic_metadata.type_name)
            .cloned()
            .unwrap_or_else(|| cache.definition(&topic.topic_metadata.type_name));
        writer.create_topic(&topic.topic_metadata, &def)?;
    }
    if let Some(embedded) = reader.embedded_metadata() {
        writer.update_metadata(&embedded)?;
    }
    let mut count = 0;
    while let Some(message) = reader.read_next()? {
        writer.write(&message)?;
        count += 1;
    }
    writer.finish()?;
    drop(reader);
    std::fs::rename(&tmp, path).map_err(|e| StorageError::io(path, e))?;
    Ok(count)
}

/// Rebuilds `<bag_dir>/metadata.yaml` from the storage files in the directory, repairing MCAP
/// files without a footer first. Custom data and the ROS distribution of an existing readable
/// `metadata.yaml` (or of metadata embedded in the files) are kept.
pub fn reindex(bag_dir: &Path) -> Result<ReindexReport> {
    if !bag_dir.is_dir() {
        return Err(StorageError::InvalidArgument(format!(
            "{}: reindex needs a bag directory",
            bag_dir.display()
        )));
    }
    let files = storage_files_in(bag_dir)?;
    if files.is_empty() {
        return Err(StorageError::corrupt(
            bag_dir,
            "no .mcap or .db3 files to reindex",
        ));
    }
    let mut repaired = Vec::new();
    for file in &files {
        if file.extension().is_some_and(|e| e == "mcap") && McapReader::needs_repair(file)? {
            let kept = repair_mcap(file)?;
            log::warn!("{}: repaired, {kept} messages recovered", file.display());
            repaired.push((file.clone(), kept));
        }
    }
    let readers = files
        .iter()
        .map(|f| open_reader(f, OpenMode::Strict))
        .collect::<Result<Vec<Box<dyn StorageReader>>>>()?;
    let mut metadata = metadata_from_readers(&readers, bag_dir);
    if let Ok(previous) = BagMetadata::read_from_dir(bag_dir) {
        metadata.custom_data.extend(previous.custom_data.clone());
        if !previous.ros_distro.is_empty() {
            metadata.ros_distro = previous.ros_distro.clone();
        }
        // Keep QoS recorded in the old metadata when the files do not carry it (SQLite v1).
        for topic in &mut metadata.topics_with_message_count {
            if let Some(old) = previous.topic(&topic.topic_metadata.name) {
                if topic.topic_metadata.offered_qos_profiles.is_empty() {
                    topic.topic_metadata.offered_qos_profiles =
                        old.topic_metadata.offered_qos_profiles.clone();
                }
            }
        }
    }
    metadata.write_to_dir(bag_dir)?;
    Ok(ReindexReport { metadata, repaired })
}
