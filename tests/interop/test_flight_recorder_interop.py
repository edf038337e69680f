"""The flight recorder against real peers: a Python `cyclonedds` node publishes (one topic
transient local, as `/tf_static` is) and calls the snapshot services as `ros2 service call` would;
`ros2bag-rs control` triggers a snapshot without ROS 2; the bags are read by Python `rosbags`
and each file of a split, retained bag by the `mcap` reader alone.

Runs only inside a private network namespace (`tools/test.sh` starts it under `unshare --net`).
"""
import os
import time

import pytest
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic
from mcap.reader import make_reader

from conftest import CYCLONE, split_files
from ros_dds import LATCHED, RELIABLE, ServiceClient, String, Time, only_in_private_network, refuse_real_interfaces
from test_recorder_interop import Recorder, paced, read_bag, wait_matched

pytestmark = only_in_private_network


@pytest.fixture(autouse=True)
def _refuse_real_interfaces():
    refuse_real_interfaces()


def wait_for(path, timeout=20):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f'{path} never appeared'
        time.sleep(0.05)


def numbers_on(messages, topic):
    return [int(String.deserialize(raw).data) for t, _, raw in messages if t == topic]


def test_snapshot_services_from_python_and_control(tmp_path, cli):
    """Seed 002's service calls as written (non-positive limits included), a trigger with file
    name, topics and post-trigger tail, and `ros2bag-rs control snapshot`: every snapshot holds
    the latched /tf_static, even once it is older than the buffer."""
    domain = 71
    prefix = tmp_path / 'snap'
    rec = Recorder(domain, tmp_path / 'recorder.log', '--snapshot', '--max-buffer-duration', '-1',
                   '--max-buffer-size', '100000000', '--topics', '/chatter', '/tf_static', '/other', '-o', prefix)
    dp = DomainParticipant(domain)
    tf = DataWriter(dp, Topic(dp, 'rt/tf_static', String), qos=LATCHED)
    tf.write(String(data='-1'))  # before the recorder subscribes: delivered as latched state
    chatter = DataWriter(dp, Topic(dp, 'rt/chatter', String), qos=RELIABLE)
    other = DataWriter(dp, Topic(dp, 'rt/other', String), qos=RELIABLE)
    memory = ServiceClient(dp, 'rosbag2_recorder', 'snapshot/memory')
    duration = ServiceClient(dp, 'rosbag2_recorder', 'snapshot/duration')
    trigger = ServiceClient(dp, 'rosbag2_recorder', 'snapshot/trigger')
    for client in (memory, duration, trigger):
        client.wait()
    wait_matched(chatter, '/chatter')
    wait_matched(other, '/other')
    wait_matched(tf, '/tf_static')
    time.sleep(0.5)
    # SetDuration {duration: 1.0}, then SetMemory {memory: -1}: memory off, duration limits.
    assert duration.call(duration=1.0).success
    assert memory.call(memory=-1.0).success
    assert not duration.call(duration=0.0).success, 'both limits off is refused'
    paced(chatter, [String(data=f'{i}') for i in range(200)], 100)  # 2 s
    other.write(String(data='0'))
    # The tail (1.5 s) is longer than the buffer's window (1 s): its messages are held from time
    # eviction until it ends.
    reply = trigger.call(filename='py', topics=['/chatter', 'tf_static'], start_time=Time(sec=0, nanosec=0),
                         stop_time=Time(sec=0, nanosec=0), post_trigger_seconds=1.5)
    assert reply.success, reply.message
    paced(chatter, [String(data=f'{i}') for i in range(200, 500)], 100)  # 3 s more
    wait_for(tmp_path / 'py' / 'metadata.yaml')
    py = read_bag(tmp_path / 'py')
    chatter_numbers = numbers_on(py, '/chatter')
    assert chatter_numbers == list(range(chatter_numbers[0], chatter_numbers[-1] + 1)), 'none missing'
    # The window in the recorder's own receive times (the bag's), not in counts of messages paced
    # by the wall clock: every message kept was received at most 1 s before the trigger or at
    # most 1.5 s after it. Message 200 went out only after the trigger's reply, so the tail ends
    # at most 1.5 s after it arrived; 499 went out at least 3 s after the trigger: never in it.
    chatter_times = [t for topic, t, _ in py if topic == '/chatter']
    assert chatter_times[-1] - chatter_times[0] <= 2_500_000_000, 'the 1 s window and the 1.5 s tail'
    if 200 in chatter_numbers:
        after = chatter_times[chatter_numbers.index(200)]
        assert chatter_times[-1] - after <= 1_500_000_000, 'the tail ends 1.5 s after the trigger'
    assert chatter_numbers[-1] < 499, 'the tail after the trigger, not beyond it'
    assert numbers_on(py, '/tf_static') == [-1], 'the latched state, older than the window'
    assert py[0][0] == '/tf_static', 'at its original time: first'
    assert not numbers_on(py, '/other'), 'only the topics asked for'

    # Without ROS 2: `ros2bag-rs control snapshot` on the same domain.
    env = {**os.environ, **CYCLONE, 'ROS_DOMAIN_ID': str(domain)}
    out = cli.run('control', 'snapshot', '--filename', 'ctl', '--timeout', '20', env=env).stdout
    assert 'ctl' in out, out
    wait_for(tmp_path / 'ctl' / 'metadata.yaml')
    ctl = read_bag(tmp_path / 'ctl')
    assert numbers_on(ctl, '/tf_static') == [-1], 'still there after an earlier snapshot took it'
    assert numbers_on(ctl, '/other') == [], '/other was received 3 s ago: evicted by now() - 1 s'
    assert numbers_on(ctl, '/chatter')[-1] == 499
    refused = cli.run('control', 'set-duration', '-1', '--timeout', '20', env=env, check=False)
    assert refused.returncode != 0 and 'refused' in refused.stderr, 'memory is off too: both off is refused'
    code, err = rec.stop()
    assert code == 0, err
    assert 'snapshot/duration' in err


def test_a_retained_split_bag_is_read_by_rosbags_and_each_file_by_mcap(tmp_path, cli):
    """`--max-bag-size` splits, `--max-bag-files 3` keeps the newest three files: Python rosbags
    reads the bag as metadata.yaml describes it, and each file read alone by `mcap` starts with
    the latched /tf_static; so does a `convert --start` cut of the bag."""
    domain = 72
    bag = tmp_path / 'bag'
    rec = Recorder(domain, tmp_path / 'recorder.log', '--topics', '/chatter', '/tf_static', '--max-bag-size', '200000',
                   '--max-bag-files', '3', '-o', bag)
    dp = DomainParticipant(domain)
    tf = DataWriter(dp, Topic(dp, 'rt/tf_static', String), qos=LATCHED)
    tf.write(String(data='-1'))
    chatter = DataWriter(dp, Topic(dp, 'rt/chatter', String), qos=RELIABLE)
    wait_matched(chatter, '/chatter')
    wait_matched(tf, '/tf_static')
    time.sleep(0.5)
    filler = 'x' * 10_000
    paced(chatter, [String(data=f'{i} {filler}') for i in range(200)], 200)  # 2 MB: ~10 files
    time.sleep(1.0)
    code, err = rec.stop()
    assert code == 0, err
    assert err.count('retention: deleted') >= 5, err[-2000:]
    files = split_files(bag)
    assert len(files) == 3, files
    messages = read_bag(bag)
    numbers = [int(String.deserialize(raw).data.split()[0]) for t, _, raw in messages if t == '/chatter']
    assert numbers == list(range(numbers[0], 200)), 'the newest messages, none missing'
    for path in files:
        with open(path, 'rb') as f:
            first = next(make_reader(f).iter_messages(log_time_order=True))
        schema, channel, message = first
        assert channel.topic == '/tf_static', path
        assert String.deserialize(message.data).data == '-1'

    # A cut after the latched message still starts with it, at its original time.
    tf_time = next(t for topic, t, _ in messages if topic == '/tf_static')
    chatter_times = [t for topic, t, _ in messages if topic == '/chatter']
    cut = chatter_times[len(chatter_times) // 2]
    cli.run('convert', bag, '-o', tmp_path / 'cut', '--start', f'{cut // 10**9}.{cut % 10**9:09d}')
    cut_messages = read_bag(tmp_path / 'cut')
    assert cut_messages[0][:2] == ('/tf_static', tf_time), cut_messages[0][:2]
    assert String.deserialize(cut_messages[0][2]).data == '-1'
    assert [t for topic, t, _ in cut_messages if topic == '/chatter'] == [t for t in chatter_times if t >= cut]
