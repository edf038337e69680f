"""Hour-long recording, measured: real publishers at a mixed load, our recorder with 1 s splits and a
size limit, every message numbered, the bag read back by Python `mcap` (not our reader) as each
split file closes.

The load (one publisher process, on the backend's own peer: Python `cyclonedds`, Python
`eclipse-zenoh` in rmw_zenoh's format through a Zenoh router, or rclpy on the sourced ROS 2's
default rmw): a 1 MiB `sensor_msgs/Image` camera at 10 Hz, a `sensor_msgs/Imu` at 1 kHz, 50
`std_msgs/String` topics at 10 Hz, and a transient-local (latched) `std_msgs/String` published
every 30 s. Each message carries its sequence number and publish time (the header's `frame_id`,
or the string's first 30 characters). The recorder also records its own live statistics
(`--statistics-rate 1`).

Reported per topic: published, missed at the start (published before the recorder's reader had
matched the publisher: not the recorder's to know, allowed for the first second), recorded
(distinct), reported lost by the recorder (its exit summary: dropped + lost on the way),
unreported loss, duplicates, the largest gap between two recorded messages and the largest
publish-to-receive delay; per run: the largest file against
`--max-bag-size`, the longest time the bag did not grow while publishers sent, the recorder's CPU
per recorded MB and RSS every `--sample-every` seconds with their least-squares slopes per hour,
the live statistics' largest disagreement with the bag, and the UDP datagrams its network
namespace dropped at full socket receive buffers (where a UDP middleware's losses begin).

Exit status 1 when anything was lost unreported or missed beyond the first second, a file is
larger than the limit plus one camera frame, the bag stalled longer than one split interval, the
live statistics disagree with the bag, or the recorder failed. Slopes are reported, not judged (a 2-minute run is too short to tell).

Run as root; it enters a private network namespace of its own (DDS and Zenoh stay on `lo`):

    cargo build --release -p rosbag2_rs_transport --bin recorder
    .venv/bin/python tests/soak/soak.py --backend cyclone --duration 120

`--backend rcl` runs a colcon-installed recorder in a sourced ROS 2 (`--recorder`, and
`--publisher-python` that ROS 2's Python with rclpy). `--consume` deletes each file once read
(an hour at 10 MB/s is 36 GB); `--svg` and `--json` write the samples.
"""
import argparse
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / 'tests' / 'interop'))

DOMAIN = 61
CAMERA_HZ, IMU_HZ, STATUS_HZ, STATUS_TOPICS, LATCHED_EVERY_S = 10, 1000, 10, 50, 30
CAMERA_BYTES = 1 << 20
# A message's number and publish time: `{seq:010d}:{ns:019d}`.
STAMP_LEN = 30
STATISTICS = '/events/rosbag2_rs_statistics'


def topics():
    """(name, type, rate in Hz (0: every LATCHED_EVERY_S), latched)."""
    return ([('/soak/camera', 'sensor_msgs/msg/Image', CAMERA_HZ, False),
             ('/soak/imu', 'sensor_msgs/msg/Imu', IMU_HZ, False)] +
            [(f'/soak/status_{i:02d}', 'std_msgs/msg/String', STATUS_HZ, False) for i in range(STATUS_TOPICS)] +
            [('/soak/latched', 'std_msgs/msg/String', 0, True)])


def stamp_offset(ros_type):
    """Where a message's stamp text starts in its CDR: the header's frame_id (after the
    encapsulation, the stamp and the string's length) or the string's data."""
    return 16 if ros_type != 'std_msgs/msg/String' else 8


# ---------------------------------------------------------------------------------------------
# The publisher process.

def templates():
    """Each topic's CDR with a placeholder stamp, serialized by rosbags."""
    import numpy as np
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_JAZZY)
    t = store.types
    placeholder = '0' * STAMP_LEN

    def header():
        return t['std_msgs/msg/Header'](stamp=t['builtin_interfaces/msg/Time'](sec=0, nanosec=0),
                                        frame_id=placeholder)
    vector = t['geometry_msgs/msg/Vector3'](x=0.0, y=0.0, z=9.81)
    cov = np.zeros(9, dtype=np.float64)
    pixels = np.frombuffer(np.random.default_rng(0).bytes(CAMERA_BYTES), dtype=np.uint8)
    messages = {
        'sensor_msgs/msg/Image': t['sensor_msgs/msg/Image'](
            header=header(), height=1024, width=1024, encoding='mono8', is_bigendian=0, step=1024,
            data=pixels),
        'sensor_msgs/msg/Imu': t['sensor_msgs/msg/Imu'](
            header=header(), orientation=t['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0),
            orientation_covariance=cov, angular_velocity=vector, angular_velocity_covariance=cov,
            linear_acceleration=vector, linear_acceleration_covariance=cov),
        'std_msgs/msg/String': t['std_msgs/msg/String'](data=placeholder + ' ' + 'x' * 33),
    }
    return {name: bytearray(store.serialize_cdr(msg, name)) for name, msg in messages.items()}, store


class CycloneWriters:
    """Python `cyclonedds` writers (reliable, keep last `depth`; latched: transient local)."""

    def __init__(self, depth):
        self.depth = depth
        from cyclonedds.domain import DomainParticipant
        from ros_dds import refuse_real_interfaces
        refuse_real_interfaces()
        self.dp = DomainParticipant(DOMAIN)
        self.writers = []

    def writer(self, name, ros_type, latched):
        from cyclonedds.core import Policy, Qos
        from cyclonedds.pub import DataWriter
        from cyclonedds.topic import Topic
        from ros_dds import RawImage, String
        import soak_types
        kind = {'sensor_msgs/msg/Image': RawImage, 'sensor_msgs/msg/Imu': soak_types.Imu,
                'std_msgs/msg/String': String}[ros_type]
        policies = [Policy.Reliability.Reliable(max_blocking_time=10**9), Policy.History.KeepLast(self.depth)]
        if latched:
            policies.append(Policy.Durability.TransientLocal)
        w = DataWriter(self.dp, Topic(self.dp, 'rt' + name, kind), qos=Qos(*policies))
        self.writers.append(w)
        sample = soak_types.raw_sample(kind)

        def write(cdr):
            sample.serialize = lambda use_version_2=None: cdr
            w.write(sample)
        return write

    def matched(self):
        return all(w.get_matched_subscriptions() for w in self.writers)

    def close(self):
        pass


class ZenohWriters:
    """rmw_zenoh-format publishers (reliable, keep last `depth`; latched: transient local)."""

    def __init__(self, store, depth):
        self.depth = depth
        import rmw_zenoh_peer as rz
        from ros_dds import refuse_real_interfaces
        refuse_real_interfaces()
        self.rz, self.store = rz, store
        self.node = rz.Node('soak_publisher', domain=DOMAIN)
        self.names = []

    def writer(self, name, ros_type, latched):
        rz = self.rz
        pub = self.node.publisher(name, ros_type, self.store.hash_rihs01(ros_type), reliability=rz.RELIABLE,
                                  durability=rz.TRANSIENT_LOCAL if latched else rz.VOLATILE,
                                  history=rz.KEEP_LAST, depth=self.depth)
        self.names.append(name)
        return pub.publish

    def matched(self):
        subscribed = {self.rz.parse_token(t).get('topic') for t in self.node.graph()
                      if self.rz.parse_token(t)['kind'] == 'MS'}
        return all(name in subscribed for name in self.names)

    def close(self):
        self.node.close()


class RclpyWriters:
    """rclpy publishers on the sourced ROS 2's default rmw (reliable, keep last `depth`;
    latched: transient local), publishing serialized bytes."""

    def __init__(self, depth):
        self.depth = depth
        import rclpy
        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=DOMAIN)
        self.node = rclpy.create_node('soak_publisher', context=self.context)
        self.pubs = []

    def writer(self, name, ros_type, latched):
        import importlib
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        package, kind, type_name = ros_type.split('/')
        msg = getattr(importlib.import_module(f'{package}.{kind}'), type_name)
        qos = QoSProfile(depth=self.depth, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)
        pub = self.node.create_publisher(msg, name, qos)
        self.pubs.append(pub)
        return lambda cdr: pub.publish(bytes(cdr))

    def matched(self):
        return all(p.get_subscription_count() for p in self.pubs)

    def close(self):
        self.node.destroy_node()
        self.context.try_shutdown()


def publish(backend, seconds, depth):
    """Publishes the load for `seconds` once every topic has a subscriber; prints `ready` then,
    and each topic's count as JSON at the end."""
    cdr, store = templates()
    endpoints = {'cyclone': CycloneWriters, 'zenoh': lambda d: ZenohWriters(store, d), 'rcl': RclpyWriters}[backend](depth)
    plan = topics()
    writers = [endpoints.writer(name, ros_type, latched) for name, ros_type, _, latched in plan]
    deadline = time.monotonic() + 60
    while not endpoints.matched():
        if time.monotonic() > deadline:
            sys.exit('the recorder did not subscribe to every topic within 60 s')
        time.sleep(0.05)
    print('ready', flush=True)
    counts = [0] * len(plan)

    def send(i):
        name, ros_type, _, _ = plan[i]
        buf = cdr[ros_type]
        at = stamp_offset(ros_type)
        buf[at:at + STAMP_LEN] = f'{counts[i]:010d}:{time.time_ns():019d}'.encode()
        writers[i](bytes(buf))
        counts[i] += 1

    # One tick per millisecond: the IMU every tick, the camera at the tick ending in 00, status
    # topic k at the tick ending in k+1, the latched topic every LATCHED_EVERY_S. A late tick is
    # caught up, so every topic's count is exact.
    start, tick, ticks = time.monotonic(), 0, int(seconds * IMU_HZ)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while tick < ticks and not stop:
        delay = start + tick / IMU_HZ - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        send(1)
        slot = tick % (IMU_HZ // CAMERA_HZ)
        if slot == 0:
            send(0)
        elif slot <= STATUS_TOPICS:
            send(1 + slot)
        if tick % (LATCHED_EVERY_S * IMU_HZ) == 0:
            send(len(plan) - 1)
        tick += 1
    # Reliable writers hand over what they hold before the process ends (less than the
    # recorder's shortest silence, so that it sees the publishers leave rather than go quiet).
    time.sleep(0.5)
    print(json.dumps({name: counts[i] for i, (name, _, _, _) in enumerate(plan)}), flush=True)
    endpoints.close()


# ---------------------------------------------------------------------------------------------
# The harness.

class Tally:
    """What the bag holds of one topic, built file by file."""

    def __init__(self, ros_type):
        self.offset = stamp_offset(ros_type)
        self.seen = bytearray()
        self.distinct = self.duplicates = self.count = 0
        self.last_log = None
        self.max_gap_ns = self.max_delay_ns = 0

    def add(self, log_time, data):
        self.count += 1
        text = bytes(data[self.offset:self.offset + STAMP_LEN])
        seq, sent = int(text[:10]), int(text[11:])
        if seq >= len(self.seen):
            self.seen.extend(bytes(max(seq + 1 - len(self.seen), len(self.seen))))
        if self.seen[seq]:
            self.duplicates += 1
        else:
            self.seen[seq] = 1
            self.distinct += 1
        self.max_delay_ns = max(self.max_delay_ns, log_time - sent)
        if self.last_log is not None:
            self.max_gap_ns = max(self.max_gap_ns, log_time - self.last_log)
        self.last_log = log_time if self.last_log is None else max(self.last_log, log_time)

    def missed_at_start(self):
        """How many messages were published before the first one recorded."""
        first = self.seen.find(1)
        return first if first >= 0 else 0

    def missing(self, sent):
        """The numbers below `sent` not recorded."""
        return [i for i in range(sent) if i >= len(self.seen) or not self.seen[i]]


class Bag:
    """Reads a bag's split files with Python `mcap` as they close (a file is closed once a file
    of a higher index exists, or the recorder has exited)."""

    def __init__(self, path, consume):
        from mcap_ros2.decoder import DecoderFactory
        self.path, self.consume = path, consume
        self.tallies = {name: Tally(ros_type) for name, ros_type, _, _ in topics()}
        self.files = []  # (name, size)
        self.read_bytes = 0
        self.decoder = DecoderFactory()
        self.statistics_gap = 0  # the largest |live received - bag count|, in messages
        self.statistics_seen = 0
        self.writer_lag_s = 0.0  # the largest writer lag the live statistics gave
        self.writer_stalls = 0

    def split_files(self):
        """The bag's files in split order (named `{index}_{name}_{time}.mcap`, as rosbag2 Lyrical
        names them)."""
        return sorted(self.path.glob('*.mcap'), key=lambda p: int(p.name.split('_', 1)[0]))

    def current_bytes(self):
        """Bytes written so far: the files read and the ones still open."""
        done = {name for name, _ in self.files}
        rest = 0
        for p in self.path.glob('*.mcap'):
            if p.name not in done:
                try:
                    rest += p.stat().st_size
                except FileNotFoundError:
                    pass
        return self.read_bytes + rest

    def read_closed(self, all_closed=False):
        done = {name for name, _ in self.files}
        pending = [p for p in self.split_files() if p.name not in done]
        for p in pending if all_closed else pending[:-1]:
            self._read(p)

    def _read(self, p):
        from mcap.reader import make_reader
        size = p.stat().st_size
        with open(p, 'rb') as f:
            for schema, channel, message in make_reader(f, decoder_factories=[self.decoder]).iter_messages(
                    log_time_order=True):
                tally = self.tallies.get(channel.topic)
                if tally is not None:
                    tally.add(message.log_time, message.data)
                elif channel.topic == STATISTICS:
                    self._check_statistics(schema, channel, message)
        self.files.append((p.name, size))
        self.read_bytes += size
        if self.consume:
            p.unlink()

    def _check_statistics(self, schema, channel, message):
        """The live statistics against the bag: each topic's `received` at the statistics'
        stamp, against the messages the bag holds that arrived by the time it was received."""
        stats = self.decoder.decoder_for(channel.message_encoding, schema)(message.data)
        self.statistics_seen += 1
        self.writer_lag_s = max(self.writer_lag_s, stats.writer_lag.sec + stats.writer_lag.nanosec / 1e9)
        self.writer_stalls = max(self.writer_stalls, stats.writer_stalls)
        for t in stats.topics:
            tally = self.tallies.get(t.topic_name)
            # (The latched topic's repeats in each file were written, not received.)
            if tally is not None and tally.duplicates == 0:
                self.statistics_gap = max(self.statistics_gap, abs(tally.count - t.received))


def proc_sample(pid):
    """(CPU seconds, RSS MiB) of a process."""
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
    with open(f'/proc/{pid}/status') as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith('VmRSS:')) / 1024
    return cpu, rss


def udp_receive_buffer_drops():
    """Datagrams this network namespace dropped because a socket's receive buffer was full
    (`RcvbufErrors` of /proc/net/snmp): losses of a UDP middleware that happen before any reader."""
    with open('/proc/net/snmp') as f:
        udp = [line.split() for line in f if line.startswith('Udp:')]
    return int(udp[1][udp[0].index('RcvbufErrors')])


def slope_per_hour(points):
    """Least-squares slope of (seconds, value) points, per hour."""
    if len(points) < 3:
        return float('nan')
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx * 3600 if sxx else float('nan')


def recorder_env(backend):
    env = {k: v for k, v in os.environ.items() if k != 'RMW_IMPLEMENTATION'}
    env['ROS_DOMAIN_ID'] = str(DOMAIN)
    env.update({'cyclone': {'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp', 'ROSBAG2_RS_MIDDLEWARE': 'native'},
                'zenoh': {'RMW_IMPLEMENTATION': 'rmw_zenoh_cpp', 'ROSBAG2_RS_MIDDLEWARE': 'native'},
                'rcl': {'ROSBAG2_RS_MIDDLEWARE': 'rcl'}}[backend])
    return env


def exit_summary(log):
    """Per topic (reported lost, silences) from the recorder's exit summary."""
    out = {}
    for m in re.finditer(r'^(\S+): received \d+, written \d+, dropped (\d+)(?:, lost on the way (\d+))?'
                         r'.*?(?:went silent (\d+) times)?$', log, re.M):
        out[m.group(1)] = (int(m.group(2)) + int(m.group(3) or 0), int(m.group(4) or 0))
    return out


def run(args):
    work = pathlib.Path(tempfile.mkdtemp(prefix='soak-', dir=args.work))
    bag_dir = work / 'bag'
    router = None
    if args.backend == 'zenoh':
        import zenoh
        import rmw_zenoh_peer as rz
        router = zenoh.open(rz.router_config())
    record = [str(args.recorder), '--disable-keyboard-controls', '-o', str(bag_dir), '-s', 'mcap',
              '--topics', *[name for name, _, _, _ in topics()], STATISTICS,
              '-d', str(args.split_seconds), '-b', str(args.max_bag_size), '--statistics-rate', '1']
    if args.compression == 'zstd':
        record += ['--storage-preset-profile', 'zstd_fast']
    log_path = work / 'recorder.log'
    with open(log_path, 'w') as log:
        recorder = subprocess.Popen(record, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    env=recorder_env(args.backend))
    publisher = subprocess.Popen([args.publisher_python, __file__, 'publish', '--backend', args.backend,
                                  '--publisher-depth', str(args.publisher_depth),
                                  '--duration', str(args.duration)], stdout=subprocess.PIPE, text=True)
    failures, samples = [], []
    udp_drops0 = udp_receive_buffer_drops()
    try:
        if publisher.stdout.readline().strip() != 'ready':
            raise SystemExit('the publisher did not start (see above)')
        bag = Bag(bag_dir, args.consume)
        start = time.monotonic()
        cpu0, _ = proc_sample(recorder.pid)
        last_sample, last_cpu, last_bytes = start, cpu0, 0
        grown_at, grown_bytes, longest_still = start, 0, 0.0
        while publisher.poll() is None:
            time.sleep(0.1)
            now = time.monotonic()
            if recorder.poll() is not None:
                failures.append(f'the recorder exited early ({recorder.returncode})')
                break
            written = bag.current_bytes()
            if written != grown_bytes:
                grown_at, grown_bytes = now, written
            elif now - start < args.duration:
                longest_still = max(longest_still, now - grown_at)
            bag.read_closed()
            if now - last_sample >= args.sample_every:
                cpu, rss = proc_sample(recorder.pid)
                mb = (written - last_bytes) / 1e6
                samples.append({'t': round(now - start, 1), 'cpu_s': round(cpu - last_cpu, 3), 'mb': round(mb, 2),
                                'cpu_ms_per_mb': round((cpu - last_cpu) * 1000 / mb, 3) if mb else None,
                                'rss_mib': round(rss, 2), 'files': len(bag.files)})
                print(f'  t={samples[-1]["t"]:7.1f} s  CPU {samples[-1]["cpu_s"] / (now - last_sample) * 100:5.1f} % '
                      f'{samples[-1]["cpu_ms_per_mb"]} ms/MB  RSS {rss:6.1f} MiB  files {len(bag.files)}', flush=True)
                last_sample, last_cpu, last_bytes = now, cpu, written
        published = json.loads(publisher.stdout.read().strip().splitlines()[-1])
        recorder.send_signal(signal.SIGINT)
        try:
            recorder.wait(timeout=60)
        except subprocess.TimeoutExpired:
            recorder.kill()
            failures.append('the recorder did not stop within 60 s of SIGINT')
        if recorder.returncode != 0:
            failures.append(f'the recorder exited with {recorder.returncode}')
        bag.read_closed(all_closed=True)
        udp_drops = udp_receive_buffer_drops() - udp_drops0
    finally:
        for p in (publisher, recorder):
            if p.poll() is None:
                p.kill()
        if router is not None:
            router.close()
    log = log_path.read_text()
    summary = exit_summary(log)
    rows, limit = [], args.max_bag_size + CAMERA_BYTES + 4096
    for name, ros_type, rate, latched in topics():
        t = bag.tallies[name]
        reported, silences = summary.get(name, (0, 0))
        sent = published[name]
        # What a publisher sent before the recorder's reader matched it (discovery is matched
        # from both ends independently; the publisher waits for its own end only) is not the
        # recorder's to know: it is counted apart, and allowed for the first second.
        at_start = t.missed_at_start()
        unreported = sent - t.distinct - reported - at_start
        rows.append({'topic': name, 'published': sent, 'missed_at_start': at_start, 'recorded': t.distinct,
                     'reported_lost': reported, 'unreported_lost': unreported, 'repeats': t.duplicates,
                     'silences': silences, 'max_gap_s': round(t.max_gap_ns / 1e9, 3),
                     'max_delay_s': round(t.max_delay_ns / 1e9, 3)})
        if unreported > 0:
            failures.append(f'{name}: {unreported} messages lost without a report (first missing: '
                            f'{t.missing(sent)[:10]})')
        if at_start > rate:
            failures.append(f'{name}: the first {at_start} messages were missed (the recorder joined late)')
        if t.duplicates and not latched:
            failures.append(f'{name}: {t.duplicates} messages recorded twice')
        if silences:
            failures.append(f'{name}: the recorder reported it silent {silences} times')
    biggest = max((size for _, size in bag.files), default=0)
    if biggest > limit:
        failures.append(f'a file of {biggest} bytes: more than --max-bag-size {args.max_bag_size} and one frame')
    if longest_still > args.split_seconds:
        failures.append(f'the bag did not grow for {longest_still:.2f} s while publishers sent')
    # A statistics message is counted against the bag at its own receive time, a little after
    # its stamp: a quarter second of the fastest topic is the margin (an hour on Cyclone DDS
    # needed 41 messages, 0.04 s).
    if bag.statistics_seen == 0:
        failures.append('no live statistics in the bag')
    elif bag.statistics_gap > IMU_HZ * 0.25:
        failures.append(f'the live statistics disagree with the bag by {bag.statistics_gap} messages')
    if bag.writer_lag_s > args.split_seconds or bag.writer_stalls:
        failures.append(f'the writer fell behind: {bag.writer_lag_s:.2f} s at most, {bag.writer_stalls} stalls')
    if 'the bag writer is' in log:
        failures.append('the recorder warned that its writer fell behind')
    steady = [s for s in samples if s['t'] > min(60, args.duration / 4)]
    report = {
        'backend': args.backend, 'duration_s': args.duration, 'compression': args.compression,
        'split_seconds': args.split_seconds, 'max_bag_size': args.max_bag_size, 'files': len(bag.files),
        'publisher_depth': args.publisher_depth,
        'largest_file': biggest, 'longest_still_s': round(longest_still, 2),
        'statistics_messages': bag.statistics_seen, 'statistics_max_disagreement': bag.statistics_gap,
        'writer_lag_max_s': round(bag.writer_lag_s, 3), 'writer_stalls': bag.writer_stalls,
        'udp_receive_buffer_drops': udp_drops,
        'cpu_ms_per_mb_slope_per_h': round(slope_per_hour([(s['t'], s['cpu_ms_per_mb']) for s in steady
                                                            if s['cpu_ms_per_mb'] is not None]), 3),
        'rss_mib_slope_per_h': round(slope_per_hour([(s['t'], s['rss_mib']) for s in steady]), 3),
        'topics': rows, 'samples': samples, 'failures': failures,
    }
    print_report(report)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(report, indent=1))
    if args.svg:
        pathlib.Path(args.svg).write_text(svg(report))
    if failures:
        print('recorder log (tail):\n' + log[-3000:])
    shutil.rmtree(work, ignore_errors=True)
    return report


def print_report(r):
    print(f"\n{r['backend']}: {r['duration_s']} s, publishers keep last {r.get('publisher_depth', 10)}, "
          f"{r['split_seconds']} s splits, --max-bag-size "
          f"{r['max_bag_size']}, compression {r['compression']}: {r['files']} files, largest {r['largest_file']} "
          f"bytes, bag still at most {r['longest_still_s']} s, live statistics {r['statistics_messages']} "
          f"(largest disagreement {r['statistics_max_disagreement']} messages, writer lag at most "
          f"{r['writer_lag_max_s']} s, {r['writer_stalls']} stalls), UDP datagrams dropped by full receive "
          f"buffers {r.get('udp_receive_buffer_drops', 0)}")
    status = [t for t in r['topics'] if t['topic'].startswith('/soak/status_')]
    shown = [t for t in r['topics'] if not t['topic'].startswith('/soak/status_')]
    if status:
        shown.append({'topic': f'/soak/status_* ({len(status)})',
                      **{k: sum(t[k] for t in status) for k in ('published', 'missed_at_start', 'recorded', 'reported_lost',
                                                                'unreported_lost', 'repeats', 'silences')},
                      **{k: max(t[k] for t in status) for k in ('max_gap_s', 'max_delay_s')}})
    print('| topic | published | missed at start | recorded | reported lost | unreported lost | repeats | silences | '
          'largest gap (s) | largest delay (s) |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for t in shown:
        print(f"| {t['topic']} | {t['published']} | {t.get('missed_at_start', 0)} | {t['recorded']} | {t['reported_lost']} "
              f"| {t['unreported_lost']} "
              f"| {t['repeats']} | {t['silences']} | {t['max_gap_s']} | {t['max_delay_s']} |")
    print(f"CPU per MB slope {r['cpu_ms_per_mb_slope_per_h']} ms/MB per hour, RSS slope "
          f"{r['rss_mib_slope_per_h']} MiB per hour (after the first minute)")
    for f in r['failures']:
        print(f'FAIL: {f}')


def svg(r, width=640, height=200):
    """Two line charts, CPU ms per recorded MB and RSS MiB over time."""
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{2 * height + 40}" '
             f'font-family="sans-serif" font-size="11">']
    for row, (key, label) in enumerate((('cpu_ms_per_mb', 'recorder CPU, ms per recorded MB'),
                                        ('rss_mib', 'recorder RSS, MiB'))):
        pts = [(s['t'], s[key]) for s in r['samples'] if s[key] is not None]
        if not pts:
            continue
        top = row * (height + 20) + 20
        x1 = max(x for x, _ in pts) or 1
        y1 = max(y for _, y in pts) * 1.2 or 1
        path = ' '.join(f'{50 + x / x1 * (width - 60):.1f},{top + height - 20 - y / y1 * (height - 40):.1f}'
                        for x, y in pts)
        parts += [f'<text x="50" y="{top}">{label} ({r["backend"]}, {r["duration_s"] // 60} min; '
                   f'slope {r[key.replace("cpu_ms_per_mb", "cpu_ms_per_mb_slope_per_h").replace("rss_mib", "rss_mib_slope_per_h")]} per hour)</text>',
                   f'<line x1="50" y1="{top + height - 20}" x2="{width - 10}" y2="{top + height - 20}" stroke="black"/>',
                   f'<line x1="50" y1="{top + 10}" x2="50" y2="{top + height - 20}" stroke="black"/>',
                   f'<text x="5" y="{top + 20}">{y1:.1f}</text><text x="5" y="{top + height - 20}">0</text>',
                   f'<text x="{width - 60}" y="{top + height - 5}">{x1:.0f} s</text>',
                   f'<polyline fill="none" stroke="steelblue" points="{path}"/>']
    return '\n'.join(parts + ['</svg>\n'])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('mode', nargs='?', default='run', choices=['run', 'publish'])
    parser.add_argument('--backend', choices=['cyclone', 'zenoh', 'rcl'], default='cyclone')
    parser.add_argument('--duration', type=float, default=120)
    parser.add_argument('--split-seconds', type=int, default=1)
    parser.add_argument('--max-bag-size', type=int, default=8_000_000)
    parser.add_argument('--compression', choices=['none', 'zstd'], default='none')
    parser.add_argument('--sample-every', type=float, default=10)
    parser.add_argument('--recorder', type=pathlib.Path,
                        default=pathlib.Path(os.environ.get('CARGO_TARGET_DIR', ROOT / 'target')) / 'release' / 'recorder')
    parser.add_argument('--publisher-python', default=sys.executable)
    parser.add_argument('--publisher-depth', type=int, default=10,
                        help="the publishers' keep-last depth (10, ROS 2's default)")
    parser.add_argument('--consume', action='store_true', help='delete each split file once read')
    parser.add_argument('--work', default=None, help='where the bag is written (default: the temporary directory)')
    parser.add_argument('--json')
    parser.add_argument('--svg')
    args = parser.parse_args()
    if args.mode == 'publish':
        publish(args.backend, args.duration, args.publisher_depth)
        return
    if sorted(name for _, name in socket.if_nameindex()) != ['lo']:
        # A private network namespace: only `lo`, multicast routed to it.
        os.execvp('unshare', ['unshare', '--net', '--', 'sh', '-c',
                              'ip link set lo up && ip link set lo multicast on && '
                              'ip route add 224.0.0.0/4 dev lo && exec "$0" "$@"', sys.executable, *sys.argv])
    report = run(args)
    sys.exit(1 if report['failures'] else 0)


if __name__ == '__main__':
    main()
