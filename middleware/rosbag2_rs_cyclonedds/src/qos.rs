//! QoS between rosbag2's profile (what bags store) and Cyclone DDS policies: the policies both
//! DDS backends set ([`Policies`], as rmw_cyclonedds sets them) through Cyclone's QoS API.

use cyclors::*;
use rosbag2_rs_dds_common::qos::Policies;
use rosbag2_rs_middleware::qos::Liveliness;
use rosbag2_rs_middleware::QosProfile;

use super::sys::Qos;

/// DDS's infinite duration.
const INFINITY: dds_duration_t = i64::MAX;

/// How long a reliable writer may block when its readers lag (Cyclone's flow control), before
/// the sample is reported as not sent. rmw_cyclonedds blocks forever; a bounded wait keeps a
/// stuck reader from hanging the player.
pub const MAX_BLOCKING: dds_duration_t = 10_000_000_000;

/// Cyclone policies for a ROS QoS profile (see [`Policies`]). `min_depth` raises a keep-last
/// depth (writers of volatile topics keep a few samples for repair of slow readers; see
/// [`super::DdsMiddleware`]).
pub fn to_dds(qos: &QosProfile, min_depth: u64) -> Qos {
    let p = Policies::of(qos, min_depth);
    let out = Qos::new();
    let q = out.as_ptr();
    let (history_kind, depth) = match p.keep_all {
        true => (dds_history_kind_DDS_HISTORY_KEEP_ALL, -1),
        false => (dds_history_kind_DDS_HISTORY_KEEP_LAST, p.depth),
    };
    let (reliability, blocking) = match p.reliable {
        false => (dds_reliability_kind_DDS_RELIABILITY_BEST_EFFORT, 0),
        true => (dds_reliability_kind_DDS_RELIABILITY_RELIABLE, MAX_BLOCKING),
    };
    let liveliness = match p.liveliness {
        Liveliness::ManualByTopic => dds_liveliness_kind_DDS_LIVELINESS_MANUAL_BY_TOPIC,
        Liveliness::ManualByNode => dds_liveliness_kind_DDS_LIVELINESS_MANUAL_BY_PARTICIPANT,
        _ => dds_liveliness_kind_DDS_LIVELINESS_AUTOMATIC,
    };
    // Each call below: `q` is the valid QoS object `out` owns, and the setters copy values.
    // SAFETY: as said.
    unsafe { dds_qset_writer_data_lifecycle(q, false) };
    // SAFETY: as above.
    unsafe { dds_qset_history(q, history_kind, depth) };
    // SAFETY: as above.
    unsafe { dds_qset_reliability(q, reliability, blocking) };
    if p.transient_local {
        // SAFETY: as above.
        unsafe { dds_qset_durability(q, dds_durability_kind_DDS_DURABILITY_TRANSIENT_LOCAL) };
        // Cyclone keeps historical data by the durability service's history.
        // SAFETY: as above.
        unsafe { dds_qset_durability_service(q, 0, history_kind, depth, -1, -1, -1) };
    } else {
        // SAFETY: as above.
        unsafe { dds_qset_durability(q, dds_durability_kind_DDS_DURABILITY_VOLATILE) };
    }
    if let Some(period) = p.deadline {
        // SAFETY: as above.
        unsafe { dds_qset_deadline(q, period) };
    }
    if let Some(duration) = p.lifespan {
        // SAFETY: as above.
        unsafe { dds_qset_lifespan(q, duration) };
    }
    // SAFETY: as above.
    unsafe { dds_qset_liveliness(q, liveliness, p.lease.unwrap_or(INFINITY)) };
    out
}

/// A ROS QoS profile for discovered DDS policies (history is not part of discovery).
///
/// # Safety
/// `q` must be null or a valid QoS object.
pub unsafe fn from_dds(q: *const dds_qos_t) -> QosProfile {
    let mut p = Policies::of(&QosProfile::default(), 0);
    if q.is_null() {
        return p.profile();
    }
    let (mut kind, mut ns) = (0, 0);
    if dds_qget_reliability(q, &mut kind, &mut ns) {
        p.reliable = kind != dds_reliability_kind_DDS_RELIABILITY_BEST_EFFORT;
    }
    if dds_qget_durability(q, &mut kind) {
        p.transient_local = kind != dds_durability_kind_DDS_DURABILITY_VOLATILE;
    }
    if dds_qget_deadline(q, &mut ns) {
        p.deadline = Some(ns);
    }
    if dds_qget_lifespan(q, &mut ns) {
        p.lifespan = Some(ns);
    }
    if dds_qget_liveliness(q, &mut kind, &mut ns) {
        p.liveliness = if kind == dds_liveliness_kind_DDS_LIVELINESS_MANUAL_BY_TOPIC {
            Liveliness::ManualByTopic
        } else if kind == dds_liveliness_kind_DDS_LIVELINESS_MANUAL_BY_PARTICIPANT {
            Liveliness::ManualByNode
        } else {
            Liveliness::Automatic
        };
        p.lease = Some(ns);
    }
    p.profile()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosbag2_rs_middleware::qos::{Durability, QosDuration, Reliability};

    #[test]
    fn round_trip_of_the_policies_ros_cares_about() {
        let qos = QosProfile {
            reliability: Reliability::BestEffort,
            durability: Durability::TransientLocal,
            deadline: QosDuration { sec: 1, nsec: 500 },
            liveliness: Liveliness::ManualByTopic,
            liveliness_lease_duration: QosDuration { sec: 2, nsec: 0 },
            ..QosProfile::default()
        };
        let dds = to_dds(&qos, 0);
        // SAFETY: a valid QoS object.
        let back = unsafe { from_dds(dds.as_ptr()) };
        assert_eq!(
            (back.reliability, back.durability, back.liveliness),
            (qos.reliability, qos.durability, qos.liveliness)
        );
        assert_eq!(back.deadline, qos.deadline, "nanoseconds are exact");
        assert_eq!(
            back.liveliness_lease_duration,
            qos.liveliness_lease_duration
        );
        assert_eq!(back.lifespan, QosDuration::INFINITE);
        let default = to_dds(
            &QosProfile::default(),
            rosbag2_rs_middleware::MIN_RELIABLE_WRITER_DEPTH,
        );
        // SAFETY: a valid QoS object.
        unsafe {
            assert_eq!(
                from_dds(default.as_ptr()).reliability,
                Reliability::Reliable
            );
            let (mut kind, mut depth) = (0, 0);
            assert!(dds_qget_history(default.as_ptr(), &mut kind, &mut depth));
            // A reliable volatile writer keeps 64 samples (about 2 s of 30 Hz camera frames),
            // not the profile's 10.
            assert_eq!((kind, depth), (dds_history_kind_DDS_HISTORY_KEEP_LAST, 64));
        }
    }
}
