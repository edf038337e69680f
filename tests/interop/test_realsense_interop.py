"""RealSense recordings against the real SDK (pyrealsense2, no camera): SDK 2.57 records `.bag`,
SDK 2.59 records `.db3`; the SDK's own playback of each file is compared with what
`realsense_bag_rs` reads (`examples/rs_dump`), field by field and frame by frame."""
import json
import math
import os
import pathlib
import subprocess
import time

import pytest

from conftest import CYCLONE, ROOT, TARGET

PEER = ROOT / 'tests' / 'realsense' / 'sdk_peer.py'
DUMP = TARGET / 'debug' / 'examples' / 'rs_dump'
SDK = {
    '2.57': pathlib.Path(os.environ.get('RS257_PYTHON', ROOT / '.venv-rs257' / 'bin' / 'python')),
    '2.59': pathlib.Path(os.environ.get('RS259_PYTHON', ROOT / '.venv-rs259' / 'bin' / 'python')),
}
FRAMES = 20


def sdk(version, *args):
    if not SDK[version].exists():
        pytest.fail(f'{SDK[version]} missing: tools/test.sh installs pyrealsense2 {version}')
    return subprocess.run([str(SDK[version]), str(PEER), *map(str, args)], check=True, capture_output=True,
                          text=True, timeout=300).stdout


def ours(path, check=True):
    if not DUMP.exists():
        pytest.fail(f'{DUMP} missing: `cargo build -p realsense_bag_rs --examples`')
    result = subprocess.run([str(DUMP), str(path)], capture_output=True, text=True, timeout=120)
    assert 'panicked' not in result.stderr, result.stderr
    if check:
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)
    return result


@pytest.fixture(scope='module', params=[('2.57', 'bag'), ('2.59', 'db3')])
def recording(request, tmp_path_factory):
    version, ext = request.param
    path = tmp_path_factory.mktemp('rs') / f'sdk{version}.{ext}'
    sdk(version, 'record', path, FRAMES)
    return version, path


def close(a, b, path=''):
    if isinstance(a, float) or isinstance(b, float):
        assert b is not None and math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6), f'{path}: {a} != {b}'
    elif isinstance(a, dict):
        assert isinstance(b, dict), f'{path}: {b!r} is not a mapping'
        for k in a:
            close(a[k], b.get(k), f'{path}.{k}')
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f'{path}: {a} != {b}'
        for i, (x, y) in enumerate(zip(a, b)):
            close(x, y, f'{path}[{i}]')
    else:
        assert a == b, f'{path}: {a!r} != {b!r}'


@pytest.mark.parametrize('player', ['2.57', '2.59'])
def test_every_frame_and_the_device_description_match_the_sdks_playback(recording, player, cli):
    version, path = recording
    if player == '2.57' and path.suffix == '.db3':
        pytest.skip('SDK 2.57 plays only .bag files')
    expected, got = json.loads(sdk(player, 'dump', path)), ours(path)
    assert got['info'] == expected['info']
    for sensor in expected['sensors']:
        mine = [s for s in got['sensors'] if s['name'] == sensor['name']]
        assert mine, f"sensor {sensor['name']} missing"
        close(sensor['options'], mine[0]['options'], sensor['name'])
        for profile in sensor['profiles']:
            p = [q for q in mine[0]['profiles'] if (q['stream'], q['index']) == (profile['stream'], profile['index'])]
            assert p, f"{profile['stream']} {profile['index']} missing"
            close({k: v for k, v in profile.items() if k != 'unique_id'}, p[0], profile['stream'])
    extrinsics = {(tuple(e['from']), tuple(e['to'])): e for e in got['extrinsics']}
    for e in expected['extrinsics']:
        close(e, extrinsics.get((tuple(e['from']), tuple(e['to']))), f"extrinsics {e['from']}→{e['to']}")
    # The SDK delivers all 5 streams; every frame once, same content.
    assert len(expected['frames']) == len(got['frames']) == FRAMES * (3 + 2 * 6)
    mine = {(f['stream'], f['index'], f['number']): f for f in got['frames']}
    for f in expected['frames']:
        key = (f['stream'], f['index'], f['number'])
        # The SDK reports a zero frame counter for motion frames, which hold none in the file.
        metadata = {k: v for k, v in f.pop('metadata').items() if not (k == 'frame_counter' and v == 0 and 'xyz' in f)}
        close(f, mine.get(key), str(key))
        assert mine[key]['metadata'] == metadata, key
    # `info` describes the camera.
    info = json.loads(cli.run('info', '--format', 'json', path).stdout)['realsense']
    assert [s['name'] for s in info['sensors']] == [s['name'] for s in got['sensors']]
    # In recording order, each stream's frames numbered 1, 2, 3, ...
    for stream in {(f['stream'], f['index']) for f in got['frames']}:
        numbers = [f['number'] for f in got['frames'] if (f['stream'], f['index']) == stream]
        assert numbers == list(range(1, len(numbers) + 1)), stream


def test_bad_recordings_give_clear_errors(recording, tmp_path, cli):
    version, path = recording
    if path.suffix != '.bag':
        pytest.skip('cut and filtered copies are made of the ROS 1 recording')
    data = path.read_bytes()
    # A recording cut short (its index lost) is read up to the cut: each stream's frames from 1 on.
    cut = tmp_path / 'cut.bag'
    cut.write_bytes(data[:len(data) * 2 // 3])
    result = ours(cut, check=False)
    assert result.returncode == 0, result.stderr
    frames = json.loads(result.stdout)['frames']
    assert frames
    for stream in {(f['stream'], f['index']) for f in frames}:
        numbers = [f['number'] for f in frames if (f['stream'], f['index']) == stream]
        assert numbers == list(range(1, len(numbers) + 1)), stream
    # Cut before the description: a clear error.
    cut.write_bytes(data[:5000])
    result = ours(cut, check=False)
    assert result.returncode != 0 and str(cut) in result.stderr, result.stderr
    # No /file_version: not a RealSense recording.
    plain = tmp_path / 'plain.bag'
    cli.run('convert', path, '-o', plain, '-s', 'rosbag_v2', '--exclude-topics', '/file_version')
    result = ours(plain, check=False)
    assert result.returncode != 0 and 'no /file_version' in result.stderr, result.stderr
    # A video stream whose camera_info is missing.
    no_info = tmp_path / 'no_info.bag'
    cli.run('convert', path, '-o', no_info, '-s', 'rosbag_v2', '--exclude-regex', '.*Color_0/info/camera_info')
    result = ours(no_info, check=False)
    assert result.returncode != 0 and 'color stream 0 has no camera_info' in result.stderr, result.stderr


REWRITE = TARGET / 'debug' / 'examples' / 'rs_rewrite'


@pytest.mark.parametrize('compression', ['lz4', 'none', 'db3'])
def test_the_sdk_plays_what_we_write_exactly_as_the_original(recording, compression, tmp_path):
    """`RecordingWriter` writes a .bag (LZ4 or uncompressed chunks) both SDKs play, or the
    SDK 2.58+ .db3 layout SDK 2.59 plays."""
    version, path = recording
    copy = tmp_path / ('copy.db3' if compression == 'db3' else f'copy_{compression}.bag')
    subprocess.run([str(REWRITE), str(path), str(copy), 'lz4' if compression == 'db3' else compression],
                   check=True, capture_output=True)
    original = json.loads(sdk('2.59', 'dump', path))
    for player in (['2.59'] if compression == 'db3' else ['2.57', '2.59']):
        played = json.loads(sdk(player, 'dump', copy))
        assert played['info'] == original['info']
        assert len(played['frames']) == len(original['frames']) == FRAMES * 15, player
        frames = {(f['stream'], f['index'], f['number']): f for f in played['frames']}
        for f in original['frames']:
            close(f, frames.get((f['stream'], f['index'], f['number'])), f'{player} {f["stream"]} {f["number"]}')
        for a, b in zip(sorted(original['sensors'], key=lambda s: s['name']), sorted(played['sensors'], key=lambda s: s['name'])):
            close(a['options'], b['options'], a['name'])
            key = lambda p: (p['stream'], p['index'])  # noqa: E731
            for p, q in zip(sorted(a['profiles'], key=key), sorted(b['profiles'], key=key)):
                close({k: v for k, v in p.items() if k != 'unique_id'}, q, f"{a['name']} {p['stream']}")


def test_a_recording_converts_to_the_realsense2_camera_layout_that_rosbags_decodes(recording, tmp_path, cli):
    import zlib

    from rosbags.highlevel import AnyReader
    version, path = recording
    out = tmp_path / 'ros2'
    cli.run('convert', path, '-o', out)
    expected = ours(path)
    images = {}
    with AnyReader([out]) as reader:
        topics = {c.topic: c for c in reader.connections}
        assert {'/camera/camera/depth/image_rect_raw', '/camera/camera/infra1/image_rect_raw',
                '/camera/camera/color/image_raw', '/camera/camera/accel/sample', '/camera/camera/gyro/sample',
                '/camera/camera/color/camera_info', '/tf_static'} <= set(topics)
        for conn, _, raw in reader.messages():
            msg = reader.deserialize(raw, conn.msgtype)
            if conn.msgtype == 'sensor_msgs/msg/Image':
                images.setdefault(conn.topic, []).append((msg.width, msg.height, msg.encoding, zlib.crc32(bytes(msg.data))))
            elif conn.topic == '/camera/camera/color/camera_info':
                color = [p for s in expected['sensors'] for p in s['profiles'] if p['stream'] == 'color'][0]
                assert msg.k[0] == pytest.approx(color['intrinsics']['fx']) and msg.width == color['width']
            elif conn.msgtype == 'realsense2_camera_msgs/msg/Metadata':
                assert json.loads(msg.json_data)['frame_number'] >= 1
    want = {'/camera/camera/depth/image_rect_raw': ('depth', '16UC1'), '/camera/camera/infra1/image_rect_raw': ('infrared', 'mono8'),
            '/camera/camera/color/image_raw': ('color', 'rgb8')}
    for topic, (stream, encoding) in want.items():
        frames = [f for f in expected['frames'] if f['stream'] == stream]
        assert images[topic] == [(f['width'], f['height'], encoding, f['crc32']) for f in frames], topic


@pytest.mark.parametrize('direct', [False, True])
def test_a_recording_plays_onto_dds_as_images(recording, tmp_path, cli, direct):
    """Converted first, or straight from the file with `ros2bag-rs play`."""
    from ros_dds import private_network
    if not private_network():
        pytest.skip('DDS interop tests run only inside a private network namespace (tools/test.sh)')
    from cyclonedds.domain import DomainParticipant
    from ros_dds import Image, ServiceClient, refuse_real_interfaces, take, wait_matched
    from test_player_interop import Player, reader

    refuse_real_interfaces()
    version, path = recording
    out = tmp_path / 'ros2'
    dp = DomainParticipant(0)
    color = reader(dp, '/camera/camera/color/image_raw', Image)
    if direct:
        player = object.__new__(Player)  # the same control surface, run as `ros2bag-rs play`
        player.proc = subprocess.Popen([str(cli.path), 'play', str(path), '--start-paused', '--disable-keyboard-controls'],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                       env={**os.environ, **CYCLONE})
    else:
        cli.run('convert', path, '-o', out)
        player = Player(out, '--start-paused')
    try:
        resume = ServiceClient(dp, 'rosbag2_player', 'resume')
        resume.wait()
        assert wait_matched(color)
        time.sleep(0.3)  # let the player's writers see our reader too
        resume.call()
        got = take(color, FRAMES, timeout=30)
        player.finish()
    finally:
        player.kill()
    assert len(got) == FRAMES
    assert all((m.width, m.height, m.encoding, len(m.data)) == (64, 48, 'rgb8', 64 * 48 * 3) for m in got)


@pytest.mark.parametrize('out_ext', ['bag', 'db3'])
def test_ros2_camera_topics_become_a_recording_the_sdk_plays(recording, out_ext, tmp_path, cli):
    """A .bag both SDKs play, or SDK 2.58's .db3 layout 2.59 plays (its sensors, which have no
    options in ROS 2 topics, get the frame queue size every SDK sensor has: 2.59 crashes
    loading a .db3 sensor without options)."""
    version, path = recording
    ros2 = tmp_path / 'ros2'
    cli.run('convert', path, '-o', ros2)
    back = tmp_path / f'from_ros2.{out_ext}'
    cli.run('convert', ros2, '-o', back, '-s', 'realsense')
    original = json.loads(sdk('2.59', 'dump', path))
    for player in (['2.57', '2.59'] if out_ext == 'bag' else ['2.59']):
        played = json.loads(sdk(player, 'dump', back))
        assert len(played['frames']) == len(original['frames']), player
        content = lambda frames: sorted(  # noqa: E731
            (f['stream'], f['number'], f.get('crc32'), tuple(f.get('xyz', ())), f.get('width'), f['format'])
            for f in frames)
        assert content(played['frames']) == content(original['frames']), player
