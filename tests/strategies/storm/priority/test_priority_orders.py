"""The 2.x priority strategies on the clusters of Storm's own eviction and priority tests, as data.

Every cluster here has 4 supervisors of 100 CPU and 1000 MB (totals 400 / 4000); every topology has one
executor of 100 CPU and 500 + 500 MB unless said otherwise, so the orders follow from the scores by hand.
"""
from __future__ import annotations

import pytest

from clusteremu.strategies.storm.priority import (
    DOUBLE_MAX,
    DefaultSchedulingPriorityStrategy,
    FIFOSchedulingPriorityStrategy,
    GenericResourceAwareSchedulingPriorityStrategy,
    PriorityInput,
    TopologyDemand,
)


def topo(name: str, user: str, priority: int, uptime: int = 2, cpu: float = 100.0, memory: float = 1000.0,
         generic: dict[str, float] | None = None) -> TopologyDemand:
    return TopologyDemand(id=f"{name}-id", name=name, submitter=user, priority=priority, uptime=uptime,
                          cpu=cpu, memory=memory, generic=generic or {})


def names(order: tuple[str, ...]) -> list[str]:
    return [i.removesuffix("-id") for i in order]


def test_default_puts_the_over_guarantee_users_lowest_priority_last() -> None:
    # jerry 200/2000, bobby 100/1000, derek 200/2000; jerry has just submitted topo-6 (priority 20).
    inp = PriorityInput(
        topologies=(topo("topo-1", "jerry", 10), topo("topo-2", "bobby", 10), topo("topo-3", "bobby", 20),
                    topo("topo-4", "derek", 29), topo("topo-6", "jerry", 20)),
        pools={"jerry": {"cpu": 200, "memory": 2000}, "bobby": {"cpu": 100, "memory": 1000},
               "derek": {"cpu": 200, "memory": 2000}},
        total_cpu=400.0, total_memory=4000.0)
    result = DefaultSchedulingPriorityStrategy().ordered(inp)
    # derek and jerry tie at -0.25; HashMap order of (bobby, derek, jerry) puts derek first
    assert names(result.order) == ["topo-4", "topo-1", "topo-6", "topo-2", "topo-3"]
    first = result.picks[0]
    assert (first.user, first.score) == ("derek", -0.25)
    assert first.scores == {"derek": -0.25, "jerry": -0.25, "bobby": 0.0}
    # once the capacity is used up every score is MAX_VALUE and the last pick keeps the previous order
    assert result.picks[-1].score == DOUBLE_MAX


def test_default_user_without_pool_scores_above_zero_from_the_first_topology() -> None:
    inp = PriorityInput(
        topologies=(topo("topo-2", "bobby", 10), topo("topo-3", "bobby", 20), topo("topo-4", "derek", 29),
                    topo("topo-5", "derek", 29, uptime=15), topo("topo-1", "jerry", 10)),
        pools={"jerry": {"cpu": 300, "memory": 3000}, "derek": {"cpu": 100, "memory": 1000}},
        total_cpu=400.0, total_memory=4000.0)
    result = DefaultSchedulingPriorityStrategy().ordered(inp)
    # derek's older topo-5 goes before topo-4 (same priority); bobby (no pool) is last with topo-3 at the end
    assert names(result.order) == ["topo-1", "topo-5", "topo-4", "topo-2", "topo-3"]
    assert result.picks[3].scores["bobby"] > 0


def test_within_a_user_priority_then_age_then_id() -> None:
    inp = PriorityInput(
        topologies=(topo("b", "u", 5, uptime=10), topo("a", "u", 5, uptime=10), topo("c", "u", 5, uptime=50),
                    topo("d", "u", 1, uptime=0)),
        pools={}, total_cpu=1000.0, total_memory=10000.0)
    assert names(DefaultSchedulingPriorityStrategy().ordered(inp).order) == ["d", "c", "a", "b"]


def test_fifo_orders_over_guarantee_users_by_youngest_topology() -> None:
    # Storm's FIFO test, second round: jerry has 200/2000; bobby and derek have no pool.
    inp = PriorityInput(
        topologies=(topo("topo-1-jerry", "jerry", 20, uptime=250), topo("topo-2-bobby", "bobby", 10, uptime=200),
                    topo("topo-3-bobby", "bobby", 20, uptime=300), topo("topo-4-derek", "derek", 29, uptime=201),
                    topo("topo-5-derek", "derek", 29, uptime=15)),
        pools={"jerry": {"cpu": 200, "memory": 2000}}, total_cpu=400.0, total_memory=4000.0)
    result = FIFOSchedulingPriorityStrategy().ordered(inp)
    assert names(result.order) == ["topo-1-jerry", "topo-5-derek", "topo-2-bobby", "topo-4-derek", "topo-3-bobby"]
    # jerry is under guarantee (negative score); derek's and bobby's scores are uptimes
    assert result.picks[0].scores == {"jerry": -0.25, "derek": 15.0, "bobby": 200.0}
    assert result.picks[1].score == 15.0


def test_fifo_rescoring_reorders_the_users_own_topologies() -> None:
    # alice alone, over guarantee with her most important topology: scoring her (Storm logs that score before
    # the pick) re-sorts her topologies youngest first, so FIFO schedules the young low-priority one first.
    inp = PriorityInput(
        topologies=(topo("big", "alice", 0, uptime=100, cpu=300.0, memory=100.0),
                    topo("small", "alice", 9, uptime=5, cpu=10.0, memory=100.0)),
        pools={"alice": {"cpu": 100, "memory": 1000}}, total_cpu=400.0, total_memory=4000.0)
    fifo = FIFOSchedulingPriorityStrategy().ordered(inp)
    assert names(fifo.order) == ["small", "big"]
    assert fifo.picks[0].score == 5.0
    # the second pick scores "big" again: (10 + 300 - 100) / 390 > 0, so its uptime
    assert fifo.picks[1].score == 100.0
    assert names(DefaultSchedulingPriorityStrategy().ordered(inp).order) == ["big", "small"]


@pytest.mark.parametrize("strategy, first", [
    (DefaultSchedulingPriorityStrategy, "rui-topo-1"),
    (GenericResourceAwareSchedulingPriorityStrategy, "ethan-topo-1"),
])
def test_generic_resources_only_count_in_the_generic_strategy(strategy: type, first: str) -> None:
    # Storm's GRAS priority test: rui asks for little CPU/memory but 5 x 40 of a resource the cluster has 200 of
    ethan = [topo(f"ethan-topo-{i}", "ethan", p, cpu=60.0, memory=500.0) for i, p in
             ((1, 10), (2, 20), (3, 28), (4, 29))]
    rui = topo("rui-topo-1", "rui", 10, cpu=50.0, memory=100.0, generic={"generic.resource.1": 200.0})
    inp = PriorityInput(
        topologies=(*ethan, rui),
        pools={"rui": {"cpu": 200, "memory": 2000}, "ethan": {"cpu": 200, "memory": 2000}},
        total_cpu=400.0, total_memory=4000.0, total_generic={"generic.resource.1": 200.0})
    order = names(strategy().ordered(inp).order)
    assert order[0] == first
    if strategy is GenericResourceAwareSchedulingPriorityStrategy:
        assert order[-1] == "rui-topo-1"  # (200 - 0) / 200 = 1 beats every ethan score of 0


def test_generic_score_is_max_value_when_a_generic_resource_runs_out() -> None:
    inp = PriorityInput(
        topologies=(topo("g1", "u", 1, generic={"gpu": 2.0}), topo("g2", "u", 2, generic={"gpu": 1.0}),
                    topo("plain", "v", 1, cpu=1.0, memory=1.0)),
        pools={"u": {"cpu": 1000, "memory": 10000, "gpu": 10}}, total_cpu=1000.0, total_memory=10000.0,
        total_generic={"gpu": 2.0})
    result = GenericResourceAwareSchedulingPriorityStrategy().ordered(inp)
    # after g1 no GPU is left: every user scores MAX_VALUE (even v, who asks for none) and the previous
    # order (u before v) stands
    assert names(result.order) == ["g1", "g2", "plain"]
    assert result.picks[0].score == pytest.approx(-0.9)
    assert result.picks[1].scores == {"u": DOUBLE_MAX, "v": DOUBLE_MAX}


def test_empty_submitter_is_not_ordered_and_no_topologies_give_an_empty_order() -> None:
    inp = PriorityInput(topologies=(topo("x", "", 1),), pools={}, total_cpu=1.0, total_memory=1.0)
    assert DefaultSchedulingPriorityStrategy().ordered(inp).order == ()
