//! The backend (compiled under cfg `rosbag2_rs_rcl`).

pub mod arguments;
mod client;
#[cfg(rosbag2_rs_rcl_dynamic)]
mod dynamic;
mod entity;
mod exit;
mod ffi;
mod graph;
pub mod logging;
mod publisher;
mod qos;
mod service;
mod subscription;
mod sys;
mod typesupport;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;
use rosbag2_rs_middleware::crossbeam_channel::Receiver;
use rosbag2_rs_middleware::type_hash::TypeDescription;
use rosbag2_rs_middleware::QosProfile;

use ffi::check;
use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::names::{expand_name, NodeIdentity};
use rosbag2_rs_middleware::on_graph::OnGraph;
use rosbag2_rs_middleware::*;

/// The ROS 2 distribution the backend was built against (`ROS_DISTRO`, or rcl's version).
pub const ROS_DISTRO: &str = env!("ROSBAG2_RS_ROS_DISTRO");

/// How long the wait thread waits at most before looking at its stop flag again (it is woken
/// at once by the guard condition; this bounds a lost wake-up).
const WAIT_TIMEOUT_NS: i64 = 1_000_000_000;

/// How long dropping a subscription, service or client waits for the wait thread to let go of
/// it (the thread is woken at once; a callback running long delays it).
const RELEASE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// An rcl context with its node; finalised (node, then shutdown and context) when the last
/// entity of the node is gone.
pub(crate) struct NodeHandle {
    context: *mut sys::rcl_context_t,
    node: *mut sys::rcl_node_t,
    /// When the publishers going now stop waiting for acknowledgements (one window for all).
    linger_deadline: Mutex<Option<std::time::Instant>>,
    /// Whether rcl publishes the node's log lines on `/rosout`.
    rosout: bool,
    /// After the node and context are finalised.
    _on_graph: OnGraph,
}

// SAFETY: rcl's node and context may be used from any thread (rclcpp does: entities are created
// on user threads while the executor waits); they are freed only in Drop, after every user.
unsafe impl Send for NodeHandle {}
// SAFETY: as above.
unsafe impl Sync for NodeHandle {}

impl NodeHandle {
    fn new(identity: &NodeIdentity) -> Result<Self> {
        let name = ffi::cstring(&identity.name)?;
        let namespace = ffi::cstring(&identity.namespace)?;
        // SAFETY: each rcl object is zero-initialised before its init; the init options are
        // finalised once rcl_init has copied them; on failure what was initialised is
        // finalised and freed.
        unsafe {
            let mut options = sys::rcl_get_zero_initialized_init_options();
            check(
                sys::rcl_init_options_init(&mut options, ffi::allocator()),
                || "cannot initialise the init options".into(),
            )?;
            let context = Box::into_raw(Box::new(sys::rcl_get_zero_initialized_context()));
            // The process's command line, as rclcpp's init passes it: rcl applies its ROS
            // arguments (remaps, enclave, ...) to the node.
            let argv = arguments::process().map(|p| p.argv()).unwrap_or_default();
            let argc = i32::try_from(argv.len()).unwrap_or(0);
            let argv_ptr = if argc == 0 {
                std::ptr::null()
            } else {
                argv.as_ptr()
            };
            let ret = sys::rcl_init(argc, argv_ptr, &options, context);
            let _ = sys::rcl_init_options_fini(&mut options);
            if let Err(e) = check(ret, || "rcl_init failed".into()) {
                drop(Box::from_raw(context));
                return Err(e);
            }
            let node = Box::into_raw(Box::new(sys::rcl_get_zero_initialized_node()));
            let node_options = sys::rcl_node_get_default_options();
            let ret = sys::rcl_node_init(
                node,
                name.as_ptr(),
                namespace.as_ptr(),
                context,
                &node_options,
            );
            let mut handle = Self {
                context,
                node,
                linger_deadline: Mutex::new(None),
                rosout: false,
                _on_graph: OnGraph::enter(),
            };
            if let Err(e) = check(ret, || {
                format!("cannot create node {}", identity.fully_qualified_name())
            }) {
                // Drop finalises the context; the node was never initialised.
                drop(Box::from_raw(handle.node));
                handle.node = std::ptr::null_mut();
                drop(handle);
                return Err(e);
            }
            // `/rosout` from this node, as rclcpp and rclpy create it, where rcl's logging is on.
            handle.rosout = logging::init_rosout(handle.node);
            // After the node: the rmw creates its middleware's singletons (and registers their
            // destructors) with its first node, and the exit handler must run before them.
            exit::register();
            Ok(handle)
        }
    }

    /// The node's name and namespace as rcl made them (after its remap rules).
    fn identity(&self) -> Result<NodeIdentity> {
        // SAFETY: the node is initialised; rcl returns strings it owns, copied here.
        let (name, namespace) = unsafe {
            (
                ffi::string(sys::rcl_node_get_name(self.node)),
                ffi::string(sys::rcl_node_get_namespace(self.node)),
            )
        };
        NodeIdentity::new(&name, &namespace)
    }

    /// How long a publisher going now may still wait for acknowledgements: the rest of one
    /// `linger` window that the node's first publisher to go opens for all of them, so that a
    /// teardown lingers once, not once per publisher (a window over for 5 s is a new teardown).
    pub fn linger_left(&self, linger: std::time::Duration) -> std::time::Duration {
        let now = std::time::Instant::now();
        let mut deadline = self.linger_deadline.lock();
        let window = match *deadline {
            Some(end) if now < end + std::time::Duration::from_secs(5) => end,
            _ => *deadline.insert(now + linger),
        };
        window.saturating_duration_since(now)
    }

    /// The rcl node.
    pub fn node(&self) -> *mut sys::rcl_node_t {
        self.node
    }

    /// The rcl context.
    pub fn context(&self) -> *mut sys::rcl_context_t {
        self.context
    }
}

impl Drop for NodeHandle {
    fn drop(&mut self) {
        // SAFETY: every entity of the node holds this handle, so none is left; the node and
        // context were initialised in `new` (a null node: its init failed) and are finalised
        // once, node first. At exit they are left to the process's end.
        exit::teardown(|| unsafe {
            if !self.node.is_null() {
                if self.rosout {
                    logging::fini_rosout(self.node);
                }
                let ret = sys::rcl_node_fini(self.node);
                if ret != ffi::RET_OK {
                    log::warn!("{}", ffi::error(ret, "cannot finalise the node".into()));
                }
                drop(Box::from_raw(self.node));
            }
            let ret = sys::rcl_shutdown(self.context);
            if ret != ffi::RET_OK {
                log::debug!("{}", ffi::error(ret, "rcl_shutdown".into()));
            }
            let ret = sys::rcl_context_fini(self.context);
            if ret != ffi::RET_OK {
                log::debug!("{}", ffi::error(ret, "rcl_context_fini".into()));
            }
            drop(Box::from_raw(self.context));
        });
    }
}

/// Nanoseconds since the epoch, now.
pub(crate) fn now_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// A guard condition of the node's context (wakes the wait thread).
struct GuardCondition {
    handle: *mut sys::rcl_guard_condition_t,
    _node: Arc<NodeHandle>,
}

// SAFETY: triggering a guard condition is thread-safe in rcl; it is finalised only in Drop.
unsafe impl Send for GuardCondition {}
// SAFETY: as above.
unsafe impl Sync for GuardCondition {}

impl GuardCondition {
    fn new(node: Arc<NodeHandle>) -> Result<Self> {
        // SAFETY: zero-initialised, then initialised with the node's live context.
        unsafe {
            let handle = Box::into_raw(Box::new(sys::rcl_get_zero_initialized_guard_condition()));
            let ret = sys::rcl_guard_condition_init(
                handle,
                node.context(),
                sys::rcl_guard_condition_get_default_options(),
            );
            if let Err(e) = check(ret, || "cannot create a guard condition".into()) {
                drop(Box::from_raw(handle));
                return Err(e);
            }
            Ok(Self {
                handle,
                _node: node,
            })
        }
    }

    fn trigger(&self) {
        exit::teardown(|| self.trigger_unguarded());
    }

    /// Triggers without the exit guard (the exit handler's own call).
    fn trigger_unguarded(&self) {
        // SAFETY: initialised in `new`, finalised only in Drop.
        let ret = unsafe { sys::rcl_trigger_guard_condition(self.handle) };
        if ret != ffi::RET_OK {
            log::debug!(
                "{}",
                ffi::error(ret, "cannot trigger a guard condition".into())
            );
        }
    }
}

impl Drop for GuardCondition {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`; the context is still alive (`_node` drops after).
        exit::teardown(|| unsafe {
            let _ = sys::rcl_guard_condition_fini(self.handle);
            drop(Box::from_raw(self.handle));
        });
    }
}

/// What the wait thread waits on.
pub(crate) enum Entity {
    /// A subscription: take its messages.
    Subscription(subscription::Subscription),
    /// A service: answer its requests.
    Service(service::Service),
    /// A client: hand on its responses.
    Client(Arc<client::ClientInner>),
}

/// An entity in the wait set, until its handle is dropped.
pub(crate) struct Registered {
    entity: Entity,
    removed: AtomicBool,
}

/// The node's wait set's side: what the wait thread waits on, and how it is woken.
pub(crate) struct Executor {
    // Field order is drop order: the guard condition before the node's last reference.
    wake: GuardCondition,
    entities: Mutex<Vec<Arc<Registered>>>,
    stop: AtomicBool,
    graph: graph::Graph,
    /// Wakes the graph thread (one pending kick at most); taken when the node goes.
    graph_kick: Mutex<Option<rosbag2_rs_middleware::crossbeam_channel::Sender<()>>>,
    /// The wait thread, once started.
    thread: std::sync::OnceLock<std::thread::ThreadId>,
    /// Rounds of the wait thread finished (each released its snapshot of the entities).
    rounds: Mutex<u64>,
    released: parking_lot::Condvar,
    node: Arc<NodeHandle>,
}

impl Executor {
    /// Adds `entity` to the wait set; it stays until the returned registration is dropped.
    fn register(self: &Arc<Self>, entity: Entity) -> Registration {
        let entry = Arc::new(Registered {
            entity,
            removed: AtomicBool::new(false),
        });
        self.entities.lock().push(entry.clone());
        self.wake.trigger();
        Registration {
            executor: self.clone(),
            entry,
        }
    }

    /// The graph thread: reads the graph again at each kick, until the kicks stop.
    fn watch_graph(self: Arc<Self>, kicks: rosbag2_rs_middleware::crossbeam_channel::Receiver<()>) {
        for () in kicks {
            let Some(_hold) = exit::round() else { return };
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            self.graph.refresh(&self.node);
        }
    }

    /// The wait thread: waits, then serves whatever is ready, until stopped.
    fn run(self: Arc<Self>) {
        let _ = self.thread.set(std::thread::current().id());
        // SAFETY: a zero-initialised wait set, initialised with the node's live context and
        // finalised before the thread ends; the graph guard condition is the node's.
        unsafe {
            let mut ws = sys::rcl_get_zero_initialized_wait_set();
            let ret = sys::rcl_wait_set_init(
                &mut ws,
                0,
                2,
                0,
                0,
                0,
                0,
                self.node.context(),
                ffi::allocator(),
            );
            if let Err(e) = check(ret, || "cannot create the wait set".into()) {
                log::error!("{e}");
                return;
            }
            let graph_guard = sys::rcl_node_get_graph_guard_condition(self.node.node());
            while !self.stop.load(Ordering::Acquire) && !exit::exiting() {
                let go_on = self.round(&mut ws, graph_guard);
                // The round's snapshot is gone: registrations dropped meanwhile may finalise
                // their entities now.
                *self.rounds.lock() += 1;
                self.released.notify_all();
                if !go_on {
                    break;
                }
            }
            exit::teardown(|| sys::rcl_wait_set_fini(&mut ws));
        }
    }

    /// One round: fills the wait set with the entities registered now, waits, serves what is
    /// ready. False when the thread should end.
    ///
    /// # Safety
    /// `ws` is an initialised wait set of the node's context; `graph_guard` is null or the
    /// node's graph guard condition.
    unsafe fn round(
        &self,
        ws: &mut sys::rcl_wait_set_t,
        graph_guard: *const sys::rcl_guard_condition_t,
    ) -> bool {
        let Some(hold) = exit::round() else {
            return false;
        };
        // Keeps every entity in the wait set alive until after rcl_wait returned and what was
        // ready was served (a registration dropped meanwhile waits for the end of the round).
        let snapshot: Vec<Arc<Registered>> = self.entities.lock().clone();
        let count = |f: fn(&Entity) -> bool| snapshot.iter().filter(|e| f(&e.entity)).count();
        let subs = count(|e| matches!(e, Entity::Subscription(_)));
        let services = count(|e| matches!(e, Entity::Service(_)));
        let clients = count(|e| matches!(e, Entity::Client(_)));
        // SAFETY: the wait set is initialised (caller); every pointer added is an initialised
        // entity of the node that `snapshot` keeps alive until the end of this function; the
        // arrays rcl_wait leaves are read within their sizes.
        unsafe {
            let ret = sys::rcl_wait_set_resize(ws, subs, 2, 0, clients, services, 0);
            if let Err(e) = check(ret, || "cannot resize the wait set".into()) {
                log::error!("{e}");
                return false;
            }
            let _ = sys::rcl_wait_set_clear(ws);
            let mut wake_index = 0usize;
            let mut graph_index = usize::MAX;
            let _ = sys::rcl_wait_set_add_guard_condition(ws, self.wake.handle, &mut wake_index);
            if !graph_guard.is_null() {
                let _ = sys::rcl_wait_set_add_guard_condition(ws, graph_guard, &mut graph_index);
            }
            let mut indexes = Vec::with_capacity(snapshot.len());
            for e in &snapshot {
                let mut index = usize::MAX;
                let ret = match &e.entity {
                    Entity::Subscription(s) => {
                        sys::rcl_wait_set_add_subscription(ws, s.handle(), &mut index)
                    }
                    Entity::Service(s) => sys::rcl_wait_set_add_service(ws, s.handle(), &mut index),
                    Entity::Client(c) => sys::rcl_wait_set_add_client(ws, c.handle(), &mut index),
                };
                if ret != ffi::RET_OK {
                    log::warn!(
                        "{}",
                        ffi::error(ret, "cannot add an entity to the wait set".into())
                    );
                    index = usize::MAX;
                }
                indexes.push(index);
            }
            drop(hold);
            let ret = {
                let _in_wait = exit::InWait::enter();
                sys::rcl_wait(ws, WAIT_TIMEOUT_NS)
            };
            let Some(_hold) = exit::round() else {
                return false;
            };
            if ret == ffi::RET_TIMEOUT {
                return true;
            }
            if ret != ffi::RET_OK {
                log::warn!("{}", ffi::error(ret, "rcl_wait failed".into()));
                std::thread::sleep(std::time::Duration::from_millis(50));
                return true;
            }
            if self.stop.load(Ordering::Acquire) {
                return false;
            }
            let ready = |array: *mut *const std::ffi::c_void, size: usize, index: usize| {
                index < size && !array.is_null() && !(*array.add(index)).is_null()
            };
            if graph_index != usize::MAX
                && ready(
                    ws.guard_conditions.cast(),
                    ws.size_of_guard_conditions,
                    graph_index,
                )
            {
                // The graph thread reads the graph (1 + 2 N queries): a storm of nodes joining
                // holds neither the topics nor the services. Kicks coalesce.
                if let Some(kick) = self.graph_kick.lock().as_ref() {
                    let _ = kick.try_send(());
                }
            }
            for (e, &index) in snapshot.iter().zip(&indexes) {
                if index == usize::MAX || e.removed.load(Ordering::Acquire) {
                    continue;
                }
                match &e.entity {
                    Entity::Subscription(s) => {
                        if ready(ws.subscriptions.cast(), ws.size_of_subscriptions, index) {
                            s.take_round(&e.removed);
                        }
                    }
                    Entity::Service(s) => {
                        if ready(ws.services.cast(), ws.size_of_services, index) {
                            s.take_round();
                        }
                    }
                    Entity::Client(c) => {
                        if ready(ws.clients.cast(), ws.size_of_clients, index) {
                            c.take_round();
                        }
                    }
                }
            }
        }
        true
    }
}

/// Keeps an entity in the wait set; dropping it removes the entity (finalised once the wait
/// thread no longer waits on it).
pub(crate) struct Registration {
    executor: Arc<Executor>,
    entry: Arc<Registered>,
}

impl Drop for Registration {
    /// Takes the entity out of the wait set and, off the wait thread, waits (bounded) for the
    /// wait thread's round to let go of it, so that the entity (and whatever its callback holds)
    /// is finalised here and now, not later on the wait thread.
    fn drop(&mut self) {
        self.entry.removed.store(true, Ordering::Release);
        self.executor
            .entities
            .lock()
            .retain(|e| !Arc::ptr_eq(e, &self.entry));
        self.executor.wake.trigger();
        if self.executor.thread.get() == Some(&std::thread::current().id()) || exit::exiting() {
            return;
        }
        let deadline = std::time::Instant::now() + RELEASE_TIMEOUT;
        let mut rounds = self.executor.rounds.lock();
        while Arc::strong_count(&self.entry) > 1 {
            if self
                .executor
                .released
                .wait_until(&mut rounds, deadline)
                .timed_out()
            {
                log::warn!("rcl: the wait thread did not release an entity in time");
                break;
            }
        }
    }
}

/// A node on the ROS 2 graph through rcl.
pub struct RclMiddleware {
    identity: NodeIdentity,
    node: Arc<NodeHandle>,
    executor: Arc<Executor>,
    thread: Option<JoinHandle<()>>,
    types: typesupport::TypeSupports,
    /// Descriptions of types that may not be installed (see
    /// [`Middleware::register_type_description`]).
    descriptions: Mutex<std::collections::HashMap<String, TypeDescription>>,
    /// Messages lost on the way per topic (fully qualified), as the subscriptions count them.
    lost: Mutex<std::collections::HashMap<String, Arc<std::sync::atomic::AtomicU64>>>,
    rmw: String,
}

impl RclMiddleware {
    /// Initialises rcl (a context of its own) and creates node `name` in `namespace`.
    pub fn new(name: &str, namespace: &str) -> Result<Self> {
        let node = Arc::new(NodeHandle::new(&NodeIdentity::new(name, namespace)?)?);
        let identity = node.identity()?;
        let rmw = ffi::rmw()?.identifier.clone();
        let (kick, kicks) = rosbag2_rs_middleware::crossbeam_channel::bounded(1);
        let executor = Arc::new(Executor {
            wake: GuardCondition::new(node.clone())?,
            entities: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            graph: graph::Graph::default(),
            graph_kick: Mutex::new(Some(kick)),
            thread: std::sync::OnceLock::new(),
            rounds: Mutex::new(0),
            released: parking_lot::Condvar::new(),
            node: node.clone(),
        });
        executor.graph.refresh(&node);
        exit::track(Arc::downgrade(&executor));
        let watcher = executor.clone();
        std::thread::Builder::new()
            .name("rcl-graph".into())
            .spawn(move || watcher.watch_graph(kicks))
            .map_err(|source| TransportError::Spawn {
                what: "rcl graph",
                source,
            })?;
        let runner = executor.clone();
        let thread = std::thread::Builder::new()
            .name("rcl-wait".into())
            .spawn(move || runner.run())
            .map_err(|source| TransportError::Spawn {
                what: "rcl wait set",
                source,
            })?;
        log::debug!(
            "rcl node {} on {rmw} ({ROS_DISTRO})",
            identity.fully_qualified_name()
        );
        Ok(Self {
            identity,
            node,
            executor,
            thread: Some(thread),
            types: typesupport::TypeSupports::default(),
            descriptions: Mutex::default(),
            lost: Mutex::default(),
            rmw,
        })
    }

    /// The count of messages lost on `topic` (fully qualified) its subscriptions add to.
    fn lost_counter(&self, topic: &str) -> Arc<std::sync::atomic::AtomicU64> {
        self.lost
            .lock()
            .entry(topic.to_string())
            .or_default()
            .clone()
    }

    /// The rmw rcl runs on (`rmw_get_implementation_identifier`: `rmw_fastrtps_cpp`, ...).
    pub fn rmw_identifier(&self) -> &str {
        &self.rmw
    }

    /// A subscription of a type that is not installed (`missing` says which package), with the
    /// type support rcl builds from the type's registered description, where the rmw takes it.
    fn subscribe_described(
        &self,
        missing: TransportError,
        type_name: &str,
        topic: &str,
        qos: &QosProfile,
        callback: MessageCallback,
    ) -> Result<subscription::Subscription> {
        let Some(description) = self.descriptions.lock().get(type_name).cloned() else {
            return Err(missing);
        };
        #[cfg(rosbag2_rs_rcl_dynamic)]
        let subscribed = match dynamic::unverified(&self.rmw) {
            Some(refused) => Err(refused),
            None => dynamic::message_type(&self.types, type_name, &description).and_then(|ts| {
                subscription::Subscription::new(
                    self.node.clone(),
                    ts,
                    topic,
                    qos,
                    callback,
                    self.lost_counter(topic),
                )
            }),
        };
        #[cfg(not(rosbag2_rs_rcl_dynamic))]
        let subscribed = {
            let _ = (description, topic, qos, callback);
            Err(TransportError::Middleware(format!(
                "the rcl of ROS 2 {ROS_DISTRO} builds no type support at run time"
            )))
        };
        subscribed.map_err(|refused| TransportError::NotInstalled {
            missing: Box::new(missing),
            refused: Box::new(refused),
        })
    }

    /// Every node on the graph: `(namespace, name, enclave)`.
    pub fn node_names(&self) -> Result<Vec<(String, String, String)>> {
        graph::node_names(&self.node)
    }
}

impl Drop for RclMiddleware {
    fn drop(&mut self) {
        self.executor.stop.store(true, Ordering::Release);
        // Ends the graph thread (it holds the executor).
        drop(self.executor.graph_kick.lock().take());
        self.executor.wake.trigger();
        if let Some(thread) = self.thread.take() {
            // The last reference may go on the wait thread itself (a service handler holding
            // the node): it ends on its own after this round.
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
        // Entities whose handles are still held stay valid (they hold the node); the rest go.
        self.executor.entities.lock().clear();
    }
}

impl Middleware for RclMiddleware {
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
        let ts = self.types.message(type_name)?;
        let qos = QosProfile {
            depth: qos.depth.max(min_writer_depth(qos)),
            ..*qos
        };
        Ok(Box::new(publisher::RclPublisher::new(
            self.node.clone(),
            ts,
            &name,
            &qos,
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
        let sub = match self.types.message(type_name) {
            Err(missing @ TransportError::TypeSupportMissing { .. }) => {
                self.subscribe_described(missing, type_name, &name, qos, callback)?
            }
            ts => subscription::Subscription::new(
                self.node.clone(),
                ts?,
                &name,
                qos,
                callback,
                self.lost_counter(&name),
            )?,
        };
        Ok(Handle::new(
            self.executor.register(Entity::Subscription(sub)),
        ))
    }

    fn create_service(
        &self,
        service: &str,
        type_name: &str,
        handler: ServiceHandler,
    ) -> Result<Handle> {
        let name = expand_name(service, &self.identity)?;
        let ts = self.types.service(type_name)?;
        let srv = service::Service::new(self.node.clone(), ts, &name, handler)?;
        Ok(Handle::new(self.executor.register(Entity::Service(srv))))
    }

    fn create_client(&self, service: &str, type_name: &str) -> Result<Box<dyn RawClient>> {
        let name = expand_name(service, &self.identity)?;
        let ts = self.types.service(type_name)?;
        let inner = client::ClientInner::new(self.node.clone(), ts, &name)?;
        Ok(Box::new(client::RclClient::new(&self.executor, inner)))
    }

    fn topics(&self) -> Vec<TopicInfo> {
        match graph::topics(&self.node) {
            Ok(topics) => topics,
            Err(e) => {
                log::warn!("{e}");
                Vec::new()
            }
        }
    }

    fn graph_events(&self) -> Receiver<GraphEvent> {
        let (tx, rx) = rosbag2_rs_middleware::crossbeam_channel::unbounded();
        self.executor.graph.listen(tx);
        rx
    }

    fn register_type_description(&self, type_name: &str, description: &TypeDescription) {
        self.descriptions
            .lock()
            .insert(type_name.to_string(), description.clone());
    }

    fn lost_messages(&self, topic: &str) -> u64 {
        self.lost
            .lock()
            .get(topic)
            .map_or(0, |n| n.load(std::sync::atomic::Ordering::Relaxed))
    }
}
