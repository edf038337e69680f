"""Recorder throughput from a Zenoh publisher to disk: a Python eclipse-zenoh publisher in
rmw_zenoh's format (reliable keep-all: congestion control BLOCK) sends N camera frames back to
back through a Zenoh router to `ros2bag-rs record` (MCAP); the baseline in the same run is the
same publisher to a Python subscriber that only counts bytes. Throughput = bytes / (last receive
- first receive), the recorder's from the bag's receive timestamps.

Reproduce (root; it enters its own network namespace):
`cargo build --release -p ros2bag_rs_cli && unshare --net -- sh -c 'ip link set lo up &&
 .venv/bin/python tests/interop/bench_zenoh_recorder.py'`
"""
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import threading
import time

import zenoh
from rosbags.rosbag2 import Reader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rmw_zenoh_peer as rz  # noqa: E402
from test_zenoh_interop import private_network  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get('CARGO_TARGET_DIR', ROOT / 'target')) / 'release' / 'ros2bag-rs'


def frames(size, n):
    header = b'\x00\x01\x00\x00'
    return [header + i.to_bytes(4, 'little') + bytes([i % 256]) * size for i in range(n)]


def to_python(node, topic, payloads):
    sub_node = rz.Node('sink')
    got = []
    done = threading.Event()

    def on_sample(sample):
        got.append((time.time_ns(), len(sample.payload)))
        if len(got) == len(payloads):
            done.set()
    key = rz.topic_key(0, topic, rz.dds_type('sensor_msgs/msg/Image'), rz.IMAGE_HASH)
    sub = sub_node.session.declare_subscriber(key, on_sample)
    sub_node.wait_announced()
    time.sleep(0.5)
    pub = node.publisher(topic, 'sensor_msgs/msg/Image', rz.IMAGE_HASH, history=rz.KEEP_ALL, depth=1)
    time.sleep(0.5)
    for p in payloads:
        pub.publish(p)
    done.wait(120)
    sub.undeclare()
    sub_node.close()
    return len(got), sum(n for _, n in got), (got[-1][0] - got[0][0]) if len(got) > 1 else 0, '-'


def to_recorder(node, topic, payloads, out):
    env = {**os.environ, 'RMW_IMPLEMENTATION': 'rmw_zenoh_cpp'}
    pub = node.publisher(topic, 'sensor_msgs/msg/Image', rz.IMAGE_HASH, history=rz.KEEP_ALL, depth=1)
    rec = subprocess.Popen([str(BIN), 'record', '--topics', topic, '-o', str(out), '--polling-interval', '50'],
                           stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 30
    while not [t for t in node.graph() if rz.parse_token(t)['kind'] == 'MS' and
               rz.parse_token(t).get('topic') == topic]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)
    for p in payloads:
        pub.publish(p)
    time.sleep(3)
    rec.send_signal(signal.SIGINT)
    _, err = rec.communicate(timeout=120)
    summary = [line for line in err.splitlines() if line.startswith(f'{topic}: received')]
    with Reader(out) as reader:
        rows = [(t, len(d)) for _, t, d in reader.messages()]
    span = (rows[-1][0] - rows[0][0]) if len(rows) > 1 else 0
    return len(rows), sum(n for _, n in rows), span, summary[0].split(': ', 1)[1] if summary else '?'


def main():
    assert private_network(), 'run inside a private network namespace'
    router = zenoh.open(rz.router_config())
    node = rz.Node('camera')
    print('| path | bytes | in the bag / received | throughput | recorder summary |')
    print('|---|---|---|---|---|')
    with tempfile.TemporaryDirectory() as tmp:
        for size, n in [(1 << 20, 300), (6_220_800, 60)]:
            payloads = frames(size, n)
            for name, run in [('Python publisher → Python subscriber (baseline)',
                               lambda t: to_python(node, t, payloads)),
                              ('Python publisher → ros2bag-rs record (MCAP on disk)',
                               lambda t: to_recorder(node, t, payloads, pathlib.Path(tmp) / f'bag_{size}'))]:
                topic = f'/bench_{size}_{len(name)}'
                count, total, span, summary = run(topic)
                mbps = total / (span / 1e9) / 1e6 if span else float('nan')
                print(f'| {name} | {size} | {count}/{n} | {mbps:.0f} MB/s | {summary} |', flush=True)
    node.close()
    router.close()


if __name__ == '__main__':
    main()
