//! Subscriptions as rmw_zenoh makes them: an advanced subscriber on the topic's key expression;
//! for transient local, one that detects late publishers and queries their caches for up to
//! `depth` samples (and recovers missed samples from reliable ones). Payloads are handed on
//! untouched; the attachment gives the source timestamp and, per publisher GID, the sequence
//! numbers whose gaps are counted as lost messages.
//!
//! Zenoh pushes each sample to the callback (there is no take loop to bound); the callback does
//! constant work per sample; the loss tracker ([`LossTracker`]) is bounded.

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
use rosbag2_rs_middleware::loss::{LossTracker, MAX_TRACKED_PUBLISHERS};
use rosbag2_rs_middleware::{Handle, MessageCallback, ReceivedMessage};

/// Zenoh callbacks (samples, queries) that panicked: caught, counted and logged.
pub(crate) static CALLBACK_PANICS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// How long a transient-local subscription waits for a publisher's cache (rmw_zenoh: forever).
const HISTORY_QUERY_TIMEOUT: Duration = Duration::from_secs(3600);

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
                                tracker.gaps()
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
