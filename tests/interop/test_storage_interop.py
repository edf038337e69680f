"""Bags written by Python `rosbags` are read by rosbag2-rs byte for byte, and bags rosbag2-rs
writes are read by `rosbags` and by the `mcap` reader decoding every message through our schemas."""
import os
import signal
import sqlite3
import subprocess
import time

import numpy as np
import pytest
from mcap.reader import NonSeekingReader, make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import Reader, StoragePlugin, Writer

LATCHED = Qos(QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL,
              QosTime(0, 0), QosTime(0, 0), QosLiveliness.AUTOMATIC, QosTime(0, 0), False)
T0 = 1_700_000_000_000_000_000


def sample_messages(typestore, n=60, image_bytes=1 << 20):
    """(topic, msgtype, timestamp, cdr bytes) for several types, including ~1 MB images."""
    String = typestore.types['std_msgs/msg/String']
    Image = typestore.types['sensor_msgs/msg/Image']
    Header = typestore.types['std_msgs/msg/Header']
    Time = typestore.types['builtin_interfaces/msg/Time']
    Clock = typestore.types['rosgraph_msgs/msg/Clock']
    PoseStamped = typestore.types['geometry_msgs/msg/PoseStamped']
    Pose = typestore.types['geometry_msgs/msg/Pose']
    Point = typestore.types['geometry_msgs/msg/Point']
    Quaternion = typestore.types['geometry_msgs/msg/Quaternion']
    rng = np.random.default_rng(7)
    out = []
    for i in range(n):
        t = T0 + i * 10_000_000
        stamp = Time(sec=t // 10**9, nanosec=t % 10**9)
        header = Header(stamp=stamp, frame_id='camera')
        out.append(('/chatter', 'std_msgs/msg/String', t, typestore.serialize_cdr(String(data=f'hello {i}'), 'std_msgs/msg/String')))
        out.append(('/clock', 'rosgraph_msgs/msg/Clock', t + 1, typestore.serialize_cdr(Clock(clock=stamp), 'rosgraph_msgs/msg/Clock')))
        pose = PoseStamped(header=header, pose=Pose(position=Point(x=i, y=2.0, z=3.0), orientation=Quaternion(x=0, y=0, z=0, w=1)))
        out.append(('/pose', 'geometry_msgs/msg/PoseStamped', t + 2, typestore.serialize_cdr(pose, 'geometry_msgs/msg/PoseStamped')))
        if i % 10 == 0:
            data = rng.integers(0, 255, image_bytes, dtype=np.uint8)
            image = Image(header=header, height=1024, width=image_bytes // 1024, encoding='mono8', is_bigendian=0,
                          step=image_bytes // 1024, data=data)
            out.append(('/camera/image', 'sensor_msgs/msg/Image', t + 3, typestore.serialize_cdr(image, 'sensor_msgs/msg/Image')))
    return out


def write_with_rosbags(path, plugin, typestore, messages):
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        conns = {}
        for topic, msgtype, _, _ in messages:
            if topic not in conns:
                qos = [LATCHED] if topic == '/clock' else []
                conns[topic] = writer.add_connection(topic, msgtype, typestore=typestore, offered_qos_profiles=qos)
        for topic, _, t, data in messages:
            writer.write(conns[topic], t, data)


def read_with_rosbags(path, typestore):
    with Reader(path) as reader:
        topics = {c.topic: c for c in reader.connections}
        rows = []
        for conn, t, data in reader.messages():
            typestore.deserialize_cdr(data, conn.msgtype)  # must decode
            rows.append((conn.topic, t, bytes(data)))
        return rows, topics, reader


@pytest.mark.parametrize('plugin', [StoragePlugin.SQLITE3, StoragePlugin.MCAP])
def test_we_read_rosbags_bags_byte_for_byte(tmp_path, cli, typestore, plugin):
    messages = sample_messages(typestore)
    bag = tmp_path / 'theirs'
    write_with_rosbags(bag, plugin, typestore, messages)
    ours = cli.cat(bag)
    assert len(ours) == len(messages)
    for got, (topic, _, t, data) in zip(ours, sorted(messages, key=lambda m: m[2])):
        assert (got['topic'], got['recv'], bytes.fromhex(got['data'])) == (topic, t, data)
    info = cli.info(bag)
    assert info['message_count'] == len(messages)
    assert {t['name']: t['message_count'] for t in info['topics']}['/camera/image'] == 6
    clock = next(t for t in info['topics'] if t['name'] == '/clock')
    assert 'transient_local' in clock['offered_qos_profiles']
    # The metadata rosbags embeds (its own layout) is read, and nothing else is worth a warning.
    text = cli.run('info', bag)
    assert 'WARN' not in text.stderr and 'ERROR' not in text.stderr, text.stderr


@pytest.mark.parametrize('storage,extra', [
    ('mcap', []),
    ('mcap', ['--compression-format', 'zstd']),
    ('mcap', ['--compression-format', 'lz4', '--max-bag-size', '2000000']),
    ('mcap', ['--storage-preset-profile', 'fastwrite']),
    ('sqlite3', []),
    ('sqlite3', ['--max-bag-duration', '0.2']),
])
def test_rosbags_reads_our_bags(tmp_path, cli, typestore, storage, extra):
    messages = sample_messages(typestore)
    source = tmp_path / 'source'
    write_with_rosbags(source, StoragePlugin.MCAP, typestore, messages)
    ours = tmp_path / 'ours'
    cli.run('convert', source, '-o', ours, '--storage', storage, *extra)
    rows, topics, reader = read_with_rosbags(ours, typestore)
    expected = sorted(((m[0], m[2], m[3]) for m in messages), key=lambda r: r[1])
    assert rows == expected
    assert topics['/clock'].ext.offered_qos_profiles[0].durability == QosDurability.TRANSIENT_LOCAL
    if '--max-bag-size' in extra or '--max-bag-duration' in extra:
        assert len(list(ours.glob(f'*.{"mcap" if storage == "mcap" else "db3"}'))) > 1


def test_mcap_reader_decodes_every_message_through_our_schemas(tmp_path, cli, typestore):
    messages = sample_messages(typestore, n=30)
    source = tmp_path / 'source'
    write_with_rosbags(source, StoragePlugin.SQLITE3, typestore, messages)
    ours = tmp_path / 'ours'
    cli.run('convert', source, '-o', ours, '--compression-format', 'zstd')
    [path] = ours.glob('*.mcap')
    with open(path, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        header = reader.get_header()
        assert header.profile == 'ros2'
        summary = reader.get_summary()
        for channel in summary.channels.values():
            assert channel.message_encoding == 'cdr'
            assert 'offered_qos_profiles' in channel.metadata and 'topic_type_hash' in channel.metadata
            assert summary.schemas[channel.schema_id].encoding == 'ros2msg'
        decoded = 0
        for schema, channel, message, ros_msg in reader.iter_decoded_messages():
            if channel.topic == '/chatter':
                assert ros_msg.data.startswith('hello ')
            if channel.topic == '/pose':
                assert ros_msg.header.frame_id == 'camera' and ros_msg.pose.position.y == 2.0
            if channel.topic == '/camera/image':
                assert len(ros_msg.data) == 1 << 20
            assert message.publish_time > 0
            decoded += 1
        assert decoded == len(messages)
        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
        assert 'version: 9' in metadata['rosbag2']['serialized_metadata']


@pytest.mark.parametrize('config,check', [
    ('noSummary: true', lambda summary: summary is None),
    ('noMessageIndex: true\nnoChunkIndex: true\nnoStatistics: true',
     lambda summary: not summary.chunk_indexes and summary.statistics is None and summary.channels),
    ('noRepeatedSchemas: true\nnoRepeatedChannels: true\nnoSummaryOffsets: true',
     lambda summary: not summary.schemas and not summary.channels and summary.chunk_indexes),
    ('enableDataCRC: false\nnoAttachmentIndex: true\nnoMetadataIndex: true',
     lambda summary: not summary.metadata_indexes and summary.statistics.message_count == 186),
])
def test_storage_config_files_leave_out_the_mcap_records_they_name(tmp_path, cli, typestore, config, check):
    """rosbag2_storage_mcap's `no...` options, through `--storage-config-file`: the records named
    are not written (as the mcap Python reader sees the file), and every message is still read, by
    the mcap reader and by ours."""
    messages = sample_messages(typestore, n=60, image_bytes=1024)
    source = tmp_path / 'source'
    write_with_rosbags(source, StoragePlugin.MCAP, typestore, messages)
    (tmp_path / 'config.yaml').write_text(config + '\n')
    ours = tmp_path / 'ours'
    cli.run('convert', source, '-o', ours, '--storage', 'mcap', '--storage-config-file', tmp_path / 'config.yaml')
    [path] = ours.glob('*.mcap')
    with open(path, 'rb') as f:
        assert check(make_reader(f).get_summary()), config
    with open(path, 'rb') as f:
        # Read from start to end (the seeking reader looks channels up in the summary only).
        assert sum(1 for _ in NonSeekingReader(f).iter_messages()) == len(messages)
    assert len(cli.cat(ours)) == len(messages)


def test_compression_levels_are_mcap_cpps(tmp_path, cli, typestore):
    """`compressionLevel` names mean the zstd levels rosbag2's mcap library gives them: Fastest
    (-5) compresses text less than Default (1), Default less than Slowest (19)."""
    String = typestore.types['std_msgs/msg/String']
    text = ' '.join(f'word{i % 97} {i * 7919 % 10007}' for i in range(3000))
    messages = [('/chatter', 'std_msgs/msg/String', T0 + i, typestore.serialize_cdr(String(data=f'{i} {text}'), 'std_msgs/msg/String'))
                for i in range(50)]
    source = tmp_path / 'source'
    write_with_rosbags(source, StoragePlugin.MCAP, typestore, messages)
    sizes = {}
    for level in ('Fastest', 'Default', 'Slowest'):
        (tmp_path / f'{level}.yaml').write_text(f'compression: Zstd\ncompressionLevel: {level}\n')
        out = tmp_path / level
        cli.run('convert', source, '-o', out, '--storage', 'mcap', '--storage-config-file', tmp_path / f'{level}.yaml')
        [path] = out.glob('*.mcap')
        sizes[level] = path.stat().st_size
        assert len(cli.cat(out)) == len(messages)
    assert sizes['Fastest'] > sizes['Default'] > sizes['Slowest'], sizes


def test_bare_realsense_style_db3_opens(tmp_path, cli, typestore):
    """RealSense SDK 2.58+ writes a .db3 with only `topics` and `messages` and no metadata.yaml."""
    path = tmp_path / 'camera.db3'
    db = sqlite3.connect(path)
    db.executescript('''
        CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
                            serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);
        CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, data BLOB NOT NULL);
        CREATE INDEX timestamp_idx ON messages (timestamp ASC);
    ''')
    db.execute("INSERT INTO topics VALUES (1, '/device_0/info', 'diagnostic_msgs/msg/KeyValue', 'cdr', '')")
    KeyValue = typestore.types['diagnostic_msgs/msg/KeyValue']
    for i in range(5):
        data = typestore.serialize_cdr(KeyValue(key='Name', value=f'D435 {i}'), 'diagnostic_msgs/msg/KeyValue')
        db.execute('INSERT INTO messages (topic_id, timestamp, data) VALUES (1, ?, ?)', (1000 - i, data))
    db.commit()
    db.close()
    info = cli.info(path)
    assert info['message_count'] == 5 and info['storage_identifier'] == 'sqlite3'
    rows = cli.cat(path)
    assert [r['recv'] for r in rows] == [996, 997, 998, 999, 1000]
    out = tmp_path / 'as_mcap'
    cli.run('convert', path, '-o', out)
    assert cli.info(out)['topics'][0]['type'] == 'diagnostic_msgs/msg/KeyValue'


def test_bad_input_is_a_clear_error(tmp_path, cli, typestore):
    source = tmp_path / 'source'
    write_with_rosbags(source, StoragePlugin.MCAP, typestore, sample_messages(typestore, n=20))
    [path] = source.glob('*.mcap')
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    proc = cli.run('info', source, check=False)
    assert proc.returncode == 1
    assert path.name in proc.stderr and 'truncated' in proc.stderr and 'reindex' in proc.stderr
    (source / 'metadata.yaml').write_text('rosbag2_bagfile_information: {version: 99}')
    proc = cli.run('info', source, check=False)
    assert proc.returncode == 1 and 'metadata.yaml' in proc.stderr and 'unsupported metadata version 99' in proc.stderr
    proc = cli.run('convert', source, '-o', tmp_path / 'x', '--storage', 'rosbag1', check=False)
    assert proc.returncode == 1 and "unknown storage 'rosbag1'" in proc.stderr


def test_reindex_recovers_a_writer_killed_with_sigkill(tmp_path, cli, typestore):
    """Kill `convert` while it writes a large bag: reindex recovers everything up to the last
    complete chunk, readable by rosbags, as a prefix of the input."""
    messages = sample_messages(typestore, n=400, image_bytes=1 << 20)
    source = tmp_path / 'source'
    write_with_rosbags(source, StoragePlugin.MCAP, typestore, messages)
    out = tmp_path / 'killed'
    proc = subprocess.Popen([str(cli.path), 'convert', str(source), '-o', str(out), '--storage-preset-profile', 'none'])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(f.stat().st_size >= 8 << 20 for f in out.glob('0_killed_*.mcap')):
        if proc.poll() is not None:
            pytest.skip('convert finished before it could be killed')
        time.sleep(0.001)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / 'metadata.yaml').exists()
    assert cli.run('info', out, check=False).returncode == 1
    report = cli.run('reindex', out).stdout
    assert 'repaired' in report
    rows, _, _ = read_with_rosbags(out, typestore)
    expected = sorted(((m[0], m[2], m[3]) for m in messages), key=lambda r: r[1])
    assert 0 < len(rows) < len(expected)
    assert rows == expected[: len(rows)]
