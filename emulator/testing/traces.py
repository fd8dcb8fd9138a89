"""Traces written by hand: a run directory holding exactly the events a test lists.

For exact answers in tests of queries, assertions and analyses, and for models that cannot run yet: the events
go through the real :class:`~clusteremu.emulator.trace.writer.SegmentWriter` and manifest, so the result reads back through
``open_run`` like any run. Each agent's ``seq`` is numbered from 1 in the order its events are listed.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, Union

from clusteremu.emulator.manifest import new_manifest, write_manifest
from clusteremu.emulator.trace.digest import run_digest
from clusteremu.emulator.trace.reader import Run, open_run
from clusteremu.emulator.trace.writer import SegmentWriter

#: An event to write: ``(t, agent, kind)`` or ``(t, agent, kind, fields)``, or a mapping with keys
#: ``t``, ``agent``, ``kind`` and the fields.
EventSpec = Union[Sequence[Any], Mapping[str, Any]]

#: Model name recorded in the manifest of a hand-made run (no real model, so no model is imported for it).
HANDMADE_MODEL = "handmade"


def write_run(
    run_dir: str | os.PathLike,
    events: Iterable[EventSpec],
    *,
    name: str = "handmade",
    model: str = HANDMADE_MODEL,
    seed: int = 1,
    until: float | None = None,
    complete: bool = True,
) -> Run:
    """Write ``events`` as a run into ``run_dir`` (new or empty) and open it.

    ``until`` defaults to the last event's time; ``complete=False`` leaves the manifest as a killed run's.
    """
    run_dir = Path(run_dir)
    if run_dir.exists() and (not run_dir.is_dir() or any(run_dir.iterdir())):
        raise FileExistsError(f"{run_dir}: exists and is not empty (nothing is overwritten)")
    run_dir.mkdir(parents=True, exist_ok=True)
    rows: list[tuple] = []
    seqs: dict[str, int] = {}
    for spec in events:
        t, agent, kind, fields = _parse(spec)
        seqs[agent] = seqs.get(agent, 0) + 1
        rows.append((float(t), agent, seqs[agent], kind, fields))
    end = until if until is not None else max((r[0] for r in rows), default=0.0)
    scenario = {"scenario": {"name": name, "model": model, "duration_s": end, "seed": seed}}
    manifest = new_manifest(scenario, f"<hand-made trace {name!r}>", seed, end, {"mode": "handmade", "workers": 1})
    write_manifest(run_dir, manifest)
    writer = SegmentWriter(run_dir / "events", "w000")
    writer.write(rows)
    summary = writer.close()
    manifest["complete"] = complete
    manifest["events"] = {"count": summary.count, "rows": summary.rows, "digest": run_digest(summary.agent_digests),
                          "writers": {summary.writer: {"count": summary.count, "segments": summary.segments}}}
    write_manifest(run_dir, manifest)
    return open_run(run_dir)


def _parse(spec: EventSpec) -> tuple[float, str, str, dict[str, Any]]:
    if isinstance(spec, Mapping):
        d = dict(spec)
        try:
            return d.pop("t"), d.pop("agent"), d.pop("kind"), d
        except KeyError as err:
            raise ValueError(f"hand-made event {spec!r} lacks {err.args[0]!r}") from None
    if len(spec) == 3:
        t, agent, kind = spec
        return t, agent, kind, {}
    if len(spec) == 4:
        t, agent, kind, fields = spec
        return t, agent, kind, dict(fields)
    raise ValueError(f"hand-made event {spec!r}: expected (t, agent, kind[, fields]) or a mapping")
