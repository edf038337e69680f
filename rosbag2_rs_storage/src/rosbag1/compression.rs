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
            Self::Lz4 => lz4::Decoder::new(data)
                .and_then(|d| d.take(limit).read_to_end(&mut out))
                .map(drop),
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
