"""Two machines on Zenoh: a "robot" network namespace runs a Zenoh router and a Python
rmw_zenoh-format camera publisher (1 MB at 30 Hz); the "base" (pytest's own private namespace)
runs our recorder connected to the robot's router over a veth pair. The link goes down for 2 s
mid-run: the recorder carries on by itself, and what did not arrive is reported as lost messages
(sequence-number gaps), never as silence.

Runs only inside a private network namespace (tools/test.sh); the addresses are on the veth pair
the test creates between two namespaces of its own."""
import os
import signal
import subprocess
import sys
import time

import pytest
from ruamel.yaml import YAML
from rosbags.rosbag2 import Reader

from conftest import binary
from test_zenoh_interop import private_network

pytestmark = pytest.mark.skipif(
    not private_network() and os.environ.get('CI') != 'true',
    reason='Zenoh interop tests run only inside a private network namespace (tools/test.sh)')

HERE = os.path.dirname(os.path.abspath(__file__))
ROBOT, BASE = '10.77.0.1', '10.77.0.2'


def sh(*cmd):
    subprocess.run(cmd, check=True)


@pytest.fixture
def robot_namespace():
    assert private_network(), 'refusing to create links: not in a private network namespace'
    holder = subprocess.Popen(['unshare', '--net', 'sleep', '600'])
    time.sleep(0.2)
    ns = f'--net=/proc/{holder.pid}/ns/net'
    try:
        sh('ip', 'link', 'add', 'zbase', 'type', 'veth', 'peer', 'name', 'zrobot', 'netns', str(holder.pid))
        sh('ip', 'addr', 'add', f'{BASE}/24', 'dev', 'zbase')
        sh('ip', 'link', 'set', 'zbase', 'up')
        sh('nsenter', ns, 'ip', 'link', 'set', 'lo', 'up')
        sh('nsenter', ns, 'ip', 'addr', 'add', f'{ROBOT}/24', 'dev', 'zrobot')
        sh('nsenter', ns, 'ip', 'link', 'set', 'zrobot', 'up')
        yield ns
    finally:
        subprocess.run(['ip', 'link', 'del', 'zbase'], check=False)
        holder.kill()
        holder.wait()


def test_recorder_across_a_router_survives_a_cut_link_and_reports_the_gap(tmp_path, robot_namespace):
    count = 240
    robot = subprocess.Popen(['nsenter', robot_namespace, sys.executable, os.path.join(HERE, 'zenoh_robot.py'),
                              '--listen', f'tcp/{ROBOT}:7447', '--count', str(count)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HERE)
    assert robot.stdout.readline().strip() == 'ready', robot.stderr.read()
    env = {**os.environ, 'RMW_IMPLEMENTATION': 'rmw_zenoh_cpp',
           'ZENOH_CONFIG_OVERRIDE': f'connect/endpoints=["tcp/{ROBOT}:7447"];listen/endpoints=["tcp/{BASE}:0"]'}
    recorder = subprocess.Popen([str(binary('ros2bag-rs')), 'record', '--topics', '/camera/image',
                                 '-o', str(tmp_path / 'bag'), '--polling-interval', '50'],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert robot.stdout.readline().strip() == 'half'
        sh('nsenter', robot_namespace, 'ip', 'link', 'set', 'zrobot', 'down')
        time.sleep(2)
        sh('nsenter', robot_namespace, 'ip', 'link', 'set', 'zrobot', 'up')
        assert robot.stdout.readline().strip() == f'sent {count}'
        robot.wait(timeout=60)
        time.sleep(1)
        recorder.send_signal(signal.SIGINT)
        _, err = recorder.communicate(timeout=60)
        assert 'panicked' not in err and recorder.returncode == 0, err
    finally:
        for p in (robot, recorder):
            if p.poll() is None:
                p.kill()
    with Reader(tmp_path / 'bag') as reader:
        stamps = [int.from_bytes(data[4:8], 'little') for _, _, data in reader.messages()]
    meta = YAML(typ="safe").load((tmp_path / 'bag' / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    lost = int((meta.get('custom_data') or {}).get('lost_messages:/camera/image', 0))
    # Every message is either in the bag or counted as lost; the first one may precede the
    # recorder (the robot waits for its subscription token, so it does not).
    assert stamps == sorted(stamps)
    print(f'recorded {len(stamps)}, lost {lost}')
    assert lost > 0, 'a 2 s cut at 30 Hz must show as lost messages'
    assert len(stamps) + lost == count, (len(stamps), lost, sorted(set(range(count)) - set(stamps)), err[-500:])
    missing = sorted(set(range(count)) - set(stamps))
    assert len(missing) == lost, (missing, lost)
