#!/usr/bin/env bash
# The command-line proof of issue 48 ("hostile input, second round"): makes every crafted file
# (the `crafted_files` example of rosbag2_rs_tools, from the generators its tests use:
# rosbag2_rs_tools/tests/crafted; and realsense_bag_rs's `crafted_png_bomb`, the crafted
# RealSense recording of its tests) and runs every command of `ros2bag-rs` on each (info -v,
# cat, doctor, reindex, convert, export, and play in a private network namespace) with the
# address space limited as on a robot-sized machine (`ulimit -v 4000000`) and a timeout.
#
# A run fails when the command is killed (a signal, an abort: status 134), panics (status 101,
# or a panic message), runs out of memory (an allocation failure message) or out of time; and
# when it exits non-zero with output that does not name the problem the file was crafted with
# (the manifest's pattern). `cat` of a file that lists its chunks several times must print
# each message once. `doctor` must report every file's damage but the three that are intact
# (RealSense, extreme and straddling times: valid files whose content is hostile).
#
#   tools/hostile_cli.sh                        # builds ros2bag-rs (debug) and the example
#   ROS2BAG_RS=target/release/ros2bag-rs tools/hostile_cli.sh   # a ros2bag-rs already built
#   HOSTILE_KEEP=/some/dir tools/hostile_cli.sh # keeps the files and every command's output
#
# Prints one line per file (the status of each command) and a summary; exits non-zero when any
# run fails. About 30 s with a release ros2bag-rs.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target}
limit_kib=4000000
timeout_s=${HOSTILE_TIMEOUT:-60}

cargo build -q -p rosbag2_rs_tools --example crafted_files || exit 1
cargo build -q -p realsense_bag_rs --example crafted_png_bomb || exit 1
if [ -n "${ROS2BAG_RS:-}" ]; then
    bin=$(realpath "$ROS2BAG_RS")
else
    cargo build -q -p ros2bag_rs_cli --bin ros2bag-rs || exit 1
    bin=$CARGO_TARGET_DIR/debug/ros2bag-rs
fi

if [ -n "${HOSTILE_KEEP:-}" ]; then
    work=$HOSTILE_KEEP
    rm -rf "$work"
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/log" "$work/out" "$work/dirs" "$work/tmp"
# File-mode decompression goes to the temporary directory: this run's own.
export TMPDIR=$work/tmp RUST_BACKTRACE=0
"$CARGO_TARGET_DIR/debug/examples/crafted_files" "$work/crafted" || exit 1
"$CARGO_TARGET_DIR/debug/examples/crafted_png_bomb" "$work/crafted" || exit 1

# `play` publishes: only in a private network namespace with only `lo` (as root, as in CI;
# otherwise in a user namespace of its own).
if [ "$(id -u)" = 0 ]; then netns=(unshare --net --); else netns=(unshare -rn --); fi
# Runs "$@" under the address-space limit and the timeout; for play, in the namespace.
limited() {
    sh -c 'ulimit -v "$0" && exec timeout -k 5 "$@"' "$limit_kib" "$timeout_s" "$@"
}
offline() {
    "${netns[@]}" sh -c 'ip link set lo up && ulimit -v "$0" && exec timeout -k 5 "$@"' \
        "$limit_kib" "$timeout_s" "$@"
}

failures=()
runs=0
fail() { failures+=("$1: $2"); verdict=FAIL; }
# What went wrong with the run whose output is in $log.{out,err}, if anything.
check() {
    local label=$1 status=$2 problem=$3 log=$4
    runs=$((runs + 1))
    verdict=$status
    if [ "$status" = 124 ] || [ "$status" = 137 ]; then
        fail "$label" "timed out after ${timeout_s}s"
    elif [ "$status" = 101 ]; then
        fail "$label" "panicked (status 101): $(grep -m1 -A1 panicked "$log.err" | tr '\n' ' ')"
    elif [ "$status" -gt 128 ]; then
        fail "$label" "killed by signal $((status - 128)): $(tail -n 2 "$log.err" | tr '\n' ' ')"
    elif grep -qE 'panicked|memory allocation of|capacity overflow|stack overflow' "$log.err"; then
        fail "$label" "$(grep -m1 -E 'panicked|memory allocation of|capacity overflow|stack overflow' "$log.err")"
    elif [ "$status" != 0 ] && ! cat "$log.out" "$log.err" | grep -qiE "$problem"; then
        fail "$label" "status $status without naming the problem (/$problem/): $(tail -n 2 "$log.err" | tr '\n' ' ')"
    fi
}

start=$SECONDS
while IFS=$'\t' read -r name path topic messages problem; do
    # A single storage file (not a ROS 1 bag) is a bag for `reindex` in a directory of its own.
    dir=$path
    reindexed=$work/out/$name.reindexed
    case $name in
        *.bag) reindexed=$reindexed.bag ;;
        *.mcap | *.db3) dir=$work/dirs/${name%.*}; mkdir -p "$dir"; cp "$path" "$dir/" ;;
    esac
    line="$name:"
    for verb in info cat doctor reindex convert export play; do
        log=$work/log/$name.$verb
        case $verb in
            info) limited "$bin" info -v "$path" ;;
            cat) limited "$bin" cat "$path" ;;
            doctor) limited "$bin" doctor "$path" ;;
            reindex) limited "$bin" reindex "$dir" -o "$reindexed" ;;
            convert) limited "$bin" convert "$path" -o "$work/out/$name.converted" ;;
            export) limited "$bin" export "$path" --topic "$topic" -o "$work/out/$name.export" ;;
            play) offline "$bin" play "$path" --disable-keyboard-controls --rate 10 \
                --playback-duration 1 ;;
        esac >"$log.out" 2>"$log.err"
        check "$name $verb" $? "$problem" "$log"
        case $verb in
            cat)
                if [ "$messages" != - ]; then
                    printed=$(grep -c '^--- ' "$log.out")
                    if [ "$printed" != "$messages" ]; then
                        fail "$name cat" "printed $printed messages, not each of $messages once"
                    fi
                fi
                ;;
            doctor)
                case $name in
                    realsense_png_bomb.db3 | extreme_times | straddling_times) ;;
                    *)
                        if [ "$verdict" = 0 ] && ! grep -qiE "$problem" "$log.out" "$log.err"; then
                            fail "$name doctor" "reports no damage"
                        fi
                        ;;
                esac
                ;;
        esac
        line+=" $verb=$verdict"
    done
    echo "$line"
done <"$work/crafted/manifest.tsv"

files=$(wc -l <"$work/crafted/manifest.tsv")
echo "$files crafted files x 7 commands: $runs runs in $((SECONDS - start)) s under ulimit -v $limit_kib, ${#failures[@]} failed"
if [ ${#failures[@]} -gt 0 ]; then
    printf 'FAILED %s\n' "${failures[@]}" >&2
    exit 1
fi
