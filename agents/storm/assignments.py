"""Nimbus's ``mkAssignments``: one scheduling round on what the leader knows, and what it changes.

Components:

* :class:`Known`: what the leader Nimbus knows when a round starts (its copy of ZooKeeper: the live supervisors'
  ``SupervisorInfo``, the ``StormBase`` of every topology, the current assignments, the last statuses);
* :func:`to_workers` / :func:`to_executor_slots`: an assignment between its ZooKeeper form (msgpack-safe rows
  ``[supervisor, port, cpu, onheap_mb, offheap_mb, [[start_task, end_task], ...]]``) and the scheduler's
  ``{Executor: WorkerSlot}``;
* :func:`mk_assignments`: build the scheduler's :class:`~clusteremu.strategies.storm.cluster.ClusterState` from
  :class:`Known` (executors on supervisors that are not alive are unassigned, as Storm drops dead executors),
  run one round of :func:`clusteremu.strategies.storm.scheduler.schedule_round` — the code that answers
  ``clusteremu decide`` for Storm — and return a :class:`RoundOutcome`: the assignments to write (or delete)
  and the round's trace events, in the order Nimbus writes them.

The function is pure (no agent, no clock): the Nimbus agent passes the virtual time and emits the events.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies.storm import registry
from clusteremu.strategies.storm.cluster import ClusterState, Supervisor, WorkerSlot
from clusteremu.strategies.storm.config import RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY, TOPOLOGY_SCHEDULER_STRATEGY
from clusteremu.strategies.storm.scheduler import schedule_round
from clusteremu.strategies.storm.topology import Executor, Topology

from .metrics import cluster_usage, fragmentation, proximity, stranded
from .topologies import build_topology

__all__ = ["Known", "RoundOutcome", "mk_assignments", "to_executor_slots", "to_workers"]

Event = tuple[str, dict[str, Any]]

# Units: CPU in percent of one core (Storm's points: 100 = one core), memory in MB. ``round`` counts the rounds of
# the Nimbus that wrote the event (the event's agent): (agent, round) names a round across a failover.
declare("scheduling_round", "The leader Nimbus ran one scheduling round (`mkAssignments`, every "
        "`nimbus.monitor.freq.secs`, or at the end of a rebalance's wait: `rebalance` names the topology whose "
        "assignment the round left out, \"\" otherwise). `generation` is \"2.x\" or \"1.x\"; "
        "`priority_strategy` the priority class; `order` the topology ids in the order the priority strategy "
        "gave (1.x: every pick, repeated after an eviction); `topologies` how many were known, "
        "`topologies_fully_scheduled` how many have every executor placed "
        "after the round; `evictions` topologies evicted and left unassigned, `evictions_rolled_back` evictions "
        "undone because the evicting topology still did not fit; `assignments_changed` how many topologies' "
        "assignments changed; `supervisors` the live supervisors scheduled on. Cluster after the round, over the "
        "live supervisors: `cpu_total`/`cpu_used` (% of a core), `memory_total_mb`/`memory_used_mb`, "
        "`slots_total`/`slots_used`, `generic_total`/`generic_used` (by resource name, e.g. gpu.count), `nodes`: "
        "per supervisor `[id, rack, cpu_total, cpu_used, memory_total_mb, memory_used_mb, slots_total, "
        "slots_used]`; `fragmented_cpu`/`fragmented_memory_mb`: Nimbus's fragmentation gauge (free CPU and memory "
        "of the nodes that cannot take one more default executor plus an acker); `stranded_cpu`/"
        "`stranded_memory_mb`: free CPU and memory of the nodes where none of the executors still unplaced after "
        "the round fits (0 when none is pending).", __name__,
        round="int", generation="str", rebalance="str", priority_strategy="str", order="list", topologies="int",
        topologies_fully_scheduled="int", evictions="int", evictions_rolled_back="int", assignments_changed="int",
        supervisors="int", cpu_total="float", cpu_used="float", memory_total_mb="float", memory_used_mb="float",
        slots_total="int", slots_used="int", generic_total="dict", generic_used="dict", nodes="list",
        fragmented_cpu="float", fragmented_memory_mb="float", stranded_cpu="float", stranded_memory_mb="float")
declare("topology_evicted", "In round `round`, the scheduler evicted topology `topology` (`topology_name`, `user`, "
        "`priority`: 0 is the most important) to make room for `by` (`by_name`, `by_user`, `by_priority`). "
        "`rolled_back`: the evicting topology still did not fit, so the eviction was undone (Storm still lists "
        "it in its evicted map); otherwise the victim lost its workers and waits for room.", __name__,
        round="int", topology="str", topology_name="str", user="str", priority="int", by="str", by_name="str",
        by_user="str", by_priority="int", rolled_back="bool")
declare("assignment_changed", "The leader Nimbus changed a topology's assignment (written to ZooKeeper). "
        "`reason`: `scheduled` (it had none), `supervisor_lost` (executors on a supervisor that is no longer "
        "alive were placed again or dropped), `evicted`, `rebalanced` (placed afresh by a rebalance), `changed`. "
        "`executors` the topology's executors, "
        "`assigned_before`/`assigned_after` how many were placed, `workers_before`/`workers_after` its workers, "
        "`lost` executors that were on dead supervisors, `moved` executors placed before and after on another "
        "slot. `workers`: each worker after the change, `{supervisor, host, rack, port, cpu, onheap_mb, "
        "offheap_mb, executors: [[component, index], ...]}` (cpu charged = max(sum of executors, "
        "storm.worker.min.cpu.pcore.percent)). Network metric of the placement: `pairs` connected executor "
        "pairs (an executor of a component and one of a component it reads from, both placed), of which "
        "`same_worker`, `same_node`, `same_rack` share a worker, a supervisor, a rack.", __name__,
        round="int", topology="str", topology_name="str", user="str", reason="str", executors="int",
        assigned_before="int", assigned_after="int", workers_before="int", workers_after="int", lost="int",
        moved="int", workers="list", pairs="int", same_worker="int", same_node="int", same_rack="int")
declare("topology_round", "A topology's state after scheduling round `round` (one per known topology and round). "
        "`rank` its position in the priority order (-1: not picked, 1.x); `status` Storm's status text "
        "(\"Running - Fully Scheduled by ...\", \"Not enough resources to schedule ...\", ...); "
        "`fully_scheduled`; `executors`, `assigned_executors`, `worker_count`; `cpu`/`memory_mb` what its workers are "
        "charged, `requested_cpu`/`requested_memory_mb` what its executors request; `strategy` its scheduling "
        "class; `evicted` whether it was evicted in this round (and not rolled back); `topology_status` Storm's "
        "TopologyStatus in lower case: `active`, `rebalancing` (waiting for its rebalance), `killed` (waiting for "
        "its removal).", __name__,
        round="int", topology="str", topology_name="str", user="str", priority="int", topology_status="str",
        rank="int", status="str",
        fully_scheduled="bool", executors="int", assigned_executors="int", worker_count="int", cpu="float",
        memory_mb="float", requested_cpu="float", requested_memory_mb="float", strategy="str", evicted="bool")


@dataclass
class Known:
    """The leader's view. ``supervisors``: id → ``SupervisorInfo`` of the supervisors it deems alive;
    ``storms``: id → ``StormBase``; ``assignments``: id → assignment (ZooKeeper form); ``statuses``: id → the
    status text of the last round; ``cache``: id → built :class:`Topology` (kept across rounds)."""

    supervisors: Mapping[str, Mapping[str, Any]]
    storms: Mapping[str, Mapping[str, Any]]
    assignments: Mapping[str, Mapping[str, Any]]
    statuses: Mapping[str, str]
    cache: dict[str, Topology] = field(default_factory=dict)


@dataclass
class RoundOutcome:
    """``writes``: topology id → its new assignment, or None to delete it; ``statuses``: the round's status
    texts; ``events``: ``(kind, fields)`` in emission order."""

    writes: dict[str, dict[str, Any] | None]
    statuses: dict[str, str]
    events: list[Event]


def to_executor_slots(assignment: Mapping[str, Any], alive: Mapping[str, Mapping[str, Any]] | None = None
                      ) -> dict[Executor, WorkerSlot]:
    """``{Executor: WorkerSlot}`` of an assignment; with ``alive``, only the workers on those supervisors' ports."""
    out: dict[Executor, WorkerSlot] = {}
    for node, port, _cpu, _on, _off, execs in assignment["workers"]:
        if alive is not None and (node not in alive or port not in alive[node]["ports"]):
            continue
        for start, end in execs:
            out[Executor(start, end)] = WorkerSlot(node, port)
    return out


def to_workers(state: ClusterState, topology_id: str) -> list[list[Any]]:
    """The topology's workers in ZooKeeper form, sorted by (supervisor, port); executors by task id."""
    rows = []
    for slot, execs in sorted(state.slot_to_executors(topology_id).items()):
        charged = state.worker_resources(slot)
        assert charged is not None  # a slot of the topology holds its worker
        rows.append([slot.node_id, slot.port, charged.cpu, charged.on_heap, charged.off_heap,
                     [[e.start_task, e.end_task] for e in sorted(execs)]])
    return rows


def _supervisor(info: Mapping[str, Any]) -> Supervisor:
    return Supervisor(info["id"], info["host"], info["cpu"], info["memory_mb"], info["generic"],
                      tuple(info["ports"]), info["rack"])


def _executor_count(workers: list[list[Any]]) -> int:
    return sum(len(w[5]) for w in workers)


def _worker_view(state: ClusterState, td: Topology, workers: list[list[Any]]) -> list[dict[str, Any]]:
    out = []
    for node, port, cpu, on_heap, off_heap, execs in workers:
        sup = state.supervisors[node]
        labels = sorted([td.component_of(Executor(s, e)), td.executor_index(Executor(s, e))] for s, e in execs)
        out.append({"supervisor": node, "host": sup.host, "rack": state.host_to_rack(sup.host), "port": port,
                    "cpu": cpu, "onheap_mb": on_heap, "offheap_mb": off_heap, "executors": labels})
    return out


def mk_assignments(known: Known, conf: Mapping[str, Any], now: float, round_no: int,
                   scratch: str | None = None) -> RoundOutcome:
    """One round (see the module docstring); ``conf`` is the typed daemon conf, ``now`` the virtual time.
    ``scratch``: a topology being rebalanced (Storm's ``mkAssignments(scratchTopoId)``): its assignment is left
    out, so all its slots are free and all its executors are placed afresh."""
    now_secs = int(now)
    alive = known.supervisors
    topologies = []
    for tid in sorted(known.storms):
        td = known.cache.get(tid)
        if td is None:
            td = known.cache[tid] = build_topology(known.storms[tid], conf)
        topologies.append(td)
    by_id = {td.id: td for td in topologies}
    before_full = {tid: to_executor_slots(a) for tid, a in known.assignments.items()}
    existing = {tid: {e: s for e, s in to_executor_slots(a, alive).items() if by_id[tid].has_executor(e)}
                for tid, a in known.assignments.items() if tid in by_id and tid != scratch}
    state = ClusterState([_supervisor(alive[s]) for s in sorted(alive)], topologies, conf,
                         {t: m for t, m in existing.items() if m}, status=dict(known.statuses))
    result = schedule_round(state, now_secs)
    new = result.state
    events: list[Event] = []
    writes: dict[str, dict[str, Any] | None] = {}

    # evictions: a victim whose assignment the round left as it was had its eviction rolled back
    evictions: list[Event] = []
    evicted_now: set[str] = set()
    for by in sorted(result.evicted):
        for victim in result.evicted[by]:
            vt, bt = by_id[victim], by_id[by]
            rolled_back = new.assignment(victim) == existing.get(victim, {})
            if not rolled_back:
                evicted_now.add(victim)
            evictions.append(("topology_evicted", {
                "round": round_no, "topology": victim, "topology_name": vt.name, "user": vt.user or "",
                "priority": vt.priority, "by": by, "by_name": bt.name, "by_user": bt.user or "",
                "by_priority": bt.priority, "rolled_back": rolled_back}))

    changes: list[Event] = []
    for tid in sorted(set(known.assignments) - set(by_id)):
        writes[tid] = None  # the topology was removed: its assignment goes with it
    for td in topologies:
        tid = td.id
        after = new.assignment(tid)
        before = before_full.get(tid, {})
        if after == before:
            continue
        workers = to_workers(new, tid)
        writes[tid] = {"topology": tid, "user": td.user or "", "workers": workers} if workers else None
        lost = 0 if tid == scratch else sum(1 for e, s in before.items() if existing.get(tid, {}).get(e) != s)
        moved = sum(1 for e, s in before.items() if e in after and after[e] != s)
        if tid == scratch:
            reason = "rebalanced"
        elif not before:
            reason = "scheduled"
        elif lost:
            reason = "supervisor_lost"
        elif tid in evicted_now:
            reason = "evicted"
        else:
            reason = "changed"
        old_workers = {(s.node_id, s.port) for s in before.values()}
        changes.append(("assignment_changed", {
            "round": round_no, "topology": tid, "topology_name": td.name, "user": td.user or "", "reason": reason,
            "executors": len(td.executors), "assigned_before": len(before), "assigned_after": len(after),
            "workers_before": len(old_workers), "workers_after": len(workers), "lost": lost, "moved": moved,
            "workers": _worker_view(new, td, workers), **proximity(new, td)}))

    usage = cluster_usage(new)
    frag_cpu, frag_mem = fragmentation(usage["nodes"], conf)
    pending = {(r.cpu, r.memory) for td in topologies if new.needs_scheduling(td)
               for r in (td.request(e) for e in new.unassigned_executors(td))}
    stranded_cpu, stranded_mem = stranded(usage["nodes"], pending)
    rank = {tid: i for i, tid in enumerate(dict.fromkeys(result.order))}
    statuses = {td.id: result.status.get(td.id, "") for td in topologies}
    fully = sum(1 for td in topologies if not new.needs_scheduling(td))
    events.append(("scheduling_round", {
        "round": round_no, "generation": result.generation, "rebalance": scratch or "",
        "priority_strategy": registry.canonical_name("priority", conf[RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY],
                                                     result.generation),
        "order": list(result.order), "topologies": len(topologies), "topologies_fully_scheduled": fully,
        "evictions": len(evicted_now), "evictions_rolled_back": sum(1 for _, f in evictions if f["rolled_back"]),
        "assignments_changed": len(changes), "supervisors": len(alive),
        **usage, "fragmented_cpu": frag_cpu, "fragmented_memory_mb": frag_mem, "stranded_cpu": stranded_cpu,
        "stranded_memory_mb": stranded_mem}))
    events += evictions
    events += changes
    for td in topologies:
        sched = new.topology_scheduled_resources(td.id)
        events.append(("topology_round", {
            "round": round_no, "topology": td.id, "topology_name": td.name, "user": td.user or "",
            "priority": td.priority, "topology_status": known.storms[td.id].get("status", "active"),
            "rank": rank.get(td.id, -1), "status": statuses[td.id], "fully_scheduled": not new.needs_scheduling(td),
            "executors": len(td.executors), "assigned_executors": len(new.assignment(td.id)),
            "worker_count": new.assigned_num_workers(td.id), "cpu": sched.cpu, "memory_mb": sched.memory,
            "requested_cpu": td.total_requested_cpu(), "requested_memory_mb": td.total_requested_memory(),
            "strategy": result.strategies.get(td.id) or td.conf[TOPOLOGY_SCHEDULER_STRATEGY],
            "evicted": td.id in evicted_now}))
    return RoundOutcome(writes, statuses, events)
