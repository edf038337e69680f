#!/usr/bin/env bash
# Runs every fuzz target (fuzz/, cargo-fuzz + libFuzzer) for a fixed budget from the committed
# seeds (fuzz/seeds/<target>) plus the working corpus (fuzz/corpus/<target>, not committed),
# with a memory limit on every run so that an allocation bomb counts as a crash: no single
# allocation above 256 MiB (-malloc_limit_mb, the cap the regression replays put on their
# allocator; the targets lower the budgets of rosbag2_rs_storage::limits below it), 2 GiB of
# RSS. Targets whose input is a file get inputs of up to 1 MiB (-max_len), enough for files of
# many records (duplicated index records, chunks listed several times).
#
#   tools/fuzz.sh                 # every target, FUZZ_SECONDS (default 20) each: CI's budget
#   FUZZ_SECONDS=1800 FUZZ_RUNS=10000000 tools/fuzz.sh mcap_read sqlite
#                                 # a campaign: 30 minutes or 10 million executions per target,
#                                 # whichever comes first
#   FUZZ_NO_WIRE=1 tools/fuzz.sh zstd_file
#                                 # without Cyclone DDS (no C build): every target but xtypes
#
# cargo-fuzz needs nightly-only rustc flags (-Zsanitizer, sanitizer coverage); on the stable
# toolchain RUSTC_BOOTSTRAP=1 enables them. Crashes land in fuzz/artifacts/<target>/; the
# script exits non-zero when any target fails. A libFuzzer line per target with its executions
# and coverage is printed at the end (and kept in fuzz/corpus/<target>.log).
set -euo pipefail

cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${FUZZ_SECONDS:-20}
RUNS=${FUZZ_RUNS:--1}
export RUSTC_BOOTSTRAP=1
# The bundled SQLite is compiled by the C compiler (gcc here) with -fsanitize=address; two
# function-local statics of sqlite3.c share a name (`aiOff`), which LLVM's runtime reports as an
# ODR violation at start-up. Level 1 still reports globals of one name with different sizes.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_odr_violation=1}
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-$PWD/fuzz/target}}

if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install --locked cargo-fuzz --version 0.13.2
fi

features=()
if [ -n "${FUZZ_NO_WIRE:-}" ]; then
    features=(--no-default-features)
fi

# The targets that need Cyclone DDS (required-features = ["wire"] in fuzz/Cargo.toml).
wire_targets='xtypes'

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo fuzz list)
    if [ -n "${FUZZ_NO_WIRE:-}" ]; then
        mapfile -t targets < <(printf '%s\n' "${targets[@]}" | grep -vxE "$wire_targets")
    fi
fi

# Release build with debug assertions (overflow checks on), address sanitizer.
cargo fuzz build --debug-assertions "${features[@]}"

# Targets whose input is a whole file (a bag, a recording, a replay log).
file_targets=" mcap_read mcap_doctor_reindex sqlite ros1 realsense realsense_db3 zstd_file pf_timesync_replay "

failed=()
summary=()
for target in "${targets[@]}"; do
    corpus=fuzz/corpus/$target
    mkdir -p "$corpus" "fuzz/seeds/$target"
    log=fuzz/corpus/$target.log
    max_len=()
    if [[ $file_targets == *" $target "* ]]; then
        max_len=(-max_len=1048576)
    fi
    echo "== $target: ${SECONDS_PER_TARGET}s"
    if cargo fuzz run --debug-assertions "${features[@]}" "$target" "$corpus" "fuzz/seeds/$target" -- \
        -max_total_time="$SECONDS_PER_TARGET" -runs="$RUNS" -rss_limit_mb=2048 -malloc_limit_mb=256 \
        "${max_len[@]}" -timeout=10 -print_final_stats=1 >"$log" 2>&1; then
        :
    else
        failed+=("$target")
        tail -n 40 "$log"
    fi
    execs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}' || true)
    cov=$(grep -E '#[0-9]+.*(DONE|pulse|NEW|REDUCE).*cov:' "$log" | tail -n 1 | sed -E 's/.*cov: ([0-9]+).*ft: ([0-9]+).*/cov \1 ft \2/' || true)
    summary+=("$target: ${execs:-?} executions, ${cov:-cov ?}")
done

printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
