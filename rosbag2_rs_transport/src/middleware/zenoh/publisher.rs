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
use bytes::Bytes;
use parking_lot::Mutex;
use rosbag2_rs_storage::qos::{Durability, Reliability};
use rosbag2_rs_storage::QosProfile;
use zenoh_ext::{AdvancedPublisher, AdvancedPublisherBuilderExt, CacheConfig, MissDetectionConfig};

use super::attachment::Attachment;
use super::keys::{self, TYPE_HASH_NOT_SUPPORTED};
use super::liveliness::{EntityKind, TopicInfo};
use super::{now_nanos, qos, zenoh_error, Context};
use crate::middleware::error::Result;
use crate::middleware::{check_payload, RawPublisher};

/// rmw_zenoh's heartbeat period for sample-miss detection of reliable transient-local
/// publishers (`SAMPLE_MISS_DETECTION_HEARTBEAT_PERIOD`).
const MISS_DETECTION_HEARTBEAT: Duration = Duration::from_millis(500);

/// One publisher.
pub struct ZenohPublisher {
    /// The next sequence number, locked across the put so that numbers go out in order.
    next: Mutex<i64>,
    gid: [u8; 16],
    topic: TopicInfo,
    publisher: AdvancedPublisher<'static>,
    _token: LivelinessToken,
    ctx: Arc<Context>,
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
        let type_hash = ctx
            .type_hash(
                type_name,
                &dds_type,
                &name,
                &[EntityKind::Subscription, EntityKind::Publisher],
            )
            .unwrap_or_else(|| {
                log::warn!(
                    "Zenoh: no type hash known for {type_name} (topic {name}): publishing under \
                     '{TYPE_HASH_NOT_SUPPORTED}', which Jazzy and later subscribers do not match"
                );
                TYPE_HASH_NOT_SUPPORTED.to_string()
            });
        let adapted = qos::adapt(requested);
        let topic = TopicInfo {
            name,
            dds_type,
            type_hash,
            qos: adapted,
        };
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
        Ok(Self {
            next: Mutex::new(1),
            gid: entity.gid(),
            topic,
            publisher,
            _token: token,
            ctx,
        })
    }

    fn put(&self, data: &Bytes, source_timestamp: Option<i64>) -> Result<()> {
        check_payload(data)?;
        let mut next = self.next.lock();
        let attachment = Attachment {
            sequence_number: *next,
            source_timestamp: source_timestamp.unwrap_or_else(now_nanos),
            source_gid: self.gid,
        };
        self.publisher
            .put(data.clone())
            .attachment(attachment.encode())
            .wait()
            .map_err(|e| zenoh_error(&format!("cannot publish on '{}'", self.topic.name), e))?;
        *next += 1;
        Ok(())
    }
}

impl RawPublisher for ZenohPublisher {
    fn publish(&self, data: &Bytes) -> Result<()> {
        self.put(data, None)
    }

    fn publish_at(&self, data: &Bytes, send_timestamp: i64) -> Result<()> {
        self.put(data, Some(send_timestamp))
    }

    fn subscription_count(&self) -> usize {
        self.ctx
            .graph
            .endpoints(EntityKind::Subscription, &self.topic.name)
            .iter()
            .filter(|e| {
                e.topic
                    .as_ref()
                    .is_some_and(|t| t.dds_type == self.topic.dds_type)
            })
            .count()
    }
}
