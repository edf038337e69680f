//! The two wire formats behind one pair of traits, and the generic walkers that decode and encode
//! a [`Value`] tree by following a type's definition.
//!
//! CDR (XCDR1, as rmw writes it): every primitive is aligned to its size (8 at most) relative to
//! the first byte after the 4-byte encapsulation header; strings are a 4-byte length counting a
//! terminating NUL, then the bytes and the NUL; sequences a 4-byte count; a message with no
//! fields is one byte. ROS 1: little endian, no alignment, strings without NUL.

use super::definition::{ArrayKind, BaseType, Primitive, Registry};
use super::error::Fail;
use super::value::Value;
use crate::limits::ElementBudget;

/// Why a `wchar` field is neither decoded nor encoded: DDS implementations disagree on its
/// size on the wire (2 or 4 bytes).
const WCHAR_UNSUPPORTED: &str = "wchar is not supported";

/// Elements reserved up front for a sequence or array; more grow as they decode.
const MAX_PRESIZED_ELEMENTS: usize = 1 << 16;

/// A source of wire bytes.
pub(crate) trait WireRead<'a> {
    fn pos(&self) -> usize;
    fn remaining(&self) -> usize;
    fn prim(&mut self, p: Primitive) -> Result<Value, Fail>;
    fn len(&mut self) -> Result<usize, Fail>;
    fn string(&mut self) -> Result<&'a [u8], Fail>;
    fn octets(&mut self, n: usize) -> Result<&'a [u8], Fail>;
    /// True when multi-byte numbers are little endian (so runs can be copied as they are).
    fn little_endian(&self) -> bool;
    fn empty_struct(&mut self) -> Result<(), Fail>;
    /// Aligns for a run of `p` (no-op in ROS 1).
    fn align(&mut self, p: Primitive) -> Result<(), Fail>;
    /// Counts `n` elements of no wire size against the message's budget.
    fn spend_empty(&mut self, n: usize) -> Result<(), Fail>;
}

/// A sink of wire bytes.
pub(crate) trait WireWrite {
    fn prim(&mut self, p: Primitive, v: &Value) -> Result<(), Fail>;
    fn len(&mut self, n: usize);
    fn string(&mut self, s: &[u8]);
    fn octets(&mut self, b: &[u8]);
    fn empty_struct(&mut self);
    fn align(&mut self, p: Primitive);
    /// True when multi-byte numbers are little endian.
    fn little_endian(&self) -> bool;
}

/// Reads CDR bytes (without the encapsulation header).
pub(crate) struct CdrRead<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
    pub big_endian: bool,
    /// Elements of no wire size left to this message.
    pub budget: ElementBudget,
}

/// Reads ROS 1 bytes.
pub(crate) struct Ros1Read<'a> {
    pub buf: &'a [u8],
    pub pos: usize,
    /// Elements of no wire size left to this message.
    pub budget: ElementBudget,
}

impl<'a> CdrRead<'a> {
    /// Reads `buf` (after the encapsulation header) with a fresh element budget.
    pub fn new(buf: &'a [u8], big_endian: bool) -> Self {
        Self {
            buf,
            pos: 0,
            big_endian,
            budget: ElementBudget::per_message(),
        }
    }
}

impl<'a> Ros1Read<'a> {
    /// Reads `buf` with a fresh element budget.
    pub fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            budget: ElementBudget::per_message(),
        }
    }
}

/// Counts `n` elements of no wire size against `budget`; the error is located at `pos`.
fn spend(budget: &mut ElementBudget, pos: usize, n: usize) -> Result<(), Fail> {
    budget.spend(n).map_err(|e| Fail::budget(pos, e))
}

fn take<'a>(buf: &'a [u8], pos: &mut usize, n: usize) -> Result<&'a [u8], Fail> {
    let left = buf.len().saturating_sub(*pos);
    if n > left {
        return Err(Fail::new(
            *pos,
            format!("needs {n} bytes, only {left} left (payload too short)"),
        ));
    }
    let s = &buf[*pos..*pos + n];
    *pos += n;
    Ok(s)
}

macro_rules! read_num {
    ($bytes:expr, $t:ty, $be:expr) => {{
        let arr: [u8; std::mem::size_of::<$t>()] = $bytes.try_into().unwrap_or_default();
        if $be {
            <$t>::from_be_bytes(arr)
        } else {
            <$t>::from_le_bytes(arr)
        }
    }};
}

/// The zero value of a primitive.
pub(crate) fn zero(p: Primitive) -> Value {
    decode_prim(p, &[0; 8], false)
}

fn decode_prim(p: Primitive, b: &[u8], be: bool) -> Value {
    match p {
        Primitive::Bool => Value::Bool(b[0] != 0),
        Primitive::Byte | Primitive::Char | Primitive::IdlChar | Primitive::UInt8 => {
            Value::UInt8(b[0])
        }
        Primitive::Int8 => Value::Int8(b[0] as i8),
        Primitive::Int16 => Value::Int16(read_num!(b, i16, be)),
        Primitive::UInt16 | Primitive::WChar => Value::UInt16(read_num!(b, u16, be)),
        Primitive::Int32 => Value::Int32(read_num!(b, i32, be)),
        Primitive::UInt32 => Value::UInt32(read_num!(b, u32, be)),
        Primitive::Int64 => Value::Int64(read_num!(b, i64, be)),
        Primitive::UInt64 => Value::UInt64(read_num!(b, u64, be)),
        Primitive::Float32 => Value::Float32(read_num!(b, f32, be)),
        Primitive::Float64 => Value::Float64(read_num!(b, f64, be)),
        Primitive::Time => Value::Time {
            sec: read_num!(&b[..4], u32, be),
            nsec: read_num!(&b[4..], u32, be),
        },
        Primitive::Duration => Value::Duration {
            sec: read_num!(&b[..4], i32, be),
            nsec: read_num!(&b[4..], i32, be),
        },
    }
}

impl<'a> CdrRead<'a> {
    fn align_to(&mut self, n: usize) -> Result<(), Fail> {
        let pad = (n - self.pos % n) % n;
        take(self.buf, &mut self.pos, pad).map(|_| ())
    }
}

impl<'a> WireRead<'a> for CdrRead<'a> {
    fn pos(&self) -> usize {
        self.pos
    }
    fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }
    fn prim(&mut self, p: Primitive) -> Result<Value, Fail> {
        self.align_to(p.alignment())?;
        let b = take(self.buf, &mut self.pos, p.size())?;
        Ok(decode_prim(p, b, self.big_endian))
    }
    fn len(&mut self) -> Result<usize, Fail> {
        self.align_to(4)?;
        let b = take(self.buf, &mut self.pos, 4)?;
        Ok(read_num!(b, u32, self.big_endian) as usize)
    }
    fn string(&mut self) -> Result<&'a [u8], Fail> {
        let start = self.pos;
        let n = self.len()?;
        if n == 0 {
            return Ok(&[]);
        }
        let b = take(self.buf, &mut self.pos, n)?;
        if b[n - 1] != 0 {
            return Err(Fail::new(start, "string is not NUL-terminated"));
        }
        Ok(&b[..n - 1])
    }
    fn little_endian(&self) -> bool {
        !self.big_endian
    }
    fn octets(&mut self, n: usize) -> Result<&'a [u8], Fail> {
        take(self.buf, &mut self.pos, n)
    }
    fn empty_struct(&mut self) -> Result<(), Fail> {
        take(self.buf, &mut self.pos, 1).map(|_| ())
    }
    fn align(&mut self, p: Primitive) -> Result<(), Fail> {
        self.align_to(p.alignment())
    }
    fn spend_empty(&mut self, n: usize) -> Result<(), Fail> {
        spend(&mut self.budget, self.pos, n)
    }
}

impl<'a> WireRead<'a> for Ros1Read<'a> {
    fn pos(&self) -> usize {
        self.pos
    }
    fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }
    fn prim(&mut self, p: Primitive) -> Result<Value, Fail> {
        let b = take(self.buf, &mut self.pos, p.size())?;
        Ok(decode_prim(p, b, false))
    }
    fn len(&mut self) -> Result<usize, Fail> {
        let b = take(self.buf, &mut self.pos, 4)?;
        Ok(read_num!(b, u32, false) as usize)
    }
    fn string(&mut self) -> Result<&'a [u8], Fail> {
        let n = self.len()?;
        take(self.buf, &mut self.pos, n)
    }
    fn little_endian(&self) -> bool {
        true
    }
    fn octets(&mut self, n: usize) -> Result<&'a [u8], Fail> {
        take(self.buf, &mut self.pos, n)
    }
    fn empty_struct(&mut self) -> Result<(), Fail> {
        Ok(())
    }
    fn align(&mut self, _: Primitive) -> Result<(), Fail> {
        Ok(())
    }
    fn spend_empty(&mut self, n: usize) -> Result<(), Fail> {
        spend(&mut self.budget, self.pos, n)
    }
}

/// Writes CDR (after the encapsulation header, which `buf[..origin]` holds).
pub(crate) struct CdrWrite {
    pub buf: Vec<u8>,
    pub origin: usize,
    pub big_endian: bool,
}

/// Writes ROS 1.
pub(crate) struct Ros1Write {
    pub buf: Vec<u8>,
}

macro_rules! put_num {
    ($buf:expr, $v:expr, $be:expr) => {{
        if $be {
            $buf.extend_from_slice(&$v.to_be_bytes())
        } else {
            $buf.extend_from_slice(&$v.to_le_bytes())
        }
    }};
}

fn encode_prim(buf: &mut Vec<u8>, p: Primitive, v: &Value, be: bool) -> Result<(), Fail> {
    let mismatch = || Fail::new(0, format!("expected {} value, got {}", p.name(), v.kind()));
    match (p, v) {
        (Primitive::Bool, Value::Bool(b)) => buf.push(*b as u8),
        (
            Primitive::Byte | Primitive::Char | Primitive::IdlChar | Primitive::UInt8,
            Value::UInt8(x),
        ) => buf.push(*x),
        (Primitive::Int8, Value::Int8(x)) => buf.push(*x as u8),
        (Primitive::Int16, Value::Int16(x)) => put_num!(buf, x, be),
        (Primitive::UInt16, Value::UInt16(x)) => put_num!(buf, x, be),
        (Primitive::Int32, Value::Int32(x)) => put_num!(buf, x, be),
        (Primitive::UInt32, Value::UInt32(x)) => put_num!(buf, x, be),
        (Primitive::Int64, Value::Int64(x)) => put_num!(buf, x, be),
        (Primitive::UInt64, Value::UInt64(x)) => put_num!(buf, x, be),
        (Primitive::Float32, Value::Float32(x)) => put_num!(buf, x, be),
        (Primitive::Float64, Value::Float64(x)) => put_num!(buf, x, be),
        (Primitive::Time, Value::Time { sec, nsec }) => {
            put_num!(buf, sec, be);
            put_num!(buf, nsec, be)
        }
        (Primitive::Duration, Value::Duration { sec, nsec }) => {
            put_num!(buf, sec, be);
            put_num!(buf, nsec, be)
        }
        _ => return Err(mismatch()),
    }
    Ok(())
}

impl CdrWrite {
    fn align_to(&mut self, n: usize) {
        let pos = self.buf.len() - self.origin;
        let pad = (n - pos % n) % n;
        self.buf.resize(self.buf.len() + pad, 0);
    }
}

impl WireWrite for CdrWrite {
    fn prim(&mut self, p: Primitive, v: &Value) -> Result<(), Fail> {
        self.align_to(p.alignment());
        encode_prim(&mut self.buf, p, v, self.big_endian)
    }
    fn len(&mut self, n: usize) {
        self.align_to(4);
        put_num!(self.buf, n as u32, self.big_endian);
    }
    fn string(&mut self, s: &[u8]) {
        self.len(s.len() + 1);
        self.buf.extend_from_slice(s);
        self.buf.push(0);
    }
    fn octets(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    fn empty_struct(&mut self) {
        self.buf.push(0);
    }
    fn align(&mut self, p: Primitive) {
        self.align_to(p.alignment());
    }
    fn little_endian(&self) -> bool {
        !self.big_endian
    }
}

impl WireWrite for Ros1Write {
    fn prim(&mut self, p: Primitive, v: &Value) -> Result<(), Fail> {
        encode_prim(&mut self.buf, p, v, false)
    }
    fn len(&mut self, n: usize) {
        put_num!(self.buf, n as u32, false);
    }
    fn string(&mut self, s: &[u8]) {
        self.len(s.len());
        self.buf.extend_from_slice(s);
    }
    fn octets(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    fn empty_struct(&mut self) {}
    fn align(&mut self, _: Primitive) {}
    fn little_endian(&self) -> bool {
        true
    }
}

/// Decodes one message of type `t`.
pub(crate) fn decode_struct<'a, R: WireRead<'a>>(
    reg: &Registry,
    t: usize,
    r: &mut R,
) -> Result<Value, Fail> {
    let ty = reg.by_index(t);
    if ty.fields.is_empty() {
        r.empty_struct()?;
        return Ok(Value::Struct(Vec::new()));
    }
    let mut out = Vec::with_capacity(ty.fields.len());
    for f in &ty.fields {
        let v = decode_field(reg, &f.base, f.type_index, f.array, r)
            .map_err(|e| e.within(f.name.as_str()))?;
        out.push(v);
    }
    Ok(Value::Struct(out))
}

fn decode_one<'a, R: WireRead<'a>>(
    reg: &Registry,
    base: &BaseType,
    t: usize,
    r: &mut R,
) -> Result<Value, Fail> {
    match base {
        BaseType::Primitive(Primitive::WChar) => Err(Fail::new(r.pos(), WCHAR_UNSUPPORTED)),
        BaseType::Primitive(p) => r.prim(*p),
        BaseType::String { bound } => {
            let at = r.pos();
            let s = r.string()?.to_vec();
            if bound.is_some_and(|b| s.len() > b) {
                return Err(Fail::new(
                    at,
                    format!(
                        "string of {} bytes exceeds its bound {}",
                        s.len(),
                        bound.unwrap_or(0)
                    ),
                ));
            }
            Ok(Value::String(s))
        }
        BaseType::WString { .. } => Err(Fail::new(r.pos(), "wstring is not supported")),
        BaseType::Message(_) => decode_struct(reg, t, r),
    }
}

fn elem_min_size(reg: &Registry, base: &BaseType, t: usize) -> usize {
    match base {
        BaseType::Primitive(p) => p.size(),
        BaseType::String { .. } | BaseType::WString { .. } => 4,
        BaseType::Message(_) => reg.min_size(t),
    }
}

/// Refuses element counts the remaining bytes cannot hold, and elements of no wire size beyond
/// the message's budget ([`crate::limits::EMPTY_ELEMENTS`]), before anything is allocated.
fn check_count<'a, R: WireRead<'a>>(
    reg: &Registry,
    base: &BaseType,
    t: usize,
    n: usize,
    r: &mut R,
) -> Result<(), Fail> {
    let fits = match elem_min_size(reg, base, t) {
        0 => return r.spend_empty(n),
        min => crate::limits::check_len(n as u64, min, r.remaining() + 8).is_ok(),
    };
    if !fits {
        return Err(Fail::new(
            r.pos(),
            format!(
                "{n} elements cannot fit in the {} bytes left",
                r.remaining()
            ),
        ));
    }
    Ok(())
}

fn decode_field<'a, R: WireRead<'a>>(
    reg: &Registry,
    base: &BaseType,
    t: usize,
    array: ArrayKind,
    r: &mut R,
) -> Result<Value, Fail> {
    let n = match array {
        ArrayKind::Single => return decode_one(reg, base, t, r),
        ArrayKind::Fixed(n) => n,
        ArrayKind::Sequence { bound } => {
            let at = r.pos();
            let n = r.len()?;
            if let Some(b) = bound {
                if n > b {
                    return Err(Fail::new(
                        at,
                        format!("sequence of {n} elements exceeds its bound {b}"),
                    ));
                }
            }
            n
        }
    };
    check_count(reg, base, t, n, r)?;
    if let BaseType::Primitive(p) = base {
        if p.is_octet() {
            return Ok(Value::Bytes(r.octets(n)?.to_vec()));
        }
        if n > 0 {
            r.align(*p)?;
        }
    }
    // A decoded element (a `Value`) is larger than its wire form (one byte for a bool or an
    // int8): reserve a bounded number up front and grow with what actually decodes.
    let mut out = Vec::with_capacity(n.min(MAX_PRESIZED_ELEMENTS));
    for i in 0..n {
        out.push(decode_one(reg, base, t, r).map_err(|e| e.within(format!("[{i}]")))?);
    }
    Ok(Value::Array(out))
}

/// Encodes one message of type `t`.
pub(crate) fn encode_struct<W: WireWrite>(
    reg: &Registry,
    t: usize,
    v: &Value,
    w: &mut W,
) -> Result<(), Fail> {
    let ty = reg.by_index(t);
    let Value::Struct(values) = v else {
        return Err(Fail::new(
            0,
            format!("expected a {} struct, got {}", ty.name, v.kind()),
        ));
    };
    if values.len() != ty.fields.len() {
        return Err(Fail::new(
            0,
            format!(
                "{} has {} fields, the value has {}",
                ty.name,
                ty.fields.len(),
                values.len()
            ),
        ));
    }
    if ty.fields.is_empty() {
        w.empty_struct();
        return Ok(());
    }
    for (f, v) in ty.fields.iter().zip(values) {
        encode_field(reg, &f.base, f.type_index, f.array, v, w)
            .map_err(|e| e.within(f.name.as_str()))?;
    }
    Ok(())
}

fn encode_one<W: WireWrite>(
    reg: &Registry,
    base: &BaseType,
    t: usize,
    v: &Value,
    w: &mut W,
) -> Result<(), Fail> {
    match (base, v) {
        (BaseType::Primitive(Primitive::WChar), _) => Err(Fail::new(0, WCHAR_UNSUPPORTED)),
        (BaseType::Primitive(p), v) => w.prim(*p, v),
        (BaseType::String { bound }, Value::String(s)) => {
            if bound.is_some_and(|b| s.len() > b) {
                return Err(Fail::new(0, "string exceeds its bound"));
            }
            w.string(s);
            Ok(())
        }
        (BaseType::String { .. }, v) => Err(Fail::new(
            0,
            format!("expected string value, got {}", v.kind()),
        )),
        (BaseType::WString { .. }, _) => Err(Fail::new(0, "wstring is not supported")),
        (BaseType::Message(_), v) => encode_struct(reg, t, v, w),
    }
}

fn encode_field<W: WireWrite>(
    reg: &Registry,
    base: &BaseType,
    t: usize,
    array: ArrayKind,
    v: &Value,
    w: &mut W,
) -> Result<(), Fail> {
    let n = match (v, array) {
        (v, ArrayKind::Single) => return encode_one(reg, base, t, v, w),
        (Value::Bytes(b), _) => b.len(),
        (Value::Array(a), _) => a.len(),
        (v, _) => {
            return Err(Fail::new(
                0,
                format!("expected an array value, got {}", v.kind()),
            ))
        }
    };
    match array {
        ArrayKind::Fixed(len) if len != n => {
            return Err(Fail::new(
                0,
                format!("fixed array of {len} elements, value has {n}"),
            ))
        }
        ArrayKind::Sequence { bound: Some(b) } if n > b => {
            return Err(Fail::new(
                0,
                format!("sequence of {n} elements exceeds its bound {b}"),
            ))
        }
        ArrayKind::Sequence { .. } => w.len(n),
        _ => {}
    }
    match (base, v) {
        (BaseType::Primitive(p), Value::Bytes(b)) if p.is_octet() => {
            w.octets(b);
            Ok(())
        }
        (_, Value::Bytes(_)) => Err(Fail::new(0, "byte array given for a non-byte field")),
        (_, Value::Array(items)) => {
            if let (BaseType::Primitive(p), true) = (base, n > 0) {
                w.align(*p);
            }
            for (i, item) in items.iter().enumerate() {
                encode_one(reg, base, t, item, w).map_err(|e| e.within(format!("[{i}]")))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Which way a transcoding walk goes: it decides the fate of the one field only ROS 1 has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// ROS 1 in, CDR out: `std_msgs/Header.seq` is read and dropped.
    Ros1ToCdr,
    /// CDR in, ROS 1 out: `std_msgs/Header.seq` is written as 0.
    CdrToRos1,
}

/// Copies one message of the ROS 1 type `t` from one serialization to the other without building
/// a value tree. ROS 1 `time`/`duration` have the bytes and alignment of
/// `builtin_interfaces/Time`/`Duration` in CDR, so only `Header.seq` needs a rule; runs of
/// numbers are copied in one piece when both sides are little endian.
pub(crate) fn transcode_struct<'a, R: WireRead<'a>, W: WireWrite>(
    reg: &Registry,
    t: usize,
    direction: Direction,
    r: &mut R,
    w: &mut W,
) -> Result<(), Fail> {
    let ty = reg.by_index(t);
    if ty.fields.is_empty() {
        r.empty_struct()?;
        w.empty_struct();
        return Ok(());
    }
    let is_header = ty.name == "std_msgs/Header";
    for (i, f) in ty.fields.iter().enumerate() {
        if is_header && i == 0 {
            match direction {
                Direction::Ros1ToCdr => drop(r.prim(Primitive::UInt32)?),
                Direction::CdrToRos1 => {
                    w.prim(Primitive::UInt32, &Value::UInt32(0))
                        .map_err(|e| Fail {
                            offset: r.pos(),
                            ..e
                        })?
                }
            }
            continue;
        }
        transcode_field(reg, &f.base, f.type_index, f.array, direction, r, w)
            .map_err(|e| e.within(f.name.as_str()))?;
    }
    Ok(())
}

fn transcode_one<'a, R: WireRead<'a>, W: WireWrite>(
    reg: &Registry,
    base: &BaseType,
    t: usize,
    direction: Direction,
    r: &mut R,
    w: &mut W,
) -> Result<(), Fail> {
    match base {
        BaseType::Primitive(Primitive::WChar) => Err(Fail::new(r.pos(), WCHAR_UNSUPPORTED)),
        BaseType::Primitive(p) => {
            let v = r.prim(*p)?;
            w.prim(*p, &v).map_err(|e| Fail {
                offset: r.pos(),
                ..e
            })
        }
        BaseType::String { .. } => {
            w.string(r.string()?);
            Ok(())
        }
        BaseType::WString { .. } => Err(Fail::new(r.pos(), "wstring is not supported")),
        BaseType::Message(_) => transcode_struct(reg, t, direction, r, w),
    }
}

fn transcode_field<'a, R: WireRead<'a>, W: WireWrite>(
    reg: &Registry,
    base: &BaseType,
    t: usize,
    array: ArrayKind,
    direction: Direction,
    r: &mut R,
    w: &mut W,
) -> Result<(), Fail> {
    let n = match array {
        ArrayKind::Single => return transcode_one(reg, base, t, direction, r, w),
        ArrayKind::Fixed(n) => n,
        ArrayKind::Sequence { .. } => {
            let n = r.len()?;
            w.len(n);
            n
        }
    };
    check_count(reg, base, t, n, r)?;
    if let BaseType::Primitive(p) = base {
        if *p == Primitive::WChar && n > 0 {
            return Err(Fail::new(r.pos(), WCHAR_UNSUPPORTED));
        }
        if p.is_octet() || (n > 0 && r.little_endian() && w.little_endian()) {
            if n > 0 {
                r.align(*p)?;
                w.align(*p);
            }
            w.octets(r.octets(n * p.size())?);
            return Ok(());
        }
    }
    for i in 0..n {
        transcode_one(reg, base, t, direction, r, w).map_err(|e| e.within(format!("[{i}]")))?;
    }
    Ok(())
}
