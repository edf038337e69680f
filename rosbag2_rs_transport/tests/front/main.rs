//! The node front without a graph: the flags of `ros2 bag play|burst|record` and rosbag2's node
//! parameters turned into the player's and recorder's options, as rosbag2 turns them (one test
//! binary, one module per concern).

mod launch_parameters;
mod play_flags;
mod record_flags;
