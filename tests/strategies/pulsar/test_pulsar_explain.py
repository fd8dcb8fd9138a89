"""The shedders' explain hook: Java-style rendering of log arguments, and recording never changes a decision."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.explain import Explain, java_str, percent, slf4j
from clusteremu.strategies.pulsar.extensible import TransferContext

DATA = Path(__file__).parents[2] / "systems" / "pulsar" / "data"


@pytest.mark.parametrize("value, text", [
    (90.0, "90.0"), (1e7, "1.0E7"), (12345678.0, "1.2345678E7"), (1e-5, "1.0E-5"), (0.000123, "1.23E-4"),
    (-2.5e10, "-2.5E10"), (0.0, "0.0"), (float("nan"), "NaN"), (float("-inf"), "-Infinity"), (None, "null"),
    (True, "true"), (["a", "b"], "[a, b]"), ({"b1": 1}, "{b1=1}"), (7, "7")])
def test_java_str_is_string_value_of(value, text):
    assert java_str(value) == text


def test_slf4j_fills_placeholders_in_order_and_leaves_extra_ones():
    assert slf4j("[{}] broker is not overloaded, currentUsage:{}%", "b1", 30) == \
        "[b1] broker is not overloaded, currentUsage:30%"
    assert slf4j("{} and {}", "x") == "x and {}"


def test_percent_truncates_like_java_int_cast():
    assert percent(0.859) == 85 and percent(float("nan")) == 0


def _envelopes() -> list[pulsar.LoadData]:
    series = json.loads((DATA / "avg_low_hits.json").read_text())
    return [pulsar.LoadData.from_json(item) for item in series]


@pytest.mark.parametrize("name, overrides", [
    ("ThresholdShedder", {"loadBalancerBrokerThresholdShedderPercentage": 5,
                          "loadBalancerBundleUnloadMinThroughputThreshold": 0, "lowerBoundarySheddingEnabled": True}),
    ("OverloadShedder", {"loadBalancerBrokerOverloadedThresholdPercentage": 50}),
    ("UniformLoadShedder", {}),
    ("AvgShedder", {"maxUnloadPercentage": 0.5}),
])
def test_recording_changes_no_decision_and_no_state(name, overrides):
    quiet = pulsar.create(name, overrides)
    told = pulsar.create(name, overrides)
    for load_quiet, load_told in zip(_envelopes(), _envelopes()):
        told.explain = Explain()
        assert told.find_bundles_for_unloading(load_told) == quiet.find_bundles_for_unloading(load_quiet)
        assert told.get_state() == quiet.get_state()
        assert told.explain and all(r.log for r in told.explain)


def _contexts() -> list[TransferContext]:
    out = []
    for entry in sorted((DATA / "extensible_series").iterdir()):
        store = {f.name[:-5]: json.loads(f.read_text())
                 for f in sorted((entry / "loadbalancer-broker-load-data").iterdir())}
        top = {f.name[:-5]: json.loads(f.read_text())
               for f in sorted((entry / "loadbalancer-top-bundles-load-data").iterdir())}
        out.append(TransferContext.from_json({"now": int(entry.name), "brokerLoadDataStore": store,
                                              "topBundlesLoadDataStore": top}))
    return out


def test_transfer_shedder_recording_changes_nothing():
    quiet = pulsar.create("TransferShedder")
    told = pulsar.create("TransferShedder")
    for ctx_quiet, ctx_told in zip(_contexts(), _contexts()):
        told.explain = Explain()
        a, b = told.find_bundles_for_unloading(ctx_told), quiet.find_bundles_for_unloading(ctx_quiet)
        assert a.to_json() == b.to_json() and told.get_state() == quiet.get_state()
        assert any(r.rule == "stats" for r in told.explain)
    assert a.decisions  # the fourth consecutive hit acts, explained or not
