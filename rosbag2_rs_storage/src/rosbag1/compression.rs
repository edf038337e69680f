//! Chunk compression of ROS 1 bags: `none`, `bz2` and `lz4` (the LZ4 frame format as `roslz4`
//! writes it: independent 1 MB blocks, no block checksums, a content checksum; `roslz4` rejects
//! any other flags).

use std::io::Write;

use super::error::Ros1FormatError;
use crate::formats::{CompressionFormat, StorageId};
use crate::limits;

/// Zstandard is no ROS 1 chunk compression (`rosbag` reads none, bz2 and lz4).
fn not_ros1(compression: CompressionFormat) -> std::io::Error {
    std::io::Error::other(
        compression
            .check_chunks_of(StorageId::Rosbag1)
            .err()
            .map_or_else(String::new, |e| e.to_string()),
    )
}

/// Decompresses the chunk `data` into exactly `size` bytes; anything else is an error, and so is
/// a `size` above [`limits::max_chunk_bytes`]. The output grows with what decompresses, so a
/// header lying about its size reserves nothing it does not fill.
pub(super) fn decompress(
    compression: CompressionFormat,
    data: &[u8],
    size: usize,
) -> Result<Vec<u8>, Ros1FormatError> {
    limits::check_chunk_size(size as u64)?;
    let mut out = Vec::new();
    let result = match compression {
        CompressionFormat::None => {
            out.extend_from_slice(data);
            Ok(())
        }
        CompressionFormat::Bz2 => {
            limits::read_declared(bzip2::read::BzDecoder::new(data), size, &mut out)
        }
        CompressionFormat::Lz4 => match lz4_frames(data, size, &mut out) {
            Some(result) => return result.map(|()| out),
            // Frames with linked blocks: the streaming decoder.
            None => {
                out.clear();
                lz4::Decoder::new(data).and_then(|d| limits::read_declared(d, size, &mut out))
            }
        },
        CompressionFormat::Zstd => Err(not_ros1(compression)),
    };
    result.map_err(|source| Ros1FormatError::Decompress {
        compression,
        source,
    })?;
    if out.len() != size {
        return Err(Ros1FormatError::ChunkSize {
            compression,
            len: out.len(),
            size,
        });
    }
    Ok(out)
}

/// Compresses the chunk `data`.
pub(super) fn compress(compression: CompressionFormat, data: &[u8]) -> std::io::Result<Vec<u8>> {
    match compression {
        CompressionFormat::None => Ok(data.to_vec()),
        CompressionFormat::Bz2 => {
            let mut e = bzip2::write::BzEncoder::new(
                Vec::with_capacity(data.len() / 2),
                bzip2::Compression::best(),
            );
            e.write_all(data)?;
            e.finish()
        }
        CompressionFormat::Lz4 => {
            let mut e = lz4::EncoderBuilder::new()
                .block_size(lz4::BlockSize::Max1MB)
                .block_mode(lz4::BlockMode::Independent)
                .block_checksum(lz4::liblz4::BlockChecksum::NoBlockChecksum)
                .checksum(lz4::ContentChecksum::ChecksumEnabled)
                .build(Vec::with_capacity(data.len() / 2))?;
            e.write_all(data)?;
            let (out, result) = e.finish();
            result.map(|_| out)
        }
        CompressionFormat::Zstd => Err(not_ros1(compression)),
    }
}

const LZ4_MAGIC: u32 = 0x184D_2204;
/// The largest block an LZ4 frame may hold (block maximum size 7: 4 MiB).
const LZ4_MAX_BLOCK: usize = 4 << 20;

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Content at least this large is checksummed on a second thread while it is copied.
const PARALLEL_CHECKSUM_MIN: usize = 256 * 1024;

/// One block of an LZ4 frame: its bytes and whether they are stored uncompressed.
struct Block<'a> {
    data: &'a [u8],
    stored: bool,
}

/// An LZ4 frame of independent blocks, parsed but not decoded.
struct Frame<'a> {
    blocks: Vec<Block<'a>>,
    /// The XXH32 of the frame's content, when the frame carries one.
    content_sum: Option<u32>,
}

/// Parses the frame at the start of `data`; `Ok(None)` for a frame whose blocks are linked.
/// Block checksums are verified here; returns the frame and the bytes after it.
fn parse_frame(data: &[u8]) -> Result<Option<(Frame<'_>, &[u8])>, &'static str> {
    if le32(data, 0) != Some(LZ4_MAGIC) {
        return Err("not an LZ4 frame");
    }
    let (Some(&flg), Some(&_bd)) = (data.get(4), data.get(5)) else {
        return Err("frame header cut short");
    };
    if flg >> 6 != 1 {
        return Err("unknown frame version");
    }
    if flg & 0x20 == 0 {
        return Ok(None);
    }
    let (block_sums, content_sum) = (flg & 0x10 != 0, flg & 0x04 != 0);
    let header = 6 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 };
    if data.len() < header + 1 {
        return Err("frame header cut short");
    }
    if ((xxhash_rust::xxh32::xxh32(&data[4..header], 0) >> 8) & 0xff) as u8 != data[header] {
        return Err("frame header checksum mismatch");
    }
    let mut blocks = Vec::new();
    let mut at = header + 1;
    loop {
        let word = le32(data, at).ok_or("block header cut short")?;
        at += 4;
        if word == 0 {
            break;
        }
        let len = (word & 0x7fff_ffff) as usize;
        let block = data.get(at..at + len).ok_or("block cut short")?;
        at += len;
        if block_sums {
            if le32(data, at) != Some(xxhash_rust::xxh32::xxh32(block, 0)) {
                return Err("block checksum mismatch");
            }
            at += 4;
        }
        blocks.push(Block {
            data: block,
            stored: word & 0x8000_0000 != 0,
        });
    }
    let content_sum = if content_sum {
        let sum = le32(data, at).ok_or("content checksum cut short")?;
        at += 4;
        Some(sum)
    } else {
        None
    };
    Ok(Some((
        Frame {
            blocks,
            content_sum,
        },
        &data[at..],
    )))
}

/// Decodes `frame`'s blocks onto the end of `out`, which may grow to at most `size` bytes.
fn decode_blocks(frame: &Frame, size: usize, out: &mut Vec<u8>) -> Result<(), &'static str> {
    for block in &frame.blocks {
        let room = size - out.len();
        if block.stored {
            if block.data.len() > room {
                return Err("more data than the chunk header says");
            }
            out.extend_from_slice(block.data);
            continue;
        }
        // Room for this block only (a block holds at most 4 MiB): the output grows with what
        // decodes, never to a size the chunk header merely claims.
        out.reserve(room.min(LZ4_MAX_BLOCK));
        let spare = out.spare_capacity_mut();
        // Safety: `block.data` is readable for its length and `spare` (the uninitialised capacity
        // after the bytes so far) writable for `room` bytes; LZ4_decompress_safe never reads or
        // writes outside them and returns how many bytes it wrote.
        let n = unsafe {
            lz4::liblz4::LZ4_decompress_safe(
                block.data.as_ptr().cast(),
                spare.as_mut_ptr().cast(),
                block.data.len() as i32,
                room.min(spare.len()).min(i32::MAX as usize) as i32,
            )
        };
        if n < 0 {
            return Err("corrupted block");
        }
        // Safety: the decoder initialised these `n` bytes.
        unsafe { out.set_len(out.len() + n as usize) };
    }
    Ok(())
}

/// Decodes `frame` onto the end of `out` (at most `size` bytes in all) and checks its content
/// checksum; that of a large frame of stored blocks is computed on a second thread meanwhile.
fn decode_frame(frame: &Frame, size: usize, out: &mut Vec<u8>) -> Result<(), &'static str> {
    let start = out.len();
    let Some(expected) = frame.content_sum else {
        return decode_blocks(frame, size, out);
    };
    let parallel = frame.blocks.iter().all(|b| b.stored)
        && frame.blocks.iter().map(|b| b.data.len()).sum::<usize>() >= PARALLEL_CHECKSUM_MIN;
    let sum = std::thread::scope(|s| {
        // Without a thread (none could be started) the checksum is computed after decoding.
        let hasher = parallel
            .then(|| {
                std::thread::Builder::new()
                    .spawn_scoped(s, || stored_checksum(&frame.blocks))
                    .ok()
            })
            .flatten();
        decode_blocks(frame, size, out)?;
        Ok::<u32, &'static str>(match hasher {
            Some(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => xxhash_rust::xxh32::xxh32(&out[start..], 0),
        })
    })?;
    if sum != expected {
        return Err("content checksum mismatch");
    }
    Ok(())
}

/// The XXH32 of blocks stored uncompressed: their bytes are the frame's content.
fn stored_checksum(blocks: &[Block]) -> u32 {
    let mut hasher = xxhash_rust::xxh32::Xxh32::new(0);
    blocks.iter().for_each(|b| hasher.update(b.data));
    hasher.digest()
}

/// Decodes LZ4 frames of independent blocks (what `roslz4` and the RealSense SDK write) straight
/// into `out`, checking block and content checksums; `None` for frames whose blocks are linked,
/// which need the streaming decoder. The result is exactly `size` bytes or an error.
///
/// Camera pixels do not compress, so such frames are mostly stored blocks: their content checksum
/// is then computed from the input on a second thread while the blocks are copied.
fn lz4_frames(
    mut data: &[u8],
    size: usize,
    out: &mut Vec<u8>,
) -> Option<Result<(), Ros1FormatError>> {
    let fail = |m: &'static str| Some(Err(Ros1FormatError::Lz4Frame(m)));
    out.clear();
    while !data.is_empty() {
        let (frame, rest) = match parse_frame(data) {
            Ok(Some(parsed)) => parsed,
            Ok(None) => return None,
            Err(e) => return fail(e),
        };
        data = rest;
        if let Err(e) = decode_frame(&frame, size, out) {
            return fail(e);
        }
    }
    if out.len() != size {
        return Some(Err(Ros1FormatError::ChunkSize {
            compression: CompressionFormat::Lz4,
            len: out.len(),
            size,
        }));
    }
    Some(Ok(()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_compression_round_trips_and_damage_is_an_error() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for c in [
            CompressionFormat::None,
            CompressionFormat::Bz2,
            CompressionFormat::Lz4,
        ] {
            let packed = compress(c, &data).unwrap();
            assert_eq!(decompress(c, &packed, data.len()).unwrap(), data, "{c:?}");
            assert!(
                decompress(c, &packed, data.len() - 1).is_err(),
                "{c:?} size lie"
            );
            assert!(
                decompress(c, &packed, data.len() + 1).is_err(),
                "{c:?} size lie"
            );
            if c != CompressionFormat::None {
                let cut = &packed[..packed.len() / 2];
                assert!(decompress(c, cut, data.len()).is_err(), "{c:?} truncated");
                let mut bad = packed.clone();
                let mid = bad.len() / 2;
                bad[mid] ^= 0x55;
                bad[mid + 1] ^= 0x55;
                assert!(decompress(c, &bad, data.len()).is_err(), "{c:?} corrupted");
            }
        }
        assert!(compress(CompressionFormat::Zstd, b"x").is_err());
    }

    /// Incompressible content (camera pixels) is stored in the frame's blocks and checksummed on
    /// a second thread: damage to any stored byte or to the checksum is still caught.
    #[test]
    fn stored_blocks_are_checked_in_parallel() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let data: Vec<u8> = (0..3 * 1024 * 1024 + 17)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let packed = compress(CompressionFormat::Lz4, &data).unwrap();
        let (frame, rest) = parse_frame(&packed).unwrap().unwrap();
        assert!(rest.is_empty());
        assert!(frame.blocks.len() > 1 && frame.blocks.iter().all(|b| b.stored));
        assert!(data.len() >= PARALLEL_CHECKSUM_MIN);
        assert_eq!(
            decompress(CompressionFormat::Lz4, &packed, data.len()).unwrap(),
            data
        );

        let content = packed.len() / 2;
        let checksum = packed.len() - 4;
        for at in [content, checksum] {
            let mut bad = packed.clone();
            bad[at] ^= 1;
            let err = decompress(CompressionFormat::Lz4, &bad, data.len())
                .unwrap_err()
                .to_string();
            assert!(err.contains("content checksum mismatch"), "{err}");
        }
    }

    /// A chunk header claiming 4 GiB is refused by the cap before anything is reserved (the
    /// reader used to reserve it), whatever the compression.
    #[test]
    fn a_chunk_claiming_gigabytes_is_refused_before_allocating() {
        for c in [
            CompressionFormat::None,
            CompressionFormat::Bz2,
            CompressionFormat::Lz4,
        ] {
            let packed = compress(c, b"a few bytes").unwrap();
            let err = decompress(c, &packed, u32::MAX as usize).unwrap_err();
            assert!(
                matches!(err, Ros1FormatError::ChunkTooLarge(_)),
                "{c:?}: {err}"
            );
        }
    }
}
