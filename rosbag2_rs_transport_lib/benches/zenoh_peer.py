"""The Python `eclipse-zenoh` side of benches/transport_latency.rs, in rmw_zenoh's format (key
`<domain>/<topic>/<DDS type name>/<type hash>`, the attachment rmw_zenoh sends), through the
bench's router. Samples are `Blob` (sequence<uint8>) whose first 8 bytes are the send time in ns.

    zenoh_peer.py sink TOPIC COUNT            # prints "send_ns recv_ns" per sample
    zenoh_peer.py source TOPIC SIZE PACED PERIOD_MS BURST
                                              # PACED stamped samples every PERIOD_MS, 1 s, then
                                              # BURST back to back

Prints `ready` once its endpoint exists (a source once the router has had a moment to route it).
"""
import struct
import sys
import threading
import time

import zenoh

CONNECT = 'tcp/127.0.0.1:7447'
TYPE = 'rosbag2_rs_bench::msg::dds_::Blob_'
HASH = 'RIHS01_' + '0' * 64


def session():
    conf = zenoh.Config()
    conf.insert_json5('mode', '"peer"')
    conf.insert_json5('connect/endpoints', f'["{CONNECT}"]')
    conf.insert_json5('listen/endpoints', '["tcp/127.0.0.1:0"]')
    conf.insert_json5('scouting/multicast/enabled', 'false')
    return zenoh.open(conf)


def key(topic):
    return f'0/{topic[1:]}/{TYPE}/{HASH}'


def sink(topic, count):
    s = session()
    rows = []
    done = threading.Event()

    def on_sample(sample):
        now = time.time_ns()
        rows.append((struct.unpack_from('<q', sample.payload.to_bytes(), 8)[0], now))
        if len(rows) >= count:
            done.set()
    sub = s.declare_subscriber(key(topic), on_sample)
    print('ready', flush=True)
    done.wait(120)
    sub.undeclare()
    for sent, recv in list(rows):
        sys.stdout.write(f'{sent} {recv}\n')
    sys.stdout.flush()


def source(topic, size, paced, period_ms, burst):
    s = session()
    pub = s.declare_publisher(key(topic), congestion_control=zenoh.CongestionControl.BLOCK)
    template = bytearray(b'\x00\x01\x00\x00' + struct.pack('<I', size) + b'\xab' * size)
    gid = bytes(16)
    time.sleep(1)
    print('ready', flush=True)

    def put(seq):
        struct.pack_into('<q', template, 8, time.time_ns())
        pub.put(bytes(template), attachment=struct.pack('<qq', seq, time.time_ns()) + b'\x10' + gid)
    for i in range(paced):
        put(i + 1)
        time.sleep(period_ms / 1000)
    time.sleep(1)
    for i in range(burst):
        put(paced + i + 1)
    time.sleep(1)


if __name__ == '__main__':
    if sys.argv[1] == 'sink':
        sink(sys.argv[2], int(sys.argv[3]))
    else:
        source(sys.argv[2], *map(int, sys.argv[3:7]))
