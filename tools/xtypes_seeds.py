#!/usr/bin/env python3
"""Writes the wire seeds of the `xtypes` fuzz target (fuzz/seeds/xtypes/wire-*): the complete
type objects Python cyclonedds (tests/requirements.txt) serves for ROS 2 message types, as the
target reads them: a byte 0 (wire form), then each object as a little-endian u16 length and its
XCDR2 bytes without the encapsulation header, the announced type first.

    .venv/bin/python tools/xtypes_seeds.py
"""

import struct
from dataclasses import dataclass
from pathlib import Path

import cyclonedds.idl.types as t
from cyclonedds.idl import IdlStruct
from cyclonedds.idl._xt_builder import XTBuilder


@dataclass
class Time_(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: t.int32
    nanosec: t.uint32


@dataclass
class Header_(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time_
    frame_id: str


@dataclass
class Everything_(IdlStruct, typename="fuzz_msgs::msg::dds_::Everything_"):
    header: Header_
    b: bool
    o: t.byte
    c: t.char
    i8: t.int8
    u8: t.uint8
    i16: t.int16
    u16: t.uint16
    i32: t.int32
    u32: t.uint32
    i64: t.int64
    u64: t.uint64
    f32: t.float32
    f64: t.float64
    s: str
    bs: t.bounded_str[5]
    seq: t.sequence[t.int32]
    bseq: t.sequence[t.int32, 3]
    arr: t.array[t.float64, 4]
    strs: t.sequence[str]
    bstrs: t.sequence[t.bounded_str[3], 2]
    headers: t.sequence[Header_]
    harr: t.array[Header_, 2]


def main() -> None:
    out = Path(__file__).resolve().parent.parent / "fuzz" / "seeds" / "xtypes"
    out.mkdir(parents=True, exist_ok=True)
    for cls in (Time_, Header_, Everything_):
        _, type_map = XTBuilder.process_type(cls)
        seed = bytearray([0])
        for pair in type_map.identifier_object_pair_complete:
            body = pair.type_object.serialize(use_version_2=True)[4:]
            seed += struct.pack("<H", len(body)) + body
        (out / f"wire-{cls.__name__.rstrip('_')}").write_bytes(bytes(seed))


if __name__ == "__main__":
    main()
