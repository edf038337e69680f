//! `docs/ros2bag_parity.md` holds: every flag it lists as "same", "different" or "ours" for a verb is
//! accepted by `ros2bag-rs <verb>` (the `player` and `recorder` binaries share the argument
//! definitions of `play` and `record`), and every node parameter it names for `play` or
//! `record` is one the node takes, set through a flag the verb accepts. A flag is tried as
//! `ros2bag-rs VERB FLAG --help`: clap prints the help, or wants the flag's value, but never
//! says the flag is unknown; nothing runs.

use std::process::Command;

use rosbag2_rs_transport::{Param, ParamTable, PLAY_PARAMETERS, RECORD_PARAMETERS};

const PARITY: &str = include_str!("../../docs/ros2bag_parity.md");

/// The rows of the verbs' tables that say "same", "different" or "ours" (a flag of ours in the
/// first cell): `(verb, first cell, rest)`.
fn rows() -> Vec<(String, String, String)> {
    let mut verb = None;
    let mut rows = Vec::new();
    for line in PARITY.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            // "## `record`", "## `list`, `reindex`": only single-verb tables list flags.
            verb = heading
                .strip_prefix('`')
                .and_then(|h| h.strip_suffix('`'))
                .map(str::to_string);
            continue;
        }
        let (Some(verb), Some(row)) = (&verb, line.strip_prefix("| ")) else {
            continue;
        };
        let Some((first, rest)) = row.split_once(" | ") else {
            continue;
        };
        if ["same", "different", "ours"]
            .iter()
            .any(|kind| rest.starts_with(kind))
        {
            rows.push((verb.clone(), first.to_string(), rest.to_string()));
        }
    }
    rows
}

/// The `code` spans of `text`.
fn code_spans(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2)
}

/// Whether `ros2bag-rs VERB FLAG --help` takes the flag; else clap's complaint.
fn refusal(verb: &str, flag: &str) -> Option<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_ros2bag-rs"))
        .args([verb, flag, "--help"])
        .env("ROS_DOMAIN_ID", "not a domain")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (stderr.contains("unexpected argument") || stderr.contains("unrecognized subcommand"))
        .then(|| format!("{verb} {flag}: {}", stderr.lines().next().unwrap_or("")))
}

/// `(verb, flag)` for every flag of a "same", "different" or "ours" row of the verbs' tables.
fn listed_flags() -> Vec<(String, String)> {
    flags_of(rows())
}

/// `(verb, flag)` for every flag in the first cell of `rows`.
fn flags_of(rows: Vec<(String, String, String)>) -> Vec<(String, String)> {
    let mut flags = Vec::new();
    for (verb, first, _) in rows {
        for code in code_spans(&first) {
            for spelling in code.split('/') {
                let flag = spelling.split_whitespace().next().unwrap_or_default();
                if flag.starts_with('-') {
                    flags.push((verb.clone(), flag.to_string()));
                }
            }
        }
    }
    flags
}

#[test]
fn every_flag_the_parity_document_lists_is_accepted() {
    let flags = listed_flags();
    for expected in [
        ("record", "--max-cache-duration"),
        ("record", "--stats_max_publishing_rate"),
        ("record", "--throttle"),
        ("play", "-x"),
        ("play", "--send-actions-as-client"),
        ("play", "--progress-bar-update-rate"),
        ("info", "--sort"),
        ("convert", "-o"),
    ] {
        assert!(
            flags
                .iter()
                .any(|(v, f)| (v.as_str(), f.as_str()) == expected),
            "the parser of the document misses {expected:?}: {flags:?}"
        );
    }
    let refused: Vec<String> = flags
        .iter()
        .filter_map(|(verb, flag)| refusal(verb, flag))
        .collect();
    assert!(
        refused.is_empty(),
        "{} of {} listed flags refused:\n{}",
        refused.len(),
        flags.len(),
        refused.join("\n")
    );
}

#[test]
fn every_parameter_the_parity_document_names_is_taken() {
    let mut checked = Vec::new();
    let mut wrong = Vec::new();
    for (verb, _, rest) in rows() {
        let (table, verb): (&ParamTable, &str) = match verb.as_str() {
            "record" => (&RECORD_PARAMETERS, "record"),
            "play" | "burst" => (&PLAY_PARAMETERS, "play"),
            _ => continue,
        };
        for name in code_spans(&rest).filter(|c| {
            ["record.", "play.", "storage."]
                .iter()
                .any(|p| c.starts_with(p))
                && c.chars()
                    .all(|ch| ch.is_ascii_lowercase() || ch == '_' || ch == '.')
        }) {
            checked.push(name.to_string());
            let Some(param) = table.find(name).filter(|p| *p != Param::Unsupported) else {
                wrong.push(format!("{verb}: {name} is not taken"));
                continue;
            };
            let Some(flag) = param.flag() else { continue };
            wrong.extend(refusal(verb, flag));
        }
    }
    for expected in [
        "record.actions",
        "play.send_actions_as_client",
        "storage.max_cache_duration",
    ] {
        assert!(
            checked.iter().any(|c| c == expected),
            "{expected} not found: {checked:?}"
        );
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The parameter names of the document's "Node parameters" table for `node` ("player",
/// "recorder"), with what the row says each stands for.
fn documented_parameters(node: &str) -> Vec<(String, String)> {
    let heading = format!("### The {node} ");
    let mut inside = false;
    let mut out = Vec::new();
    for line in PARITY.lines() {
        if line.starts_with("## ") || line.starts_with("### ") {
            inside = line.starts_with(&heading);
            continue;
        }
        let Some(row) = line.strip_prefix("| `").filter(|_| inside) else {
            continue;
        };
        if let Some((name, rest)) = row.split_once("` | ") {
            out.push((name.to_string(), rest.to_string()));
        }
    }
    out
}

#[test]
fn the_node_parameter_tables_of_the_document_are_the_nodes_tables() {
    for (node, table) in [
        ("player", &PLAY_PARAMETERS),
        ("recorder", &RECORD_PARAMETERS),
    ] {
        let documented = documented_parameters(node);
        let names: Vec<&str> = documented.iter().map(|(n, _)| n.as_str()).collect();
        let taken: Vec<&str> = table.params.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, taken, "the {node}'s parameters in the document");
        for ((name, says), (_, param)) in documented.iter().zip(table.params) {
            let flag = match (param.flag(), *param) {
                (Some(f), _) | (None, Param::Only(f)) => format!("`{f}`"),
                (None, Param::Positional) => "positional".into(),
                (None, Param::Unused) => "unused, as in rosbag2".into(),
                _ => "not taken".into(),
            };
            assert!(
                says.contains(&flag),
                "{node}: {name} is said to be {says}, not {flag}"
            );
        }
    }
}

/// The text of every test source of the repository but this file: Rust files under a `tests`
/// directory or with a `#[cfg(test)]` module, the Python interop tests and the test scripts.
fn test_sources() -> Vec<(std::path::PathBuf, String)> {
    fn walk(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !(name.starts_with('.') || name == "target") {
                    walk(&path, out);
                }
                continue;
            }
            let in_tests = path.components().any(|c| c.as_os_str() == "tests");
            let wanted = match path.extension().and_then(|e| e.to_str()) {
                Some("py") => name.starts_with("test_") || in_tests,
                Some("sh") => true,
                Some("rs") => name != "parity_doc.rs",
                _ => false,
            };
            if let (true, Ok(text)) = (wanted, std::fs::read_to_string(&path)) {
                let rust_test = in_tests || text.contains("#[cfg(test)]");
                if path.extension().is_some_and(|e| e != "rs") || rust_test {
                    out.push((path, text));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
        &mut out,
    );
    out
}

/// A "same" row is a claim that the flag does here what it does in rosbag2: every spelling of
/// every flag of such a row is run by some test (quoted in a test source), so that the claim is
/// checked by a run and not only by the document.
#[test]
fn every_flag_of_a_same_row_is_run_by_a_test() {
    let same = rows()
        .into_iter()
        .filter(|(_, _, rest)| rest.starts_with("same"))
        .collect();
    let sources = test_sources();
    assert!(sources.len() > 50, "{} test sources found", sources.len());
    let unrun: Vec<String> = flags_of(same)
        .into_iter()
        .filter(|(_, flag)| {
            let (double, single) = (format!("\"{flag}\""), format!("'{flag}'"));
            !sources
                .iter()
                .any(|(_, text)| text.contains(&double) || text.contains(&single))
        })
        .map(|(verb, flag)| format!("{verb} {flag}"))
        .collect();
    assert!(unrun.is_empty(), "\"same\" flags no test runs: {unrun:?}");
}
