//! What the fuzz targets share: running a file-based parser on the fuzzer's bytes, and the
//! message definitions the codec targets decode against.

use std::path::Path;

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
