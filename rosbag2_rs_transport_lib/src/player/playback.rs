//! The playback thread: takes messages from the read-ahead queue, sleeps on the player clock
//! until each one is due, publishes it, and serves play-next, burst and repositioning between
//! messages.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rosbag2_rs_clock::{Clock, Duration, Time};
use rosbag2_rs_interfaces::rosbag2_interfaces::msg::ReadSplitEvent;
use rosbag2_rs_storage::{SequentialReader, SerializedMessage, TopicFilter};

use super::read_ahead::{Item, ReadAhead};
use super::service_requests::DISCOVERY_WAIT;
use super::{
    Core, PlaySpan, PlaybackEnd, PlaybackSummary, PlayerError, Reposition, Request, WAIT, WAIT_REAL,
};

/// Clears the playing flag however playback ends, and refuses requests left in the queue
/// (naming the failure when one ended the playback).
struct PlayingGuard<'a> {
    core: &'a Core,
    failure: Option<String>,
}

impl Drop for PlayingGuard<'_> {
    fn drop(&mut self) {
        let control = &self.core.control;
        *control.failure.lock() = self.failure.take();
        // The stop that ended this playback is spent; the next playback starts afresh.
        control.stop.store(false, Ordering::SeqCst);
        control.playing.store(false, Ordering::SeqCst);
        self.core.refuse_queued_requests();
    }
}

impl Core {
    /// Waits, up to [`DISCOVERY_WAIT`], for the services whose recorded requests are sent
    /// (`--publish-service-requests`, `--send-actions-as-client`): a player started together
    /// with the servers it calls would otherwise send its first requests late, after their
    /// discovery, and the recorded spacing would be lost.
    fn wait_for_services(&self) {
        let deadline = std::time::Instant::now() + DISCOVERY_WAIT;
        let missing = || {
            self.publishers
                .values()
                .any(|p| p.calls_service && p.publisher.subscription_count() == 0)
        };
        while missing()
            && std::time::Instant::now() < deadline
            && !self.control.stop.load(Ordering::SeqCst)
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Runs one playback of `span` on the calling thread, with `/clock` published on a helper
    /// thread when a frequency is set.
    pub(super) fn play(&self, span: PlaySpan) -> Result<PlaybackSummary, PlayerError> {
        if self.control.playing.swap(true, Ordering::SeqCst) {
            return Err(PlayerError::Refused("already playing".into()));
        }
        self.control.played.store(true, Ordering::SeqCst);
        let mut playing = PlayingGuard {
            core: self,
            failure: None,
        };
        let result = self.play_while_playing(span);
        if let Err(e) = &result {
            playing.failure = Some(format!("playback failed: {}", crate::error_chain::Chain(e)));
        }
        result
    }

    /// [`play`](Self::play) once the playing flag is set.
    fn play_while_playing(&self, span: PlaySpan) -> Result<PlaybackSummary, PlayerError> {
        // A stop requested before this call (a signal or `stop` request right after the node
        // appeared) is kept: this playback ends at once.
        self.control.finish.store(false, Ordering::SeqCst);
        self.control.published.store(0, Ordering::SeqCst);
        let mut reader = match self.reader.lock().take() {
            Some(reader) => reader,
            None => {
                let mut reader = SequentialReader::open_many_with(
                    &self.options.bags,
                    &self.options.storage_config,
                )?;
                reader.set_filter(&self.filter)?;
                reader
            }
        };
        let from = self
            .bag_start
            .saturating_add(span.start_offset.as_nanos().max(0));
        let end_bound = span.end_bound(from);
        reader.seek(from)?;
        if self.options.delay > Duration::ZERO {
            log::info!(
                "waiting {:.3} s before playing",
                self.options.delay.as_secs_f64()
            );
            let until = self.steady.now().saturating_add(self.options.delay);
            // Steady sleeps in slices so that a stop during the delay is noticed.
            while !self.control.stop.load(Ordering::SeqCst) && !self.steady.sleep_until(until, WAIT)
            {
                std::hint::spin_loop();
            }
        }
        self.wait_for_services();
        self.replay_latched(from)?;
        let mut playback = Playback {
            core: self,
            ahead: ReadAhead::start(
                reader,
                self.options.read_ahead_queue_size,
                self.options.message_order,
            ),
            next: None,
            at_end: false,
            current_files: HashMap::new(),
            from,
            end_bound,
        };
        // Time starts when the first message is ready, as rosbag2 waits for its queue: a slow
        // first read must not make every message late.
        let first = playback.fetch();
        let (anchored, clock_thread_done) = (AtomicBool::new(false), AtomicBool::new(false));
        let result = std::thread::scope(|scope| {
            if !self.clock.uses_sim_time() {
                // Spawned before time is anchored (a spawn takes tens of µs, which would make the
                // first message late); it publishes only once time is anchored.
                scope.spawn(|| self.publish_clock_periodically(&anchored, &clock_thread_done));
                self.self_jump(from);
                anchored.store(true, Ordering::SeqCst);
                let _ = self.control.clock_changes.0.try_send(());
            }
            let result = match first {
                Ok(()) => playback.run(),
                Err(e) => (Err(e), playback.ahead.finish()),
            };
            clock_thread_done.store(true, Ordering::SeqCst);
            self.clock.wakeup();
            let _ = self.control.clock_changes.0.try_send(());
            result
        });
        let (end, reader) = result;
        *self.reader.lock() = reader;
        let published = self.control.published.load(Ordering::SeqCst);
        log::info!(
            "playback {}: {published} messages published",
            match end {
                Ok(PlaybackEnd::Finished) => "finished",
                Ok(PlaybackEnd::Stopped) => "stopped",
                Err(_) => "failed",
            }
        );
        Ok(PlaybackSummary {
            published,
            end: end?,
        })
    }

    /// Publishes `/clock` at the clock's frequency; while that is 0, waits for it to change
    /// (on a channel, not on the clock's time source: an idle thread adds no sleeper there).
    fn publish_clock_periodically(&self, anchored: &AtomicBool, done: &AtomicBool) {
        while !done.load(Ordering::SeqCst) {
            if !anchored.load(Ordering::SeqCst) || self.clock.get_clock_publish_frequency() <= 0.0 {
                let _ = (self.control.clock_changes.1).recv_timeout(WAIT_REAL);
            } else if let Some(time) = self.clock.wait_clock_publish_due(WAIT) {
                self.publish_clock(time.nanos());
            }
        }
    }

    pub(super) fn publish_clock(&self, nanos: i64) {
        if let Some(publisher) = &*self.clock_publisher.read() {
            if let Err(e) = publisher.publish(&crate::clock_topic::encode(nanos)) {
                log::warn!("cannot publish /clock: {e}");
            }
        }
    }

    /// Jumps the clock without the jump counting as a seek.
    fn self_jump(&self, time: i64) {
        self.control.self_jump.store(true, Ordering::SeqCst);
        if let Err(e) = self.clock.jump(Time::ros(time)) {
            log::warn!("cannot move the clock to {time}: {e}");
        }
        self.control.self_jump.store(false, Ordering::SeqCst);
    }

    /// Latched (transient-local) topics keep their last messages for late subscribers; when
    /// playback starts after some of them, publish those first so that they are not lost
    /// (rosbag2 issue #2333).
    fn replay_latched(&self, from: i64) -> Result<(), PlayerError> {
        let latched = self.latched_topics();
        if from <= self.bag_start || latched.is_empty() {
            return Ok(());
        }
        let depth: BTreeMap<String, u64> = latched.into_iter().collect();
        let mut reader = SequentialReader::open_many(&self.options.bags)?;
        reader.set_filter(&TopicFilter::topics(depth.keys().cloned()))?;
        let mut kept: BTreeMap<&str, VecDeque<SerializedMessage>> = BTreeMap::new();
        while let Some(message) = reader.read_next()? {
            if message.recv_timestamp >= from {
                break;
            }
            let (topic, depth) = depth.get_key_value(&*message.topic).expect("filtered");
            let queue = kept.entry(topic.as_str()).or_default();
            if queue.len() as u64 == *depth {
                queue.pop_front();
            }
            queue.push_back(message);
        }
        let mut replay: Vec<SerializedMessage> = kept.into_values().flatten().collect();
        replay.sort_by_key(|m| m.recv_timestamp);
        if !replay.is_empty() {
            log::info!(
                "publishing {} latched messages recorded before the start point",
                replay.len()
            );
        }
        for message in &replay {
            self.publish(message);
        }
        Ok(())
    }

    /// Publishes one bag message (with `/clock` first when asked); returns whether it had a
    /// publisher.
    fn publish(&self, message: &SerializedMessage) -> bool {
        let Some(topic) = self.publishers.get(&*message.topic) else {
            return false;
        };
        if topic.clock_before {
            self.publish_clock(message.recv_timestamp);
        }
        if let Err(e) = topic.publisher.publish(&message.data) {
            log::warn!("cannot publish on {}: {e}", message.topic);
        }
        self.control
            .position
            .store(message.recv_timestamp, Ordering::SeqCst);
        self.control.published.fetch_add(1, Ordering::Relaxed);
        true
    }

    fn publish_split_event(&self, closed: &Path, opened: &Path) {
        let event = ReadSplitEvent {
            closed_file: closed.display().to_string(),
            opened_file: opened.display().to_string(),
            node_name: self.middleware.node().fully_qualified_name(),
        };
        match rosbag2_rs_interfaces::try_to_cdr(&event) {
            Ok(bytes) => {
                if let Err(e) = self.split_events.publish(&bytes.into()) {
                    log::warn!("cannot publish the read split event: {e}");
                }
            }
            Err(e) => log::warn!("cannot encode the read split event: {e}"),
        }
    }
}

/// One playback in progress.
struct Playback<'a> {
    core: &'a Core,
    ahead: ReadAhead,
    /// The next message to publish, read but not yet due.
    next: Option<(SerializedMessage, Option<Arc<Path>>)>,
    /// No message left before the end bound.
    at_end: bool,
    /// The file each bag (directory) is being played from.
    current_files: HashMap<PathBuf, Arc<Path>>,
    from: i64,
    end_bound: i64,
}

impl Playback<'_> {
    /// Plays until the end or a stop; hands the reader back for the next playback.
    fn run(mut self) -> (Result<PlaybackEnd, PlayerError>, Option<SequentialReader>) {
        let result = self.run_loop();
        (result, self.ahead.finish())
    }

    fn run_loop(&mut self) -> Result<PlaybackEnd, PlayerError> {
        let core = self.core;
        let clock = &core.clock;
        loop {
            if core.control.stop.load(Ordering::SeqCst) {
                return Ok(PlaybackEnd::Stopped);
            }
            if core.control.finish.load(Ordering::SeqCst) {
                return Ok(PlaybackEnd::Finished);
            }
            while let Ok(request) = core.control.requests.1.try_recv() {
                self.serve(request)?;
            }
            let reposition = core.control.reposition.lock().take();
            if let Some(reposition) = reposition {
                self.reposition(reposition);
                continue;
            }
            if self.next.is_none() && !self.at_end {
                self.fetch()?;
                continue;
            }
            if self.at_end {
                if core.options.loop_playback {
                    self.restart();
                    continue;
                }
                if clock.is_paused() && !clock.uses_sim_time() {
                    // Paused at the end: stay, so that a seek can continue playback.
                    clock.sleep_until(Time::ros(i64::MAX), WAIT);
                    continue;
                }
                return Ok(PlaybackEnd::Finished);
            }
            let due = self
                .next
                .as_ref()
                .map(|(m, _)| m.recv_timestamp)
                .expect("fetched");
            if clock.sleep_until(Time::ros(due), WAIT) {
                if core.control.jump_pending() {
                    // Perhaps due only by a jump: reposition first.
                    std::thread::yield_now();
                    continue;
                }
                self.publish_next();
            }
        }
    }

    /// Takes the next item from the read-ahead queue.
    fn fetch(&mut self) -> Result<(), PlayerError> {
        match self.ahead.next() {
            Item::Message(message, _) if message.recv_timestamp > self.end_bound => {
                self.at_end = true
            }
            Item::Message(message, file) => self.next = Some((message, file)),
            Item::End => self.at_end = true,
            Item::Failed(e) => return Err(PlayerError::Playback(e)),
            Item::Stopped => return Err(PlayerError::ThreadStopped("read-ahead")),
        }
        Ok(())
    }

    fn publish_next(&mut self) -> bool {
        let Some((message, file)) = self.next.take() else {
            return false;
        };
        if let Some(file) = file {
            // Files of several bags interleave; a split is a change within one bag.
            let bag = file.parent().map(Path::to_path_buf).unwrap_or_default();
            match self.current_files.insert(bag, file.clone()) {
                Some(closed) if closed != file => self.core.publish_split_event(&closed, &file),
                _ => {}
            }
        }
        self.core.publish(&message)
    }

    /// Continues from a new time after a jump.
    fn reposition(&mut self, reposition: Reposition) {
        let time = match reposition {
            Reposition::To(time) => time,
            Reposition::ToNow => self.core.clock.now().nanos(),
        };
        self.ahead.seek(time);
        self.next = None;
        self.at_end = false;
        if self.core.clock.get_clock_publish_frequency() <= 0.0 {
            // Per-message /clock only: announce the new time at once.
            if self.core.options.clock_topics_all || !self.core.options.clock_topics.is_empty() {
                self.core.publish_clock(time);
            }
        }
    }

    /// `--loop`: back to the start point.
    fn restart(&mut self) {
        self.core.self_jump(self.from);
        self.ahead.seek(self.from);
        self.next = None;
        self.at_end = false;
    }

    /// Serves a play-next or burst request. A read error while stepping ends the playback with
    /// that error (the reader has nothing more to give until a seek, so waiting for it would
    /// hang); the requester is told that playback failed.
    fn serve(&mut self, request: Request) -> Result<(), PlayerError> {
        match request {
            Request::PlayNext(answer) => {
                let result = self.step(1).and_then(|n| {
                    if n == 1 {
                        Ok(())
                    } else {
                        Err(PlayerError::Refused("no message left to play".into()))
                    }
                });
                let (answer_with, failure) = split_failure(result);
                let _ = answer.send(answer_with);
                failure.map_or(Ok(()), Err)
            }
            Request::Burst(n, answer) => {
                let (answer_with, failure) = split_failure(self.step(n));
                let _ = answer.send(answer_with);
                failure.map_or(Ok(()), Err)
            }
        }
    }

    /// Publishes up to `n` messages at once (while paused), moving time to each.
    fn step(&mut self, n: u64) -> Result<u64, PlayerError> {
        self.core.refuse_under_sim_time("play_next/burst")?;
        if !self.core.clock.is_paused() {
            return Err(PlayerError::Refused(
                "play_next and burst are only available while paused".into(),
            ));
        }
        let mut published = 0;
        let mut last = None;
        while published < n {
            if self.next.is_none() && !self.at_end {
                self.fetch()?;
                continue;
            }
            let Some(due) = self.next.as_ref().map(|(m, _)| m.recv_timestamp) else {
                break;
            };
            if self.publish_next() {
                published += 1;
            }
            last = Some(due);
        }
        // Time moves to the last message published (once: a jump per message would slow bursts).
        if let Some(time) = last {
            self.core.self_jump(time);
        }
        Ok(published)
    }
}

/// Separates a failure that ends playback (the bag could not be read further) from a request's
/// own outcome: the requester gets a refusal naming the failure, playback ends with the error.
fn split_failure<T>(
    result: Result<T, PlayerError>,
) -> (Result<T, PlayerError>, Option<PlayerError>) {
    match result {
        Err(e @ (PlayerError::Playback(_) | PlayerError::ThreadStopped(_))) => (
            Err(PlayerError::Refused(format!(
                "playback failed: {}",
                crate::error_chain::Chain(&e)
            ))),
            Some(e),
        ),
        other => (other, None),
    }
}
