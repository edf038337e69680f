"""Write an MCAP file with Python `mcap` in rosbag2's layout, chunks (1 MiB) compressed with zstd or lz4.

usage: python tools/mcap_chunks_bag.py OUT.mcap zstd|lz4 [MESSAGES] [PAYLOAD_BYTES] [RATE_HZ]
"""

import random
import struct
import sys

from mcap.writer import CompressionType, Writer


def main() -> None:
    out, compression = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    size = int(sys.argv[4]) if len(sys.argv) > 4 else 6000
    rate = float(sys.argv[5]) if len(sys.argv) > 5 else 100.0
    kind = {'zstd': CompressionType.ZSTD, 'lz4': CompressionType.LZ4}[compression]
    with open(out, 'wb') as f:
        writer = Writer(f, compression=kind, chunk_size=1024 * 1024)
        writer.start(profile='ros2', library='tools/mcap_chunks_bag.py')
        schema = writer.register_schema('std_msgs/msg/String', 'ros2msg', b'string data')
        channel = writer.register_channel('/chatter', 'cdr', schema)
        t0 = 1_700_000_000_000_000_000
        for i in range(count):
            # Half random bytes (incompressible), half text: about 2:1 overall.
            noise = random.Random(i).randbytes(size // 2).hex()[: size // 2]
            text = (f'{i:08d} ' + noise + 'ab' * ((size - 9 - len(noise)) // 2)).encode()
            data = b'\x00\x01\x00\x00' + struct.pack('<I', len(text) + 1) + text + b'\x00'
            t = t0 + int(i * 1e9 / rate)
            writer.add_message(channel, log_time=t, data=data, publish_time=t, sequence=i)
        writer.finish()


if __name__ == '__main__':
    main()
