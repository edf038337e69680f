"""ROS 2 on the wire for the Python `cyclonedds` peer: message and service types with ROS 2's DDS
names, the rmw_cyclonedds service mapping, and the guard that keeps DDS traffic inside a private
network namespace (`tools/test.sh` runs pytest under `unshare --net`)."""
import itertools
import os
import socket
import time
import types
from dataclasses import dataclass

import pytest
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.internal import InvalidSample
from cyclonedds.idl.types import array, float64, int32, int64, sequence, uint8, uint32, uint64
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


def private_network() -> bool:
    return sorted(name for _, name in socket.if_nameindex()) == ['lo']


# Applied by every module that sends DDS traffic.
only_in_private_network = pytest.mark.skipif(
    not private_network() and os.environ.get('CI') != 'true',
    reason='DDS interop tests run only inside a private network namespace (tools/test.sh)',
)


def refuse_real_interfaces():
    assert private_network(), 'refusing to send DDS traffic: not in a private network namespace'


@dataclass
class String(IdlStruct, typename='std_msgs::msg::dds_::String_'):
    data: str


@dataclass
class Time(IdlStruct, typename='builtin_interfaces::msg::dds_::Time_'):
    sec: int32
    nanosec: uint32


@dataclass
class Header(IdlStruct, typename='std_msgs::msg::dds_::Header_'):
    stamp: Time
    frame_id: str


@dataclass
class Image(IdlStruct, typename='sensor_msgs::msg::dds_::Image_'):
    header: Header
    height: uint32
    width: uint32
    encoding: str
    is_bigendian: uint8
    step: uint32
    data: sequence[uint8]


class Serialized(bytes):
    """A sample's serialized bytes (a `bytes` that can carry the reader's `sample_info`)."""


@dataclass
class RawImage(IdlStruct, typename='sensor_msgs::msg::dds_::Image_'):
    """`Image` on the wire, for camera-sized data in Python: a reader of it takes each sample's
    serialized bytes as received (no decoding), and `RawImage.sample(cdr)` writes given bytes."""
    header: Header
    height: uint32
    width: uint32
    encoding: str
    is_bigendian: uint8
    step: uint32
    data: sequence[uint8]

    @classmethod
    def deserialize(cls, data, has_header=True, use_version_2=None):
        return Serialized(data)

    @classmethod
    def sample(cls, cdr: bytes):
        sample = cls(header=Header(stamp=Time(sec=0, nanosec=0), frame_id=''), height=0, width=0, encoding='',
                     is_bigendian=0, step=0, data=[])
        data = bytes(cdr)
        sample.serialize = lambda use_version_2=None: data
        return sample


@dataclass
class Clock(IdlStruct, typename='rosgraph_msgs::msg::dds_::Clock_'):
    clock: Time


def _service_types(name, request_fields, response_fields, package='rosbag2_interfaces'):
    """Request/response structs of `<package>/srv/<name>` with rmw_cyclonedds's header
    (client id, sequence number) in front."""
    def struct(kind, fields):
        annotations = {'client_id': uint64, 'sequence_number': int64, **fields}
        cls = types.new_class(f'{name}_{kind}', (IdlStruct,),
                              {'typename': f'{package}::srv::dds_::{name}_{kind}_'},
                              lambda ns: ns.update(__annotations__=annotations))
        return dataclass(cls)
    return struct('Request', request_fields), struct('Response', response_fields)


EMPTY = {'structure_needs_at_least_one_member': uint8}
SERVICES = {
    'pause': _service_types('Pause', EMPTY, EMPTY),
    'resume': _service_types('Resume', EMPTY, EMPTY),
    'is_paused': _service_types('IsPaused', EMPTY, {'paused': bool}),
    'set_rate': _service_types('SetRate', {'rate': float64}, {'success': bool}),
    'get_rate': _service_types('GetRate', EMPTY, {'rate': float64}),
    'seek': _service_types('Seek', {'time': Time}, {'success': bool}),
    'play_next': _service_types('PlayNext', EMPTY, {'success': bool}),
    'burst': _service_types('Burst', {'num_messages': uint64}, {'actually_burst': uint64}),
    'set_clock_publish_frequency': _service_types('SetClockPublishFrequency', {'frequency': float64},
                                                  {'success': bool, 'message': str},
                                                  package='rosbag2_rs_interfaces'),
    'stop': _service_types('Stop', EMPTY, EMPTY),
    'snapshot': _service_types('Snapshot', EMPTY, {'success': bool}),
    'split_bagfile': _service_types('SplitBagfile', EMPTY, EMPTY),
    # rosbag2_rs_interfaces: the snapshot buffer's limits (seed 002's fields) and the trigger with
    # parameters.
    'snapshot/memory': _service_types('SetMemory', {'memory': float64}, {'success': bool},
                                      package='rosbag2_rs_interfaces'),
    'snapshot/duration': _service_types('SetDuration', {'duration': float64}, {'success': bool},
                                        package='rosbag2_rs_interfaces'),
    'snapshot/trigger': _service_types(
        'TriggerSnapshot',
        {'filename': str, 'topics': sequence[str], 'start_time': Time, 'stop_time': Time,
         'post_trigger_seconds': float64},
        {'success': bool, 'message': str}, package='rosbag2_rs_interfaces'),
}

@dataclass
class ServiceEventInfo(IdlStruct, typename='service_msgs::msg::dds_::ServiceEventInfo_'):
    event_type: uint8
    stamp: Time
    client_gid: array[uint8, 16]
    sequence_number: int64


REQUEST_RECEIVED, RESPONSE_SENT = 1, 2


@dataclass
class SetRateRequest(IdlStruct, typename='rosbag2_interfaces::srv::dds_::SetRate_Request_'):
    """The plain request, as a service event carries it (no rmw header)."""
    rate: float64


@dataclass
class SetRateResponse(IdlStruct, typename='rosbag2_interfaces::srv::dds_::SetRate_Response_'):
    success: bool


@dataclass
class SetRateEvent(IdlStruct, typename='rosbag2_interfaces::srv::dds_::SetRate_Event_'):
    """`rosbag2_interfaces/srv/SetRate_Event`, published on `<service>/_service_event` by a server
    with service introspection on."""
    info: ServiceEventInfo
    request: sequence[SetRateRequest, 1]
    response: sequence[SetRateResponse, 1]


RELIABLE = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10))
RELIABLE_ALL = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepAll)
LATCHED = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.TransientLocal, Policy.History.KeepLast(1))
BEST_EFFORT = Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(1))


def valid(samples):
    """The samples that carry data: a writer that goes away (a node deleting its participant on
    exit) delivers an invalid sample that only says so."""
    return [s for s in samples if not isinstance(s, InvalidSample)]


def take(reader, count, timeout=20):
    got, deadline = [], time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        got.extend(valid(reader.take(N=count)))
        time.sleep(0.01)
    return got


def wait_matched(endpoint, timeout=20, peers=1):
    """Waits until a writer has `peers` matched readers (or a reader matched writers)."""
    matched = getattr(endpoint, 'get_matched_subscriptions', None) or endpoint.get_matched_publications
    deadline = time.monotonic() + timeout
    while len(matched()) < peers and time.monotonic() < deadline:
        time.sleep(0.02)
    return len(matched()) >= peers


class ServiceClient:
    """A ROS 2 service client speaking rmw_cyclonedds's mapping: `rq/<service>Request` and
    `rr/<service>Reply`, request and reply matched by (client id, sequence number)."""

    _ids = itertools.count(0x5100)

    def __init__(self, dp: DomainParticipant, node: str, service: str):
        self.request_type, self.response_type = SERVICES[service]
        name = f'{node.strip("/")}/{service}'
        self.requests = DataWriter(dp, Topic(dp, f'rq/{name}Request', self.request_type), qos=RELIABLE)
        self.replies = DataReader(dp, Topic(dp, f'rr/{name}Reply', self.response_type), qos=RELIABLE)
        self.client_id = next(self._ids) << 32 | os.getpid()
        self.sequence = itertools.count(1)
        self.name = name

    def wait(self, timeout=20):
        assert wait_matched(self.requests, timeout) and wait_matched(self.replies, timeout), f'{self.name} not found'

    def call(self, timeout=10, **fields):
        sequence = next(self.sequence)
        if not fields and 'structure_needs_at_least_one_member' in self.request_type.__annotations__:
            fields = {'structure_needs_at_least_one_member': 0}
        self.requests.write(self.request_type(client_id=self.client_id, sequence_number=sequence, **fields))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for reply in self.replies.take(N=10):
                if reply.client_id == self.client_id and reply.sequence_number == sequence:
                    return reply
            time.sleep(0.005)
        raise TimeoutError(f'no reply from {self.name}')


class UnanswerableRequests:
    """A requester of `<node>/is_paused` whose participant has no reply reader: the replies to
    what it sends can never be delivered (a server must not keep them all waiting)."""

    def __init__(self, domain: int, node: str):
        self.request_type, _ = SERVICES['is_paused']
        self.participant = DomainParticipant(domain)
        self.requests = DataWriter(self.participant,
                                   Topic(self.participant, f'rq/{node}/is_pausedRequest', self.request_type),
                                   qos=RELIABLE_ALL)

    def send(self, count, every=20_000, check=lambda: None):
        """Writes `count` requests, calling `check` before every `every`th and after the last."""
        for i in range(count):
            self.requests.write(self.request_type(client_id=7, sequence_number=i + 1,
                                                  structure_needs_at_least_one_member=0))
            if i % every == 0:
                check()
        check()

