//! The default backend: ROS 2 over DDS in pure Rust (RustDDS, with `ros2-client` for the node's
//! identity on the graph), speaking ROS 2's wire conventions so that rmw_cyclonedds and
//! rmw_fastrtps nodes talk to us unchanged.

pub mod config;
mod dispatcher;
mod qos;
mod raw;
mod service;
mod time;

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::AtomicI64;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use parking_lot::Mutex;
use rosbag2_rs_storage::QosProfile;
use rustdds::{DomainParticipant, DomainParticipantBuilder, QosPolicies, Topic, TopicKind};

pub use config::{DdsConfig, DiscoveryRange, ServiceMapping};
use dispatcher::{Dispatcher, Drain, Registration};
use raw::{RawAdapter, RawCdr};
use service::{DdsClient, ReplyDrain, ServerDrain};

use crate::error::{Result, TransportError};
use crate::middleware::*;
use crate::names::{
    dds_message_type, dds_service_topics, dds_service_types, dds_topic_name, expand_name,
    ros_topic_from_dds, NodeIdentity,
};

fn dds_err(e: impl std::fmt::Debug) -> TransportError {
    TransportError::Middleware(format!("{e:?}"))
}

/// The QoS ROS 2 uses for services: reliable, volatile, keep last 10.
fn service_qos() -> QosProfile {
    QosProfile::default()
}

/// A node on the ROS 2 graph over DDS.
pub struct DdsMiddleware {
    identity: NodeIdentity,
    config: DdsConfig,
    participant: DomainParticipant,
    publisher: rustdds::Publisher,
    subscriber: rustdds::Subscriber,
    topics: Mutex<HashMap<String, Topic>>,
    events: Arc<Mutex<Vec<Sender<GraphEvent>>>>,
    dispatcher: Dispatcher,
    _ros_node: ros2_client::Node,
}

impl DdsMiddleware {
    /// A node configured from the ROS 2 environment variables (see [`DdsConfig::from_env`]).
    pub fn new(name: &str, namespace: &str) -> Result<Self> {
        Self::with_config(name, namespace, DdsConfig::from_env()?)
    }

    /// A node with explicit settings.
    pub fn with_config(name: &str, namespace: &str, config: DdsConfig) -> Result<Self> {
        let identity = NodeIdentity::new(name, namespace)?;
        let mut builder = DomainParticipantBuilder::new(config.domain_id);
        builder = match config.range {
            DiscoveryRange::Subnet => builder,
            DiscoveryRange::Localhost => {
                builder.with_only_networks([IpAddr::V4(Ipv4Addr::LOCALHOST)])
            }
            DiscoveryRange::Off => builder
                .with_only_networks(Vec::<IpAddr>::new())
                .same_host_loopback(false),
        };
        let participant = builder.build().map_err(dds_err)?;
        let context =
            ros2_client::Context::from_domain_participant(participant.clone()).map_err(dds_err)?;
        let node_name =
            ros2_client::NodeName::new(&identity.namespace, &identity.name).map_err(dds_err)?;
        let ros_node = context
            .new_node(
                node_name,
                ros2_client::NodeOptions::new().enable_rosout(false),
            )
            .map_err(dds_err)?;
        let publisher = participant
            .create_publisher(&QosPolicies::qos_none())
            .map_err(dds_err)?;
        let subscriber = participant
            .create_subscriber(&QosPolicies::qos_none())
            .map_err(dds_err)?;
        let events: Arc<Mutex<Vec<Sender<GraphEvent>>>> = Arc::default();
        let dispatcher = Dispatcher::start(
            Duration::from_millis(50),
            graph_watcher(participant.clone(), events.clone()),
        )?;
        log::debug!(
            "node {} on DDS domain {} ({:?} discovery)",
            identity.fully_qualified_name(),
            config.domain_id,
            config.range
        );
        Ok(Self {
            identity,
            config,
            participant,
            publisher,
            subscriber,
            topics: Mutex::new(HashMap::new()),
            events,
            dispatcher,
            _ros_node: ros_node,
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &DdsConfig {
        &self.config
    }

    fn topic(&self, dds_name: &str, dds_type: &str, qos: &QosPolicies) -> Result<Topic> {
        let mut topics = self.topics.lock();
        if let Some(topic) = topics.get(dds_name) {
            return Ok(topic.clone());
        }
        let topic = self
            .participant
            .create_topic(
                dds_name.to_string(),
                dds_type.to_string(),
                qos,
                TopicKind::NoKey,
            )
            .map_err(dds_err)?;
        topics.insert(dds_name.to_string(), topic.clone());
        Ok(topic)
    }

    fn writer(&self, dds_name: &str, dds_type: &str, qos: &QosProfile) -> Result<service::Writer> {
        let policies = qos::to_dds(qos);
        let topic = self.topic(dds_name, dds_type, &policies)?;
        self.publisher
            .create_datawriter_no_key::<RawCdr, RawAdapter>(&topic, Some(policies))
            .map_err(dds_err)
    }

    fn reader(&self, dds_name: &str, dds_type: &str, qos: &QosProfile) -> Result<service::Reader> {
        let policies = qos::to_dds(qos);
        let topic = self.topic(dds_name, dds_type, &policies)?;
        self.subscriber
            .create_simple_datareader_no_key::<RawCdr, RawAdapter>(&topic, Some(policies))
            .map_err(dds_err)
    }
}

/// Emits [`GraphEvent::PublisherAppeared`] for every newly discovered ROS publisher.
fn graph_watcher(
    participant: DomainParticipant,
    events: Arc<Mutex<Vec<Sender<GraphEvent>>>>,
) -> impl FnMut() + Send + 'static {
    let mut known = HashSet::new();
    move || {
        let mut listeners = events.lock();
        if listeners.is_empty() {
            return;
        }
        for writer in participant.discovered_writers() {
            let data = &writer.publication_topic_data;
            if known.insert(data.key) {
                if let Some((topic, type_name)) =
                    ros_topic_from_dds(&data.topic_name, &data.type_name)
                {
                    let event = GraphEvent::PublisherAppeared { topic, type_name };
                    listeners.retain(|tx| tx.send(event.clone()).is_ok());
                }
            }
        }
    }
}

struct DdsPublisher {
    writer: service::Writer,
    topic: String,
    participant: DomainParticipant,
}

impl RawPublisher for DdsPublisher {
    fn publish(&self, data: &Bytes) -> Result<()> {
        crate::middleware::check_payload(data)?;
        self.writer
            .write(RawCdr(data.clone()), None)
            .map_err(|e| TransportError::InvalidPayload(format!("{e:?}")))
    }

    fn publish_at(&self, data: &Bytes, send_timestamp: i64) -> Result<()> {
        crate::middleware::check_payload(data)?;
        self.writer
            .write(RawCdr(data.clone()), Some(time::from_nanos(send_timestamp)))
            .map_err(|e| TransportError::InvalidPayload(format!("{e:?}")))
    }

    fn subscription_count(&self) -> usize {
        self.participant
            .discovered_readers()
            .iter()
            .filter(|r| *r.subscription_topic_data.topic_name() == self.topic)
            .count()
    }
}

struct SubscriptionDrain {
    reader: service::Reader,
    callback: MessageCallback,
    topic: String,
}

impl Drain for SubscriptionDrain {
    fn drain(&mut self) {
        self.reader.drain_read_notifications();
        loop {
            match self.reader.try_take_one() {
                Ok(Some(sample)) => (self.callback)(ReceivedMessage {
                    data: sample.sample.0,
                    recv_timestamp: time::now_nanos(),
                    send_timestamp: sample.write_options.source_timestamp().map(time::to_nanos),
                }),
                Ok(None) => break,
                Err(e) => log::warn!("topic '{}': unreadable sample: {e:?}", self.topic),
            }
        }
    }

    fn source(&mut self) -> &mut dyn mio::event::Source {
        &mut self.reader
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
        let writer = self.writer(&dds_topic, &dds_message_type(type_name)?, qos)?;
        Ok(Box::new(DdsPublisher {
            writer,
            topic: dds_topic,
            participant: self.participant.clone(),
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
        let reader = self.reader(&dds_topic, &dds_message_type(type_name)?, qos)?;
        let registration = self.dispatcher.register(Box::new(SubscriptionDrain {
            reader,
            callback,
            topic: dds_topic,
        }))?;
        Ok(Handle::new(registration))
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
        let reader = self.reader(&request_topic, &request_type, &service_qos())?;
        let writer = self.writer(&reply_topic, &reply_type, &service_qos())?;
        let drain = ServerDrain {
            service: name,
            mapping: self.config.service_mapping,
            reader,
            writer,
            handler,
        };
        Ok(Handle::new(self.dispatcher.register(Box::new(drain))?))
    }

    fn create_client(&self, service: &str, type_name: &str) -> Result<Box<dyn RawClient>> {
        let name = expand_name(service, &self.identity)?;
        let (request_topic, reply_topic) = dds_service_topics(&name);
        let (request_type, reply_type) = dds_service_types(type_name)?;
        let writer = self.writer(&request_topic, &request_type, &service_qos())?;
        let reader = self.reader(&reply_topic, &reply_type, &service_qos())?;
        let pending = DdsClient::new_pending();
        let replies: Registration = self.dispatcher.register(Box::new(ReplyDrain {
            mapping: self.config.service_mapping,
            reader,
            pending: pending.clone(),
        }))?;
        Ok(Box::new(DdsClient {
            service: name,
            request_topic,
            mapping: self.config.service_mapping,
            writer,
            pending,
            participant: self.participant.clone(),
            sequence: AtomicI64::new(1),
            _replies: replies,
        }))
    }

    fn topics(&self) -> Vec<TopicInfo> {
        let endpoint = |topic: &str, type_name: &str, policies: QosPolicies, is_publisher: bool| {
            ros_topic_from_dds(topic, type_name).map(|(name, type_name)| {
                (
                    name,
                    is_publisher,
                    EndpointInfo {
                        type_name,
                        qos: qos::from_dds(&policies),
                    },
                )
            })
        };
        let publishers = self
            .participant
            .discovered_writers()
            .into_iter()
            .filter_map(|w| {
                let data = &w.publication_topic_data;
                endpoint(&data.topic_name, &data.type_name, data.qos(), true)
            });
        let subscriptions = self
            .participant
            .discovered_readers()
            .into_iter()
            .filter_map(|r| {
                let data = &r.subscription_topic_data;
                endpoint(data.topic_name(), data.type_name(), data.qos(), false)
            });
        group_by_topic(publishers.chain(subscriptions))
    }

    fn graph_events(&self) -> Receiver<GraphEvent> {
        let (tx, rx) = crossbeam_channel::unbounded();
        self.events.lock().push(tx);
        rx
    }
}
