//! Images out of a bag: `sensor_msgs/msg/Image` (mono8, mono16, 8UC1, 16UC1, rgb8, bgr8, rgba8,
//! bgra8, rgb16, bgr16, bayer_*8 as grey) encoded as PNG, and `sensor_msgs/msg/CompressedImage`
//! written as the PNG or JPEG it holds.

use rosbag2_rs_codec::msg::{MessageView, Value};

use rosbag2_rs_codec::image::pixels_to_png;

use super::ExportError;

/// An image ready to be written: the bytes of a PNG or JPEG file and its extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageFile {
    /// `png` or `jpg`.
    pub extension: &'static str,
    /// The file's content.
    pub data: Vec<u8>,
}

fn bytes_of(value: Option<&Value>) -> &[u8] {
    match value {
        Some(Value::Bytes(b)) => b,
        _ => &[],
    }
}

/// A decoded `sensor_msgs/msg/Image` as a PNG file.
pub fn image_to_png(image: &MessageView<'_>) -> Result<ImageFile, ExportError> {
    let missing = |f: &str| ExportError::BadImage(format!("the Image has no field '{f}'"));
    let width = image.number("width").ok_or_else(|| missing("width"))? as u32;
    let height = image.number("height").ok_or_else(|| missing("height"))? as u32;
    let step = image.number("step").ok_or_else(|| missing("step"))? as usize;
    let encoding = image.text("encoding").ok_or_else(|| missing("encoding"))?;
    let big_endian = image.number("is_bigendian").unwrap_or(0.0) != 0.0;
    let data = bytes_of(image.field("data"));
    Ok(ImageFile {
        extension: "png",
        data: pixels_to_png(width, height, &encoding, big_endian, step, data)?,
    })
}

/// A decoded `sensor_msgs/msg/CompressedImage` as the file it holds (PNG or JPEG, told from
/// its first bytes, else from its `format`).
pub fn compressed_to_file(image: &MessageView<'_>) -> Result<ImageFile, ExportError> {
    let data = bytes_of(image.field("data"));
    let format = image
        .text("format")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let extension = if data.starts_with(b"\x89PNG") {
        "png"
    } else if data.starts_with(&[0xff, 0xd8]) {
        "jpg"
    } else if format.contains("compresseddepth") {
        return Err(ExportError::Unsupported {
            what: "compressedDepth images (a header before the PNG)".into(),
        });
    } else if format.contains("png") {
        "png"
    } else if format.contains("jpeg") || format.contains("jpg") {
        "jpg"
    } else {
        return Err(ExportError::Unsupported {
            what: format!("CompressedImage format '{format}'"),
        });
    };
    Ok(ImageFile {
        extension,
        data: data.to_vec(),
    })
}
