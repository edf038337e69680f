//! The in-process backend: delivery, QoS matching, latching, services, graph, errors.

use crate::common;

use common::{cdr, collector};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use rosbag2_rs_storage::qos::{Durability, Reliability};
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::InProcessBus;
use rosbag2_rs_transport_lib::*;

fn virtual_bus() -> (InProcessBus, Arc<std::sync::atomic::AtomicI64>) {
    let now = Arc::new(std::sync::atomic::AtomicI64::new(1_000));
    let clock = now.clone();
    (
        InProcessBus::with_clock(Arc::new(move || {
            clock.load(std::sync::atomic::Ordering::Relaxed)
        })),
        now,
    )
}

#[test]
fn bytes_arrive_unchanged_with_virtual_receive_times() {
    let (bus, now) = virtual_bus();
    let a = bus.node("talker", "/").unwrap();
    let b = bus.node("listener", "/ns").unwrap();
    let (got, cb) = collector();
    let _sub = b
        .create_subscription(
            "/chatter",
            "std_msgs/msg/String",
            &QosProfile::default(),
            cb,
        )
        .unwrap();
    let publisher = a
        .create_publisher("chatter", "std_msgs/msg/String", &QosProfile::default())
        .unwrap();
    assert_eq!(publisher.subscription_count(), 1);
    publisher.publish(&cdr(b"hello")).unwrap();
    now.store(2_000, std::sync::atomic::Ordering::Relaxed);
    publisher.publish_at(&cdr(b"world"), 1_500).unwrap();
    let got = got.lock().unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].data, cdr(b"hello"));
    assert_eq!(
        (got[1].recv_timestamp, got[1].send_timestamp),
        (2_000, Some(1_500))
    );
}

#[test]
fn qos_and_type_matching_follow_dds_rules() {
    let bus = InProcessBus::new();
    let node = bus.node("n", "/").unwrap();
    let best_effort = QosProfile {
        reliability: Reliability::BestEffort,
        ..QosProfile::default()
    };
    let latched = QosProfile {
        durability: Durability::TransientLocal,
        depth: 2,
        ..QosProfile::default()
    };
    let (reliable_sub, cb1) = collector();
    let (be_sub, cb2) = collector();
    let (wrong_type, cb3) = collector();
    let _h1 = node
        .create_subscription("/t", "std_msgs/msg/String", &QosProfile::default(), cb1)
        .unwrap();
    let _h2 = node
        .create_subscription("/t", "std_msgs/msg/String", &best_effort, cb2)
        .unwrap();
    let _h3 = node
        .create_subscription("/t", "std_msgs/msg/Int32", &QosProfile::default(), cb3)
        .unwrap();
    let be_pub = node
        .create_publisher("/t", "std_msgs/msg/String", &best_effort)
        .unwrap();
    be_pub.publish(&cdr(b"1")).unwrap();
    assert_eq!(
        reliable_sub.lock().unwrap().len(),
        0,
        "a reliable subscription does not match a best-effort publisher"
    );
    assert_eq!(be_sub.lock().unwrap().len(), 1);
    assert_eq!(wrong_type.lock().unwrap().len(), 0);

    // Latched publisher: a late transient-local subscriber gets the last `depth` messages, a
    // volatile one gets nothing old.
    let latch = node
        .create_publisher("/map", "nav_msgs/msg/OccupancyGrid", &latched)
        .unwrap();
    for i in 0..3u8 {
        latch.publish(&cdr(&[i])).unwrap();
    }
    let (late, cb) = collector();
    let _h4 = node
        .create_subscription("/map", "nav_msgs/msg/OccupancyGrid", &latched, cb)
        .unwrap();
    let late: Vec<_> = late
        .lock()
        .unwrap()
        .iter()
        .map(|m| m.data.clone())
        .collect();
    assert_eq!(late, vec![cdr(&[1]), cdr(&[2])]);
    let (late_volatile, cb) = collector();
    let _h5 = node
        .create_subscription(
            "/map",
            "nav_msgs/msg/OccupancyGrid",
            &QosProfile::default(),
            cb,
        )
        .unwrap();
    assert!(late_volatile.lock().unwrap().is_empty());
}

#[test]
fn dropping_a_handle_unsubscribes() {
    let bus = InProcessBus::new();
    let node = bus.node("n", "/").unwrap();
    let (got, cb) = collector();
    let handle = node
        .create_subscription("/t", "std_msgs/msg/String", &QosProfile::default(), cb)
        .unwrap();
    let publisher = node
        .create_publisher("/t", "std_msgs/msg/String", &QosProfile::default())
        .unwrap();
    publisher.publish(&cdr(b"a")).unwrap();
    drop(handle);
    publisher.publish(&cdr(b"b")).unwrap();
    assert_eq!(got.lock().unwrap().len(), 1);
    assert_eq!(publisher.subscription_count(), 0);
}

#[test]
fn services_resolve_under_the_node_and_refuse_bad_requests() {
    let bus = InProcessBus::new();
    let server = bus.node("rosbag2_player", "/").unwrap();
    let client_node = bus.node("cli", "/").unwrap();
    let _service = server
        .create_service(
            "~/set_rate",
            "rosbag2_interfaces/srv/SetRate",
            Box::new(|_: &RequestId, req: &[u8]| {
                let rate = f64::from_le_bytes(
                    req.get(4..12)
                        .ok_or_else(|| TransportError::InvalidPayload("request too short".into()))?
                        .try_into()
                        .unwrap(),
                );
                Ok([&[0u8, 1, 0, 0][..], &[u8::from(rate > 0.0)]].concat())
            }),
        )
        .unwrap();
    let client = client_node
        .create_client("/rosbag2_player/set_rate", "rosbag2_interfaces/srv/SetRate")
        .unwrap();
    assert!(client.wait_for_service(Duration::ZERO));
    let ok = client
        .call(
            &[&[0u8, 1, 0, 0][..], &2.0f64.to_le_bytes()].concat(),
            Duration::from_secs(1),
        )
        .unwrap();
    assert_eq!(ok, vec![0, 1, 0, 0, 1]);
    let err = client
        .call(&[0, 1, 0, 0, 9], Duration::from_secs(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("request too short"), "{err}");
    let err = client
        .call(&[9, 9], Duration::from_secs(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("encapsulation header"), "{err}");
    // The service keeps serving after bad requests.
    assert!(client
        .call(
            &[&[0u8, 1, 0, 0][..], &1.0f64.to_le_bytes()].concat(),
            Duration::from_secs(1)
        )
        .is_ok());
    let wrong = client_node
        .create_client("/rosbag2_player/set_rate", "rosbag2_interfaces/srv/GetRate")
        .unwrap();
    assert!(wrong
        .call(&[0, 1, 0, 0, 0], Duration::from_secs(1))
        .unwrap_err()
        .to_string()
        .contains("served with type"));
    let missing = client_node
        .create_client("/nobody/here", "rosbag2_interfaces/srv/Pause")
        .unwrap();
    assert!(!missing.wait_for_service(Duration::ZERO));
    assert!(matches!(
        missing.call(&[0, 1, 0, 0, 0], Duration::ZERO),
        Err(TransportError::Timeout(_))
    ));
}

#[test]
fn graph_lists_topics_and_announces_publishers() {
    let bus = InProcessBus::new();
    let node = bus.node("n", "/").unwrap();
    let events = node.graph_events();
    let latched = QosProfile {
        durability: Durability::TransientLocal,
        ..QosProfile::default()
    };
    let _p = node
        .create_publisher("/tf_static", "tf2_msgs/msg/TFMessage", &latched)
        .unwrap();
    let (_, cb) = collector();
    let _s = node
        .create_subscription(
            "/tf_static",
            "tf2_msgs/msg/TFMessage",
            &QosProfile::default(),
            cb,
        )
        .unwrap();
    let topics = node.topics();
    assert_eq!(topics.len(), 1);
    assert_eq!(topics[0].name, "/tf_static");
    assert_eq!(topics[0].type_names(), vec!["tf2_msgs/msg/TFMessage"]);
    assert_eq!(
        topics[0].publishers[0].qos.durability,
        Durability::TransientLocal
    );
    assert_eq!(topics[0].subscriptions.len(), 1);
    assert_eq!(
        events.try_recv().unwrap(),
        GraphEvent::PublisherAppeared {
            topic: "/tf_static".into(),
            type_name: "tf2_msgs/msg/TFMessage".into()
        }
    );
}

#[test]
fn bad_names_types_and_payloads_are_clear_errors() {
    let bus = InProcessBus::new();
    let node = bus.node("n", "/").unwrap();
    let err = node
        .create_publisher("/bad topic", "std_msgs/msg/String", &QosProfile::default())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("invalid name '/bad topic'"), "{err}");
    let err = node
        .create_publisher("/t", "String", &QosProfile::default())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("invalid type name 'String'"), "{err}");
    let publisher = node
        .create_publisher("/t", "std_msgs/msg/String", &QosProfile::default())
        .unwrap();
    assert!(publisher.publish(&Bytes::from_static(b"x")).is_err());
    assert!(bus.node("1bad", "/").is_err());
}

#[test]
fn typed_services_with_rosbag2_interfaces() {
    use rosbag2_rs_interfaces::rosbag2_interfaces::srv::{
        IsPaused, IsPausedRequest, IsPausedResponse, SetRate, SetRateRequest, SetRateResponse,
    };
    let bus = InProcessBus::new();
    let player = bus.node("rosbag2_player", "/").unwrap();
    let rate = Arc::new(Mutex::new(1.0));
    let r = rate.clone();
    let _set = serve::<SetRate>(&player, "~/set_rate", move |req| {
        let ok = req.rate > 0.0 && req.rate.is_finite();
        if ok {
            *r.lock().unwrap() = req.rate;
        }
        SetRateResponse { success: ok }
    })
    .unwrap();
    let _paused = serve::<IsPaused>(&player, "~/is_paused", |_| IsPausedResponse {
        paused: true,
    })
    .unwrap();
    let cli = bus.node("cli", "/").unwrap();
    let set_rate = Client::<SetRate>::new(&cli, "/rosbag2_player/set_rate").unwrap();
    assert!(
        set_rate
            .call(&SetRateRequest { rate: 2.5 }, Duration::from_secs(1))
            .unwrap()
            .success
    );
    assert!(
        !set_rate
            .call(&SetRateRequest { rate: -1.0 }, Duration::from_secs(1))
            .unwrap()
            .success
    );
    assert_eq!(*rate.lock().unwrap(), 2.5);
    let is_paused = Client::<IsPaused>::new(&cli, "/rosbag2_player/is_paused").unwrap();
    assert!(
        is_paused
            .call(&IsPausedRequest::default(), Duration::from_secs(1))
            .unwrap()
            .paused
    );
    // A malformed request is refused with a reason, and the service keeps serving.
    let raw = cli
        .create_client("/rosbag2_player/set_rate", "rosbag2_interfaces/srv/SetRate")
        .unwrap();
    let err = raw
        .call(&[0, 1, 0, 0, 1, 2], Duration::from_secs(1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("malformed rosbag2_interfaces/srv/SetRate request"),
        "{err}"
    );
    assert!(
        set_rate
            .call(&SetRateRequest { rate: 1.0 }, Duration::from_secs(1))
            .unwrap()
            .success
    );
}
