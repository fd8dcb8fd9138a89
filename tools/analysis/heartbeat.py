"""The heartbeat model's figures (the kernel's own model, :mod:`clusteremu.agents.heartbeat`): sessions and heartbeat gaps.

* ``sessions``: expiries per member, restores, and the outages between them;
* ``heartbeats``: sent, received, lost, and the gap between consecutive heartbeats of a member as the monitor
  saw them (``heartbeat_received.gap_s``), overall and per member, with the gaps longer than the session
  timeout of the scenario.

GC pauses and faults are among the figures every trace has (:mod:`clusteremu.tools.analysis.common`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import numpy as np
import pandas as pd

from clusteremu.tools.spark.routing import Key

from .common import PART_BASE, counts_by
from .model import Headline, ModelFigures, Part, PartResult, RunParams, absent, declared_schema
from .runs import scenario_value
from .stats import distribution

if TYPE_CHECKING:
    from clusteremu.tools.report import Panel

#: Only the fields the figures read (``heartbeat_sent`` is only counted: the decoder tallies it), typed as the
#: declarations say (:mod:`clusteremu.agents.heartbeat.monitor`).
SCHEMA = declared_schema(
    {
        "heartbeat_received": ("member", "n", "gap_s"),
        "session_expired": ("member", "silent_s"),
        "session_restored": ("member",),
    },
    system="heartbeat",
)


def key_member(rows: pd.DataFrame) -> pd.Series:
    return rows["member"]


def session_timeout(scenario: Mapping[str, Any]) -> float | None:
    """The scenario's ``workload.session_timeout_s``, or None when it has none."""
    value = scenario_value(dict(scenario), "workload.session_timeout_s")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def session_outages(rows: pd.DataFrame, *, end: float) -> dict[str, Any]:
    """Outages from ``session_expired`` / ``session_restored`` events (canonical order; columns ``t``,
    ``kind``, ``member``): each expiry lasts until that member's next restore, or to ``end`` (then it is
    ``unrestored``). ``total_s`` and ``max_s`` are over all outages; ``list`` gives each one."""
    outages = []
    open_since: dict[str, float] = {}
    for t, kind, member in zip(rows["t"].to_numpy(dtype=float), rows["kind"], rows["member"]):
        if kind == "session_expired" and member not in open_since:
            open_since[member] = t
        elif kind == "session_restored" and member in open_since:
            start = open_since.pop(member)
            outages.append({"member": member, "expired_s": start, "restored_s": t, "outage_s": t - start})
    for member, start in sorted(open_since.items()):
        outages.append({"member": member, "expired_s": start, "restored_s": None, "outage_s": max(end - start, 0.0)})
    outages.sort(key=lambda o: (o["expired_s"], o["member"]))
    lengths = [o["outage_s"] for o in outages]
    out = {
        "count": len(outages),
        "unrestored": sum(1 for o in outages if o["restored_s"] is None),
        "total_s": float(np.sum(lengths)) if lengths else 0.0,
        "max_s": float(np.max(lengths)) if lengths else None,
        "list": outages,
    }
    if not lengths:
        absent(out, "max_s", "no session expired")
    return out


def sessions_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    expired = rows[rows["kind"] == "session_expired"]
    return PartResult(
        {
            "outages": session_outages(rows, end=params.end),
            "silent_s": distribution(expired["silent_s"].to_numpy(dtype=float)),
            "window": int((expired["t"].to_numpy(dtype=float) >= params.window_start).sum()),
        }
    )


def gaps_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    """The gap distribution overall, per member and over the settle window; gaps over the session timeout;
    and the ``heartbeat_gaps`` table (``t``, ``member``, ``n``, ``gap_s``)."""
    gaps = rows["gap_s"].to_numpy(dtype=float)
    win = rows["t"].to_numpy(dtype=float) >= params.window_start
    timeout = session_timeout(params.scenario)
    figures = {
        "gap_s": {**distribution(gaps), "window": distribution(gaps[win])},
        "by_member": {str(m): distribution(g["gap_s"].to_numpy(dtype=float)) for m, g in rows.groupby("member", sort=True)},
        "session_timeout_s": timeout,
        "gaps_over_timeout": int((gaps > timeout).sum()) if timeout is not None else None,
    }
    table = rows[["t", "member", "n", "gap_s"]].reset_index(drop=True)
    return PartResult(figures, {"heartbeat_gaps": table})


class HeartbeatFigures(ModelFigures):
    """The heartbeat model's figures, tables and report panel (the ``figures`` target of the ``heartbeat`` system)."""

    model = "heartbeat"
    schema = SCHEMA
    marker_kinds = ("session_expired", "session_restored")
    headline = (
        Headline("session expiries", "sessions.expiries"),
        Headline("outage total (s)", "sessions.outages.total_s", "s"),
        Headline("gap p99 (s)", "heartbeats.gap_s.p99", "s"),
        Headline("gap max (s)", "heartbeats.gap_s.max", "s"),
        Headline("gaps over timeout", "heartbeats.gaps_over_timeout"),
        Headline("heartbeats lost", "heartbeats.lost"),
        Headline("GC pauses", "gc_pauses.count"),
        Headline("GC max (s)", "gc_pauses.max_s", "s"),
    )

    def tally_keys(self) -> dict[str, Key]:
        member = Key(key_member, ("member",))
        return {"heartbeat_received": member, "session_expired": member, "session_restored": member}

    def parts(self) -> list[Part]:
        return [
            Part("sessions", ("session_expired", "session_restored"), PART_BASE + ("member", "silent_s"), sessions_part),
            Part("gaps", ("heartbeat_received",), PART_BASE + ("member", "n", "gap_s"), gaps_part),
        ]

    def figures(self, tally: pd.DataFrame, parts: Mapping[str, Mapping[str, Any]], params: RunParams) -> dict[str, Any]:
        expired = tally[tally["kind"] == "session_expired"]
        restored = tally[tally["kind"] == "session_restored"]
        received = tally[tally["kind"] == "heartbeat_received"]
        sent = tally[tally["kind"] == "heartbeat_sent"]
        n_sent, n_received = int(sent["count"].sum()), int(received["count"].sum())
        sessions, gaps = parts.get("sessions", {}), parts.get("gaps", {})
        figures = {
            "sessions": {
                "expiries": int(expired["count"].sum()),
                "by_member": counts_by(expired, "key"),
                "restores": int(restored["count"].sum()),
                "silent_s_max": sessions.get("silent_s", {}).get("max"),
                "window": sessions.get("window", 0),
                "outages": sessions.get("outages", {}),
            },
            "heartbeats": {
                "sent": n_sent,
                "received": n_received,
                "lost": n_sent - n_received,
                "sent_by_member": counts_by(sent, "agent"),
                "received_by_member": counts_by(received, "key"),
                "gap_s": gaps.get("gap_s", {}),
                "gap_s_by_member": gaps.get("by_member", {}),
                "session_timeout_s": gaps.get("session_timeout_s", session_timeout(params.scenario)),
                "gaps_over_timeout": gaps.get("gaps_over_timeout"),
            },
        }
        if figures["heartbeats"]["gaps_over_timeout"] is None:
            absent(figures["heartbeats"], "gaps_over_timeout", "the scenario sets no workload.session_timeout_s")
        return figures

    def marker_rows(self, rows: pd.DataFrame) -> list[tuple[float, float | None, str, str, str]]:
        out: list[tuple[float, float | None, str, str, str]] = []
        for r in rows.itertuples(index=False):
            if r.kind == "session_expired":
                out.append((float(r.t), None, "session_expired", r.member, f"{r.member} session expired"))
            elif r.kind == "session_restored":
                out.append((float(r.t), None, "session_restored", r.member, f"{r.member} session restored"))
        return out

    def panels(self, tables: Mapping[str, pd.DataFrame], summary: Mapping[str, Any]) -> list["Panel"]:
        from clusteremu.tools.report import Panel

        gaps = tables.get("heartbeat_gaps", pd.DataFrame())
        if gaps.empty:
            return []
        timeout = summary.get("figures", {}).get("heartbeats", {}).get("session_timeout_s")
        hl = [(float(timeout), "session timeout")] if isinstance(timeout, (int, float)) else []
        return [Panel.per_agent("heartbeat_gaps", "Heartbeat gap per member, as the monitor saw it", "s", gaps, "member", "gap_s", hlines=hl)]
