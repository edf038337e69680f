"""Our `player` binary against the Python `cyclonedds` peer: bags written by Python `rosbags` are
played onto DDS and read by typed Cyclone readers; a Cyclone client controls playback over the
rmw_cyclonedds service mapping; two players stay in sync through /clock.

Runs only inside a private network namespace (see ros_dds.py)."""
import os
import statistics
import subprocess
import time

import pytest
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from rosbags.rosbag2 import StoragePlugin, Writer

from conftest import CYCLONE, binary, memory_kib
from ros_dds import (RELIABLE_ALL, Clock, Image, ServiceClient, String, Time, UnanswerableRequests,
                     only_in_private_network, refuse_real_interfaces, take, valid, wait_matched)

pytestmark = only_in_private_network
T0 = 1_700_000_000_000_000_000
MS = 1_000_000
CLOCK_QOS = Qos(Policy.Reliability.BestEffort, Policy.History.KeepAll)


@pytest.fixture(autouse=True)
def _refuse_real_interfaces():
    refuse_real_interfaces()


def write_bag(path, typestore, messages):
    """messages: (topic, type, offset_ms, ros message); returns {topic: [cdr bytes]} in order."""
    sent = {}
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conns = {}
        for topic, msgtype, offset, msg in messages:
            if topic not in conns:
                conns[topic] = writer.add_connection(topic, msgtype, typestore=typestore)
            data = typestore.serialize_cdr(msg, msgtype)
            writer.write(conns[topic], T0 + offset * MS, data)
            sent.setdefault(topic, []).append(data)
    return sent


def strings(typestore, topic, count, spacing_ms, start_ms=0):
    String_ = typestore.types['std_msgs/msg/String']
    return [(topic, 'std_msgs/msg/String', start_ms + i * spacing_ms, String_(data=f'{topic} {i}')) for i in range(count)]


class Player:
    def __init__(self, bag, *args, domain=0):
        env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': str(domain), 'RUST_BACKTRACE': '1'}
        self.proc = subprocess.Popen([str(binary('player')), str(bag), '--disable-keyboard-controls', *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def finish(self, timeout=60):
        out, err = self.proc.communicate(timeout=timeout)
        assert 'panicked' not in err, err
        assert self.proc.returncode == 0, err
        return err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def reader(dp, topic, idl, qos=RELIABLE_ALL):
    return DataReader(dp, Topic(dp, 'rt' + topic, idl), qos=qos)


def test_every_message_reaches_cyclone_with_identical_bytes_and_clock_is_ours(tmp_path, typestore):
    Image_ = typestore.types['sensor_msgs/msg/Image']
    Header = typestore.types['std_msgs/msg/Header']
    Stamp = typestore.types['builtin_interfaces/msg/Time']
    Clock_ = typestore.types['rosgraph_msgs/msg/Clock']
    import numpy as np
    messages = strings(typestore, '/chatter', 50, 20)
    for i in range(8):
        pixels = np.full(256 * 1024, i, dtype=np.uint8)
        image = Image_(header=Header(stamp=Stamp(sec=i, nanosec=0), frame_id='cam'), height=256, width=1024,
                       encoding='mono8', is_bigendian=0, step=1024, data=pixels)
        messages.append(('/camera/image', 'sensor_msgs/msg/Image', 5 + i * 120, image))
    # A recorded /clock far in the past: it must never be re-published.
    messages += [('/clock', 'rosgraph_msgs/msg/Clock', i * 200, Clock_(clock=Stamp(sec=1, nanosec=0))) for i in range(5)]
    messages.sort(key=lambda m: m[2])
    sent = write_bag(tmp_path / 'bag', typestore, messages)

    dp = DomainParticipant(0)
    chatter = reader(dp, '/chatter', String)
    images = reader(dp, '/camera/image', Image)
    clock = reader(dp, '/clock', Clock, CLOCK_QOS)
    player = Player(tmp_path / 'bag', '--start-paused', '--clock', '50')
    try:
        resume = ServiceClient(dp, 'rosbag2_player', 'resume')
        resume.wait()
        assert all(wait_matched(r) for r in (chatter, images, clock))
        time.sleep(0.3)  # let the player's writers see our readers too
        resume.call()
        got_chatter = take(chatter, 50, timeout=30)
        got_images = take(images, 8, timeout=30)
        player.finish()
    finally:
        player.kill()
    assert [m.serialize() for m in got_chatter] == sent['/chatter']
    assert [m.serialize() for m in got_images] == sent['/camera/image']
    ticks = valid(clock.take(N=1000))
    assert len(ticks) >= 5, 'expected /clock at 50 Hz during about 1 s of playback'
    seconds = [t.clock.sec + t.clock.nanosec * 1e-9 for t in ticks]
    assert all(s >= T0 / 1e9 for s in seconds), 'a recorded /clock was re-published'
    assert seconds == sorted(seconds)


def test_a_cyclone_client_pauses_reads_state_changes_rate_and_seeks(tmp_path, typestore):
    write_bag(tmp_path / 'bag', typestore, strings(typestore, '/chatter', 200, 50))
    dp = DomainParticipant(0)
    chatter = reader(dp, '/chatter', String)
    clock = reader(dp, '/clock', Clock, CLOCK_QOS)
    player = Player(tmp_path / 'bag', '--start-paused', '--clock', '100')
    try:
        clients = {name: ServiceClient(dp, 'rosbag2_player', name)
                   for name in ('pause', 'resume', 'is_paused', 'set_rate', 'seek', 'stop')}
        for client in clients.values():
            client.wait()
        assert wait_matched(chatter) and wait_matched(clock)
        time.sleep(0.3)
        assert clients['is_paused'].call().paused
        clients['resume'].call()
        assert not clients['is_paused'].call().paused
        first = take(chatter, 5)
        assert [m.data for m in first] == [f'/chatter {i}' for i in range(5)]

        clients['pause'].call()
        assert clients['is_paused'].call().paused
        time.sleep(0.1)
        chatter.take(N=100)  # in flight before the pause took effect
        time.sleep(0.6)
        assert chatter.take(N=100) == [], 'messages arrived while paused'

        assert not clients['set_rate'].call(rate=-1.0).success
        assert clients['set_rate'].call(rate=4.0).success
        clock.take(N=10000)  # /clock of the paused player
        clients['resume'].call()
        resumed = time.time_ns()  # the reply comes once the clock runs at rate 4
        fast = [int(m.data.split()[1]) for m in take(chatter, 40)]
        before_seek = time.time_ns()
        assert fast == list(range(fast[0], fast[0] + 40)), f'in order, none missing: {fast}'
        # The player's own time against the wall clock, both read from its /clock messages (the
        # time they carry, the time they were written): a loaded host delays messages, it does
        # not change how fast the player's time runs.
        ticks = [(t.sample_info.source_timestamp, t.clock.sec * 10**9 + t.clock.nanosec)
                 for t in valid(clock.take(N=10000)) if resumed < t.sample_info.source_timestamp < before_seek]
        rates = [(c2 - c1) / (s2 - s1) for i, (s1, c1) in enumerate(ticks) for s2, c2 in ticks[i + 1:]
                 if s2 - s1 >= 200 * MS]
        assert rates, f'no /clock 200 ms apart while playing at rate 4: {ticks}'
        rate = statistics.median(rates)
        assert 3 < rate < 5, f'playback time runs at rate {rate:.2f}, not 4 ({len(rates)} pairs of /clock)'

        assert clients['seek'].call(time=Time(sec=T0 // 10**9, nanosec=T0 % 10**9 + 10 * MS)).success
        after_seek = [m.data for m in take(chatter, 30)]
        assert '/chatter 1' in after_seek, f'seek back to 10 ms should replay message 1: {after_seek}'
        assert not clients['seek'].call(time=Time(sec=-1, nanosec=0)).success
        clients['stop'].call()
        player.finish()
    finally:
        player.kill()


FLOOD_GROWTH_KIB = 12 * 1024


def test_unanswerable_requests_and_absurd_arguments_leave_the_player_bounded_and_answering(tmp_path, typestore):
    """Issue 48, the player's side: 10^5 requests from a writer with no reply reader keep at most
    256 replies waiting (peak RSS bounded, a real client still answered); rates and /clock
    frequencies no clock can follow are refused and change nothing; seeks and bursts at the ends
    of time do what they say; playback then goes on as asked."""
    write_bag(tmp_path / 'bag', typestore, strings(typestore, '/chatter', 100, 10))
    dp = DomainParticipant(0)
    chatter = reader(dp, '/chatter', String)
    player = Player(tmp_path / 'bag', '--start-paused')
    try:
        clients = {name: ServiceClient(dp, 'rosbag2_player', name)
                   for name in ('is_paused', 'set_rate', 'get_rate', 'seek', 'burst', 'set_clock_publish_frequency')}
        unanswerable = UnanswerableRequests(0, 'rosbag2_player')
        for client in clients.values():
            client.wait()
        assert wait_matched(chatter) and wait_matched(unanswerable.requests)
        assert clients['is_paused'].call().paused
        time.sleep(1.0)
        before = memory_kib(player.proc.pid)
        count = 100_000

        def still_paused():
            assert clients['is_paused'].call(timeout=30).paused
        unanswerable.send(count, check=still_paused)
        time.sleep(1.0)
        peak = memory_kib(player.proc.pid)

        for rate in (0.0, -1.0, float('nan'), float('inf'), -float('inf')):
            assert not clients['set_rate'].call(rate=rate).success, rate
        for hz in (1e300, float('inf'), float('nan'), 10_001.0):
            reply = clients['set_clock_publish_frequency'].call(frequency=hz)
            assert not reply.success and 'at most 10000 Hz' in reply.message, (hz, reply)
        assert clients['get_rate'].call().rate == 1.0
        # Before the start: refused; the largest time there is: past the end, playback finishes
        # there (tried last, below).
        assert not clients['seek'].call(time=Time(sec=-2**31, nanosec=0)).success
        assert clients['burst'].call(num_messages=2**64 - 1, timeout=30).actually_burst == 100
        assert [m.data for m in take(chatter, 100)] == [f'/chatter {i}' for i in range(100)]
        # Past the end: playback is over, paused or not, and the player exits.
        assert clients['seek'].call(time=Time(sec=2**31 - 1, nanosec=999_999_999)).success
        err = player.finish()
    finally:
        player.kill()
    print(f'{count} requests without a reply reader: player peak RSS {peak} KiB, {before} KiB before '
          f'(+{peak - before} KiB, bound +{FLOOD_GROWTH_KIB})')
    assert "replies sent before their client's reader was matched (256 were waiting)" in err, err[-3000:]
    assert peak - before < FLOOD_GROWTH_KIB, f'the player grew by {peak - before} KiB'


def test_two_players_stay_in_sync_through_clock(tmp_path, typestore):
    # Two bags of the same time range with different topics.
    write_bag(tmp_path / 'a', typestore, strings(typestore, '/a', 30, 100))
    write_bag(tmp_path / 'b', typestore, strings(typestore, '/b', 29, 100, start_ms=50))
    dp = DomainParticipant(0)
    a, b = reader(dp, '/a', String), reader(dp, '/b', String)
    clock = reader(dp, '/clock', Clock, CLOCK_QOS)
    follower = Player(tmp_path / 'b', '--use-sim-time', '--node-name', 'follower')
    leader = Player(tmp_path / 'a', '--clock', '200', '--start-paused', '--node-name', 'leader')
    try:
        resume = ServiceClient(dp, 'leader', 'resume')
        resume.wait()
        assert wait_matched(a) and wait_matched(b) and wait_matched(clock)
        time.sleep(0.5)
        resume.call()
        written = {'/a': [], '/b': []}  # (index, when the player wrote it)
        deadline = time.monotonic() + 30
        while sum(map(len, written.values())) < 59 and time.monotonic() < deadline:
            for topic, r in (('/a', a), ('/b', b)):
                for m in valid(r.take(N=10)):
                    written[topic].append((int(m.data.split()[1]), m.sample_info.source_timestamp))
            time.sleep(0.001)
        leader.finish()
        follower.finish()
    finally:
        leader.kill()
        follower.kill()
    assert [i for i, _ in written['/a']] == list(range(30)), written['/a']
    assert [i for i, _ in written['/b']] == list(range(29)), written['/b']
    # The follower plays by the leader's time: it writes /b i (bag time i * 100 + 50 ms) only
    # after the leader has written a /clock at or past that time. Write times, not arrival
    # times: a loaded host delays either player, it cannot reverse cause and effect.
    ticks = sorted((t.sample_info.source_timestamp, t.clock.sec * 10**9 + t.clock.nanosec)
                   for t in valid(clock.take(N=100000)))
    for i, wrote in written['/b']:
        due = T0 + (i * 100 + 50) * MS
        reached = next((s for s, c in ticks if c >= due), None)
        assert reached is not None and reached <= wrote, (
            f'/b {i} was written at {wrote}, before the leader\'s /clock reached its time (at {reached})')


@pytest.mark.parametrize('extrapolate', [False, True], ids=['at-ticks', 'extrapolated'])
def test_sim_time_playback_of_a_1khz_topic_against_a_10hz_cyclone_clock_loses_nothing(tmp_path, typestore, extrapolate):
    count = 2000
    write_bag(tmp_path / 'bag', typestore, strings(typestore, '/imu', count, 1))
    dp = DomainParticipant(0)
    imu = reader(dp, '/imu', String)
    clock = DataWriter(dp, Topic(dp, 'rt/clock', Clock), qos=CLOCK_QOS)
    args = ['--use-sim-time'] + (['--extrapolate-ros-time'] if extrapolate else [])
    player = Player(tmp_path / 'bag', *args)
    try:
        assert wait_matched(imu) and wait_matched(clock), 'the player never matched'
        time.sleep(0.3)  # let the player's writer see our reader too
        # Simulated time at real speed, 10 Hz, from just before the bag starts to past its end.
        start = time.monotonic()
        for k in range(-1, count // 100 + 2):
            time.sleep(max(0.0, start + (k + 1) * 0.1 - time.monotonic()))
            ns = T0 + k * 100 * MS
            clock.write(Clock(clock=Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)))
        got = take(imu, count, timeout=10)
        player.finish()
    finally:
        player.kill()
    indices = [int(m.data.split()[1]) for m in got]
    print(f'sim time ({"extrapolated" if extrapolate else "at ticks"}): {len(indices)} of {count} received')
    assert indices == sorted(set(indices)), 'out of order or repeated'
    assert len(indices) >= 0.99 * count, f'{len(indices)} of {count}'


def test_two_clock_sources_are_warned_about_once_and_a_late_clock_subscriber_gets_the_time_at_once(tmp_path, typestore):
    write_bag(tmp_path / 'bag', typestore, strings(typestore, '/a', 10, 100))
    dp = DomainParticipant(0)
    # Paused, with /clock only before /a messages: nothing would publish /clock on its own.
    players = [Player(tmp_path / 'bag', '--clock-topics', '/a', '--start-paused', '--node-name', name)
               for name in ('first', 'second')]
    try:
        for name in ('first', 'second'):
            ServiceClient(dp, name, 'stop').wait()
        clock = reader(dp, '/clock', Clock, CLOCK_QOS)
        assert wait_matched(clock, peers=2)
        got = take(clock, 2, timeout=5)
        time.sleep(1.0)  # time for a second warning, if one were to come
        for name in ('first', 'second'):
            ServiceClient(dp, name, 'stop').call()
        errs = [p.finish() for p in players]
    finally:
        for p in players:
            p.kill()
    assert len(got) == 2, 'each player sends the late subscriber its time'
    assert all(s.clock.sec == T0 // 1_000_000_000 for s in got)
    for err in errs:
        assert err.count('publishers on /clock detected') == 1, err
