#!/usr/bin/env bash
# The main job, end to end on a fresh machine: build rosbag2-rs, generate a demo bag, inspect it,
# convert it to SQLite3 and read it back.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)"; exit 1; }
cargo build --release -p ros2bag_rs_cli -p rosbag2_rs_storage --examples --bins
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
target/release/examples/make_demo_bag "$out/demo"
target/release/ros2bag-rs info "$out/demo"
target/release/ros2bag-rs convert "$out/demo" -o "$out/demo_sqlite" --storage sqlite3 --topics /chatter /status
target/release/ros2bag-rs info "$out/demo_sqlite"
echo "first messages of the converted bag:"
target/release/ros2bag-rs cat "$out/demo_sqlite" | head -n 5
