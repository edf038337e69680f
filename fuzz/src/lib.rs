//! What the fuzz targets share: running a file-based parser on the fuzzer's bytes, the message
//! definitions the codec targets decode against, and the service messages the wire target
//! decodes.

use std::path::Path;

use rosbag2_rs_interfaces::rosbag2_interfaces::msg::{ReadSplitEvent, WriteSplitEvent};
use rosbag2_rs_interfaces::rosbag2_interfaces::srv as upstream;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv as ours;
use rosbag2_rs_interfaces::service_msgs::ServiceEventInfo;
use rosbag2_rs_interfaces::type_description_interfaces::srv::GetTypeDescription;
use rosbag2_rs_interfaces::{from_cdr, to_cdr, MessageType, ServiceType};

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
