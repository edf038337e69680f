//! Which middleware a node runs on, chosen as ROS 2 chooses its rmw: by `RMW_IMPLEMENTATION`.
//! This is the one place that maps an rmw name to a backend crate; nothing else outside those
//! crates names a vendor.

use std::sync::Arc;

use rosbag2_rs_middleware::{Middleware, Result, TransportError};

/// A ROS 2 middleware implementation, by the name ROS 2 gives its rmw package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rmw {
    /// `rmw_cyclonedds_cpp`: Cyclone DDS.
    CycloneDds,
    /// `rmw_fastrtps_cpp`: Fast DDS, ROS 2's default.
    FastDds,
    /// `rmw_zenoh_cpp`: Zenoh.
    Zenoh,
}

impl Rmw {
    /// Every implementation, in the order ROS 2 documents them.
    pub const ALL: [Rmw; 3] = [Rmw::FastDds, Rmw::CycloneDds, Rmw::Zenoh];

    /// The rmw package name, as `RMW_IMPLEMENTATION` spells it.
    pub const fn rmw_name(self) -> &'static str {
        match self {
            Rmw::CycloneDds => "rmw_cyclonedds_cpp",
            Rmw::FastDds => "rmw_fastrtps_cpp",
            Rmw::Zenoh => "rmw_zenoh_cpp",
        }
    }

    /// The middleware's own name, for messages.
    pub const fn vendor(self) -> &'static str {
        match self {
            Rmw::CycloneDds => "Cyclone DDS",
            Rmw::FastDds => "Fast DDS",
            Rmw::Zenoh => "Zenoh",
        }
    }

    /// The cargo feature that builds this backend.
    pub const fn feature(self) -> &'static str {
        match self {
            Rmw::CycloneDds => "(always built)",
            Rmw::FastDds => "fastdds",
            Rmw::Zenoh => "zenoh",
        }
    }

    /// Whether this build has the backend.
    pub const fn is_built(self) -> bool {
        match self {
            Rmw::CycloneDds => true,
            Rmw::FastDds => cfg!(rosbag2_rs_fastdds),
            Rmw::Zenoh => cfg!(feature = "zenoh"),
        }
    }

    /// What an unset (or empty) `RMW_IMPLEMENTATION` means: ROS 2's default, Fast DDS, where this
    /// build has it, so that a default ROS 2 user's `ros2 service call` and rviz reach us; Cyclone
    /// DDS otherwise.
    pub const fn default_for_build() -> Rmw {
        if Rmw::FastDds.is_built() {
            Rmw::FastDds
        } else {
            Rmw::CycloneDds
        }
    }

    /// The implementation `RMW_IMPLEMENTATION` names (`None` or empty: [`Rmw::default_for_build`]).
    /// An unknown name is an error that lists the known ones.
    pub fn parse(value: Option<&str>) -> Result<Rmw> {
        let value = value.map(str::trim).unwrap_or_default();
        if value.is_empty() {
            return Ok(Rmw::default_for_build());
        }
        Rmw::ALL
            .into_iter()
            .find(|rmw| rmw.rmw_name() == value)
            .ok_or_else(|| {
                let known: Vec<&str> = Rmw::ALL.iter().map(|r| r.rmw_name()).collect();
                TransportError::InvalidArgument(format!(
                    "RMW_IMPLEMENTATION='{value}' is not a middleware rosbag2-rs speaks (known: {})",
                    known.join(", ")
                ))
            })
    }

    /// The implementation the process environment selects.
    pub fn from_env() -> Result<Rmw> {
        Rmw::parse(std::env::var("RMW_IMPLEMENTATION").ok().as_deref())
    }

    /// Creates a node on this middleware, configured from the ROS 2 environment variables.
    pub fn create_node(self, name: &str, namespace: &str) -> Result<Arc<dyn Middleware>> {
        match self {
            Rmw::CycloneDds => Ok(Arc::new(rosbag2_rs_cyclonedds::DdsMiddleware::new(
                name, namespace,
            )?)),
            #[cfg(rosbag2_rs_fastdds)]
            Rmw::FastDds => Ok(Arc::new(rosbag2_rs_fastdds::FastDdsMiddleware::new(
                name, namespace,
            )?)),
            #[cfg(not(rosbag2_rs_fastdds))]
            Rmw::FastDds => Err(self.not_built()),
            #[cfg(feature = "zenoh")]
            Rmw::Zenoh => Ok(Arc::new(rosbag2_rs_zenoh::ZenohMiddleware::new(
                name, namespace,
            )?)),
            #[cfg(not(feature = "zenoh"))]
            Rmw::Zenoh => Err(self.not_built()),
        }
    }

    /// The error for a backend this build lacks.
    #[cfg_attr(all(rosbag2_rs_fastdds, feature = "zenoh"), allow(dead_code))]
    fn not_built(self) -> TransportError {
        TransportError::InvalidArgument(format!(
            "RMW_IMPLEMENTATION={}: this build has no {} backend (cargo feature '{}'{})",
            self.rmw_name(),
            self.vendor(),
            self.feature(),
            match self {
                Rmw::FastDds => ", or a build in a sourced ROS 2 that has Fast DDS",
                _ => "",
            }
        ))
    }
}

impl std::fmt::Display for Rmw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.rmw_name())
    }
}

/// Which layer a node talks through, as `ROSBAG2_RS_MIDDLEWARE` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// rcl and the rmw the sourced ROS 2 selects (builds that found rcl; their default).
    Rcl,
    /// Our own backends, chosen by `RMW_IMPLEMENTATION` ([`Rmw`]); the default of builds without
    /// rcl.
    Native,
}

impl Layer {
    /// Whether this build has the rcl backend (built with a sourced ROS 2).
    pub const RCL_BUILT: bool = cfg!(rosbag2_rs_rcl);

    /// The layer `ROSBAG2_RS_MIDDLEWARE` names (`rcl` or `native`; unset or empty: rcl where
    /// built, native otherwise).
    pub fn parse(value: Option<&str>) -> Result<Layer> {
        match value.map(str::trim).unwrap_or_default() {
            "" if Self::RCL_BUILT => Ok(Layer::Rcl),
            "" | "native" => Ok(Layer::Native),
            "rcl" if Self::RCL_BUILT => Ok(Layer::Rcl),
            "rcl" => Err(TransportError::InvalidArgument(
                "ROSBAG2_RS_MIDDLEWARE=rcl: this build has no rcl backend (build it with a \
                 sourced ROS 2: AMENT_PREFIX_PATH naming rcl)"
                    .into(),
            )),
            other => Err(TransportError::InvalidArgument(format!(
                "ROSBAG2_RS_MIDDLEWARE='{other}': expected 'rcl' or 'native'"
            ))),
        }
    }

    /// The layer the process environment selects.
    pub fn from_env() -> Result<Layer> {
        Layer::parse(std::env::var("ROSBAG2_RS_MIDDLEWARE").ok().as_deref())
    }
}

/// Creates a node on the middleware the environment selects and logs which one it is: rcl in a
/// build that found it (unless `ROSBAG2_RS_MIDDLEWARE=native`), else the backend
/// `RMW_IMPLEMENTATION` selects.
pub fn create_node(name: &str, namespace: &str) -> Result<Arc<dyn Middleware>> {
    #[cfg(rosbag2_rs_rcl)]
    if Layer::from_env()? == Layer::Rcl {
        let node = rosbag2_rs_rcl::RclMiddleware::new(name, namespace)?;
        log::info!(
            "middleware: rcl ({}, {})",
            node.rmw_identifier(),
            rosbag2_rs_rcl::ROS_DISTRO
        );
        return Ok(Arc::new(node));
    }
    #[cfg(not(rosbag2_rs_rcl))]
    Layer::from_env()?;
    refuse_security(std::env::var("ROS_SECURITY_ENABLE").ok().as_deref())?;
    let rmw = Rmw::from_env()?;
    let node = rmw.create_node(name, namespace)?;
    log::info!("middleware: {} ({})", rmw.vendor(), rmw.rmw_name());
    Ok(node)
}

/// The native backends speak no DDS Security or Zenoh TLS: where the user asked for security
/// (`ROS_SECURITY_ENABLE=true`, as rcl reads it), they refuse to start rather than run unsecured.
fn refuse_security(enable: Option<&str>) -> Result<()> {
    if enable == Some("true") {
        return Err(TransportError::SecurityUnsupported);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_backends_refuse_to_run_unsecured() {
        let err = refuse_security(Some("true")).unwrap_err().to_string();
        assert!(err.contains("ROS_SECURITY_ENABLE"), "{err}");
        // rcl enables security for exactly "true".
        for other in [None, Some("false"), Some("TRUE"), Some("")] {
            assert!(refuse_security(other).is_ok(), "{other:?}");
        }
    }

    #[test]
    fn names_select_as_ros2_selects() {
        assert_eq!(
            Rmw::parse(Some("rmw_cyclonedds_cpp")).unwrap(),
            Rmw::CycloneDds
        );
        assert_eq!(Rmw::parse(Some("rmw_fastrtps_cpp")).unwrap(), Rmw::FastDds);
        assert_eq!(Rmw::parse(Some(" rmw_zenoh_cpp ")).unwrap(), Rmw::Zenoh);
        assert_eq!(Rmw::parse(None).unwrap(), Rmw::default_for_build());
        assert_eq!(Rmw::parse(Some("")).unwrap(), Rmw::default_for_build());
        let err = Rmw::parse(Some("rmw_connextdds")).unwrap_err().to_string();
        assert!(
            err.contains("rmw_connextdds") && err.contains("rmw_zenoh_cpp"),
            "{err}"
        );
    }

    #[test]
    fn the_layer_is_rcl_where_built_and_native_on_request() {
        assert_eq!(Layer::parse(Some("native")).unwrap(), Layer::Native);
        let default = if Layer::RCL_BUILT {
            Layer::Rcl
        } else {
            Layer::Native
        };
        assert_eq!(Layer::parse(None).unwrap(), default);
        assert_eq!(Layer::parse(Some(" ")).unwrap(), default);
        assert_eq!(Layer::parse(Some("rcl")).is_ok(), Layer::RCL_BUILT);
        let err = Layer::parse(Some("rmw")).unwrap_err().to_string();
        assert!(err.contains("native"), "{err}");
    }

    #[test]
    fn a_backend_this_build_lacks_is_a_clear_error() {
        for rmw in Rmw::ALL.into_iter().filter(|r| !r.is_built()) {
            let err = rmw.create_node("n", "/").err().unwrap().to_string();
            assert!(err.contains(rmw.feature()), "{err}");
        }
    }
}
