//! The default backend: ROS 2 over Cyclone DDS, the C library under rmw_cyclonedds_cpp (built
//! from source by the `cyclors` crate). Samples travel as serialized bytes (`cyclocut`'s blob
//! type), with ROS 2's wire conventions: topic and type names, QoS as rmw_cyclonedds sets it,
//! its service request mapping, `typehash=` and `clientid=`/`serviceid=` in endpoint USER_DATA
//! (read into the graph; ours from [`TypeHashes`]), and the node's entry on `ros_discovery_info`,
//! so ROS 2 nodes see a rosbag2-rs node as one of their own.
//!
//! Each [`DdsMiddleware`] is one DDS participant with one dispatcher thread for its readers.

pub mod config;
mod dispatcher;
mod domain;
mod endpoint;
mod graph;
mod qos;
mod raw;
mod service;
mod sys;
mod time;
#[doc(hidden)]
pub mod xtypes;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use cyclors::*;
use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::Receiver;
use rosbag2_rs_middleware::qos::Durability;
use rosbag2_rs_middleware::Bytes;
use rosbag2_rs_middleware::QosProfile;

pub use config::{DdsConfig, DiscoveryRange};
use dispatcher::{Dispatcher, Drain, Registration};
use graph::{BuiltinDrain, DiscoveryInfoDrain, Graph};
use raw::RawWriter;
use rosbag2_rs_dds_common::announcer::{Announced, Announcer};
use rosbag2_rs_dds_common::discovery_info;
pub use rosbag2_rs_dds_common::discovery_info::{NodeEntities, ParticipantEntities};
use service::{DdsClient, ServerDrain};
use sys::{Entity, Qos};

use rosbag2_rs_dds_common::user_data::type_hash_user_data as user_data_entry;
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::names::{
    dds_message_type, dds_service_topics, dds_service_types, dds_topic_name, expand_name,
    NodeIdentity,
};
use rosbag2_rs_middleware::on_graph::OnGraph;
use rosbag2_rs_middleware::type_hashes::TypeHashes;
use rosbag2_rs_middleware::*;

/// How long to wait for a type object from the writers that announce it.
const TYPE_LOOKUP_WAIT: Duration = Duration::from_secs(2);

/// How often the dispatcher runs periodic work (waiting service replies).
const TICK: Duration = Duration::from_millis(10);

/// The participant and its domain; endpoints hold it so that it outlives them.
struct Participant {
    entity: Entity,
    publisher: dds_entity_t,
    subscriber: dds_entity_t,
    topics: Mutex<HashMap<String, dds_entity_t>>,
    _domain: domain::Domain,
    /// After the participant and its domain are deleted.
    _on_graph: OnGraph,
}

impl Participant {
    /// The topic `name` of `type_name` (blob type), created once.
    fn topic(&self, name: &str, type_name: &str) -> Result<dds_entity_t> {
        let mut topics = self.topics.lock();
        if let Some(topic) = topics.get(name) {
            return Ok(*topic);
        }
        // Topics are deleted with the participant.
        let topic = raw::create_topic(self.entity.handle(), name, type_name)?;
        let handle = topic.handle();
        std::mem::forget(topic);
        topics.insert(name.to_string(), handle);
        Ok(handle)
    }

    fn writer(&self, topic: &str, type_name: &str, qos: &Qos) -> Result<RawWriter> {
        let topic_handle = self.topic(topic, type_name)?;
        // SAFETY: valid publisher, topic and QoS.
        let writer = Entity::new(
            unsafe {
                dds_create_writer(self.publisher, topic_handle, qos.as_ptr(), std::ptr::null())
            },
            &format!("cannot create a DDS writer on '{topic}'"),
        )?;
        RawWriter::new(writer)
    }

    fn reader(&self, topic: &str, type_name: &str, qos: &Qos) -> Result<Entity> {
        let topic_handle = self.topic(topic, type_name)?;
        // SAFETY: valid subscriber, topic and QoS.
        Entity::new(
            unsafe {
                dds_create_reader(
                    self.subscriber,
                    topic_handle,
                    qos.as_ptr(),
                    std::ptr::null(),
                )
            },
            &format!("cannot create a DDS reader on '{topic}'"),
        )
    }
}

/// A node on the ROS 2 graph over Cyclone DDS.
pub struct DdsMiddleware {
    // Fields drop in order: the dispatcher thread stops before anything it reads goes away.
    dispatcher: Dispatcher,
    _discovery: [Registration; 3],
    graph: Arc<Graph>,
    announcer: Arc<Announcer>,
    identity: NodeIdentity,
    config: DdsConfig,
    participant: Arc<Participant>,
    /// What `typehash=` each endpoint announces.
    type_hashes: TypeHashes,
}

impl DdsMiddleware {
    /// A node configured from the ROS 2 environment variables (see [`DdsConfig::from_env`]).
    pub fn new(name: &str, namespace: &str) -> Result<Self> {
        Self::with_config(name, namespace, DdsConfig::from_env()?)
    }

    /// A node with explicit settings.
    pub fn with_config(name: &str, namespace: &str, config: DdsConfig) -> Result<Self> {
        let identity = NodeIdentity::new(name, namespace)?;
        let domain = domain::Domain::join(&config)?;
        let mut participant_qos = Qos::new();
        participant_qos.set_user_data("enclave=/;");
        // SAFETY: a valid domain id (the domain exists) and QoS.
        let entity = Entity::new(
            unsafe {
                dds_create_participant(
                    config.domain_id.into(),
                    participant_qos.as_ptr(),
                    std::ptr::null(),
                )
            },
            "cannot create the DDS participant",
        )?;
        // SAFETY: a valid participant; publisher and subscriber are deleted with it.
        let (publisher, subscriber) = unsafe {
            (
                dds_create_publisher(entity.handle(), std::ptr::null(), std::ptr::null()),
                dds_create_subscriber(entity.handle(), std::ptr::null(), std::ptr::null()),
            )
        };
        sys::check(
            publisher.min(subscriber),
            "cannot create a DDS publisher/subscriber",
        )?;
        let participant = Arc::new(Participant {
            entity,
            publisher,
            subscriber,
            topics: Mutex::new(HashMap::new()),
            _domain: domain,
            _on_graph: OnGraph::enter(),
        });
        let dispatcher = Dispatcher::start(participant.entity.handle(), TICK)?;

        // ros_discovery_info as rmw_cyclonedds has it: reliable, transient local, depth 1.
        let info_qos = QosProfile {
            durability: Durability::TransientLocal,
            depth: 1,
            ..QosProfile::default()
        };
        let info_writer = participant.writer(
            discovery_info::TOPIC,
            discovery_info::TYPE,
            &qos::to_dds(&info_qos, 0),
        )?;
        let announcer = Arc::new(Announcer::new(
            Box::new(move |sample| info_writer.write(sample, None)),
            participant.entity.guid(),
            &identity.namespace,
            &identity.name,
        ));
        let graph = Arc::new(Graph::default());
        let info_reader = participant.reader(
            discovery_info::TOPIC,
            discovery_info::TYPE,
            &qos::to_dds(&info_qos, 0),
        )?;
        let register_builtin = |is_writer: bool| -> Result<Registration> {
            let drain = BuiltinDrain::new(participant.entity.handle(), is_writer, graph.clone())?;
            dispatcher.register(drain.reader(), Box::new(drain))
        };
        let discovery = [
            register_builtin(true)?,
            register_builtin(false)?,
            dispatcher.register(
                info_reader.handle(),
                Box::new(DiscoveryInfoDrain {
                    reader: info_reader,
                    graph: graph.clone(),
                }),
            )?,
        ];
        log::debug!(
            "node {} on DDS domain {} ({:?} discovery)",
            identity.fully_qualified_name(),
            config.domain_id,
            config.range
        );
        Ok(Self {
            dispatcher,
            _discovery: discovery,
            graph,
            announcer,
            identity,
            config,
            participant,
            type_hashes: TypeHashes::new(),
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &DdsConfig {
        &self.config
    }

    /// The participant's GUID (the node's GID prefix on `ros_discovery_info`).
    pub fn participant_guid(&self) -> [u8; 16] {
        self.participant.entity.guid()
    }

    fn register(
        &self,
        reader: Entity,
        make: impl FnOnce(Entity) -> Box<dyn Drain>,
    ) -> Result<(Registration, Announced)> {
        let announced = self.announcer.add(reader.guid(), false);
        let handle = reader.handle();
        Ok((self.dispatcher.register(handle, make(reader))?, announced))
    }
}

/// The QoS of services in ROS 2: reliable, volatile, keep last 10; USER_DATA the endpoint's id
/// and type hash, as rmw_cyclonedds writes them.
fn service_qos(id_entry: &str, hash: Option<&str>) -> Qos {
    let mut qos = qos::to_dds(&QosProfile::default(), 0);
    qos.set_user_data(&format!("{id_entry}{}", user_data_entry(hash)));
    qos
}

/// A topic endpoint's QoS with its `typehash=` USER_DATA.
fn topic_qos(qos: &QosProfile, min_depth: u64, hash: Option<&str>) -> Qos {
    let mut out = qos::to_dds(qos, min_depth);
    if let Some(hash) = hash {
        out.set_user_data(&user_data_entry(Some(hash)));
    }
    out
}

/// A process-unique id for a client or server: the participant's GUID prefix and a number.
fn endpoint_id(participant: &Participant) -> [u8; 16] {
    let mut id = participant.entity.guid();
    id[12..].copy_from_slice(&next_client_number().to_be_bytes());
    id
}

struct DdsPublisher {
    writer: RawWriter,
    _announced: Announced,
    _participant: Arc<Participant>,
}

impl RawPublisher for DdsPublisher {
    fn publish(&self, data: &Bytes) -> Result<()> {
        self.writer.write(data, None)
    }

    fn publish_at(&self, data: &Bytes, send_timestamp: i64) -> Result<()> {
        self.writer.write(data, Some(send_timestamp))
    }

    fn subscription_count(&self) -> usize {
        // SAFETY: plain data, filled by Cyclone.
        let mut status: dds_publication_matched_status_t = unsafe { std::mem::zeroed() };
        // SAFETY: a valid writer and out pointer.
        let ret = unsafe {
            dds_get_publication_matched_status(self.writer.entity().handle(), &mut status)
        };
        if ret < 0 {
            0
        } else {
            status.current_count as usize
        }
    }

    fn wait_for_acks(&self, timeout: Duration) -> bool {
        self.writer.wait_for_acks(timeout)
    }
}

struct SubscriptionDrain {
    reader: Entity,
    callback: MessageCallback,
}

impl Drain for SubscriptionDrain {
    fn drain(&mut self) {
        let callback = &mut self.callback;
        raw::take_round(self.reader.handle(), 64, |sample| {
            callback(ReceivedMessage {
                data: sample.data,
                recv_timestamp: time::now_nanos(),
                send_timestamp: Some(sample.source_timestamp),
                publisher_gid: None,
            })
        });
    }
}

impl Middleware for DdsMiddleware {
    fn node(&self) -> &NodeIdentity {
        &self.identity
    }

    fn create_publisher(
        &self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
    ) -> Result<Box<dyn RawPublisher>> {
        let dds_topic = dds_topic_name(&expand_name(topic, &self.identity)?);
        let min_depth = min_writer_depth(qos);
        let hash = self.type_hashes.get(type_name);
        let writer = self.participant.writer(
            &dds_topic,
            &dds_message_type(type_name)?,
            &topic_qos(qos, min_depth, hash.as_deref()),
        )?;
        Ok(Box::new(DdsPublisher {
            _announced: self.announcer.add(writer.entity().guid(), true),
            writer,
            _participant: self.participant.clone(),
        }))
    }

    fn create_subscription(
        &self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
        callback: MessageCallback,
    ) -> Result<Handle> {
        let dds_topic = dds_topic_name(&expand_name(topic, &self.identity)?);
        let hash = self.type_hashes.get(type_name);
        let reader = self.participant.reader(
            &dds_topic,
            &dds_message_type(type_name)?,
            &topic_qos(qos, 0, hash.as_deref()),
        )?;
        let registration = self.register(reader, |reader| {
            Box::new(SubscriptionDrain { reader, callback })
        })?;
        Ok(Handle::new((registration, self.participant.clone())))
    }

    fn create_service(
        &self,
        service: &str,
        type_name: &str,
        handler: ServiceHandler,
    ) -> Result<Handle> {
        let name = expand_name(service, &self.identity)?;
        let (request_topic, reply_topic) = dds_service_topics(&name);
        let (request_type, reply_type) = dds_service_types(type_name)?;
        let (request_hash, reply_hash) = self.type_hashes.service(type_name);
        let id = service::service_user_data(&endpoint_id(&self.participant));
        let writer = self.participant.writer(
            &reply_topic,
            &reply_type,
            &service_qos(&id, reply_hash.as_deref()),
        )?;
        let reader = self.participant.reader(
            &request_topic,
            &request_type,
            &service_qos(&id, request_hash.as_deref()),
        )?;
        let writer_announced = self.announcer.add(writer.entity().guid(), true);
        let registration = self.register(reader, |reader| {
            Box::new(ServerDrain::new(name, reader, writer, handler))
        })?;
        Ok(Handle::new((
            registration,
            writer_announced,
            self.participant.clone(),
        )))
    }

    fn create_client(&self, service: &str, type_name: &str) -> Result<Box<dyn RawClient>> {
        let name = expand_name(service, &self.identity)?;
        let (request_topic, reply_topic) = dds_service_topics(&name);
        let (request_type, reply_type) = dds_service_types(type_name)?;
        // Both endpoints carry the client's id, so that servers can tell when they can reply.
        let id = service::client_user_data(&endpoint_id(&self.participant));
        let (request_hash, reply_hash) = self.type_hashes.service(type_name);
        let writer = self.participant.writer(
            &request_topic,
            &request_type,
            &service_qos(&id, request_hash.as_deref()),
        )?;
        let reader = self.participant.reader(
            &reply_topic,
            &reply_type,
            &service_qos(&id, reply_hash.as_deref()),
        )?;
        let announced = [
            self.announcer.add(writer.entity().guid(), true),
            self.announcer.add(reader.guid(), false),
        ];
        Ok(Box::new(DdsClient::new(
            name,
            writer,
            reader,
            &self.dispatcher,
            (announced, self.participant.clone()),
        )?))
    }

    fn topics(&self) -> Vec<TopicInfo> {
        self.graph.topics()
    }

    fn graph_events(&self) -> Receiver<GraphEvent> {
        let (tx, rx) = rosbag2_rs_middleware::crossbeam_channel::unbounded();
        self.graph.listen(tx);
        rx
    }

    fn announced_type_description(
        &self,
        topic: &str,
        type_name: &str,
    ) -> Option<rosbag2_rs_middleware::type_hash::TypeDescription> {
        use rosbag2_rs_dds_common::xtypes::{describe, StructType, TypeHash};
        let participant = self.participant.entity.handle();
        let mut resolve =
            |hash: &TypeHash| xtypes::struct_type(participant, hash, TYPE_LOOKUP_WAIT);
        for hash in self.graph.announced_type_hashes(topic, type_name) {
            let described = resolve(&hash)
                .and_then(|root: StructType| describe(type_name, &root, &mut resolve));
            match described {
                Ok(description) => return Some(description),
                Err(e) => log::warn!("'{type_name}' on '{topic}': {e}"),
            }
        }
        None
    }

    fn register_type_hash(&self, type_name: &str, hash: &str) {
        self.type_hashes.register(type_name, hash);
    }
}

/// A process-unique number for client ids.
fn next_client_number() -> u32 {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
