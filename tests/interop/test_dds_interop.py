"""rosbag2-rs's DDS backend against a real DDS peer: the Python `cyclonedds` binding (the DDS under
rmw_cyclonedds_cpp), using ROS 2 topic, type and service naming on the wire.

Runs only inside a private network namespace (`tools/test.sh` starts it under `unshare --net`), so
no DDS traffic reaches the machine's real interfaces.
"""
import os
import shutil
import subprocess
import time
from dataclasses import dataclass

import pytest
from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsSubscription
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import array, sequence, uint8
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from conftest import CYCLONE, TARGET
from ros_dds import (LATCHED, RELIABLE, SERVICES, Clock, Header, Image, String, Time, only_in_private_network,
                     refuse_real_interfaces, take, wait_matched)

PROBE = TARGET / 'debug' / 'examples' / 'dds_probe'
pytestmark = only_in_private_network


@pytest.fixture(autouse=True)
def _refuse_real_interfaces():
    refuse_real_interfaces()


# rmw_cyclonedds puts a header (client id, sequence number) in front of request and response.
SetRateRequest, SetRateResponse = SERVICES['set_rate']


def probe(*args, env=None, **kwargs):
    if not PROBE.exists():
        pytest.fail(f'{PROBE} missing: `cargo build -p rosbag2_rs_transport_lib --examples`')
    full_env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': '0', **(env or {})}
    return subprocess.Popen([str(PROBE), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=full_env, **kwargs)


def same_cdr(received: bytes, sent: bytes):
    """RTPS pads payloads to 4 bytes; the padding count travels in the representation options."""
    assert received[:2] == sent[:2] and received[4:len(sent)] == sent[4:], 'payload changed'
    assert len(received) - len(sent) < 4 and not any(received[len(sent):]), 'unexpected trailing bytes'


def image(i):
    return Image(header=Header(stamp=Time(sec=i, nanosec=7), frame_id='camera'), height=1024, width=1024,
                 encoding='mono8', is_bigendian=0, step=1024, data=bytes((i + j) % 256 for j in range(1 << 20)))


@pytest.mark.parametrize('topic,type_name,idl,samples', [
    ('/chatter', 'std_msgs/msg/String', String, [String(data=f'hello {i}') for i in range(3)]),
    ('/camera/image', 'sensor_msgs/msg/Image', Image, [image(i) for i in range(2)]),
    ('/clock', 'rosgraph_msgs/msg/Clock', Clock, [Clock(clock=Time(sec=100 + i, nanosec=5)) for i in range(3)]),
])
def test_our_raw_publisher_reaches_a_typed_cyclone_reader(topic, type_name, idl, samples):
    dp = DomainParticipant(0)
    reader = DataReader(dp, Topic(dp, 'rt' + topic, idl), qos=RELIABLE)
    sent = [s.serialize() for s in samples]
    proc = probe('publish', topic, type_name)
    proc.stdin.write(''.join(b.hex() + '\n' for b in sent))
    proc.stdin.close()
    got = take(reader, len(samples))
    proc.wait(timeout=30)
    assert len(got) == len(samples)
    assert [g.serialize() for g in got] == sent, 'the typed reader must see exactly the bytes we sent' 


def test_a_cyclone_publisher_reaches_our_raw_subscriber():
    proc = probe('echo', '/chatter', 'std_msgs/msg/String', '3')
    assert proc.stdout.readline().strip() == 'ready'
    dp = DomainParticipant(0)
    writer = DataWriter(dp, Topic(dp, 'rt/chatter', String), qos=RELIABLE)
    wait_matched(writer)
    samples = [String(data=f'from cyclone {i}') for i in range(3)]
    for s in samples:
        writer.write(s)
    out, err = proc.communicate(timeout=30)
    received = [bytes.fromhex(line) for line in out.split()]
    assert len(received) == 3, err
    for r, s in zip(received, samples):
        same_cdr(r, s.serialize())
        assert String.deserialize(r) == s


def test_our_service_answers_a_client_using_the_rmw_cyclonedds_mapping():
    proc = probe('serve', 'rosbag2_player')
    assert proc.stdout.readline().strip() == 'ready'
    dp = DomainParticipant(0)
    requests = DataWriter(dp, Topic(dp, 'rq/rosbag2_player/set_rateRequest', SetRateRequest), qos=RELIABLE)
    replies = DataReader(dp, Topic(dp, 'rr/rosbag2_player/set_rateReply', SetRateResponse), qos=RELIABLE)
    wait_matched(requests)
    time.sleep(0.5)
    client_id = 0x1122334455667788
    requests.write(SetRateRequest(client_id=client_id, sequence_number=1, rate=2.5))
    requests.write(SetRateRequest(client_id=client_id, sequence_number=2, rate=-1.0))
    got = take(replies, 2)
    by_seq = {r.sequence_number: r for r in got}
    assert by_seq[1] == SetRateResponse(client_id=client_id, sequence_number=1, success=True)
    assert by_seq[2] == SetRateResponse(client_id=client_id, sequence_number=2, success=False)
    proc.stdin.close()
    out = proc.stdout.read()
    proc.wait(timeout=10)
    assert 'set_rate 2.5' in out


def test_our_topic_listing_sees_a_cyclone_publisher_with_type_and_qos():
    dp = DomainParticipant(0)
    _writer = DataWriter(dp, Topic(dp, 'rt/cyclone_topic', String), qos=LATCHED)
    proc = probe('topics', '/cyclone_topic')
    out, err = proc.communicate(timeout=30)
    # name, type, reliability, durability, node, type hash
    assert any(line.startswith('/cyclone_topic std_msgs/msg/String reliable transient_local ')
               for line in out.splitlines()), out + err


def test_transient_local_data_reaches_a_late_joiner():
    dp = DomainParticipant(0)
    writer = DataWriter(dp, Topic(dp, 'rt/latched', String), qos=LATCHED)
    writer.write(String(data='old'))
    writer.write(String(data='latest'))
    proc = probe('echo', '/latched', 'std_msgs/msg/String', '1', 'latched')
    out, err = proc.communicate(timeout=30)
    lines = out.split()
    assert lines[0] == 'ready' and String.deserialize(bytes.fromhex(lines[1])) == String(data='latest'), err


def count_udp_on_second_interface(range_setting: str) -> int:
    """Runs our publisher for 3 s with a discovery range and counts UDP packets on a veth pair."""
    subprocess.run(['ip', 'link', 'add', 'probe0', 'type', 'veth', 'peer', 'name', 'probe1'], check=True)
    try:
        subprocess.run(['ip', 'addr', 'add', '169.254.77.1/24', 'dev', 'probe0'], check=True)
        subprocess.run(['ip', 'link', 'set', 'probe0', 'up', 'multicast', 'on'], check=True)
        subprocess.run(['ip', 'link', 'set', 'probe1', 'up'], check=True)
        time.sleep(1)
        capture = subprocess.Popen(['tcpdump', '-i', 'probe1', '-n', '-l', 'udp'], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL, text=True)
        time.sleep(1)
        proc = probe('publish', '/leak_check', 'std_msgs/msg/String', env={'ROS_AUTOMATIC_DISCOVERY_RANGE': range_setting})
        proc.stdin.write(String(data='x').serialize().hex() + '\n')
        proc.stdin.close()
        time.sleep(3)
        proc.kill()
        time.sleep(0.5)
        capture.terminate()
        return len([line for line in capture.communicate(timeout=10)[0].splitlines() if line.strip()])
    finally:
        subprocess.run(['ip', 'link', 'del', 'probe0'], check=False)


@pytest.mark.skipif(shutil.which('tcpdump') is None, reason='tcpdump missing')
def test_localhost_range_keeps_every_packet_on_loopback():
    assert count_udp_on_second_interface('SUBNET') > 0, 'control: with SUBNET discovery goes out on every interface'
    assert count_udp_on_second_interface('LOCALHOST') == 0


@dataclass
class Gid(IdlStruct, typename='rmw_dds_common::msg::dds_::Gid_'):
    data: array[uint8, 16]


@dataclass
class NodeEntitiesInfo(IdlStruct, typename='rmw_dds_common::msg::dds_::NodeEntitiesInfo_'):
    node_namespace: str
    node_name: str
    reader_gid_seq: sequence[Gid]
    writer_gid_seq: sequence[Gid]


@dataclass
class ParticipantEntitiesInfo(IdlStruct, typename='rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_'):
    gid: Gid
    node_entities_info_seq: sequence[NodeEntitiesInfo]


def test_a_cyclone_peer_finds_our_node_and_its_endpoints_on_ros_discovery_info():
    proc = probe('serve', 'rosbag2_player')
    try:
        dp = DomainParticipant(0)
        reader = DataReader(dp, Topic(dp, 'ros_discovery_info', ParticipantEntitiesInfo), qos=LATCHED)
        subscriptions = BuiltinDataReader(dp, BuiltinTopicDcpsSubscription)
        deadline, node, request_readers = time.monotonic() + 20, None, []
        while time.monotonic() < deadline and not (node and len(node.reader_gid_seq) >= 2 and request_readers):
            for info in reader.take(N=16):
                for n in info.node_entities_info_seq:
                    if n.node_name == 'dds_probe':
                        node = n
            request_readers += [s.key.bytes for s in subscriptions.take(N=64)
                                if s.topic_name.startswith('rq/rosbag2_player/')]
            time.sleep(0.05)
        assert node is not None, 'our node never appeared on ros_discovery_info'
        assert node.node_namespace == '/'
        gids = {bytes(g.data) for g in node.reader_gid_seq}
        assert request_readers and set(request_readers) <= gids, (request_readers, gids)
    finally:
        proc.kill()
