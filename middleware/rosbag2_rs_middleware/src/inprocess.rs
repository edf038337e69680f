//! The in-process backend: a deterministic graph inside one process, for tests and benchmarks of
//! everything above the middleware. Delivery is synchronous, on the publishing thread, in
//! subscription order; time comes from an injectable clock. Matching follows DDS: same type,
//! and the offered reliability and durability must satisfy the requested ones. Transient-local
//! publishers keep their last `depth` messages for late-joining transient-local subscriptions.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use rosbag2_rs_codec::msg::definition::ros2_name;
use rosbag2_rs_codec::type_hash;
use rosbag2_rs_storage::qos::{Durability, History, Reliability};
use rosbag2_rs_storage::QosProfile;

use crate::error::{Result, TransportError};
use crate::names::{check_type_name, expand_name, NodeIdentity};
use crate::*;

type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;
type SharedCallback = Arc<Mutex<MessageCallback>>;
type SharedHandler = Arc<Mutex<ServiceHandler>>;

struct PublisherEntry {
    topic: String,
    /// Its node, `/ns/name`.
    node: String,
    type_name: String,
    qos: QosProfile,
    type_hash: Option<String>,
    history: VecDeque<Bytes>,
}

struct SubscriptionEntry {
    topic: String,
    /// Its node, `/ns/name`.
    node: String,
    type_name: String,
    qos: QosProfile,
    type_hash: Option<String>,
    callback: SharedCallback,
}

#[derive(Default)]
struct BusState {
    next_id: u64,
    publishers: BTreeMap<u64, PublisherEntry>,
    subscriptions: BTreeMap<u64, SubscriptionEntry>,
    services: BTreeMap<String, (String, SharedHandler)>,
    events: Vec<Sender<GraphEvent>>,
}

impl BusState {
    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

/// Whether an offer satisfies a request, by the DDS request/offer rules.
fn compatible(offered: &QosProfile, requested: &QosProfile) -> bool {
    let reliable = |r: Reliability| !matches!(r, Reliability::BestEffort);
    let transient = |d: Durability| matches!(d, Durability::TransientLocal);
    (reliable(offered.reliability) || !reliable(requested.reliability))
        && (transient(offered.durability) || !transient(requested.durability))
}

/// A graph shared by the nodes created from it.
#[derive(Clone)]
pub struct InProcessBus {
    state: Arc<Mutex<BusState>>,
    clock: Clock,
}

impl Default for InProcessBus {
    fn default() -> Self {
        Self::new()
    }
}

impl InProcessBus {
    /// A bus whose receive times come from the system clock.
    pub fn new() -> Self {
        Self::with_clock(Arc::new(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i64)
        }))
    }

    /// A bus whose receive times come from `clock` (ns), e.g. a test's virtual time.
    pub fn with_clock(clock: Arc<dyn Fn() -> i64 + Send + Sync>) -> Self {
        Self {
            state: Arc::new(Mutex::new(BusState::default())),
            clock,
        }
    }

    /// A node on this bus.
    pub fn node(&self, name: &str, namespace: &str) -> Result<InProcessNode> {
        Ok(InProcessNode {
            identity: NodeIdentity::new(name, namespace)?,
            bus: self.clone(),
            type_hashes: Mutex::new(HashMap::new()),
        })
    }
}

/// A node of an [`InProcessBus`]. Its endpoints announce the type hashes registered with
/// [`Middleware::register_type_hash`] (and none otherwise), so tests see exactly what a node
/// registered.
pub struct InProcessNode {
    identity: NodeIdentity,
    bus: InProcessBus,
    type_hashes: Mutex<HashMap<String, String>>,
}

impl InProcessNode {
    fn type_hash(&self, type_name: &str) -> Option<String> {
        self.type_hashes.lock().get(&ros2_name(type_name)).cloned()
    }
}

/// Removes an entity from the bus when dropped. The removed entry is dropped only after the
/// bus lock is released: a callback may own the last reference to something (a player, say)
/// whose own publishers then leave the bus.
struct Remover {
    state: Weak<Mutex<BusState>>,
    remove: fn(&mut BusState, u64) -> Option<Box<dyn std::any::Any>>,
    id: u64,
}

impl Drop for Remover {
    fn drop(&mut self) {
        if let Some(state) = self.state.upgrade() {
            let removed = (self.remove)(&mut state.lock(), self.id);
            drop(removed);
        }
    }
}

struct InProcessPublisher {
    bus: InProcessBus,
    id: u64,
    _remover: Remover,
}

impl RawPublisher for InProcessPublisher {
    fn publish(&self, data: &Bytes) -> Result<()> {
        self.publish_at(data, (self.bus.clock)())
    }

    fn publish_at(&self, data: &Bytes, send_timestamp: i64) -> Result<()> {
        check_payload(data)?;
        let targets: Vec<SharedCallback> = {
            let mut state = self.bus.state.lock();
            let state = &mut *state;
            let Some(publisher) = state.publishers.get_mut(&self.id) else {
                return Ok(());
            };
            if publisher.qos.durability == Durability::TransientLocal {
                let depth = if publisher.qos.history == History::KeepAll {
                    usize::MAX
                } else {
                    publisher.qos.depth.max(1) as usize
                };
                publisher.history.push_back(data.clone());
                while publisher.history.len() > depth {
                    publisher.history.pop_front();
                }
            }
            let publisher = &state.publishers[&self.id];
            state
                .subscriptions
                .values()
                .filter(|s| {
                    s.topic == publisher.topic
                        && s.type_name == publisher.type_name
                        && compatible(&publisher.qos, &s.qos)
                })
                .map(|s| s.callback.clone())
                .collect()
        };
        let recv_timestamp = (self.bus.clock)();
        for callback in targets {
            (callback.lock())(ReceivedMessage {
                data: data.clone(),
                recv_timestamp,
                send_timestamp: Some(send_timestamp),
                publisher_gid: None,
            });
        }
        Ok(())
    }

    fn subscription_count(&self) -> usize {
        let state = self.bus.state.lock();
        let Some(p) = state.publishers.get(&self.id) else {
            return 0;
        };
        state
            .subscriptions
            .values()
            .filter(|s| {
                s.topic == p.topic && s.type_name == p.type_name && compatible(&p.qos, &s.qos)
            })
            .count()
    }
}

struct InProcessClient {
    bus: InProcessBus,
    service: String,
    type_name: String,
    /// Its GID: a number unique in the process, little-endian, as rmw_cyclonedds's client ids.
    gid: [u8; 16],
    sequence: std::sync::atomic::AtomicI64,
}

/// Numbers the in-process clients, for their GIDs.
static CLIENTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl RawClient for InProcessClient {
    fn wait_for_service(&self, _timeout: Duration) -> bool {
        self.bus.state.lock().services.contains_key(&self.service)
    }

    fn call(&self, request: &[u8], _timeout: Duration) -> Result<Vec<u8>> {
        let handler = match self.bus.state.lock().services.get(&self.service) {
            Some((type_name, handler)) if *type_name == self.type_name => handler.clone(),
            Some((type_name, _)) => {
                return Err(TransportError::ServiceTypeMismatch {
                    service: self.service.clone(),
                    served: type_name.clone(),
                    called: self.type_name.clone(),
                })
            }
            None => return Err(TransportError::Timeout(self.service.clone())),
        };
        check_payload(request)?;
        let id = RequestId {
            client_gid: self.gid,
            sequence_number: self
                .sequence
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        };
        let response = (handler.lock())(&id, request);
        response.map_err(|e| TransportError::Service {
            service: self.service.clone(),
            source: Box::new(e),
        })
    }

    /// Served at once, as every in-process call; the response is dropped.
    fn send(&self, request: &[u8]) -> Result<()> {
        self.call(request, Duration::ZERO).map(drop)
    }
}

impl Middleware for InProcessNode {
    fn node(&self) -> &NodeIdentity {
        &self.identity
    }

    fn now(&self) -> i64 {
        (self.bus.clock)()
    }

    fn create_publisher(
        &self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
    ) -> Result<Box<dyn RawPublisher>> {
        let topic = expand_name(topic, &self.identity)?;
        check_type_name(type_name)?;
        let mut state = self.bus.state.lock();
        let id = state.id();
        state.publishers.insert(
            id,
            PublisherEntry {
                topic: topic.clone(),
                node: self.identity.fully_qualified_name(),
                type_name: type_name.to_string(),
                qos: *qos,
                type_hash: self.type_hash(type_name),
                history: VecDeque::new(),
            },
        );
        let event = GraphEvent::PublisherAppeared {
            topic,
            type_name: type_name.to_string(),
        };
        state.events.retain(|tx| tx.send(event.clone()).is_ok());
        let remover = Remover {
            state: Arc::downgrade(&self.bus.state),
            remove: |s, id| {
                s.publishers
                    .remove(&id)
                    .map(|p| Box::new(p.history) as Box<dyn std::any::Any>)
            },
            id,
        };
        Ok(Box::new(InProcessPublisher {
            bus: self.bus.clone(),
            id,
            _remover: remover,
        }))
    }

    fn create_subscription(
        &self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
        callback: MessageCallback,
    ) -> Result<Handle> {
        let topic = expand_name(topic, &self.identity)?;
        check_type_name(type_name)?;
        let callback = Arc::new(Mutex::new(callback));
        let (id, latched) = {
            let mut state = self.bus.state.lock();
            let id = state.id();
            let latched: Vec<Bytes> = if qos.durability == Durability::TransientLocal {
                state
                    .publishers
                    .values()
                    .filter(|p| {
                        p.topic == topic && p.type_name == type_name && compatible(&p.qos, qos)
                    })
                    .flat_map(|p| p.history.iter().cloned())
                    .collect()
            } else {
                Vec::new()
            };
            state.subscriptions.insert(
                id,
                SubscriptionEntry {
                    topic,
                    node: self.identity.fully_qualified_name(),
                    type_name: type_name.to_string(),
                    qos: *qos,
                    type_hash: self.type_hash(type_name),
                    callback: callback.clone(),
                },
            );
            (id, latched)
        };
        let now = (self.bus.clock)();
        for data in latched {
            (callback.lock())(ReceivedMessage {
                data,
                recv_timestamp: now,
                send_timestamp: None,
                publisher_gid: None,
            });
        }
        Ok(Handle::new(Remover {
            state: Arc::downgrade(&self.bus.state),
            remove: |s, id| {
                s.subscriptions
                    .remove(&id)
                    .map(|e| Box::new(e.callback) as Box<dyn std::any::Any>)
            },
            id,
        }))
    }

    fn create_service(
        &self,
        service: &str,
        type_name: &str,
        handler: ServiceHandler,
    ) -> Result<Handle> {
        let service = expand_name(service, &self.identity)?;
        check_type_name(type_name)?;
        let mut state = self.bus.state.lock();
        if state.services.contains_key(&service) {
            return Err(TransportError::Middleware(format!(
                "service '{service}' is already served on this bus"
            )));
        }
        state.services.insert(
            service.clone(),
            (type_name.to_string(), Arc::new(Mutex::new(handler))),
        );
        struct ServiceRemover(Weak<Mutex<BusState>>, String);
        impl Drop for ServiceRemover {
            fn drop(&mut self) {
                if let Some(state) = self.0.upgrade() {
                    // The handler is dropped after the lock is released (see `Remover`).
                    let removed = state.lock().services.remove(&self.1);
                    drop(removed);
                }
            }
        }
        Ok(Handle::new(ServiceRemover(
            Arc::downgrade(&self.bus.state),
            service,
        )))
    }

    fn create_client(&self, service: &str, type_name: &str) -> Result<Box<dyn RawClient>> {
        let service = expand_name(service, &self.identity)?;
        check_type_name(type_name)?;
        let mut gid = [0u8; 16];
        gid[..8].copy_from_slice(
            &CLIENTS
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                .to_le_bytes(),
        );
        Ok(Box::new(InProcessClient {
            bus: self.bus.clone(),
            service,
            type_name: type_name.to_string(),
            gid,
            sequence: std::sync::atomic::AtomicI64::new(1),
        }))
    }

    fn topics(&self) -> Vec<TopicInfo> {
        let state = self.bus.state.lock();
        let endpoint =
            |node: &String, type_name: &String, qos: &QosProfile, hash: &Option<String>| {
                EndpointInfo {
                    type_name: type_name.clone(),
                    qos: *qos,
                    node: Some(node.clone()),
                    type_hash: hash.clone(),
                }
            };
        let publishers = state.publishers.values().map(|p| {
            let info = endpoint(&p.node, &p.type_name, &p.qos, &p.type_hash);
            (p.topic.clone(), true, info)
        });
        let subscriptions = state.subscriptions.values().map(|s| {
            let info = endpoint(&s.node, &s.type_name, &s.qos, &s.type_hash);
            (s.topic.clone(), false, info)
        });
        group_by_topic(publishers.chain(subscriptions))
    }

    fn graph_events(&self) -> Receiver<GraphEvent> {
        let (tx, rx) = crossbeam_channel::unbounded();
        self.bus.state.lock().events.push(tx);
        rx
    }

    fn register_type_hash(&self, type_name: &str, hash: &str) {
        if let Some(hash) = type_hash::announced(Some(hash)) {
            self.type_hashes
                .lock()
                .insert(ros2_name(type_name), hash.to_string());
        }
    }
}
