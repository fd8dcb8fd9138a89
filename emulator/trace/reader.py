"""Reading a run: ``open_run(run_dir)`` → :class:`Run`.

Segments of each writer are read in index order and writers are merged in canonical order (t, agent, seq).
Damaged data never crashes the reader and is never mis-read: a truncated or corrupt record ends that segment's
scan and is listed in ``Run.problems`` with the file and byte offset; everything before it is returned.
"""
from __future__ import annotations

import heapq
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import msgpack

from .digest import AgentDigests, run_digest
from .framing import FrameProblem, iter_payloads, read_header
from .kinds import ROWS_KEY, expand_rows, rows_problem

MANIFEST = "manifest.json"
EVENTS_DIR = "events"


class Event:
    """One event: ``t``, ``agent``, ``seq``, ``kind``, and its kind's fields as attributes (or ``fields``)."""

    __slots__ = ("t", "agent", "seq", "kind", "fields")

    def __init__(self, t: float, agent: str, seq: int, kind: str, fields: dict[str, Any]) -> None:
        self.t = t
        self.agent = agent
        self.seq = seq
        self.kind = kind
        self.fields = fields

    def __getattr__(self, name: str) -> Any:
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(f"{self.kind} event has no field {name!r}") from None

    def get(self, name: str, default: Any = None) -> Any:
        return self.fields.get(name, default)

    @property
    def key(self) -> tuple[float, str, int]:
        return (self.t, self.agent, self.seq)

    def as_dict(self) -> dict[str, Any]:
        return {"t": self.t, "agent": self.agent, "seq": self.seq, "kind": self.kind, **self.fields}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Event) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        extra = ", ".join(f"{k}={v!r}" for k, v in self.fields.items())
        return f"Event(t={self.t:.6f}, agent={self.agent!r}, seq={self.seq}, kind={self.kind!r}{', ' if extra else ''}{extra})"


@dataclass(frozen=True)
class SegmentProblem:
    """Damage found in a segment file: the file, the byte offset, and what is wrong there."""

    file: str
    offset: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file} at byte {self.offset}: {self.reason}"


class Run:
    """A run directory: its manifest and its events in canonical order."""

    def __init__(self, run_dir: str | Path) -> None:
        self.dir = Path(run_dir)
        if not self.dir.is_dir():
            raise FileNotFoundError(f"{self.dir}: no such run directory")
        self._problems: list[SegmentProblem] = []
        mpath = self.dir / MANIFEST
        self.manifest: dict[str, Any] = {}
        if mpath.exists():
            try:
                self.manifest = json.loads(mpath.read_text())
            except (ValueError, OSError) as err:
                self._problems.append(SegmentProblem(MANIFEST, 0, f"unreadable manifest: {err}"))
        else:
            self._problems.append(SegmentProblem(MANIFEST, 0, "missing manifest"))
        self._scanned = False

    @property
    def problems(self) -> list[SegmentProblem]:
        """Damage found in the manifest or the segments (each segment is scanned once, on first access)."""
        self._scan()
        return self._problems

    # -- identity -----------------------------------------------------------------------------------------
    @property
    def complete(self) -> bool:
        """True when the run finished and every segment read back intact."""
        self._scan()
        return bool(self.manifest.get("complete")) and not self.problems

    @property
    def digest(self) -> str | None:
        """The digest recorded in the manifest (None for an incomplete run)."""
        return self.manifest.get("events", {}).get("digest")

    def segment_files(self) -> dict[str, list[Path]]:
        """Segment files per writer, in index order."""
        by_writer: dict[str, list[Path]] = {}
        edir = self.dir / EVENTS_DIR
        for p in sorted(edir.glob("*.seg")) if edir.is_dir() else []:
            by_writer.setdefault(p.stem.rsplit("-", 1)[0], []).append(p)
        return by_writer

    # -- raw records --------------------------------------------------------------------------------------
    def _records(self, files: list[Path], problems: list[SegmentProblem]) -> Iterator[tuple[bytes, list]]:
        for path in files:
            rel = f"{EVENTS_DIR}/{path.name}"
            try:
                buf = path.read_bytes()
                _meta, offset = read_header(buf)
            except (OSError, ValueError) as err:
                problems.append(SegmentProblem(rel, 0, str(err)))
                continue
            for item in iter_payloads(buf, offset):
                if isinstance(item, FrameProblem):
                    problems.append(SegmentProblem(rel, item.offset, item.reason))
                    break
                pos, payload = item
                try:
                    rec = msgpack.unpackb(payload, use_list=True)
                    ok = isinstance(rec, list) and len(rec) == 5
                except Exception as err:  # msgpack raises several types on bad bytes
                    ok, rec = False, err
                if not ok:
                    problems.append(SegmentProblem(rel, pos, f"undecodable record: {rec!r}"[:200]))
                    break
                bad_rows = rows_problem(rec[4])
                if bad_rows is not None:
                    problems.append(SegmentProblem(rel, pos, f"undecodable record: {bad_rows}"[:200]))
                    break
                yield payload, rec

    def _scan(self) -> None:
        """Read every record once to find damage (so ``complete`` and ``problems`` are known up front)."""
        if self._scanned:
            return
        self._scanned = True
        problems: list[SegmentProblem] = []
        for files in self.segment_files().values():
            for _ in self._records(files, problems):
                pass
        self._problems.extend(problems)

    def events(self, kinds: Iterable[str] | None = None) -> Iterator[Event]:
        """All readable events in canonical order (t, agent, seq); optionally only some kinds."""
        self._scan()
        wanted = set(kinds) if kinds is not None else None
        streams = []
        for files in self.segment_files().values():
            streams.append(self._events_of(files, wanted))
        for _key, ev in heapq.merge(*streams, key=lambda x: x[0]):
            yield ev

    def _events_of(self, files: list[Path], wanted: set[str] | None) -> Iterator[tuple[tuple, Event]]:
        for _payload, rec in self._records(files, []):
            t, agent, seq, kind, fields = rec
            if wanted is None or kind in wanted:
                if type(fields) is dict and ROWS_KEY in fields:  # a record written in rows: an event a row
                    for row in expand_rows(fields):
                        yield (t, agent, seq), Event(t, agent, seq, kind, row)
                else:
                    yield (t, agent, seq), Event(t, agent, seq, kind, fields)

    def compute_digest(self) -> str:
        """Recompute the digest from the segment bytes (to check them against the manifest)."""
        d = AgentDigests()
        for files in self.segment_files().values():
            for payload, rec in self._records(files, []):
                d.update(rec[1], payload)
        return run_digest(d.hexdigests())

    def count(self) -> int:
        return sum(1 for files in self.segment_files().values() for _ in self._records(files, []))

    # -- tables -------------------------------------------------------------------------------------------
    def to_arrow(self, kinds: Iterable[str] | None = None):
        """The events as a ``pyarrow.Table``: t, agent, seq, kind, then one column per field name (null where a
        kind lacks it). A field whose values mix types across kinds becomes a JSON string column."""
        import pyarrow as pa

        cols: dict[str, list] = {"t": [], "agent": [], "seq": [], "kind": []}
        n = 0
        for ev in self.events(kinds):
            cols["t"].append(ev.t)
            cols["agent"].append(ev.agent)
            cols["seq"].append(ev.seq)
            cols["kind"].append(ev.kind)
            for k, v in ev.fields.items():
                col = cols.get(k)
                if col is None:
                    col = cols[k] = [None] * n
                col.append(v)
            n += 1
            for col in cols.values():
                if len(col) < n:
                    col.append(None)
        arrays = {}
        for name, values in cols.items():
            try:
                arrays[name] = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                arrays[name] = pa.array([None if v is None else json.dumps(v, default=_json_default) for v in values])
        return pa.table(arrays)

    def to_pandas(self, kinds: Iterable[str] | None = None):
        return self.to_arrow(kinds).to_pandas()


def _json_default(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return str(v)


def open_run(run_dir: str | Path) -> Run:
    """Open a run directory (complete or not) for reading."""
    return Run(run_dir)
