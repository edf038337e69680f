"""rosbag2-rs on Zenoh (RMW_IMPLEMENTATION=rmw_zenoh_cpp) against Python `eclipse-zenoh` peers
written to rmw_zenoh's wire format (rmw_zenoh_peer.py), through a real Zenoh router (Zenoh's own,
the Python session in router mode, configured as rmw_zenohd configures it).

Runs only inside a private network namespace (tools/test.sh runs tests/interop under
`unshare --net`)."""
import functools
import json
import os
import pathlib
import signal
import socket
import struct
import subprocess
import sys
import time

import numpy as np
import pytest
from ruamel.yaml import YAML
import zenoh
from rosbags.rosbag2 import Reader, StoragePlugin, Writer

import rmw_zenoh_peer as rz
from conftest import binary, memory_kib


def private_network() -> bool:
    return sorted(name for _, name in socket.if_nameindex()) == ['lo']


pytestmark = pytest.mark.skipif(
    not private_network() and os.environ.get('CI') != 'true',
    reason='Zenoh interop tests run only inside a private network namespace (tools/test.sh)')

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
ENV = {**os.environ, 'RMW_IMPLEMENTATION': 'rmw_zenoh_cpp', 'RUST_BACKTRACE': '1',
       'ZENOH_CONFIG_OVERRIDE': 'connect/endpoints=["tcp/127.0.0.1:7447"];listen/endpoints=["tcp/127.0.0.1:0"]'}


@pytest.fixture
def router():
    assert private_network(), 'refusing to send Zenoh traffic: not in a private network namespace'
    session = zenoh.open(rz.router_config())
    yield session
    session.close()


@pytest.fixture
def node(router):
    n = rz.Node('py_peer')
    yield n
    n.close()


def ros2bag(*args):
    return subprocess.Popen([str(binary('ros2bag-rs')), *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)


def finish(proc, timeout=120):
    out, err = proc.communicate(timeout=timeout)
    assert 'panicked' not in err, err
    assert proc.returncode == 0, err
    proc.out = out
    return err


def interrupt(proc, timeout=60):
    proc.send_signal(signal.SIGINT)
    return finish(proc, timeout)


def wait_until(predicate, timeout=30.0, what='condition'):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f'timed out waiting for {what}')


def tokens_of(node, kind, topic=None):
    out = []
    for t in node.graph():
        e = rz.parse_token(t)
        if e['kind'] == kind and (topic is None or e.get('topic') == topic):
            out.append((t, e))
    return out


def image(typestore, size, i):
    Image = typestore.types['sensor_msgs/msg/Image']
    Header = typestore.types['std_msgs/msg/Header']
    Stamp = typestore.types['builtin_interfaces/msg/Time']
    width = size // 3 // 100
    data = np.frombuffer(np.random.default_rng(i).bytes(width * 100 * 3), dtype=np.uint8)
    return Image(header=Header(stamp=Stamp(sec=i, nanosec=0), frame_id='cam'), height=100,
                 width=width, encoding='rgb8', is_bigendian=0, step=width * 3, data=data)


def write_bag(path, typestore, messages, qos=None):
    """messages: (topic, type, offset_ms, msg); returns {topic: [cdr]}."""
    sent = {}
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conns = {}
        for topic, msgtype, offset, msg in messages:
            if topic not in conns:
                kwargs = {}
                if qos and topic in qos:
                    kwargs['offered_qos_profiles'] = qos[topic]
                conns[topic] = writer.add_connection(topic, msgtype, typestore=typestore, **kwargs)
            data = typestore.serialize_cdr(msg, msgtype)
            writer.write(conns[topic], T0 + offset * MS, data)
            sent.setdefault(topic, []).append(bytes(data))
    return sent


def read_bag(path):
    out = {}
    with Reader(path) as reader:
        for conn, _, data in reader.messages():
            out.setdefault(conn.topic, []).append(bytes(data))
    return out


def check_attachments(samples, publisher_gid=None):
    seqs = [a[0] for _, a in samples]
    assert seqs == list(range(1, len(samples) + 1)), seqs
    gids = {a[2] for _, a in samples}
    assert len(gids) == 1, gids
    if publisher_gid is not None:
        assert gids == {publisher_gid}


def test_golden_peer_format():
    # docs/design.md of rmw_zenoh pins the peer's tokens and keys.
    assert rz.token(2, '8b20917502ee955ac4476e0266340d5c', 0, 10, 'MP', '/', 'talker', '/chatter',
                    'std_msgs::msg::dds_::String_', rz.STRING_HASH, rz.qos_string(depth=7)) == (
        '@ros2_lv/2/8b20917502ee955ac4476e0266340d5c/0/10/MP/%/%/talker/%chatter/'
        'std_msgs::msg::dds_::String_/' + rz.STRING_HASH + '/::,7:,:,:,,')
    assert rz.topic_key(0, '/robot1/chatter', 'std_msgs::msg::dds_::String_', rz.STRING_HASH) == (
        '0/robot1/chatter/std_msgs::msg::dds_::String_/' + rz.STRING_HASH)
    assert rz.gid('') == bytes.fromhex('7f498d4624c30160d8984701d306aa99')
    a = rz.encode_attachment(1, 2, bytes(range(16)))
    assert a == struct.pack('<qq', 1, 2) + b'\x10' + bytes(range(16))
    # zenoh-ext's own serializer writes the same bytes for (i64, i64, [u8; 16]).
    ser = zenoh.ext.z_serialize((zenoh.ext.Int64(1), zenoh.ext.Int64(2), bytes(range(16))))
    assert bytes(ser.to_bytes()) == a


def test_player_to_python_subscriber(tmp_path, typestore, node):
    String = typestore.types['std_msgs/msg/String']
    messages = [('/chatter', 'std_msgs/msg/String', i * 10, String(data=f'hello {i}')) for i in range(20)]
    messages += [('/camera/image_1mb', 'sensor_msgs/msg/Image', 300 + i * 33, image(typestore, 1_000_000, i))
                 for i in range(15)]
    messages += [('/camera/image_6mb', 'sensor_msgs/msg/Image', 900 + i * 33, image(typestore, 6_000_000, i))
                 for i in range(10)]
    sent = write_bag(tmp_path / 'bag', typestore, messages)
    subs = {
        '/chatter': node.subscription('/chatter', 'std_msgs/msg/String', rz.STRING_HASH),
        '/camera/image_1mb': node.subscription('/camera/image_1mb', 'sensor_msgs/msg/Image', rz.IMAGE_HASH),
        '/camera/image_6mb': node.subscription('/camera/image_6mb', 'sensor_msgs/msg/Image', rz.IMAGE_HASH),
    }
    node.wait_announced()
    player = ros2bag('play', tmp_path / 'bag', '--disable-keyboard-controls', '--delay', '1')
    try:
        # The player's publisher tokens, whose XXH3-128 are the GIDs in the attachments.
        tokens = {topic: wait_until(lambda: [t for t, e in tokens_of(node, 'MP', topic)
                                             if e['node'] == 'rosbag2_player'
                                             and e['hash'] == sub.key.rsplit('/', 1)[1]], what=topic)[0]
                  for topic, sub in subs.items()}
        for topic, sub in subs.items():
            got = sub.wait_for(len(sent[topic]))
            assert [p for p, _ in got] == sent[topic], (topic, tokens[topic], len(got))
            check_attachments(got, rz.gid(tokens[topic]))
            assert rz.parse_token(tokens[topic])['hash'] == sub.key.rsplit('/', 1)[1]
        finish(player)
    finally:
        if player.poll() is None:
            player.kill()


def test_python_publisher_to_recorder_with_losses_counted(tmp_path, typestore, node):
    String = typestore.types['std_msgs/msg/String']
    chatter = node.publisher('/chatter', 'std_msgs/msg/String', rz.STRING_HASH, depth=7)
    cam1 = node.publisher('/camera/image_1mb', 'sensor_msgs/msg/Image', rz.IMAGE_HASH,
                          history=rz.KEEP_ALL, depth=1)
    cam6 = node.publisher('/camera/image_6mb', 'sensor_msgs/msg/Image', rz.IMAGE_HASH,
                          reliability=rz.BEST_EFFORT, depth=5)
    recorder = ros2bag('record', '-a', '-o', tmp_path / 'rec', '--polling-interval', '50')
    try:
        for topic in ['/chatter', '/camera/image_1mb', '/camera/image_6mb']:
            wait_until(lambda: [e for _, e in tokens_of(node, 'MS', topic) if e['node'] == 'rosbag2_recorder'],
                       what=f'the recorder subscribing to {topic}')
        sent = {'/chatter': [], '/camera/image_1mb': [], '/camera/image_6mb': []}
        for i in range(30):
            data = bytes(typestore.serialize_cdr(String(data=f'msg {i}'), 'std_msgs/msg/String'))
            # Sequence numbers 1..10, then 16..35: five messages "lost" on the way.
            chatter.publish(data, seq=(i + 1 if i < 10 else i + 6))
            sent['/chatter'].append(data)
        for i in range(30):
            for topic, pub, size in [('/camera/image_1mb', cam1, 1_000_000), ('/camera/image_6mb', cam6, 6_000_000)]:
                data = bytes(typestore.serialize_cdr(image(typestore, size, i), 'sensor_msgs/msg/Image'))
                pub.publish(data)
                sent[topic].append(data)
            time.sleep(1 / 30)
        time.sleep(1.0)
        err = interrupt(recorder)
    finally:
        if recorder.poll() is None:
            recorder.kill()
    got = read_bag(tmp_path / 'rec')
    # Reliable topics arrive whole. The best-effort 6 MB stream may lose a frame on the way on a
    # loaded host: what arrives is in order and not invented, and every frame missing is counted.
    best_effort = '/camera/image_6mb'
    for topic in sent:
        if topic != best_effort:
            assert got.get(topic) == sent[topic], (topic, len(got.get(topic, [])), len(sent[topic]))
    frames = iter(sent[best_effort])
    kept = got.get(best_effort, [])
    assert all(any(frame == s for s in frames) for frame in kept), 'best-effort frames out of order or invented'
    missing = len(sent[best_effort]) - len(kept)
    meta = YAML(typ="safe").load((tmp_path / 'rec' / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    topics = {t['topic_metadata']['name']: t['topic_metadata'] for t in meta['topics_with_message_count']}
    assert topics['/chatter']['type'] == 'std_msgs/msg/String'
    assert topics['/camera/image_6mb']['type'] == 'sensor_msgs/msg/Image'
    qos = {name: YAML(typ="safe").load(t['offered_qos_profiles'])[0] if isinstance(t['offered_qos_profiles'], str)
           else t['offered_qos_profiles'][0] for name, t in topics.items()}
    assert qos['/chatter']['depth'] == 7
    assert qos['/camera/image_1mb']['history'] in ('keep_all', 2)
    assert qos['/camera/image_6mb']['reliability'] in ('best_effort', 2)
    # Counts of losses (a topic that stopped publishing before the end also has its silence counted).
    losses = {k: v for k, v in meta['custom_data'].items() if not k.startswith('silences:')}
    counted = {f'lost_messages:{best_effort}': str(missing)} if missing else {}
    assert losses == {'lost_messages:/chatter': '5', **counted}, meta['custom_data']
    assert '/chatter: received 30, written 30, dropped 0, lost on the way 5' in err, err


def test_transient_local_late_joiner_gets_the_cache(tmp_path, typestore, node):
    String = typestore.types['std_msgs/msg/String']
    from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness, QosReliability,
                                    QosTime)
    zero = QosTime(0, 0)
    latched = [Qos(QosHistory.KEEP_LAST, 3, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL,
                   zero, zero, QosLiveliness.AUTOMATIC, zero, False)]
    messages = [('/map', 'std_msgs/msg/String', i, String(data=f'map {i}')) for i in range(5)]
    # Keeps the player alive while the late joiner subscribes.
    messages += [('/chatter', 'std_msgs/msg/String', 8000, String(data='end'))]
    sent = write_bag(tmp_path / 'bag', typestore, messages, qos={'/map': latched})
    # A subscriber present from the start tells when all five are out (and announces the type
    # hash the player's publisher takes).
    early = node.subscription('/map', 'std_msgs/msg/String', rz.STRING_HASH)
    node.wait_announced()
    player = ros2bag('play', tmp_path / 'bag', '--disable-keyboard-controls')
    try:
        assert [p for p, _ in early.wait_for(5)] == sent['/map']
        late = node.subscription('/map', 'std_msgs/msg/String', rz.STRING_HASH,
                                 durability=rz.TRANSIENT_LOCAL, depth=3)
        got = late.wait_for(3)
        assert [p for p, _ in got] == sent['/map'][2:]
        assert [a[0] for _, a in got] == [3, 4, 5]
        finish(player)
    finally:
        if player.poll() is None:
            player.kill()


PAUSE = ('/rosbag2_player/pause', 'rosbag2_interfaces/srv/Pause')
IS_PAUSED = ('/rosbag2_player/is_paused', 'rosbag2_interfaces/srv/IsPaused')
SET_RATE = ('/rosbag2_player/set_rate', 'rosbag2_interfaces/srv/SetRate')
GET_RATE = ('/rosbag2_player/get_rate', 'rosbag2_interfaces/srv/GetRate')
SEEK = ('/rosbag2_player/seek', 'rosbag2_interfaces/srv/Seek')
# A well-formed RIHS01 our server has never seen: its queryable answers any hash of the type.
SOME_HASH = 'RIHS01_' + '5a' * 32
EMPTY = b'\x00\x01\x00\x00\x00'


def test_python_client_controls_the_player_and_sees_its_graph(tmp_path, typestore, node):
    String = typestore.types['std_msgs/msg/String']
    write_bag(tmp_path / 'bag', typestore,
              [('/chatter', 'std_msgs/msg/String', i * 1000, String(data=f'{i}')) for i in range(30)])
    player = ros2bag('play', tmp_path / 'bag', '--disable-keyboard-controls', '--start-paused')
    client_gid = rz.gid('client of the test')
    try:
        wait_until(lambda: tokens_of(node, 'SS', SEEK[0]), what='the seek service')
        seq = iter(range(1, 100))

        def call(service, request):
            s = next(seq)
            payload, (rseq, _, rgid) = node.call(service[0], service[1], SOME_HASH, request, s, client_gid)
            assert (rseq, rgid) == (s, client_gid)  # echoed as rmw_zenoh's server echoes them
            return payload
        assert call(IS_PAUSED, EMPTY)[4] == 1
        call(PAUSE, EMPTY)
        assert call(SET_RATE, b'\x00\x01\x00\x00' + struct.pack('<d', 2.5))[4] == 1
        assert struct.unpack('<d', call(GET_RATE, EMPTY)[4:12])[0] == 2.5
        assert call(SET_RATE, b'\x00\x01\x00\x00' + struct.pack('<d', -1.0))[4] == 0
        seek_to = T0 // 1_000_000_000 + 5
        assert call(SEEK, b'\x00\x01\x00\x00' + struct.pack('<iI', seek_to, 0))[4] == 1
        assert call(IS_PAUSED, EMPTY)[4] == 1
        # The liveliness query lists our node and its endpoints in rmw_zenoh's format.
        graph = [rz.parse_token(t) for t in node.graph()]
        ours = [e for e in graph if e['node'] == 'rosbag2_player']
        kinds = {e['kind'] for e in ours}
        assert {'NN', 'MP', 'SS'} <= kinds, kinds
        assert {e['zid'] for e in ours} and len({e['zid'] for e in ours}) == 1
        chatter = [e for e in ours if e['kind'] == 'MP' and e['topic'] == '/chatter']
        assert chatter and chatter[0]['dds'] == 'std_msgs::msg::dds_::String_'
        services = {e['topic'] for e in ours if e['kind'] == 'SS'}
        assert {PAUSE[0], SEEK[0], SET_RATE[0], IS_PAUSED[0]} <= services
        seek = [e for e in ours if e['kind'] == 'SS' and e['topic'] == SEEK[0]][0]
        assert seek['dds'] == 'rosbag2_interfaces::srv::dds_::Seek_'
    finally:
        player.send_signal(signal.SIGINT)
        try:
            player.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            player.kill()


def test_control_client_against_a_python_server(node):
    # A Python service server in rmw_zenoh's mapping: complete queryable, SS token, reply
    # attachment echoing the client's sequence number and GID.
    requests = []
    key = rz.topic_key(0, IS_PAUSED[0], rz.dds_type(IS_PAUSED[1]), SOME_HASH)

    def on_query(query):
        seq, _, client_gid = rz.decode_attachment(query.attachment.to_bytes())
        requests.append((bytes(query.payload.to_bytes()), seq, client_gid))
        query.reply(query.key_expr, b'\x00\x01\x00\x00\x01',
                    attachment=rz.encode_attachment(seq, time.time_ns(), client_gid))
    queryable = node.session.declare_queryable(key, on_query, complete=True)
    node._token('SS', IS_PAUSED[0], IS_PAUSED[1], SOME_HASH, rz.qos_string(depth=10))
    node.wait_announced()
    seen = []
    watcher = node.session.liveliness().declare_subscriber(
        '@ros2_lv/0/**', lambda sample: seen.append(str(sample.key_expr)))
    proc = ros2bag('control', 'is-paused')
    try:
        finish(proc, timeout=60)
    finally:
        queryable.undeclare()
        watcher.undeclare()
    assert proc.out.strip() == 'true'
    assert len(requests) == 1
    payload, seq, client_gid = requests[0]
    assert payload == EMPTY and seq == 1
    # The GID is rmw_zenoh's: XXH3-128 of our client's SC token, which the graph showed.
    clients = sorted({t for t in seen if rz.parse_token(t)['kind'] == 'SC'})
    assert [rz.gid(t) for t in clients] == [client_gid], clients
    assert rz.parse_token(clients[0])['dds'] == 'rosbag2_interfaces::srv::dds_::IsPaused_'


def test_recorder_reads_jazzy_attachments(tmp_path, typestore, node):
    # rmw_zenoh on Jazzy up to 0.2.3 wrote each attachment value after its name, serialized by
    # zenoh's serializer (attachment_helpers.cpp: ze_serializer_serialize_str / _int64 / _buf).
    String = typestore.types['std_msgs/msg/String']
    pub = node.publisher('/old', 'std_msgs/msg/String', rz.STRING_HASH)

    def jazzy(seq):
        return bytes(zenoh.ext.z_serialize((
            'sequence_number', zenoh.ext.Int64(seq), 'source_timestamp', zenoh.ext.Int64(T0 + seq),
            'source_gid', pub.gid)).to_bytes())
    assert jazzy(1)[:16] == b'\x0fsequence_number'
    recorder = ros2bag('record', '--topics', '/old', '-o', tmp_path / 'rec', '--polling-interval', '50')
    try:
        wait_until(lambda: [e for _, e in tokens_of(node, 'MS', '/old') if e['node'] == 'rosbag2_recorder'],
                   what='the recorder subscribing to /old')
        sent = []
        for seq in [1, 2, 5, 6]:
            data = bytes(typestore.serialize_cdr(String(data=f'old {seq}'), 'std_msgs/msg/String'))
            pub.pub.put(data, attachment=jazzy(seq))
            sent.append(data)
        time.sleep(1.0)
        err = interrupt(recorder)
    finally:
        if recorder.poll() is None:
            recorder.kill()
    assert read_bag(tmp_path / 'rec')['/old'] == sent
    # Sequence numbers 3 and 4 never came: read from the Jazzy layout and counted as lost.
    assert '/old: received 4, written 4, dropped 0, lost on the way 2' in err, err


def test_our_router_serves_rmw_zenoh_peers():
    # `ros2bag-rs zenoh-router` in place of rmw_zenohd: two Python rmw_zenoh-format nodes find
    # each other's tokens and exchange data through it.
    assert private_network(), 'refusing to send Zenoh traffic: not in a private network namespace'
    env = {k: v for k, v in ENV.items() if k != 'ZENOH_CONFIG_OVERRIDE'}  # rmw_zenohd's defaults
    router = subprocess.Popen([str(binary('ros2bag-rs')), 'zenoh-router'], stderr=subprocess.PIPE,
                              text=True, env=env)
    try:
        assert 'listening on' in router.stderr.readline()
        a, b = rz.Node('a'), rz.Node('b')
        try:
            wait_until(lambda: list(a.session.info.routers_zid()), what='the router')
            sub = b.subscription('/chatter', 'std_msgs/msg/String', rz.STRING_HASH)
            pub = a.publisher('/chatter', 'std_msgs/msg/String', rz.STRING_HASH)
            wait_until(lambda: tokens_of(a, 'MS', '/chatter'), what="b's subscription token")
            time.sleep(0.2)
            pub.publish(b'\x00\x01\x00\x00\x03\x00\x00\x00hi\x00')
            assert sub.wait_for(1)[0][0] == b'\x00\x01\x00\x00\x03\x00\x00\x00hi\x00'
        finally:
            a.close()
            b.close()
        router.send_signal(signal.SIGINT)
        assert router.wait(timeout=30) == 0
    finally:
        if router.poll() is None:
            router.kill()


# Faults (issue 26) on the Zenoh backend: every exit path ends cleanly and takes the node off the
# graph at once, and malformed requests cost nothing but themselves.
GONE_WITHIN_S = 3.0


def our_node_tokens(node, name):
    return [t for t, e in tokens_of(node, 'NN') if e['node'] == name]


def seconds_until_gone(node, name, timeout=15.0):
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if not our_node_tokens(node, name):
            return time.monotonic() - start
        time.sleep(0.05)
    return float('inf')


@pytest.mark.parametrize('ending', ['end of bag', 'SIGINT', 'SIGTERM', 'stop service'])
def test_the_player_ends_cleanly_and_leaves_the_graph_at_once(tmp_path, typestore, node, ending):
    String = typestore.types['std_msgs/msg/String']
    seconds = 1 if ending == 'end of bag' else 60
    write_bag(tmp_path / 'bag', typestore,
              [('/chatter', 'std_msgs/msg/String', i * 100, String(data=f'{i}')) for i in range(seconds * 10 + 1)])
    player = ros2bag('play', tmp_path / 'bag', '--disable-keyboard-controls')
    try:
        wait_until(lambda: our_node_tokens(node, 'rosbag2_player'), what='our node on the graph')
        if ending == 'SIGINT':
            player.send_signal(signal.SIGINT)
        elif ending == 'SIGTERM':
            player.send_signal(signal.SIGTERM)
        elif ending == 'stop service':
            wait_until(lambda: tokens_of(node, 'SS', '/rosbag2_player/stop'), what='the stop service')
            node.call('/rosbag2_player/stop', 'rosbag2_interfaces/srv/Stop', SOME_HASH, EMPTY, 1,
                      rz.gid('stopping client'))
        finish(player, timeout=30)
    finally:
        if player.poll() is None:
            player.kill()
    assert seconds_until_gone(node, 'rosbag2_player') < GONE_WITHIN_S


def test_the_recorder_and_control_end_cleanly_on_sigint_and_leave_the_graph(tmp_path, node):
    for name, args in [
        ('rosbag2_recorder', ['record', '--disable-keyboard-controls', '-a', '-o', tmp_path / 'bag']),
        # Waits for a player that never comes, until interrupted.
        (None, ['control', 'is-paused', '--timeout', '60']),
    ]:
        known = {t for t, _ in tokens_of(node, 'NN')}
        proc = ros2bag(*args)
        try:
            ours = wait_until(lambda: [e['node'] for t, e in tokens_of(node, 'NN')
                                       if t not in known and (name is None or e['node'] == name)],
                              what=f'{args[0]} on the graph')[0]
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert 'panicked' not in err, err
        # The recorder ends normally; control says its wait was interrupted (exit code 1).
        assert proc.returncode == (0 if name else 1), err
        assert seconds_until_gone(node, ours) < GONE_WITHIN_S, args[0]


def test_malformed_requests_are_refused_while_the_player_keeps_serving(tmp_path, typestore, node):
    String = typestore.types['std_msgs/msg/String']
    write_bag(tmp_path / 'bag', typestore,
              [('/chatter', 'std_msgs/msg/String', i * 1000, String(data=f'{i}')) for i in range(30)])
    player = ros2bag('play', tmp_path / 'bag', '--disable-keyboard-controls', '--start-paused')
    client_gid = rz.gid('a careless client')
    try:
        wait_until(lambda: tokens_of(node, 'SS', SET_RATE[0]), what='the set_rate service')
        garbage = [b'', b'\x00', b'\xff' * 3, b'\x00\x01\x00\x00\x01', b'\x07' * 4096,
                   b'\x00\x01\x00\x00' + b'\xff' * 3]
        for seq, request in enumerate(garbage, start=1):
            try:
                payload, _ = node.call(SET_RATE[0], SET_RATE[1], SOME_HASH, request, seq, client_gid, timeout=2)
            except AssertionError:
                continue  # no reply is a refusal too
            assert payload[4:5] != b'\x01', f'{request!r} was accepted'
        payload, _ = node.call(IS_PAUSED[0], IS_PAUSED[1], SOME_HASH, EMPTY, 100, client_gid)
        assert payload[4] == 1
        payload, _ = node.call(SET_RATE[0], SET_RATE[1], SOME_HASH,
                               b'\x00\x01\x00\x00' + struct.pack('<d', 2.0), 101, client_gid)
        assert payload[4] == 1
    finally:
        player.send_signal(signal.SIGINT)
        try:
            player.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            player.kill()
    assert player.returncode == 0


# What the recorder may grow by (peak RSS, KiB) while a peer floods it with samples that hold no
# message from a million distinct publisher GIDs: its loss tracker keeps 2 x 1024 GIDs at most
# (unbounded, a million GIDs took ~50 MB more).
FLOOD_GROWTH_KIB = 16 * 1024
FLOOD_GIDS = int(os.environ.get('ROSBAG2_RS_FLOOD_GIDS', 1_000_000))
IS_RECORDER_PAUSED = ('/rosbag2_recorder/is_paused', 'rosbag2_interfaces/srv/IsPaused')


# A client in a process (and Zenoh session) of its own: calls `service` one call after another
# until stdin closes, then prints each call's round trip in milliseconds, as JSON.
LATENCY_PROBE = r'''
import json, sys, threading, time
import rmw_zenoh_peer as rz
service, ros_type, type_hash, request = sys.argv[1], sys.argv[2], sys.argv[3], bytes.fromhex(sys.argv[4])
node = rz.Node('latency_probe')
gid = rz.gid('latency probe')
closed = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), closed.set()), daemon=True).start()
times, seq = [], 0
# As a client waits for the service: until this session has learned of the queryable (a query
# sent before that meets no queryable and ends at once without a reply).
for _ in range(200):
    try:
        node.call(service, ros_type, type_hash, request, 0, gid, timeout=30)
        break
    except AssertionError:
        time.sleep(0.05)
print('ready', flush=True)
while not closed.is_set():
    seq += 1
    started = time.monotonic()
    node.call(service, ros_type, type_hash, request, seq, gid, timeout=30)
    times.append((time.monotonic() - started) * 1e3)
    time.sleep(0.002)
print(json.dumps(times), flush=True)
node.close()
'''


def latency_probe(service, ros_type, request):
    """Starts LATENCY_PROBE on `service` once its first call was answered; `latencies_of` ends it."""
    probe = subprocess.Popen([sys.executable, '-c', LATENCY_PROBE, service, ros_type, SOME_HASH, request.hex()],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, 'PYTHONPATH': os.path.dirname(os.path.abspath(__file__))})
    assert probe.stdout.readline().strip() == 'ready', probe.stderr.read()
    return probe


def latencies_of(probe):
    """The round trips (ms) a latency probe measured, once it is told to stop."""
    out, err = probe.communicate(input='', timeout=60)
    assert probe.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@functools.cache
def statistics_typestore():
    """A rosbags typestore knowing rosbag2_rs_interfaces' statistics, from the package's .msg files."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore
    store = get_typestore(Stores.ROS2_JAZZY)
    msg_dir = pathlib.Path(__file__).resolve().parents[2] / 'rosbag2_rs_interfaces' / 'msg'
    for name in ('TopicRecordStatistics', 'RecordStatistics'):
        store.register(get_types_from_msg((msg_dir / f'{name}.msg').read_text(), f'rosbag2_rs_interfaces/msg/{name}'))
    return store


def malformed_in(statistics):
    """(received, malformed) of /flood in a rosbag2_rs_interfaces/msg/RecordStatistics."""
    message = statistics_typestore().deserialize_cdr(statistics, 'rosbag2_rs_interfaces/msg/RecordStatistics')
    flood = next(t for t in message.topics if t.topic_name == '/flood')
    return flood.received, flood.malformed


def test_a_flood_of_short_samples_from_a_million_gids_is_counted_never_recorded_and_bounded(tmp_path, typestore, node):
    """Issue 48: samples of 0 and 3 bytes (too short for a CDR encapsulation header), each from a
    new publisher GID, are counted as malformed and not recorded; the recorder's loss tracker stays
    bounded (peak RSS) and its services answer throughout; the valid messages are all recorded."""
    String = typestore.types['std_msgs/msg/String']
    # Reliable keep-all: rmw_zenoh blocks rather than drops, so every sample arrives.
    flood = node.publisher('/flood', 'std_msgs/msg/String', rz.STRING_HASH, history=rz.KEEP_ALL)
    statistics = node.subscription('/events/rosbag2_rs_statistics', 'rosbag2_rs_interfaces/msg/RecordStatistics', '*')
    recorder = ros2bag('record', '--disable-keyboard-controls', '--topics', '/flood', '-o', tmp_path / 'rec',
                       '--polling-interval', '50', '--statistics-rate', '20')
    client_gid = rz.gid('flood test client')
    calls = iter(range(1, 1_000_000))
    latencies = []

    def is_paused():
        started = time.monotonic()
        payload, _ = node.call(*IS_RECORDER_PAUSED, SOME_HASH, EMPTY, next(calls), client_gid, timeout=30)
        latencies.append(time.monotonic() - started)
        assert payload[4] == 0, 'the recorder is recording'
    try:
        wait_until(lambda: [e for _, e in tokens_of(node, 'MS', '/flood') if e['node'] == 'rosbag2_recorder'],
                   what='the recorder subscribing to /flood')
        wait_until(lambda: tokens_of(node, 'SS', IS_RECORDER_PAUSED[0]), what='the recorder\'s services')
        valid = [bytes(typestore.serialize_cdr(String(data=f'valid {i}'), 'std_msgs/msg/String')) for i in range(200)]
        for data in valid[:100]:
            flood.publish(data)
        is_paused()
        time.sleep(1.0)
        before = memory_kib(recorder.pid)
        probe = latency_probe(*IS_RECORDER_PAUSED, EMPTY)
        started = time.monotonic()
        for i in range(FLOOD_GIDS):
            flood.pub.put(b'' if i % 2 else b'\x00\x01\x00',
                          attachment=rz.encode_attachment(1, T0, i.to_bytes(16, 'little')))
            if i % 50_000 == 0:
                is_paused()
        rate = FLOOD_GIDS / (time.monotonic() - started)
        during = latencies_of(probe)
        for data in valid[100:]:
            flood.publish(data)
        is_paused()  # answered after every sample before it on the same session
        time.sleep(1.0)
        peak = memory_kib(recorder.pid)
        # The statistics topic counts them too (received: the valid ones only).
        wait_until(lambda: statistics.samples and malformed_in(statistics.samples[-1][0]) == (len(valid), FLOOD_GIDS),
                   what=f'statistics with {FLOOD_GIDS} malformed samples')
        err = interrupt(recorder)
    finally:
        if recorder.poll() is None:
            recorder.kill()
    print(f'{FLOOD_GIDS} short samples from distinct GIDs at {rate:.0f}/s: recorder peak RSS {peak} KiB, '
          f'{before} KiB before the flood (+{peak - before} KiB, bound +{FLOOD_GROWTH_KIB}); '
          f'is_paused answered {len(latencies)} times on the flooding session, slowest {max(latencies) * 1e3:.1f} ms; '
          f'from a session of its own {len(during)} times during the flood: median {np.median(during):.2f} ms, '
          f'p99 {np.percentile(during, 99):.2f} ms, max {max(during):.2f} ms')
    assert read_bag(tmp_path / 'rec') == {'/flood': valid}
    assert f'/flood: received {len(valid)}, written {len(valid)}, dropped 0' in err, err
    assert f'malformed (too short for their encapsulation) {FLOOD_GIDS}' in err, err
    meta = YAML(typ="safe").load((tmp_path / 'rec' / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert meta['custom_data'].get('malformed_messages:/flood') == str(FLOOD_GIDS), meta['custom_data']
    assert peak - before < FLOOD_GROWTH_KIB, f'the recorder grew by {peak - before} KiB'
