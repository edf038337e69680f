//! The command line of a build without the `transport` feature: the file tools only, on the
//! console logger, and the node verbs refused by name.

use anyhow::Result;
use clap::Parser;

use crate::Cli;

/// No node runs in this build.
pub struct Node;

/// Parses the command line and installs the console logger.
pub fn parse_and_init_logging() -> (Cli, Node) {
    let cli = Cli::parse();
    rosbag2_rs_tools::console::install(cli.log_level, "ros2bag_rs", true, None);
    (cli, Node)
}

/// Exits with `code`.
pub fn exit(code: i32) -> ! {
    std::process::exit(code)
}

/// Reports `e` ([`rosbag2_rs_tools::console::report`]) and exits.
pub fn fail(e: anyhow::Error) -> ! {
    exit(rosbag2_rs_tools::console::report(e.as_ref()))
}

/// The verbs of the `transport` feature, refused by name; any other word is not a verb.
pub fn missing(words: &[String]) -> Result<()> {
    let verb = words.first().map_or("", String::as_str);
    if ["play", "burst", "record", "control", "zenoh-router"].contains(&verb) {
        anyhow::bail!(
            "`{verb}` needs the `transport` feature: this ros2bag-rs holds the file tools only \
             (built with --no-default-features); build it with the default features (or \
             `--features transport`)"
        )
    }
    anyhow::bail!("unrecognized subcommand '{verb}' (see `ros2bag-rs --help`)")
}
