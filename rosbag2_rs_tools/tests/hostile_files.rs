//! The crafted files of issue 48 (made by [`crafted`] at run time) read in a process whose
//! allocator refuses to hold more than 768 MiB at once, as `ulimit -v` would on a small robot:
//! each gives a clear error or its messages once, never a panic or an abort.

mod crafted;

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use rosbag2_rs_storage::rosbag1::Ros1Reader;
use rosbag2_rs_storage::storage::mcap_reader::McapReader;
use rosbag2_rs_storage::{OpenMode, StorageError, StorageReader};

/// The system allocator, refusing to hold more than [`Capped::LIMIT`] bytes at once.
struct Capped;

/// Bytes held now.
static HELD: AtomicUsize = AtomicUsize::new(0);

impl Capped {
    const LIMIT: usize = 768 << 20;

    /// Counts `more` bytes held; false (nothing counted) when that would pass the limit.
    fn take(more: usize) -> bool {
        HELD.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
            held.checked_add(more).filter(|&n| n <= Self::LIMIT)
        })
        .is_ok()
    }
}

// SAFETY: defers to the system allocator; refusing (null) is allowed by `GlobalAlloc`.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !Self::take(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout is passed on unchanged.
        let ptr = unsafe { System.alloc(layout) };
        if ptr.is_null() {
            HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let grows = new_size.saturating_sub(layout.size());
        if !Self::take(grows) {
            return std::ptr::null_mut();
        }
        // SAFETY: as for `System.realloc`, whose contract the caller upholds.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if new.is_null() {
            HELD.fetch_sub(grows, Ordering::Relaxed);
        } else {
            HELD.fetch_sub(layout.size().saturating_sub(new_size), Ordering::Relaxed);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Capped = Capped;

/// Every message of an MCAP file, strictly: the error when it cannot be opened or read.
fn read_mcap(path: &Path) -> Result<(McapReader, Vec<usize>), StorageError> {
    let mut reader = McapReader::open(path, OpenMode::Strict)?;
    let mut sizes = Vec::new();
    while let Some(m) = reader.read_next()? {
        sizes.push(m.data.len());
    }
    Ok((reader, sizes))
}

/// An MCAP file whose metadata, attachment or chunk index says offset + length wraps past
/// 2^64: the `mcap` crate's `read::metadata` panicked on the metadata one (read.rs:959). Every
/// index entry is now checked against the file before use: a clear error names the file,
/// the entry's offset and the length it claims.
#[test]
fn a_summary_index_whose_offset_and_length_wrap_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    for which in [
        crafted::LyingIndex::Metadata,
        crafted::LyingIndex::Attachment,
        crafted::LyingIndex::Chunk,
    ] {
        let path = crafted::mcap_wrapping_index(dir.path(), which);
        assert!(std::fs::metadata(&path).unwrap().len() < 4096);
        let err = read_mcap(&path)
            .err()
            .unwrap_or_else(|| panic!("{which:?}: read"));
        let text = err.to_string();
        let file = path.file_name().unwrap().to_str().unwrap();
        assert!(text.contains(file), "{text}");
        assert!(text.contains("outside the file"), "{which:?}: {text}");
        let kind = format!("a {} index entry", format!("{which:?}").to_lowercase());
        assert!(text.contains(&kind), "{which:?}: {text}");
        // Recovering reads the data section instead, through the checked parsers.
        let mut reader = McapReader::open(&path, OpenMode::Recover).unwrap();
        let mut n = 0;
        while reader.read_next().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 3, "{which:?}");
    }
}

/// One zstd chunk holding a 300 MB message, listed by 16 chunk indexes (12 KB): the reader
/// decoded the chunk once per index, all at once (16 × 300 MB, each buffer doubled to 512 MiB:
/// "memory allocation failed"), and would have returned the message 16 times. The chunk is
/// now read once, its message returned once, and the 15 extra entries are reported.
#[test]
fn a_chunk_listed_by_sixteen_indexes_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = crafted::mcap_big_chunk_listed_16_times(dir.path());
    assert!(std::fs::metadata(&path).unwrap().len() < 64 << 10);
    let (reader, sizes) = read_mcap(&path).unwrap();
    assert_eq!(sizes, vec![300 << 20]);
    let ignored = &reader.damage().ignored_chunk_indexes;
    assert_eq!(ignored.len(), 15);
    assert!(ignored[0].reason.contains("again"), "{}", ignored[0].reason);
}

/// Two zstd chunks overlapping in time (decoded together) that declare 600 MiB each: more
/// than a file may hold decompressed at once (1 GiB by default). Refused before either is
/// decompressed, with an error naming the file, the offset and what they claim; the old
/// reader decoded both, and a file of a few more would have held gigabytes.
#[test]
fn overlapping_chunks_share_one_budget_of_decompressed_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = crafted::mcap_zstd_chunks(dir.path(), "overlap.mcap", 2, 100, Some(600 << 20), 1);
    let err = read_mcap(&path).err().expect("over the budget");
    let text = err.to_string();
    assert!(text.starts_with(&path.display().to_string()), "{text}");
    assert!(
        matches!(
            &err,
            StorageError::McapFormat {
                source:
                    rosbag2_rs_storage::storage::mcap_records::McapFormatError::OverAliveBudget { .. },
                ..
            }
        ),
        "{text}"
    );
    assert!(
        text.contains(&format!("declare {} bytes", 1200u64 << 20)),
        "{text}"
    );
    assert!(text.contains("ROSBAG2_RS_MAX_ALIVE_BYTES"), "{text}");
}

/// A ROS 1 bag whose message is 1000 sequences of 2^20 `std_msgs/Empty` (4 KB): each sequence
/// passed the per-sequence limit, and converting it to CDR wrote 10^9 bytes (one per empty
/// element), decoding it would have built 10^9 values. The elements of no wire size are now
/// counted per message: the message is refused with the field, offset and count.
#[test]
fn elements_of_no_wire_size_are_counted_per_message() {
    let dir = tempfile::tempdir().unwrap();
    let path = crafted::ros1_empty_elements(dir.path());
    assert!(std::fs::metadata(&path).unwrap().len() < 16 << 10);
    let mut reader = Ros1Reader::open(&path, OpenMode::Strict).unwrap();
    let err = reader
        .read_next()
        .map(drop)
        .expect_err("over the element budget");
    let text = err.to_string();
    assert!(text.contains("items[1].e"), "{text}");
    assert!(text.contains("ROSBAG2_RS_MAX_EMPTY_ELEMENTS"), "{text}");
    // Decoding it (what `cat` does) is refused the same way.
    use rosbag2_rs_codec::msg::{decode_ros1, CodecError, Dialect, Registry};
    let mut reg = Registry::new();
    reg.parse_concatenated(
        "test_msgs/Outer",
        crafted::EMPTY_ELEMENTS_DEFINITION,
        Dialect::Ros1,
    )
    .unwrap();
    let payload = crafted::empty_elements_payload(1000, 1 << 20);
    let err = decode_ros1(&reg, "test_msgs/Outer", &payload)
        .map(drop)
        .expect_err("over the budget");
    assert!(
        matches!(&err, CodecError::TooManyElements { field, .. } if field == "items[1].e"),
        "{err}"
    );
}

/// Times at the ends of the i64 range, from files: sums that overflowed (a panic in debug
/// builds, a wrapped time in release) in the writer (which `convert` feeds any time), in
/// `reindex` and in `doctor` (start + duration of a file, from its summary or from
/// `metadata.yaml`). They saturate.
#[test]
fn times_at_the_ends_of_the_range_do_not_overflow() {
    use rosbag2_rs_storage::{reindex, BagMetadata};
    use rosbag2_rs_tools::{doctor, DoctorOptions};
    let dir = tempfile::tempdir().unwrap();
    // The writer, given messages received at -2, i64::MAX and i64::MIN; then `doctor` given a
    // metadata.yaml whose file starts at 10 and lasts i64::MAX.
    let bag = crafted::extreme_times(dir.path());
    assert_eq!(
        BagMetadata::read_from_dir(&bag).unwrap().files[0].duration,
        i64::MAX
    );
    let report = doctor(&bag, &DoctorOptions::default()).unwrap();
    assert!(!report.problems.is_empty());
    // An MCAP file whose log times straddle 2^63: its start (as i64) is i64::MAX - 9, its
    // duration 110; `reindex` (an intact file) and `doctor` add them.
    let straddle = crafted::straddling_times(dir.path());
    let file = crafted::storage_file(&straddle);
    let report = reindex(&straddle).unwrap();
    assert_eq!(report.files[0].time_range.unwrap().1, i64::MAX);
    doctor(&file, &DoctorOptions::default()).unwrap();
}

/// A ROS 1 bag of 10 messages whose index lists its one chunk in 8001 chunk-info records:
/// the chunk was read once per record (80,010 messages). It is read once, the repeated
/// records are reported.
#[test]
fn a_ros1_chunk_listed_by_thousands_of_chunk_infos_is_read_once() {
    use rosbag2_rs_storage::rosbag1::BagReader;
    let dir = tempfile::tempdir().unwrap();
    let path = crafted::ros1_chunk_listed_many_times(dir.path(), 8001);
    let mut reader = BagReader::open(&path, OpenMode::Strict).unwrap();
    assert_eq!(reader.message_count(), 10);
    let mut n = 0;
    while reader.read_next().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 10);
    assert_eq!(reader.damage().repeated_chunk_infos, 8000);
    // Through the storage plugin (ROS 2 messages), the same.
    let mut reader = Ros1Reader::open(&path, OpenMode::Strict).unwrap();
    let mut n = 0;
    while reader.read_next().unwrap().is_some() {
        n += 1;
    }
    assert_eq!(n, 10);
}

/// File-mode `.zstd` bags decompress into the temporary directory, which may be RAM-backed:
/// a 20 KB file decompressed whole, with no bound. Now at most the lesser of the cap
/// (`ROSBAG2_RS_MAX_FILE_MODE_BYTES`, 64 MiB in this test) and the space free there: a frame
/// that declares more is refused before anything is decompressed, one that does not declare
/// its size is refused once it passes the bound.
#[test]
fn file_mode_decompression_is_bounded() {
    use rosbag2_rs_storage::compression::file_mode::open_compressed;
    use rosbag2_rs_storage::limits::FILE_MODE_BYTES;
    use std::io::Write;
    FILE_MODE_BYTES.set(64 << 20);
    let dir = tempfile::tempdir().unwrap();
    for declared in [true, false] {
        let path = dir.path().join(format!("bomb_{declared}_0.mcap.zstd"));
        let file = std::fs::File::create(&path).unwrap();
        let mut encoder = zstd::stream::Encoder::new(file, 3).unwrap();
        if declared {
            encoder.set_pledged_src_size(Some(8 + (100 << 20))).unwrap();
        }
        encoder.write_all(mcap::MAGIC).unwrap();
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..100 {
            encoder.write_all(&zeros).unwrap();
        }
        encoder.finish().unwrap();
        let err = open_compressed(&path, OpenMode::Strict)
            .err()
            .unwrap_or_else(|| panic!("declared {declared}: opened"));
        let StorageError::FileModeTooLarge { path: p, source } = &err else {
            panic!("declared {declared}: {err}")
        };
        assert_eq!(p, &path);
        assert_eq!(source.cap, 64 << 20);
        assert_eq!(source.claimed, declared.then_some(8 + (100 << 20)));
        let text = err.to_string();
        assert!(text.contains("ROSBAG2_RS_MAX_FILE_MODE_BYTES"), "{text}");
    }
    // A frame declaring 1 PiB in 1 KB: with a window descriptor zstd would decode it, in a
    // single segment zstd refuses it ("Frame requires too much memory", naming neither the
    // size nor the cap: found by tools/hostile_cli.sh). Both are refused naming the cap, when
    // the storage is detected as when the file is opened.
    for single_segment in [false, true] {
        let path = dir
            .path()
            .join(format!("declares_{single_segment}_0.mcap.zstd"));
        std::fs::write(
            &path,
            crafted::zstd_frame_declaring(1 << 50, single_segment),
        )
        .unwrap();
        for err in [
            rosbag2_rs_storage::StorageId::detect(&path).err(),
            open_compressed(&path, OpenMode::Strict).err(),
        ] {
            let err = err.unwrap_or_else(|| panic!("single segment {single_segment}: opened"));
            let StorageError::FileModeTooLarge { source, .. } = &err else {
                panic!("single segment {single_segment}: {err}")
            };
            assert_eq!(source.claimed, Some(1 << 50));
        }
    }
    FILE_MODE_BYTES.set(0);
}

/// A `.db3` whose messages leaf repeats a cell pointer some 200 times and whose first row's
/// overflow chain loops onto itself (SQLite: "malformed"): `reindex` salvages each cell and
/// each overflow page once: rows 2 and 3, row 1 dropped, nothing read twice.
#[test]
fn a_sqlite_file_with_repeated_cells_and_a_looping_chain_is_salvaged_once() {
    let dir = tempfile::tempdir().unwrap();
    let bag = crafted::sqlite_salvage_loops(dir.path());
    let report = rosbag2_rs_storage::reindex(&bag).unwrap();
    let file = &report.files[0];
    assert_eq!(file.messages, 2, "{file:?}");
    assert_eq!(file.lost.messages, Some(1), "{file:?}");
    assert_eq!(report.metadata.message_count, 2);
}

/// Every crafted file, as `tools/hostile_cli.sh` gets them (the `crafted_files` example): one
/// of each name, each a few KB (the ROS 1 bag of 8001 chunk-info records excepted), what the
/// errors must name and the message counts given.
#[test]
fn every_crafted_file_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let all = crafted::write_all(dir.path());
    let mut names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), all.len());
    for input in &all {
        assert!(input.path.exists(), "{}", input.name);
        assert!(!input.problem.is_empty() && input.topic.starts_with('/'));
        let size: u64 = if input.path.is_dir() {
            std::fs::read_dir(&input.path)
                .unwrap()
                .map(|e| e.unwrap().metadata().unwrap().len())
                .sum()
        } else {
            std::fs::metadata(&input.path).unwrap().len()
        };
        if input.name != "chunk_listed_many_times.bag" {
            assert!(size < 32 << 10, "{}: {size} bytes", input.name);
        }
    }
    assert!(all.iter().any(|c| c.messages.is_some()));
}
