"""Events packed as agents emit them (``trace/batch.py``): the same trace as packing them when written, and an
event recorded as it stood when emitted."""
from __future__ import annotations

import msgpack
import pytest

from clusteremu.emulator.trace.batch import PackedEvents
from clusteremu.emulator.trace.framing import iter_payloads, read_header
from clusteremu.emulator.trace.kinds import ROWS_KEY
from clusteremu.emulator.trace.writer import SegmentWriter


def _events() -> list[tuple]:
    """Out of canonical order, two agents, one record in rows (three rows: two extra)."""
    return [
        (2.0, "b", 1, "stw_pause", {"duration_s": 0.02, "cause": "gc"}),
        (1.0, "b", 2, "stw_pause", {"duration_s": 0.5, "cause": "fault"}),  # seq is the agent's: never compared past
        (1.0, "a", 1, "queue_stats", {ROWS_KEY: {"queue": ["q0", "q1", "q2"], "lag": [0.0, 1.5, 3.0]},
                                       "max_offset": 9.0}),
        (1.0, "a", 2, "stw_pause", {"duration_s": 0.01, "cause": "gc"}),
    ]


def _segment_bytes(writer: SegmentWriter) -> bytes:
    return b"".join((writer.dir / name).read_bytes() for name in writer.segments)


def test_a_batch_packed_at_the_emits_writes_the_bytes_digests_and_rows_of_the_events_written_whole(tmp_path):
    whole = SegmentWriter(tmp_path / "whole", "w000")
    whole.write(_events())
    batch = PackedEvents()
    for ev in _events():
        batch.append(ev)
    assert len(batch) == 4
    packed = SegmentWriter(tmp_path / "packed", "w000")
    packed.write_records(batch.records)
    a, b = whole.close(), packed.close()
    assert _segment_bytes(whole) == _segment_bytes(packed)
    data = _segment_bytes(packed)
    keys = [tuple(msgpack.unpackb(bytes(p))[:3]) for _off, p in iter_payloads(data, read_header(data)[1])]
    assert keys == [(1.0, "a", 1), (1.0, "a", 2), (1.0, "b", 2), (2.0, "b", 1)]  # canonical (t, agent, seq)
    assert a.agent_digests == b.agent_digests and set(a.agent_digests) == {"a", "b"}
    assert (a.count, a.rows) == (b.count, b.rows) == (4, 6)


def test_an_event_is_recorded_as_it_stood_when_emitted(tmp_path):
    batch = PackedEvents()
    allocated = ["q0", "q1"]
    batch.append((1.0, "a", 1, "stw_pause", {"duration_s": 0.1, "cause": "gc", "queues": allocated}))
    allocated.append("q2")  # the agent goes on using its list
    payload = batch.records[0][3]
    assert msgpack.unpackb(payload)[4]["queues"] == ["q0", "q1"]


def test_the_events_of_a_failed_window_are_cut_with_their_rows_and_a_field_msgpack_cannot_encode_fails_at_its_emit(
        tmp_path):
    batch = PackedEvents()
    for ev in _events():
        batch.append(ev)
    del batch[2:]  # the row record and the last pause: a failed window's, as run_alone cuts them
    writer = SegmentWriter(tmp_path / "cut", "w000")
    writer.write_records(batch.records)
    summary = writer.close()
    assert (summary.count, summary.rows) == (2, 2)
    batch.clear()
    with pytest.raises(TypeError):
        batch.append((3.0, "a", 3, "stw_pause", {"duration_s": object()}))
    assert len(batch) == 0
