//! Images of the rosbag2 layout: `CompressedImage`s holding PNGs (`<fmt>; png compressed <fmt>`)
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
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info()?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf)?;
    buf.truncate(info.buffer_size());
    if info.bit_depth == png::BitDepth::Sixteen {
        // PNG stores 16-bit samples big endian; the SDK's formats are little endian.
        for px in buf.chunks_exact_mut(2) {
            px.swap(0, 1);
        }
    }
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
        stride: info.line_size as u32,
        format: fmt,
        data: Bytes::from(buf),
    })
}
