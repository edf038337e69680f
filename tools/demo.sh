#!/usr/bin/env bash
# The main job, end to end on a fresh machine: build rosbag2-rs, generate a demo bag, inspect it,
# convert it to SQLite3 and to a ROS 1 bag, then play it onto a ROS 2 graph with time control
# (start paused, resume, pause, a rate change through the player's services) while our recorder
# records what it plays, and show the two bags side by side: the same messages on every topic.
# Exits non-zero when the recorded counts differ from the played bag's.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)"; exit 1; }
command -v python3 >/dev/null || { echo "python3 is required"; exit 1; }
# Cyclone DDS is built from source by the `cyclors` crate: it needs cmake and libclang.
if ! command -v cmake >/dev/null || ! dpkg -s libclang-dev >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends cmake libclang-dev
fi
# A CARGO_TARGET_DIR given holds the intermediate artifacts too (.cargo/config.toml would keep
# them in target/), as in tools/test.sh.
if [ -n "${CARGO_TARGET_DIR:-}" ]; then export CARGO_BUILD_BUILD_DIR=${CARGO_BUILD_BUILD_DIR:-$CARGO_TARGET_DIR}; fi
# Everything the demo runs: `ros2bag-rs` and the example that writes the demo bag.
cargo build --release -p ros2bag_rs_cli -p rosbag2_rs_storage --bin ros2bag-rs --example make_demo_bag
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bin=${CARGO_TARGET_DIR:-target}/release
$bin/examples/make_demo_bag "$out/demo"
$bin/ros2bag-rs info "$out/demo"
$bin/ros2bag-rs convert "$out/demo" -o "$out/demo_sqlite" --storage sqlite3 --topics /chatter /status
$bin/ros2bag-rs info "$out/demo_sqlite"
echo "first messages of the converted bag, decoded:"
$bin/ros2bag-rs cat "$out/demo_sqlite" -n 2
$bin/ros2bag-rs convert "$out/demo" -o "$out/demo.bag" --storage rosbag_v2 --compression-format lz4
$bin/ros2bag-rs info "$out/demo.bag"

# The demo bag's topics, one per line.
topics() { $bin/ros2bag-rs info "$1" --format json | python3 -c 'import json, sys
for t in json.load(sys.stdin)["topics"]: print(t["name"])'; }

# Our recorder records what the player plays. Both choose their QoS as rosbag2 does: the player
# offers each topic the QoS it was recorded with (/status: reliable, transient local; the others:
# reliable, volatile), the recorder subscribes with what the publishers it discovers offer. The
# player publishes no /clock of its own (no --clock), so the bag's /clock is played like any topic.
play_and_record() {
  mapfile -t played < <(topics "$out/demo")
  echo
  echo "recording ${played[*]} with ros2bag-rs record"
  $bin/ros2bag-rs record --topics "${played[@]}" -o "$out/recorded" --disable-keyboard-controls \
    2> >(tee "$out/recorder.log" >&2) &
  local recorder=$!
  echo "playing the demo bag at rate 2, paused until the recorder has subscribed to every topic"
  $bin/ros2bag-rs play "$out/demo" --rate 2 --start-paused --disable-keyboard-controls \
    --wait-for-all-acked 5000 &
  local player=$!
  # On a failure, stop both (the recorder still closes its bag).
  trap "kill -INT $player $recorder 2>/dev/null || true; wait" EXIT
  # The recorder subscribes to a topic once it sees the player's publisher, and logs
  # "recording '/topic' (type, reliability durability)".
  local deadline=$((SECONDS + 30)) topic
  for topic in "${played[@]}"; do
    until grep -qF "recording '$topic' (" "$out/recorder.log" 2>/dev/null; do
      kill -0 "$recorder" 2>/dev/null || { echo "the recorder exited" >&2; return 1; }
      if [ $SECONDS -ge $deadline ]; then
        echo "the recorder did not subscribe to $topic within 30 s" >&2
        return 1
      fi
      sleep 0.1
    done
  done
  # The player's publishers learn of the new subscriptions a moment after the recorder made them.
  sleep 0.5
  $bin/ros2bag-rs control resume
  sleep 1
  echo "after 1 s: pause, rate 4 while paused, resume"
  $bin/ros2bag-rs control pause
  echo "paused: $($bin/ros2bag-rs control is-paused)"
  $bin/ros2bag-rs control rate 4
  $bin/ros2bag-rs control resume
  # The player exits once the bag is played and the recorder acknowledged every message; then
  # SIGINT stops the recorder, which closes the bag before it exits.
  wait "$player"
  kill -INT "$recorder"
  wait "$recorder"
  trap - EXIT
}
export -f play_and_record topics
export bin out
# Playback sends DDS traffic: keep it off the machine's real interfaces. As root, in a private
# network namespace; otherwise with discovery confined to loopback, on a domain of its own (in
# ROS 2's safe range, 1 to 101).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
  unshare --net -- bash -c 'set -euo pipefail; ip link set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo && play_and_record'
else
  ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=$((1 + RANDOM % 101)) \
    bash -c 'set -euo pipefail; play_and_record'
fi

# The played bag and the recorded one, side by side, then their message counts per topic.
echo
echo "The recorded bag's times are its receive times: now, and shorter (rate 2, then 4)."
$bin/ros2bag-rs info "$out/demo" > "$out/demo.info"
$bin/ros2bag-rs info "$out/recorded" > "$out/recorded.info"
$bin/ros2bag-rs info "$out/demo" --format json > "$out/demo.json"
$bin/ros2bag-rs info "$out/recorded" --format json > "$out/recorded.json"
python3 - "$out" <<'EOF'
import json, shutil, sys, textwrap
out = sys.argv[1]
def read(path):
    return open(path).read().strip("\n").splitlines()
# Each column as wide as its longest line, or half the terminal's width.
width = max(len(line) for path in ("demo.info", "recorded.info") for line in read(f"{out}/{path}"))
if sys.stdout.isatty():
    width = min(width, (shutil.get_terminal_size().columns - 3) // 2)
def column(title, path):
    lines = [title, "-" * len(title)]
    for line in read(path):
        lines += textwrap.wrap(line, width, subsequent_indent="    ") or [""]
    return lines
left = column("played: the demo bag", f"{out}/demo.info")
right = column("recorded by ros2bag-rs record", f"{out}/recorded.info")
for i in range(max(len(left), len(right))):
    a = left[i] if i < len(left) else ""
    b = right[i] if i < len(right) else ""
    print(f"{a:<{width}} | {b}".rstrip())
def counts(name):
    return {t["name"]: t["message_count"] for t in json.load(open(f"{out}/{name}.json"))["topics"]}
played, recorded = counts("demo"), counts("recorded")
cells = [f"{topic} {n} -> {recorded.get(topic, 0)}" for topic, n in sorted(played.items())]
same = all(recorded.get(topic, 0) == n for topic, n in played.items())
print()
print(f"messages per topic, played -> recorded: {', '.join(cells)}: "
      + ("equal" if same else "DIFFERENT"))
sys.exit(0 if same else 1)
EOF
