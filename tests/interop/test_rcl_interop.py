"""Our binaries on the rcl backend against real ROS 2: our `player` and `recorder` as `colcon build`
installs them in a sourced ROS 2 Jazzy or Kilted (PyPI's wheels: the build script finds rcl and compiles the
rcl backend, the default of such a build), talking through rcl and ROS 2's default rmw
(rmw_fastrtps_cpp, RMW_IMPLEMENTATION unset) to rclpy nodes, with rosbag2_interfaces built by colcon
(tools/build_ros2_interfaces.sh).

Run with tools/test_rcl.sh (it builds the workspace with colcon and runs this file with the ROS 2
venv's Python inside a private network namespace)."""
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

rclpy = pytest.importorskip('rclpy', reason='needs the ROS 2 venv (tools/test_rcl.sh runs this file with it)')
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from rosbag2_interfaces.srv import IsPaused, Pause, Resume, SetRate  # noqa: E402
from rosbags.rosbag2 import Reader, StoragePlugin, Writer  # noqa: E402
from rosbags.typesys import Stores, get_types_from_msg, get_typestore  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from conftest import ament_prefix_without, binary  # noqa: E402

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
# The distribution the sourced environment names (tools/test_rcl.sh sets it as a setup script does).
START_LINE = f"middleware: rcl (rmw_fastrtps_cpp, {os.environ.get('ROS_DISTRO', 'jazzy')})"
TIMEOUT = 20.0


def private_network() -> bool:
    return sorted(name for _, name in socket.if_nameindex()) == ['lo']


pytestmark = pytest.mark.skipif(not private_network(),
                                reason='rcl interop tests run only inside a private network namespace')


@pytest.fixture(autouse=True)
def _refuse_real_interfaces():
    assert private_network(), 'refusing to send DDS traffic: not in a private network namespace'
    assert os.environ.get('AMENT_PREFIX_PATH'), 'needs the sourced ROS 2 environment'
    started = len(Ours.started)
    yield
    # Printed at teardown: pytest shows it only for a test that failed.
    for ours in Ours.started[started:]:
        print(f'--- {ours.proc.args[0]} ---\n{ours.err}')


def ours_env(domain):
    """Our binaries: the rcl backend (the default of a build that found rcl), in the sourced ROS 2's
    environment (AMENT_PREFIX_PATH for the type supports, LD_LIBRARY_PATH for the colcon-built
    ones' dependencies), Python's own path left out."""
    env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'ROSBAG2_RS_MIDDLEWARE')}
    log = {'RUST_LOG': os.environ['ROSBAG2_RS_TEST_LOG']} if 'ROSBAG2_RS_TEST_LOG' in os.environ else {}
    return {**env, 'ROS_DOMAIN_ID': str(domain), 'RUST_BACKTRACE': '1', **log}


def wait_until(predicate, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f'timed out after {timeout} s waiting for {what}')


class Ros:
    """An rclpy context with one node on the default rmw, spun on a thread."""

    def __init__(self, domain, name='peer'):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def call(self, srv_type, name, request=None):
        client = self.node.create_client(srv_type, name)
        try:
            assert client.wait_for_service(timeout_sec=TIMEOUT), f'{name} not available'
            future = client.call_async(request or srv_type.Request())
            wait_until(future.done, f'the reply of {name}')
            return future.result()
        finally:
            self.node.destroy_client(client)

    def close(self):
        # The spinning thread ends before the node goes (see test_fastdds_interop.Ros.close).
        self.executor.shutdown()
        self.thread.join(timeout=5)
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def ros():
    made = []

    def make(domain, name='peer'):
        made.append(Ros(domain, name))
        return made[-1]
    yield make
    for r in made:
        r.close()


def string_cdr(text):
    body = text.encode() + b'\0'
    return b'\0\1\0\0' + len(body).to_bytes(4, 'little') + body


def write_bag(path, topics, extra_types=None):
    """topics: {topic: (type, [(offset_ms, cdr bytes)])}; extra_types: {type: msg definition} for
    types the typestore lacks."""
    store = get_typestore(Stores.ROS2_JAZZY)
    for name, definition in (extra_types or {}).items():
        store.register(get_types_from_msg(definition, name))
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        rows = []
        for topic, (msgtype, messages) in topics.items():
            conn = writer.add_connection(topic, msgtype, typestore=store)
            rows += [(offset, conn, data) for offset, data in messages]
        for offset, conn, data in sorted(rows, key=lambda r: r[0]):
            writer.write(conn, T0 + offset * MS, data)


# What each middleware layer's start line says: rcl (the default of a build in a sourced ROS 2), or
# the native Fast DDS backend the same build compiled in (ROSBAG2_RS_MIDDLEWARE=native).
START_LINES = {'rcl': START_LINE, 'native': 'middleware: Fast DDS (rmw_fastrtps_cpp)'}


class Ours:
    """One of our binaries, its stderr collected on a thread (so that a test can wait for a line)."""

    # Every one started, for the log of a failed test.
    started = []

    def __init__(self, args, domain, middleware='rcl', env=None):
        env = {**ours_env(domain), **(env or {})}
        if middleware == 'native':
            env['ROSBAG2_RS_MIDDLEWARE'] = 'native'
        self.proc = subprocess.Popen([str(a) for a in args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, env=env)
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        Ours.started.append(self)

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)

    @property
    def err(self):
        return ''.join(self.lines)

    def wait_for_line(self, text):
        wait_until(lambda: text in self.err or self.proc.poll() is not None, repr(text))
        assert text in self.err, self.err

    def finish(self, timeout=60, interrupt=False):
        if interrupt and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=timeout)
        finally:
            self.kill()
        self.reader.join(timeout=5)
        assert 'panicked' not in self.err, self.err
        assert self.proc.returncode == 0, self.err
        return self.err

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def player(bag, *args, domain, middleware='rcl'):
    return Ours([binary('player'), bag, '--disable-keyboard-controls', *args], domain, middleware)


def recorder(*args, domain, middleware='rcl'):
    return Ours([binary('recorder'), '--disable-keyboard-controls', *args], domain, middleware)


RELIABLE_ALL = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)


def test_a_default_rclpy_subscriber_receives_what_our_rcl_player_plays(tmp_path, ros):
    texts = [f'hello {i}' for i in range(50)]
    write_bag(tmp_path / 'bag', {'/chatter': ('std_msgs/msg/String', [(i * 10, string_cdr(t)) for i, t in enumerate(texts)])})
    peer = ros(71)
    got = []
    peer.node.create_subscription(String, '/chatter', lambda m: got.append(m.data), RELIABLE_ALL)
    ours = player(tmp_path / 'bag', '--start-paused', '--wait-for-all-acked', '5000', domain=71)
    try:
        ours.wait_for_line(START_LINE)
        wait_until(lambda: peer.node.count_publishers('/chatter') == 1, 'our publisher on /chatter')
        assert peer.call(IsPaused, '/rosbag2_player/is_paused').paused is True
        peer.call(Resume, '/rosbag2_player/resume')
        ours.finish()
        wait_until(lambda: len(got) == len(texts), f'{len(texts)} messages (got {len(got)})')
    finally:
        ours.kill()
    assert got == texts


def test_an_rclpy_publisher_is_recorded_by_our_rcl_recorder_byte_for_byte(tmp_path, ros):
    peer = ros(72, 'talker')
    pub = peer.node.create_publisher(String, '/chatter', RELIABLE_ALL)
    expected_hash = str(peer.node.get_publishers_info_by_topic('/chatter')[0].topic_type_hash)
    out = tmp_path / 'rec'
    ours = recorder('--topics', '/chatter', '-o', out, domain=72)
    texts = [f'message {i}' * (i + 1) for i in range(40)]
    try:
        ours.wait_for_line(START_LINE)
        wait_until(lambda: pub.get_subscription_count() == 1, 'our subscription on /chatter')
        for t in texts:
            pub.publish(String(data=t))
        # The recorder counts what it received: wait until every message is in before stopping.
        before = time.time_ns()
        wait_until(lambda: pub.wait_for_all_acked(rclpy.duration.Duration(seconds=1)), 'acknowledgements')
        ours.finish(interrupt=True)
    finally:
        ours.kill()
    with Reader(out) as reader:
        rows = [(conn.topic, conn.msgtype, ts, data) for conn, ts, data in reader.messages()]
    # The bytes rcl_take_serialized_message gave, as they were (what rosbag2 records): rclpy's
    # serialization, padded by Fast DDS to a multiple of 4 bytes.
    assert [deserialize_message(r[3], String).data for r in rows] == texts
    for (_, _, _, data), t in zip(rows, texts):
        expected = serialize_message(String(data=t))
        assert data[:len(expected)] == expected and len(data) % 4 == 0 and len(data) - len(expected) < 4
    assert {(r[0], r[1]) for r in rows} == {('/chatter', 'std_msgs/msg/String')}
    # Receive timestamps from the rmw's message info: on this host's clock, in order.
    stamps = [r[2] for r in rows]
    assert stamps == sorted(stamps) and all(0 < s <= before + 10**9 for s in stamps)
    assert f'type_description_hash: {expected_hash}' in (out / 'metadata.yaml').read_text()


def test_an_rclpy_client_drives_our_rcl_players_services(tmp_path, ros):
    from builtin_interfaces.msg import Time
    from rosbag2_interfaces.srv import PlayNext, Seek, Stop
    # 60 s of messages at rate 2: the bag cannot end while the test drives the player.
    write_bag(tmp_path / 'bag', {'/chatter': ('std_msgs/msg/String', [(i * 100, string_cdr(f'x {i}')) for i in range(600)])})
    peer = ros(73)
    got = []
    peer.node.create_subscription(String, '/chatter', lambda m: got.append(m.data), RELIABLE_ALL)
    ours = player(tmp_path / 'bag', '--start-paused', domain=73)
    try:
        ours.wait_for_line(START_LINE)
        wait_until(lambda: peer.node.count_publishers('/chatter') == 1, 'our publisher on /chatter')
        assert peer.call(IsPaused, '/rosbag2_player/is_paused').paused is True
        assert peer.call(SetRate, '/rosbag2_player/set_rate', SetRate.Request(rate=2.0)).success is True
        assert peer.call(SetRate, '/rosbag2_player/set_rate', SetRate.Request(rate=-1.0)).success is False
        assert peer.call(PlayNext, '/rosbag2_player/play_next').success is True
        wait_until(lambda: got == ['x 0'], f'the first message alone (got {got})')
        at = T0 + 300 * MS
        seek = Seek.Request(time=Time(sec=at // 10**9, nanosec=at % 10**9))
        assert peer.call(Seek, '/rosbag2_player/seek', seek).success is True
        assert peer.call(PlayNext, '/rosbag2_player/play_next').success is True
        wait_until(lambda: got[-1:] == ['x 3'], f'the message at the seek position next (got {got})')
        peer.call(Resume, '/rosbag2_player/resume')
        assert peer.call(IsPaused, '/rosbag2_player/is_paused').paused is False
        wait_until(lambda: len(got) > 3, 'playback after resume')
        peer.call(Pause, '/rosbag2_player/pause')
        assert peer.call(IsPaused, '/rosbag2_player/is_paused').paused is True
        peer.call(Stop, '/rosbag2_player/stop')
        ours.finish()
    finally:
        ours.kill()
    numbers = [int(m.split()[1]) for m in got]
    assert numbers[:2] == [0, 3] and numbers[1:] == list(range(3, 3 + len(numbers) - 1)), numbers


def test_a_type_that_is_not_installed_is_named_and_the_other_topics_play(tmp_path, ros):
    write_bag(tmp_path / 'bag', {
        '/chatter': ('std_msgs/msg/String', [(i * 10, string_cdr(f'x {i}')) for i in range(10)]),
        '/custom': ('not_installed_msgs/msg/Thing', [(i * 10, b'\0\1\0\0' + i.to_bytes(4, 'little')) for i in range(10)]),
    }, extra_types={'not_installed_msgs/msg/Thing': 'int32 value'})
    peer = ros(74)
    got = []
    peer.node.create_subscription(String, '/chatter', lambda m: got.append(m.data), RELIABLE_ALL)
    ours = player(tmp_path / 'bag', '--start-paused', '--wait-for-all-acked', '5000', domain=74)
    try:
        ours.wait_for_line(START_LINE)
        wait_until(lambda: peer.node.count_publishers('/chatter') == 1, 'our publisher on /chatter')
        peer.call(Resume, '/rosbag2_player/resume')
        err = ours.finish()
        wait_until(lambda: len(got) == 10, f'10 messages on /chatter (got {len(got)})')
    finally:
        ours.kill()
    assert "not playing /custom: type 'not_installed_msgs/msg/Thing' is not installed: " \
           "install the ROS 2 package 'not_installed_msgs'" in err, err
    assert got == [f'x {i}' for i in range(10)]


def test_rclpy_sees_our_rcl_node_and_its_endpoints(tmp_path, ros):
    write_bag(tmp_path / 'bag', {'/chatter': ('std_msgs/msg/String', [(0, string_cdr('x'))])})
    peer = ros(75)
    ours = player(tmp_path / 'bag', '--start-paused', domain=75)
    try:
        ours.wait_for_line(START_LINE)
        wait_until(lambda: ('rosbag2_player', '/') in peer.node.get_node_names_and_namespaces(), 'our node')
        wait_until(lambda: peer.node.get_publishers_info_by_topic('/chatter'), 'our publisher')
        [info] = peer.node.get_publishers_info_by_topic('/chatter')
        assert (info.node_name, info.node_namespace, info.topic_type) == ('rosbag2_player', '/', 'std_msgs/msg/String')
        assert ('/rosbag2_player/is_paused', ['rosbag2_interfaces/srv/IsPaused']) in \
            peer.node.get_service_names_and_types_by_node('rosbag2_player', '/')
        ours.finish(interrupt=True)
    finally:
        ours.kill()
    # Node and context finalised on SIGINT: gone at once, not after the DDS lease.
    wait_until(lambda: ('rosbag2_player', '/') not in peer.node.get_node_names_and_namespaces(),
               'our node to leave the graph', timeout=5)


def test_our_rcl_recorder_discovers_a_late_rclpy_publisher_with_its_qos(tmp_path, ros):
    """--all: the topic appears after the recorder started (the graph guard condition wakes it),
    and the recorder stores the QoS the publisher offers (rcl_get_publishers_info_by_topic)."""
    peer = ros(76, 'late')
    out = tmp_path / 'rec'
    ours = recorder('-a', '-o', out, domain=76)
    latched = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    try:
        ours.wait_for_line(START_LINE)
        pub = peer.node.create_publisher(String, '/late', latched)
        wait_until(lambda: pub.get_subscription_count() == 1, 'our recorder to subscribe to /late')
        pub.publish(String(data='late'))
        wait_until(lambda: pub.wait_for_all_acked(rclpy.duration.Duration(seconds=1)), 'acknowledgements')
        ours.finish(interrupt=True)
    finally:
        ours.kill()
    with Reader(out) as reader:
        rows = [(conn.topic, data) for conn, _, data in reader.messages() if conn.topic == '/late']
        [conn] = [c for c in reader.connections if c.topic == '/late']
    assert [(t, deserialize_message(d, String).data) for t, d in rows] == [('/late', 'late')]
    [offered] = conn.ext.offered_qos_profiles
    assert (offered.reliability.name, offered.durability.name) == ('RELIABLE', 'TRANSIENT_LOCAL'), offered


def probe():
    """examples/dds_probe built with the rcl backend (tools/test_rcl.sh builds it and names it in
    ROSBAG2_RS_PROBE)."""
    path = pathlib.Path(os.environ.get('ROSBAG2_RS_PROBE', binary('player').parent / 'examples' / 'dds_probe'))
    if not path.exists():
        pytest.fail(f'{path} is missing: build with `cargo build -p rosbag2_rs_transport_lib --example dds_probe`')
    return path


def test_our_rcl_client_calls_an_rclpy_service(ros):
    peer = ros(77, 'peer_player')
    rates = []

    def set_rate(request, response):
        rates.append(request.rate)
        response.success = request.rate > 0
        return response

    def is_paused(_request, response):
        response.paused = True
        return response
    peer.node.create_service(SetRate, '/peer_player/set_rate', set_rate)
    peer.node.create_service(IsPaused, '/peer_player/is_paused', is_paused)
    proc = subprocess.run([str(probe()), 'call', 'peer_player', '2.5'], capture_output=True, text=True,
                          env=ours_env(77), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ['set_rate true', 'paused true'], proc.stdout + proc.stderr
    assert rates == [2.5]


def test_our_rcl_graph_lists_an_rclpy_publisher_with_node_qos_and_type_hash(ros):
    peer = ros(78, 'talker')
    latched = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    peer.node.create_publisher(String, '/chatter', latched)
    expected = str(peer.node.get_publishers_info_by_topic('/chatter')[0].topic_type_hash)
    assert expected.startswith('RIHS01_')
    proc = subprocess.run([str(probe()), 'topics', '/chatter', 'node'], capture_output=True, text=True,
                          env=ours_env(78), timeout=60)
    lines = [line.split() for line in proc.stdout.splitlines()]
    assert ['/chatter', 'std_msgs/msg/String', 'reliable', 'transient_local', '/talker', expected] in lines, \
        proc.stdout + proc.stderr


@pytest.mark.parametrize('ending', ['player: end of bag', 'player: SIGTERM', 'player: stop service', 'recorder: SIGINT'])
def test_our_rcl_nodes_leave_the_graph_at_once(tmp_path, ros, ending):
    """Node and context finalised on every way out: rclpy stops listing the node at once, not
    after the DDS participant's lease."""
    peer = ros(79)
    write_bag(tmp_path / 'bag', {'/chatter': ('std_msgs/msg/String', [(i * 10, string_cdr(f'x {i}')) for i in range(20)])})
    if ending.startswith('player'):
        name = 'rosbag2_player'
        ours = player(tmp_path / 'bag', '--start-paused', domain=79)
    else:
        name = 'rosbag2_recorder'
        ours = recorder('-a', '-o', tmp_path / 'rec', domain=79)
    try:
        wait_until(lambda: (name, '/') in peer.node.get_node_names_and_namespaces(), 'our node')
        if ending == 'player: end of bag':
            peer.call(Resume, '/rosbag2_player/resume')
        elif ending == 'player: stop service':
            from rosbag2_interfaces.srv import Stop
            peer.call(Stop, '/rosbag2_player/stop')
        else:
            ours.proc.send_signal(signal.SIGTERM if 'SIGTERM' in ending else signal.SIGINT)
        ours.finish()
    finally:
        ours.kill()
    wait_until(lambda: (name, '/') not in peer.node.get_node_names_and_namespaces(),
               f'{name} to leave the graph', timeout=3)


def image_cdr(index, size):
    """A serialized sensor_msgs/Image with `size` bytes of data, different for each frame."""
    import hashlib

    import numpy as np
    store = get_typestore(Stores.ROS2_JAZZY)
    types = store.types
    pixels = np.frombuffer(hashlib.sha256(index.to_bytes(4, 'little')).digest() * (size // 32), dtype=np.uint8)
    msg = types['sensor_msgs/msg/Image'](
        header=types['std_msgs/msg/Header'](stamp=types['builtin_interfaces/msg/Time'](sec=index, nanosec=0),
                                            frame_id='cam'),
        height=1, width=len(pixels), encoding='mono8', is_bigendian=0, step=len(pixels), data=pixels)
    return bytes(store.serialize_cdr(msg, 'sensor_msgs/msg/Image'))


@pytest.mark.parametrize('size,count', [(1 << 20, 60), (6 << 20, 10)], ids=['1MB', '6MB'])
def test_our_rcl_player_reaches_an_rclpy_reader_with_large_frames_byte_for_byte(tmp_path, ros, size, count):
    from sensor_msgs.msg import Image
    frames = [image_cdr(i, size) for i in range(count)]
    write_bag(tmp_path / 'bag', {'/camera/image': ('sensor_msgs/msg/Image', [(i * 33, f) for i, f in enumerate(frames)])})
    peer = ros(80)
    got = []
    peer.node.create_subscription(Image, '/camera/image', got.append, RELIABLE_ALL, raw=True)
    ours = player(tmp_path / 'bag', '--start-paused', '--wait-for-all-acked', '20000', domain=80)
    try:
        wait_until(lambda: peer.node.count_publishers('/camera/image') == 1, 'our publisher')
        start = time.monotonic()
        peer.call(Resume, '/rosbag2_player/resume')
        ours.finish()
        wait_until(lambda: len(got) == count, f'{count} frames (got {len(got)})', timeout=60)
        print(f'\n{count} x {size >> 20} MiB played and received in {time.monotonic() - start:.2f} s')
    finally:
        ours.kill()
    assert [bytes(g) for g in got] == frames


@pytest.mark.parametrize('size,count', [(100, 50), (1 << 20, 30), (6 << 20, 10)], ids=['100B', '1MB', '6MB'])
def test_an_rclpy_publisher_of_large_frames_is_recorded_by_our_rcl_recorder_byte_for_byte(tmp_path, ros, size, count):
    from sensor_msgs.msg import Image
    peer = ros(81, 'camera')
    pub = peer.node.create_publisher(Image, '/camera/image', RELIABLE_ALL)
    frames = [image_cdr(i, size) for i in range(count)]
    out = tmp_path / 'rec'
    ours = recorder('--topics', '/camera/image', '-o', out, domain=81)
    try:
        wait_until(lambda: pub.get_subscription_count() == 1, 'our subscription')
        start = time.monotonic()
        for f in frames:
            pub.publish(f)  # serialized bytes, published as they are, as fast as they go
        wait_until(lambda: pub.wait_for_all_acked(rclpy.duration.Duration(seconds=1)), 'acknowledgements', timeout=60)
        print(f'\n{count} x {size} B published and acknowledged in {time.monotonic() - start:.2f} s')
        # At once: what was acknowledged but not yet taken is taken when the subscription goes.
        ours.finish(interrupt=True)
    finally:
        ours.kill()
    with Reader(out) as reader:
        got = [bytes(data) for _, _, data in reader.messages()]
    assert len(got) == count and got == frames


def test_fresh_rclpy_clients_are_all_answered_by_our_rcl_player(tmp_path):
    """Each client is new (its reply reader not yet matched by our reply writer when it calls):
    every call must still be answered."""
    write_bag(tmp_path / 'bag', {'/chatter': ('std_msgs/msg/String', [(0, string_cdr('x'))])})
    ours = player(tmp_path / 'bag', '--start-paused', domain=82)
    answered = 0
    try:
        ours.wait_for_line(START_LINE)
        for i in range(30):
            peer = Ros(82, f'client_{i}')
            try:
                assert peer.call(IsPaused, '/rosbag2_player/is_paused').paused is True
                answered += 1
            finally:
                peer.close()
    finally:
        ours.kill()
    assert answered == 30


def test_our_rcl_player_describes_its_types_as_an_rclpy_node_does(tmp_path, ros):
    """A service with nested sequences and strings both ways (type_description_interfaces): the
    request and response structs built through introspection and rmw_(de)serialize."""
    from action_msgs.msg import GoalInfo, GoalStatus, GoalStatusArray
    from builtin_interfaces.msg import Time
    from type_description_interfaces.srv import GetTypeDescription
    from unique_identifier_msgs.msg import UUID
    type_name = 'action_msgs/msg/GoalStatusArray'
    message = GoalStatusArray(status_list=[
        GoalStatus(goal_info=GoalInfo(goal_id=UUID(uuid=list(range(i, i + 16))), stamp=Time(sec=i, nanosec=7)),
                   status=GoalStatus.STATUS_SUCCEEDED) for i in range(3)])
    peer = ros(83, 'status_talker')
    peer.node.create_publisher(GoalStatusArray, '/goal_status', 10)
    hash_ = str(peer.node.get_publishers_info_by_topic('/goal_status')[0].topic_type_hash)
    request = GetTypeDescription.Request(type_name=type_name, type_hash=hash_, include_type_sources=True)
    reference = peer.call(GetTypeDescription, '/status_talker/get_type_description', request)
    assert reference.successful, reference.failure_reason
    store = get_typestore(Stores.ROS2_JAZZY)
    with Writer(tmp_path / 'bag', version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection('/goal_status', type_name, typestore=store)
        writer.write(conn, T0, bytes(serialize_message(message)))
    ours = player(tmp_path / 'bag', '--start-paused', domain=83)
    try:
        ours.wait_for_line(START_LINE)
        service = '/rosbag2_player/get_type_description'
        answer = peer.call(GetTypeDescription, service, request)
        assert answer.successful, answer.failure_reason
        assert answer.type_description == reference.type_description
        assert {s.type_name for s in answer.type_sources} >= {type_name, 'action_msgs/msg/GoalStatus',
                                                              'unique_identifier_msgs/msg/UUID'}
        wrong = peer.call(GetTypeDescription, service,
                          GetTypeDescription.Request(type_name=type_name, type_hash='RIHS01_' + '0' * 64))
        assert not wrong.successful and wrong.failure_reason
    finally:
        ours.kill()


def test_an_rcl_build_runs_on_a_native_backend_on_request(tmp_path):
    """ROSBAG2_RS_MIDDLEWARE=native: the native backends, chosen by RMW_IMPLEMENTATION; unset, ROS 2's
    default, Fast DDS, which a build in a sourced ROS 2 compiles in against that ROS 2's Fast DDS with
    no feature flag. (With PyPI's wheels, librcl's load-time check exits the process when
    RMW_IMPLEMENTATION names another rmw than the one it links: there is no rmw_implementation to
    load it.)"""
    write_bag(tmp_path / 'bag', {'/chatter': ('std_msgs/msg/String', [(0, string_cdr('x'))])})
    env = {k: v for k, v in ours_env(84).items() if k != 'RMW_IMPLEMENTATION'}
    env['ROSBAG2_RS_MIDDLEWARE'] = 'native'
    proc = subprocess.run([str(binary('player')), str(tmp_path / 'bag'), '--disable-keyboard-controls'],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert 'middleware: Fast DDS (rmw_fastrtps_cpp)' in proc.stderr and 'middleware: rcl' not in proc.stderr, \
        proc.stderr
    bad = subprocess.run([str(binary('player')), str(tmp_path / 'bag'), '--disable-keyboard-controls'],
                         capture_output=True, text=True, env={**env, 'ROSBAG2_RS_MIDDLEWARE': 'rmw'}, timeout=60)
    assert bad.returncode != 0 and "ROSBAG2_RS_MIDDLEWARE='rmw'" in bad.stderr, bad.stderr


def test_our_rcl_subscription_reports_the_rclpy_publishers_gid(ros):
    """The message info's publisher GID reaches ReceivedMessage::publisher_gid: the GID rclpy's
    graph reports for its publisher."""
    peer = ros(85, 'talker')
    pub = peer.node.create_publisher(String, '/gid_topic', RELIABLE_ALL)
    [info] = peer.node.get_publishers_info_by_topic('/gid_topic')
    expected = bytes(info.endpoint_gid[:16]).hex()
    proc = subprocess.Popen([str(probe()), 'echo', '/gid_topic', 'std_msgs/msg/String', '1', 'gid'],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ours_env(85))
    try:
        assert proc.stdout.readline().strip() == 'ready'
        wait_until(lambda: pub.get_subscription_count() == 1, 'the probe to subscribe')
        pub.publish(String(data='who'))
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    [line] = out.splitlines()
    data, gid = line.split()
    assert deserialize_message(bytes.fromhex(data), String).data == 'who'
    assert gid == expected, (gid, expected, err)


def test_our_rcl_graph_lists_rclpy_nodes_with_namespaces_and_enclaves(ros):
    peer = ros(86, 'lister_target')
    other = rclpy.create_node('inner', namespace='/robot', context=peer.context)
    try:
        proc = subprocess.run([str(probe()), 'nodes', 'inner'], capture_output=True, text=True, env=ours_env(86),
                              timeout=60)
    finally:
        other.destroy_node()
    lines = {tuple(line.split()) for line in proc.stdout.splitlines()}
    assert {('/', 'lister_target', '/'), ('/robot', 'inner', '/'), ('/', 'dds_probe_nodes', '/')} <= lines, \
        proc.stdout + proc.stderr


def test_our_rcl_recorder_records_without_our_interfaces_package_and_names_it(tmp_path, ros):
    """Our binaries run where rosbag2_rs_interfaces (this workspace's own services) is not installed:
    the services of that package are left out with one warning naming it, rosbag2's own services
    answer, and the recording is made."""
    peer = ros(92, 'talker')
    pub = peer.node.create_publisher(String, '/chatter', RELIABLE_ALL)
    ours = Ours([binary('recorder'), '--disable-keyboard-controls', '--topics', '/chatter', '-o', tmp_path / 'rec'], 92,
                env={'AMENT_PREFIX_PATH': ament_prefix_without('rosbag2_rs_interfaces', tmp_path / 'sourced')})
    try:
        ours.wait_for_line(START_LINE)
        wait_until(lambda: pub.get_subscription_count() == 1, 'our subscription on /chatter')
        assert peer.call(IsPaused, '/rosbag2_recorder/is_paused').paused is False
        for i in range(5):
            pub.publish(String(data=f'x {i}'))
        wait_until(lambda: pub.wait_for_all_acked(rclpy.duration.Duration(seconds=1)), 'acknowledgements')
        err = ours.finish(interrupt=True)
    finally:
        ours.kill()
    ours_only = '~/pause_at, ~/is_recording, ~/subscribe_to_topics, ~/get_subscribed_topics, ~/get_uri'
    assert f"not served: {ours_only}: install the ROS 2 package 'rosbag2_rs_interfaces'" in err, err
    with Reader(tmp_path / 'rec') as reader:
        assert [deserialize_message(d, String).data for _, _, d in reader.messages()] == [f'x {i}' for i in range(5)]


def test_an_rclpy_client_triggers_a_snapshot_of_our_rcl_recorder(tmp_path, ros):
    """rosbag2_rs_interfaces/srv/TriggerSnapshot, from the colcon overlay's type supports (strings,
    a string sequence, nested times in the request)."""
    from rosbag2_rs_interfaces.srv import TriggerSnapshot
    peer = ros(87, 'talker')
    pub = peer.node.create_publisher(String, '/snap', RELIABLE_ALL)
    noise = peer.node.create_publisher(String, '/noise', RELIABLE_ALL)
    ours = recorder('--snapshot-mode', '--max-buffer-duration', '10', '--topics', '/snap', '/noise',
                    '-o', tmp_path / 'buffer', domain=87)
    try:
        ours.wait_for_line(START_LINE)
        wait_until(lambda: pub.get_subscription_count() == 1 and noise.get_subscription_count() == 1,
                   'our subscriptions')
        for i in range(10):
            pub.publish(String(data=f'snap {i}'))
            noise.publish(String(data=f'noise {i}'))
        wait_until(lambda: pub.wait_for_all_acked(rclpy.duration.Duration(seconds=1)), 'acknowledgements')
        # A round trip through our node's wait thread: what arrived before is taken by then.
        assert peer.call(IsPaused, '/rosbag2_recorder/is_paused').paused is False
        request = TriggerSnapshot.Request(filename=str(tmp_path / 'snap'), topics=['/snap'])
        reply = peer.call(TriggerSnapshot, '/rosbag2_recorder/snapshot/trigger', request)
        assert reply.success is True, reply.message
        ours.finish(interrupt=True)
    finally:
        ours.kill()
    with Reader(tmp_path / 'snap') as reader:
        rows = [(c.topic, deserialize_message(bytes(d), String).data) for c, _, d in reader.messages()]
    assert rows == [('/snap', f'snap {i}') for i in range(10)]


def test_our_rcl_recorder_throttles_an_rclpy_topic_and_rclpy_reads_its_statistics(tmp_path, ros):
    """`--throttle` on a 100 Hz rclpy topic (5 messages a second at most, in any second of the bag)
    and `--statistics-rate`: an rclpy subscriber of rosbag2_rs_interfaces/msg/RecordStatistics
    (the colcon overlay's type support) sees every message accounted for: received + throttled =
    published, written = what the bag holds."""
    from rosbag2_rs_interfaces.msg import RecordStatistics
    peer = ros(90, 'talker')
    fast = peer.node.create_publisher(String, '/fast', RELIABLE_ALL)
    stats = []
    peer.node.create_subscription(RecordStatistics, '/events/rosbag2_rs_statistics', stats.append, 10)
    out = tmp_path / 'throttled'
    ours = recorder('--topics', '/fast', '--throttle', '/fast:=5', '--statistics-rate', '20', '-o', out,
                    domain=90)
    published = 200
    try:
        ours.wait_for_line(START_LINE)
        wait_until(lambda: fast.get_subscription_count() == 1, 'our subscription on /fast')
        for i in range(published):
            fast.publish(String(data=f'frame {i}'))
            time.sleep(0.01)
        wait_until(lambda: fast.wait_for_all_acked(rclpy.duration.Duration(seconds=1)), 'acknowledgements')

        def totals():
            topics = [t for t in stats[-1].topics if t.topic_name == '/fast'] if stats else []
            return topics[0] if topics else None
        wait_until(lambda: totals() is not None and totals().received + totals().throttled == published
                   and totals().written == totals().received, 'statistics with every message')
        last = stats[-1]
        assert last.node_name == '/rosbag2_recorder' and last.uri == str(out)
        ours.finish(interrupt=True)
    finally:
        ours.kill()
    with Reader(out) as reader:
        stamps = [ts for _, ts, _ in reader.messages()]
    counted = totals()
    assert len(stamps) == counted.written and counted.dropped == 0 and counted.throttled > 0
    fullest = max(sum(1 for t in stamps if start <= t < start + 10**9) for start in stamps)
    assert fullest <= 5, f'{fullest} messages within one second'
    # About 2 s of publishing at 5 per second: the limit is used, not just respected.
    assert len(stamps) >= 8, stamps


def test_an_rclpy_client_resumes_and_pauses_two_of_our_rcl_players_at_one_time(tmp_path, ros):
    """`resume` with a resume_time (rosbag2 Rolling's player) and rosbag2_rs_interfaces/srv/PauseAt,
    called from rclpy on two players started paused: neither publishes before the resume time, and
    neither publishes more than the bag holds between the two times (messages 50 ms apart)."""
    from builtin_interfaces.msg import Time
    from rosbag2_rs_interfaces.srv import PauseAt
    write_bag(tmp_path / 'bag', {'/chatter': ('std_msgs/msg/String', [(i * 50, string_cdr(f'x {i}')) for i in range(400)])})
    peer = ros(91)
    got = {'/one': [], '/two': []}
    for topic, seen in got.items():
        peer.node.create_subscription(String, topic, lambda m, seen=seen: seen.append((time.time_ns(), m.data)),
                                      RELIABLE_ALL)
    names = ['player_one', 'player_two']
    ours = [player(tmp_path / 'bag', '--start-paused', '--remap', f'/chatter:=/{topic}', '--ros-args', '-r',
                   f'__node:={name}', domain=91) for name, topic in zip(names, ['one', 'two'])]
    try:
        for o in ours:
            o.wait_for_line(START_LINE)
        wait_until(lambda: all(peer.node.count_publishers(t) == 1 for t in got), 'our publishers')

        def at(ns):
            return Time(sec=ns // 10**9, nanosec=ns % 10**9)
        resume_at = time.time_ns() + 2 * 10**9
        pause_at = resume_at + 500 * MS
        for name in names:
            bad = peer.call(Resume, f'/{name}/resume', Resume.Request(resume_time=at(resume_at), resume_mode=1))
            assert bad.return_code == Resume.Response.RETURN_CODE_INVALID_RESUME_MODE
            reply = peer.call(Resume, f'/{name}/resume', Resume.Request(resume_time=at(resume_at)))
            assert reply.return_code == Resume.Response.RETURN_CODE_SUCCESS, reply.error_string
            paused = peer.call(PauseAt, f'/{name}/pause_at', PauseAt.Request(pause_time=at(pause_at)))
            assert paused.success is True, paused.message
        assert all(peer.call(IsPaused, f'/{n}/is_paused').paused for n in names)
        wait_until(lambda: time.time_ns() > pause_at and all(peer.call(IsPaused, f'/{n}/is_paused').paused
                                                              for n in names), 'both paused again')
        for o in ours:
            o.finish(interrupt=True)
    finally:
        for o in ours:
            o.kill()
    for topic, seen in got.items():
        assert seen, f'nothing on {topic}'
        assert min(t for t, _ in seen) >= resume_at, f'{topic}: a message before the resume time'
        # 500 ms of playback: messages 0 to 10 at most (message 10 is due at the pause itself).
        assert [m for _, m in seen] == [f'x {i}' for i in range(len(seen))] and len(seen) <= 11, seen


def test_an_rclpy_client_controls_our_rcl_recorders_as_rosbag2_lyrical(tmp_path, ros):
    """rosbag2 Lyrical's and Rolling's recorder control from rclpy, with the request and response
    layouts of the colcon overlay's rosbag2_interfaces: three recorders split at one publish time
    between the same two messages; `stop` closes a bag, `record` opens a new one; discovery off and
    on; our `is_recording`, `get_uri` by their installed types (rosbag2_rs_interfaces)."""
    from rosbag2_interfaces.srv import (IsDiscoveryRunning, Record, SplitBagfile, StartDiscovery,
                                        Stop, StopDiscovery)
    from rosbag2_rs_interfaces.srv import GetUri, IsRecording
    import yaml
    peer = ros(88, 'talker')
    pub = peer.node.create_publisher(String, '/t', RELIABLE_ALL)
    names = ['robot0', 'robot1', 'robot2']
    ours = [recorder('-e', '^/t$', '--node-name', n, '-o', tmp_path / n, domain=88) for n in names]

    def publish(texts, subscribers=3):
        wait_until(lambda: pub.get_subscription_count() == subscribers, f'{subscribers} subscriptions')
        for text in texts:
            pub.publish(String(data=text))
        wait_until(lambda: pub.wait_for_all_acked(rclpy.duration.Duration(seconds=1)), 'acknowledgements')
    try:
        for o in ours:
            o.wait_for_line(START_LINE)
        publish([f'before {i}' for i in range(5)])
        # Every message so far was published before this time, every later one after it.
        split_time = peer.node.get_clock().now().to_msg()
        for n in names:
            request = SplitBagfile.Request(split_time=split_time, tracking_topic_name='/t',
                                           split_mode=SplitBagfile.Request.SPLIT_MODE_PUBLISH_TIME)
            reply = peer.call(SplitBagfile, f'/{n}/split_bagfile', request)
            assert reply.return_code == SplitBagfile.Response.RETURN_CODE_SUCCESS, reply.error_string
        publish([f'after {i}' for i in range(5)])

        first = f'/{names[0]}'
        assert peer.call(IsRecording, f'{first}/is_recording').recording is True
        assert peer.call(GetUri, f'{first}/get_uri').uri == str(tmp_path / names[0])
        assert peer.call(IsDiscoveryRunning, f'{first}/is_discovery_running').running is True
        stopped = peer.call(Stop, f'{first}/stop')
        assert stopped.return_code == 0, stopped.error_string
        assert peer.call(IsRecording, f'{first}/is_recording').recording is False
        assert peer.call(GetUri, f'{first}/get_uri').uri == ''
        assert peer.call(IsDiscoveryRunning, f'{first}/is_discovery_running').running is False
        assert peer.call(Stop, f'{first}/stop').return_code == 1
        publish(['while stopped'], subscribers=2)
        again = tmp_path / 'again'
        started = peer.call(Record, f'{first}/record', Record.Request(uri=str(again)))
        assert started.return_code == 0, started.error_string
        assert peer.call(Record, f'{first}/record', Record.Request()).return_code == 1
        publish(['again'])
        assert peer.call(StopDiscovery, f'{first}/stop_discovery').return_code == 0
        assert peer.call(IsDiscoveryRunning, f'{first}/is_discovery_running').running is False
        assert peer.call(StartDiscovery, f'{first}/start_discovery').return_code == 0
        for o in ours:
            o.finish(interrupt=True)
    finally:
        for o in ours:
            o.kill()

    def files(bag):
        meta = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
        return [f['message_count'] for f in meta['files']]

    def texts(bag):
        with Reader(bag) as reader:
            return [deserialize_message(bytes(d), String).data for _, _, d in reader.messages()]
    before, after = [f'before {i}' for i in range(5)], [f'after {i}' for i in range(5)]
    assert files(tmp_path / names[0]) == [5, 5]
    assert texts(tmp_path / names[0]) == before + after
    for n in names[1:]:
        assert files(tmp_path / n) == [5, 7], n
        assert texts(tmp_path / n) == before + after + ['while stopped', 'again'], n
    assert texts(again) == ['again']


def test_an_rclpy_client_starts_our_rcl_recorder_at_a_time_as_rosbag2_lyrical(tmp_path, ros):
    """Lyrical's `record` with `start_time` from rclpy: the stopped recorder opens its bag and
    subscribes at once, paused until its clock reaches the time; what is published after it is the
    bag's first message."""
    from rosbag2_interfaces.srv import Record, Stop
    from rosbag2_rs_interfaces.srv import IsRecording
    peer = ros(93, 'talker')
    pub = peer.node.create_publisher(String, '/t', RELIABLE_ALL)
    ours = recorder('--topics', '/t', '-o', tmp_path / 'first', domain=93)
    try:
        ours.wait_for_line(START_LINE)
        assert peer.call(Stop, '/rosbag2_recorder/stop').return_code == 0
        start = peer.node.get_clock().now() + rclpy.duration.Duration(seconds=1.5)
        request = Record.Request(uri=str(tmp_path / 'second'), start_time=start.to_msg())
        reply = peer.call(Record, '/rosbag2_recorder/record', request)
        assert reply.return_code == 0, reply.error_string
        assert peer.call(IsRecording, '/rosbag2_recorder/is_recording').recording is True
        # Waiting for the time: paused (a recorder that ignored start_time would record at once).
        assert peer.call(IsPaused, '/rosbag2_recorder/is_paused').paused is True
        wait_until(lambda: pub.get_subscription_count() == 1, 'our subscription on /t')
        wait_until(lambda: peer.node.get_clock().now() > start, 'the start time')
        pub.publish(String(data='after'))
        wait_until(lambda: not peer.call(IsPaused, '/rosbag2_recorder/is_paused').paused, 'the scheduled start')
        wait_until(lambda: pub.wait_for_all_acked(rclpy.duration.Duration(seconds=1)), 'acknowledgements')
        ours.finish(interrupt=True)
    finally:
        ours.kill()
    with Reader(tmp_path / 'second') as reader:
        assert [deserialize_message(bytes(d), String).data for _, _, d in reader.messages()] == ['after']


class FibonacciServer:
    """An rclpy action server of test_msgs/action/Fibonacci with introspection of its services on
    (ROS 2 Kilted's rclpy): it publishes feedback per step, and a goal of order 7 or more waits
    until it is cancelled. What it received is kept: (order, goal id) per goal, goal ids of
    cancels."""

    def __init__(self, peer, introspection=True):
        from rclpy.action import ActionServer, CancelResponse
        from rclpy.service_introspection import ServiceIntrospectionState
        from rclpy.task import Future
        from test_msgs.action import Fibonacci
        self.goals, self.cancels, self.futures = [], [], {}

        async def execute(goal_handle):
            order = goal_handle.request.order
            sequence = [0, 1]
            for i in range(1, order):
                sequence.append(sequence[i] + sequence[i - 1])
                goal_handle.publish_feedback(Fibonacci.Feedback(sequence=sequence))
            if order >= 7:
                await self.futures[bytes(goal_handle.goal_id.uuid)]
                goal_handle.canceled()
            else:
                goal_handle.succeed()
            return Fibonacci.Result(sequence=sequence)

        def handle_accepted(goal_handle):
            uuid = bytes(goal_handle.goal_id.uuid)
            self.futures[uuid] = Future()
            self.goals.append((goal_handle.request.order, uuid))
            goal_handle.execute()

        def cancel(goal_handle):
            uuid = bytes(goal_handle.goal_id.uuid)
            self.cancels.append(uuid)
            self.futures[uuid].set_result(True)
            return CancelResponse.ACCEPT

        self.server = ActionServer(peer.node, Fibonacci, '/fibonacci', execute,
                                   handle_accepted_callback=handle_accepted, cancel_callback=cancel)
        if introspection:
            self.server.configure_introspection(peer.node.get_clock(), RELIABLE_ALL,
                                                ServiceIntrospectionState.CONTENTS)


def rclpy_has_action_introspection():
    try:
        from rclpy.action import ActionServer
        import test_msgs.action  # noqa: F401
    except ImportError:
        return False
    return hasattr(ActionServer, 'configure_introspection')


ACTION_TOPICS = {
    '/fibonacci/_action/send_goal/_service_event': 'test_msgs/action/Fibonacci_SendGoal_Event',
    '/fibonacci/_action/cancel_goal/_service_event': 'action_msgs/srv/CancelGoal_Event',
    '/fibonacci/_action/get_result/_service_event': 'test_msgs/action/Fibonacci_GetResult_Event',
    '/fibonacci/_action/feedback': 'test_msgs/action/Fibonacci_FeedbackMessage',
    '/fibonacci/_action/status': 'action_msgs/msg/GoalStatusArray',
}


@pytest.mark.skipif(not rclpy_has_action_introspection(),
                    reason="needs rclpy's action introspection (ROS 2 Kilted) and test_msgs")
@pytest.mark.parametrize('middleware', ['rcl', 'native'])
def test_an_rclpy_action_session_is_recorded_and_sent_again_to_a_fresh_server(tmp_path, ros, middleware):
    """rosbag2 Kilted's actions, on the rcl backend and on the native Fast DDS one: `--actions` and
    `-a` record an rclpy client's session with an rclpy action server (three goals, the last one
    cancelled); `info` lists the action; rosbags reads the goals from the bag;
    `--send-actions-as-client` sends the same goals (same ids, in order) and the cancel to a fresh
    rclpy server."""
    from rclpy.action import ActionClient
    from rosbags.typesys import get_typestore, get_types_from_msg
    from test_msgs.action import Fibonacci
    # A domain of its own per middleware: endpoints of one case are not counted in the next.
    domain = {'rcl': 88, 'native': 94}[middleware]
    peer = ros(domain, 'fibonacci')
    listed = recorder('--actions', '/fibonacci', '--node-name', 'listed', '-o', tmp_path / 'listed', domain=domain,
                      middleware=middleware)
    everything = recorder('-a', '--node-name', 'everything', '-o', tmp_path / 'all', domain=domain,
                          middleware=middleware)
    try:
        listed.wait_for_line(START_LINES[middleware])
        everything.wait_for_line(START_LINES[middleware])
        server = FibonacciServer(peer)
        for topic in ACTION_TOPICS:
            if topic.endswith('cancel_goal/_service_event'):
                continue  # its publisher shows once introspection of the cancel service is on: same
            try:
                wait_until(lambda: peer.node.count_subscribers(topic) == 2, f'both recorders on {topic}')
            except AssertionError as e:
                raise AssertionError(f'{e}; the recorders said:\n{listed.err}\n{everything.err}') from None
        client = ActionClient(peer.node, Fibonacci, '/fibonacci')
        assert client.wait_for_server(timeout_sec=TIMEOUT)
        for order in (3, 5):
            sent = client.send_goal_async(Fibonacci.Goal(order=order))
            wait_until(sent.done, f'goal {order} accepted')
            result = sent.result().get_result_async()
            wait_until(result.done, f'result of goal {order}')
        sent = client.send_goal_async(Fibonacci.Goal(order=8))
        wait_until(sent.done, 'goal 8 accepted')
        result = sent.result().get_result_async()
        cancel = sent.result().cancel_goal_async()
        wait_until(lambda: cancel.done() and result.done(), 'goal 8 cancelled')
        assert [o for o, _ in server.goals] == [3, 5, 8] and server.cancels == [server.goals[2][1]]
        recorded_goals = list(server.goals)
        for node in ('listed', 'everything'):
            # A round trip through the recorder's wait thread: what arrived before is taken by then.
            assert peer.call(IsPaused, f'/{node}/is_paused').paused is False
        listed.finish(interrupt=True)
        everything.finish(interrupt=True)
    finally:
        listed.kill()
        everything.kill()

    # What the recorders wrote, read by rosbags with the definitions the bag stores.
    for bag in ('listed', 'all'):
        with Reader(tmp_path / bag) as reader:
            topics = {c.topic: c.msgtype for c in reader.connections}
            assert {t: topics.get(t) for t in ACTION_TOPICS} == ACTION_TOPICS, topics
            store, names = get_typestore(Stores.EMPTY), {}
            for c in reader.connections:
                types = get_types_from_msg(c.msgdef.data, c.msgtype)
                store.register(types)
                # rosbags spells a service's messages pkg/srv/msg/Name.
                names[c.msgtype] = next(t for t in types if t.rsplit('/', 1)[1] == c.msgtype.rsplit('/', 1)[1])
            goals, feedback = [], 0
            for c, _, data in reader.messages():
                msg = store.deserialize_cdr(data, names[c.msgtype])
                if c.topic.endswith('send_goal/_service_event') and msg.info.event_type == 1:
                    goals.append((msg.request[0].goal.order, bytes(msg.request[0].goal_id.uuid)))
                feedback += c.topic.endswith('/feedback')
        assert goals == recorded_goals, bag
        assert feedback == 2 + 4 + 7, bag
    info = subprocess.run([binary('ros2bag-rs'), 'info', tmp_path / 'listed'],
                          capture_output=True, text=True, check=True).stdout
    assert 'Actions:           1\n' in info and \
        'Action: /fibonacci | Type: test_msgs/action/Fibonacci | Topics: 2 | Services: 3 |' in info, info
    assert '_action' not in info.split('Actions:')[0], info

    # The recorded client's requests, sent again to a fresh server at their times (the first
    # request of each service waits for the server's discovery).
    fresh = FibonacciServer(ros(domain + 1, 'fresh'), introspection=False)
    ours = player(tmp_path / 'listed', '--send-actions-as-client', domain=domain + 1, middleware=middleware)
    try:
        try:
            wait_until(lambda: len(fresh.goals) == 3 and len(fresh.cancels) == 1, 'the three goals and the cancel')
        except AssertionError as e:
            raise AssertionError(f'{e}: got {fresh.goals}, {fresh.cancels}; the player said:\n{ours.err}') from None
        ours.finish()
    finally:
        ours.kill()
    assert fresh.goals == recorded_goals
    assert fresh.cancels == [recorded_goals[2][1]]


GOLDEN = json.loads((pathlib.Path(__file__).resolve().parents[1] / 'ros_args_golden.json').read_text())

# What rclpy (rcl's own parser, in the sourced ROS 2) makes of a command line, printed as JSON by a
# process of its own (rcl configures logging once per process).
RCLPY_PARSE = r'''
import json, sys
import rclpy
from rclpy.logging import get_logger
args, node_name, remaps, loggers = json.loads(sys.argv[1])
context = rclpy.Context()
rclpy.init(args=['node', *args], context=context)
node = rclpy.create_node(node_name, context=context, automatically_declare_parameters_from_overrides=True)
def text(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)) or type(value).__name__ == 'array':
        return '[' + ', '.join(text(v) for v in value) + ']'
    return repr(value) if isinstance(value, float) else str(value)
params = {name: text(p.value) for name, p in node._parameters.items()
          if name not in ('use_sim_time', 'start_type_description_service')}
levels = {name: get_logger(name).get_effective_level().name for name in loggers}
remapped = {name: node.resolve_topic_name(name) for name in remaps}
enclaves = [e for n, ns, e in node.get_node_names_and_namespaces_with_enclaves()
            if n == node.get_name() and ns == node.get_namespace()]
print(json.dumps({'name': node.get_name(), 'namespace': node.get_namespace(), 'params': params,
                  'levels': levels, 'remap': remapped, 'enclave': enclaves[0] if enclaves else None}))
node.destroy_node()
rclpy.shutdown(context=context)
'''


@pytest.mark.parametrize('case', GOLDEN['cases'], ids=lambda c: ' '.join(c['args'][1:])[:60])
def test_golden_command_lines_mean_in_rclpy_what_the_table_says(tmp_path, case):
    """The table both of our parsers are checked against (cargo test ... ros_arguments) is what
    rcl itself makes of each command line, read through rclpy in the same sourced ROS 2."""
    for name, text in case.get('files', {}).items():
        (tmp_path / name).write_text(text)
    args = [a.replace('{dir}', str(tmp_path)) for a in case['args']]
    expect = case['expect']
    query = [args, case['node'], list(expect.get('remap', {})), list(expect.get('levels', {}))]
    env = {**os.environ, 'ROS_DOMAIN_ID': '97', 'ROS_LOG_DIR': str(tmp_path / 'log')}
    out = subprocess.run([sys.executable, '-c', RCLPY_PARSE, json.dumps(query)], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    for key, want in {**expect, **case.get('rclpy', {})}.items():
        assert got[key] == want, f'{key}: rclpy gives {got[key]!r}, the table {want!r}'


def test_our_rcl_player_logs_through_rcl(tmp_path):
    """rcl's logging, as an rclcpp node has it: our lines in RCUTILS_CONSOLE_OUTPUT_FORMAT, in a log
    file under ROS_LOG_DIR, at the level --log-level gives our node's logger."""
    write_bag(tmp_path / 'bag', {'/chatter': ('std_msgs/msg/String', [(0, string_cdr('x'))])})
    env = {**ours_env(98), 'ROS_LOG_DIR': str(tmp_path / 'log'),
           'RCUTILS_CONSOLE_OUTPUT_FORMAT': 'RCL[{severity}] {name}: {message}'}
    env.pop('RUST_LOG', None)
    out = subprocess.run([binary('player'), tmp_path / 'bag', '--disable-keyboard-controls', '--ros-args',
                          '--log-level', 'rosbag2_player:=debug', '-r', '__node:=p1'],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert 'RCL[INFO] p1: middleware: rcl' in out.stderr, out.stderr
    # The level rule aims at the node's original name, the logger is its remapped one: as in rclcpp,
    # the rule does not reach it.
    assert 'RCL[DEBUG] p1:' not in out.stderr, out.stderr
    files = list((tmp_path / 'log').glob('*.log'))
    assert files, f'no log file under ROS_LOG_DIR: {list((tmp_path / "log").iterdir())}'
    assert any('middleware: rcl' in f.read_text() for f in files)
    debug = subprocess.run([binary('player'), tmp_path / 'bag', '--disable-keyboard-controls', '--ros-args',
                            '--log-level', 'debug', '--disable-external-lib-logs'],
                           env={**env, 'ROS_LOG_DIR': str(tmp_path / 'log2')},
                           capture_output=True, text=True, timeout=60)
    assert debug.returncode == 0, debug.stderr
    assert 'RCL[DEBUG] rosbag2_player:' in debug.stderr, debug.stderr
    assert not list((tmp_path / 'log2').glob('*.log')), 'a log file despite --disable-external-lib-logs'
    named = subprocess.run([binary('player'), tmp_path / 'bag', '--disable-keyboard-controls', '--ros-args',
                            '--log-file-name', 'our_player'],
                           env={**env, 'ROS_LOG_DIR': str(tmp_path / 'log3')},
                           capture_output=True, text=True, timeout=60)
    assert named.returncode == 0, named.stderr
    files = [f.name for f in (tmp_path / 'log3').glob('*.log')]
    assert files and all(f.startswith('our_player') for f in files), files


def test_the_enclave_reaches_rcl_and_the_native_backends_refuse_security(tmp_path):
    keystore = tmp_path / 'keystore'
    (keystore / 'enclaves').mkdir(parents=True)
    env = {**ours_env(99), 'ROS_SECURITY_ENABLE': 'true', 'ROS_SECURITY_STRATEGY': 'Enforce',
           'ROS_SECURITY_KEYSTORE': str(keystore)}
    write_bag(tmp_path / 'bag', {'/chatter': ('std_msgs/msg/String', [(0, string_cdr('x'))])})
    run = lambda *extra, **more: subprocess.run(  # noqa: E731
        [binary('player'), tmp_path / 'bag', '--disable-keyboard-controls', *extra],
        env={**env, **more}, capture_output=True, text=True, timeout=60)
    secured = run('--ros-args', '--enclave', '/x')
    assert secured.returncode != 0
    # rcl looked for the enclave we were given: keystore/enclaves/x, which the keystore lacks.
    assert 'SECURITY ERROR' in secured.stderr, secured.stderr
    assert f"'{keystore}/enclaves/x'" in secured.stderr, secured.stderr
    native = run(ROSBAG2_RS_MIDDLEWARE='native')
    assert native.returncode != 0
    assert 'ROS_SECURITY_ENABLE=true: the native backends' in native.stderr, native.stderr


def test_our_rcl_players_services_answer_while_a_burst_runs(tmp_path, ros):
    """No handler runs on the thread that waits on the node's wait set: while the burst service's
    handler is still publishing 2000 frames of 256 KB, is_paused is answered (before the rcl
    executor had workers, it waited for the whole burst)."""
    from rosbag2_interfaces.srv import Burst
    frame = string_cdr('x' * (256 << 10))
    write_bag(tmp_path / 'bag', {'/frames': ('std_msgs/msg/String', [(i, frame) for i in range(2000)])})
    peer = ros(75)
    ours = player(tmp_path / 'bag', '--start-paused', domain=75)
    try:
        ours.wait_for_line(START_LINE)
        burst = peer.node.create_client(Burst, '/rosbag2_player/burst')
        paused = peer.node.create_client(IsPaused, '/rosbag2_player/is_paused')
        assert burst.wait_for_service(timeout_sec=TIMEOUT) and paused.wait_for_service(timeout_sec=TIMEOUT)
        bursting = burst.call_async(Burst.Request(num_messages=2000))
        answered = paused.call_async(IsPaused.Request())
        wait_until(answered.done, 'the is_paused reply')
        burst_done_first = bursting.done()
        wait_until(bursting.done, 'the burst reply', timeout=120)
        assert bursting.result().actually_burst == 2000
        assert not burst_done_first, 'is_paused was answered only after the burst: was the burst that short?'
        assert answered.result().paused is True
    finally:
        ours.kill()



def test_a_stop_during_an_rclpy_flood_closes_a_bag_with_every_message_counted(tmp_path, ros):
    """`~/stop` while an rclpy node publishes as fast as it can (tens of kHz): every message the
    recorder counted as received is in the closed bag, in publishing order without a gap, and the
    publisher went on publishing through the stop."""
    from rosbag2_interfaces.srv import Stop
    script = '''
import sys, time, rclpy
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from rclpy.serialization import serialize_message
rclpy.init()
node = rclpy.create_node('flood')
qos = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)
pub = node.create_publisher(String, '/flood', qos)
while pub.get_subscription_count() == 0:
    time.sleep(0.01)
count, start = 0, time.monotonic()
try:
    while True:
        try:
            pub.publish(serialize_message(String(data=str(count))))
        except rclpy._rclpy_pybind11.RCLError:
            # The writer's history stayed full for its max_blocking_time (a reader still being
            # discovered does not acknowledge): this message was not sent, send it again.
            continue
        count += 1
        if count % 20000 == 0:
            print(count, flush=True)
except KeyboardInterrupt:
    pass
print(f'published {count} at {count / (time.monotonic() - start):.0f} Hz', flush=True)
'''
    peer = ros(76)
    out = tmp_path / 'flood'
    ours = recorder('--topics', '/flood', '-o', out, domain=76)
    flood = subprocess.Popen([sys.executable, '-c', script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, 'ROS_DOMAIN_ID': '76'})
    lines = []
    reading = threading.Thread(target=lambda: lines.extend(flood.stdout), daemon=True)
    reading.start()
    try:
        ours.wait_for_line(START_LINE)
        wait_until(lambda: len(lines) >= 2, 'the flood under way')
        stopped = peer.call(Stop, '/rosbag2_recorder/stop')
        assert stopped.return_code == 0, stopped.error_string
        # The flood goes on after the stop: the stop was not between two bursts.
        after = len(lines)
        wait_until(lambda: len(lines) > after, 'the flood going on after the stop')
        flood.send_signal(signal.SIGINT)
        flood.wait(timeout=TIMEOUT)
        reading.join(timeout=5)
        err = ours.finish(interrupt=True)
    finally:
        flood.kill()
        ours.kill()
    print(lines[-1])
    counted = re.search(r'/flood: received (\d+), written (\d+), dropped (\d+)', err)
    assert counted, err
    received, written, dropped = map(int, counted.groups())
    with Reader(out) as reader:
        recorded = [int(deserialize_message(bytes(d), String).data) for _, _, d in reader.messages()]
    print(f'received {received}, written {written}, in the bag {len(recorded)}')
    assert dropped == 0 and received == written == len(recorded) > 0, err
    assert recorded == list(range(recorded[0], recorded[0] + len(recorded)))


def declared_ros_dependencies(distro):
    """The rosdep keys the packages of our nodes declare (any dependency kind), their conditions
    evaluated for `distro` as rosdep and colcon evaluate them."""
    import xml.etree.ElementTree as ElementTree
    root = pathlib.Path(__file__).resolve().parents[2]
    keys = set()
    packages = ['rosbag2_rs_transport_lib', 'rosbag2_rs_transport', 'ros2bag_rs_cli']
    packages += [f'middleware/rosbag2_rs_{b}' for b in ('middleware', 'dds_common', 'cyclonedds', 'fastdds', 'zenoh', 'rcl')]
    for package in packages:
        for element in ElementTree.parse(root / package / 'package.xml').getroot():
            if not element.tag.endswith('depend'):
                continue
            condition = element.get('condition', 'True').replace('$ROS_DISTRO', repr(distro))
            if eval(condition, {'__builtins__': {}}):
                keys.add(element.text.strip())
    return keys


def test_every_ros_library_our_nodes_link_is_declared_in_package_xml():
    """`readelf -d` of the built player and recorder: every library they link that the sourced ROS 2
    installs (resolved by `ldd` into an AMENT_PREFIX_PATH prefix) is a dependency `package.xml`
    declares for this distribution, so that `rosdep install --from-paths src` installs it."""
    prefixes = [pathlib.Path(p).resolve() for p in os.environ['AMENT_PREFIX_PATH'].split(os.pathsep)]
    declared = declared_ros_dependencies(os.environ['ROS_DISTRO'])
    for exe in ('player', 'recorder'):
        path = binary(exe)
        needed = re.findall(r'\(NEEDED\)\s+Shared library: \[(.+?)\]',
                            subprocess.run(['readelf', '-d', path], capture_output=True, text=True, check=True).stdout)
        resolved = dict(re.findall(r'^\s*(\S+) => (/\S+)', subprocess.run(['ldd', path], capture_output=True, text=True,
                                                                          check=True).stdout, re.M))
        from_ros = [lib for lib in needed if lib in resolved
                    and any(pathlib.Path(resolved[lib]).resolve().is_relative_to(p) for p in prefixes)]
        assert 'librcl.so' in from_ros, (needed, resolved)
        for lib in from_ros:
            key = re.match(r'lib(.+?)\.so', lib).group(1)
            assert key in declared, f'{exe} links {lib} ({resolved[lib]}): {key} is not declared in package.xml'
