//! The transport library's option enums as command-line choices: each one's spellings (those of
//! `ros2 bag`) and a clap value parser that offers them in `--help` and completions.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use rosbag2_rs_transport_lib::{MessageOrder, ServiceIntrospection, ServiceRequestsSource};

/// An option enum of the library with its command-line spellings.
pub trait Choice: Copy + Send + Sync + 'static {
    /// Every value with its spelling.
    const NAMES: &'static [(Self, &'static str)];
}

/// The value parser of a [`Choice`] flag: one of its spellings (any case), as the value.
pub fn choice<T: Choice>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::NAMES.iter().map(|(_, name)| *name)).map(|given| {
        T::NAMES
            .iter()
            .find(|(_, name)| name.eq_ignore_ascii_case(&given))
            .map(|(value, _)| *value)
            .expect("the possible values parser accepted one of the names")
    })
}

impl Choice for MessageOrder {
    const NAMES: &'static [(Self, &'static str)] =
        // And rosbag2's parameter values (`play.message_order`).
        &[
            (Self::Received, "received"),
            (Self::Sent, "sent"),
            (Self::Received, "received_timestamp"),
            (Self::Sent, "sent_timestamp"),
        ];
}

impl Choice for ServiceIntrospection {
    const NAMES: &'static [(Self, &'static str)] = &[
        (Self::Off, "off"),
        (Self::Metadata, "metadata"),
        (Self::Contents, "contents"),
    ];
}

impl Choice for ServiceRequestsSource {
    const NAMES: &'static [(Self, &'static str)] = &[
        (Self::ServiceIntrospection, "service_introspection"),
        (Self::ClientIntrospection, "client_introspection"),
    ];
}
