#!/usr/bin/env python3
"""The workspace's shape, as issue 50 asks it: no package depends on the command line
(ros2bag_rs_cli is on top, as ros2bag is), and no crate holds more than a fifth of the source
(tracked .rs lines, each file counted in the crate whose directory holds it). And what colcon
needs of it: colcon-cargo reads `cargo metadata --no-deps` (one line of JSON naming every
workspace member, its targets and dependencies, each with its absolute path) through asyncio's
64 KiB line limit when colcon's output is not a terminal (CI, `docker build`); past it the line is
dropped and every package fails with a JSONDecodeError. The line must fit with this repository
at a path of WORKSPACE_PATH characters. And since colcon builds each package alone (cargo unifies
features only over the packages one build selects), the Zenoh crates must come out as one build
for every package that has them, or each package would compile them again. Dependencies point one
way, tests' too: no package's dev-dependency depends on the package. And a crate reads bottom-up:
its modules' `crate::`/`super::` paths form no circle. Prints each crate's share; exits 1 naming
what is out of shape.

    python3 tools/house_shape.py
"""
import functools
import json
import os
import pathlib
import re
import subprocess
import sys

MAX_SHARE = 0.20
# colcon-core's pipe reader (asyncio.StreamReader's default limit).
COLCON_LINE_LIMIT = 64 * 1024
# The longest repository path the metadata line must fit at (`/home/<user>/<ws>/src/rosbag2-rs`
# and CI checkouts are shorter); docs/ros2_workspace.md says so.
WORKSPACE_PATH = 52

root = pathlib.Path(__file__).resolve().parents[1]
line = subprocess.run(
    ['cargo', 'metadata', '-q', '--format-version', '1', '--no-deps'],
    cwd=root, capture_output=True, text=True, check=True).stdout.strip()
metadata = json.loads(line)
packages = metadata['packages']
failures = [f'{p["name"]} depends on ros2bag_rs_cli' for p in packages
            if any(d['name'] == 'ros2bag_rs_cli' for d in p['dependencies'])]

members = {p['name']: p for p in packages}


@functools.lru_cache(None)
def below(name):
    """The workspace packages `name` depends on (normal and build dependencies), transitively."""
    direct = {d['name'] for d in members[name]['dependencies']
              if d['kind'] != 'dev' and d['name'] in members}
    return frozenset(direct.union(*(below(d) for d in direct)))


for p in packages:
    for d in p['dependencies']:
        if d['kind'] == 'dev' and d['name'] in members and p['name'] in below(d['name']):
            failures.append(f'{p["name"]} has a dev-dependency on {d["name"]}, which depends on it')


def module_circles(src):
    """The circles of `src`'s module graph: module A uses module B when A's code (comments left
    out, tests' modules too) names `crate::B...` or `super::B...`; a module never counts as
    using its ancestors' children through them."""
    modules = {}
    for f in src.rglob('*.rs'):
        parts = list(f.relative_to(src).with_suffix('').parts)
        modules['::'.join(parts[:-1] if parts[-1] in ('mod', 'lib', 'main') else parts)] = f

    def resolve(path):
        segments = path.split('::')
        return next(('::'.join(segments[:i]) for i in range(len(segments), 0, -1)
                     if '::'.join(segments[:i]) in modules), '')
    uses = {}
    for module, f in modules.items():
        code = re.sub(r'//[^\n]*', '', f.read_text())
        code = re.split(r'#\[cfg\(test\)\]\s*mod tests', code)[0]
        parent = module.split('::')[:-1]
        names = [m for m in re.findall(r'crate::((?:\w+::)*\w+)', code)]
        names += ['::'.join(parent + [m]) for m in re.findall(r'super::((?:\w+::)*\w+)', code)]
        for group in re.findall(r'use crate::\{([^;]*)\};', code, re.S):
            names += re.findall(r'(?:^|[{,\s])(\w+)(?=::|\s*[,}]|$)', group)
        uses[module] = {t for t in map(resolve, names)
                        if t and t != module and not module.startswith(t + '::')}
    # Strongly connected components (Tarjan).
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in uses[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on.discard(component[-1])
            if len(component) > 1:
                circles.append(sorted(component))
    for v in modules:
        if v not in index:
            visit(v)
    return circles


for p in packages:
    circles = module_circles(pathlib.Path(p['manifest_path']).parent / 'src')
    if circles:
        failures.append(f'{p["name"]}: its modules import each other in a circle: {circles}')

files = subprocess.run(['git', 'ls-files', '*.rs'], cwd=root, capture_output=True, text=True,
                       check=True).stdout.split()
lines = {root / f: len((root / f).read_bytes().splitlines()) for f in files}
total = sum(lines.values())
for p in sorted(packages, key=lambda p: p['name']):
    crate = pathlib.Path(p['manifest_path']).parent
    share = sum(n for f, n in lines.items() if crate in f.parents) / total
    print(f'{p["name"]:32} {share:6.1%}')
    if share > MAX_SHARE:
        failures.append(f'{p["name"]} holds {share:.1%} of the source (at most {MAX_SHARE:.0%})')

at_long_path = len(line.replace(str(root), '/' + 'x' * (WORKSPACE_PATH - 1)).encode()) + 1
print(f'cargo metadata --no-deps: {len(line) + 1} bytes here, {at_long_path} at a '
      f'{WORKSPACE_PATH}-character path (colcon reads at most {COLCON_LINE_LIMIT})')
if at_long_path > COLCON_LINE_LIMIT:
    failures.append(f'cargo metadata --no-deps is {at_long_path} bytes at a {WORKSPACE_PATH}-character '
                    f'path: colcon without a terminal reads at most {COLCON_LINE_LIMIT}')


def units(package, name):
    """The build units of crate `name` in `package`'s release build, each as its features and
    those of everything below it (what cargo hashes into the artifact's name)."""
    graph = json.loads(subprocess.run(
        ['cargo', 'build', '-q', '--release', '-p', package, '-Zunstable-options', '--unit-graph'],
        cwd=root, capture_output=True, text=True, check=True,
        env={**os.environ, 'RUSTC_BOOTSTRAP': '1'}).stdout)['units']

    @functools.lru_cache(None)
    def key(i):
        u = graph[i]
        return (u['pkg_id'], u['target']['name'], u['mode'], tuple(u['features']),
                tuple(sorted(key(d['index']) for d in u['dependencies'])))
    return {key(i) for i, u in enumerate(graph) if u['target']['name'] == name and u['mode'] == 'build'}


zenoh = units('rosbag2_rs_transport_lib', 'zenoh')
others = [p for p in ('rosbag2_rs_zenoh', 'rosbag2_rs_transport', 'ros2bag_rs_cli')
          if units(p, 'zenoh') != zenoh]
for package in others:
    failures.append(f'{package} builds the zenoh crate with other features than the transport '
                    'library: colcon would compile Zenoh again (see rosbag2_rs_zenoh/Cargo.toml)')
if not others:
    print('zenoh: one build for its backend, the transport library, the nodes and the command line')

for failure in failures:
    print(failure, file=sys.stderr)
sys.exit(1 if failures else 0)
