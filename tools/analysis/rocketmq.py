"""RocketMQ's figures: who consumed which queue when, and what consumer load balancing cost, from the trace.

The vocabulary is the model's event declarations (``agents/rocketmq/{namesrv,broker,consumer}.py``); the rules
are those of its trace views (see :mod:`.rocketmq_parts`); docs/analysis.md, *RocketMQ figures*, defines every
figure. Two parts, one run at a time in the executors:

* ``allocation``: holdings, overlap (a queue held in PULL mode by two consumers or more) and orphan (an existing
  queue held by nobody) windows per queue and in total, membership changes with the time to a stable allocation,
  the queues each moved and the skew it settled on, and lag (from the brokers' ``queue_stats``) per queue, in
  total and per consumer;
* ``consumption``: messages consumed, and consumed twice.

:class:`RocketMQFigures` is the ``figures`` target of the ``rocketmq`` system; ``OPTIONS`` its analysis options
(``change_merge_s``, flag ``--change-merge-s``), ``SCHEMA`` the fields it reads, typed by the declarations;
:func:`run_figures` computes the parts' figures of a run without Spark (for tests). The rating is
:mod:`.rocketmq_rating`.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from clusteremu.tools.spark.routing import Key
from clusteremu.tools.spark.segments import EventSchema

from .common import PART_BASE, counts_by
from .model import Headline, ModelFigures, Part, RunParams, declared_schema
from .options import Option
from .rocketmq_parts import ALL_QUEUES, allocation_part, consumption_part, prefix

if TYPE_CHECKING:
    from clusteremu.tools.report import Panel

#: Only the fields the figures read, typed as the model declares them.
SCHEMA = declared_schema(
    {
        "queues_created": ("broker", "subscription", "queues", "rate_per_queue"),
        "consumer_started": ("cid",),
        "queue_taken": ("queue", "cid", "mode"),
        "queue_dropped": ("queue", "cid", "mode", "reason"),
        "queue_stats": ("queue", "lag"),
        "consume_progress": ("queue", "mode", "consumed", "offset", "ranges"),
        "pop_revived": ("queue", "messages"),
        "rebalance_result": ("trigger", "changed", "balanced"),
        "rebalances_unchanged": ("runs",),
        "rebalance_skipped": ("reason",),
        "channel_expired": ("cid",),
        "consumer_ids_changed_notified": ("cause",),
        "agent_stopped": ("reason",),
    },
    system="rocketmq",
).merged(EventSchema({"consume_progress": {"ranges": "pairs"}}))  # read as a list of [from, to) offset pairs

#: RocketMQ's analysis options (docs/analysis.md, *RocketMQ figures*).
OPTIONS = (
    # A scale-out or a rolling restart starts its consumers seconds apart: one change, not several.
    Option("change_merge_s", 15.0, "membership events (consumers or brokers starting or stopping) at most this many "
           "seconds apart are one change", "--change-merge-s", "S"),
)

#: Kinds of the allocation part (holdings, queues, lives, changes, lag) and of the consumption part.
ALLOCATION_KINDS = ("queues_created", "consumer_started", "queue_taken", "queue_dropped", "agent_stopped", "queue_stats")
CONSUMPTION_KINDS = ("consume_progress", "pop_revived")


def key_reason(rows: pd.DataFrame) -> pd.Series:
    return rows["reason"]


def key_trigger(rows: pd.DataFrame) -> pd.Series:
    return rows["trigger"].fillna("") + ":" + rows["changed"].map({True: "changed", False: "unchanged"}).fillna("")


def key_cause(rows: pd.DataFrame) -> pd.Series:
    return rows["cause"]


class RocketMQFigures(ModelFigures):
    """RocketMQ's figures, tables and report panels (the ``figures`` target of the ``rocketmq`` system)."""

    model = "rocketmq"
    schema = SCHEMA
    marker_kinds = ("consumer_started", "channel_expired")
    options = OPTIONS
    headline = (
        Headline("overlap after start-up (queue-s)", "overlap.after_start_s", "s"),
        Headline("orphan after start-up (queue-s)", "orphan.after_start_s", "s"),
        Headline("consumed twice (msg)", "duplicates.total"),
        Headline("lag p99 (msg)", "lag.p99"),
        Headline("lag max (msg)", "lag.max"),
        Headline("lag p99 (s of production)", "lag.p99_s", "s"),
        Headline("membership changes", "changes.count"),
        Headline("time to stable max (s)", "changes.time_to_stable_s.max", "s"),
        Headline("never stable", "changes.never_stable"),
        Headline("queues moved per change (mean)", "changes.net_moved.mean"),
        Headline("final skew (max/min queues)", "skew.final.skew"),
    )

    def tally_keys(self) -> dict[str, Key]:
        return {
            "queue_dropped": Key(key_reason, ("reason",)),
            "rebalance_result": Key(key_trigger, ("trigger", "changed")),
            "rebalance_skipped": Key(key_reason, ("reason",)),
            "consumer_ids_changed_notified": Key(key_cause, ("cause",)),
        }

    def tally_extras(self) -> dict[str, tuple[str, str]]:
        return {"runs": ("runs", "sum")}  # the timer rebalances a rebalances_unchanged record counts

    def parts(self) -> list[Part]:
        return [
            Part("allocation", ALLOCATION_KINDS, PART_BASE + ("broker", "subscription", "queues", "rate_per_queue", "queue",
                                                               "mode", "reason", "lag"), allocation_part),
            Part("consumption", CONSUMPTION_KINDS, PART_BASE + ("queue", "mode", "consumed", "offset", "ranges", "messages"),
                 consumption_part),
        ]

    def figures(self, tally: pd.DataFrame, parts: Mapping[str, Mapping[str, Any]], params: RunParams) -> dict[str, Any]:
        alloc = dict(parts.get("allocation", {}))
        dups = dict(parts.get("consumption", {}).get("duplicates", {}))

        def rows(kind: str) -> pd.DataFrame:
            return tally[tally["kind"] == kind]

        rebalances = rows("rebalance_result")
        by_trigger = counts_by(rebalances, "key")
        # timer rebalances counted instead of written (workload.trace_unchanged_rebalances = false) are the results
        # "timer:unchanged" they stand for
        unchanged = int(rows("rebalances_unchanged")["runs"].fillna(0).sum())
        if unchanged:
            by_trigger["timer:unchanged"] = by_trigger.get("timer:unchanged", 0) + unchanged
            by_trigger = dict(sorted(by_trigger.items()))
        per_queue = alloc.get("queues", {}).get("per_queue", {})
        for q, d in dups.get("by_queue", {}).items():
            per_queue.setdefault(q, {})["duplicates"] = d
        return {
            **alloc,
            "duplicates": dups,
            "rebalances": {
                "count": int(rebalances["count"].sum()) + unchanged,
                "by_trigger": by_trigger,
                "skipped": counts_by(rows("rebalance_skipped"), "key"),
                "notifications": counts_by(rows("consumer_ids_changed_notified"), "key"),
                "channels_expired": int(rows("channel_expired")["count"].sum()),
            },
            "drops_by_reason": counts_by(rows("queue_dropped"), "key"),
        }

    def marker_rows(self, rows: pd.DataFrame) -> list[tuple[float, float | None, str, str, str]]:
        out: list[tuple[float, float | None, str, str, str]] = []
        for r in rows.itertuples(index=False):
            if r.kind == "consumer_started":
                out.append((float(r.t), None, "consumer_started", r.agent, f"{r.agent} started"))
            elif r.kind == "channel_expired":
                out.append((float(r.t), None, "channel_expired", r.agent, f"{r.agent} expired {r.cid}"))
        return out

    def panels(self, tables: Mapping[str, pd.DataFrame], summary: Mapping[str, Any]) -> list["Panel"]:
        return [p for p in (ownership_panel(tables), windows_panel(tables), consumer_lag_panel(tables), total_lag_panel(tables))
                if p is not None]


# -- report panels ---------------------------------------------------------------------------------------------------------
def ownership_panel(tables: Mapping[str, pd.DataFrame]) -> "Panel | None":
    """Queue × time, coloured by owner from take to drop (a POP ``-1`` assignment covers every queue of its
    broker), queues in their order (``queue_figures.index``); overlap and orphan windows hatched over them."""
    from clusteremu.tools.report import Panel

    holds, windows, queues = (tables.get(n, pd.DataFrame()) for n in ("holdings", "allocation_windows", "queue_figures"))
    if holds.empty or queues.empty:
        return None
    order = queues.sort_values("index", kind="stable")["queue"].astype(str).tolist()
    spans = []
    for q, c, a, b in zip(holds["queue"], holds["consumer"], holds["start"], holds["end"]):
        targets = [k for k in order if k.startswith(prefix(q))] if q.endswith("/" + ALL_QUEUES) else [q] if q in order else []
        spans += [(k, float(a), float(b), str(c)) for k in targets]
    spans.sort(key=lambda s: (s[3], s[1]))  # owners' colours in name order
    marks = []
    if not windows.empty:
        for kind in ("overlap", "orphan"):
            w = windows[windows["kind"] == kind]
            marks += [(q, float(a), float(b), kind) for q, a, b in zip(w["queue"], w["start"], w["end"]) if q in order]
    return Panel.span_rows("queue_ownership", "Queue ownership: each queue's owner over time; overlap and orphan windows "
                           "hatched", order, spans, marks)


def windows_panel(tables: Mapping[str, pd.DataFrame]) -> "Panel | None":
    """Every overlap and orphan window as a point: its length at its start (short ones vanish on the timeline)."""
    from clusteremu.tools.report import Panel

    windows = tables.get("allocation_windows", pd.DataFrame())
    if windows.empty:
        return None
    series = {kind: (g["start"].to_numpy(dtype=float), g["seconds"].to_numpy(dtype=float)) for kind, g in windows.groupby("kind", sort=True)}
    return Panel.lines("allocation_windows", "Overlap and orphan windows: length at their start", "window (s)", series, style="points")


def consumer_lag_panel(tables: Mapping[str, pd.DataFrame]) -> "Panel | None":
    """Each consumer's share of the lag, one line each; above the report's line limit, the min, median and max
    over the consumers and the few with the highest lag (:meth:`Panel.per_agent`)."""
    from clusteremu.tools.report import Panel

    lag = tables.get("consumer_lag", pd.DataFrame())
    if lag.empty:
        return None
    return Panel.per_agent("consumer_lag", "Lag per consumer (its queues' lag shared among their holders)", "messages",
                           lag, "consumer", "lag")


def total_lag_panel(tables: Mapping[str, pd.DataFrame]) -> "Panel | None":
    """The group's total lag (Σ over queues) and the part of it on orphaned queues."""
    from clusteremu.tools.report import Panel

    total = tables.get("lag_total", pd.DataFrame())
    if total.empty:
        return None
    t = total["t"].to_numpy(dtype=float)
    return Panel.lines("lag_total", "Group lag (sum over queues) and lag of orphaned queues", "messages",
                       {"total": (t, total["lag"].to_numpy(dtype=float)), "orphaned queues": (t, total["orphan_lag"].to_numpy(dtype=float))})


# -- without Spark ----------------------------------------------------------------------------------------------------------
def part_rows(run_dir: str | Path, part: Part) -> pd.DataFrame:
    """The rows ``part`` receives in the Spark job, read with the kernel's reader: its kinds' events in canonical
    order, its columns (a field of another kind, or one the schema does not read, null)."""
    from clusteremu.emulator.trace import open_run

    cols = [c for c in part.columns if c not in PART_BASE]
    recs = []
    for e in open_run(run_dir).events():
        if e.kind in part.kinds:
            read = SCHEMA.kinds.get(e.kind, {})
            recs.append({"t": e.t, "agent": e.agent, "seq": e.seq, "kind": e.kind,
                         **{c: e.fields.get(c) if c in read else None for c in cols}})
    return pd.DataFrame(recs, columns=[*PART_BASE, *cols])


def run_figures(run_dir: str | Path, *, settle_window_s: float = 600.0, change_merge_s: float = OPTIONS[0].default) -> dict[str, Any]:
    """The parts' figures of one RocketMQ run, computed in this process from its trace (no Spark, no tally): what
    a test asserts on (``run_figures(run.dir)["overlap"]["seconds"] == 0``). The run's end is the trace's."""
    from clusteremu.emulator.trace.query import Trace

    end = Trace(run_dir).end
    params = RunParams(RocketMQFigures.model, end, max(0.0, end - settle_window_s),
                       {"settle_window_s": settle_window_s, "change_merge_s": change_merge_s}, {})
    out: dict[str, Any] = {}
    for part in RocketMQFigures().parts():
        out.update(part.compute(part_rows(run_dir, part), params).figures)
    return out
