//! The `key=value;` pairs ROS 2 puts in DDS USER_DATA: `enclave=/;` on participants,
//! `typehash=RIHS01_...;` on endpoints (rmw_dds_common's `encode_type_hash_for_user_data_qos`).

/// The value of `key` in USER_DATA text, if present and non-empty.
pub fn value(text: &str, key: &str) -> Option<String> {
    text.split(';').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k.trim() == key && !v.is_empty()).then(|| v.to_string())
    })
}

/// The type hash an endpoint's USER_DATA announces (`typehash=RIHS01_<64 hex>;`).
pub fn type_hash(user_data: &[u8]) -> Option<String> {
    value(&String::from_utf8_lossy(user_data), "typehash").filter(|h| h.starts_with("RIHS01_"))
}

/// The USER_DATA announcing `hash` (empty when there is none).
pub fn type_hash_user_data(hash: Option<&str>) -> String {
    hash.map(|h| format!("typehash={h};")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_hash_as_rmw_dds_common_writes_it() {
        let hash = format!("RIHS01_{}", "ab".repeat(32));
        let data = type_hash_user_data(Some(&hash));
        assert_eq!(data, format!("typehash={hash};"));
        assert_eq!(type_hash(data.as_bytes()), Some(hash.clone()));
        assert_eq!(
            type_hash(format!("x=1;typehash={hash};").as_bytes()),
            Some(hash)
        );
        assert_eq!(type_hash(b"typehash=;"), None);
        assert_eq!(type_hash(b"typehash=md5;"), None);
        assert_eq!(type_hash(b""), None);
        assert_eq!(type_hash_user_data(None), "");
    }
}
