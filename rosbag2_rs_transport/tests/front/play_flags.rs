//! The command line's checks that need no bag or graph: contradictory or "off" values of
//! `ros2 bag play`'s flags are refused as rosbag2 refuses them.

use clap::Parser;
use rosbag2_rs_transport::PlayArgs;

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
    assert_eq!(o.rate.get(), 2.0);
    assert_eq!(o.delay.as_nanos(), 500_000_000);
    assert_eq!(o.remap, [("/a".to_string(), "/b".to_string())]);
}
