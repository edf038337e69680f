//! Splits and resumes scheduled for a time (`split_bagfile` and `resume` with a time): due at
//! the first message whose time reaches it, so that a split falls exactly between two messages,
//! the same two in every recorder that receives them; or, by the recorder's clock, also once
//! that clock reaches it with no message at all.

use parking_lot::Mutex;
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::time_mode;

/// Which time of a message a schedule reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeMode {
    /// The recorder's clock: a message's receive time, or the clock itself with no message.
    Node,
    /// The time the message was published (its source timestamp).
    Publish,
    /// The time the recorder received the message.
    Receive,
}

impl TimeMode {
    /// The mode of a `split_mode` or `resume_mode` field; `None` for an unknown value.
    pub fn from_wire(mode: i32) -> Option<Self> {
        match mode {
            time_mode::NODE_TIME => Some(Self::Node),
            time_mode::PUBLISH_TIME => Some(Self::Publish),
            time_mode::RECEIVE_TIME => Some(Self::Receive),
            _ => None,
        }
    }

    /// Its name in logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Node => "node",
            Self::Publish => "publish",
            Self::Receive => "receive",
        }
    }
}

/// A split or resume waiting for its time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    /// When, ns (the recording's time base: ROS time under sim time).
    pub time_ns: i64,
    /// Which time of a message counts.
    pub mode: TimeMode,
    /// Only this topic's messages count (expanded name); `None`: any topic's. Ignored by
    /// [`TimeMode::Node`], whose time is the recorder's own.
    pub topic: Option<String>,
}

impl Schedule {
    /// Whether a message of `topic` received at `recv` and published at `send` makes it due.
    pub fn due_at(&self, topic: &str, recv: i64, send: i64) -> bool {
        match self.mode {
            TimeMode::Node => recv >= self.time_ns,
            TimeMode::Publish | TimeMode::Receive
                if self.topic.as_deref().is_some_and(|t| t != topic) =>
            {
                false
            }
            TimeMode::Publish => send >= self.time_ns,
            TimeMode::Receive => recv >= self.time_ns,
        }
    }

    /// Whether the recorder's clock reading `now` makes it due (node time only).
    pub fn due_by_clock(&self, now: i64) -> bool {
        self.mode == TimeMode::Node && now >= self.time_ns
    }
}

/// At most one pending schedule; a newer one replaces it (as in rosbag2).
#[derive(Debug, Default)]
pub struct ScheduleSlot(Mutex<Option<Schedule>>);

impl ScheduleSlot {
    /// Sets `schedule`, returning the one it replaces.
    pub fn set(&self, schedule: Schedule) -> Option<Schedule> {
        self.0.lock().replace(schedule)
    }

    /// Drops the pending schedule.
    pub fn clear(&self) {
        self.0.lock().take();
    }

    /// Whether one is pending.
    pub fn is_pending(&self) -> bool {
        self.0.lock().is_some()
    }

    /// Takes the pending schedule if `due` says it is due: exactly one caller gets it.
    pub fn take_if(&self, due: impl FnOnce(&Schedule) -> bool) -> Option<Schedule> {
        let mut slot = self.0.lock();
        if slot.as_ref().is_some_and(due) {
            slot.take()
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(mode: TimeMode, topic: Option<&str>) -> Schedule {
        Schedule {
            time_ns: 100,
            mode,
            topic: topic.map(str::to_string),
        }
    }

    #[test]
    fn each_mode_reads_its_own_time() {
        let publish = schedule(TimeMode::Publish, None);
        assert!(!publish.due_at("/a", 500, 99));
        assert!(publish.due_at("/a", 0, 100));
        let receive = schedule(TimeMode::Receive, None);
        assert!(!receive.due_at("/a", 99, 500));
        assert!(receive.due_at("/a", 100, 0));
        let node = schedule(TimeMode::Node, Some("/b"));
        assert!(
            node.due_at("/a", 100, 0),
            "node time ignores the tracking topic"
        );
        assert!(node.due_by_clock(100) && !node.due_by_clock(99));
        assert!(
            !receive.due_by_clock(1_000),
            "only node time follows the clock"
        );
    }

    #[test]
    fn a_tracking_topic_limits_the_messages_that_count() {
        let s = schedule(TimeMode::Publish, Some("/b"));
        assert!(!s.due_at("/a", 500, 500));
        assert!(s.due_at("/b", 500, 500));
    }

    #[test]
    fn a_slot_gives_its_schedule_once_and_a_newer_one_replaces_it() {
        let slot = ScheduleSlot::default();
        assert!(slot.set(schedule(TimeMode::Publish, None)).is_none());
        let replaced = slot.set(schedule(TimeMode::Receive, None)).unwrap();
        assert_eq!(replaced.mode, TimeMode::Publish);
        assert!(slot.take_if(|s| s.due_at("/a", 99, 500)).is_none());
        assert!(slot.take_if(|s| s.due_at("/a", 100, 0)).is_some());
        assert!(slot.take_if(|_| true).is_none());
    }
}
