"""ROS 1 bags against the original `rosbag` library (Debian's python3-rosbag, run with the system
Python through ros1_peer.py) and Python `rosbags`; converted bags against `mcap` +
`mcap-ros2-support` and `rosbags-convert`; a ROS 1 bag played straight onto DDS."""
import json
import math
import pathlib
import re
import subprocess
import sys
import time

import pytest
from conftest import TARGET, split_files
from ros_dds import only_in_private_network
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag1 import Reader as Ros1Reader

PEER = pathlib.Path(__file__).with_name('ros1_peer.py')
ROUNDTRIP = TARGET / 'debug' / 'examples' / 'codec_roundtrip'
SYSTEM_PYTHON = '/usr/bin/python3'
ROSBAGS_CONVERT = str(pathlib.Path(sys.executable).with_name('rosbags-convert'))
TOPICS = 10
STEPS = 20


def peer(*args):
    return subprocess.run([SYSTEM_PYTHON, str(PEER), *map(str, args)], check=True, capture_output=True,
                          text=True).stdout


def dump(bag):
    return [json.loads(line) for line in peer('dump', bag).splitlines()]


@pytest.fixture(scope='module', params=['none', 'bz2', 'lz4'])
def golden(request, tmp_path_factory):
    """A bag written by the original rosbag library, with its dump."""
    path = tmp_path_factory.mktemp('golden') / f'{request.param}.bag'
    peer('write', path, request.param)
    return path, dump(path)


def same(a, b, path='msg'):
    """Equal, floats to float32 precision (we print float32 fields at float32 precision)."""
    if isinstance(a, float) or isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-30), f'{path}: {a} != {b}'
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), f'{path}: {list(a)} != {list(b)}'
        for k in a:
            same(a[k], b[k], f'{path}.{k}')
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f'{path}: lengths {len(a)} != {len(b)}'
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f'{path}[{i}]')
    else:
        assert a == b, f'{path}: {a!r} != {b!r}'


def ros2_type(ros1_type):
    pkg, name = ros1_type.split('/')
    return f'{pkg}/msg/{name}'


def test_we_read_what_rosbag_writes_field_for_field(cli, golden):
    path, expected = golden
    assert len(expected) == TOPICS * STEPS
    ours = [json.loads(line) for line in cli.run('cat', '--format', 'json', '--full', path).stdout.splitlines()]
    assert len(ours) == len(expected)
    # Same time order; ties (same stamp) in the bag's connection order for both.
    for e, o in zip(expected, ours):
        assert (o['topic'], o['recv'], o['type']) == (e['topic'], e['time'], ros2_type(e['type']))
        same(e['msg'], o['msg'])
    info = cli.info(path)
    assert info['storage_identifier'] == 'rosbag_v2' and info['message_count'] == TOPICS * STEPS


def test_ros1_to_mcap_to_ros1_is_byte_exact_and_rosbag_accepts_it(cli, golden, tmp_path):
    path, expected = golden
    mcap = tmp_path / 'ros2'
    cli.run('convert', path, '-o', mcap)
    for compression in ['lz4', 'bz2', 'none']:
        back = tmp_path / f'back_{compression}.bag'
        cli.run('convert', mcap, '-o', back, '-s', 'rosbag_v2', '--compression-format', compression)
        assert dump(back) == expected  # bytes, md5sums, types, times and latching
        info = subprocess.run(['rosbag', 'info', str(back)], capture_output=True, text=True)
        assert info.returncode == 0 and re.search(rf'messages:\s+{len(expected)}\n', info.stdout), info.stderr
        assert compression == 'none' or re.search(rf'compression:\s+{compression}', info.stdout), info.stdout
        check = subprocess.run(['rosbag', 'check', str(back)], capture_output=True, text=True)
        assert check.returncode == 0 and 'Traceback' not in check.stderr, check.stderr


def mcap_messages(bag_dir, decode=True):
    out = []
    for file in split_files(bag_dir):
        with open(file, 'rb') as f:
            reader = make_reader(f, decoder_factories=[DecoderFactory()])
            if decode:
                for schema, channel, message, decoded in reader.iter_decoded_messages(log_time_order=True):
                    out.append((channel.topic, schema.name, message.log_time, message.data, decoded))
            else:
                for schema, channel, message in reader.iter_messages(log_time_order=True):
                    out.append((channel.topic, schema.name, message.log_time, message.data))
    return out


def plain(value):
    """A decoded mcap-ros2 message as plain data."""
    if hasattr(value, '__slots__'):
        return {k: plain(getattr(value, k)) for k in value.__slots__}
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def test_converted_mcap_decodes_with_mcap_ros2_and_matches_rosbags_convert(cli, golden, tmp_path):
    path, expected = golden
    ours = tmp_path / 'ours'
    cli.run('convert', path, '-o', ours)
    theirs = tmp_path / 'theirs'
    subprocess.run([ROSBAGS_CONVERT, '--src', str(path), '--dst', str(theirs),
                    '--dst-storage', 'mcap'], check=True, capture_output=True)
    # rosbags-convert keeps ROS 1's upper-case field names (CameraInfo's D, K, R, P), which
    # mcap-ros2-support (like every rosidl parser) rejects: compare its bytes only.
    ours, theirs = mcap_messages(ours), mcap_messages(theirs, decode=False)
    assert len(ours) == len(theirs) == len(expected)
    for e, o in zip(expected, ours):
        assert (o[0], o[1], o[2]) == (e['topic'], ros2_type(e['type']), e['time'])
        same(e['msg'], plain(o[4]))
    # Byte for byte the CDR rosbags-convert writes (the same message per topic and time).
    key = lambda m: (m[2], m[0])  # noqa: E731
    assert [(key(m), m[1], m[3]) for m in sorted(ours, key=key)] == \
        [(key(m), m[1], m[3]) for m in sorted(theirs, key=key)]


def test_decode_then_encode_gives_the_bytes_of_every_golden_message_in_both_serializations(cli, golden, tmp_path):
    """ROS 1 bytes as the original library wrote them, CDR as we convert them, and CDR as
    rosbags-convert writes it: each message decoded and encoded again is identical."""
    path, expected = golden
    ours, theirs = tmp_path / 'ours', tmp_path / 'theirs'
    cli.run('convert', path, '-o', ours)
    subprocess.run([ROSBAGS_CONVERT, '--src', str(path), '--dst', str(theirs), '--dst-storage', 'mcap'], check=True)
    if not ROUNDTRIP.exists():
        pytest.fail(f'{ROUNDTRIP} missing: `cargo build -p rosbag2_rs_storage --examples`')
    result = subprocess.run([str(ROUNDTRIP), str(path), str(ours), str(theirs)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    n = len(expected)
    assert result.stdout.splitlines() == [f'{path}: ros1 {n} identical', f'{path}: cdr {n} identical',
                                          f'{ours}: cdr {n} identical', f'{theirs}: cdr {n} identical']


def test_rosbags_reads_our_ros1_bags_and_we_read_rosbags_ros1_bags(cli, golden, tmp_path):
    path, expected = golden
    ours = tmp_path / 'ours.bag'
    mcap = tmp_path / 'ros2'
    cli.run('convert', path, '-o', mcap)
    cli.run('convert', mcap, '-o', ours, '-s', 'rosbag_v2', '--compression-format', 'lz4')
    with Ros1Reader(ours) as reader:
        got = [(c.topic, c.msgtype, c.digest, t, raw.hex()) for c, t, raw in reader.messages()]
    assert got == [(e['topic'], ros2_type(e['type']), e['md5sum'], e['time'], e['data']) for e in expected]
    # rosbags' ROS 1 writer (through rosbags-convert from the ROS 2 bag) to us.
    theirs = tmp_path / 'theirs.bag'
    subprocess.run([ROSBAGS_CONVERT, '--src', str(mcap), '--dst', str(theirs)],
                   check=True, capture_output=True)
    back = [json.loads(line) for line in cli.run('cat', '--format', 'json', '--full', theirs).stdout.splitlines()]
    assert len(back) == len(expected)
    for e, o in zip(expected, back):
        assert (o['topic'], o['recv']) == (e['topic'], e['time'])
        same(e['msg'], o['msg'])


def test_damaged_bags_give_clear_errors_never_panics(cli, golden, tmp_path):
    path, expected = golden
    data = path.read_bytes()
    for cut in [20, 4000, 4200, len(data) // 2, len(data) - 10]:
        bad = tmp_path / f'cut_{cut}.bag'
        bad.write_bytes(data[:cut])
        result = cli.run('cat', '--format', 'hex', bad, check=False)
        assert 'panicked' not in result.stderr, result.stderr
        if result.returncode != 0:
            assert str(bad) in result.stderr, result.stderr
    if path.name == 'none.bag':
        return
    # A compressed chunk that is garbage: the error names the file, the chunk offset and the topic.
    bad = tmp_path / 'garbled.bag'
    at = data.index(b'compression=') + 200
    bad.write_bytes(data[:at] + bytes(b ^ 0x5A for b in data[at:at + 64]) + data[at + 64:])
    result = cli.run('cat', '--format', 'hex', bad, check=False)
    assert 'panicked' not in result.stderr, result.stderr
    assert result.returncode != 0 and 'garbled.bag' in result.stderr and 'topic' in result.stderr, result.stderr


@only_in_private_network
def test_the_player_plays_a_ros1_bag_onto_dds_converted_on_the_fly(cli, golden):
    from cyclonedds.domain import DomainParticipant
    from ros_dds import RawImage, ServiceClient, String, refuse_real_interfaces, take, wait_matched
    from test_player_interop import Player, reader

    refuse_real_interfaces()
    path, expected = golden
    cdr = {(m['topic'], m['recv']): bytes.fromhex(m['data']) for m in cli.cat(path)}
    dp = DomainParticipant(0)
    chatter = reader(dp, '/chatter', String)
    images = reader(dp, '/camera/image', RawImage)
    player = Player(path, '--start-paused', '--rate', '20')
    try:
        resume = ServiceClient(dp, 'rosbag2_player', 'resume')
        resume.wait()
        assert wait_matched(chatter) and wait_matched(images)
        time.sleep(0.3)  # let the player's writers see our readers too
        resume.call()
        got_chatter = take(chatter, STEPS, timeout=30)
        got_images = take(images, STEPS, timeout=30)
        player.finish()
    finally:
        player.kill()
    assert [m.data for m in got_chatter] == [e['msg']['data'] for e in expected if e['topic'] == '/chatter']
    # On the wire a payload is padded to 4 bytes, the pad counted in the encapsulation options.
    unpadded = [bytes(m[:2]) + b'\0\0' + bytes(m[4:len(m) - (m[3] & 3)]) for m in got_images]
    assert unpadded == [cdr[('/camera/image', e['time'])] for e in expected if e['topic'] == '/camera/image']


BOUNDED = """# Fixed arrays, bounded and unbounded sequences and strings, nested arrays of structs.
int32 LIMIT=3
string<=8 name "none"
float64[3] xyz
int16[<=4] small
string<=5[<=2] tags
geometry_msgs/Point[<=3] corners
geometry_msgs/Point[2] pair
test_msgs/Inner[] inners
uint8[<=16] raw
"""
INNER = """bool flag
builtin_interfaces/Time stamp
float32[] values
"""


def test_ros2_types_with_bounds_decode_like_rosbags_and_round_trip(cli, tmp_path):
    import numpy as np
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    store.register({**get_types_from_msg(BOUNDED, 'test_msgs/msg/Bounded'),
                    **get_types_from_msg(INNER, 'test_msgs/msg/Inner')})
    t = store.types
    Point, Inner, Time = t['geometry_msgs/msg/Point'], t['test_msgs/msg/Inner'], t['builtin_interfaces/msg/Time']
    sent = []
    bag = tmp_path / 'bounded'
    with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection('/bounded', 'test_msgs/msg/Bounded', typestore=store)
        for i in range(10):
            msg = t['test_msgs/msg/Bounded'](
                name=f'n{i}'[:8], xyz=np.array([i, -1.5, 1e-9]), small=np.arange(i % 5, dtype=np.int16),
                tags=['a', 'bcdef'][:i % 3], corners=[Point(x=float(k), y=0.5, z=-k) for k in range(i % 4)],
                pair=[Point(x=1.0, y=2.0, z=3.0), Point(x=-1.0, y=-2.0, z=-3.0)],
                inners=[Inner(flag=k % 2 == 0, stamp=Time(sec=k, nanosec=i), values=np.arange(k, dtype=np.float32))
                        for k in range(i % 3)],
                raw=np.arange(i, dtype=np.uint8))
            data = store.serialize_cdr(msg, 'test_msgs/msg/Bounded')
            writer.write(conn, 1000 + i, data)
            sent.append(msg)
    ours = [json.loads(line)['msg'] for line in cli.run('cat', '--format', 'json', '--full', bag).stdout.splitlines()]

    def plain(v):
        if hasattr(v, '__dataclass_fields__'):
            return {k: plain(getattr(v, k)) for k in v.__dataclass_fields__ if not k.isupper() and k != '__msgtype__'}
        if isinstance(v, np.ndarray):
            return [plain(x) for x in v.tolist()]
        if isinstance(v, list):
            return [plain(x) for x in v]
        return v

    assert len(ours) == len(sent)
    for o, s in zip(ours, sent):
        same(plain(s), o)
    result = subprocess.run([str(ROUNDTRIP), str(bag)], capture_output=True, text=True)
    assert result.returncode == 0 and 'cdr 10 identical' in result.stdout, result.stdout + result.stderr
    # ROS 1 has no bounds: the same bag converts to a ROS 1 bag and back to the same values.
    ros1 = tmp_path / 'bounded.bag'
    cli.run('convert', bag, '-o', ros1, '-s', 'rosbag_v2')
    back = [json.loads(line)['msg'] for line in cli.run('cat', '--format', 'json', '--full', ros1).stdout.splitlines()]
    assert back == ours


def test_cat_into_a_closed_pipe_exits_quietly(cli, golden):
    path, _ = golden
    proc = subprocess.Popen([str(cli.path), 'cat', '--full', *[str(path)] * 4], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=30) == 0 and 'error' not in err, err
