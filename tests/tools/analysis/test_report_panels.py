"""What the report and the terminal show does not mislead: formatting, absent figures, panels (issue 17 §4)."""
from __future__ import annotations

import json

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest

from clusteremu.tools.analysis import load_balance as lb
from clusteremu.tools.analysis import pulsar_series
from clusteremu.tools.analysis.encoding import dumps, jsonable
from clusteremu.tools.analysis.model import absent, absent_reasons, mark_partial
from clusteremu.tools.analysis.pulsar import PulsarFigures, unavailable_over_time
from clusteremu.tools.analysis.pulsar_rating import strategy_label
from clusteremu.tools.report import (MAX_LINES, SERIES_20, MARK_STYLE, SPAN_STYLE, Panel, draw_panel, fmt, gc_panels,
                                     held_to_end, merge_identical, show_figure)
from clusteremu.scenarios.loader import load_scenario

NO_MARKERS = pd.DataFrame(columns=["t", "end_t", "kind", "agent", "label"])


# -- numbers -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value, unit, text", [
    (1.872e-10, "", "0"),                  # floating-point noise is not a spread
    (-3e-12, "", "0"),
    (0.0125, "", "0.0125"),
    (605.006265956, "", "605"),
    (10.5678, "", "10.57"),
    (1.24449, "", "1.244"),
    (12345.6, "", "12,346"),
    (3_000_000, "", "3,000,000"),
    (1.25e8, "bytes/s", "125 MB/s"),       # not "1e8 bytes/s"
    (98_765.4, "msg/s", "98,765 msg/s"),
    (2.5e-5, "s", "2.5e-05 s"),
    (None, "", "—"),
    ("inf", "", "∞"),
    (True, "", "yes"),
    (7, "", "7"),
])
def test_one_formatting_function_for_every_figure(value, unit, text):
    assert fmt(value, unit) == text


def test_the_summary_holds_no_floating_point_noise():
    assert jsonable({"spread": 1.872e-10, "sum": 0.1 + 0.2, "big": 123456789.123456789, "inf": float("inf")}) == {
        "spread": 0.0, "sum": 0.3, "big": 123456789.123, "inf": "inf"}


def test_a_spread_between_equal_scores_is_zero_whatever_their_last_bits():
    reports = pd.DataFrame({"t": [1.0, 1.0], "agent": ["b1", "b2"], "score": [49.0, 49.0 + 49.0 * 4e-15],
                            "msg_rate_in": [1e5, 1e5 * (1 + 3e-15)], "msg_rate_out": [0.0, 0.0]})
    assert pulsar_series.score_spread(reports)["score_spread"].tolist() == [0.0]
    assert pulsar_series.msg_rate_ratio(reports)["msg_rate_ratio"].tolist() == [1.0]
    real = reports.assign(score=[49.0, 49.5])
    assert pulsar_series.score_spread(real)["score_spread"].tolist() == [0.5]


# -- absent figures and partial runs -----------------------------------------------------------------------------
def test_a_run_that_never_settled_has_no_settle_time_but_the_reason():
    cluster = pd.DataFrame({"t": [0.0125, 600.0, 1200.0], "score_spread": [40.0, 30.0, 25.0]})
    f = lb.settle_figures(cluster, np.array([100.0]), end=1800.0, window=600.0, threshold=15.0)
    reasons = absent_reasons(f)
    assert f["time_s"] is None and f["settled"] is False
    assert reasons["time_s"] == "not settled by the end of the run (1,800 s): the score spread is 25 at the end, above 15"
    assert f["quiet_time_s"] == 100.0 and "quiet_time_s" not in reasons
    # Quiet, but not for a whole settle window before the end.
    late = lb.settle_figures(cluster.assign(score_spread=[40.0, 10.0, 10.0]), np.array([1500.0]), end=1800.0, window=600.0,
                             threshold=15.0)
    assert absent_reasons(late) == {
        "time_s": "not settled by the end of the run (1,800 s): quiet since 1,500 s (the last shedding unload), less than "
                  "the settle window (600 s)",
        "quiet_time_s": "not settled by the end of the run (1,800 s): quiet since 1,500 s (the last shedding unload), less "
                        "than the settle window (600 s)"}


def test_series_figures_without_load_reports_are_absent_with_the_reason():
    empty = pd.DataFrame({c: pd.Series(dtype=float) for c in lb.CLUSTER_SERIES_COLUMNS})
    reasons = absent_reasons(lb.series_figures(empty, 1800.0, 1200.0))
    assert reasons["score_spread.run.mean"] == "no load report in the run"
    assert reasons["throughput_ratio.window.max"] == "no load report in the run"
    late = pd.DataFrame({"t": [1500.0], "score_spread": [3.0], "msg_rate_ratio": [1.0], "throughput_ratio": [1.0], "brokers": [2]})
    f = lb.series_figures(late, 1800.0, 1200.0)
    assert f["score_spread"]["window"] == {"mean": 3.0, "max": 3.0} and absent_reasons(f) == {}


def test_absent_reasons_travel_as_json_and_come_out_by_dotted_path():
    part = {"time_s": 3.0}
    absent(part, "time_s", "not settled")
    figures = {"settle": json.loads(dumps(part)), "other": {"x": 1}}
    assert absent_reasons(figures) == {"settle.time_s": "not settled"}
    assert figures == {"settle": {"time_s": None}, "other": {"x": 1}}
    figures = {"settle": {"time_s": 0.0125, "settled": True}}
    mark_partial(figures, ("settle.time_s", "settle.settled", "settle.nowhere"), "the run did not finish")
    assert figures["settle"] == {"time_s": None, "settled": None,
                                 "_absent": {"time_s": "the run did not finish", "settled": "the run did not finish"}}


def test_the_terminal_marks_partial_figures_and_names_the_reason_of_absent_ones():
    summary = {"partial": True, "figures": {"settle": {"time_s": None}, "unloads": {"total": 4}},
               "absent": {"settle.time_s": "the run did not finish (trace ends at 700 s of 1,800 s): needs the whole run"}}
    assert show_figure(summary, "unloads.total") == "4 (partial)"
    assert show_figure(summary, "settle.time_s") == "— (the run did not finish (trace ends at 700 s of 1,800 s): needs the whole run)"
    assert show_figure({"figures": {"a": 1.872e-10}}, "a") == "0"


# -- labels ---------------------------------------------------------------------------------------------------------
#: pulsar-large with fewer bundles and topics: validating a million topics takes seconds, the labels do not need them.
SMALL = ["workload.namespaces.0.bundles=64", "workload.namespaces.1.bundles=64", "workload.namespaces.2.bundles=32",
         "workload.tasks.0.topics=2000", "workload.tasks.1.topics=2000", "workload.tasks.2.topics=1000"]


@pytest.mark.parametrize("scenario, label", [
    ("pulsar-large", "ThresholdShedder+LeastLongTermMessageRate"),  # the modular load manager's defaults
    ("rolling-restart-extensible", "TransferShedder+LeastResourceUsageWithWeight"),
    ("avgshedder-homogeneous", "AvgShedder+AvgShedder"),
])
def test_default_strategies_are_labelled_by_their_names(scenario, label):
    from clusteremu.agents.pulsar.model import PulsarModel

    data = load_scenario(scenario, SMALL if scenario == "pulsar-large" else ()).data
    assert strategy_label(data) == label
    # ... which are the ones the model runs.
    config = PulsarModel().config(data)
    assert label == "+".join(config[k].rsplit(".", 1)[-1] for k in ("loadBalancerLoadSheddingStrategy",
                                                                  "loadBalancerLoadPlacementStrategy"))


def test_a_strategy_set_by_broker_conf_key_is_the_label():
    data = load_scenario("pulsar-large", SMALL).data
    data["config"]["loadBalancerLoadSheddingStrategy"] = "org.apache.pulsar.broker.loadbalance.impl.UniformLoadShedder"
    assert strategy_label(data) == "UniformLoadShedder+LeastLongTermMessageRate"


# -- panels --------------------------------------------------------------------------------------------------------
def broker_load(n: int) -> pd.DataFrame:
    rows = []
    for b in range(n):
        for k, t in enumerate((60.0 + b, 960.0 + b)):
            score = 10.0 + b + 5.0 * k
            rows.append((t, f"broker-{b + 1}", score, score, 1000.0 * b, 1.0e6 * b, 4))
    return pd.DataFrame(rows, columns=["t", "broker", "score", "cpu", "msg_rate", "throughput", "num_bundles"])


def test_a_gauge_holds_its_last_value_to_the_end_of_the_run():
    t, v = held_to_end(np.array([60.0, 960.0]), np.array([1.0, 2.0]), 1800.0)
    assert t.tolist() == [60.0, 960.0, 1800.0] and v.tolist() == [1.0, 2.0, 2.0]
    t, v = held_to_end(np.array([60.0, 500.0]), np.array([1.0, np.nan]), 1800.0)  # stopped at 500: nothing after it
    assert t.tolist() == [60.0, 500.0, 1800.0] and np.isnan(v[1:]).all()


def test_a_stopped_broker_s_line_ends_at_its_stop():
    markers = pd.DataFrame({"t": [500.0], "end_t": [None], "kind": ["agent_stopped"], "agent": ["broker-2"], "label": ["x"]})
    panels = PulsarFigures().panels({"broker_load": broker_load(3), "markers": markers}, {"options": {}})
    t, v = panels[0].series["broker-2"]
    assert t.tolist() == [61.0, 500.0, 961.0] and np.isnan(v[1]) and v[2] == 16.0


def test_identical_panels_are_one_whose_title_says_so():
    panels = merge_identical(PulsarFigures().panels({"broker_load": broker_load(3)}, {"options": {}}))
    names = [p.name for p in panels]
    assert "cpu" not in names and "score" in names
    assert panels[0].full_title == "Score per broker (weighted max resource usage) — same as: CPU usage per broker"
    different = broker_load(3).assign(cpu=lambda d: d["score"] + 1.0)
    assert "cpu" in [p.name for p in merge_identical(PulsarFigures().panels({"broker_load": different}, {"options": {}}))]


def test_more_brokers_than_a_plot_can_show_become_their_distribution(tmp_path):
    n = MAX_LINES + 10
    panel = PulsarFigures().panels({"broker_load": broker_load(n)}, {"options": {}})[0]
    assert list(panel.series) == ["min", "median", "max", "top: broker-30", "top: broker-29", "top: broker-28"]
    assert "distribution over 30 brokers" in panel.full_title
    t, hi = panel.series["max"]
    # At 90 s (the last first report) every broker is at 10 + b; at 989 s (the last second one) at 15 + b.
    assert hi[t.tolist().index(89.0)] == 39.0 and hi[-1] == 44.0
    assert panel.series["min"][1][-1] == 15.0 and panel.series["median"][1][-1] == 29.5
    draw_panel(panel, NO_MARKERS, 1800.0, tmp_path / "p.png")
    assert mpimg.imread(tmp_path / "p.png").shape[1] > 600


def test_markers_have_colours_no_series_has():
    series_colours = {c.lower() for c in SERIES_20}
    assert not series_colours & {c.lower() for c, _s, _a in MARK_STYLE.values()}
    assert not series_colours & {c.lower() for c, _a, _h in SPAN_STYLE.values()}


def test_topics_unavailable_over_time_by_cause():
    episodes = pd.DataFrame({"t": [10.5, 11.0, 300.0], "agent": ["c1", "c1", "c2"], "topic": ["a", "b", "a"],
                             "unavailable_s": [0.5, 1.0, 60.0], "cause": ["unload", "unload", "broker_down"]})
    still = pd.DataFrame({"t": [1700.0], "agent": ["c3"], "topic": ["z"], "cause": ["broker_down"]})
    table = unavailable_over_time(episodes, still, 1800.0)
    down = table[table["cause"] == "broker_down"]
    unload = table[table["cause"] == "unload"]
    assert list(zip(down["t"], down["topics"])) == [(240.0, 1), (300.0, 0), (1700.0, 1)]  # still unavailable at the end
    assert list(zip(unload["t"], unload["topics"])) == [(10.0, 2), (10.5, 1), (11.0, 0)]


def test_gc_pauses_are_bars_over_time_and_a_histogram(tmp_path):
    one = pd.DataFrame({"t": [120.0], "agent": ["broker-1"], "duration_s": [3.0], "cause": ["gc-full"]})
    (bars,) = gc_panels(one)  # one length: no histogram of a single bar
    assert bars.style == "bars" and bars.series["broker-1"][1].tolist() == [3.0]
    table = pd.concat([one, pd.DataFrame({"t": [300.0, 310.0], "agent": ["broker-2"] * 2, "duration_s": [0.05, 0.08],
                                          "cause": ["gc-young"] * 2})], ignore_index=True)
    bars, hist = gc_panels(table)
    assert list(bars.series) == ["broker-1", "broker-2"] and bars.title.startswith("Stop-the-world pauses over time (3 pauses")
    assert hist.style == "hist" and hist.x_label == "pause (s)" and list(hist.series) == ["gc-full", "gc-young"]
    for p in (bars, hist):
        draw_panel(p, NO_MARKERS, 1800.0, tmp_path / f"{p.name}.png")
        rgb = mpimg.imread(tmp_path / f"{p.name}.png")[..., :3]
        # One pause is a bar, not a dot: a column of coloured pixels.
        assert ((rgb.max(axis=2) - rgb.min(axis=2)) > 0.3).sum() > 200


def test_a_span_panel_colours_rows_by_category_and_hatches_marks(tmp_path):
    panel = Panel.span_rows("own", "Ownership", ["q0", "q1"], [("q0", 0.0, 50.0, "c1"), ("q1", 0.0, 80.0, "c2")],
                            [("q1", 40.0, 45.0, "overlap")])
    draw_panel(panel, NO_MARKERS, 100.0, tmp_path / "own.png")
    rgb = mpimg.imread(tmp_path / "own.png")[..., :3]
    assert ((rgb.max(axis=2) - rgb.min(axis=2)) > 0.3).sum() > 5000


@pytest.mark.parametrize("system, options, path, reason", [
    ("rocketmq", {"change_merge_s": 15.0}, "duplicates.share_pct", "nothing was consumed"),
    ("storm", {}, "failures.share_pct", "no topology was scheduled"),
])
def test_a_share_of_nothing_is_absent_in_every_system(system, options, path, reason):
    from clusteremu.tools.analysis import figures_for
    from clusteremu.tools.analysis.common import empty_rows
    from clusteremu.tools.analysis.model import RunParams

    model = figures_for(system)
    params = RunParams(system, 50.0, 0.0, {"settle_window_s": 600.0, **options}, {})
    figures: dict = {}
    for part in model.parts():
        figures.update(json.loads(dumps(part.compute(empty_rows(part, model.schema), params).figures)))
    reasons = absent_reasons(figures)
    assert reasons[path] == reason
    node = figures
    for key in path.split("."):
        node = node[key]
    assert node is None
