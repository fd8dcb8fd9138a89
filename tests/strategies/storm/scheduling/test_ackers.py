"""Acker binding: the upstream acker placements (TestDefaultResourceAwareStrategy and
TestGenericResourceAwareStrategy "WithoutSettingAckerExecutors"), and the binding rule's arithmetic."""
from __future__ import annotations

import pytest

from clusteremu.strategies.storm.cluster import WorkerSlot
from clusteremu.strategies.storm.scheduling import STRATEGIES
from clusteremu.base.java import double_to_int as java_int
from clusteremu.strategies.storm.scheduling.ackers import AckerBinding
from clusteremu.strategies.storm.topology import (
    Component,
    Executor,
    Topology,
    acker_executor_configs,
    estimated_worker_count,
)

from ..clusters import CURRENT_TIME, cluster_conf, gen_executors, gen_supervisors, make_state

SYSTEM = ("__acker", "__system")


def chain_with_ackers(conf, ackers: int, gpu: bool = False) -> Topology:
    """spout(1) → bolt-1(2) → bolt-2(2) → bolt-3(2) plus ``ackers`` acker executors (250 MB on-heap, 50 % cpu):
    tasks spout 0, bolt-1 1-2, bolt-3 3-4, bolt-2 5-6, ackers 7.. (Java's map order of the system topology)."""
    conf = dict(conf, **{"topology.acker.executors": ackers, "topology.acker.resources.onheap.memory.mb": 250,
                         "topology.acker.cpu.pcore.percent": 50})
    comps = [Component("spout", 1, "spout"),
             Component("bolt-1", 2, "bolt", ("spout",)),
             Component("bolt-2", 2, "bolt", ("bolt-1",), resources={"gpu.count": 1.0} if gpu else {}),
             Component("bolt-3", 2, "bolt", ("bolt-2",), resources={"gpu.count": 2.0} if gpu else {}),
             Component("__acker", ackers, "bolt")]
    return Topology("testTopology-id", comps, conf, name="testTopology", user="user", launch_time=CURRENT_TIME,
                    executors=gen_executors(comps, SYSTEM), num_workers=0)


def workers(state, td):
    return {frozenset(e.start_task for e in execs) for execs in state.slot_to_executors(td.id).values()}


@pytest.mark.parametrize("strategy", ["DefaultResourceAwareStrategy", "DefaultResourceAwareStrategyOld"])
@pytest.mark.parametrize(("per_worker", "ackers", "expected"), [
    # one acker per worker (also the default): 2 ackers, the topology needs 3 workers
    (1, 2, {frozenset({6, 2, 4, 8}), frozenset({5, 1, 3, 7}), frozenset({0})}),
    (2, 4, {frozenset({6, 2, 7, 8}), frozenset({4, 5, 9, 10}), frozenset({1, 3, 0})}),
])
def test_default_strategy_binds_ackers(strategy, per_worker, ackers, expected):
    conf = cluster_conf(50, 450, 0, **{"topology.worker.max.heap.size.mb": 2000, "topology.priority": 0,
                                      "topology.ras.acker.executors.per.worker": per_worker})
    td = chain_with_ackers(conf, ackers)
    assert [td.component_of(Executor(t, t)) for t in (1, 3, 5, 7)] == ["bolt-1", "bolt-3", "bolt-2", "__acker"]
    state = make_state(gen_supervisors(4, 4, 200, 2000), [td], conf)
    result = STRATEGIES[strategy]().schedule(state, td)
    assert result.is_success(), result
    assert workers(state, td) == expected


@pytest.mark.parametrize("strategy", ["GenericResourceAwareStrategy", "GenericResourceAwareStrategyOld"])
@pytest.mark.parametrize(("per_worker", "ackers", "expected"), [
    (1, 2, {frozenset({3}), frozenset({6, 2, 5, 8}), frozenset({4, 1, 0, 7})}),
    (2, 4, {frozenset({3}), frozenset({7, 8, 6, 2}), frozenset({9, 10, 1, 4}), frozenset({0, 5})}),
])
def test_generic_strategy_binds_ackers(strategy, per_worker, ackers, expected):
    conf = cluster_conf(50, 500, 0, generic={}, strategy=strategy,
                        **{"topology.worker.max.heap.size.mb": 2000, "topology.priority": 0,
                           "topology.ras.acker.executors.per.worker": per_worker})
    td = chain_with_ackers(conf, ackers, gpu=True)
    state = make_state(gen_supervisors(4, 4, 200, 2000, generic={"gpu.count": 2.0}), [td], conf)
    assert STRATEGIES[strategy]().schedule(state, td).is_success()
    assert workers(state, td) == expected


def test_no_binding_with_one_executor_per_worker():
    conf = cluster_conf(50, 450, 0, **{"topology.worker.max.heap.size.mb": 2000,
                                      "topology.ras.one.executor.per.worker": True})
    td = chain_with_ackers(conf, 2)
    state = make_state(gen_supervisors(4, 4, 400, 4000), [td], conf)
    assert STRATEGIES["DefaultResourceAwareStrategy"]().schedule(state, td).is_success()
    assert all(len(w) == 1 for w in workers(state, td))
    assert len(workers(state, td)) == 9


def test_count_to_bind_arithmetic():
    conf = cluster_conf(50, 450, 0, **{"topology.worker.max.heap.size.mb": 1000,
                                      "topology.ras.acker.executors.per.worker": 5})
    td = chain_with_ackers(conf, 4)
    binding = AckerBinding(td, [Executor(t, t) for t in (8, 7, 10, 9)])
    slot = WorkerSlot("n", 1)
    # (1000 - 450) / 250 = 2.2 → 2, below the 4 left and the 5 per worker
    assert binding.count_to_bind(Executor(1, 1), slot) == 2
    # ackers never bring ackers; a worker that already has bound ackers gets no more
    assert binding.count_to_bind(Executor(7, 7), slot) == 0
    binding.by_slot[slot] = [Executor(8, 8)]
    assert binding.count_to_bind(Executor(1, 1), slot) == 0
    assert java_int(float("nan")) == 0 and java_int(float("inf")) == 2**31 - 1 and java_int(-2.7) == -2


@pytest.mark.parametrize("strategy", ["DefaultResourceAwareStrategy", "DefaultResourceAwareStrategyOld"])
def test_proximity_order_with_one_acker(strategy):
    # testDefaultResourceAwareStrategyInFavorOfShuffle: executors by proximity, one acker bound to the first worker
    conf = cluster_conf(50, 250, 250, **{"topology.priority": 0, "topology.worker.max.heap.size.mb": 1.0e300,
                                        "topology.ras.order.executors.by.proximity.needs": True})
    comps = [Component("spout", 1, "spout"), Component("bolt-1", 2, "bolt", ("spout",)),
             Component("bolt-2", 2, "bolt", ("bolt-1",)), Component("bolt-3", 2, "bolt", ("bolt-2",)),
             Component("__acker", 1, "bolt")]
    td = Topology("testTopology-id", comps, conf, name="testTopology", user="user", launch_time=CURRENT_TIME,
                  executors=gen_executors(comps, SYSTEM), num_workers=0)
    state = make_state(gen_supervisors(4, 4, 200, 2000), [td], conf)
    assert STRATEGIES[strategy]().schedule(state, td).is_success()
    assert workers(state, td) == {frozenset({0, 6, 2, 7}), frozenset({3, 5, 4, 1})}


def test_nimbus_acker_sizing_of_the_upstream_tests():
    # the chain's user components: 7 executors of 450 MB on-heap, heap cap 2000 MB
    conf = cluster_conf(50, 450, 0, **{"topology.worker.max.heap.size.mb": 2000})
    comps = chain_with_ackers(conf, 0).user_components()
    # without topology.acker.executors: one acker per topology.workers (1) counts: (3150 + 450) / 2000 → 2 workers
    assert estimated_worker_count(comps, conf) == 2
    assert acker_executor_configs(conf, 2) == (2, 1)
    assert acker_executor_configs(dict(conf, **{"topology.ras.acker.executors.per.worker": 2}), 2) == (4, 2)
    # with topology.acker.executors = 4: (3150 + 4 × 450) / 2000 → 3 workers, ceil(4 / 3) = 2 ackers per worker
    with_ackers = dict(conf, **{"topology.acker.executors": 4, "topology.ras.acker.executors.per.worker": 300})
    assert estimated_worker_count(comps, with_ackers) == 3
    assert acker_executor_configs(with_ackers, 3) == (4, 2)
    assert acker_executor_configs(with_ackers, 0) == (4, 0)


@pytest.mark.parametrize("strategy", ["DefaultResourceAwareStrategy", "DefaultResourceAwareStrategyOld"])
def test_default_strategy_with_acker_executors_set(strategy):
    # testDefaultResourceAwareStrategyWithSettingAckerExecutors: 4 ackers, Nimbus makes it 2 per worker
    conf = cluster_conf(50, 450, 0, **{"topology.worker.max.heap.size.mb": 2000, "topology.priority": 0,
                                      "topology.acker.executors": 4})
    comps = chain_with_ackers(conf, 0).user_components()
    ackers, per_worker = acker_executor_configs(conf, estimated_worker_count(comps, conf))
    td = chain_with_ackers(dict(conf, **{"topology.ras.acker.executors.per.worker": per_worker}), ackers)
    state = make_state(gen_supervisors(4, 4, 200, 2000), [td], conf)
    assert STRATEGIES[strategy]().schedule(state, td).is_success()
    assert workers(state, td) == {frozenset({6, 2, 7, 8}), frozenset({5, 4, 9, 10}), frozenset({1, 3, 0})}
