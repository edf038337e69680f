"""Starts the rosbag2-rs recorder: `ros2 launch rosbag2_rs_transport record.launch.py topics:='/a /b' output:=my_bag`.

Arguments map to `recorder` flags (see `ros2 run rosbag2_rs_transport recorder --help`); anything
else can be passed verbatim in `extra_args`, e.g. `extra_args:='--max-bag-size 1000000000'`.
Snapshot mode: `snapshot:=true` (rosbag2's: each snapshot the next file of the bag; bounded by
`extra_args:='--max-cache-size BYTES --max-cache-duration S'`), or with `max_buffer_duration:=30`
per-topic buffers and a bag per snapshot; then
`ros2 service call /rosbag2_recorder/snapshot rosbag2_interfaces/srv/Snapshot`.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

ARGS = {
    'topics': ('', 'Space-separated topics to record (empty with all:=true)'),
    'all': ('false', 'Record every topic'),
    'regex': ('', 'Record topics whose whole name matches this regular expression'),
    'output': ('', 'Bag directory (default rosbag2_YYYY_MM_DD-HH_MM_SS); per-topic snapshots: name prefix'),
    'storage': ('mcap', 'mcap or sqlite3'),
    'node_name': ('rosbag2_recorder', 'Recorder node name (services are under /NODE_NAME/)'),
    'use_sim_time': ('false', 'Timestamps from /clock'),
    'snapshot': ('false', 'Snapshot mode: buffer in memory, write on the snapshot service'),
    'max_buffer_size': ('', 'Snapshot mode with per-topic buffers: bytes buffered per topic'),
    'max_buffer_duration': ('', 'Snapshot mode with per-topic buffers: seconds buffered per topic'),
    'extra_args': ('', 'More recorder flags, verbatim'),
}


def _recorder(context):
    value = {name: LaunchConfiguration(name).perform(context).strip() for name in ARGS}
    truthy = lambda name: value[name].lower() in ('1', 'true', 'yes')
    cmd = ['--disable-keyboard-controls', '-s', value['storage']]
    if value['topics']:
        cmd += ['--topics', *value['topics'].split()]
    if truthy('all'):
        cmd.append('--all')
    if value['regex']:
        cmd += ['--regex', value['regex']]
    if value['output']:
        cmd += ['-o', value['output']]
    if truthy('snapshot'):
        cmd.append('--snapshot-mode')
        if value['max_buffer_size']:
            cmd += ['--max-buffer-size', value['max_buffer_size']]
        if value['max_buffer_duration']:
            cmd += ['--max-buffer-duration', value['max_buffer_duration']]
    cmd += value['extra_args'].split()
    # A launch_ros Node: launch's remaps, namespace and parameters reach the recorder as
    # --ros-args, and the SIGINT launch sends at shutdown reaches the recorder itself, which then
    # closes the bag (or saves the last snapshot); sigterm only after 30 s.
    return [Node(package='rosbag2_rs_transport', executable='recorder', name=value['node_name'],
                 arguments=cmd, parameters=[{'use_sim_time': truthy('use_sim_time')}],
                 output='screen', sigterm_timeout='30')]


def generate_launch_description():
    return LaunchDescription(
        [DeclareLaunchArgument(name, default_value=default, description=text)
         for name, (default, text) in ARGS.items()]
        + [OpaqueFunction(function=_recorder)])
