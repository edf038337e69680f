"""Write a rosbag2 MCAP bag with Python rosbags (the crash-recovery measurement's input).

usage: python tools/rosbags_bag.py OUT_DIR [MESSAGES] [PAYLOAD_BYTES] [RATE_HZ]
"""

import sys

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore


def main() -> None:
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 6000
    rate = float(sys.argv[4]) if len(sys.argv) > 4 else 100.0
    store = get_typestore(Stores.ROS2_HUMBLE)
    string = store.types['std_msgs/msg/String']
    with Writer(out, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection('/chatter', string.__msgtype__, typestore=store)
        t0 = 1_700_000_000_000_000_000
        for i in range(count):
            text = f'{i:08d} ' + ''.join(chr(97 + (i * 7 + j) % 26) for j in range(size - 9))
            data = store.serialize_cdr(string(data=text), string.__msgtype__)
            writer.write(conn, t0 + int(i * 1e9 / rate), data)


if __name__ == '__main__':
    main()
