//! The `pf-timesync` binary speaks the replay protocol exactly.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pf-timesync"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary starts");
    let mut stdin = child.stdin.take().expect("stdin");
    // The child may exit early on a bad line: ignore a broken pipe.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    child.wait_with_output().expect("binary finishes")
}

fn stdout(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Raw time of `secs` whole seconds plus `quarter` quarters.
fn raw(secs: u64, quarters: u64) -> u64 {
    (secs << 32) | (quarters << 30)
}

#[test]
fn pf_mean_answers_exactly() {
    // Sensor 1000 s, 1000.1 s (rate-limited away with period 0... use 10 s period),
    // PF averaging: see the hand computation in pf.rs tests.
    let input = format!(
        "c,{c0}\np,{p0},100000000000\n# comment\n\nc,{c1}\nr\nc,{c1}\na,{a0},200000000000,200000004000\nc,{c1}\n",
        c0 = raw(1000, 0),
        p0 = raw(1000, 0),
        c1 = raw(1001, 1),
        a0 = raw(1000, 0),
    );
    let out = run(
        &["replay", "--estimator", "pf-mean", "--period-ms", "10000"],
        &input,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout(&out),
        vec![
            "none",
            "101250000000", // offset of the one passive sample
            "none",         // after the reset
            "201250000000", // the active sample, request time as PC time
        ]
    );
}

#[test]
fn regression_and_estimator_names() {
    // Three samples as in pf.rs: regression factor 1.5, base 1/60 s.
    let lines = [
        format!("p,{},{}", raw(1000, 0), 100_000_000_000u64),
        format!("p,{},{}", (1000u64 << 32) + 429_496_730, 100_200_000_000u64),
        format!("p,{},{}", (1000u64 << 32) + 858_993_460, 100_300_000_000u64),
        format!("c,{}", (1000u64 << 32) + 1_288_490_189),
    ];
    let out = run(
        &[
            "replay",
            "--estimator",
            "pf-regression",
            "--period-ms",
            "10000",
        ],
        &(lines.join("\n") + "\n"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout(&out), vec!["100466666666"]);
    for name in ["envelope", "bounds", "max-separation", "brackets"] {
        let out = run(&["replay", "--estimator", name], &(lines.join("\n") + "\n"));
        assert!(out.status.success());
        assert_eq!(stdout(&out).len(), 1);
    }
    // Without --estimator: brackets.
    let default = run(&["replay"], &(lines.join("\n") + "\n"));
    let brackets = run(
        &["replay", "--estimator", "brackets"],
        &(lines.join("\n") + "\n"),
    );
    assert!(default.status.success());
    assert_eq!(stdout(&default), stdout(&brackets));
    // Where the scanner reads its clock: a parameter of brackets, checked.
    let out = run(
        &["replay", "--read-position", "0.4"],
        &(lines.join("\n") + "\n"),
    );
    assert!(out.status.success());
    assert_eq!(stdout(&out).len(), 1);
    let out = run(
        &["replay", "--read-position", "1.5"],
        &(lines.join("\n") + "\n"),
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("read_position"));
    let help = run(&["replay", "--help"], "");
    assert!(String::from_utf8_lossy(&help.stdout).contains("[default: brackets]"));
    let out = run(&["replay", "--estimator", "kalman"], "");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pf-mean, pf-regression, envelope, bounds, max-separation, brackets"),
        "{err}"
    );
}

#[test]
fn malformed_lines_fail_clearly() {
    let cases = [
        ("c,1\nq,5\n", 2, "q,5", "unknown record type"),
        (
            "c,1\nc,1\np,abc,5\n",
            3,
            "p,abc,5",
            "raw sensor time is not a valid number",
        ),
        ("a,1,2\n", 1, "a,1,2", "`a` takes 4 fields, found 3"),
        (
            "a,1,20,10\n",
            1,
            "a,1,20,10",
            "answer at 10 ns is before the request at 20 ns",
        ),
        ("c,-1\n", 1, "c,-1", "not a valid number"),
        ("r,1\n", 1, "r,1", "`r` takes 1 fields, found 2"),
    ];
    for (input, line, content, reason) in cases {
        let out = run(&["replay", "--estimator", "envelope"], input);
        assert!(!out.status.success(), "{input:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("line {line}")), "{err}");
        assert!(err.contains(content), "{err}");
        assert!(err.contains(reason), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        // Lines before the bad one were answered.
        assert_eq!(stdout(&out).len(), line - 1, "{input:?}");
    }
    // Invalid UTF-8.
    let mut child = Command::new(env!("CARGO_BIN_EXE_pf-timesync"))
        .args(["replay", "--estimator", "bounds"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(b"c,\xff\n");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1: not valid UTF-8"));
}

#[test]
fn simulate_then_replay() {
    let sim = Command::new(env!("CARGO_BIN_EXE_pf-timesync"))
        .args([
            "simulate",
            "--seed",
            "3",
            "--duration-s",
            "5",
            "--http-ms",
            "250",
        ])
        .output()
        .unwrap();
    assert!(sim.status.success());
    let log = String::from_utf8(sim.stdout).unwrap();
    let converts = log.lines().filter(|l| l.starts_with("c,")).count();
    assert_eq!(converts, 100);
    let out = run(&["replay", "--estimator", "bounds"], &log);
    assert!(out.status.success());
    let answers = stdout(&out);
    assert_eq!(answers.len(), converts);
    assert!(answers.iter().all(|a| a.parse::<i64>().is_ok()));
}

#[test]
fn loaded_host_log_replays_with_brackets() {
    let truth_path = std::env::temp_dir().join(format!(
        "pf_timesync_loaded_truth_{}.csv",
        std::process::id()
    ));
    let sim = Command::new(env!("CARGO_BIN_EXE_pf-timesync"))
        .args(["simulate", "--host", "loaded", "--seed", "4"])
        .args(["--duration-s", "20", "--http-ms", "250", "--truth"])
        .arg(&truth_path)
        .output()
        .unwrap();
    assert!(sim.status.success());
    let truth = std::fs::read_to_string(&truth_path).unwrap();
    std::fs::remove_file(&truth_path).unwrap();
    let log = String::from_utf8(sim.stdout).unwrap();
    let out = run(&["replay", "--estimator", "brackets"], &log);
    assert!(out.status.success());
    let answers = stdout(&out);
    let truths: Vec<i64> = truth
        .lines()
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(answers.len(), 400);
    assert_eq!(truths.len(), 400);
    // After the first 3 s every stamp is within 120 µs of the truth.
    for (a, t) in answers.iter().zip(&truths).skip(60) {
        let err = a.parse::<i64>().unwrap() - t;
        assert!(err.abs() <= 120_000, "{err}");
    }
}
