//! Converts a bag into a new bag compressed as rosbag2 compresses (file or message mode), or
//! uncompressed: the storage crate's writer driven directly, for the interop tests.
//!
//! `cargo run -p rosbag2_rs_tools --example compress_bag -- INPUT OUTPUT
//!  [--storage mcap|sqlite3] [--mode none|file|message] [--format zstd] [--threads N]
//!  [--queue-size N] [--max-bag-size BYTES]`

use rosbag2_rs_storage::*;
use rosbag2_rs_tools::convert;
use rosbag2_rs_tools::ConvertOptions;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: compress_bag INPUT OUTPUT [--storage mcap|sqlite3] [--mode none|file|message] [--format zstd] [--threads N] [--queue-size N] [--max-bag-size BYTES]";
    let mut args = std::env::args().skip(1);
    let input = args.next().ok_or(usage)?;
    let output = args.next().ok_or(usage)?;
    let mut options = BagWriterOptions {
        uri: output.into(),
        ..Default::default()
    };
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(usage)?;
        match flag.as_str() {
            "--storage" => options.storage.storage = StorageId::parse(&value)?,
            "--mode" => options.compression.mode = CompressionMode::parse(&value)?,
            "--format" => options.compression.format = CompressionFormat::parse(&value)?,
            "--threads" => options.compression.threads = value.parse()?,
            "--queue-size" => options.compression.queue_size = value.parse()?,
            "--max-bag-size" => options.max_bagfile_size = value.parse()?,
            _ => return Err(usage.into()),
        }
    }
    let metadata = convert(&ConvertOptions {
        inputs: vec![std::path::PathBuf::from(input).into()],
        output: options,
        ..Default::default()
    })?;
    println!(
        "{} messages in {}",
        metadata.message_count,
        metadata.relative_file_paths.join(", ")
    );
    Ok(())
}
