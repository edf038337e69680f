"""The launch files the nodes package installs (rosbag2_rs_transport/launch) name only what our nodes
have: each `Node(package=..., executable=...)` is a binary of that package, and every flag the file
can pass (each string constant starting with `--`, and each short option in an argument list) is
accepted by that binary. Read with `ast`: launch itself is not on PyPI."""
import ast
import pathlib
import subprocess

import pytest

from conftest import ROOT, binary

LAUNCH = ROOT / 'rosbag2_rs_transport' / 'launch'


def nodes_and_flags(path: pathlib.Path):
    tree = ast.parse(path.read_text())
    executables = []
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, 'id', None) == 'Node':
            kw = {k.arg: k.value for k in call.keywords}
            assert isinstance(kw.get('package'), ast.Constant), f'{path.name}: Node without a package'
            executables.append((kw['package'].value, kw['executable'].value))
    flags = {c.value for c in ast.walk(tree)
             if isinstance(c, ast.Constant) and isinstance(c.value, str)
             and c.value.startswith('-') and len(c.value) > 1 and ' ' not in c.value}
    return executables, flags


@pytest.mark.parametrize('path', sorted(LAUNCH.glob('*.launch.py')), ids=lambda p: p.name)
def test_every_executable_and_flag_a_launch_file_names_exists(path):
    executables, flags = nodes_and_flags(path)
    assert executables, f'{path.name} starts no launch_ros Node'
    for package, executable in executables:
        assert package == 'rosbag2_rs_transport', package
        assert executable in ('player', 'recorder'), executable
        help_text = subprocess.run([binary(executable), '--help'], capture_output=True, text=True,
                                   check=True).stdout
        missing = [f for f in flags if f not in help_text]
        assert not missing, f'{path.name} passes {missing} that `{executable} --help` does not list'
