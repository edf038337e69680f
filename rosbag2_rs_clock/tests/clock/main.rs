//! The clocks, the player clock and its options, sim time and the time controller (one test
//! binary, one module per concern).

mod clocks;
mod player_options;
mod properties;
mod sim_time;
mod time_controller;
