//! The backend (compiled under cfg `rosbag2_rs_fastdds`).

mod config;
mod graph;
mod qos;
mod service;
mod sys;

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rosbag2_rs_middleware::crossbeam_channel::Receiver;
use rosbag2_rs_middleware::qos::Durability;
use rosbag2_rs_middleware::Bytes;
use rosbag2_rs_middleware::QosProfile;

pub use config::FastDdsConfig;
use graph::Graph;
use rosbag2_rs_dds_common::announcer::{Announced, Announcer};
use service::{FastDdsClient, Server, ServerWorker};
use sys::{Participant, ParticipantConfig, RawQos, Writer};

use rosbag2_rs_dds_common::discovery_info::{self, ParticipantEntities};
use rosbag2_rs_dds_common::{user_data, Guid};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::names::{
    dds_message_type, dds_service_topics, dds_service_types, dds_topic_name, expand_name,
    NodeIdentity,
};
use rosbag2_rs_middleware::type_hashes::TypeHashes;
use rosbag2_rs_middleware::*;

/// A node on the ROS 2 graph over Fast DDS.
pub struct FastDdsMiddleware {
    // Fields drop in order: our entities before the participant goes.
    _discovery_reader: sys::Reader,
    announcer: Arc<Announcer>,
    graph: Arc<Graph>,
    identity: NodeIdentity,
    config: FastDdsConfig,
    type_hashes: TypeHashes,
    participant: Arc<Participant>,
}

/// The QoS of `ros_discovery_info` as rmw_dds_common creates it: reliable, transient local,
/// keep last 1.
fn discovery_qos() -> RawQos {
    qos::to_fastdds(
        &QosProfile {
            durability: Durability::TransientLocal,
            depth: 1,
            ..QosProfile::default()
        },
        0,
    )
}

/// The QoS of services in ROS 2: reliable, volatile, keep last 10.
fn service_qos() -> RawQos {
    qos::to_fastdds(&QosProfile::default(), 0)
}

impl FastDdsMiddleware {
    /// A node configured from the ROS 2 and rmw_fastrtps environment variables (see
    /// [`FastDdsConfig::from_env`]).
    pub fn new(name: &str, namespace: &str) -> Result<Self> {
        Self::with_config(name, namespace, FastDdsConfig::from_env()?)
    }

    /// A node with explicit settings.
    pub fn with_config(name: &str, namespace: &str, config: FastDdsConfig) -> Result<Self> {
        let identity = NodeIdentity::new(name, namespace)?;
        static VERSION_LOGGED: std::sync::Once = std::sync::Once::new();
        VERSION_LOGGED.call_once(|| log::info!("Fast DDS {}", sys::version()));
        let graph = Arc::new(Graph::default());
        let participant = Arc::new(Participant::new(
            &ParticipantConfig {
                domain_id: config.dds.domain_id.into(),
                range: config.range_code(),
                static_peers: &config.dds.static_peers,
                qos_from_xml: config.qos_from_xml,
                asynchronous: config.asynchronous,
            },
            "enclave=/;",
            graph.clone(),
        )?);
        let info_writer = participant.writer(
            discovery_info::TOPIC,
            discovery_info::TYPE,
            &discovery_qos(),
            "",
        )?;
        let announcer = Arc::new(Announcer::new(
            Box::new(move |sample| info_writer.write(sample, None).map(drop)),
            participant.guid(),
            &identity.namespace,
            &identity.name,
        ));
        let info_graph = graph.clone();
        let own = participant.guid();
        let discovery_reader = participant.reader(
            discovery_info::TOPIC,
            discovery_info::TYPE,
            &discovery_qos(),
            "",
            Box::new(move |sample: sys::Sample<'_>| {
                match ParticipantEntities::decode(sample.data) {
                    Ok(info) if info.gid != own => info_graph.participant_info(info),
                    Ok(_) => {}
                    Err(e) => log::debug!("ignoring a malformed ros_discovery_info sample: {e}"),
                }
            }),
        )?;
        log::debug!(
            "node {} on Fast DDS domain {} ({:?} discovery)",
            identity.fully_qualified_name(),
            config.dds.domain_id,
            config.dds.range
        );
        Ok(Self {
            _discovery_reader: discovery_reader,
            announcer,
            graph,
            identity,
            config,
            type_hashes: TypeHashes::new(),
            participant,
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &FastDdsConfig {
        &self.config
    }

    /// The participant's GUID (the node's GID prefix on `ros_discovery_info`).
    pub fn participant_guid(&self) -> Guid {
        self.participant.guid()
    }

    /// The USER_DATA of an endpoint of `type_name`: its type hash (registered, or computed
    /// from its definition), if known.
    fn endpoint_user_data(&self, type_name: &str) -> String {
        user_data::type_hash_user_data(self.type_hashes.get(type_name).as_deref())
    }
}

struct FastDdsPublisher {
    writer: Writer,
    _announced: Announced,
}

impl RawPublisher for FastDdsPublisher {
    fn publish(&self, data: &Bytes) -> Result<()> {
        check_payload(data)?;
        self.writer.write(data, None).map(drop)
    }

    fn publish_at(&self, data: &Bytes, send_timestamp: i64) -> Result<()> {
        check_payload(data)?;
        self.writer.write_at(data, send_timestamp)
    }

    fn subscription_count(&self) -> usize {
        self.writer.matched()
    }

    fn wait_for_acks(&self, timeout: Duration) -> bool {
        self.writer.wait_for_acks(timeout)
    }
}

impl Middleware for FastDdsMiddleware {
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
        let writer = self.participant.writer(
            &dds_topic,
            &dds_message_type(type_name)?,
            &qos::to_fastdds(qos, min_depth),
            &self.endpoint_user_data(type_name),
        )?;
        Ok(Box::new(FastDdsPublisher {
            _announced: self.announcer.add(writer.guid(), true),
            writer,
        }))
    }

    fn create_subscription(
        &self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
        mut callback: MessageCallback,
    ) -> Result<Handle> {
        let dds_topic = dds_topic_name(&expand_name(topic, &self.identity)?);
        let reader = self.participant.reader(
            &dds_topic,
            &dds_message_type(type_name)?,
            &qos::to_fastdds(qos, 0),
            &self.endpoint_user_data(type_name),
            Box::new(move |sample: sys::Sample<'_>| {
                callback(ReceivedMessage {
                    data: Bytes::copy_from_slice(sample.data),
                    recv_timestamp: now_nanos(),
                    send_timestamp: Some(sample.source_timestamp),
                    publisher_gid: None,
                })
            }),
        )?;
        let announced = self.announcer.add(reader.guid(), false);
        // The announcement goes first, then the reader.
        Ok(Handle::new((announced, reader)))
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
        let writer = self
            .participant
            .writer(&reply_topic, &reply_type, &service_qos(), "")?;
        let (tx, rx) = service::request_queue();
        let reader = self.participant.reader(
            &request_topic,
            &request_type,
            &service_qos(),
            "",
            service::request_callback(name.clone(), tx),
        )?;
        let announced = self.announcer.add(reader.guid(), false);
        let worker = ServerWorker {
            _announced: self.announcer.add(writer.guid(), true),
            writer,
            handler,
            service: name,
        }
        .spawn(rx)?;
        Ok(Handle::new(Server {
            _announced: announced,
            reader: Some(reader),
            worker: Some(worker),
        }))
    }

    fn create_client(&self, service: &str, type_name: &str) -> Result<Box<dyn RawClient>> {
        let name = expand_name(service, &self.identity)?;
        let (request_topic, reply_topic) = dds_service_topics(&name);
        let (request_type, reply_type) = dds_service_types(type_name)?;
        let writer = self
            .participant
            .writer(&request_topic, &request_type, &service_qos(), "")?;
        let pending = FastDdsClient::pending();
        let guids = Arc::new(OnceLock::new());
        let reader = self.participant.reader(
            &reply_topic,
            &reply_type,
            &service_qos(),
            "",
            service::reply_callback(pending.clone(), guids.clone()),
        )?;
        let announced = [
            self.announcer.add(writer.guid(), true),
            self.announcer.add(reader.guid(), false),
        ];
        Ok(Box::new(FastDdsClient::new(
            name, writer, reader, pending, &guids, announced,
        )))
    }

    fn topics(&self) -> Vec<TopicInfo> {
        self.graph.topics()
    }

    fn graph_events(&self) -> Receiver<GraphEvent> {
        let (tx, rx) = rosbag2_rs_middleware::crossbeam_channel::unbounded();
        self.graph.listen(tx);
        rx
    }

    fn register_type_hash(&self, type_name: &str, hash: &str) {
        self.type_hashes.register(type_name, hash);
    }
}

/// The system clock, ns since the epoch.
fn now_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}
