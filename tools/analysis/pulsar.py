"""Pulsar's figures: what an operator reads off the Grafana panels of the AvgShedder article, from the trace.

The vocabulary is :mod:`clusteremu.agents.pulsar.events`; docs/analysis.md defines every figure. From the tally: unloads
per broker and reason, placements and random fallbacks, lookups and redirect hops, load reports with non-finite
values, shedding cycles. From the parts (one run at a time, in the executors):

* ``spread``: the article's spread and max/min panels (:mod:`.pulsar_series`) over the run and the settle
  window, and when the cluster settled for good;
* ``rounds``: over-unloading (a broker unloaded until it became the least loaded), and the per-broker load table;
* ``bundles``: over-loading (a shed bundle placed on an above-average broker), unloads and random placements in
  the settle window;
* ``topics``: topic unavailability, split by what closed the connection (around unloads: ``unload``);
* ``leader``: elections, changes, time without a leader;
* ``lm_benchmark``: reconnection after a rolling restart and rebalancing after a scale-out, the figures of
  Pulsar's published load-manager benchmark (:mod:`.pulsar_lm_benchmark`).

:class:`PulsarFigures` is the ``figures`` target of the ``pulsar`` system; ``OPTIONS`` are its analysis options
(``settle_spread``, flag ``--settle-spread``; ``round_gap_s`` and ``after_round_s``), ``SCHEMA`` the fields it
reads, typed by the event declarations. Pulsar's rating is :mod:`.pulsar_rating`, its series :mod:`.pulsar_series`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

import numpy as np
import pandas as pd

from clusteremu.tools.spark.routing import Key

from . import load_balance, pulsar_lm_benchmark
from .common import PART_BASE, counts_by
from .model import Headline, ModelFigures, Part, PartResult, RunParams, absent, declared_schema
from .options import Option
from .stats import distribution

if TYPE_CHECKING:
    from clusteremu.tools.report import Panel

#: The numeric fields of a load report, in the order of the event declaration.
LOAD_FIELDS = (
    "cpu",
    "memory",
    "direct_memory",
    "bandwidth_in",
    "bandwidth_out",
    "msg_rate_in",
    "msg_rate_out",
    "msg_throughput_in",
    "msg_throughput_out",
    "score",
)

#: Only the fields the figures read: every field decoded costs time on every event of its kind. Their types are
#: those of the declarations (:mod:`clusteremu.agents.pulsar.events`).
SCHEMA = declared_schema(
    {
        "load_report": (*LOAD_FIELDS, "num_bundles", "num_topics", "reason"),
        "bundle_unloaded": ("bundle", "reason"),
        "unload_decided": ("bundle", "reason"),
        "bundle_placed": ("bundle", "broker", "random_fallback", "scores"),
        "shedding_cycle": ("unloads",),
        "lookup_hop": ("hop", "response"),
        "topic_connected": ("topic", "unavailable_s"),
        "topic_disconnected": ("topic", "reason"),
        "leader_elected": ("previous",),
        "leader_vacant": ("previous",),
        "cpu_spike": ("cores", "duration_s"),
        "agent_stopped": ("reason",),
        **pulsar_lm_benchmark.SCHEMA_FIELDS,
    },
    system="pulsar",
)

#: Pulsar's analysis options (docs/analysis.md, *Settling* and *Over-unloading*).
OPTIONS = (
    # 15 is AvgShedder's low threshold and the line of the article's spread panel.
    Option("settle_spread", 15.0, "score spread (max - min) under which the cluster counts as balanced",
           "--settle-spread", "POINTS"),
    Option("round_gap_s", 300.0, "two shedding unloads of one broker at most this far apart (s) are one round"),
    Option("after_round_s", 180.0, "how long after a round's last unload (s) its broker's load is judged"),
)

#: Columns of the per-broker load table (``broker_load.parquet``).
BROKER_LOAD_COLUMNS = ["t", "broker", *LOAD_FIELDS, "msg_rate", "throughput", "num_bundles", "num_topics", "reason"]
_RATES = ("score", "msg_rate_in", "msg_rate_out", "msg_throughput_in", "msg_throughput_out")


# -- parts (pure pandas, one run) -------------------------------------------------------------------------------
def live_reports(rows: pd.DataFrame) -> pd.DataFrame:
    """The load reports, plus a report of NaN values for each reporting broker at each ``agent_stopped`` (crash
    or shutdown): a departed broker's last gauges stop counting, as Prometheus marks a dead target's series
    stale, until it reports again. Without this a crashed broker's last score stays in every spread for ever."""
    reports = rows[rows["kind"] == "load_report"]
    stopped = rows[(rows["kind"] == "agent_stopped") & rows["agent"].isin(reports["agent"].unique())]
    if stopped.empty:
        return reports
    gone = stopped.assign(kind="load_report", **{c: np.nan for c in (*LOAD_FIELDS, "num_bundles", "num_topics") if c in stopped.columns})
    return pd.concat([reports, gone], ignore_index=True)


def spread_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    """The spread and ratio series, their figures over the run and the settle window, and the settle time."""
    reports = live_reports(rows)
    shed = rows[(rows["kind"] == "bundle_unloaded") & (rows["reason"] == "shedding")]
    cluster = load_balance.cluster_series(reports)
    figures = load_balance.series_figures(cluster, params.end, params.window_start)
    figures["settle"] = load_balance.settle_figures(
        cluster,
        shed["t"].to_numpy(dtype=float),
        end=params.end,
        window=params.options["settle_window_s"],
        threshold=params.options["settle_spread"],
    )
    return PartResult(figures, {"cluster_series": cluster})


def rounds_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    """Over-unloading, and the per-broker load table."""
    reports = rows[rows["kind"] == "load_report"]
    shed = rows[(rows["kind"] == "bundle_unloaded") & (rows["reason"] == "shedding")]
    figures = load_balance.over_unloading(
        live_reports(rows), shed, gap_s=params.options["round_gap_s"], after_s=params.options["after_round_s"], end=params.end
    )
    return PartResult({"over_unloading": figures}, {"broker_load": broker_load_table(reports)})


def bundles_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    """Over-loading; shedding unloads and random placements in the settle window."""
    rows = rows.assign(above_average=[above_average(s, b) if k == "bundle_placed" else None for s, b, k in zip(rows["scores"], rows["broker"], rows["kind"])])
    win = rows["t"].to_numpy(dtype=float) >= params.window_start
    shed = (rows["kind"] == "bundle_unloaded") & (rows["reason"] == "shedding")
    random = (rows["kind"] == "bundle_placed") & rows["random_fallback"].astype("boolean").fillna(False).astype(bool)
    return PartResult(
        {
            "over_loading": load_balance.over_loading(rows, window_start=params.window_start),
            "unloads_window": int((shed & win).sum()),
            "unloads_window_by_broker": counts_by(rows[shed & win].assign(count=1), "agent"),
            "random_window": int((random & win).sum()),
        }
    )


def topics_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    """Topic unavailability: every reconnection after a time without connection (``topic_connected`` with
    ``unavailable_s`` > 0), attributed to the ``reason`` of the latest ``topic_disconnected`` of the same topic
    by the same client before it (``unknown`` without one); topics still without connection at the end; and the
    ``topic_unavailability`` table, how many topics were unavailable at each time, by cause."""
    episodes = unavailability_episodes(rows)
    win = episodes["t"].to_numpy(dtype=float) >= params.window_start
    values = episodes["unavailable_s"].to_numpy(dtype=float)
    by_cause = {
        str(cause): distribution(g["unavailable_s"].to_numpy(dtype=float))
        for cause, g in episodes.groupby("cause", sort=True)
    }
    overall = distribution(values)
    still = still_unavailable(rows)
    figures = {
        **overall,
        "topics": int(episodes[["agent", "topic"]].drop_duplicates().shape[0]),
        "window": distribution(values[win]),
        "by_cause": by_cause,
        "unload": by_cause.get("unload", distribution([])),
        "unavailable_at_end": int(len(still)),
    }
    if not len(episodes):
        for name in ("mean", "p50", "p99", "max"):
            absent(figures, name, "no topic was unavailable and reconnected")
    return PartResult(figures, {"topic_unavailability": unavailable_over_time(episodes, still, params.end)})


def still_unavailable(rows: pd.DataFrame) -> pd.DataFrame:
    """Topics whose latest event is a ``topic_disconnected``: columns ``t`` (the disconnection), ``agent``,
    ``topic``, ``cause``."""
    topic_rows = rows[rows["kind"].isin(("topic_connected", "topic_disconnected"))]
    last = topic_rows.groupby(["agent", "topic"], sort=False).tail(1)
    gone = last[last["kind"] == "topic_disconnected"]
    return pd.DataFrame({"t": gone["t"].astype(float).to_numpy(), "agent": gone["agent"].to_numpy(),
                         "topic": gone["topic"].to_numpy(), "cause": gone["reason"].fillna("unknown").astype(str).to_numpy()})


#: Columns of the ``topic_unavailability`` table.
UNAVAILABILITY_COLUMNS = ["t", "cause", "topics"]


def unavailable_over_time(episodes: pd.DataFrame, still: pd.DataFrame, end: float) -> pd.DataFrame:
    """How many topics (per client) had no connection at each time, by cause: a step series per cause (columns
    ``t``, ``cause``, ``topics``) from the episodes (unavailable from ``t − unavailable_s`` to ``t``) and the
    topics still unavailable (from their disconnection to ``end``)."""
    starts = np.concatenate([episodes["t"].to_numpy(dtype=float) - episodes["unavailable_s"].to_numpy(dtype=float),
                             still["t"].to_numpy(dtype=float)])
    stops = np.concatenate([episodes["t"].to_numpy(dtype=float), np.full(len(still), np.inf)])
    causes = np.concatenate([episodes["cause"].astype(str).to_numpy(), still["cause"].astype(str).to_numpy()])
    frames = []
    for cause in sorted(set(causes)):
        mine = causes == cause
        steps = pd.DataFrame({"t": np.concatenate([starts[mine], stops[mine]]),
                              "d": np.concatenate([np.ones(mine.sum()), -np.ones(mine.sum())])})
        steps = steps[steps["t"] <= end].groupby("t", sort=True)["d"].sum()
        frames.append(pd.DataFrame({"t": steps.index.to_numpy(dtype=float), "cause": cause,
                                    "topics": steps.cumsum().to_numpy(dtype=np.int64)}))
    if not frames:
        return pd.DataFrame({"t": pd.Series(dtype=float), "cause": pd.Series(dtype=object), "topics": pd.Series(dtype=np.int64)})
    return pd.concat(frames, ignore_index=True)[UNAVAILABILITY_COLUMNS]


def leader_part(rows: pd.DataFrame, params: RunParams) -> PartResult:
    return PartResult(load_balance.leadership(rows, end=params.end))


def unavailability_episodes(rows: pd.DataFrame) -> pd.DataFrame:
    """Reconnections of topics with their cause: columns ``t``, ``agent``, ``topic``, ``unavailable_s``,
    ``cause`` (rows in canonical order, kinds ``topic_connected`` / ``topic_disconnected``)."""
    disc = rows["kind"] == "topic_disconnected"
    cause = rows["reason"].where(disc)
    last_cause = cause.groupby([rows["agent"], rows["topic"]], sort=False).ffill()
    conn = (rows["kind"] == "topic_connected") & (rows["unavailable_s"].astype(float) > 0)
    out = rows.loc[conn, ["t", "agent", "topic", "unavailable_s"]].copy()
    out["unavailable_s"] = out["unavailable_s"].astype(float)
    out["cause"] = last_cause[conn].fillna("unknown").astype(str)
    return out.reset_index(drop=True)


def broker_load_table(reports: pd.DataFrame) -> pd.DataFrame:
    """The per-broker load table: every load report with its broker, plus ``msg_rate`` (in + out) and
    ``throughput`` (in + out), in canonical order."""
    df = reports.rename(columns={"agent": "broker"})
    df = df.assign(
        msg_rate=df["msg_rate_in"].astype(float) + df["msg_rate_out"].astype(float),
        throughput=df["msg_throughput_in"].astype(float) + df["msg_throughput_out"].astype(float),
    )
    return df[BROKER_LOAD_COLUMNS].reset_index(drop=True)


# -- tally keys (pandas, shipped to the executors) ---------------------------------------------------------------
def key_reason(rows: pd.DataFrame) -> pd.Series:
    return rows["reason"]


def key_placement(rows: pd.DataFrame) -> np.ndarray:
    return np.where(rows["random_fallback"].astype("boolean").fillna(False).astype(bool), "random", "chosen")


def key_cycle(rows: pd.DataFrame) -> np.ndarray:
    return np.where(rows["unloads"].astype(float) > 0, "acted", "idle")


def key_lookup(rows: pd.DataFrame) -> pd.Series:
    """``<response>:<hop>`` of a lookup hop."""
    hop = rows["hop"]
    digits = pd.Series(np.where(hop.isna(), "", hop.fillna(0).astype(np.int64).astype(str)), index=rows.index)
    return rows["response"].fillna("") + ":" + digits


def key_connect(rows: pd.DataFrame) -> np.ndarray:
    return np.where(rows["unavailable_s"].astype(float) > 0, "reconnect", "first")


def key_election(rows: pd.DataFrame) -> np.ndarray:
    previous = rows["previous"].fillna("")
    return np.where(previous == "", "first", np.where(previous == rows["agent"], "same", "change"))


def key_non_finite(rows: pd.DataFrame) -> list[str]:
    """``cpu=inf,score=inf``-style list of a load report's non-finite fields ("" when all are finite)."""
    values = rows[list(LOAD_FIELDS)].to_numpy(dtype=float)
    out = [""] * len(rows)
    for i in np.flatnonzero(~np.isfinite(values).all(axis=1)):
        out[i] = ",".join(f"{f}={'nan' if np.isnan(v) else 'inf'}" for f, v in zip(LOAD_FIELDS, values[i]) if not np.isfinite(v))
    return out


def above_average(scores: Any, broker: Any) -> bool | None:
    """Whether ``broker``'s score in ``scores`` (a map, or its Arrow form: a list of (key, value) pairs) is
    above the mean of the finite scores there, or is +inf while some score is finite; None when the broker has
    no score there or it is NaN, or no score is finite."""
    if scores is None:
        return None
    items = dict(scores) if not isinstance(scores, dict) else scores
    mine = items.get(broker)
    finite = [float(v) for v in items.values() if v is not None and np.isfinite(v)]
    if mine is None or np.isnan(mine) or not finite:
        return None
    if mine == float("inf"):
        return True
    return bool(mine > sum(finite) / len(finite))


class PulsarFigures(ModelFigures):
    """Pulsar's figures, tables, report panels and options (the ``figures`` target of the ``pulsar`` system)."""

    model = "pulsar"
    schema = SCHEMA
    options = OPTIONS
    marker_kinds = ("bundle_unloaded", "leader_elected", "cpu_spike")
    # "Settled for good" and "quiet from then on" speak of the end of the run: a partial trace cannot say.
    whole_run = ("settle.time_s", "settle.quiet_time_s", "settle.settled", "settle.unloads_before",
                 *pulsar_lm_benchmark.WHOLE_RUN)
    headline = (
        Headline("unloads", "unloads.total"),
        Headline("settle (s)", "settle.time_s", "s"),
        Headline("spread (window mean)", "score_spread.window.mean", "score points"),
        Headline("msg-rate max/min (window mean)", "msg_rate_ratio.window.mean"),
        Headline("throughput max/min (window mean)", "throughput_ratio.window.mean"),
        Headline("over-loading", "over_loading.events"),
        Headline("over-unloading", "over_unloading.events"),
        Headline("random placements", "random_fallbacks.count"),
        Headline("unavailable p99 (s)", "unavailability.p99", "s"),
        Headline("non-finite reports", "load_reports.non_finite"),
        Headline("leader changes", "leader.changes"),
        Headline("GC pauses", "gc_pauses.count"),
    )

    def tally_keys(self) -> dict[str, Key]:
        return {
            "bundle_unloaded": Key(key_reason, ("reason",)),
            "unload_decided": Key(key_reason, ("reason",)),
            "bundle_placed": Key(key_placement, ("random_fallback",)),
            "shedding_cycle": Key(key_cycle, ("unloads",)),
            "lookup_hop": Key(key_lookup, ("response", "hop")),
            "topic_connected": Key(key_connect, ("unavailable_s",)),
            "topic_disconnected": Key(key_reason, ("reason",)),
            "load_report": Key(key_non_finite, LOAD_FIELDS),
            "leader_elected": Key(key_election, ("previous",)),
        }

    def tally_extras(self) -> dict[str, tuple[str, str]]:
        return {"max_hop": ("hop", "max")}

    def parts(self) -> list[Part]:
        load = ("load_report", "bundle_unloaded", "agent_stopped")
        return [
            Part("spread", load, PART_BASE + _RATES + ("reason",), spread_part),
            Part("rounds", load, PART_BASE + LOAD_FIELDS + ("num_bundles", "num_topics", "reason"), rounds_part),
            Part(
                "bundles",
                ("unload_decided", "bundle_unloaded", "bundle_placed"),
                PART_BASE + ("bundle", "reason", "broker", "random_fallback", "scores"),
                bundles_part,
            ),
            Part("topics", ("topic_connected", "topic_disconnected"), PART_BASE + ("topic", "reason", "unavailable_s"), topics_part),
            Part("leader", ("leader_elected", "leader_vacant"), PART_BASE + ("previous",), leader_part),
            Part("lm_benchmark", pulsar_lm_benchmark.KINDS, PART_BASE + pulsar_lm_benchmark.COLUMNS,
                 pulsar_lm_benchmark.lm_benchmark_part),
        ]

    def figures(self, tally: pd.DataFrame, parts: Mapping[str, Mapping[str, Any]], params: RunParams) -> dict[str, Any]:
        def rows(kind: str) -> pd.DataFrame:
            return tally[tally["kind"] == kind]

        window_s = params.end - params.window_start
        spread, bundles = parts.get("spread", {}), parts.get("bundles", {})
        unloaded = rows("bundle_unloaded")
        shed = unloaded[unloaded["key"] == "shedding"]
        cycles = rows("shedding_cycle")
        placed = rows("bundle_placed")
        hops = rows("lookup_hop")
        response = hops["key"].fillna(":").str.rsplit(":", n=1).str[0]
        hop = hops["key"].fillna(":").str.rsplit(":", n=1).str[1]
        n_lookups = int(hops[hop == "1"]["count"].sum())
        n_hops = int(hops["count"].sum())
        reports = rows("load_report")
        bad = reports[reports["key"].fillna("") != ""]
        fields: dict[str, int] = {}
        nan_reports = inf_reports = 0
        for pattern, count in zip(bad["key"], bad["count"]):
            items = pattern.split(",")
            nan_reports += int(count) if any(i.endswith("=nan") for i in items) else 0
            inf_reports += int(count) if any(i.endswith("=inf") for i in items) else 0
            for item in items:
                name = item.split("=", 1)[0]
                fields[name] = fields.get(name, 0) + int(count)
        window_unloads = int(bundles.get("unloads_window", 0))
        figures = {
            "unloads": {
                "total": int(shed["count"].sum()),
                "by_broker": counts_by(shed, "agent"),
                "window": window_unloads,
                "window_by_broker": bundles.get("unloads_window_by_broker", {}),
                "window_per_hour": 3600.0 * window_unloads / window_s if window_s > 0 else None,
                "by_reason": counts_by(unloaded, "key"),
                "decisions": int(rows("unload_decided")["count"].sum()),
                "shedding_cycles": int(cycles["count"].sum()),
                "shedding_cycles_acting": int(cycles[cycles["key"] == "acted"]["count"].sum()),
            },
            "settle": spread.get("settle", {}),
            "score_spread": spread.get("score_spread", {}),
            "msg_rate_ratio": spread.get("msg_rate_ratio", {}),
            "throughput_ratio": spread.get("throughput_ratio", {}),
            "over_loading": bundles.get("over_loading", {}),
            "over_unloading": parts.get("rounds", {}).get("over_unloading", {}),
            "random_fallbacks": {
                "count": int(placed[placed["key"] == "random"]["count"].sum()),
                "placements": int(placed["count"].sum()),
                "window": int(bundles.get("random_window", 0)),
            },
            "lookups": {
                "count": n_lookups,
                "hops": n_hops,
                "redirects": int(hops[response == "redirect"]["count"].sum()),
                "mean_hops": n_hops / n_lookups if n_lookups else None,
                "max_hop": int(hops["max_hop"].max()) if hops["max_hop"].notna().any() else None,
                "by_response": counts_by(hops.assign(response=response), "response"),
            },
            "unavailability": dict(parts.get("topics", {})),
            "load_reports": {
                "count": int(reports["count"].sum()),
                "non_finite": int(bad["count"].sum()),
                "nan": nan_reports,
                "inf": inf_reports,
                "by_broker": counts_by(bad, "agent"),
                "fields": dict(sorted(fields.items())),
                "first_non_finite_s": float(bad["first_t"].min()) if len(bad) else None,
                "last_non_finite_s": float(bad["last_t"].max()) if len(bad) else None,
            },
            "leader": dict(parts.get("leader", {})),
            "lm_benchmark": dict(parts.get("lm_benchmark", {})),
        }
        if not n_lookups:
            absent(figures["lookups"], "mean_hops", "no lookup")
            absent(figures["lookups"], "max_hop", "no lookup")
        return figures

    def marker_rows(self, rows: pd.DataFrame) -> list[tuple[float, float | None, str, str, str]]:
        out: list[tuple[float, float | None, str, str, str]] = []
        for r in rows.itertuples(index=False):
            if r.kind == "bundle_unloaded" and r.reason == "shedding":
                out.append((float(r.t), None, "unload", r.agent, f"unload {r.bundle} from {r.agent}"))
            elif r.kind == "leader_elected":
                out.append((float(r.t), None, "leader", r.agent, f"{r.agent} elected leader"))
            elif r.kind == "cpu_spike":
                end = float(r.t) + float(r.duration_s) if pd.notna(r.duration_s) else None
                out.append((float(r.t), end, "cpu_spike", r.agent, f"CPU spike on {r.agent} ({r.cores:g} cores)"))
        return out

    def panels(self, tables: Mapping[str, pd.DataFrame], summary: Mapping[str, Any]) -> list["Panel"]:
        from clusteremu.tools.report import Panel

        load = tables.get("broker_load", pd.DataFrame())
        cluster = tables.get("cluster_series", pd.DataFrame())
        markers = tables.get("markers", pd.DataFrame())
        threshold = float(summary.get("options", {}).get("settle_spread", 15.0))
        panels = []
        if not load.empty:
            # A broker's gauges stop at a crash or shutdown until it reports again (live_reports' rule).
            stops = markers[markers["kind"] == "agent_stopped"].rename(columns={"agent": "broker"}) if not markers.empty else None
            for column, title, unit in (
                ("score", "Score per broker (weighted max resource usage)", "score"),
                ("cpu", "CPU usage per broker", "%"),
                ("msg_rate", "Message rate in + out per broker", "msg/s"),
                ("throughput", "Throughput in + out per broker", "bytes/s"),
                ("num_bundles", "Bundles per broker", "bundles"),
            ):
                panels.append(Panel.per_agent(column, title, unit, load, "broker", column, stops=stops))
        unavailable = tables.get("topic_unavailability", pd.DataFrame())
        if not unavailable.empty:
            series = {f"closed by {cause}": (g["t"], g["topics"]) for cause, g in unavailable.groupby("cause", sort=True)}
            panel = Panel.lines("topic_unavailability", "Topics unavailable (no connection), by what closed the "
                                "connection: what the clients feel", "topics", series)
            panel.dots = True
            panels.append(panel)
        if not cluster.empty:
            panels.append(
                Panel.lines(
                    "score_spread",
                    "Score spread (max − min of the brokers' latest scores)",
                    "score points",
                    {"score spread": (cluster["t"], cluster["score_spread"])},
                    hlines=[(threshold, "settle threshold")],
                )
            )
            panels.append(
                Panel.lines(
                    "ratios",
                    "Max/min ratio of message rate and of throughput",
                    "max / min",
                    {"msg rate": (cluster["t"], cluster["msg_rate_ratio"]), "throughput": (cluster["t"], cluster["throughput_ratio"])},
                )
            )
        return panels
