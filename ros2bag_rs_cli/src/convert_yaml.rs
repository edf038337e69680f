//! `convert -o options.yaml`: the output-bag file of `ros2 bag convert`. It has one top-level key,
//! `output_bags`, a list of storage and record options (`uri` required; `storage_id`,
//! `all_topics`, `topics`, `topic_types`, `regex`, `exclude_*`, `max_bagfile_size`,
//! `max_bagfile_duration`, `storage_preset_profile`, `compression_mode`, `compression_format`,
//! `compression_queue_size`, `compression_threads`, `start_time_ns`,
//! `end_time_ns`, `custom_data`, ...). Each entry becomes one conversion of the same inputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use rosbag2_rs_storage::{BagWriterOptions, ConvertOptions, SequentialReader, TopicFilter};
use rosbag2_rs_transport::cli::WriterArgs;
use yaml_rust2::{Yaml, YamlLoader};

/// Whether `convert -o PATH` names an options file rather than an output bag.
pub fn is_options_file(path: &Path) -> bool {
    path.is_file() && path.extension().is_some_and(|e| e == "yaml" || e == "yml")
}

/// One entry of `output_bags`, read field by field.
struct Entry<'a> {
    yaml: &'a Yaml,
    index: usize,
}

impl Entry<'_> {
    fn context(&self, key: &str) -> String {
        format!("output_bags[{}].{key}", self.index)
    }

    fn string(&self, key: &str) -> Result<Option<String>> {
        match &self.yaml[key] {
            Yaml::BadValue | Yaml::Null => Ok(None),
            Yaml::String(s) if s.is_empty() => Ok(None),
            Yaml::String(s) => Ok(Some(s.clone())),
            Yaml::Integer(i) => Ok(Some(i.to_string())),
            Yaml::Real(r) => Ok(Some(r.clone())),
            _ => bail!("{}: expected a string", self.context(key)),
        }
    }

    fn integer(&self, key: &str) -> Result<Option<i64>> {
        match &self.yaml[key] {
            Yaml::BadValue | Yaml::Null => Ok(None),
            Yaml::Integer(i) => Ok(Some(*i)),
            _ => bail!("{}: expected an integer", self.context(key)),
        }
    }

    fn flag(&self, key: &str) -> Result<bool> {
        match &self.yaml[key] {
            Yaml::BadValue | Yaml::Null => Ok(false),
            Yaml::Boolean(b) => Ok(*b),
            _ => bail!("{}: expected true or false", self.context(key)),
        }
    }

    fn list(&self, key: &str) -> Result<Vec<String>> {
        match &self.yaml[key] {
            Yaml::BadValue | Yaml::Null => Ok(Vec::new()),
            Yaml::Array(items) => items
                .iter()
                .map(|i| match i {
                    Yaml::String(s) => Ok(s.clone()),
                    _ => bail!("{}: expected a list of strings", self.context(key)),
                })
                .collect(),
            _ => bail!("{}: expected a list", self.context(key)),
        }
    }

    /// Refuses a setting rosbag2-rs does not offer instead of writing something else.
    fn unsupported(&self, key: &str, why: &str) -> Result<()> {
        let set = match &self.yaml[key] {
            Yaml::BadValue | Yaml::Null => false,
            Yaml::Boolean(b) => *b,
            Yaml::String(s) => !s.is_empty() && s != "none",
            Yaml::Array(a) => !a.is_empty(),
            _ => true,
        };
        if set {
            bail!("{}: {why}", self.context(key));
        }
        Ok(())
    }
}

/// A regex that finds `pattern` anywhere in a name (rosbag2's convert searches, as its
/// recorder does), for a filter that matches whole names.
fn searching(pattern: Option<String>) -> Option<String> {
    pattern.map(|p| format!(".*(?:{p}).*"))
}

/// The conversions an options file describes, each reading `inputs`.
pub fn read(path: &Path, inputs: &[PathBuf]) -> Result<Vec<ConvertOptions>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let docs = YamlLoader::load_from_str(&text)
        .with_context(|| format!("{} is not YAML", path.display()))?;
    let Some(Yaml::Array(bags)) = docs.first().map(|d| &d["output_bags"]) else {
        bail!(
            "{}: expected a top-level key output_bags with a list of output bags",
            path.display()
        );
    };
    let mut topics_by_type: Option<Vec<(String, String)>> = None;
    let mut out = Vec::new();
    for (index, yaml) in bags.iter().enumerate() {
        let entry = Entry { yaml, index };
        let uri = entry
            .string("uri")?
            .with_context(|| format!("{}: every output bag needs a uri", path.display()))?;
        for (key, why) in [
            ("all_services", "service recording is not supported yet"),
            ("services", "service recording is not supported yet"),
            ("exclude_services", "service recording is not supported yet"),
            ("exclude_topic_types", "not supported yet"),
            (
                "storage_config_uri",
                "storage configuration files are not supported yet",
            ),
        ] {
            entry.unsupported(key, why)?;
        }
        if let Some(format) = entry.string("rmw_serialization_format")? {
            anyhow::ensure!(
                format == "cdr",
                "{}: only cdr is written",
                entry.context("rmw_serialization_format")
            );
        }
        let mut topics = entry.list("topics")?;
        let types = entry.list("topic_types")?;
        if !types.is_empty() {
            let known = match &topics_by_type {
                Some(known) => known,
                None => {
                    let reader = SequentialReader::open_many(inputs)?;
                    topics_by_type.insert(
                        reader
                            .topics()
                            .iter()
                            .map(|t| {
                                (
                                    t.topic_metadata.name.clone(),
                                    t.topic_metadata.type_name.clone(),
                                )
                            })
                            .collect(),
                    )
                }
            };
            topics.extend(
                known
                    .iter()
                    .filter(|(_, t)| types.contains(t))
                    .map(|(name, _)| name.clone()),
            );
        }
        let regex = searching(entry.string("regex")?);
        let all = entry.flag("all_topics")?;
        if !all && topics.is_empty() && regex.is_none() {
            bail!(
                "{}: output bag '{uri}' selects no topics (set all_topics, topics, topic_types \
                 or regex); rosbag2 would write it empty",
                path.display()
            );
        }
        let filter = if all {
            TopicFilter::from_parts(
                Vec::new(),
                None,
                entry.list("exclude_topics")?,
                searching(entry.string("exclude_regex")?).as_deref(),
            )?
        } else {
            TopicFilter::from_parts(
                topics,
                regex.as_deref(),
                entry.list("exclude_topics")?,
                searching(entry.string("exclude_regex")?).as_deref(),
            )?
        };
        let mut custom_data = BTreeMap::new();
        for pair in entry.list("custom_data")? {
            let (k, v) = pair
                .split_once('=')
                .with_context(|| format!("{}: expected key=value", entry.context("custom_data")))?;
            custom_data.insert(k.to_string(), v.to_string());
        }
        let writer = WriterArgs {
            storage: entry.string("storage_id")?.unwrap_or_else(|| "mcap".into()),
            storage_preset_profile: entry
                .string("storage_preset_profile")?
                .unwrap_or_else(|| "none".into()),
            compression_format: entry.string("compression_format")?,
            compression_mode: entry
                .string("compression_mode")?
                .unwrap_or_else(|| "none".into()),
            compression_queue_size: entry.integer("compression_queue_size")?.unwrap_or(1).max(0)
                as usize,
            compression_threads: entry.integer("compression_threads")?.unwrap_or(0).max(0) as usize,
            max_bag_size: entry.integer("max_bagfile_size")?.unwrap_or(0).max(0) as u64,
            max_bag_duration: entry.integer("max_bagfile_duration")?.unwrap_or(0).max(0) as f64,
        };
        out.push(ConvertOptions {
            inputs: inputs.to_vec(),
            output: BagWriterOptions {
                custom_data,
                ..writer.options(PathBuf::from(&uri))?
            },
            filter,
            start: entry.integer("start_time_ns")?.filter(|t| *t > 0),
            end: entry.integer("end_time_ns")?.filter(|t| *t > 0),
            skip_unknown: false,
        });
    }
    anyhow::ensure!(!out.is_empty(), "{}: output_bags is empty", path.display());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(yaml: &str) -> Result<Vec<ConvertOptions>> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.yaml");
        std::fs::write(&file, yaml).unwrap();
        read(&file, &[PathBuf::from("in")])
    }

    #[test]
    fn output_bags_as_rosbag2_writes_them() {
        let bags = options(
            "output_bags:\n- uri: split1\n  topics: [/a, /b]\n  storage_id: sqlite3\n  \
             max_bagfile_size: 1000\n- uri: all\n  all_topics: true\n  exclude_regex: cam\n  \
             custom_data: [k=v]\n",
        )
        .unwrap();
        assert_eq!(bags.len(), 2);
        assert_eq!(bags[0].output.uri, PathBuf::from("split1"));
        assert_eq!(
            bags[0].output.storage.storage,
            rosbag2_rs_storage::StorageId::Sqlite3
        );
        assert_eq!(bags[0].output.max_bagfile_size, 1000);
        assert!(bags[0].filter.matches("/a") && !bags[0].filter.matches("/c"));
        assert!(bags[1].filter.matches("/imu") && !bags[1].filter.matches("/camera/image"));
        assert_eq!(bags[1].output.custom_data["k"], "v");
    }

    #[test]
    fn refusals_name_the_entry() {
        for (yaml, expected) in [
            ("output_bags:\n- topics: [/a]\n", "needs a uri"),
            ("output_bags:\n- uri: x\n", "selects no topics"),
            (
                "output_bags:\n- uri: x\n  all_topics: true\n  storage_config_uri: c.yaml\n",
                "output_bags[0].storage_config_uri",
            ),
            ("output_bags:\n- uri: x\n  all_topics: 3\n", "true or false"),
            ("bags: []\n", "output_bags"),
        ] {
            let Err(e) = options(yaml) else {
                panic!("accepted: {yaml}")
            };
            let e = e.to_string();
            assert!(e.contains(expected), "{yaml}: {e}");
        }
    }
}
