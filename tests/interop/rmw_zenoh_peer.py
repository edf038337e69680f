"""A ROS 2 peer on Zenoh written to rmw_zenoh_cpp's wire format (Python `eclipse-zenoh`).

Every detail follows rmw_zenoh's source (rmw_zenoh_cpp/src/detail/): key expressions
(`liveliness_utils.cpp` TopicInfo), liveliness tokens and `%` mangling (`Entity`), the QoS string
(`qos_to_keyexpr`), GIDs (XXH3-128 of the token), the attachment (`attachment_helpers.cpp`:
int64 sequence number, int64 timestamp, 16-byte GID as a zenoh-serialized sequence) and the
service mapping (`rmw_client_data.cpp`: get, target ALL_COMPLETE, no consolidation). The golden
values in test_zenoh_interop.py pin this peer to rmw_zenoh's documentation.
"""
import struct
import threading
import time

import xxhash
import zenoh
import zenoh.ext

ADMIN_SPACE = '@ros2_lv'
# rosidl's RIHS01 hashes (Jazzy) of the types the tests use; rmw_zenoh's design.md gives String's.
STRING_HASH = 'RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18'
IMAGE_HASH = 'RIHS01_d31d41a9a4c4bc8eae9be757b0beed306564f7526c88ea6a4588fb9582527d47'

# rmw integers and rmw_zenoh's defaults (qos.cpp).
RELIABLE, BEST_EFFORT = 1, 2
TRANSIENT_LOCAL, VOLATILE = 1, 2
KEEP_LAST, KEEP_ALL = 1, 2
DEFAULT_DEPTH = 42


def router_config(listen='tcp/127.0.0.1:7447'):
    """Zenoh's own router, configured as rmw_zenohd's default configuration configures it."""
    conf = zenoh.Config()
    conf.insert_json5('mode', '"router"')
    conf.insert_json5('listen/endpoints', f'["{listen}"]')
    conf.insert_json5('scouting/multicast/enabled', 'false')
    conf.insert_json5('timestamping/enabled', '{router: true, peer: true, client: true}')
    conf.insert_json5('routing/router/peers_failover_brokering', 'true')
    return conf


def peer_config(connect='tcp/127.0.0.1:7447'):
    """A node's session as DEFAULT_RMW_ZENOH_SESSION_CONFIG.json5 makes it."""
    conf = zenoh.Config()
    conf.insert_json5('mode', '"peer"')
    conf.insert_json5('connect/endpoints', f'["{connect}"]')
    conf.insert_json5('listen/endpoints', '["tcp/127.0.0.1:0"]')
    conf.insert_json5('scouting/multicast/enabled', 'false')
    conf.insert_json5('timestamping/enabled', '{router: true, peer: true, client: true}')
    return conf


def dds_type(ros_type):
    pkg, kind, name = ros_type.split('/')
    return f'{pkg}::{kind}::dds_::{name}_'


def topic_key(domain, name, dds, type_hash):
    return f'{domain}/{name.strip("/")}/{dds}/{type_hash}'


def mangle(name):
    return name.replace('/', '%')


def qos_string(reliability=RELIABLE, durability=VOLATILE, history=KEEP_LAST, depth=DEFAULT_DEPTH):
    """qos_to_keyexpr: a value is written only where it differs from rmw_zenoh's default."""
    def f(value, default):
        return '' if value == default else str(value)
    return (f'{f(reliability, RELIABLE)}:{f(durability, VOLATILE)}:{f(history, KEEP_LAST)},'
            f'{f(depth, DEFAULT_DEPTH)}:,:,:,,')


def token(domain, zid, nid, eid, kind, namespace, node, topic=None, dds=None, type_hash=None,
          qos=None):
    parts = [ADMIN_SPACE, str(domain), zid, str(nid), str(eid), kind, '%', mangle(namespace), mangle(node)]
    if topic is not None:
        parts += [mangle(topic), dds, type_hash, qos]
    return '/'.join(parts)


def parse_token(text):
    parts = text.split('/')
    entity = {'zid': parts[2], 'nid': parts[3], 'id': parts[4], 'kind': parts[5],
              'enclave': parts[6].replace('%', '/'), 'namespace': parts[7].replace('%', '/'),
              'node': parts[8]}
    if len(parts) >= 13:
        entity.update(topic=parts[9].replace('%', '/'), dds=parts[10], hash=parts[11], qos=parts[12])
    return entity


def gid(token_text):
    """rmw_zenoh: XXH3-128 of the token, low 64 bits then high 64 bits, little-endian."""
    return xxhash.xxh3_128_intdigest(token_text.encode()).to_bytes(16, 'little')


def encode_attachment(seq, timestamp, source_gid):
    return struct.pack('<qq', seq, timestamp) + bytes([16]) + source_gid


def decode_attachment(data):
    data = bytes(data)
    assert len(data) == 33 and data[16] == 16, data.hex()
    seq, ts = struct.unpack('<qq', data[:16])
    return seq, ts, data[17:]


class Node:
    """One rmw_zenoh context with one node: a session, its NN token, endpoints with tokens."""

    def __init__(self, name, namespace='/', domain=0, connect='tcp/127.0.0.1:7447'):
        self.session = zenoh.open(peer_config(connect))
        self.zid = str(self.session.zid())
        self.domain, self.name, self.namespace = domain, name, namespace
        self.next_id = 1
        self.token_texts = [token(domain, self.zid, 0, 0, 'NN', namespace, name)]
        self.tokens = [self.session.liveliness().declare_token(self.token_texts[0])]

    def _token(self, kind, topic, ros_type, type_hash, qos):
        text = token(self.domain, self.zid, 0, self.next_id, kind, self.namespace, self.name,
                     topic, dds_type(ros_type), type_hash, qos)
        self.next_id += 1
        self.tokens.append(self.session.liveliness().declare_token(text))
        self.token_texts.append(text)
        return text

    def publisher(self, topic, ros_type, type_hash, reliability=RELIABLE, durability=VOLATILE,
                  history=KEEP_LAST, depth=10):
        return Publisher(self, topic, ros_type, type_hash, reliability, durability, history, depth)

    def subscription(self, topic, ros_type, type_hash, durability=VOLATILE, depth=10):
        return Subscription(self, topic, ros_type, type_hash, durability, depth)

    def call(self, service, ros_type, type_hash, request, seq, client_gid, timeout=10.0):
        """A request as rmw_zenoh's ClientData::send_request sends it; returns (payload, attachment)."""
        key = topic_key(self.domain, service, dds_type(ros_type), type_hash)
        replies = self.session.get(
            key, payload=request, attachment=encode_attachment(seq, time.time_ns(), client_gid),
            target=zenoh.QueryTarget.ALL_COMPLETE, consolidation=zenoh.ConsolidationMode.NONE,
            timeout=timeout)
        for reply in replies:
            if reply.ok is not None:
                return bytes(reply.ok.payload.to_bytes()), decode_attachment(reply.ok.attachment.to_bytes())
        raise AssertionError(f'no reply from {key}')

    def graph(self):
        """Every live token of the domain (rmw_zenoh's initial liveliness get)."""
        return [str(r.ok.key_expr) for r in
                self.session.liveliness().get(f'{ADMIN_SPACE}/{self.domain}/**', timeout=5)
                if r.ok is not None]

    def wait_announced(self, timeout=30.0):
        """Waits until the router answers for every token of this node (so that a node started
        now finds them in its initial graph query)."""
        deadline = time.monotonic() + timeout
        while not set(self.token_texts) <= set(self.graph()):
            assert time.monotonic() < deadline, 'tokens not announced'
            time.sleep(0.05)

    def close(self):
        for t in self.tokens:
            t.undeclare()
        self.session.close()


class Publisher:
    """rmw_zenoh's PublisherData: advanced publisher, attachment with seq from 1."""

    def __init__(self, node, topic, ros_type, type_hash, reliability, durability, history, depth):
        self.node = node
        self.key = topic_key(node.domain, topic, dds_type(ros_type), type_hash)
        self.token = node._token('MP', topic, ros_type, type_hash,
                                 qos_string(reliability, durability, history, depth))
        self.gid = gid(self.token)
        kwargs = {}
        if durability == TRANSIENT_LOCAL:
            kwargs = dict(cache=zenoh.ext.CacheConfig(max_samples=depth), publisher_detection=True)
        self.pub = zenoh.ext.declare_advanced_publisher(
            node.session, self.key,
            congestion_control=(zenoh.CongestionControl.BLOCK
                                if reliability == RELIABLE and history == KEEP_ALL
                                else zenoh.CongestionControl.DROP),
            reliability=(zenoh.Reliability.RELIABLE if reliability == RELIABLE
                         else zenoh.Reliability.BEST_EFFORT),
            **kwargs)
        self.seq = 1

    def publish(self, payload, seq=None):
        if seq is not None:
            self.seq = seq
        self.pub.put(payload, attachment=encode_attachment(self.seq, time.time_ns(), self.gid))
        self.seq += 1


class Subscription:
    """rmw_zenoh's SubscriptionData: collects (payload, attachment) per sample."""

    def __init__(self, node, topic, ros_type, type_hash, durability, depth):
        self.key = topic_key(node.domain, topic, dds_type(ros_type), type_hash)
        self.token = node._token('MS', topic, ros_type, type_hash,
                                 qos_string(durability=durability, depth=depth))
        self.samples = []
        self.cond = threading.Condition()

        def on_sample(sample):
            with self.cond:
                self.samples.append((bytes(sample.payload.to_bytes()),
                                     decode_attachment(sample.attachment.to_bytes())))
                self.cond.notify_all()
        if durability == TRANSIENT_LOCAL:
            self.sub = zenoh.ext.declare_advanced_subscriber(
                node.session, self.key, on_sample, subscriber_detection=True,
                history=zenoh.ext.HistoryConfig(detect_late_publishers=True, max_samples=depth))
        else:
            self.sub = zenoh.ext.declare_advanced_subscriber(node.session, self.key, on_sample)

    def wait_for(self, n, timeout=60.0):
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.samples) < n and time.monotonic() < deadline:
                self.cond.wait(0.1)
            return list(self.samples)
