"""Our recorder against a real DDS peer: Python `cyclonedds` publishers (the DDS under
rmw_cyclonedds_cpp) and service client, bags read back by Python `rosbags`.

Runs only inside a private network namespace (`tools/test.sh` starts it under `unshare --net`).
"""
import os
import signal
import subprocess
import threading
import time

import pytest
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic
from rosbags.rosbag2 import Reader

from conftest import binary
from ros_dds import (RELIABLE, Header, Image, ServiceClient, String, Time, only_in_private_network,
                     refuse_real_interfaces)
from ros_dds import wait_matched as matched
from test_dds_interop import same_cdr

pytestmark = only_in_private_network


@pytest.fixture(autouse=True)
def _refuse_real_interfaces():
    refuse_real_interfaces()


class Recorder:
    """The `recorder` binary on its own DDS domain."""

    def __init__(self, domain, log, *args):
        env = {**os.environ, 'ROS_DOMAIN_ID': str(domain), 'RUST_BACKTRACE': '1'}
        # The log goes to a file: an unread pipe would fill up and block the recorder's logging.
        self.log = log
        with open(log, 'w') as stderr:
            self.proc = subprocess.Popen([str(binary('recorder')), '--disable-keyboard-controls', *map(str, args)],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, env=env)

    def stop(self, sig=signal.SIGINT, timeout=60):
        self.proc.send_signal(sig)
        self.proc.wait(timeout=timeout)
        err = self.log.read_text()
        assert 'panicked' not in err, err
        return self.proc.returncode, err


def wait_matched(writer, what, timeout=20):
    assert matched(writer, timeout), f'the recorder never subscribed to {what}'


def preserialized(sample):
    """The sample with its serialization done once, so Python can publish at the target rate."""
    data = sample.serialize()
    sample.serialize = lambda use_version_2=None: data
    return sample, data


def paced(writer, samples, hz):
    start = time.monotonic()
    for i, sample in enumerate(samples):
        delay = start + i / hz - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        writer.write(sample)


def read_bag(bag):
    with Reader(bag) as reader:
        return [(conn.topic, t, bytes(raw)) for conn, t, raw in reader.messages()]


def test_every_message_small_and_large_is_recorded_byte_for_byte(tmp_path):
    bag = tmp_path / 'bag'
    rec = Recorder(31, tmp_path / 'recorder.log', '--topics', '/chatter', '/camera/image', '-o', bag)
    dp = DomainParticipant(31)
    chatter = DataWriter(dp, Topic(dp, 'rt/chatter', String), qos=RELIABLE)
    camera = DataWriter(dp, Topic(dp, 'rt/camera/image', Image), qos=RELIABLE)
    wait_matched(chatter, '/chatter')
    wait_matched(camera, '/camera/image')
    time.sleep(0.5)  # let the reliable handshake settle
    small = [preserialized(String(data=f'small message {i:05d}')) for i in range(2000)]
    pixels = bytes(range(256)) * 4096
    images = [preserialized(Image(header=Header(stamp=Time(sec=i, nanosec=7), frame_id='camera'), height=1024,
                                  width=1024, encoding='mono8', is_bigendian=0, step=1024,
                                  data=bytes([i]) + pixels[1:])) for i in range(60)]
    threads = [threading.Thread(target=paced, args=(chatter, [s for s, _ in small], 1000)),
               threading.Thread(target=paced, args=(camera, [s for s, _ in images], 30))]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rate = len(small) / (time.monotonic() - started)
    time.sleep(1.5)  # reliable delivery of the last samples
    code, err = rec.stop()
    assert code == 0, err
    got = read_bag(bag)
    by_topic = {}
    for topic, _, raw in got:
        by_topic.setdefault(topic, []).append(raw)
    assert len(by_topic.get('/chatter', [])) == len(small), f'{rate:.0f} Hz; ' + err[-2000:]
    assert len(by_topic.get('/camera/image', [])) == len(images), err[-2000:]
    for raw, (_, sent) in zip(by_topic['/chatter'], small):
        same_cdr(raw, sent)
    for raw, (_, sent) in zip(by_topic['/camera/image'], images):
        same_cdr(raw, sent)
    assert 'messages were dropped' not in err and ', dropped 0' in err


def test_snapshot_from_a_python_client_holds_exactly_the_last_seconds(tmp_path):
    prefix = tmp_path / 'snap'
    rec = Recorder(32, tmp_path / 'recorder.log', '--snapshot', '--max-buffer-duration', '1.0', '--topics', '/chatter', '-o', prefix)
    dp = DomainParticipant(32)
    chatter = DataWriter(dp, Topic(dp, 'rt/chatter', String), qos=RELIABLE)
    snapshot = ServiceClient(dp, 'rosbag2_recorder', 'snapshot')
    wait_matched(chatter, '/chatter')
    snapshot.wait()
    time.sleep(0.5)
    count = 300
    paced(chatter, [String(data=f'{i}') for i in range(count)], 100)  # 3 s at 100 Hz
    time.sleep(0.5)
    assert snapshot.call().success
    deadline = time.monotonic() + 20
    while not list(tmp_path.glob('snap_*/metadata.yaml')) and time.monotonic() < deadline:
        time.sleep(0.05)
    code, err = rec.stop()
    assert code == 0, err
    bags = sorted(tmp_path.glob('snap_*'))
    assert len(bags) == 1, f'{bags}: the buffers were empty at shutdown, so no second bag\n{err}'
    messages = read_bag(bags[0])
    numbers = [int(String.deserialize(raw).data) for _, _, raw in messages]
    times = [t for _, t, _ in messages]
    assert numbers == list(range(numbers[0], count)), 'the newest messages, none missing'
    assert times[-1] - times[0] <= 1_000_000_000
    assert len(numbers) >= 90, f'1 s at 100 Hz, got {len(numbers)}'


def test_a_killed_recorder_leaves_a_bag_that_reindex_recovers(tmp_path, cli):
    bag = tmp_path / 'bag'
    rec = Recorder(33, tmp_path / 'recorder.log', '--topics', '/camera/image', '-o', bag)
    dp = DomainParticipant(33)
    camera = DataWriter(dp, Topic(dp, 'rt/camera/image', Image), qos=RELIABLE)
    wait_matched(camera, '/camera/image')
    time.sleep(0.5)
    pixels = bytes(range(256)) * 4096
    images = [preserialized(Image(header=Header(stamp=Time(sec=i, nanosec=0), frame_id='camera'), height=1024,
                                  width=1024, encoding='mono8', is_bigendian=0, step=1024,
                                  data=bytes([i]) + pixels[1:])) for i in range(20)]
    paced(camera, [s for s, _ in images], 30)
    # A 1 MB image overflows an MCAP chunk (768 KiB), so each completes the chunk before it: wait
    # until the file holds the first 19, then kill. The last one may still be in the open chunk.
    deadline = time.monotonic() + 20
    while sum(f.stat().st_size for f in bag.glob('*.mcap')) < 19 * len(images[0][1]) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    rec.stop(signal.SIGKILL)
    assert not (bag / 'metadata.yaml').exists(), 'a killed recorder writes no final metadata'
    out = cli.run('reindex', bag).stdout
    assert 'reindexed' in out
    got = [raw for _, _, raw in read_bag(bag)]
    assert len(got) in (19, 20), f'{len(got)} recovered: {out}'
    for raw, (_, sent) in zip(got, images):
        same_cdr(raw, sent)


def test_a_full_disk_stops_the_recorder_with_a_clear_error_and_keeps_what_fit(tmp_path, cli):
    """The recorder writes to a 6 MiB tmpfs (in a mount namespace of its own) until the disk is
    full: it must stop with a clear error, no panic, and leave a bag whose complete chunks are
    readable after `reindex`."""
    small = tmp_path / 'small'
    small.mkdir()
    kept = tmp_path / 'kept'
    log = tmp_path / 'recorder.log'
    script = (f'mount -t tmpfs -o size=6m tmpfs {small} && '
              f'{binary("recorder")} --disable-keyboard-controls --topics /camera/image -o {small}/bag 2>{log}; '
              f'rc=$?; cp -r {small}/bag {kept}; exit $rc')
    env = {**os.environ, 'ROS_DOMAIN_ID': '34', 'RUST_BACKTRACE': '1'}
    proc = subprocess.Popen(['unshare', '--mount', '--', 'bash', '-c', script], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    dp = DomainParticipant(34)
    camera = DataWriter(dp, Topic(dp, 'rt/camera/image', Image), qos=RELIABLE)
    wait_matched(camera, '/camera/image')
    time.sleep(0.5)
    pixels = bytes(range(256)) * 1024
    images = [preserialized(Image(header=Header(stamp=Time(sec=i, nanosec=0), frame_id='camera'), height=256,
                                  width=1024, encoding='mono8', is_bigendian=0, step=1024,
                                  data=bytes([i]) + pixels[1:])) for i in range(60)]  # 15 MB > 6 MiB
    paced(camera, [s for s, _ in images], 30)
    try:
        code = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail('the recorder kept running on a full disk: ' + log.read_text()[-2000:])
    err = log.read_text()
    assert 'panicked' not in err, err
    assert code != 0, 'a full disk must end the recording with an error'
    assert 'No space left on device' in err or 'space' in err.lower(), err[-2000:]
    cli.run('reindex', kept)
    got = [raw for _, _, raw in read_bag(kept)]
    assert len(got) >= 10, f'only {len(got)} messages kept before the disk filled\n{err[-2000:]}'
    for raw, (_, sent) in zip(got, images):
        same_cdr(raw, sent)
