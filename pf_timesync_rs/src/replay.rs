//! The replay protocol of `pf-timesync replay`: CSV lines in, one answer
//! line per conversion out.
//!
//! | line | meaning |
//! |------|---------|
//! | `p,<raw>,<ros_ns>` | passive sample: raw u64 sensor time of the packet's first point, ROS ns of its evaluation minus the packet's measuring duration |
//! | `a,<raw>,<ros_before_ns>,<ros_after_ns>` | active sample |
//! | `r` | reset (non-zero `scan_status`): passive samples are dropped |
//! | `c,<raw>` | convert: answers the ROS time in ns, or `none` before the estimator can answer |
//!
//! Blank lines and lines starting with `#` are skipped. Anything else stops
//! the replay with an error naming the line number and its content.

use crate::sync::Synchronizer;
use crate::TimeSyncError;
use rosbag2_rs_clock::Time;
use std::fmt;
use std::io::{BufRead, Write};

/// Why a line was not understood.
#[derive(Debug, Clone, PartialEq)]
pub enum LineFault {
    /// The line is not valid UTF-8.
    NotUtf8,
    /// The record type (first field) is not `p`, `a`, `r` or `c`.
    UnknownRecord,
    /// Wrong number of fields for the record type.
    FieldCount {
        /// Record type.
        record: &'static str,
        /// Fields expected, the record type included.
        expected: usize,
        /// Fields found.
        found: usize,
    },
    /// A field is not a number of the right type.
    BadNumber {
        /// Which field.
        field: &'static str,
    },
    /// The sample was refused (e.g. answer before request).
    Rejected(TimeSyncError),
}

impl fmt::Display for LineFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineFault::NotUtf8 => f.write_str("not valid UTF-8"),
            LineFault::UnknownRecord => f.write_str("unknown record type (expected p, a, r or c)"),
            LineFault::FieldCount {
                record,
                expected,
                found,
            } => write!(f, "`{record}` takes {expected} fields, found {found}"),
            LineFault::BadNumber { field } => write!(f, "{field} is not a valid number"),
            LineFault::Rejected(e) => write!(f, "sample rejected: {e}"),
        }
    }
}

/// A replay failure.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A line that is not understood or was refused.
    #[error("line {line}: {fault}: `{content}`")]
    Line {
        /// 1-based line number.
        line: usize,
        /// The line (shortened to 200 characters).
        content: String,
        /// What is wrong with it.
        fault: LineFault,
    },
    /// Reading input or writing output failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

/// Counts of a finished replay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplaySummary {
    /// Lines read.
    pub lines: usize,
    /// `c` lines answered.
    pub conversions: usize,
    /// Of those, answered `none`.
    pub unanswered: usize,
}

/// One parsed line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// `p,<raw>,<ros_ns>`
    Passive {
        /// Raw sensor time.
        raw: u64,
        /// ROS ns.
        ros_ns: i64,
    },
    /// `a,<raw>,<before>,<after>`
    Active {
        /// Raw sensor time.
        raw: u64,
        /// ROS ns when the request was sent.
        before_ns: i64,
        /// ROS ns when the answer arrived.
        after_ns: i64,
    },
    /// `r`
    Reset,
    /// `c,<raw>`
    Convert {
        /// Raw sensor time.
        raw: u64,
    },
}

fn number<T: std::str::FromStr>(s: &str, field: &'static str) -> Result<T, LineFault> {
    s.trim().parse().map_err(|_| LineFault::BadNumber { field })
}

/// Parse one line; `Ok(None)` for blank and comment lines.
pub fn parse_line(line: &str) -> Result<Option<Record>, LineFault> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    let fields: Vec<&str> = line.split(',').collect();
    let count = |record: &'static str, expected: usize| {
        if fields.len() == expected {
            Ok(())
        } else {
            Err(LineFault::FieldCount {
                record,
                expected,
                found: fields.len(),
            })
        }
    };
    let record = match fields[0].trim() {
        "p" => {
            count("p", 3)?;
            Record::Passive {
                raw: number(fields[1], "raw sensor time")?,
                ros_ns: number(fields[2], "ROS time")?,
            }
        }
        "a" => {
            count("a", 4)?;
            Record::Active {
                raw: number(fields[1], "raw sensor time")?,
                before_ns: number(fields[2], "request ROS time")?,
                after_ns: number(fields[3], "answer ROS time")?,
            }
        }
        "r" => {
            count("r", 1)?;
            Record::Reset
        }
        "c" => {
            count("c", 2)?;
            Record::Convert {
                raw: number(fields[1], "raw sensor time")?,
            }
        }
        _ => return Err(LineFault::UnknownRecord),
    };
    Ok(Some(record))
}

impl Record {
    /// The protocol line of this record (without the newline).
    pub fn to_line(&self) -> String {
        match *self {
            Record::Passive { raw, ros_ns } => format!("p,{raw},{ros_ns}"),
            Record::Active {
                raw,
                before_ns,
                after_ns,
            } => format!("a,{raw},{before_ns},{after_ns}"),
            Record::Reset => "r".to_string(),
            Record::Convert { raw } => format!("c,{raw}"),
        }
    }
}

/// What applying a record gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A sample or reset was fed.
    Fed,
    /// A `c` record: the ROS time, or `None` before the estimator can answer.
    Converted(Option<Time>),
}

/// Apply one record to `sync`.
pub fn apply(sync: &mut Synchronizer, record: Record) -> Result<Outcome, TimeSyncError> {
    match record {
        Record::Passive { raw, ros_ns } => sync.add_passive(raw, Time::ros(ros_ns))?,
        Record::Active {
            raw,
            before_ns,
            after_ns,
        } => sync.add_active(raw, Time::ros(before_ns), Time::ros(after_ns))?,
        Record::Reset => sync.reset_passive(),
        Record::Convert { raw } => return Ok(Outcome::Converted(sync.to_ros(raw)?)),
    }
    Ok(Outcome::Fed)
}

fn shorten(line: &str) -> String {
    let trimmed = line.trim_end_matches(['\n', '\r']);
    if trimmed.chars().count() > 200 {
        let mut s: String = trimmed.chars().take(200).collect();
        s.push('…');
        s
    } else {
        trimmed.to_string()
    }
}

/// Run the protocol from `input` to `output` (flushed after every answer).
pub fn run<R: BufRead, W: Write>(
    sync: &mut Synchronizer,
    mut input: R,
    mut output: W,
) -> Result<ReplaySummary, ReplayError> {
    let mut summary = ReplaySummary::default();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        summary.lines += 1;
        let line_no = summary.lines;
        let fail = |content: String, fault: LineFault| ReplayError::Line {
            line: line_no,
            content,
            fault,
        };
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => t,
            Err(_) => {
                return Err(fail(
                    shorten(&String::from_utf8_lossy(&buf)),
                    LineFault::NotUtf8,
                ))
            }
        };
        let Some(record) = parse_line(text).map_err(|f| fail(shorten(text), f))? else {
            continue;
        };
        let outcome =
            apply(sync, record).map_err(|e| fail(shorten(text), LineFault::Rejected(e)))?;
        if let Outcome::Converted(answer) = outcome {
            summary.conversions += 1;
            match answer {
                Some(t) => writeln!(output, "{}", t.nanos())?,
                None => {
                    summary.unanswered += 1;
                    writeln!(output, "none")?;
                }
            }
            output.flush()?;
        }
    }
    output.flush()?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_records() {
        assert_eq!(
            parse_line("p,4294967296,1000\n"),
            Ok(Some(Record::Passive {
                raw: 1 << 32,
                ros_ns: 1000
            }))
        );
        assert_eq!(
            parse_line("a,1,-2,3"),
            Ok(Some(Record::Active {
                raw: 1,
                before_ns: -2,
                after_ns: 3
            }))
        );
        assert_eq!(parse_line(" r "), Ok(Some(Record::Reset)));
        assert_eq!(parse_line("c,7\r\n"), Ok(Some(Record::Convert { raw: 7 })));
        assert_eq!(parse_line(""), Ok(None));
        assert_eq!(parse_line("# comment"), Ok(None));
        for line in ["p,4294967296,1000", "a,1,-2,3", "r", "c,7"] {
            let record = parse_line(line).unwrap().unwrap();
            assert_eq!(record.to_line(), line);
        }
        assert_eq!(parse_line("x,1"), Err(LineFault::UnknownRecord));
        assert_eq!(
            parse_line("c"),
            Err(LineFault::FieldCount {
                record: "c",
                expected: 2,
                found: 1
            })
        );
        assert_eq!(
            parse_line("p,-1,5"),
            Err(LineFault::BadNumber {
                field: "raw sensor time"
            })
        );
        assert_eq!(
            parse_line("p,1,99999999999999999999"),
            Err(LineFault::BadNumber { field: "ROS time" })
        );
    }
}
