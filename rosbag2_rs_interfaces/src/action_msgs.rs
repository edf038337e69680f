//! How an action shows on the graph and in a bag: rcl_action's five interfaces of an action
//! `<action>` (three services, whose introspection events are topics, and two topics), told
//! apart by name and type the way rosbag2 (Kilted) tells them.
//!
//! ```
//! use rosbag2_rs_interfaces::action_msgs::{action_interface, action_type, ActionInterface};
//!
//! let topic = "/fibonacci/_action/send_goal/_service_event";
//! let event = "test_msgs/action/Fibonacci_SendGoal_Event";
//! assert_eq!(
//!     action_interface(topic, event),
//!     Some(("/fibonacci", ActionInterface::SendGoalEvent))
//! );
//! assert_eq!(action_type(event), Some("test_msgs/action/Fibonacci"));
//! // A topic named like one but of another type is not part of an action.
//! assert_eq!(action_interface("/fibonacci/_action/status", "std_msgs/msg/String"), None);
//! ```

/// One of an action's interfaces, as a topic of the graph or of a bag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ActionInterface {
    /// `<action>/_action/send_goal/_service_event`: `pkg/action/Name_SendGoal_Event`.
    SendGoalEvent,
    /// `<action>/_action/cancel_goal/_service_event`: `action_msgs/srv/CancelGoal_Event`.
    CancelGoalEvent,
    /// `<action>/_action/get_result/_service_event`: `pkg/action/Name_GetResult_Event`.
    GetResultEvent,
    /// `<action>/_action/feedback`: `pkg/action/Name_FeedbackMessage`.
    Feedback,
    /// `<action>/_action/status`: `action_msgs/msg/GoalStatusArray`.
    Status,
}

/// The type of every action's status topic.
pub const STATUS_TYPE: &str = "action_msgs/msg/GoalStatusArray";
/// The type of every action's cancel service.
pub const CANCEL_GOAL_TYPE: &str = "action_msgs/srv/CancelGoal";

impl ActionInterface {
    /// The five, in the order `info` lists them.
    pub const ALL: [Self; 5] = [
        Self::Feedback,
        Self::Status,
        Self::SendGoalEvent,
        Self::CancelGoalEvent,
        Self::GetResultEvent,
    ];

    /// What follows the action's name in the topic's name.
    pub fn topic_suffix(self) -> &'static str {
        match self {
            Self::SendGoalEvent => "/_action/send_goal/_service_event",
            Self::CancelGoalEvent => "/_action/cancel_goal/_service_event",
            Self::GetResultEvent => "/_action/get_result/_service_event",
            Self::Feedback => "/_action/feedback",
            Self::Status => "/_action/status",
        }
    }

    /// The interface's short name, as `ros2 bag info` prints it: `send_goal`, `feedback`, ...
    pub fn short_name(self) -> &'static str {
        match self {
            Self::SendGoalEvent => "send_goal",
            Self::CancelGoalEvent => "cancel_goal",
            Self::GetResultEvent => "get_result",
            Self::Feedback => "feedback",
            Self::Status => "status",
        }
    }

    /// Whether the topic carries a service's introspection events.
    pub fn is_service_event(self) -> bool {
        matches!(
            self,
            Self::SendGoalEvent | Self::CancelGoalEvent | Self::GetResultEvent
        )
    }

    /// The service this event topic's service is called on: `<action>/_action/send_goal`...
    pub fn service_name(self, action: &str) -> Option<String> {
        self.is_service_event().then(|| {
            let suffix = self.topic_suffix();
            format!(
                "{action}{}",
                &suffix[..suffix.len() - crate::service_msgs::EVENT_TOPIC_SUFFIX.len()]
            )
        })
    }

    /// The topic of this interface of `action`.
    pub fn topic(self, action: &str) -> String {
        format!("{action}{}", self.topic_suffix())
    }

    /// Whether `type_name` is this interface's type (for the two per-action types, of any
    /// action: `pkg/action/Name_SendGoal_Event` and the like).
    pub fn has_type(self, type_name: &str) -> bool {
        match self {
            Self::SendGoalEvent | Self::GetResultEvent | Self::Feedback => {
                action_type(type_name).is_some() && type_name.ends_with(self.type_suffix())
            }
            Self::CancelGoalEvent => type_name == format!("{CANCEL_GOAL_TYPE}_Event"),
            Self::Status => type_name == STATUS_TYPE,
        }
    }

    /// What follows `pkg/action/Name` in a per-action interface's type (empty for the shared
    /// status and cancel types).
    fn type_suffix(self) -> &'static str {
        match self {
            Self::SendGoalEvent => "_SendGoal_Event",
            Self::GetResultEvent => "_GetResult_Event",
            Self::Feedback => "_FeedbackMessage",
            Self::CancelGoalEvent | Self::Status => "",
        }
    }
}

/// The action and interface a topic of `type_name` belongs to: its name ends in one of the
/// interfaces' suffixes and its type is that interface's.
pub fn action_interface<'a>(topic: &'a str, type_name: &str) -> Option<(&'a str, ActionInterface)> {
    ActionInterface::ALL.into_iter().find_map(|interface| {
        let action = topic.strip_suffix(interface.topic_suffix())?;
        (!action.is_empty() && interface.has_type(type_name)).then_some((action, interface))
    })
}

/// The action type a per-action interface type belongs to: `pkg/action/Name` for
/// `pkg/action/Name_SendGoal_Event`, `_GetResult_Event` and `_FeedbackMessage`; `None` for the
/// shared status and cancel types and anything else.
pub fn action_type(type_name: &str) -> Option<&str> {
    [
        ActionInterface::SendGoalEvent,
        ActionInterface::GetResultEvent,
        ActionInterface::Feedback,
    ]
    .into_iter()
    .find_map(|interface| type_name.strip_suffix(interface.type_suffix()))
    .filter(|t| {
        t.split_once("/action/")
            .is_some_and(|(pkg, name)| !pkg.is_empty() && !name.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_interface_is_told_by_name_and_type() {
        let cases = [
            (
                "/ns/fib/_action/send_goal/_service_event",
                "test_msgs/action/Fibonacci_SendGoal_Event",
                ActionInterface::SendGoalEvent,
            ),
            (
                "/ns/fib/_action/cancel_goal/_service_event",
                "action_msgs/srv/CancelGoal_Event",
                ActionInterface::CancelGoalEvent,
            ),
            (
                "/ns/fib/_action/get_result/_service_event",
                "test_msgs/action/Fibonacci_GetResult_Event",
                ActionInterface::GetResultEvent,
            ),
            (
                "/ns/fib/_action/feedback",
                "test_msgs/action/Fibonacci_FeedbackMessage",
                ActionInterface::Feedback,
            ),
            (
                "/ns/fib/_action/status",
                "action_msgs/msg/GoalStatusArray",
                ActionInterface::Status,
            ),
        ];
        for (topic, type_name, interface) in cases {
            assert_eq!(
                action_interface(topic, type_name),
                Some(("/ns/fib", interface))
            );
            assert_eq!(interface.topic("/ns/fib"), topic);
            // The right name with another interface's type is not an action's topic.
            for (_, other_type, other) in cases {
                if other != interface {
                    assert_eq!(action_interface(topic, other_type), None, "{topic}");
                }
            }
        }
        assert_eq!(action_interface("/_action/status", STATUS_TYPE), None);
        assert_eq!(
            action_interface("/fib/_action/feedback", "x/msg/Fibonacci_FeedbackMessage"),
            None
        );
        assert_eq!(
            ActionInterface::GetResultEvent
                .service_name("/fib")
                .as_deref(),
            Some("/fib/_action/get_result")
        );
        assert_eq!(ActionInterface::Status.service_name("/fib"), None);
    }

    #[test]
    fn action_types_come_from_the_per_action_types_only() {
        assert_eq!(
            action_type("test_msgs/action/Fibonacci_FeedbackMessage"),
            Some("test_msgs/action/Fibonacci")
        );
        assert_eq!(
            action_type("test_msgs/action/Fibonacci_GetResult_Event"),
            Some("test_msgs/action/Fibonacci")
        );
        assert_eq!(action_type("action_msgs/srv/CancelGoal_Event"), None);
        assert_eq!(action_type(STATUS_TYPE), None);
        assert_eq!(action_type("test_msgs/srv/Fibonacci_SendGoal_Event"), None);
        assert_eq!(action_type("/action/_FeedbackMessage"), None);
    }
}
