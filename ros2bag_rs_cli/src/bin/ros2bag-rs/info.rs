//! `info`: what `ros2 bag info` prints, as text or JSON.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Result;
use rosbag2_rs_codec::MessageDefinition;
use rosbag2_rs_interfaces::action_msgs::{action_interface, action_type, ActionInterface};
use rosbag2_rs_storage::timing::ArrivalStats;
use rosbag2_rs_storage::{Bag, BagMetadata, SequentialReader, StorageId, TopicInformation};
use serde_json::json;

use crate::time_format;

/// `info --format`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InfoFormat {
    /// As `ros2 bag info` prints it.
    Text,
    /// One JSON document.
    Json,
}

/// `info`'s flags.
#[derive(clap::Args)]
pub struct InfoArgs {
    /// Bag directory or single .mcap/.db3/.bag file.
    bag: PathBuf,
    /// Storage of the bag (mcap, sqlite3, rosbag_v2): checked against the files, which are
    /// detected from their contents without it.
    #[arg(short, long)]
    storage: Option<StorageId>,
    /// Only print the topic names.
    #[arg(short = 't', long)]
    topic_name: bool,
    /// Also print each topic's and service's share of the bag's bytes, its type hash, and its
    /// message rate, spread of inter-arrival times and largest gap (reads every message).
    #[arg(short, long)]
    verbose: bool,
    /// Print the message definitions the bag stores instead.
    #[arg(long)]
    schemas: bool,
    /// Order of topics and services.
    #[arg(long, value_enum, default_value = "name")]
    sort: SortBy,
    /// Print times in UTC instead of local time.
    #[arg(long)]
    utc: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: InfoFormat,
    /// With --schemas: for types the bag stores no definition of (bags recorded before Iron),
    /// print this ROS 2 distribution's (humble, iron, jazzy, kilted).
    #[arg(long, value_parser = rosbag2_rs_codec::Typestore::parse)]
    typestore: Option<rosbag2_rs_codec::Typestore>,
}

/// Runs `info`.
pub fn run(args: InfoArgs) -> Result<()> {
    let summary = BagSummary::load(
        &args.bag,
        args.storage,
        args.verbose && !args.topic_name,
        args.typestore,
    )?;
    if args.topic_name && args.verbose {
        log::warn!("-t and -v together: -t is ignored");
    }
    if args.schemas {
        print!("{}", summary.schemas_text());
    } else if args.format == InfoFormat::Text {
        print!(
            "{}",
            summary.to_text(&TextOptions {
                topic_names_only: args.topic_name && !args.verbose,
                sort: args.sort,
                utc: args.utc,
            })
        );
    } else {
        println!("{}", serde_json::to_string_pretty(&summary.to_json())?)
    }
    Ok(())
}

/// How `info` orders topics and services (`--sort`, as rosbag2's newer `info`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SortBy {
    /// By name.
    #[default]
    Name,
    /// By type, then name.
    Type,
    /// By message count, then name.
    Count,
}

/// What the text output shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextOptions {
    /// Only the topic names, one a line (`-t`).
    pub topic_names_only: bool,
    /// Order of topics and services.
    pub sort: SortBy,
    /// Times in UTC instead of local time.
    pub utc: bool,
}

const SERVICE_EVENT_SUFFIX: &str = "/_service_event";

/// The service of a service-introspection topic (`/add/_service_event` of type
/// `pkg/srv/Add_Event`), as rosbag2 recognises them: its name and type.
fn service_of(topic: &TopicInformation) -> Option<(&str, &str)> {
    let name = topic
        .topic_metadata
        .name
        .strip_suffix(SERVICE_EVENT_SUFFIX)?;
    let type_name = topic.topic_metadata.type_name.as_str();
    let service_type = type_name.strip_suffix("_Event")?;
    (!name.is_empty() && service_type.contains("/srv/")).then_some((name, service_type))
}

/// An action's recorded topics, as `info` groups them (rosbag2 Kilted's action section).
struct ActionTopics<'a> {
    /// The action's name: its topics' names without `/_action/...`.
    name: &'a str,
    /// `pkg/action/Name`, from the per-action types among its topics.
    type_name: Option<&'a str>,
    /// Its recorded interfaces, in [`ActionInterface::ALL`]'s order.
    interfaces: Vec<(ActionInterface, &'a TopicInformation)>,
}

impl ActionTopics<'_> {
    /// The action's recorded topics (`true`) or services (`false`).
    fn of_kind(
        &self,
        services: bool,
    ) -> impl Iterator<Item = &(ActionInterface, &TopicInformation)> {
        self.interfaces
            .iter()
            .filter(move |(i, _)| i.is_service_event() == services)
    }
}

/// Whether `topic` is one of an action's five topics.
fn is_action_topic(topic: &TopicInformation) -> bool {
    action_interface(&topic.topic_metadata.name, &topic.topic_metadata.type_name).is_some()
}

/// The facts `info` reports about one bag.
pub struct BagSummary {
    metadata: BagMetadata,
    /// Bytes of messages per topic, when asked for (`-v`).
    sizes: Option<HashMap<String, u64>>,
    /// Arrival statistics per topic, with `sizes`.
    arrivals: HashMap<String, ArrivalStats>,
    /// The message definitions the bag stores.
    definitions: Vec<MessageDefinition>,
    /// The recorded camera, when the bag is a RealSense recording.
    realsense: Option<realsense_bag_rs::Device>,
    /// Types whose definition comes from `--typestore` (the bag stores none), and from which.
    supplied: (Vec<String>, Option<rosbag2_rs_codec::Typestore>),
    /// MCAP attachments and metadata records, by file.
    extras: Vec<(std::path::PathBuf, rosbag2_rs_storage::McapExtras)>,
}

impl BagSummary {
    /// Opens the bag (reading its files when it has no metadata.yaml), checking its storage
    /// when one is named; `sizes` reads every message to add up each topic's bytes.
    pub fn load(
        path: &Path,
        storage: Option<StorageId>,
        sizes: bool,
        typestore: Option<rosbag2_rs_codec::Typestore>,
    ) -> Result<Self> {
        if let Some(id) = storage {
            Bag::locate(path)?.check_storage(id)?;
        }
        let mut reader = SequentialReader::open(path)?;
        let mut metadata = reader.bags()[0].metadata.clone();
        if metadata.relative_file_paths.is_empty() {
            metadata.relative_file_paths = reader.bags()[0]
                .files
                .iter()
                .map(|f| f.display().to_string())
                .collect();
        }
        let mut arrivals: HashMap<String, ArrivalStats> = HashMap::new();
        let sizes = if sizes {
            let mut totals: HashMap<String, u64> = HashMap::new();
            while let Some(message) = reader.read_next()? {
                *totals.entry(message.topic.to_string()).or_default() += message.data.len() as u64;
                arrivals
                    .entry(message.topic.to_string())
                    .or_default()
                    .add(message.recv_timestamp);
            }
            Some(totals)
        } else {
            None
        };
        let mut definitions: Vec<MessageDefinition> = Vec::new();
        let mut supplied = Vec::new();
        let mut cache = rosbag2_rs_codec::MessageDefinitionCache::new().with_typestore(typestore);
        for topic in reader.topics() {
            let type_name = &topic.topic_metadata.type_name;
            if definitions.iter().any(|d| d.topic_type == *type_name) {
                continue;
            }
            if let Some(def) = reader.stored_definition(type_name) {
                definitions.push(def.clone());
            } else if typestore.is_some() {
                let def = reader.message_definition(type_name, &mut cache);
                if !def.encoded_message_definition.is_empty() {
                    supplied.push(type_name.clone());
                    definitions.push(def);
                }
            }
        }
        definitions.sort_by(|a, b| a.topic_type.cmp(&b.topic_type));
        let is_realsense = path.is_file()
            && metadata
                .topics_with_message_count
                .iter()
                .any(|t| t.topic_metadata.name == "/file_version");
        let realsense = if is_realsense {
            Some(realsense_bag_rs::Recording::open(path)?.device().clone())
        } else {
            None
        };
        let files: Vec<_> = reader.bags().iter().flat_map(|b| b.files.clone()).collect();
        let extras = rosbag2_rs_storage::files_extras(&files, false).unwrap_or_else(|e| {
            log::warn!("attachments and metadata records not shown: {e}");
            Vec::new()
        });
        Ok(Self {
            metadata,
            sizes,
            arrivals,
            definitions,
            realsense,
            supplied: (supplied, typestore),
            extras,
        })
    }

    fn realsense_text(device: &realsense_bag_rs::Device, pad: &str) -> String {
        let info: Vec<String> = device
            .info
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        let mut out = format!(
            "RealSense device:  {} (file version {})\n",
            info.join(", "),
            device.file_version
        );
        let mut sensors = Vec::new();
        for s in &device.sensors {
            let streams: Vec<String> = s
                .streams
                .iter()
                .map(|p| match &p.intrinsics {
                    Some(i) => format!(
                        "{} {} {} {}x{} @{} fps",
                        p.stream, p.index, p.format, i.width, i.height, p.fps
                    ),
                    None => format!("{} {} {} @{} fps", p.stream, p.index, p.format, p.fps),
                })
                .collect();
            let options: Vec<String> = s
                .options
                .iter()
                .map(|o| match o.history.len() {
                    0 => format!("{}={}", o.name, o.value),
                    1 => format!("{}={} (1 change)", o.name, o.value),
                    n => format!("{}={} ({n} changes)", o.name, o.value),
                })
                .collect();
            sensors.push(format!(
                "{}: {}{}",
                s.name().unwrap_or("?"),
                streams.join(", "),
                if options.is_empty() {
                    String::new()
                } else {
                    format!(" | options: {}", options.join(", "))
                }
            ));
        }
        out += &format!("Sensors:           {}\n", sensors.join(&format!("\n{pad}")));
        out
    }

    /// Topics (service-event and action topics aside) and services, each sorted as asked.
    fn sorted(&self, sort: SortBy) -> (Vec<&TopicInformation>, Vec<&TopicInformation>) {
        let (mut services, mut topics): (Vec<_>, Vec<_>) = self
            .metadata
            .topics_with_message_count
            .iter()
            .filter(|t| !is_action_topic(t))
            .partition(|t| service_of(t).is_some());
        for list in [&mut topics, &mut services] {
            list.sort_by(|a, b| {
                let first = match sort {
                    SortBy::Name => std::cmp::Ordering::Equal,
                    SortBy::Type => a.topic_metadata.type_name.cmp(&b.topic_metadata.type_name),
                    SortBy::Count => a.message_count.cmp(&b.message_count),
                };
                first.then_with(|| a.topic_metadata.name.cmp(&b.topic_metadata.name))
            });
        }
        (topics, services)
    }

    /// The actions whose topics the bag holds, by name.
    fn actions(&self) -> Vec<ActionTopics<'_>> {
        let mut actions: BTreeMap<&str, ActionTopics<'_>> = BTreeMap::new();
        for t in &self.metadata.topics_with_message_count {
            let meta = &t.topic_metadata;
            let Some((name, interface)) = action_interface(&meta.name, &meta.type_name) else {
                continue;
            };
            let action = actions.entry(name).or_insert_with(|| ActionTopics {
                name,
                type_name: None,
                interfaces: Vec::new(),
            });
            action.type_name = action.type_name.or(action_type(&meta.type_name));
            action.interfaces.push((interface, t));
        }
        let mut actions: Vec<_> = actions.into_values().collect();
        for action in &mut actions {
            action
                .interfaces
                .sort_by_key(|(i, _)| ActionInterface::ALL.iter().position(|a| a == i));
        }
        actions
    }

    /// The action section of the text: `Actions:`, and per action its topics and services.
    fn actions_text(&self) -> String {
        let actions = self.actions();
        let mut out = format!("Actions:           {}\n", actions.len());
        if actions.is_empty() {
            return out;
        }
        out += "Action information:\n";
        for action in &actions {
            let format = action
                .interfaces
                .first()
                .map_or("", |(_, t)| t.topic_metadata.serialization_format.as_str());
            out += &format!(
                "  Action: {} | Type: {} | Topics: {} | Services: {} | Serialization Format: {format}\n",
                action.name,
                action.type_name.unwrap_or("unknown"),
                action.of_kind(false).count(),
                action.of_kind(true).count(),
            );
            for (interface, t) in &action.interfaces {
                let (kind, count) = if interface.is_service_event() {
                    ("Service", "Event Count")
                } else {
                    ("Topic", "Count")
                };
                out += &format!(
                    "    {kind}: {} | {count}: {}\n",
                    interface.short_name(),
                    t.message_count
                );
            }
        }
        out
    }

    /// `Size Contribution: 1.5 KiB | ` with `-v`.
    fn size_part(&self, topic: &str) -> String {
        match &self.sizes {
            Some(sizes) => format!(
                "Size Contribution: {} | ",
                time_format::size(sizes.get(topic).copied().unwrap_or(0))
            ),
            None => String::new(),
        }
    }

    /// ` | Type Hash: RIHS01_…` with `-v`, for topics whose hash the bag records.
    fn hash_part(&self, topic: &TopicInformation) -> String {
        let hash = &topic.topic_metadata.type_description_hash;
        match (&self.sizes, hash.is_empty()) {
            (Some(_), false) => format!(" | Type Hash: {hash}"),
            _ => String::new(),
        }
    }

    /// With `-v`, a second line per topic: mean rate, spread of the inter-arrival times and the
    /// largest gap.
    fn rate_part(&self, topic: &str, pad: &str, utc: bool) -> String {
        if self.sizes.is_none() {
            return String::new();
        }
        let Some(stats) = self.arrivals.get(topic) else {
            return String::new();
        };
        match stats.mean_rate() {
            Some(rate) => format!(
                "\n{pad}  Rate: {rate:.3} Hz | Interval: {:.3} ms to {:.3} ms | Largest gap: \
                 {:.6} s, ending at {}",
                stats.min_interval as f64 / 1e6,
                stats.max_interval as f64 / 1e6,
                stats.max_interval as f64 / 1e9,
                time_format::timestamp(stats.max_interval_end, utc)
            ),
            None => format!("\n{pad}  Rate: n/a ({} message(s))", stats.count),
        }
    }

    /// The stored message definitions (`info --schemas`): per type its encoding, hash and text.
    pub fn schemas_text(&self) -> String {
        let mut out = String::new();
        if self.definitions.is_empty() {
            out.push_str("(the bag stores no message definitions)\n");
        }
        for def in &self.definitions {
            let from = match &self.supplied {
                (types, Some(store)) if types.contains(&def.topic_type) => {
                    format!(", not stored: from typestore {store}")
                }
                _ => String::new(),
            };
            out += &format!(
                "=== {} ({}{}{from}) ===\n{}",
                def.topic_type,
                def.encoding,
                if def.type_description_hash.is_empty() {
                    String::new()
                } else {
                    format!(", {}", def.type_description_hash)
                },
                def.encoded_message_definition
            );
            if !def.encoded_message_definition.ends_with('\n') {
                out.push('\n');
            }
        }
        out
    }

    /// The `ros2 bag info` text.
    pub fn to_text(&self, options: &TextOptions) -> String {
        let (topics, services) = self.sorted(options.sort);
        if options.topic_names_only {
            return topics
                .iter()
                .map(|t| format!("{}\n", t.topic_metadata.name))
                .collect();
        }
        let m = &self.metadata;
        let pad = " ".repeat(19);
        let mut out = String::from("\n");
        out += &format!(
            "Files:             {}\n",
            m.relative_file_paths.join(&format!("\n{pad}"))
        );
        out += &format!("Bag size:          {}\n", time_format::size(m.bag_size));
        out += &format!("Storage id:        {}\n", m.storage_identifier);
        out += &format!(
            "ROS Distro:        {}\n",
            if m.ros_distro.is_empty() {
                "unknown"
            } else {
                &m.ros_distro
            }
        );
        out += &format!("Duration:          {}\n", time_format::duration(m.duration));
        out += &format!(
            "Start:             {}\n",
            time_format::timestamp(m.starting_time, options.utc)
        );
        out += &format!(
            "End:               {}\n",
            time_format::timestamp(m.end_time(), options.utc)
        );
        let listed: u64 = topics.iter().map(|t| t.message_count).sum();
        let others: u64 = m
            .topics_with_message_count
            .iter()
            .map(|t| t.message_count)
            .sum::<u64>()
            - listed;
        out += &format!(
            "Messages:          {}\n",
            m.message_count - others.min(m.message_count)
        );
        let topic_lines: Vec<String> = topics
            .iter()
            .map(|t| {
                format!(
                    "Topic: {} | Type: {} | Count: {} | {}Serialization Format: {}{}{}",
                    t.topic_metadata.name,
                    t.topic_metadata.type_name,
                    t.message_count,
                    self.size_part(&t.topic_metadata.name),
                    t.topic_metadata.serialization_format,
                    self.hash_part(t),
                    self.rate_part(&t.topic_metadata.name, &pad, options.utc)
                )
            })
            .collect();
        out += &format!(
            "Topic information: {}\n",
            topic_lines.join(&format!("\n{pad}"))
        );
        out += &format!("Service:           {}\n", services.len());
        let service_lines: Vec<String> = services
            .iter()
            .filter_map(|t| {
                let (name, type_name) = service_of(t)?;
                Some(format!(
                    "Service: {name} | Type: {type_name} | Event Count: {} | {}Serialization Format: {}{}",
                    t.message_count,
                    self.size_part(&t.topic_metadata.name),
                    t.topic_metadata.serialization_format,
                    self.hash_part(t)
                ))
            })
            .collect();
        out += &format!(
            "Service information: {}\n",
            service_lines.join(&format!("\n{pad}  "))
        );
        out += &self.actions_text();
        if !m.custom_data.is_empty() {
            let pairs: Vec<String> = m
                .custom_data
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            out += &format!("Custom data:       {}\n", pairs.join(&format!("\n{pad}")));
        }
        if let Some(device) = &self.realsense {
            out += &Self::realsense_text(device, &pad);
        }
        out += &self.extras_text(&pad);
        out
    }

    /// The MCAP metadata records (rosbag2's own left out) and attachments, when there are any.
    fn extras_text(&self, pad: &str) -> String {
        let mut out = String::new();
        let mut records = Vec::new();
        for (_, extras) in &self.extras {
            for m in extras.user_metadata() {
                let pairs: Vec<String> =
                    m.metadata.iter().map(|(k, v)| format!("{k}={v}")).collect();
                let line = format!("{}: {}", m.name, pairs.join(", "));
                if !records.contains(&line) {
                    records.push(line);
                }
            }
        }
        if !records.is_empty() {
            out += &format!("Metadata records:  {}\n", records.join(&format!("\n{pad}")));
        }
        let attachments: Vec<String> = self
            .extras
            .iter()
            .flat_map(|(file, e)| e.attachments.iter().map(|a| crate::attach::line(a, file)))
            .collect();
        if !attachments.is_empty() {
            out += &format!(
                "Attachments:       {}\n",
                attachments.join(&format!("\n{pad}"))
            );
        }
        out
    }

    /// The same facts as JSON, for scripts.
    pub fn to_json(&self) -> serde_json::Value {
        let m = &self.metadata;
        json!({
            "files": m.files.iter().map(|f| json!({
                "path": f.path, "starting_time_ns": f.starting_time, "duration_ns": f.duration, "message_count": f.message_count,
            })).collect::<Vec<_>>(),
            "relative_file_paths": m.relative_file_paths,
            "bag_size": m.bag_size,
            "storage_identifier": m.storage_identifier,
            "ros_distro": m.ros_distro,
            "duration_ns": m.duration,
            "starting_time_ns": m.starting_time,
            "ending_time_ns": m.end_time(),
            "message_count": m.message_count,
            "topics": self.sorted(SortBy::Name).0.iter().map(|t| json!({
                "name": t.topic_metadata.name,
                "type": t.topic_metadata.type_name,
                "serialization_format": t.topic_metadata.serialization_format,
                "message_count": t.message_count,
                "offered_qos_profiles": rosbag2_rs_storage::qos::serialize_profiles(&t.topic_metadata.offered_qos_profiles),
                "type_description_hash": t.topic_metadata.type_description_hash,
                "size": self.sizes.as_ref().map(|s| s.get(&t.topic_metadata.name).copied().unwrap_or(0)),
                "arrival": self.arrivals.get(&t.topic_metadata.name).map(|a| json!({
                    "mean_rate_hz": a.mean_rate(),
                    "min_interval_ns": a.min_interval,
                    "max_interval_ns": a.max_interval,
                    "largest_gap_end_ns": a.max_interval_end,
                })),
            })).collect::<Vec<_>>(),
            "services": self.sorted(SortBy::Name).1.iter().filter_map(|t| {
                let (name, type_name) = service_of(t)?;
                Some(json!({"name": name, "type": type_name, "event_count": t.message_count}))
            }).collect::<Vec<_>>(),
            "actions": self.actions().iter().map(|a| json!({
                "name": a.name,
                "type": a.type_name,
                "topics": a.of_kind(false).map(|(i, t)| json!({"name": i.short_name(), "message_count": t.message_count})).collect::<Vec<_>>(),
                "services": a.of_kind(true).map(|(i, t)| json!({"name": i.short_name(), "event_count": t.message_count})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "compression_format": m.compression_format,
            "compression_mode": m.compression_mode,
            "custom_data": m.custom_data,
            "metadata_version": m.version,
            "metadata_records": self.extras.iter().flat_map(|(_, e)| e.user_metadata()).map(|r| json!({
                "name": r.name, "metadata": r.metadata,
            })).collect::<Vec<_>>(),
            "attachments": self.extras.iter().flat_map(|(f, e)| e.attachments.iter().map(move |a| json!({
                "name": a.name, "media_type": a.media_type, "size": a.data.len(),
                "log_time_ns": a.log_time, "create_time_ns": a.create_time,
                "file": f.display().to_string(),
            }))).collect::<Vec<_>>(),
            "definitions": self.definitions.iter().map(|d| json!({
                "type": d.topic_type, "encoding": d.encoding,
                "type_description_hash": d.type_description_hash,
                "text": d.encoded_message_definition,
            })).collect::<Vec<_>>(),
            "realsense": self.realsense.as_ref().map(|d| json!({
                "file_version": d.file_version,
                "info": d.info.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
                "sensors": d.sensors.iter().map(|s| json!({
                    "name": s.name(),
                    "options": s.options.iter().map(|o| json!({"name": o.name, "value": o.value, "description": o.description, "changes": o.history.iter().map(|(t, v)| json!([t, v])).collect::<Vec<_>>()})).collect::<Vec<_>>(),
                    "streams": s.streams.iter().map(|p| json!({
                        "stream": p.stream, "index": p.index, "format": p.format, "fps": p.fps,
                        "width": p.intrinsics.as_ref().map(|i| i.width),
                        "height": p.intrinsics.as_ref().map(|i| i.height),
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosbag2_rs_storage::TopicMetadata;

    fn topic(name: &str, type_name: &str, count: u64) -> TopicInformation {
        TopicInformation {
            topic_metadata: TopicMetadata::new(name, type_name),
            message_count: count,
        }
    }

    const STRING_HASH: &str =
        "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

    fn summary() -> BagSummary {
        BagSummary {
            metadata: BagMetadata {
                message_count: 28,
                topics_with_message_count: vec![
                    TopicInformation {
                        topic_metadata: TopicMetadata {
                            type_description_hash: STRING_HASH.into(),
                            ..TopicMetadata::new("/zeta", "std_msgs/msg/String")
                        },
                        message_count: 1,
                    },
                    topic(
                        "/add/_service_event",
                        "example_interfaces/srv/AddTwoInts_Event",
                        4,
                    ),
                    topic("/alpha", "sensor_msgs/msg/Imu", 12),
                    topic("/fib/_action/status", "action_msgs/msg/GoalStatusArray", 5),
                    topic(
                        "/fib/_action/send_goal/_service_event",
                        "test_msgs/action/Fibonacci_SendGoal_Event",
                        2,
                    ),
                    topic(
                        "/fib/_action/feedback",
                        "test_msgs/action/Fibonacci_FeedbackMessage",
                        3,
                    ),
                    topic(
                        "/fib/_action/cancel_goal/_service_event",
                        "action_msgs/srv/CancelGoal_Event",
                        1,
                    ),
                ],
                ..Default::default()
            },
            sizes: Some(HashMap::from([("/alpha".to_string(), 3 * 1024)])),
            arrivals: HashMap::new(),
            definitions: Vec::new(),
            realsense: None,
            supplied: (Vec::new(), None),
            extras: Vec::new(),
        }
    }

    #[test]
    fn topics_sorted_services_apart_and_sizes_with_verbose() {
        let text = summary().to_text(&TextOptions::default());
        let alpha = text.find("Topic: /alpha").unwrap();
        assert!(alpha < text.find("Topic: /zeta").unwrap(), "{text}");
        assert!(
            text.contains("Messages:          13\n"),
            "service events left out: {text}"
        );
        assert!(text.contains("Service:           1\n"));
        assert!(text.contains(
            "Service: /add | Type: example_interfaces/srv/AddTwoInts | Event Count: 4 | "
        ));
        assert!(text.contains("Count: 12 | Size Contribution: 3.0 KiB | Serialization"));
        assert!(text.contains(&format!(
            "Count: 1 | Size Contribution: 0 B | Serialization Format: cdr | Type Hash: {STRING_HASH}\n"
        )));
        let mut short = summary();
        short.sizes = None;
        assert!(!short.to_text(&TextOptions::default()).contains("Type Hash"));
        assert!(!text.contains("Topic: /add"), "{text}");
        assert!(!text.contains("_action"), "{text}");
        assert!(
            text.ends_with(
                "Service:           1\n\
             Service information: Service: /add | Type: example_interfaces/srv/AddTwoInts | \
             Event Count: 4 | Size Contribution: 0 B | Serialization Format: cdr\n\
             Actions:           1\n\
             Action information:\n  \
             Action: /fib | Type: test_msgs/action/Fibonacci | Topics: 2 | Services: 2 | \
             Serialization Format: cdr\n    \
             Topic: feedback | Count: 3\n    \
             Topic: status | Count: 5\n    \
             Service: send_goal | Event Count: 2\n    \
             Service: cancel_goal | Event Count: 1\n"
            ),
            "{text}"
        );
        let json = summary().to_json();
        assert_eq!(json["actions"][0]["type"], "test_msgs/action/Fibonacci");
        assert_eq!(json["actions"][0]["services"][1]["name"], "cancel_goal");
        assert_eq!(json["services"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn sort_by_count_and_names_only() {
        let s = summary();
        let names = s.to_text(&TextOptions {
            topic_names_only: true,
            sort: SortBy::Count,
            ..Default::default()
        });
        assert_eq!(names, "/zeta\n/alpha\n");
        let by_type = s.to_text(&TextOptions {
            topic_names_only: true,
            sort: SortBy::Type,
            ..Default::default()
        });
        assert_eq!(by_type, "/alpha\n/zeta\n");
    }
}
