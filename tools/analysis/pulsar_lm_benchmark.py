"""Pulsar's published load-manager benchmark (modular against extensible load manager), emulated.

Pulsar's documentation published, for Pulsar 3.0.0, a comparison of the two load managers on real clusters
(``docs/concepts-broker-load-balancing-types.md`` of apache/pulsar-site, "Performance tests", added by PR #652 in
July 2023 and moved out of the page by PR #655 for a blog). :data:`PUBLISHED` holds its rows this module
reproduces; ``docs/load-manager-benchmark.md`` maps each set-up onto the model (scenarios ``lm-bench-*``).

Figures of one run (the ``lm_benchmark`` part of Pulsar's figures, :func:`lm_benchmark_part`):

* ``reconnect`` (a run with a ``rolling_restart``): from the first broker stopping for the restart (``start_s``)
  to the last reconnection of a topic that lost its connection during the restart (up to the last
  ``rolling_restart_done``; ``recovery_s``: the published "connection recovery time"), the
  distribution over topics of each topic's last reconnection after the start (``recovered``), of the episodes'
  unavailability (``unavailable``), the restart's own length (``restart_s``, to its last ``rolling_restart_done``)
  and how many reconnections each topic made;
* ``rebalance`` (a run with a ``scale_out``): from the first new broker's boot (``start_s``) to the moment from
  which the load stays balanced until the end of the run (``time_s``; None when it never does). *Balanced*: every
  broker that is up, each new one included, has a host CPU usage (its latest ``host_usage_sampled``, a sample
  every ``loadBalancerHostUsageCheckIntervalMinutes``) within :data:`REBALANCE_BAND` percentage points of their
  mean. The published page does not say which criterion its authors read off their dashboards; CPU is what the
  load of the benchmark's publishers costs a broker in the model, and the band is ThresholdShedder's own margin
  (``loadBalancerBrokerThresholdShedderPercentage``, 10). Also the shedding unloads after the start, and the
  deviation at the end.
* ``scale_in`` (a run with a ``scale_in``): from the first leaving broker's stop (``start_s``, its
  ``broker_stopping``) to the moment from which the brokers that stay are balanced until the end of the run
  (``time_s``), balanced as for ``rebalance``, over the brokers that stay only, and judged only on samples taken
  after the last leaving broker stopped (``broker_stopped``): before that the stayers' samples show the load as
  it was before the leavers' bundles moved to them, which would count as balanced at once.
* ``split`` (a run with a ``bundle_split``): from the first split (``start_s``) to the split that brings the
  bundles to :data:`SPLIT_TARGET` (``to_target_s``; None when the splitting stops earlier, ``splitting_s`` being
  the first to the last split then), the bundles at the end (the scenario's initial bundles plus one per split),
  and from the first split to the moment from which every broker is balanced as for ``rebalance`` until the end
  of the run (``time_s``: the published "splitting 1 bundle into 128 and balancing").

Each of ``rebalance``, ``scale_in`` and ``split`` also has ``shedder`` in an extensible run: the figure a
TransferShedder user would read, from the trace's ``transfer_shedder_stats`` (one a shedding cycle that computed
the brokers' load stats). ``shedder.time_s``: from the same ``start_s`` to the first such cycle from which on the
shedder's own ``load_std`` (the population standard deviation of the brokers' ``weightedMaxEMA``) stays at or
below its ``loadBalancerBrokerLoadTargetStd`` until the end of the run (None when the last cycle is above it, or
no cycle came after the start); for ``scale_in`` only cycles after the last leaving broker stopped count, as
for the CPU band. A modular run has no such events and no ``shedder``.

Publish latency (the published P99.99 row) has no figure: the model has no message path, so no latency. The
side-by-side table says so (:func:`lm_benchmark_tables`, shown by ``clusteremu compare --article``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .model import PartResult, RunParams
from .pulsar_series import latest_values
from .stats import distribution

#: Half-width of the balanced band, in CPU percentage points (see the module docstring).
REBALANCE_BAND = 10.0
#: A broker's CPU sample older than this takes no part (a stopped broker stops sampling): three of Pulsar's
#: default one-minute sampling periods.
SAMPLE_STALE_S = 180.0
#: The published split row's bundle count ("splitting 1 bundle into 128"; also Pulsar's default
#: ``loadBalancerNamespaceMaximumBundles``).
SPLIT_TARGET = 128
#: Name prefix of the benchmark's built-in scenarios.
SCENARIO_PREFIX = "lm-bench-"

#: Event kinds and fields the part reads besides those Pulsar's other figures read.
SCHEMA_FIELDS: dict[str, tuple[str, ...]] = {
    "broker_stopping": ("cause",),
    "broker_booted": ("cause",),
    "broker_stopped": ("cause",),
    "bundle_split": (),
    "rolling_restart_done": (),
    "host_usage_sampled": ("cpu",),
    "transfer_shedder_stats": ("load_std", "target_std"),
}
KINDS = ("topic_connected", "bundle_unloaded", *SCHEMA_FIELDS)
COLUMNS = ("topic", "unavailable_s", "reason", "cause", "cpu", "load_std", "target_std")
#: The experiments whose runs have the TransferShedder figure (``shedder``: see the module docstring).
SHEDDER_FIGURES = ("rebalance", "scale_in", "split")
#: Figures that speak of the end of the run (the last reconnection, balanced for good): a partial trace cannot say.
WHOLE_RUN = ("lm_benchmark.reconnect.recovery_s", "lm_benchmark.rebalance.time_s", "lm_benchmark.rebalance.balanced",
             "lm_benchmark.scale_in.time_s", "lm_benchmark.scale_in.balanced", "lm_benchmark.split.time_s",
             "lm_benchmark.split.balanced", "lm_benchmark.split.to_target_s", "lm_benchmark.split.splitting_s",
             "lm_benchmark.split.bundles_end",
             *(f"lm_benchmark.{key}.shedder.{name}" for key in SHEDDER_FIGURES for name in ("time_s", "balanced")))


@dataclass(frozen=True)
class Published:
    """One published row: the figure, its set-up in the page's words summarised, and each load manager's value
    in ``unit``."""

    key: str
    figure: str
    setup: str
    unit: str
    modular: float
    extensible: float
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.modular / self.extensible


#: The rows of Pulsar's published comparison this benchmark reproduces or reports as not modelled.
PUBLISHED: tuple[Published, ...] = (
    Published("reconnect", "time for all publishers to reconnect after a restart of every broker",
              "100 brokers, 65,000 bundles, 100,000 publishers; all brokers restarted within 2 min", "min", 20.0, 10.0),
    Published("latency", "P99.99 publish latency during a rolling restart",
              "10 brokers restarted one by one; 10,000 partitions, 1,000 bundles, 1,000 msg/s", "ms", 1841.0, 1228.0,
              "not modelled: the emulator has no message path (no produce/persist latency), so no figure"),
    Published("rebalance", "time to balance the load after 5 brokers become 10",
              "10,000 topics/publishers, 100 bundles", "min", 7.0, 5.0,
              "published: modular \"cannot be balanced without further tuning\", extensible \"can be balanced\""),
    Published("scale_in", "time to balance the load after 10 brokers become 5",
              "10,000 topics/publishers, 100 bundles; the 5 brokers leave gracefully", "min", 5.0, 3.0),
    Published("split", "time to split 1 bundle into 128 and balance 10,000 hot topics",
              "1 bundle split into 128, 10,000 hot topics (nothing more published: brokers and rates are the "
              "model's choice)", "min", 15.0, 13.0),
)
SOURCE = ("apache/pulsar-site docs/concepts-broker-load-balancing-types.md, \"Performance tests\" (Pulsar 3.0.0; "
          "PR #652, https://github.com/apache/pulsar-site/pull/652)")


# -- one run (pandas, in the executors) --------------------------------------------------------------------------
def reconnect_figures(rows: pd.DataFrame) -> dict[str, Any]:
    """The rolling restart's reconnection figures (see the module docstring); ``{"restart": False}`` without one."""
    stops = rows[(rows["kind"] == "broker_stopping") & (rows["cause"] == "rolling_restart")]
    if stops.empty:
        return {"restart": False}
    start = float(stops["t"].min())
    done = rows.loc[rows["kind"] == "rolling_restart_done", "t"]
    until = float(done.max()) if len(done) else math.inf
    # The restart's reconnections: those whose time without a connection began while the restart went on (not
    # the later ones of the shedding that spreads the load onto the brokers restarted last).
    conn = rows[(rows["kind"] == "topic_connected") & (rows["unavailable_s"].astype(float) > 0)]
    began = conn["t"].to_numpy(dtype=float) - conn["unavailable_s"].to_numpy(dtype=float)
    conn = conn[(began >= start) & (began <= until)]
    last = conn.groupby(["agent", "topic"], sort=False)["t"].max().to_numpy(dtype=float) - start
    per_topic = conn.groupby(["agent", "topic"], sort=False).size().to_numpy(dtype=float)
    return {
        "restart": True,
        "start_s": start,
        "restart_s": float(done.max()) - start if len(done) else None,
        "brokers_restarted": int(stops["agent"].nunique()),
        "recovery_s": float(last.max()) if last.size else None,
        "reconnects": int(len(conn)),
        "topics": int(last.size),
        "reconnects_per_topic": float(per_topic.mean()) if per_topic.size else None,
        "recovered": distribution(last),
        "unavailable": distribution(conn["unavailable_s"].to_numpy(dtype=float)),
    }


def balanced_since(samples: pd.DataFrame, start: float, required: Sequence[str], band: float) -> dict[str, Any]:
    """When the brokers' CPU became balanced for good after ``start`` (see the module docstring).

    ``samples``: ``host_usage_sampled`` rows (``t``, ``agent``, ``cpu``). Evaluated at every sample time from
    ``start`` on, over the brokers whose latest sample is at most :data:`SAMPLE_STALE_S` old; at an instant where
    one of ``required`` has no sample yet the load is not balanced. Returns ``time_s`` (from ``start``; None when
    it never stays balanced), ``balanced``, and ``deviation_end`` / ``spread_end`` (the largest distance from the
    mean and max − min at the last sample time)."""
    wide = latest_values(samples, "cpu", stale_after=SAMPLE_STALE_S)
    wide = wide[wide.index >= start]
    if wide.empty:
        return {"time_s": None, "balanced": False, "deviation_end": None, "spread_end": None, "band": band}
    values = wide.to_numpy(dtype=float)
    present = ~np.isnan(values)
    with np.errstate(invalid="ignore"):
        mean = np.nanmean(np.where(present, values, np.nan), axis=1)
        deviation = np.nanmax(np.abs(values - mean[:, None]), axis=1)
        spread = np.nanmax(values, axis=1) - np.nanmin(values, axis=1)
    cols = list(wide.columns)
    have_all = np.ones(len(wide), dtype=bool)
    for b in required:
        have_all &= present[:, cols.index(b)] if b in cols else False
    ok = have_all & (deviation <= band)
    # The first instant from which every later instant is balanced too.
    bad = np.flatnonzero(~ok)
    first = 0 if bad.size == 0 else int(bad[-1]) + 1
    t = wide.index.to_numpy(dtype=float)
    since = float(t[first]) - start if first < len(t) else None
    return {"time_s": since, "balanced": since is not None, "deviation_end": float(deviation[-1]),
            "spread_end": float(spread[-1]), "band": band}


def shedder_balanced_since(rows: pd.DataFrame, start: float, after: float | None = None) -> dict[str, Any] | None:
    """When TransferShedder's own ``loadStd`` came to stay at or below ``loadBalancerBrokerLoadTargetStd`` after
    ``start`` (see the module docstring), from the ``transfer_shedder_stats`` rows of cycles at or after ``after``
    (``start`` when None); None when the run has no such event at all (a modular run).

    Returns ``time_s`` (from ``start`` to the first cycle of the final stretch at or below the target; None when
    the last cycle is above it or no cycle counts), ``balanced``, ``cycles`` (those counted), ``std_end`` and
    ``target_std`` (of the last cycle counted). A NaN ``load_std`` (Java's ``sqrt`` of a rounding-negative
    variance) is not at or below the target."""
    stats = rows[rows["kind"] == "transfer_shedder_stats"]
    if stats.empty:
        return None
    stats = stats[stats["t"] >= (start if after is None else after)]
    if stats.empty:
        return {"time_s": None, "balanced": False, "cycles": 0, "std_end": None, "target_std": None}
    std = stats["load_std"].to_numpy(dtype=float)
    target = stats["target_std"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        ok = std <= target
    bad = np.flatnonzero(~ok)
    first = 0 if bad.size == 0 else int(bad[-1]) + 1
    t = stats["t"].to_numpy(dtype=float)
    since = float(t[first]) - start if first < len(t) else None
    return {"time_s": since, "balanced": since is not None, "cycles": int(len(stats)), "std_end": float(std[-1]),
            "target_std": float(target[-1])}


def _with_shedder(figures: dict[str, Any], rows: pd.DataFrame, start: float,
                  after: float | None = None) -> dict[str, Any]:
    """``figures`` with the TransferShedder figure under ``shedder`` when the run has its events."""
    shedder = shedder_balanced_since(rows, start, after)
    return figures if shedder is None else {**figures, "shedder": shedder}


def rebalance_figures(rows: pd.DataFrame, band: float = REBALANCE_BAND) -> dict[str, Any]:
    """The scale-out's rebalancing figures (see the module docstring); ``{"scale_out": False}`` without one."""
    boots = rows[(rows["kind"] == "broker_booted") & (rows["cause"] == "scale_out")]
    if boots.empty:
        return {"scale_out": False}
    start = float(boots["t"].min())
    samples = rows.loc[rows["kind"] == "host_usage_sampled", ["t", "agent", "cpu"]]
    shed = rows[(rows["kind"] == "bundle_unloaded") & (rows["reason"] == "shedding") & (rows["t"] >= start)]
    return _with_shedder({
        "scale_out": True,
        "start_s": start,
        "new_brokers": int(boots["agent"].nunique()),
        **balanced_since(samples, start, sorted(boots["agent"].unique()), band),
        "unloads": int(len(shed)),
        "last_unload_s": float(shed["t"].max()) - start if len(shed) else None,
    }, rows, start)


def scale_in_figures(rows: pd.DataFrame, band: float = REBALANCE_BAND) -> dict[str, Any]:
    """The scale-in's rebalancing figures (see the module docstring); ``{"scale_in": False}`` without one."""
    stops = rows[(rows["kind"] == "broker_stopping") & (rows["cause"] == "scale_in")]
    if stops.empty:
        return {"scale_in": False}
    start = float(stops["t"].min())
    leaving = set(stops["agent"].unique())
    stopped = rows[(rows["kind"] == "broker_stopped") & (rows["cause"] == "scale_in")]
    # The leavers' bundles are on the stayers once the last leaver has stopped; a leaver that never finishes its
    # stop leaves no instant to judge from.
    settled = float(stopped["t"].max()) if set(stopped["agent"]) >= leaving else math.inf
    samples = rows.loc[rows["kind"] == "host_usage_sampled", ["t", "agent", "cpu"]]
    samples = samples[~samples["agent"].isin(leaving)]
    staying = sorted(samples.loc[samples["t"] < start, "agent"].unique())
    shed = rows[(rows["kind"] == "bundle_unloaded") & (rows["reason"] == "shedding") & (rows["t"] >= start)]
    return _with_shedder({
        "scale_in": True,
        "start_s": start,
        "leaving_brokers": len(leaving),
        "staying_brokers": len(staying),
        "stopped_s": settled - start if math.isfinite(settled) else None,
        **balanced_since(samples[samples["t"] >= settled], start, staying, band),
        "unloads": int(len(shed)),
        "last_unload_s": float(shed["t"].max()) - start if len(shed) else None,
    }, rows, start, settled)


def _initial_bundles(scenario: Mapping[str, Any]) -> int | None:
    """The scenario's bundles at the start, summed over its namespaces; None when the run does not record them."""
    namespaces = (scenario.get("workload") or {}).get("namespaces")
    if not namespaces:
        return None
    counts = [ns.get("bundles") for ns in namespaces if isinstance(ns, Mapping)]
    if len(counts) != len(namespaces) or not all(isinstance(c, int) for c in counts):
        return None
    return int(sum(counts))


def split_figures(rows: pd.DataFrame, initial_bundles: int | None, band: float = REBALANCE_BAND,
                  target: int = SPLIT_TARGET) -> dict[str, Any]:
    """The split row's figures (see the module docstring); ``{"split": False}`` without a split.
    ``initial_bundles``: the bundles before any split (None: unknown, then no bundle count and no ``to_target_s``)."""
    splits = rows.loc[rows["kind"] == "bundle_split", "t"].to_numpy(dtype=float)
    if splits.size == 0:
        return {"split": False}
    splits.sort()
    start = float(splits[0])
    to_target = None
    if initial_bundles is not None and initial_bundles + splits.size >= target > initial_bundles:
        to_target = float(splits[target - initial_bundles - 1]) - start
    samples = rows.loc[rows["kind"] == "host_usage_sampled", ["t", "agent", "cpu"]]
    shed = rows[(rows["kind"] == "bundle_unloaded") & (rows["reason"] == "shedding") & (rows["t"] >= start)]
    return _with_shedder({
        "split": True,
        "start_s": start,
        "splits": int(splits.size),
        "bundles_end": initial_bundles + int(splits.size) if initial_bundles is not None else None,
        "target": target,
        "to_target_s": to_target,
        "splitting_s": float(splits[-1]) - start,
        **balanced_since(samples, start, sorted(samples["agent"].unique()), band),
        "unloads": int(len(shed)),
        "last_unload_s": float(shed["t"].max()) - start if len(shed) else None,
    }, rows, start)


def lm_benchmark_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    """The ``lm_benchmark`` part of Pulsar's figures: ``reconnect``, ``rebalance``, ``scale_in`` and ``split`` of
    one run."""
    return PartResult({"reconnect": reconnect_figures(rows), "rebalance": rebalance_figures(rows),
                       "scale_in": scale_in_figures(rows),
                       "split": split_figures(rows, _initial_bundles(params.scenario))})


# -- over runs: the side-by-side table ---------------------------------------------------------------------------
def _figure(summary: Mapping[str, Any], *path: str) -> float | None:
    node: Any = summary.get("figures", {}).get("lm_benchmark", {})
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return float(node) if isinstance(node, (int, float)) and not isinstance(node, bool) else None


def _stats(values: Sequence[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return {"n": 0, "mean": None, "sd": None, "min": None, "max": None}
    return {"n": int(arr.size), "mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
            "min": float(arr.min()), "max": float(arr.max())}


def _fmt(v: float | None, digits: int = 1) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


_MANAGERS = ("modular", "extensible")
_DEVIATION = ("largest CPU distance from the brokers' mean at the end (points, band "
              f"±{REBALANCE_BAND:g}; emulated only)", 1, _MANAGERS)
#: Its label in the table (the experiments are :data:`SHEDDER_FIGURES`).
_SHEDDER = ("time until TransferShedder's own loadStd stays at or below loadBalancerBrokerLoadTargetStd (min; "
            "emulated only)", 1, ("extensible",))
#: Emulated figures the published page has no row for, shown under the row of their experiment (by its key):
#: per figure its name among the extra values, label, digits and the load managers that have it.
EXTRA_ROWS: dict[str, tuple[tuple[str, str, int, tuple[str, ...]], ...]] = {
    "reconnect": (("reconnect", "publisher's time without a connection during the restart, summed (s; emulated "
                   "only)", 2, _MANAGERS),),
    "rebalance": (("rebalance", *_DEVIATION), ("rebalance_shedder", *_SHEDDER)),
    "scale_in": (("scale_in", "largest CPU distance from the mean of the brokers that stay, at the end (points, "
                  f"band ±{REBALANCE_BAND:g}; emulated only)", 1, _MANAGERS), ("scale_in_shedder", *_SHEDDER)),
    "split": (("split_to_target", f"time from the first split to {SPLIT_TARGET} bundles (min; emulated only)", 1,
               _MANAGERS),
              ("split_end", "time from the first split to the last one (min; emulated only)", 1, _MANAGERS),
              ("split_bundles", "bundles at the end (emulated only)", 0, _MANAGERS),
              ("split_deviation", *_DEVIATION), ("split_shedder", *_SHEDDER)),
}


def _extra_rows(key: str, values: Mapping[tuple[str, str], list[float]],
                seeds: Mapping[tuple[str, str], int]) -> list[list[str]]:
    """The rows of :data:`EXTRA_ROWS`'s figures of experiment ``key`` over the seeds, each with its
    modular/extensible ratio (a figure no run has, such as the split's time to 128 bundles when the splitting
    stops earlier, shows as 0 seeds reached)."""
    rows = []
    for name, figure, digits, managers in EXTRA_ROWS[key]:
        rows += _extra_figure_rows(name, figure, digits, managers, key, values, seeds)
    return rows


def _extra_figure_rows(name: str, figure: str, digits: int, managers: Sequence[str], key: str,
                       values: Mapping[tuple[str, str], list[float]],
                       seeds: Mapping[tuple[str, str], int]) -> list[list[str]]:
    """One figure's rows; a load manager outside ``managers`` has no such figure ("—" throughout) and then the
    figure has no ratio row."""
    rows, means = [], {}
    for lm in ("modular", "extensible"):
        if lm not in managers:
            rows.append([figure, lm, "not published", "—", "—", "—", "not a figure of this load manager"])
            continue
        st = _stats(values.get((name, lm), []))
        means[lm] = st["mean"]
        spread = f"sd {_fmt(st['sd'], digits)}, {_fmt(st['min'], digits)}–{_fmt(st['max'], digits)}" if st["n"] else "—"
        rows.append([figure, lm, "not published", _fmt(st["mean"], digits), spread,
                     f"{st['n']}/{seeds.get((key, lm), 0)}", ""])
    if len(means) == 2:
        m, e = means["modular"], means["extensible"]
        rows.append([figure, "ratio modular / extensible", "—", _fmt(m / e if m is not None and e else None, 2),
                     "—", "—", ""])
    return rows


def lm_benchmark_tables(runs: Sequence[Any]) -> list[dict[str, Any]]:
    """The published figures beside the emulated ones, over the runs of the ``lm-bench-*`` scenarios among
    ``runs`` (:class:`clusteremu.tools.compare.RunSummary`, any seeds): per experiment and load manager the
    emulated mean, its spread over seeds and how many seeds reached the figure, and the modular/extensible ratio
    published and emulated. An empty list when no such run is there."""
    cells: dict[tuple[str, str], list[float]] = {}
    seeds: dict[tuple[str, str], int] = {}
    extra: dict[tuple[str, str], list[float]] = {}
    for run in runs:
        name = str(run.name)
        if not name.startswith(SCENARIO_PREFIX):
            continue
        lm = str((run.scenario.get("strategy") or {}).get("load_manager", "modular"))
        if _figure(run.summary, "reconnect", "start_s") is not None:
            key, value = "reconnect", _figure(run.summary, "reconnect", "recovery_s")
            total, topics = _figure(run.summary, "reconnect", "unavailable", "total"), \
                _figure(run.summary, "reconnect", "topics")
            if total is not None and topics:
                extra.setdefault(("reconnect", lm), []).append(total / topics)
        elif _figure(run.summary, "rebalance", "start_s") is not None:
            key, value = "rebalance", _figure(run.summary, "rebalance", "time_s")
            deviation = _figure(run.summary, "rebalance", "deviation_end")
            if deviation is not None:
                extra.setdefault(("rebalance", lm), []).append(deviation)
        elif _figure(run.summary, "scale_in", "start_s") is not None:
            key, value = "scale_in", _figure(run.summary, "scale_in", "time_s")
            deviation = _figure(run.summary, "scale_in", "deviation_end")
            if deviation is not None:
                extra.setdefault(("scale_in", lm), []).append(deviation)
        elif _figure(run.summary, "split", "start_s") is not None:
            key, value = "split", _figure(run.summary, "split", "time_s")
            for name, path, per in (("split_to_target", "to_target_s", 60.0), ("split_end", "splitting_s", 60.0),
                                    ("split_bundles", "bundles_end", 1.0), ("split_deviation", "deviation_end", 1.0)):
                v = _figure(run.summary, "split", path)
                if v is not None:
                    extra.setdefault((name, lm), []).append(v / per)
        else:
            continue
        if key in SHEDDER_FIGURES:
            shedder = _figure(run.summary, key, "shedder", "time_s")
            if shedder is not None:
                extra.setdefault((f"{key}_shedder", lm), []).append(shedder / 60.0)
        seeds[(key, lm)] = seeds.get((key, lm), 0) + 1
        if value is not None:
            cells.setdefault((key, lm), []).append(value / 60.0)
    if not seeds:
        return []
    rows, data = [], []
    for pub in PUBLISHED:
        if pub.key != "latency" and not any(seeds.get((pub.key, lm)) for lm in ("modular", "extensible")):
            continue  # an experiment without runs: nothing to put beside the published figure
        means: dict[str, float | None] = {}
        for lm in ("modular", "extensible"):
            published = pub.modular if lm == "modular" else pub.extensible
            st = _stats(cells.get((pub.key, lm), []))
            n_runs = seeds.get((pub.key, lm), 0)
            means[lm] = st["mean"]
            if pub.key == "latency":
                emulated, spread, reached, note = "not modelled", "—", "—", pub.note
            else:
                emulated = _fmt(st["mean"])
                spread = f"sd {_fmt(st['sd'])}, {_fmt(st['min'])}–{_fmt(st['max'])}" if st["n"] else "—"
                reached = f"{st['n']}/{n_runs}"
                note = pub.note if lm == "modular" else ""
            rows.append([pub.figure, lm, f"{published:g} {pub.unit}", emulated, spread, reached, note])
            data.append({"figure": pub.key, "load_manager": lm, "published": published, "unit": pub.unit,
                         "emulated": st if pub.key != "latency" else None, "runs": n_runs})
        if pub.key != "latency":
            m, e = means["modular"], means["extensible"]
            # A ratio of means only where every run has the figure: a run that never got there has no time to
            # average, and leaving it out would make its load manager look faster than it was.
            complete = all(len(cells.get((pub.key, lm), [])) == seeds.get((pub.key, lm), 0) > 0
                           for lm in ("modular", "extensible"))
            ratio = m / e if complete and m is not None and e else None
            rows.append([pub.figure, "ratio modular / extensible", f"{pub.ratio:.2f}", _fmt(ratio, 2), "—", "—",
                         "" if complete else "no ratio: not every run reached the figure"])
            data.append({"figure": pub.key, "ratio_published": pub.ratio, "ratio_emulated": ratio})
        if pub.key in EXTRA_ROWS:
            rows += _extra_rows(pub.key, extra, seeds)
    return [{
        "title": "Pulsar load-manager benchmark: published (Pulsar 3.0.0) and emulated",
        "columns": ["figure", "load manager", "published", "emulated mean", "spread over seeds", "seeds reached",
                    "note"],
        "rows": rows,
        "notes": [
            f"Published: {SOURCE}.",
            "reconnect: first broker stopping for the restart to the last reconnection of a topic that lost its "
            "connection during the restart (min); rebalance: first "
            f"new broker booted to the start of the final stretch where every broker's CPU stays within "
            f"±{REBALANCE_BAND:g} points of the mean (min); scale_in: first leaving broker stopping to the start of "
            "that stretch over the brokers that stay, judged on samples taken after the last one stopped (min); "
            "split: first bundle split to the start of that stretch over every broker (min); seeds reached: runs "
            "where the figure exists (a run that never balances has none).",
            "TransferShedder's loadStd (extensible runs only): from the same start to the first shedding cycle from "
            "which on the shedder's own standard deviation of the brokers' weightedMaxEMA stays at or below "
            "loadBalancerBrokerLoadTargetStd (0.25 by default: far wider than the CPU band) to the end of the run "
            "(scale_in: cycles after the last leaving broker stopped) (min).",
            "docs/load-manager-benchmark.md maps the published set-ups onto the model and says why the figures differ.",
        ],
        "data": data,
    }]
