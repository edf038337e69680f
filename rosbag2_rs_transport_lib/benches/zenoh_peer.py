"""The Python `eclipse-zenoh` side of benches/zenoh_latency.rs, in rmw_zenoh's format.

sink KEY COUNT TIMEOUT_S: subscribes to KEY, prints `ready`, then `<sent> <received>` (ns) per
    sample (sent = bytes 8..16 of the payload) once COUNT arrived or TIMEOUT_S passed, then `done`.
source KEY SIZE PACED PERIOD_S BURST: prints `ready`, waits for a line on stdin, publishes PACED
    samples PERIOD_S apart, prints `burst <ns>`, publishes BURST back to back, prints `done`.
"""
import struct
import sys
import threading
import time

import zenoh

CONNECT = 'tcp/127.0.0.1:7447'


def session():
    conf = zenoh.Config()
    conf.insert_json5('mode', '"peer"')
    conf.insert_json5('connect/endpoints', f'["{CONNECT}"]')
    conf.insert_json5('listen/endpoints', '["tcp/127.0.0.1:0"]')
    conf.insert_json5('scouting/multicast/enabled', 'false')
    return zenoh.open(conf)


def sink(key, count, timeout):
    s = session()
    rows = []
    done = threading.Event()

    def on_sample(sample):
        now = time.time_ns()
        payload = sample.payload.to_bytes()
        rows.append((struct.unpack_from('<q', payload, 8)[0], now))
        if len(rows) >= count:
            done.set()
    sub = s.declare_subscriber(key, on_sample)
    print('ready', flush=True)
    done.wait(timeout)
    sub.undeclare()
    out = sys.stdout
    for sent, recv in rows:
        out.write(f'{sent} {recv}\n')
    out.write('done\n')
    out.flush()


def source(key, size, paced, period, burst):
    s = session()
    pub = s.declare_publisher(key, congestion_control=zenoh.CongestionControl.BLOCK)
    template = bytearray(b'\x00\x01\x00\x00' + struct.pack('<I', size) + b'\xab' * size)
    gid = bytes(16)
    print('ready', flush=True)
    sys.stdin.readline()

    def put(seq):
        struct.pack_into('<q', template, 8, time.time_ns())
        pub.put(bytes(template), attachment=struct.pack('<qq', seq, time.time_ns()) + b'\x10' + gid)
    for i in range(paced):
        put(i + 1)
        time.sleep(period)
    print(f'burst {time.time_ns()}', flush=True)
    for i in range(burst):
        put(paced + i + 1)
    print('done', flush=True)
    time.sleep(1)


if __name__ == '__main__':
    mode, key = sys.argv[1], sys.argv[2]
    if mode == 'sink':
        sink(key, int(sys.argv[3]), float(sys.argv[4]))
    else:
        source(key, int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]))
