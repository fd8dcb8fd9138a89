"""The wire format: one msgpack frame [version, kind, call, body]; anything else is refused with a reason."""
from __future__ import annotations

import msgpack
import pytest

from clusteremu.emulator.transport import wire


def test_a_frame_round_trips_floats_exactly_and_integer_map_keys():
    body = [0.1 + 0.2, float("inf"), {3: "x", "k": [1, 2]}]
    kind, call, back = wire.decode(wire.encode(wire.DONE, 7, body), wire.TO_COORDINATOR, 1 << 20)
    assert (kind, call, back) == (wire.DONE, 7, body)


@pytest.mark.parametrize("frame, reason", [
    (b"\xc1\xc1\xc1", "undecodable"),
    (msgpack.packb({"a": 1}), "not a [version, kind, call, body]"),
    (msgpack.packb([99, "done", 1, None]), "unknown protocol version 99"),
    (msgpack.packb([wire.PROTOCOL_VERSION, "assign", 1, None]), "unexpected frame kind 'assign'"),
    (msgpack.packb([wire.PROTOCOL_VERSION, "done", "1", None]), "call id must be an integer"),
    (b"\x00" * 2048, "oversized frame: 2048 bytes"),
])
def test_bad_frames_are_refused_with_the_reason(frame, reason):
    with pytest.raises(wire.WireError, match=reason.replace("[", r"\[")):
        wire.decode(frame, wire.TO_COORDINATOR, 1024)


def test_objects_that_msgpack_cannot_carry_are_never_sent():
    with pytest.raises(TypeError):
        wire.encode(wire.DONE, 1, [object()])
