"""Shared fixtures: our binaries and a Python typestore for ROS 2 messages."""
import json
import os
import pathlib
import subprocess

import pytest
from rosbags.typesys import Stores, get_typestore

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = pathlib.Path(os.environ.get('CARGO_TARGET_DIR', ROOT / 'target'))
PROFILE = os.environ.get('ROSBAG2_RS_PROFILE', 'release')
# Our binaries on Cyclone DDS, for tests whose peer is Python `cyclonedds` (a build with the Fast
# DDS backend runs on Fast DDS when RMW_IMPLEMENTATION is unset, as ROS 2 does).
CYCLONE = {'RMW_IMPLEMENTATION': 'rmw_cyclonedds_cpp'}


# Installed binaries instead (a colcon workspace's lib/<package>, as `ros2 run` starts them).
BIN_DIR = os.environ.get('ROSBAG2_RS_BIN_DIR')


def binary(name: str) -> pathlib.Path:
    path = pathlib.Path(BIN_DIR) / name if BIN_DIR else TARGET / PROFILE / name
    if not path.exists():
        pytest.fail(f'{path} is missing: build with `cargo build --{PROFILE} --workspace --bins` first')
    return path


def ament_prefix_without(package, root):
    """AMENT_PREFIX_PATH with `package` uninstalled: each prefix that has it is replaced by one whose
    ament index and share/ link to the original's entries except the package's, and whose lib/ is the
    original's (its libraries are there, but nothing finds them through the index)."""
    prefixes = []
    for i, prefix in enumerate(os.environ['AMENT_PREFIX_PATH'].split(os.pathsep)):
        original = pathlib.Path(prefix)
        index = original / 'share/ament_index/resource_index'
        if not (index / 'packages' / package).exists():
            prefixes.append(prefix)
            continue
        copy = root / f'prefix{i}'
        for kind in index.iterdir():
            (copy / 'share/ament_index/resource_index' / kind.name).mkdir(parents=True)
            for entry in kind.iterdir():
                if entry.name != package:
                    (copy / 'share/ament_index/resource_index' / kind.name / entry.name).symlink_to(entry)
        for entry in (original / 'share').iterdir():
            if entry.name not in ('ament_index', package):
                (copy / 'share' / entry.name).symlink_to(entry)
        (copy / 'lib').symlink_to(original / 'lib')
        prefixes.append(str(copy))
    return os.pathsep.join(prefixes)


@pytest.fixture(scope='session')
def typestore():
    return get_typestore(Stores.ROS2_JAZZY)


class Cli:
    """Runs `ros2bag-rs`."""

    def __init__(self):
        self.path = binary('ros2bag-rs')

    def run(self, *args, check=True, **kwargs):
        proc = subprocess.run([str(self.path), *map(str, args)], capture_output=True, text=True, **kwargs)
        assert 'panicked' not in proc.stderr, proc.stderr
        if check and proc.returncode != 0:
            raise AssertionError(f'ros2bag-rs {args} failed ({proc.returncode}): {proc.stderr}')
        return proc

    def cat(self, *bags):
        out = self.run('cat', '--format', 'hex', *bags).stdout
        return [json.loads(line) for line in out.splitlines()]

    def info(self, bag):
        return json.loads(self.run('info', '--format', 'json', bag).stdout)


@pytest.fixture(scope='session')
def cli():
    return Cli()


def memory_kib(pid, field='VmHWM'):
    """A process's memory from /proc/<pid>/status in KiB: `VmHWM`, its peak resident set so far
    (or `VmRSS`, the current one)."""
    for line in pathlib.Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith(f'{field}:'):
            return int(line.split()[1])
    raise AssertionError(f'no {field} for process {pid}')


def split_files(bag, pattern='*.mcap'):
    """The storage files of a bag directory in split order: by the index rosbag2 Lyrical (and
    our writer) puts first (`{index}_{prefix}_{time}.mcap`), or older rosbag2 puts last
    (`{prefix}_{index}.mcap`)."""
    def index(path):
        stem = path.name.split('.')[0]
        first, last = stem.split('_', 1)[0], stem.rsplit('_', 1)[-1]
        return int(first) if first.isdigit() else int(last) if last.isdigit() else 0
    return sorted(pathlib.Path(bag).glob(pattern), key=index)
