"""The load-manager benchmark's figures (reconnection after a rolling restart, rebalancing after a scale-out) and
its side-by-side table, on hand-made events whose answers are worked out by hand."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from clusteremu.tools.analysis.model import RunParams
from clusteremu.tools.analysis.pulsar_lm_benchmark import (
    PUBLISHED,
    REBALANCE_BAND,
    SPLIT_TARGET,
    balanced_since,
    lm_benchmark_part,
    lm_benchmark_tables,
    rebalance_figures,
    reconnect_figures,
    scale_in_figures,
    shedder_balanced_since,
    split_figures,
)
from clusteremu.tools.compare import RunSummary


def frame(events: list[dict]) -> pd.DataFrame:
    """Rows as a part receives them: ``t``, ``agent``, ``seq``, ``kind`` and the part's columns (None elsewhere)."""
    cols = ("topic", "unavailable_s", "reason", "cause", "cpu", "load_std", "target_std")
    rows = [{"t": e["t"], "agent": e["agent"], "seq": i, "kind": e["kind"], **{c: e.get(c) for c in cols}}
            for i, e in enumerate(events)]
    return pd.DataFrame(rows).sort_values(["t", "agent", "seq"], kind="stable").reset_index(drop=True)


def restart_events() -> list[dict]:
    ev = [
        # before the restart: a first connection and an unrelated reconnection, neither counts
        {"t": 1.0, "agent": "client-1", "kind": "topic_connected", "topic": "a", "unavailable_s": 0.0},
        {"t": 50.0, "agent": "client-1", "kind": "topic_connected", "topic": "b", "unavailable_s": 3.0},
        {"t": 100.0, "agent": "broker-1", "kind": "broker_stopping", "cause": "rolling_restart"},
        {"t": 100.5, "agent": "client-1", "kind": "topic_connected", "topic": "a", "unavailable_s": 0.5},
        {"t": 130.0, "agent": "broker-2", "kind": "broker_stopping", "cause": "rolling_restart"},
        # topic a moves twice: its last reconnection is at 131 (31 s after the start)
        {"t": 131.0, "agent": "client-1", "kind": "topic_connected", "topic": "a", "unavailable_s": 1.0},
        {"t": 140.0, "agent": "client-2", "kind": "topic_connected", "topic": "c", "unavailable_s": 10.0},
        {"t": 190.0, "agent": "broker-2", "kind": "rolling_restart_done", "brokers": 2},
        # a shutdown that is not the restart's does not start it
        {"t": 20.0, "agent": "broker-9", "kind": "broker_stopping", "cause": "shutdown"},
    ]
    return ev


def test_reconnect_figures_from_restart_start_to_last_reconnection():
    f = reconnect_figures(frame(restart_events()))
    assert f["restart"] is True
    assert f["start_s"] == 100.0
    assert f["restart_s"] == pytest.approx(90.0)
    assert f["brokers_restarted"] == 2
    assert f["recovery_s"] == pytest.approx(40.0)  # topic c at 140
    assert f["reconnects"] == 3 and f["topics"] == 2
    assert f["reconnects_per_topic"] == pytest.approx(1.5)
    assert f["recovered"]["count"] == 2 and f["recovered"]["max"] == pytest.approx(40.0)
    assert f["recovered"]["p50"] is not None
    assert f["unavailable"]["count"] == 3 and f["unavailable"]["max"] == pytest.approx(10.0)


def test_reconnections_that_begin_after_the_restart_are_not_the_restarts():
    ev = restart_events() + [
        # disconnected at 195 by a shedding unload after the restart was done (190): not counted
        {"t": 200.0, "agent": "client-2", "kind": "topic_connected", "topic": "c", "unavailable_s": 5.0},
        # disconnected at 185, during the restart, back at 260: counted
        {"t": 260.0, "agent": "client-3", "kind": "topic_connected", "topic": "d", "unavailable_s": 75.0},
    ]
    f = reconnect_figures(frame(ev))
    assert f["recovery_s"] == pytest.approx(160.0)
    assert f["reconnects"] == 4 and f["topics"] == 3


def test_reconnect_figures_without_a_restart():
    ev = [e for e in restart_events() if e.get("cause") != "rolling_restart"]
    assert reconnect_figures(frame(ev)) == {"restart": False}


def samples(t: float, cpu: dict[str, float]) -> list[dict]:
    return [{"t": t, "agent": b, "kind": "host_usage_sampled", "cpu": v} for b, v in cpu.items()]


def scale_out_events(final: dict[str, float]) -> list[dict]:
    ev = samples(0.0, {"broker-1": 60.0, "broker-2": 60.0})
    ev += [{"t": 100.0, "agent": "broker-3", "kind": "broker_booted", "cause": "scale_out"},
           {"t": 100.0, "agent": "broker-4", "kind": "broker_booted", "cause": "scale_out"},
           {"t": 50.0, "agent": "broker-1", "kind": "broker_booted", "cause": "start"}]
    # broker-3 samples at 100, broker-4 only at 160: balanced cannot hold before every new broker has a sample
    ev += samples(100.0, {"broker-1": 40.0, "broker-2": 40.0, "broker-3": 40.0})
    ev += samples(160.0, {"broker-1": 30.0, "broker-2": 30.0, "broker-3": 30.0, "broker-4": 0.0})
    ev += samples(220.0, {"broker-1": 30.0, "broker-2": 30.0, "broker-3": 30.0, "broker-4": 30.0})
    ev += samples(280.0, final)
    ev += [{"t": 130.0, "agent": "broker-1", "kind": "bundle_unloaded", "reason": "shedding"},
           {"t": 190.0, "agent": "broker-2", "kind": "bundle_unloaded", "reason": "shedding"},
           {"t": 190.0, "agent": "broker-2", "kind": "bundle_unloaded", "reason": "shutdown"},
           {"t": 10.0, "agent": "broker-2", "kind": "bundle_unloaded", "reason": "shedding"}]
    return ev


def test_rebalance_time_is_the_start_of_the_final_balanced_stretch():
    even = {"broker-1": 35.0, "broker-2": 25.0, "broker-3": 30.0, "broker-4": 30.0}
    f = rebalance_figures(frame(scale_out_events(even)))
    assert f["scale_out"] is True and f["start_s"] == 100.0 and f["new_brokers"] == 2
    # 100: broker-4 has no sample yet; 160: broker-4 at 0 is 22.5 below the mean; 220 on: within the band
    assert f["time_s"] == pytest.approx(120.0)
    assert f["balanced"] is True
    assert f["deviation_end"] == pytest.approx(5.0) and f["spread_end"] == pytest.approx(10.0)
    assert f["band"] == REBALANCE_BAND
    assert f["unloads"] == 2 and f["last_unload_s"] == pytest.approx(90.0)


def test_rebalance_that_does_not_stay_balanced_has_no_time():
    uneven = {"broker-1": 50.0, "broker-2": 20.0, "broker-3": 30.0, "broker-4": 20.0}
    f = rebalance_figures(frame(scale_out_events(uneven)))
    assert f["time_s"] is None and f["balanced"] is False
    assert f["deviation_end"] == pytest.approx(20.0)


def test_a_wider_band_balances_sooner():
    ev = scale_out_events({"broker-1": 30.0, "broker-2": 30.0, "broker-3": 30.0, "broker-4": 30.0})
    rows = frame(ev)
    s = rows[rows["kind"] == "host_usage_sampled"][["t", "agent", "cpu"]]
    assert balanced_since(s, 100.0, ["broker-3", "broker-4"], 10.0)["time_s"] == pytest.approx(120.0)
    assert balanced_since(s, 100.0, ["broker-3", "broker-4"], 25.0)["time_s"] == pytest.approx(60.0)


def test_a_stopped_broker_stops_counting_once_its_sample_is_stale():
    ev = samples(0.0, {"broker-1": 90.0, "broker-2": 30.0, "broker-3": 30.0})
    for t in (60.0, 120.0, 180.0, 240.0):
        ev += samples(t, {"broker-2": 30.0, "broker-3": 30.0})
    s = frame(ev)[["t", "agent", "cpu"]]
    # broker-1's 90 takes part until its sample is more than 180 s old (at 240)
    assert balanced_since(s, 0.0, ["broker-3"], 10.0)["time_s"] == pytest.approx(240.0)


def test_rebalance_figures_without_a_scale_out():
    ev = [e for e in scale_out_events({"broker-1": 30.0}) if e.get("cause") != "scale_out"]
    assert rebalance_figures(frame(ev)) == {"scale_out": False}


def summary(name: str, lm: str, figures: dict, seed: int) -> RunSummary:
    return RunSummary(dir=Path(f"/runs/{name}-{seed}"), seed=seed,
                      summary={"run": {"model": "pulsar", "scenario": name}, "figures": {"lm_benchmark": figures}},
                      scenario={"scenario": {"name": name}, "strategy": {"load_manager": lm}})


def restart(recovery_s: float, downtime_s: float = 100.0) -> dict:
    return {"reconnect": {"restart": True, "start_s": 600.0, "recovery_s": recovery_s, "topics": 50,
                          "unavailable": {"total": downtime_s}},
            "rebalance": {"scale_out": False}}


def scale(time_s: float | None, deviation_end: float = 4.0) -> dict:
    return {"reconnect": {"restart": False}, "rebalance": {"scale_out": True, "start_s": 600.0, "time_s": time_s,
                                                           "deviation_end": deviation_end}}


def test_table_puts_published_and_emulated_side_by_side_with_ratios():
    runs = [summary("lm-bench-rolling-restart-modular", "modular", restart(120.0), 1),
            summary("lm-bench-rolling-restart-modular", "modular", restart(240.0), 2),
            summary("lm-bench-rolling-restart-extensible", "extensible", restart(90.0, downtime_s=10.0), 1),
            summary("lm-bench-scale-out-modular", "modular", scale(None, deviation_end=12.0), 1),
            summary("lm-bench-scale-out-extensible", "extensible", scale(300.0, deviation_end=3.0), 1),
            # not a benchmark scenario: ignored
            summary("rolling-restart-modular", "modular", restart(6000.0), 1)]
    (table,) = lm_benchmark_tables(runs)
    rows = {(r[0], r[1]): r for r in table["rows"]}
    reconnect, latency, rebalance = (p.figure for p in PUBLISHED[:3])
    assert rows[(reconnect, "modular")][2:6] == ["20 min", "3.0", "sd 1.4, 2.0–4.0", "2/2"]
    assert rows[(reconnect, "extensible")][2:6] == ["10 min", "1.5", "sd 0.0, 1.5–1.5", "1/1"]
    assert rows[(reconnect, "ratio modular / extensible")][2:4] == ["2.00", "2.00"]
    downtime = [k for k in rows if k[0].startswith("publisher's time without a connection")]
    assert [rows[k][3] for k in downtime] == ["2.00", "0.20", "10.00"]  # 100 s / 50 topics; 10 s / 50; ratio
    assert rows[downtime[0]][2] == "not published"
    assert rows[(latency, "modular")][3] == "not modelled"
    assert "no message path" in rows[(latency, "modular")][6]
    # the modular scale-out never balanced: no figure, and so no ratio
    assert rows[(rebalance, "modular")][3:6] == ["—", "—", "0/1"]
    assert rows[(rebalance, "extensible")][3] == "5.0"
    assert rows[(rebalance, "ratio modular / extensible")][2:4] == ["1.40", "—"]
    assert "not every run" in rows[(rebalance, "ratio modular / extensible")][6]
    deviation = [k for k in rows if k[0].startswith("largest CPU distance")]
    assert [rows[k][3] for k in deviation] == ["12.0", "3.0", "4.00"]


def test_no_ratio_when_only_some_seeds_reach_the_figure():
    runs = [summary("lm-bench-scale-out-modular", "modular", scale(180.0), 1),
            summary("lm-bench-scale-out-modular", "modular", scale(None), 2),
            summary("lm-bench-scale-out-extensible", "extensible", scale(1440.0), 1),
            summary("lm-bench-scale-out-extensible", "extensible", scale(1440.0), 2)]
    (table,) = lm_benchmark_tables(runs)
    rows = {(r[0], r[1]): r for r in table["rows"]}
    rebalance = PUBLISHED[2].figure
    assert rows[(rebalance, "modular")][3:6] == ["3.0", "sd 0.0, 3.0–3.0", "1/2"]
    assert rows[(rebalance, "ratio modular / extensible")][3] == "—"
    runs[1] = summary("lm-bench-scale-out-modular", "modular", scale(300.0), 2)
    (table,) = lm_benchmark_tables(runs)
    rows = {(r[0], r[1]): r for r in table["rows"]}
    assert rows[(rebalance, "ratio modular / extensible")][3] == "0.17"  # 4 min / 24 min
    assert any("pulsar-site" in n for n in table["notes"])


def test_an_experiment_without_runs_has_no_rows():
    (table,) = lm_benchmark_tables([summary("lm-bench-rolling-restart-modular", "modular", restart(60.0), 1)])
    figures = {r[0] for r in table["rows"]}
    assert PUBLISHED[0].figure in figures and PUBLISHED[1].figure in figures  # latency: always said
    assert PUBLISHED[2].figure not in figures


def test_no_table_without_benchmark_runs():
    assert lm_benchmark_tables([summary("rolling-restart-modular", "modular", restart(60.0), 1)]) == []


def test_compare_article_on_benchmark_runs_alone_gives_the_benchmark_table_only():
    from clusteremu.tools.analysis.pulsar_rating import RATING

    runs = [summary("lm-bench-rolling-restart-modular", "modular", restart(120.0), 1),
            summary("lm-bench-rolling-restart-extensible", "extensible", restart(90.0), 1)]
    tables = RATING.article(runs)
    assert [t["title"] for t in tables] == [t["title"] for t in lm_benchmark_tables(runs)]
    assert len(tables) == 1


# -- scale-in (10 brokers become 5) and split ("splitting 1 bundle into 128") ----------------------------------
def scale_in_events(final: dict[str, float], *, broker4_stops: bool = True) -> list[dict]:
    ev = samples(0.0, {"broker-1": 30.0, "broker-2": 30.0, "broker-3": 30.0, "broker-4": 30.0})
    ev += [{"t": 100.0, "agent": "broker-3", "kind": "broker_stopping", "cause": "scale_in"},
           {"t": 100.0, "agent": "broker-4", "kind": "broker_stopping", "cause": "scale_in"},
           {"t": 102.0, "agent": "broker-3", "kind": "broker_stopped", "cause": "scale_in"},
           # a shutdown that is not the scale-in's neither starts it nor ends it
           {"t": 50.0, "agent": "broker-9", "kind": "broker_stopping", "cause": "shutdown"},
           {"t": 150.0, "agent": "broker-9", "kind": "broker_stopped", "cause": "shutdown"}]
    if broker4_stops:
        ev.append({"t": 105.0, "agent": "broker-4", "kind": "broker_stopped", "cause": "scale_in"})
    # taken before the leavers' bundles reached the stayers: balanced, but it must not count
    ev += samples(101.0, {"broker-1": 30.0, "broker-2": 30.0, "broker-3": 90.0})
    ev += samples(160.0, {"broker-1": 70.0, "broker-2": 40.0})
    # from 220 on the two that stay are within the band; broker-3's 90 (101) would not be, were it counted
    ev += samples(220.0, {"broker-1": 55.0, "broker-2": 55.0})
    ev += samples(280.0, final)
    ev += [{"t": 170.0, "agent": "broker-1", "kind": "bundle_unloaded", "reason": "shedding"},
           {"t": 100.0, "agent": "broker-3", "kind": "bundle_unloaded", "reason": "shutdown"}]
    return ev


def test_scale_in_time_counts_the_brokers_that_stay_after_the_last_leaver_stopped():
    f = scale_in_figures(frame(scale_in_events({"broker-1": 58.0, "broker-2": 52.0})))
    assert f["scale_in"] is True and f["start_s"] == 100.0
    assert (f["leaving_brokers"], f["staying_brokers"]) == (2, 2)
    assert f["stopped_s"] == pytest.approx(5.0)
    # 101 is before the last leaver stopped (105); 160: 15 points from the mean; 220 on: balanced
    assert f["time_s"] == pytest.approx(120.0) and f["balanced"] is True
    assert f["deviation_end"] == pytest.approx(3.0) and f["spread_end"] == pytest.approx(6.0)
    assert f["unloads"] == 1 and f["last_unload_s"] == pytest.approx(70.0)


def test_scale_in_that_ends_unbalanced_or_whose_leaver_never_stops_has_no_time():
    f = scale_in_figures(frame(scale_in_events({"broker-1": 70.0, "broker-2": 40.0})))
    assert f["time_s"] is None and f["balanced"] is False and f["deviation_end"] == pytest.approx(15.0)
    f = scale_in_figures(frame(scale_in_events({"broker-1": 58.0, "broker-2": 52.0}, broker4_stops=False)))
    assert f["stopped_s"] is None and f["time_s"] is None


def test_scale_in_figures_without_a_scale_in():
    ev = [e for e in scale_in_events({"broker-1": 50.0}) if e.get("cause") != "scale_in"]
    assert scale_in_figures(frame(ev)) == {"scale_in": False}


def split_events() -> list[dict]:
    ev = samples(0.0, {"broker-1": 90.0, "broker-2": 0.0})
    ev += [{"t": t, "agent": "broker-1", "kind": "bundle_split"} for t in (70.0, 50.0, 60.0)]
    ev += samples(60.0, {"broker-1": 60.0, "broker-2": 30.0})
    ev += samples(120.0, {"broker-1": 50.0, "broker-2": 45.0})
    ev += samples(180.0, {"broker-1": 48.0, "broker-2": 47.0})
    ev += [{"t": 90.0, "agent": "broker-1", "kind": "bundle_unloaded", "reason": "shedding"},
           {"t": 50.0, "agent": "broker-1", "kind": "bundle_unloaded", "reason": "split"}]
    return ev


def test_split_figures_from_the_first_split_to_the_target_and_to_balance():
    f = split_figures(frame(split_events()), 1, target=4)
    assert f["split"] is True and f["start_s"] == 50.0
    assert (f["splits"], f["bundles_end"]) == (3, 4)
    assert f["to_target_s"] == pytest.approx(20.0) and f["splitting_s"] == pytest.approx(20.0)
    assert f["time_s"] == pytest.approx(70.0) and f["balanced"] is True  # balanced from the sample at 120
    assert f["unloads"] == 1 and f["last_unload_s"] == pytest.approx(40.0)
    # from two bundles the third split reaches 5, the second 4
    assert split_figures(frame(split_events()), 2, target=4)["to_target_s"] == pytest.approx(10.0)


def test_splitting_that_stops_short_of_the_target_has_no_time_to_it():
    f = split_figures(frame(split_events()), 1, target=SPLIT_TARGET)
    assert f["to_target_s"] is None and f["splitting_s"] == pytest.approx(20.0) and f["bundles_end"] == 4
    f = split_figures(frame(split_events()), None)
    assert f["bundles_end"] is None and f["to_target_s"] is None and f["splits"] == 3


def test_split_figures_without_a_split_and_the_initial_bundles_from_the_scenario():
    assert split_figures(frame(samples(0.0, {"broker-1": 10.0})), 1) == {"split": False}
    params = RunParams(model="pulsar", end=200.0, window_start=0.0, options={},
                       scenario={"workload": {"namespaces": [{"name": "a", "bundles": 1}, {"name": "b", "bundles": 2}]}})
    part = lm_benchmark_part(frame(split_events()), params).figures
    assert part["split"]["bundles_end"] == 6 and part["scale_in"] == {"scale_in": False}
    unknown = RunParams(model="pulsar", end=200.0, window_start=0.0, options={}, scenario={})
    assert lm_benchmark_part(frame(split_events()), unknown).figures["split"]["bundles_end"] is None


def scale_in(time_s: float | None, deviation_end: float = 4.0) -> dict:
    return {"reconnect": {"restart": False}, "rebalance": {"scale_out": False},
            "scale_in": {"scale_in": True, "start_s": 600.0, "time_s": time_s, "deviation_end": deviation_end}}


def split(time_s: float | None, to_target_s: float | None, splitting_s: float, bundles: int) -> dict:
    return {"reconnect": {"restart": False}, "rebalance": {"scale_out": False}, "scale_in": {"scale_in": False},
            "split": {"split": True, "start_s": 60.0, "time_s": time_s, "to_target_s": to_target_s,
                      "splitting_s": splitting_s, "bundles_end": bundles, "deviation_end": 8.0}}


def test_table_has_the_scale_in_and_split_rows_beside_the_published_ones():
    runs = [summary("lm-bench-scale-in-modular", "modular", scale_in(60.0, 1.0), 1),
            summary("lm-bench-scale-in-modular", "modular", scale_in(180.0, 3.0), 2),
            summary("lm-bench-scale-in-extensible", "extensible", scale_in(None, 15.0), 1),
            summary("lm-bench-split-modular", "modular", split(900.0, None, 30.0, 120), 1),
            summary("lm-bench-split-extensible", "extensible", split(600.0, 1200.0, 1800.0, 128), 1)]
    (table,) = lm_benchmark_tables(runs)
    rows = {(r[0], r[1]): r for r in table["rows"]}
    by_key = {p.key: p for p in PUBLISHED}
    sin, spl = by_key["scale_in"].figure, by_key["split"].figure
    assert rows[(sin, "modular")][2:6] == ["5 min", "2.0", "sd 1.4, 1.0–3.0", "2/2"]
    assert rows[(sin, "extensible")][2:6] == ["3 min", "—", "—", "0/1"]
    assert rows[(sin, "ratio modular / extensible")][2:4] == ["1.67", "—"]
    assert rows[(spl, "modular")][2:6] == ["15 min", "15.0", "sd 0.0, 15.0–15.0", "1/1"]
    assert rows[(spl, "ratio modular / extensible")][2:4] == ["1.15", "1.50"]
    to_target = [k for k in rows if k[0].startswith("time from the first split to 128")]
    assert [rows[k][3:6] for k in to_target[:2]] == [["—", "—", "0/1"], ["20.0", "sd 0.0, 20.0–20.0", "1/1"]]
    # shown with no seed reaching it too: the splitting stopped short of 128 in every run
    runs[-1] = summary("lm-bench-split-extensible", "extensible", split(600.0, None, 1800.0, 120), 1)
    (table,) = lm_benchmark_tables(runs)
    rows2 = {(r[0], r[1]): r for r in table["rows"]}
    assert [rows2[k][3:6] for k in to_target[:2]] == [["—", "—", "0/1"], ["—", "—", "0/1"]]
    assert [rows[k][3] for k in rows if k[0] == "bundles at the end (emulated only)"] == ["120", "128", "0.94"]
    assert [rows[k][3] for k in rows if k[0].startswith("time from the first split to the last")][:2] == ["0.5", "30.0"]
    assert any(k[0].startswith("largest CPU distance from the mean of the brokers that stay") for k in rows)
    # rows of experiments without runs are left out
    assert by_key["reconnect"].figure not in {k[0] for k in rows}


# -- TransferShedder's own criterion: loadStd at or below loadBalancerBrokerLoadTargetStd (issue 18 §2) --------
def shedder_stats(cycles: list[tuple[float, float]], target: float = 0.25) -> list[dict]:
    """One ``transfer_shedder_stats`` per (t, load_std), written by the channel owner."""
    return [{"t": t, "agent": "broker-1", "kind": "transfer_shedder_stats", "load_std": std, "target_std": target}
            for t, std in cycles]


def test_shedder_time_is_the_first_cycle_of_the_final_stretch_at_or_below_the_target_std():
    even = {"broker-1": 35.0, "broker-2": 25.0, "broker-3": 30.0, "broker-4": 30.0}
    # 60: before the scale-out (100), not counted; 160 above; 220 at; 280 above again; 340 at the target (counts,
    # "at or below"); 400 below: the final stretch begins at 340
    cycles = [(60.0, 0.5), (160.0, 0.30), (220.0, 0.20), (280.0, 0.40), (340.0, 0.25), (400.0, 0.10)]
    f = rebalance_figures(frame(scale_out_events(even) + shedder_stats(cycles)))
    assert f["shedder"] == {"time_s": pytest.approx(240.0), "balanced": True, "cycles": 5,
                            "std_end": pytest.approx(0.10), "target_std": 0.25}
    assert f["time_s"] == pytest.approx(120.0)  # the CPU band's figure is unchanged beside it
    # the run's own target decides: at 0.4 every cycle from 160 on is at or below it
    wide = shedder_stats(cycles, target=0.4)
    assert rebalance_figures(frame(scale_out_events(even) + wide))["shedder"]["time_s"] == pytest.approx(60.0)


def test_shedder_figure_without_a_final_stretch_or_without_cycles():
    even = {"broker-1": 30.0, "broker-2": 30.0, "broker-3": 30.0, "broker-4": 30.0}
    # the last cycle above the target, and a NaN std (Java's sqrt of a negative) is not at or below it
    for last in (0.3, float("nan")):
        f = rebalance_figures(frame(scale_out_events(even) + shedder_stats([(160.0, 0.1), (220.0, last)])))
        assert f["shedder"]["time_s"] is None and f["shedder"]["balanced"] is False
    # cycles only before the start: none counts
    f = rebalance_figures(frame(scale_out_events(even) + shedder_stats([(60.0, 0.1)])))
    assert f["shedder"] == {"time_s": None, "balanced": False, "cycles": 0, "std_end": None, "target_std": None}
    # a modular run has no such event: no shedder figure at all
    assert "shedder" not in rebalance_figures(frame(scale_out_events(even)))
    assert shedder_balanced_since(frame(scale_out_events(even)), 100.0) is None


def test_shedder_figure_of_a_scale_in_counts_cycles_after_the_last_leaver_stopped():
    final = {"broker-1": 58.0, "broker-2": 52.0}
    # 103: before broker-4 stopped (105), low but not counted; then 160 and 220 at or below: from 160
    f = scale_in_figures(frame(scale_in_events(final) + shedder_stats([(103.0, 0.01), (160.0, 0.2), (220.0, 0.1)])))
    assert f["shedder"]["time_s"] == pytest.approx(60.0) and f["shedder"]["cycles"] == 2
    # a leaver that never stops: no instant to judge from
    f = scale_in_figures(frame(scale_in_events(final, broker4_stops=False) + shedder_stats([(160.0, 0.2)])))
    assert f["shedder"]["time_s"] is None and f["shedder"]["cycles"] == 0


def test_shedder_figure_of_a_split_from_the_first_split():
    f = split_figures(frame(split_events() + shedder_stats([(40.0, 0.5), (110.0, 0.2)])), 1)
    assert f["shedder"]["time_s"] == pytest.approx(60.0)  # the first split at 50


def test_table_shows_the_shedder_figure_for_extensible_runs_only():
    def with_shedder(figures: dict, key: str, time_s: float | None) -> dict:
        figures[key]["shedder"] = {"time_s": time_s, "balanced": time_s is not None}
        return figures

    runs = [summary("lm-bench-scale-out-modular", "modular", scale(None, deviation_end=12.0), 1),
            summary("lm-bench-scale-out-extensible", "extensible", with_shedder(scale(300.0), "rebalance", 60.0), 1),
            summary("lm-bench-scale-out-extensible", "extensible", with_shedder(scale(300.0), "rebalance", 180.0), 2),
            summary("lm-bench-scale-in-modular", "modular", scale_in(60.0, 1.0), 1),
            summary("lm-bench-scale-in-extensible", "extensible", with_shedder(scale_in(None), "scale_in", None), 1)]
    (table,) = lm_benchmark_tables(runs)
    shedder = [r for r in table["rows"] if r[0].startswith("time until TransferShedder's own loadStd")]
    # under the scale-out rows, then under the scale-in rows; no ratio row (the modular manager has no such figure)
    assert [r[1:6] for r in shedder] == [
        ["modular", "not published", "—", "—", "—"],
        ["extensible", "not published", "2.0", "sd 1.4, 1.0–3.0", "2/2"],
        ["modular", "not published", "—", "—", "—"],
        ["extensible", "not published", "—", "—", "0/1"],
    ]
    assert shedder[0][6] == "not a figure of this load manager"
    order = [r[0] for r in table["rows"]]
    by_key = {p.key: p.figure for p in PUBLISHED}
    assert order.index(by_key["rebalance"]) < order.index(shedder[0][0]) < order.index(by_key["scale_in"])
