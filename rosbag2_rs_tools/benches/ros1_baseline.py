"""Python baselines of the ROS 1 bag benchmark. Prints `seconds messages bytes`.

    ros1_baseline.py rosbags-read BAG       # rosbags' ROS 1 reader, raw messages (venv python)
    ros1_baseline.py rosbag-read BAG        # the original rosbag library, raw (system python)
    ros1_baseline.py rosbags-cdr TYPE N     # rosbags deserialize_cdr of one message N times
"""
import sys
import time


def rosbags_read(path):
    from rosbags.rosbag1 import Reader
    n = size = 0
    with Reader(path) as reader:
        start = time.perf_counter()
        for _, _, raw in reader.messages():
            n += 1
            size += len(raw)
    return time.perf_counter() - start, n, size


def rosbag_read(path):
    import rosbag
    n = size = 0
    start = time.perf_counter()
    with rosbag.Bag(path) as bag:
        for _, msg, _ in bag.read_messages(raw=True):
            n += 1
            size += len(msg[1])
    return time.perf_counter() - start, n, size


def rosbags_cdr(kind, count):
    import numpy as np
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_JAZZY)
    t = store.types
    header = t['std_msgs/msg/Header'](stamp=t['builtin_interfaces/msg/Time'](sec=1, nanosec=2), frame_id='imu')
    if kind == 'imu':
        v3 = t['geometry_msgs/msg/Vector3'](x=1.0, y=2.0, z=3.0)
        msg = t['sensor_msgs/msg/Imu'](header=header, orientation=t['geometry_msgs/msg/Quaternion'](
            x=0.0, y=0.0, z=0.0, w=1.0), orientation_covariance=np.zeros(9), angular_velocity=v3,
            angular_velocity_covariance=np.zeros(9), linear_acceleration=v3, linear_acceleration_covariance=np.zeros(9))
        name = 'sensor_msgs/msg/Imu'
    else:
        fields = [t['sensor_msgs/msg/PointField'](name=n, offset=4 * i, datatype=7, count=1) for i, n in enumerate('xyzi')]
        msg = t['sensor_msgs/msg/PointCloud2'](header=header, height=1, width=10_000, fields=fields, is_bigendian=False,
                                               point_step=16, row_step=160_000,
                                               data=np.zeros(160_000, dtype=np.uint8), is_dense=True)
        name = 'sensor_msgs/msg/PointCloud2'
    data = store.serialize_cdr(msg, name)
    start = time.perf_counter()
    for _ in range(count):
        store.deserialize_cdr(data, name)
    return time.perf_counter() - start, count, count * len(data)


if __name__ == '__main__':
    mode = sys.argv[1]
    if mode == 'rosbags-read':
        result = rosbags_read(sys.argv[2])
    elif mode == 'rosbag-read':
        result = rosbag_read(sys.argv[2])
    else:
        result = rosbags_cdr(sys.argv[2], int(sys.argv[3]))
    print(*result)
