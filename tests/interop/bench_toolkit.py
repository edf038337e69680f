"""Times the toolkit verbs against the Python tools users combine today, on the same bag:

- `ros2bag-rs doctor` (sampled, and --decode-all) vs Python `mcap` reading every message with
  its CRC checks on (and decoding every message with `mcap_ros2`), on an MCAP file that stores
  chunk and section CRCs;
- `ros2bag-rs convert --where` vs the same filter written with Python `rosbags` (read,
  deserialize, test, write);
- `ros2bag-rs export` of an Image topic to PNG (frames/s).

Prints a table; nothing is asserted. Usage (after `cargo build --release -p ros2bag_rs_cli`):

    CARGO_TARGET_DIR=target python tests/interop/bench_toolkit.py [--poses N] [--images N]
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag2 import Reader, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = pathlib.Path(os.environ.get('CARGO_TARGET_DIR', ROOT / 'target'))
PROFILE = os.environ.get('ROSBAG2_RS_PROFILE', 'release')
BIN = TARGET / PROFILE / 'ros2bag-rs'
T0 = 1_700_000_000_000_000_000


def make_bag(path, typestore, poses, images):
    ts = typestore.types
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        pose_c = w.add_connection('/pose', 'geometry_msgs/msg/PoseStamped', typestore=typestore)
        img_c = w.add_connection('/cam', 'sensor_msgs/msg/Image', typestore=typestore)
        rng = np.random.default_rng(1)
        every = max(1, poses // max(images, 1))
        for i in range(poses):
            t = T0 + i * 1_000_000
            header = ts['std_msgs/msg/Header'](stamp=ts['builtin_interfaces/msg/Time'](sec=t // 10**9, nanosec=t % 10**9), frame_id='map')
            pose = ts['geometry_msgs/msg/PoseStamped'](header=header, pose=ts['geometry_msgs/msg/Pose'](
                position=ts['geometry_msgs/msg/Point'](x=float(i % 100), y=0.0, z=0.0),
                orientation=ts['geometry_msgs/msg/Quaternion'](x=0.0, y=0.0, z=0.0, w=1.0)))
            w.write(pose_c, t, typestore.serialize_cdr(pose, 'geometry_msgs/msg/PoseStamped'))
            if i % every == 0 and i // every < images:
                data = rng.integers(0, 255, 640 * 480 * 3, dtype=np.uint8)
                img = ts['sensor_msgs/msg/Image'](header=header, height=480, width=640, encoding='rgb8', is_bigendian=0,
                                                  step=640 * 3, data=data)
                w.write(img_c, t + 1, typestore.serialize_cdr(img, 'sensor_msgs/msg/Image'))


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run(*args):
    subprocess.run([str(BIN), *map(str, args)], check=True, capture_output=True)


def python_mcap_crc(path):
    with open(path, 'rb') as f:
        for _ in make_reader(f, validate_crcs=True).iter_messages():
            pass


def python_mcap_decode(path):
    with open(path, 'rb') as f:
        for _ in make_reader(f, validate_crcs=True, decoder_factories=[DecoderFactory()]).iter_decoded_messages():
            pass


def python_filter(src, dst, typestore):
    with Reader(src) as r, Writer(dst, version=9, storage_plugin=StoragePlugin.MCAP) as w:
        conns = {c.id: w.add_connection(c.topic, c.msgtype, typestore=typestore) for c in r.connections}
        for c, t, data in r.messages():
            if c.topic == '/pose' and not typestore.deserialize_cdr(data, c.msgtype).pose.position.x > 50:
                continue
            w.write(conns[c.id], t, data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--poses', type=int, default=200_000)
    parser.add_argument('--images', type=int, default=100)
    args = parser.parse_args()
    if not BIN.exists():
        sys.exit(f'{BIN} is missing: cargo build --{PROFILE} -p ros2bag_rs_cli')
    typestore = get_typestore(Stores.ROS2_JAZZY)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        bag = tmp / 'bag'
        make_bag(bag, typestore, args.poses, args.images)
        # rosbags' MCAP writer stores no CRCs: check a copy written by our writer, which stores
        # chunk and section CRCs, so that both sides have CRCs to verify.
        run('convert', '-i', bag, '-o', tmp / 'crc')
        checked = tmp / 'crc'
        mcap = next(checked.glob('*.mcap'))
        size = mcap.stat().st_size / 1e6
        n = args.poses + args.images
        rows = [
            ('doctor (5 decoded per topic)', timed(lambda: run('doctor', checked))),
            ('doctor --decode-all', timed(lambda: run('doctor', '--decode-all', checked))),
            ('Python mcap, CRCs checked', timed(lambda: python_mcap_crc(mcap))),
            ('Python mcap + mcap_ros2 decode all', timed(lambda: python_mcap_decode(mcap))),
            ("convert --where '/pose: pose.position.x > 50'",
             timed(lambda: run('convert', '-i', bag, '-o', tmp / 'ours', '--where', '/pose: pose.position.x > 50'))),
            ('Python rosbags filter (same predicate)', timed(lambda: python_filter(bag, tmp / 'theirs', typestore))),
            (f'export {args.images} rgb8 640x480 frames to PNG',
             timed(lambda: run('export', bag, '--topic', '/cam', '-o', tmp / 'frames'))),
        ]
        print(f'bag: {n} messages ({args.poses} PoseStamped, {args.images} 640x480 rgb8 Images), {size:.1f} MB MCAP')
        print(f'{"task":<50} {"seconds":>8} {"MB/s":>8} {"msg/s":>10}')
        for name, secs in rows:
            if name.startswith('export'):
                print(f'{name:<50} {secs:8.3f} {"-":>8} {args.images / secs:10.0f}')
            else:
                print(f'{name:<50} {secs:8.3f} {size / secs:8.1f} {n / secs:10.0f}')
        shutil.rmtree(tmp / 'frames', ignore_errors=True)


if __name__ == '__main__':
    main()
