"""The Resource Aware Scheduler documentation's worked examples (shared/seeds/003) as scenarios, checked from the
trace: the five-rack table and its rack order (the document's, and Storm 2.x's), the two-user priority example and
the worker heap cap."""
from __future__ import annotations

import pytest

# The document's table: each rack's available CPU and memory as a share (%) of the cluster's.
DOC_RACK_SHARES = {
    "rack-000": (32.79, 19.51),
    "rack-001": (16.39, 9.76),
    "rack-002": (0.0, 19.51),
    "rack-003": (0.82, 48.78),
    "rack-004": (50.0, 2.44),
}


def doc_rack_order(rule: str) -> list[str]:
    """The racks in the order a rule gives from the document's table: ``subordinate`` (the document's: the smaller
    share first) or ``average`` (Storm 2.x's COMMON sort: the average share first, then the smaller)."""
    def key(rack: str) -> tuple[float, ...]:
        cpu, mem = DOC_RACK_SHARES[rack]
        low, avg = min(cpu, mem), (cpu + mem) / 2
        return (-low, -avg) if rule == "subordinate" else (-avg, -low)
    return sorted(DOC_RACK_SHARES, key=key)


def test_the_documents_order_is_the_one_it_prints():
    assert doc_rack_order("subordinate") == ["rack-000", "rack-001", "rack-004", "rack-003", "rack-002"]
    assert doc_rack_order("average")[0] == "rack-004"


@pytest.mark.parametrize("name, rule", [("storm-doc-five-racks-old", "subordinate"),
                                        ("storm-doc-five-racks", "average")])
def test_the_five_rack_topology_lands_in_the_first_rack_of_the_rules_order(storm_run, name, rule):
    tr = storm_run(name, "scenario.duration_s=40")
    submitted = tr.first("topology_submitted")
    # the cluster as the scheduler saw it before the topology: the document's table
    before = tr.last("scheduling_round", within=(None, submitted.t))
    assert before.cpu_total == 12200 and before.memory_total_mb == 410000 and before.cpu_used == 0
    racks: dict[str, list[float]] = {}
    for _sid, rack, cpu, _cu, mem, _mu, _st, _su in before.nodes:
        racks.setdefault(rack, [0.0, 0.0])
        racks[rack][0] += cpu
        racks[rack][1] += mem
    for rack, (cpu, mem) in racks.items():
        doc_cpu, doc_mem = DOC_RACK_SHARES[rack]
        assert 100 * cpu / before.cpu_total == pytest.approx(doc_cpu, abs=0.01)
        assert 100 * mem / before.memory_total_mb == pytest.approx(doc_mem, abs=0.01)
    placed = tr.first("assignment_changed", where=lambda e: e.topology == submitted.topology)
    assert placed.assigned_after == placed.executors == 10
    assert {w["rack"] for w in placed.workers} == {doc_rack_order(rule)[0]}
    assert tr.last("topology_round").fully_scheduled


# The document's DefaultSchedulingPriorityStrategy example, CPU in points (100 = a core) and memory in MB:
# (guarantee, allocated) per user.
DOC_USERS = {"A": ((1000, 51200), (200, 40960)), "B": ((2000, 25600), (1500, 10240))}


def test_the_two_user_example_schedules_the_user_furthest_from_guarantee_first(storm_run):
    tr = storm_run("storm-doc-two-users")
    subs = {e.topology_name: e for e in tr.select("topology_submitted")}
    for user, ((cpu_g, mem_g), (cpu_a, mem_a)) in DOC_USERS.items():
        base = subs[f"{user.lower()}-base"]
        assert (base.user, base.cpu, base.memory_mb) == (user, cpu_a, mem_a)
        assert tr.first("assignment_changed", where=lambda e: e.topology == base.topology).assigned_after == \
            base.executors
    met = {u: (a[0] / g[0] + a[1] / g[1]) / 2 for u, (g, a) in DOC_USERS.items()}
    assert met == pytest.approx({"A": 0.5, "B": 0.575})
    first_user = min(met, key=met.__getitem__)
    first, other = subs[f"{first_user.lower()}-next"], subs["b-next" if first_user == "A" else "a-next"]
    assert other.t < first.t  # the other user asked first: the order is by guarantee met, not by arrival
    removed = tr.first("topology_removed")
    assert removed.topology_name == "c-base"
    for tid in (first.topology, other.topology):  # nothing frees room for either before c-base's removal
        assert not tr.select("assignment_changed", within=(None, removed.t), where=lambda e, t=tid: e.topology == t)
    placed = tr.first("assignment_changed", where=lambda e: e.topology == first.topology)
    assert placed.t - removed.t <= 10.5 and placed.assigned_after == placed.executors
    round_ = tr.first("scheduling_round", within=(placed.t, placed.t))
    assert round_.generation == "1.x" and round_.order[0] == first.topology
    assert not tr.select("assignment_changed", where=lambda e: e.topology == other.topology)
    assert not tr.select("topology_evicted")
    assert not tr.last("topology_round", where=lambda e: e.topology == other.topology).fully_scheduled


@pytest.mark.parametrize("cap", [512.0, 768.0])  # the document's setTopologyWorkerMaxHeapSize(512.0); Storm's default
def test_the_worker_heap_cap_spreads_the_executors_over_the_workers_the_arithmetic_gives(storm_run, cap):
    tr = storm_run("storm-doc-heap-cap", f'workload.topologies.0."topology.worker.max.heap.size.mb"={cap}',
                   "scenario.duration_s=40")
    submitted = tr.first("topology_submitted")
    placed = tr.first("assignment_changed", where=lambda e: e.topology == submitted.topology)
    assert placed.assigned_after == placed.executors == 14 and submitted.memory_mb == 14 * 128.0
    per_worker = int(cap // 128.0)  # the documented default on-heap of an executor: 128.0 MB
    assert len(placed.workers) == -(-placed.executors // per_worker)  # 4 under 512 MB, 3 under 768 MB
    for w in placed.workers:
        assert w["onheap_mb"] <= cap and w["onheap_mb"] == 128.0 * len(w["executors"])
