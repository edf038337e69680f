"""How fast our rcl player answers a service while it works, next to an rclpy node's service in the
same run (the baseline): round trips of `is_paused` calls from an rclpy client, one after another,
1. idle;
2. during a `burst` of 2000 frames of 256 KB to an rclpy subscriber in a process of its own: our
   player's `burst`, then the baseline's;
3. during a graph storm: another process brings up 200 rclpy nodes, each with a publisher and a
   subscription, as fast as it can.
The baseline is an rclpy node in a process of its own serving the same service types on the same
middleware (a multi-threaded executor, a callback group per service; its burst publishes the same
frames from its handler), called in turn with ours in each phase. BENCH_MW=native runs our player
on its native Fast DDS backend instead of rcl (same build).

Run through tools/test_rcl.sh (the colcon workspace in the sourced Jazzy, a private network
namespace), with pytest's output shown:
    tools/test_rcl.sh .venv-ros2 tests/interop/bench_rcl_services.py -k bench -s
"""
import os
import subprocess
import sys
import threading
import time

from test_rcl_interop import (IsPaused, START_LINES, _refuse_real_interfaces, player, ros, string_cdr,  # noqa: F401
                              wait_until, write_bag)

DOMAIN = 94
CALLS = 300

# An rclpy node serving /baseline/is_paused (rosbag2_interfaces/srv/IsPaused) and /baseline/burst
# (rosbag2_interfaces/srv/Burst: publishes the frame argv[1] ... as our player's burst does) on a
# multi-threaded executor (each service in a callback group of its own) until interrupted.
BASELINE = '''
import rclpy, sys
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosbag2_interfaces.srv import Burst, IsPaused
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node('baseline')
frames = node.create_publisher(String, '/frames', QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
frame = String(data='x' * int(sys.argv[1]))

def burst(request, response):
    for _ in range(request.num_messages):
        frames.publish(frame)
    response.actually_burst = request.num_messages
    return response
node.create_service(IsPaused, '/baseline/is_paused', lambda request, response: response,
                    callback_group=MutuallyExclusiveCallbackGroup())
node.create_service(Burst, '/baseline/burst', burst, callback_group=MutuallyExclusiveCallbackGroup())
print('ready', flush=True)
executor = MultiThreadedExecutor()
executor.add_node(node)
try:
    executor.spin()
except KeyboardInterrupt:
    pass
'''

# An rclpy node that takes the burst's frames (a reliable subscription: the burst is paced by it).
SINK = '''
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
rclpy.init()
node = rclpy.create_node('sink')
node.create_subscription(String, '/frames', lambda m: None, QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE))
print('ready', flush=True)
try:
    rclpy.spin(node)
except KeyboardInterrupt:
    pass
'''

# 200 rclpy nodes, each with a publisher and a subscription, brought up as fast as possible; then
# held until interrupted.
STORM = '''
import rclpy
from std_msgs.msg import String
rclpy.init()
nodes = []
for i in range(200):
    node = rclpy.create_node(f'storm_{i}')
    node.create_publisher(String, f'/storm_{i}', 10)
    node.create_subscription(String, f'/storm_{i}_in', lambda m: None, 10)
    nodes.append(node)
print('up', flush=True)
try:
    while True:
        input()
except (KeyboardInterrupt, EOFError):
    pass
'''


def python(script, *args):
    env = {**os.environ, 'ROS_DOMAIN_ID': str(DOMAIN)}
    proc = subprocess.Popen([sys.executable, '-c', script, *map(str, args)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env=env)
    lines = []
    threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True).start()
    return proc, lines


def round_trips(client, until=None, calls=CALLS):
    """Round trips of `calls` calls one after another (or of every call until `until()` holds), ms."""
    times = []
    while len(times) < calls if until is None else not until():
        start = time.monotonic()
        future = client.call_async(IsPaused.Request())
        while not future.done():
            time.sleep(0.0001)
        times.append((time.monotonic() - start) * 1e3)
    return times


def alternating(clients, until, phase):
    """One call to each client in turn until `until()` holds: a table row per client."""
    times = {who: [] for who in clients}
    while not until():
        for who, client in clients.items():
            times[who] += round_trips(client, calls=1)
    return [row(who, phase, t) for who, t in times.items()]


def row(who, phase, times):
    ordered = sorted(times)

    def pct(p):
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]
    return f'| {who} | {phase} | {len(times)} | {pct(0.5):.2f} | {pct(0.99):.2f} | {ordered[-1]:.2f} |'


def test_bench_service_round_trips_while_the_player_works(tmp_path, ros):
    size = 256 << 10
    frame = string_cdr('x' * size)
    write_bag(tmp_path / 'bag', {'/frames': ('std_msgs/msg/String', [(i, frame) for i in range(2000)])})
    peer = ros(DOMAIN)
    baseline, baseline_lines = python(BASELINE, size)
    sink, sink_lines = python(SINK)
    middleware = os.environ.get('BENCH_MW', 'rcl')
    ours = player(tmp_path / 'bag', '--start-paused', domain=DOMAIN, middleware=middleware)
    rows = []
    storm = None
    try:
        ours.wait_for_line(START_LINES[middleware])
        wait_until(lambda: 'ready\n' in baseline_lines and 'ready\n' in sink_lines, 'the rclpy nodes')
        from rosbag2_interfaces.srv import Burst
        clients = {f'our player ({middleware})': peer.node.create_client(IsPaused, '/rosbag2_player/is_paused'),
                   'rclpy node (baseline)': peer.node.create_client(IsPaused, '/baseline/is_paused')}
        for client in clients.values():
            assert client.wait_for_service(timeout_sec=20)
        for who, client in clients.items():
            rows.append(row(who, 'idle', round_trips(client)))

        for who, name in (('our player', '/rosbag2_player/burst'), ('rclpy node', '/baseline/burst')):
            burst = peer.node.create_client(Burst, name)
            assert burst.wait_for_service(timeout_sec=20)
            bursting = burst.call_async(Burst.Request(num_messages=2000))
            rows += alternating(clients, bursting.done, f"{who}'s burst of 2000 × 256 KB")
            wait_until(bursting.done, 'the burst reply', timeout=120)
            assert bursting.result().actually_burst == 2000

        storm, storm_lines = python(STORM)
        rows += alternating(clients, lambda: 'up\n' in storm_lines or storm.poll() is not None,
                            'graph storm: 200 rclpy nodes joining')
        assert storm.poll() is None, 'the storm process ended'
    finally:
        for proc in (baseline, sink, storm):
            if proc is not None:
                proc.kill()
                proc.wait()
        ours.kill()
    print('\nis_paused round trips from an rclpy client, one call after another, ms\n')
    print('| server | while | calls | median | p99 | max |')
    print('|---|---|---|---|---|---|')
    print('\n'.join(rows))
