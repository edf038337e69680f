//! Subscriptions as rmw_zenoh makes them: an advanced subscriber on the topic's key expression;
//! for transient local, one that detects late publishers and queries their caches for up to
//! `depth` samples (and recovers missed samples from reliable ones). Payloads are handed on
//! untouched; the attachment gives the source timestamp and, per publisher GID, the sequence
//! numbers whose gaps are counted as lost messages.
//!
//! Zenoh pushes each sample to the callback (there is no take loop to bound); the callback does
//! constant work per sample. The GIDs come from the senders: the loss tracker keeps at most
//! [`MAX_TRACKED_PUBLISHERS`] of them recently seen (two generations, the older dropped when
//! the newer fills), so that a peer inventing GIDs cannot grow it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use ::zenoh::Wait;
use parking_lot::Mutex;
use rosbag2_rs_middleware::qos::{Durability, Reliability};
use rosbag2_rs_middleware::Bytes;
use rosbag2_rs_middleware::QosProfile;
use zenoh_ext::{AdvancedSubscriberBuilderExt, HistoryConfig, RecoveryConfig};

use super::attachment::Attachment;
use super::keys::{self, ANY_TYPE_HASH, TYPE_HASH_NOT_SUPPORTED};
use super::liveliness::{EntityKind, TopicInfo};
use super::{now_nanos, qos, zenoh_error, Context};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::guard::guarded;
use rosbag2_rs_middleware::{Handle, MessageCallback, ReceivedMessage};

/// Zenoh callbacks (samples, queries) that panicked: caught, counted and logged.
pub(crate) static CALLBACK_PANICS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// How long a transient-local subscription waits for a publisher's cache (rmw_zenoh: forever).
const HISTORY_QUERY_TIMEOUT: Duration = Duration::from_secs(3600);

/// The most publisher GIDs a subscription's loss tracker keeps (in each of its two
/// generations): a publisher not heard from while this many others were is forgotten, and its
/// next sample counts as its first (a gap across it is not counted).
pub const MAX_TRACKED_PUBLISHERS: usize = 1024;

/// Counts messages lost between consecutive samples of each publisher, by GID, for at most
/// 2 x [`MAX_TRACKED_PUBLISHERS`] publishers: the recent generation, and the one before it
/// (dropped when the recent one fills, its GIDs moving up as they are seen again).
#[derive(Debug, Default)]
pub struct LossTracker {
    recent: HashMap<[u8; 16], i64>,
    older: HashMap<[u8; 16], i64>,
    /// Publishers forgotten so far (their generation was dropped).
    forgotten: u64,
    /// Sequence gaps seen so far.
    gaps: u64,
}

impl LossTracker {
    /// Records a sample of `gid` numbered `sequence_number`; returns how many of its publisher's
    /// samples were skipped since the previous one (0 for its first, repeated or late ones).
    pub fn record(&mut self, gid: [u8; 16], sequence_number: i64) -> u64 {
        let previous = match self.recent.get_mut(&gid) {
            Some(last) => Some(std::mem::replace(last, (*last).max(sequence_number))),
            None => {
                let previous = self.older.remove(&gid);
                if self.recent.len() >= MAX_TRACKED_PUBLISHERS {
                    self.forgotten = self.forgotten.saturating_add(self.older.len() as u64);
                    self.older = std::mem::take(&mut self.recent);
                }
                let last = previous.map_or(sequence_number, |p| p.max(sequence_number));
                self.recent.insert(gid, last);
                previous
            }
        };
        // Late (recovered) or repeated samples count nothing; a gap counts the numbers skipped,
        // in checked arithmetic (a sender picks its numbers).
        let lost = match previous {
            Some(last) if sequence_number > last => {
                u64::try_from(i128::from(sequence_number) - i128::from(last) - 1).unwrap_or(0)
            }
            _ => 0,
        };
        if lost > 0 {
            self.gaps = self.gaps.saturating_add(1);
        }
        lost
    }

    /// Whether the gap just recorded is one to warn about: the 1st, 2nd, 4th, 8th, ... (a peer
    /// skipping numbers on every sample must not turn each into a log line).
    pub fn warn_of_gap(&self) -> bool {
        self.gaps.is_power_of_two()
    }

    /// Publishers tracked now.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.recent.len() + self.older.len()
    }

    /// Publishers forgotten so far to keep the tracker bounded.
    pub fn forgotten(&self) -> u64 {
        self.forgotten
    }
}

/// A payload that Zenoh holds in one piece, shared rather than copied.
struct Contiguous(::zenoh::bytes::ZBytes);

impl AsRef<[u8]> for Contiguous {
    fn as_ref(&self) -> &[u8] {
        self.0.slices().next().unwrap_or_default()
    }
}

/// Payloads from this size on are shared with Zenoh rather than copied: a message larger than a
/// batch has a buffer of its own, while a small one lies in a receive batch that sharing would
/// keep alive (64 KiB held for 100 B) for as long as the recorder caches it.
const SHARE_FROM: usize = 64 * 1024;

/// The payload as `Bytes`: Zenoh's buffer itself when it is large and in one piece, else a copy.
fn payload_bytes(payload: &::zenoh::bytes::ZBytes) -> Bytes {
    if payload.len() >= SHARE_FROM && payload.slices().nth(1).is_none() {
        Bytes::from_owner(Contiguous(payload.clone()))
    } else {
        Bytes::from(payload.to_bytes().into_owned())
    }
}

/// Subscribes to the fully qualified `name`.
pub fn subscribe(
    ctx: Arc<Context>,
    name: String,
    type_name: &str,
    requested: &QosProfile,
    callback: MessageCallback,
) -> Result<Handle> {
    let dds_type = keys::message_type(type_name)?;
    let known_hash = ctx.type_hash(type_name, &dds_type, &name, &[EntityKind::Publisher]);
    let adapted = qos::adapt(requested);
    // The token announces the hash when known; the data key takes any hash otherwise.
    let topic = TopicInfo {
        name: name.clone(),
        dds_type: dds_type.clone(),
        type_hash: known_hash
            .clone()
            .unwrap_or_else(|| TYPE_HASH_NOT_SUPPORTED.into()),
        qos: adapted,
    };
    let key = keys::topic_key(
        ctx.node.domain_id,
        &name,
        &dds_type,
        known_hash.as_deref().unwrap_or(ANY_TYPE_HASH),
    );
    let entity = ctx.entity(EntityKind::Subscription, Some(topic));
    let state = Mutex::new((callback, LossTracker::default()));
    let lost_ctx = ctx.clone();
    let topic_name = name.clone();
    let on_sample = move |sample: ::zenoh::sample::Sample| {
        guarded(&CALLBACK_PANICS, "Zenoh sample callback", || {
            let recv_timestamp = now_nanos();
            let attachment = sample
                .attachment()
                .map(|a| Attachment::decode(&a.to_bytes()));
            let data = payload_bytes(sample.payload());
            let mut state = state.lock();
            let (callback, tracker) = &mut *state;
            let mut publisher_gid = None;
            let send_timestamp = match attachment {
                Some(Ok(a)) => {
                    publisher_gid = Some(a.source_gid);
                    let forgotten = tracker.forgotten();
                    let lost = tracker.record(a.source_gid, a.sequence_number);
                    if tracker.forgotten() > forgotten && forgotten == 0 {
                        log::warn!(
                        "topic '{topic_name}': more than {MAX_TRACKED_PUBLISHERS} publisher GIDs \
                         seen: the least recent are forgotten (their gaps are not counted)"
                    );
                    }
                    if lost > 0 {
                        let mut counts = lost_ctx.lost.lock();
                        let total = counts.entry(topic_name.clone()).or_default();
                        *total = total.saturating_add(lost);
                        let total = *total;
                        drop(counts);
                        if tracker.warn_of_gap() {
                            log::warn!(
                                "topic '{topic_name}': {lost} messages lost (sequence gap); \
                                 {total} in {} gaps so far (warned at gaps 1, 2, 4, 8, ...)",
                                tracker.gaps
                            );
                        }
                    }
                    Some(a.source_timestamp)
                }
                Some(Err(e)) => {
                    log::debug!("topic '{topic_name}': {e}");
                    None
                }
                None => None,
            };
            callback(ReceivedMessage {
                data,
                recv_timestamp,
                send_timestamp,
                publisher_gid,
            });
        });
    };
    let mut builder = ctx.session.declare_subscriber(key.clone()).advanced();
    if adapted.durability == Durability::TransientLocal {
        let depth = usize::try_from(adapted.depth).unwrap_or(usize::MAX);
        builder = builder
            .subscriber_detection()
            .query_timeout(HISTORY_QUERY_TIMEOUT)
            .history(
                HistoryConfig::default()
                    .detect_late_publishers()
                    .max_samples(depth),
            );
        if adapted.reliability == Reliability::Reliable {
            builder = builder.recovery(RecoveryConfig::default().heartbeat());
        }
    }
    let subscriber = builder
        .callback(on_sample)
        .wait()
        .map_err(|e| zenoh_error(&format!("cannot subscribe to '{key}'"), e))?;
    let token = ctx.declare_token(&entity)?;
    Ok(Handle::new((token, subscriber, ctx)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_count_per_publisher() {
        let mut t = LossTracker::default();
        let (a, b) = ([1u8; 16], [2u8; 16]);
        assert_eq!(t.record(a, 5), 0); // joined late: nothing lost before the first
        assert_eq!(t.record(a, 6), 0);
        assert_eq!(t.record(b, 1), 0);
        assert_eq!(t.record(a, 10), 3);
        assert_eq!(t.record(a, 8), 0); // recovered late
        assert_eq!(t.record(a, 11), 0);
        assert_eq!(t.record(b, 3), 1);
    }

    #[test]
    fn a_publisher_skipping_a_number_every_sample_is_warned_of_at_doubling_gaps() {
        let mut t = LossTracker::default();
        let a = [1u8; 16];
        t.record(a, 0);
        let warned: Vec<i64> = (1..=1000)
            .filter(|i| t.record(a, 2 * i) == 1 && t.warn_of_gap())
            .collect();
        assert_eq!(warned, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]);
    }

    #[test]
    fn sequence_numbers_at_the_ends_of_their_range_neither_overflow_nor_count_wrongly() {
        let mut t = LossTracker::default();
        let a = [1u8; 16];
        assert_eq!(t.record(a, i64::MIN), 0);
        assert_eq!(t.record(a, i64::MAX), u64::MAX - 1);
        assert_eq!(t.record(a, i64::MAX), 0, "repeated");
        assert_eq!(t.record(a, i64::MIN), 0, "late");
        assert_eq!(t.record(a, 0), 0, "late");
    }

    #[test]
    fn a_flood_of_distinct_gids_keeps_the_tracker_bounded_and_recent_publishers_tracked() {
        let mut t = LossTracker::default();
        let steady = [0xffu8; 16];
        let mut seq = 0;
        for i in 0u64..100_000 {
            let mut gid = [0u8; 16];
            gid[..8].copy_from_slice(&i.to_le_bytes());
            assert_eq!(t.record(gid, 1), 0);
            if i % 100 == 0 {
                seq += 1;
                assert_eq!(t.record(steady, seq), 0, "a publisher heard from is kept");
            }
            assert!(t.len() <= 2 * MAX_TRACKED_PUBLISHERS);
        }
        assert!(t.forgotten() > 90_000);
        assert_eq!(t.record(steady, seq + 3), 2, "its gaps still count");
    }
}
