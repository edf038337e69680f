#!/usr/bin/env bash
# The main job, end to end on a fresh machine: build rosbag2-rs, generate a demo bag, inspect it,
# convert it to SQLite3 and to a ROS 1 bag, and play it onto a ROS 2 graph with time control (rate, /clock, a seek
# and a pause through the player's services).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)"; exit 1; }
# Cyclone DDS is built from source by the `cyclors` crate: it needs cmake and libclang.
if ! command -v cmake >/dev/null || ! dpkg -s libclang-dev >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends cmake libclang-dev
fi
cargo build --release -p ros2bag_rs_cli -p rosbag2_rs_storage -p rosbag2_rs_transport --examples --bins
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin=target/release
$bin/examples/make_demo_bag "$out/demo"
$bin/ros2bag-rs info "$out/demo"
$bin/ros2bag-rs convert "$out/demo" -o "$out/demo_sqlite" --storage sqlite3 --topics /chatter /status
$bin/ros2bag-rs info "$out/demo_sqlite"
echo "first messages of the converted bag, decoded:"
$bin/ros2bag-rs cat "$out/demo_sqlite" -n 2
$bin/ros2bag-rs convert "$out/demo" -o "$out/demo.bag" --storage rosbag_v2 --compression-format lz4
$bin/ros2bag-rs info "$out/demo.bag"

# Playback sends DDS traffic: keep it off the machine's real interfaces. As root, in a private
# network namespace; otherwise with discovery confined to loopback.
play() {
  echo "playing the demo bag at rate 4 with /clock at 50 Hz; after 1 s: pause, seek to +2 s, resume"
  $bin/ros2bag-rs play "$out/demo" --rate 4 --clock 50 --disable-keyboard-controls &
  local player=$!
  sleep 1
  $bin/ros2bag-rs control pause
  echo "paused: $($bin/ros2bag-rs control is-paused)"
  start=$($bin/ros2bag-rs info "$out/demo" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["starting_time_ns"] / 1e9)')
  $bin/ros2bag-rs control seek "$(python3 -c "print($start + 2)")"
  $bin/ros2bag-rs control resume
  wait "$player"
}
export -f play
export bin out
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
  unshare --net -- bash -c 'ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo && play'
else
  ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST play
fi
