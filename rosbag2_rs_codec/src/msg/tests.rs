use proptest::prelude::*;

use super::definition::{ArrayKind, BaseType, Field, MessageType, Primitive};
use super::transcode::{CdrToRos1, Ros1ToCdr};
use super::*;
use crate::definition_cache::MessageDefinitionCache;

fn ros2_registry(type_name: &str) -> Registry {
    let def = MessageDefinitionCache::with_prefixes(vec![]).definition(type_name);
    let mut reg = Registry::new();
    reg.parse_concatenated(type_name, &def.encoded_message_definition, Dialect::Ros2)
        .unwrap();
    reg
}

#[test]
fn cdr_alignment_is_relative_to_the_end_of_the_header() {
    let mut reg = Registry::new();
    reg.parse_concatenated(
        "p/msg/T",
        "uint8 a\nfloat64 b\nuint16[] c\nstring s\n",
        Dialect::Ros2,
    )
    .unwrap();
    let v = Value::Struct(vec![
        Value::UInt8(7),
        Value::Float64(1.5),
        Value::Array(vec![Value::UInt16(1), Value::UInt16(2)]),
        Value::string("x"),
    ]);
    let le = encode_cdr(&reg, "p/msg/T", &v, CdrHeader::default()).unwrap();
    let mut want = vec![0, 1, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0];
    want.extend_from_slice(&1.5f64.to_le_bytes());
    want.extend_from_slice(&[2, 0, 0, 0, 1, 0, 2, 0]);
    want.extend_from_slice(&[2, 0, 0, 0, b'x', 0]);
    assert_eq!(le, want);
    let be_header = CdrHeader {
        big_endian: true,
        ..Default::default()
    };
    let be = encode_cdr(&reg, "p/msg/T", &v, be_header).unwrap();
    assert_eq!(&be[..4], &[0, 0, 0, 0]);
    assert_eq!(&be[12..20], &1.5f64.to_be_bytes());
    assert_eq!(
        decode_cdr(&reg, "p/T", &be).unwrap(),
        (v.clone(), be_header)
    );
    assert_eq!(decode_cdr(&reg, "p/T", &le).unwrap().0, v);
}

#[test]
fn empty_float64_sequence_is_not_aligned() {
    let mut reg = Registry::new();
    reg.parse_concatenated("p/T", "uint8 a\nfloat64[] b\nuint8 c\n", Dialect::Ros2)
        .unwrap();
    let v = Value::Struct(vec![Value::UInt8(1), Value::Array(vec![]), Value::UInt8(2)]);
    let bytes = encode_cdr(&reg, "p/T", &v, CdrHeader::default()).unwrap();
    assert_eq!(bytes, [0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2]);
}

#[test]
fn imu_round_trips_and_truncation_names_the_field() {
    let reg = ros2_registry("sensor_msgs/msg/Imu");
    let t = reg.index_of("sensor_msgs/Imu").unwrap();
    let imu = reg.by_index(t);
    assert_eq!(imu.fields.len(), 7);
    let stamp = Value::Struct(vec![Value::Int32(5), Value::UInt32(6)]);
    let header = Value::Struct(vec![stamp, Value::string("imu")]);
    let q = Value::Struct((0..4).map(|i| Value::Float64(i as f64)).collect());
    let v3 = Value::Struct((0..3).map(|i| Value::Float64(i as f64)).collect());
    let cov = Value::Array((0..9).map(|i| Value::Float64(i as f64)).collect());
    let v = Value::Struct(vec![
        header,
        q,
        cov.clone(),
        v3.clone(),
        cov.clone(),
        v3,
        cov,
    ]);
    let bytes = encode_cdr_at(&reg, t, &v, CdrHeader::default()).unwrap();
    // Encapsulation, stamp, frame_id (length + "imu\0"), then 8-aligned doubles.
    assert_eq!(bytes.len(), 4 + 8 + 4 + 4 + 32 + 72 + 24 + 72 + 24 + 72);
    assert_eq!(decode_cdr_at(&reg, t, &bytes).unwrap().0, v);
    let err = decode_cdr_at(&reg, t, &bytes[..bytes.len() - 3]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("sensor_msgs/Imu") && text.contains("linear_acceleration_covariance[8]"),
        "{text}"
    );
    let err = decode_cdr_at(&reg, t, &bytes[..18]).unwrap_err();
    assert!(err.to_string().contains("header.frame_id"), "{err}");
}

/// Fuzzing (`definition_payload`, issue 48): ROS 1 fields differing only in case (`Ie`, `ie`)
/// became one ROS 2 field twice once lower-cased, a definition the converter handed on (to a
/// converted bag) that no ROS 2 parser reads. Refused, naming both fields; a lone upper-case
/// field still converts.
#[test]
fn ros1_fields_differing_in_case_are_unmappable() {
    let err = Ros1ToCdr::new("fuzz_msgs/Top", "uint8 Ie\nuint64 ie\n").unwrap_err();
    assert!(
        matches!(&err, CodecError::Unmappable { reason, .. }
            if reason.contains("'Ie'") && reason.contains("'ie'")),
        "{err}"
    );
    let to2 = Ros1ToCdr::new("fuzz_msgs/Top", "uint8 Ie\nuint64 x\n").unwrap();
    let mut reg = Registry::new();
    reg.parse_concatenated(&to2.ros2_type, &to2.ros2_definition, Dialect::Ros2)
        .unwrap();
}

/// Fuzzing (`definition_payload`, issue 48): a ROS 1 definition with a bound (`string<=5`,
/// `int32[<=3]`) parsed, became the bounded ROS 2 type, and the converter wrote an 8-byte
/// string into it: CDR that does not decode against the definition it gave. ROS 1 has no
/// bounds: refused as genmsg refuses them.
#[test]
fn ros1_definitions_with_bounds_are_refused() {
    for text in ["string<=5 bs\n", "int32[<=3] v\n", "string<=2[] v\n"] {
        let err = Ros1ToCdr::new("fuzz_msgs/Top", text).unwrap_err();
        assert!(
            err.to_string().contains("ROS 1 types take no '<=' bound"),
            "{text}: {err}"
        );
        let mut reg = Registry::new();
        assert!(reg
            .parse_concatenated("fuzz_msgs/Top", text, Dialect::Ros1)
            .is_err());
    }
    // A ROS 2 definition keeps them; its ROS 1 text has none.
    let back = CdrToRos1::new("fuzz_msgs/msg/Top", "string<=5 bs\nint32[<=3] v\n").unwrap();
    assert_eq!(back.ros1_definition, "string bs\nint32[] v\n");
}

/// Fuzzing (`definition_payload`, issue 48): a ROS 2 string constant whose value is empty
/// (`string d=''`) became the ROS 1 constant `string d=`, which genmsg reads (a ROS 1 string
/// constant is the rest of its line) but our ROS 1 parser refused: the definition the
/// converter gave did not parse. It parses now, and maps back to a quoted ROS 2 constant.
#[test]
fn empty_string_constants_convert_both_ways() {
    let to1 = CdrToRos1::new("fuzz_msgs/msg/Top", "string d=''\nint32 x\n").unwrap();
    assert_eq!(to1.ros1_definition, "string d=\nint32 x\n");
    let mut reg = Registry::new();
    reg.parse_concatenated(&to1.ros1_type, &to1.ros1_definition, Dialect::Ros1)
        .unwrap();
    let to2 = Ros1ToCdr::new("fuzz_msgs/Top", &to1.ros1_definition).unwrap();
    let mut reg = Registry::new();
    reg.parse_concatenated(&to2.ros2_type, &to2.ros2_definition, Dialect::Ros2)
        .unwrap();
    // A ROS 1 string constant holding a `#` (a comment in ROS 2) is quoted for ROS 2: found
    // by the run after that.
    let to2 = Ros1ToCdr::new("fuzz_msgs/Top", "string H=#\nstring E=a # b\n").unwrap();
    assert_eq!(to2.ros2_definition, "string H=\"#\"\nstring E=\"a # b\"\n");
    let mut reg = Registry::new();
    reg.parse_concatenated(&to2.ros2_type, &to2.ros2_definition, Dialect::Ros2)
        .unwrap();
    // Only string constants may be empty (a wstring one, which ROS 1 lacks, became an empty
    // ROS 2 constant: found by the next run).
    // A wstring constant of a value (`#`, a comment in ROS 2: found by the final run) is
    // unmappable, as wstring fields are.
    let err = Ros1ToCdr::new("fuzz_msgs/Top", "wstring W=#\n").unwrap_err();
    assert!(err.to_string().contains("wstring"), "{err}");
    for text in ["int32 N=\n", "wstring W=\n"] {
        let mut reg = Registry::new();
        assert!(reg
            .parse_concatenated("fuzz_msgs/Top", text, Dialect::Ros1)
            .is_err());
        assert!(Ros1ToCdr::new("fuzz_msgs/Top", text).is_err(), "{text}");
    }
}

#[test]
fn ros1_header_maps_to_ros2_and_back() {
    let def = "Header header\nduration d\n================================================================================\n\
               MSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";
    let to2 = Ros1ToCdr::new("p/T", def).unwrap();
    assert_eq!(to2.ros2_type, "p/msg/T");
    assert!(
        to2.ros2_definition.contains("MSG: builtin_interfaces/Time"),
        "{}",
        to2.ros2_definition
    );
    let mut ros1 = Vec::new();
    ros1.extend_from_slice(&9u32.to_le_bytes()); // seq
    ros1.extend_from_slice(&1u32.to_le_bytes());
    ros1.extend_from_slice(&2u32.to_le_bytes());
    ros1.extend_from_slice(&1u32.to_le_bytes());
    ros1.push(b'f');
    ros1.extend_from_slice(&(-3i32).to_le_bytes());
    ros1.extend_from_slice(&4i32.to_le_bytes());
    let cdr = to2.convert(&ros1).unwrap();
    let mut want = vec![0, 1, 0, 0];
    want.extend_from_slice(&1i32.to_le_bytes());
    want.extend_from_slice(&2u32.to_le_bytes());
    want.extend_from_slice(&[2, 0, 0, 0, b'f', 0, 0, 0]);
    want.extend_from_slice(&(-3i32).to_le_bytes());
    want.extend_from_slice(&4u32.to_le_bytes());
    assert_eq!(cdr, want);
    let back = CdrToRos1::new("p/msg/T", &to2.ros2_definition).unwrap();
    assert_eq!(back.ros1_type, "p/T");
    let mut expected = ros1.clone();
    expected[..4].copy_from_slice(&0u32.to_le_bytes()); // seq is lost
    assert_eq!(back.convert(&cdr).unwrap(), expected);
    assert!(back
        .ros1_definition
        .starts_with("Header header\nduration d\n"));
}

#[test]
fn ros2_to_ros1_md5_matches_noetic_for_common_types() {
    // md5sums of ROS 1 Noetic types whose ROS 2 definitions differ only in the header.
    for (ty, md5) in [
        ("std_msgs/msg/String", "992ce8a1687cec8c8bd883ec73ca41d1"),
        (
            "geometry_msgs/msg/PoseStamped",
            "d3812c3cbc69362b77dc0b19b345f8f5",
        ),
        ("sensor_msgs/msg/Imu", "6a62c6daae103f4ff57a132d6f95cec2"),
        ("sensor_msgs/msg/Image", "060021388200f6f0f447d0fcd9c64743"),
        (
            "sensor_msgs/msg/PointCloud2",
            "1158d486dd51d683ce2f1be655c3c181",
        ),
        ("tf2_msgs/msg/TFMessage", "94810edda583a504dfda3829e70d7eec"),
    ] {
        let reg = ros2_registry(ty);
        let c = CdrToRos1::from_registry(reg, ty).unwrap();
        assert_eq!(c.md5sum, md5, "{ty}");
    }
}

#[test]
fn wstring_is_unmappable() {
    let e = CdrToRos1::new("p/msg/W", "wstring w\n").unwrap_err();
    assert!(matches!(e, CodecError::Unmappable { .. }), "{e}");
}

#[test]
fn bounds_are_enforced() {
    let mut reg = Registry::new();
    reg.parse_concatenated("p/T", "string<=2 s\nint8[<=1] v\n", Dialect::Ros2)
        .unwrap();
    let bad = [0, 1, 0, 0, 4, 0, 0, 0, b'a', b'b', b'c', 0, 0, 0, 0, 0];
    assert!(decode_cdr(&reg, "p/T", &bad)
        .unwrap_err()
        .to_string()
        .contains("field 's'"));
    let v = Value::Struct(vec![
        Value::string("ab"),
        Value::Array(vec![Value::Int8(1), Value::Int8(2)]),
    ]);
    assert!(encode_cdr(&reg, "p/T", &v, CdrHeader::default()).is_err());
}

#[test]
fn render_yaml_and_json() {
    let mut reg = Registry::new();
    reg.parse_concatenated(
        "p/T",
        "string s\nint32[] v\nuint8[] big\nInner[] inner\n===\nMSG: p/Inner\nfloat32 x\n",
        Dialect::Ros2,
    )
    .unwrap();
    let v = Value::Struct(vec![
        Value::string("hi there"),
        Value::Array(vec![Value::Int32(1), Value::Int32(-2)]),
        Value::Bytes(vec![0; 100]),
        Value::Array(vec![Value::Struct(vec![Value::Float32(0.1)])]),
    ]);
    let t = reg.index_of("p/T").unwrap();
    let yaml = render::to_yaml(&reg, t, &v, Default::default());
    assert_eq!(
        yaml,
        "s: \"hi there\"\nv:\n- 1\n- -2\nbig: \"<100 × uint8: 0, 0, 0, 0, 0, 0, 0, 0 ...>\"\ninner:\n- x: 0.1\n"
    );
    let json = render::to_json(
        &reg,
        t,
        &v,
        render::RenderOptions {
            full: true,
            max_array: 0,
        },
    );
    assert!(
        json.starts_with("{\"s\":\"hi there\",\"v\":[1,-2],\"big\":[0,0,"),
        "{json}"
    );
    assert!(json.ends_with("\"inner\":[{\"x\":0.1}]}"), "{json}");
}

// ---- property tests -------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const PRIMS: &[Primitive] = &[
    Primitive::Bool,
    Primitive::Byte,
    Primitive::Char,
    Primitive::Int8,
    Primitive::UInt8,
    Primitive::Int16,
    Primitive::UInt16,
    Primitive::Int32,
    Primitive::UInt32,
    Primitive::Int64,
    Primitive::UInt64,
    Primitive::Float32,
    Primitive::Float64,
];

/// A random registry of up to four types, each nesting only earlier ones; the last is the root.
fn random_registry(rng: &mut Rng, ros1: bool) -> Registry {
    let mut reg = Registry::new();
    let n = 1 + rng.below(4) as usize;
    for t in 0..n {
        let mut fields = Vec::new();
        for f in 0..rng.below(6) {
            let base = match rng.below(5) {
                0 if t > 0 => BaseType::Message(format!("p/T{}", rng.below(t as u64))),
                1 => BaseType::String {
                    bound: (!ros1 && rng.below(2) == 0).then(|| 1 + rng.below(8) as usize),
                },
                2 if ros1 => BaseType::Primitive(if rng.below(2) == 0 {
                    Primitive::Time
                } else {
                    Primitive::Duration
                }),
                _ => BaseType::Primitive(PRIMS[rng.below(PRIMS.len() as u64) as usize]),
            };
            let array = match rng.below(4) {
                0 => ArrayKind::Fixed(rng.below(4) as usize),
                1 => ArrayKind::Sequence { bound: None },
                2 if !ros1 => ArrayKind::Sequence {
                    bound: Some(rng.below(5) as usize),
                },
                _ => ArrayKind::Single,
            };
            fields.push(Field {
                name: format!("f{f}"),
                base,
                array,
                default: None,
                type_index: usize::MAX,
            });
        }
        reg.insert(MessageType {
            name: format!("p/T{t}"),
            fields,
            constants: vec![],
        });
    }
    reg.link().unwrap();
    reg
}

fn random_prim(rng: &mut Rng, p: Primitive) -> Value {
    let x = rng.next();
    match p {
        Primitive::Bool => Value::Bool(x & 1 == 1),
        Primitive::Byte | Primitive::Char | Primitive::IdlChar | Primitive::UInt8 => {
            Value::UInt8(x as u8)
        }
        Primitive::Int8 => Value::Int8(x as i8),
        Primitive::Int16 => Value::Int16(x as i16),
        Primitive::UInt16 | Primitive::WChar => Value::UInt16(x as u16),
        Primitive::Int32 => Value::Int32(x as i32),
        Primitive::UInt32 => Value::UInt32(x as u32),
        Primitive::Int64 => Value::Int64(x as i64),
        Primitive::UInt64 => Value::UInt64(x),
        Primitive::Float32 => Value::Float32(f32::from_bits(x as u32)),
        Primitive::Float64 => Value::Float64(f64::from_bits(x)),
        Primitive::Time => Value::Time {
            sec: x as u32,
            nsec: (x >> 32) as u32,
        },
        Primitive::Duration => Value::Duration {
            sec: x as i32,
            nsec: (x >> 32) as i32,
        },
    }
}

fn random_one(rng: &mut Rng, reg: &Registry, base: &BaseType, t: usize) -> Value {
    match base {
        BaseType::Primitive(p) => random_prim(rng, *p),
        BaseType::String { bound } => {
            let len = rng.below(bound.map_or(10, |b| b as u64 + 1)) as usize;
            Value::String((0..len).map(|_| b'a' + rng.below(26) as u8).collect())
        }
        BaseType::WString { .. } => unreachable!(),
        BaseType::Message(_) => random_value(rng, reg, t),
    }
}

fn random_value(rng: &mut Rng, reg: &Registry, t: usize) -> Value {
    let ty = reg.by_index(t).clone();
    Value::Struct(
        ty.fields
            .iter()
            .map(|f| {
                let n = match f.array {
                    ArrayKind::Single => return random_one(rng, reg, &f.base, f.type_index),
                    ArrayKind::Fixed(n) => n,
                    ArrayKind::Sequence { bound } => {
                        rng.below(bound.map_or(5, |b| b as u64 + 1)) as usize
                    }
                };
                match f.base {
                    BaseType::Primitive(p) if p.is_octet() => {
                        Value::Bytes((0..n).map(|_| rng.next() as u8).collect())
                    }
                    _ => Value::Array(
                        (0..n)
                            .map(|_| random_one(rng, reg, &f.base, f.type_index))
                            .collect(),
                    ),
                }
            })
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn random_definitions_and_values_round_trip(seed in 1u64.., big_endian: bool, padding in 0u8..4) {
        for ros1 in [false, true] {
            let mut rng = Rng(seed);
            let reg = random_registry(&mut rng, ros1);
            let root = reg.types().len() - 1;
            // The definition text parses back to the same types.
            let dialect = if ros1 { Dialect::Ros1 } else { Dialect::Ros2 };
            let text = reg.full_text(root, dialect);
            let mut reparsed = Registry::new();
            reparsed.parse_concatenated(&reg.by_index(root).name, &text, dialect).unwrap();
            for ty in reg.types() {
                if reg.dependencies(root).contains(&reg.index_of(&ty.name).unwrap()) || ty.name == reg.by_index(root).name {
                    let other = reparsed.get(&ty.name).unwrap();
                    prop_assert_eq!(&other.fields.iter().map(|f| (&f.name, &f.base, f.array)).collect::<Vec<_>>(),
                                    &ty.fields.iter().map(|f| (&f.name, &f.base, f.array)).collect::<Vec<_>>());
                }
            }
            let value = random_value(&mut rng, &reg, root);
            let header = CdrHeader { big_endian, options: [0, padding], padding };
            let cdr = encode_cdr_at(&reg, root, &value, header).unwrap();
            let (decoded, h) = decode_cdr_at(&reg, root, &cdr).unwrap();
            prop_assert_eq!(h, header);
            prop_assert_eq!(&encode_cdr_at(&reg, root, &decoded, h).unwrap(), &cdr);
            let r1 = encode_ros1_at(&reg, root, &value).unwrap();
            let decoded = decode_ros1_at(&reg, root, &r1).unwrap();
            prop_assert_eq!(&encode_ros1_at(&reg, root, &decoded).unwrap(), &r1);
            if ros1 {
                // ROS 1 → CDR → ROS 1 keeps every byte except Header.seq (none here).
                let to2 = Ros1ToCdr::new(&reg.by_index(root).name, &text).unwrap();
                let cdr = to2.convert(&r1).unwrap();
                // Field-by-field transcoding writes what the value-tree encoder writes.
                prop_assert_eq!(&cdr, &encode_cdr_at(&reg, root, &value, CdrHeader::default()).unwrap());
                let back = CdrToRos1::new(&to2.ros2_type, &to2.ros2_definition).unwrap();
                prop_assert_eq!(&back.convert(&cdr).unwrap(), &r1);
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(seed in 1u64.., bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        for ros1 in [false, true] {
            let mut rng = Rng(seed);
            let reg = random_registry(&mut rng, ros1);
            let root = reg.types().len() - 1;
            let _ = decode_cdr_at(&reg, root, &bytes);
            let _ = decode_ros1_at(&reg, root, &bytes);
            if ros1 {
                let name = &reg.by_index(root).name;
                let to2 = Ros1ToCdr::new(name, &reg.full_text(root, Dialect::Ros1)).unwrap();
                let _ = to2.convert(&bytes);
                let _ = CdrToRos1::new(&to2.ros2_type, &to2.ros2_definition).unwrap().convert(&bytes);
            }
        }
    }

    #[test]
    fn random_definition_text_never_panics(text in "[a-zA-Z0-9_/\\[\\]<=# \n\"]{0,200}") {
        let mut reg = Registry::new();
        let _ = reg.parse_concatenated("p/T", &text, Dialect::Ros1);
        let mut reg = Registry::new();
        let _ = reg.parse_concatenated("p/T", &text, Dialect::Ros2);
    }
}

/// Elements of no wire size (`std_msgs/Empty` in ROS 1) are counted per message, not per
/// sequence: two sequences of 2^20 each (8 bytes of payload) used to decode to 2 million values
/// and convert to 2 MB of CDR; the second is now refused, naming it.
#[test]
fn elements_of_no_wire_size_have_one_budget_per_message() {
    use crate::limits::EMPTY_ELEMENTS;
    let definition = "test_msgs/Inner[] items\n\
        ================================================================================\n\
        MSG: test_msgs/Inner\n\
        std_msgs/Empty[] e\n\
        ================================================================================\n\
        MSG: std_msgs/Empty\n";
    let mut reg = Registry::new();
    reg.parse_concatenated("test_msgs/Outer", definition, Dialect::Ros1)
        .unwrap();
    let payload = |inner: &[u32]| {
        let mut data = (inner.len() as u32).to_le_bytes().to_vec();
        for n in inner {
            data.extend(n.to_le_bytes());
        }
        data
    };
    let budget = EMPTY_ELEMENTS.default as u32;
    assert_eq!(budget, 1 << 20);
    // Within the budget: decodes and converts.
    let fine = payload(&[budget / 2, budget / 2]);
    decode_ros1(&reg, "test_msgs/Outer", &fine).unwrap();
    let converter = Ros1ToCdr::new("test_msgs/Outer", definition).unwrap();
    assert_eq!(
        converter.convert(&fine).unwrap().len(),
        4 + 4 + 2 * (4 + budget as usize / 2)
    );
    // One more than the budget, over two sequences.
    let over = payload(&[budget / 2, budget / 2 + 1]);
    for err in [
        decode_ros1(&reg, "test_msgs/Outer", &over).map(drop),
        converter.convert(&over).map(drop),
    ] {
        let err = err.expect_err("over the budget");
        let CodecError::TooManyElements {
            type_name,
            field,
            offset,
            source,
        } = &err
        else {
            panic!("{err}")
        };
        assert_eq!(
            (type_name.as_str(), field.as_str()),
            ("test_msgs/Outer", "items[1].e")
        );
        assert_eq!(*offset, 12);
        assert_eq!(
            (source.claimed, source.budget),
            (u64::from(budget) + 1, u64::from(budget))
        );
        assert!(err.to_string().contains(EMPTY_ELEMENTS.env), "{err}");
    }
}

/// A field name followed by other characters than a space, `=` or a comment is an invalid
/// name: `uint32 fÞ_id` was read as field `f` with the default value `Þ_id` (found by the
/// `xtypes` fuzz target: a peer's type object with that member name was recorded as a `.msg`
/// text describing another type, of another RIHS01 hash), `int32 x-1` as `x` defaulting to -1.
/// rosidl and genmsg split the line at whitespace and refuse such names.
#[test]
fn a_field_name_with_trailing_characters_is_refused() {
    for (dialect, text) in [
        (Dialect::Ros2, "uint32 f\u{de}_id\n"),
        (Dialect::Ros2, "int32 x-1\n"),
        (Dialect::Ros1, "int32 x-1\n"),
        (Dialect::Ros2, "string s\"a\"\n"),
    ] {
        let err = definition::parse_message("pkg/msg/T", text, dialect)
            .expect_err(text)
            .to_string();
        assert!(err.contains("invalid field name"), "{text}: {err}");
    }
    // What may follow a name: a space and a default value, a constant's `=`, a comment.
    for text in [
        "int32 x 5\n",
        "int32 X=5\n",
        "int32 X = 5\n",
        "int32 x# comment\n",
        "string s \"a\"\n",
    ] {
        definition::parse_message("pkg/msg/T", text, Dialect::Ros2).expect(text);
    }
}
