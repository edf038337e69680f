//! `export`: a topic's messages as files other programs open directly.
//!
//! - [`image`]: `sensor_msgs/msg/Image` as numbered PNG files, `CompressedImage` as the PNG or
//!   JPEG files they hold, with an `index.csv` of file names and timestamps; optionally a video
//!   made by `ffmpeg` from those frames ([`video`]).
//! - [`csv`]: any topic as one CSV file, fields flattened to columns, optionally only some.
//!
//! Parquet is not written (it would bring a large dependency); CSV opens in pandas directly.

pub mod csv;
pub mod image;
pub mod video;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use rosbag2_rs_codec::msg::{CodecError, TopicDecoder};
use rosbag2_rs_codec::MessageDefinitionCache;
use rosbag2_rs_storage::timing::ArrivalStats;
use rosbag2_rs_storage::SequentialReader;
use rosbag2_rs_storage::StorageError;
use rosbag2_rs_storage::TopicFilter;

/// What can go wrong exporting.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Reading the bag.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The topic's definition, or a message that does not decode.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// Something this exporter does not write.
    #[error("unsupported: {what}")]
    Unsupported {
        /// What.
        what: String,
    },
    /// An image whose fields do not describe its data.
    #[error("bad image: {0}")]
    BadImage(String),
    /// A compressed image whose header claims more pixels than a frame may decode to.
    #[error("PNG: {0}")]
    TooManyPixels(#[from] rosbag2_rs_codec::limits::TooManyPixels),
    /// Writing an output file.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// `--video` without `ffmpeg` on the `PATH`.
    #[error(
        "ffmpeg is not installed (not found on PATH): install it (e.g. `apt install ffmpeg`) to \
         make a video, or export the frames without --video"
    )]
    FfmpegMissing,
    /// `ffmpeg` ran and failed.
    #[error("ffmpeg failed: {0}")]
    Ffmpeg(String),
}

impl From<rosbag2_rs_codec::image::PngError> for ExportError {
    fn from(e: rosbag2_rs_codec::image::PngError) -> Self {
        use rosbag2_rs_codec::image::PngError;
        match e {
            PngError::Unsupported(what) => Self::Unsupported { what },
            PngError::Bad(why) => Self::BadImage(why),
            PngError::TooManyPixels(over) => Self::TooManyPixels(over),
        }
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ExportError + '_ {
    move |error| ExportError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExportKind {
    /// Images for `Image` and `CompressedImage` topics, CSV for the others.
    #[default]
    Auto,
    /// Image files (the topic must be an image topic).
    Images,
    /// A CSV file.
    Csv,
}

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Bags, merged in time order.
    pub inputs: Vec<PathBuf>,
    /// The topic.
    pub topic: String,
    /// Output directory (created; must not hold files of an earlier export).
    pub output: PathBuf,
    /// Images or CSV.
    pub kind: ExportKind,
    /// CSV columns to keep (dotted paths; a path selects what lies under it); empty: all.
    pub fields: Vec<String>,
    /// Receive times (ns) to export from and to.
    pub start: Option<i64>,
    /// See [`ExportOptions::start`].
    pub end: Option<i64>,
    /// Also make this video file from the frames with `ffmpeg`.
    pub video: Option<PathBuf>,
    /// Definitions for a bag that stores none (`--typestore`).
    pub typestore: Option<rosbag2_rs_codec::Typestore>,
}

/// What an export wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportReport {
    /// Files written (frames, or the CSV file), index and video aside.
    pub files: Vec<PathBuf>,
    /// Messages exported.
    pub messages: u64,
    /// The image index or the CSV file.
    pub index: Option<PathBuf>,
    /// The video, when made.
    pub video: Option<PathBuf>,
    /// Messages left out (with the reason of the first), e.g. an unsupported image encoding.
    pub skipped: u64,
    /// Why the first skipped message was left out.
    pub first_skip_reason: Option<String>,
}

fn is_image(type_name: &str) -> Option<bool> {
    match type_name {
        "sensor_msgs/msg/Image" => Some(false),
        "sensor_msgs/msg/CompressedImage" => Some(true),
        _ => None,
    }
}

/// The CSV file name of a topic: `/camera/info` → `camera_info.csv`.
pub fn csv_file_name(topic: &str) -> String {
    let name: String = topic
        .trim_start_matches('/')
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{}.csv", if name.is_empty() { "topic" } else { &name })
}

/// Exports one topic.
pub fn export(options: &ExportOptions) -> Result<ExportReport, ExportError> {
    let mut reader = SequentialReader::open_many(&options.inputs)?;
    let info = reader
        .topics()
        .iter()
        .find(|t| t.topic_metadata.name == options.topic)
        .ok_or_else(|| {
            let names: Vec<&str> = reader
                .topics()
                .iter()
                .map(|t| t.topic_metadata.name.as_str())
                .collect();
            StorageError::InvalidArgument(format!(
                "the bag has no topic '{}' (it has {})",
                options.topic,
                names.join(", ")
            ))
        })?;
    let type_name = info.topic_metadata.type_name.clone();
    let images = match (options.kind, is_image(&type_name)) {
        (ExportKind::Csv, _) | (ExportKind::Auto, None) => false,
        (_, Some(_)) => true,
        (ExportKind::Images, None) => {
            return Err(ExportError::Unsupported {
                what: format!("images from a {type_name} topic (Image or CompressedImage only)"),
            })
        }
    };
    if options.video.is_some() {
        if !images {
            return Err(ExportError::Unsupported {
                what: "a video from a topic exported as CSV".into(),
            });
        }
        video::find_ffmpeg()?;
    }
    let mut cache = MessageDefinitionCache::new().with_typestore(options.typestore);
    let definition = reader.message_definition(&type_name, &mut cache);
    let decoder = TopicDecoder::new(&type_name, &definition)?;
    if options.output.is_dir()
        && std::fs::read_dir(&options.output)
            .map_err(io(&options.output))?
            .next()
            .is_some()
    {
        return Err(StorageError::AlreadyExists(options.output.clone()).into());
    }
    std::fs::create_dir_all(&options.output).map_err(io(&options.output))?;
    reader.set_filter(&TopicFilter::topics([options.topic.clone()]))?;
    if let Some(start) = options.start {
        reader.seek(start)?;
    }
    let mut report = ExportReport::default();
    let mut sink: Box<dyn Sink> = if images {
        Box::new(ImageSink::create(
            &options.output,
            is_image(&type_name) == Some(true),
        )?)
    } else {
        Box::new(CsvSink::create(
            &options.output.join(csv_file_name(&options.topic)),
            options.fields.clone(),
        )?)
    };
    let mut arrivals = ArrivalStats::default();
    while let Some(message) = reader.read_next()? {
        if options.end.is_some_and(|end| message.recv_timestamp > end) {
            break;
        }
        let (value, _) = decoder.decode(&message.data)?;
        match sink.write(&decoder, &value, message.recv_timestamp, &mut report) {
            Ok(()) => {
                report.messages += 1;
                arrivals.add(message.recv_timestamp);
            }
            Err(e @ (ExportError::Unsupported { .. } | ExportError::BadImage(_))) => {
                report.skipped += 1;
                report.first_skip_reason.get_or_insert_with(|| {
                    format!("message at {} ns: {e}", message.recv_timestamp)
                });
            }
            Err(e) => return Err(e),
        }
    }
    report.index = Some(sink.finish()?);
    if let Some(video) = &options.video {
        if report.files.is_empty() {
            return Err(ExportError::Ffmpeg("no frame was exported".into()));
        }
        let rate = arrivals.mean_rate().unwrap_or(1.0);
        video::make_video(&report.files, rate, video)?;
        report.video = Some(video.clone());
    }
    Ok(report)
}

/// Where exported messages go.
trait Sink {
    fn write(
        &mut self,
        decoder: &TopicDecoder,
        value: &rosbag2_rs_codec::msg::Value,
        time: i64,
        report: &mut ExportReport,
    ) -> Result<(), ExportError>;
    /// Flushes; returns the index or CSV file.
    fn finish(self: Box<Self>) -> Result<PathBuf, ExportError>;
}

struct ImageSink {
    dir: PathBuf,
    compressed: bool,
    index_path: PathBuf,
    index: std::io::BufWriter<std::fs::File>,
    next: u64,
}

impl ImageSink {
    fn create(dir: &Path, compressed: bool) -> Result<Self, ExportError> {
        let index_path = dir.join("index.csv");
        let file = std::fs::File::create(&index_path).map_err(io(&index_path))?;
        let mut index = std::io::BufWriter::new(file);
        writeln!(index, "file,timestamp,header_stamp").map_err(io(&index_path))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            compressed,
            index_path,
            index,
            next: 0,
        })
    }
}

impl Sink for ImageSink {
    fn write(
        &mut self,
        decoder: &TopicDecoder,
        value: &rosbag2_rs_codec::msg::Value,
        time: i64,
        report: &mut ExportReport,
    ) -> Result<(), ExportError> {
        let view = decoder.view(value);
        let file = if self.compressed {
            image::compressed_to_file(&view)?
        } else {
            image::image_to_png(&view)?
        };
        let name = format!("frame_{:06}.{}", self.next, file.extension);
        let path = self.dir.join(&name);
        std::fs::write(&path, &file.data).map_err(io(&path))?;
        let stamp = view
            .message("header")
            .and_then(|h| h.message("stamp"))
            .and_then(|s| {
                // A stamp of any type named so: saturating.
                let sec = s.number("sec")? as i64;
                Some(
                    sec.saturating_mul(1_000_000_000)
                        .saturating_add(s.number("nanosec")? as i64),
                )
            })
            .map_or(String::new(), |ns| ns.to_string());
        writeln!(self.index, "{name},{time},{stamp}").map_err(io(&self.index_path))?;
        self.next += 1;
        report.files.push(path);
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<PathBuf, ExportError> {
        self.index.flush().map_err(io(&self.index_path))?;
        Ok(self.index_path)
    }
}

struct CsvSink {
    path: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    fields: Vec<String>,
    /// Column positions, from the first message.
    header: Option<HashMap<String, usize>>,
    width: usize,
    dropped: u64,
}

impl CsvSink {
    fn create(path: &Path, fields: Vec<String>) -> Result<Self, ExportError> {
        let file = std::fs::File::create(path).map_err(io(path))?;
        Ok(Self {
            path: path.to_path_buf(),
            out: std::io::BufWriter::new(file),
            fields,
            header: None,
            width: 0,
            dropped: 0,
        })
    }
}

impl Sink for CsvSink {
    fn write(
        &mut self,
        decoder: &TopicDecoder,
        value: &rosbag2_rs_codec::msg::Value,
        time: i64,
        report: &mut ExportReport,
    ) -> Result<(), ExportError> {
        let columns: Vec<(String, String)> = csv::columns(&decoder.registry, decoder.index, value)
            .into_iter()
            .filter(|(name, _)| csv::selected(name, &self.fields))
            .collect();
        if self.header.is_none() {
            if columns.is_empty() {
                return Err(StorageError::InvalidArgument(format!(
                    "--fields {} select no field of the topic",
                    self.fields.join(",")
                ))
                .into());
            }
            let mut line = String::from("timestamp");
            for (name, _) in &columns {
                line.push(',');
                line.push_str(&csv::cell(name));
            }
            writeln!(self.out, "{line}").map_err(io(&self.path))?;
            self.width = columns.len();
            self.header = Some(
                columns
                    .iter()
                    .enumerate()
                    .map(|(i, (n, _))| (n.clone(), i))
                    .collect(),
            );
            report.files.push(self.path.clone());
        }
        let header = self.header.as_ref().expect("set above");
        let mut cells = vec![String::new(); self.width];
        for (name, text) in columns {
            match header.get(&name) {
                Some(&i) => cells[i] = csv::cell(&text),
                None => self.dropped += 1,
            }
        }
        writeln!(self.out, "{time},{}", cells.join(",")).map_err(io(&self.path))?;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> Result<PathBuf, ExportError> {
        if self.dropped > 0 {
            log::warn!(
                "{}: {} cells of fields absent from the first message were left out (fixed \
                 columns come from the first message)",
                self.path.display(),
                self.dropped
            );
        }
        self.out.flush().map_err(io(&self.path))?;
        Ok(self.path)
    }
}
