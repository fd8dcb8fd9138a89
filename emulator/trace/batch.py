"""A worker's events between two writes, packed as the agents emit them.

Components: :class:`PackedEvents`, the sink a worker hands its agents (``AgentContext.events``), and
:data:`Record`, what it keeps of an event and :meth:`.writer.SegmentWriter.write_records` writes.

Why pack at once rather than when the batch is written: an event's fields are what the agent has just built or
read (an observer's rows: names, offsets, ranges), so they are in the processor's cache when it emits them;
thousands of events later, when the batch is written, they are not, and a record written in rows touches a
hundred scattered objects. Packed at the emit, they are read while warm and freed at once, instead of being read
cold by the packer and touched cold again when the batch is cleared (on the largest built-in scenarios, three
quarters of the packing was cache misses: ``docs/performance.md``). The bytes are the same:
an event is packed as it stands when emitted, which is what the trace records (no agent changes what it emitted).
"""
from __future__ import annotations

from typing import Any

import msgpack

from .kinds import ROWS_KEY

__all__ = ["PackedEvents", "Record"]

#: ``(t, agent, seq, payload, extra_rows)``: an event's canonical key (``t, agent, seq``, unique, so a sort never
#: compares the payloads), its msgpack payload ``[t, agent, seq, kind, fields]``, and the rows it gives readers
#: beyond one (a record written in rows gives one event a row)
Record = tuple[float, str, int, bytes, int]


class PackedEvents:
    """The events ``(t, agent, seq, kind, fields)`` agents append, kept packed in :attr:`records`."""

    __slots__ = ("records", "_pack")

    def __init__(self) -> None:
        self.records: list[Record] = []
        self._pack = msgpack.Packer().pack

    def append(self, event: tuple[float, str, int, str, dict[str, Any]]) -> None:
        """Pack ``event`` now (a field msgpack cannot encode raises here, at the emit that made it)."""
        rows = event[4].get(ROWS_KEY)
        extra = len(next(iter(rows.values()), ())) - 1 if rows is not None else 0
        self.records.append((event[0], event[1], event[2], self._pack(event), extra))

    def __len__(self) -> int:
        return len(self.records)

    def __delitem__(self, index: slice) -> None:
        del self.records[index]

    def clear(self) -> None:
        self.records.clear()
