"""Where users rely on `ros2 bag` behaving a certain way, against the Python `cyclonedds` peer:
launch-style `--ros-args` (namespace, rosbag2's node parameters) reach the player's services, and
`burst` into a recorder started just before loses nothing.

Runs only inside a private network namespace (see ros_dds.py)."""
import os
import signal
import subprocess
import time

import pytest
from cyclonedds.domain import DomainParticipant
from rosbags.rosbag2 import Reader

from conftest import CYCLONE, binary
from ros_dds import ServiceClient, only_in_private_network, refuse_real_interfaces
from test_dds_interop import same_cdr
from test_player_interop import strings, write_bag

pytestmark = only_in_private_network


@pytest.fixture(autouse=True)
def _refuse_real_interfaces():
    refuse_real_interfaces()


def start(*args, domain):
    env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': str(domain), 'RUST_BACKTRACE': '1'}
    return subprocess.Popen([str(a) for a in args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env)


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert 'panicked' not in err, err
    return err


@pytest.mark.parametrize('program', ['player', 'ros2bag-rs'])
def test_launch_style_ros_args_set_namespace_and_player_parameters(tmp_path, typestore, program):
    write_bag(tmp_path / 'bag', typestore, strings(typestore, '/chatter', 20, 50))
    params = tmp_path / 'params.yaml'
    params.write_text('/**:\n  ros__parameters:\n    play:\n      start_paused: true\n'
                      f'    storage:\n      uri: {tmp_path / "bag"}\n')
    command = [binary(program)] + (['play'] if program == 'ros2bag-rs' else [])
    proc = start(*command, '--disable-keyboard-controls', '--ros-args', '-r', '__ns:=/robot1',
                 '--params-file', params, '-p', 'play.rate:=2.0', domain=31)
    dp = DomainParticipant(31)
    try:
        get_rate = ServiceClient(dp, 'robot1/rosbag2_player', 'get_rate')
        is_paused = ServiceClient(dp, 'robot1/rosbag2_player', 'is_paused')
        get_rate.wait()
        is_paused.wait()
        assert get_rate.call().rate == 2.0
        assert is_paused.call().paused, 'play.start_paused from the parameter file'
    finally:
        err = stop(proc)
    assert '[rosbag2_player]' in err, f'log lines name the node as rclcpp does: {err}'


def test_burst_into_a_recorder_started_just_before_records_every_message(tmp_path, typestore):
    sent = write_bag(tmp_path / 'bag', typestore, strings(typestore, '/chatter', 300, 1)
                     + strings(typestore, '/numbers', 100, 3))
    out = tmp_path / 'recorded'
    recorder = start(binary('recorder'), '--disable-keyboard-controls', '-a', '-o', out, domain=32)
    try:
        burst = subprocess.run([str(binary('ros2bag-rs')), 'burst', '--input', str(tmp_path / 'bag'),
                                '--num-messages', '400'],
                               capture_output=True, text=True, timeout=60,
                               env={**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': '32'})
        assert burst.returncode == 0 and 'panicked' not in burst.stderr, burst.stderr
        time.sleep(0.5)
    finally:
        stop(recorder)
    got = {}
    with Reader(out) as reader:
        for conn, _, data in reader.messages():
            got.setdefault(conn.topic, []).append(bytes(data))
    for topic, messages in sent.items():
        assert len(got.get(topic, [])) == len(messages), f'{topic}: {len(got.get(topic, []))} of {len(messages)}'
        for received, original in zip(got[topic], messages):
            same_cdr(received, original)


def test_convert_is_quiet_when_stderr_is_not_a_terminal(tmp_path, cli, typestore):
    """The progress line (bytes, rate, ETA) is drawn only on a terminal; captured stderr gets none."""
    from test_player_interop import strings, write_bag
    write_bag(tmp_path / 'bag', typestore, strings(typestore, '/chatter', 500, 1))
    proc = cli.run('convert', '-i', tmp_path / 'bag', '-o', tmp_path / 'out', '--storage', 'sqlite3')
    assert '\r' not in proc.stderr and 'ETA' not in proc.stderr, proc.stderr
    assert 'wrote 500 messages' in proc.stdout
