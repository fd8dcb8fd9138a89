"""Segment file framing.

A segment file is a header followed by records::

    header  = b"CEMUSEG1" + u32 length + msgpack map {worker, index, schema}
    record  = u32 length (little endian) + u32 CRC-32 of the payload + payload
    payload = msgpack [t, agent, seq, kind, fields]

The length and CRC make a truncated or damaged record detectable: it is reported (file and byte offset) and
skipped, never mis-read. A writer killed mid-record leaves a short tail, which readers report as truncated.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Iterator

import msgpack

MAGIC = b"CEMUSEG1"
_HDR = struct.Struct("<I")
_REC = struct.Struct("<II")
MAX_RECORD = 64 * 1024 * 1024


def encode_header(meta: dict) -> bytes:
    body = msgpack.packb(meta)
    return MAGIC + _HDR.pack(len(body)) + body


def frame(payload: bytes) -> bytes:
    return _REC.pack(len(payload), zlib.crc32(payload)) + payload


@dataclass(frozen=True)
class FrameProblem:
    offset: int
    reason: str


def read_header(buf: bytes | memoryview) -> tuple[dict, int]:
    """Parse the header; return (meta, offset of the first record). Raises ValueError when damaged."""
    head = bytes(buf[: len(MAGIC)])
    if head != MAGIC:
        # A file cut inside its magic (a writer killed just after creating it) is a torn tail, not a foreign file.
        raise ValueError("truncated header" if MAGIC.startswith(head) else "not a clusteremu segment (bad magic)")
    if len(buf) < len(MAGIC) + 4:
        raise ValueError("truncated header")
    (n,) = _HDR.unpack_from(buf, len(MAGIC))
    start = len(MAGIC) + 4
    if len(buf) < start + n:
        raise ValueError("truncated header")
    return msgpack.unpackb(bytes(buf[start : start + n])), start + n


def iter_payloads(buf: bytes | memoryview, offset: int) -> Iterator[tuple[int, memoryview] | FrameProblem]:
    """Yield (offset, payload) for each intact record; a damaged one yields a FrameProblem and ends the scan,
    since after a bad length the framing cannot be trusted."""
    mv = memoryview(buf)
    end = len(mv)
    pos = offset
    while pos < end:
        if end - pos < _REC.size:
            yield FrameProblem(pos, f"truncated record header ({end - pos} bytes)")
            return
        n, crc = _REC.unpack_from(mv, pos)
        if n > MAX_RECORD:
            yield FrameProblem(pos, f"corrupt record: length {n} is implausible")
            return
        body = mv[pos + _REC.size : pos + _REC.size + n]
        if len(body) < n:
            yield FrameProblem(pos, f"truncated record: {len(body)} of {n} bytes")
            return
        if zlib.crc32(body) != crc:
            yield FrameProblem(pos, "corrupt record: CRC mismatch")
            return
        yield pos, body
        pos += _REC.size + n
