//! What the fuzz targets share: the budgets every target runs under, running a file-based
//! parser on the fuzzer's bytes, the message definitions the codec targets decode against, and
//! the service messages the wire target decodes.

use std::path::Path;

use rosbag2_rs_interfaces::rosbag2_interfaces::msg::{ReadSplitEvent, WriteSplitEvent};
use rosbag2_rs_interfaces::rosbag2_interfaces::srv as upstream;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv as ours;
use rosbag2_rs_interfaces::service_msgs::ServiceEventInfo;
use rosbag2_rs_interfaces::type_description_interfaces::srv::GetTypeDescription;
use rosbag2_rs_interfaces::{from_cdr, to_cdr, MessageType, ServiceType};
use rosbag2_rs_storage::storage::{StorageId, WriterOptions};
use rosbag2_rs_storage::{BagWriter, BagWriterOptions, SerializedMessage, TopicMetadata};

/// The largest single allocation a fuzz run allows, in MiB: `tools/fuzz.sh` passes it to
/// libFuzzer as `-malloc_limit_mb`, as `rosbag2_rs_tools/tests/fuzz_regressions.rs` caps its
/// allocator when it replays the inputs found. Any allocation above it is a crash.
pub const MALLOC_LIMIT_MB: u64 = 256;

/// Sets the budgets of `rosbag2_rs_storage::limits` so that everything they allow fits under
/// [`MALLOC_LIMIT_MB`] (their defaults are sized for a robot, up to 1 GiB per chunk): an
/// allocation above the cap is then a bug (a size no budget bounds), never a file the budgets
/// let through. Every target calls it once (`fuzz_target!(init: ...)`).
pub fn budgets() {
    use rosbag2_rs_storage::limits::{
        ALIVE_BYTES, EMPTY_ELEMENTS, FILE_MODE_BYTES, IMAGE_PIXELS, MAX_CHUNK, SALVAGE_BYTES,
    };
    MAX_CHUNK.set(32 << 20);
    ALIVE_BYTES.set(64 << 20);
    SALVAGE_BYTES.set(64 << 20);
    // 4 Mi pixels: 32 MiB at 8 bytes a pixel (16-bit RGBA).
    IMAGE_PIXELS.set(1 << 22);
    // Disk (the temporary directory, a tmpfs in campaigns), not memory; small all the same.
    FILE_MODE_BYTES.set(64 << 20);
    // 2^20 elements, about 32 MiB decoded: the default.
    EMPTY_ELEMENTS.set(1 << 20);
}

/// At most this many messages are read from one input (a valid file of many tiny messages
/// would otherwise make one input slow, not wrong).
pub const MAX_MESSAGES: usize = 10_000;

/// Writes `data` to a fresh temporary directory as `name` and runs `f` on its path.
pub fn with_file(name: &str, data: &[u8], f: impl FnOnce(&Path)) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join(name);
    std::fs::write(&path, data).expect("write the input");
    f(&path);
}

/// Definitions for the codec targets (`ros2msg`, dependencies appended after `MSG:` lines):
/// nested messages, unbounded and bounded sequences and strings, fixed arrays, every
/// primitive.
pub const DEFINITIONS: &[(&str, &str)] = &[
    ("std_msgs/msg/String", "string data\n"),
    (
        "fuzz_msgs/msg/Everything",
        "bool b\nbyte o\nchar c\nint8 i8\nuint8 u8\nint16 i16\nuint16 u16\nint32 i32\n\
         uint32 u32\nint64 i64\nuint64 u64\nfloat32 f32\nfloat64 f64\nstring s\n\
         string<=5 bs\nint32[] seq\nint32[<=3] bseq\nfloat64[4] arr\nstring[] strs\n\
         string<=3[<=2] bstrs\nfuzz_msgs/Inner inner\nfuzz_msgs/Inner[] inners\n\
         fuzz_msgs/Inner[2] inner_arr\nuint8[] data\n\
         ================================================================================\n\
         MSG: fuzz_msgs/Inner\nstring name\nfloat64[] values\nfuzz_msgs/Leaf[<=4] leaves\n\
         ================================================================================\n\
         MSG: fuzz_msgs/Leaf\nuint8 kind\nint64[3] xyz\n",
    ),
    (
        "sensor_msgs/msg/PointField",
        "uint8 INT8=1\nstring name\nuint32 offset\nuint8 datatype\nuint32 count\n",
    ),
];

/// A message type the service target decodes: its name, the round trip the target runs on
/// bytes, and its default value's encoding (a seed).
pub struct WireType {
    /// The ROS 2 type name.
    pub name: &'static str,
    /// Decodes the bytes; what decodes is encoded again, and that encoding must decode and
    /// encode to the same bytes (values are compared through their encoding: a NaN rate is
    /// not equal to itself).
    pub round_trip: fn(&[u8]),
    /// The encoding of the type's default value.
    pub default_encoding: fn() -> Vec<u8>,
}

fn round_trip<T: MessageType>(bytes: &[u8]) {
    if let Ok(value) = from_cdr::<T>(bytes) {
        let bytes = to_cdr(&value);
        let again = from_cdr::<T>(&bytes).expect("an encoded value decodes");
        assert_eq!(to_cdr(&again), bytes, "{}", T::TYPE_NAME);
    }
}

const fn wire<T: MessageType>() -> WireType {
    WireType {
        name: T::TYPE_NAME,
        round_trip: round_trip::<T>,
        default_encoding: || to_cdr(&T::default()),
    }
}

macro_rules! services {
    ($($service:ty),* $(; $($message:ty),*)?) => {
        &[$(
            wire::<<$service as ServiceType>::Request>(),
            wire::<<$service as ServiceType>::Response>(),
        )* $($(wire::<$message>(),)*)?]
    };
}

/// Every request and response of the services the player and recorder serve or call
/// (`rosbag2_interfaces`, ours, `type_description_interfaces`) and the messages they exchange.
pub const WIRE_TYPES: &[WireType] = services!(
    upstream::Burst, upstream::GetRate, upstream::IsPaused, upstream::Pause, upstream::Play,
    upstream::PlayNext, upstream::Resume, upstream::Seek, upstream::SetRate, upstream::Snapshot,
    upstream::SplitBagfile, upstream::Stop, upstream::TogglePaused, ours::SetMemory,
    ours::SetDuration, ours::TriggerSnapshot, ours::ClearBuffer, ours::SetClockPublishFrequency,
    GetTypeDescription;
    WriteSplitEvent, ReadSplitEvent, ServiceEventInfo
);

/// A `std_msgs/msg/String` message's CDR encoding.
pub fn string_cdr(text: &str) -> Vec<u8> {
    let mut cdr = vec![0, 1, 0, 0];
    cdr.extend((text.len() as u32 + 1).to_le_bytes());
    cdr.extend(text.as_bytes());
    cdr.push(0);
    cdr
}

/// Writes a bag of three `std_msgs/msg/String` messages on `/chatter` in `storage` at `uri`
/// (a new directory), as the seeds and the `doctor_metadata` target use: its one file named
/// `bag_0.<extension>` (older rosbag2's name: the writer's own carries the local time, and the
/// seeds' `metadata.yaml` must name the file the target puts beside it).
pub fn write_small_bag(uri: &Path, storage: WriterOptions) {
    let storage_extension = storage.storage.extension();
    let mut w = BagWriter::create(BagWriterOptions {
        uri: uri.to_path_buf(),
        storage,
        ..Default::default()
    })
    .expect("create the bag");
    w.create_topic(&TopicMetadata::new("/chatter", "std_msgs/msg/String"), None)
        .expect("create the topic");
    let topic: std::sync::Arc<str> = "/chatter".into();
    for i in 0..3i64 {
        let msg = SerializedMessage::new(topic.clone(), 1_000 + i, string_cdr(&format!("hi {i}")));
        w.write(&msg).expect("write a message");
    }
    let mut metadata = w.close().expect("close the bag");
    let fixed = format!("bag_0{}", storage_extension);
    let written = uri.join(&metadata.relative_file_paths[0]);
    std::fs::rename(written, uri.join(&fixed)).expect("rename the storage file");
    metadata.relative_file_paths = vec![fixed.clone()];
    metadata.files[0].path = fixed;
    metadata.write_to_dir(uri).expect("rewrite metadata.yaml");
}

/// The storage files of the bag the `doctor_metadata` target puts beside its `metadata.yaml`:
/// `bag_0.mcap` and `bag_0.db3` (three messages each, as [`write_small_bag`] writes them), by
/// name.
pub fn doctor_metadata_files() -> Vec<(String, Vec<u8>)> {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let mut out = Vec::new();
    for storage in [StorageId::Mcap, StorageId::Sqlite3] {
        let uri = tmp.path().join(format!("{storage:?}")).join("bag");
        std::fs::create_dir_all(uri.parent().expect("a parent")).expect("directory");
        write_small_bag(
            &uri,
            WriterOptions {
                storage,
                ..Default::default()
            },
        );
        for entry in std::fs::read_dir(&uri).expect("the bag") {
            let path = entry.expect("an entry").path();
            let name = path
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            if name != "metadata.yaml" {
                out.push((name, std::fs::read(&path).expect("read a storage file")));
            }
        }
    }
    out
}
