"""The scenarios of Pulsar's published load-manager benchmark (``lm-bench-*``): at the published size as data, and
in a short form, the behaviour their ``expect`` keys document. The full-size runs are the ``pulsar-lm-benchmark``
sweep suite and ``benchmarks/pulsar_lm_bench.py``."""
from __future__ import annotations

import fnmatch

import pandas as pd
import pytest

from clusteremu.agents.pulsar.model import broker_names
from clusteremu.emulator.testing import assert_count
from clusteremu.scenarios.loader import load_scenario
from clusteremu.tools.analysis.pulsar_lm_benchmark import (
    COLUMNS,
    KINDS,
    rebalance_figures,
    reconnect_figures,
    scale_in_figures,
    split_figures,
)
from clusteremu.tools.sweep import suites

RESTART = ("lm-bench-rolling-restart-modular", "lm-bench-rolling-restart-extensible")
SCALE_OUT = ("lm-bench-scale-out-modular", "lm-bench-scale-out-extensible")
SCALE_IN = ("lm-bench-scale-in-modular", "lm-bench-scale-in-extensible")
SPLIT = ("lm-bench-split-modular", "lm-bench-split-extensible")
#: The short forms: two brokers per restart wave; a tenth of the scale-out's publishers, each ten times as busy.
SMALL_RESTART = {"cluster.brokers": 20, "cluster.clients": 4, "workload.namespaces.0.bundles": 64,
                 "workload.tasks.0.topics": 300}
SMALL_SCALE_OUT = {"cluster.clients": 4, "workload.tasks.0.topics": 1000, "workload.tasks.0.rate_msgs": 500}


def rows(run) -> pd.DataFrame:
    """The run's events of the benchmark figures, as the analysis part receives them."""
    return pd.DataFrame([{"t": e.t, "agent": e.agent, "seq": e.seq, "kind": e.kind,
                          **{c: e.fields.get(c) for c in COLUMNS}} for e in run.events() if e.kind in KINDS])


def test_the_suite_holds_the_eight_scenarios_with_their_published_source():
    assert suites()["pulsar-lm-benchmark"].scenarios == (*RESTART, *SCALE_OUT, *SCALE_IN, *SPLIT)
    for name in (*RESTART, *SCALE_OUT, *SCALE_IN, *SPLIT):
        head = load_scenario(name).data["scenario"]
        assert head["description"] and head["expect"], name
        assert "apache/pulsar-site PR #652" in head["source"], name


@pytest.mark.parametrize("name", RESTART)
def test_restart_scenarios_have_the_published_size_and_restart_every_broker_once_in_ten_waves(name):
    data = load_scenario(name).data
    assert data["cluster"]["brokers"] == 100
    assert [ns["bundles"] for ns in data["workload"]["namespaces"]] == [65_000]
    (task,) = data["workload"]["tasks"]
    assert (task["topics"], task["subscriptions"]) == (100_000, 0)  # one publisher per topic, no consumers
    waves = [f for f in data["faults"] if f["kind"] == "rolling_restart"]
    assert len(waves) == 10 and {f["at"] for f in waves} == {600.0}
    members = [b for f in waves for b in broker_names(100) if any(fnmatch.fnmatchcase(b, g) for g in f["agents"])]
    assert sorted(members) == sorted(broker_names(100))  # each broker in exactly one wave
    assert data["strategy"]["load_manager"] in name


@pytest.mark.parametrize("name", SCALE_OUT)
def test_scale_out_scenarios_have_the_published_size(name):
    data = load_scenario(name).data
    assert data["cluster"]["brokers"] == 5
    (added,) = [f for f in data["faults"] if f["kind"] == "scale_out"]
    assert added["agents"] == [f"broker-{i}" for i in range(6, 11)]
    assert [ns["bundles"] for ns in data["workload"]["namespaces"]] == [100]
    assert [t["topics"] for t in data["workload"]["tasks"]] == [10_000]
    assert data["strategy"]["load_manager"] in name


@pytest.mark.parametrize("name", RESTART)
def test_every_publisher_reconnects_after_the_restart(emulate, name):
    run = emulate(name, until=900, **SMALL_RESTART)
    stops = assert_count(run, "broker_stopping", exactly=20, where=lambda e: e.cause == "rolling_restart")
    assert sum(e.t == 600.0 for e in stops) == 10  # the ten waves start together
    assert_count(run, "rolling_restart_done", exactly=10)
    f = reconnect_figures(rows(run))
    assert f["topics"] == 300 and f["recovered"]["count"] == 300
    assert f["recovery_s"] <= f["restart_s"] + 30.0


def test_the_extensible_restart_moves_publishers_without_lookups_and_shorter_unavailability(emulate):
    modular = emulate(RESTART[0], until=900, **SMALL_RESTART)
    extensible = emulate(RESTART[1], until=900, **SMALL_RESTART)
    direct = [e for e in extensible.events() if e.kind == "topic_connected" and e.t >= 600 and e.hops == 0]
    assert len(direct) >= 100  # told the new owner in the close
    down = {n: reconnect_figures(rows(r))["unavailable"]["total"] for n, r in (("m", modular), ("e", extensible))}
    assert down["e"] < down["m"] / 2


@pytest.mark.parametrize("name", SCALE_OUT)
def test_the_new_brokers_take_bundles_from_the_old_ones(emulate, name):
    run = emulate(name, **SMALL_SCALE_OUT)
    new = {f"broker-{i}" for i in range(6, 11)}
    assert_count(run, "bundle_owned", at_least=10, within=(600.0, None), where=lambda e: e.agent in new)
    f = rebalance_figures(rows(run))
    assert f["new_brokers"] == 5 and f["unloads"] >= 10


def test_only_the_extensible_scale_out_reaches_the_balanced_band(emulate):
    modular = rebalance_figures(rows(emulate(SCALE_OUT[0], **SMALL_SCALE_OUT)))
    extensible = rebalance_figures(rows(emulate(SCALE_OUT[1], **SMALL_SCALE_OUT)))
    # Pulsar's page: the modular load manager's load "cannot be balanced without further tuning"
    assert not modular["balanced"] and modular["deviation_end"] > modular["band"]
    assert extensible["balanced"] and extensible["deviation_end"] <= extensible["band"]


@pytest.mark.parametrize("out_name,in_name", list(zip(SCALE_OUT, SCALE_IN)))
def test_scale_in_scenarios_are_the_scale_out_pair_on_ten_brokers_of_which_five_leave(out_name, in_name):
    out, inn = load_scenario(out_name).data, load_scenario(in_name).data
    assert (out["cluster"]["brokers"], inn["cluster"]["brokers"]) == (5, 10)
    (leaving,) = inn["faults"]
    assert leaving["kind"] == "scale_in" and leaving["at"] == 600.0  # graceful: bundles handed over first
    assert leaving["agents"] == [f"broker-{i}" for i in range(6, 11)]
    for key in ("workload", "strategy", "config", "network"):
        assert inn[key] == out[key], key
    assert {k: v for k, v in inn["cluster"].items() if k != "brokers"} == \
        {k: v for k, v in out["cluster"].items() if k != "brokers"}


@pytest.mark.parametrize("name", SPLIT)
def test_split_scenarios_start_from_one_bundle_of_hot_topics_with_splitting_on(name):
    data = load_scenario(name).data
    assert data["cluster"]["brokers"] == 10
    assert [ns["bundles"] for ns in data["workload"]["namespaces"]] == [1]
    (task,) = data["workload"]["tasks"]
    # 2 M msg/s: even 64 bundles average more than loadBalancerNamespaceBundleMaxMsgRate (30,000)
    assert task["topics"] == 10_000 and task["topics"] * task["rate_msgs"] / 64 > 30_000
    assert data["config"]["loadBalancerAutoBundleSplitEnabled"] is True
    assert data.get("faults", []) == []
    assert data["strategy"]["load_manager"] in name


def test_the_scale_in_hands_the_leavers_bundles_to_the_five_that_stay(emulate):
    run = emulate(SCALE_IN[0], until=900, **SMALL_SCALE_OUT)
    assert_count(run, "broker_stopped", exactly=5, where=lambda e: e.cause == "scale_in")
    f = scale_in_figures(rows(run))
    assert (f["leaving_brokers"], f["staying_brokers"]) == (5, 5) and f["stopped_s"] < 10.0
    stayers = {f"broker-{i}" for i in range(1, 6)}
    assert_count(run, "bundle_owned", at_least=40, within=(600.0, None), where=lambda e: e.agent in stayers)
    assert f["deviation_end"] is not None


def test_the_modular_split_goes_by_rate_until_no_bundle_is_hot(emulate):
    # 300 topics at 2,000 msg/s: 600,000 msg/s, so bundles of about 20,000 msg/s are no longer hot
    run = emulate(SPLIT[0], until=120, **{"cluster.clients": 4, "workload.tasks.0.topics": 300,
                                          "workload.tasks.0.rate_msgs": 2000})
    f = split_figures(rows(run), 1)
    assert 16 <= f["bundles_end"] < 64 and f["splits"] == f["bundles_end"] - 1
    assert f["to_target_s"] is None and f["splitting_s"] < 120.0
