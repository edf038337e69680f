//! QoS override files (`--qos-profile-overrides-path`), in rosbag2's format: a YAML mapping from
//! topic name to a profile whose missing fields take rclcpp's defaults.
//!
//! ```yaml
//! /chatter:
//!   reliability: best_effort
//!   durability: volatile
//!   history: keep_last
//!   depth: 5
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use rosbag2_rs_storage::QosProfile;

use rosbag2_rs_middleware::error::{Result, TransportError};

/// Reads an override file: fully qualified topic name → the profile to use instead of the
/// recorded or adapted one.
pub fn load_qos_overrides(path: &Path) -> Result<BTreeMap<String, QosProfile>> {
    let path_buf = || path.to_path_buf();
    let text =
        std::fs::read_to_string(path).map_err(|source| TransportError::QosOverridesFile {
            path: path_buf(),
            source,
        })?;
    rosbag2_rs_storage::qos::parse_overrides(&text).map_err(|source| TransportError::QosOverrides {
        path: path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosbag2_rs_storage::qos::Reliability;

    #[test]
    fn loads_a_file_and_reports_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.yaml");
        std::fs::write(&good, "chatter:\n  reliability: best_effort\n").unwrap();
        let map = load_qos_overrides(&good).unwrap();
        assert_eq!(map["/chatter"].reliability, Reliability::BestEffort);

        let missing = load_qos_overrides(&dir.path().join("missing.yaml")).unwrap_err();
        assert!(missing.to_string().contains("missing.yaml"), "{missing}");
        let bad = dir.path().join("bad.yaml");
        std::fs::write(&bad, "[1, 2").unwrap();
        assert!(load_qos_overrides(&bad).is_err());
        // The parser's error is kept as the source.
        std::fs::write(&bad, "/chatter:\n  reliability: sometimes\n").unwrap();
        let err = load_qos_overrides(&bad).unwrap_err();
        let source = std::error::Error::source(&err).expect("a source");
        assert!(source.is::<rosbag2_rs_storage::qos::QosError>(), "{err}");
        assert!(err.to_string().contains("reliability"), "{err}");
    }
}
