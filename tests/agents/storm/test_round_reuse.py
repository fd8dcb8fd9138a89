"""Nimbus reuses a round's outcome when nothing it reads changed (``Nimbus._unchanged_round``). That is sound only
if ``mk_assignments`` is a pure function of its inputs in which the virtual time does not matter: these tests run
the same inputs at different times, under every priority strategy and both generations, on an over-subscribed
cluster (so that the order, failed placements and rolled-back evictions all show), and compare the outcomes."""
from __future__ import annotations

import pytest

from clusteremu.agents.storm.assignments import Known, mk_assignments
from clusteremu.agents.storm.model import MODEL_KEYS
from clusteremu.strategies.storm.config import read_config

PRIORITY = "resource.aware.scheduler.priority.strategy"
EVICTION = "resource.aware.scheduler.eviction.strategy"


def supervisor(k: int) -> dict:
    return {"id": f"supervisor-{k}", "host": f"host-{k}", "rack": "/rack-a" if k < 3 else "/rack-b", "cpu": 400.0,
            "memory_mb": 4096.0, "generic": {}, "ports": [6700, 6701, 6702, 6703], "time": 0.0}


def storm(i: int, user: str, priority: int, launch: int) -> dict:
    return {"id": f"t{i}-{i}-{launch}", "name": f"t{i}", "user": user, "launch_secs": launch, "status": "active",
            "conf": {"topology.priority": priority},
            "components": [{"id": "s", "type": "spout", "parallelism": 2, "inputs": [],
                            "topology.component.cpu.pcore.percent": 50.0},
                           {"id": "b", "type": "bolt", "parallelism": 6, "inputs": ["s"],
                            "topology.component.cpu.pcore.percent": 50.0}]}


CASES = [
    ({}, "2.x default"),
    ({PRIORITY: "FIFOSchedulingPriorityStrategy"}, "2.x FIFO"),
    ({PRIORITY: "GenericResourceAwareSchedulingPriorityStrategy"}, "2.x generic"),
    ({EVICTION: "DefaultEvictionStrategy"}, "1.x"),
]


@pytest.mark.parametrize(("extra", "label"), CASES, ids=[c[1] for c in CASES])
def test_a_round_on_unchanged_inputs_is_the_same_at_any_time(extra, label):
    conf = read_config({**MODEL_KEYS, "resource.aware.scheduler.user.pools": {"alice": {"cpu": 800, "memory": 4096}},
                        **extra}, "config")
    sups = {f"supervisor-{k}": supervisor(k) for k in range(1, 5)}
    storms = {b["id"]: b for b in (storm(1, "bob", 20, 10), storm(2, "bob", 20, 20), storm(3, "alice", 0, 30),
                                   storm(4, "carol", 10, 40), storm(5, "alice", 5, 50))}
    first = mk_assignments(Known(sups, storms, {}, {}), conf, 100.0, 1)
    assignments = {tid: data for tid, data in first.writes.items() if data is not None}
    assert assignments and len(assignments) < len(storms), label  # over-subscribed: some topologies wait
    settled = mk_assignments(Known(sups, storms, assignments, first.statuses), conf, 110.0, 2)
    assert settled.writes == {} and settled.statuses == first.statuses, label
    for now in (120.0, 7_200.0, 86_400.0):
        again = mk_assignments(Known(sups, storms, assignments, settled.statuses), conf, now, 2)
        assert again.writes == {} and again.statuses == settled.statuses
        assert again.events == settled.events, (label, now)
