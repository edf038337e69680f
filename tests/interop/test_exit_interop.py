"""Every way our nodes end takes their DDS participant off the graph at once: a Cyclone peer
sees it disposed right after the process exits, not after the 10 s lease (a ghost that makes a
long-lived client's first call to a restarted player go to the dead one).

Runs only inside a private network namespace (see ros_dds.py)."""
import os
import signal
import subprocess
import time

import pytest
from cyclonedds.builtin import BuiltinDataReader, BuiltinTopicDcpsParticipant
from cyclonedds.core import InstanceState
from cyclonedds.domain import DomainParticipant
from cyclonedds.qos import Policy
from rosbags.rosbag2 import StoragePlugin, Writer

from conftest import CYCLONE, binary
from ros_dds import ServiceClient, only_in_private_network, refuse_real_interfaces

pytestmark = only_in_private_network
T0 = 1_700_000_000_000_000_000
# Far below the 10 s lease a participant that is not deleted would linger for.
GONE_WITHIN_S = 3.0


@pytest.fixture(autouse=True)
def _refuse_real_interfaces():
    refuse_real_interfaces()


def is_ros_node(sample):
    """Whether a participant is a ROS 2 node's (rmw puts `enclave=...;` in its user data), not one
    of the plain Cyclone participants this process's earlier tests left for the collector."""
    user_data = sample.qos[Policy.Userdata]
    return user_data is not None and bytes(user_data.data).startswith(b'enclave=')


class Participants:
    """The participants a Cyclone peer sees, alive or gone."""

    def __init__(self, dp):
        self.reader = BuiltinDataReader(dp, BuiltinTopicDcpsParticipant)
        self.alive, self.gone, self.nodes = set(), set(), set()

    def update(self):
        for s in self.reader.take(N=64):
            if s.sample_info.instance_state == InstanceState.Alive:
                self.alive.add(str(s.key))
                if is_ros_node(s):
                    self.nodes.add(str(s.key))
            else:
                self.alive.discard(str(s.key))
                self.gone.add(str(s.key))

    def new_one(self, known, timeout=20):
        """A ROS node's participant that appeared after `known`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.update()
            fresh = (self.alive & self.nodes) - known
            if fresh:
                return fresh.pop()
            time.sleep(0.02)
        raise AssertionError('our node never appeared')

    def seconds_until_gone(self, key, timeout=15):
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            self.update()
            if key in self.gone:
                return time.monotonic() - start
            time.sleep(0.02)
        return float('inf')


def write_bag(path, typestore, seconds):
    String_ = typestore.types['std_msgs/msg/String']
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection('/chatter', 'std_msgs/msg/String', typestore=typestore)
        for i in range(int(seconds * 10) + 1):
            writer.write(conn, T0 + i * 100_000_000, typestore.serialize_cdr(String_(data=str(i)), 'std_msgs/msg/String'))


def start(*args):
    env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': '0', 'RUST_BACKTRACE': '1'}
    return subprocess.Popen([*map(str, args)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)


@pytest.mark.parametrize('ending', ['end of bag', 'SIGINT', 'SIGTERM', 'stop service'])
def test_the_player_leaves_the_graph_at_once(tmp_path, typestore, ending):
    write_bag(tmp_path / 'bag', typestore, 1.0 if ending == 'end of bag' else 60.0)
    dp = DomainParticipant(0)
    graph = Participants(dp)
    time.sleep(0.3)
    graph.update()
    proc = start(binary('player'), tmp_path / 'bag', '--disable-keyboard-controls')
    try:
        ours = graph.new_one(set(graph.alive))
        if ending == 'SIGINT':
            proc.send_signal(signal.SIGINT)
        elif ending == 'SIGTERM':
            proc.send_signal(signal.SIGTERM)
        elif ending == 'stop service':
            stop = ServiceClient(dp, 'rosbag2_player', 'stop')
            stop.wait()
            stop.call()
        _, err = proc.communicate(timeout=30)
        gone_after = graph.seconds_until_gone(ours)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert 'panicked' not in err, err
    assert proc.returncode == 0, err
    assert gone_after < GONE_WITHIN_S, f'participant still on the graph {gone_after} s after exit; its log:\n{err}'


def test_the_recorder_and_control_leave_the_graph_at_once(tmp_path):
    dp = DomainParticipant(0)
    graph = Participants(dp)
    time.sleep(0.3)
    graph.update()
    for name, args in [
        ('recorder', [binary('recorder'), '--disable-keyboard-controls', '-a', '-o', tmp_path / 'bag']),
        # Waits for a player that never comes, until interrupted.
        ('control', [binary('ros2bag-rs'), 'control', 'is-paused', '--timeout', '60']),
    ]:
        proc = start(*args)
        try:
            ours = graph.new_one(set(graph.alive))
            time.sleep(0.3)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
            gone_after = graph.seconds_until_gone(ours)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert 'panicked' not in err, err
        assert gone_after < GONE_WITHIN_S, f'{name}: participant still on the graph {gone_after} s after exit\n{err}'
