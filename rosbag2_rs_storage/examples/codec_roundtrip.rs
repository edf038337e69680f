//! Decodes every message of the given bags and encodes it again, in the serialization it is
//! stored in (ROS 1 for `.bag` files, then CDR as every reader of this crate hands them out), and
//! checks the bytes come back identical. Prints counts; exits 1 on any difference or error.
//!
//! `cargo run --example codec_roundtrip -- BAG...`

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use rosbag2_rs_codec::msg::{decode_cdr_at, decode_ros1_at, encode_cdr_at, encode_ros1_at};
use rosbag2_rs_codec::msg::{Dialect, Registry};
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::rosbag1::{is_rosbag1, BagReader};
use rosbag2_rs_storage::{OpenMode, SequentialReader};

type Failure = String;

fn registry(type_name: &str, text: &str, dialect: Dialect) -> Result<(Registry, usize), Failure> {
    let mut reg = Registry::new();
    reg.parse_concatenated(type_name, text, dialect)
        .map_err(|e| e.to_string())?;
    let index = reg.index_of(type_name).ok_or("type missing")?;
    Ok((reg, index))
}

fn ros1(path: &Path) -> Result<usize, Failure> {
    let mut bag = BagReader::open(path, OpenMode::Strict).map_err(|e| e.to_string())?;
    let mut regs = HashMap::new();
    for c in bag.connections() {
        regs.insert(
            c.id,
            registry(&c.type_name, &c.message_definition, Dialect::Ros1)?,
        );
    }
    let mut n = 0;
    while let Some(m) = bag.read_next().map_err(|e| e.to_string())? {
        let (reg, index) = &regs[&m.connection];
        let value = decode_ros1_at(reg, *index, &m.data).map_err(|e| e.to_string())?;
        let again = encode_ros1_at(reg, *index, &value).map_err(|e| e.to_string())?;
        if again != m.data {
            return Err(format!(
                "ROS 1 message {n} at {} differs after a round trip",
                m.time
            ));
        }
        n += 1;
    }
    Ok(n)
}

fn cdr(path: &Path) -> Result<usize, Failure> {
    let mut reader = SequentialReader::open(path).map_err(|e| e.to_string())?;
    let mut cache = MessageDefinitionCache::new();
    let mut regs = HashMap::new();
    for t in reader.topics().to_vec() {
        let def = reader.message_definition(&t.topic_metadata.type_name, &mut cache);
        let reg = registry(
            &def.topic_type,
            &def.encoded_message_definition,
            Dialect::Ros2,
        )?;
        regs.insert(t.topic_metadata.name.clone(), reg);
    }
    let mut n = 0;
    while let Some(m) = reader.read_next().map_err(|e| e.to_string())? {
        let (reg, index) = &regs[&*m.topic];
        let (value, header) = decode_cdr_at(reg, *index, &m.data).map_err(|e| e.to_string())?;
        let again = encode_cdr_at(reg, *index, &value, header).map_err(|e| e.to_string())?;
        if again != m.data {
            return Err(format!(
                "CDR message {n} on {} differs after a round trip",
                m.topic
            ));
        }
        n += 1;
    }
    Ok(n)
}

fn main() {
    let mut failed = false;
    for path in std::env::args().skip(1).map(PathBuf::from) {
        let mut head = [0u8; 16];
        let len = std::fs::File::open(&path)
            .and_then(|mut f| f.read(&mut head))
            .unwrap_or(0);
        let head = &head[..len];
        let mut report = Vec::new();
        if is_rosbag1(head) {
            report.push(ros1(&path).map(|n| format!("ros1 {n}")));
        }
        report.push(cdr(&path).map(|n| format!("cdr {n}")));
        for r in report {
            match r {
                Ok(text) => println!("{}: {text} identical", path.display()),
                Err(e) => {
                    println!("{}: {e}", path.display());
                    failed = true;
                }
            }
        }
    }
    std::process::exit(failed as i32);
}
