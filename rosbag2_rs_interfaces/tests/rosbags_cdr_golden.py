#!/usr/bin/env python3
"""Print CDR bytes of sample values, encoded by an independent implementation.

Its output is kept verbatim in tests/rosbags_golden.txt: tests/cdr_golden.rs
writes the named samples out as byte literals, and tests/all_types.rs checks
the table of every type against that file (and re-runs this script to compare
with the file when a Python with rosbags is at hand).

The types are registered with `rosbags` (pip package) from this crate's own
.srv/.msg files, so the check also covers the field lists in those files.

Regenerate from the repository root (needs `pip install rosbags`; .venv has it):
    .venv/bin/python rosbag2_rs_interfaces/tests/rosbags_cdr_golden.py \
        > rosbag2_rs_interfaces/tests/rosbags_golden.txt
"""

import re
from pathlib import Path

import numpy

from rosbags.typesys import Stores, get_types_from_msg, get_typestore

CRATE = Path(__file__).resolve().parent.parent


def register(store):
    """Register every message, request and response of this crate with `store`.

    Returns a map from ROS 2 type name to the key rosbags stores it under
    (rosbags files `pkg/srv/X_Request` as `pkg/srv/msg/X_Request`). Registering
    a type the store already has with a different definition fails, so the
    Jazzy store of rosbags also checks our copies of rosbag2_interfaces/msg.
    """
    types = {}
    keys = {}
    order = []

    def add(text, typename):
        parsed = get_types_from_msg(text, typename)
        (key,) = parsed
        keys[typename] = key
        order.append(typename)
        types.update(parsed)
    for package, root in (
        ("rosbag2_interfaces", CRATE / "rosbag2_interfaces"),
        ("rosbag2_rs_interfaces", CRATE),
    ):
        for path in sorted((root / "msg").glob("*.msg")) if (root / "msg").is_dir() else []:
            add(path.read_text(), f"{package}/msg/{path.stem}")
        for path in sorted((root / "srv").glob("*.srv")):
            request, response = split_service(path.read_text())
            add(request, f"{package}/srv/{path.stem}_Request")
            add(response, f"{package}/srv/{path.stem}_Response")
    # ROS 2's rcl_interfaces: the parameter services and `/rosout` lines every node has (the
    # messages are in rosbags' Jazzy store too, which checks that these copies agree).
    rcl = CRATE.parent / "rosbag2_rs_codec" / "msgs" / "rcl_interfaces"
    for name in RCL_MESSAGES:
        add((rcl / "msg" / f"{name}.msg").read_text(), f"rcl_interfaces/msg/{name}")
    for name in RCL_SERVICES:
        text = (rcl / "srv" / f"{name}.srv").read_text()
        # Messages of the same package are named without it; rosbags would look for them
        # under the service's name.
        text = re.sub(r"^([A-Z]\w*)(?=[\[ ])", r"rcl_interfaces/\1", text, flags=re.M)
        request, response = split_service(text)
        add(request, f"rcl_interfaces/srv/{name}_Request")
        add(response, f"rcl_interfaces/srv/{name}_Response")
    store.register(types)
    # ROS 2's own type_description_interfaces: its messages are in rosbags' Jazzy store, its
    # service (served by every Jazzy node) is not.
    request, response = split_service(GET_TYPE_DESCRIPTION)
    for text, typename in ((request, "type_description_interfaces/srv/GetTypeDescription_Request"),
                           (response, "type_description_interfaces/srv/GetTypeDescription_Response")):
        parsed = get_types_from_msg(text, typename)
        store.register(parsed)
        (keys[typename],) = parsed
    return keys, {name: types[keys[name]][1] for name in order}


RCL_MESSAGES = ("FloatingPointRange", "IntegerRange", "ListParametersResult", "Log",
                "Parameter", "ParameterDescriptor", "ParameterValue", "SetParametersResult")
RCL_SERVICES = ("DescribeParameters", "GetParameterTypes", "GetParameters", "ListParameters",
                "SetParameters", "SetParametersAtomically")


# type_description_interfaces/srv/GetTypeDescription.srv (Jazzy), comments left out.
GET_TYPE_DESCRIPTION = """string type_name
string type_hash
bool include_type_sources true
---
bool successful
string failure_reason
type_description_interfaces/TypeDescription type_description
type_description_interfaces/TypeSource[] type_sources
type_description_interfaces/KeyValue[] extra_information
"""


def split_service(text):
    """Split a .srv text at its `---` line into request and response texts."""
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if line.strip() == "---")
    return "\n".join(lines[:index]) + "\n", "\n".join(lines[index + 1:]) + "\n"


def main():
    store = get_typestore(Stores.ROS2_JAZZY)
    keys, fields = register(store)
    time = store.types["builtin_interfaces/msg/Time"]
    duration = store.types["builtin_interfaces/msg/Duration"]

    def make(typename, **fields):
        return typename, store.types[keys[typename]](**fields)

    samples = {
        "set_rate_request": make("rosbag2_interfaces/srv/SetRate_Request", rate=2.0),
        "is_paused_response": make("rosbag2_interfaces/srv/IsPaused_Response", paused=True),
        "pause_request": make(
            "rosbag2_interfaces/srv/Pause_Request", structure_needs_at_least_one_member=0
        ),
        "seek_request": make(
            "rosbag2_interfaces/srv/Seek_Request", time=time(sec=1, nanosec=2)
        ),
        "burst_request": make("rosbag2_interfaces/srv/Burst_Request", num_messages=7),
        "play_request": make(
            "rosbag2_interfaces/srv/Play_Request",
            start_offset=time(sec=1, nanosec=2),
            playback_duration=duration(sec=-3, nanosec=4),
            playback_until_timestamp=time(sec=5, nanosec=6),
        ),
        "write_split_event": make(
            "rosbag2_interfaces/msg/WriteSplitEvent",
            closed_file="a.mcap",
            opened_file="b_1.mcap",
            node_name="/rec",
        ),
        "set_memory_request": make(
            "rosbag2_rs_interfaces/srv/SetMemory_Request", memory=1000000.0
        ),
        "set_duration_response": make(
            "rosbag2_rs_interfaces/srv/SetDuration_Response", success=True
        ),
        "trigger_snapshot_request": make(
            "rosbag2_rs_interfaces/srv/TriggerSnapshot_Request",
            filename="crash",
            topics=["/tf_static", "/a"],
            start_time=time(sec=1, nanosec=2),
            stop_time=time(sec=0, nanosec=0),
            post_trigger_seconds=2.5,
        ),
        "clear_buffer_request": make(
            "rosbag2_rs_interfaces/srv/ClearBuffer_Request",
            structure_needs_at_least_one_member=0,
        ),
        "get_type_description_request": make(
            "type_description_interfaces/srv/GetTypeDescription_Request",
            type_name="pkg/msg/T", type_hash="RIHS01_ab", include_type_sources=True,
        ),
        "get_type_description_response": make(
            "type_description_interfaces/srv/GetTypeDescription_Response",
            successful=True,
            failure_reason="",
            type_description=described(store),
            type_sources=[tdi(store, "TypeSource")(type_name="pkg/msg/T", encoding="msg",
                                                   raw_file_contents="int32 x\n")],
            extra_information=[tdi(store, "KeyValue")(key="k", value="v")],
        ),
    }
    print("# named samples: name, type, little- and big-endian CDR")
    for name, (typename, value) in samples.items():
        little = bytes(store.serialize_cdr(value, keys[typename]))
        big = bytes(store.serialize_cdr(value, keys[typename], little_endian=False))
        print(f"{name} {typename}")
        print(f"  le {little.hex(' ')}")
        print(f"  be {big.hex(' ')}")

    print()
    print("# every type, field i (from 1) set by rule_value()")
    for typename, type_fields in fields.items():
        value = store.types[keys[typename]](
            **{
                name: rule_value(index, kind, store)
                for index, (name, kind) in enumerate(type_fields, start=1)
            }
        )
        print(f"{typename} {bytes(store.serialize_cdr(value, keys[typename])).hex(' ')}")


def tdi(store, name):
    return store.types[f"type_description_interfaces/msg/{name}"]


def described(store):
    """A TypeDescription of `pkg/msg/T` (an int32 and a bounded sequence of `pkg/msg/U`)."""
    field_type, field = tdi(store, "FieldType"), tdi(store, "Field")
    individual = tdi(store, "IndividualTypeDescription")
    t = individual(type_name="pkg/msg/T", fields=[
        field(name="x", type=field_type(type_id=6, capacity=0, string_capacity=0, nested_type_name=""),
              default_value="7"),
        field(name="us", type=field_type(type_id=97, capacity=3, string_capacity=0, nested_type_name="pkg/msg/U"),
              default_value=""),
    ])
    u = individual(type_name="pkg/msg/U", fields=[
        field(name="s", type=field_type(type_id=21, capacity=0, string_capacity=10, nested_type_name=""),
              default_value=""),
    ])
    return tdi(store, "TypeDescription")(type_description=t, referenced_type_descriptions=[u])


def rule_value(index, kind, store):
    """The sample value of the index-th field (from 1) of a type.

    bool: true; uint8 (the placeholder of empty types): 0; other integers: i;
    float64: i + 0.5; string: "s<i>"; Time / Duration: sec = i, nanosec = 10 * i;
    another message: its field j (from 1) by the rule of i + j - 1;
    a sequence: two elements, the values of i and i + 1.
    """
    node, detail = kind
    if node.name == "SEQUENCE":
        items = [rule_value(index, detail[0], store), rule_value(index + 1, detail[0], store)]
        element, element_detail = detail[0]
        if element.name == "BASE" and element_detail[0] != "string":
            # rosbags takes sequences of numbers and bools as numpy arrays.
            return numpy.array(items, dtype=element_detail[0].replace(
                "byte", "uint8").replace("octet", "uint8"))
        return items
    if node.name == "NAME" and detail.startswith("builtin_interfaces/"):
        return store.types[detail](sec=index, nanosec=10 * index)
    if node.name == "NAME":
        # Another message: its field j (from 1) by the rule of index + j - 1.
        _, nested = store.fielddefs[detail]
        return store.types[detail](**{
            name: rule_value(index + j, kind, store) for j, (name, kind) in enumerate(nested)
        })
    base = detail[0]
    if base == "bool":
        return True
    if base == "uint8":
        return 0
    if base == "float64":
        return index + 0.5
    if base == "string":
        return f"s{index}"
    return index


if __name__ == "__main__":
    main()
