//! Crash recovery: reading back what a killed writer or a damaged disk left.
//!
//! - [`mcap`]: the readable prefix of an MCAP chunk cut by the end of the file (whole records of
//!   an uncompressed chunk, whatever the LZ4 or zstd decoder produces from a compressed one).
//! - [`sqlite`]: a `.db3` with a hot write-ahead log (applied by SQLite) or with missing or
//!   damaged pages (every row of every intact table page, read by our own page parser).
//! - [`ros1`]: the readable prefix of a ROS 1 bag chunk cut by the end of the file, and rewriting
//!   an unindexed bag with an index.
//! - [`report`]: what each file gave back and what it lost.
//!
//! `reindex` drives them; readers use [`mcap`] and [`ros1`] in [`crate::OpenMode::Recover`].

pub mod mcap;
pub mod report;
pub mod ros1;
pub mod sqlite;

pub use report::{FileRecovery, Loss, RecoveryAction};

use crate::formats::CompressionFormat;

/// Decompresses as much of `compressed` (the start of a compressed stream whose end is
/// missing or damaged) as the decoder can produce, at most `limit` bytes. Decoders emit only
/// what they have verified structurally (whole LZ4 blocks, zstd blocks, bzip2 blocks), so the
/// result is a prefix of what the whole stream would give; callers keep only whole records.
/// `limit` is clamped to [`crate::limits::max_chunk_bytes`].
pub fn decompress_prefix(kind: CompressionFormat, compressed: &[u8], limit: u64) -> Vec<u8> {
    let limit = limit.min(crate::limits::max_chunk_bytes());
    let mut out = Vec::new();
    let result = match kind {
        CompressionFormat::None => {
            let n = compressed
                .len()
                .min(usize::try_from(limit).unwrap_or(usize::MAX));
            out.extend_from_slice(&compressed[..n]);
            Ok(())
        }
        CompressionFormat::Lz4 => lz4::Decoder::new(compressed)
            .and_then(|d| crate::limits::read_bounded(d, limit, &mut out)),
        CompressionFormat::Zstd => zstd::stream::read::Decoder::with_buffer(compressed)
            .and_then(|d| crate::limits::read_bounded(d, limit, &mut out)),
        CompressionFormat::Bz2 => {
            crate::limits::read_bounded(bzip2::read::BzDecoder::new(compressed), limit, &mut out)
        }
    };
    if let Err(e) = result {
        log::debug!(
            "{kind:?} stream ends after {} decoded bytes: {e}",
            out.len()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn data() -> Vec<u8> {
        (0..300_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect()
    }

    #[test]
    fn every_prefix_of_a_compressed_stream_decodes_to_a_prefix() {
        let data = data();
        let lz4 = {
            let mut e = lz4::EncoderBuilder::new().build(Vec::new()).unwrap();
            e.write_all(&data).unwrap();
            e.finish().0
        };
        let zstd = zstd::bulk::compress(&data, 3).unwrap();
        let bz2 = {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
            e.write_all(&data).unwrap();
            e.finish().unwrap()
        };
        for (kind, packed) in [
            (CompressionFormat::Lz4, lz4),
            (CompressionFormat::Zstd, zstd),
            (CompressionFormat::Bz2, bz2),
            (CompressionFormat::None, data.clone()),
        ] {
            let whole = decompress_prefix(kind, &packed, u64::MAX);
            assert_eq!(whole, data, "{kind:?}");
            let mut last = 0;
            for cut in (0..packed.len()).step_by(packed.len() / 50 + 1) {
                let part = decompress_prefix(kind, &packed[..cut], u64::MAX);
                assert!(data.starts_with(&part), "{kind:?} cut {cut}");
                assert!(part.len() >= last, "{kind:?} cut {cut}");
                last = part.len();
            }
            assert!(last > 0, "{kind:?}: a long prefix decodes to something");
            assert_eq!(decompress_prefix(kind, &packed, 10).len(), 10);
        }
    }
}
