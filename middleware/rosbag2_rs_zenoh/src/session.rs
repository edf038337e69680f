//! The backend: one Zenoh session (one rmw context) with one node in it, its entities and its
//! view of the graph.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ::zenoh::liveliness::LivelinessToken;
use ::zenoh::sample::SampleKind;
use ::zenoh::{Session, Wait};
use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::Receiver;
use rosbag2_rs_middleware::QosProfile;

pub use super::config::{Role, ZenohConfig, ZenohEnv};
use super::graph::Graph;
use super::liveliness::{self, Entity, EntityKind, NodeInfo, TopicInfo as TokenTopic};
use super::{client, publisher, service, subscriber};

use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::names::{expand_name, NodeIdentity};
use rosbag2_rs_middleware::on_graph::OnGraph;
use rosbag2_rs_middleware::type_hashes::TypeHashes;
use rosbag2_rs_middleware::*;

/// How long the node waits for the graph's tokens when it starts.
const INITIAL_GRAPH_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a node waits for the first token of the graph when its first query found none.
const GRAPH_SETTLE: Duration = Duration::from_millis(250);

/// How long a node waits for its router at start before carrying on without it.
const ROUTER_WAIT: Duration = Duration::from_secs(3);

/// A Zenoh error as a transport error.
pub(crate) fn zenoh_error(what: &str, e: impl std::fmt::Display) -> TransportError {
    TransportError::Middleware(format!("Zenoh: {what}: {e}"))
}

/// What every entity of a node shares.
pub(crate) struct Context {
    pub session: Session,
    pub zid: String,
    pub node: NodeInfo,
    pub node_id: String,
    next_id: AtomicU64,
    pub graph: Arc<Graph>,
    /// Type hashes told by [`Middleware::register_type_hash`], or computed from definitions.
    hashes: TypeHashes,
    /// Messages lost on each topic (sequence-number gaps seen by its subscriptions).
    pub lost: Mutex<HashMap<String, u64>>,
    /// After the session is closed.
    _on_graph: OnGraph,
}

impl Context {
    /// A token for a new entity of this node.
    pub fn entity(&self, kind: EntityKind, topic: Option<TokenTopic>) -> Entity {
        Entity {
            zid: self.zid.clone(),
            node_id: self.node_id.clone(),
            id: self.next_id.fetch_add(1, Ordering::Relaxed).to_string(),
            kind,
            node: self.node.clone(),
            topic,
        }
    }

    /// Declares `entity`'s liveliness token.
    pub fn declare_token(&self, entity: &Entity) -> Result<LivelinessToken> {
        self.session
            .liveliness()
            .declare_token(entity.token())
            .wait()
            .map_err(|e| zenoh_error("cannot declare a liveliness token", e))
    }

    /// The type hash to use for `type_name` (ROS name; `dds_type` its DDS name) on `name`:
    /// registered (from a bag, or what the recorder saw announced), else announced by a peer of
    /// `peers` on the same name, else computed from the type's definition
    /// (`AMENT_PREFIX_PATH` or the bundled set), else announced anywhere for the type. `None`
    /// when nobody knows it.
    pub fn type_hash(
        &self,
        type_name: &str,
        dds_type: &str,
        name: &str,
        peers: &[EntityKind],
    ) -> Option<String> {
        self.hashes
            .registered(type_name)
            .or_else(|| self.graph.announced_hash(peers, name, dds_type))
            .or_else(|| self.hashes.get(type_name))
            .or_else(|| self.graph.any_hash_of_type(dds_type))
    }
}

/// A node on the ROS 2 graph over Zenoh, as rmw_zenoh_cpp would make it.
pub struct ZenohMiddleware {
    identity: NodeIdentity,
    ctx: Arc<Context>,
    _node_token: LivelinessToken,
    _graph_subscriber: ::zenoh::pubsub::Subscriber<()>,
    config: ZenohConfig,
}

impl ZenohMiddleware {
    /// A node configured from the environment (see [`ZenohConfig::from_env`]).
    pub fn new(name: &str, namespace: &str) -> Result<Self> {
        Self::with_config(name, namespace, ZenohConfig::from_env(Role::Session)?)
    }

    /// A node with explicit settings.
    pub fn with_config(name: &str, namespace: &str, config: ZenohConfig) -> Result<Self> {
        let identity = NodeIdentity::new(name, namespace)?;
        log::debug!(
            "opening a Zenoh session (connect: {})",
            config.connect_endpoints()
        );
        let session = ::zenoh::open(config.zenoh.clone())
            .wait()
            .map_err(|e| zenoh_error("cannot open a session", e))?;
        wait_for_router(&session, &config);
        let graph = Arc::new(Graph::default());
        let tokens = liveliness::domain_tokens(config.domain_id);
        let graph_in = graph.clone();
        let graph_subscriber = session
            .liveliness()
            .declare_subscriber(&tokens)
            .history(true)
            .callback(move |sample| {
                let token = sample.key_expr().as_str();
                match sample.kind() {
                    SampleKind::Put => graph_in.put(token),
                    SampleKind::Delete => graph_in.delete(token),
                }
            })
            .wait()
            .map_err(|e| zenoh_error("cannot subscribe to liveliness tokens", e))?;
        // The tokens alive before this session (the subscriber sees only changes).
        match session
            .liveliness()
            .get(&tokens)
            .timeout(INITIAL_GRAPH_TIMEOUT)
            .wait()
        {
            Ok(replies) => {
                while let Ok(reply) = replies.recv() {
                    if let Ok(sample) = reply.result() {
                        graph.put(sample.key_expr().as_str());
                    }
                }
            }
            Err(e) => log::warn!("Zenoh: cannot query the graph: {e}"),
        }
        // Right after the session opens, the router may answer that query before it knows this
        // session; the liveliness history brings the tokens a moment later. Wait for them,
        // briefly, so that endpoints created next see their peers (an empty graph costs this).
        let deadline = std::time::Instant::now() + GRAPH_SETTLE;
        while graph.is_empty() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        let ctx = Arc::new(Context {
            zid: session.zid().to_string(),
            session,
            node: NodeInfo {
                domain_id: config.domain_id,
                enclave: "/".into(),
                namespace: identity.namespace.clone(),
                name: identity.name.clone(),
            },
            node_id: "0".into(),
            next_id: AtomicU64::new(0),
            graph,
            hashes: TypeHashes::new(),
            lost: Mutex::new(HashMap::new()),
            _on_graph: OnGraph::enter(),
        });
        let node_entity = ctx.entity(EntityKind::Node, None);
        let node_token = ctx.declare_token(&node_entity)?;
        log::debug!(
            "node {} on Zenoh domain {} (session {})",
            identity.fully_qualified_name(),
            config.domain_id,
            ctx.zid
        );
        Ok(Self {
            identity,
            ctx,
            _node_token: node_token,
            _graph_subscriber: graph_subscriber,
            config,
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &ZenohConfig {
        &self.config
    }

    /// The Zenoh session id (the `<zid>` chunk of this node's tokens).
    pub fn zid(&self) -> &str {
        &self.ctx.zid
    }

    /// Every entity on the graph, this node's included (what `ros2 node info` reads).
    pub fn entities(&self) -> Vec<Entity> {
        self.ctx.graph.entities()
    }

    /// Messages lost on `topic` so far: the sequence-number gaps its subscriptions saw.
    pub fn lost_messages(&self, topic: &str) -> u64 {
        self.ctx.lost.lock().get(topic).copied().unwrap_or(0)
    }
}

impl Middleware for ZenohMiddleware {
    fn node(&self) -> &NodeIdentity {
        &self.identity
    }

    fn create_publisher(
        &self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
    ) -> Result<Box<dyn RawPublisher>> {
        let name = expand_name(topic, &self.identity)?;
        Ok(Box::new(publisher::ZenohPublisher::new(
            self.ctx.clone(),
            name,
            type_name,
            qos,
        )?))
    }

    fn create_subscription(
        &self,
        topic: &str,
        type_name: &str,
        qos: &QosProfile,
        callback: MessageCallback,
    ) -> Result<Handle> {
        let name = expand_name(topic, &self.identity)?;
        subscriber::subscribe(self.ctx.clone(), name, type_name, qos, callback)
    }

    fn create_service(
        &self,
        service: &str,
        type_name: &str,
        handler: ServiceHandler,
    ) -> Result<Handle> {
        let name = expand_name(service, &self.identity)?;
        service::serve(self.ctx.clone(), name, type_name, handler)
    }

    fn create_client(&self, service: &str, type_name: &str) -> Result<Box<dyn RawClient>> {
        let name = expand_name(service, &self.identity)?;
        Ok(Box::new(client::ZenohClient::new(
            self.ctx.clone(),
            name,
            type_name,
        )?))
    }

    fn topics(&self) -> Vec<TopicInfo> {
        self.ctx.graph.topics()
    }

    fn graph_events(&self) -> Receiver<GraphEvent> {
        let (tx, rx) = rosbag2_rs_middleware::crossbeam_channel::unbounded();
        self.ctx.graph.listen(tx);
        rx
    }

    fn register_type_hash(&self, type_name: &str, hash: &str) {
        self.ctx.hashes.register(type_name, hash);
    }

    fn lost_messages(&self, topic: &str) -> u64 {
        ZenohMiddleware::lost_messages(self, topic)
    }
}

/// Waits, bounded, for the session to reach a router or peer when it is configured to connect to
/// one, as rmw_zenoh checks for its router at start; warns when none answers (the session keeps
/// trying in the background).
fn wait_for_router(session: &Session, config: &ZenohConfig) {
    let endpoints = config.connect_endpoints();
    if endpoints == "[]" {
        return;
    }
    let deadline = std::time::Instant::now() + ROUTER_WAIT;
    loop {
        let info = session.info();
        if info.routers_zid().wait().next().is_some() || info.peers_zid().wait().next().is_some() {
            return;
        }
        if std::time::Instant::now() >= deadline {
            log::warn!(
                "Zenoh: no router reachable at {endpoints} yet (start one with `ros2bag-rs \
                 zenoh-router` or `ros2 run rmw_zenoh_cpp rmw_zenohd`); carrying on"
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Nanoseconds since the epoch, now.
pub(crate) fn now_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}
