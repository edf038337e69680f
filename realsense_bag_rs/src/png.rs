//! Images of the rosbag2 layout (PNG decoding shared with `export`, in
//! `rosbag2_rs_storage::export::image`): `CompressedImage`s holding PNGs (`<fmt>; png compressed <fmt>`)
//! or, for depth, a 12-byte `compressedDepth` header and a 16-bit PNG.

use bytes::Bytes;

use crate::error::ImageError;
use crate::model::{Payload, StreamProfile};

/// Decodes one image to raw pixels in the stream's format.
pub fn decode(
    format: &str,
    data: &[u8],
    profile: Option<&StreamProfile>,
) -> Result<Payload, ImageError> {
    let png_bytes = if format.contains("compressedDepth") {
        data.get(12..).ok_or(ImageError::Truncated)?
    } else {
        data
    };
    // 16-bit samples come back little endian, as the SDK's formats are.
    let info = rosbag2_rs_storage::export::image::decode_png(png_bytes).map_err(Box::new)?;
    let fmt = profile.map_or_else(
        || {
            format
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        },
        |p| p.format.clone(),
    );
    Ok(Payload::Video {
        width: info.width,
        height: info.height,
        stride: info.stride as u32,
        format: fmt,
        data: Bytes::from(info.data),
    })
}
