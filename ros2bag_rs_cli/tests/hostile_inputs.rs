//! Hostile input never takes the process down: the crafted files of [`crafted`]
//! (a few KB each, size fields that lie) go through `info`, `cat`, `doctor`, `reindex`,
//! `convert` and `play` (in a private network namespace of its own) with the address space
//! limited to 4 GB (`ulimit -v 4000000`, a robot-sized
//! machine). Every command must exit with a status (no signal: no abort, no out-of-memory),
//! not the panic status, and without a panic or allocation-failure message.

mod crafted;

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Output};

/// `ulimit -v 4000000`: 4,000,000 KiB of address space.
const ADDRESS_SPACE: libc::rlim_t = 4_000_000 * 1024;

/// Runs the command line with `args` under [`ADDRESS_SPACE`].
fn run_limited(args: &[&std::ffi::OsStr]) -> Output {
    limited(Command::new(env!("CARGO_BIN_EXE_ros2bag-rs")), args)
}

/// Runs the command line with `args` under [`ADDRESS_SPACE`] in a private network namespace
/// with only `lo` (what it publishes reaches no other machine).
fn run_limited_offline(args: &[&std::ffi::OsStr]) -> Output {
    let mut cmd = Command::new("unshare");
    cmd.args([
        "--net",
        "--",
        "sh",
        "-c",
        "ip link set lo up && exec \"$0\" \"$@\"",
    ])
    .arg(env!("CARGO_BIN_EXE_ros2bag-rs"));
    limited(cmd, args)
}

fn limited(mut cmd: Command, args: &[&std::ffi::OsStr]) -> Output {
    cmd.args(args).env("RUST_BACKTRACE", "0");
    // Safety: setrlimit is async-signal-safe; the closure touches nothing else between fork
    // and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            match libc::setrlimit(libc::RLIMIT_AS, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    cmd.output().expect("run ros2bag-rs")
}

/// What went wrong with a run, if anything.
fn crash(output: &Output) -> Option<String> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let status = output.status;
    let why = if let Some(signal) = status.signal() {
        format!("killed by signal {signal}")
    } else if status.code() == Some(101) {
        "exit status 101 (panic)".to_string()
    } else if stderr.contains("panicked") {
        "a panic message".to_string()
    } else if stderr.contains("memory allocation") || stderr.contains("capacity overflow") {
        "an allocation failure".to_string()
    } else {
        return None;
    };
    Some(format!("{why}; stderr:\n{stderr}"))
}

fn os(s: &str) -> &std::ffi::OsStr {
    s.as_ref()
}

#[test]
fn crafted_inputs_give_errors_not_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let keep = std::env::var_os("CRAFTED_INPUTS_DIR");
    let root = keep.as_deref().map_or(dir.path(), Path::new);
    std::fs::create_dir_all(root).unwrap();
    let inputs = crafted::write_all(root);
    let mut failures = Vec::new();
    for input in &inputs {
        let meta = std::fs::metadata(&input.path).unwrap();
        if meta.is_file() {
            assert!(
                meta.len() < 32 * 1024,
                "{}: {} bytes",
                input.name,
                meta.len()
            );
        }
        let path = input.path.as_os_str();
        let out_dir = tempfile::tempdir().unwrap();
        let reindexed = out_dir.path().join(match input.path.extension() {
            Some(e) if e == "bag" => "reindexed.bag",
            _ => "reindexed",
        });
        let converted = out_dir.path().join("converted");
        let runs: [(&str, Vec<&std::ffi::OsStr>); 6] = [
            ("info", vec![os("info"), path]),
            ("cat", vec![os("cat"), path, os("-n"), os("1")]),
            ("doctor", vec![os("doctor"), path]),
            (
                "reindex",
                vec![os("reindex"), path, os("-o"), reindexed.as_os_str()],
            ),
            (
                "convert",
                vec![os("convert"), path, os("-o"), converted.as_os_str()],
            ),
            (
                "play",
                vec![
                    os("play"),
                    path,
                    os("--disable-keyboard-controls"),
                    os("--playback-duration"),
                    os("1"),
                ],
            ),
        ];
        for (command, args) in runs {
            let output = if command == "play" {
                run_limited_offline(&args)
            } else {
                run_limited(&args)
            };
            // `unshare` failing (no privilege) is not the input's doing.
            assert!(
                !String::from_utf8_lossy(&output.stderr).contains("unshare failed"),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            eprintln!(
                "{} {command}: {:?}\n{}",
                input.name,
                output.status,
                String::from_utf8_lossy(&output.stderr).trim_end()
            );
            if let Some(why) = crash(&output) {
                failures.push(format!("{} {command}: {why}", input.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The bombs are seen as damage: `doctor` reports them (exit status 1) and `cat` fails or
/// prints nothing from the refused chunk.
#[test]
fn doctor_reports_the_lying_chunks() {
    let dir = tempfile::tempdir().unwrap();
    for input in crafted::write_all(dir.path()) {
        if !input.name.ends_with("_bomb") {
            continue;
        }
        let output = run_limited(&[os("doctor"), input.path.as_os_str()]);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{}: {:?}\n{}{}",
            input.name,
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
