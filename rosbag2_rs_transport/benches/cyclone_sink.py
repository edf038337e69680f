"""Cyclone DDS side of the transport benchmark: receives COUNT `Blob` messages on TOPIC and prints
one line "send_ns recv_ns size" per message (send time is the first 8 bytes of the blob)."""
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Listener, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import sequence, uint8
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
class Blob(IdlStruct, typename='rosbag2_rs_bench::msg::dds_::Blob_'):
    data: sequence[uint8]


topic, count = sys.argv[1], int(sys.argv[2])
rows = []


class OnData(Listener):
    def on_data_available(self, reader):
        now = time.time_ns()
        for sample in reader.take(N=1000):
            data = bytes(sample.data)
            rows.append((int.from_bytes(data[:8], 'little'), now, len(data)))


dp = DomainParticipant(0)
qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(100000))
reader = DataReader(dp, Topic(dp, 'rt' + topic, Blob), qos=qos, listener=OnData())
print('ready', flush=True)
deadline = time.monotonic() + 60
while len(rows) < count and time.monotonic() < deadline:
    time.sleep(0.01)
for row in rows:
    print(*row)
