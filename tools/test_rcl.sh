#!/usr/bin/env bash
# The rcl backend: builds `player` and `recorder` in a sourced ROS 2 Jazzy (the venv of PyPI's
# wheels that tools/test.sh installs, with rosbag2_interfaces and rosbag2_rs_interfaces built by
# tools/build_ros2_interfaces.sh into its ws/), so that the build script finds rcl and compiles
# the rcl backend (the default of such a build), then runs the rcl interop tests
# (tests/interop/test_rcl_interop.py: rclpy peers on rmw_fastrtps_cpp) in a private network
# namespace. Its own target directory: the builds without ROS 2 stay valid.
#
#   tools/test_rcl.sh [VENV [PYTEST ARGS...]]   (VENV default: .venv-ros2)
#
# Target directory: ROSBAG2_RS_RCL_TARGET_DIR, else $CARGO_TARGET_DIR/rcl (tools/test.sh's
# CARGO_TARGET_DIR, else target/rcl).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ros2=$(cd "${1:-$root/.venv-ros2}" && pwd)
test -d "$ros2/ws/lib" || { echo "$ros2/ws/lib missing: run tools/build_ros2_interfaces.sh $ros2 $ros2/ws"; exit 1; }
site=$(echo "$ros2"/ws/lib/python3*/site-packages)
export CARGO_TARGET_DIR=${ROSBAG2_RS_RCL_TARGET_DIR:-${CARGO_TARGET_DIR:-$root/target}/rcl}
export CARGO_BUILD_BUILD_DIR=$CARGO_TARGET_DIR
# The sourced environment (what `source install/setup.bash` would set for these prefixes), with
# the middleware left to ROS 2's default, as in a default install.
export AMENT_PREFIX_PATH="$ros2/ws:$ros2" LD_LIBRARY_PATH="$ros2/ws/lib:$ros2/lib"
unset RMW_IMPLEMENTATION

cargo build -q -p rosbag2_rs_transport --bins --example dds_probe
for exe in player recorder; do
  readelf -d "$CARGO_TARGET_DIR/debug/$exe" | grep -q 'librcl\.so' \
    || { echo "$exe does not link librcl: the build script did not find rcl under AMENT_PREFIX_PATH"; exit 1; }
done
cargo test -q -p rosbag2_rs_transport --lib rcl

unshare --net -- bash -c 'ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo && exec "$@"' _ \
  env PYTHONPATH="$site" ROSBAG2_RS_PROFILE=debug \
  "$ros2/bin/python" -m pytest -q tests/interop/test_rcl_interop.py "${@:2}"
