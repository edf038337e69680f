"""How closely `play --send-actions-as-client` keeps the recorded spacing of action goals, next to
the rclpy client that made the recording (the baseline, same run), both as seen by an rclpy action
server of test_msgs/action/Fibonacci (ROS 2 Kilted: action introspection).

1. An rclpy client sends GOALS goals, one every PERIOD_MS (a sleeping loop, as a script would),
   to an rclpy server with introspection on; our rcl `recorder --actions /fibonacci` records them.
   Baseline error of goal i: its arrival at that server minus (first arrival + i * PERIOD_MS).
2. Our rcl `player --send-actions-as-client` sends the recorded goals to a fresh server. Error of
   goal i: its arrival minus (first arrival + the recorded offset of goal i, from the bag's
   send_goal request events).

Run through tools/test_rcl.sh (the colcon workspace in the sourced Kilted, a private network
namespace), with pytest's output shown:
    CARGO_BUILD_BUILD_DIR=$PWD/target CARGO_TARGET_DIR=$PWD/target/kilted \\
      tools/test_rcl.sh .venv-kilted tests/interop/bench_action_spacing.py -k bench -s
"""
import statistics
import time

import pytest

from test_rcl_interop import (RELIABLE_ALL, IsPaused, Reader, _refuse_real_interfaces, player, recorder,  # noqa: F401
                              rclpy_has_action_introspection, ros, wait_until, START_LINE)

GOALS = 40
PERIOD_MS = 100


class StampingServer:
    """An rclpy Fibonacci server that stamps each goal request's arrival (monotonic ns) and
    succeeds at once."""

    def __init__(self, peer, introspection):
        from rclpy.action import ActionServer, GoalResponse
        from rclpy.service_introspection import ServiceIntrospectionState
        from test_msgs.action import Fibonacci
        self.arrivals = []

        def goal(request):
            self.arrivals.append(time.monotonic_ns())
            return GoalResponse.ACCEPT

        def execute(goal_handle):
            goal_handle.succeed()
            return Fibonacci.Result(sequence=[0, 1])

        self.server = ActionServer(peer.node, Fibonacci, '/fibonacci', execute, goal_callback=goal)
        if introspection:
            self.server.configure_introspection(peer.node.get_clock(), RELIABLE_ALL,
                                                ServiceIntrospectionState.CONTENTS)


def errors_ms(arrivals, offsets_ns):
    """|arrival_i - arrival_0 - offset_i| in ms."""
    return [abs((a - arrivals[0]) - o) / 1e6 for a, o in zip(arrivals, offsets_ns)]


def row(name, errors):
    ordered = sorted(errors)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f'| {name} | {len(errors)} | {statistics.median(errors):.2f} | {p95:.2f} | {max(errors):.2f} |'


@pytest.mark.skipif(not rclpy_has_action_introspection(),
                    reason="needs rclpy's action introspection (ROS 2 Kilted) and test_msgs")
def test_bench_action_goal_spacing(tmp_path, ros):
    from rclpy.action import ActionClient
    from test_msgs.action import Fibonacci
    peer = ros(92, 'fibonacci')
    first = StampingServer(peer, introspection=True)
    ours = recorder('--actions', '/fibonacci', '-o', tmp_path / 'goals', domain=92)
    try:
        ours.wait_for_line(START_LINE)
        wait_until(lambda: peer.node.count_subscribers('/fibonacci/_action/send_goal/_service_event') == 1,
                   'our recorder')
        client = ActionClient(peer.node, Fibonacci, '/fibonacci')
        assert client.wait_for_server(timeout_sec=20)
        start = time.monotonic_ns()
        for i in range(GOALS):
            time.sleep(max(0.0, (start + i * PERIOD_MS * 10**6 - time.monotonic_ns()) / 1e9))
            client.send_goal_async(Fibonacci.Goal(order=2))
        wait_until(lambda: len(first.arrivals) == GOALS, 'every goal at the first server')
        assert peer.call(IsPaused, '/rosbag2_recorder/is_paused').paused is False
        ours.finish(interrupt=True)
    finally:
        ours.kill()
    with Reader(tmp_path / 'goals') as reader:
        from rosbags.typesys import Stores, get_typestore, get_types_from_msg
        store, names = get_typestore(Stores.EMPTY), {}
        for c in reader.connections:
            types = get_types_from_msg(c.msgdef.data, c.msgtype)
            store.register(types)
            names[c.msgtype] = next(t for t in types if t.rsplit('/', 1)[1] == c.msgtype.rsplit('/', 1)[1])
        recorded = [ts for c, ts, data in reader.messages()
                    if c.topic.endswith('send_goal/_service_event')
                    and store.deserialize_cdr(data, names[c.msgtype]).info.event_type == 1]
    assert len(recorded) == GOALS

    fresh = StampingServer(ros(93, 'fresh'), introspection=False)
    replay = player(tmp_path / 'goals', '--send-actions-as-client', domain=93)
    try:
        wait_until(lambda: len(fresh.arrivals) == GOALS, 'every goal at the fresh server', timeout=60)
        replay.finish()
    finally:
        replay.kill()
    print(f'\n{GOALS} goals, {PERIOD_MS} ms apart; error of each goal\'s offset from the first, ms\n')
    print('| sender | goals | median | p95 | max |')
    print('|---|---|---|---|---|')
    print(row(f'rclpy client, sleeping {PERIOD_MS} ms (baseline)',
              errors_ms(first.arrivals, [i * PERIOD_MS * 10**6 for i in range(GOALS)])))
    print(row('our player, --send-actions-as-client',
              errors_ms(fresh.arrivals, [t - recorded[0] for t in recorded])))
