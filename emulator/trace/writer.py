"""Segment writer: one per worker (and one for the coordinator's pseudo-agents).

Events are handed over a window at a time, sorted into canonical order (t, agent, seq), so that each writer's
stream is sorted and readers only need a k-way merge. Files rotate at ``segment_bytes``; data reaches the disk
at segment boundaries, whenever ``flush_bytes`` have accumulated, and at the end, so that a killed run leaves
every flushed record readable.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .batch import PackedEvents, Record
from .digest import AgentDigests
from .framing import encode_header, frame
from .kinds import EVENT_SCHEMA_VERSION

DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024
DEFAULT_FLUSH_BYTES = 256 * 1024


@dataclass
class WriterSummary:
    writer: str
    #: records written
    count: int
    segments: list[str]
    agent_digests: dict[str, str] = field(default_factory=dict)
    #: events a reader gives: a record written in rows gives one a row (``kinds.ROWS_KEY``)
    rows: int = 0


class SegmentWriter:
    def __init__(
        self,
        events_dir: str | os.PathLike,
        writer: str,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        flush_bytes: int = DEFAULT_FLUSH_BYTES,
    ) -> None:
        self.dir = Path(events_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.writer = writer
        self.segment_bytes = segment_bytes
        self.flush_bytes = flush_bytes
        self.digests = AgentDigests()
        self.segments: list[str] = []
        self._index = -1
        self._fh = None
        self._size = 0
        self._unflushed = 0
        self._extra_rows = 0  # rows beyond one per record
        self._open_next()

    def _open_next(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            self._fh.close()
        self._index += 1
        name = f"{self.writer}-{self._index:05d}.seg"
        self.segments.append(name)
        self._fh = open(self.dir / name, "wb")
        header = encode_header({"writer": self.writer, "index": self._index, "schema": EVENT_SCHEMA_VERSION})
        self._fh.write(header)
        self._fh.flush()
        self._size = len(header)
        self._unflushed = 0

    def write(self, events: list[tuple]) -> None:
        """Write a window's events (any order; sorted here). Each is ``(t, agent, seq, kind, fields)``."""
        if not events:
            return
        batch = PackedEvents()
        for ev in events:
            batch.append(ev)
        self.write_records(batch.records)

    def write_records(self, records: list[Record]) -> None:
        """Write events packed already (:class:`~.batch.PackedEvents`; any order, sorted here in place)."""
        if not records:
            return
        # The canonical order (t, agent, seq) is the tuples' own order: (agent, seq) is unique, so the comparison
        # never reaches the payload, and sorting without a key function spares a key tuple per event.
        records.sort()
        update = self.digests.update
        chunks = []
        size = 0
        extra = 0
        for _t, agent, _seq, payload, rows in records:
            extra += rows
            update(agent, payload)
            rec = frame(payload)
            chunks.append(rec)
            size += len(rec)
            if self._size + size >= self.segment_bytes:
                self._fh.write(b"".join(chunks))
                chunks, size = [], 0
                self._open_next()
        self._extra_rows += extra
        if chunks:
            self._fh.write(b"".join(chunks))
            self._size += size
            self._unflushed += size
            if self._unflushed >= self.flush_bytes:
                self._fh.flush()
                self._unflushed = 0

    def close(self) -> WriterSummary:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None
        return WriterSummary(self.writer, self.digests.count, list(self.segments), self.digests.hexdigests(),
                             self.digests.count + self._extra_rows)
