//! Every crash the fuzz targets (`fuzz/`, see docs/fuzzing.md) found, replayed on its minimised
//! input (`tests/data/fuzz/<target>-<what>`) through the same code as its target, and other
//! allocation bombs, in a process whose allocator refuses any single allocation above 256 MiB
//! (an allocation bomb aborts the test, as libFuzzer's `-malloc_limit_mb` made it a crash).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};

use rosbag2_rs_storage::storage::mcap_reader::McapReader;
use rosbag2_rs_storage::{reindex_to, OpenMode, SequentialReader, StorageReader};
use rosbag2_rs_tools::{doctor, DoctorOptions};

/// The system allocator, refusing allocations above [`Capped::LIMIT`].
struct Capped;

impl Capped {
    const LIMIT: usize = 256 << 20;
}

// SAFETY: defers to the system allocator; refusing (null) is allowed by `GlobalAlloc`.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > Self::LIMIT {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's layout is passed on unchanged.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > Self::LIMIT {
            return std::ptr::null_mut();
        }
        // SAFETY: as for `System.realloc`, whose contract the caller upholds.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Capped = Capped;

/// The minimised inputs of `target`.
fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz");
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{target}-")))
        })
        .collect();
    out.sort();
    out
}

/// What the `mcap_read` target does.
fn mcap_read(data: &[u8]) {
    for mode in [OpenMode::Strict, OpenMode::Recover] {
        let bytes = bytes::Bytes::copy_from_slice(data);
        let Ok(mut reader) = McapReader::from_bytes(Path::new("fuzz.mcap"), bytes, mode) else {
            continue;
        };
        while let Ok(Some(_)) = reader.read_next() {}
    }
}

/// `mcap_read`: a channel record in the summary whose topic length says 1.8 GB; the `mcap`
/// crate reserved it while reading the summary. A chunk in the summary section holding a
/// channel whose metadata string says 1.7 GB: the `mcap` crate decompresses chunks it meets
/// there and parsed the channel unchecked. And a chunk index whose map of message index offsets
/// is 3 bytes long: the `mcap` crate reads whole 10-byte entries, so it took the compression
/// string's length from 7 bytes further on (1.9 GB).
#[test]
fn mcap_read_regressions() {
    let inputs = inputs("mcap_read");
    assert!(!inputs.is_empty());
    for input in inputs {
        mcap_read(&std::fs::read(&input).unwrap());
    }
}

/// What the `mcap_doctor_reindex` target does.
fn mcap_doctor_reindex(data: &[u8]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fuzz.mcap");
    std::fs::write(&path, data).unwrap();
    let _ = doctor(&path, &DoctorOptions::default());
    let out = dir.path().join("reindexed");
    if reindex_to(dir.path(), &out).is_ok() {
        if let Ok(reader) = SequentialReader::open(&out) {
            reader.for_each(drop);
        }
    }
}

/// `mcap_doctor_reindex`: a metadata record whose name length says 1.9 GB, which `reindex`
/// handed to the `mcap` crate while salvaging attachments and metadata records.
#[test]
fn mcap_doctor_reindex_regressions() {
    let inputs = inputs("mcap_doctor_reindex");
    assert!(!inputs.is_empty());
    for input in inputs {
        mcap_doctor_reindex(&std::fs::read(&input).unwrap());
    }
}

/// A CDR sequence of strings whose count the bytes left can hold (4 bytes each) but whose
/// first string is bad: the decoder reserved the count in decoded values (several times the
/// wire size: 300 MiB here) before decoding the first one.
#[test]
fn cdr_sequence_count_reserves_only_what_decodes() {
    use rosbag2_rs_codec::msg::{decode_cdr, Dialect, Registry, Value};
    let mut reg = Registry::new();
    reg.parse_concatenated("t/msg/Names", "string[] names\n", Dialect::Ros2)
        .unwrap();
    let n = (300 << 20) / std::mem::size_of::<Value>();
    let mut cdr = vec![0, 1, 0, 0];
    cdr.extend((n as u32).to_le_bytes());
    cdr.extend(u32::MAX.to_le_bytes()); // the first string's length
    cdr.resize(8 + 4 * n, 0);
    assert!(decode_cdr(&reg, "t/msg/Names", &cdr).is_err());
}

/// A `.mcap.zstd` of a few KB that decompresses to 300 MiB (MCAP magic, then zeros): reading
/// it decompressed the whole file into memory, growing past the allocator's limit ("out of
/// memory" here; on a robot, memory taken until the kernel kills something). It now streams
/// into a temporary file: every byte decompresses, and the open fails on what they are.
#[test]
fn a_file_mode_mcap_that_decompresses_to_hundreds_of_megabytes_streams_to_disk() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb_0.mcap.zstd");
    let mut encoder =
        zstd::stream::Encoder::new(std::fs::File::create(&path).unwrap(), 19).unwrap();
    encoder.write_all(mcap::MAGIC).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..300 {
        encoder.write_all(&zeros).unwrap();
    }
    encoder.finish().unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() < 64 << 10);
    let result =
        rosbag2_rs_storage::compression::file_mode::open_compressed(&path, OpenMode::Strict);
    // Decompressed in full (past the limit), then found to be no MCAP file.
    let error = result
        .err()
        .expect("300 MiB of zeros are no MCAP file")
        .to_string();
    assert!(error.contains("truncated MCAP file"), "{error}");
}

/// What the `definition_payload` target does: `<dialect byte><definition>\0<payload>`; a ROS 1
/// definition (odd byte) converted to CDR must give CDR that decodes against the ROS 2
/// definition the converter gives, a ROS 2 one (even) converted to ROS 1 likewise.
fn definition_payload(data: &[u8]) {
    use rosbag2_rs_codec::msg::transcode::{CdrToRos1, Ros1ToCdr};
    use rosbag2_rs_codec::msg::{decode_cdr, decode_ros1, Dialect, Registry};
    let Some((&dialect, rest)) = data.split_first() else {
        return;
    };
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let Ok(text) = std::str::from_utf8(&rest[..end]) else {
        return;
    };
    let payload = rest.get(end + 1..).unwrap_or_default();
    let mut registry = Registry::new();
    if dialect % 2 == 1 {
        if let Ok(converter) = Ros1ToCdr::new("fuzz_msgs/Top", text) {
            if let Ok(cdr) = converter.convert(payload) {
                registry
                    .parse_concatenated(
                        &converter.ros2_type,
                        &converter.ros2_definition,
                        Dialect::Ros2,
                    )
                    .expect("the ROS 2 definition the converter gives parses");
                decode_cdr(&registry, &converter.ros2_type, &cdr)
                    .expect("what converts to CDR decodes");
            }
        }
    } else if let Ok(converter) = CdrToRos1::new("fuzz_msgs/msg/Top", text) {
        if let Ok(ros1) = converter.convert(payload) {
            registry
                .parse_concatenated(
                    &converter.ros1_type,
                    &converter.ros1_definition,
                    Dialect::Ros1,
                )
                .expect("the ROS 1 definition the converter gives parses");
            decode_ros1(&registry, &converter.ros1_type, &ros1)
                .expect("what converts to ROS 1 decodes");
        }
    }
}

/// `definition_payload` (issue 48): ROS 1 definitions the converter took and turned into a ROS 2
/// definition its CDR did not fit: fields differing only in case (`Ie`, `ie`: one ROS 2 field
/// twice once lower-cased, a definition that does not parse), and bounds (`string<=5`, which
/// ROS 1 lacks: an 8-byte string converted into a field bounded to 5). Both are now refused when
/// the converter is made. And a ROS 2 string constant of an empty value (`string d=''`), whose
/// ROS 1 form (`string d=`, as genmsg reads it) our ROS 1 parser refused; then the empty
/// `wstring` constant that allowance let through (ROS 1 has no wstring), an empty ROS 2 constant;
/// then a ROS 1 string constant `#`, a comment once in ROS 2 (now quoted), and the same as a
/// wstring constant (ROS 1 has no wstring: now unmappable).
#[test]
fn definition_payload_regressions() {
    let inputs = inputs("definition_payload");
    assert_eq!(inputs.len(), 6);
    for input in inputs {
        definition_payload(&std::fs::read(&input).unwrap());
    }
}
