//! What a storage file holds besides messages: attachments and metadata records (MCAP's;
//! other storage refuses them), the types every layer passes around. Read and written by
//! [`super::mcap_extras`].

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;

/// The name of the metadata record rosbag2 writes (the bag's `metadata.yaml`); not a user record.
pub const ROSBAG2_METADATA_NAME: &str = "rosbag2";

/// The name of the metadata record `--metadata key=value` writes.
pub const USER_METADATA_NAME: &str = "rosbag2_rs";

/// One MCAP attachment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// Its name (a file name, typically).
    pub name: String,
    /// Its media type (`text/plain`, `application/octet-stream`, ...).
    pub media_type: String,
    /// Log time, ns since the epoch.
    pub log_time: u64,
    /// Creation time, ns since the epoch.
    pub create_time: u64,
    /// Its bytes.
    pub data: Bytes,
}

/// One MCAP metadata record: a name and string key/value pairs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MetadataRecord {
    /// The record's name.
    pub name: String,
    /// Its key/value pairs.
    pub metadata: BTreeMap<String, String>,
}

/// The attachments and metadata records of one MCAP file, in file order.
#[derive(Debug, Clone, Default)]
pub struct McapExtras {
    /// The attachments.
    pub attachments: Vec<Attachment>,
    /// The metadata records, rosbag2's own (`rosbag2`) included.
    pub metadata: Vec<MetadataRecord>,
}

impl McapExtras {
    /// The metadata records other than rosbag2's embedded `metadata.yaml`.
    pub fn user_metadata(&self) -> impl Iterator<Item = &MetadataRecord> {
        self.metadata
            .iter()
            .filter(|m| m.name != ROSBAG2_METADATA_NAME)
    }
}

/// The media type of a file to attach, guessed from its extension.
pub fn guess_media_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "txt" | "md" | "msg" | "srv" => "text/plain",
        "yaml" | "yml" => "application/yaml",
        "json" => "application/json",
        "xml" | "urdf" | "xacro" | "sdf" | "launch" => "application/xml",
        "csv" => "text/csv",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}
