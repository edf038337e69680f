"""Play a bag with the rosbag2-rs player.

    ros2 launch rosbag2_rs_transport play.launch.py bag:=/path/to/bag rate:=1.0 clock:=0 start_paused:=false

The player's services are then on /<node_name>/... (pause, resume, set_rate, seek, ...):

    ros2 service call /rosbag2_player/pause rosbag2_interfaces/srv/Pause
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _player(context):
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    arguments = [arg('bag'), '--rate', arg('rate'), '--disable-keyboard-controls']
    if float(arg('clock')) > 0:
        arguments += ['--clock', arg('clock')]
    if arg('start_paused').lower() == 'true':
        arguments.append('--start-paused')
    if arg('loop').lower() == 'true':
        arguments.append('--loop')
    if arg('use_sim_time').lower() == 'true':
        arguments.append('--use-sim-time')
    return [Node(package='rosbag2_rs_transport', executable='player', name=arg('node_name'),
                 arguments=arguments, output='screen')]


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument('bag', description='bag directory or file to play'),
        DeclareLaunchArgument('rate', default_value='1.0'),
        DeclareLaunchArgument('clock', default_value='0', description='/clock frequency in Hz (0: none)'),
        DeclareLaunchArgument('start_paused', default_value='false'),
        DeclareLaunchArgument('loop', default_value='false'),
        DeclareLaunchArgument('use_sim_time', default_value='false'),
        DeclareLaunchArgument('node_name', default_value='rosbag2_player'),
        OpaqueFunction(function=_player),
    ])
