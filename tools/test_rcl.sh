#!/usr/bin/env bash
# The README's workspace path in a sourced ROS 2, and the rcl backend it gives: `colcon build` of
# this repository in the Jazzy (or Kilted) of PyPI's wheels (the venv tools/test.sh installs, with
# rosbag2_interfaces built into its ws/ by tools/build_ros2_interfaces.sh) builds every package,
# rosbag2_rs_interfaces included, in release mode (each package's colcon.pkg); the build script finds rcl, so the
# installed `player` and `recorder` use the rcl backend by default. The interop tests
# (tests/interop/test_rcl_interop.py: rclpy peers) then run those installed binaries, as
# `ros2 run` would, with RMW_IMPLEMENTATION unset, in a private network namespace; and the rclpy
# suite tests/interop/test_fastdds_interop.py runs over both backends of the same binaries: rcl,
# and the native Fast DDS backend the build also compiled against the sourced ROS 2's Fast DDS.
#
#   tools/test_rcl.sh [VENV [PYTEST ARGS...]]   (VENV default: .venv-ros2)
#
# ROSBAG2_RS_MERGE_INSTALL=1 builds with `colcon build --merge-install` (one install prefix)
# instead of colcon's default isolated install (a prefix per package).
#
# Intermediate artifacts go to CARGO_BUILD_BUILD_DIR (default: the repository's target/, shared
# with the builds without ROS 2: only the crates that see rcl are built again).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ros2=$(cd "${1:-$root/.venv-ros2}" && pwd)
test -d "$ros2/ws/lib" || { echo "$ros2/ws/lib missing: run tools/build_ros2_interfaces.sh $ros2 $ros2/ws"; exit 1; }
export CARGO_BUILD_BUILD_DIR=${CARGO_BUILD_BUILD_DIR:-${CARGO_TARGET_DIR:-$root/target}}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}/rcl
# Absolute: colcon runs cargo in each package's directory, where a relative path would give every
# package a build directory of its own (every dependency compiled once per package).
CARGO_BUILD_BUILD_DIR=$(realpath -m "$CARGO_BUILD_BUILD_DIR") CARGO_TARGET_DIR=$(realpath -m "$CARGO_TARGET_DIR")
# The sourced environment (what `source /opt/ros/jazzy/setup.bash` sets), with the middleware left
# to ROS 2's default, as in a default install.
export AMENT_PREFIX_PATH="$ros2/ws:$ros2" CMAKE_PREFIX_PATH="$ros2/ws:$ros2"
# The wheels' bundled libraries (auditwheel's ros_*.libs) too: the copies in lib/ carry run paths
# into site-packages that do not resolve from there, and our executables' RUNPATH (as ament's
# nodes have) does not serve their dependencies.
LD_LIBRARY_PATH="$ros2/ws/lib:$ros2/lib$(printf ':%s' "$ros2"/lib/python3*/site-packages/ros_*.libs)"
export LD_LIBRARY_PATH PATH="$ros2/bin:$PATH"
export PYTHONPATH=$(echo "$ros2"/ws/lib/python3*/site-packages)
unset RMW_IMPLEMENTATION
# The distribution, as a setup script sets it: from the names of the venv's wheels (ros-kilted-...).
ROS_DISTRO=$("$ros2/bin/python" -m pip list 2>/dev/null | sed -n 's/^ros-\([a-z]*\)-rclpy .*/\1/p')
export ROS_DISTRO
test -n "$ROS_DISTRO" || { echo "no ros-<distro>-rclpy wheel in $ros2"; exit 1; }

ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
start=$SECONDS
# -DPython3_EXECUTABLE: the wheels' CMake exports name the Python of the image they were built in.
merge=()
if [ "${ROSBAG2_RS_MERGE_INSTALL:-0}" = 1 ]; then merge=(--merge-install); fi
(cd "$ws" && colcon build "${merge[@]}" --base-paths "$root" \
   --cmake-args -DBUILD_TESTING=OFF "-DPython3_EXECUTABLE=$ros2/bin/python" >"$ws/colcon.log" 2>&1) \
  || { tail -n 60 "$ws/colcon.log"; exit 1; }
echo "colcon build ${merge[*]:-(isolated install)} in the sourced ROS 2 (every package): $((SECONDS - start)) s"
set +u
# shellcheck disable=SC1091 (colcon-core writes the POSIX sh setup script; colcon-bash, not installed here, the bash one)
. "$ws/install/local_setup.sh"
set -u
# Where a package's files land: its own prefix, or the one merged prefix.
prefix() { if [ ${#merge[@]} -gt 0 ]; then echo "$ws/install"; else echo "$ws/install/$1"; fi; }
bin=$(prefix rosbag2_rs_transport)/lib/rosbag2_rs_transport
# An overlay holding its own build of one of the sourced ROS 2's libraries.
mkdir -p "$ws/overlay/lib" && cp -L "$ros2/lib/librcutils.so" "$ws/overlay/lib/"
for exe in player recorder; do
  # (grep -q on a here-string: under pipefail, a reader that stops early fails its writer.)
  grep -q 'librcl\.so' <<<"$(readelf -d "$bin/$exe")" \
    || { echo "the installed $exe does not link librcl: the build script did not find rcl"; exit 1; }
  # A RUNPATH, as ament's nodes have: a DT_RPATH would shadow a sourced overlay's libraries.
  ! grep -q '(RPATH)' <<<"$(readelf -d "$bin/$exe")" \
    || { echo "the installed $exe has a DT_RPATH"; exit 1; }
  # An overlay's copy of a library the sourced ROS 2 has (its lib/ first on LD_LIBRARY_PATH, as
  # its setup script puts it) is the one loaded.
  grep -q "librcutils.so => $ws/overlay/lib/librcutils.so" \
    <<<"$(LD_LIBRARY_PATH="$ws/overlay/lib:$LD_LIBRARY_PATH" ldd "$bin/$exe")" \
    || { echo "the installed $exe does not load an overlay's librcutils.so first"; exit 1; }
done
# The native Fast DDS backend, built in without a feature flag: the player links Fast DDS itself
# (not only through rcl's rmw), and the one it finds is the sourced ROS 2's.
needed=$(readelf -d "$bin/player") resolved=$(ldd "$bin/player")
grep -q 'NEEDED.*libfast\(rtps\|dds\)\.so' <<<"$needed" \
  || { echo "the installed player has no native Fast DDS backend"; exit 1; }
grep -q "$ros2/lib/libfast\(rtps\|dds\)\.so" <<<"$resolved" \
  || { echo "the installed player does not load the sourced ROS 2's Fast DDS"; echo "$resolved"; exit 1; }
test -d "$(prefix rosbag2_rs_interfaces)/share/rosbag2_rs_interfaces" \
  || { echo "colcon did not install rosbag2_rs_interfaces"; exit 1; }

# The code only this environment compiles (the rcl backend, the native Fast DDS backend), linted;
# a developer's probe (not installed), built in the same environment; the backend's unit tests.
cargo clippy -q -p rosbag2_rs_rcl -p rosbag2_rs_fastdds -p rosbag2_rs_transport_lib \
  -p rosbag2_rs_transport -p ros2bag_rs_cli --all-targets -- -D warnings
cargo build -q --release -p rosbag2_rs_transport_lib --example dds_probe
cargo test -q -p rosbag2_rs_rcl
cargo test -q -p rosbag2_rs_transport_lib --lib rcl
# The backend conformance suite over every backend this build has: rcl, the native Fast DDS on
# the sourced ROS 2's Fast DDS, Cyclone DDS, Zenoh, in-process (each networked case in a private
# network namespace of its own); every backend's nodes counted until they have left the graph.
cargo test -q -p rosbag2_rs_transport_lib --test backends conformance::
cargo test -q -p rosbag2_rs_transport_lib --test exit

# The installed executables in one directory, as the tests look for them.
bins=$ws/bins
mkdir -p "$bins"
ln -s "$bin/player" "$bin/recorder" "$(prefix ros2bag_rs_cli)/lib/ros2bag_rs_cli/ros2bag-rs" "$bins/"
# The 200-fresh-clients soak of the rclpy suite runs on the native backend only (rcl: 30 clients).
unshare --net -- bash -c 'ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo && exec "$@"' _ \
  env ROSBAG2_RS_BIN_DIR="$bins" ROSBAG2_RS_PROBE="$CARGO_TARGET_DIR/release/examples/dds_probe" \
  ROSBAG2_RS_BACKENDS=native,rcl \
  "$ros2/bin/python" -m pytest -q tests/interop/test_rcl_interop.py tests/interop/test_fastdds_interop.py \
  --deselect 'tests/interop/test_fastdds_interop.py::test_fresh_rclpy_clients_are_all_answered_while_playing[rcl]' \
  "${@:2}"

# The soak (tests/soak/soak.py, issue 51) of the installed recorder on rcl and the default rmw,
# against rclpy publishers of this ROS 2, for ROSBAG2_RS_SOAK_SECONDS (0, the default: none).
soak_seconds=${ROSBAG2_RS_SOAK_SECONDS:-0}
if [ "$soak_seconds" != 0 ]; then
  "$root/.venv/bin/python" tests/soak/soak.py --backend rcl --recorder "$bin/recorder" \
    --publisher-python "$ros2/bin/python" --duration "$soak_seconds" --consume
fi
