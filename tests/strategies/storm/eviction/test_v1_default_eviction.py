"""Storm 1.x ``DefaultEvictionStrategy`` on the user states of Storm 1.2's eviction tests, as data.

Every topology requests 100 CPU and 1000 MB; guarantees are (CPU, memory).
"""
from __future__ import annotations

from clusteremu.strategies.storm.eviction import DefaultEvictionStrategy
from clusteremu.strategies.storm.priority import TopologyDemand, UserGuarantee, V1User


def topo(name: str, user: str, priority: int, uptime: int = 2, cpu: float = 100.0,
         memory: float = 1000.0) -> TopologyDemand:
    return TopologyDemand(name, name, user, priority, uptime, cpu, memory)


def user(name: str, cpu: float, memory: float, running: list[TopologyDemand]) -> V1User:
    u = V1User(name, UserGuarantee(cpu, memory))
    for td in running:
        u.add("running", td)
    return u


def test_submitter_with_room_evicts_the_lowest_priority_of_the_most_over_user() -> None:
    users = [user("bobby", 100, 1000, [topo("topo-2", "bobby", 10), topo("topo-3", "bobby", 20)]),
             user("derek", 200, 2000, [topo("topo-4", "derek", 29)]),
             user("jerry", 200, 2000, [topo("topo-1", "jerry", 10)])]
    found = DefaultEvictionStrategy().make_space_for(topo("topo-6", "jerry", 20), users)
    assert found is not None
    assert (found.topology.id, found.user, found.rule) == ("topo-3", "bobby", "submitter-has-room")


def test_user_without_guarantee_is_the_most_over_and_loses_topologies_one_by_one() -> None:
    bobby = user("bobby", 0, 0, [topo("topo-2", "bobby", 10), topo("topo-3", "bobby", 20)])
    derek = user("derek", 100, 1000, [topo("topo-4", "derek", 29), topo("topo-5", "derek", 29)])
    jerry = user("jerry", 200, 2000, [])
    big = topo("topo-1", "jerry", 10, cpu=200.0, memory=2000.0)
    strategy = DefaultEvictionStrategy()
    first = strategy.make_space_for(big, [bobby, derek, jerry])
    assert first is not None and first.topology.id == "topo-3"
    bobby.move(first.topology, "running", "pending")
    second = strategy.make_space_for(big, [bobby, derek, jerry])
    assert second is not None and second.topology.id == "topo-2"


def test_among_equal_priorities_the_younger_topology_is_evicted() -> None:
    derek = user("derek", 100, 1000, [topo("topo-4", "derek", 29, uptime=2), topo("topo-5", "derek", 29, uptime=15)])
    jerry = user("jerry", 300, 3000, [topo("topo-1", "jerry", 10), topo("topo-6", "jerry", 10)])
    found = DefaultEvictionStrategy().make_space_for(topo("topo-7", "jerry", 10), [derek, jerry])
    assert found is not None and found.topology.id == "topo-4"


def test_never_takes_from_a_user_at_or_below_guarantee() -> None:
    # jerry is at her guarantee, bobby and derek exactly at theirs: nobody is over, and jerry's own running
    # topologies are not of lower priority than the new one, so nothing can be evicted.
    jerry = user("jerry", 200, 2000, [topo("topo-1", "jerry", 20), topo("topo-2", "jerry", 20)])
    bobby = user("bobby", 100, 1000, [topo("topo-5", "bobby", 10)])
    derek = user("derek", 100, 1000, [topo("topo-6", "derek", 29)])
    users = [bobby, derek, jerry]
    strategy = DefaultEvictionStrategy()
    assert strategy.make_space_for(topo("topo-3", "jerry", 29), users) is None
    # a more important topology of jerry evicts one of her own: the first lower-priority one in queue order
    found = strategy.make_space_for(topo("topo-4", "jerry", 10), users)
    assert found is not None
    assert (found.topology.id, found.user, found.rule) == ("topo-1", "jerry", "own-lower-priority")


def test_over_guarantee_submitter_evicts_only_from_a_user_further_over() -> None:
    # derek (25 / 250) runs one topology: 4x over. jerry (70 / 700) runs one: 1.43x over. bobby is at 1.
    jerry = user("jerry", 70, 700, [topo("topo-1", "jerry", 20)])
    bobby = user("bobby", 100, 1000, [topo("topo-3", "bobby", 10)])
    derek = user("derek", 25, 250, [topo("topo-5", "derek", 29)])
    users = [bobby, derek, jerry]
    strategy = DefaultEvictionStrategy()
    # jerry's new topology: derek's over (3) > needed (1.43) + jerry's over (0.43)
    found = strategy.make_space_for(topo("topo-2", "jerry", 20), users)
    assert found is not None and (found.topology.id, found.rule) == ("topo-5", "victim-more-over")
    # derek's own new topology: derek is the most over user himself and cannot out-over himself; his running
    # topo-5 has a lower priority than the new one, so he evicts his own
    found = strategy.make_space_for(topo("topo-6", "derek", 10), users)
    assert found is not None and (found.topology.id, found.rule) == ("topo-5", "own-lower-priority")


def test_submitter_without_guarantee_evicts_nothing() -> None:
    users = [user("bobby", 0, 0, [topo("topo-2", "bobby", 20)]), user("alice", 100, 1000, [])]
    assert DefaultEvictionStrategy().make_space_for(topo("topo-9", "bobby", 0), users) is None
