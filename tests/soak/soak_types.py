"""`sensor_msgs/Imu` for the Python `cyclonedds` publisher of the soak, and samples that write
given CDR bytes as they are (no serialization in Python)."""
from dataclasses import dataclass

from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import array, float64

from ros_dds import Header, Time


@dataclass
class Quaternion(IdlStruct, typename='geometry_msgs::msg::dds_::Quaternion_'):
    x: float64
    y: float64
    z: float64
    w: float64


@dataclass
class Vector3(IdlStruct, typename='geometry_msgs::msg::dds_::Vector3_'):
    x: float64
    y: float64
    z: float64


@dataclass
class Imu(IdlStruct, typename='sensor_msgs::msg::dds_::Imu_'):
    header: Header
    orientation: Quaternion
    orientation_covariance: array[float64, 9]
    angular_velocity: Vector3
    angular_velocity_covariance: array[float64, 9]
    linear_acceleration: Vector3
    linear_acceleration_covariance: array[float64, 9]


def raw_sample(kind):
    """A sample of `kind` whose `serialize` the caller replaces with its CDR bytes."""
    header = Header(stamp=Time(sec=0, nanosec=0), frame_id='')
    if kind is Imu:
        v = Vector3(0.0, 0.0, 0.0)
        return Imu(header, Quaternion(0.0, 0.0, 0.0, 1.0), [0.0] * 9, v, [0.0] * 9, v, [0.0] * 9)
    if kind.__name__ == 'RawImage':
        return kind.sample(b'')
    return kind(data='')
