//! Writes every crafted file of issue 48 (`tests/crafted`, the generators the hostile-input tests
//! use) into a directory, with a manifest for `tools/hostile_cli.sh`, which runs every command
//! of `ros2bag-rs` on them: `manifest.tsv`, one line per input with its name, its path, the
//! topic `export` is asked for, how many messages `cat` must print once each (`-` for any)
//! and what an error about it must name (an extended regular expression).
//!
//! `cargo run -p rosbag2_rs_tools --example crafted_files -- DIR`

#[path = "../tests/crafted/mod.rs"]
mod crafted;

use std::io::Write;
use std::path::PathBuf;

fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: crafted_files DIR");
        std::process::exit(2);
    };
    std::fs::create_dir_all(&dir).expect("create the directory");
    let mut manifest =
        std::fs::File::create(dir.join("manifest.tsv")).expect("create manifest.tsv");
    for input in crafted::write_all(&dir) {
        let messages = input.messages.map_or("-".into(), |n| n.to_string());
        writeln!(
            manifest,
            "{}\t{}\t{}\t{messages}\t{}",
            input.name,
            input.path.display(),
            input.topic,
            input.problem
        )
        .expect("write manifest.tsv");
    }
}
