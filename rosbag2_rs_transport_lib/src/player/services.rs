//! The player's ROS 2 services, on `/<node_name>/...` with rosbag2's wire types, so that
//! `ros2 service call /rosbag2_player/pause rosbag2_interfaces/srv/Pause` works unchanged.
//! Refused requests answer `success: false` (where the type has the field) and log the reason.
//! `set_clock_publish_frequency` is this project's own (`rosbag2_rs_interfaces`).

use std::sync::Arc;

use rosbag2_rs_clock::{Duration, Time};
use rosbag2_rs_interfaces::rosbag2_interfaces::srv::*;
use rosbag2_rs_interfaces::rosbag2_rs_interfaces::srv::{
    PauseAt, PauseAtRequest, PauseAtResponse, SetClockPublishFrequency,
    SetClockPublishFrequencyResponse,
};

use super::schedule::Action;
use super::{Core, PlaySpan, PlayerError};
use rosbag2_rs_middleware::error::Result;
use rosbag2_rs_middleware::services::ServiceSet;
use rosbag2_rs_middleware::Handle;

/// Logs a refused request and turns the outcome into the `success` field.
fn succeeded<T>(service: &str, result: std::result::Result<T, PlayerError>) -> bool {
    match result {
        Ok(_) => true,
        Err(e) => {
            log::warn!("{service} refused: {}", crate::error_chain::Chain(&e));
            false
        }
    }
}

/// Zero means "not set" in the `play` request.
fn set(nanos: i64) -> Option<i64> {
    (nanos != 0).then_some(nanos)
}

/// The `resume` service: at once, or at `resume_time` by the node's clock (rosbag2 Rolling's
/// player; the messages' publish and receive times, and a tracking topic, are for recorders).
fn resume(core: &Arc<Core>, req: &ResumeRequest) -> ResumeResponse {
    let time = req.resume_time.as_nanos();
    if time != 0 && req.resume_mode != time_mode::NODE_TIME {
        return ResumeResponse::new(
            ResumeResponse::RETURN_CODE_INVALID_RESUME_MODE,
            "a player resumes by node time only",
        );
    }
    if time != 0 && !req.tracking_topic_name.is_empty() {
        return ResumeResponse::new(
            ResumeResponse::RETURN_CODE_INVALID_TRACKING_TOPIC,
            "a player resumes by node time: no tracking topic",
        );
    }
    let result = if time == 0 {
        core.resume()
    } else {
        core.schedule(Action::Resume, time)
    };
    match result {
        Ok(()) => ResumeResponse::default(),
        Err(e) => {
            let reason = crate::error_chain::Chain(&e).to_string();
            log::warn!("resume refused: {reason}");
            ResumeResponse::new(ResumeResponse::RETURN_CODE_RESUME_FAILED, &reason)
        }
    }
}

/// Creates every control service; they live as long as the returned handles.
pub(super) fn register(core: &Arc<Core>) -> Result<Vec<Handle>> {
    let mut services =
        ServiceSet::new(core.middleware.as_ref(), core.options.service_introspection);
    let c = || core.clone();
    let core_ = c();
    services.serve::<Pause>("~/pause", move |_| {
        succeeded("pause", core_.pause());
        PauseResponse::default()
    })?;
    let core_ = c();
    services.serve::<Resume>("~/resume", move |req: ResumeRequest| resume(&core_, &req))?;
    let core_ = c();
    services.serve::<PauseAt>("~/pause_at", move |req: PauseAtRequest| {
        let result = core_.schedule(Action::Pause, req.pause_time.as_nanos());
        match result {
            Ok(()) => PauseAtResponse {
                success: true,
                message: String::new(),
            },
            Err(e) => PauseAtResponse {
                success: false,
                message: crate::error_chain::Chain(&e).to_string(),
            },
        }
    })?;
    let core_ = c();
    services.serve::<TogglePaused>("~/toggle_paused", move |_| {
        succeeded("toggle_paused", core_.toggle_paused());
        TogglePausedResponse::default()
    })?;
    let core_ = c();
    services.serve::<IsPaused>("~/is_paused", move |_| IsPausedResponse {
        paused: core_.clock.is_paused(),
    })?;
    let core_ = c();
    services.serve::<GetRate>("~/get_rate", move |_| GetRateResponse {
        rate: core_.clock.get_rate(),
    })?;
    let core_ = c();
    services.serve::<SetRate>("~/set_rate", move |r| SetRateResponse {
        success: succeeded("set_rate", core_.set_rate(r.rate)),
    })?;
    let core_ = c();
    services.serve::<Seek>("~/seek", move |r| SeekResponse {
        success: succeeded("seek", core_.seek(r.time.as_nanos())),
    })?;
    let core_ = c();
    services.serve::<PlayNext>("~/play_next", move |_| PlayNextResponse {
        success: succeeded("play_next", core_.play_next()),
    })?;
    let core_ = c();
    services.serve::<Burst>("~/burst", move |r| {
        let burst = core_.burst(r.num_messages);
        let actually_burst = burst.as_ref().copied().unwrap_or(0);
        succeeded("burst", burst);
        BurstResponse { actually_burst }
    })?;
    let core_ = c();
    services.serve::<Play>("~/play", move |r| {
        let span = PlaySpan {
            start_offset: Duration::from_nanos(r.start_offset.as_nanos()),
            duration: set(r.playback_duration.as_nanos()).map(Duration::from_nanos),
            until: set(r.playback_until_timestamp.as_nanos()).map(Time::ros),
        };
        PlayResponse {
            success: succeeded("play", core_.play_in_background(span)),
        }
    })?;
    let core_ = c();
    services.serve::<SetClockPublishFrequency>("~/set_clock_publish_frequency", move |r| {
        let result = core_.set_clock_publish_frequency(r.frequency);
        SetClockPublishFrequencyResponse {
            message: result
                .as_ref()
                .err()
                .map(ToString::to_string)
                .unwrap_or_default(),
            success: succeeded("set_clock_publish_frequency", result),
        }
    })?;
    let core_ = c();
    services.serve::<Stop>("~/stop", move |_| match core_.stop_service() {
        Ok(()) => StopResponse::default(),
        Err(e) => StopResponse::new(1, e.to_string()),
    })?;
    Ok(services.finish())
}
