//! Serialized samples through Cyclone without decoding: topics of `cyclocut`'s blob sertype,
//! bytes written with `ddsi_serdata_from_ser_iov` + `dds_writecdr`/`dds_forwardcdr`, and samples
//! taken with `dds_takecdr` handed on as [`Bytes`] that borrow Cyclone's buffer (no copy).
//!
//! A sample keeps its 4-byte encapsulation header. Like every Cyclone writer, we pad a payload
//! to a multiple of 4 bytes on the wire and record the pad count in the header's options, so
//! readers see exactly what rmw_cyclonedds would send.

use cyclors::*;
use rosbag2_rs_middleware::Bytes;

use super::dispatcher::TAKES_PER_ROUND;
use super::sys::{c_string, check, Entity};
use rosbag2_rs_middleware::error::{Result, TransportError};

/// Creates a keyless topic of the blob sertype.
pub fn create_topic(participant: dds_entity_t, name: &str, type_name: &str) -> Result<Entity> {
    let c_name = c_string(name)?;
    let c_type = c_string(type_name)?;
    // SAFETY: valid participant and NUL-terminated names; Cyclone copies them.
    let handle = unsafe {
        cdds_create_blob_topic(
            participant,
            c_name.as_ptr() as *mut _,
            c_type.as_ptr() as *mut _,
            true,
        )
    };
    Entity::new(handle, &format!("cannot create DDS topic '{name}'"))
}

/// Writes serialized samples to one writer.
pub struct RawWriter {
    writer: Entity,
    sertype: *const ddsi_sertype,
}

// SAFETY: the sertype pointer is owned by the writer's topic and immutable; Cyclone's write
// calls are thread-safe.
unsafe impl Send for RawWriter {}
// SAFETY: as above.
unsafe impl Sync for RawWriter {}

impl RawWriter {
    /// Wraps a writer of a blob topic.
    pub fn new(writer: Entity) -> Result<Self> {
        let mut sertype: *const ddsi_sertype = std::ptr::null();
        // SAFETY: valid writer handle and out pointer.
        let got = unsafe { dds_get_entity_sertype(writer.handle(), &mut sertype) };
        check(got, "cannot get the writer's type")?;
        Ok(Self { writer, sertype })
    }

    /// The writer entity.
    pub fn entity(&self) -> &Entity {
        &self.writer
    }

    /// Waits until every matched reliable reader acknowledged every sample written so far, or
    /// `timeout`; true when all were.
    pub fn wait_for_acks(&self, timeout: std::time::Duration) -> bool {
        let nanos = i64::try_from(timeout.as_nanos()).unwrap_or(i64::MAX);
        // SAFETY: a valid writer; the call only blocks.
        unsafe { dds_wait_for_acks(self.writer.handle(), nanos) == 0 }
    }

    /// Writes `data` (CDR with its encapsulation header), stamped `send_timestamp` (ns since the
    /// epoch) or now.
    pub fn write(&self, data: &[u8], send_timestamp: Option<i64>) -> Result<()> {
        rosbag2_rs_middleware::check_payload(data)?;
        let pad = (4 - data.len() % 4) % 4;
        let mut header = [data[0], data[1], data[2], data[3]];
        if pad > 0 && header[3] & 3 == 0 {
            header[3] |= pad as u8;
        } else if pad > 0 {
            // The options already claim padding: send as given.
            return self.write_iov(&[data], data.len(), send_timestamp);
        }
        let zeros = [0u8; 3];
        let parts: [&[u8]; 3] = [&header, &data[4..], &zeros[..pad]];
        self.write_iov(&parts, data.len() + pad, send_timestamp)
    }

    fn write_iov(&self, parts: &[&[u8]], size: usize, send_timestamp: Option<i64>) -> Result<()> {
        let iov: Vec<ddsrt_iovec_t> = parts
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| ddsrt_iovec_t {
                iov_base: p.as_ptr() as *mut _,
                iov_len: p.len(),
            })
            .collect();
        // SAFETY: the iovecs describe live slices of `size` bytes in all; the blob sertype
        // copies them. dds_writecdr/dds_forwardcdr take over the serdata reference.
        let ret = unsafe {
            let serdata = ddsi_serdata_from_ser_iov(
                self.sertype,
                ddsi_serdata_kind_SDK_DATA,
                iov.len(),
                iov.as_ptr(),
                size,
            );
            if serdata.is_null() {
                return Err(TransportError::InvalidPayload(
                    "Cyclone refused the sample".into(),
                ));
            }
            match send_timestamp {
                Some(ts) => {
                    (*serdata).statusinfo = 0;
                    (*serdata).timestamp.v = ts;
                    dds_forwardcdr(self.writer.handle(), serdata)
                }
                None => dds_writecdr(self.writer.handle(), serdata),
            }
        };
        check(ret, "write").map(drop)
    }
}

/// A received sample.
pub struct Sample {
    /// CDR bytes with the encapsulation header, borrowing Cyclone's buffer.
    pub data: Bytes,
    /// The writer's source timestamp (ns since the epoch).
    pub source_timestamp: i64,
    /// The local instance handle of the writer.
    pub publication_handle: dds_instance_handle_t,
}

/// Cyclone's buffer of one sample, released when the last [`Bytes`] of it is dropped.
struct SerdataBytes {
    serdata: *mut ddsi_serdata,
    iov: ddsrt_iovec_t,
}

// SAFETY: a serdata is reference counted with atomics and immutable once received.
unsafe impl Send for SerdataBytes {}
// SAFETY: as above.
unsafe impl Sync for SerdataBytes {}

impl AsRef<[u8]> for SerdataBytes {
    fn as_ref(&self) -> &[u8] {
        if self.iov.iov_len == 0 {
            return &[];
        }
        // SAFETY: the iovec points into the serdata we hold a reference to.
        unsafe { std::slice::from_raw_parts(self.iov.iov_base as *const u8, self.iov.iov_len) }
    }
}

impl Drop for SerdataBytes {
    fn drop(&mut self) {
        // SAFETY: releases the reference taken by ddsi_serdata_to_ser_ref.
        unsafe { ddsi_serdata_to_ser_unref(self.serdata, &self.iov) };
    }
}

/// Takes samples from `reader` in batches of up to `batch`, handing each to `handle`, until the
/// reader has none left or [`TAKES_PER_ROUND`] were taken (the dispatcher comes back for the
/// rest).
pub fn take_round(reader: dds_entity_t, batch: usize, mut handle: impl FnMut(Sample)) {
    let mut taken = 0;
    while taken < TAKES_PER_ROUND {
        let samples = take(reader, batch.min(TAKES_PER_ROUND - taken));
        if samples.is_empty() {
            return;
        }
        taken += samples.len();
        samples.into_iter().for_each(&mut handle);
    }
}

/// Takes up to `max` samples from a reader; invalid samples (instance state changes) are
/// skipped.
pub fn take(reader: dds_entity_t, max: usize) -> Vec<Sample> {
    let mut serdata: Vec<*mut ddsi_serdata> = vec![std::ptr::null_mut(); max];
    // SAFETY: dds_sample_info_t is plain data.
    let mut infos: Vec<dds_sample_info_t> = vec![unsafe { std::mem::zeroed() }; max];
    // SAFETY: buffers of `max` entries; every returned serdata reference is released below.
    let n = unsafe {
        dds_takecdr(
            reader,
            serdata.as_mut_ptr(),
            max as u32,
            infos.as_mut_ptr(),
            DDS_ANY_STATE,
        )
    };
    let mut out = Vec::with_capacity(n.max(0) as usize);
    for i in 0..n.max(0) as usize {
        let sd = serdata[i];
        let info = &infos[i];
        if info.valid_data && !sd.is_null() {
            // SAFETY: `sd` is a valid serdata; to_ser_ref takes its own reference.
            unsafe {
                let size = ddsi_serdata_size(sd) as usize;
                let mut iov = ddsrt_iovec_t {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                };
                let held = ddsi_serdata_to_ser_ref(sd, 0, size, &mut iov);
                out.push(Sample {
                    data: Bytes::from_owner(SerdataBytes { serdata: held, iov }),
                    source_timestamp: info.source_timestamp,
                    publication_handle: info.publication_handle,
                });
            }
        }
        if !sd.is_null() {
            // SAFETY: releases the reference dds_takecdr gave us.
            unsafe { ddsi_serdata_unref(sd) };
        }
    }
    out
}
