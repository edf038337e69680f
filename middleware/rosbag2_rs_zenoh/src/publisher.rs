//! Publishers as rmw_zenoh makes them: an advanced publisher on the topic's key expression,
//! reliable or best effort, congestion control BLOCK for reliable keep-all and DROP otherwise;
//! transient-local publishers keep a cache of `depth` samples that late-joining advanced
//! subscribers query (with publisher detection, and sample-miss heartbeats when reliable).
//! Every sample carries rmw_zenoh's attachment: sequence number from 1, source timestamp, GID.

use std::sync::Arc;
use std::time::Duration;

use ::zenoh::liveliness::LivelinessToken;
use ::zenoh::qos::CongestionControl;
use ::zenoh::Wait;
use parking_lot::Mutex;
use rosbag2_rs_middleware::qos::{Durability, Reliability};
use rosbag2_rs_middleware::Bytes;
use rosbag2_rs_middleware::QosProfile;
use zenoh_ext::{AdvancedPublisher, AdvancedPublisherBuilderExt, CacheConfig, MissDetectionConfig};

use super::attachment::Attachment;
use super::keys::{self, TYPE_HASH_NOT_SUPPORTED};
use super::liveliness::{EntityKind, TopicInfo};
use super::{now_nanos, qos, zenoh_error, Context};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::{check_payload, RawPublisher};

/// rmw_zenoh's heartbeat period for sample-miss detection of reliable transient-local
/// publishers (`SAMPLE_MISS_DETECTION_HEARTBEAT_PERIOD`).
const MISS_DETECTION_HEARTBEAT: Duration = Duration::from_millis(500);

/// One publisher.
pub struct ZenohPublisher {
    /// Locked across each put so that sequence numbers go out in order.
    state: Mutex<State>,
    type_name: String,
    ctx: Arc<Context>,
}

/// What a publisher declared, redeclared once when its type hash becomes known.
struct State {
    next: i64,
    gid: [u8; 16],
    topic: TopicInfo,
    /// Whether `topic.type_hash` is a real hash (not a stand-in).
    hash_known: bool,
    publisher: AdvancedPublisher<'static>,
    _token: LivelinessToken,
}

impl ZenohPublisher {
    /// Declares a publisher of `type_name` on the fully qualified `name`.
    pub fn new(
        ctx: Arc<Context>,
        name: String,
        type_name: &str,
        requested: &QosProfile,
    ) -> Result<Self> {
        let dds_type = keys::message_type(type_name)?;
        let known = lookup_hash(&ctx, type_name, &dds_type, &name);
        if known.is_none() {
            log::info!(
                "Zenoh: no type hash known yet for {type_name} (topic {name}): publishing under \
                 '{TYPE_HASH_NOT_SUPPORTED}' until a subscriber announces one"
            );
        }
        let topic = TopicInfo {
            name,
            dds_type,
            type_hash: known
                .clone()
                .unwrap_or_else(|| TYPE_HASH_NOT_SUPPORTED.to_string()),
            qos: qos::adapt(requested),
        };
        let state = declare(&ctx, topic, known.is_some(), 1)?;
        Ok(Self {
            state: Mutex::new(state),
            type_name: type_name.to_string(),
            ctx,
        })
    }

    fn put(&self, data: &Bytes, source_timestamp: Option<i64>) -> Result<()> {
        check_payload(data)?;
        let mut state = self.state.lock();
        if !state.hash_known {
            let topic = &state.topic;
            if let Some(hash) =
                lookup_hash(&self.ctx, &self.type_name, &topic.dds_type, &topic.name)
            {
                let topic = TopicInfo {
                    type_hash: hash,
                    ..topic.clone()
                };
                *state = declare(&self.ctx, topic, true, state.next)?;
            }
        }
        let attachment = Attachment {
            sequence_number: state.next,
            source_timestamp: source_timestamp.unwrap_or_else(now_nanos),
            source_gid: state.gid,
        };
        state
            .publisher
            .put(data.clone())
            .attachment(attachment.encode())
            .wait()
            .map_err(|e| zenoh_error(&format!("cannot publish on '{}'", state.topic.name), e))?;
        state.next += 1;
        Ok(())
    }
}

/// The hash to publish under: registered, announced by a subscription (or another publisher)
/// of the topic, or announced anywhere for the type; only real RIHS01 hashes count.
fn lookup_hash(ctx: &Context, type_name: &str, dds_type: &str, name: &str) -> Option<String> {
    ctx.type_hash(
        type_name,
        dds_type,
        name,
        &[EntityKind::Subscription, EntityKind::Publisher],
    )
    .filter(|h| keys::is_rihs01(h))
}

/// Declares the advanced publisher and the liveliness token of `topic`.
fn declare(ctx: &Arc<Context>, topic: TopicInfo, hash_known: bool, next: i64) -> Result<State> {
    let adapted = topic.qos;
    let entity = ctx.entity(EntityKind::Publisher, Some(topic.clone()));
    let key = topic.key(ctx.node.domain_id);
    let mut builder = ctx
        .session
        .declare_publisher(key.clone())
        .congestion_control(if qos::blocks_on_congestion(&adapted) {
            CongestionControl::Block
        } else {
            CongestionControl::Drop
        })
        .reliability(match adapted.reliability {
            Reliability::BestEffort => ::zenoh::qos::Reliability::BestEffort,
            _ => ::zenoh::qos::Reliability::Reliable,
        })
        .advanced();
    if adapted.durability == Durability::TransientLocal {
        let depth = usize::try_from(adapted.depth).unwrap_or(usize::MAX);
        builder = builder
            .publisher_detection()
            .cache(CacheConfig::default().max_samples(depth));
        if adapted.reliability == Reliability::Reliable {
            builder = builder.sample_miss_detection(
                MissDetectionConfig::default().sporadic_heartbeat(MISS_DETECTION_HEARTBEAT),
            );
        }
    }
    let publisher = builder
        .wait()
        .map_err(|e| zenoh_error(&format!("cannot declare a publisher on '{key}'"), e))?;
    let token = ctx.declare_token(&entity)?;
    Ok(State {
        next,
        gid: entity.gid(),
        topic,
        hash_known,
        publisher,
        _token: token,
    })
}

impl RawPublisher for ZenohPublisher {
    fn publish(&self, data: &Bytes) -> Result<()> {
        self.put(data, None)
    }

    fn publish_at(&self, data: &Bytes, send_timestamp: i64) -> Result<()> {
        self.put(data, Some(send_timestamp))
    }

    fn subscription_count(&self) -> usize {
        let state = self.state.lock();
        self.ctx
            .graph
            .endpoints(EntityKind::Subscription, &state.topic.name)
            .iter()
            .filter(|e| {
                e.topic
                    .as_ref()
                    .is_some_and(|t| t.dds_type == state.topic.dds_type)
            })
            .count()
    }
}
