//! Drives a middleware backend from the command line, for interop tests with real peers: the one
//! `RMW_IMPLEMENTATION` selects, configured by the ROS 2 environment variables like every node.
//!
//! ```text
//! dds_probe publish TOPIC TYPE [latched]   # publishes each stdin line (hex CDR) once a reader matches
//! dds_probe echo TOPIC TYPE COUNT [latched|gid] # prints COUNT received messages as hex lines (gid: "<hex> <publisher gid hex or ->")
//! dds_probe serve NODE                      # serves /NODE/set_rate and /NODE/is_paused until stdin closes
//! dds_probe topics TOPIC [node]             # waits for TOPIC (and its node's name), prints "name type reliability durability node typehash" lines
//! dds_probe nodes NAME                      # rcl builds: waits for node NAME, prints "namespace name enclave" lines
//! dds_probe call NODE RATE                  # calls /NODE/set_rate (RATE) and /NODE/is_paused, prints "set_rate SUCCESS" and "paused PAUSED"
//! ```

use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rosbag2_rs_interfaces::rosbag2_interfaces::srv::{
    IsPaused, IsPausedRequest, IsPausedResponse, SetRate, SetRateRequest, SetRateResponse,
};
use rosbag2_rs_storage::qos::Durability;
use rosbag2_rs_storage::QosProfile;
use rosbag2_rs_transport_lib::{create_node, serve, Client};

fn qos(latched: bool) -> QosProfile {
    if latched {
        QosProfile {
            durability: Durability::TransientLocal,
            depth: 1,
            ..QosProfile::default()
        }
    } else {
        QosProfile::default()
    }
}

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(line: &str) -> Vec<u8> {
    (0..line.len() / 2)
        .map(|i| u8::from_str_radix(&line[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    env_logger_lite();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| {
        args.get(i)
            .map(String::as_str)
            .ok_or("missing argument (see the file's documentation)")
    };
    let node = create_node("dds_probe", "/")?;
    let node = &*node;
    match arg(0)? {
        "publish" => {
            let latched = args.get(3).is_some_and(|a| a == "latched");
            let publisher = node.create_publisher(arg(1)?, arg(2)?, &qos(latched))?;
            let deadline = Instant::now() + Duration::from_secs(20);
            while !latched && publisher.subscription_count() == 0 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            std::thread::sleep(Duration::from_millis(500));
            for line in std::io::stdin().lock().lines() {
                publisher.publish(&unhex(line?.trim()).into())?;
            }
            println!("published");
            // Stay up so that reliable retransmissions and late joiners are served.
            std::thread::sleep(Duration::from_secs(if latched { 10 } else { 2 }));
        }
        "echo" => {
            let count: usize = arg(3)?.parse()?;
            let latched = args.get(4).is_some_and(|a| a == "latched");
            let with_gid = args.get(4).is_some_and(|a| a == "gid");
            let (tx, rx) = crossbeam_channel::unbounded();
            let _sub = node.create_subscription(
                arg(1)?,
                arg(2)?,
                &qos(latched),
                Box::new(move |m| drop(tx.send(m))),
            )?;
            println!("ready");
            for _ in 0..count {
                let m: rosbag2_rs_transport_lib::ReceivedMessage =
                    rx.recv_timeout(Duration::from_secs(30))?;
                if with_gid {
                    let gid = m.publisher_gid.map_or("-".into(), |g| hex(&g));
                    println!("{} {gid}", hex(&m.data));
                } else {
                    println!("{}", hex(&m.data));
                }
            }
        }
        "serve" => {
            let name = arg(1)?;
            let paused = Arc::new(AtomicBool::new(false));
            let _set_rate = serve::<SetRate>(node, &format!("/{name}/set_rate"), |req| {
                println!("set_rate {}", req.rate);
                SetRateResponse {
                    success: req.rate > 0.0 && req.rate.is_finite(),
                }
            })?;
            let p = paused.clone();
            let _is_paused = serve::<IsPaused>(node, &format!("/{name}/is_paused"), move |_| {
                IsPausedResponse {
                    paused: p.load(Ordering::Relaxed),
                }
            })?;
            println!("ready");
            for _ in std::io::stdin().lock().lines() {}
        }
        "topics" => {
            let wanted = arg(1)?;
            let with_node = args.get(2).is_some_and(|a| a == "node");
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline
                && !node.topics().iter().any(|t| {
                    t.name == wanted && t.publishers.iter().any(|p| !with_node || p.node.is_some())
                })
            {
                std::thread::sleep(Duration::from_millis(50));
            }
            for topic in node.topics() {
                for p in &topic.publishers {
                    println!(
                        "{} {} {} {} {} {}",
                        topic.name,
                        p.type_name,
                        p.qos.reliability.as_str(),
                        p.qos.durability.as_str(),
                        p.node.as_deref().unwrap_or("-"),
                        p.type_hash.as_deref().unwrap_or("-")
                    );
                }
            }
        }
        #[cfg(rosbag2_rs_rcl)]
        "nodes" => {
            // The graph's node list is rcl's (rcl_get_node_names_with_enclaves): its own node.
            let rcl = rosbag2_rs_transport_lib::RclMiddleware::new("dds_probe_nodes", "/")?;
            let wanted = arg(1)?;
            let deadline = Instant::now() + Duration::from_secs(20);
            let mut nodes = rcl.node_names()?;
            while !nodes.iter().any(|(_, name, _)| name == wanted) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
                nodes = rcl.node_names()?;
            }
            for (namespace, name, enclave) in nodes {
                println!("{namespace} {name} {enclave}");
            }
        }
        "call" => {
            let name = arg(1)?;
            let rate: f64 = arg(2)?.parse()?;
            let timeout = Duration::from_secs(20);
            let set_rate = Client::<SetRate>::new(node, &format!("/{name}/set_rate"))?;
            if !set_rate.wait_for_service(timeout) {
                return Err("set_rate not available".into());
            }
            let reply = set_rate.call(&SetRateRequest { rate }, timeout)?;
            println!("set_rate {}", reply.success);
            let is_paused = Client::<IsPaused>::new(node, &format!("/{name}/is_paused"))?;
            if !is_paused.wait_for_service(timeout) {
                return Err("is_paused not available".into());
            }
            let reply = is_paused.call(&IsPausedRequest::default(), timeout)?;
            println!("paused {}", reply.paused);
        }
        other => return Err(format!("unknown command '{other}'").into()),
    }
    Ok(())
}

/// Warnings to stderr without pulling a logger crate into the library.
fn env_logger_lite() {
    struct Stderr;
    impl log::Log for Stderr {
        fn enabled(&self, m: &log::Metadata) -> bool {
            m.level() <= log::Level::Warn
        }
        fn log(&self, r: &log::Record) {
            if self.enabled(r.metadata()) {
                eprintln!("[{}] {}", r.level(), r.args());
            }
        }
        fn flush(&self) {}
    }
    let _ = log::set_logger(&Stderr).map(|()| log::set_max_level(log::LevelFilter::Warn));
}
