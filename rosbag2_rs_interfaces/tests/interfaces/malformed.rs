//! Short, truncated and otherwise malformed input gives a typed error, never a
//! panic.

use rosbag2_rs_interfaces::builtin_interfaces::Time;
use rosbag2_rs_interfaces::rosbag2_interfaces::msg::WriteSplitEvent;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::{
    IsPausedResponse, PauseRequest, PlayRequest, SetRateRequest,
};
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::{
    SetDurationResponse, TriggerSnapshotResponse,
};
use rosbag2_rs_interfaces::{from_cdr, to_cdr, InterfaceError};

#[test]
fn shorter_than_header() {
    for len in 0..4 {
        let bytes = [0, 1, 0, 0];
        assert_eq!(
            from_cdr::<PauseRequest>(&bytes[..len]),
            Err(InterfaceError::TooShort { len })
        );
    }
}

#[test]
fn unknown_encapsulation() {
    for id in [
        [0x00, 0x02],
        [0x01, 0x00],
        [0x00, 0x07],
        [0x00, 0x11],
        [0xff, 0xff],
    ] {
        let bytes = [id[0], id[1], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            from_cdr::<SetRateRequest>(&bytes),
            Err(InterfaceError::UnsupportedEncapsulation(id))
        );
    }
}

fn assert_every_prefix_fails<T>(full: &[u8])
where
    T: serde::de::DeserializeOwned + std::fmt::Debug,
{
    for len in 0..full.len() {
        let result = from_cdr::<T>(&full[..len]);
        match result {
            Err(InterfaceError::TooShort { .. }) if len < 4 => {}
            Err(InterfaceError::Decode(_)) if len >= 4 => {}
            other => panic!("prefix of {len} of {} bytes gave {other:?}", full.len()),
        }
    }
}

#[test]
fn truncated_payloads() {
    assert_every_prefix_fails::<PauseRequest>(&to_cdr(&PauseRequest::default()));
    assert_every_prefix_fails::<SetRateRequest>(&to_cdr(&SetRateRequest { rate: 1.0 }));
    assert_every_prefix_fails::<PlayRequest>(&to_cdr(&PlayRequest {
        start_offset: Time { sec: 1, nanosec: 2 },
        ..Default::default()
    }));
    assert_every_prefix_fails::<WriteSplitEvent>(&to_cdr(&WriteSplitEvent {
        closed_file: "a".into(),
        opened_file: "bb".into(),
        node_name: "ccc".into(),
    }));
    assert_every_prefix_fails::<TriggerSnapshotResponse>(&to_cdr(&TriggerSnapshotResponse {
        success: false,
        message: "no".into(),
    }));
}

#[test]
fn bad_bool() {
    let result = from_cdr::<IsPausedResponse>(&[0, 1, 0, 0, 2]);
    assert!(
        matches!(result, Err(InterfaceError::Decode(_))),
        "{result:?}"
    );
}

#[test]
fn bad_utf8_string() {
    // bool, padding, length 3, bytes ff fe, NUL
    let bytes = [0, 1, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0xff, 0xfe, 0];
    let result = from_cdr::<TriggerSnapshotResponse>(&bytes);
    assert!(
        matches!(result, Err(InterfaceError::Decode(_))),
        "{result:?}"
    );
}

#[test]
fn huge_string_length() {
    let bytes = [0, 1, 0, 0, 0xff, 0xff, 0xff, 0xff, b'a', 0];
    let result = from_cdr::<WriteSplitEvent>(&bytes);
    assert!(
        matches!(result, Err(InterfaceError::Decode(_))),
        "{result:?}"
    );
}

#[test]
fn errors_display() {
    let err = from_cdr::<PauseRequest>(&[0, 1]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "CDR payload too short: 2 bytes, need at least 4 for the encapsulation header"
    );
    let err = from_cdr::<PauseRequest>(&[0, 7, 0, 0, 0]).unwrap_err();
    assert!(
        err.to_string().contains("unsupported CDR encapsulation"),
        "{err}"
    );
}

/// Arbitrary bytes never panic the decoder (a small deterministic fuzz).
#[test]
fn arbitrary_bytes_never_panic() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let len = (next() % 48) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        if len >= 2 && next() % 2 == 0 {
            bytes[0] = 0;
            bytes[1] = (next() % 2) as u8;
        }
        let _ = from_cdr::<WriteSplitEvent>(&bytes);
        let _ = from_cdr::<PlayRequest>(&bytes);
        let _ = from_cdr::<SetDurationResponse>(&bytes);
        let _ = from_cdr::<IsPausedResponse>(&bytes);
    }
}
