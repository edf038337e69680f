//! Writes a small demo bag with real CDR messages: `/chatter` (std_msgs/String, 10 Hz),
//! `/clock` (rosgraph_msgs/Clock, 100 Hz) and a latched `/status` (std_msgs/String).
//!
//! `cargo run --release -p rosbag2_rs_storage --example make_demo_bag -- OUTPUT_DIR [mcap|sqlite3]`

use std::sync::Arc;

use rosbag2_rs_storage::qos::Durability;
use rosbag2_rs_storage::*;

/// CDR (little endian) of a std_msgs/String.
fn cdr_string(text: &str) -> Vec<u8> {
    let mut out = vec![0, 1, 0, 0];
    out.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
    out.push(0);
    out
}

/// CDR of a rosgraph_msgs/Clock.
fn cdr_clock(ns: i64) -> Vec<u8> {
    let mut out = vec![0, 1, 0, 0];
    out.extend_from_slice(&((ns / 1_000_000_000) as i32).to_le_bytes());
    out.extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let output = args
        .next()
        .ok_or("usage: make_demo_bag OUTPUT_DIR [mcap|sqlite3]")?;
    let storage = StorageId::parse(&args.next().unwrap_or_else(|| "mcap".into()))?;
    let mut writer = BagWriter::create(BagWriterOptions {
        uri: output.into(),
        storage: WriterOptions {
            storage,
            ..Default::default()
        },
        custom_data: [(
            "generator".to_string(),
            "rosbag2-rs make_demo_bag".to_string(),
        )]
        .into(),
        ..Default::default()
    })?;
    let mut status = TopicMetadata::new("/status", "std_msgs/msg/String");
    status.offered_qos_profiles = vec![QosProfile {
        durability: Durability::TransientLocal,
        depth: 1,
        ..Default::default()
    }];
    for topic in [
        TopicMetadata::new("/chatter", "std_msgs/msg/String"),
        TopicMetadata::new("/clock", "rosgraph_msgs/msg/Clock"),
        status,
    ] {
        writer.create_topic(&topic, None)?;
    }
    let (chatter, clock, status): (Arc<str>, Arc<str>, Arc<str>) =
        ("/chatter".into(), "/clock".into(), "/status".into());
    let start = 1_700_000_000_000_000_000i64;
    writer.write(&SerializedMessage::new(
        status,
        start,
        cdr_string("demo ready"),
    ))?;
    for i in 0..1000i64 {
        let t = start + i * 10_000_000;
        writer.write(&SerializedMessage::new(clock.clone(), t, cdr_clock(t)))?;
        if i % 10 == 0 {
            writer.write(&SerializedMessage::new(
                chatter.clone(),
                t + 1,
                cdr_string(&format!("hello world {}", i / 10)),
            ))?;
        }
    }
    let metadata = writer.close()?;
    println!(
        "wrote {} messages over {:.1} s",
        metadata.message_count,
        metadata.duration as f64 / 1e9
    );
    Ok(())
}
