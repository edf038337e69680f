//! Every request and response of the services the player and recorder serve or call
//! (`rosbag2_interfaces`, ours, `type_description_interfaces`) and the messages they exchange, as
//! they arrive from the wire (the first byte picks the type). What decodes is encoded again, and
//! that encoding must decode and encode to the same bytes (values are compared through their
//! encoding: a NaN rate is not equal to itself).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rosbag2_rs_interfaces::rosbag2_interfaces::msg::{ReadSplitEvent, WriteSplitEvent};
use rosbag2_rs_interfaces::rosbag2_interfaces::srv as upstream;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv as ours;
use rosbag2_rs_interfaces::service_msgs::ServiceEventInfo;
use rosbag2_rs_interfaces::type_description_interfaces::srv::GetTypeDescription;
use rosbag2_rs_interfaces::{from_cdr, to_cdr, MessageType, ServiceType};

fn round_trip<T: MessageType>(bytes: &[u8]) {
    if let Ok(value) = from_cdr::<T>(bytes) {
        let bytes = to_cdr(&value);
        let again = from_cdr::<T>(&bytes).expect("an encoded value decodes");
        assert_eq!(to_cdr(&again), bytes, "{}", T::TYPE_NAME);
    }
}

fn service<S: ServiceType>(bytes: &[u8], response: bool) {
    if response {
        round_trip::<S::Response>(bytes)
    } else {
        round_trip::<S::Request>(bytes)
    }
}

/// Each service type, as a function of (bytes, whether they are its response).
const SERVICES: &[fn(&[u8], bool)] = &[
    service::<upstream::Burst>,
    service::<upstream::GetRate>,
    service::<upstream::IsPaused>,
    service::<upstream::Pause>,
    service::<upstream::Play>,
    service::<upstream::PlayNext>,
    service::<upstream::Resume>,
    service::<upstream::Seek>,
    service::<upstream::SetRate>,
    service::<upstream::Snapshot>,
    service::<upstream::SplitBagfile>,
    service::<upstream::Stop>,
    service::<upstream::TogglePaused>,
    service::<ours::SetMemory>,
    service::<ours::SetDuration>,
    service::<ours::TriggerSnapshot>,
    service::<ours::ClearBuffer>,
    service::<ours::SetClockPublishFrequency>,
    service::<GetTypeDescription>,
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let pick = pick as usize;
    match pick % (2 * SERVICES.len() + 3) {
        n if n < 2 * SERVICES.len() => SERVICES[n / 2](bytes, n % 2 == 1),
        n if n == 2 * SERVICES.len() => round_trip::<WriteSplitEvent>(bytes),
        n if n == 2 * SERVICES.len() + 1 => round_trip::<ReadSplitEvent>(bytes),
        _ => round_trip::<ServiceEventInfo>(bytes),
    }
});
