//! Record mode's recordings: the bag, its cache and its writer thread, opened at start and
//! again by each `record` after a `stop` (rosbag2 Lyrical's recorder control), and what runs
//! at a scheduled time.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use rosbag2_rs_interfaces::rosbag2_interfaces::msg::WriteSplitEvent;
use rosbag2_rs_interfaces::{try_to_cdr, MessageType};
use rosbag2_rs_storage::{BagWriter, BagWriterOptions, QosProfile};

use super::cache::{CacheWriter, Command, MessageCache};
use super::schedule::{Schedule, TimeMode};
use super::stats::TopicRegistry;
use super::{Inner, RecordOptions, RecorderError, Result, Sink, WRITE_SPLIT_TOPIC};
use rosbag2_rs_middleware::names::expand_name;

/// One recording: its bag directory, the cache the subscriptions fill and the thread that
/// writes it.
pub(super) struct Recording {
    pub dir: PathBuf,
    pub cache: Arc<MessageCache>,
    writer: CacheWriter,
}

/// The bag writer options of `options`.
pub(super) fn bag_options(options: &RecordOptions) -> BagWriterOptions {
    BagWriterOptions {
        uri: options.uri.clone(),
        storage: options.storage.clone(),
        max_bagfile_size: options.max_bagfile_size,
        max_bagfile_duration: options.max_bagfile_duration,
        custom_data: options.custom_data.clone(),
        compression: options.compression,
        attachments: Vec::new(),
    }
}

/// `uri`, or where it exists `uri(1)`, `uri(2)`, ...: the first that does not (as rosbag2
/// names the bag of a `record` whose directory exists).
pub(super) fn free_uri(uri: &Path) -> PathBuf {
    if !uri.exists() {
        return uri.to_path_buf();
    }
    (1..)
        .map(|n| {
            let mut name = uri.as_os_str().to_owned();
            name.push(format!("({n})"));
            PathBuf::from(name)
        })
        .find(|candidate| !candidate.exists())
        .expect("some numbered name is free")
}

impl Inner {
    /// The topics of the current recording.
    pub(super) fn registry(&self) -> Arc<TopicRegistry> {
        self.registry.lock().clone()
    }

    /// `f` of the current recording; `None` when stopped (or in snapshot mode).
    pub(super) fn with_recording<T>(&self, f: impl FnOnce(&Recording) -> T) -> Option<T> {
        match &self.sink {
            Sink::Bag(recording) => recording.lock().as_ref().map(f),
            Sink::Snapshots { .. } => None,
        }
    }

    /// Whether a bag is being recorded (snapshot mode: always, the buffers fill).
    pub(super) fn is_recording(&self) -> bool {
        match &self.sink {
            Sink::Bag(recording) => recording.lock().is_some(),
            Sink::Snapshots { .. } => true,
        }
    }

    /// The bag being recorded (snapshot mode: the snapshots' prefix); `None` when stopped.
    pub(super) fn uri(&self) -> Option<PathBuf> {
        match &self.sink {
            Sink::Bag(recording) => recording.lock().as_ref().map(|r| r.dir.clone()),
            Sink::Snapshots { prefix, .. } => Some(prefix.clone()),
        }
    }

    /// Creates the bag at `uri` (it must not exist) with a new cache, writer thread and topic
    /// registry, and makes it the current recording; its splits are announced on
    /// `events/write_split`.
    pub(super) fn open_recording(&self, uri: PathBuf) -> Result<PathBuf> {
        let Sink::Bag(current) = &self.sink else {
            return Err(snapshot_mode());
        };
        let options = &self.options;
        let registry = Arc::new(TopicRegistry::default());
        let mut bag_writer = BagWriter::create(BagWriterOptions {
            uri,
            ..bag_options(options)
        })?;
        bag_writer.set_retention(options.retention);
        bag_writer.set_min_free_space(options.min_free_space);
        bag_writer.set_repeat_latched(options.latched_depth());
        bag_writer.set_repeat_topics(self.repeat_topics.clone());
        let (counted, counter) = (registry.clone(), self.middleware.clone());
        bag_writer
            .set_custom_data_source(move || counted.health_counts(|t| counter.lost_messages(t)));
        let qos = rosbag2_rs_middleware::names::event_qos(
            &self.qos_overrides,
            WRITE_SPLIT_TOPIC,
            self.middleware.node(),
            QosProfile {
                depth: 1,
                ..QosProfile::default()
            },
        );
        let events = self.middleware.create_publisher(
            WRITE_SPLIT_TOPIC,
            WriteSplitEvent::TYPE_NAME,
            &qos,
        )?;
        let node_name = self.middleware.node().fully_qualified_name();
        bag_writer.on_split(move |split| {
            let event = WriteSplitEvent {
                closed_file: split.closed_file.display().to_string(),
                opened_file: split.opened_file.display().to_string(),
                node_name: node_name.clone(),
            };
            match try_to_cdr(&event) {
                Ok(bytes) => {
                    if let Err(e) = events.publish(&bytes.into()) {
                        log::warn!("cannot publish the split event: {e}");
                    }
                }
                Err(e) => log::warn!("cannot encode the split event: {e}"),
            }
        });
        let dir = bag_writer.dir().to_path_buf();
        let (size, duration) = (options.max_cache_size, options.max_cache_duration);
        let cache = Arc::new(if options.snapshot_files {
            MessageCache::circular(size, duration)
        } else {
            MessageCache::new(size, duration)
        });
        let writer = CacheWriter::spawn(
            bag_writer,
            cache.clone(),
            registry.clone(),
            self.scheduled_split.clone(),
        )?;
        *self.registry.lock() = registry;
        *self.last_bag.lock() = Some(dir.clone());
        *current.lock() = Some(Recording {
            dir: dir.clone(),
            cache,
            writer,
        });
        Ok(dir)
    }

    /// Writes what the current recording has cached and closes its bag with its final
    /// metadata (each topic's `written` count from it); the writer's first error, if any.
    pub(super) fn close_recording(&self) -> Option<RecorderError> {
        let Sink::Bag(current) = &self.sink else {
            return None;
        };
        let recording = current.lock().take()?;
        self.finish(recording)
    }

    /// Closes `recording`'s bag: see [`Inner::close_recording`].
    fn finish(&self, recording: Recording) -> Option<RecorderError> {
        let (metadata, error) = recording.writer.finish();
        *self.drop_cause_at_close.lock() = recording.cache.drop_cause();
        if let Some(metadata) = metadata {
            for topic in self.registry().all() {
                let written = metadata
                    .topic(&topic.metadata.name)
                    .map_or(0, |t| t.message_count);
                topic.counters.written.store(written, Ordering::Relaxed);
            }
        }
        error
    }

    /// The `record` service: starts recording again after a `stop`, to `uri` (empty: the one
    /// given at start), numbered `(1)`, `(2)`, ... where that bag exists; returns its
    /// directory. With `start_ns` (Lyrical's `start_time`) still ahead by the recorder's clock,
    /// the bag is opened and the topics subscribed at once, paused until the first message
    /// received at or after it, which is the bag's first: recorders asked for one time start
    /// between the same two messages (rosbag2 opens the bag when its timer fires).
    pub(super) fn record(&self, uri: &str, start_ns: Option<i64>) -> Result<PathBuf> {
        let _transition = self.transition.lock();
        if self.is_recording() {
            return Err(RecorderError::NotAvailable(
                "the recorder is already recording".into(),
            ));
        }
        let uri = if uri.is_empty() {
            self.options.uri.clone()
        } else {
            PathBuf::from(uri)
        };
        let dir = self.open_recording(free_uri(&uri))?;
        log::info!("recording to {}", dir.display());
        if let Some(time_ns) = start_ns.filter(|t| *t > self.now()) {
            self.pause();
            self.schedule_resume(Schedule {
                time_ns,
                mode: TimeMode::Node,
                topic: None,
            })?;
        }
        self.failed_topics.lock().clear();
        self.discovery_running
            .store(self.options.discovery, Ordering::SeqCst);
        self.discover();
        Ok(dir)
    }

    /// The `stop` service: stops discovery, unsubscribes, drops what is scheduled and closes
    /// the bag; `record` can start again. Returns the closed bag's directory.
    pub(super) fn stop_recording(&self) -> Result<PathBuf> {
        let _transition = self.transition.lock();
        let Sink::Bag(current) = &self.sink else {
            return Err(snapshot_mode());
        };
        // Under the subscriptions' lock, which a discovery pass holds: no pass subscribes to
        // the closing recording once it is taken.
        let recording = {
            let mut subscriptions = self.subscriptions.lock();
            self.discovery_running.store(false, Ordering::SeqCst);
            subscriptions.clear();
            current.lock().take()
        };
        let Some(recording) = recording else {
            return Err(RecorderError::NotAvailable(
                "the recorder is already stopped".into(),
            ));
        };
        self.scheduled_split.clear();
        self.scheduled_resume.clear();
        let dir = recording.dir.clone();
        if let Some(error) = self.finish(recording) {
            return Err(error);
        }
        log::info!("recording stopped: {} closed", dir.display());
        Ok(dir)
    }

    /// The `subscribe_to_topics` service: records `topics` from now on, whatever the selection,
    /// each of the type at its index in `types` (empty: the one on the graph). Returns the
    /// subscribed topics (expanded names) and those that could not be (not on the graph, of
    /// another type, of several types, or an invalid name; as asked).
    pub(super) fn subscribe_to(
        &self,
        topics: &[String],
        types: &[String],
    ) -> Result<(Vec<String>, Vec<String>)> {
        if !types.is_empty() && types.len() != topics.len() {
            return Err(RecorderError::InvalidOptions(format!(
                "{} topic types for {} topics",
                types.len(),
                topics.len()
            )));
        }
        if !self.is_recording() {
            return Err(RecorderError::NotAvailable(
                "the recorder is not recording".into(),
            ));
        }
        let mut unavailable = Vec::new();
        let mut asked = Vec::new();
        for (i, topic) in topics.iter().enumerate() {
            let Ok(name) = expand_name(topic, self.middleware.node()) else {
                unavailable.push(topic.clone());
                continue;
            };
            let wanted = types.get(i).filter(|t| !t.is_empty()).cloned();
            self.requested_topics.lock().insert(name.clone(), wanted);
            asked.push((topic, name));
        }
        self.discover();
        let subscribed = self.subscriptions.lock();
        let mut recorded = Vec::new();
        for (topic, name) in asked {
            if subscribed.contains_key(&name) {
                recorded.push(name);
            } else {
                self.requested_topics.lock().remove(&name);
                unavailable.push(topic.clone());
            }
        }
        Ok((recorded, unavailable))
    }

    /// Whether discovery looks for new topics now.
    pub(super) fn is_discovery_running(&self) -> bool {
        self.discovery_running.load(Ordering::SeqCst)
    }

    /// Starts (`true`) or stops discovery; an error when it already is so, or (to start) when
    /// not recording.
    pub(super) fn set_discovery(&self, running: bool) -> Result<()> {
        if running && !self.is_recording() {
            return Err(RecorderError::NotAvailable(
                "the recorder is not recording".into(),
            ));
        }
        if self.discovery_running.swap(running, Ordering::SeqCst) == running {
            return Err(RecorderError::NotAvailable(format!(
                "discovery is already {}",
                if running { "running" } else { "stopped" }
            )));
        }
        log::info!("discovery {}", if running { "started" } else { "stopped" });
        Ok(())
    }

    /// Splits at `schedule`'s time: at once when that is already past by the recorder's clock,
    /// else before the first message that makes it due (replacing a pending one).
    pub(super) fn schedule_split(&self, schedule: Schedule) -> Result<()> {
        if !self.is_recording() {
            return Err(RecorderError::NotAvailable(
                "the recorder is not recording".into(),
            ));
        }
        if schedule.due_by_clock(self.now()) {
            return self.split().map(drop);
        }
        log::info!(
            "split scheduled at {} ns by {} time{}",
            schedule.time_ns,
            schedule.mode.as_str(),
            on_topic(&schedule)
        );
        if let Some(old) = self.scheduled_split.set(schedule) {
            log::warn!("the split scheduled at {} ns is replaced", old.time_ns);
        }
        Ok(())
    }

    /// Resumes at `schedule`'s time: at once when already past by the recorder's clock, else
    /// with the first message that makes it due (record mode; replacing a pending one).
    pub(super) fn schedule_resume(&self, schedule: Schedule) -> Result<()> {
        if matches!(self.sink, Sink::Snapshots { .. }) {
            return Err(snapshot_mode());
        }
        if schedule.due_by_clock(self.now()) {
            self.resume_after(schedule.time_ns);
            return Ok(());
        }
        log::info!(
            "resume scheduled at {} ns by {} time{}",
            schedule.time_ns,
            schedule.mode.as_str(),
            on_topic(&schedule)
        );
        if let Some(old) = self.scheduled_resume.set(schedule) {
            log::warn!("the resume scheduled at {} ns is replaced", old.time_ns);
        }
        Ok(())
    }

    /// Runs the node-time schedules that the recorder's clock reading `now` makes due with no
    /// message to carry them.
    pub(super) fn run_due_by_clock(&self, now: i64) {
        if let Some(due) = self.scheduled_resume.take_if(|s| s.due_by_clock(now)) {
            self.resume_after(due.time_ns);
        }
        if now >= self.pause_from.load(Ordering::SeqCst) && !self.is_paused() {
            self.pause();
        }
        if self
            .scheduled_split
            .take_if(|s| s.due_by_clock(now))
            .is_some()
        {
            // The answer is not awaited: the writer logs a failure.
            let (reply, _) = crossbeam_channel::bounded(1);
            if let Err(e) = self.command(Command::Split(reply)) {
                log::warn!("scheduled split: {e}");
            }
        }
    }
}

fn snapshot_mode() -> RecorderError {
    RecorderError::NotAvailable("not available in snapshot mode".into())
}

fn on_topic(schedule: &Schedule) -> String {
    schedule
        .topic
        .as_ref()
        .map(|t| format!(" of '{t}'"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_uri_is_numbered_as_rosbag2_does() {
        let dir = tempfile::tempdir().unwrap();
        let uri = dir.path().join("bag");
        assert_eq!(free_uri(&uri), uri);
        std::fs::create_dir(&uri).unwrap();
        std::fs::create_dir(dir.path().join("bag(1)")).unwrap();
        assert_eq!(free_uri(&uri), dir.path().join("bag(2)"));
    }
}
