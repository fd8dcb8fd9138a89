"""The Spark job of every analysis, and the figures every trace has whatever its model.

:func:`run_job` is the job (see :mod:`clusteremu.tools.analysis.model`); the common figures are ``events`` (total and per
kind), ``gc_pauses``, ``faults`` and ``dropped_messages``, with the common parts ``gc`` (pause distribution,
``gc_pauses`` table) and ``markers`` (``markers`` table, fault list).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pandas as pd
import pyarrow as pa

from clusteremu.tools.spark.routing import PROBLEMS, TALLY, Key, Route, TallySpec, merge_tallies, payload_table, read_routed, serialize
from clusteremu.tools.spark.segments import EventSchema, Problem

from .encoding import dumps
from .model import Part, PartResult, RunParams, declared_schema
from .stats import distribution

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: The kernel's kinds (emulator/trace/kinds.py, emulator/faults.py) that the common figures read, typed as declared.
COMMON_SCHEMA = declared_schema(
    {
        "stw_pause": ("duration_s", "cause"),
        "fault_begin": ("fault", "index", "label"),
        "fault_end": ("fault", "index", "label"),
        "message_dropped": ("reason",),
        "agent_stopped": ("reason",),
    }
)

MARKER_COLUMNS = ["t", "end_t", "kind", "agent", "label"]
#: Columns every part sees, before its own.
PART_BASE = ("t", "agent", "seq", "kind")


def key_cause(rows: pd.DataFrame) -> pd.Series:
    return rows["cause"]


def key_fault(rows: pd.DataFrame) -> pd.Series:
    return rows["fault"]


def key_reason(rows: pd.DataFrame) -> pd.Series:
    return rows["reason"]


#: How the kinds of the common figures are split in the tally.
COMMON_KEYS = {
    "stw_pause": Key(key_cause, ("cause",)),
    "fault_begin": Key(key_fault, ("fault",)),
    "message_dropped": Key(key_reason, ("reason",)),
    "agent_stopped": Key(key_reason, ("reason",)),
}


@dataclass
class JobResult:
    """What the job returns: the tally (``_run``, ``kind``, ``agent``, ``key``, ``count``, ``first_t``, ``last_t``,
    ``duration_total``, ``duration_max`` and the extras), the problems, and every part's result."""

    counts: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)
    parts: dict[tuple[int, str], PartResult] = field(default_factory=dict)


def run_job(
    spark: "SparkSession",
    run_dirs: Sequence[Any],
    schema: EventSchema,
    parts: Sequence[Part],
    tally: TallySpec,
    params: Mapping[int, RunParams],
    events: "DataFrame | None" = None,
) -> JobResult:
    """Decode (or take ``events``), tally and compute every part of every run in one Spark job."""
    routes = [Route(p.name, p.kinds, tuple(dict.fromkeys(("_run", *PART_BASE, *p.columns)))) for p in parts]
    routed = read_routed(spark, run_dirs, schema, routes, tally, events)
    functions = {p.name: p.compute for p in parts}
    params = dict(params)

    def compute(pdf: pd.DataFrame) -> pd.DataFrame:
        run, part = int(pdf["_run"].iloc[0]), str(pdf["_part"].iloc[0])
        table = payload_table(pdf["payload"])
        if part == TALLY:
            out = [(run, part, "counts", serialize(merge_tallies([table], tally)))]
        elif part == PROBLEMS:
            out = [(run, part, "problems", serialize(table))]
        else:
            # Canonical order, sorted by Arrow before the conversion: about twice as fast as pandas' sort.
            table = table.drop_columns(["_run"]).sort_by([("t", "ascending"), ("agent", "ascending"), ("seq", "ascending")])
            rows = table.to_pandas()
            out = encode_result(run, part, functions[part](rows, params[run]))
        return pd.DataFrame(out, columns=["_run", "_part", "name", "payload"])

    collected = routed.groupBy("_run", "_part").applyInPandas(compute, "_run int, _part string, name string, payload binary").collect()
    counts, problems, results = [], [], {}
    for r in collected:
        run, part, name, payload = r["_run"], r["_part"], r["name"], bytes(r["payload"])
        if part == TALLY:
            counts.append(pa.ipc.open_stream(payload).read_all().to_pandas().assign(_run=run))
        elif part == PROBLEMS:
            t = pa.ipc.open_stream(payload).read_all().to_pandas()
            problems += [Problem(run, f, int(o), reason) for f, o, reason in zip(t["_problem_file"], t["_problem_offset"], t["_problem_reason"])]
        else:
            res = results.setdefault((run, part), PartResult())
            if name == "":
                res.figures = json.loads(payload.decode())
            else:
                res.tables[name] = pa.ipc.open_stream(payload).read_all().to_pandas()
    # A run without rows of some part still gets that part's figures, computed on no rows.
    for run in params:
        for p in parts:
            if (run, p.name) not in results:
                results[(run, p.name)] = p.compute(empty_rows(p, schema), params[run])
    columns = ["_run", "kind", "agent", "key", "count", "first_t", "last_t", "duration_total", "duration_max", *tally.extras]
    table = pd.concat(counts, ignore_index=True)[columns] if counts else pd.DataFrame(columns=columns)
    problems.sort(key=lambda p: (p.run, p.file, p.offset))
    return JobResult(table, problems, results)


def encode_result(run: int, part: str, result: PartResult) -> list[tuple[int, str, str, bytes]]:
    """A part's result as rows of (run, part, name, payload): the figures as JSON under the name "", each
    table as an Arrow IPC stream under its name."""
    rows = [(run, part, "", dumps(result.figures, indent=None).encode())]
    for name, table in result.tables.items():
        rows.append((run, part, name, serialize(pa.Table.from_pandas(table, preserve_index=False))))
    return rows


def empty_rows(part: Part, schema: EventSchema) -> pd.DataFrame:
    """No rows, with the columns (and pandas types) the part's function receives."""
    types = dict(schema.columns)
    cols = tuple(dict.fromkeys((*PART_BASE, *part.columns)))
    return pa.table({c: pa.array([], types.get(c, pa.string())) for c in cols}).to_pandas()


# -- the common parts -------------------------------------------------------------------------------------------
def gc_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    """Stop-the-world pauses: their length distribution over the run and the settle window, and the table."""
    d = rows["duration_s"].to_numpy(dtype=float)
    win = rows["t"].to_numpy(dtype=float) >= params.window_start
    table = rows[["t", "agent", "duration_s", "cause"]].reset_index(drop=True)
    return PartResult({"run": distribution(d), "window": distribution(d[win])}, {"gc_pauses": table})


def markers_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    """The run's markers — scheduled faults (a span from begin to end), stopped agents, and the model's own —
    and its list of faults."""
    from clusteremu.tools.analysis import figures_for

    faults = fault_list(rows)
    marks: list[tuple[float, float | None, str, str, str]] = []
    for f in faults:
        marks.append((f["start_s"], f["end_s"], "fault", "faults", f["label"] or f["fault"]))
    for r in rows[rows["kind"] == "agent_stopped"].itertuples(index=False):
        marks.append((float(r.t), None, "agent_stopped", r.agent, f"{r.agent} stopped ({r.reason})"))
    marks += figures_for(params.model).marker_rows(rows)
    marks.sort(key=lambda m: (m[0], m[2]))
    table = pd.DataFrame(
        {
            "t": pd.Series([m[0] for m in marks], dtype=float),
            "end_t": pd.Series([m[1] for m in marks], dtype=float),
            "kind": pd.Series([m[2] for m in marks], dtype=object),
            "agent": pd.Series([m[3] for m in marks], dtype=object),
            "label": pd.Series([m[4] for m in marks], dtype=object),
        }
    )
    return PartResult({"faults": faults}, {"markers": table})


def common_parts(marker_kinds: Sequence[str], marker_columns: Sequence[str]) -> list[Part]:
    """The parts every analysis has; the markers part also reads the model's marker kinds and their columns."""
    return [
        Part("gc", ("stw_pause",), PART_BASE + ("duration_s", "cause"), gc_part),
        Part(
            "markers",
            tuple(dict.fromkeys(("fault_begin", "fault_end", "agent_stopped", *marker_kinds))),
            tuple(dict.fromkeys(PART_BASE + ("fault", "index", "label", "reason", *marker_columns))),
            markers_part,
        ),
    ]


def fault_list(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """The scheduled faults of a run: ``index``, ``fault``, ``label``, ``start_s`` and ``end_s`` (null while it
    never ended), from its ``fault_begin`` / ``fault_end`` events."""
    begins = rows[rows["kind"] == "fault_begin"]
    ends = rows[rows["kind"] == "fault_end"]
    end_of = {int(i): float(t) for i, t in zip(ends["index"], ends["t"]) if pd.notna(i)}
    out = []
    for r in begins.itertuples(index=False):
        idx = int(r.index) if pd.notna(r.index) else -1
        out.append(
            {
                "index": idx,
                "fault": r.fault if isinstance(r.fault, str) else "",
                "label": r.label if isinstance(r.label, str) else "",
                "start_s": float(r.t),
                "end_s": end_of.get(idx),
            }
        )
    return out


# -- figures from the tally (driver side) -----------------------------------------------------------------------
def counts_by(rows: pd.DataFrame, column: str, value: str = "count") -> dict[str, int]:
    """Sum of ``value`` per distinct ``column`` of tally rows, by name."""
    if rows.empty:
        return {}
    g = rows.groupby(rows[column].fillna(""), sort=True)[value].sum()
    return {str(k): int(v) for k, v in g.items()}


def common_figures(tally_rows: pd.DataFrame, parts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``events`` (total and by kind), ``gc_pauses``, ``faults`` and ``dropped_messages`` of one run."""
    pauses = tally_rows[tally_rows["kind"] == "stw_pause"]
    gc = parts.get("gc", {})
    run, win = gc.get("run", distribution([])), gc.get("window", distribution([]))
    by_cause = {}
    for cause, g in pauses.groupby(pauses["key"].fillna(""), sort=True):
        by_cause[str(cause)] = {"count": int(g["count"].sum()), "total_s": float(g["duration_total"].sum()), "max_s": float(g["duration_max"].max())}
    by_agent = {}
    for agent, g in pauses.groupby("agent", sort=True):
        by_agent[str(agent)] = {"count": int(g["count"].sum()), "total_s": float(g["duration_total"].sum()), "max_s": float(g["duration_max"].max())}
    drops = tally_rows[tally_rows["kind"] == "message_dropped"]
    return {
        "events": {"total": int(tally_rows["count"].sum()), "by_kind": counts_by(tally_rows, "kind")},
        "gc_pauses": {
            "count": int(pauses["count"].sum()),
            "total_s": float(pauses["duration_total"].sum()) if len(pauses) else 0.0,
            "max_s": run["max"],
            "p50_s": run["p50"],
            "p99_s": run["p99"],
            "window": {"count": win["count"], "total_s": win["total"], "max_s": win["max"], "p99_s": win["p99"]},
            "by_cause": by_cause,
            "by_agent": by_agent,
        },
        "faults": parts.get("markers", {}).get("faults", []),
        "dropped_messages": {"count": int(drops["count"].sum()), "by_reason": counts_by(drops, "key")},
    }
