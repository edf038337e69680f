//! Images of the rosbag2 layout (PNG decoding shared with `export`, in
//! `rosbag2_rs_codec::image`): `CompressedImage`s holding PNGs (`<fmt>; png compressed <fmt>`)
//! or, for depth, a 12-byte `compressedDepth` header and a 16-bit PNG; the formats PNG has no
//! layout for (YUYV, UYVY, raw) as a zstd frame of the pixels (`YUYV; zstd; 64x48 step=128`).

use bytes::Bytes;

use crate::error::ImageError;
use crate::model::{Payload, StreamProfile};

/// `64x48 step=128` in a zstd image's format text: width, height, bytes per row.
fn zstd_size(format: &str) -> Option<(u32, u32, u32)> {
    let part = format.split(';').map(str::trim).find(|p| p.contains('x'))?;
    let (size, step) = part.split_once(" step=")?;
    let (w, h) = size.split_once('x')?;
    Some((w.parse().ok()?, h.parse().ok()?, step.trim().parse().ok()?))
}

/// Decodes one image to raw pixels in the stream's format.
pub fn decode(
    format: &str,
    data: &[u8],
    profile: Option<&StreamProfile>,
) -> Result<Payload, ImageError> {
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
    if format.split(';').any(|p| p.trim() == "zstd") {
        let (width, height, stride) =
            zstd_size(format).ok_or_else(|| ImageError::ZstdSize(format.to_string()))?;
        let pixels = rosbag2_rs_storage::compression::zstd::decompress_message(data)
            .map_err(ImageError::Zstd)?;
        return Ok(Payload::Video {
            width,
            height,
            stride,
            format: fmt,
            data: Bytes::from(pixels),
        });
    }
    let png_bytes = if format.contains("compressedDepth") {
        data.get(12..).ok_or(ImageError::Truncated)?
    } else {
        data
    };
    // 16-bit samples come back little endian, as the SDK's formats are.
    let mut info = rosbag2_rs_codec::image::decode_png(png_bytes)?;
    // A BGR image's PNG holds its colours in PNG's (RGB) order: back to the stream's order.
    let channels = match format.split(';').next().map(str::trim) {
        Some("bgr8") => 3,
        Some("bgra8") => 4,
        _ => 0,
    };
    if channels > 0 {
        for px in info.data.chunks_exact_mut(channels) {
            px.swap(0, 2);
        }
    }
    Ok(Payload::Video {
        width: info.width,
        height: info.height,
        stride: info.stride as u32,
        format: fmt,
        data: Bytes::from(info.data),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zstd_images_give_their_size_and_pixels() {
        assert_eq!(zstd_size("YUYV; zstd; 64x48 step=128"), Some((64, 48, 128)));
        assert_eq!(zstd_size("YUYV; zstd"), None);
        let pixels: Vec<u8> = (0..32).collect();
        let frame = rosbag2_rs_storage::compression::zstd::compress_message(&pixels).unwrap();
        let Payload::Video {
            width,
            stride,
            data,
            ..
        } = decode("UYVY; zstd; 8x2 step=16", &frame, None).unwrap()
        else {
            panic!("not video")
        };
        assert_eq!((width, stride, &data[..]), (8, 16, &pixels[..]));
        assert!(matches!(
            decode("UYVY; zstd; 8x2", &frame, None),
            Err(ImageError::ZstdSize(_))
        ));
    }
}
