"""A Cyclone DDS reader of `sensor_msgs/msg/Image` in its own process, so that it has its own
Cyclone configuration (`CYCLONEDDS_URI`), like a ROS 2 node would.

    python image_reader.py DOMAIN TOPIC COUNT BODY_SIZE TIMEOUT_S

Prints `ready` once the reader exists, then one line per sample received: the sha256 of the
sample's CDR body (its first BODY_SIZE bytes after the encapsulation header), `!pad` appended when
bytes beyond BODY_SIZE are not 0 to 3 zero padding bytes. Stops after COUNT samples, TIMEOUT_S
seconds, or 5 s without a sample once one arrived.
"""
import hashlib
import sys
import time

from cyclonedds.domain import DomainParticipant
from cyclonedds.internal import InvalidSample
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic

from ros_dds import RELIABLE_ALL, RawImage


def main():
    domain, topic, count, body_size, timeout = sys.argv[1:6]
    count, body_size = int(count), int(body_size)
    dp = DomainParticipant(int(domain))
    reader = DataReader(dp, Topic(dp, 'rt' + topic, RawImage), qos=RELIABLE_ALL)
    print('ready', flush=True)
    got, deadline, last = 0, time.monotonic() + float(timeout), None
    while got < count and time.monotonic() < deadline and (last is None or time.monotonic() - last < 5):
        for data in reader.take(N=10):
            if isinstance(data, InvalidSample):  # the writer went away: no data
                continue
            tail = data[4 + body_size:]
            mark = '' if len(tail) < 4 and not any(tail) else ' !pad'
            print(hashlib.sha256(data[4:4 + body_size]).hexdigest() + mark, flush=True)
            got += 1
            last = time.monotonic()
        time.sleep(0.002)


if __name__ == '__main__':
    main()
