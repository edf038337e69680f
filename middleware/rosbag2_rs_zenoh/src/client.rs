//! Service clients as rmw_zenoh makes them: each request is a `get` on the service's key
//! expression (target all complete queryables, no consolidation) with rmw_zenoh's attachment
//! (sequence number from 1, timestamp, the client's GID); the server's reply echoes them.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ::zenoh::liveliness::LivelinessToken;
use ::zenoh::query::{ConsolidationMode, QueryTarget};
use ::zenoh::Wait;
use rosbag2_rs_middleware::QosProfile;

use super::attachment::Attachment;
use super::keys::{self, ANY_TYPE_HASH, TYPE_HASH_NOT_SUPPORTED};
use super::liveliness::{EntityKind, TopicInfo};
use super::{now_nanos, qos, zenoh_error, Context};
use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::{check_payload, RawClient};

/// How long a request stays open for its reply when nobody waits for it.
const FIRE_AND_FORGET_TIMEOUT: Duration = Duration::from_secs(60);

/// A client of one service.
pub struct ZenohClient {
    service: String,
    type_name: String,
    dds_type: String,
    gid: [u8; 16],
    sequence: AtomicI64,
    ctx: Arc<Context>,
    _token: LivelinessToken,
}

impl ZenohClient {
    /// A client of `type_name` on the fully qualified `name`.
    pub fn new(ctx: Arc<Context>, name: String, type_name: &str) -> Result<Self> {
        let dds_type = keys::service_type(type_name)?;
        let hash = ctx
            .type_hash(type_name, &dds_type, &name, &[EntityKind::Service])
            .unwrap_or_else(|| TYPE_HASH_NOT_SUPPORTED.into());
        let entity = ctx.entity(
            EntityKind::Client,
            Some(TopicInfo {
                name: name.clone(),
                dds_type: dds_type.clone(),
                type_hash: hash,
                qos: qos::adapt(&QosProfile::default()),
            }),
        );
        let token = ctx.declare_token(&entity)?;
        Ok(Self {
            service: name,
            type_name: type_name.to_string(),
            dds_type,
            gid: entity.gid(),
            sequence: AtomicI64::new(1),
            ctx,
            _token: token,
        })
    }

    /// The key of a request: the hash the server announces, else any hash.
    fn key(&self) -> String {
        let hash = self
            .ctx
            .graph
            .announced_hash(&[EntityKind::Service], &self.service, &self.dds_type)
            .filter(|h| keys::is_rihs01(h))
            .or_else(|| {
                self.ctx
                    .type_hash(&self.type_name, &self.dds_type, &self.service, &[])
                    .filter(|h| keys::is_rihs01(h))
            })
            .unwrap_or_else(|| ANY_TYPE_HASH.into());
        keys::topic_key(
            self.ctx.node.domain_id,
            &self.service,
            &self.dds_type,
            &hash,
        )
    }

    fn request(
        &self,
        request: &[u8],
        timeout: Duration,
        reply: Option<rosbag2_rs_middleware::crossbeam_channel::Sender<Vec<u8>>>,
    ) -> Result<()> {
        check_payload(request)?;
        let attachment = Attachment {
            sequence_number: self.sequence.fetch_add(1, Ordering::Relaxed),
            source_timestamp: now_nanos(),
            source_gid: self.gid,
        };
        let service = self.service.clone();
        self.ctx
            .session
            .get(self.key())
            .payload(request.to_vec())
            .attachment(attachment.encode())
            .target(QueryTarget::AllComplete)
            .consolidation(ConsolidationMode::None)
            .timeout(timeout)
            .callback(move |r| match r.result() {
                Ok(sample) => {
                    if let Some(tx) = &reply {
                        let _ = tx.try_send(sample.payload().to_bytes().into_owned());
                    }
                }
                Err(e) => log::warn!(
                    "service '{service}': error reply: {}",
                    String::from_utf8_lossy(&e.payload().to_bytes())
                ),
            })
            .wait()
            .map_err(|e| zenoh_error(&format!("cannot call '{}'", self.service), e))
    }
}

impl RawClient for ZenohClient {
    fn wait_for_service(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let available = self
                .ctx
                .graph
                .endpoints(EntityKind::Service, &self.service)
                .iter()
                .any(|e| {
                    e.topic
                        .as_ref()
                        .is_some_and(|t| t.dds_type == self.dds_type)
                });
            if available {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn call(&self, request: &[u8], timeout: Duration) -> Result<Vec<u8>> {
        let (tx, rx) = rosbag2_rs_middleware::crossbeam_channel::bounded(1);
        self.request(request, timeout, Some(tx))?;
        rx.recv_timeout(timeout)
            .map_err(|_| TransportError::Timeout(self.service.clone()))
    }

    fn send(&self, request: &[u8]) -> Result<()> {
        self.request(request, FIRE_AND_FORGET_TIMEOUT, None)
    }
}
