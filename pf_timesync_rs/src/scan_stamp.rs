//! LaserScan timing from scan data packet headers.
//!
//! `header.stamp` is the ROS time of the scan's first sample: the packet's
//! `timestamp_raw` (time of its first point) converted, minus `first_index`
//! sample periods. `time_increment` is one sample period, `scan_time` one
//! revolution. Unlike the PF driver, which truncates the scan period to whole
//! milliseconds and the sample period to whole nanoseconds, both are exact
//! here; and a scan whose first packet was lost still gets the stamp of its
//! first sample.

use crate::sync::Synchronizer;
use crate::TimeSyncError;
use rosbag2_rs_clock::{Duration, Time};

/// The fields of a scan data packet header that timing needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PacketHeader {
    /// Raw sensor time of the packet's first point.
    pub timestamp_raw: u64,
    /// Scan counter.
    pub scan_number: u16,
    /// Packet counter within the scan (from 1).
    pub packet_number: u16,
    /// Index of the packet's first point within the scan.
    pub first_index: u32,
    /// Points in this packet.
    pub num_points_packet: u32,
    /// Points in the whole scan.
    pub num_points_scan: u32,
    /// Scan frequency in mHz (as sent by the scanner).
    pub scan_frequency_mhz: u32,
    /// Samples per revolution (`samples_per_scan` parameter).
    pub samples_per_scan: u32,
    /// `scan_status` flags; non-zero resets the passive samples.
    pub status_flags: u32,
}

/// Timing of a scan derived from scan frequency and samples per revolution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanTiming {
    /// Duration of one revolution, ns (fractional).
    pub scan_time_ns: f64,
    /// Duration of one sample, ns (fractional).
    pub time_increment_ns: f64,
}

impl ScanTiming {
    /// Timing for `scan_frequency_mhz` (mHz) and `samples_per_scan`.
    pub fn new(scan_frequency_mhz: u32, samples_per_scan: u32) -> Result<Self, TimeSyncError> {
        if scan_frequency_mhz == 0 {
            return Err(TimeSyncError::InvalidPacketHeader("scan frequency is zero"));
        }
        if samples_per_scan == 0 {
            return Err(TimeSyncError::InvalidPacketHeader(
                "samples per scan is zero",
            ));
        }
        let scan_time_ns = 1e12 / f64::from(scan_frequency_mhz);
        Ok(ScanTiming {
            scan_time_ns,
            time_increment_ns: scan_time_ns / f64::from(samples_per_scan),
        })
    }

    /// Samples per second.
    pub fn sample_rate_hz(&self) -> f64 {
        1e9 / self.time_increment_ns
    }

    /// Time to measure `n` samples.
    pub fn samples_duration(&self, n: u32) -> Duration {
        Duration::from_nanos((f64::from(n) * self.time_increment_ns).round() as i64)
    }

    /// `LaserScan.time_increment` in seconds.
    pub fn time_increment_s(&self) -> f32 {
        (self.time_increment_ns * 1e-9) as f32
    }

    /// `LaserScan.scan_time` in seconds.
    pub fn scan_time_s(&self) -> f32 {
        (self.scan_time_ns * 1e-9) as f32
    }
}

/// What a driver puts into a new LaserScan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaserScanTiming {
    /// The scan this belongs to.
    pub scan_number: u16,
    /// `header.stamp`: ROS time of the scan's first sample, `None` while the
    /// estimator cannot answer yet.
    pub stamp: Option<Time>,
    /// `time_increment` (s).
    pub time_increment: f32,
    /// `scan_time` (s).
    pub scan_time: f32,
}

/// The timing of the scan `header` belongs to, converted with `sync`
/// (nothing is fed).
pub fn scan_timing(
    sync: &mut Synchronizer,
    header: &PacketHeader,
) -> Result<LaserScanTiming, TimeSyncError> {
    let timing = ScanTiming::new(header.scan_frequency_mhz, header.samples_per_scan)?;
    let stamp = match sync.to_ros(header.timestamp_raw)? {
        Some(t) => Some(t.checked_sub(timing.samples_duration(header.first_index))?),
        None => None,
    };
    Ok(LaserScanTiming {
        scan_number: header.scan_number,
        stamp,
        time_increment: timing.time_increment_s(),
        scan_time: timing.scan_time_s(),
    })
}

/// Feeds every packet to a [`Synchronizer`] and gives the LaserScan timing
/// when a new scan starts, in the driver's order: status reset, passive
/// sample, then conversion.
#[derive(Debug, Clone, Default)]
pub struct ScanStamper {
    scan_number: Option<u16>,
}

impl ScanStamper {
    /// A stamper that has seen no scan.
    pub fn new() -> Self {
        Self::default()
    }

    /// Handle one packet evaluated at ROS time `evaluated`. Returns the
    /// timing of a new LaserScan when this packet starts a scan.
    pub fn on_packet(
        &mut self,
        sync: &mut Synchronizer,
        header: &PacketHeader,
        evaluated: Time,
    ) -> Result<Option<LaserScanTiming>, TimeSyncError> {
        if header.num_points_packet == 0 {
            return Err(TimeSyncError::InvalidPacketHeader("packet without points"));
        }
        let timing = ScanTiming::new(header.scan_frequency_mhz, header.samples_per_scan)?;
        sync.scan_status(header.status_flags);
        let ros = evaluated.checked_sub(timing.samples_duration(header.num_points_packet))?;
        sync.add_passive(header.timestamp_raw, ros)?;
        if self.scan_number == Some(header.scan_number) {
            return Ok(None);
        }
        self.scan_number = Some(header.scan_number);
        scan_timing(sync, header).map(Some)
    }
}
