//! Cyclone DDS domains of this process. A domain is created once with its configuration and
//! shared by every node on it; it is deleted when the last node leaves.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use super::config::DdsConfig;
use super::sys::{c_string, check};
use rosbag2_rs_middleware::error::Result;

struct Shared {
    handle: cyclors::dds_entity_t,
    xml: String,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Under the lock, so that a node joining meanwhile waits until the domain is gone.
        let _domains = domains().lock();
        // SAFETY: the domain handle is deleted once, with every entity in it.
        unsafe { cyclors::dds_delete(self.handle) };
    }
}

fn domains() -> &'static Mutex<HashMap<u16, std::sync::Weak<Shared>>> {
    static DOMAINS: OnceLock<Mutex<HashMap<u16, std::sync::Weak<Shared>>>> = OnceLock::new();
    DOMAINS.get_or_init(Default::default)
}

/// A reference to a domain; the domain lives while any reference does.
#[derive(Clone)]
pub struct Domain {
    _shared: Arc<Shared>,
}

impl Domain {
    /// The domain of `config.domain_id`, created with `config`'s settings if this process does
    /// not have it yet. A second node asking for other settings on the same domain gets the first
    /// one's (Cyclone configures a domain once per process), with a warning.
    pub fn join(config: &DdsConfig) -> Result<Self> {
        let xml = config.cyclone_xml();
        let mut domains = domains().lock();
        if let Some(shared) = domains.get(&config.domain_id).and_then(|w| w.upgrade()) {
            if shared.xml != xml {
                log::warn!(
                    "DDS domain {} is already configured in this process; a node asking for other settings shares it",
                    config.domain_id
                );
            }
            return Ok(Self { _shared: shared });
        }
        log::debug!("DDS domain {}: {xml}", config.domain_id);
        let c_xml = c_string(&xml)?;
        // SAFETY: a valid domain id and NUL-terminated configuration.
        let handle = unsafe { cyclors::dds_create_domain(config.domain_id.into(), c_xml.as_ptr()) };
        check(
            handle,
            "cannot create the DDS domain (check CYCLONEDDS_URI)",
        )?;
        let shared = Arc::new(Shared { handle, xml });
        domains.insert(config.domain_id, Arc::downgrade(&shared));
        Ok(Self { _shared: shared })
    }
}
