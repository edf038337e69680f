//! `cat`: print a bag's messages decoded (YAML like `ros2 topic echo`, or JSON lines), or as hex.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;
use rosbag2_rs_codec::msg::render::{to_json, to_yaml, RenderOptions};
use rosbag2_rs_codec::msg::TopicDecoder;
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::{SequentialReader, SerializedMessage, TopicFilter};

/// How `cat` prints a message.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CatFormat {
    /// A YAML document per message, fields as `ros2 topic echo` prints them.
    Yaml,
    /// A JSON object per line: topic, times, type and the decoded message.
    Json,
    /// A JSON object per line with the serialized payload in hex.
    Hex,
}

/// What `cat` prints.
pub struct CatOptions {
    /// Bags, merged in time order.
    pub bags: Vec<PathBuf>,
    /// Only these topics (all when empty).
    pub topics: Vec<String>,
    /// Output format.
    pub format: CatFormat,
    /// Print every array element instead of summarising long arrays.
    pub full: bool,
    /// First receive time, ns.
    pub start: Option<i64>,
    /// Last receive time, ns.
    pub end: Option<i64>,
    /// Stop after this many messages.
    pub limit: Option<u64>,
    /// Definitions for bags that store none (`--typestore`).
    pub typestore: Option<rosbag2_rs_codec::Typestore>,
}

/// A topic's decoder, or why it has none (its messages are then printed in hex).
type Decoder = std::result::Result<TopicDecoder, rosbag2_rs_codec::msg::CodecError>;

fn decoder(
    reader: &SequentialReader,
    type_name: &str,
    cache: &mut MessageDefinitionCache,
) -> Decoder {
    TopicDecoder::new(type_name, &reader.message_definition(type_name, cache))
}

fn hex(data: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(data.len() * 2);
    for b in data {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// Prints the messages.
/// `cat`'s flags.
#[derive(clap::Args)]
pub struct CatArgs {
    /// Bags (directories, .mcap/.db3/.bag files), merged in time order.
    #[arg(required = true)]
    pub bags: Vec<PathBuf>,
    /// Only these topics.
    #[arg(long, num_args = 1..)]
    pub topics: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "yaml")]
    pub format: CatFormat,
    /// Print every element of long arrays (they are summarised otherwise).
    #[arg(long)]
    pub full: bool,
    /// From this time: seconds since the epoch, or `+S` seconds after the bag start.
    #[arg(long, allow_hyphen_values = true)]
    pub start: Option<String>,
    /// Up to this time: seconds since the epoch, or `+S` seconds after the bag start.
    #[arg(long, allow_hyphen_values = true)]
    pub end: Option<String>,
    /// Print at most this many messages.
    #[arg(short = 'n', long)]
    pub limit: Option<u64>,
    /// Message definitions of this ROS 2 distribution (humble, iron, jazzy, kilted) for
    /// bags that store none (recorded before Iron).
    #[arg(long, value_parser = rosbag2_rs_codec::Typestore::parse)]
    pub typestore: Option<rosbag2_rs_codec::Typestore>,
}

/// Runs `cat`.
pub fn run(args: CatArgs) -> Result<()> {
    let (start, end) = crate::times::time_range(&args.bags, &args.start, &args.end)?;
    print(&CatOptions {
        start,
        end,
        bags: args.bags,
        topics: args.topics,
        format: args.format,
        full: args.full,
        limit: args.limit,
        typestore: args.typestore,
    })
}

/// Prints the messages `options` selects.
pub fn print(options: &CatOptions) -> Result<()> {
    let mut reader = SequentialReader::open_many(&options.bags)?;
    for u in reader.unreadable_topics() {
        log::warn!(
            "leaving out topic '{}' ({}): {}",
            u.topic,
            u.type_name,
            u.reason
        );
    }
    reader.set_filter(&TopicFilter::topics(options.topics.clone()))?;
    if let Some(start) = options.start {
        reader.seek(start)?;
    }
    let types: HashMap<String, String> = reader
        .topics()
        .iter()
        .map(|t| {
            (
                t.topic_metadata.name.clone(),
                t.topic_metadata.type_name.clone(),
            )
        })
        .collect();
    let render = RenderOptions {
        full: options.full,
        ..RenderOptions::default()
    };
    let mut cache = MessageDefinitionCache::new().with_typestore(options.typestore);
    let mut decoders: HashMap<String, Decoder> = HashMap::new();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut printed = 0u64;
    while let Some(m) = reader.read_next()? {
        if options.end.is_some_and(|end| m.recv_timestamp > end)
            || options.limit.is_some_and(|l| printed >= l)
        {
            break;
        }
        printed += 1;
        let type_name = types.get(&*m.topic).map_or("", String::as_str);
        if options.format == CatFormat::Hex {
            writeln!(
                out,
                r#"{{"topic":{},"type":{},"recv":{},"send":{},"data":"{}"}}"#,
                json_string(&m.topic),
                json_string(type_name),
                m.recv_timestamp,
                m.send_timestamp,
                hex(&m.data)
            )?;
            continue;
        }
        let decoder = decoders.entry(m.topic.to_string()).or_insert_with(|| {
            let d = decoder(&reader, type_name, &mut cache);
            if let Err(e) = &d {
                log::warn!("topic '{}' ({type_name}) is printed in hex: {e}", m.topic);
            }
            d
        });
        let text = match decoder {
            Ok(d) => match d.decode(&m.data) {
                Ok((value, _)) => Ok(match options.format {
                    CatFormat::Yaml => to_yaml(&d.registry, d.index, &value, render),
                    _ => to_json(&d.registry, d.index, &value, render),
                }),
                Err(e) => {
                    log::warn!(
                        "topic '{}', message at {} ns: {e}",
                        m.topic,
                        m.recv_timestamp
                    );
                    Err(())
                }
            },
            Err(_) => Err(()),
        };
        print_message(&mut out, options.format, &m, type_name, text)?;
    }
    out.flush()?;
    Ok(())
}

fn print_message(
    out: &mut impl Write,
    format: CatFormat,
    m: &SerializedMessage,
    type_name: &str,
    decoded: std::result::Result<String, ()>,
) -> std::io::Result<()> {
    let stamp = format!(
        "{}.{:09}",
        m.recv_timestamp.div_euclid(1_000_000_000),
        m.recv_timestamp.rem_euclid(1_000_000_000)
    );
    match (format, decoded) {
        (CatFormat::Yaml, Ok(yaml)) => {
            writeln!(out, "--- # {} ({type_name}) at {stamp}", m.topic)?;
            write!(out, "{yaml}")
        }
        (CatFormat::Yaml, Err(())) => {
            writeln!(out, "--- # {} ({type_name}) at {stamp}", m.topic)?;
            writeln!(out, "data_hex: {}", hex(&m.data))
        }
        (_, decoded) => {
            let body = match decoded {
                Ok(json) => format!(r#""msg":{json}"#),
                Err(()) => format!(r#""data":"{}""#, hex(&m.data)),
            };
            writeln!(
                out,
                r#"{{"topic":{},"type":{},"recv":{},"send":{},{body}}}"#,
                json_string(&m.topic),
                json_string(type_name),
                m.recv_timestamp,
                m.send_timestamp
            )
        }
    }
}
