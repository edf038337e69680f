"""Recorder under load, as a regression table: how much of what a Python `cyclonedds` publisher
sends our `recorder` records, with its CPU time and peak RSS, next to a Python reader that only
counts (the baseline, same publisher, same run). One row per workload:

- 200 topics x 10 Hz (many small topics), 5 s;
- one topic of 100 B as fast as the Python publisher goes (target 20 kHz), 3 s;
- 1 MB x 200 Hz, 3 s: default cache; `--max-cache-size 20000000`; the same with zstd per message;
- starved: the same 1 MB x 200 Hz with zstd per message and `--max-cache-size 20000000`, the
  recorder limited to 10 % of one core by a cgroup (v1 `cpu` or v2), so that compression cannot
  keep up: drops are expected, and the recorder must name compression as their cause.

Reproduce (root; it enters its own network namespace, DDS stays on `lo`):
`cargo build --release -p rosbag2_rs_transport --bin recorder && unshare --net -- sh -c 'ip link
 set lo up && ip link set lo multicast on && ip route add 224.0.0.0/4 dev lo &&
 .venv/bin/python tests/interop/bench_recorder_load.py'`

`RECORDER_BACKENDS` runs the recorder rows once per backend of the same binary (comma-separated:
`cyclone`, the default; `fastdds`, the native Fast DDS backend; `rcl`, rcl and the sourced ROS 2's
default rmw), and `RECORDER_WORKLOADS` picks rows by the start of their names (`100 B,1 MB x 200
Hz`). `RECORDER` is the binary (a colcon install's `lib/rosbag2_rs_transport/recorder` for rcl;
run in that sourced environment). `RECORDER_PUBLISHER=rclpy` makes the publisher and the baseline
reader rclpy nodes on the sourced ROS 2's default rmw with default settings (run the script with
that ROS 2's Python): the same vendor as the Fast DDS backends, where Python `cyclonedds` reaches
them across vendors.
"""
import importlib
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conftest import CYCLONE  # noqa: E402

# The publisher and the baseline reader: Python `cyclonedds` (default) or `rclpy` (the sourced
# ROS 2's default rmw; run this script with that ROS 2's Python).
PUBLISHER = os.environ.get('RECORDER_PUBLISHER', 'cyclonedds')
if PUBLISHER == 'cyclonedds':
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
    from ros_dds import RELIABLE, RawImage, String, wait_matched
else:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    def get_message(ros_type):
        package, kind, name = ros_type.split('/')
        return getattr(importlib.import_module(f'{package}.{kind}'), name)

ROOT = pathlib.Path(__file__).resolve().parents[2]
RECORDER = pathlib.Path(os.environ.get('RECORDER') or
                        pathlib.Path(os.environ.get('CARGO_TARGET_DIR', ROOT / 'target')) / 'release' / 'recorder')
# The recorder's environment for each backend it can be run on.
BACKENDS = {
    'cyclone': ('Cyclone DDS', {**CYCLONE, 'ROSBAG2_RS_MIDDLEWARE': 'native'}),
    'fastdds': ('native Fast DDS', {'RMW_IMPLEMENTATION': 'rmw_fastrtps_cpp', 'ROSBAG2_RS_MIDDLEWARE': 'native'}),
    'rcl': ('rcl, default rmw', {'ROSBAG2_RS_MIDDLEWARE': 'rcl'}),
}
DOMAIN = 77


STORE = get_typestore(Stores.ROS2_JAZZY)


def string(text):
    """A `std_msgs/String` serialized by rosbags."""
    return bytes(STORE.serialize_cdr(STORE.types['std_msgs/msg/String'](data=text), 'std_msgs/msg/String'))


def small_topics():
    return [(f'/load/t{i}', 'std_msgs/msg/String', string('x' * 32)) for i in range(200)], 10.0, 5.0


def fast_topic():
    return [('/load/fast', 'std_msgs/msg/String', string('y' * 92))], 20_000.0, 3.0


def camera():
    """A 1 MiB mono8 `sensor_msgs/Image` of noise (zstd cannot shrink it, so compressing it
    costs its full price), serialized once by rosbags."""
    import numpy as np
    t = STORE.types
    pixels = np.frombuffer(np.random.default_rng(0).bytes(1 << 20), dtype=np.uint8)
    image = t['sensor_msgs/msg/Image'](
        header=t['std_msgs/msg/Header'](stamp=t['builtin_interfaces/msg/Time'](sec=0, nanosec=0), frame_id='cam'),
        height=1024, width=1024, encoding='mono8', is_bigendian=0, step=1024, data=pixels)
    return [('/load/camera', 'sensor_msgs/msg/Image',
             bytes(STORE.serialize_cdr(image, 'sensor_msgs/msg/Image')))], 200.0, 3.0


class CycloneEndpoints:
    """Python `cyclonedds` writers and counting readers of the workload's topics."""

    def __init__(self):
        self.dp = DomainParticipant(DOMAIN)

    def close(self):
        pass

    @staticmethod
    def _kind(ros_type):
        return {'std_msgs/msg/String': String, 'sensor_msgs/msg/Image': RawImage}[ros_type]

    def writers(self, topics):
        """One `write(cdr)` per topic, once each has matched the sink."""
        writers = []
        for name, ros_type, cdr in topics:
            kind = self._kind(ros_type)
            sample = RawImage.sample(cdr) if kind is RawImage else kind.deserialize(cdr)
            w = DataWriter(self.dp, Topic(self.dp, 'rt' + name, kind), qos=RELIABLE)
            assert wait_matched(w, 20), 'the sink never subscribed'
            writers.append(lambda w=w, sample=sample: w.write(sample))
        return writers

    def counter(self, topics):
        """Takes what arrives, counting it in `counts[0]`, until `stop` is set (no listener
        callbacks)."""
        readers = [DataReader(self.dp, Topic(self.dp, 'rt' + name, self._kind(ros_type)), qos=RELIABLE)
                   for name, ros_type, _ in topics]
        counts, stop = [0], threading.Event()

        def count():
            while not stop.is_set():
                got = sum(len(r.take(N=1000)) for r in readers)
                counts[0] += got
                if not got:
                    time.sleep(0.001)
        return counts, stop, count


class RclpyEndpoints:
    """An rclpy node on the sourced ROS 2's default rmw with default settings (reliable, keep
    last 10, or `RECORDER_PUBLISHER_DEPTH`): publishers of the serialized samples and counting
    subscriptions."""

    def __init__(self):
        # A context of its own: the nodes of one context share a DDS participant.
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=DOMAIN)
        self.node = rclpy.create_node(f'bench_recorder_load_{id(self)}', context=self.context)
        self.qos = QoSProfile(depth=int(os.environ.get('RECORDER_PUBLISHER_DEPTH', 10)),
                              reliability=ReliabilityPolicy.RELIABLE)

    def writers(self, topics):
        writers = []
        for name, ros_type, cdr in topics:
            pub = self.node.create_publisher(get_message(ros_type), name, self.qos)
            deadline = time.monotonic() + 20
            while pub.get_subscription_count() == 0:
                assert time.monotonic() < deadline, 'the sink never subscribed'
                time.sleep(0.01)
            writers.append(lambda pub=pub, cdr=cdr: pub.publish(cdr))
        return writers

    def counter(self, topics):
        """A counting reader in a process of its own (in this one, Fast DDS would hand the
        samples over in memory, not through its transport as to the recorder)."""
        counts, stop = [0], threading.Event()
        proc = subprocess.Popen([sys.executable, __file__, 'count', *[f'{n}={t}' for n, t, _ in topics]],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == 'ready'

        def count():
            stop.wait()
            proc.send_signal(signal.SIGTERM)
            counts[0] = int(proc.communicate(timeout=30)[0])
        return counts, stop, count

    def count(self, topics):
        """Counts what arrives on `topics` (`name=type`) until SIGTERM, then prints the count."""
        counts = [0]

        def on_message(_):
            counts[0] += 1
        for topic in topics:
            name, ros_type = topic.split('=')
            self.node.create_subscription(get_message(ros_type), name, on_message, self.qos, raw=True)
        stopped = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stopped.set())
        executor = SingleThreadedExecutor(context=self.context)
        executor.add_node(self.node)
        print('ready', flush=True)
        while not stopped.is_set():
            executor.spin_once(timeout_sec=0.05)
        print(counts[0], flush=True)

    def close(self):
        self.node.destroy_node()
        self.context.try_shutdown()


def endpoints():
    return CycloneEndpoints() if PUBLISHER == 'cyclonedds' else RclpyEndpoints()


class Sink:
    """What receives the load: the recorder (in `cgroup` when given) or a counting reader."""

    def __init__(self, topics, out, args, backend='cyclone', cgroup=None):
        self.out, self.proc = out, None
        if args is None:
            self.reader = endpoints()
            self.counts, self.stop, count = self.reader.counter(topics)
            self.thread = threading.Thread(target=count)
            self.thread.start()
            return
        env = {key: value for key, value in os.environ.items() if key != 'RMW_IMPLEMENTATION'}
        env.update(BACKENDS[backend][1], ROS_DOMAIN_ID=str(DOMAIN))
        self.log = out.with_suffix('.log')
        with open(self.log, 'w') as log:
            self.proc = subprocess.Popen([str(RECORDER), '--disable-keyboard-controls', '-o', str(out),
                                          '--topics', *[t for t, _, _ in topics], *args],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=env)
        if cgroup:
            cgroup.add(self.proc.pid)

    def finish(self):
        if self.proc is None:
            time.sleep(1.0)
            self.stop.set()
            self.thread.join()
            self.reader.close()
            return self.counts[0], 0.0, 0.0, ''
        time.sleep(1.0)
        self.proc.send_signal(signal.SIGINT)
        # A recorder that does not stop is killed (and the row says so), never left writing.
        deadline = time.monotonic() + 60
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                self.proc.kill()
                _, status, usage = os.wait4(self.proc.pid, 0)
                self.proc.returncode = os.waitstatus_to_exitcode(status)
                return 0, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, 'did not stop within 60 s of SIGINT: killed'
            time.sleep(0.05)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        log = self.log.read_text()
        with Reader(self.out) as reader:
            recorded = sum(1 for _ in reader.messages())
        cause = re.search(r'messages were dropped: ([^(\n]*)', log)
        return recorded, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, cause.group(1).strip() if cause else ''


class CpuLimit:
    """A cgroup that holds its tasks to `share` of one core (v1 `cpu` controller or v2)."""

    def __init__(self, share):
        self.path = None
        period = 100_000
        for base, v2 in (('/sys/fs/cgroup/cpu', False), ('/sys/fs/cgroup', True)):
            path = pathlib.Path(base) / 'rosbag2_rs_bench_starved'
            try:
                path.mkdir(exist_ok=True)
                if v2:
                    (path / 'cpu.max').write_text(f'{int(share * period)} {period}')
                else:
                    (path / 'cpu.cfs_period_us').write_text(str(period))
                    (path / 'cpu.cfs_quota_us').write_text(str(int(share * period)))
                self.path, self.tasks = path, path / 'cgroup.procs'
                return
            except OSError:
                continue

    def add(self, pid):
        self.tasks.write_text(str(pid))

    def remove(self):
        if self.path:
            try:
                self.path.rmdir()
            except OSError:
                pass


def run(workload, args, backend='cyclone', cgroup=None):
    topics, hz, seconds = workload()
    work = pathlib.Path(tempfile.mkdtemp(prefix='load-'))
    sink = publisher = None
    try:
        sink = Sink(topics, work / 'bag', args, backend, cgroup)
        publisher = endpoints()
        writers = publisher.writers(topics)
        time.sleep(0.5)
        sent, start = 0, time.monotonic()
        for i in range(int(hz * seconds)):
            delay = start + i / hz - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            for write in writers:
                write()
                sent += 1
        elapsed = time.monotonic() - start
        received, cpu, rss, cause = sink.finish()
        return sent, elapsed, received, cpu, rss, cause
    finally:
        if publisher is not None:
            publisher.close()
        if sink is not None and sink.proc is not None and sink.proc.poll() is None:
            sink.proc.kill()
        shutil.rmtree(work, ignore_errors=True)


def main():
    assert sorted(name for _, name in socket.if_nameindex()) == ['lo'], \
        'run inside a private network namespace (see the module doc)'
    assert RECORDER.is_file(), f'build {RECORDER} first (see the module doc)'
    cache = ['--max-cache-size', '20000000']
    zstd = ['--compression-mode', 'message', '--compression-format', 'zstd']
    rows = [
        ('200 topics x 10 Hz', small_topics, []),
        ('100 B, as fast as the publisher goes', fast_topic, []),
        ('1 MB x 200 Hz', camera, []),
        ('1 MB x 200 Hz, --max-cache-size 20 MB', camera, cache),
        ('1 MB x 200 Hz, 20 MB cache, zstd per message', camera, cache + zstd),
    ]
    backends = os.environ.get('RECORDER_BACKENDS', 'cyclone').split(',')
    wanted = os.environ.get('RECORDER_WORKLOADS')
    if wanted:
        rows = [row for row in rows if any(row[0].startswith(w) for w in wanted.split(','))]
    print('| workload | sink | published | received/recorded | rate (msg/s) | CPU s | peak RSS MiB | drop cause |')
    print('|---|---|---|---|---|---|---|---|')
    for name, workload, args in rows:
        sinks = [('Python reader (baseline)' if PUBLISHER == 'cyclonedds' else 'rclpy reader (baseline)', None, None)]
        sinks += [(f'our recorder ({BACKENDS[b][0]})' if backends != ['cyclone'] else 'our recorder', args, b)
                  for b in backends]
        for sink, sink_args, backend in sinks:
            sent, elapsed, got, cpu, rss, cause = run(workload, sink_args, backend)
            print(f'| {name} | {sink} | {sent} | {got} | {sent / elapsed:.0f} | '
                  f'{cpu:.2f} | {rss:.0f} | {cause or "-"} |', flush=True)
    if wanted:
        return
    limit = CpuLimit(0.1)
    if limit.path is None:
        print('| starved | our recorder | - | - | - | - | - | no cgroup could be made here |')
        return
    try:
        sent, elapsed, got, cpu, rss, cause = run(camera, cache + zstd, backends[0], cgroup=limit)
        print(f'| 1 MB x 200 Hz, 20 MB cache, zstd per message, recorder at 10 % of a core | our recorder | '
              f'{sent} | {got} | {sent / elapsed:.0f} | {cpu:.2f} | {rss:.0f} | {cause or "-"} |')
    finally:
        limit.remove()


if __name__ == '__main__':
    if sys.argv[1:2] == ['count']:
        RclpyEndpoints().count(sys.argv[2:])
    else:
        main()
