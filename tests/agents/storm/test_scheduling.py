"""Nimbus schedules submitted topologies at its rounds, with the strategies' round, and the trace says so."""
from __future__ import annotations

import pytest

from clusteremu.emulator.testing import assert_count, assert_never
from clusteremu.strategies.storm.decide import decide, parse_request

from clusteremu.agents.storm.model import MODEL
from clusteremu.agents.storm.topologies import decide_form, expand
from clusteremu.scenarios.loader import load_scenario

STEADY = "storm-steady-multi-user"


def test_every_topology_is_scheduled_at_the_first_round_after_its_submission(storm_run):
    tr = storm_run(STEADY)
    submitted = {e.topology: e.t for e in tr.select("topology_submitted")}
    assert len(submitted) == 9
    rounds = tr.times_of("scheduling_round")
    first = {}
    for e in tr.select("assignment_changed"):
        first.setdefault(e.topology, e)
    assert set(first) == set(submitted)
    for tid, ev in first.items():
        assert ev.reason == "scheduled" and ev.assigned_after == ev.executors
        next_round = min(t for t in rounds if t >= submitted[tid])
        assert ev.t == next_round and ev.t - submitted[tid] <= 10.5
    assert_never(tr, "topology_evicted")


def test_rounds_follow_the_monitor_frequency_with_fixed_delay(storm_run):
    tr = storm_run(STEADY)
    gaps = [b - a for a, b in zip(tr.times_of("scheduling_round"), tr.times_of("scheduling_round")[1:])]
    # StormTimer's recurring task is scheduled again after it ran: 10 s plus the time its ZooKeeper writes take
    # (and a young GC pause that falls on the timer)
    assert all(10.0 - 1e-9 <= g < 10.2 for g in gaps)
    assert_count(tr, "scheduling_round", at_least=88)


def test_round_resources_are_the_sum_of_the_workers(storm_run):
    tr = storm_run(STEADY)
    for r in tr.select("scheduling_round"):
        assert r.cpu_total == 6 * 400.0 and r.memory_total_mb == 6 * 4096.0 and r.slots_total == 24
        assert r.cpu_used == pytest.approx(sum(n[3] for n in r.nodes))
        assert r.slots_used == sum(n[7] for n in r.nodes)
        rows = [e for e in tr.select("topology_round") if e.agent == r.agent and e.round == r.round]
        assert len(rows) == r.topologies
        assert r.cpu_used == pytest.approx(sum(e.cpu for e in rows))
        assert r.memory_used_mb == pytest.approx(sum(e.memory_mb for e in rows))
    last = tr.last("scheduling_round")
    assert last.topologies_fully_scheduled == 9 and last.cpu_used > 0


def test_supervisors_run_the_assigned_workers(storm_run):
    tr = storm_run(STEADY)
    assigned = {(w["supervisor"], w["port"]): (e.topology, len(w["executors"]))
                for e in tr.select("assignment_changed") for w in e.workers}
    launched = {(e.agent, e.port): (e.topology, e.executors) for e in tr.select("worker_launched")}
    assert launched == assigned
    beat = tr.last("supervisor_heartbeat", entity="supervisor-1")
    mine = [e for e in tr.select("worker_launched") if e.agent == "supervisor-1"]
    assert beat.slots_used == len(mine) and beat.cpu_used == pytest.approx(sum(e.cpu for e in mine))


def test_the_network_metric_counts_connected_executor_pairs(storm_run):
    tr = storm_run(STEADY)
    for e in tr.select("assignment_changed"):
        sub = tr.first("topology_submitted", where=lambda s: s.topology == e.topology)
        par = {c["id"]: c["parallelism"] for c in sub.components}
        pairs = sum(par[p] * par[c["id"]] for c in sub.components for p in c["inputs"])
        assert e.pairs == pairs
        assert 0 <= e.same_worker <= e.same_node <= e.same_rack <= e.pairs
        slot = {(c, i): (w["supervisor"], w["port"]) for w in e.workers for c, i in w["executors"]}
        same = sum(1 for c in sub.components for p in c["inputs"] for i in range(par[c["id"]])
                   for j in range(par[p]) if slot[(c["id"], i)] == slot[(p, j)])
        assert e.same_worker == same


def test_each_round_places_what_decide_answers_on_the_same_cluster(storm_run):
    """The Nimbus round and ``clusteremu decide`` are the same code: replaying every round that changed an
    assignment through the strategies' decide, on the cluster and assignments the trace shows before it, gives
    the same workers."""
    tr = storm_run(STEADY)
    scenario = load_scenario(STEADY)
    data = scenario.data
    subs = {s["name"]: s for s in expand(data["workload"]["topologies"])}
    sups = [{"id": a.name, "host": a.params["host"], "rack": a.params["rack"],
             "supervisor.cpu.capacity": a.params["cpu"], "supervisor.memory.capacity.mb": a.params["memory_mb"],
             "ports": a.params["ports"]} for a in MODEL.agents(data) if a.name.startswith("supervisor-")]
    current: dict[str, list] = {}
    submitted = list(tr.select("topology_submitted"))
    checked = 0
    for r in tr.select("scheduling_round"):
        changes = [e for e in tr.select("assignment_changed") if e.round == r.round]
        if not changes:
            continue
        topos = []
        for s in submitted:
            if s.t <= r.t:
                form = decide_form(subs[s.topology_name], int(s.t))
                form["id"] = s.topology
                topos.append(form)
        request = parse_request({"config": data["config"], "nowSecs": int(r.t), "supervisors": sups,
                                 "topologies": topos, "assignments": current}, "trace")
        answer = decide(request, "DefaultResourceAwareStrategy")
        for e in changes:
            rows = sorted((c, i, w["supervisor"], w["port"]) for w in e.workers for c, i in w["executors"])
            theirs = sorted((a["component"], a["index"], a["supervisor"], a["port"])
                            for a in answer["assignments"].get(e.topology, []))
            assert rows == theirs
            current[e.topology] = [{"component": c, "index": i, "supervisor": s, "port": p} for c, i, s, p in rows]
            checked += 1
    assert checked == 9
