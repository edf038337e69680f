use proptest::prelude::*;

use super::{idl_includes, parse_idl};
use crate::msg::definition::{ArrayKind, BaseType, MessageType, Primitive, Registry, MAX_NESTING};
use crate::msg::{decode_cdr, encode_cdr, CodecError, Value};

fn one(text: &str) -> MessageType {
    let mut types = parse_idl("p/msg/T", text).unwrap();
    assert_eq!(types.len(), 1, "{types:?}");
    types.remove(0)
}

fn in_module(body: &str) -> String {
    format!("module p {{\n module msg {{\n{body}\n }};\n}};\n")
}

/// The error of a text that does not parse: its line and reason.
fn error(text: &str) -> (usize, String) {
    match parse_idl("p/msg/T", text) {
        Err(CodecError::Definition {
            type_name,
            line,
            reason,
        }) => {
            assert_eq!(type_name, "p/msg/T");
            (line, reason)
        }
        other => panic!("expected a definition error, got {other:?}"),
    }
}

#[test]
fn every_primitive_spelling() {
    let spellings = [
        ("boolean", Primitive::Bool),
        ("octet", Primitive::Byte),
        ("char", Primitive::IdlChar),
        ("wchar", Primitive::WChar),
        ("int8", Primitive::Int8),
        ("uint8", Primitive::UInt8),
        ("int16", Primitive::Int16),
        ("uint16", Primitive::UInt16),
        ("int32", Primitive::Int32),
        ("uint32", Primitive::UInt32),
        ("int64", Primitive::Int64),
        ("uint64", Primitive::UInt64),
        ("short", Primitive::Int16),
        ("unsigned short", Primitive::UInt16),
        ("long", Primitive::Int32),
        ("unsigned long", Primitive::UInt32),
        ("long long", Primitive::Int64),
        ("unsigned long long", Primitive::UInt64),
        ("float", Primitive::Float32),
        ("double", Primitive::Float64),
    ];
    let body: String = spellings
        .iter()
        .enumerate()
        .map(|(i, (s, _))| format!("{s} f{i};\n"))
        .collect();
    let t = one(&in_module(&format!("struct T {{\n{body}}};")));
    for (i, (spelling, p)) in spellings.iter().enumerate() {
        assert_eq!(t.fields[i].base, BaseType::Primitive(*p), "{spelling}");
        assert_eq!(t.fields[i].array, ArrayKind::Single);
    }
    let t = one(&in_module(
        "struct T { string a; wstring b; string<5> c; wstring<7> d; };",
    ));
    let bases: Vec<_> = t.fields.iter().map(|f| f.base.clone()).collect();
    assert_eq!(
        bases,
        [
            BaseType::String { bound: None },
            BaseType::WString { bound: None },
            BaseType::String { bound: Some(5) },
            BaseType::WString { bound: Some(7) },
        ]
    );
}

#[test]
fn unsupported_types_are_refused_with_their_line() {
    let (line, reason) = error(&in_module("struct T {\n int32 a;\n long double x;\n};"));
    assert_eq!(line, 5);
    assert!(reason.contains("long double"), "{reason}");
    for (body, word) in [
        ("enum E { A, B };", "enum"),
        ("union U switch (long) { case 1: long a; };", "union"),
        ("struct T { fixed<5, 2> x; };", "fixed"),
        ("struct T { any x; };", "any"),
        ("struct T { int32 x[2][3]; };", "multi-dimensional"),
        ("const int32 N = 1 + 2;", "operator"),
        ("struct T { string<N> s; };", "only integer literals"),
        ("struct T { Unknown u; };", "unknown type 'Unknown'"),
        ("struct T { a::b::c::D d; };", "is not 'pkg::msg::Type'"),
        ("struct T { int32 a; int32 a; };", "duplicate member 'a'"),
        (
            "struct T { int32 a; }; struct T { int32 b; };",
            "declared twice",
        ),
        (
            "typedef int32 arr[2]; struct T { sequence<arr> s; };",
            "sequences of arrays",
        ),
        (
            "typedef sequence<int32> s; struct T { s a[2]; };",
            "arrays of arrays",
        ),
        (
            "struct T { @default (value=\"x\") int32 a; };",
            "does not fit",
        ),
    ] {
        let (_, reason) = error(&in_module(body));
        assert!(reason.contains(word), "{body}: {reason}");
    }
    let (line, reason) = error("#pragma once\n");
    assert_eq!(line, 1);
    assert!(reason.contains("#pragma"), "{reason}");
    let (_, reason) = error("module a { module b { module c { struct T { int32 x; }; }; }; };");
    assert!(reason.contains("'pkg::msg'"), "{reason}");
}

#[test]
fn typedefs_arrays_sequences_and_scoped_names() {
    let t = one(&in_module(
        "typedef double double__9[9];\n\
         typedef q::msg::Point q__msg__Point;\n\
         typedef q__msg__Point q__msg__Point__3[3];\n\
         struct T {\n\
           double__9 cov;\n\
           q__msg__Point__3 points;\n\
           sequence<q::msg::Point> all;\n\
           sequence<::q::msg::Point, 4> some;\n\
           sequence<string<3>, 2> names;\n\
           int32 a, b[2], c;\n\
           q::Short short_name;\n\
           q::srv::Call_Request call;\n\
         };",
    ));
    let point = BaseType::Message("q/Point".into());
    let kinds: Vec<_> = t
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.base.clone(), f.array))
        .collect();
    assert_eq!(
        kinds,
        [
            (
                "cov",
                BaseType::Primitive(Primitive::Float64),
                ArrayKind::Fixed(9)
            ),
            ("points", point.clone(), ArrayKind::Fixed(3)),
            ("all", point.clone(), ArrayKind::Sequence { bound: None }),
            ("some", point, ArrayKind::Sequence { bound: Some(4) }),
            (
                "names",
                BaseType::String { bound: Some(3) },
                ArrayKind::Sequence { bound: Some(2) }
            ),
            (
                "a",
                BaseType::Primitive(Primitive::Int32),
                ArrayKind::Single
            ),
            (
                "b",
                BaseType::Primitive(Primitive::Int32),
                ArrayKind::Fixed(2)
            ),
            (
                "c",
                BaseType::Primitive(Primitive::Int32),
                ArrayKind::Single
            ),
            (
                "short_name",
                BaseType::Message("q/Short".into()),
                ArrayKind::Single
            ),
            (
                "call",
                BaseType::Message("q/srv/Call_Request".into()),
                ArrayKind::Single
            ),
        ]
    );
    // A typedef of an outer module is found from an inner one.
    let t = one("module p { typedef int16 i16x2[2]; module msg { struct T { i16x2 v; }; }; };");
    assert_eq!(t.fields[0].array, ArrayKind::Fixed(2));
}

#[test]
fn constants_and_defaults_are_spelled_as_msg_spells_them() {
    let t = one(&in_module(
        "module T_Constants {\n\
           const boolean FLAG = TRUE;\n\
           const octet B = 0xff;\n\
           const int16 NEG = -010;\n\
           const double PI = 3.14;\n\
           const string S = \"a \\\"b\\\"\" \" c\";\n\
           const char LETTER = 'x';\n\
         };\n\
         module Other_Constants { const int32 NOT_MINE = 1; };\n\
         struct T {\n\
           @default (value=FALSE) boolean b;\n\
           @default (value=-2.5e1) float f;\n\
           @default (value=7) double d;\n\
           @default (value=\"it's\") string s;\n\
           @default (value=\"(1, 2, 3)\") sequence<int32> seq;\n\
           @default (value=\"(4,)\") int32 one[1];\n\
           @default (value=\"('a', 'b,c')\") sequence<string> strs;\n\
           @verbatim (language=\"comment\", text=\"x\" \"\\n\" \"y\") @key @unit (value=\"m\") int32 plain;\n\
         };",
    ));
    let constants: Vec<_> = t
        .constants
        .iter()
        .map(|c| (c.type_name.as_str(), c.name.as_str(), c.value.as_str()))
        .collect();
    assert_eq!(
        constants,
        [
            ("bool", "FLAG", "true"),
            ("byte", "B", "255"),
            ("int16", "NEG", "-8"),
            ("float64", "PI", "3.14"),
            ("string", "S", r#""a \"b\" c""#),
            ("char", "LETTER", "120"),
        ]
    );
    let defaults: Vec<_> = t.fields.iter().map(|f| f.default.as_deref()).collect();
    assert_eq!(
        defaults,
        [
            Some("false"),
            Some("-2.5e1"),
            Some("7"),
            Some("\"it's\""),
            Some("[1, 2, 3]"),
            Some("[4]"),
            Some("['a', 'b,c']"),
            None,
        ]
    );
}

#[test]
fn string_literals_unescape_and_join() {
    let t = one(&in_module(
        r#"module T_Constants {
             const string S = "tab\there" "\x41\101\u0042" /* between */ "\q";
             const wstring W = L"w\u00e9";
           };
           struct T { int32 x; };"#,
    ));
    assert_eq!(
        t.constants[0].value,
        "\"tab\there".to_string() + "AA\\\\u0042\\\\q\""
    );
    assert_eq!(t.constants[1].type_name, "wstring");
    assert_eq!(t.constants[1].value, "\"w\u{e9}\"");
    let (line, reason) = error("module p {\n  const string S = \"open\n\";\n};");
    assert_eq!((line, reason.as_str()), (2, "unterminated string literal"));
    let (line, reason) = error("module p {\n/* never closed\n");
    assert_eq!((line, reason.contains("never closed")), (2, true));
}

#[test]
fn a_message_without_fields_has_none() {
    let t = one(&in_module(
        "struct T { uint8 structure_needs_at_least_one_member; };",
    ));
    assert!(t.fields.is_empty());
    let t = one(&in_module(
        "struct T { uint8 structure_needs_at_least_one_member; int32 x; };",
    ));
    assert_eq!(t.fields.len(), 2);
}

#[test]
fn services_and_actions_keep_their_kind() {
    let types = parse_idl(
        "p/srv/Call",
        "module p { module srv {\n\
           struct Call_Request { int64 a; };\n\
           struct Call_Response { uint8 structure_needs_at_least_one_member; };\n\
         }; };\n\
         module p { module action { struct Go_Goal { int32 order; }; }; };",
    )
    .unwrap();
    let names: Vec<_> = types.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "p/srv/Call_Request",
            "p/srv/Call_Response",
            "p/action/Go_Goal"
        ]
    );
}

#[test]
fn includes_are_listed() {
    assert_eq!(
        idl_includes("#include \"a/msg/B.idl\"\n// #include <no.idl>\n#include <c/msg/D.idl>\n")
            .unwrap(),
        ["a/msg/B.idl", "c/msg/D.idl"]
    );
}

#[test]
fn idl_char_and_wchar() {
    let mut reg = Registry::new();
    reg.parse_concatenated_idl(
        "p/msg/T",
        &in_module("struct T { char c; sequence<char> cs; };"),
    )
    .unwrap();
    let bytes = [0, 1, 0, 0, b'x', 0, 0, 0, 2, 0, 0, 0, b'a', b'b'];
    let (value, header) = decode_cdr(&reg, "p/msg/T", &bytes).unwrap();
    assert_eq!(
        value,
        Value::Struct(vec![Value::UInt8(b'x'), Value::Bytes(b"ab".to_vec())])
    );
    assert_eq!(encode_cdr(&reg, "p/msg/T", &value, header).unwrap(), bytes);
    let mut reg = Registry::new();
    reg.parse_concatenated_idl("p/msg/W", &in_module("struct W { wchar w; };"))
        .unwrap();
    let e = decode_cdr(&reg, "p/msg/W", &[0, 1, 0, 0, 1, 0]).unwrap_err();
    assert!(e.to_string().contains("wchar is not supported"), "{e}");
}

#[test]
fn concatenated_sections() {
    let sep = "=".repeat(80);
    // Bare IDL of the root, then dependencies; a type already given keeps its first form.
    let text = format!(
        "{}\n{sep}\nIDL: q/msg/Dep\n{}\n{sep}\nMSG: q/Dep\nstring ignored\n",
        in_module("struct T { q::msg::Dep d; };"),
        "module q { module msg { struct Dep { int32 x; }; }; };"
    );
    let mut reg = Registry::new();
    reg.parse_concatenated_idl("p/msg/T", &text).unwrap();
    assert_eq!(reg.get("q/msg/Dep").unwrap().fields[0].name, "x");
    // An empty `MSG:` section before the `IDL:` one of the same type (rosbag2's services).
    let text = format!(
        "{sep}\nSRV: p/srv/Call\nq/Dep req\n---\nbool ok\n\n{sep}\nMSG: q/Dep\n\n{sep}\nIDL: q/Dep\n\
         module q {{ module msg {{ struct Dep {{ int32 x; }}; }}; }};\n"
    );
    let mut reg = Registry::new();
    reg.parse_concatenated_idl("p/srv/Call_Request", &text)
        .unwrap();
    assert_eq!(reg.get("q/Dep").unwrap().fields.len(), 1);
    assert_eq!(reg.get("p/srv/Call_Response").unwrap().fields[0].name, "ok");
    // The event of the service, built from its request and response.
    let mut reg = Registry::new();
    reg.parse_concatenated_idl("p/srv/Call_Event", &text)
        .unwrap();
    let event = reg.get("p/srv/Call_Event").unwrap();
    let names: Vec<_> = event.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["info", "request", "response"]);
    assert!(reg.get("builtin_interfaces/Time").is_some());
    // Errors: an unknown header, a missing root, a missing dependency.
    let mut reg = Registry::new();
    let e = reg
        .parse_concatenated_idl("p/msg/T", &format!("{sep}\nTXT: p/msg/T\n"))
        .unwrap_err();
    assert!(matches!(e, CodecError::Definition { line: 2, .. }), "{e}");
    let e = reg
        .parse_concatenated_idl("p/msg/Absent", &in_module("struct T { int32 x; };"))
        .unwrap_err();
    assert_eq!(e, CodecError::Missing("p/msg/Absent".into()));
    let e = Registry::new()
        .parse_concatenated_idl("p/msg/T", &in_module("struct T { q::msg::Gone g; };"))
        .unwrap_err();
    assert!(matches!(e, CodecError::UnknownType { .. }), "{e}");
    // An error inside a section names the section's type and the line within it.
    let e = Registry::new()
        .parse_concatenated_idl(
            "p/msg/T",
            &format!("{sep}\nIDL: p/msg/T\nmodule p {{\n  struct T {{ long double x; }};\n}};\n"),
        )
        .unwrap_err();
    assert!(
        matches!(&e, CodecError::Definition { type_name, line: 2, .. } if type_name == "p/msg/T"),
        "{e}"
    );
}

#[test]
fn sizes_in_the_text_reserve_nothing() {
    // 2^60 elements: parsed as a number, never allocated; a payload cannot hold them.
    let mut reg = Registry::new();
    reg.parse_concatenated_idl(
        "p/msg/T",
        &in_module(
            "typedef double d[1152921504606846976];\n\
             struct T { d huge; sequence<int32, 1152921504606846976> s; string<1152921504606846976> st; };",
        ),
    )
    .unwrap();
    let t = reg.get("p/msg/T").unwrap();
    assert_eq!(t.fields[0].array, ArrayKind::Fixed(1 << 60));
    assert!(decode_cdr(&reg, "p/msg/T", &[0, 1, 0, 0, 0, 0, 0, 0]).is_err());
    // Bounds beyond any integer.
    let (_, reason) = error(&in_module(
        "struct T { sequence<int32, 123456789012345678901234567890123456789012> s; };",
    ));
    assert!(
        reason.contains("out of range") || reason.contains("too large"),
        "{reason}"
    );
}

#[test]
fn nesting_is_limited() {
    let deep_modules = "module a { ".repeat(10_000);
    let (_, reason) = error(&deep_modules);
    assert!(reason.contains("nested deeper"), "{reason}");
    let deep_sequences = format!(
        "module p {{ module msg {{ struct T {{ {} int32 x; }}; }}; }};",
        "sequence<".repeat(10_000)
    );
    let (_, reason) = error(&deep_sequences);
    assert!(reason.contains("nested deeper"), "{reason}");
    let cycle = in_module("typedef b a; typedef a b; struct T { a x; };");
    let (_, reason) = error(&cycle);
    assert!(
        reason.contains("deeper") && reason.contains("circular"),
        "{reason}"
    );
    // A chain of 10 000 structs, each holding the next: refused when linked, not walked.
    let chain: String = (0..10_000)
        .map(|i| format!("struct S{i} {{ p::msg::S{} next; }};\n", i + 1))
        .collect();
    let text = in_module(&format!("{chain}struct S10000 {{ int32 x; }};"));
    let e = Registry::new()
        .parse_concatenated_idl("p/msg/S0", &text)
        .unwrap_err();
    assert!(e.to_string().contains("nested deeper"), "{e}");
    // The same chain declared innermost first: each type is visited shallowly, but the chain
    // is as tall (the codecs would recurse through all of it).
    let chain: String = (0..10_000)
        .rev()
        .map(|i| format!("struct S{i} {{ p::msg::S{} next; }};\n", i + 1))
        .collect();
    let text = in_module(&format!("struct S10000 {{ int32 x; }};\n{chain}"));
    let e = Registry::new()
        .parse_concatenated_idl("p/msg/S0", &text)
        .unwrap_err();
    assert!(e.to_string().contains("nested deeper"), "{e}");
    // At the limit, it links.
    let chain: String = (0..MAX_NESTING - 1)
        .map(|i| format!("struct S{i} {{ p::msg::S{} next; }};\n", i + 1))
        .collect();
    let last = MAX_NESTING - 1;
    let text = in_module(&format!("{chain}struct S{last} {{ int32 x; }};"));
    Registry::new()
        .parse_concatenated_idl("p/msg/S0", &text)
        .unwrap();
}

const SAMPLE: &str = "// generated\n#include \"q/msg/Dep.idl\"\n\
module p {\n  module msg {\n    typedef double double__9[9];\n\
    module T_Constants {\n      const uint8 A = 1;\n      const string S = \"x\" \"y\";\n    };\n\
    @verbatim (language=\"comment\", text=\"doc\")\n    struct T {\n\
      @default (value=TRUE)\n      boolean b;\n      double__9 cov;\n\
      sequence<q::msg::Dep, 3> deps;\n      string<5> name;\n    };\n  };\n};\n";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Arbitrary text never panics.
    #[test]
    fn any_text_is_a_result(text in "\\PC{0,200}") {
        let _ = parse_idl("p/msg/T", &text);
        let _ = Registry::new().parse_concatenated_idl("p/msg/T", &text);
    }

    /// Nor does a real definition cut, or with a byte changed.
    #[test]
    fn damaged_idl_is_a_result(cut in 0..SAMPLE.len(), at in 0..SAMPLE.len(), byte in 0u8..128) {
        let mut bytes = SAMPLE.as_bytes()[..cut].to_vec();
        if at < bytes.len() {
            bytes[at] = byte;
        }
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse_idl("p/msg/T", &text);
        let _ = Registry::new().parse_concatenated_idl("p/msg/T", &text);
    }
}

#[test]
fn the_sample_parses() {
    let t = one(SAMPLE);
    assert_eq!(t.constants[1].value, "\"xy\"");
    assert_eq!(t.fields.len(), 4);
}
