"""The original ROS 1 `rosbag` library (Debian's python3-rosbag), run with the system Python.

    ros1_peer.py write PATH COMPRESSION   # writes the golden bag (none, bz2 or lz4)
    ros1_peer.py dump PATH                # one JSON line per message: topic, time, type, md5sum,
                                          # latching, raw bytes (hex) and the message as ROS 2
                                          # sees it (Header without seq, time as sec/nanosec)
"""
import json
import sys

import genpy
import rosbag
import rospy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseStamped, TransformStamped
from sensor_msgs.msg import CameraInfo, Image, Imu, LaserScan, PointCloud2, PointField
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String
from tf2_msgs.msg import TFMessage


def stamp(i):
    return rospy.Time(1_700_000_000 + i, 1000 * i)


def golden(i):
    """The golden messages of step i: (topic, message, latched)."""
    t = stamp(i)
    yield '/chatter', String(data=f'hello {i} ünïcødé'), False
    img = Image(height=2, width=3, encoding='rgb8', is_bigendian=0, step=9, data=bytes(range(i, i + 18)))
    img.header.stamp, img.header.frame_id = t, 'camera'
    yield '/camera/image', img, False
    info = CameraInfo(height=480, width=640, distortion_model='plumb_bob', D=[0.1, -0.2, 0.0, 0.001, i / 7],
                      K=[500.0, 0, 320, 0, 500, 240, 0, 0, 1], R=[1.0, 0, 0, 0, 1, 0, 0, 0, 1],
                      P=[500.0, 0, 320, 0, 0, 500, 240, 0, 0, 0, 1, 0], binning_x=1, binning_y=2)
    info.roi.x_offset, info.roi.do_rectify = i, True
    info.header.stamp, info.header.frame_id = t, 'camera'
    yield '/camera/info', info, True
    imu = Imu(orientation_covariance=[float(k) for k in range(9)], angular_velocity_covariance=[-1.0] + [0.0] * 8,
              linear_acceleration_covariance=[0.5] * 9)
    imu.orientation.w, imu.linear_acceleration.z = 1.0, 9.81 + i
    imu.header.stamp, imu.header.frame_id = t, 'imu'
    yield '/imu', imu, False
    cloud = PointCloud2(height=1, width=2, is_bigendian=False, point_step=12, row_step=24, is_dense=True,
                        fields=[PointField(name=n, offset=4 * k, datatype=PointField.FLOAT32, count=1)
                                for k, n in enumerate('xyz')], data=bytes(range(24)))
    cloud.header.stamp, cloud.header.frame_id = t, 'lidar'
    yield '/points', cloud, False
    scan = LaserScan(angle_min=-1.5, angle_max=1.5, angle_increment=0.25, time_increment=0.0001, scan_time=0.1,
                     range_min=0.1, range_max=30.0, ranges=[1.0 + k / 4 for k in range(13)], intensities=[])
    scan.header.stamp, scan.header.frame_id = t, 'laser'
    yield '/scan', scan, False
    pose = PoseStamped()
    pose.header.stamp, pose.header.frame_id = t, 'map'
    pose.pose.position.x, pose.pose.orientation.w = i * 0.5, 1.0
    yield '/pose', pose, False
    tf = TransformStamped(child_frame_id='base_link')
    tf.header.stamp, tf.header.frame_id = t, 'odom'
    tf.transform.translation.x, tf.transform.rotation.w = float(i), 1.0
    yield '/tf', TFMessage(transforms=[tf, tf]), False
    diag = DiagnosticArray(status=[DiagnosticStatus(level=1, name='motor', message='warm', hardware_id='m1',
                                                    values=[KeyValue(key='temp', value=str(40 + i)),
                                                            KeyValue(key='rpm', value='1200')])])
    diag.header.stamp = t
    yield '/diagnostics', diag, False
    arr = Float64MultiArray(data=[i * 1.5, -2.25, 1e300])
    arr.layout.dim = [MultiArrayDimension(label='rows', size=3, stride=3)]
    yield '/array', arr, False


def write(path, compression):
    with rosbag.Bag(path, 'w', compression=compression, chunk_threshold=4096) as bag:
        for i in range(20):
            for topic, msg, latched in golden(i):
                header = None
                if latched:
                    header = {'topic': topic, 'type': msg._type, 'md5sum': msg._md5sum,
                              'message_definition': msg._full_text, 'callerid': '/golden', 'latching': '1'}
                bag.write(topic, msg, stamp(i), connection_header=header)


def ros2_view(value):
    """A ROS 1 message as its ROS 2 conversion reads: Header loses seq, time is sec/nanosec,
    field names are lower case."""
    if isinstance(value, (genpy.Time, genpy.Duration)):
        return {'sec': value.secs, 'nanosec': value.nsecs}
    if isinstance(value, genpy.Message):
        out = {}
        for name, kind in zip(value.__slots__, value._slot_types):
            if kind == 'std_msgs/Header' or kind == 'Header':
                h = getattr(value, name)
                out[name] = {'stamp': ros2_view(h.stamp), 'frame_id': h.frame_id}
            else:
                out[name.lower()] = ros2_view(getattr(value, name))
        return out
    if isinstance(value, bytes):
        return list(value)
    if isinstance(value, (list, tuple)):
        return [ros2_view(v) for v in value]
    return value


def dump(path):
    with rosbag.Bag(path) as bag:
        conns = {c.id: c for c in bag._connections.values()}
        for topic, raw, t, conn in bag.read_messages(raw=True, return_connection_header=True):
            msg_type, data, md5, _, pytype = raw
            msg = pytype()
            msg.deserialize(data)
            print(json.dumps({'topic': topic, 'time': t.to_nsec(), 'type': msg_type, 'md5sum': md5,
                              'latching': conn.get('latching') == '1', 'data': data.hex(),
                              'msg': ros2_view(msg)}))


if __name__ == '__main__':
    if sys.argv[1] == 'write':
        write(sys.argv[2], sys.argv[3])
    else:
        dump(sys.argv[2])
