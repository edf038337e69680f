"""Camera-sized data and service robustness against the real Cyclone DDS peer (the DDS under
rmw_cyclonedds_cpp): our player → Cyclone readers with 6 MB images at 30 Hz, Cyclone writers →
our recorder at 1 MB/100 Hz and 6 MB/30 Hz, and 200 service calls from fresh participants while
the player plays with /clock.

Runs only inside a private network namespace (see ros_dds.py). The tuned reader asks for an 8 MB
socket receive buffer, which needs `net.core.rmem_max` >= 8 MiB (`tools/test.sh` raises it for
the run, as ROS 2's DDS tuning guide tells users to).
"""
import gc
import hashlib
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from ros_dds import (RELIABLE, RELIABLE_ALL, SERVICES, RawImage, ServiceClient, only_in_private_network,
                     refuse_real_interfaces, take, wait_matched)
from conftest import CYCLONE, binary
from test_dds_interop import same_cdr
from test_player_interop import Player, strings, write_bag
from test_recorder_interop import Recorder, paced, read_bag

pytestmark = only_in_private_network
HERE = pathlib.Path(__file__).parent
TUNED = '<CycloneDDS><Domain Id="any"><Internal><SocketReceiveBufferSize min="8MB"/></Internal></Domain></CycloneDDS>'
WIDTH, HEIGHT = 1920, 1080  # one 1080p RGB frame: 6,220,800 bytes


@pytest.fixture(autouse=True)
def _refuse_real_interfaces():
    refuse_real_interfaces()


def frames(count, width=WIDTH, height=HEIGHT, channels=3):
    base = np.arange(width * height * channels, dtype=np.uint64) % 251
    return [((base + i) % 256).astype(np.uint8) for i in range(count)]


class ImageReader:
    """image_reader.py in its own process, with its own Cyclone configuration."""

    def __init__(self, domain, topic, count, body_size, tuned):
        env = {k: v for k, v in os.environ.items() if k != 'CYCLONEDDS_URI'}
        if tuned:
            env['CYCLONEDDS_URI'] = TUNED
        self.proc = subprocess.Popen([sys.executable, str(HERE / 'image_reader.py'), str(domain), topic, str(count),
                                      str(body_size), '60'], cwd=HERE, env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = self.proc.stdout.readline().strip()
        assert line == 'ready', f'reader did not start: {line} {self.proc.stderr.read() if not line else ""}'

    def digests(self, timeout=90):
        out, err = self.proc.communicate(timeout=timeout)
        assert self.proc.returncode == 0, err
        return out.split('\n')[:-1] if out else []


def digest(body):
    return hashlib.sha256(body).hexdigest()


def camera_bag(path, typestore, count):
    """A bag of `count` distinct 1080p RGB frames at 30 Hz on /camera/image; returns their CDR."""
    Image_ = typestore.types['sensor_msgs/msg/Image']
    Header_ = typestore.types['std_msgs/msg/Header']
    Stamp = typestore.types['builtin_interfaces/msg/Time']
    messages = [('/camera/image', 'sensor_msgs/msg/Image', i * 100 // 3,
                 Image_(header=Header_(stamp=Stamp(sec=i, nanosec=0), frame_id='camera'), height=HEIGHT, width=WIDTH,
                        encoding='rgb8', is_bigendian=0, step=WIDTH * 3, data=p)) for i, p in enumerate(frames(count))]
    return write_bag(path, typestore, messages)['/camera/image']


def to_two_readers(domain, topic, count, body, send):
    """Digests received by an 8 MB-buffer reader and a default reader of `topic`, both started
    before `send()` publishes (it waits until its writer matched them)."""
    tuned = ImageReader(domain, topic, count, body, tuned=True)
    default = ImageReader(domain, topic, count, body, tuned=False)
    send()
    return tuned.digests(), default.digests()


def from_cyclone_writer(dp, topic, sent):
    """`send` for `to_two_readers`: a Cyclone DDS writer publishing `sent` at 30 Hz."""
    def send():
        writer = DataWriter(dp, Topic(dp, 'rt' + topic, RawImage), qos=RELIABLE)
        assert wait_matched(writer, peers=2)
        time.sleep(0.5)
        paced(writer, [RawImage.sample(cdr) for cdr in sent], 30)
        time.sleep(1.0)  # let the last frames' retransmits finish before the writer goes
        del writer
        gc.collect()
    return send


def from_player(dp, bag, domain):
    """`send` for `to_two_readers`: our player, resumed once its writer matched the readers."""
    def send():
        player = Player(bag, '--start-paused', domain=domain)
        try:
            resume = ServiceClient(dp, 'rosbag2_player', 'resume')
            resume.wait()
            time.sleep(1.0)  # the player's writer matches both readers
            resume.call()
            player.finish(timeout=60)
        finally:
            player.kill()
    return send


def test_6mb_at_30hz_from_our_player_reach_cyclone_readers(tmp_path, typestore):
    if int(pathlib.Path('/proc/sys/net/core/rmem_max').read_text()) < 8 << 20:
        pytest.fail('net.core.rmem_max < 8 MiB: run through tools/test.sh, which raises it for the run')
    count = 60
    sent = camera_bag(tmp_path / 'bag', typestore, count)
    expected = [digest(s[4:]) for s in sent]
    dp = DomainParticipant(41)
    # Repairs of a reliable keep-last writer have a budget of its history (16 frames, 0.5 s at
    # 30 Hz): on a 2-core machine busy with other work a stall can exceed it. One more round
    # tells such a stall (the second round is whole) from a loss the player causes (both lose).
    for attempt in (1, 2):
        tuned, default = to_two_readers(41, '/camera/image', count, len(sent[0]) - 4,
                                        from_player(dp, tmp_path / 'bag', 41))
        print(f'6 MB @ 30 Hz from the player, round {attempt}: 8 MB reader {len(tuned)}/{count}, '
              f'default reader {len(default)}/{count}')
        if tuned == expected:
            break
    assert tuned == expected, f'{len(tuned)}/{count} byte for byte with an 8 MB receive buffer'
    # A default reader's 1 MB socket buffer drops fragments at random, from a Cyclone writer too:
    # how many arrive is measured against that baseline in bench_camera_readers.py. What arrives
    # is whole, in order, and once.
    assert default, 'no frame reached a reader with default socket buffers'
    positions = [expected.index(d) for d in default]
    assert positions == sorted(set(positions)), 'frames out of order or repeated at the default reader'


def camera_frames(typestore, count, width, height, channels):
    """CDR of `count` distinct sensor_msgs/Image frames, serialized by rosbags."""
    Image_ = typestore.types['sensor_msgs/msg/Image']
    Header_ = typestore.types['std_msgs/msg/Header']
    Stamp = typestore.types['builtin_interfaces/msg/Time']
    return [typestore.serialize_cdr(Image_(header=Header_(stamp=Stamp(sec=i, nanosec=0), frame_id='camera'),
                                           height=height, width=width, encoding='rgb8' if channels == 3 else 'mono8',
                                           is_bigendian=0, step=width * channels, data=p), 'sensor_msgs/msg/Image')
            for i, p in enumerate(frames(count, width, height, channels))]


def test_a_cyclone_publisher_of_1mb_at_100hz_and_6mb_at_30hz_is_recorded_byte_for_byte(tmp_path, typestore):
    bag = tmp_path / 'bag'
    rec = Recorder(42, tmp_path / 'recorder.log', '--topics', '/camera/image', '/camera/full', '-o', bag)
    dp = DomainParticipant(42)
    small = DataWriter(dp, Topic(dp, 'rt/camera/image', RawImage), qos=RELIABLE_ALL)
    large = DataWriter(dp, Topic(dp, 'rt/camera/full', RawImage), qos=RELIABLE_ALL)
    for w in (small, large):
        assert wait_matched(w), 'the recorder never subscribed'
    time.sleep(0.5)
    one_mb = camera_frames(typestore, 200, 1024, 1024, 1)
    six_mb = camera_frames(typestore, 60, WIDTH, HEIGHT, 3)
    paced(small, [RawImage.sample(cdr) for cdr in one_mb], 100)
    paced(large, [RawImage.sample(cdr) for cdr in six_mb], 30)
    time.sleep(2)
    code, err = rec.stop()
    assert code == 0, err
    by_topic = {}
    for topic, _, raw in read_bag(bag):
        by_topic.setdefault(topic, []).append(raw)
    assert len(by_topic.get('/camera/image', [])) == 200, err[-2000:]
    assert len(by_topic.get('/camera/full', [])) == 60, err[-2000:]
    for raw, sent in zip(by_topic['/camera/image'], one_mb):
        same_cdr(raw, sent)
    for raw, sent in zip(by_topic['/camera/full'], six_mb):
        same_cdr(raw, sent)


def test_200_calls_from_fresh_clients_are_answered_while_playing(tmp_path, typestore):
    write_bag(tmp_path / 'bag', typestore, strings(typestore, '/chatter', 1200, 100))  # 2 min
    env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': '43'}
    log = tmp_path / 'player.log'
    with open(log, 'w') as stderr:  # a file: an unread pipe would fill up and block the player
        player = subprocess.Popen([str(binary('player')), str(tmp_path / 'bag'), '--disable-keyboard-controls',
                                   '--clock', '50'], env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    latencies, unanswered, vanished = [], [], 0
    try:
        for i in range(200):
            if i % 50 == 25:
                # A client that sends a request and disappears at once.
                dp = DomainParticipant(43)
                gone = ServiceClient(dp, 'rosbag2_player', 'get_rate')
                gone.wait()
                gone.requests.write(gone.request_type(client_id=gone.client_id, sequence_number=1,
                                                      structure_needs_at_least_one_member=0))
                del gone, dp
                gc.collect()
                vanished += 1
            dp = DomainParticipant(43)
            client = ServiceClient(dp, 'rosbag2_player', 'get_rate')
            # As soon as the request can go out: whether the player has discovered this
            # client's reply reader yet is the player's problem (the discovery race).
            assert wait_matched(client.requests), 'service not found'
            start = time.monotonic()
            try:
                # A lost reply never comes; a slow one (a loaded host) does: wait long enough to
                # tell the two apart.
                reply = client.call(timeout=10.0)
            except TimeoutError:
                unanswered.append(i)
                if len(unanswered) == 3:
                    break  # broken: no need to wait for the rest
            else:
                latencies.append(time.monotonic() - start)
                assert reply.rate == 1.0
            del client, dp
            gc.collect()
    finally:
        player.kill()
        player.wait()
    err = log.read_text()
    assert 'panicked' not in err, err
    latencies.sort()
    if latencies:
        print(f'{len(latencies)} fresh-client calls answered: p50 {latencies[len(latencies) // 2] * 1e3:.1f} ms, '
              f'max {latencies[-1] * 1e3:.1f} ms; {vanished} vanished clients')
    # Every call answered: none lost to the discovery race (the reply waits for the fresh
    # client's reply reader) or to the clients that vanished with a request pending.
    assert unanswered == [], f'{len(unanswered)} of 200 calls never answered: {unanswered}'


def test_a_reply_waits_for_a_client_whose_reply_reader_appears_late(tmp_path, typestore):
    """The discovery race made deterministic: the request is sent before the client's reply
    reader exists. A server that replied at once would lose the reply (volatile topic)."""
    write_bag(tmp_path / 'bag', typestore, strings(typestore, '/chatter', 100, 100))
    player = Player(tmp_path / 'bag', '--start-paused', domain=44)
    try:
        dp = DomainParticipant(44)
        request_type, response_type = SERVICES['get_rate']
        name = 'rosbag2_player/get_rate'
        requests = DataWriter(dp, Topic(dp, f'rq/{name}Request', request_type), qos=RELIABLE)
        assert wait_matched(requests), 'service not found'
        requests.write(request_type(client_id=7, sequence_number=1, structure_needs_at_least_one_member=0))
        time.sleep(0.5)
        replies = DataReader(dp, Topic(dp, f'rr/{name}Reply', response_type), qos=RELIABLE)
        got = take(replies, 1, timeout=5)
    finally:
        player.kill()
    assert [(r.client_id, r.sequence_number, r.rate) for r in got] == [(7, 1, 1.0)]
