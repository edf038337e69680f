//! `create_player_clock` and use through `Arc<dyn PlayerClock>` with only the
//! player-facing names imported (supertrait `Clock` methods resolve on the object).

use std::sync::Arc;

use rosbag2_rs_clock::{
    create_player_clock, MonotonicSource, PlaybackRate, PlayerClockOptions, Time,
};

#[test]
fn builds_time_controller_by_default() {
    let opts = PlayerClockOptions {
        starting_time: Time::ros(42),
        rate: PlaybackRate::new(2.0).unwrap(),
        ..PlayerClockOptions::default()
    };
    let clock = create_player_clock(&opts, Arc::new(MonotonicSource::new())).unwrap();
    assert!(!clock.uses_sim_time());
    assert!(clock.is_paused(), "starts paused by default");
    assert_eq!(clock.now(), Time::ros(42));
    assert_eq!(clock.get_rate(), 2.0);
}

#[test]
fn builds_sim_time_clock() {
    let opts = PlayerClockOptions {
        use_sim_time: true,
        extrapolate_ros_time: true,
        ..PlayerClockOptions::default()
    };
    let clock = create_player_clock(&opts, Arc::new(MonotonicSource::new())).unwrap();
    assert!(clock.uses_sim_time());
    clock.on_clock_message(Time::ros(7));
    assert_eq!(clock.now(), Time::ros(7));
    assert!(clock.jump(Time::ros(0)).is_err());
}

#[test]
fn a_rate_is_checked_where_it_is_given() {
    for bad in ["-1", "0", "nan", "inf", "fast"] {
        let err = bad
            .parse::<PlaybackRate>()
            .unwrap_err()
            .to_string()
            .to_lowercase();
        assert!(err.contains(bad) && err.contains("> 0"), "{err}");
    }
    assert_eq!("2.5".parse::<PlaybackRate>().unwrap().get(), 2.5);
    assert!(PlaybackRate::new(-1.0).is_err());
}
