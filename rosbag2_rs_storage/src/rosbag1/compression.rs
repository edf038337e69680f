//! Chunk compression of ROS 1 bags: `none`, `bz2` and `lz4` (the LZ4 frame format as `roslz4`
//! writes it: independent 1 MB blocks, no block checksums, a content checksum; `roslz4` rejects
//! any other flags).

use std::io::{Read, Write};

/// How a chunk's records are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// Stored as is.
    #[default]
    None,
    /// bzip2.
    Bz2,
    /// LZ4 frames.
    Lz4,
}

impl Compression {
    /// The name stored in chunk records and used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Bz2 => "bz2",
            Self::Lz4 => "lz4",
        }
    }

    /// Parses `none`, `bz2` or `lz4`.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "none" => Ok(Self::None),
            "bz2" => Ok(Self::Bz2),
            "lz4" => Ok(Self::Lz4),
            other => Err(format!(
                "unknown chunk compression '{other}' (expected none, bz2 or lz4)"
            )),
        }
    }

    /// Decompresses `data` into exactly `size` bytes; anything else is an error.
    pub fn decompress(self, data: &[u8], size: usize) -> Result<Vec<u8>, String> {
        let mut out = Vec::with_capacity(size);
        // One byte more than announced reveals a chunk whose size field lies.
        let limit = size as u64 + 1;
        let result = match self {
            Self::None => {
                out.extend_from_slice(data);
                Ok(())
            }
            Self::Bz2 => bzip2::read::BzDecoder::new(data)
                .take(limit)
                .read_to_end(&mut out)
                .map(drop),
            Self::Lz4 => match lz4_frames(data, size, &mut out) {
                Some(result) => return result.map(|()| out),
                // Frames with linked blocks: the streaming decoder.
                None => {
                    out.clear();
                    lz4::Decoder::new(data)
                        .and_then(|d| d.take(limit).read_to_end(&mut out))
                        .map(drop)
                }
            },
        };
        result.map_err(|e| format!("{} chunk does not decompress: {e}", self.as_str()))?;
        if out.len() != size {
            return Err(format!(
                "{} chunk holds {} bytes, its header says {size}",
                self.as_str(),
                out.len()
            ));
        }
        Ok(out)
    }

    /// Compresses `data`.
    pub fn compress(self, data: &[u8]) -> std::io::Result<Vec<u8>> {
        match self {
            Self::None => Ok(data.to_vec()),
            Self::Bz2 => {
                let mut e = bzip2::write::BzEncoder::new(
                    Vec::with_capacity(data.len() / 2),
                    bzip2::Compression::best(),
                );
                e.write_all(data)?;
                e.finish()
            }
            Self::Lz4 => {
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
        }
    }
}

const LZ4_MAGIC: u32 = 0x184D_2204;

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Decodes LZ4 frames of independent blocks (what `roslz4` and the RealSense SDK write) straight
/// into `out`, checking block and content checksums with a fast XXH32; `None` for frames whose
/// blocks are linked, which need the streaming decoder. The result is exactly `size` bytes or an
/// error.
fn lz4_frames(mut data: &[u8], size: usize, out: &mut Vec<u8>) -> Option<Result<(), String>> {
    let fail = |m: &str| Some(Err(format!("lz4 chunk does not decompress: {m}")));
    out.clear();
    out.reserve_exact(size);
    while !data.is_empty() {
        if le32(data, 0) != Some(LZ4_MAGIC) {
            return fail("not an LZ4 frame");
        }
        let (Some(&flg), Some(&_bd)) = (data.get(4), data.get(5)) else {
            return fail("frame header cut short");
        };
        if flg >> 6 != 1 {
            return fail("unknown frame version");
        }
        if flg & 0x20 == 0 {
            return None;
        }
        let (block_sums, content_sum) = (flg & 0x10 != 0, flg & 0x04 != 0);
        let header = 6 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 };
        if data.len() < header + 1 {
            return fail("frame header cut short");
        }
        if ((xxhash_rust::xxh32::xxh32(&data[4..header], 0) >> 8) & 0xff) as u8 != data[header] {
            return fail("frame header checksum mismatch");
        }
        let frame_start = out.len();
        let mut at = header + 1;
        loop {
            let Some(word) = le32(data, at) else {
                return fail("block header cut short");
            };
            at += 4;
            if word == 0 {
                break;
            }
            let len = (word & 0x7fff_ffff) as usize;
            let Some(block) = data.get(at..at + len) else {
                return fail("block cut short");
            };
            at += len;
            if block_sums {
                if le32(data, at) != Some(xxhash_rust::xxh32::xxh32(block, 0)) {
                    return fail("block checksum mismatch");
                }
                at += 4;
            }
            let room = size - out.len();
            if word & 0x8000_0000 != 0 {
                if block.len() > room {
                    return fail("more data than the chunk header says");
                }
                out.extend_from_slice(block);
            } else {
                let spare = out.spare_capacity_mut();
                // Safety: `block` is readable for its length and `spare` (the uninitialised
                // capacity after the bytes so far) writable for `room` bytes; LZ4_decompress_safe
                // never reads or writes outside them and returns how many bytes it wrote.
                let n = unsafe {
                    lz4::liblz4::LZ4_decompress_safe(
                        block.as_ptr().cast(),
                        spare.as_mut_ptr().cast(),
                        block.len() as i32,
                        room.min(spare.len()).min(i32::MAX as usize) as i32,
                    )
                };
                if n < 0 {
                    return fail("corrupted block");
                }
                // Safety: the decoder initialised these `n` bytes.
                unsafe { out.set_len(out.len() + n as usize) };
            }
        }
        if content_sum {
            if le32(data, at) != Some(xxhash_rust::xxh32::xxh32(&out[frame_start..], 0)) {
                return fail("content checksum mismatch");
            }
            at += 4;
        }
        data = &data[at..];
    }
    if out.len() != size {
        return Some(Err(format!(
            "lz4 chunk holds {} bytes, its header says {size}",
            out.len()
        )));
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
        for c in [Compression::None, Compression::Bz2, Compression::Lz4] {
            let packed = c.compress(&data).unwrap();
            assert_eq!(c.decompress(&packed, data.len()).unwrap(), data, "{c:?}");
            assert!(
                c.decompress(&packed, data.len() - 1).is_err(),
                "{c:?} size lie"
            );
            assert!(
                c.decompress(&packed, data.len() + 1).is_err(),
                "{c:?} size lie"
            );
            if c != Compression::None {
                let cut = &packed[..packed.len() / 2];
                assert!(c.decompress(cut, data.len()).is_err(), "{c:?} truncated");
                let mut bad = packed.clone();
                let mid = bad.len() / 2;
                bad[mid] ^= 0x55;
                bad[mid + 1] ^= 0x55;
                assert!(c.decompress(&bad, data.len()).is_err(), "{c:?} corrupted");
            }
        }
        assert!(Compression::parse("zstd").is_err());
    }
}
