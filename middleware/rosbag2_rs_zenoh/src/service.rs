//! Service servers as rmw_zenoh makes them: a complete queryable on the service's key
//! expression. A request is the query's payload with rmw_zenoh's attachment (the client's
//! sequence number and GID); the reply carries the response and an attachment echoing that
//! sequence number and GID with the reply's own timestamp.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ::zenoh::query::Query;
use ::zenoh::Wait;
use parking_lot::Mutex;
use rosbag2_rs_middleware::QosProfile;

use super::attachment::Attachment;
use super::keys::{self, ANY_TYPE_HASH, TYPE_HASH_NOT_SUPPORTED};
use super::liveliness::{EntityKind, TopicInfo};
use super::{now_nanos, qos, zenoh_error, Context};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::{Handle, RequestId, ServiceHandler, REPLY_FLUSH_TIMEOUT};

/// Serves `type_name` on the fully qualified `name`.
pub fn serve(
    ctx: Arc<Context>,
    name: String,
    type_name: &str,
    handler: ServiceHandler,
) -> Result<Handle> {
    let dds_type = keys::service_type(type_name)?;
    let known_hash = ctx.type_hash(type_name, &dds_type, &name, &[EntityKind::Client]);
    let topic = TopicInfo {
        name: name.clone(),
        dds_type: dds_type.clone(),
        type_hash: known_hash
            .clone()
            .unwrap_or_else(|| TYPE_HASH_NOT_SUPPORTED.into()),
        qos: qos::adapt(&QosProfile::default()),
    };
    // Any hash: clients compute the service type's hash from their own definitions, and a
    // complete queryable on `.../<type>/*` answers every one of them.
    let key = keys::topic_key(ctx.node.domain_id, &name, &dds_type, ANY_TYPE_HASH);
    let entity = ctx.entity(EntityKind::Service, Some(topic));
    let handler = Mutex::new(handler);
    let service = name.clone();
    let answering = Answering::default();
    let counter = answering.0.clone();
    let queryable = ctx
        .session
        .declare_queryable(key.clone())
        .complete(true)
        .callback(move |query: Query| {
            counter.fetch_add(1, Ordering::SeqCst);
            rosbag2_rs_middleware::guard::guarded(
                &super::subscriber::CALLBACK_PANICS,
                "Zenoh query callback",
                || answer(&service, &handler, &query),
            );
            counter.fetch_sub(1, Ordering::SeqCst);
        })
        .wait()
        .map_err(|e| zenoh_error(&format!("cannot declare a queryable on '{key}'"), e))?;
    let token = ctx.declare_token(&entity)?;
    // Dropped first: a reply being sent (e.g. to the `stop` that ends the node) goes out
    // before the queryable and the session go.
    Ok(Handle::new((answering, token, queryable, ctx)))
}

/// The requests being answered; dropping it waits (up to [`REPLY_FLUSH_TIMEOUT`]) until none is.
#[derive(Default)]
struct Answering(Arc<AtomicUsize>);

impl Drop for Answering {
    fn drop(&mut self) {
        let deadline = Instant::now() + REPLY_FLUSH_TIMEOUT;
        while self.0.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn answer(service: &str, handler: &Mutex<ServiceHandler>, query: &Query) {
    let request = query
        .payload()
        .map(|p| p.to_bytes().into_owned())
        .unwrap_or_default();
    let attachment = match query
        .attachment()
        .map(|a| Attachment::decode(&a.to_bytes()))
    {
        Some(Ok(a)) => a,
        Some(Err(e)) => {
            log::warn!("service '{service}': request refused: {e}");
            return;
        }
        None => {
            log::warn!("service '{service}': request refused: no rmw_zenoh attachment");
            return;
        }
    };
    let id = RequestId {
        client_gid: attachment.source_gid,
        sequence_number: attachment.sequence_number,
    };
    let response = match (handler.lock())(&id, &request) {
        Ok(response) => response,
        Err(e) => {
            log::warn!("service '{service}': request refused: {e}");
            return;
        }
    };
    let reply = Attachment {
        source_timestamp: now_nanos(),
        ..attachment
    };
    if let Err(e) = query
        .reply(query.key_expr().clone(), response)
        .attachment(reply.encode())
        .wait()
    {
        log::warn!("service '{service}': cannot send the reply: {e}");
    }
}
