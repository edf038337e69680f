//! Locating a bag's storage files and its metadata: a bag directory with `metadata.yaml`, a bag
//! directory without one, or a single `.mcap`/`.db3` file (file-mode compressed as
//! `.mcap.zstd`/`.db3.zstd` too).

use std::path::{Path, PathBuf};

use crate::compression::file_mode::uncompressed_name;
use crate::compression::{BagCompression, CompressionFormat, CompressionMode};
use crate::error::{Result, StorageError};
use crate::formats::StorageId;
use crate::metadata::{BagMetadata, FileInformation, FILE_BEING_WRITTEN_KEY, METADATA_FILENAME};
use crate::storage::plugin::StorageReader;

/// A bag on disk: where its files are and what its metadata says.
#[derive(Debug, Clone)]
pub struct Bag {
    /// The path the bag was opened from (directory or file).
    pub path: PathBuf,
    /// Storage files in order.
    pub files: Vec<PathBuf>,
    /// The bag's metadata (read from `metadata.yaml`, or computed from the files).
    pub metadata: BagMetadata,
    /// True when the metadata came from `metadata.yaml`.
    pub has_metadata_file: bool,
    /// rosbag2 file or message compression, from `metadata.yaml` (`None`: not compressed, or
    /// no `metadata.yaml`; compressed files are recognised by their content anyway).
    pub compression: Option<BagCompression>,
}

/// Orders storage files by their split index, compressed (`.mcap.zstd`) or not: the index
/// rosbag2 up to Kilted appends (`name_10` after `name_9`), or the one Lyrical puts first
/// (`10_name_2026_12_07-10_00_00` after `9_name_2026_12_07-09_59_59`).
pub fn split_index_key(path: &Path) -> (String, u64) {
    let name = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = Path::new(uncompressed_name(&name))
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(key) = lyrical_split_key(&stem) {
        return key;
    }
    match stem
        .rsplit_once('_')
        .and_then(|(base, n)| Some((base.to_string(), n.parse().ok()?)))
    {
        Some((base, n)) => (base, n),
        None => (stem, 0),
    }
}

/// The shape of the local time rosbag2 puts in names: `YYYY_MM_DD-HH_MM_SS`, `d` a digit.
const TIMESTAMP: &[u8] = b"dddd_dd_dd-dd_dd_dd";

/// `name` without a trailing `_YYYY_MM_DD-HH_MM_SS`, if it ends so.
fn without_timestamp(name: &str) -> Option<&str> {
    let (rest, timestamp) = name.split_at_checked(name.len().checked_sub(TIMESTAMP.len())?)?;
    let shaped = timestamp.bytes().zip(TIMESTAMP).all(|(c, want)| {
        if *want == b'd' {
            c.is_ascii_digit()
        } else {
            c == *want
        }
    });
    rest.strip_suffix('_').filter(|_| shaped)
}

/// The prefix and index of a file named as rosbag2 Lyrical names split files,
/// `{index}_{prefix}_{YYYY_MM_DD-HH_MM_SS}` (`SequentialWriter::format_storage_uri`).
fn lyrical_split_key(stem: &str) -> Option<(String, u64)> {
    let (index, rest) = stem.split_once('_')?;
    let prefix = without_timestamp(rest)?;
    if index.is_empty() || !index.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some((prefix.to_string(), index.parse().ok()?))
}

/// The name (without extension) rosbag2 Lyrical gives the `index`-th file of the bag in `dir`
/// (`SequentialWriter::format_storage_uri`): `{index}_{prefix}_{stamp}`, the prefix being the
/// directory's name without the time rosbag2's default name ends with
/// (`rosbag2_2026_12_07-10_00_00` gives `rosbag2`), `stamp` the local time the file is opened
/// ([`local_stamp`]).
pub fn split_file_stem(dir: &Path, index: u64, stamp: &str) -> String {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "rosbag2".into());
    let prefix = without_timestamp(&name).unwrap_or(&name);
    format!("{index}_{prefix}_{stamp}")
}

/// The local time now as rosbag2 writes it in names: `YYYY_MM_DD-HH_MM_SS`.
pub fn local_stamp() -> String {
    chrono::Local::now().format("%Y_%m_%d-%H_%M_%S").to_string()
}

/// Whether `path` is named like a storage file: `.mcap`, `.db3`, or either compressed (`.zstd`).
pub fn is_storage_file_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    matches!(
        Path::new(uncompressed_name(&name))
            .extension()
            .and_then(|e| e.to_str()),
        Some("mcap" | "db3")
    )
}

/// Storage files (`.mcap`, `.db3`, and either compressed `.zstd`) directly inside `dir`, in
/// split order; of a file present both compressed and not, the uncompressed one.
pub fn storage_files_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && is_storage_file_name(p))
        .collect();
    // A compressed file beside its uncompressed original: the writer was stopped before it
    // removed the original, which is complete and the one to read.
    let originals: std::collections::HashSet<PathBuf> = files
        .iter()
        .filter(|p| !p.to_string_lossy().ends_with(".zstd"))
        .cloned()
        .collect();
    files.retain(|p| {
        let name = p.to_string_lossy();
        !(name.ends_with(".zstd") && originals.contains(Path::new(uncompressed_name(&name))))
    });
    files.sort_by_key(|p| split_index_key(p));
    Ok(files)
}

/// In a bag being written (or whose writer was stopped), the closed files newer than those its
/// `metadata.yaml` lists (the writer rewrites it at a share of the splits only): every newer
/// storage file but the newest, which is the one being written.
fn closed_files_not_yet_listed(dir: &Path, listed: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let newest_listed = listed.iter().map(|f| split_index_key(f)).max();
    let mut newer: Vec<PathBuf> = storage_files_in(dir)?
        .into_iter()
        .filter(|f| {
            newest_listed
                .as_ref()
                .is_none_or(|n| split_index_key(f) > *n)
        })
        .collect();
    newer.pop();
    if !newer.is_empty() {
        log::info!(
            "{}: being written (or its writer was stopped): also reading {} closed files it \
             does not list yet",
            dir.join(METADATA_FILENAME).display(),
            newer.len()
        );
    }
    Ok(newer)
}

/// Builds bag metadata from opened storage files (what `reindex` writes). Compressed files
/// (`.zstd`) make it a file-mode compressed bag, listed as rosbag2 lists one: the compressed
/// names in `relative_file_paths`, the uncompressed ones in `files`.
pub fn metadata_from_readers(readers: &[Box<dyn StorageReader>], bag_dir: &Path) -> BagMetadata {
    let mut metadata = BagMetadata {
        storage_identifier: readers
            .first()
            .map(|r| r.storage_id().as_str().to_string())
            .unwrap_or_default(),
        ..Default::default()
    };
    for reader in readers {
        let relative = reader
            .path()
            .strip_prefix(bag_dir)
            .unwrap_or(reader.path())
            .to_string_lossy()
            .into_owned();
        metadata.relative_file_paths.push(relative.clone());
        if relative.ends_with(".zstd") {
            metadata.compression_mode = CompressionMode::File.as_metadata_str().to_string();
            metadata.compression_format = CompressionFormat::Zstd.as_str().to_string();
        }
        metadata.files.push(FileInformation {
            path: uncompressed_name(&relative).to_string(),
            ..reader.file_information()
        });
        for topic in reader.topics() {
            match metadata
                .topics_with_message_count
                .iter_mut()
                .find(|t| t.topic_metadata.name == topic.topic_metadata.name)
            {
                Some(known) => known.message_count += topic.message_count,
                None => metadata.topics_with_message_count.push(topic.clone()),
            }
        }
        if let Some(embedded) = reader.embedded_metadata() {
            metadata.custom_data.extend(embedded.custom_data);
            if metadata.ros_distro.is_empty() {
                metadata.ros_distro = embedded.ros_distro;
            }
        }
    }
    metadata.recompute_totals_from_files();
    metadata.bag_size = bag_size(readers.iter().map(|r| r.path()));
    metadata
}

fn bag_size<'a>(files: impl Iterator<Item = &'a Path>) -> u64 {
    files
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum()
}

impl Bag {
    /// Locates a bag. A directory without `metadata.yaml` is read from its storage files (with a
    /// warning); call [`Bag::metadata_from_files`] or `reindex` to compute its metadata. A file
    /// `metadata.yaml` lists that does not exist is left out with a warning naming `reindex`.
    pub fn locate(path: &Path) -> Result<Self> {
        if path.is_file() {
            StorageId::detect(path)?;
            return Ok(Self {
                path: path.to_path_buf(),
                files: vec![path.to_path_buf()],
                metadata: BagMetadata::default(),
                has_metadata_file: false,
                compression: None,
            });
        }
        if !path.is_dir() {
            return Err(StorageError::io(
                path,
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such bag (file or directory)",
                ),
            ));
        }
        if !path.join(METADATA_FILENAME).exists() {
            let files = storage_files_in(path)?;
            if files.is_empty() {
                return Err(StorageError::corrupt(
                    path,
                    "not a bag: no metadata.yaml and no .mcap/.db3 files",
                ));
            }
            log::warn!("{}: no {METADATA_FILENAME}; reading the storage files directly (`ros2bag-rs reindex` writes one)", path.display());
            return Ok(Self {
                path: path.to_path_buf(),
                files,
                metadata: BagMetadata::default(),
                has_metadata_file: false,
                compression: None,
            });
        }
        let mut metadata = BagMetadata::read_from_dir(path)?;
        let compression = BagCompression::from_metadata(&metadata, &path.join(METADATA_FILENAME))?;
        let mut files = Vec::new();
        for relative in &metadata.relative_file_paths {
            let direct = path.join(relative);
            // Early rosbag2 versions stored paths with the bag directory's name in front.
            let by_name = Path::new(relative).file_name().map(|n| path.join(n));
            match (direct.is_file(), by_name) {
                (true, _) => files.push(direct),
                (false, Some(p)) if p.is_file() => files.push(p),
                // A lost file costs only itself: the others are read.
                _ => log::warn!(
                    "{}: lists '{relative}', which does not exist; reading the other files \
                     (`ros2bag-rs reindex` rewrites the metadata from the files present)",
                    path.join(METADATA_FILENAME).display()
                ),
            }
        }
        if metadata.custom_data.contains_key(FILE_BEING_WRITTEN_KEY) {
            files.extend(closed_files_not_yet_listed(path, &files)?);
        }
        if files.is_empty() && !metadata.relative_file_paths.is_empty() {
            return Err(StorageError::corrupt(
                path.join(METADATA_FILENAME),
                "none of the files it lists exists; `ros2bag-rs reindex` rewrites the metadata \
                 from the files present",
            ));
        }
        metadata.bag_size = bag_size(files.iter().map(PathBuf::as_path));
        Ok(Self {
            path: path.to_path_buf(),
            files,
            metadata,
            has_metadata_file: true,
            compression,
        })
    }

    /// Checks that every storage file of the bag is of storage `expected` (`-s/--storage` on the
    /// command line names the plugin that must read the bag; ours are detected from the files).
    pub fn check_storage(&self, expected: StorageId) -> Result<()> {
        for file in &self.files {
            let found = StorageId::detect(file)?;
            if found != expected {
                return Err(StorageError::InvalidArgument(format!(
                    "{}: a {} file, not {}",
                    file.display(),
                    found.as_str(),
                    expected.as_str()
                )));
            }
        }
        Ok(())
    }

    /// The directory that holds the storage files.
    pub fn dir(&self) -> &Path {
        if self.path.is_dir() {
            &self.path
        } else {
            self.path.parent().unwrap_or(Path::new("."))
        }
    }

    /// Fills `metadata` from the opened storage files when the bag had no `metadata.yaml`.
    pub fn metadata_from_files(&mut self, readers: &[Box<dyn StorageReader>]) {
        if !self.has_metadata_file {
            self.metadata = metadata_from_readers(readers, self.dir());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_files_are_named_as_rosbag2_lyrical_names_them() {
        let stamp = "2026_12_07-10_00_01";
        // rosbag2's default bag name loses its time; any other name is kept whole.
        let default = Path::new("/x/rosbag2_2026_12_07-10_00_00");
        assert_eq!(
            split_file_stem(default, 0, stamp),
            "0_rosbag2_2026_12_07-10_00_01"
        );
        assert_eq!(
            split_file_stem(Path::new("runs/my_bag_2"), 12, stamp),
            "12_my_bag_2_2026_12_07-10_00_01"
        );
        assert_eq!(
            split_file_stem(Path::new("a_2026_12_07-10_00"), 3, stamp),
            "3_a_2026_12_07-10_00_2026_12_07-10_00_01",
            "not a whole time: kept"
        );
        let named = Path::new("12_my_bag_2_2026_12_07-10_00_01.mcap");
        assert_eq!(split_index_key(named), ("my_bag_2".into(), 12));
        let shaped = local_stamp();
        assert!(
            without_timestamp(&format!("x_{shaped}")) == Some("x"),
            "{shaped}"
        );
    }

    #[test]
    fn split_files_sort_numerically() {
        let mut v = vec![
            PathBuf::from("b_10.mcap"),
            PathBuf::from("b_9.mcap"),
            PathBuf::from("b_0.mcap"),
        ];
        v.sort_by_key(|p| split_index_key(p));
        assert_eq!(
            v,
            vec![
                PathBuf::from("b_0.mcap"),
                PathBuf::from("b_9.mcap"),
                PathBuf::from("b_10.mcap")
            ]
        );
    }

    #[test]
    fn lyrical_split_files_sort_by_their_leading_index() {
        // rosbag2 Lyrical's names (format_storage_uri): index, prefix, local time of the split.
        let mut v: Vec<PathBuf> = (0..12)
            .rev()
            .map(|i| PathBuf::from(format!("{i}_my_bag_2026_12_07-10_{:02}_00.mcap", 59 - i)))
            .collect();
        v.sort_by_key(|p| split_index_key(p));
        let order: Vec<u64> = v.iter().map(|p| split_index_key(p).1).collect();
        assert_eq!(order, (0..12).collect::<Vec<_>>());
        assert_eq!(split_index_key(&v[0]).0, "my_bag");
        // Not Lyrical's shape: the trailing index, as before.
        assert_eq!(
            split_index_key(Path::new("x_2026_12_07-10_00_00_3.mcap")),
            ("x_2026_12_07-10_00_00".to_string(), 3)
        );
        assert_eq!(
            split_index_key(Path::new("a1_b_2026_12_07-10_00_00.db3.zstd")).1,
            0
        );
    }

    #[test]
    fn compressed_split_files_sort_numerically() {
        let mut v = [
            PathBuf::from("b_10.db3.zstd"),
            PathBuf::from("b_9.db3.zstd"),
            PathBuf::from("b_0.db3.zstd"),
        ];
        v.sort_by_key(|p| split_index_key(p));
        assert_eq!(v[0], PathBuf::from("b_0.db3.zstd"));
        assert_eq!(v[2], PathBuf::from("b_10.db3.zstd"));
        assert!(is_storage_file_name(Path::new("x/b_1.mcap.zstd")));
        assert!(!is_storage_file_name(Path::new("x/notes.txt.zstd")));
    }
}
