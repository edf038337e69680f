"""The ROS 2 side of benches/transport_latency.rs (the native Fast DDS and rcl backends, and the
rclpy → rclpy baseline): an rclpy node on the ROS 2 venv's default rmw (rmw_fastrtps_cpp in
PyPI's wheels) with default settings. Samples are `std_msgs/msg/UInt8MultiArray` with an empty
layout, whose first 8 data bytes (offset 16 of the serialized message) are the send time in ns;
they are taken and published as serialized bytes, so Python decoding does not slow the peer.

    rclpy_peer.py sink TOPIC COUNT            # prints "send_ns recv_ns size" per sample
    rclpy_peer.py source TOPIC SIZE PACED PERIOD_MS BURST

Prints `ready` once its endpoint exists (a source waits for a matched reader first).
"""
import sys
import threading
import time

import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import UInt8MultiArray

QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100000, reliability=ReliabilityPolicy.RELIABLE)


def sink(node, topic, count):
    rows = []
    node.create_subscription(
        UInt8MultiArray, topic,
        lambda data: rows.append((int.from_bytes(data[16:24], 'little'), time.time_ns(), len(data))), QOS, raw=True)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    print('ready', flush=True)
    # Until every sample came, or none for 10 s (a lossy path).
    seen, quiet_since = 0, time.monotonic()
    while len(rows) < count and time.monotonic() - quiet_since < 10:
        time.sleep(0.01)
        if len(rows) != seen:
            seen, quiet_since = len(rows), time.monotonic()
    for row in list(rows):
        print(*row, flush=False)
    sys.stdout.flush()
    executor.shutdown()
    spinner.join()


def source(node, topic, size, paced, period_ms, burst):
    pub = node.create_publisher(UInt8MultiArray, topic, QOS)
    while pub.get_subscription_count() == 0:
        time.sleep(0.01)
    time.sleep(0.5)
    print('ready', flush=True)
    body = bytearray(b'\x00\x01\x00\x00' + bytes(8) + size.to_bytes(4, 'little') + b'\xab' * size)

    def write():
        body[16:24] = time.time_ns().to_bytes(8, 'little')
        pub.publish(bytes(body))

    for _ in range(paced):
        write()
        time.sleep(period_ms / 1000)
    time.sleep(1)
    for _ in range(burst):
        write()
    time.sleep(5)


if __name__ == '__main__':
    rclpy.init()
    peer = rclpy.create_node('bench_peer')
    if sys.argv[1] == 'sink':
        sink(peer, sys.argv[2], int(sys.argv[3]))
    else:
        source(peer, sys.argv[2], *map(int, sys.argv[3:7]))
    peer.destroy_node()
    rclpy.shutdown()
