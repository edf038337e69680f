"""Python `rosbags` baseline for the storage benchmark: write or read N messages of SIZE bytes.

Usage: rosbags_baseline.py write|read PATH N SIZE   -> prints seconds taken
"""
import sys
import time

from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

mode, path, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if mode == 'write':
    store = get_typestore(Stores.ROS2_JAZZY)
    payloads = [bytes([0, 1, 0, 0]) + bytes([i % 251]) * (size - 4) for i in range(16)]
    start = time.perf_counter()
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conns = [writer.add_connection(f'/topic_{i}', 'std_msgs/msg/ByteMultiArray', typestore=store) for i in range(10)]
        for i in range(n):
            writer.write(conns[i % 10], 1_000_000_000 + i * 1000, payloads[i % 16])
    print(time.perf_counter() - start)
else:
    start = time.perf_counter()
    total = 0
    with Reader(path) as reader:
        for _, _, data in reader.messages():
            total += len(data)
    print(time.perf_counter() - start)
