//! A Pepperl+Fuchs R2000/R2300 laser scanner's clock to ROS time.
//!
//! The scanner stamps its scan data packets with its own clock: raw 64-bit
//! NTP-style 32.32 fixed point, seconds masked to 31 bits
//! ([`sensor_time`]: conversion to and from [`Time`], and
//! [`SensorUnwrapper`] for the wrap of the seconds field, robust to
//! out-of-order samples). Two kinds of observations relate it to ROS time
//! ([`sample`]):
//!
//! - **passive** samples from scan data packets: the sensor time of the
//!   packet's first point and the ROS time of the packet's evaluation minus
//!   the time the scanner took to measure its points. Transport and host
//!   delays make that ROS time late, never early.
//! - **active** samples from HTTP `system_time_raw` requests: the sensor time
//!   was read between the ROS times the request was sent and the answer
//!   arrived — hard bounds.
//!
//! An [`Estimator`] turns samples into a sensor-to-ROS line. Selectable by
//! name ([`EstimatorKind`]):
//!
//! - `pf-mean`, `pf-regression`: the PF driver's `TimeSync` ([`pf`]),
//!   faithfully — 200 samples over `timesync_period`, averaging or linear
//!   regression, at most one sample per `period/200` (100 ms without a
//!   period), requests over 50 ms ignored, reset after a gap over one second,
//!   the same double-precision arithmetic and truncation.
//! - `envelope` ([`envelope`]): delays are one-sided, so the true line lies
//!   under every passive point. The lower convex hull over a sliding window
//!   gives it, up to the minimum delay; late packets, bursts after host
//!   stalls and network hiccups never touch the hull. Skew is bounded by a
//!   physical ppm limit and follows the crystal's drift ([`drift`]).
//! - `bounds` ([`bounds`]): with active samples the true line also lies
//!   above every request time and under every answer time; the estimate is
//!   the middle of that feasible band (maximum-separation line, as TICSync),
//!   which removes most of the passive minimum-delay bias.
//! - `max-separation` ([`bounds`] over the requests alone): TICSync, the
//!   benchmark's reference.
//! - `brackets` ([`brackets`]): robust to a loaded host. The passive floor
//!   gives skew and wander; each request brackets one constant, the true
//!   line's offset from the floor, so brackets from minutes ago still count.
//!   Only the tightest brackets shape the two edges ([`endpoint`] estimates
//!   how far each edge still is from its limit), the bracket window grows
//!   while the edges are loose, the estimate lies at the read position
//!   between the request and answer edges ([`Params::read_position`],
//!   default mid-request), and the result stays inside the hard band.
//!
//! [`Synchronizer`] is what a driver uses: raw times in, [`Time`]s out,
//! resets on non-zero `scan_status`, on parameter changes, on ROS clock
//! jumps ([`Synchronizer::watch_clock`] registers a jump handler on a
//! [`Clock`](rosbag2_rs_clock::Clock), e.g. a [`RosClock`](rosbag2_rs_clock::RosClock)
//! with sim time) and when sensor and ROS time stop advancing alike (a jump
//! of either clock). [`ScanStamper`] turns packet headers into a
//! LaserScan's `header.stamp` (time of the scan's first sample),
//! `time_increment` and `scan_time`.
//!
//! For offline tuning, the `pf-timesync replay` binary runs an estimator
//! over logged samples ([`replay`] describes the protocol), and [`sim`] is a
//! deterministic simulator of scanner, network and host, with [`metrics`]
//! for the accuracy benchmark.
#![forbid(unsafe_code)]

pub mod bounds;
pub mod brackets;
pub mod drift;
pub mod endpoint;
pub mod envelope;
mod error;
pub mod estimator;
pub mod hull;
pub mod metrics;
pub mod pf;
pub mod replay;
pub mod sample;
pub mod scan_stamp;
pub mod selection;
pub mod sensor_time;
pub mod sim;
mod sync;

pub use error::TimeSyncError;
pub use estimator::Estimator;
pub use rosbag2_rs_clock::{Duration, Time};
pub use scan_stamp::{LaserScanTiming, PacketHeader, ScanStamper, ScanTiming};
pub use selection::{EstimatorKind, Params, ESTIMATOR_NAMES};
pub use sensor_time::SensorUnwrapper;
pub use sync::{ResetCounts, Synchronizer};
