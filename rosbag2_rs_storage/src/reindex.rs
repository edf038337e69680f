//! `reindex`: rebuild a bag's `metadata.yaml` from its storage files after recovering what a
//! killed writer or a damaged disk left in them (see [`crate::recover`]): MCAP files without a
//! footer are rewritten from every intact chunk and the readable prefix of a cut one, SQLite
//! databases get their write-ahead log applied or are rebuilt from their intact pages, and a
//! ROS 1 `.bag` file given directly is rewritten with a fresh index. File-mode compressed files
//! (`.mcap.zstd`, `.db3.zstd`) are read and listed as rosbag2 lists them, not repaired. MCAP
//! chunks that fail their checks (CRC, decompression) are found by reading every chunk and left
//! out of the rewritten file; files that cannot be read at all are reported and left out of the
//! metadata.

use std::path::{Path, PathBuf};

use crate::bag::{metadata_from_readers, storage_files_in};
use crate::compression::file_mode::is_compressed_file;
use crate::error::{Result, StorageError};
use crate::metadata::BagMetadata;
use crate::recover::{self, FileRecovery, RecoveryAction};
use crate::storage::mcap_reader::McapReader;
use crate::storage::mcap_writer::McapWriter;
use crate::storage::{
    open_reader, CompressionFormat, OpenMode, StorageId, StorageReader, StorageWriter,
    WriterOptions,
};
use rosbag2_rs_codec::MessageDefinitionCache;

/// What a reindex did.
#[derive(Debug, Clone, PartialEq)]
pub struct ReindexReport {
    /// The metadata written (for a ROS 1 `.bag` file: computed, not written).
    pub metadata: BagMetadata,
    /// Files that were rewritten or had a log applied, with the messages they now hold.
    pub repaired: Vec<(PathBuf, u64)>,
    /// Per storage file: what it holds and what was lost.
    pub files: Vec<FileRecovery>,
}

/// Rewrites a damaged MCAP file from the parts that can still be read (every intact chunk, the
/// readable prefix of a chunk cut by the end of the file, loose messages), keeping its chunk
/// compression; the original is replaced only after the repaired copy has been written
/// completely.
pub fn repair_mcap(path: &Path) -> Result<FileRecovery> {
    let mut reader = McapReader::open(path, OpenMode::Recover)?;
    let tmp = path.with_extension("mcap.repair");
    let _ = std::fs::remove_file(&tmp);
    let compression = reader
        .chunk_compression()
        .map(|c| CompressionFormat::parse(c).and_then(|c| c.check_chunks_of(StorageId::Mcap)))
        .transpose()?;
    let options = WriterOptions {
        compression,
        ..WriterOptions::default()
    };
    let mut writer = Box::new(McapWriter::create(tmp.clone(), &options)?);
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
    // Attachments and metadata records travel with the data: keep every intact one.
    let extras = crate::storage::mcap_extras::salvage_extras(path)?;
    for record in extras.user_metadata() {
        writer.add_metadata(record)?;
    }
    for attachment in &extras.attachments {
        writer.add_attachment(attachment)?;
    }
    let mut report = FileRecovery::intact(path.to_path_buf(), StorageId::Mcap);
    report.action = RecoveryAction::Rewritten;
    while let Some(message) = reader.read_next()? {
        writer.write(&message)?;
        report.add_message(message.recv_timestamp, message.data.len());
    }
    writer.finish()?;
    reader.damage().fill(&mut report);
    drop(reader);
    std::fs::rename(&tmp, path).map_err(|e| StorageError::io(path, e))?;
    Ok(report)
}

/// The report of a file that needed nothing, from its reader's statistics.
fn intact(reader: &dyn StorageReader) -> FileRecovery {
    let info = reader.file_information();
    let mut report = FileRecovery::intact(reader.path().to_path_buf(), reader.storage_id());
    report.messages = info.message_count;
    if info.message_count > 0 {
        report.time_range = Some((info.starting_time, info.end_time()));
    }
    report
}

/// Whether an MCAP file needs rewriting: it lacks a valid footer and summary, or one of its
/// chunks fails its checks (CRC, decompression), which only reading every chunk tells.
fn mcap_needs_repair(file: &Path) -> Result<bool> {
    let mut reader = match McapReader::open(file, OpenMode::Strict) {
        Ok(reader) => reader,
        Err(StorageError::Corrupt { .. } | StorageError::McapFormat { .. }) => return Ok(true),
        Err(e) => return Err(e),
    };
    while reader.read_next()?.is_some() {}
    Ok(!reader.damage().is_empty())
}

/// Recovers one storage file of a bag directory. A file-mode compressed file is only checked
/// (by reading it): it is never rewritten.
fn recover_file(file: &Path) -> Result<Option<FileRecovery>> {
    if is_compressed_file(file)? {
        return Ok(None);
    }
    match StorageId::detect(file)? {
        StorageId::Mcap if mcap_needs_repair(file)? => {
            let report = repair_mcap(file)?;
            log::warn!(
                "{}: repaired, {} messages recovered",
                file.display(),
                report.messages
            );
            Ok(Some(report))
        }
        StorageId::Sqlite3 => Ok(Some(recover::sqlite::recover(file)?)),
        _ => Ok(None),
    }
}

/// A file-mode compressed bag whose recorder was killed keeps its last file (or files)
/// uncompressed: the recorder compresses a file once it is closed. `metadata.yaml` can only say
/// "file mode" for the whole bag, and readers (rosbag2, rosbags) then decompress every file, so
/// the leftover files are compressed as the recorder would have done.
fn compress_leftovers(
    readers: &mut [Box<dyn StorageReader>],
    reports: &mut [FileRecovery],
) -> Result<()> {
    let compressed = |r: &dyn StorageReader| r.path().to_string_lossy().ends_with(".zstd");
    if !readers.iter().any(|r| compressed(r.as_ref())) {
        return Ok(());
    }
    for reader in readers.iter_mut().filter(|r| !compressed(r.as_ref())) {
        let plain = reader.path().to_path_buf();
        let with_suffix = |suffix: &str| {
            let mut name = plain.clone().into_os_string();
            name.push(suffix);
            PathBuf::from(name)
        };
        let (target, partial) = (with_suffix(".zstd"), with_suffix(".zstd.partial"));
        let _ = std::fs::remove_file(&partial);
        crate::compression::zstd::compress_file(&plain, &partial)
            .map_err(|e| StorageError::io(&partial, e))?;
        std::fs::rename(&partial, &target).map_err(|e| StorageError::io(&target, e))?;
        *reader = open_reader(&target, OpenMode::Strict)?;
        std::fs::remove_file(&plain).map_err(|e| StorageError::io(&plain, e))?;
        let note = format!(
            "compressed into {}, as the recorder of this file-mode compressed bag would have",
            target.display()
        );
        log::warn!("{}: {note}", plain.display());
        if let Some(report) = reports.iter_mut().find(|r| r.path == plain) {
            report.notes.push(note);
        }
    }
    Ok(())
}

/// Rebuilds `<bag_dir>/metadata.yaml` from the storage files in the directory, recovering
/// damaged files first. A file that cannot be read at all (empty, foreign) is reported as
/// [`RecoveryAction::Unreadable`] and left out of the metadata; the others are kept. Custom data and the ROS distribution of an existing readable
/// `metadata.yaml` (or of metadata embedded in the files) are kept.
///
/// `bag` may also be a ROS 1 `.bag` file: it is rewritten with a fresh index when its index is
/// missing or damaged (rewritten with a fresh index); no `metadata.yaml` is written.
pub fn reindex(bag: &Path) -> Result<ReindexReport> {
    if bag.is_file() && StorageId::detect(bag)? == StorageId::Rosbag1 {
        let file = recover::ros1::repair_bag(bag)?;
        let reader = open_reader(bag, OpenMode::Strict)?;
        let dir = bag.parent().unwrap_or(Path::new("."));
        let metadata = metadata_from_readers(&[reader], dir);
        let repaired = if file.action == RecoveryAction::Intact {
            Vec::new()
        } else {
            vec![(bag.to_path_buf(), file.messages)]
        };
        return Ok(ReindexReport {
            metadata,
            repaired,
            files: vec![file],
        });
    }
    if !bag.is_dir() {
        return Err(StorageError::InvalidArgument(format!(
            "{}: reindex needs a bag directory or a ROS 1 .bag file",
            bag.display()
        )));
    }
    let bag_dir = bag;
    let files = storage_files_in(bag_dir)?;
    if files.is_empty() {
        return Err(StorageError::corrupt(
            bag_dir,
            "no .mcap or .db3 files to reindex",
        ));
    }
    let mut reports = Vec::new();
    let mut readers: Vec<Box<dyn StorageReader>> = Vec::new();
    for file in &files {
        // A file that cannot be read at all (empty: a writer had just created it; foreign;
        // unreadable) costs only itself: it is reported and left out of the metadata.
        let opened = recover_file(file)
            .and_then(|report| Ok((report, open_reader(file, OpenMode::Strict)?)));
        match opened {
            Ok((report, reader)) => {
                reports.push(report.unwrap_or_else(|| intact(reader.as_ref())));
                readers.push(reader);
            }
            Err(error) => {
                log::warn!("{error}; leaving the file out of metadata.yaml");
                reports.push(FileRecovery::unreadable(file, &error));
            }
        }
    }
    if readers.is_empty() {
        return Err(StorageError::corrupt(
            bag_dir,
            "no storage file could be read; nothing to reindex",
        ));
    }
    compress_leftovers(&mut readers, &mut reports)?;
    let repaired = reports
        .iter()
        .filter(|r| {
            matches!(
                r.action,
                RecoveryAction::Rewritten | RecoveryAction::WalApplied
            )
        })
        .map(|r| (r.path.clone(), r.messages))
        .collect();
    let mut metadata = metadata_from_readers(&readers, bag_dir);
    if let Ok(previous) = BagMetadata::read_from_dir(bag_dir) {
        // Message-mode compression cannot be seen in the files: keep what the metadata said.
        if metadata.compression_mode.is_empty()
            && previous.compression_mode.eq_ignore_ascii_case("message")
        {
            metadata.compression_mode = previous.compression_mode.clone();
            metadata.compression_format = previous.compression_format.clone();
        }
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
    Ok(ReindexReport {
        metadata,
        repaired,
        files: reports,
    })
}

/// [`reindex()`] that leaves `bag` untouched: its files (a bag directory's regular files, with any
/// SQLite write-ahead log, or a ROS 1 `.bag` file) are copied to `output`, which must not exist,
/// and the copy is repaired and reindexed. For a directory, `output` becomes the repaired bag
/// directory; for a ROS 1 file, `output` is the repaired `.bag` file when it ends in `.bag`,
/// else a new directory that receives it under its own name.
pub fn reindex_to(bag: &Path, output: &Path) -> Result<ReindexReport> {
    if output.exists() {
        return Err(StorageError::AlreadyExists(output.to_path_buf()));
    }
    if bag.is_file() {
        let target = if output.extension().is_some_and(|e| e == "bag") {
            if let Some(parent) = output.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(|e| StorageError::io(parent, e))?;
            }
            output.to_path_buf()
        } else {
            std::fs::create_dir_all(output).map_err(|e| StorageError::io(output, e))?;
            output.join(bag.file_name().unwrap_or_default())
        };
        std::fs::copy(bag, &target).map_err(|e| StorageError::io(&target, e))?;
        return reindex(&target);
    }
    if !bag.is_dir() {
        return Err(StorageError::InvalidArgument(format!(
            "{}: reindex needs a bag directory or a ROS 1 .bag file",
            bag.display()
        )));
    }
    std::fs::create_dir_all(output).map_err(|e| StorageError::io(output, e))?;
    let entries = std::fs::read_dir(bag).map_err(|e| StorageError::io(bag, e))?;
    for entry in entries {
        let path = entry.map_err(|e| StorageError::io(bag, e))?.path();
        if path.is_file() {
            let target = output.join(path.file_name().unwrap_or_default());
            std::fs::copy(&path, &target).map_err(|e| StorageError::io(&target, e))?;
        }
    }
    let mut report = reindex(output)?;
    // The report names the copies; say which originals they came from.
    for file in &mut report.files {
        file.notes.push(format!(
            "repaired copy of {}",
            bag.join(file.path.file_name().unwrap_or_default())
                .display()
        ));
    }
    Ok(report)
}
