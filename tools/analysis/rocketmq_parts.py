"""RocketMQ's figures as pure pandas computations over one run's rows (the parts of :mod:`.rocketmq`).

The rules are those of the model's own trace views (``agents/rocketmq/views.py``), reproduced from the events:

* a consumer holds a queue from its ``queue_taken`` to its ``queue_dropped`` of it, or to its own ``agent_stopped``
  (a crash drops nothing), or to the end of the run; a POP assignment ``<topic>/<broker>/-1`` covers every queue
  of that broker;
* a queue exists from its broker's ``queues_created`` to that broker's ``agent_stopped`` (or the end);
* *overlap*: a queue held in PULL mode by two consumers or more (POP and BROADCAST share queues by design);
  *orphan*: an existing queue held by nobody;
* a *membership change* is a consumer's start or stop, or a broker's ``queues_created`` or stop; changes at most
  ``change_merge_s`` apart are one change (a scale-out of four consumers started 1 s apart is one). The first one
  is the start-up. A change's allocation is *stable* at the time of the last take or drop before the next change
  (or the end) when nothing is orphaned or overlapping then.

Components: :func:`holdings`, :func:`queue_lifetimes`, :func:`coverage`, :func:`allocation_windows`,
:func:`membership_changes`, :func:`allocation_part` (holdings, windows, changes, skew, lag) and
:func:`consumption_part` (messages consumed twice).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .model import PartResult, RunParams, absent
from .stats import distribution, percentile, step_stats

#: A POP assignment of this queue id covers every queue of its broker.
ALL_QUEUES = "-1"
#: Modes in which two holders of one queue are an overlap (POP and BROADCAST share queues by design).
EXCLUSIVE_MODES = ("PULL",)


@dataclass(frozen=True)
class Hold:
    """``consumer`` held ``queue`` (a queue key, or a POP ``.../-1`` assignment) in ``mode`` over [start, end)."""

    queue: str
    consumer: str
    mode: str
    start: float
    end: float


def prefix(queue: str) -> str:
    """``TopicTest/broker-a/3`` → ``TopicTest/broker-a/``: the queue keys of one broker share it."""
    return queue.rsplit("/", 1)[0] + "/"


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _num(v: Any) -> float:
    return float(v) if v is not None and not (isinstance(v, float) and math.isnan(v)) else float("nan")


# -- holdings and queues --------------------------------------------------------------------------------------------
def holdings(rows: pd.DataFrame, end: float) -> list[Hold]:
    """Every hold, from ``queue_taken`` / ``queue_dropped`` / ``agent_stopped`` rows in canonical order, sorted by
    (start, queue, consumer)."""
    open_: dict[tuple[str, str], tuple[float, str]] = {}
    out: list[Hold] = []
    sel = rows[rows["kind"].isin(("queue_taken", "queue_dropped", "agent_stopped"))]
    for t, agent, kind, queue, mode in zip(sel["t"].to_numpy(dtype=float), sel["agent"], sel["kind"], sel["queue"], sel["mode"]):
        if kind == "queue_taken":
            open_[(queue, agent)] = (t, _str(mode))
        elif kind == "queue_dropped":
            began = open_.pop((queue, agent), None)
            if began is not None:
                out.append(Hold(queue, agent, began[1], began[0], t))
        else:
            for key in [k for k in open_ if k[1] == agent]:
                began = open_.pop(key)
                out.append(Hold(key[0], agent, began[1], began[0], t))
    out += [Hold(q, c, mode, t0, max(end, t0)) for (q, c), (t0, mode) in open_.items()]
    out.sort(key=lambda h: (h.start, h.queue, h.consumer))
    return out


def queue_lifetimes(rows: pd.DataFrame, end: float) -> dict[str, tuple[float, float, float]]:
    """Queue key → (created, gone, producer rate in msg/s): its broker's ``queues_created`` to that broker's last
    ``agent_stopped`` (the end when it never stopped after it)."""
    created = rows[rows["kind"] == "queues_created"]
    stops = rows[rows["kind"] == "agent_stopped"]
    stopped = dict(zip(stops["agent"], stops["t"].to_numpy(dtype=float)))
    out: dict[str, tuple[float, float, float]] = {}
    for t, agent, topic, broker, n, rate in zip(created["t"].to_numpy(dtype=float), created["agent"], created["subscription"],
                                                created["broker"], created["queues"], created["rate_per_queue"]):
        gone = stopped.get(agent, end)
        gone = end if gone < t else gone
        for i in range(int(n) if pd.notna(n) else 0):
            out[f"{topic}/{broker}/{i}"] = (float(t), float(gone), _num(rate))
    return out


def coverage(intervals: Iterable[tuple[float, float]], lo: float, hi: float) -> list[tuple[float, float, int]]:
    """The constant-count segments ``(a, b, holders)`` of [lo, hi) under half-open ``intervals``."""
    deltas: dict[float, int] = {}
    for a, b in intervals:
        a, b = max(a, lo), min(b, hi)
        if b > a:
            deltas[a] = deltas.get(a, 0) + 1
            deltas[b] = deltas.get(b, 0) - 1
    points = sorted(set(deltas) | {lo, hi})
    count, out = 0, []
    for p, q in zip(points, points[1:]):
        count += deltas.get(p, 0)
        if q > p:
            out.append((p, q, count))
    return out


def _merged(segments: Iterable[tuple[float, float, int]], hit: Any) -> list[tuple[float, float, int]]:
    """Contiguous segments whose count ``hit`` accepts, merged; the count kept is the largest."""
    out: list[tuple[float, float, int]] = []
    for a, b, n in segments:
        if not hit(n):
            continue
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b, max(out[-1][2], n))
        else:
            out.append((a, b, n))
    return out


def covering(holds: Sequence[Hold], queues: Iterable[str]) -> dict[str, list[Hold]]:
    """Queue key → the holds that cover it: its own, and the POP ``-1`` assignments of its broker."""
    by_prefix: dict[str, list[Hold]] = {}
    own: dict[str, list[Hold]] = {}
    for h in holds:
        if h.queue.endswith("/" + ALL_QUEUES):
            by_prefix.setdefault(prefix(h.queue), []).append(h)
        else:
            own.setdefault(h.queue, []).append(h)
    return {q: own.get(q, []) + by_prefix.get(prefix(q), []) for q in queues}


def allocation_windows(holds: Sequence[Hold], queues: dict[str, tuple[float, float, float]]) -> pd.DataFrame:
    """Every overlap window (a queue held in PULL mode by two consumers or more) and orphan window (an existing
    queue held by nobody): ``queue``, ``kind``, ``start``, ``end``, ``seconds``, ``holders`` (the most at once)."""
    recs: list[tuple[str, str, float, float, float, int]] = []
    pull: dict[str, list[tuple[float, float]]] = {}
    for h in holds:
        if h.mode in EXCLUSIVE_MODES:
            pull.setdefault(h.queue, []).append((h.start, h.end))
    for q, spans in sorted(pull.items()):
        lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
        for a, b, n in _merged(coverage(spans, lo, hi), lambda n: n >= 2):
            recs.append((q, "overlap", a, b, b - a, n))
    cover = covering(holds, queues)
    for q, (q0, q1, _rate) in sorted(queues.items()):
        for a, b, n in _merged(coverage(((h.start, h.end) for h in cover[q]), q0, q1), lambda n: n == 0):
            recs.append((q, "orphan", a, b, b - a, n))
    return pd.DataFrame(recs, columns=["queue", "kind", "start", "end", "seconds", "holders"]).astype(
        {"start": float, "end": float, "seconds": float, "holders": "int64"})


def _seconds(windows: pd.DataFrame, kind: str, lo: float, hi: float) -> float:
    w = windows[windows["kind"] == kind]
    return float(np.clip(np.minimum(w["end"].to_numpy(dtype=float), hi) - np.maximum(w["start"].to_numpy(dtype=float), lo), 0.0, None).sum())


# -- membership changes and the allocation at a time ----------------------------------------------------------------
def consumer_lives(rows: pd.DataFrame, end: float) -> dict[str, list[tuple[float, float]]]:
    """Consumer agent → its lives [consumer_started, agent_stopped) (the end for the last one still running)."""
    lives: dict[str, list[tuple[float, float]]] = {}
    began: dict[str, float] = {}
    sel = rows[rows["kind"].isin(("consumer_started", "agent_stopped"))]
    for t, agent, kind in zip(sel["t"].to_numpy(dtype=float), sel["agent"], sel["kind"]):
        if kind == "consumer_started":
            began.setdefault(agent, t)
        elif agent in began:
            lives.setdefault(agent, []).append((began.pop(agent), t))
    for agent, t in began.items():
        lives.setdefault(agent, []).append((t, end))
    return dict(sorted(lives.items()))


def membership_changes(rows: pd.DataFrame, merge_s: float) -> list[list[tuple[float, str]]]:
    """The run's membership changes, each a list of (time, what) events at most ``merge_s`` apart: consumers
    started and stopped, brokers whose queues were created and brokers stopped."""
    consumers = set(rows.loc[rows["kind"] == "consumer_started", "agent"])
    brokers = set(rows.loc[rows["kind"] == "queues_created", "agent"])
    events: list[tuple[float, str]] = []
    for t, agent, kind, reason in zip(rows["t"].to_numpy(dtype=float), rows["agent"], rows["kind"], rows["reason"]):
        if kind == "consumer_started":
            events.append((t, f"{agent} started"))
        elif kind == "queues_created":
            events.append((t, f"{agent} queues created"))
        elif kind == "agent_stopped" and (agent in consumers or agent in brokers):
            events.append((t, f"{agent} stopped ({_str(reason) or 'stop'})"))
    changes: list[list[tuple[float, str]]] = []
    for e in events:  # canonical order already
        if changes and e[0] - changes[-1][-1][0] <= merge_s:
            changes[-1].append(e)
        else:
            changes.append([e])
    return changes


def holders_at(holds: Sequence[Hold], t: float, modes: tuple[str, ...] = EXCLUSIVE_MODES) -> dict[str, frozenset[str]]:
    """Queue → the consumers holding it at ``t`` in ``modes`` (a hold that starts at ``t`` counts, one that ends
    at ``t`` does not)."""
    out: dict[str, set[str]] = {}
    for h in holds:
        if h.mode in modes and h.start <= t < h.end:
            out.setdefault(h.queue, set()).add(h.consumer)
    return {q: frozenset(c) for q, c in out.items()}


def _holders_before(holds: Sequence[Hold], t: float) -> dict[str, frozenset[str]]:
    """Queue → the consumers holding it in an exclusive mode just before ``t`` (a hold ending at ``t`` counts)."""
    out: dict[str, set[str]] = {}
    for h in holds:
        if h.mode in EXCLUSIVE_MODES and h.start < t <= h.end:
            out.setdefault(h.queue, set()).add(h.consumer)
    return {q: frozenset(c) for q, c in out.items()}


def skew_at(holds: Sequence[Hold], queues: dict[str, tuple[float, float, float]], lives: dict[str, list[tuple[float, float]]],
            t: float) -> dict[str, Any]:
    """Queues per live consumer at ``t`` (a POP ``-1`` assignment counts every existing queue of its broker):
    ``consumers``, ``min``, ``max``, ``skew`` = max / min (∞ when some consumer has none, 1 when none has any),
    ``excess`` = max − ⌈Σ / consumers⌉, the queues the busiest consumer holds over the mean rounded up (0 for an
    even allocation whatever the numbers of queues and consumers)."""
    live = [c for c, spans in lives.items() if any(a <= t < b for a, b in spans)]
    existing = [q for q, (q0, q1, _r) in queues.items() if q0 <= t < q1]
    counts = dict.fromkeys(live, 0)
    for h in holds:
        if h.consumer in counts and h.start <= t < h.end:
            counts[h.consumer] += sum(1 for q in existing if q.startswith(prefix(h.queue))) \
                if h.queue.endswith("/" + ALL_QUEUES) else 1
    if not counts:
        return {"consumers": 0, "queues": len(existing), "min": None, "max": None, "skew": None, "excess": None}
    lo, hi = min(counts.values()), max(counts.values())
    skew = 1.0 if hi == 0 else (math.inf if lo == 0 else hi / lo)
    return {"consumers": len(counts), "queues": len(existing), "min": lo, "max": hi, "skew": skew,
            "excess": hi - math.ceil(sum(counts.values()) / len(counts))}


def change_table(holds: Sequence[Hold], windows: pd.DataFrame, queues: dict[str, tuple[float, float, float]],
                 lives: dict[str, list[tuple[float, float]]], changes: list[list[tuple[float, str]]], end: float) -> pd.DataFrame:
    """One row per membership change: its span, when its allocation became stable (null: never before the next
    change or the end), the queues it moved (PULL takes, and queues whose PULL holders differ from just before
    the change) and the skew of the allocation it settled on."""
    moments = sorted({h.start for h in holds} | {h.end for h in holds if h.end < end})
    bad = windows[["start", "end"]].to_numpy(dtype=float)
    takes = np.array(sorted(h.start for h in holds if h.mode in EXCLUSIVE_MODES))
    recs = []
    for i, events in enumerate(changes):
        a, last = events[0][0], events[-1][0]
        nxt = changes[i + 1][0][0] if i + 1 < len(changes) else end
        inside = [m for m in moments if a <= m < nxt]
        at = max(inside) if inside else a
        stable = not bool(((bad[:, 0] <= at) & (at < bad[:, 1])).any()) if len(bad) else True
        before = _holders_before(holds, a) if i else {}
        after = holders_at(holds, at)
        moved = sum(1 for q in set(before) | set(after) if before.get(q, frozenset()) != after.get(q, frozenset()))
        sk = skew_at(holds, queues, lives, at)
        recs.append({
            "index": i, "start": a, "last": last, "next": nxt, "startup": i == 0, "events": "; ".join(w for _t, w in events),
            "stable": stable, "stable_t": at if stable else None, "time_to_stable_s": at - a if stable else None,
            "unstable_s": None if stable else nxt - a,
            "takes": int(((takes >= a) & (takes < nxt)).sum()), "net_moved": moved,
            "consumers": sk["consumers"], "queues": sk["queues"], "skew": sk["skew"], "excess": sk["excess"],
        })
    cols = ["index", "start", "last", "next", "startup", "events", "stable", "stable_t", "time_to_stable_s", "unstable_s",
            "takes", "net_moved", "consumers", "queues", "skew", "excess"]
    # Typed even when empty: a boolean mask of object dtype would select columns instead of rows.
    types = {"startup": bool, "stable": bool, "takes": "int64", "net_moved": "int64", "start": float, "last": float,
             "next": float, "stable_t": float, "time_to_stable_s": float, "unstable_s": float, "skew": float}
    return pd.DataFrame(recs, columns=cols).astype(types)


def change_figures(table: pd.DataFrame) -> dict[str, Any]:
    """The changes after the start-up: count, stable, never stable, time to stable (distribution, and the mean
    with a never-stable change counted until the next change or the end: a lower bound), queues moved."""
    after = table[~table["startup"]]
    stable = after[after["stable"]]
    waits = np.where(after["stable"], after["time_to_stable_s"], after["unstable_s"]).astype(float)
    return {
        "count": int(len(after)),
        "stable": int(len(stable)),
        "never_stable": int(len(after) - len(stable)),
        "time_to_stable_s": distribution(stable["time_to_stable_s"].to_numpy(dtype=float)),
        "wait_s_mean": float(waits.mean()) if len(waits) else None,
        "takes": distribution(after["takes"].to_numpy(dtype=float)),
        "net_moved": distribution(after["net_moved"].to_numpy(dtype=float)),
        "net_moved_pct_mean": float((100.0 * after["net_moved"] / after["queues"].where(after["queues"] > 0)).mean())
        if len(after) and (after["queues"] > 0).any() else None,
        "startup_stable_s": float(table["time_to_stable_s"].iloc[0]) if len(table) and bool(table["stable"].iloc[0]) else None,
        "list": [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in table.to_dict("records")],
    }


# -- lag ----------------------------------------------------------------------------------------------------------------
def lag_tables(stats: pd.DataFrame, holds: Sequence[Hold], lives: dict[str, list[tuple[float, float]]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """At every ``queue_stats`` time, each queue's latest lag (messages; −1 = nothing committed, no part) charged to
    its holders at that time in equal shares: ``consumer_lag`` (t, consumer, lag) for the consumers alive then,
    and ``lag_total`` (t, lag = Σ queues, orphan_lag = the queues nobody held). A consumer's share sums its
    queues' lag divided by their holders, so the consumers and the orphans add up to the total."""
    if stats.empty:
        return (pd.DataFrame({"t": pd.Series([], dtype=float), "consumer": pd.Series([], dtype=object), "lag": pd.Series([], dtype=float)}),
                pd.DataFrame({"t": pd.Series([], dtype=float), "lag": pd.Series([], dtype=float), "orphan_lag": pd.Series([], dtype=float)}))
    wide = stats.pivot_table(index="t", columns="queue", values="lag", aggfunc="last").sort_index().ffill()
    times = wide.index.to_numpy(dtype=float)
    lag = wide.to_numpy(dtype=float)
    lag[lag < 0] = np.nan
    col = {q: j for j, q in enumerate(wide.columns)}
    spans: list[tuple[str, int, int, int]] = []  # (consumer, column, first time index, past-the-last)
    holders = np.zeros_like(lag)
    for h in holds:
        i0, i1 = int(np.searchsorted(times, h.start, "left")), int(np.searchsorted(times, h.end, "left"))
        if i1 <= i0:
            continue
        targets = [j for q, j in col.items() if q.startswith(prefix(h.queue))] if h.queue.endswith("/" + ALL_QUEUES) \
            else ([col[h.queue]] if h.queue in col else [])
        for j in targets:
            holders[i0:i1, j] += 1
            spans.append((h.consumer, j, i0, i1))
    share = np.where(holders > 0, np.nan_to_num(lag) / np.maximum(holders, 1), 0.0)
    per: dict[str, np.ndarray] = {c: np.zeros(len(times)) for c in lives}
    for c, j, i0, i1 in spans:
        per.setdefault(c, np.zeros(len(times)))[i0:i1] += share[i0:i1, j]
    recs_t, recs_c, recs_v = [], [], []
    for c, values in sorted(per.items()):
        alive = np.zeros(len(times), dtype=bool)
        for a, b in lives.get(c, []):
            alive |= (times >= a) & (times < b)
        alive |= values > 0
        recs_t.append(times[alive])
        recs_c += [c] * int(alive.sum())
        recs_v.append(values[alive])
    consumer = pd.DataFrame({"t": np.concatenate(recs_t) if recs_t else np.array([], dtype=float), "consumer": pd.Series(recs_c, dtype=object),
                             "lag": np.concatenate(recs_v) if recs_v else np.array([], dtype=float)}).sort_values(["t", "consumer"], kind="stable")
    defined = ~np.isnan(lag)
    total = np.where(defined.any(axis=1), np.nansum(lag, axis=1), np.nan)
    orphan = np.nansum(np.where(holders == 0, lag, np.nan), axis=1)
    return consumer.reset_index(drop=True), pd.DataFrame({"t": times, "lag": total, "orphan_lag": orphan})


def lag_figures(stats: pd.DataFrame, rates: dict[str, float], consumer: pd.DataFrame, total: pd.DataFrame,
                params: RunParams) -> dict[str, Any]:
    """Lag (messages behind the committed offset, from the brokers' ``queue_stats``) over every sample, the same
    in seconds of the queue's production, over the settle window, the group's total (a step series) and each
    consumer's share."""
    ok = stats[stats["lag"] >= 0]
    lag = ok["lag"].to_numpy(dtype=float)
    rate = ok["queue"].map(rates).to_numpy(dtype=float)
    secs = np.where(rate > 0, lag / np.where(rate > 0, rate, 1.0), np.nan)
    win = ok["t"].to_numpy(dtype=float) >= params.window_start
    t, v = total["t"].to_numpy(dtype=float), total["lag"].to_numpy(dtype=float)
    by_consumer = {str(c): float(g["lag"].max()) for c, g in consumer.groupby("consumer", sort=True)}
    return {
        "samples": int(len(stats)),
        "uncommitted": int((stats["lag"] < 0).sum()),
        "max": float(lag.max()) if lag.size else None,
        "p99": percentile(lag, 0.99),
        "max_s": float(np.nanmax(secs)) if np.isfinite(secs).any() else None,
        "p99_s": percentile(secs, 0.99),
        "window": {"max": float(lag[win].max()) if win.any() else None, "p99": percentile(lag[win], 0.99)},
        "total": {"max": float(np.nanmax(v)) if np.isfinite(v).any() else None, "p99": percentile(v, 0.99),
                  "run": step_stats(t, v, float(t[0]) if t.size else 0.0, params.end),
                  "window": step_stats(t, v, params.window_start, params.end)},
        "orphan_max": float(total["orphan_lag"].max()) if len(total) else None,
        "consumer_max": max(by_consumer.values()) if by_consumer else None,
        "by_consumer": by_consumer,
    }


# -- the parts ---------------------------------------------------------------------------------------------------------
def allocation_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    """Holdings, overlap and orphan windows (per queue and in total, over the run, after the start-up and over the
    settle window), membership changes, skew, and lag."""
    end = params.end
    holds = holdings(rows, end)
    queues = queue_lifetimes(rows, end)
    windows = allocation_windows(holds, queues)
    lives = consumer_lives(rows, end)
    changes = change_table(holds, windows, queues, lives, membership_changes(rows, params.options["change_merge_s"]), end)
    start = float(changes["stable_t"].iloc[0]) if len(changes) and bool(changes["stable"].iloc[0]) else \
        (float(changes["next"].iloc[0]) if len(changes) else 0.0)  # after the start-up: its stable allocation on
    stats = rows[rows["kind"] == "queue_stats"][["t", "queue", "lag"]]
    consumer_lag, lag_total = lag_tables(stats, holds, lives)
    index = {q: i for i, q in enumerate(sorted(set(queues) | {h.queue for h in holds if not h.queue.endswith("/" + ALL_QUEUES)}))}
    per_queue = pd.DataFrame({"queue": list(index), "index": list(index.values())})
    for kind in ("overlap", "orphan"):
        w = windows[windows["kind"] == kind]
        per_queue[f"{kind}_s"] = per_queue["queue"].map(w.groupby("queue")["seconds"].sum()).fillna(0.0)
        per_queue[f"{kind}_windows"] = per_queue["queue"].map(w.groupby("queue").size()).fillna(0).astype("int64")
    ok = stats[stats["lag"] >= 0]
    per_queue["lag_max"] = per_queue["queue"].map(ok.groupby("queue")["lag"].max()).astype(float)
    per_queue["lag_p99"] = per_queue["queue"].map(ok.groupby("queue")["lag"].apply(lambda s: percentile(s, 0.99))).astype(float)
    takes = pd.Series([h.queue for h in holds if h.mode in EXCLUSIVE_MODES], dtype=object)
    per_queue["takes"] = per_queue["queue"].map(takes.value_counts()).fillna(0).astype("int64")
    final = skew_at(holds, queues, lives, float(np.nextafter(end, -math.inf)))

    def exposure(kind: str) -> dict[str, Any]:
        w = windows[windows["kind"] == kind]
        return {"seconds": _seconds(windows, kind, -math.inf, math.inf), "after_start_s": _seconds(windows, kind, start, end),
                "window_s": _seconds(windows, kind, params.window_start, end), "windows": int(len(w)),
                "queues": int(w["queue"].nunique()), "longest_s": float(w["seconds"].max()) if len(w) else 0.0}

    holds_table = pd.DataFrame([(h.queue, h.consumer, h.mode, h.start, h.end) for h in holds],
                               columns=["queue", "consumer", "mode", "start", "end"]).astype({"start": float, "end": float})
    figures = {
        "queues": {"count": len(queues), "consumers": len(lives), "after_start_s": start,
                   "per_queue": {r["queue"]: {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items() if k != "queue"}
                                 for r in per_queue.to_dict("records")}},
        "holds": {"count": len(holds), "by_mode": {m: sum(1 for h in holds if h.mode == m) for m in sorted({h.mode for h in holds})}},
        "overlap": exposure("overlap"),
        "orphan": exposure("orphan"),
        "changes": change_figures(changes),
        "skew": {"final": final, "stable": distribution(changes.loc[~changes["startup"] & changes["stable"], "skew"].to_numpy(dtype=float)),
                 "excess_stable_max": float(changes.loc[changes["stable"], "excess"].max()) if changes["stable"].any() else None},
        "lag": lag_figures(stats, {q: r for q, (_a, _b, r) in queues.items()}, consumer_lag, lag_total, params),
    }
    return PartResult(figures, {"holdings": holds_table, "allocation_windows": windows, "queue_figures": per_queue,
                                "changes": changes, "consumer_lag": consumer_lag, "lag_total": lag_total})


def _union_length(ranges: np.ndarray) -> float:
    """Length of the union of [a, b) ranges (rows of ``ranges``)."""
    if not len(ranges):
        return 0.0
    r = ranges[np.argsort(ranges[:, 0], kind="stable")]
    total, a, b = 0.0, r[0, 0], r[0, 1]
    for x, y in r[1:]:
        if x > b:
            total += b - a
            a, b = x, y
        else:
            b = max(b, y)
    return total + b - a


def consumption_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    """Messages consumed, and consumed twice, exactly: every ``consume_progress`` carries the ``[from, to)`` offset
    ranges it consumed (``ranges``, read as pairs); per queue (a POP assignment's progress names the real queue),
    the duplicates are the lengths of all ranges minus the length of their union, PULL and POP alike.
    BROADCASTING consumers each consume every message by design: their ranges are left out. The POP messages
    ``pop_revived`` handed out again are reported beside them (a revived message is consumed twice only if the
    consumer that popped it first had consumed it)."""
    progress = rows[rows["kind"] == "consume_progress"]
    consumed = progress["consumed"].to_numpy(dtype=float)
    exclusive = progress[(progress["mode"] != "BROADCAST") & (progress["consumed"] > 0)]
    by_queue: dict[str, float] = {}
    by_mode: dict[str, float] = {}
    for q, g in exclusive.groupby("queue", sort=True):
        pairs = [(p[0], p[1]) for rs in g["ranges"] if rs is not None for p in rs]
        if not pairs:
            continue
        ranges = np.asarray(pairs, dtype=float)
        dup = float((ranges[:, 1] - ranges[:, 0]).sum() - _union_length(ranges))
        if dup > 1e-9:
            by_queue[str(q)] = dup
            mode = str(g["mode"].iloc[0]) if g["mode"].nunique() == 1 else "mixed"
            by_mode[mode] = by_mode.get(mode, 0.0) + dup
    revived = rows[rows["kind"] == "pop_revived"]
    redelivered = {str(q): float(g["messages"].sum()) for q, g in revived.groupby("queue", sort=True)}
    total = float(np.nansum(consumed))
    dups = float(sum(by_queue.values()))
    duplicates = {
        "messages": dups,
        "by_mode": by_mode,
        "pop_redelivered": float(sum(redelivered.values())),
        "total": dups,
        "consumed": total,
        "consumed_by_mode": {str(m): float(g["consumed"].sum()) for m, g in progress.groupby("mode", sort=True)},
        "share_pct": 100.0 * dups / total if total > 0 else None,
        "queues": len(by_queue),
        "by_queue": by_queue,
        "pop_redelivered_by_queue": redelivered,
    }
    if not total > 0:
        absent(duplicates, "share_pct", "nothing was consumed")
    return PartResult({"duplicates": duplicates})
