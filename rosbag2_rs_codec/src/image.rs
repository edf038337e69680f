//! ROS images as PNG files: raw `sensor_msgs/msg/Image` pixels (mono8, mono16, 8UC1, 16UC1,
//! rgb8, bgr8, rgba8, bgra8, rgb16, bgr16, rgba16, bgra16, bayer_*8 as grey) encoded, and PNG
//! files decoded within the pixel budget ([`crate::limits::IMAGE_PIXELS`]). Used by `export` and
//! by RealSense recordings, whose frames are PNGs.

/// Why pixels do not make a PNG, or a PNG does not decode.
#[derive(Debug, thiserror::Error)]
pub enum PngError {
    /// An encoding PNG cannot hold here.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// Pixels that do not fill the image they describe, or bytes that are no PNG.
    #[error("bad image: {0}")]
    Bad(String),
    /// A PNG whose header claims more pixels than a frame may decode to.
    #[error("PNG: {0}")]
    TooManyPixels(#[from] crate::limits::TooManyPixels),
}

/// Pixel layout of a PNG: colour type and bit depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    color: png::ColorType,
    channels: usize,
    bytes_per_sample: usize,
    /// Swap the first and third channel (BGR → RGB).
    swap_rb: bool,
}

fn layout(encoding: &str) -> Option<Layout> {
    use png::ColorType::*;
    let l = |color, channels, bytes_per_sample, swap_rb| Layout {
        color,
        channels,
        bytes_per_sample,
        swap_rb,
    };
    Some(match encoding.to_ascii_lowercase().as_str() {
        "mono8" | "8uc1" | "bayer_rggb8" | "bayer_bggr8" | "bayer_gbrg8" | "bayer_grbg8" => {
            l(Grayscale, 1, 1, false)
        }
        "mono16" | "16uc1" => l(Grayscale, 1, 2, false),
        "rgb8" | "8uc3" => l(Rgb, 3, 1, false),
        "bgr8" => l(Rgb, 3, 1, true),
        "rgba8" | "8uc4" => l(Rgba, 4, 1, false),
        "bgra8" => l(Rgba, 4, 1, true),
        "rgb16" | "16uc3" => l(Rgb, 3, 2, false),
        "bgr16" => l(Rgb, 3, 2, true),
        "rgba16" | "16uc4" => l(Rgba, 4, 2, false),
        "bgra16" => l(Rgba, 4, 2, true),
        _ => return None,
    })
}

/// The encodings [`pixels_to_png`] takes.
pub const SUPPORTED_ENCODINGS: &str =
    "mono8, mono16, 8UC1, 16UC1, rgb8, bgr8, rgba8, bgra8, rgb16, bgr16, rgba16, bgra16, bayer_*8";

/// Encodes raw pixels (`width` × `height`, rows `step` bytes apart, in ROS `encoding`,
/// multi-byte samples big endian when `big_endian`) as a PNG file.
pub fn pixels_to_png(
    width: u32,
    height: u32,
    encoding: &str,
    big_endian: bool,
    step: usize,
    data: &[u8],
) -> Result<Vec<u8>, PngError> {
    let layout = layout(encoding).ok_or_else(|| {
        PngError::Unsupported(format!(
            "image encoding '{encoding}' (supported: {SUPPORTED_ENCODINGS})"
        ))
    })?;
    // PNG has no empty images; and rows of 0 bytes need no data, so a width of 0 would let
    // `height` (up to 2^32 - 1) rows be copied out of nothing before the encoder refused it.
    if width == 0 || height == 0 {
        return Err(PngError::Bad(format!(
            "{width}x{height} {encoding}: an image without pixels"
        )));
    }
    let row = width as usize * layout.channels * layout.bytes_per_sample;
    // Checked: `step` and `height` come from the message, and their product may overflow.
    let needed = step
        .checked_mul((height as usize).saturating_sub(1))
        .and_then(|n| n.checked_add(row));
    if step < row || needed.is_none_or(|n| data.len() < n) {
        return Err(PngError::Bad(format!(
            "{width}x{height} {encoding} needs rows of {row} bytes {step} apart, the data has {} \
             bytes",
            data.len()
        )));
    }
    let mut pixels = Vec::with_capacity(row * height as usize);
    for y in 0..height as usize {
        pixels.extend_from_slice(&data[y * step..y * step + row]);
    }
    if layout.bytes_per_sample == 2 && !big_endian {
        // PNG stores 16-bit samples big endian.
        for sample in pixels.chunks_exact_mut(2) {
            sample.swap(0, 1);
        }
    }
    if layout.swap_rb {
        let pixel = layout.channels * layout.bytes_per_sample;
        let b = layout.bytes_per_sample;
        for px in pixels.chunks_exact_mut(pixel) {
            for k in 0..b {
                px.swap(k, 2 * b + k);
            }
        }
    }
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(layout.color);
        encoder.set_depth(if layout.bytes_per_sample == 2 {
            png::BitDepth::Sixteen
        } else {
            png::BitDepth::Eight
        });
        encoder.set_compression(png::Compression::Fast);
        let mut writer = encoder
            .write_header()
            .map_err(|e| PngError::Bad(format!("PNG: {e}")))?;
        writer
            .write_image_data(&pixels)
            .map_err(|e| PngError::Bad(format!("PNG: {e}")))?;
    }
    Ok(out)
}

/// A decoded PNG: rows of pixels `stride` bytes apart, 16-bit samples little endian (as ROS
/// and the RealSense SDK store them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedPng {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Bytes per row.
    pub stride: usize,
    /// Whether samples are 16 bits.
    pub sixteen_bit: bool,
    /// The pixels.
    pub data: Vec<u8>,
}

/// Decodes a PNG file (`export`'s images, RealSense recordings' frames). The
/// size its header claims is checked against the pixel budget
/// ([`crate::limits::IMAGE_PIXELS`]) before the pixels are allocated: the `png`
/// crate leaves the output buffer to the caller, and a 60-byte PNG can claim gigapixels.
pub fn decode_png(png_bytes: &[u8]) -> Result<DecodedPng, PngError> {
    let err = |e: png::DecodingError| PngError::Bad(format!("PNG: {e}"));
    let limits = png::Limits {
        bytes: usize::try_from(crate::limits::IMAGE_PIXELS.get()).unwrap_or(usize::MAX),
    };
    let mut reader = png::Decoder::new_with_limits(std::io::Cursor::new(png_bytes), limits)
        .read_info()
        .map_err(err)?;
    let header = reader.info();
    crate::limits::check_pixels(header.width, header.height)?;
    let mut data = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut data).map_err(err)?;
    data.truncate(info.buffer_size());
    let sixteen_bit = info.bit_depth == png::BitDepth::Sixteen;
    if sixteen_bit {
        // PNG stores 16-bit samples big endian.
        for sample in data.chunks_exact_mut(2) {
            sample.swap(0, 1);
        }
    }
    Ok(DecodedPng {
        width: info.width,
        height: info.height,
        stride: info.line_size,
        sixteen_bit,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found reviewing what the `realsense_db3` fuzz target reaches (issue 48): an `Image` of
    /// width 0, height 2^32 - 1 and step 0 passed the row check (rows of 0 bytes need no data)
    /// and 4 billion empty rows were copied (96 s in a debug build) before the PNG encoder
    /// refused the zero width. Refused at once now.
    #[test]
    fn an_image_without_pixels_is_refused_at_once() {
        let start = std::time::Instant::now();
        for (width, height) in [(0, u32::MAX), (4, 0)] {
            let err = pixels_to_png(width, height, "rgb8", false, 0, &[]).unwrap_err();
            assert!(err.to_string().contains("without pixels"), "{err}");
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn bgr8_with_row_padding_becomes_rgb() {
        // 2x2, rows of 6 bytes padded to 8.
        let data = [1, 2, 3, 4, 5, 6, 0, 0, 7, 8, 9, 10, 11, 12, 0, 0];
        let png_bytes = pixels_to_png(2, 2, "bgr8", false, 8, &data).unwrap();
        let decoded = decode_png(&png_bytes).unwrap();
        assert_eq!((decoded.width, decoded.height, decoded.stride), (2, 2, 6));
        assert_eq!(decoded.data, [3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10]);
    }

    #[test]
    fn mono16_round_trips_little_endian() {
        let data = [0x34, 0x12, 0xff, 0x00];
        let png_bytes = pixels_to_png(2, 1, "16UC1", false, 4, &data).unwrap();
        // Stored big endian, as PNG requires.
        let raw = decode_png_raw(&png_bytes);
        assert_eq!(raw, [0x12, 0x34, 0x00, 0xff]);
        let decoded = decode_png(&png_bytes).unwrap();
        assert!(decoded.sixteen_bit);
        assert_eq!(decoded.data, data);
        assert!(matches!(decode_png(b"not a png"), Err(PngError::Bad(_))));
    }

    /// A PNG chunk: length, type, data, CRC.
    fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut c = (data.len() as u32).to_be_bytes().to_vec();
        c.extend(kind);
        c.extend(data);
        let mut crc = crc32fast::Hasher::new();
        crc.update(kind);
        crc.update(data);
        c.extend(crc.finalize().to_be_bytes());
        c
    }

    /// A 60-byte PNG whose header claims `width` x `height` 16-bit RGBA pixels, with an empty
    /// image stream.
    fn png_claiming(width: u32, height: u32) -> Vec<u8> {
        let mut ihdr = width.to_be_bytes().to_vec();
        ihdr.extend(height.to_be_bytes());
        ihdr.extend([16, 6, 0, 0, 0]); // 16-bit RGBA, deflate, no filter, no interlace
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend(png_chunk(b"IHDR", &ihdr));
        png.extend(png_chunk(
            b"IDAT",
            &[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01],
        ));
        png.extend(png_chunk(b"IEND", &[]));
        png
    }

    /// A PNG claiming 8193 x 8193 pixels (67 million, 8 bytes each) had 537 MB allocated for
    /// it before decoding found no data (60000 x 60000: 29 GB). The claim is checked against
    /// the pixel budget first.
    #[test]
    fn a_png_claiming_too_many_pixels_is_refused_before_allocating() {
        let png_bytes = png_claiming(8193, 8193);
        assert!(png_bytes.len() < 80, "{}", png_bytes.len());
        let err = decode_png(&png_bytes)
            .map(drop)
            .expect_err("over the budget");
        let PngError::TooManyPixels(over) = &err else {
            panic!("{err}")
        };
        assert_eq!(
            (over.width, over.height, over.budget),
            (8193, 8193, 1 << 26)
        );
        assert!(
            err.to_string().contains("ROSBAG2_RS_MAX_IMAGE_PIXELS"),
            "{err}"
        );
        let err = decode_png(&png_claiming(60_000, 60_000)).err().unwrap();
        assert!(matches!(err, PngError::TooManyPixels(_)), "{err}");
        // Within the budget, an empty stream is a decoding error.
        let err = decode_png(&png_claiming(16, 16)).err().unwrap();
        assert!(matches!(err, PngError::Bad(_)), "{err}");
    }

    fn decode_png_raw(png_bytes: &[u8]) -> Vec<u8> {
        let mut reader = png::Decoder::new(std::io::Cursor::new(png_bytes))
            .read_info()
            .unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        buf
    }

    #[test]
    fn short_data_and_unknown_encodings_are_errors() {
        assert!(matches!(
            pixels_to_png(4, 4, "mono8", false, 4, &[0; 15]),
            Err(PngError::Bad(_))
        ));
        assert!(matches!(
            pixels_to_png(1, 1, "32FC1", false, 4, &[0; 4]),
            Err(PngError::Unsupported(_))
        ));
        // A step and height from a hostile message whose product overflows: an error (it was an
        // overflow panic, or in release a wrapped size that passed the check).
        assert!(matches!(
            pixels_to_png(1, u32::MAX, "mono8", false, usize::MAX / 2, &[0; 4]),
            Err(PngError::Bad(_))
        ));
    }
}
