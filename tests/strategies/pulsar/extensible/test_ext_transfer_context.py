"""TransferContext: the JSON form of a recorded cycle, its validation, and the store iteration orders."""
from __future__ import annotations

import json

import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.pulsar.extensible import (
    BrokerLoadData,
    NonTransferableRule,
    NonTransferableRules,
    Reason,
    TransferContext,
    TransferShedder,
)
from clusteremu.base.java import java_order

NOW = 1_700_000_000_000


def broker_json(cpu: float, out: float) -> dict:
    return {"cpu": {"usage": cpu, "limit": 100.0}, "msgThroughputIn": 0.0, "msgThroughputOut": out,
            "weightedMaxEMA": cpu / 100, "maxResourceUsage": cpu / 100, "msgThroughputEMA": out, "updatedAt": NOW}


def top_json(prefix: str, *outs: float) -> dict:
    ranges = ("/0x00000000_0x7FFFFFFF", "/0x7FFFFFFF_0xFFFFFFFF")
    return {"topBundlesLoadData": [{"bundleName": prefix + r, "stats": {"msgThroughputOut": o}}
                                   for r, o in zip(ranges, outs)]}


def recorded() -> dict:
    return {
        "now": NOW,
        "brokerLoadDataStore": {"hot:8080": broker_json(90, 9e6), "cold:8080": broker_json(10, 3e6)},
        "topBundlesLoadDataStore": {"hot:8080": top_json("t/hot", 2e6, 7e6), "cold:8080": top_json("t/cold", 1e6, 2e6)},
        "availableBrokers": ["hot:8080", "cold:8080"],
        "config": {"loadBalancerSheddingConditionHitCountThreshold": 0},
    }


def test_recorded_cycle_runs_from_json():
    ctx = TransferContext.from_json(json.loads(json.dumps(recorded())))
    result = TransferShedder({}).find_bundles_for_unloading(ctx)
    assert result.decisions == [("hot:8080", "t/hot/0x00000000_0x7FFFFFFF", "cold:8080", Reason.Overloaded)]
    assert result.to_json()["decisions"][0] == {
        "sourceBroker": "hot:8080", "serviceUnit": "t/hot/0x00000000_0x7FFFFFFF", "destBroker": "cold:8080",
        "label": "Success", "reason": "Overloaded",
    }


def test_json_round_trip():
    obj = recorded()
    obj.update({
        "bundleOwners": {"t/hot/0x00000000_0x7FFFFFFF": "hot:8080"},
        "recentlyUnloadedBundles": {"x/y/0x0_0x1": 5},
        "recentlyUnloadedBrokers": {"cold:8080": 6},
        "nonTransferable": [{"bundle": "t/hot/0x7FFFFFFF_0xFFFFFFFF", "destinationBroker": "cold:8080"}],
        "loadDataOrder": "hashmap",
    })
    ctx = TransferContext.from_json(obj)
    again = TransferContext.from_json(json.loads(json.dumps(ctx.to_json())))
    assert again.to_json() == ctx.to_json()
    assert again.broker_load_data_store["hot:8080"] == BrokerLoadData.from_json(broker_json(90, 9e6))
    assert again.load_data_order == "hashmap" and again.bundle_owners == obj["bundleOwners"]


def test_defaults_and_registry_failure():
    obj = recorded()
    del obj["availableBrokers"], obj["topBundlesLoadDataStore"]
    ctx = TransferContext.from_json(obj)
    assert list(ctx.available_brokers) == ["hot:8080", "cold:8080"]
    assert ctx.top_bundles("hot:8080") is None and ctx.bundle_owners is None
    assert ctx.load_data_order == "concurrent"
    obj["availableBrokers"] = None
    result = TransferShedder({}).find_bundles_for_unloading(TransferContext.from_json(obj))
    assert result.reason is Reason.Unknown


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda o: o.pop("now"), "ctx.json: now"),
        (lambda o: o.pop("brokerLoadDataStore"), "ctx.json: brokerLoadDataStore"),
        (lambda o: o.update(nowMs=1), "ctx.json: nowMs"),
        (lambda o: o["brokerLoadDataStore"]["hot:8080"].update(updatedAt="soon"),
         'ctx.json: brokerLoadDataStore["hot:8080"].updatedAt'),
        (lambda o: o["topBundlesLoadDataStore"]["cold:8080"]["topBundlesLoadData"][1]["stats"].update(topics="many"),
         'ctx.json: topBundlesLoadDataStore["cold:8080"].topBundlesLoadData[1].stats.topics'),
        (lambda o: o.update(availableBrokers=["a", 3]), "ctx.json: availableBrokers[1]"),
        (lambda o: o.update(recentlyUnloadedBrokers={"a": "yesterday"}), 'ctx.json: recentlyUnloadedBrokers["a"]'),
        (lambda o: o.update(bundleOwners={"b": 1}), 'ctx.json: bundleOwners["b"]'),
        (lambda o: o.update(nonTransferable=[{"bundle": "b", "to": "x"}]), "ctx.json: nonTransferable[0].to"),
        (lambda o: o.update(loadDataOrder="random"), "ctx.json: loadDataOrder"),
        (lambda o: o.update(config={"loadBalancerTransferEnabled": "maybe"}), "ctx.json: config"),
    ],
)
def test_errors_name_the_json_path(edit, where):
    obj = recorded()
    edit(obj)
    with pytest.raises(InputError) as err:
        TransferContext.from_json(obj, "ctx.json")
    assert err.value.where == where


def test_non_transferable_rules_match_with_wildcards():
    rules = NonTransferableRules([NonTransferableRule("b1"), NonTransferableRule("b2", destination_broker="x")])
    assert not rules("b1", "any", "any")
    assert not rules("b2", "src", "x") and rules("b2", "src", "y")
    assert rules("b3", "src", "x")


def test_store_iteration_orders():
    store = {f"broker{i}:8080": BrokerLoadData() for i in range(20)}
    ctx = TransferContext(store, {}, list(store), NOW)
    assert [b for b, _ in ctx.load_data_entries()] == java_order(store, "concurrent")
    ctx.load_data_order = "hashmap"
    assert [b for b, _ in ctx.load_data_entries()] == java_order(store, "hashmap")
    ctx.load_data_order = "given"
    assert [b for b, _ in ctx.load_data_entries()] == list(store)
    with pytest.raises(ValueError):
        TransferContext(store, {}, [], NOW, load_data_order="sorted")


def test_predicate_errors_mean_not_transferable_and_arbitrary_predicates_have_no_json():
    def boom(bundle, src, dst):
        raise RuntimeError("filter failed")

    ctx = TransferContext({}, {}, [], NOW, transferable=boom)
    assert ctx.is_transferable("b", "s", "d") is False
    with pytest.raises(ValueError):
        ctx.to_json()
