"""MCAP attachments and metadata records, and `--typestore`, against Python's own readers and
writers: attachments we add (`attach`) and metadata records we write (`convert/record
--metadata`) read byte-exact by Python `mcap` (CRCs checked); attachments and metadata records
written by Python `mcap` listed, extracted byte-exact and kept by `convert`; a Humble-style .db3
without definitions converted with `--typestore humble` decodes with `mcap_ros2` from the MCAP's
own schemas alone, and a type that changed between distributions (`sensor_msgs/msg/Range`
gained `variance` in Iron) gets each distribution's definition. The `record --metadata` test runs
only inside a private network namespace (`tools/test.sh`), against a Python cyclonedds publisher."""
import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import time

import numpy as np
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic
from mcap.reader import make_reader
from mcap.stream_reader import StreamReader
from mcap.writer import Writer as McapWriter
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from conftest import CYCLONE, binary
from ros_dds import RELIABLE, String, only_in_private_network, refuse_real_interfaces, wait_matched

T0 = 1_700_000_000_000_000_000


def chatter_bag(path, typestore, n=40):
    """An MCAP bag written by Python rosbags: Strings on /chatter."""
    msgtype = 'std_msgs/msg/String'
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection('/chatter', msgtype, typestore=typestore)
        for i in range(n):
            msg = typestore.types[msgtype](data=f'hello {i}')
            writer.write(conn, T0 + i * 10_000_000, typestore.serialize_cdr(msg, msgtype))


def mcap_files(bag):
    return sorted(bag.glob('*.mcap'))


def python_view(path):
    """Attachments, metadata records and message payloads as Python mcap reads them (CRCs
    checked, summary and data section)."""
    with open(path, 'rb') as f:
        # The stream reader walks every record and checks every CRC it meets.
        list(StreamReader(f, validate_crcs=True).records)
    with open(path, 'rb') as f:
        reader = make_reader(f, validate_crcs=True)
        attachments = [(a.name, a.media_type, a.log_time, a.create_time, bytes(a.data))
                       for a in reader.iter_attachments()]
        metadata = [(m.name, dict(m.metadata)) for m in reader.iter_metadata()]
        messages = [(c.topic, m.log_time, bytes(m.data)) for _, c, m in reader.iter_messages()]
        summary = reader.get_summary()
    return attachments, metadata, messages, summary


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_attached_files_are_read_byte_exact_by_python_mcap(cli, typestore, tmp_path):
    bag = tmp_path / 'bag'
    chatter_bag(bag, typestore)
    [file] = mcap_files(bag)
    _, metadata_before, messages_before, _ = python_view(file)
    blob = random.Random(7).randbytes(300_000)
    (tmp_path / 'calib.bin').write_bytes(blob)
    (tmp_path / 'robot.urdf').write_text('<robot name="r2"/>\n')
    cli.run('attach', bag, tmp_path / 'calib.bin', '--name', 'left/calib', '--media-type', 'application/x-calib')
    cli.run('attach', bag, tmp_path / 'robot.urdf')
    attachments, metadata, messages, summary = python_view(file)
    assert [(a[0], a[1], a[4]) for a in attachments] == [
        ('left/calib', 'application/x-calib', blob),
        ('robot.urdf', 'application/xml', b'<robot name="r2"/>\n'),
    ]
    assert messages == messages_before and metadata == metadata_before
    assert summary.statistics.attachment_count == 2 and len(summary.attachment_indexes) == 2
    # rosbags still reads the bag (metadata.yaml untouched, messages as before).
    with Reader(bag) as reader:
        assert sum(1 for _ in reader.messages()) == 40
    # Our listing agrees with Python's, and extraction is byte-exact.
    listed = json.loads(cli.run('attachments', bag, '--json').stdout)
    assert [(a['name'], a['media_type'], a['size'], a['log_time_ns']) for a in listed] == [
        (a[0], a[1], len(a[4]), a[2]) for a in attachments]
    cli.run('attachments', bag, '--extract', tmp_path / 'out')
    assert (tmp_path / 'out' / 'calib').read_bytes() == blob
    assert (tmp_path / 'out' / 'robot.urdf').read_bytes() == b'<robot name="r2"/>\n'
    info = cli.info(bag)
    assert [a['name'] for a in info['attachments']] == ['left/calib', 'robot.urdf']
    # Our own read-only check finds the rewritten file clean (data and summary CRCs included).
    cli.run('doctor', bag)


def test_convert_metadata_records_are_read_by_python_mcap(cli, typestore, tmp_path):
    bag = tmp_path / 'bag'
    chatter_bag(bag, typestore)
    out = tmp_path / 'out'
    cli.run('convert', '-i', bag, '-o', out, '--metadata', 'robot=r2', '--metadata', 'site=lab=3',
            '--max-bag-size', '300')
    files = mcap_files(out)
    assert len(files) > 1
    for file in files:
        _, metadata, _, summary = python_view(file)
        mine = [m for m in metadata if m[0] != 'rosbag2']
        assert mine == [('rosbag2_rs', {'robot': 'r2', 'site': 'lab=3'})], file
        assert 'rosbag2' in [m[0] for m in metadata]
    out2 = tmp_path / 'out2'
    cli.run('convert', '-i', bag, '-o', out2, '--metadata', 'k=v', '--metadata-name', 'calibration')
    _, metadata, _, _ = python_view(mcap_files(out2)[0])
    assert ('calibration', {'k': 'v'}) in metadata
    text = cli.run('info', out2).stdout
    assert 'Metadata records:  calibration: k=v' in text


def python_mcap_with_extras(path, typestore):
    """A single .mcap file written by Python mcap: a String channel, two attachments, two
    metadata records (one empty)."""
    msgtype = 'std_msgs/msg/String'
    with open(path, 'wb') as f:
        writer = McapWriter(f)
        writer.start(profile='ros2', library='python mcap')
        schema = writer.register_schema(msgtype, 'ros2msg', b'string data\n')
        channel = writer.register_channel('/chatter', 'cdr', schema, {})
        for i in range(10):
            data = typestore.serialize_cdr(typestore.types[msgtype](data=f'py {i}'), msgtype)
            writer.add_message(channel, log_time=T0 + i, publish_time=T0 + i, data=data, sequence=i)
        writer.add_attachment(create_time=5, log_time=T0 + 3, name='config.yaml',
                              media_type='application/yaml', data=b'rate: 10\n')
        writer.add_attachment(create_time=6, log_time=T0 + 4, name='empty', media_type='', data=b'')
        writer.add_metadata('calibration', {'fx': '500.5', 'fy': '501'})
        writer.add_metadata('nothing', {})
        writer.finish()


def test_python_written_attachments_and_metadata_are_read_and_kept_by_convert(cli, typestore, tmp_path):
    src = tmp_path / 'py.mcap'
    python_mcap_with_extras(src, typestore)
    expected_attachments, expected_metadata, _, _ = python_view(src)
    listed = json.loads(cli.run('attachments', src, '--json').stdout)
    assert [(a['name'], a['media_type'], a['size'], a['log_time_ns'], a['create_time_ns']) for a in listed] == [
        ('config.yaml', 'application/yaml', 9, T0 + 3, 5), ('empty', '', 0, T0 + 4, 6)]
    cli.run('attachments', src, '--extract', tmp_path / 'x')
    assert (tmp_path / 'x' / 'config.yaml').read_bytes() == b'rate: 10\n'
    assert (tmp_path / 'x' / 'empty').read_bytes() == b''
    info = cli.info(src)
    assert info['metadata_records'] == [{'name': 'calibration', 'metadata': {'fx': '500.5', 'fy': '501'}},
                                        {'name': 'nothing', 'metadata': {}}]
    # MCAP to MCAP keeps both, with the user's record added.
    out = tmp_path / 'out'
    cli.run('convert', '-i', src, '-o', out, '--metadata', 'a=b')
    attachments, metadata, messages, _ = python_view(mcap_files(out)[0])
    assert attachments == expected_attachments
    assert [m for m in metadata if m[0] != 'rosbag2'] == expected_metadata + [('rosbag2_rs', {'a': 'b'})]
    assert len(messages) == 10
    # Another storage cannot hold them: said, not silently dropped.
    proc = cli.run('convert', '-i', src, '-o', tmp_path / 'db', '-s', 'sqlite3')
    assert 'left out: only MCAP storage holds them' in proc.stderr


def test_attach_refuses_bad_bags_and_leaves_them_intact(cli, typestore, tmp_path):
    db3 = tmp_path / 'db3'
    with Writer(db3, version=9, storage_plugin=StoragePlugin.SQLITE3) as writer:
        conn = writer.add_connection('/chatter', 'std_msgs/msg/String', typestore=typestore)
        writer.write(conn, T0, typestore.serialize_cdr(typestore.types['std_msgs/msg/String'](data='x'),
                                                       'std_msgs/msg/String'))
    (tmp_path / 'note.txt').write_text('note')
    before = {p: sha(p) for p in db3.iterdir()}
    for args in (['attach', db3, tmp_path / 'note.txt'], ['attachments', db3]):
        proc = cli.run(*args, check=False)
        assert proc.returncode == 1 and 'need MCAP storage' in proc.stderr, proc.stderr
    assert {p: sha(p) for p in db3.iterdir()} == before
    proc = cli.run('convert', '-i', db3, '-o', tmp_path / 'x', '-s', 'sqlite3', '--metadata', 'a=b', check=False)
    assert proc.returncode == 1 and 'needs -s mcap' in proc.stderr
    # A missing file to attach, and a corrupted MCAP bag: errors, the bag unchanged.
    bag = tmp_path / 'bag'
    chatter_bag(bag, typestore)
    [file] = mcap_files(bag)
    proc = cli.run('attach', bag, tmp_path / 'missing.yaml', check=False)
    assert proc.returncode == 1 and 'missing.yaml' in proc.stderr
    # (rosbags writes no CRCs: a flipped payload byte is invisible to every reader, and is
    # carried as it is. What a reader can see is refused.)
    data = file.read_bytes()
    damaged = {
        'cut by a crash': data[:-100],
        'summary offset past the end': data[:-8 - 12] + (len(data) * 2).to_bytes(8, 'little') + data[-12:],
    }
    for what, content in damaged.items():
        file.write_bytes(content)
        proc = cli.run('attach', bag, tmp_path / 'note.txt', check=False)
        assert proc.returncode == 1 and 'error' in proc.stderr, (what, proc.stderr)
        assert file.read_bytes() == content, what
        assert sorted(p.name for p in bag.iterdir()) == ['bag.mcap', 'metadata.yaml']


# --- --typestore -----------------------------------------------------------------------------

HUMBLE = get_typestore(Stores.ROS2_HUMBLE)


def humble_db3(bag):
    """A bag as ROS 2 Humble's rosbag2 writes it: metadata.yaml version 5, a .db3 of schema
    version 3 with no message definitions. Range (Humble: no `variance`) and Marker messages."""
    bag.mkdir()
    T = HUMBLE.types
    messages = []
    for i in range(4):
        stamp = T['builtin_interfaces/msg/Time'](sec=100 + i, nanosec=7)
        header = T['std_msgs/msg/Header'](stamp=stamp, frame_id='sonar')
        rng = T['sensor_msgs/msg/Range'](header=header, radiation_type=1, field_of_view=0.25,
                                         min_range=0.1, max_range=4.0, range=1.5 + i)
        messages.append(('/range', 'sensor_msgs/msg/Range', T0 + 2 * i, rng))
        marker = T['visualization_msgs/msg/Marker'](
            header=header, ns='demo', id=i, type=2, action=0,
            pose=T['geometry_msgs/msg/Pose'](position=T['geometry_msgs/msg/Point'](x=float(i), y=0.0, z=0.0),
                                             orientation=T['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)),
            scale=T['geometry_msgs/msg/Vector3'](x=1.0, y=1.0, z=1.0),
            color=T['std_msgs/msg/ColorRGBA'](r=1.0, g=0.0, b=0.0, a=1.0),
            lifetime=T['builtin_interfaces/msg/Duration'](sec=0, nanosec=0), frame_locked=False,
            points=[], colors=[], texture_resource='', texture=T['sensor_msgs/msg/CompressedImage'](
                header=header, format='', data=np.zeros(0, np.uint8)),
            uv_coordinates=[], text=f'm{i}', mesh_resource='',
            mesh_file=T['visualization_msgs/msg/MeshFile'](filename='', data=np.zeros(0, np.uint8)),
            mesh_use_embedded_materials=False)
        messages.append(('/marker', 'visualization_msgs/msg/Marker', T0 + 2 * i + 1, marker))
    db = sqlite3.connect(bag / 'humble_0.db3')
    db.executescript("""
        CREATE TABLE schema(schema_version INTEGER PRIMARY KEY, ros_distro TEXT NOT NULL);
        INSERT INTO schema VALUES (3, 'humble');
        CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL,
                            serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);
        CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL,
                              timestamp INTEGER NOT NULL, data BLOB NOT NULL);
        CREATE INDEX timestamp_idx ON messages (timestamp ASC);
    """)
    topics = {}
    for topic, msgtype, t, msg in messages:
        if topic not in topics:
            topics[topic] = len(topics) + 1
            db.execute('INSERT INTO topics VALUES (?, ?, ?, ?, ?)', (topics[topic], topic, msgtype, 'cdr', ''))
        db.execute('INSERT INTO messages(topic_id, timestamp, data) VALUES (?, ?, ?)',
                   (topics[topic], t, HUMBLE.serialize_cdr(msg, msgtype)))
    db.commit()
    db.close()
    end = messages[-1][2]
    topic_yaml = ''.join(f"""    - topic_metadata:
        name: {topic}
        type: {msgtype}
        serialization_format: cdr
        offered_qos_profiles: ""
      message_count: 4
""" for topic, msgtype in [('/range', 'sensor_msgs/msg/Range'), ('/marker', 'visualization_msgs/msg/Marker')])
    (bag / 'metadata.yaml').write_text(f"""rosbag2_bagfile_information:
  version: 5
  storage_identifier: sqlite3
  duration:
    nanoseconds: {end - T0}
  starting_time:
    nanoseconds_since_epoch: {T0}
  message_count: 8
  topics_with_message_count:
{topic_yaml}  compression_format: ""
  compression_mode: ""
  relative_file_paths:
    - humble_0.db3
  files:
    - path: humble_0.db3
      starting_time:
        nanoseconds_since_epoch: {T0}
      duration:
        nanoseconds: {end - T0}
      message_count: 8
""")
    return messages


def decode_with_own_schemas(path):
    """Every message of an MCAP file decoded by mcap_ros2 from the file's schemas alone."""
    with open(path, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        schemas = {s.name: s.data.decode() for s in reader.get_summary().schemas.values()}
        decoded = [(c.topic, m.log_time, d) for _, c, m, d in reader.iter_decoded_messages()]
    return schemas, decoded


def test_humble_db3_converts_with_typestore_humble_and_decodes_from_its_own_schemas(cli, tmp_path):
    bag = tmp_path / 'humble'
    messages = humble_db3(bag)
    out = tmp_path / 'out'
    proc = cli.run('convert', '-i', bag, '-o', out, '--typestore', 'humble')
    assert '--typestore' not in proc.stderr, proc.stderr
    schemas, decoded = decode_with_own_schemas(mcap_files(out)[0])
    assert 'variance' not in schemas['sensor_msgs/msg/Range']
    assert 'MSG: visualization_msgs/MeshFile' in schemas['visualization_msgs/msg/Marker']
    assert len(decoded) == len(messages)
    for (topic, t, d), (etopic, _, et, msg) in zip(decoded, messages):
        assert (topic, t) == (etopic, et)
        assert d.header.frame_id == 'sonar' and d.header.stamp.sec == msg.header.stamp.sec
        if topic == '/range':
            assert (d.radiation_type, d.field_of_view, d.range) == (1, 0.25, msg.range)
        else:
            assert (d.ns, d.id, d.text, d.pose.position.x) == ('demo', msg.id, msg.text, msg.pose.position.x)
    # cat decodes the same bag with the flag.
    lines = [json.loads(x) for x in cli.run('cat', bag, '--typestore', 'humble', '--format', 'json',
                                            '--topics', '/range').stdout.splitlines()]
    assert [x['msg']['range'] for x in lines] == [1.5, 2.5, 3.5, 4.5]
    # info --schemas shows where the definitions came from.
    schemas_text = cli.run('info', bag, '--schemas', '--typestore', 'humble').stdout
    assert '=== sensor_msgs/msg/Range (ros2msg, not stored: from typestore humble) ===' in schemas_text


def test_a_type_that_changed_between_distributions_gets_each_ones_definition(cli, tmp_path):
    bag = tmp_path / 'humble'
    humble_db3(bag)
    ranges = {}
    for distro in ('humble', 'iron', 'jazzy', 'kilted'):
        out = tmp_path / f'as_{distro}'
        cli.run('convert', '-i', bag, '-o', out, '--typestore', distro, '--topics', '/range')
        with open(mcap_files(out)[0], 'rb') as f:
            schemas = {s.name: s.data.decode() for s in make_reader(f).get_summary().schemas.values()}
        ranges[distro] = schemas['sensor_msgs/msg/Range']
    own = {d: r.split('=' * 80)[0] for d, r in ranges.items()}
    assert 'variance' not in own['humble']
    for distro in ('iron', 'jazzy', 'kilted'):
        assert own[distro].rstrip().endswith('float32 variance'), own[distro]
    # Each matches rosbags' own typestore for that distribution, and so does the type hash
    # recorded for the topic.
    for distro, text in own.items():
        store = get_typestore(getattr(Stores, f'ROS2_{distro.upper()}'))
        assert text == store.generate_msgdef('sensor_msgs/msg/Range', ros_version=2)[0].split('=' * 80)[0]
        meta = (tmp_path / f'as_{distro}' / 'metadata.yaml').read_text()
        assert f'type_description_hash: {store.hash_rihs01("sensor_msgs/msg/Range")}' in meta, (distro, meta)
    # The Humble payload does not decode as Iron's Range: cat says so instead of inventing values.
    proc = cli.run('cat', bag, '--typestore', 'iron', '--format', 'json', '--topics', '/range', check=False)
    assert '"range":1.5' not in proc.stdout.replace(' ', '')


def test_without_typestore_the_message_suggests_it(cli, tmp_path):
    bag = tmp_path / 'humble'
    humble_db3(bag)
    proc = cli.run('cat', bag, '--format', 'json', '--topics', '/marker', check=False)
    assert '--typestore' in proc.stderr and 'visualization_msgs/msg/Marker' in proc.stderr, proc.stderr
    proc = cli.run('convert', '-i', bag, '-o', tmp_path / 'out', check=False)
    assert '--typestore (humble, iron, jazzy, kilted)' in proc.stderr, proc.stderr
    proc = cli.run('convert', '-i', bag, '-o', tmp_path / 'out2', '--typestore', 'rolling', check=False)
    assert proc.returncode != 0 and 'humble, iron, jazzy, kilted' in proc.stderr


@only_in_private_network
def test_record_metadata_records_are_read_by_python_mcap(tmp_path):
    """`record --metadata` against a Python cyclonedds publisher: every file of the split
    recording holds the record."""
    refuse_real_interfaces()
    bag = tmp_path / 'bag'
    env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': '43'}
    with open(tmp_path / 'record.log', 'w') as log:
        proc = subprocess.Popen([str(binary('ros2bag-rs')), 'record', '--disable-keyboard-controls',
                                 '--topics', '/chatter', '-o', str(bag), '--metadata', 'robot=r2',
                                 '--metadata', 'site=lab', '--max-bag-size', '2000'],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, env=env)
    try:
        dp = DomainParticipant(43)
        writer = DataWriter(dp, Topic(dp, 'rt/chatter', String), qos=RELIABLE)
        assert wait_matched(writer, 20), 'the recorder never subscribed'
        time.sleep(0.5)
        for i in range(200):
            writer.write(String(data=f'message {i:04d} ' + 'x' * 40))
            time.sleep(0.002)
        time.sleep(1.0)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    err = (tmp_path / 'record.log').read_text()
    assert proc.returncode == 0 and 'panicked' not in err, err
    files = mcap_files(bag)
    assert len(files) > 1, err
    total = 0
    for file in files:
        _, metadata, messages, _ = python_view(file)
        assert [m for m in metadata if m[0] != 'rosbag2'] == [('rosbag2_rs', {'robot': 'r2', 'site': 'lab'})]
        total += len(messages)
    assert total == 200
