"""The Cyclone DDS side of benches/transport_latency.rs (the Python `cyclonedds` binding, the DDS under
rmw_cyclonedds_cpp). Samples are `Blob` (sequence<uint8>) whose first 8 bytes are the send time
in ns; they are handled as serialized bytes, so Python decoding does not slow the peer.

    cyclone_peer.py sink TOPIC COUNT            # prints "send_ns recv_ns size" per sample
    cyclone_peer.py source TOPIC SIZE PACED PERIOD_MS BURST
                                                # publishes PACED stamped samples every PERIOD_MS,
                                                # waits 1 s, then BURST back to back

Prints `ready` once its endpoint exists (a source waits for a matched reader first).
"""
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Listener, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import sequence, uint8
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


class Serialized(bytes):
    """A sample's serialized bytes (a `bytes` that can carry `sample_info`)."""


@dataclass
class Blob(IdlStruct, typename='rosbag2_rs_bench::msg::dds_::Blob_'):
    data: sequence[uint8]

    @classmethod
    def deserialize(cls, data, has_header=True, use_version_2=None):
        return Serialized(data)


QOS = Qos(Policy.Reliability.Reliable(duration(seconds=10)), Policy.History.KeepLast(100000))


def sink(topic, count):
    rows = []

    class OnData(Listener):
        def on_data_available(self, reader):
            now = time.time_ns()
            for data in reader.take(N=1000):
                rows.append((int.from_bytes(data[8:16], 'little'), now, len(data)))

    dp = DomainParticipant(0)
    reader = DataReader(dp, Topic(dp, 'rt' + topic, Blob), qos=QOS, listener=OnData())  # noqa: F841 (kept alive)
    print('ready', flush=True)
    deadline, last = time.monotonic() + 120, len(rows)
    while len(rows) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    for row in rows:
        print(*row)


def source(topic, size, paced, period_ms, burst):
    dp = DomainParticipant(0)
    writer = DataWriter(dp, Topic(dp, 'rt' + topic, Blob), qos=QOS)
    while not writer.get_matched_subscriptions():
        time.sleep(0.01)
    time.sleep(0.5)
    print('ready', flush=True)
    body = bytearray(b'\x00\x01\x00\x00' + size.to_bytes(4, 'little') + b'\xab' * size)
    pad = (4 - len(body) % 4) % 4
    body += b'\x00' * pad
    sample = Blob(data=[])

    def write():
        body[8:16] = time.time_ns().to_bytes(8, 'little')
        data = bytes(body)
        sample.serialize = lambda use_version_2=None: data
        writer.write(sample)

    for _ in range(paced):
        write()
        time.sleep(period_ms / 1000)
    time.sleep(1)
    for _ in range(burst):
        write()
    time.sleep(5)


if __name__ == '__main__':
    if sys.argv[1] == 'sink':
        sink(sys.argv[2], int(sys.argv[3]))
    else:
        source(sys.argv[2], *map(int, sys.argv[3:7]))
