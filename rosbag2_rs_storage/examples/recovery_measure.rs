//! Measures crash recovery of an MCAP file: cuts a copy at a fraction of its length, runs
//! `reindex` on it, and compares with what recovering only the complete chunks gives (the copy
//! cut at the start of the chunk the cut falls in, which is what `reindex` recovered before it
//! read cut chunks) and with the untruncated file (ground truth, read strictly).
//!
//! ```text
//! cargo run --release -p rosbag2_rs_storage --example recovery_measure -- BAG_OR_MCAP [FRACTION] [KEEP_DIR]
//! ```
//! `KEEP_DIR` receives the repaired bag, for checking it with other tools.

use std::path::{Path, PathBuf};

use rosbag2_rs_storage::storage::mcap_reader::McapReader;
use rosbag2_rs_storage::storage::open_reader;
use rosbag2_rs_storage::{reindex, OpenMode, Result, SerializedMessage, StorageError};

fn read_all(file: &Path) -> Result<Vec<SerializedMessage>> {
    let mut reader = open_reader(file, OpenMode::Strict)?;
    let mut out = Vec::new();
    while let Some(m) = reader.read_next()? {
        out.push(m);
    }
    Ok(out)
}

/// Reindexes a bag directory holding `bytes` as its only file; returns the messages read back.
fn recover(
    dir: &Path,
    bytes: &[u8],
) -> Result<(rosbag2_rs_storage::ReindexReport, Vec<SerializedMessage>)> {
    std::fs::create_dir_all(dir).map_err(|e| StorageError::io(dir, e))?;
    let file = dir.join("bag_0.mcap");
    std::fs::write(&file, bytes).map_err(|e| StorageError::io(&file, e))?;
    let report = reindex(dir)?;
    Ok((report, read_all(&file)?))
}

fn span(msgs: &[SerializedMessage]) -> f64 {
    match (msgs.first(), msgs.last()) {
        (Some(a), Some(b)) => (b.recv_timestamp - a.recv_timestamp) as f64 / 1e9,
        _ => 0.0,
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let input = PathBuf::from(args.get(1).map_or(".", String::as_str));
    let fraction: f64 = args.get(2).and_then(|f| f.parse().ok()).unwrap_or(0.6);
    let file = if input.is_dir() {
        rosbag2_rs_storage::storage_files_in(&input)?
            .into_iter()
            .find(|f| f.extension().is_some_and(|e| e == "mcap"))
            .ok_or_else(|| StorageError::corrupt(&input, "no .mcap file"))?
    } else {
        input.clone()
    };
    let full = std::fs::read(&file).map_err(|e| StorageError::io(&file, e))?;
    let truth = read_all(&file)?;
    let cut = (full.len() as f64 * fraction) as usize;
    let work = tempfile_dir()?;

    let cut_file = work.join("probe.mcap");
    std::fs::write(&cut_file, &full[..cut]).map_err(|e| StorageError::io(&cut_file, e))?;
    let chunk_start = McapReader::open(&cut_file, OpenMode::Recover)?
        .damage()
        .cut_chunk
        .as_ref()
        .map_or(cut, |c| c.offset as usize);

    let (_, before) = recover(&work.join("before"), &full[..chunk_start])?;
    let (report, after) = recover(&work.join("after"), &full[..cut])?;
    let exact = after.len() <= truth.len()
        && after.iter().zip(&truth).all(|(a, b)| {
            a.topic == b.topic && a.recv_timestamp == b.recv_timestamp && a.data == b.data
        });
    // The messages of the untruncated file whose records end before the cut, read from it.
    println!(
        "{}: {} bytes, {} messages over {:.3} s; cut at {:.0} % ({cut} bytes)",
        file.display(),
        full.len(),
        truth.len(),
        span(&truth),
        fraction * 100.0
    );
    println!(
        "complete chunks only (before): {} messages, {:.3} s",
        before.len(),
        span(&before)
    );
    println!(
        "with the cut chunk's prefix (after): {} messages, {:.3} s (+{} messages, +{:.3} s); \
         identical to the first {} messages of the untruncated file: {exact}",
        after.len(),
        span(&after),
        after.len() - before.len(),
        span(&after) - span(&before),
        after.len()
    );
    for file in &report.files {
        println!("{file}");
    }
    if let Some(keep) = args.get(3) {
        let keep = PathBuf::from(keep);
        std::fs::create_dir_all(&keep).map_err(|e| StorageError::io(&keep, e))?;
        for name in ["bag_0.mcap", "metadata.yaml"] {
            std::fs::copy(work.join("after").join(name), keep.join(name))
                .map_err(|e| StorageError::io(&keep, e))?;
        }
    }
    std::fs::remove_dir_all(&work).map_err(|e| StorageError::io(&work, e))?;
    if !exact {
        return Err(StorageError::corrupt(
            &file,
            "recovered messages differ from the original",
        ));
    }
    Ok(())
}

fn tempfile_dir() -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("recovery_measure_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
    Ok(dir)
}
