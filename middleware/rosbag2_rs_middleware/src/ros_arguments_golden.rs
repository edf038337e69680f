//! The golden table of ROS command lines (`tests/ros_args_golden.json` at the repository root, what rclpy makes of
//! each), checked against a parser: the native one here, rcl's in rosbag2_rs_rcl (which compiles
//! this file into its tests). Test code only.

use rosbag2_rs_middleware::ros_arguments::{RosArguments, Severity};

/// Parses every case with `parse` (argv, node name) and checks what the case expects.
pub fn check_every_case<E: std::fmt::Debug>(
    parse: impl Fn(&[String], &str) -> Result<RosArguments, E>,
) {
    let golden: serde_json::Value =
        serde_json::from_str(include_str!("../../../tests/ros_args_golden.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases = golden["cases"].as_array().unwrap();
    for case in cases {
        for (name, text) in case
            .get("files")
            .and_then(|f| f.as_object())
            .into_iter()
            .flatten()
        {
            std::fs::write(dir.path().join(name), text.as_str().unwrap()).unwrap();
        }
        let mut argv = vec!["node".to_string()];
        argv.extend(case["args"].as_array().unwrap().iter().map(|a| {
            a.as_str()
                .unwrap()
                .replace("{dir}", &dir.path().display().to_string())
        }));
        let node = case["node"].as_str().unwrap();
        check(case, &parse(&argv, node).unwrap());
    }
    assert!(cases.len() >= 10);
}

/// One case of `tests/ros_args_golden.json`, checked against `parsed`.
fn check(case: &serde_json::Value, parsed: &RosArguments) {
    let expect = &case["expect"];
    let text = |v: &serde_json::Value| v.as_str().unwrap().to_string();
    if let Some(name) = expect.get("name") {
        assert_eq!(parsed.node_name, text(name), "{case}");
    }
    if let Some(ns) = expect.get("namespace") {
        assert_eq!(parsed.namespace, text(ns), "{case}");
    }
    if let Some(params) = expect.get("params").and_then(|p| p.as_object()) {
        let got: std::collections::BTreeMap<String, String> =
            parsed.params.iter().cloned().collect();
        let want: std::collections::BTreeMap<String, String> =
            params.iter().map(|(k, v)| (k.clone(), text(v))).collect();
        assert_eq!(got, want, "{case}");
    }
    for (logger, level) in expect
        .get("levels")
        .and_then(|l| l.as_object())
        .into_iter()
        .flatten()
    {
        let got = parsed.logging.level_of(logger).unwrap_or(Severity::Info);
        assert_eq!(got.name(), text(level), "{logger} in {case}");
    }
    // rcl applies remaps (and the enclave) to its node itself: rclpy's check covers them.
    if !parsed.by_rcl {
        for (from, to) in expect
            .get("remap")
            .and_then(|r| r.as_object())
            .into_iter()
            .flatten()
        {
            assert_eq!(parsed.remapped(from), text(to), "{from} in {case}");
        }
        if let Some(enclave) = expect.get("enclave") {
            assert_eq!(
                parsed.enclave.as_deref(),
                Some(text(enclave).as_str()),
                "{case}"
            );
        }
    }
}
