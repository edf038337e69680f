//! The zstd codec as rosbag2's `rosbag2_compression_zstd` plugin uses it: a message is one frame
//! compressed at level 1 with its content size in the frame header; a file is one streamed
//! frame at zstd's default level (ours with a content checksum).

use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::Path;

use crate::limits;

/// The magic number that starts every zstd frame.
pub const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
/// Level rosbag2 compresses messages with.
pub const MESSAGE_LEVEL: i32 = 1;
/// Level rosbag2 compresses files with (zstd's default).
pub const FILE_LEVEL: i32 = 3;

/// Whether `head` starts with a zstd frame.
pub fn is_zstd(head: &[u8]) -> bool {
    head.starts_with(&MAGIC)
}

/// Compresses one message's data into a single frame (level 1, content size included).
pub fn compress_message(data: &[u8]) -> io::Result<Vec<u8>> {
    zstd::bulk::compress(data, MESSAGE_LEVEL)
}

/// Decompresses one message's data: one or more frames, with or without a content size. The
/// output grows with what decompresses; a message larger than [`limits::max_chunk_bytes`], or
/// than the content size of its single frame, is an error.
pub fn decompress_message(data: &[u8]) -> io::Result<Vec<u8>> {
    let invalid =
        |e: Box<dyn std::error::Error + Send + Sync>| io::Error::new(io::ErrorKind::InvalidData, e);
    let declared = match zstd::zstd_safe::get_frame_content_size(data) {
        Ok(size) => size.filter(|_| frame_is_whole_input(data)),
        Err(_) => {
            return Err(invalid(
                "not a zstd frame (bad magic number or header)".into(),
            ))
        }
    };
    let limit = limits::check_chunk_size(declared.unwrap_or_else(limits::max_chunk_bytes))
        .map_err(|e| invalid(e.into()))?;
    let mut out = Vec::new();
    limits::read_declared(
        zstd::stream::read::Decoder::with_buffer(data)?,
        limit,
        &mut out,
    )?;
    match declared {
        Some(size) if out.len() as u64 != size => Err(invalid(
            format!(
                "zstd frame decompresses to {} bytes, its header says {size}",
                out.len()
            )
            .into(),
        )),
        None if out.len() > limit => Err(invalid(
            limits::ChunkTooLarge {
                size: out.len() as u64,
                cap: limit as u64,
            }
            .into(),
        )),
        _ => Ok(out),
    }
}

/// Whether the first frame spans all of `data` (else several frames follow one another).
fn frame_is_whole_input(data: &[u8]) -> bool {
    zstd::zstd_safe::find_frame_compressed_size(data).is_ok_and(|n| n == data.len())
}

/// Compresses the file `source` into the new file `target` (one streamed frame) and makes it
/// durable.
pub fn compress_file(source: &Path, target: &Path) -> io::Result<()> {
    let mut input = BufReader::with_capacity(1 << 20, File::open(source)?);
    let output = File::options().write(true).create_new(true).open(target)?;
    let mut encoder = zstd::stream::Encoder::new(output, FILE_LEVEL)?;
    // A checksum (which rosbag2 leaves out, and reads all the same) turns a damaged file into an
    // error instead of wrong data.
    encoder.include_checksum(true)?;
    io::copy(&mut input, &mut encoder)?;
    let mut output = encoder.finish()?;
    output.flush()?;
    output.sync_all()
}

/// The decompressed size the first frame header of the file `source` declares, if any.
pub fn declared_file_size(source: &Path) -> io::Result<Option<u64>> {
    let mut head = Vec::with_capacity(18);
    File::open(source)?.take(18).read_to_end(&mut head)?;
    Ok(zstd::zstd_safe::get_frame_content_size(&head)
        .ok()
        .flatten())
}

/// Decompresses the file `source` into `target`, at most `limit + 1` bytes (the caller compares
/// what was written with `limit`).
pub fn decompress_file_into(source: &Path, target: &mut impl Write, limit: u64) -> io::Result<u64> {
    let decoder = zstd::stream::Decoder::new(File::open(source)?)?;
    io::copy(&mut decoder.take(limit.saturating_add(1)), target)
}

/// The first bytes (up to `n`) of the decompressed content of `source`.
pub fn decompressed_head(source: &Path, n: usize) -> io::Result<Vec<u8>> {
    let decoder = zstd::stream::Decoder::new(File::open(source)?)?;
    let mut head = Vec::with_capacity(n);
    decoder.take(n as u64).read_to_end(&mut head)?;
    Ok(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_round_trip_and_header() {
        let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i % 7).to_le_bytes()).collect();
        let packed = compress_message(&data).unwrap();
        assert!(is_zstd(&packed));
        assert_eq!(
            zstd::zstd_safe::get_frame_content_size(&packed).unwrap(),
            Some(data.len() as u64)
        );
        assert_eq!(decompress_message(&packed).unwrap(), data);
        assert_eq!(
            decompress_message(&compress_message(&[]).unwrap()).unwrap(),
            b""
        );
    }

    #[test]
    fn streamed_frames_without_size_and_garbage() {
        let mut streamed = Vec::new();
        let mut enc = zstd::stream::Encoder::new(&mut streamed, 3).unwrap();
        enc.write_all(b"abc").unwrap();
        enc.finish().unwrap();
        streamed.extend(compress_message(b"def").unwrap());
        assert_eq!(decompress_message(&streamed).unwrap(), b"abcdef");
        assert!(decompress_message(b"plain data").is_err());
        let mut cut = compress_message(&[7u8; 5000]).unwrap();
        cut.truncate(cut.len() / 2);
        assert!(decompress_message(&cut).is_err());
    }

    /// A frame whose header claims 3 GiB of content is refused by the cap before anything is
    /// reserved (it used to reserve the 3 GiB).
    #[test]
    fn a_frame_claiming_gigabytes_is_refused_before_allocating() {
        let mut frame = MAGIC.to_vec();
        frame.push(0xA0); // single segment, 4-byte content size
        frame.extend((3u32 << 30).to_le_bytes());
        frame.extend([0x19, 0, 0]); // last block, raw, 3 bytes
        frame.extend(b"abc");
        let err = decompress_message(&frame).unwrap_err();
        let inner = err
            .get_ref()
            .and_then(|e| e.downcast_ref::<limits::ChunkTooLarge>());
        assert_eq!(inner.map(|e| e.size), Some(3 << 30), "{err}");
    }
}
