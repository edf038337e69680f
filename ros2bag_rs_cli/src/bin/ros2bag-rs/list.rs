//! `list`: the storage, converter and compression plugins built in (like `ros2 bag list`).

/// `list`'s flags.
#[derive(clap::Args)]
pub struct ListArgs {
    /// Which kind of plugin.
    #[arg(value_enum)]
    pub plugin_type: PluginType,
    /// Also say what each one is.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Runs `list`.
pub fn run(args: &ListArgs) -> anyhow::Result<()> {
    for (name, what) in args.plugin_type.plugins() {
        if args.verbose {
            println!("{name}: {what}");
        } else {
            println!("{name}");
        }
    }
    Ok(())
}

/// The plugin kinds of `ros2 bag list`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PluginType {
    /// Storage plugins (file formats).
    Storage,
    /// Serialization converters.
    Converter,
    /// Compressors.
    Compressor,
    /// Decompressors.
    Decompressor,
}

impl PluginType {
    /// The built-in plugins of this kind, with what they are.
    fn plugins(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Storage => &[
                ("mcap", "MCAP files (.mcap), read and written"),
                ("sqlite3", "SQLite3 databases (.db3), read and written"),
                (
                    "rosbag_v2",
                    "ROS 1 bags (.bag), read and written, converted to and from CDR",
                ),
            ],
            Self::Converter => &[("cdr", "CDR, the serialization of every ROS 2 middleware")],
            Self::Compressor | Self::Decompressor => &[(
                "zstd",
                "Zstandard, for rosbag2's file and message compression (--compression-mode)",
            )],
        }
    }
}
