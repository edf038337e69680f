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
run in that sourced environment). The publisher is always Python `cyclonedds`: the Fast DDS
backends receive it across vendors, as a Fast DDS node receives a Cyclone one.
"""
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from rosbags.rosbag2 import Reader

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conftest import CYCLONE  # noqa: E402
from ros_dds import RELIABLE, RawImage, String, private_network, wait_matched  # noqa: E402

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


def small_topics():
    return [(f'/load/t{i}', String, String(data='x' * 32)) for i in range(200)], 10.0, 5.0


def fast_topic():
    return [('/load/fast', String, String(data='y' * 92))], 20_000.0, 3.0


def camera():
    """A 1 MiB mono8 `sensor_msgs/Image` of noise (zstd cannot shrink it, so compressing it
    costs its full price), serialized once by rosbags."""
    import numpy as np
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_JAZZY)
    t = store.types
    pixels = np.frombuffer(np.random.default_rng(0).bytes(1 << 20), dtype=np.uint8)
    image = t['sensor_msgs/msg/Image'](
        header=t['std_msgs/msg/Header'](stamp=t['builtin_interfaces/msg/Time'](sec=0, nanosec=0), frame_id='cam'),
        height=1024, width=1024, encoding='mono8', is_bigendian=0, step=1024, data=pixels)
    sample = RawImage.sample(bytes(store.serialize_cdr(image, 'sensor_msgs/msg/Image')))
    return [('/load/camera', RawImage, sample)], 200.0, 3.0


class Sink:
    """What receives the load: the recorder (in `cgroup` when given) or a counting reader."""

    def __init__(self, topics, out, args, backend='cyclone', cgroup=None):
        self.out, self.proc, self.counts, self.readers = out, None, None, []
        if args is None:
            self.dp = DomainParticipant(DOMAIN)
            self.readers = [DataReader(self.dp, Topic(self.dp, 'rt' + name, kind), qos=RELIABLE)
                            for name, kind, _ in topics]
            self.counts, self.stop = [0], threading.Event()
            self.thread = threading.Thread(target=self.count)
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

    def count(self):
        """Takes what arrives, counting it, until stopped (no listener callbacks)."""
        while not self.stop.is_set():
            got = sum(len(r.take(N=1000)) for r in self.readers)
            self.counts[0] += got
            if not got:
                time.sleep(0.001)

    def finish(self):
        if self.proc is None:
            time.sleep(1.0)
            self.stop.set()
            self.thread.join()
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
    sink = None
    try:
        sink = Sink(topics, work / 'bag', args, backend, cgroup)
        dp = DomainParticipant(DOMAIN)
        writers = [(DataWriter(dp, Topic(dp, 'rt' + name, kind), qos=RELIABLE), sample)
                   for name, kind, sample in topics]
        for w, _ in writers:
            assert wait_matched(w, 20), 'the sink never subscribed'
        time.sleep(0.5)
        sent, start = 0, time.monotonic()
        for i in range(int(hz * seconds)):
            delay = start + i / hz - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            for w, sample in writers:
                w.write(sample)
                sent += 1
        elapsed = time.monotonic() - start
        received, cpu, rss, cause = sink.finish()
        return sent, elapsed, received, cpu, rss, cause
    finally:
        if sink is not None and sink.proc is not None and sink.proc.poll() is None:
            sink.proc.kill()
        shutil.rmtree(work, ignore_errors=True)


def main():
    assert private_network(), 'run inside a private network namespace (see the module doc)'
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
        sinks = [('Python reader (baseline)', None, None)]
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
    main()
