"""The extensible unload scheduler's ``transfer_shedder_stats`` event: written once per TransferShedder cycle that
computed the brokers' load stats, with the values its UnloadCounter records (issue 18 §2)."""
from __future__ import annotations

import math

import pytest

from clusteremu.emulator.runner import execute
from clusteremu.emulator.trace import open_run
from clusteremu.scenarios.loader import validate_scenario

# Three brokers, broker-1 with a quarter of the others' cores: hot at first, so the shedder acts, then balanced
# enough that its cycles end in HitCount.
SCENARIO = {
    "scenario": {"name": "t", "model": "pulsar", "duration_s": 600, "seed": 3},
    "network": {"latency": {"dist": "uniform", "min_ms": 0.5, "max_ms": 1.5}},
    "cluster": {"brokers": 3, "clients": 2, "start_jitter_s": 2.0, "machines": {"broker-1": {"cores": 2}}},
    "workload": {"namespaces": [{"name": "public/default", "bundles": 8}],
                 "tasks": [{"name": "t", "topics": 24, "rate_msgs": 2000}]},
    "strategy": {"load_manager": "extensible"},
    "config": {"loadBalancerDistributeBundlesEvenlyEnabled": False},
}


def test_each_cycle_that_computed_the_stats_writes_the_counters_load_avg_and_std(tmp_path):
    sc = validate_scenario(SCENARIO, "test")
    events = list(open_run(execute(sc, tmp_path / "x").run_dir).events())
    stats = [e for e in events if e.kind == "transfer_shedder_stats"]
    cycles = [e for e in events if e.kind == "shedding_cycle"]
    assert stats and len(stats) <= len(cycles)
    # What the leader's load-data store held at each cycle: every broker's latest published weightedMaxEMA.
    checked = 0
    for s in stats:
        latest: dict[str, float] = {}
        for e in events:
            if e.kind == "broker_load_data" and e.t < s.t - 0.01:  # published, and read by the leader since
                latest[e.agent] = e.weighted_max_ema / 100.0
        loads = list(latest.values())
        avg = sum(loads) / len(loads)
        std = math.sqrt(max(0.0, sum(x * x for x in loads) / len(loads) - avg * avg))
        assert (s.load_avg, s.load_std) == pytest.approx((avg, std), abs=1e-9), s
        assert s.target_std == 0.25  # loadBalancerBrokerLoadTargetStd's default
        checked += 1
    assert checked == len(stats)
    outcomes = {(s.label, s.reason) for s in stats}
    assert ("Skip", "HitCount") in outcomes and ("Success", "") in outcomes, outcomes
    # A cycle skipped before the stats (CoolDown after the transfers) writes none; every other cycle one.
    written = {(s.t, s.agent) for s in stats}
    before_stats = {"CoolDown", "OutDatedData", "NoBrokers", "NoLoadData"}
    assert any(c.skipped == "CoolDown" for c in cycles)
    for c in cycles:
        assert ((c.t, c.agent) in written) == (c.skipped not in before_stats), c
