"""Load-balancing figures that follow a run through time: pure pandas/numpy, one run at a time.

The Spark job of :mod:`clusteremu.tools.analysis.pulsar` calls these in its executors (``applyInPandas`` per run), the tests
call them on hand-made frames. Every input is a DataFrame of one run's events in the shape of the decoded
trace (columns ``t``, ``agent``, ``seq``, ``kind`` and the fields used); "latest value per broker" is the
definition of :mod:`clusteremu.tools.analysis.pulsar_series`, which these functions call. docs/analysis.md is the reference for
every definition; the docstrings repeat the essentials.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from . import pulsar_series as series
from .model import absent
from .stats import step_stats

#: The columns of :func:`cluster_series`.
CLUSTER_SERIES_COLUMNS = ("t", "score_spread", "msg_rate_ratio", "throughput_ratio", "brokers")


def cluster_series(reports: pd.DataFrame) -> pd.DataFrame:
    """The spread and ratio panels at every report time: ``t``, ``score_spread`` (max − min of the brokers'
    latest scores), ``msg_rate_ratio`` (max / min of msg rate in + out), ``throughput_ratio`` (max / min of
    throughput in + out) and ``brokers`` (how many brokers had a score)."""
    if reports.empty:
        return pd.DataFrame({c: pd.Series(dtype="int64" if c == "brokers" else "float64") for c in CLUSTER_SERIES_COLUMNS})
    spread = series.score_spread(reports)
    rate = series.msg_rate_ratio(reports)
    tput = series.throughput_ratio(reports)
    out = spread[["t", "score_spread", "brokers"]].copy()
    out["msg_rate_ratio"] = rate["msg_rate_ratio"].to_numpy()
    out["throughput_ratio"] = tput["throughput_ratio"].to_numpy()
    return out[list(CLUSTER_SERIES_COLUMNS)]


def series_figures(cluster: pd.DataFrame, end: float, window_start: float) -> dict[str, Any]:
    """For each of score_spread, msg_rate_ratio, throughput_ratio: ``run`` (mean, max, final over
    [first report, end]) and ``window`` (mean, max over the settle window [window_start, end]), time-weighted
    as step series (see :func:`clusteremu.tools.analysis.stats.step_stats`)."""
    t = cluster["t"].to_numpy(dtype=float)
    out = {}
    for name in ("score_spread", "msg_rate_ratio", "throughput_ratio"):
        v = cluster[name].to_numpy(dtype=float)
        run = step_stats(t, v, t[0] if t.size else 0.0, end)
        win = step_stats(t, v, window_start, end)
        window = {"mean": win["mean"], "max": win["max"]}
        in_window = "no load report in force in the settle window" if t.size else "no load report in the run"
        for stats, names, why in ((run, ("mean", "max", "final"), "no load report in the run"),
                                  (window, ("mean", "max"), in_window)):
            for key in names:
                if stats[key] is None:
                    absent(stats, key, why)
        out[name] = {"run": run, "window": window}
    return out


def settle_time(
    spread_t: np.ndarray,
    spread_v: np.ndarray | None,
    unload_t: np.ndarray,
    *,
    end: float,
    window: float,
    threshold: float | None,
) -> float | None:
    """The time from which the cluster stays settled to the end of the run, or None if it never does.

    The cluster is settled from T when no shedding unload happens in (T, ``end``] and, if ``threshold`` is
    given, every score spread in force during [T, ``end``] is defined and at most ``threshold`` (a NaN or
    infinite spread is not). The result is the earliest such T — the last unload, or the report time from which
    the spread stays under the threshold, whichever is later (0 when neither applies) — provided the settled
    stretch was observed for at least ``window`` seconds (T + window ≤ end); otherwise None: the run ended
    before the cluster had been quiet for a whole window.
    """
    u = np.asarray(unload_t, dtype=float)
    settled = float(u.max()) if u.size else 0.0
    if threshold is not None:
        st = np.asarray(spread_t, dtype=float)
        sv = np.asarray(spread_v, dtype=float)
        if st.size == 0:
            return None
        bad = np.flatnonzero(np.isnan(sv) | (sv > threshold))
        first_good = int(bad[-1]) + 1 if bad.size else 0
        if first_good >= st.size:
            return None
        settled = max(settled, float(st[first_good]))
    return settled if settled + window <= end else None


def settle_figures(
    cluster: pd.DataFrame, unload_t: np.ndarray, *, end: float, window: float, threshold: float
) -> dict[str, Any]:
    """``time_s`` (settled for good: no more unloads and the spread at most ``threshold``, observed for at least
    ``window``), ``quiet_time_s`` (the same with the unload criterion alone), ``settled``, and
    ``unloads_before`` (shedding unloads up to ``time_s``; all of them when the run never settled). A time that
    does not exist is absent with the reason (:func:`unsettled_reason`), not a number."""
    t = cluster["t"].to_numpy(dtype=float)
    v = cluster["score_spread"].to_numpy(dtype=float)
    settled = settle_time(t, v, unload_t, end=end, window=window, threshold=threshold)
    quiet = settle_time(t, None, unload_t, end=end, window=window, threshold=None)
    u = np.asarray(unload_t, dtype=float)
    out: dict[str, Any] = {
        "time_s": settled,
        "quiet_time_s": quiet,
        "settled": settled is not None,
        "unloads_before": int((u <= settled).sum()) if settled is not None else int(u.size),
        "window_s": window,
        "spread_threshold": threshold,
    }
    if settled is None:
        absent(out, "time_s", unsettled_reason(t, v, u, end=end, window=window, threshold=threshold))
    if quiet is None:
        absent(out, "quiet_time_s", unsettled_reason(t, None, u, end=end, window=window, threshold=None))
    return out


def unsettled_reason(
    spread_t: np.ndarray, spread_v: np.ndarray | None, unload_t: np.ndarray, *, end: float, window: float, threshold: float | None
) -> str:
    """Why :func:`settle_time` found no settle time, in words."""
    head = f"not settled by the end of the run ({end:,.0f} s)"
    last_unload = float(unload_t.max()) if unload_t.size else None
    since = last_unload if last_unload is not None else 0.0
    if threshold is not None:
        if spread_t.size == 0:
            return f"{head}: no load report, so no score spread"
        last = float(spread_v[-1])
        if math.isnan(last) or last > threshold:
            value = "undefined" if math.isnan(last) else f"{last:,.4g}"
            return f"{head}: the score spread is {value} at the end, above {threshold:g}"
        bad = np.flatnonzero(np.isnan(spread_v) | (spread_v > threshold))
        if bad.size:
            since = max(since, float(spread_t[bad[-1] + 1]))
    what = "the last shedding unload" if last_unload is not None and since == last_unload else "the spread under the threshold"
    return f"{head}: quiet since {since:,.0f} s ({what}), less than the settle window ({window:,.0f} s)"


def shedding_rounds(unloads: pd.DataFrame, gap_s: float) -> pd.DataFrame:
    """Rounds of shedding unloads per broker: a broker's unloads at most ``gap_s`` apart form one round.
    Columns ``broker``, ``start_s``, ``end_s``, ``unloads``, sorted by start then broker."""
    rows = []
    for broker, grp in unloads.groupby("agent", sort=True):
        times = np.sort(grp["t"].to_numpy(dtype=float))
        breaks = np.flatnonzero(np.diff(times) > gap_s) + 1
        for chunk in np.split(times, breaks):
            rows.append((broker, float(chunk[0]), float(chunk[-1]), int(chunk.size)))
    out = pd.DataFrame(rows, columns=["broker", "start_s", "end_s", "unloads"])
    return out.sort_values(["start_s", "broker"], kind="stable").reset_index(drop=True)


def over_unloading(
    reports: pd.DataFrame, unloads: pd.DataFrame, *, gap_s: float, after_s: float, end: float
) -> dict[str, Any]:
    """Shedding rounds that unloaded a broker so far that it became the least loaded.

    For a round of broker B from t0 to t1 (see :func:`shedding_rounds`): *before* is the brokers' latest scores
    at t0, *after* their latest scores at t1 + ``after_s``. The round over-unloaded B when B's score before was
    above the mean of the other brokers' scores (B was shed for being loaded) and B's score after is below
    every other broker's (B is now the least loaded; a tie is balance, not over-unloading). A round is *undetermined* (counted in neither way) when
    t1 + ``after_s`` is past ``end``, when B wrote no report in (t1, t1 + after_s], or when a needed score is
    missing or NaN. ``share_pct`` is events / determined rounds × 100 (absent, with the reason, without
    determined rounds).
    """
    rounds = shedding_rounds(unloads, gap_s)
    wide = series.latest_values(reports, "score") if not reports.empty else pd.DataFrame()
    times = wide.index.to_numpy(dtype=float) if not wide.empty else np.array([])
    cols = list(wide.columns)
    values = wide.to_numpy(dtype=float) if not wide.empty else np.empty((0, 0))
    report_t = {b: np.sort(g["t"].to_numpy(dtype=float)) for b, g in reports.groupby("agent")} if not reports.empty else {}

    def at(t: float) -> dict[str, float] | None:
        i = int(np.searchsorted(times, t, side="right")) - 1
        if i < 0:
            return None
        return {b: values[i, j] for j, b in enumerate(cols) if not math.isnan(values[i, j])}

    details, events, undetermined = [], 0, 0
    by_broker: dict[str, int] = {}
    for r in rounds.itertuples(index=False):
        b = r.broker
        judged_at = r.end_s + after_s
        before = at(r.start_s)
        after = at(judged_at)
        rt = report_t.get(b, np.array([]))
        reported_after = bool(((rt > r.end_s) & (rt <= judged_at)).any())
        entry: dict[str, Any] = {"broker": b, "start_s": r.start_s, "end_s": r.end_s, "unloads": r.unloads}
        if judged_at > end or not reported_after or not before or not after or b not in before or b not in after:
            entry["over_unloaded"] = None
            undetermined += 1
            details.append(entry)
            continue
        others_before = [v for k, v in before.items() if k != b]
        others_after = [v for k, v in after.items() if k != b]
        if not others_before or not others_after:
            entry["over_unloaded"] = None
            undetermined += 1
            details.append(entry)
            continue
        with np.errstate(invalid="ignore"):
            mean_before = float(np.mean(others_before))
        was_high = before[b] > mean_before
        now_least = after[b] < min(others_after)
        over = bool(was_high and now_least)
        entry.update(
            score_before=before[b],
            others_mean_before=mean_before,
            score_after=after[b],
            others_min_after=float(min(others_after)),
            over_unloaded=over,
        )
        details.append(entry)
        if over:
            events += 1
            by_broker[b] = by_broker.get(b, 0) + 1
    determined = len(rounds) - undetermined
    out: dict[str, Any] = {
        "rounds": int(len(rounds)),
        "determined": int(determined),
        "undetermined": int(undetermined),
        "events": int(events),
        "share_pct": 100.0 * events / determined if determined else None,
        "by_broker": dict(sorted(by_broker.items())),
        "rounds_detail": details,
    }
    if not determined:
        absent(out, "share_pct", "no shedding round could be judged" if len(rounds) else "no shedding round")
    return out


def over_loading(bundle_events: pd.DataFrame, *, window_start: float) -> dict[str, Any]:
    """Placements of shed bundles on brokers that were above the average score at that moment.

    ``bundle_events`` holds the run's ``unload_decided``, ``bundle_unloaded`` and ``bundle_placed`` events
    (columns ``t``, ``agent``, ``seq``, ``kind``, ``bundle``, ``reason``, ``broker``, and ``above_average``:
    whether the placed broker's score in ``bundle_placed.scores`` exceeded the mean of the finite scores there,
    or was +inf). A placement is *after shedding* when the latest earlier event of its bundle among those three
    kinds (canonical order) is an ``unload_decided`` or a ``bundle_unloaded`` with reason ``shedding``; an
    over-loading event is a placement after shedding that was above average. ``share_pct`` is events /
    placements after shedding × 100 (absent, with the reason, without any).
    """
    if bundle_events.empty:
        placed = bundle_events
        after = above = events = pd.Series([], dtype=bool)
    else:
        df = bundle_events.sort_values(["t", "agent", "seq"], kind="stable").reset_index(drop=True)
        shed = (df["kind"] == "unload_decided") | ((df["kind"] == "bundle_unloaded") & (df["reason"] == "shedding"))
        prev_shed = shed.groupby(df["bundle"]).shift(1, fill_value=False).astype(bool)
        is_placed = df["kind"] == "bundle_placed"
        placed = df[is_placed]
        after = prev_shed[is_placed]
        above = placed["above_average"].astype("boolean").fillna(False).astype(bool)
        events = after & above
    ev = placed[events.to_numpy()] if len(placed) else placed
    by_broker = ev["broker"].value_counts().sort_index().to_dict() if len(ev) else {}
    n_after = int(after.sum())
    out: dict[str, Any] = {
        "placements": int(len(placed)),
        "placements_above_average": int(above.sum()),
        "after_shedding": n_after,
        "events": int(events.sum()),
        "share_pct": 100.0 * int(events.sum()) / n_after if n_after else None,
        "window_events": int((ev["t"] >= window_start).sum()) if len(ev) else 0,
        "by_broker": {str(k): int(v) for k, v in by_broker.items()},
    }
    if not n_after:
        absent(out, "share_pct", "no placement after shedding")
    return out


def leadership(leader_events: pd.DataFrame, *, end: float) -> dict[str, Any]:
    """``elections`` (leader_elected events), ``changes`` (elections whose ``previous`` leader was another
    broker), ``vacancies`` (leader_vacant events) and ``leaderless_s``: the time from each vacancy to the next
    election (or to ``end``); the start-up before the first election is not a vacancy. Without any of these
    events ``leaderless_s`` is absent: the trace says nothing about leadership."""
    if leader_events.empty:
        out: dict[str, Any] = {"elections": 0, "changes": 0, "vacancies": 0}
        absent(out, "leaderless_s", "no leader election or vacancy in the trace")
        return out
    df = leader_events.sort_values(["t", "agent", "seq"], kind="stable")
    elected = df[df["kind"] == "leader_elected"]
    prev = elected["previous"].fillna("")
    changes = int(((prev != "") & (prev != elected["agent"])).sum())
    vacant_since: float | None = None
    leaderless = 0.0
    for t, kind in zip(df["t"].to_numpy(dtype=float), df["kind"]):
        if kind == "leader_vacant" and vacant_since is None:
            vacant_since = t
        elif kind == "leader_elected" and vacant_since is not None:
            leaderless += t - vacant_since
            vacant_since = None
    if vacant_since is not None:
        leaderless += max(end - vacant_since, 0.0)
    return {
        "elections": int(len(elected)),
        "changes": changes,
        "vacancies": int((df["kind"] == "leader_vacant").sum()),
        "leaderless_s": float(leaderless),
    }
