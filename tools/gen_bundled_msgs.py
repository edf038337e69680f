#!/usr/bin/env python3
"""Regenerate rosbag2_rs_codec/msgs/ from the ROS 2 Jazzy type store of Python `rosbags`.

The storage layer embeds these definitions so that bags written without a ROS 2 installation
still carry a full `ros2msg` schema. Run from the repository root with the test venv active:
    .venv/bin/python tools/gen_bundled_msgs.py
"""
import pathlib
import shutil

from rosbags.typesys import Stores, get_typestore

PACKAGES = {
    'builtin_interfaces', 'std_msgs', 'geometry_msgs', 'sensor_msgs', 'rosgraph_msgs',
    'tf2_msgs', 'diagnostic_msgs', 'nav_msgs', 'rcl_interfaces', 'rosbag2_interfaces',
    'type_description_interfaces',
}
SEPARATOR = '=' * 80

out = pathlib.Path('rosbag2_rs_codec/msgs')
shutil.rmtree(out, ignore_errors=True)
store = get_typestore(Stores.ROS2_JAZZY)
count = 0
for name in sorted(store.types):
    pkg, kind, typ = name.split('/')
    if pkg not in PACKAGES or kind != 'msg':
        continue
    text, _ = store.generate_msgdef(name, ros_version=2)
    own = text.split(SEPARATOR)[0].rstrip('\n') + '\n'
    path = out / pkg / 'msg' / f'{typ}.msg'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(own)
    count += 1
print(f'wrote {count} definitions to {out}')
