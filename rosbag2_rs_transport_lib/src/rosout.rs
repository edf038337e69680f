//! A node's log lines on `/rosout`, as every rclcpp and rclpy node publishes them, so that
//! `ros2 topic echo /rosout`, rqt_console and a robot's log collectors see the player's and the
//! recorder's lines. One publisher above the [`Middleware`] trait serves every backend, with
//! rcl's rosout QoS (a late subscriber still gets the lines of the last 10 s).

use rosbag2_rs_interfaces::builtin_interfaces::Time;
use rosbag2_rs_interfaces::rcl_interfaces::msg::Log;
use rosbag2_rs_interfaces::{try_to_cdr, MessageType};
use rosbag2_rs_storage::qos::{Durability, QosDuration};
use rosbag2_rs_storage::QosProfile;

use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::{Middleware, RawPublisher};

/// The topic.
pub const ROSOUT_TOPIC: &str = "/rosout";

/// rcl's `rcl_qos_profile_rosout_default`: keep last 1000, reliable, transient local, each line
/// kept 10 s for late subscribers.
pub fn rosout_qos() -> QosProfile {
    QosProfile {
        depth: 1000,
        durability: Durability::TransientLocal,
        lifespan: QosDuration { sec: 10, nsec: 0 },
        ..QosProfile::default()
    }
}

/// Publishes a node's log lines on `/rosout`; dropping it removes the publisher.
pub struct Rosout {
    publisher: Box<dyn RawPublisher>,
    logger: String,
}

impl std::fmt::Debug for Rosout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rosout")
            .field("logger", &self.logger)
            .finish()
    }
}

/// Where a log line comes from in the source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogOrigin<'a> {
    /// The source file.
    pub file: &'a str,
    /// The module (rclcpp: the function).
    pub module: &'a str,
    /// The line.
    pub line: u32,
}

impl Rosout {
    /// A `/rosout` publisher of `middleware`'s node; its lines carry the node's logger name (its
    /// namespace and name joined by dots, as rcl names a node's logger).
    pub fn new(middleware: &dyn Middleware) -> Result<Self> {
        let node = middleware.node();
        let logger = node
            .namespace
            .split('/')
            .filter(|part| !part.is_empty())
            .chain([node.name.as_str()])
            .collect::<Vec<_>>()
            .join(".");
        Ok(Self {
            publisher: middleware.create_publisher(ROSOUT_TOPIC, Log::TYPE_NAME, &rosout_qos())?,
            logger,
        })
    }

    /// The logger name the lines carry.
    pub fn logger(&self) -> &str {
        &self.logger
    }

    /// Publishes one line logged at `stamp` (ns since the epoch).
    pub fn log(
        &self,
        level: log::Level,
        message: &str,
        origin: LogOrigin<'_>,
        stamp: i64,
    ) -> Result<()> {
        let line = Log {
            stamp: Time::from_nanos(stamp),
            level: match level {
                log::Level::Error => Log::ERROR,
                log::Level::Warn => Log::WARN,
                log::Level::Info => Log::INFO,
                log::Level::Debug | log::Level::Trace => Log::DEBUG,
            },
            name: self.logger.clone(),
            msg: message.to_string(),
            file: origin.file.to_string(),
            function: origin.module.to_string(),
            line: origin.line,
        };
        let bytes = try_to_cdr(&line).map_err(|e| TransportError::codec(Log::TYPE_NAME, e))?;
        self.publisher.publish(&bytes.into())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rosbag2_rs_interfaces::from_cdr;

    use super::*;
    use rosbag2_rs_middleware::inprocess::InProcessBus;

    #[test]
    fn a_late_subscriber_reads_the_lines_with_the_node_logger_name() {
        let bus = InProcessBus::new();
        let node = bus.node("rosbag2_player", "/robot1/bags").unwrap();
        let rosout = Rosout::new(&node).unwrap();
        assert_eq!(rosout.logger(), "robot1.bags.rosbag2_player");
        let origin = LogOrigin {
            file: "src/player/mod.rs",
            module: "rosbag2_rs_transport_lib::player",
            line: 42,
        };
        rosout
            .log(log::Level::Warn, "paused", origin, 1_500_000_000)
            .unwrap();

        let listener = bus.node("rqt_console", "/").unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        let _subscription = listener
            .create_subscription(
                ROSOUT_TOPIC,
                Log::TYPE_NAME,
                &rosout_qos(),
                Box::new(move |m| tx.send(m.data).unwrap()),
            )
            .unwrap();
        let line: Log = from_cdr(&rx.recv_timeout(Duration::from_secs(5)).unwrap()).unwrap();
        assert_eq!(
            line,
            Log {
                stamp: Time {
                    sec: 1,
                    nanosec: 500_000_000
                },
                level: Log::WARN,
                name: "robot1.bags.rosbag2_player".into(),
                msg: "paused".into(),
                file: "src/player/mod.rs".into(),
                function: "rosbag2_rs_transport_lib::player".into(),
                line: 42,
            }
        );
    }
}
