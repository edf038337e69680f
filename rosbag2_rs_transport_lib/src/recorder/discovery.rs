//! Which topics to record and with which QoS: `ros2 bag record`'s selection rules, and the
//! subscription QoS adapted to what the publishers offer (rosbag2's `adapt_request_to_offers`).

use std::collections::BTreeMap;

use rosbag2_rs_codec::type_hash;
use rosbag2_rs_storage::qos::{Durability, History, Reliability};
use rosbag2_rs_storage::{NameRegex, QosProfile};

use super::error::{RecorderError, Result};
use rosbag2_rs_interfaces::action_msgs::{action_interface, ActionInterface};
use rosbag2_rs_interfaces::service_msgs::{
    event_topic, service_of_event_topic, EVENT_TOPIC_SUFFIX,
};
use rosbag2_rs_middleware::TopicInfo;

/// The smallest keep-last depth the recorder requests, so that a burst is not lost between two
/// takes of the middleware's reader cache (rosbag2 requests the publishers' depth).
pub const MIN_SUBSCRIPTION_DEPTH: u64 = 100;

/// Topic selection, as given on the command line. Included: `all`, or a name in `topics`, or a
/// name containing a match of `regex`, or a type in `topic_types`. Exclusion (`exclude_topics`,
/// `exclude_regex`, `exclude_topic_types`) always wins. Hidden topics (a name token starting
/// with `_`) need `include_hidden_topics` unless listed by name; topics without publishers need
/// `include_unpublished_topics`.
///
/// Service event topics (`<service>/_service_event` of a `<pkg>/srv/<Name>_Event` type, see
/// [`is_service_event_topic`]) follow rosbag2's rules for services instead: included by
/// `all_services`, by their service in `services`, or by `regex`; left out by
/// `exclude_services` or `exclude_regex`; never hidden, and not selected by `all` (all topics).
///
/// An action's five topics (its three services' event topics, `_action/feedback` and
/// `_action/status`, see [`action_interface`]) follow rosbag2's (Kilted) rules for actions:
/// included by `all_actions`, by their action in `actions`, by `regex` or by name in `topics`;
/// left out by `exclude_actions` or `exclude_regex`; never hidden, and selected neither by
/// `all` nor by `all_services`.
#[derive(Debug, Clone, Default)]
pub struct TopicSelection {
    /// Record every topic.
    pub all: bool,
    /// Topics to record, by name (relative names are expanded against the recorder's node).
    pub topics: Vec<String>,
    /// Record topics whose name contains a match of this regular expression.
    pub regex: Option<String>,
    /// Do not record topics whose name contains a match of this regular expression.
    pub exclude_regex: Option<String>,
    /// Do not record these topics.
    pub exclude_topics: Vec<String>,
    /// Record topics of these types (`pkg/msg/Type`).
    pub topic_types: Vec<String>,
    /// Also record hidden topics (a name token starting with `_`).
    pub include_hidden_topics: bool,
    /// Also record topics that have subscriptions but no publishers.
    pub include_unpublished_topics: bool,
    /// Do not record topics without a subscription (`--ignore-leaf-topics`): a topic nobody
    /// listens to is left out until someone does. Once recorded, the recorder's own
    /// subscription keeps it.
    pub ignore_leaf_topics: bool,
    /// Do not record topics of these types (`pkg/msg/Type`).
    pub exclude_topic_types: Vec<String>,
    /// Record the events of every service (`--all-services`).
    pub all_services: bool,
    /// Record the events of these services, by service name (relative names are expanded
    /// against the recorder's node; the `/_service_event` topic may be given as well).
    pub services: Vec<String>,
    /// Do not record the events of these services (names as `services`).
    pub exclude_services: Vec<String>,
    /// Record every action's topics (`--all-actions`).
    pub all_actions: bool,
    /// Record the topics of these actions, by action name (relative names are expanded
    /// against the recorder's node).
    pub actions: Vec<String>,
    /// Do not record the topics of these actions (names as `actions`).
    pub exclude_actions: Vec<String>,
    /// Topics recorded with the type given, subscribed at the start whether or not they are
    /// on the graph yet (rosbag2 Lyrical's `--static-topics-path`); names as `topics`.
    pub static_topics: Vec<(String, String)>,
}

/// Whether `topic` of `type_name` carries service introspection events, as rosbag2 tells them:
/// the name ends with `/_service_event` and the type is a `pkg/srv/Name_Event`.
pub fn is_service_event_topic(topic: &str, type_name: &str) -> bool {
    topic.ends_with(EVENT_TOPIC_SUFFIX)
        && type_name.ends_with("_Event")
        && type_name.contains("/srv/")
}

/// The event topic of a service given by name (or already by its event topic).
pub fn service_event_topic(service: &str) -> String {
    if service.ends_with(EVENT_TOPIC_SUFFIX) {
        service.to_string()
    } else {
        event_topic(service)
    }
}

impl TopicSelection {
    /// Selects every topic.
    pub fn all() -> Self {
        Self {
            all: true,
            ..Self::default()
        }
    }

    /// Selects exactly these topics.
    pub fn topics<S: Into<String>>(topics: impl IntoIterator<Item = S>) -> Self {
        Self {
            topics: topics.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }

    /// Checks that something is selected and the regular expressions compile.
    pub fn validate(&self) -> Result<()> {
        if !self.all
            && !self.all_services
            && !self.all_actions
            && self.topics.is_empty()
            && self.services.is_empty()
            && self.actions.is_empty()
            && self.regex.as_deref().is_none_or(str::is_empty)
            && self.topic_types.is_empty()
            && self.static_topics.is_empty()
        {
            return Err(RecorderError::InvalidOptions(
                "nothing to record: give topics, services, actions, --all, --all-topics, \
                 --all-services, --all-actions, --regex, --topic-types or static topics"
                    .into(),
            ));
        }
        self.compile().map(drop)
    }

    /// Compiles the regular expressions.
    pub(crate) fn compile(&self) -> Result<CompiledSelection> {
        let regex = |r: &Option<String>| -> Result<Option<NameRegex>> {
            r.as_deref()
                .filter(|r| !r.is_empty())
                // As `ros2 bag record -e`: a topic is selected when the expression matches
                // anywhere in its name (`regex_search`), in ECMAScript's grammar.
                .map(NameRegex::search)
                .transpose()
                .map_err(|e| RecorderError::InvalidOptions(e.to_string()))
        };
        Ok(CompiledSelection {
            selection: self.clone(),
            regex: regex(&self.regex)?,
            exclude_regex: regex(&self.exclude_regex)?,
        })
    }
}

/// A [`TopicSelection`] with its regular expressions compiled.
#[derive(Debug, Clone)]
pub(crate) struct CompiledSelection {
    pub selection: TopicSelection,
    regex: Option<NameRegex>,
    exclude_regex: Option<NameRegex>,
}

pub use rosbag2_rs_storage::is_hidden;

impl CompiledSelection {
    /// With a `--regex`: the expression, and whether it matches (searches) any of `names`.
    pub fn regex_matches_any(&self, names: &[String]) -> Option<(&str, bool)> {
        let regex = self.regex.as_ref()?;
        Some((regex.as_str(), names.iter().any(|n| regex.is_match(n))))
    }

    /// Whether a topic of `type_name` passes the name and type rules (publishers aside), as
    /// rosbag2 Lyrical's `TopicFilter` decides: the regexes search an action's or a service's
    /// name for their topics, a topic's own name otherwise; a hidden topic is left out unless
    /// `include_hidden_topics`, even when listed.
    pub fn matches(&self, topic: &str, type_name: &str) -> bool {
        let s = &self.selection;
        let searched = |regex: &Option<NameRegex>, name: &str| {
            regex.as_ref().is_some_and(|r| r.is_match(name))
        };
        if let Some((action, _)) = action_interface(topic, type_name) {
            let listed = |list: &[String]| list.iter().any(|a| a == action);
            return (s.all_actions
                || listed(&s.actions)
                || s.topics.iter().any(|t| t == topic)
                || searched(&self.regex, action))
                && !listed(&s.exclude_actions)
                && !searched(&self.exclude_regex, action);
        }
        if is_service_event_topic(topic, type_name) {
            let service = |list: &[String]| list.iter().any(|t| service_event_topic(t) == topic);
            let name = service_of_event_topic(topic).unwrap_or(topic);
            return (s.all_services || service(&s.services) || searched(&self.regex, name))
                && !service(&s.exclude_services)
                && !searched(&self.exclude_regex, name);
        }
        if s.exclude_topics.iter().any(|t| t == topic)
            || searched(&self.exclude_regex, topic)
            || s.exclude_topic_types.iter().any(|t| t == type_name)
            || (is_hidden(topic) && !s.include_hidden_topics)
        {
            return false;
        }
        s.all
            || s.topics.iter().any(|t| t == topic)
            || searched(&self.regex, topic)
            || s.topic_types.iter().any(|t| t == type_name)
    }

    /// True when only listed topics can ever match, so discovery can stop once all are found.
    pub fn is_fixed_list(&self) -> bool {
        let s = &self.selection;
        !s.all
            && !s.all_services
            && !s.all_actions
            && self.regex.is_none()
            && s.topic_types.is_empty()
    }

    /// The topics listed by name: `topics`, the event topics of `services` and the topics of
    /// `actions`.
    pub fn listed_topics(&self) -> impl Iterator<Item = String> + '_ {
        let s = &self.selection;
        s.topics
            .iter()
            .cloned()
            .chain(s.static_topics.iter().map(|(topic, _)| topic.clone()))
            .chain(s.services.iter().map(|t| service_event_topic(t)))
            .chain(
                s.actions.iter().flat_map(|action| {
                    ActionInterface::ALL.map(|interface| interface.topic(action))
                }),
            )
    }
}

/// The decision for one topic of the graph.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicPlan {
    /// Fully qualified name.
    pub name: String,
    /// Its one message type.
    pub type_name: String,
    /// The QoS to subscribe with.
    pub request: QosProfile,
    /// What the publishers offer (recorded in the bag).
    pub offered: Vec<QosProfile>,
    /// The type hash the publishers announce (recorded in the bag as the topic's
    /// `type_description_hash`), if they agree on one.
    pub type_hash: Option<String>,
}

/// Decides whether to record `topic` and how; `None` when it is not (or not yet) recordable.
pub(crate) fn plan_topic(
    topic: &TopicInfo,
    selection: &CompiledSelection,
    overrides: &BTreeMap<String, QosProfile>,
) -> Option<TopicPlan> {
    let types = if topic.publishers.is_empty() {
        if !selection.selection.include_unpublished_topics {
            return None;
        }
        topic.type_names()
    } else {
        let mut types: Vec<String> = topic
            .publishers
            .iter()
            .map(|p| p.type_name.clone())
            .collect();
        types.sort();
        types.dedup();
        types
    };
    let type_name = match types.as_slice() {
        [one] => one.clone(),
        [] => return None,
        many => {
            if types.iter().any(|t| selection.matches(&topic.name, t)) {
                log::warn!(
                    "topic '{}' has several types ({}): not recorded",
                    topic.name,
                    many.join(", ")
                );
            }
            return None;
        }
    };
    if !selection.matches(&topic.name, &type_name)
        || (selection.selection.ignore_leaf_topics && topic.subscriptions.is_empty())
    {
        return None;
    }
    Some(plan_for(topic, type_name, overrides))
}

/// The plan of a topic asked for by name (`subscribe_to_topics`), whatever the selection: of
/// `wanted` type, or of the one type its publishers (else its endpoints) have; `None` when it
/// has not that type, or several and none wanted.
pub(crate) fn plan_requested_topic(
    topic: &TopicInfo,
    wanted: Option<&str>,
    overrides: &BTreeMap<String, QosProfile>,
) -> Option<TopicPlan> {
    let mut types: Vec<String> = if topic.publishers.is_empty() {
        topic.type_names()
    } else {
        topic
            .publishers
            .iter()
            .map(|p| p.type_name.clone())
            .collect()
    };
    types.sort();
    types.dedup();
    let type_name = match (wanted, types.as_slice()) {
        (Some(wanted), _) => types.iter().find(|t| *t == wanted)?.clone(),
        (None, [one]) => one.clone(),
        (None, _) => return None,
    };
    Some(plan_for(topic, type_name, overrides))
}

/// The subscription of `topic` as `type_name`: the QoS overridden, else adapted to the offers.
fn plan_for(
    topic: &TopicInfo,
    type_name: String,
    overrides: &BTreeMap<String, QosProfile>,
) -> TopicPlan {
    let offered: Vec<QosProfile> = topic.publishers.iter().map(|p| p.qos).collect();
    let request = match overrides.get(&topic.name) {
        Some(qos) => *qos,
        None => adapt_request_to_offers(&topic.name, &offered),
    };
    TopicPlan {
        name: topic.name.clone(),
        type_name,
        request,
        offered,
        type_hash: announced_type_hash(topic),
    }
}

/// The type hash of a topic as rosbag2 takes it from the graph: the one every endpoint that
/// announces a hash agrees on (publishers, or subscriptions when there are none); none when
/// none announces one (Humble: nothing, or rmw_zenoh's `TypeHashNotSupported`) or when they
/// disagree (with a warning).
pub(crate) fn announced_type_hash(topic: &TopicInfo) -> Option<String> {
    let endpoints = if topic.publishers.is_empty() {
        &topic.subscriptions
    } else {
        &topic.publishers
    };
    let mut hashes: Vec<&str> = endpoints
        .iter()
        .filter_map(|e| type_hash::announced(e.type_hash.as_deref()))
        .collect();
    hashes.sort_unstable();
    hashes.dedup();
    match hashes.as_slice() {
        [] => None,
        [one] => Some(one.to_string()),
        many => {
            log::warn!(
                "topic '{}': endpoints announce different type hashes ({}); none recorded",
                topic.name,
                many.join(", ")
            );
            None
        }
    }
}

/// The QoS that receives from all `offers`: reliable only when every publisher is reliable,
/// transient-local only when every publisher is; keep-all when reliable and volatile, else
/// keep-last with a generous depth.
pub fn adapt_request_to_offers(topic: &str, offers: &[QosProfile]) -> QosProfile {
    let mut request = QosProfile {
        history: History::KeepLast,
        depth: MIN_SUBSCRIPTION_DEPTH,
        ..QosProfile::default()
    };
    if offers.is_empty() {
        return request;
    }
    request.depth = offers
        .iter()
        .filter(|o| o.history == History::KeepLast)
        .map(|o| o.depth)
        .max()
        .unwrap_or(0)
        .max(MIN_SUBSCRIPTION_DEPTH);
    let best_effort = |o: &QosProfile| o.reliability == Reliability::BestEffort;
    let transient = |o: &QosProfile| o.durability == Durability::TransientLocal;
    if offers.iter().all(|o| !best_effort(o)) {
        request.reliability = Reliability::Reliable;
    } else {
        if !offers.iter().all(best_effort) {
            log::warn!(
                "topic '{topic}': some publishers offer reliable and some best-effort QoS; \
                 subscribing best-effort, so messages of the reliable ones may be lost"
            );
        }
        request.reliability = Reliability::BestEffort;
    }
    if offers.iter().all(transient) {
        request.durability = Durability::TransientLocal;
    } else {
        if offers.iter().any(transient) {
            log::warn!(
                "topic '{topic}': some publishers offer transient-local durability and some \
                 volatile; subscribing volatile, so latched messages are not received"
            );
        }
        request.durability = Durability::Volatile;
    }
    // A reliable volatile subscription keeps every sample until it is taken: a burst faster
    // than the takes is delayed in the reader instead of overwritten (the middleware acknowledges
    // samples once they are in the reader's history, so no publisher waits for the recorder).
    // Latched topics keep the depth, which says how many past messages a late reader gets.
    if request.reliability == Reliability::Reliable && request.durability == Durability::Volatile {
        request.history = History::KeepAll;
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regex_searches_names_and_reports_when_it_matches_none() {
        let chat = TopicSelection {
            regex: Some("chat".into()),
            ..Default::default()
        }
        .compile()
        .unwrap();
        assert!(chat.matches("/chatter", "std_msgs/msg/String"));
        assert_eq!(
            chat.regex_matches_any(&["/imu".into(), "/chatter".into()]),
            Some(("chat", true))
        );
        assert_eq!(
            chat.regex_matches_any(&["/imu".into()]),
            Some(("chat", false))
        );
        let all = TopicSelection {
            all: true,
            ..Default::default()
        }
        .compile()
        .unwrap();
        assert_eq!(all.regex_matches_any(&[]), None);
    }

    #[test]
    fn regexes_search_service_and_action_names_in_ecmascripts_grammar() {
        let selection = |regex: &str, exclude: Option<&str>| {
            TopicSelection {
                regex: Some(regex.into()),
                exclude_regex: exclude.map(Into::into),
                ..Default::default()
            }
            .compile()
            .unwrap()
        };
        let event = (
            "/add/_service_event",
            "example_interfaces/srv/AddTwoInts_Event",
        );
        let status = ("/fib/_action/status", "action_msgs/msg/GoalStatusArray");
        // rosbag2 searches the service's and the action's names, not their topics'.
        let ends = selection("(add|fib)$", None);
        assert!(ends.matches(event.0, event.1) && ends.matches(status.0, status.1));
        assert!(!selection("_service_event", None).matches(event.0, event.1));
        let not_fib = selection(".", Some("^/fib$"));
        assert!(!not_fib.matches(status.0, status.1) && not_fib.matches(event.0, event.1));
        // Look-ahead, common in rosbag2 launch files.
        let no_rosout = selection("^(?!/rosout)", None);
        assert!(no_rosout.matches("/chatter", "std_msgs/msg/String"));
        assert!(!no_rosout.matches("/rosout", "rcl_interfaces/msg/Log"));
    }

    #[test]
    fn leaf_topics_are_planned_only_once_someone_subscribes() {
        let endpoint = || rosbag2_rs_middleware::EndpointInfo {
            type_name: "std_msgs/msg/String".into(),
            qos: QosProfile::default(),
            node: None,
            type_hash: None,
        };
        let mut topic = TopicInfo {
            name: "/chatter".into(),
            publishers: vec![endpoint()],
            subscriptions: vec![],
        };
        let selection = |ignore_leaf_topics| {
            TopicSelection {
                all: true,
                ignore_leaf_topics,
                ..Default::default()
            }
            .compile()
            .unwrap()
        };
        let overrides = BTreeMap::new();
        assert!(plan_topic(&topic, &selection(false), &overrides).is_some());
        assert!(plan_topic(&topic, &selection(true), &overrides).is_none());
        topic.subscriptions.push(endpoint());
        assert!(plan_topic(&topic, &selection(true), &overrides).is_some());
    }

    #[test]
    fn the_recorded_type_hash_is_the_one_publishers_agree_on() {
        const A: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
        const B: &str = "RIHS01_0000000000000000000000000000000000000000000000000000000000000001";
        let endpoint = |hash: Option<&str>| rosbag2_rs_middleware::EndpointInfo {
            type_name: "std_msgs/msg/String".into(),
            qos: QosProfile::default(),
            node: None,
            type_hash: hash.map(str::to_string),
        };
        let topic = |publishers: Vec<_>, subscriptions: Vec<_>| TopicInfo {
            name: "/chatter".into(),
            publishers,
            subscriptions,
        };
        let hash = |t: &TopicInfo| announced_type_hash(t);
        // Humble publishers (none, or rmw_zenoh's TypeHashNotSupported) leave it empty.
        assert_eq!(hash(&topic(vec![endpoint(None)], vec![])), None);
        let humble = endpoint(Some("TypeHashNotSupported"));
        assert_eq!(hash(&topic(vec![humble.clone()], vec![])), None);
        assert_eq!(
            hash(&topic(
                vec![humble, endpoint(Some(A)), endpoint(Some(A))],
                vec![]
            ))
            .as_deref(),
            Some(A)
        );
        assert_eq!(
            hash(&topic(vec![endpoint(Some(A)), endpoint(Some(B))], vec![])),
            None
        );
        // Subscriptions count only when nobody publishes.
        assert_eq!(
            hash(&topic(vec![endpoint(None)], vec![endpoint(Some(B))])),
            None
        );
        assert_eq!(
            hash(&topic(vec![], vec![endpoint(Some(B))])).as_deref(),
            Some(B)
        );
        let selection = TopicSelection::all().compile().unwrap();
        let plan = plan_topic(
            &topic(vec![endpoint(Some(A))], vec![]),
            &selection,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(plan.type_hash.as_deref(), Some(A));
    }

    #[test]
    fn actions_are_selected_by_their_own_rules() {
        let select = |s: TopicSelection| s.compile().unwrap();
        let fib = ActionInterface::ALL.map(|i| {
            let type_name = match i {
                ActionInterface::SendGoalEvent => "test_msgs/action/Fibonacci_SendGoal_Event",
                ActionInterface::GetResultEvent => "test_msgs/action/Fibonacci_GetResult_Event",
                ActionInterface::Feedback => "test_msgs/action/Fibonacci_FeedbackMessage",
                ActionInterface::CancelGoalEvent => "action_msgs/srv/CancelGoal_Event",
                ActionInterface::Status => "action_msgs/msg/GoalStatusArray",
            };
            (i.topic("/fib"), type_name)
        });
        let all = |s: &CompiledSelection| fib.iter().all(|(t, ty)| s.matches(t, ty));
        let none = |s: &CompiledSelection| !fib.iter().any(|(t, ty)| s.matches(t, ty));
        // Neither all topics (hidden), nor all services (the cancel service's events).
        assert!(none(&select(TopicSelection {
            all: true,
            all_services: true,
            include_hidden_topics: true,
            ..Default::default()
        })));
        assert!(all(&select(TopicSelection {
            all_actions: true,
            ..Default::default()
        })));
        let listed = select(TopicSelection {
            actions: vec!["/fib".into()],
            ..Default::default()
        });
        assert!(all(&listed));
        assert!(!listed.matches("/other/_action/status", "action_msgs/msg/GoalStatusArray"));
        assert!(!listed.matches("/chatter", "std_msgs/msg/String"));
        assert!(listed.is_fixed_list());
        assert_eq!(
            listed.listed_topics().collect::<Vec<_>>(),
            fib.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>()
        );
        assert!(none(&select(TopicSelection {
            all_actions: true,
            exclude_actions: vec!["/fib".into()],
            ..Default::default()
        })));
        assert!(none(&select(TopicSelection {
            all_actions: true,
            exclude_regex: Some("fib".into()),
            ..Default::default()
        })));
        assert!(all(&select(TopicSelection {
            regex: Some("^/fi".into()),
            ..Default::default()
        })));
        // A hidden topic named like an action's but of another type is a topic.
        assert!(!select(TopicSelection {
            all_actions: true,
            ..Default::default()
        })
        .matches("/fib/_action/status", "std_msgs/msg/String"));
    }

    const EVENT: &str = "rosbag2_interfaces/srv/SetRate_Event";
    const SET_RATE: &str = "/rosbag2_player/set_rate/_service_event";

    #[test]
    fn services_are_selected_by_their_own_rules() {
        let select = |s: TopicSelection| s.compile().unwrap();
        // All topics is not all services (rosbag2's --all-topics); hidden does not apply.
        let topics = select(TopicSelection::all());
        assert!(topics.matches("/chatter", "std_msgs/msg/String"));
        assert!(!topics.matches(SET_RATE, EVENT));
        let services = select(TopicSelection {
            all_services: true,
            ..Default::default()
        });
        assert!(services.matches(SET_RATE, EVENT));
        assert!(!services.matches("/chatter", "std_msgs/msg/String"));
        // A topic named like an event topic but of a message type is a (hidden) topic.
        assert!(!services.matches(SET_RATE, "std_msgs/msg/String"));
        let listed = select(TopicSelection {
            services: vec!["/rosbag2_player/set_rate".into()],
            ..Default::default()
        });
        assert!(listed.matches(SET_RATE, EVENT));
        assert!(!listed.matches("/rosbag2_player/pause/_service_event", "x/srv/P_Event"));
        assert!(listed.is_fixed_list());
        assert_eq!(listed.listed_topics().collect::<Vec<_>>(), [SET_RATE]);
        let excluded = select(TopicSelection {
            all: true,
            all_services: true,
            exclude_services: vec!["/rosbag2_player/set_rate".into()],
            exclude_topic_types: vec!["std_msgs/msg/String".into()],
            ..Default::default()
        });
        assert!(!excluded.matches(SET_RATE, EVENT));
        assert!(excluded.matches("/rosbag2_player/pause/_service_event", "x/srv/P_Event"));
        assert!(!excluded.matches("/chatter", "std_msgs/msg/String"));
        assert!(excluded.matches("/imu", "sensor_msgs/msg/Imu"));
        let regex = select(TopicSelection {
            regex: Some("set_rate".into()),
            exclude_regex: Some("pause".into()),
            ..Default::default()
        });
        assert!(regex.matches(SET_RATE, EVENT));
        assert!(!regex.matches("/p/pause/_service_event", "x/srv/Pause_Event"));
        assert!(TopicSelection {
            all_services: true,
            ..Default::default()
        }
        .validate()
        .is_ok());
    }
}
