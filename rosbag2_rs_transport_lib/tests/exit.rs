//! A process's exit waits for its nodes to leave the graph, on every backend: a node counts as
//! on the graph until its participant (session, rcl context) is gone, whichever thread drops its
//! last reference ([`wait_for_nodes_to_leave`], which the binaries call before they exit). One
//! test, backends one after the other: the count is the process's.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use rosbag2_rs_transport_lib::*;

/// `node` is counted until a thread of its own has dropped it.
fn leaves_the_graph_from_another_thread(backend: &str, node: Box<dyn Middleware>) {
    assert!(
        !wait_for_nodes_to_leave(Duration::ZERO),
        "{backend}: a node that is up does not count as on the graph"
    );
    let (go, went) = mpsc::channel::<()>();
    let dropper = std::thread::spawn(move || {
        went.recv().unwrap();
        drop(node);
    });
    go.send(()).unwrap();
    assert!(
        wait_for_nodes_to_leave(Duration::from_secs(60)),
        "{backend}: the node never left the graph"
    );
    dropper.join().unwrap();
}

#[test]
fn every_backend_counts_its_nodes_until_they_have_left_the_graph() {
    common::enter_private_network();
    let config = DdsConfig {
        domain_id: 37,
        range: DiscoveryRange::Localhost,
        ..DdsConfig::default()
    };
    let cyclone = DdsMiddleware::with_config("leaving", "/", config.clone()).unwrap();
    leaves_the_graph_from_another_thread("Cyclone DDS", Box::new(cyclone));
    #[cfg(rosbag2_rs_fastdds)]
    {
        // Fast DDS's shared-memory ports are host-wide: a domain no other test uses.
        let config = FastDdsConfig {
            dds: DdsConfig {
                domain_id: 137,
                ..config.clone()
            }
            .discovery(),
            ..FastDdsConfig::default()
        };
        let fastdds = FastDdsMiddleware::with_config("leaving", "/", config).unwrap();
        leaves_the_graph_from_another_thread("Fast DDS", Box::new(fastdds));
    }
    #[cfg(feature = "zenoh")]
    {
        let _router = common::start_zenoh_router();
        let config = common::zenoh_session_config();
        let zenoh = zenoh::ZenohMiddleware::with_config("leaving", "/", config).unwrap();
        leaves_the_graph_from_another_thread("Zenoh", Box::new(zenoh));
    }
    #[cfg(rosbag2_rs_rcl)]
    leaves_the_graph_from_another_thread(
        "rcl",
        Box::new(RclMiddleware::new("leaving", "/").unwrap()),
    );
}
