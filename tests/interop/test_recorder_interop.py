"""Our recorder against a real DDS peer: Python `cyclonedds` publishers (the DDS under
rmw_cyclonedds_cpp) and service client, bags read back by Python `rosbags`.

Runs only inside a private network namespace (`tools/test.sh` starts it under `unshare --net`).
"""
import mmap
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass

import pytest
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import array, bounded_str, float32, float64, sequence, uint8
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic
from rosbags.interfaces import MessageDefinitionFormat
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from conftest import CYCLONE, binary, memory_kib, split_files
from ros_dds import (RELIABLE, RELIABLE_ALL, SERVICES, Clock, Header, Image, ServiceClient, String, Time,
                     UnanswerableRequests, only_in_private_network, refuse_real_interfaces)
from ros_dds import wait_matched as matched
from test_dds_interop import same_cdr

pytestmark = only_in_private_network


@pytest.fixture(autouse=True)
def _refuse_real_interfaces():
    refuse_real_interfaces()


class Recorder:
    """The `recorder` binary on its own DDS domain."""

    def __init__(self, domain, log, *args):
        env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': str(domain), 'RUST_BACKTRACE': '1'}
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
    # Seed 002: the window is now() - 1 s at the trigger, 0.5 s after the last message.
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
    assert len(numbers) >= 20, f'the last ~0.5 s at 100 Hz, got {len(numbers)}'


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


@pytest.mark.parametrize('min_free', [0, 2_000_000])
def test_a_full_disk_stops_the_recorder_with_a_clear_error_and_keeps_what_fit(tmp_path, cli, min_free):
    """The recorder writes to a 6 MiB tmpfs (in a mount namespace of its own) until the disk is
    full: it must stop with a clear error, no panic, and leave a bag whose complete chunks are
    readable after `reindex`. With `--min-free-space` it stops before the disk is full, the bag
    closed and readable as it is (metadata.yaml written, no reindex)."""
    small = tmp_path / 'small'
    small.mkdir()
    kept = tmp_path / 'kept'
    log = tmp_path / 'recorder.log'
    script = (f'mount -t tmpfs -o size=6m tmpfs {small} && '
              f'{binary("recorder")} --disable-keyboard-controls --topics /camera/image -o {small}/bag '
              f'--min-free-space {min_free} 2>{log}; '
              f'rc=$?; cp -r {small}/bag {kept}; exit $rc')
    env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': '34', 'RUST_BACKTRACE': '1'}
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
    if min_free:
        assert 'below the minimum' in err and 'No space left' not in err, err[-2000:]
        assert (kept / 'metadata.yaml').exists(), 'closed cleanly'
    else:
        cli.run('reindex', kept)
    got = [raw for _, _, raw in read_bag(kept)]
    assert len(got) >= 10, f'only {len(got)} messages kept before the disk filled\n{err[-2000:]}'
    for raw, (_, sent) in zip(got, images):
        same_cdr(raw, sent)


def wait_logged(log, text, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f'never logged {text!r}: {log.read_text()[-2000:]}')


SET_RATE_EVENTS = '/rosbag2_player/set_rate/_service_event'


def test_service_events_of_a_cyclone_call_are_recorded_and_played_back(tmp_path, typestore):
    """A Python Cyclone client calls our player's set_rate (introspection on): the service events
    are recorded by our recorder (`--services`), then played back by our player and received."""
    from test_player_interop import Player, strings
    from test_player_interop import write_bag as write_player_bag
    from ros_dds import RELIABLE_ALL, RESPONSE_SENT, REQUEST_RECEIVED, SetRateEvent, take
    from cyclonedds.sub import DataReader
    write_player_bag(tmp_path / 'bag', typestore, strings(typestore, '/chatter', 10, 100))
    recorded = tmp_path / 'events'
    dp = DomainParticipant(35)
    player = Player(tmp_path / 'bag', '--start-paused', '--service-introspection', 'contents', domain=35)
    rec = None
    try:
        rec = Recorder(35, tmp_path / 'recorder.log', '--services', '/rosbag2_player/set_rate', '-o', recorded)
        wait_logged(rec.log, f"recording '{SET_RATE_EVENTS}'")
        time.sleep(0.5)  # the recorder's reader matched by the player's event writer
        set_rate = ServiceClient(dp, 'rosbag2_player', 'set_rate')
        set_rate.wait()
        time.sleep(0.3)
        assert set_rate.call(rate=2.0).success
        assert not set_rate.call(rate=-1.0).success
        time.sleep(1.0)
        code, err = rec.stop()
        assert code == 0, err
        rec = None
    finally:
        if rec is not None:
            rec.proc.kill()
        player.kill()

    with Reader(recorded) as reader:
        assert [(c.topic, c.msgtype) for c in reader.connections] == [
            (SET_RATE_EVENTS, 'rosbag2_interfaces/srv/SetRate_Event')]
        msgdef = reader.connections[0].msgdef
        raws = [bytes(raw) for _, _, raw in reader.messages()]
    events = [SetRateEvent.deserialize(raw) for raw in raws]

    # The bag carries a definition a generic parser (rosbags') decodes the events with.
    assert msgdef.format == MessageDefinitionFormat.MSG
    store = get_typestore(Stores.EMPTY)
    store.register(get_types_from_msg(msgdef.data, 'rosbag2_interfaces/srv/SetRate_Event'))
    decoded = [store.deserialize_cdr(raw, 'rosbag2_interfaces/srv/msg/SetRate_Event') for raw in raws]
    assert [(d.info.event_type, d.info.sequence_number) for d in decoded] == [
        (e.info.event_type, e.info.sequence_number) for e in events]
    assert [[r.rate for r in d.request] for d in decoded] == [[2.0], [], [-1.0], []]
    assert [[r.success for r in d.response] for d in decoded] == [[], [True], [], [False]]
    assert [e.info.event_type for e in events] == [REQUEST_RECEIVED, RESPONSE_SENT] * 2
    assert [[r.rate for r in e.request] for e in events] == [[2.0], [], [-1.0], []]
    assert [[r.success for r in e.response] for e in events] == [[], [True], [], [False]]
    assert [e.info.sequence_number for e in events] == [1, 1, 2, 2]
    # rmw_cyclonedds's GID of a client: its 8-byte client id, then zeros.
    gid = set_rate.client_id.to_bytes(8, 'little') + bytes(8)
    assert all(bytes(e.info.client_gid) == gid for e in events)

    # Played back as the event topic, and received by Cyclone.
    events_reader = DataReader(dp, Topic(dp, 'rt' + SET_RATE_EVENTS, SetRateEvent), qos=RELIABLE_ALL)
    replay = Player(recorded, '--start-paused', '--node-name', 'replayer', domain=35)
    try:
        resume = ServiceClient(dp, 'replayer', 'resume')
        resume.wait()
        assert matched(events_reader)
        time.sleep(0.3)
        resume.call()
        got = take(events_reader, 4)
        replay.finish()
    finally:
        replay.kill()
    assert got == events
    for g, raw in zip(got, raws):
        same_cdr(raw, g.serialize())

    # With --publish-service-requests the requests the server received are sent to a Cyclone
    # server of the service instead: rates 2.0 and -1.0, in order.
    from ros_dds import SERVICES
    request_type, response_type = SERVICES['set_rate']
    requests = DataReader(dp, Topic(dp, 'rq/rosbag2_player/set_rateRequest', request_type), qos=RELIABLE_ALL)
    replies = DataWriter(dp, Topic(dp, 'rr/rosbag2_player/set_rateReply', response_type), qos=RELIABLE_ALL)
    caller = Player(recorded, '--start-paused', '--node-name', 'caller', '--publish-service-requests', domain=35)
    try:
        resume = ServiceClient(dp, 'caller', 'resume')
        resume.wait()
        assert matched(requests) and matched(replies)
        time.sleep(0.3)
        resume.call()
        sent = take(requests, 2)
        caller.finish()
    finally:
        caller.kill()
    assert [r.rate for r in sent] == [2.0, -1.0]
    assert len({r.client_id for r in sent}) == 1


def big_message(template, seq, stamp_ns):
    """The template Image with its stamp (publish time) and frame_id (sequence number) set."""
    data = bytearray(template)
    data[4:8] = (stamp_ns // 10**9).to_bytes(4, 'little')
    data[8:12] = (stamp_ns % 10**9).to_bytes(4, 'little')
    data[16:24] = f'{seq:08d}'.encode()
    return bytes(data)


def test_sigkilled_recording_at_100_mb_per_s_reindexes_to_an_exact_prefix(tmp_path, cli):
    """1 MB messages at 100 Hz into our recorder, SIGKILL after a few seconds, `reindex`: the bag
    holds exactly messages 0..n, every message that had reached the file before the kill, and of
    what was published before the kill it misses no more than the recorder may hold in memory
    (its cache, and what DDS holds on the way)."""
    from ros_dds import RawImage
    bag = tmp_path / 'bag'
    cache = 100 * 1024 * 1024  # the default --max-cache-size, given explicitly: the bound below
    rec = Recorder(36, tmp_path / 'recorder.log', '--topics', '/big', '--max-cache-size', cache, '-o', bag)
    dp = DomainParticipant(36)
    writer = DataWriter(dp, Topic(dp, 'rt/big', RawImage), qos=RELIABLE)
    wait_matched(writer, '/big')
    time.sleep(0.5)
    template = Image(header=Header(stamp=Time(sec=0, nanosec=0), frame_id='00000000'), height=1024, width=1024,
                     encoding='mono8', is_bigendian=0, step=1024, data=bytes(range(256)) * 4096).serialize()
    sent = []  # (seq, publish time ns)
    stop = threading.Event()

    def publish():
        start = time.monotonic()
        seq = 0
        while not stop.is_set():
            delay = start + seq / 100 - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            stamp = time.time_ns()
            writer.write(RawImage.sample(big_message(template, seq, stamp)))
            sent.append((seq, stamp))
            seq += 1

    thread = threading.Thread(target=publish)
    thread.start()
    time.sleep(4.0)
    killed_at = time.time_ns()
    rec.proc.send_signal(signal.SIGKILL)
    rec.proc.wait(timeout=10)
    stop.set()
    thread.join()
    sent_before_kill = sum(1 for _, t in sent if t < killed_at)
    stamps = dict(sent)
    # What the recorder had written to the file when it was killed (the file has not changed
    # since): the messages whose bytes are all there, in publishing order.
    in_file = 0
    files = sorted(bag.glob('*.mcap'))
    assert len(files) == 1, files
    with open(files[0], 'rb') as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        at = 0
        for seq, stamp in sent:
            message = big_message(template, seq, stamp)
            at = data.find(message[:64], at)
            if at < 0 or data[at:at + len(message)] != message:
                break
            in_file += 1
            at += len(message)
    cli.run('reindex', bag)
    with Reader(bag) as reader:
        got = [bytes(raw) for conn, _, raw in reader.messages() if conn.topic == '/big']
    seqs = [int(raw[16:24]) for raw in got]
    assert seqs == list(range(len(seqs))), 'the recovered messages are not an exact prefix'
    for seq, raw in zip(seqs, got):
        assert raw == big_message(template, seq, stamps[seq]), f'message {seq} differs'
    assert seqs, 'nothing recovered'
    assert len(seqs) >= in_file, f'{in_file} messages had reached the file, {len(seqs)} recovered'
    # Published but not recovered: at most what the cache holds, what DDS keeps on the way (the
    # writer's and the reader's history, 10 each) and the chunk being filled. Counts, not times:
    # a loaded host slows the recorder down, and then it drops (counted) rather than holds more.
    held = cache // len(template) + 2 * 10 + 2
    assert sent_before_kill - len(seqs) <= held, (
        f'{sent_before_kill} published before the kill, {len(seqs)} recovered ({in_file} in the file): '
        f'more was lost than the recorder holds in memory ({held})')


def test_sim_time_recording_never_holds_wall_time(tmp_path, cli):
    """A publisher that starts before /clock: what came first is recorded at the first clock
    time, so every message lies within the clock's range and `info` shows a sane duration."""
    bag = tmp_path / 'bag'
    rec = Recorder(37, tmp_path / 'recorder.log', '--use-sim-time', '--topics', '/chatter', '-o', bag)
    dp = DomainParticipant(37)
    chatter = DataWriter(dp, Topic(dp, 'rt/chatter', String), qos=RELIABLE)
    clock = DataWriter(dp, Topic(dp, 'rt/clock', Clock), qos=RELIABLE)
    wait_matched(chatter, '/chatter')
    wait_matched(clock, '/clock')
    time.sleep(0.3)
    paced(chatter, [String(data=f'early {i}') for i in range(20)], 50)
    t0 = 1_000_000_000_000
    for k in range(10):  # simulated time 1000 s .. 1000.9 s, 10 Hz
        clock.write(Clock(clock=Time(sec=(t0 + k * 100_000_000) // 10**9, nanosec=(k * 100_000_000) % 10**9)))
        paced(chatter, [String(data=f'{k} {i}') for i in range(5)], 50)
    time.sleep(0.5)  # the last messages reach the recorder before it stops
    code, err = rec.stop()
    assert code == 0, err
    messages = read_bag(bag)
    assert [String.deserialize(raw).data for _, _, raw in messages][:20] == [f'early {i}' for i in range(20)]
    assert len(messages) == 70, err
    times = [t for _, t, _ in messages]
    assert all(t0 <= t <= t0 + 900_000_000 for t in times), (times[0], times[-1])
    info = cli.info(bag)
    assert info['duration_ns'] <= 900_000_000, info


def test_split_bagfile_answers_once_the_new_file_is_open_and_leaves_no_empty_file(tmp_path):
    bag = tmp_path / 'bag'
    rec = Recorder(39, tmp_path / 'recorder.log', '--topics', '/chatter', '-o', bag)
    dp = DomainParticipant(39)
    chatter = DataWriter(dp, Topic(dp, 'rt/chatter', String), qos=RELIABLE)
    split = ServiceClient(dp, 'rosbag2_recorder', 'split_bagfile')
    wait_matched(chatter, '/chatter')
    split.wait()
    sent, stop = [], threading.Event()

    def publish():
        while not stop.is_set():
            chatter.write(String(data=str(len(sent))))
            sent.append(len(sent))
            time.sleep(0.002)
    publisher = threading.Thread(target=publish)
    publisher.start()
    try:
        time.sleep(0.3)
        for _ in range(40):
            split.call()
            files = split_files(bag)
            # The reply comes once the new file is open: the newest file is there already.
            assert files and files[-1].name.startswith(f'{len(files) - 1}_bag_')
            time.sleep(0.02)
        for _ in range(100):
            split.call()
        time.sleep(0.3)
    finally:
        stop.set()
        publisher.join()
    time.sleep(0.5)
    code, err = rec.stop()
    assert code == 0, err
    with Reader(bag) as reader:
        numbers = [int(String.deserialize(raw).data) for _, _, raw in reader.messages()]
    from ruamel.yaml import YAML
    info = YAML(typ='safe').load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    counts = [f['message_count'] for f in info['files']]
    assert len(counts) >= 41, counts
    assert 0 not in counts[:-1], f'an empty file was left behind: {counts}'
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers), 'every message once, in order'
    assert numbers == sent[:len(numbers)] and len(numbers) >= len(sent) - 5, (len(numbers), len(sent))


@dataclass
class Reading(IdlStruct, typename='custom_msgs::msg::dds_::Reading_'):
    """A type no package defines here: only the XTypes type object its writer announces (and
    serves through the type lookup service) describes it."""
    header: Header
    value: float64
    ok: bool
    label: bounded_str[16]
    samples: sequence[float32]
    last: sequence[uint8, 3]
    rgb: array[uint8, 3]
    stamps: sequence[Time]


def test_a_type_known_only_from_its_xtypes_type_object_is_recorded_with_its_definition(tmp_path, cli):
    """A plain Cyclone DDS writer (no node, no type description service) of a custom type: the
    recorder builds the definition from the type object, and Python rosbags decodes the bag with
    only the bag's own definitions to the values sent; `cat` decodes it too."""
    bag = tmp_path / 'bag'
    rec = Recorder(36, tmp_path / 'recorder.log', '--topics', '/reading', '-o', bag)
    dp = DomainParticipant(36)
    writer = DataWriter(dp, Topic(dp, 'rt/reading', Reading), qos=RELIABLE)
    wait_matched(writer, '/reading', timeout=30)
    time.sleep(0.5)
    sent = [Reading(header=Header(stamp=Time(sec=i, nanosec=7), frame_id=f'f{i}'), value=i / 4, ok=i % 2 == 0,
                    label=f'r{i}', samples=[0.5 * i, -1.0], last=[i, 2 * i], rgb=[1, 2, i],
                    stamps=[Time(sec=1, nanosec=i)] * i) for i in range(5)]
    for sample in sent:
        writer.write(sample)
    time.sleep(1.0)
    code, err = rec.stop()
    assert code == 0, err
    assert 'definition built from the type object' in err, err[-3000:]
    with Reader(bag) as reader:
        conn = reader.connections[0]
        assert conn.msgtype == 'custom_msgs/msg/Reading'
        assert conn.msgdef.format == MessageDefinitionFormat.MSG
        store = get_typestore(Stores.EMPTY)
        store.register(get_types_from_msg(conn.msgdef.data, 'custom_msgs/msg/Reading'))
        got = [store.deserialize_cdr(raw, conn.msgtype) for _, _, raw in reader.messages()]
        digest = conn.digest
    assert digest.startswith('RIHS01_'), digest
    assert len(got) == len(sent)
    for g, s in zip(got, sent):
        assert (g.header.stamp.sec, g.header.stamp.nanosec, g.header.frame_id) == (s.header.stamp.sec, 7, s.header.frame_id)
        assert (g.value, g.ok, g.label) == (s.value, s.ok, s.label)
        assert list(g.samples) == s.samples and list(g.last) == s.last and list(g.rgb) == s.rgb
        assert [(t.sec, t.nanosec) for t in g.stamps] == [(t.sec, t.nanosec) for t in s.stamps]
    # The hash is what rosbags computes for the same definition (RIHS01 of the description).
    assert digest == store.hash_rihs01('custom_msgs/msg/Reading')
    out = cli.run('cat', bag, '--topics', '/reading').stdout
    assert 'label: r4' in out or "label: 'r4'" in out, out[:2000]


# What the recorder may grow by (peak RSS, KiB) under the floods below.
FLOOD_GROWTH_KIB = 12 * 1024


def test_a_flood_of_the_smallest_messages_is_recorded_whole_while_services_keep_answering(tmp_path):
    """Issue 48: a writer as fast as Python goes sends the smallest `String` (9 bytes): the
    recorder's services answer throughout (the dispatcher takes a bounded round per reader), its
    peak RSS stays bounded, and every message it reports as written is in the bag.
    (Samples too short for their encapsulation cannot be sent from Python `cyclonedds`, which
    checks every sample against its type: test_zenoh_interop.py floods those.)"""
    bag = tmp_path / 'bag'
    rec = Recorder(45, tmp_path / 'recorder.log', '--topics', '/flood', '-o', bag)
    dp = DomainParticipant(45)
    # Keep-all reliable on both sides: every sample reaches the recorder.
    flood = DataWriter(dp, Topic(dp, 'rt/flood', String), qos=RELIABLE_ALL)
    is_paused = ServiceClient(dp, 'rosbag2_recorder', 'is_paused')
    wait_matched(flood, '/flood')
    is_paused.wait()
    time.sleep(0.5)
    for i in range(100):
        flood.write(String(data=str(i)))
    assert is_paused.call().paused is False
    time.sleep(1.0)
    before = memory_kib(rec.proc.pid)
    smallest, _ = preserialized(String(data=''))
    count = 200_000
    done = threading.Event()

    def write_flood():
        try:
            for _ in range(count):
                flood.write(smallest)
        finally:
            done.set()
    writer = threading.Thread(target=write_flood)
    started = time.monotonic()
    writer.start()
    latencies = []
    while not done.is_set():
        t = time.monotonic()
        assert is_paused.call(timeout=30).paused is False
        latencies.append(time.monotonic() - t)
        time.sleep(0.05)
    writer.join()
    rate = count / (time.monotonic() - started)
    time.sleep(2.0)  # reliable delivery of the last samples
    peak = memory_kib(rec.proc.pid)
    code, err = rec.stop()
    assert code == 0, err
    latencies.sort()
    print(f'{count} 9-byte messages at {rate:.0f}/s: recorder peak RSS {peak} KiB, {before} KiB before the flood '
          f'(+{peak - before} KiB, bound +{FLOOD_GROWTH_KIB}); is_paused answered {len(latencies)} times during '
          f'it, slowest {latencies[-1] * 1e3:.1f} ms')
    total = count + 100
    assert len(read_bag(bag)) == total, err[-2000:]
    assert f'/flood: received {total}, written {total}, dropped 0' in err, err[-2000:]
    assert latencies, 'the services were called during the flood'
    assert peak - before < FLOOD_GROWTH_KIB, f'the recorder grew by {peak - before} KiB'


def test_unanswerable_requests_and_absurd_arguments_are_bounded_and_refused_naming_the_field(tmp_path):
    """Issue 48: 10^5 requests from a writer with no reply reader (each reply would wait 5 s for
    the client's reader) keep at most 256 replies waiting: peak RSS stays bounded and a real
    client is still answered; snapshot control arguments beyond their documented maximum are
    refused, the error naming the field, and change nothing. (The buffer keeps 10 minutes: on a
    loaded machine the flood can take longer than a short bound, which would evict the first
    messages before the trigger.)"""
    prefix = tmp_path / 'snap'
    rec = Recorder(46, tmp_path / 'recorder.log', '--snapshot', '--max-buffer-duration', '600',
                   '--topics', '/chatter', '-o', prefix)
    dp = DomainParticipant(46)
    chatter = DataWriter(dp, Topic(dp, 'rt/chatter', String), qos=RELIABLE)
    trigger = ServiceClient(dp, 'rosbag2_recorder', 'snapshot/trigger')
    memory = ServiceClient(dp, 'rosbag2_recorder', 'snapshot/memory')
    duration = ServiceClient(dp, 'rosbag2_recorder', 'snapshot/duration')
    is_paused = ServiceClient(dp, 'rosbag2_recorder', 'is_paused')
    unanswerable = UnanswerableRequests(46, 'rosbag2_recorder')
    for client in (trigger, memory, duration, is_paused):
        client.wait()
    wait_matched(chatter, '/chatter')
    wait_matched(unanswerable.requests, 'the is_paused requests')
    for i in range(50):
        chatter.write(String(data=f'{i}'))
    assert is_paused.call().paused is False
    time.sleep(1.0)
    before = memory_kib(rec.proc.pid)
    count = 100_000

    def still_recording():
        assert is_paused.call(timeout=30).paused is False
    unanswerable.send(count, check=still_recording)
    time.sleep(1.0)
    peak = memory_kib(rec.proc.pid)

    def refused(client, field, **request):
        reply = client.call(timeout=30, **request)
        assert reply.success is False, f'{request} was accepted'
        if hasattr(reply, 'message'):
            assert field in reply.message and 'out of range' in reply.message, reply.message
    zero = Time(sec=0, nanosec=0)
    refused(trigger, 'post_trigger_seconds', filename='', topics=[], start_time=zero, stop_time=zero,
            post_trigger_seconds=1e12)
    refused(trigger, 'post_trigger_seconds', filename='', topics=[], start_time=zero, stop_time=zero,
            post_trigger_seconds=3600.5)
    refused(memory, 'memory', memory=1e18)
    refused(duration, 'duration', duration=1e12)
    # Nothing changed: a plain trigger writes the buffered messages.
    reply = trigger.call(timeout=30, filename='after', topics=[], start_time=zero, stop_time=zero,
                         post_trigger_seconds=0.0)
    assert reply.success, reply.message
    deadline = time.monotonic() + 20
    while not (tmp_path / 'after' / 'metadata.yaml').exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    code, err = rec.stop()
    assert code == 0, err
    print(f'{count} requests without a reply reader: recorder peak RSS {peak} KiB, {before} KiB before '
          f'(+{peak - before} KiB, bound +{FLOOD_GROWTH_KIB})')
    for field in ('post_trigger_seconds 1000000000000 is out of range', 'memory 1000000000000000000 is out of range',
                  'duration 1000000000000 is out of range'):
        assert field in err, err[-3000:]
    assert len(read_bag(tmp_path / 'after')) == 50
    # The replies beyond the 256 waiting were sent at once, unwaited, and counted.
    assert "replies sent before their client's reader was matched (256 were waiting)" in err, err[-3000:]
    assert peak - before < FLOOD_GROWTH_KIB, f'the recorder grew by {peak - before} KiB'
