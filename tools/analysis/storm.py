"""Storm's figures: how the Resource Aware Scheduler served the topologies of a run, from its trace.

The vocabulary is the Storm model's event declarations (``scheduling_round``, ``topology_round``,
``topology_submitted``, ``assignment_changed``, ``topology_evicted``, ``supervisor_dead``, ...); docs/analysis.md
(*Storm figures*) defines every figure. From the tally: assignment changes per reason, workers launched and
killed, requests per result, dead supervisors per cause. From the parts (:mod:`.storm_parts`, one run at a time
in the executors):

* ``schedule``: time from submission to fully scheduled, scheduling failures, pending and running topologies;
* ``cluster``: CPU, memory and slot use and fragmentation at every round;
* ``evictions``: evictions per user and priority, their return, the victims' use of their guarantee;
* ``supervisors``: time to place a dead supervisor's executors again;
* ``network``: the network metric of the placements;
* ``nimbus``: leader elections and time without a leader.

:class:`StormFigures` is the ``figures`` target of the ``storm`` system; Storm's rating is :mod:`.storm_rating`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import numpy as np
import pandas as pd

from clusteremu.tools.spark.routing import Key

from . import load_balance
from .common import PART_BASE, counts_by
from .model import Headline, ModelFigures, Part, PartResult, RunParams, declared_schema
from .storm_parts import (
    cluster_figures,
    eviction_figures,
    network_figures,
    schedule_figures,
    supervisor_figures,
    supervisor_usage,
)

if TYPE_CHECKING:
    from clusteremu.tools.report import Panel

#: Only the fields the figures read (one column per field name across kinds: the Storm model gives each name one
#: type in every kind — ``fully_scheduled`` is a topology's bool, ``topologies_fully_scheduled`` the round's count,
#: ``workers`` a list of workers, ``worker_count`` a number). List fields of dicts or lists (``nodes``, ``workers``,
#: ``components``) cannot be decoded (the decoder reads lists of strings) and are not read.
SCHEMA = declared_schema(
    {
        "topology_submitted": ("topology", "topology_name", "user", "priority"),
        "topology_round": ("round", "topology", "user", "priority", "status", "fully_scheduled", "requested_cpu", "requested_memory_mb"),
        "topology_removed": ("topology",),
        "scheduling_round": (
            "round", "generation", "rebalance", "assignments_changed", "supervisors", "cpu_total", "cpu_used",
            "memory_total_mb", "memory_used_mb", "slots_total", "slots_used", "fragmented_cpu", "fragmented_memory_mb",
            "stranded_cpu", "stranded_memory_mb",
        ),
        "topology_evicted": ("round", "topology", "user", "priority", "by", "by_user", "by_priority", "rolled_back"),
        "assignment_changed": ("round", "topology", "user", "reason", "executors", "assigned_after", "lost", "pairs", "same_worker", "same_node", "same_rack"),
        "supervisor_dead": ("supervisor", "cause", "silent_s", "hosted", "hosted_executors"),
        "nimbus_leader_elected": ("previous",),
        "leader_vacant": ("previous",),
        "worker_killed": ("reason", "topology", "port"),
        "worker_launched": ("topology", "port", "cpu", "memory_mb"),
        "agent_stopped": ("reason",),
        "topology_request": ("op", "result"),
    },
    system="storm",
)

_ROUND = ("round", "topology", "user", "priority", "fully_scheduled")


def schedule_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    figures, tables = schedule_figures(rows, end=params.end, window_start=params.window_start)
    return PartResult(figures, tables)


def cluster_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    figures, tables = cluster_figures(rows, end=params.end, window_start=params.window_start)
    return PartResult(figures, tables)


def evictions_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    figures, tables = eviction_figures(rows, scenario=params.scenario, window_start=params.window_start)
    return PartResult(figures, tables)


def supervisors_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    return PartResult({"supervisors": supervisor_figures(rows)})


def network_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    figures, tables = network_figures(rows)
    return PartResult(figures, tables)


def supervisor_use_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    return PartResult({}, supervisor_usage(rows))


def nimbus_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    # The kernel's leadership figures, with Nimbus's election event in the place of the generic one.
    leader = rows.assign(kind=rows["kind"].replace({"nimbus_leader_elected": "leader_elected"}))
    return PartResult({"nimbus": load_balance.leadership(leader, end=params.end)})


# -- tally keys (pandas, shipped to the executors) ---------------------------------------------------------------
def key_reason(rows: pd.DataFrame) -> pd.Series:
    return rows["reason"]


def key_cause(rows: pd.DataFrame) -> pd.Series:
    return rows["cause"]


def key_request(rows: pd.DataFrame) -> pd.Series:
    """``<op>:<result>`` of a user's request."""
    return rows["op"].fillna("") + ":" + rows["result"].fillna("")


class StormFigures(ModelFigures):
    """Storm's figures, tables and report panels (the ``figures`` target of the ``storm`` system)."""

    model = "storm"
    schema = SCHEMA
    marker_kinds = ("topology_evicted", "supervisor_dead", "nimbus_leader_elected")
    headline = (
        Headline("topologies submitted", "schedule.topologies"),
        Headline("time to schedule, mean (s)", "schedule.time_s.mean", "s"),
        Headline("time to schedule, p50 (s)", "schedule.time_s.p50", "s"),
        Headline("time to schedule, max (s)", "schedule.time_s.max", "s"),
        Headline("never fully scheduled", "schedule.never_scheduled"),
        Headline("failed topology-rounds", "failures.topology_rounds"),
        Headline("rounds with pending topologies", "failures.rounds_with_pending"),
        Headline("evictions", "evictions.count"),
        Headline("evictions within guarantee", "evictions.guarantee.within_guarantee"),
        Headline("dead supervisor rescheduled, max (s)", "supervisors.reschedule_s.max", "s"),
        Headline("cluster CPU use, window mean (%)", "cluster.cpu_used_pct.window.mean", "%"),
        Headline("stranded free CPU, mean (%)", "cluster.stranded_cpu_pct.run.mean", "%"),
        Headline("pairs in one worker, mean (%)", "network.same_worker.mean", "%"),
        Headline("pairs on one node, mean (%)", "network.same_node.mean", "%"),
        Headline("Nimbus leader changes", "nimbus.changes"),
    )

    def tally_keys(self) -> dict[str, Key]:
        return {
            "assignment_changed": Key(key_reason, ("reason",)),
            "worker_killed": Key(key_reason, ("reason",)),
            "supervisor_dead": Key(key_cause, ("cause",)),
            "topology_request": Key(key_request, ("op", "result")),
        }

    def parts(self) -> list[Part]:
        return [
            Part("schedule", ("topology_submitted", "topology_round", "topology_removed"),
                 PART_BASE + _ROUND + ("topology_name", "status"), schedule_part),
            Part("cluster", ("scheduling_round",), PART_BASE + SCHEMA_FIELDS["scheduling_round"], cluster_part),
            Part("evictions", ("topology_evicted", "topology_round"),
                 PART_BASE + _ROUND + ("by", "by_user", "by_priority", "rolled_back", "requested_cpu", "requested_memory_mb"),
                 evictions_part),
            Part("supervisors", ("supervisor_dead", "assignment_changed", "topology_round"),
                 PART_BASE + ("supervisor", "cause", "silent_s", "hosted", "hosted_executors", "round", "topology", "reason",
                              "fully_scheduled"),
                 supervisors_part),
            Part("network", ("assignment_changed",), PART_BASE + SCHEMA_FIELDS["assignment_changed"], network_part),
            Part("nimbus", ("nimbus_leader_elected", "leader_vacant"), PART_BASE + ("previous",), nimbus_part),
            Part("supervisor_use", ("worker_launched", "worker_killed", "agent_stopped"),
                 PART_BASE + ("port", "cpu", "memory_mb", "reason"), supervisor_use_part),
        ]

    def figures(self, tally: pd.DataFrame, parts: Mapping[str, Mapping[str, Any]], params: RunParams) -> dict[str, Any]:
        def rows(kind: str) -> pd.DataFrame:
            return tally[tally["kind"] == kind]

        out: dict[str, Any] = {}
        for name in ("schedule", "cluster", "evictions", "supervisors", "network", "nimbus"):
            out.update(parts.get(name, {}))
        changed = rows("assignment_changed")
        out["assignments"] = {"changes": int(changed["count"].sum()), "by_reason": counts_by(changed, "key")}
        killed = rows("worker_killed")
        out["workers"] = {
            "launched": int(rows("worker_launched")["count"].sum()),
            "killed": int(killed["count"].sum()),
            "killed_by_reason": counts_by(killed, "key"),
        }
        requests = rows("topology_request")
        out["requests"] = {"count": int(requests["count"].sum()), "by_result": counts_by(requests, "key")}
        return out

    def marker_rows(self, rows: pd.DataFrame) -> list[tuple[float, float | None, str, str, str]]:
        out: list[tuple[float, float | None, str, str, str]] = []
        for r in rows.itertuples(index=False):
            if r.kind == "topology_evicted" and not bool(r.rolled_back):
                out.append((float(r.t), None, "eviction", r.agent, f"{r.topology} ({r.user}, priority {r.priority}) evicted by {r.by}"))
            elif r.kind == "supervisor_dead":
                out.append((float(r.t), None, "supervisor_dead", r.agent, f"{r.supervisor} dead ({r.cause})"))
            elif r.kind == "nimbus_leader_elected":
                out.append((float(r.t), None, "leader", r.agent, f"{r.agent} elected leader"))
        return out

    def panels(self, tables: Mapping[str, pd.DataFrame], summary: Mapping[str, Any]) -> list["Panel"]:
        from clusteremu.tools.report import Panel

        panels = []
        series = tables.get("topology_series", pd.DataFrame())
        if not series.empty:
            panels.append(Panel.lines("topologies", "Topologies running (fully scheduled) and pending at each scheduling round",
                                      "topologies", {"running": (series["t"], series["running"]), "pending": (series["t"], series["pending"])}))
        usage = tables.get("cluster_usage", pd.DataFrame())
        if not usage.empty:
            panels.append(Panel.lines("cluster_use", "Cluster use: what the workers are charged, % of the live supervisors' capacity", "%",
                                      {"CPU": (usage["t"], usage["cpu_used_pct"]), "memory": (usage["t"], usage["memory_used_pct"]),
                                       "slots": (usage["t"], usage["slots_used_pct"])}))
            panels.append(Panel.lines("stranded", "Fragmentation: free capacity on nodes that cannot take one more default executor, % of the free capacity",
                                      "%", {"CPU": (usage["t"], usage["stranded_cpu_pct"]), "memory": (usage["t"], usage["stranded_memory_pct"])}))
        per_sup = tables.get("supervisor_usage", pd.DataFrame())
        if not per_sup.empty:
            panels.append(Panel.per_agent("supervisor_cpu", "CPU charged to the workers running on each supervisor",
                                          "% of a core", per_sup, "supervisor", "cpu_used"))
            panels.append(Panel.per_agent("supervisor_memory", "Memory charged to the workers running on each supervisor",
                                          "MB", per_sup, "supervisor", "memory_used_mb"))
        evictions = tables.get("evictions", pd.DataFrame())
        if not evictions.empty:
            panels.append(Panel.lines("evictions", "Evictions so far, per victim user (rolled-back ones excluded)", "evictions",
                                      cumulative_evictions(evictions)))
        network = tables.get("network", pd.DataFrame())
        if not network.empty:
            net = network.sort_values("t", kind="stable")
            panels.append(Panel.lines("network", "Network metric of each topology's latest full placement, at its time: % of connected executor pairs",
                                      "% of pairs", {"same worker": (net["t"], net["same_worker_pct"]), "same node": (net["t"], net["same_node_pct"]),
                                                     "same rack": (net["t"], net["same_rack_pct"])}, style="points"))
            panels.append(network_cdf_panel(network))
        return panels


def network_cdf_panel(network: pd.DataFrame) -> "Panel":
    """The network metric's CDF over topologies: for each level, the share of topologies (y, %) whose
    connected executor pairs are at most x % on one worker / node / rack (the ``network`` table)."""
    from clusteremu.tools.report import Panel  # matplotlib only when a report is drawn

    series = {}
    for label, column in (("same worker", "same_worker_pct"), ("same node", "same_node_pct"),
                          ("same rack", "same_rack_pct")):
        values = np.sort(network[column].astype(float).to_numpy())
        share = 100.0 * np.arange(1, len(values) + 1) / len(values)
        series[label] = (np.concatenate([[0.0], values]), np.concatenate([[0.0], share]))
    return Panel.lines("network_cdf", "Network metric over topologies (CDF): share of topologies whose connected "
                       "executor pairs are at most x % co-located", "% of topologies", series,
                       x_label="% of connected executor pairs co-located")


def cumulative_evictions(evictions: pd.DataFrame) -> dict[str, tuple[list[float], list[float]]]:
    """Per victim user, the evictions so far as a step series from 0 at time 0 (the ``evictions`` table)."""
    out = {}
    for user, g in evictions.sort_values("t", kind="stable").groupby("user", sort=True):
        t = g["t"].astype(float).tolist()
        out[str(user)] = ([0.0, *t], [0.0, *range(1, len(t) + 1)])
    return out


#: The fields :data:`SCHEMA` reads, per kind.
SCHEMA_FIELDS: dict[str, tuple[str, ...]] = {kind: tuple(fields) for kind, fields in SCHEMA.kinds.items()}
