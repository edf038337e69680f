"""Benchmark: 6 MB sensor_msgs/Image frames (1080p RGB) at 30 Hz to two Cyclone DDS readers at
once, one with an 8 MB socket receive buffer and one with Cyclone's defaults, from our player and,
as the baseline in the same run, from a Cyclone DDS writer. A default reader loses fragments at
random, so each source is run ROUNDS times, alternating, and the counts are printed per round.

    .venv/bin/python tests/interop/bench_camera_readers.py [ROUNDS]    # as root, after `cargo build --release --workspace --bins`

Enters a private network namespace of its own (only `lo`, multicast routed to it), and raises
`net.core.rmem_max` to 16 MiB for the run if it is lower (restored at the end).
"""
import ctypes
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

CLONE_NEWNET = 0x40000000
RMEM_MAX = pathlib.Path('/proc/sys/net/core/rmem_max')


def enter_private_network():
    if ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET) != 0:
        sys.exit(f'unshare(CLONE_NEWNET) failed (needs root): {os.strerror(ctypes.get_errno())}')
    for args in (['link', 'set', 'lo', 'up'], ['link', 'set', 'lo', 'multicast', 'on'],
                 ['route', 'add', '224.0.0.0/4', 'dev', 'lo']):
        subprocess.run(['ip', *args], check=True)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if sys.argv[2:] == ['--in-namespace']:
        enter_private_network()
        run(rounds)
        return
    # The limit is host-wide and can only be written from the host's namespace: the run itself
    # happens in a child process that enters the private one.
    old = int(RMEM_MAX.read_text())
    if old < 16 << 20:
        RMEM_MAX.write_text(str(16 << 20))
    try:
        subprocess.run([sys.executable, __file__, str(rounds), '--in-namespace'], check=True)
    finally:
        RMEM_MAX.write_text(str(old))


def run(rounds):
    # Imported here: cyclonedds must not start before the namespace exists.
    from cyclonedds.domain import DomainParticipant
    from rosbags.typesys import Stores, get_typestore

    from test_large_data_interop import camera_bag, from_cyclone_writer, from_player, to_two_readers

    count, domain = 60, 43
    with tempfile.TemporaryDirectory() as tmp:
        bag = pathlib.Path(tmp) / 'bag'
        sent = camera_bag(bag, get_typestore(Stores.ROS2_JAZZY), count)
        body = len(sent[0]) - 4
        dp = DomainParticipant(domain)
        sources = {'Cyclone DDS writer (baseline)': from_cyclone_writer(dp, '/camera/image', sent),
                   'rosbag2-rs player': from_player(dp, bag, domain)}
        got = {name: [] for name in sources}
        print(f'## {count} × 6 MB at 30 Hz to an 8 MB-buffer reader and a default reader at once\n')
        print('| round | source | 8 MB reader | default reader |')
        print('|---|---|---|---|')
        for i in range(rounds):
            for name, send in sources.items():
                tuned, default = to_two_readers(domain, '/camera/image', count, body, send)
                got[name].append(len(default))
                print(f'| {i + 1} | {name} | {len(tuned)}/{count} | {len(default)}/{count} |', flush=True)
        print()
        for name, counts in got.items():
            print(f'{name}: default reader mean {statistics.mean(counts):.1f}/{count} (min {min(counts)}, max {max(counts)})')


if __name__ == '__main__':
    os.environ.setdefault('ROSBAG2_RS_PROFILE', 'release')  # the player of `cargo build --release`
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    os.chdir(pathlib.Path(__file__).parent)
    main()
