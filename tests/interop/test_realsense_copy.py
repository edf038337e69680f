"""RealSense -> RealSense conversions lose nothing: a recording made by the real SDK (pyrealsense2,
a software device: depth + infrared at 30 fps, accel + gyro at 200 Hz, three options per sensor,
extrinsics, a notification), with an option changed halfway through (Exposure 8500 -> 999, added
the way the SDK's recorder writes it, with the `rosbags` library), is converted by
`ros2bag-rs convert -s realsense` (a plain copy, another chunk compression, cuts with
`--start`/`--end`, a stream left out) to a `.bag` and to the SDK 2.58+ rosbag2 `.db3` layout,
and each output is played by pyrealsense2 2.57 and 2.59 (`.db3`: 2.59), which must list the same
device, sensors, options (start value and the value after the change), profiles, intrinsics and
extrinsics, and deliver every selected frame with the same content, number, timestamp, domain
and metadata as they do from the input."""
import json
import sqlite3
import struct
import subprocess
from types import SimpleNamespace

import pytest

from test_realsense_interop import close, sdk

FRAMES = 30
EXPOSURE = '/device_0/sensor_0/option/Exposure/value'
PLAYERS = ['2.57', '2.59']


def add_option_change(src, dst, topic, value, before_frame):
    """Copies `src` with `rosbags`, adding `topic` = `value` just before depth frame `before_frame`,
    with the recorder's own connection (type, md5sum, definition): what the SDK's recorder writes
    when an option is set while recording. Returns the bag time of the change."""
    from rosbags.rosbag1 import Reader, Writer
    with Reader(src) as reader:
        depth = sorted(t for c, t, _ in reader.messages() if c.topic.endswith('Depth_0/image/data'))
        at = (depth[before_frame - 2] + depth[before_frame - 1]) // 2
        # Uncompressed: the SDK's LZ4 decoder refuses the frames `rosbags` writes.
        with Writer(dst) as writer:
            out = {}
            for c in reader.connections:
                out[c.id] = writer.add_connection(c.topic, c.msgtype, msgdef=c.msgdef.data, md5sum=c.digest,
                                                  callerid=c.ext.callerid, latching=c.ext.latching)
            target = next(out[c.id] for c in reader.connections if c.topic == topic)
            added = False
            for c, t, raw in reader.messages():
                if not added and t > at:
                    writer.write(target, at, struct.pack('<f', value))
                    added = True
                writer.write(out[c.id], t, raw)
    return at


def frame_times(path):
    """(stream, index, frame number) -> bag time of every frame of a ROS 1 recording."""
    from rosbags.rosbag1 import Reader
    times = {}
    with Reader(path) as reader:
        for c, t, raw in reader.messages():
            parts = c.topic.split('/')
            if len(parts) == 6 and parts[5] == 'data' and parts[4] in ('image', 'imu'):
                name, index = parts[3].rsplit('_', 1)
                seq = struct.unpack_from('<I', raw)[0]
                times[(name.lower(), int(index), seq)] = t
    return times


def add_option_change_db3(path, topic, value, before_frame):
    """The same in a rosbag2 recording of SDK 2.59 (options as `std_msgs/String`, CDR), with
    Python's sqlite3. Returns the bag time of the change."""
    db = sqlite3.connect(path)
    option = db.execute('select id from topics where name = ?', (topic,)).fetchone()[0]
    depth = [t for (t,) in db.execute(
        "select timestamp from messages join topics on topics.id = topic_id "
        "where name like '%/Depth_0/image/data%' order by timestamp")]
    at = (depth[before_frame - 2] + depth[before_frame - 1]) // 2
    text = f'{value:.6f}'.encode() + b'\0'
    cdr = b'\x00\x01\x00\x00' + struct.pack('<I', len(text)) + text
    db.execute('insert into messages (topic_id, timestamp, data) values (?, ?, ?)', (option, at, cdr))
    db.commit()
    db.close()
    return at


def frame_times_db3(path):
    """(stream, index, frame number) -> bag time in a rosbag2 recording: each stream's frames are
    numbered 1, 2, ... in recording order by the recorder."""
    db = sqlite3.connect(path)
    times = {}
    for name, in db.execute('select name from topics'):
        parts = name.split('/')
        if len(parts) >= 6 and parts[5] == 'data' and parts[4] in ('image', 'imu'):
            stream, index = parts[3].rsplit('_', 1)
            rows = db.execute('select timestamp from messages join topics on topics.id = topic_id '
                              'where name = ? order by timestamp', (name,))
            for n, (t,) in enumerate(rows, 1):
                times[(stream.lower(), int(index), n)] = t
    db.close()
    return times


# Inputs: SDK 2.57's ROS 1 .bag (copied message by message), SDK 2.59's rosbag2 .db3 (through
# the model); the outputs are .bag files, which both SDKs play.
INPUTS = {'bag': ('2.57', ['2.57', '2.59']), 'db3': ('2.59', ['2.59'])}


@pytest.fixture(scope='module', params=list(INPUTS))
def recorded(request, tmp_path_factory):
    ext = request.param
    recorder, players = INPUTS[ext]
    d = tmp_path_factory.mktemp('rscopy')
    if ext == 'bag':
        raw = d / 'sdk_raw.bag'
        sdk(recorder, 'record-full', raw, FRAMES)
        path = d / 'sdk.bag'
        change = add_option_change(raw, path, EXPOSURE, 999.0, before_frame=FRAMES // 2)
        times = frame_times(path)
    else:
        path = d / 'sdk.db3'
        sdk(recorder, 'record-full', path, FRAMES)
        change = add_option_change_db3(path, EXPOSURE, 999.0, before_frame=FRAMES // 2)
        times = frame_times_db3(path)
    played = {v: json.loads(sdk(v, 'dump', path)) for v in players}
    # The input as the SDKs see it: both streams' rates, the change applied during playback.
    for v, p in played.items():
        stereo = next(s for s in p['sensors'] if s['name'] == 'Stereo Module')
        exposure = option_name(stereo)
        assert stereo['options'][exposure]['value'] == 8500 and stereo['options_end'][exposure] == 999, v
        fps = {q['stream']: q['fps'] for s in p['sensors'] for q in s['profiles']}
        assert fps == {'depth': 30, 'infrared': 30, 'accel': 200, 'gyro': 200}, v
        assert len(p['frames']) == len(times), v
    # Each player's output compared with what that player (or 2.59, for a .db3) made of the input.
    played = {v: played.get(v, played['2.59']) for v in PLAYERS}
    return SimpleNamespace(path=path, change=change, played=played, times=times, dir=d)


def option_name(sensor):
    """The SDK's name for Exposure (`Exposure` in 2.57, `exposure` in 2.59)."""
    return next(k for k in sensor['options'] if k.lower() == 'exposure')


def notifications(path):
    """The notification messages of a ROS 1 recording: (topic, bytes)."""
    from rosbags.rosbag1 import Reader
    with Reader(path) as reader:
        return [(c.topic, bytes(raw)) for c, _, raw in reader.messages() if '/notification/' in c.topic]


def expect(played, keep_frame, keep_stream, exposure_start, exposure_end):
    """What playing a cut/filtered copy must show, from what playing the input showed."""
    want = json.loads(json.dumps(played))
    for s in want['sensors']:
        s['profiles'] = [p for p in s['profiles'] if keep_stream(p['stream'])]
        if s['name'] == 'Stereo Module':
            s['options'][option_name(s)]['value'] = exposure_start
            s['options_end'][option_name(s)] = exposure_end
    want['extrinsics'] = [e for e in want['extrinsics'] if keep_stream(e['from'][0]) and keep_stream(e['to'][0])]
    want['frames'] = [f for f in want['frames'] if keep_stream(f['stream']) and keep_frame(f)]
    return want


def compare(want, got, label):
    assert got['info'] == want['info'], label
    assert [s['name'] for s in got['sensors']] == [s['name'] for s in want['sensors']], label
    for a, b in zip(want['sensors'], got['sensors']):
        close(a['options'], b['options'], f"{label} {a['name']} options")
        close(a['options_end'], b['options_end'], f"{label} {a['name']} options after playback")
        assert sorted(b['options']) == sorted(a['options']), label
        key = lambda p: (p['stream'], p['index'])  # noqa: E731
        assert [key(p) for p in sorted(b['profiles'], key=key)] == [key(p) for p in sorted(a['profiles'], key=key)]
        for p, q in zip(sorted(a['profiles'], key=key), sorted(b['profiles'], key=key)):
            close({k: v for k, v in p.items() if k != 'unique_id'}, q, f"{label} {a['name']} {p['stream']}")
    ext = {(tuple(e['from']), tuple(e['to'])): e for e in got['extrinsics']}
    # The dump lists each pair once, from the lower unique id (assigned by the SDK as it loads).
    for (a, b), e in list(ext.items()):
        r, t = e['rotation'], e['translation']  # column-major R; the inverse is (R^T, -R^T t)
        rt = [r[3 * (k % 3) + k // 3] for k in range(9)]
        ext[(b, a)] = {'from': list(b), 'to': list(a), 'rotation': rt,
                       'translation': [-sum(r[3 * i + k] * t[k] for k in range(3)) for i in range(3)]}
    assert len(got['extrinsics']) == len(want['extrinsics']), label
    for e in want['extrinsics']:
        close(e, ext.get((tuple(e['from']), tuple(e['to']))), f"{label} extrinsics {e['from']}->{e['to']}")
    frames = {(f['stream'], f['index'], f['number']): f for f in got['frames']}
    assert len(frames) == len(got['frames']), f'{label}: a frame played twice'
    assert sorted(frames) == sorted((f['stream'], f['index'], f['number']) for f in want['frames']), label
    for f in want['frames']:
        key = (f['stream'], f['index'], f['number'])
        close(f, frames[key], f'{label} {key}')


CASES = {
    # name: (extra convert arguments (times as depth frame numbers), streams left out)
    'copy': ([], ()),
    'uncompressed': (['--compression-format', 'none'], ()),
    'cut_around_the_change': (['--start', 5, '--end', 25], ()),
    'cut_after_the_change_without_infrared': (['--start', 20, '--exclude-regex', '.*Infrared_1.*'], ('infrared',)),
    # The motion sensor stays, described, without a stream.
    'without_the_motion_streams': (['--exclude-regex', '.*(Accel|Gyro)_0.*'], ('accel', 'gyro')),
}


def db3_topics(path):
    """(name, type, serialization format) of every topic of a rosbag2 recording."""
    db = sqlite3.connect(path)
    topics = set(db.execute('select name, type, serialization_format from topics'))
    db.close()
    return topics


@pytest.mark.parametrize('out_ext', ['bag', 'db3'])
@pytest.mark.parametrize('case', CASES)
def test_a_realsense_recording_converts_to_realsense_losing_nothing(recorded, case, out_ext, cli, tmp_path):
    args, dropped = CASES[case]
    if out_ext == 'db3' and '--compression-format' in args:
        pytest.skip('a .db3 has no chunks to compress (refused: test_what_the_sdk_cannot_read_is_refused_clearly)')
    depth = sorted(t for (s, _, _), t in recorded.times.items() if s == 'depth')
    window = [0, 2 ** 63]
    argv = []
    it = iter(args)
    for a in it:
        if a in ('--start', '--end'):
            # A bag time in whole microseconds, just before that depth frame.
            t = (depth[next(it) - 1] - 1) // 1000 * 1000
            window[a == '--end'] = t
            argv += [a, f'{t // 1_000_000_000}.{t % 1_000_000_000:09d}']
        else:
            argv.append(a)
    out = tmp_path / f'out.{out_ext}'
    cli.run('convert', recorded.path, '-o', out, '-s', 'realsense', *argv)
    data = out.read_bytes()
    if out_ext == 'db3':
        # The SDK's own layout: a SQLite3 file whose topics, types and serialization are those
        # SDK 2.59's recorder writes for the same device.
        assert data.startswith(b'SQLite format 3\0')
        if recorded.path.suffix == '.db3' and case == 'copy':
            assert db3_topics(out) == db3_topics(recorded.path)
    elif 'none' in args:
        assert b'compression=lz4' not in data and b'compression=none' in data
    else:
        assert b'compression=lz4' in data
    start, end = window
    change_kept = start <= recorded.change <= end
    exposure_start = 999.0 if recorded.change < start else 8500.0
    exposure_end = 999.0 if recorded.change <= end else exposure_start
    assert change_kept or exposure_start == 999.0 or recorded.change > end
    for player in (PLAYERS if out_ext == 'bag' else ['2.59']):
        want = expect(recorded.played[player],
                      lambda f: start <= recorded.times[(f['stream'], f['index'], f['number'])] <= end,
                      lambda s: s not in dropped, exposure_start, exposure_end)
        got = json.loads(sdk(player, 'dump', out))
        compare(want, got, f'{case} played by {player}')
    if case == 'copy' and recorded.path.suffix == out.suffix == '.bag':
        # The SDK's playback does not raise recorded notifications: compared as stored.
        assert notifications(out) == notifications(recorded.path) != []
    if case == 'copy' and out_ext == 'db3':
        # Opened as applications open recordings: rs.config.enable_device_from_file + pipeline.
        played = json.loads(sdk('2.59', 'pipeline', out))
        assert played['framesets'] > 0
        assert played['streams'] == json.loads(sdk('2.59', 'pipeline', recorded.path))['streams'] != []


def test_what_the_sdk_cannot_read_is_refused_clearly(recorded, cli, tmp_path):
    # The SDK's bag reader has no bzip2 (2.57 crashes on such chunks).
    result = cli.run('convert', recorded.path, '-o', tmp_path / 'out.bag', '-s', 'realsense',
                     '--compression-format', 'bz2', check=False)
    assert result.returncode != 0 and 'bz2' in result.stderr and not (tmp_path / 'out.bag').exists()
    # The .db3 layout compresses each image, not chunks: a chunk compression is refused.
    result = cli.run('convert', recorded.path, '-o', tmp_path / 'out.db3', '-s', 'realsense',
                     '--compression-format', 'lz4', check=False)
    assert result.returncode != 0 and '--compression-format' in result.stderr and not (tmp_path / 'out.db3').exists()


def test_info_shows_each_option_at_the_start_and_its_changes(recorded, cli):
    text = cli.run('info', recorded.path).stdout
    assert 'Exposure=8500 (1 change)' in text, text
    info = cli.info(recorded.path)['realsense']
    stereo = next(s for s in info['sensors'] if s['name'] == 'Stereo Module')
    exposure = next(o for o in stereo['options'] if o['name'] == 'Exposure')
    assert exposure['value'] == 8500 and exposure['changes'] == [[recorded.change, 999.0]]


def test_pose_frames_are_read_written_back_and_bridged_as_odometry(cli, tmp_path):
    """A tracking camera's 6DoF frames (SDK 2.57 records them as Transform + Accel + Twist and
    confidence metadata): our reader gives what the SDK plays; written back through the model
    (`rs_rewrite`) and copied by `convert -s realsense`, both SDKs play them identically; the
    realsense2_camera bridge publishes them as nav_msgs/Odometry on pose/sample."""
    from rosbags.highlevel import AnyReader
    from test_realsense_interop import REWRITE, ours
    path = tmp_path / 'pose.bag'
    sdk('2.57', 'record-pose', path, 40)
    played = json.loads(sdk('2.59', 'dump', path))
    assert len(played['frames']) == 40 and all('pose' in f for f in played['frames'])
    mine = {f['number']: f for f in ours(path)['frames']}
    for f in played['frames']:
        close(f['pose'], mine[f['number']]['pose'], f"pose {f['number']}")
        close(f['timestamp'], mine[f['number']]['timestamp'], f"pose {f['number']}")
    # SDK 2.59 records no pose frames in its .db3 layout (nor plays any): refused, no file left.
    result = cli.run('convert', path, '-o', tmp_path / 'pose.db3', '-s', 'realsense', check=False)
    assert result.returncode != 0 and 'pose' in result.stderr and not (tmp_path / 'pose.db3').exists()
    rewritten, copied = tmp_path / 'rewritten.bag', tmp_path / 'copied.bag'
    subprocess.run([str(REWRITE), str(path), str(rewritten)], check=True, capture_output=True)
    cli.run('convert', path, '-o', copied, '-s', 'realsense')
    for out in (rewritten, copied):
        for player in PLAYERS:
            got = json.loads(sdk(player, 'dump', out))
            frames = {f['number']: f for f in got['frames']}
            assert len(frames) == 40, (out.name, player)
            for f in played['frames']:
                close({k: f[k] for k in ('pose', 'timestamp', 'domain', 'format')}, frames[f['number']],
                      f"{out.name} {player} pose {f['number']}")
    ros2 = tmp_path / 'ros2'
    cli.run('convert', path, '-o', ros2)
    with AnyReader([ros2]) as reader:
        conns = [c for c in reader.connections if c.topic == '/camera/camera/pose/sample']
        assert conns and conns[0].msgtype == 'nav_msgs/msg/Odometry'
        odometry = [reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages(connections=conns)]
    assert len(odometry) == 40
    for f, o in zip(played['frames'], odometry):
        p = o.pose.pose
        close(f['pose']['translation'], [p.position.x, p.position.y, p.position.z], 'odometry position')
        close(f['pose']['rotation'], [p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w], 'orientation')
        close(f['pose']['velocity'], [o.twist.twist.linear.x, o.twist.twist.linear.y, o.twist.twist.linear.z], 'velocity')
        assert o.child_frame_id == 'camera_pose_frame'


@pytest.mark.parametrize('layouts', ['bag->db3', 'db3->db3', 'db3->bag', 'bag->bag'])
def test_every_video_format_converts_between_layouts(layouts, cli, tmp_path):
    """BGR8, RGBA8, BGRA8, Y16, YUYV, UYVY and RAW16 streams (the .db3 layout stores them as
    PNGs with swapped channels, 16-bit PNGs and zstd frames; the .bag layout names YUYV and
    UYVY its own way), recorded by the SDK that writes the input layout, are played by SDK 2.59
    from the converted file exactly as from the input."""
    src_ext, out_ext = layouts.split('->')
    src, out = tmp_path / f'formats.{src_ext}', tmp_path / f'out.{out_ext}'
    sdk('2.57' if src_ext == 'bag' else '2.59', 'record-formats', src, 6)
    cli.run('convert', src, '-o', out, '-s', 'realsense')
    want, got = json.loads(sdk('2.59', 'dump', src)), json.loads(sdk('2.59', 'dump', out))
    assert len(want['frames']) == 6 * 7
    compare(want, got, layouts)
