//! The Rust side of the C++ shim (`shim.hpp`): its functions, and owners of its participant,
//! writers and readers that delete them when dropped.

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use rosbag2_rs_dds_common::Guid;
use rosbag2_rs_middleware::error::{Result, TransportError};
use rosbag2_rs_middleware::guard::guarded;
use rosbag2_rs_middleware::on_graph::OnGraph;

/// `fdds_sample_identity`: an RTPS sample identity.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SampleIdentity {
    /// The writer's GUID.
    pub guid: Guid,
    /// The sample's sequence number (`high << 32 | low`).
    pub sequence_number: i64,
}

impl SampleIdentity {
    /// `SequenceNumber_t::unknown()` (high -1, low 0), as Fast DDS leaves it when not set.
    pub const UNKNOWN_SEQUENCE: i64 = -1 << 32;
}

/// `fdds_qos`: an endpoint's policies as numbers.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawQos {
    pub reliable: i32,
    pub transient_local: i32,
    pub keep_all: i32,
    pub depth: i32,
    pub deadline_ns: i64,
    pub lifespan_ns: i64,
    pub liveliness: i32,
    pub lease_ns: i64,
}

/// `fdds_participant_config`.
#[repr(C)]
pub struct RawConfig {
    pub domain_id: u32,
    pub range: i32,
    pub static_peers: *const c_char,
    pub qos_from_xml: i32,
    pub asynchronous: i32,
}

/// `fdds_endpoint_event`.
#[repr(C)]
pub struct RawEndpointEvent {
    pub is_writer: i32,
    pub alive: i32,
    pub guid: Guid,
    pub participant: Guid,
    pub topic: *const c_char,
    pub type_name: *const c_char,
    pub user_data: *const u8,
    pub user_data_len: usize,
    pub qos: RawQos,
}

#[repr(C)]
struct RawParticipant {
    _private: [u8; 0],
}
#[repr(C)]
struct RawWriter {
    _private: [u8; 0],
}
#[repr(C)]
struct RawReader {
    _private: [u8; 0],
}

type EndpointCb = unsafe extern "C" fn(*mut c_void, *const RawEndpointEvent);
type ParticipantGoneCb = unsafe extern "C" fn(*mut c_void, *const u8);
type SampleCb = unsafe extern "C" fn(
    *mut c_void,
    *const u8,
    usize,
    *const SampleIdentity,
    *const SampleIdentity,
    i64,
);

extern "C" {
    fn fdds_last_error() -> *const c_char;
    fn fdds_version() -> *const c_char;
    fn fdds_participant_new(
        config: *const RawConfig,
        user_data: *const c_char,
        on_endpoint: EndpointCb,
        on_participant_gone: ParticipantGoneCb,
        ctx: *mut c_void,
    ) -> *mut RawParticipant;
    fn fdds_participant_delete(p: *mut RawParticipant);
    fn fdds_participant_guid(p: *const RawParticipant, guid: *mut u8);
    fn fdds_writer_new(
        p: *mut RawParticipant,
        topic: *const c_char,
        type_name: *const c_char,
        qos: *const RawQos,
        user_data: *const c_char,
    ) -> *mut RawWriter;
    fn fdds_writer_delete(w: *mut RawWriter);
    fn fdds_writer_guid(w: *const RawWriter, guid: *mut u8);
    fn fdds_writer_write(
        w: *mut RawWriter,
        data: *const u8,
        len: usize,
        related: *const SampleIdentity,
        written: *mut SampleIdentity,
    ) -> i32;
    fn fdds_writer_write_at(w: *mut RawWriter, data: *const u8, len: usize, ts: i64) -> i32;
    fn fdds_writer_matched(w: *const RawWriter) -> i32;
    fn fdds_writer_wait_matched(w: *mut RawWriter, reader: *const u8, timeout_ns: i64) -> i32;
    fn fdds_writer_wait_for_acks(w: *mut RawWriter, timeout_ns: i64) -> i32;
    fn fdds_reader_new(
        p: *mut RawParticipant,
        topic: *const c_char,
        type_name: *const c_char,
        qos: *const RawQos,
        user_data: *const c_char,
        on_sample: SampleCb,
        ctx: *mut c_void,
    ) -> *mut RawReader;
    fn fdds_reader_delete(r: *mut RawReader);
    fn fdds_reader_guid(r: *const RawReader, guid: *mut u8);
    fn fdds_reader_matched(r: *const RawReader) -> i32;
}

fn c_string(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| TransportError::InvalidArgument(format!("'{s}' contains NUL")))
}

/// The version of the Fast DDS the shim was built against (`FASTDDS_VERSION_STR`, e.g. "2.14.5"
/// or "3.2.2").
pub fn version() -> String {
    // SAFETY: the shim returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(fdds_version()) }
        .to_string_lossy()
        .into_owned()
}

/// The shim's last error on this thread, as a middleware error.
fn last_error(what: &str) -> TransportError {
    // SAFETY: the shim returns a valid NUL-terminated thread-local string.
    let detail = unsafe { CStr::from_ptr(fdds_last_error()) }.to_string_lossy();
    TransportError::Middleware(format!("{what}: {detail}"))
}

fn nanos(d: Duration) -> i64 {
    i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
}

/// Receives the participant's discovery events, on a Fast DDS thread.
pub trait DiscoveryListener: Send + Sync {
    /// An endpoint appeared, changed or (`alive` false) went away.
    fn endpoint(&self, event: &RawEndpointEvent);
    /// A participant went away.
    fn participant_gone(&self, guid: Guid);
}

/// Callbacks from the shim that panicked (caught: a panic must not unwind into C++, which
/// aborts the process).
pub static CALLBACK_PANICS: AtomicU64 = AtomicU64::new(0);

unsafe extern "C" fn on_endpoint(ctx: *mut c_void, event: *const RawEndpointEvent) {
    guarded(&CALLBACK_PANICS, "Fast DDS discovery callback", || {
        // SAFETY: ctx is the `Box<Arc<dyn DiscoveryListener>>` the participant owns, alive
        // until the shim stops calling (fdds_participant_delete); event is valid during the
        // call.
        let listener = unsafe { &*(ctx as *const Arc<dyn DiscoveryListener>) };
        // SAFETY: as above.
        listener.endpoint(unsafe { &*event });
    });
}

unsafe extern "C" fn on_participant_gone(ctx: *mut c_void, guid: *const u8) {
    guarded(&CALLBACK_PANICS, "Fast DDS discovery callback", || {
        // SAFETY: as in on_endpoint; guid points to 16 bytes.
        let listener = unsafe { &*(ctx as *const Arc<dyn DiscoveryListener>) };
        let mut out = Guid::default();
        // SAFETY: as above.
        out.copy_from_slice(unsafe { std::slice::from_raw_parts(guid, 16) });
        listener.participant_gone(out);
    });
}

/// The text of a C string from the shim.
///
/// # Safety
/// `s` must be null or a valid NUL-terminated string.
pub unsafe fn text(s: *const c_char) -> String {
    if s.is_null() {
        String::new()
    } else {
        // SAFETY: as the caller promises.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    }
}

/// Participant settings for [`Participant::new`].
pub struct ParticipantConfig<'a> {
    pub domain_id: u32,
    /// 0 off, 1 localhost, 2 subnet, 3 system default.
    pub range: i32,
    pub static_peers: &'a [String],
    pub qos_from_xml: bool,
    pub asynchronous: bool,
}

/// A Fast DDS participant with its publisher and subscriber.
pub struct Participant {
    raw: *mut RawParticipant,
    listener: *mut Arc<dyn DiscoveryListener>,
    /// Dropped after `drop` deleted the participant.
    _on_graph: OnGraph,
}

// SAFETY: Fast DDS entities may be used from any thread.
unsafe impl Send for Participant {}
// SAFETY: as above.
unsafe impl Sync for Participant {}

impl Participant {
    /// Joins the domain; discovery events go to `listener`.
    pub fn new(
        config: &ParticipantConfig<'_>,
        user_data: &str,
        listener: Arc<dyn DiscoveryListener>,
    ) -> Result<Self> {
        let peers = c_string(&config.static_peers.join(";"))?;
        let user_data = c_string(user_data)?;
        let raw_config = RawConfig {
            domain_id: config.domain_id,
            range: config.range,
            static_peers: peers.as_ptr(),
            qos_from_xml: config.qos_from_xml.into(),
            asynchronous: config.asynchronous.into(),
        };
        let listener = Box::into_raw(Box::new(listener));
        // SAFETY: valid config and strings; the listener box lives until after deletion.
        let raw = unsafe {
            fdds_participant_new(
                &raw_config,
                user_data.as_ptr(),
                on_endpoint,
                on_participant_gone,
                listener.cast(),
            )
        };
        if raw.is_null() {
            // SAFETY: the shim did not keep the pointer.
            drop(unsafe { Box::from_raw(listener) });
            return Err(last_error("cannot create the Fast DDS participant"));
        }
        Ok(Self {
            raw,
            listener,
            _on_graph: OnGraph::enter(),
        })
    }

    /// The participant's GUID.
    pub fn guid(&self) -> Guid {
        let mut guid = Guid::default();
        // SAFETY: a live participant and a 16-byte buffer.
        unsafe { fdds_participant_guid(self.raw, guid.as_mut_ptr()) };
        guid
    }

    /// A writer of serialized samples.
    pub fn writer(
        self: &Arc<Self>,
        topic: &str,
        type_name: &str,
        qos: &RawQos,
        user_data: &str,
    ) -> Result<Writer> {
        let (t, ty, ud) = (c_string(topic)?, c_string(type_name)?, c_string(user_data)?);
        // SAFETY: a live participant, valid strings and QoS.
        let raw = unsafe { fdds_writer_new(self.raw, t.as_ptr(), ty.as_ptr(), qos, ud.as_ptr()) };
        if raw.is_null() {
            return Err(last_error(&format!("cannot create a writer on '{topic}'")));
        }
        Ok(Writer {
            raw,
            _participant: self.clone(),
        })
    }

    /// A reader calling `callback` for every sample, on a Fast DDS thread (one call at a time).
    pub fn reader(
        self: &Arc<Self>,
        topic: &str,
        type_name: &str,
        qos: &RawQos,
        user_data: &str,
        callback: SampleCallback,
    ) -> Result<Reader> {
        let (t, ty, ud) = (c_string(topic)?, c_string(type_name)?, c_string(user_data)?);
        let ctx = Box::into_raw(Box::new(callback));
        // SAFETY: a live participant, valid strings and QoS; ctx lives until the reader is
        // deleted.
        let raw = unsafe {
            fdds_reader_new(
                self.raw,
                t.as_ptr(),
                ty.as_ptr(),
                qos,
                ud.as_ptr(),
                on_sample,
                ctx.cast(),
            )
        };
        if raw.is_null() {
            // SAFETY: the shim did not keep ctx.
            drop(unsafe { Box::from_raw(ctx) });
            return Err(last_error(&format!("cannot create a reader on '{topic}'")));
        }
        Ok(Reader {
            raw,
            ctx,
            _participant: self.clone(),
        })
    }
}

impl Drop for Participant {
    fn drop(&mut self) {
        // SAFETY: deleted once; no callback runs after it returns, so the listener can go.
        unsafe {
            fdds_participant_delete(self.raw);
            drop(Box::from_raw(self.listener));
        }
    }
}

/// A writer; it keeps its participant alive.
pub struct Writer {
    raw: *mut RawWriter,
    _participant: Arc<Participant>,
}

// SAFETY: Fast DDS writers may be used from any thread.
unsafe impl Send for Writer {}
// SAFETY: as above.
unsafe impl Sync for Writer {}

impl Writer {
    /// The writer's GUID.
    pub fn guid(&self) -> Guid {
        let mut guid = Guid::default();
        // SAFETY: a live writer and a 16-byte buffer.
        unsafe { fdds_writer_guid(self.raw, guid.as_mut_ptr()) };
        guid
    }

    /// Writes serialized bytes (with their encapsulation header), with a related sample
    /// identity if given; returns the written sample's identity.
    pub fn write(&self, data: &[u8], related: Option<&SampleIdentity>) -> Result<SampleIdentity> {
        let mut written = SampleIdentity::default();
        let related = related.map_or(std::ptr::null(), |r| r as *const SampleIdentity);
        // SAFETY: a live writer, valid buffers.
        let ret = unsafe {
            fdds_writer_write(self.raw, data.as_ptr(), data.len(), related, &mut written)
        };
        if ret != 0 {
            return Err(last_error("cannot write a sample"));
        }
        Ok(written)
    }

    /// Writes serialized bytes with an explicit source timestamp (ns since the epoch).
    pub fn write_at(&self, data: &[u8], timestamp: i64) -> Result<()> {
        // SAFETY: a live writer, a valid buffer.
        let ret = unsafe { fdds_writer_write_at(self.raw, data.as_ptr(), data.len(), timestamp) };
        if ret != 0 {
            return Err(last_error("cannot write a sample"));
        }
        Ok(())
    }

    /// Readers currently matched.
    pub fn matched(&self) -> usize {
        // SAFETY: a live writer.
        usize::try_from(unsafe { fdds_writer_matched(self.raw) }).unwrap_or(0)
    }

    /// Waits until the reader `guid` is matched, up to `timeout`.
    pub fn wait_matched(&self, guid: &Guid, timeout: Duration) -> bool {
        // SAFETY: a live writer and a 16-byte GUID.
        unsafe { fdds_writer_wait_matched(self.raw, guid.as_ptr(), nanos(timeout)) == 1 }
    }

    /// Waits until every matched reliable reader acknowledged every sample, up to `timeout`.
    pub fn wait_for_acks(&self, timeout: Duration) -> bool {
        // SAFETY: a live writer.
        unsafe { fdds_writer_wait_for_acks(self.raw, nanos(timeout)) == 1 }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // SAFETY: deleted once.
        unsafe { fdds_writer_delete(self.raw) };
    }
}

/// A received sample.
pub struct Sample<'a> {
    /// The serialized payload with its encapsulation header.
    pub data: &'a [u8],
    /// Its identity (writer GUID, sequence number).
    pub identity: SampleIdentity,
    /// The identity it relates to (services), all zeros if none.
    pub related: SampleIdentity,
    /// When its writer wrote it, ns since the epoch.
    pub source_timestamp: i64,
}

/// Called for every sample of a reader.
pub type SampleCallback = Box<dyn FnMut(Sample<'_>) + Send>;

unsafe extern "C" fn on_sample(
    ctx: *mut c_void,
    data: *const u8,
    len: usize,
    identity: *const SampleIdentity,
    related: *const SampleIdentity,
    source_timestamp: i64,
) {
    guarded(&CALLBACK_PANICS, "Fast DDS sample callback", || {
        // SAFETY: ctx is the reader's callback box, called one at a time (the shim holds the
        // reader's lock) and alive until the reader is deleted; the pointers are valid for the
        // call.
        let callback = unsafe { &mut *(ctx as *mut SampleCallback) };
        let data = if data.is_null() || len == 0 {
            &[][..]
        } else {
            // SAFETY: as above.
            unsafe { std::slice::from_raw_parts(data, len) }
        };
        // SAFETY: as above.
        let (identity, related) = unsafe { (*identity, *related) };
        callback(Sample {
            data,
            identity,
            related,
            source_timestamp,
        });
    });
}

/// A reader; it keeps its participant alive.
pub struct Reader {
    raw: *mut RawReader,
    ctx: *mut SampleCallback,
    _participant: Arc<Participant>,
}

// SAFETY: Fast DDS readers may be used from any thread; the callback is Send.
unsafe impl Send for Reader {}
// SAFETY: as above.
unsafe impl Sync for Reader {}

impl Reader {
    /// The reader's GUID.
    pub fn guid(&self) -> Guid {
        let mut guid = Guid::default();
        // SAFETY: a live reader and a 16-byte buffer.
        unsafe { fdds_reader_guid(self.raw, guid.as_mut_ptr()) };
        guid
    }

    /// Writers currently matched.
    pub fn matched(&self) -> usize {
        // SAFETY: a live reader.
        usize::try_from(unsafe { fdds_reader_matched(self.raw) }).unwrap_or(0)
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        // SAFETY: deleted once; no callback runs after it returns, so ctx can go.
        unsafe {
            fdds_reader_delete(self.raw);
            drop(Box::from_raw(self.ctx));
        }
    }
}
