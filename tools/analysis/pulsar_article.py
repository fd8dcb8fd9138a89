"""The AvgShedder article's measured figures beside the emulated ones (BIGO's article, shared/seeds/000).

Every number the article reports for an experiment is a :class:`Row`: the article's figure (or the bound its
words give: "under 5 min", "not one unload"), a function computing the same figure from one run's trace, and a
tolerance. Over the seeds of a sweep each row gets the emulated mean, its spread (sd, min–max, a 95 %
t-interval of the mean) and a verdict: ``match``, ``within spread`` (the article's one run is a plausible
seed), ``differs`` (each with the row's reason why), or ``k/n seeds`` for a bound that only some seeds meet. The rating table gets the same treatment: each grade with its figure and a
bootstrap 95 % interval over seeds, and ``boundary`` where that interval crosses a grade threshold.

Components:

* :class:`ArticleRun`, :func:`load_run`, :func:`run_from_events`: one run's events as a pandas frame;
* the figures of one run: :func:`threshold_history` (ThresholdShedder's historical scores, replayed from the
  load reports the leader saw at each shedding cycle), :func:`shedding_placements`, :func:`rounds_after`,
  :func:`ratio_before` / :func:`ratio_after`, ... and :data:`ROWS` (the article's figures, one row each);
* :func:`figure_rows`, :func:`grade_rows`: the side-by-side tables over many runs;
* :func:`article_tables`: both, as the tables :meth:`PulsarRating.article` returns to the generic
  :func:`clusteremu.tools.compare.article_tables`.

The figures read the trace only (DESIGN.md principle 6), never a live emulator: a run directory is read with the
kernel's reader, so a hand-made list of events works the same (the tests' way).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from clusteremu.strategies.pulsar.config import PulsarConfig
from clusteremu.tools.compare import RunSummary

from . import load_balance
from .pulsar import live_reports
from .stats import step_stats

MINUTE = 60.0
#: The settle window of docs/analysis.md (its default): "after" figures are means over the run's last 10 min.
WINDOW_S = 600.0
#: Two shedding unloads of one broker at most this far apart are one round (docs/analysis.md, over-unloading).
ROUND_GAP_S = 300.0
#: 97.5 % quantiles of Student's t by degrees of freedom (1..30; the normal's beyond): a 95 % interval of a mean.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


# -- one run --------------------------------------------------------------------------------------------------
@dataclass
class ArticleRun:
    """One run as the article's figures read it: its scenario name, seed, scenario data and events."""

    name: str
    seed: int | None
    scenario: Mapping[str, Any]
    events: pd.DataFrame  # columns t, agent, seq, kind and every field of the kinds present
    end: float
    #: derived tables computed once per run (many rows read the same series)
    cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]

    def kind(self, *kinds: str) -> pd.DataFrame:
        return self.events[self.events["kind"].isin(kinds)]

    def fault_times(self, kind: str) -> list[float]:
        """When the scenario's faults of ``kind`` start (``[[faults]]`` ``at``), in order."""
        return sorted(float(f["at"]) for f in self.scenario.get("faults") or [] if f.get("kind") == kind)

    @property
    def config(self) -> PulsarConfig:
        return PulsarConfig(self.scenario.get("config") or {})


def _event_rows(events: Iterable[Any]) -> list[dict[str, Any]]:
    return [{"t": float(e.t), "agent": e.agent, "seq": int(e.seq), "kind": e.kind, **e.fields} for e in events]


def run_from_events(events: Iterable[Any], scenario: Mapping[str, Any], *, seed: int | None = None,
                    end: float | None = None) -> ArticleRun:
    """An :class:`ArticleRun` from events with ``t``, ``agent``, ``seq``, ``kind`` and ``fields`` (the kernel
    reader's :class:`Event`, or any object alike)."""
    frame = pd.DataFrame(_event_rows(events))
    if frame.empty:
        frame = pd.DataFrame(columns=["t", "agent", "seq", "kind"])
    frame = frame.sort_values(["t", "agent", "seq"], kind="stable").reset_index(drop=True)
    name = str((scenario.get("scenario") or {}).get("name", ""))
    stop = float(end) if end is not None else float(frame["t"].max()) if len(frame) else 0.0
    return ArticleRun(name, seed, scenario, frame, stop)


def load_run(run_dir: str | Path) -> ArticleRun:
    """A run directory read with the kernel's trace reader (its manifest gives the scenario, seed and end)."""
    from clusteremu.emulator.trace.reader import open_run

    run = open_run(run_dir)
    manifest = json.loads((Path(run_dir) / "manifest.json").read_text())
    until = manifest.get("until")
    return run_from_events(run.events(), manifest.get("scenario") or {}, seed=manifest.get("seed"),
                           end=float(until) if isinstance(until, (int, float)) else None)


# -- figures of one run ---------------------------------------------------------------------------------------
def shed_unloads(run: ArticleRun) -> pd.DataFrame:
    """``bundle_unloaded`` with reason ``shedding`` (the bundles the load manager moved), in time order."""
    u = run.kind("bundle_unloaded")
    return u[u["reason"] == "shedding"]


def usage_of(report: Mapping[str, Any], config: PulsarConfig) -> float:
    """The 5-argument weighted max resource usage (a fraction) ThresholdShedder scores a report by: the
    largest of cpu, memory, direct memory, bandwidth in and out (percentages) times their weights, NaN
    ignored, as Java's ``Math.max`` chain does on the report's ``ResourceUsage`` values."""
    names = ("cpu", "memory", "direct_memory", "bandwidth_in", "bandwidth_out")
    vals = [float(report[n]) * w for n, w in zip(names, config.resource_weights_5())
            if report.get(n) is not None and not math.isnan(float(report[n]))]
    return max(vals) / 100.0 if vals else math.nan


def _latest_reports(run: ArticleRun, before: float) -> dict[str, dict[str, Any]]:
    """Each live broker's latest load report written before ``before`` (the leader's view at a cycle: a write
    reaches it at least the network's latency later, so a report at the cycle's own time is not in it)."""
    reports = _live(run)
    reports = reports[reports["t"] < before]
    out: dict[str, dict[str, Any]] = {}
    for rec in reports.to_dict("records"):
        out[rec["agent"]] = rec
    return {b: r for b, r in out.items() if not math.isnan(float(r.get("cpu", math.nan)))}


@dataclass(frozen=True)
class HistoryCycle:
    """ThresholdShedder's view at one shedding cycle: each broker's historical score and current usage (both
    fractions), their averages, and the threshold (``loadBalancerBrokerThresholdShedderPercentage`` / 100)."""

    t: float
    history: dict[str, float]
    current: dict[str, float]
    threshold: float
    unloads: int

    @property
    def avg(self) -> float:
        return float(np.mean(list(self.history.values())))

    @property
    def current_avg(self) -> float:
        return float(np.mean(list(self.current.values())))


def _live(run: ArticleRun) -> pd.DataFrame:
    return run.cached("live", lambda: live_reports(run.events))


def threshold_history(run: ArticleRun) -> list[HistoryCycle]:
    """ThresholdShedder's historical scores at each of the leader's shedding cycles, replayed from the trace.

    The strategy keeps ``hist = u`` for a broker seen the first time, else ``hist · H + (1 − H) · u`` (``H``:
    ``loadBalancerHistoryResourcePercentage``), updated for every broker of the LoadData at every cycle
    (:mod:`clusteremu.strategies.pulsar.shedding.threshold_shedder`); the trace has the cycles
    (``shedding_cycle``) and the reports, so the history is recomputed here rather than logged. A new leader
    starts with a new strategy object, hence an empty history; a cycle skipped before the strategy ran (one
    broker left) updates nothing; the lower-boundary pass (off by default) updates it twice per idle cycle.
    """
    return run.cached("history", lambda: _replay_history(run))


def _replay_history(run: ArticleRun) -> list[HistoryCycle]:
    cfg = run.config
    h = float(cfg["loadBalancerHistoryResourcePercentage"])
    threshold = float(cfg["loadBalancerBrokerThresholdShedderPercentage"]) / 100.0
    lower = bool(cfg["lowerBoundarySheddingEnabled"])
    history: dict[str, float] = {}
    leader = None
    out = []
    for cyc in run.kind("shedding_cycle").to_dict("records"):
        if cyc.get("strategy") != "ThresholdShedder" or cyc.get("skipped") not in ("", "no_decision"):
            continue
        if cyc["agent"] != leader:
            leader, history = cyc["agent"], {}
        current = {b: usage_of(r, cfg) for b, r in sorted(_latest_reports(run, cyc["t"]).items())}
        for _pass in range(2 if lower and not cyc["unloads"] else 1):
            for b, u in current.items():
                history[b] = u if b not in history else history[b] * h + (1 - h) * u
        out.append(HistoryCycle(float(cyc["t"]), {b: history[b] for b in current}, current, threshold, int(cyc["unloads"])))
    return out


def first_threshold_unload(run: ArticleRun) -> HistoryCycle | None:
    """The first shedding cycle that unloaded something, with ThresholdShedder's scores then (the article's
    first ``brokerAvgResourceUsage`` log line)."""
    return next((c for c in threshold_history(run) if c.unloads > 0), None)


def shedding_placements(run: ArticleRun) -> pd.DataFrame:
    """The placement that chose each shed bundle's destination at shedding time: the leader's ``bundle_placed``
    of the bundle just before its ``unload_decided`` (same time), as the article's logs show
    LeastResourceUsageWithWeight run right after ThresholdShedder picked the bundle. Columns ``t``, ``bundle``,
    ``broker``, ``random_fallback``, ``above_average`` (the chosen broker's current score above the mean
    score of the candidates)."""
    return run.cached("placements", lambda: _shedding_placements(run))


def _shedding_placements(run: ArticleRun) -> pd.DataFrame:
    ev = run.kind("bundle_placed", "unload_decided")
    rows = []
    last_placed: dict[str, dict[str, Any]] = {}
    for rec in ev.to_dict("records"):
        if rec["kind"] == "bundle_placed":
            last_placed[rec["bundle"]] = rec
        elif rec.get("reason") == "shedding":
            p = last_placed.get(rec["bundle"])
            if p is None or p["t"] != rec["t"] or p["broker"] != rec["destination"]:
                continue
            scores = [float(v) for v in (p.get("scores") or {}).values() if not math.isnan(float(v))]
            mine = float((p.get("scores") or {}).get(p["broker"], math.nan))
            rows.append({"t": rec["t"], "bundle": rec["bundle"], "broker": p["broker"],
                         "random_fallback": bool(p["random_fallback"]),
                         "above_average": bool(scores) and mine > float(np.mean(scores))})
    return pd.DataFrame(rows, columns=["t", "bundle", "broker", "random_fallback", "above_average"])


def leading_random(run: ArticleRun) -> float | None:
    """How many shedding-time placements in a row, from the first, fell back to random ("连续四次都触发了")."""
    p = shedding_placements(run)
    if p.empty:
        return None
    flags = p["random_fallback"].to_numpy(dtype=bool)
    return float(len(flags) if flags.all() else int(np.argmin(flags)))


def _share_pct(run: ArticleRun, column: str) -> float | None:
    p = shedding_placements(run)
    return None if p.empty else 100.0 * float(p[column].mean())


def rounds_after(run: ArticleRun, since: float) -> list[dict[str, Any]]:
    """The shedding rounds (one broker's unloads at most :data:`ROUND_GAP_S` apart) that start at or after
    ``since``, each with ``broker``, ``start_s``, ``end_s``, ``unloads`` and ``over_unloaded`` (its broker left the
    least loaded: docs/analysis.md, over-unloading; None when undetermined)."""
    reports = _live(run)
    detail = load_balance.over_unloading(reports, shed_unloads(run), gap_s=ROUND_GAP_S, after_s=180.0,
                                         end=run.end)["rounds_detail"]
    return [d for d in detail if d["start_s"] >= since]


def _scale_in_at(run: ArticleRun) -> float | None:
    times = run.fault_times("scale_in")
    return times[0] if times else None


def _round(run: ArticleRun, i: int) -> float | None:
    at = _scale_in_at(run)
    rounds = rounds_after(run, at) if at is not None else []
    return float(rounds[i]["unloads"]) if len(rounds) > i else 0.0 if at is not None else None


def _cluster(run: ArticleRun) -> pd.DataFrame:
    return run.cached("cluster", lambda: load_balance.cluster_series(_live(run)))


def _in_force(cluster: pd.DataFrame, column: str, at: float) -> float | None:
    """The panel's value in force just before ``at`` (the last report strictly earlier)."""
    c = cluster[cluster["t"] < at]
    return float(c[column].iloc[-1]) if len(c) else None


def _window_mean(cluster: pd.DataFrame, column: str, end: float) -> float | None:
    if cluster.empty:
        return None
    return step_stats(cluster["t"].to_numpy(dtype=float), cluster[column].to_numpy(dtype=float),
                      max(0.0, end - WINDOW_S), end)["mean"]


def ratio_before(column: str, at: Callable[[ArticleRun], float | None]) -> Callable[[ArticleRun], float | None]:
    """The max/min panel ``column`` in force just before the time ``at(run)`` (None when there is none)."""
    def figure(run: ArticleRun) -> float | None:
        t = at(run)
        return None if t is None else _in_force(_cluster(run), column, t)
    return figure


def ratio_after(column: str) -> Callable[[ArticleRun], float | None]:
    """The max/min panel ``column`` averaged over the settle window (the last 10 min)."""
    return lambda run: _window_mean(_cluster(run), column, run.end)


def first_unload_s(run: ArticleRun, since: float = 0.0) -> float | None:
    u = shed_unloads(run)
    u = u[u["t"] >= since]
    return float(u["t"].iloc[0]) if len(u) else None


def last_unload_min(run: ArticleRun, since: float = 0.0) -> float:
    """Minutes from ``since`` to the last shedding unload after it (0 when none): when the unloads stopped."""
    u = shed_unloads(run)
    u = u[u["t"] >= since]
    return float(u["t"].max() - since) / MINUTE if len(u) else 0.0


def unloads_after(run: ArticleRun, since: float) -> float:
    return float((shed_unloads(run)["t"] >= since).sum())


def acting_cycles(run: ArticleRun) -> float:
    """Shedding cycles that unloaded something: the article's "shedding rounds" of AvgShedder."""
    c = run.kind("shedding_cycle")
    return float((c["unloads"] > 0).sum())


def unloads_per_hour_in_window(run: ArticleRun) -> float:
    t = shed_unloads(run)["t"]
    start = max(0.0, run.end - WINDOW_S)
    return float((t > start).sum()) * 3600.0 / (run.end - start) if run.end > start else 0.0


def strongest(run: ArticleRun) -> str | None:
    """The broker with the most cores (``cluster.machines``), None when all are alike."""
    cluster = run.scenario.get("cluster") or {}
    base = float((cluster.get("machine") or {}).get("cores") or 8.0)
    cores = {b: float((m or {}).get("cores") or base) for b, m in (cluster.get("machines") or {}).items()}
    if not cores or max(cores.values()) <= base:
        return None
    return max(sorted(cores), key=lambda b: cores[b])


def _msg_rate(g: pd.DataFrame) -> pd.Series:
    return g["msg_rate_in"] + g["msg_rate_out"]


def _window_broker_means(run: ArticleRun, value: Callable[[pd.DataFrame], pd.Series]) -> dict[str, float]:
    """Each broker's time-weighted mean of a report value over the settle window (its step series)."""
    reports = _live(run)
    start = max(0.0, run.end - WINDOW_S)
    out = {}
    for b, g in reports.groupby("agent"):
        g = g.sort_values("t", kind="stable")
        v = value(g)
        m = step_stats(g["t"].to_numpy(dtype=float), v.to_numpy(dtype=float), start, run.end)["mean"]
        if m is not None and not math.isnan(m):
            out[str(b)] = float(m)
    return out


def strong_usage_ratio(run: ArticleRun) -> float | None:
    """The strongest broker's score over the mean score of the others, over the settle window ("XXX.34的资源
    使用率还是不到其他机器的一半")."""
    s = strongest(run)
    means = _window_broker_means(run, lambda g: g["score"])
    others = [v for b, v in means.items() if b != s]
    if s is None or s not in means or not others or np.mean(others) <= 0:
        return None
    return means[s] / float(np.mean(others))


def strong_carries_most(run: ArticleRun) -> float | None:
    """1 when the strongest broker has the highest msg rate (in + out) over the settle window, else 0."""
    s = strongest(run)
    means = _window_broker_means(run, _msg_rate)
    if s is None or s not in means:
        return None
    return float(means[s] >= max(means.values()))


def spread_at_first_unload(run: ArticleRun) -> float | None:
    """The score spread (max − min of the latest scores) in force just before the first shedding unload: the
    gap of the pair AvgShedder evened ("63-38.5=24.5 > 15")."""
    t = first_unload_s(run)
    return None if t is None else _in_force(_cluster(run), "score_spread", t)


def departed_bundles_owners(run: ArticleRun, broker: str | None = None) -> dict[str, str]:
    """Where the bundles a scaled-in broker released went: bundle → its next owner (``bundle_owned``)."""
    at = _scale_in_at(run)
    if at is None:
        return {}
    leaving = broker or next(iter(next(f for f in run.scenario.get("faults") or [] if f.get("kind") == "scale_in")["agents"]))
    u = run.kind("bundle_unloaded")
    released = set(u[(u["agent"] == leaving) & (u["reason"] == "shutdown") & (u["t"] >= at)]["bundle"])
    owned = run.kind("bundle_owned")
    owners: dict[str, str] = {}
    for rec in owned[owned["t"] >= at].to_dict("records"):
        if rec["bundle"] in released and rec["bundle"] not in owners:
            owners[rec["bundle"]] = rec["agent"]
    return owners


def most_bundles_after_scale_in(run: ArticleRun) -> float | None:
    """The most bundles a surviving broker reported owning after the first scale-in (``load_report.num_bundles``)."""
    at = _scale_in_at(run)
    if at is None:
        return None
    leaving = {a for f in run.scenario.get("faults") or [] if f.get("kind") == "scale_in" for a in f.get("agents") or []}
    r = run.kind("load_report")
    r = r[(r["t"] >= at) & ~r["agent"].isin(leaving)]
    return float(r["num_bundles"].max()) if len(r) else None


def receivers(run: ArticleRun) -> float | None:
    owners = departed_bundles_owners(run)
    return float(len(set(owners.values()))) if owners else None


def share_on(broker_of: Callable[[ArticleRun], str | None]) -> Callable[[ArticleRun], float | None]:
    """% of the departed broker's bundles that went to ``broker_of(run)``."""
    def figure(run: ArticleRun) -> float | None:
        owners = departed_bundles_owners(run)
        b = broker_of(run)
        return 100.0 * sum(1 for o in owners.values() if o == b) / len(owners) if owners and b else None
    return figure


def _joined(run: ArticleRun) -> str | None:
    f = next((f for f in run.scenario.get("faults") or [] if f.get("kind") == "scale_out"), None)
    return f["agents"][0] if f and f.get("agents") else None


def first_round_to_new_pct(run: ArticleRun) -> float | None:
    """% of the first shedding round after a broker joined whose destination is the new broker."""
    times, new = run.fault_times("scale_out"), _joined(run)
    if not times or new is None:
        return None
    d = run.kind("unload_decided")
    d = d[(d["reason"] == "shedding") & (d["t"] >= times[0])]
    if d.empty:
        return None
    first = d[d["t"] == d["t"].iloc[0]]
    return 100.0 * float((first["destination"] == new).mean())


def _at_scale(kind: str) -> Callable[[ArticleRun], float | None]:
    def at(run: ArticleRun) -> float | None:
        times = run.fault_times(kind)
        return times[0] if times else None
    return at


def _minutes_to_first_after(kind: str) -> Callable[[ArticleRun], float | None]:
    def figure(run: ArticleRun) -> float | None:
        at = _at_scale(kind)(run)
        t = first_unload_s(run, at) if at is not None else None
        return None if t is None else (t - at) / MINUTE
    return figure


def _hist(pick: Callable[[HistoryCycle], float]) -> Callable[[ArticleRun], float | None]:
    """A figure of ThresholdShedder's first acting cycle, in score points (× 100)."""
    def figure(run: ArticleRun) -> float | None:
        c = first_threshold_unload(run)
        return None if c is None else 100.0 * pick(c)
    return figure


def _shed_broker(c: HistoryCycle) -> str:
    return max(sorted(c.history), key=lambda b: c.history[b])


# -- the rows -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One measured figure of the article beside its emulation.

    ``article`` is the article's number (None when it gives none), ``claim`` how the article says it. A row is
    judged by ``bound`` when the article states a bound or a yes/no (``("<", 5)``: every seed must be under 5;
    ``("==", 0)``: every seed exactly 0), else by ``tol``: the article's figure must lie within the seeds'
    [min − tol, max + tol]. ``why`` is printed when the emulation differs: the reason, as far as it is known;
    ``note`` always (what the figure hides: a bimodal spread, a scheduling phase).
    """

    key: str
    experiment: str
    scenario: str
    figure: str
    claim: str
    compute: Callable[[ArticleRun], float | None]
    article: float | None = None
    tol: float = 0.0
    bound: tuple[str, float] | None = None
    unit: str = ""
    why: str = ""
    note: str = ""


_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
}

_TH = "threshold scheme, three tasks started together"
_TS = "threshold scheme, scale-in by two brokers"
_UH = "uniform scheme, heterogeneous cluster"
_UJ = "uniform scheme, 1-min on/off jitter"
_AH = "AvgShedder, three tasks started together"
_AX = "AvgShedder, heterogeneous cluster"
_AJ = "AvgShedder, 1-min on/off jitter"
_AC = "AvgShedder, CPU spike"
_AI = "AvgShedder, scale-in by one broker"
_AO = "AvgShedder, scale-out (a broker joins)"
_AK = "AvgShedder, hash-placement corner case"

#: The article's first ThresholdShedder log lines (2024-06-11T15:33:42): historical scores and current usage.
ARTICLE_FIRST_UNLOAD = {
    "history": {"XXX.83": 14.64, "XXX.32": 17.81, "XXX.87": 13.44, "XXX.206": 28.95, "XXX.161": 11.92},
    "current": {"XXX.83": 62.01, "XXX.32": 61.43, "XXX.87": 34.53, "XXX.206": 68.51, "XXX.161": 41.94},
    "avg": 17.35, "threshold": 10.0,
}
_AFU = ARTICLE_FIRST_UNLOAD
_WHY_HIST = ("the emulated brokers idle at ~0 % (the article's idled at a few %) and the first cycle that acts "
             "comes when the busiest history passes avg + 10, so the creep from idle sets how far below the "
             "current usage the histories are")

ROWS: tuple[Row, ...] = (
    # -- threshold scheme, over-loading (阈值卸载器方案 / 过度加载问题)
    Row("th.settle", _TH, "threshold-homogeneous", "minutes until the unloads stop", "花费了22min才稳定了下来",
        last_unload_min, 22.0, tol=2.0, unit="min",
        why="some seeds start balanced enough that no history ever gets 10 points above the average (0 min), "
            "others keep a broker just over it for 40 min: the article's one run lies inside that spread"),
    Row("th.unloads", _TH, "threshold-homogeneous", "shedding unloads", "触发了8次bundle unload",
        lambda r: float(len(shed_unloads(r))), 8.0, tol=1.0, unit="unloads",
        why="some seeds never unload (above); the others need fewer moves than the article because "
            "LeastResourceUsageWithWeight stops falling back to random sooner (see the random placements)"),
    Row("th.first.min", _TH, "threshold-homogeneous", "minutes to the first unload (history creeping up from idle)",
        "not stated (the log shows the histories far below the current usage)",
        lambda r: (first_unload_s(r) or math.nan) / MINUTE, unit="min"),
    Row("th.first.hist_shed", _TH, "threshold-homogeneous", "first unload: historical score of the shed broker",
        "XXX.206: 28.95", _hist(lambda c: c.history[_shed_broker(c)]), _AFU["history"]["XXX.206"], tol=3.0,
        unit="points", why=_WHY_HIST),
    Row("th.first.hist_avg", _TH, "threshold-homogeneous", "first unload: average historical score (avgUsage)",
        "17.35", _hist(lambda c: c.avg), _AFU["avg"], tol=3.0, unit="points", why=_WHY_HIST),
    Row("th.first.hist_min", _TH, "threshold-homogeneous", "first unload: lowest historical score", "XXX.161: 11.92",
        _hist(lambda c: min(c.history.values())), _AFU["history"]["XXX.161"], tol=3.0, unit="points", why=_WHY_HIST),
    Row("th.first.margin", _TH, "threshold-homogeneous", "first unload: shed broker's score − (avg + threshold)",
        "28.95 − (17.35 + 10) = 1.60", _hist(lambda c: c.history[_shed_broker(c)] - c.avg - c.threshold),
        _AFU["history"]["XXX.206"] - _AFU["avg"] - _AFU["threshold"], tol=1.0, unit="points",
        why="the margin is at most one cycle's creep (10 % of the gap to the current usage): the emulated busiest "
            "broker is further above the others, so its last step is larger"),
    Row("th.first.cur_shed", _TH, "threshold-homogeneous", "first unload: current usage of the shed broker",
        "XXX.206: 68.51", _hist(lambda c: c.current[_shed_broker(c)]), _AFU["current"]["XXX.206"], tol=5.0,
        unit="%", why="the bundles' traffic is drawn per seed; the busiest broker's load is the lumpiness of 16 bundles"),
    Row("th.first.cur_avg", _TH, "threshold-homogeneous", "first unload: average current usage", "53.68",
        _hist(lambda c: c.current_avg), float(np.mean(list(_AFU["current"].values()))), tol=5.0, unit="%",
        why="the three tasks' CPU cost is the model's (resource_model: µs per message and per MiB), not "
            "measured on BIGO's hosts; the total is the same in every seed, hence the tiny sd"),
    Row("th.first.cur_min", _TH, "threshold-homogeneous", "first unload: lowest current usage", "XXX.87: 34.53",
        _hist(lambda c: min(c.current.values())), _AFU["current"]["XXX.87"], tol=5.0, unit="%",
        why="with 16 bundles on 5 brokers a seed can leave a broker with one or two light bundles"),
    Row("th.first.hist_ratio", _TH, "threshold-homogeneous", "first unload: avg historical score / avg current usage",
        "17.35 / 53.68 = 0.32", _hist(lambda c: c.avg / c.current_avg / 100.0),
        _AFU["avg"] / float(np.mean(list(_AFU["current"].values()))), tol=0.05,
        why=_WHY_HIST),
    Row("th.first.random", _TH, "threshold-homogeneous", "first unload: LeastResourceUsageWithWeight fell back to random",
        "Assign randomly as all 5 brokers are overloaded (yes = 1)",
        lambda r: (lambda p: None if p.empty else float(p["random_fallback"].iloc[0]))(shedding_placements(r)),
        bound=("==", 1.0)),
    Row("th.random.leading", _TH, "threshold-homogeneous", "random placements in a row from the first shedding placement",
        "连续四次都触发了 (4)", leading_random, 4.0, tol=0.0, unit="placements",
        why="LeastResourceUsageWithWeight moves its own history 10 % per call; the emulated leader calls it more "
            "than once per shed bundle (at shedding, again when the pick was the source itself, and for the "
            "lookups of the bundle's other topics, which reach the leader before the chosen broker owns it), so "
            "its histories spread 10 points after two shed bundles rather than four"),
    Row("th.random.share", _TH, "threshold-homogeneous", "% of shedding placements that fell back to random",
        "几乎是必现的 (all of those shown)", lambda r: _share_pct(r, "random_fallback"), 100.0, tol=10.0, unit="%",
        why="once the histories have spread 10 points, a broker below avg − 10 exists and is chosen (not random)"),
    Row("th.random.above", _TH, "threshold-homogeneous", "% of shedding placements onto an above-average broker",
        "分配到了高载的XXX.83 (the first shown)", lambda r: _share_pct(r, "above_average"), unit="%"),
    # -- threshold scheme, over-unloading (过度卸载问题)
    Row("ts.rounds", _TS, "threshold-scale-in", "shedding rounds after the scale-in", "主要执行了三轮负载均衡 (3)",
        lambda r: (lambda at: None if at is None else float(len(rounds_after(r, at))))(_scale_in_at(r)), 3.0, tol=0.0,
        unit="rounds", why="a round here is one broker's unloads at most 5 min apart; the emulated histories settle in "
                           "fewer (or more) rounds depending on how the two departed brokers' bundles landed"),
    Row("ts.round1", _TS, "threshold-scale-in", "bundles unloaded in the first round", "第一轮卸载了四次bundle (4)",
        lambda r: _round(r, 0), 4.0, tol=0.0, unit="bundles",
        why="a round lasts until the shed broker's history falls under avg + 10, which depends on how much load "
            "each moved bundle carried (drawn per seed)"),
    Row("ts.round2", _TS, "threshold-scale-in", "bundles unloaded in the second round", "这次卸载了11个bundle (11)",
        lambda r: _round(r, 1), 11.0, tol=0.0, unit="bundles",
        why="11 of the 16 bundles from one broker needs it to hold at least 11 (the article's random placements "
            "had piled them up); no emulated survivor holds that many (next row)"),
    Row("ts.held", _TS, "threshold-scale-in", "most bundles one broker holds after the scale-in",
        "at least 11 (implied by the second round)", most_bundles_after_scale_in, bound=(">=", 11.0), unit="bundles",
        why="the departed brokers' bundles are placed one by one, and LeastResourceUsageWithWeight's random "
            "fallback spreads them over the three survivors"),
    Row("ts.over", _TS, "threshold-scale-in", "of the first two rounds, those that left their broker the least loaded",
        "both (2)", lambda r: (lambda at: None if at is None else float(sum(1 for d in rounds_after(r, at)[:2]
                                                                           if d.get("over_unloaded"))))(_scale_in_at(r)),
        2.0, tol=0.0, unit="rounds",
        why="a round that ends after 1–2 bundles rarely moves its broker below the others"),
    Row("ts.balance", _TS, "threshold-scale-in", "minutes from the scale-in until the unloads stop", "总共耗时30min",
        lambda r: (lambda at: None if at is None else last_unload_min(r, at))(_scale_in_at(r)), 30.0, tol=3.0,
        unit="min", why="fewer rounds (above) end sooner"),
    # -- uniform scheme, heterogeneous (统一卸载器方案 / 异构环境)
    Row("uh.rate.before", _UH, "uniform-heterogeneous", "msg-rate max/min just before the first unload", "2.5",
        ratio_before("msg_rate_ratio", first_unload_s), 2.5, tol=0.3,
        why="the spread left by the initial placement of 64 bundles (10 heavy topics) is drawn per seed; "
            "the article's 2.5 is above most seeds (and seeds whose ratio starts under 1.5 never unload)"),
    Row("uh.rate.after", _UH, "uniform-heterogeneous", "msg-rate max/min, last 10 min", "1.2左右",
        ratio_after("msg_rate_ratio"), 1.2, tol=0.1,
        why="UniformLoadShedder stops once max/min ≤ 1.5 (its threshold) or once 20 % of the gap is smaller "
            "than every bundle of the busiest broker, so a seed ends anywhere under about 1.5"),
    Row("uh.tput.before", _UH, "uniform-heterogeneous", "throughput max/min just before the first unload", "2.5",
        ratio_before("throughput_ratio", first_unload_s), 2.5, tol=0.3,
        why="two message sizes: throughput and msg rate are not proportional per broker"),
    Row("uh.tput.after", _UH, "uniform-heterogeneous", "throughput max/min, last 10 min", "1.2左右",
        ratio_after("throughput_ratio"), 1.2, tol=0.1,
        why="the shedder balances msg rate first; throughput follows only as far as the bundles' sizes allow"),
    Row("uh.time", _UH, "uniform-heterogeneous", "minutes until the unloads stop", "5min以内就达到了稳定状态 (< 5)",
        last_unload_min, bound=("<", 5.0), unit="min",
        why="a seed can unload again later, when moving a heavy bundle overshoots the 1.5 ratio"),
    Row("uh.strong", _UH, "uniform-heterogeneous", "strong broker's score / the others' mean score, last 10 min",
        "远远比其他broker低 (far lower: < 0.5)", strong_usage_ratio, bound=("<", 0.5)),
    # -- uniform scheme, jitter (负载抖动)
    Row("uj.unloads", _UJ, "uniform-jitter", "shedding unloads per hour in the last 10 min",
        "一直在unload bundle (> 0)", unloads_per_hour_in_window, bound=(">", 0.0), unit="/h",
        why="a seed can reach a placement where the jitter topic's swing keeps the msg-rate max/min under 1.5 "
            "(UniformLoadShedder's threshold) and then has nothing to move: one of seeds 1–10 stops unloading at "
            "19 min; the others keep unloading to the end, as the article's cluster did"),
    # -- AvgShedder (平均卸载器方案 / 效果对比)
    Row("ah.rounds", _AH, "avgshedder-homogeneous", "shedding rounds (cycles that unloaded)", "只需触发这一次 (1)",
        acting_cycles, 1.0, tol=0.0, unit="rounds",
        why="a seed whose initial hash placement leaves a pair over 40 points is evened after 2 checks (3 min) "
            "and can leave another pair over 15, evened 8 checks later"),
    Row("ah.first", _AH, "avgshedder-homogeneous", "minutes to the unload", "连续检查8次(等待8min)后触发 (8)",
        lambda r: (first_unload_s(r) or math.nan) / MINUTE, 8.0, tol=1.0, unit="min",
        why="see the note",
        note="Bimodal over seeds: 9 min when the pair's gap is 15–40 (8 checks from the first cycle that sees the "
             "loaded reports, at 2 min), 3 min when it is over 40 (2 checks); the article's 24.5 is the first case."),
    Row("ah.gap", _AH, "avgshedder-homogeneous", "score gap of the evened pair before the unload",
        "63 − 38.5 = 24.5", spread_at_first_unload, 24.5, tol=5.0, unit="points",
        why="the gap is the lumpiness of the initial hash placement of 64 bundles, drawn per seed"),
    Row("ah.rate.before", _AH, "avgshedder-homogeneous", "msg-rate max/min just before the unload", "2.5",
        ratio_before("msg_rate_ratio", first_unload_s), 2.5, tol=0.3,
        why="the initial hash placement of 64 bundles is drawn per seed; the article's 2.5 is one draw"),
    Row("ah.rate.after", _AH, "avgshedder-homogeneous", "msg-rate max/min, last 10 min", "1.5",
        ratio_after("msg_rate_ratio"), 1.5, tol=0.2,
        why="the emulated brokers end more even than the article's: AvgShedder evens the pair's msg rate "
            "(maxUnloadPercentage 0.5) and the model's msg rate follows its CPU score closely"),
    Row("ax.strong", _AX, "avgshedder-heterogeneous", "strong broker's score / the others' mean score, last 10 min",
        "不到其他机器的一半 (< 0.5)", strong_usage_ratio, bound=("<", 0.5)),
    Row("ax.most", _AX, "avgshedder-heterogeneous", "strong broker carries the most msg rate (yes = 1)",
        "XXX.34的流量吞吐、消息速率显著高于其他机器", strong_carries_most, bound=("==", 1.0),
        why="AvgShedder evens the msg rates of the pair it balances (maxUnloadPercentage 0.5): the strong broker "
            "ends about level with its partner, and another broker whose score stays within 15 points of it (or "
            "over 15 for fewer than 8 checks) can keep more traffic"),
    Row("ax.ratio", _AX, "avgshedder-heterogeneous", "msg-rate max/min, last 10 min", "甚至达到了11",
        ratio_after("msg_rate_ratio"), 11.0, tol=1.0,
        why="AvgShedder moves half the pair's msg-rate difference from the higher-scored broker (needRate = "
            "(rate(max) − rate(min)) × maxUnloadPercentage): once the strong broker's msg rate reaches the loaded "
            "one's nothing more moves, whatever the score gap; the article's 11 needs a broker left almost "
            "idle, which this mechanism does not produce"),
    Row("aj.unloads", _AJ, "avgshedder-jitter", "shedding unloads in the last 10 min",
        "一次bundle unload都没有触发 (0)", lambda r: unloads_after(r, r.end - WINDOW_S), bound=("==", 0.0),
        unit="unloads", note="The jitter runs from the start here (the article added it to a balanced cluster): the "
                             "start-up rounds towards the strong broker, in the first minutes, are left out."),
    Row("ac.unloads", _AC, "avgshedder-cpu-spike", "shedding unloads from the spike on", "不能立马触发 (0)",
        lambda r: (lambda t: None if not t else unloads_after(r, t[0]))(r.fault_times("cpu_spike")),
        bound=("==", 0.0), unit="unloads",
        why="the scenario's spike (5 of 8 cores for 3 min: 3 checks) can lift the spiked broker's gap over 40 "
            "(loadBalancerAvgShedderHighThreshold) twice in a row when it was already the busiest, and 2 checks "
            "over 40 trigger; the article's spike came down sooner"),
    Row("ai.receivers", _AI, "avgshedder-scale-in", "survivors that received the departed broker's bundles",
        "3 of 4 (3 bundles)", receivers, 3.0, tol=1.0, unit="brokers",
        why="the departed broker held more bundles than the article's 3 (next row), so the hash reaches all 4 "
            "survivors"),
    Row("ai.handed", _AI, "avgshedder-scale-in", "bundles the departed broker handed over", "总共3个bundle (3)",
        lambda r: float(len(departed_bundles_owners(r))) if _scale_in_at(r) is not None else None, 3.0, tol=1.0,
        unit="bundles", why="all 64 emulated bundles carry topics (200 topics), so each broker holds about a fifth "
                            "of them; the article's topics filled few of its 64 bundles"),
    Row("ai.unloads", _AI, "avgshedder-scale-in", "shedding unloads after the scale-in", "缩容后没有触发bundle unload (0)",
        lambda r: (lambda at: None if at is None else unloads_after(r, at))(_scale_in_at(r)), bound=("==", 0.0),
        unit="unloads", why="the departed broker's many bundles (above; the article's had 3) shift the "
                            "survivors' scores apart by more than 15 points for the 8 checks, and AvgShedder evens "
                            "the pair"),
    Row("ai.rate.before", _AI, "avgshedder-scale-in", "msg-rate max/min before the scale-in", "1.25",
        ratio_before("msg_rate_ratio", _scale_in_at), 1.25, tol=0.15,
        why="the initial hash spread, drawn per seed"),
    Row("ai.rate.after", _AI, "avgshedder-scale-in", "msg-rate max/min, last 10 min", "1.5",
        ratio_after("msg_rate_ratio"), 1.5, tol=0.2,
        why="the departed broker's many bundles, hashed over the survivors and then evened by AvgShedder (above), "
            "leave the rates more even than the article's 3 bundles did"),
    Row("ao.first", _AO, "avgshedder-scale-out", "minutes from the join to the first unload",
        "只需等待2min (2 checks over 40)", _minutes_to_first_after("scale_out"), 2.0, tol=1.0, unit="min",
        why="see the note",
        note="The joining broker reports at once (idle: over 40 points below the busiest), so the cycle right after "
             "the join is the first check and the next one, 1 min later, triggers: 1–2 min by the cycle's phase."),
    Row("ao.to_new", _AO, "avgshedder-scale-out", "% of that round's unloads going to the new broker",
        "最高载的XXX.161与新加入的XXX.87均摊负载 (100)", first_round_to_new_pct, 100.0, tol=0.0, unit="%",
        why="AvgShedder pairs several brokers per cycle when more than one gap passes a threshold"),
    Row("ak.on_new", _AK, "avgshedder-hash-corner-case", "% of broker-3's bundles that went to broker-5",
        "plain hash: 绝大部分 (most); AvgShedder hashes with a random number (< 50)",
        share_on(lambda r: _joined(r)), bound=("<", 50.0), unit="%"),
    Row("ak.receivers", _AK, "avgshedder-hash-corner-case", "brokers that received broker-3's bundles",
        "plain hash: 1 (broker5); with the random number: several (> 1)", receivers, bound=(">", 1.0), unit="brokers"),
)


# -- over seeds -----------------------------------------------------------------------------------------------
@dataclass
class Spread:
    """A figure over seeds: ``n`` values, their mean, sd, min, max and the 95 % t-interval of the mean."""

    values: list[float] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float | None:
        return float(np.mean(self.values)) if self.values else None

    @property
    def sd(self) -> float | None:
        return float(np.std(self.values, ddof=1)) if self.n > 1 else None

    def ci(self) -> tuple[float, float] | None:
        if self.n < 2:
            return None
        q = _T975[self.n - 2] if self.n - 1 <= len(_T975) else 1.96
        h = q * (self.sd or 0.0) / math.sqrt(self.n)
        return (self.mean - h, self.mean + h)  # type: ignore[operator]


def verdict(row: Row, spread: Spread) -> str:
    """``match`` (the article's figure within the 95 % interval of the emulated mean, widened by the row's
    tolerance), ``within spread`` (outside it, but within the seeds' min–max so widened: one run of the article
    is a plausible draw), ``differs``; for a bound, ``match`` / ``differs`` / ``k/n seeds`` (some seeds meet it);
    ``—`` without a figure."""
    if not spread.n:
        return "—"
    if row.bound is not None:
        op, x = row.bound
        ok = sum(1 for v in spread.values if _OPS[op](v, x))
        return "match" if ok == spread.n else "differs" if ok == 0 else f"{ok}/{spread.n} seeds"
    if row.article is None:
        return "(not reported)"
    ci = spread.ci() or (spread.mean, spread.mean)
    if ci[0] - row.tol <= row.article <= ci[1] + row.tol:  # type: ignore[operator]
        return "match"
    lo, hi = min(spread.values) - row.tol, max(spread.values) + row.tol
    # The article is one run: inside the seeds' range it is a plausible draw, though off the emulated mean.
    return "within spread" if lo <= row.article <= hi else "differs"


def _num(v: float | None, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return f"{v:.{digits}f}".rstrip("0").rstrip(".") if abs(v) < 1e6 else f"{v:.3g}"


def figure_rows(runs: Sequence[ArticleRun]) -> list[dict[str, Any]]:
    """Each :data:`ROWS` row over the runs of its scenario (one value per run, seeds pooled)."""
    by_name: dict[str, list[ArticleRun]] = {}
    for r in runs:
        by_name.setdefault(r.name, []).append(r)
    out = []
    for row in ROWS:
        values = [row.compute(r) for r in sorted(by_name.get(row.scenario, []), key=lambda r: r.seed or 0)]
        spread = Spread([float(v) for v in values if v is not None and not math.isnan(float(v))])
        v = verdict(row, spread)
        out.append({"key": row.key, "experiment": row.experiment, "scenario": row.scenario, "figure": row.figure,
                    "article": row.claim, "article_value": row.article, "bound": row.bound, "unit": row.unit,
                    "n": spread.n, "mean": spread.mean, "sd": spread.sd,
                    "min": min(spread.values) if spread.n else None, "max": max(spread.values) if spread.n else None,
                    "ci95": spread.ci(), "values": spread.values, "verdict": v,
                    "why": " ".join(x for x in (row.why if v not in ("match", "—", "(not reported)") else "", row.note) if x)})
    return out


# -- the rating table over seeds ------------------------------------------------------------------------------
#: The article's rating table (its 良 / 一般 / 差 as good / fair / poor).
ARTICLE_GRADES: dict[str, dict[str, str]] = {
    "ThresholdShedder+LeastResourceUsageWithWeight": {
        "heterogeneous": "fair", "jitter": "good", "over_loading": "poor", "over_unloading": "poor", "speed": "fair"},
    "UniformLoadShedder+LeastLongTermMessageRate": {
        "heterogeneous": "poor", "jitter": "poor", "over_loading": "good", "over_unloading": "good", "speed": "fair"},
    "AvgShedder+AvgShedder": {
        "heterogeneous": "fair", "jitter": "good", "over_loading": "good", "over_unloading": "good", "speed": "good"},
}
#: Bootstrap resamples of the seeds for a grade's interval (fixed generator: the table is reproducible).
BOOTSTRAP = 2000


def grade_rows(summaries: Sequence[RunSummary], *, resamples: int = BOOTSTRAP) -> list[dict[str, Any]]:
    """Each strategy × criterion of the Pulsar rating: the grade of all seeds pooled, its figure, and a 95 %
    percentile-bootstrap interval over seeds (the seeds resampled with replacement, each carrying all its runs,
    the criterion's figure recomputed exactly as :func:`.pulsar_rating.rate` does). ``verdict``: ``match`` (the
    article's grade, interval inside its band), ``match, on a boundary`` (the interval crosses a threshold),
    ``differs``, or ``differs, on a boundary`` (the interval reaches the article's band)."""
    from .pulsar_rating import FIGURES, MODEL, RatingRules
    from .pulsar_rating import strategy_label

    rules = RatingRules()
    groups: dict[str, list[RunSummary]] = {}
    for s in summaries:
        if s.model == MODEL:
            groups.setdefault(strategy_label(s.scenario), []).append(s)
    rng = np.random.default_rng(0)
    out = []
    order = list(ARTICLE_GRADES)
    for label, runs in sorted(groups.items(), key=lambda kv: (order.index(kv[0]) if kv[0] in order else len(order), kv[0])):
        seeds = sorted({r.seed for r in runs if r.seed is not None})
        for name, crit in rules.criteria().items():
            chosen = [r for r in runs if crit.selects(r.name)]
            if not chosen:
                continue
            figure = FIGURES[name](chosen, rules)
            if figure is None or math.isnan(figure):
                continue
            by_seed = {s: [r for r in chosen if r.seed == s] for s in seeds}
            boot = []
            for _ in range(resamples if len(seeds) > 1 else 0):
                pick = rng.choice(seeds, size=len(seeds), replace=True)
                f = FIGURES[name]([r for s in pick for r in by_seed[int(s)]], rules)
                if f is not None and not math.isnan(f):
                    boot.append(f)
            ci = (float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))) if boot else None
            grade = crit.grade(figure)
            bands = {crit.grade(ci[0]), crit.grade(ci[1])} if ci else {grade}
            article = ARTICLE_GRADES.get(label, {}).get(name)
            if article is None:
                v = ""
            elif grade == article:
                v = "match" if bands == {grade} else "match, on a boundary"
            else:
                reach = ci is not None and _band_reached(crit, ci, article)
                v = "differs, on a boundary" if reach else "differs"
            out.append({"strategy": label, "criterion": name, "article": article, "grade": grade, "figure": figure,
                        "ci95": ci, "seeds": len(seeds), "unit": crit.unit, "good": crit.good, "fair": crit.fair,
                        "verdict": v})
    return out


def _band_reached(crit: Any, ci: tuple[float, float], grade: str) -> bool:
    """Whether the interval [lo, hi] touches the band of ``grade`` (the figures grading as it)."""
    lo, hi = ci
    probes = [lo, hi, crit.good, crit.fair]
    return any(lo <= p <= hi and crit.grade(p) == grade for p in probes)


# -- tables ---------------------------------------------------------------------------------------------------
def _interval(ci: tuple[float, float] | None) -> str:
    return "—" if ci is None else f"[{_num(ci[0])}, {_num(ci[1])}]"


def article_tables(summaries: Sequence[RunSummary], runs: Sequence[ArticleRun] | None = None) -> list[dict[str, Any]]:
    """The two side-by-side tables, as generic tables (``title``, ``columns``, ``rows``, ``notes``): the
    article's measured figures beside the emulated ones, and its rating table with intervals over seeds.
    ``runs`` defaults to the summaries' run directories read with :func:`load_run`."""
    if runs is None:
        runs = [load_run(s.dir) for s in summaries if s.model == "pulsar"]
    seeds = sorted({r.seed for r in runs if r.seed is not None})
    fig = figure_rows(runs)
    cols = ["experiment", "figure", "article", "emulated mean", "sd", "min–max", "95 % CI", "n", "verdict",
            "why it differs / note"]
    rows = [[f["experiment"], f["figure"] + (f" ({f['unit']})" if f["unit"] else ""), f["article"], _num(f["mean"]),
             _num(f["sd"]), f"{_num(f['min'])}–{_num(f['max'])}" if f["n"] else "—", _interval(f["ci95"]),
             str(f["n"]), f["verdict"], f["why"]] for f in fig]
    grades = grade_rows(summaries)
    gcols = ["strategy", "criterion", "article", "emulated", "figure", "95 % CI (bootstrap over seeds)", "thresholds",
             "verdict"]
    grows = [[g["strategy"], g["criterion"], g["article"] or "—", g["grade"], _num(g["figure"]), _interval(g["ci95"]),
              f"good {'≥' if g['good'] > g['fair'] else '≤'} {_num(g['good'])}, fair {'≥' if g['good'] > g['fair'] else '≤'} "
              f"{_num(g['fair'])}", g["verdict"]] for g in grades]
    seed_text = f"seeds {seeds[0]}..{seeds[-1]}" if seeds else "no seeds"
    return [
        {"title": f"The AvgShedder article's measured figures beside the emulation ({seed_text})", "columns": cols,
         "rows": rows, "data": fig,
         "notes": ["verdict: 'match' when the article's value lies in the 95 % interval of the emulated mean "
                   "widened by the row's tolerance; 'within spread' when only in the seeds' min–max so widened (the "
                   "article reports one run); a bound or yes/no (the article's words) must hold on every seed."]},
        {"title": f"The article's rating table over seeds ({seed_text})", "columns": gcols, "rows": grows,
         "data": grades,
         "notes": ["the grade is that of all seeds pooled (clusteremu compare); the interval resamples whole seeds; "
                   "'on a boundary': the interval crosses a grade threshold, so another set of seeds can grade "
                   "differently."]},
    ]
