"""RIHS01 type hashes (REP-2011): ours against Python rosbags' `Typestore.hash_rihs01`.

Our side prints the hash and the hashed definition of every bundled type
(`examples/type_hashes --bundled`); rosbags hashes the same definitions, and its own ROS 2 Jazzy
typestore is compared for the types it has. One known difference is bridged, not hidden: rosbags
gives a `.msg` `char` the FieldType id CHAR (13), while rosidl (ROS 2's generator) turns `char`
into `uint8` (rosidl_adapter's MSG_TYPE_TO_IDL), as ROS 2 Jazzy's generated
std_msgs/msg/Char.json shows (RIHS01_3ad2d0...); rosbags is given `uint8` for those fields.
The Rust tests pin ROS 2 Jazzy's own generated hashes for the same types.
"""
import json
import pathlib
import re
import subprocess

import pytest
from rosbags.typesys import Stores, get_typestore, get_types_from_msg
from rosbags.typesys.base import Nodetype

from conftest import TARGET

TYPE_HASHES = TARGET / 'debug' / 'examples' / 'type_hashes'
CHAR_HASH = 'RIHS01_3ad2d04dd29ba19d04b16659afa3ccaedd691914b02a64e82e252f2fa6a586a9'


def ours(*types):
    if not TYPE_HASHES.exists():
        pytest.fail(f'{TYPE_HASHES} is missing: cargo build -p rosbag2_rs_codec --examples')
    proc = subprocess.run([str(TYPE_HASHES), *types], capture_output=True, text=True, env={})
    assert 'panicked' not in proc.stderr, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.fixture(scope='module')
def bundled():
    rows = ours('--bundled')
    errors = [r for r in rows if 'error' in r]
    assert not errors, errors
    return {r['type']: r for r in rows}


def service_of(type_name):
    """`(package, service)` of `pkg/srv/Service_Request|_Response|_Event`, else None."""
    m = re.fullmatch(r'([^/]+)/srv/(.+)_(Request|Response|Event)', type_name)
    return (m.group(1), m.group(2)) if m else None


def rosbags_hash(type_name, definition):
    """rosbags' hash of `type_name` from our concatenated definition text."""
    text = re.sub(r'^(\s*)char(?=[\s\[])', r'\1uint8', definition, flags=re.M)
    types = get_types_from_msg(text, type_name)
    # rosbags names every section `pkg/msg/Name` (and `pkg/srv/msg/Name` for the root): a
    # service's own messages are `pkg/srv/Name` in ROS 2.
    service = service_of(type_name)

    def rename(name):
        name = name.replace('/srv/msg/', '/srv/')
        if service:
            pkg, srv = service
            m = re.fullmatch(rf'{pkg}/(?:msg|srv)/(\w+)', name)
            if m:
                own = re.fullmatch(rf'{srv}_(?:Request|Response|Event)', m.group(1))
                # rosbags resolves a service part's unqualified field types in `pkg/srv`.
                return f'{pkg}/{"srv" if own else "msg"}/{m.group(1)}'
        return name

    def fix(desc):
        kind, rest = desc
        if kind == Nodetype.NAME:
            return (kind, rename(rest))
        if kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            return (kind, (fix(rest[0]), rest[1]))
        return desc

    renamed = {
        rename(name): (consts, [(f, fix(d)) for f, d in fields])
        for name, (consts, fields) in types.items()
    }
    store = get_typestore(Stores.EMPTY)
    store.register(renamed)
    return store.hash_rihs01(type_name)


def test_every_bundled_type_hashes_as_rosbags_hashes_it(bundled):
    assert len(bundled) > 150
    wrong = {
        name: (row['hash'], rosbags_hash(name, row['definition']))
        for name, row in bundled.items()
        if row['hash'] != rosbags_hash(name, row['definition'])
    }
    assert not wrong, wrong


def uses_char(store, type_name, seen=None):
    seen = seen if seen is not None else set()
    seen.add(type_name)
    for _, desc in store.fielddefs[type_name][1]:
        while desc[0] in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            desc = desc[1][0]
        if desc[0] == Nodetype.BASE and desc[1][0] == 'char':
            return True
        if desc[0] == Nodetype.NAME and desc[1] not in seen and uses_char(store, desc[1], seen):
            return True
    return False


def test_hashes_equal_rosbags_jazzy_typestore(bundled):
    store = get_typestore(Stores.ROS2_JAZZY)
    compared = 0
    for name, row in bundled.items():
        if name not in store.fielddefs or uses_char(store, name):
            continue
        assert row['hash'] == store.hash_rihs01(name), name
        compared += 1
    assert compared > 100
    # The one type rosbags and ROS 2 hash differently, pinned to ROS 2's value.
    assert bundled['std_msgs/msg/Char']['hash'] == CHAR_HASH != store.hash_rihs01('std_msgs/msg/Char')


def test_definitions_from_ament_prefix_path(tmp_path):
    share = tmp_path / 'share' / 'my_msgs' / 'msg'
    share.mkdir(parents=True)
    (share / 'Reading.msg').write_text('# a sensor reading\nstd_msgs/Header header\nfloat64[<=8] values 0\n'
                                       'string<=16 unit "m"\nuint8 KIND=3\n')
    proc = subprocess.run([str(TYPE_HASHES), 'my_msgs/msg/Reading'], capture_output=True, text=True,
                          env={'AMENT_PREFIX_PATH': str(tmp_path)})
    row = json.loads(proc.stdout)
    assert row['hash'] == rosbags_hash('my_msgs/msg/Reading', row['definition'])
    assert 'MSG: builtin_interfaces/Time' in row['definition']


ROSBAG2_BAGS = pathlib.Path(__file__).resolve().parents[2] / 'rosbag2_rs_storage' / 'tests' / 'data' / 'rosbag2'


def test_hashes_recorded_in_rosbag2_test_bags_are_what_rosbags_computes():
    """The golden hashes `rosbag2_rs_storage/tests/storage/type_hash.rs` recomputes, from a second
    source: every message schema rosbag2 stored, hashed by rosbags (the service event schemas are
    bare `.srv` text, which rosbags does not parse)."""
    from mcap.reader import make_reader

    checked = set()
    for bag in sorted(ROSBAG2_BAGS.glob('*.mcap')):
        with open(bag, 'rb') as f:
            summary = make_reader(f).get_summary()
        for channel in summary.channels.values():
            schema = summary.schemas[channel.schema_id]
            if '/srv/' in schema.name:
                continue
            assert rosbags_hash(schema.name, schema.data.decode()) == channel.metadata['topic_type_hash'], schema.name
            checked.add(schema.name)
    assert checked == {'rcl_interfaces/msg/Log', 'rcl_interfaces/msg/ParameterEvent',
                       'rosbag2_interfaces/msg/WriteSplitEvent', 'test_msgs/msg/Strings'}
