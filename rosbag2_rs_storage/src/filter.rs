//! Topic selection shared by readers, the player and the recorder: an include list and regex,
//! and an exclude list and regex, with `ros2 bag`'s semantics.

use crate::error::{Result, StorageError};

/// A regular expression over topic, service or action names, read as rosbag2 reads its
/// `--regex` options (C++ `std::regex`, ECMAScript grammar): look-ahead and look-behind
/// (`^(?!/rosout)`) and back-references work, through `fancy-regex`.
#[derive(Debug, Clone)]
pub struct NameRegex(fancy_regex::Regex);

impl NameRegex {
    /// Matches anywhere in a name, as rosbag2's recorder and `convert` search (`regex_search`).
    pub fn search(pattern: &str) -> Result<Self> {
        Self::compile(pattern, pattern)
    }

    /// Matches whole names only, as rosbag2's player and readers do (`regex_match`).
    pub fn whole(pattern: &str) -> Result<Self> {
        Self::compile(&format!("^(?:{pattern})$"), pattern)
    }

    fn compile(regex: &str, pattern: &str) -> Result<Self> {
        fancy_regex::Regex::new(regex).map(Self).map_err(|e| {
            StorageError::InvalidArgument(format!("invalid topic regex '{pattern}': {e}"))
        })
    }

    /// Whether the expression matches `name` (an expression that backtracks beyond
    /// `fancy-regex`'s limit on it does not).
    pub fn is_match(&self, name: &str) -> bool {
        self.0.is_match(name).unwrap_or(false)
    }

    /// The expression as compiled.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

/// True if a token of the name starts with `_`: ROS hides such topics (rclpy's and rosbag2's
/// rule), and `ros2 bag record` and `convert` leave them out unless asked.
pub fn is_hidden(topic: &str) -> bool {
    topic.split('/').any(|token| token.starts_with('_'))
}

/// Which topics to read. Empty include criteria select every topic; exclusion always wins.
#[derive(Debug, Clone, Default)]
pub struct TopicFilter {
    /// Topics selected by exact name.
    pub topics: Vec<String>,
    /// Topics selected by a regular expression matching the whole name.
    pub regex: Option<NameRegex>,
    /// Topics excluded by exact name.
    pub exclude_topics: Vec<String>,
    /// Topics excluded by a regular expression matching the whole name.
    pub exclude_regex: Option<NameRegex>,
}

impl TopicFilter {
    /// Selects all topics.
    pub fn all() -> Self {
        Self::default()
    }

    /// Selects exactly the listed topics.
    pub fn topics<S: Into<String>>(topics: impl IntoIterator<Item = S>) -> Self {
        Self {
            topics: topics.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// Builds a filter from command-line style strings, compiling the regexes.
    pub fn from_parts(
        topics: Vec<String>,
        regex: Option<&str>,
        exclude_topics: Vec<String>,
        exclude_regex: Option<&str>,
    ) -> Result<Self> {
        Ok(Self {
            topics,
            regex: regex
                .filter(|r| !r.is_empty())
                .map(NameRegex::whole)
                .transpose()?,
            exclude_topics,
            exclude_regex: exclude_regex
                .filter(|r| !r.is_empty())
                .map(NameRegex::whole)
                .transpose()?,
        })
    }

    /// True when no criterion is set.
    pub fn is_all(&self) -> bool {
        self.topics.is_empty()
            && self.regex.is_none()
            && self.exclude_topics.is_empty()
            && self.exclude_regex.is_none()
    }

    /// Whether `topic` passes the filter.
    pub fn matches(&self, topic: &str) -> bool {
        if self.exclude_topics.iter().any(|t| t == topic)
            || self
                .exclude_regex
                .as_ref()
                .is_some_and(|r| r.is_match(topic))
        {
            return false;
        }
        if self.topics.is_empty() && self.regex.is_none() {
            return true;
        }
        self.topics.iter().any(|t| t == topic)
            || self.regex.as_ref().is_some_and(|r| r.is_match(topic))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_exclude_semantics() {
        let f = TopicFilter::from_parts(
            vec!["/a".into()],
            Some("/cam/.*"),
            vec!["/cam/raw".into()],
            Some(".*debug"),
        )
        .unwrap();
        assert!(f.matches("/a"));
        assert!(f.matches("/cam/info"));
        assert!(!f.matches("/cam/raw"));
        assert!(!f.matches("/cam/debug"));
        assert!(!f.matches("/b"));
        assert!(!f.matches("/x/cam/info"), "regex must match the whole name");
        assert!(TopicFilter::all().matches("/anything"));
        assert!(TopicFilter::from_parts(vec![], Some("("), vec![], None).is_err());
    }

    #[test]
    fn ecmascript_look_around_and_back_references_work() {
        let f = TopicFilter::from_parts(vec![], Some("(?!/rosout).*"), vec![], None).unwrap();
        assert!(f.matches("/a") && !f.matches("/rosout"));
        let twice = NameRegex::search(r"/(\w+)/\1\b").unwrap();
        assert!(twice.is_match("/cam/cam/info") && !twice.is_match("/cam/lidar"));
        let behind = NameRegex::search(r"(?<=/robot1)/scan").unwrap();
        assert!(behind.is_match("/robot1/scan") && !behind.is_match("/robot2/scan"));
    }
}
