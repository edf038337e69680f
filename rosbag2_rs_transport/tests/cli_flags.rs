//! The command line's checks that need no bag or graph: contradictory or "off" values of
//! `ros2 bag play`'s flags are refused as rosbag2 refuses them.

use clap::Parser;
use rosbag2_rs_transport::cli::PlayArgs;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    play: PlayArgs,
}

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(["play", "bag"].iter().chain(args))
}

#[test]
fn clock_flags_are_exclusive_and_positive() {
    for args in [
        &["--clock", "10", "--clock-topics", "/a"][..],
        &["--clock", "10", "--clock-topics-all"],
        &["--clock-topics", "/a", "--clock-topics-all"],
    ] {
        assert!(parse(args).is_err(), "{args:?} accepted");
    }
    for hz in ["0", "-5", "nan"] {
        let cli = parse(&["--clock", hz]).unwrap();
        let err = cli.play.options().unwrap_err().to_string();
        assert!(err.contains("--clock"), "{hz}: {err}");
    }
    let cli = parse(&["--clock"]).unwrap();
    assert_eq!(cli.play.options().unwrap().clock_publish_frequency, 40.0);
}

#[test]
fn ros2_bag_spellings_are_taken() {
    let cli = parse(&["-p", "-l", "-r", "2", "-d", "0.5", "-m", "/a:=/b"]).unwrap();
    let o = cli.play.options().unwrap();
    assert!(o.start_paused && o.loop_playback);
    assert_eq!(o.rate, 2.0);
    assert_eq!(o.delay.as_nanos(), 500_000_000);
    assert_eq!(o.remap, [("/a".to_string(), "/b".to_string())]);
}

#[test]
fn control_options_go_before_or_after_the_request() {
    use rosbag2_rs_transport::cli::{ControlAction, ControlArgs};
    #[derive(Parser)]
    struct Control {
        #[command(flatten)]
        control: ControlArgs,
    }
    for args in [
        &["control", "--timeout", "2", "--node", "/p", "is-paused"][..],
        &["control", "is-paused", "--timeout", "2", "--node", "/p"],
    ] {
        let c = Control::try_parse_from(args).unwrap().control;
        assert_eq!(
            (c.timeout, c.node.as_deref()),
            (2.0, Some("/p")),
            "{args:?}"
        );
        assert!(matches!(c.action, ControlAction::IsPaused));
    }
    // The recorder's requests, with negative limits (no limit on that axis).
    let c = Control::try_parse_from([
        "control",
        "snapshot",
        "--filename",
        "crash",
        "--topics",
        "/a",
        "/b",
        "--start",
        "1.5",
        "--post-trigger",
        "2",
    ])
    .unwrap()
    .control;
    assert!(
        c.node.is_none(),
        "the recorder's default node is chosen later"
    );
    match c.action {
        ControlAction::Snapshot {
            filename,
            topics,
            start,
            stop,
            post_trigger,
        } => {
            assert_eq!(filename.as_deref(), Some("crash"));
            assert_eq!(topics, ["/a", "/b"]);
            assert_eq!((start, stop, post_trigger), (Some(1.5), None, 2.0));
        }
        other => panic!("{other:?}"),
    }
    for (args, check) in [
        (&["control", "set-memory", "-5"][..], -5.0),
        (&["control", "set-duration", "-1"], -1.0),
    ] {
        let c = Control::try_parse_from(args).unwrap().control;
        match c.action {
            ControlAction::SetMemory { bytes: v } | ControlAction::SetDuration { seconds: v } => {
                assert_eq!(v, check)
            }
            other => panic!("{other:?}"),
        }
    }
    for verb in ["split", "clear-buffer"] {
        assert!(Control::try_parse_from(["control", verb]).is_ok());
    }
}
