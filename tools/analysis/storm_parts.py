"""Storm's figures, one run at a time: pure pandas functions of the decoded trace (the parts of
:mod:`clusteremu.tools.analysis.storm`, run in the Spark executors; the tests call them on hand-made frames).

Every input is one run's rows in canonical order (columns ``t``, ``agent``, ``seq``, ``kind`` and the fields read;
a field of another kind is null). A *scheduling round* is identified by its Nimbus, its ``round`` number and its
time: a new leader numbers its rounds from 1 again, and every event of a round carries the round's time.
docs/analysis.md (*Storm figures*) is the reference for every definition.

* :func:`schedule_figures`: time from submission to fully scheduled, scheduling failures, pending and running
  topologies at every round;
* :func:`cluster_figures`: CPU, memory and slot use and Nimbus's fragmentation gauge at every round;
* :func:`eviction_figures`: evictions per user and priority, their return, and the victims' use of their
  guarantee (Storm 1.x's promise: a user within their guarantee is not a victim of another user);
* :func:`supervisor_figures`: how long a dead supervisor's executors took to be placed again;
* :func:`network_figures`: the network metric of placements (connected executor pairs in one worker, node, rack).
"""
from __future__ import annotations

import math
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd

from clusteremu.strategies.storm.config import RESOURCE_AWARE_SCHEDULER_USER_POOLS
from clusteremu.strategies.storm.registry import EVICTION_STRATEGY_KEY

from .model import absent
from .stats import distribution, step_stats

#: Columns of the ``topologies`` table (one row per submitted topology).
TOPOLOGY_COLUMNS = ("topology", "topology_name", "user", "priority", "submitted_s", "scheduled_s", "schedule_s", "removed_s")
#: Columns of the ``topology_series`` table (one row per scheduling round).
SERIES_COLUMNS = ("t", "agent", "round", "topologies", "running", "pending")
#: Columns of the ``cluster_usage`` table (one row per scheduling round).
USAGE_COLUMNS = (
    "t", "agent", "round", "supervisors", "cpu_total", "cpu_used", "memory_total_mb", "memory_used_mb",
    "slots_total", "slots_used", "cpu_used_pct", "memory_used_pct", "slots_used_pct",
    "fragmented_cpu", "fragmented_memory_mb", "stranded_cpu_pct", "stranded_memory_pct",
    "pending_stranded_cpu", "pending_stranded_memory_mb", "pending_stranded_cpu_pct", "pending_stranded_memory_pct",
)
#: Columns of the ``evictions`` table.
EVICTION_COLUMNS = (
    "t", "round", "topology", "user", "priority", "by", "by_user", "by_priority", "rolled_back",
    "cpu_utilization", "memory_utilization", "utilization", "within_guarantee", "restored_s",
)
#: Columns of the ``network`` table (each topology's latest full placement).
NETWORK_COLUMNS = (
    "t", "topology", "user", "reason", "pairs", "same_worker", "same_node", "same_rack",
    "same_worker_pct", "same_node_pct", "same_rack_pct",
)
#: The network metric's levels, innermost first.
LEVELS = ("same_worker", "same_node", "same_rack")


def _round_key(rows: pd.DataFrame) -> pd.Series:
    """One key per scheduling round: Nimbus, round number, time (round numbers restart with each leader)."""
    return rows["agent"].astype(str) + "#" + rows["round"].astype("Int64").astype(str) + "@" + rows["t"].astype(float).map(repr)


def _bool(values: pd.Series) -> np.ndarray:
    return values.astype("boolean").fillna(False).to_numpy(dtype=bool)


def status_class(status: Any) -> str:
    """A Storm status text without its numbers: the text up to the first sentence end, `` - `` or ``(``
    ("Not enough resources to schedule after evicting lower priority topologies. Additional Memory ..." →
    "Not enough resources to schedule after evicting lower priority topologies")."""
    if not isinstance(status, str) or not status:
        return "(none)"
    return re.split(r"\.\s|\.$| - |\(|:", status, maxsplit=1)[0].strip() or status


# -- time to schedule, failures, pending topologies ---------------------------------------------------------------
def schedule_figures(rows: pd.DataFrame, *, end: float, window_start: float) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """From ``topology_submitted``, ``topology_round`` and ``topology_removed`` rows:

    * ``schedule``: per submitted topology, the time from its ``topology_submitted`` to the first round after it
      that left it fully scheduled (``time_s``: count, total, mean, p50, p99, max over the topologies that got
      there); ``never_scheduled`` those that did not, and ``wait_s_mean``: the mean over every topology with
      those counted until their removal or the end (a lower bound: what a strategy that leaves topologies
      waiting is charged);
    * ``failures``: topology-rounds that left the topology not fully scheduled (``topology_rounds`` of
      ``topology_rounds_total``, ``share_pct``, ``topologies``: distinct ones, ``by_status``: per status text
      without its numbers), rounds that left any topology pending (``rounds_with_topologies``,
      ``rounds_with_pending``, ``window_rounds_with_pending``);
    * tables ``topologies`` and ``topology_series`` (at every round: topologies known, running = fully
      scheduled, pending = not).
    """
    sub = rows[rows["kind"] == "topology_submitted"]
    rnd = rows[rows["kind"] == "topology_round"].copy()
    removed = rows[rows["kind"] == "topology_removed"]
    full = _bool(rnd["fully_scheduled"]) if len(rnd) else np.zeros(0, dtype=bool)
    rnd["_full"] = full
    removed_at = {str(k): float(t) for k, t in zip(removed["topology"], removed["t"])}
    full_times: dict[str, np.ndarray] = {
        str(k): g["t"].to_numpy(dtype=float) for k, g in rnd[rnd["_full"]].groupby("topology", sort=False)
    }
    records = []
    for r in sub.drop_duplicates("topology", keep="first").itertuples(index=False):
        topo, t0 = str(r.topology), float(r.t)
        times = full_times.get(topo, np.zeros(0))
        later = times[times >= t0]
        scheduled = float(later[0]) if later.size else None
        records.append((topo, r.topology_name, r.user, r.priority, t0, scheduled,
                        scheduled - t0 if scheduled is not None else None, removed_at.get(topo)))
    topologies = pd.DataFrame.from_records(records, columns=list(TOPOLOGY_COLUMNS))
    topologies["priority"] = topologies["priority"].astype("Int64")
    for c in ("submitted_s", "scheduled_s", "schedule_s", "removed_s"):
        topologies[c] = topologies[c].astype(float)
    done = topologies["schedule_s"].dropna().to_numpy(dtype=float)
    waiting = topologies[topologies["schedule_s"].isna()]
    censored = [max((rm if not math.isnan(rm) else end) - s, 0.0) for s, rm in zip(waiting["submitted_s"], waiting["removed_s"])]
    every = np.concatenate([done, np.asarray(censored, dtype=float)])
    schedule = {
        "topologies": int(len(topologies)),
        "scheduled": int(done.size),
        "never_scheduled": int(len(waiting)),
        "never_scheduled_list": [str(x) for x in waiting["topology"]],
        "time_s": distribution(done),
        "wait_s_mean": float(every.mean()) if every.size else None,
    }
    # Rounds: one row per round, in time order.
    if len(rnd):
        rnd["_key"] = _round_key(rnd)
        g = rnd.groupby("_key", sort=False)
        series = pd.DataFrame({
            "t": g["t"].first().astype(float),
            "agent": g["agent"].first().astype(str),
            "round": g["round"].first().astype("int64"),
            "topologies": g["_full"].size().astype("int64"),
            "running": g["_full"].sum().astype("int64"),
        }).reset_index(drop=True)
        series["pending"] = series["topologies"] - series["running"]
        series = series.sort_values("t", kind="stable").reset_index(drop=True)
    else:
        series = pd.DataFrame({c: pd.Series(dtype="float64" if c == "t" else object if c == "agent" else "int64") for c in SERIES_COLUMNS})
    failed = rnd[~rnd["_full"]] if len(rnd) else rnd
    pending_rounds = series[series["pending"] > 0]
    failures = {
        "topology_rounds": int(len(failed)),
        "topology_rounds_total": int(len(rnd)),
        "share_pct": 100.0 * len(failed) / len(rnd) if len(rnd) else None,
        "topologies": int(failed["topology"].nunique()) if len(failed) else 0,
        "by_status": {str(k): int(v) for k, v in sorted(failed["status"].map(status_class).value_counts().items())} if len(failed) else {},
        "rounds_with_topologies": int(len(series)),
        "rounds_with_pending": int(len(pending_rounds)),
        "window_rounds_with_pending": int((pending_rounds["t"].to_numpy(dtype=float) >= window_start).sum()),
    }
    if not len(rnd):
        absent(failures, "share_pct", "no topology was scheduled")
    return {"schedule": schedule, "failures": failures}, {"topologies": topologies, "topology_series": series[list(SERIES_COLUMNS)]}


# -- cluster use and fragmentation -------------------------------------------------------------------------------
def _pct(num: pd.Series, den: pd.Series) -> pd.Series:
    num, den = num.astype(float), den.astype(float)
    return (100.0 * num / den.where(den > 0)).astype(float)


def cluster_figures(rows: pd.DataFrame, *, end: float, window_start: float) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """From ``scheduling_round`` rows: the ``cluster_usage`` table (per round: capacity and use of the live
    supervisors; ``*_pct`` = used / total; ``stranded_*_pct`` = Nimbus's fragmentation gauge — free capacity on
    nodes that cannot take one more default executor plus an acker — as % of the free capacity;
    ``pending_stranded_*``: the model's ``stranded_cpu``/``stranded_memory_mb`` — free capacity on nodes where none
    of the executors still unplaced fits, 0 with none pending — and as % of the free capacity) and
    ``cluster``: each percentage as a step series (``run`` and ``window``: mean, max, final), the rounds, the
    scheduler generation, and rounds that changed assignments."""
    df = rows[rows["kind"] == "scheduling_round"].reset_index(drop=True)
    usage = pd.DataFrame({c: df[c] for c in USAGE_COLUMNS if c in df.columns})
    usage["cpu_used_pct"] = _pct(df["cpu_used"], df["cpu_total"])
    usage["memory_used_pct"] = _pct(df["memory_used_mb"], df["memory_total_mb"])
    usage["slots_used_pct"] = _pct(df["slots_used"], df["slots_total"])
    usage["stranded_cpu_pct"] = _pct(df["fragmented_cpu"], df["cpu_total"].astype(float) - df["cpu_used"].astype(float))
    usage["stranded_memory_pct"] = _pct(df["fragmented_memory_mb"], df["memory_total_mb"].astype(float) - df["memory_used_mb"].astype(float))
    # traces written before the model recorded it have no stranded_* field: their rows stay empty (NaN)
    usage["pending_stranded_cpu"] = df["stranded_cpu"].astype(float) if "stranded_cpu" in df else np.nan
    usage["pending_stranded_memory_mb"] = df["stranded_memory_mb"].astype(float) if "stranded_memory_mb" in df else np.nan
    usage["pending_stranded_cpu_pct"] = _pct(usage["pending_stranded_cpu"],
                                             df["cpu_total"].astype(float) - df["cpu_used"].astype(float))
    usage["pending_stranded_memory_pct"] = _pct(usage["pending_stranded_memory_mb"],
                                                df["memory_total_mb"].astype(float) - df["memory_used_mb"].astype(float))
    usage = usage[list(USAGE_COLUMNS)].reset_index(drop=True)
    t = usage["t"].to_numpy(dtype=float)
    start = float(t[0]) if t.size else 0.0
    stats: dict[str, Any] = {}
    for col in ("cpu_used_pct", "memory_used_pct", "slots_used_pct", "stranded_cpu_pct", "stranded_memory_pct",
                "pending_stranded_cpu_pct", "pending_stranded_memory_pct"):
        v = usage[col].to_numpy(dtype=float)
        stats[col] = {"run": step_stats(t, v, start, end), "window": step_stats(t, v, window_start, end)}
    generations = sorted({str(g) for g in df["generation"].dropna()}) if "generation" in df else []
    cluster = {
        "rounds": int(len(df)),
        "generation": generations[0] if len(generations) == 1 else ",".join(generations) or None,
        "rounds_changing_assignments": int((df["assignments_changed"].fillna(0).astype(int) > 0).sum()) if len(df) else 0,
        "rebalance_rounds": int((df["rebalance"].fillna("") != "").sum()) if len(df) else 0,
        **stats,
    }
    return {"cluster": cluster}, {"cluster_usage": usage}


# -- evictions ---------------------------------------------------------------------------------------------------
def user_pools(scenario: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    """Each user's guarantee ``(cpu %, memory MB)`` from the scenario's ``[config]``
    ``resource.aware.scheduler.user.pools`` (a user without a pool has none)."""
    config = scenario.get("config") if isinstance(scenario, Mapping) else None
    pools = config.get(RESOURCE_AWARE_SCHEDULER_USER_POOLS) if isinstance(config, Mapping) else None
    out: dict[str, tuple[float, float]] = {}
    for user, pool in (pools or {}).items() if isinstance(pools, Mapping) else ():
        if isinstance(pool, Mapping):
            out[str(user)] = (float(pool.get("cpu") or 0.0), float(pool.get("memory") or 0.0))
    return out


def generation(scenario: Mapping[str, Any]) -> str:
    """``1.x`` when the scenario names an eviction strategy (``[strategy] eviction`` or the config key: only Storm
    1.x reads it, and the model then runs the 1.x scheduler), else ``2.x``."""
    strategy = scenario.get("strategy") if isinstance(scenario, Mapping) else None
    config = scenario.get("config") if isinstance(scenario, Mapping) else None
    named = (isinstance(strategy, Mapping) and strategy.get("eviction")) or (isinstance(config, Mapping) and config.get(EVICTION_STRATEGY_KEY))
    return "1.x" if named else "2.x"


def _utilization(used: float, guarantee: float) -> float:
    # Storm 1.x's User.getCPUResourcePoolUtilization: used / guarantee, "infinite" without a guarantee.
    return math.inf if guarantee == 0.0 else used / guarantee


def eviction_figures(rows: pd.DataFrame, *, scenario: Mapping[str, Any], window_start: float) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """From ``topology_evicted`` and ``topology_round`` rows and the scenario's user pools: ``evictions``.

    An eviction is a ``topology_evicted`` not rolled back (those are counted apart). Per eviction: its victim
    user's use of their guarantee just before it — the requested CPU and memory of the user's topologies fully
    scheduled at their latest round before this one, less those evicted earlier in the same round — as Storm
    1.x's average utilization (cpu/guarantee + memory/guarantee) / 2; ``within_guarantee`` when that is ≤ 1
    (Storm 1.x's DefaultEvictionStrategy only takes from users over their guarantee, except the submitter's own
    lower-priority topologies); and ``restored_s``, the time until the victim was fully scheduled again.
    """
    ev = rows[rows["kind"] == "topology_evicted"]
    rnd = rows[rows["kind"] == "topology_round"]
    rolled = _bool(ev["rolled_back"]) if len(ev) else np.zeros(0, dtype=bool)
    real = ev[~rolled]
    pools = user_pools(scenario)
    full = rnd[_bool(rnd["fully_scheduled"])] if len(rnd) else rnd
    full_times = {str(k): g["t"].to_numpy(dtype=float) for k, g in full.groupby("topology", sort=False)}
    # Each user's topologies' rounds (time, fully scheduled, requests), to find what ran before a round.
    by_user: dict[str, list[tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = {}
    for (user_, topo_), g in rnd.groupby(["user", "topology"], sort=False):
        by_user.setdefault(str(user_), []).append((str(topo_), g["t"].to_numpy(dtype=float), _bool(g["fully_scheduled"]),
                                                   g["requested_cpu"].to_numpy(dtype=float), g["requested_memory_mb"].to_numpy(dtype=float)))
    records = []
    evicted_in_round: dict[tuple[str, float], list[str]] = {}
    for e in real.itertuples(index=False):
        t, user = float(e.t), str(e.user)
        cpu = mem = 0.0
        earlier = evicted_in_round.setdefault((str(e.agent), t), [])
        for topo, times, full_at, req_cpu, req_mem in by_user.get(user, []):
            i = int(np.searchsorted(times, t, side="left")) - 1  # its latest round before this one
            if i >= 0 and full_at[i] and topo not in earlier:
                cpu += float(req_cpu[i])
                mem += float(req_mem[i])
        earlier.append(str(e.topology))
        g_cpu, g_mem = pools.get(user, (0.0, 0.0))
        cu, mu = _utilization(cpu, g_cpu), _utilization(mem, g_mem)
        util = cu / 2.0 + mu / 2.0
        times = full_times.get(str(e.topology), np.zeros(0))
        later = times[times > t]
        records.append((t, int(e.round), str(e.topology), user, int(e.priority), str(e.by), str(e.by_user), int(e.by_priority),
                        False, cu, mu, util, bool(util <= 1.0), float(later[0] - t) if later.size else None))
    table = pd.DataFrame.from_records(records, columns=list(EVICTION_COLUMNS))
    table["restored_s"] = table["restored_s"].astype(float)
    within = table[table["within_guarantee"].astype(bool)]
    restored = table["restored_s"].dropna().to_numpy(dtype=float)
    figures = {
        "count": int(len(table)),
        "rolled_back": int(rolled.sum()),
        "rounds": int(real.groupby(["agent", "t"]).ngroups) if len(real) else 0,
        "window": int((table["t"].to_numpy(dtype=float) >= window_start).sum()),
        "by_user": {str(k): int(v) for k, v in sorted(table["user"].value_counts().items())},
        "by_priority": {str(k): int(v) for k, v in sorted(table["priority"].value_counts().items())},
        "by_evicting_user": {str(k): int(v) for k, v in sorted(table["by_user"].value_counts().items())},
        "own_user": int((table["user"] == table["by_user"]).sum()),
        "restore_s": distribution(restored),
        "unrestored": int(table["restored_s"].isna().sum()),
        "guarantee": {
            "generation": generation(scenario),
            "pools": {u: {"cpu": c, "memory_mb": m} for u, (c, m) in sorted(pools.items())},
            "within_guarantee": int(len(within)),
            "within_guarantee_other_user": int((within["user"] != within["by_user"]).sum()),
            "list": [
                {"t": float(r.t), "topology": r.topology, "user": r.user, "by_user": r.by_user, "utilization": float(r.utilization)}
                for r in within.itertuples(index=False)
            ],
        },
    }
    return {"evictions": figures}, {"evictions": table}


# -- dead supervisors --------------------------------------------------------------------------------------------
def supervisor_figures(rows: pd.DataFrame) -> dict[str, Any]:
    """From ``supervisor_dead``, ``assignment_changed`` and ``topology_round`` rows: ``supervisors``.

    A supervisor is deemed dead at a scheduling round; its topologies are those the event lists as ``hosted``
    (with ``hosted_executors`` executors) whose assignment that round changed with reason ``supervisor_lost`` —
    so that when several supervisors die in one round each is charged its own. Its executors are placed again at
    the first
    round, from that one on, that left every one of those topologies fully scheduled. ``reschedule_s`` is the time
    from the death to then; ``outage_s`` adds ``silent_s`` (the time since the last heartbeat Nimbus saw, the
    closest the trace comes to the failure itself); ``detect_s`` is ``silent_s``."""
    dead = rows[rows["kind"] == "supervisor_dead"]
    changed = rows[(rows["kind"] == "assignment_changed") & (rows["reason"] == "supervisor_lost")]
    rnd = rows[rows["kind"] == "topology_round"]
    full = rnd[_bool(rnd["fully_scheduled"])] if len(rnd) else rnd
    full_times = {str(k): g["t"].to_numpy(dtype=float) for k, g in full.groupby("topology", sort=False)}
    items = []
    for d in dead.itertuples(index=False):
        t = float(d.t)
        mine = changed[(changed["agent"] == d.agent) & (changed["t"].to_numpy(dtype=float) == t)]
        hosted = {str(h) for h in d.hosted} if d.hosted is not None and not isinstance(d.hosted, float) else set()
        mine = mine[mine["topology"].astype(str).isin(hosted)]
        silent = float(d.silent_s) if d.silent_s is not None and not pd.isna(d.silent_s) and float(d.silent_s) >= 0 else None
        back: float | None = t
        for topo in mine["topology"].astype(str):
            times = full_times.get(topo, np.zeros(0))
            later = times[times >= t]
            if not later.size:
                back = None
                break
            back = max(back, float(later[0]))
        resched = back - t if back is not None and len(mine) else None
        items.append({
            "supervisor": str(d.supervisor), "dead_s": t, "cause": str(d.cause), "detect_s": silent,
            "topologies": int(len(mine)),
            "lost_executors": int(d.hosted_executors) if not pd.isna(d.hosted_executors) else 0,
            "rescheduled_s": back if len(mine) else None, "reschedule_s": resched,
            "outage_s": resched + silent if resched is not None and silent is not None else None,
        })
    with_work = [i for i in items if i["topologies"] > 0]
    return {
        "dead": len(items),
        "by_cause": {str(k): int(v) for k, v in sorted(dead["cause"].value_counts().items())} if len(dead) else {},
        "with_executors": len(with_work),
        "lost_executors": int(sum(i["lost_executors"] for i in items)),
        "unrescheduled": sum(1 for i in with_work if i["reschedule_s"] is None),
        "detect_s": distribution([i["detect_s"] for i in items if i["detect_s"] is not None]),
        "reschedule_s": distribution([i["reschedule_s"] for i in with_work if i["reschedule_s"] is not None]),
        "outage_s": distribution([i["outage_s"] for i in with_work if i["outage_s"] is not None]),
        "list": items,
    }


# -- the network metric ------------------------------------------------------------------------------------------
def network_figures(rows: pd.DataFrame) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """From ``assignment_changed`` rows: ``network``, over each topology's latest *full* placement (every
    executor placed) with at least one connected executor pair. For each level (``same_worker``, ``same_node``,
    ``same_rack``) the share of the pairs on one worker, node, rack, in %: its distribution over the
    topologies (each topology counts once), ``cdf`` (the sorted shares: the empirical CDF) and ``pooled``
    (pairs of every topology together). Also ``placements``: full placements, ``topologies``: those measured."""
    ch = rows[rows["kind"] == "assignment_changed"]
    ex = ch["executors"].fillna(-1).astype(int).to_numpy()
    after = ch["assigned_after"].fillna(0).astype(int).to_numpy()
    fullp = ch[(after == ex) & (after > 0)]
    latest = fullp.drop_duplicates("topology", keep="last")
    latest = latest[latest["pairs"].fillna(0).astype(int) > 0]
    table = pd.DataFrame({
        "t": latest["t"].astype(float), "topology": latest["topology"].astype(str), "user": latest["user"].astype(str),
        "reason": latest["reason"].astype(str), **{c: latest[c].astype("int64") for c in ("pairs", *LEVELS)},
    }).reset_index(drop=True)
    for level in LEVELS:
        table[f"{level}_pct"] = 100.0 * table[level].astype(float) / table["pairs"].astype(float)
    table = table[list(NETWORK_COLUMNS)].sort_values(["same_node_pct", "topology"], kind="stable").reset_index(drop=True)
    pairs = int(table["pairs"].sum())
    figures: dict[str, Any] = {"placements": int(len(fullp)), "topologies": int(len(table)), "pairs": pairs}
    for level in LEVELS:
        shares = table[f"{level}_pct"].to_numpy(dtype=float)
        figures[level] = {
            **distribution(shares),
            "min": float(shares.min()) if shares.size else None,
            "pooled": 100.0 * float(table[level].sum()) / pairs if pairs else None,
            "cdf": sorted(float(s) for s in shares),
        }
    return {"network": figures}, {"network": table}


# -- per-supervisor use ------------------------------------------------------------------------------------------
#: Columns of the ``supervisor_usage`` table (one row per change of a supervisor's running workers).
SUPERVISOR_USAGE_COLUMNS = ("t", "supervisor", "workers", "cpu_used", "memory_used_mb")
#: a supervisor's stop that leaves its workers running (the daemon's graceful stop, not its host's crash)
GRACEFUL_STOPS = ("rolling_restart",)


def supervisor_usage(rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """From the supervisors' ``worker_launched``, ``worker_killed`` and ``agent_stopped`` rows: the
    ``supervisor_usage`` table — after each change, what the workers running on a supervisor are charged (CPU in %
    of a core, memory MB). A launch adds its worker, a kill removes the worker of its port, a crash (any stop but
    a graceful one, whose workers run on) removes them all."""
    kinds = ("worker_launched", "worker_killed", "agent_stopped")
    ev = rows[rows["kind"].isin(kinds) & rows["agent"].astype(str).str.startswith("supervisor-")]
    ev = ev.sort_values(["t", "seq"], kind="stable")
    running: dict[str, dict[int, tuple[float, float]]] = {}
    out = []
    for r in ev.itertuples(index=False):
        sup = str(r.agent)
        mine = running.setdefault(sup, {})
        if r.kind == "worker_launched":
            mine[int(r.port)] = (float(r.cpu), float(r.memory_mb))
        elif r.kind == "worker_killed":
            mine.pop(int(r.port), None)
        elif str(r.reason) not in GRACEFUL_STOPS:
            mine.clear()
        else:
            continue
        out.append((float(r.t), sup, len(mine), sum(c for c, _ in mine.values()), sum(m for _, m in mine.values())))
    return {"supervisor_usage": pd.DataFrame(out, columns=list(SUPERVISOR_USAGE_COLUMNS))}
