"""Type hashes on the DDS wire, against the Python `cyclonedds` peer: rmw_cyclonedds announces an
endpoint's RIHS01 type hash as `typehash=RIHS01_<hex>;` in its USER_DATA (rmw_dds_common's
encode_type_hash_for_user_data_qos). Our recorder stores the hash a Cyclone writer announces as
the topic's type_description_hash (rosbag2's rule: none when none is announced); our player's
writers announce the hash their bag records, or the one computed from the definition when the
bag records none.

Runs only inside a private network namespace (see ros_dds.py)."""
import os
import signal
import sqlite3
import subprocess
import time

import pytest
from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsPublication, BuiltinTopicDcpsSubscription
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic
from cyclonedds.util import duration
from rosbags.rosbag2 import Reader, StoragePlugin, Writer

from conftest import CYCLONE, binary
from ros_dds import String, only_in_private_network, refuse_real_interfaces, wait_matched
from test_type_hash_interop import rosbags_hash

pytestmark = only_in_private_network

# A well-formed hash no definition produces: it can only have come from the wire or the bag.
WIRE_HASH = 'RIHS01_' + '5a' * 32
BAG_HASH = 'RIHS01_' + 'c3' * 32


@pytest.fixture(autouse=True)
def _refuse_real_interfaces():
    refuse_real_interfaces()


def qos(user_data=None):
    policies = [Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10)]
    if user_data is not None:
        policies.append(Policy.Userdata(data=user_data))
    return Qos(*policies)


def user_data_hash(sample):
    """The `typehash=` value of a built-in endpoint sample's USER_DATA."""
    policy = sample.qos[Policy.Userdata]
    pairs = dict(kv.split('=', 1) for kv in (policy.data.decode() if policy else '').split(';') if '=' in kv)
    return pairs.get('typehash')


def endpoints(dp, topic_name, builtin, count=1, timeout=20):
    """The built-in endpoint samples of `topic_name`, once `count` are known."""
    reader = BuiltinDataReader(dp, builtin)
    found, deadline = {}, time.monotonic() + timeout
    while len(found) < count and time.monotonic() < deadline:
        for sample in reader.take(N=100):
            if getattr(sample, 'topic_name', None) == topic_name:
                found[sample.key] = sample
        time.sleep(0.05)
    return list(found.values())


def test_the_recorder_stores_the_hash_a_cyclone_writer_announces(tmp_path):
    dp = DomainParticipant(41)
    jazzy = DataWriter(dp, Topic(dp, 'rt/jazzy', String), qos=qos(f'typehash={WIRE_HASH};'.encode()))
    humble = DataWriter(dp, Topic(dp, 'rt/humble', String), qos=qos())
    bag = tmp_path / 'bag'
    env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': '41', 'RUST_BACKTRACE': '1'}
    with open(tmp_path / 'recorder.log', 'w') as log:
        rec = subprocess.Popen([str(binary('recorder')), '--disable-keyboard-controls', '--topics', '/jazzy',
                                '/humble', '-o', str(bag)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=log, env=env)
    try:
        assert wait_matched(jazzy) and wait_matched(humble), 'the recorder never subscribed'
        # The recorder's subscription announces the hash its publisher does.
        subscriptions = endpoints(dp, 'rt/jazzy', BuiltinTopicDcpsSubscription)
        assert [user_data_hash(s) for s in subscriptions] == [WIRE_HASH]
        for i in range(3):
            jazzy.write(String(data=f'jazzy {i}'))
            humble.write(String(data=f'humble {i}'))
        time.sleep(0.5)
    finally:
        rec.send_signal(signal.SIGINT)
        rec.wait(timeout=60)
    err = (tmp_path / 'recorder.log').read_text()
    assert rec.returncode == 0 and 'panicked' not in err, err
    with Reader(bag) as reader:
        digests = {c.topic: c.digest for c in reader.connections}
        counts = {c.topic: c.msgcount for c in reader.connections}
    assert digests == {'/jazzy': WIRE_HASH, '/humble': ''}
    assert counts == {'/jazzy': 3, '/humble': 3}


def test_the_player_announces_the_bags_hash_or_the_computed_one(tmp_path, typestore):
    bag = tmp_path / 'bag'
    String_, Int32 = typestore.types['std_msgs/msg/String'], typestore.types['std_msgs/msg/Int32']
    int32_hash = typestore.hash_rihs01('std_msgs/msg/Int32')
    with Writer(bag, version=9, storage_plugin=StoragePlugin.SQLITE3) as writer:
        # A Jazzy bag records the hash the graph announced ...
        recorded = writer.add_connection('/recorded', 'std_msgs/msg/String', msgdef='string data\n', rihs01=BAG_HASH)
        humble = writer.add_connection('/humble', 'std_msgs/msg/Int32', typestore=typestore)
        writer.write(recorded, 1_700_000_000_000_000_000, typestore.serialize_cdr(String_(data='x'), String_.__msgtype__))
        writer.write(humble, 1_700_000_000_000_000_001, typestore.serialize_cdr(Int32(data=7), Int32.__msgtype__))
    # ... a Humble bag none (rosbags writes only versions that have one: blank it).
    metadata = bag / 'metadata.yaml'
    assert int32_hash in metadata.read_text()
    metadata.write_text(metadata.read_text().replace(int32_hash, "''"))
    with sqlite3.connect(next(bag.glob('*.db3'))) as db:
        db.execute("UPDATE topics SET type_description_hash = '' WHERE name = '/humble'")
        db.execute("UPDATE message_definitions SET type_description_hash = '' WHERE topic_type = 'std_msgs/msg/Int32'")
    dp = DomainParticipant(42)
    env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': '42', 'RUST_BACKTRACE': '1'}
    player = subprocess.Popen([str(binary('player')), str(bag), '--disable-keyboard-controls', '--start-paused'],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        found = {topic: endpoints(dp, f'rt{topic}', BuiltinTopicDcpsPublication) for topic in ('/recorded', '/humble')}
    finally:
        player.send_signal(signal.SIGINT)
        _, err = player.communicate(timeout=30)
    assert 'panicked' not in err, err
    assert [user_data_hash(s) for s in found['/recorded']] == [BAG_HASH]
    # Computed by us from the bag's definition, by rosbags from its own.
    assert [user_data_hash(s) for s in found['/humble']] == [int32_hash]
    assert [s.type_name for s in found['/recorded'] + found['/humble']] == [
        'std_msgs::msg::dds_::String_', 'std_msgs::msg::dds_::Int32_']
    # The bag's recorded hash disagrees with its definition: the player said so, naming the topic.
    assert "topic '/recorded'" in err and BAG_HASH in err, err


def test_our_services_announce_request_and_response_hashes(tmp_path, typestore):
    """rmw_cyclonedds servers put `serviceid=<id>;typehash=<X_Request or X_Response hash>;` on
    their request reader and reply writer."""
    bag = tmp_path / 'bag'
    with Writer(bag, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection('/a', 'std_msgs/msg/String', typestore=typestore)
        String_ = typestore.types['std_msgs/msg/String']
        writer.write(conn, 1, typestore.serialize_cdr(String_(data='x'), 'std_msgs/msg/String'))
    dp = DomainParticipant(43)
    env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': '43', 'RUST_BACKTRACE': '1'}
    player = subprocess.Popen([str(binary('player')), str(bag), '--disable-keyboard-controls', '--start-paused'],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        reply = endpoints(dp, 'rr/rosbag2_player/set_rateReply', BuiltinTopicDcpsPublication)
        request = endpoints(dp, 'rq/rosbag2_player/set_rateRequest', BuiltinTopicDcpsSubscription)
    finally:
        player.send_signal(signal.SIGINT)
        _, err = player.communicate(timeout=30)
    assert 'panicked' not in err, err
    # rosbag2_interfaces/srv/SetRate: `float64 rate` --- `bool success`, hashed by rosbags.
    expected = {
        'Request': rosbags_hash('rosbag2_interfaces/srv/SetRate_Request', 'float64 rate\n'),
        'Response': rosbags_hash('rosbag2_interfaces/srv/SetRate_Response', 'bool success\n'),
    }
    assert [user_data_hash(s) for s in request] == [expected['Request']]
    assert [user_data_hash(s) for s in reply] == [expected['Response']]
    for sample in request + reply:
        data = sample.qos[Policy.Userdata].data.decode()
        assert data.startswith('serviceid=') and data.endswith(';'), data
