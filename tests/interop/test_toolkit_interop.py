"""The toolkit verbs against real peers: `doctor` finds bags written by Python `rosbags` and `mcap`
clean and their damaged copies not (where Python `mcap` checks the same thing, it agrees);
`convert --where` keeps exactly what the same predicate computed in Python over `rosbags`-decoded
messages keeps; `export` writes PNGs that Pillow decodes to the exact pixels and CSV that Python's
csv module reads back as `rosbags`' decoded values."""
import csv
import io
import json
import shutil

import numpy as np
import pytest
from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap_ros2.writer import Writer as McapRos2Writer
from PIL import Image as PilImage
from rosbags.rosbag2 import Reader, StoragePlugin, Writer

T0 = 1_700_000_000_000_000_000


def pose_messages(typestore, n=80):
    """PoseStamped on /pose (x = i * 0.25 - 5, frame alternating), Strings on /chatter."""
    ts = typestore.types
    out = []
    for i in range(n):
        t = T0 + i * 50_000_000
        stamp = ts['builtin_interfaces/msg/Time'](sec=t // 10**9, nanosec=t % 10**9)
        header = ts['std_msgs/msg/Header'](stamp=stamp, frame_id='map' if i % 3 else 'odom')
        pose = ts['geometry_msgs/msg/PoseStamped'](header=header, pose=ts['geometry_msgs/msg/Pose'](
            position=ts['geometry_msgs/msg/Point'](x=i * 0.25 - 5, y=float(i % 7), z=-1.5),
            orientation=ts['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)))
        out.append(('/pose', 'geometry_msgs/msg/PoseStamped', t, pose))
        out.append(('/chatter', 'std_msgs/msg/String', t + 1, ts['std_msgs/msg/String'](data=f'hi, "{i}"')))
    return out


def write_rosbags(path, plugin, typestore, messages):
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        conns = {}
        for topic, msgtype, t, msg in messages:
            if topic not in conns:
                conns[topic] = writer.add_connection(topic, msgtype, typestore=typestore)
            writer.write(conns[topic], t, typestore.serialize_cdr(msg, msgtype))


def read_rosbags(path, typestore):
    with Reader(path) as reader:
        return [(c.topic, t, typestore.deserialize_cdr(d, c.msgtype)) for c, t, d in reader.messages()]


def write_python_mcap(path, typestore, messages):
    """A single .mcap file written by `mcap_ros2`'s writer (its own schemas from our text)."""
    texts = {
        'geometry_msgs/msg/PoseStamped': typestore_msgdef(typestore, 'geometry_msgs/msg/PoseStamped'),
        'std_msgs/msg/String': typestore_msgdef(typestore, 'std_msgs/msg/String'),
    }
    with open(path, 'wb') as f:
        writer = McapRos2Writer(f)
        schemas = {name: writer.register_msgdef(name, text) for name, text in texts.items()}
        for topic, msgtype, t, msg in messages:
            writer.write_message(topic, schemas[msgtype], to_dict(msg), log_time=t, publish_time=t)
        writer.finish()


def typestore_msgdef(typestore, name):
    text, _ = typestore.generate_msgdef(name, ros_version=2)
    return text


def to_dict(msg):
    if hasattr(msg, '__dataclass_fields__'):
        return {k: to_dict(getattr(msg, k)) for k in msg.__dataclass_fields__ if k != '__msgtype__'}
    return msg


def doctor(cli, bag, *extra):
    proc = cli.run('doctor', '--format', 'json', bag, *extra, check=False)
    report = json.loads(proc.stdout)
    assert proc.returncode == (0 if report['clean'] else 1), proc.stderr
    return report


def problems(report):
    """Every damage with its consequences, and every remark."""
    for p in report['damage'] + report['remarks']:
        yield p
        yield from p['consequences']


def kinds(report):
    return {p['kind'] for p in problems(report)}


@pytest.fixture
def bags(tmp_path, typestore):
    messages = pose_messages(typestore)
    made = {}
    for plugin, name in [(StoragePlugin.SQLITE3, 'rosbags_db3'), (StoragePlugin.MCAP, 'rosbags_mcap')]:
        write_rosbags(tmp_path / name, plugin, typestore, messages)
        made[name] = tmp_path / name
    made['python_mcap'] = tmp_path / 'python.mcap'
    write_python_mcap(made['python_mcap'], typestore, messages)
    return made, messages


def test_doctor_finds_peer_bags_clean(cli, bags):
    made, messages = bags
    for name, bag in made.items():
        report = doctor(cli, bag, '--decode-all')
        assert report['clean'], (name, report['damage'])
        assert sum(f['messages'] for f in report['files']) == len(messages), name
        assert report['decoded_messages'] == len(messages), name
        text = cli.run('doctor', bag).stdout
        assert 'clean' in text.splitlines()[-1], text


def mcap_file(bag):
    return bag if bag.suffix == '.mcap' else next(bag.glob('*.mcap'))


def python_mcap_reads(path):
    """Whether Python `mcap` reads every message with its CRC checks on."""
    try:
        with open(path, 'rb') as f:
            for _ in make_reader(f, validate_crcs=True).iter_messages():
                pass
        return True
    except (McapError, ValueError, EOFError, Exception):  # noqa: B014 (any failure is a 'no')
        return False


def damage_chunk(path):
    """Damages the middle chunk of an MCAP file: where the writer stored chunk CRCs (Python
    `mcap`), a byte in the middle of the chunk's (compressed) records; where it did not (`rosbags`
    writes none), the length of a message record, which only structure checks can catch."""
    with open(path, 'rb') as f:
        chunks = make_reader(f).get_summary().chunk_indexes
    chunk = chunks[len(chunks) // 2]
    data = bytearray(path.read_bytes())
    has_crc = int.from_bytes(data[chunk.chunk_start_offset + 1 + 8 + 24:][:4], 'little') != 0
    if has_crc:
        data[chunk.chunk_start_offset + chunk.chunk_length // 2] ^= 0x55
    else:
        at = data.find(b'hi, "40"')
        assert at > 0
        record = at - 8 - 31  # opcode, length, channel, sequence, two times; CDR header, string length
        assert data[record] == 0x05
        data[record + 8] = 0x7f  # the length's high byte: past the chunk
    path.write_bytes(bytes(data))
    return has_crc


def test_doctor_catches_damaged_copies_and_python_mcap_agrees(cli, bags, tmp_path):
    made, _ = bags
    crcs = {}
    for name in ['rosbags_mcap', 'python_mcap']:
        original = mcap_file(made[name])
        damaged = tmp_path / f'{name}_damaged.mcap'
        shutil.copy(original, damaged)
        crcs[name] = damage_chunk(damaged)
        report = doctor(cli, damaged)
        assert not report['clean'], name
        assert python_mcap_reads(original), name
        if crcs[name]:
            # Python mcap checks the same CRC, and agrees.
            assert 'crc' in kinds(report), (name, report)
            assert not python_mcap_reads(damaged), f'{name}: Python mcap reads the damaged chunk'
        else:
            # A record length past its chunk: Python mcap (which slices by its message index)
            # does not look; our reader parses every record of the chunk.
            assert 'unreadable' in kinds(report) or 'crc' in kinds(report), report
        # Cut in the middle.
        cut = tmp_path / f'{name}_cut.mcap'
        raw = original.read_bytes()
        cut.write_bytes(raw[: len(raw) // 2])
        report = doctor(cli, cut)
        assert not report['clean'], name
        assert not python_mcap_reads(cut)
    assert crcs == {'rosbags_mcap': False, 'python_mcap': True}
    # The rosbags .db3 bag: a row whose topic id no topic has, and a missing file.
    import sqlite3
    db_bag = shutil.copytree(made['rosbags_db3'], tmp_path / 'db3_bad')
    db = next(db_bag.glob('*.db3'))
    with sqlite3.connect(db) as conn:
        conn.execute('INSERT INTO messages (topic_id, timestamp, data) VALUES (42, ?, ?)', (T0 + 7, b'\0\1\0\0'))
    report = doctor(cli, db_bag)
    assert 'index' in kinds(report), report
    db.unlink()
    report = doctor(cli, db_bag)
    assert any('does not exist' in p['message'] for p in problems(report)), report
    # An empty storage file.
    empty = tmp_path / 'empty.mcap'
    empty.write_bytes(b'')
    assert not doctor(cli, empty)['clean']


def test_where_equals_the_python_predicate(cli, bags, tmp_path, typestore):
    made, _ = bags
    for name in ['rosbags_db3', 'python_mcap']:
        out = tmp_path / f'{name}_filtered'
        cli.run('convert', '-i', made[name], '-o', out,
                '--where', '/pose: pose.position.x > 3 and header.frame_id == "map" or pose.position.y == 0')
        source = read_rosbags(made[name] if made[name].is_dir() else convert_to_dir(cli, made[name], tmp_path), typestore)
        expected = [(topic, t) for topic, t, m in source
                    if topic != '/pose' or ((m.pose.position.x > 3 and m.header.frame_id == 'map') or m.pose.position.y == 0)]
        got = [(topic, t) for topic, t, _ in read_rosbags(out, typestore)]
        assert got == expected, name
        assert 0 < sum(1 for t, _ in got if t == '/pose') < sum(1 for t, _, _ in source if t == '/pose')


def convert_to_dir(cli, bag, tmp_path):
    out = tmp_path / f'{bag.stem}_as_dir'
    if not out.exists():
        cli.run('convert', '-i', bag, '-o', out)
    return out


def test_where_errors_are_clear(cli, bags, tmp_path):
    made, _ = bags
    for clause, needle in [('/pose: pose.position.q > 3', "no field 'q'"),
                           ('/pose: pose.position.x > ', 'column'),
                           ('/pose: header.frame_id > 3', 'cannot compare a string with a number'),
                           ('pose.position.x > 3', 'starts with its topic'),
                           ('/nope: data == 1', "no topic '/nope'")]:
        proc = cli.run('convert', '-i', made['rosbags_db3'], '-o', tmp_path / 'never', '--where', clause, check=False)
        assert proc.returncode != 0 and needle in proc.stderr, (clause, proc.stderr)
        assert not (tmp_path / 'never').exists()


def test_last_before_start_and_rename(cli, bags, tmp_path, typestore):
    made, messages = bags
    start = T0 + 2_020_000_000  # between two messages (f64 seconds: keep well away from them)
    out = tmp_path / 'cut'
    cli.run('convert', '-i', made['rosbags_mcap'], '-o', out, '--start', f'{start // 10**9}.{start % 10**9:09d}',
            '--last-per-topic-before-start', '/chatter', '--rename', '/chatter:=/talk')
    got = read_rosbags(out, typestore)
    before = [t for topic, _, t, _ in messages if topic == '/chatter' and t < start]
    talk = [(t, m.data) for topic, t, m in got if topic == '/talk']
    assert talk[0][0] == max(before), 'the latest /chatter from before --start, at its own time'
    assert all(t >= start for topic, t, _ in got if topic == '/pose')
    assert not any(topic == '/chatter' for topic, _, _ in got)
    assert len(talk) == 1 + sum(1 for m in messages if m[0] == '/chatter' and m[2] >= start)


def image_messages(typestore):
    ts = typestore.types
    rng = np.random.default_rng(3)
    cases = [('mono8', 1, np.uint8, 37, 23, 40), ('rgb8', 3, np.uint8, 31, 17, 96), ('bgr8', 3, np.uint8, 32, 9, 96),
             ('16UC1', 1, np.uint16, 29, 11, 64), ('mono16', 1, np.uint16, 8, 8, 16)]
    out = []
    for i, (encoding, channels, dtype, width, height, step) in enumerate(cases):
        pixels = rng.integers(0, np.iinfo(dtype).max, (height, width, channels), dtype=dtype)
        rows = np.zeros((height, step), dtype=np.uint8)  # padded rows
        raw = pixels.astype(pixels.dtype.newbyteorder('<')).view(np.uint8).reshape(height, -1)
        rows[:, :raw.shape[1]] = raw
        t = T0 + i * 100_000_000
        header = ts['std_msgs/msg/Header'](stamp=ts['builtin_interfaces/msg/Time'](sec=t // 10**9, nanosec=t % 10**9), frame_id='cam')
        msg = ts['sensor_msgs/msg/Image'](header=header, height=height, width=width, encoding=encoding, is_bigendian=0,
                                          step=step, data=rows.reshape(-1))
        out.append((t, encoding, pixels, msg))
    return out


def test_export_images_decode_to_the_exact_pixels(cli, tmp_path, typestore):
    images = image_messages(typestore)
    bag = tmp_path / 'images'
    write_rosbags(bag, StoragePlugin.MCAP, typestore, [('/cam', 'sensor_msgs/msg/Image', t, m) for t, _, _, m in images])
    out = tmp_path / 'frames'
    cli.run('export', bag, '--topic', '/cam', '-o', out)
    index = list(csv.DictReader(open(out / 'index.csv')))
    assert [int(r['timestamp']) for r in index] == [t for t, _, _, _ in images]
    assert [int(r['header_stamp']) for r in index] == [t for t, _, _, _ in images]
    for row, (_, encoding, pixels, _) in zip(index, images):
        got = np.array(PilImage.open(out / row['file']))
        want = pixels[:, :, ::-1] if encoding == 'bgr8' else pixels
        assert np.array_equal(got.reshape(want.shape).astype(np.uint64), want.astype(np.uint64)), encoding
    # The video: made by ffmpeg, or a clear message when it is missing.
    proc = cli.run('export', bag, '--topic', '/cam', '-o', tmp_path / 'v', '--video', tmp_path / 'v.mp4', check=False)
    if shutil.which('ffmpeg') is None:
        assert proc.returncode != 0 and 'ffmpeg is not installed' in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 0 and (tmp_path / 'v.mp4').stat().st_size > 0


def test_export_compressed_images_as_the_files_they_hold(cli, tmp_path, typestore):
    ts = typestore.types
    files = []
    for i, fmt in enumerate(['jpeg', 'png']):
        buf = io.BytesIO()
        PilImage.fromarray(np.full((8, 12, 3), 40 * i, dtype=np.uint8)).save(buf, format=fmt.upper())
        files.append((T0 + i, fmt, buf.getvalue()))
    bag = tmp_path / 'compressed'
    msgs = [('/cam/compressed', 'sensor_msgs/msg/CompressedImage', t,
             ts['sensor_msgs/msg/CompressedImage'](header=ts['std_msgs/msg/Header'](stamp=ts['builtin_interfaces/msg/Time'](sec=0, nanosec=0), frame_id=''),
                                                   format=fmt, data=np.frombuffer(data, dtype=np.uint8)))
            for t, fmt, data in files]
    write_rosbags(bag, StoragePlugin.SQLITE3, typestore, msgs)
    out = tmp_path / 'out'
    cli.run('export', bag, '--topic', '/cam/compressed', '-o', out)
    assert (out / 'frame_000000.jpg').read_bytes() == files[0][2]
    assert (out / 'frame_000001.png').read_bytes() == files[1][2]


def test_export_csv_equals_rosbags_values(cli, bags, tmp_path, typestore):
    made, _ = bags
    out = tmp_path / 'csv'
    cli.run('export', made['rosbags_db3'], '--topic', '/pose', '-o', out)
    rows = list(csv.DictReader(open(out / 'pose.csv', newline='')))
    decoded = [(t, m) for topic, t, m in read_rosbags(made['rosbags_db3'], typestore) if topic == '/pose']
    assert len(rows) == len(decoded)
    for row, (t, m) in zip(rows, decoded):
        assert int(row['timestamp']) == t
        assert float(row['pose.position.x']) == m.pose.position.x
        assert float(row['pose.position.y']) == m.pose.position.y
        assert float(row['pose.orientation.w']) == m.pose.orientation.w
        assert row['header.frame_id'] == m.header.frame_id
        assert int(row['header.stamp.sec']) == m.header.stamp.sec
        assert int(row['header.stamp.nanosec']) == m.header.stamp.nanosec
    # --fields keeps the selected columns; strings with commas and quotes survive.
    out2 = tmp_path / 'csv2'
    cli.run('export', made['rosbags_db3'], '--topic', '/pose', '-o', out2, '--fields', 'pose.position', 'header.frame_id')
    header = next(csv.reader(open(out2 / 'pose.csv', newline='')))
    assert header == ['timestamp', 'header.frame_id', 'pose.position.x', 'pose.position.y', 'pose.position.z']
    out3 = tmp_path / 'csv3'
    cli.run('export', made['rosbags_db3'], '--topic', '/chatter', '-o', out3)
    strings = [r['data'] for r in csv.DictReader(open(out3 / 'chatter.csv', newline=''))]
    assert strings == [m.data for topic, _, m in read_rosbags(made['rosbags_db3'], typestore) if topic == '/chatter']


def test_info_rates_and_schemas(cli, bags):
    made, _ = bags
    info = json.loads(cli.run('info', '-v', '--format', 'json', made['rosbags_mcap']).stdout)
    pose = next(t for t in info['topics'] if t['name'] == '/pose')
    assert pose['arrival']['min_interval_ns'] == pose['arrival']['max_interval_ns'] == 50_000_000
    assert abs(pose['arrival']['mean_rate_hz'] - 20.0) < 1e-9
    text = cli.run('info', '-v', made['rosbags_mcap']).stdout
    assert 'Rate: 20.000 Hz' in text, text
    schemas = cli.run('info', '--schemas', made['rosbags_mcap']).stdout
    assert '=== geometry_msgs/msg/PoseStamped (ros2msg' in schemas and 'MSG: geometry_msgs/Point' in schemas, schemas


@pytest.mark.parametrize('compression', ['none', 'bz2', 'lz4'])
def test_doctor_on_ros1_bags_of_the_original_rosbag_library(cli, tmp_path, compression):
    """ROS 1 bags written by Debian's python3-rosbag (through ros1_peer.py) are clean, every
    message converted and decoded; the same bag cut short has no usable index."""
    import pathlib
    import subprocess
    peer = pathlib.Path(__file__).with_name('ros1_peer.py')
    if not pathlib.Path('/usr/bin/python3').exists() or subprocess.run(
            ['/usr/bin/python3', '-c', 'import rosbag'], capture_output=True).returncode != 0:
        pytest.skip('python3-rosbag is not installed')
    bag = tmp_path / f'{compression}.bag'
    subprocess.run(['/usr/bin/python3', str(peer), 'write', str(bag), compression], check=True)
    report = doctor(cli, bag, '--decode-all')
    assert report['clean'], report
    assert report['decoded_messages'] == sum(f['messages'] for f in report['files']) > 0
    cut = tmp_path / 'cut.bag'
    data = bag.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    report = doctor(cli, cut)
    assert not report['clean'] and 'index' in kinds(report), report


def test_reindex_output_repairs_a_copy_rosbags_reads(cli, bags, tmp_path, typestore):
    """A rosbags MCAP bag cut short: `reindex --output` writes a repaired copy that `doctor` finds
    clean and `rosbags` reads (a prefix of the original messages); the input stays as it was."""
    made, messages = bags
    bag = shutil.copytree(made['rosbags_mcap'], tmp_path / 'cut_bag')
    file = mcap_file(bag)
    raw = file.read_bytes()
    file.write_bytes(raw[: len(raw) // 2])  # inside the data: messages are lost
    before = {p.name: p.read_bytes() for p in bag.iterdir()}
    out = tmp_path / 'repaired'
    cli.run('reindex', bag, '--output', out)
    assert {p.name: p.read_bytes() for p in bag.iterdir()} == before, 'input untouched'
    assert doctor(cli, out)['clean']
    got = [(topic, t) for topic, t, _ in read_rosbags(out, typestore)]
    want = sorted((topic, t) for topic, _, t, _ in messages)
    want = sorted(want, key=lambda m: m[1])
    assert 0 < len(got) < len(want) and got == want[: len(got)]
    assert cli.run('reindex', bag, '--output', out, check=False).returncode != 0, 'never overwrites'
