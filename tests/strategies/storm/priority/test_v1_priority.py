"""Storm 1.x ``DefaultSchedulingPriorityStrategy``: the user with the lowest "% of guarantee used" goes next."""
from __future__ import annotations

from clusteremu.strategies.storm.priority import (
    DOUBLE_MAX,
    DefaultSchedulingPriorityStrategyV1,
    TopologyDemand,
    UserGuarantee,
    V1User,
)


def topo(name: str, user: str, priority: int, uptime: int = 2) -> TopologyDemand:
    return TopologyDemand(name, name, user, priority, uptime, 100.0, 1000.0)


def user(name: str, cpu: float, memory: float, running: list[TopologyDemand],
         pending: list[TopologyDemand]) -> V1User:
    u = V1User(name, UserGuarantee(cpu, memory))
    for td in running:
        u.add("running", td)
    for td in pending:
        u.add("pending", td)
    return u


def test_lowest_average_utilization_wins_and_its_first_pending_topology_is_next() -> None:
    alice = user("alice", 200, 2000, [topo("a1", "alice", 0)], [topo("a2", "alice", 5), topo("a3", "alice", 1)])
    bob = user("bob", 400, 4000, [topo("b1", "bob", 0)], [topo("b2", "bob", 0)])
    pick = DefaultSchedulingPriorityStrategyV1().next_topology([alice, bob], 800.0, 8000.0)
    # alice uses 50% of her guarantee, bob 25%
    assert pick.user == "bob" and pick.topology is not None and pick.topology.id == "b2"
    assert pick.scores == {"alice": 0.5, "bob": 0.25}
    bob.move(pick.topology, "pending", "running")
    pick = DefaultSchedulingPriorityStrategyV1().next_topology([alice, bob], 800.0, 8000.0)
    # now both at 50%: the tie goes to the larger guarantee share (bob) — but bob has nothing pending
    assert pick.user == "alice" and pick.topology is not None and pick.topology.id == "a3"


def test_ties_within_1e_4_go_to_the_larger_guarantee_share() -> None:
    small = user("small", 100, 1000, [], [topo("s1", "small", 0)])
    large = user("large", 300, 3000, [], [topo("l1", "large", 9)])
    for users in ([small, large], [large, small]):
        pick = DefaultSchedulingPriorityStrategyV1().next_topology(users, 400.0, 4000.0)
        assert pick.user == "large"


def test_users_without_guarantee_come_after_everyone_with_one() -> None:
    nobody = user("nobody", 0, 0, [], [topo("n1", "nobody", 0)])
    some = user("some", 100, 1000, [topo("s0", "some", 0), topo("s00", "some", 0)], [topo("s1", "some", 29)])
    strategy = DefaultSchedulingPriorityStrategyV1()
    pick = strategy.next_topology([nobody, some], 400.0, 4000.0)
    assert pick.user == "some" and pick.scores["nobody"] == DOUBLE_MAX
    some.move(pick.topology, "pending", "attempted")
    assert strategy.next_topology([nobody, some], 400.0, 4000.0).user == "nobody"


def test_nothing_pending_gives_no_pick() -> None:
    done = user("done", 1, 1, [topo("d", "done", 0)], [])
    pick = DefaultSchedulingPriorityStrategyV1().next_topology([done], 1.0, 1.0)
    assert pick.topology is None and pick.user is None and pick.scores == {}
