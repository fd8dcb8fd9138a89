"""The pure core of ``clusteremu decide`` for Storm: one scheduling round of the Resource Aware Scheduler on a
cluster described in JSON (the CLI reads the file and prints the answer).

* :func:`parse_request` (from :mod:`.decide_parse`) — the checked input; errors name the field's path.
* :func:`decide` — run the round and answer::

    {"order": [every topology's name, in the priority strategy's order],
     "topologies": {"<name>": {"status": "<Storm's status text>", "fully_scheduled": bool,
                               "workers": [{"supervisor", "port", "cpu", "onheap_mb", "offheap_mb",
                                            "executors": [{"component", "index"}]}]}},
     "evicted": {"<name that caused it>": [names evicted, in eviction order]},
     "assignments": {"<topology id>": [{"component", "index", "supervisor", "port"}]}}

  ``cpu`` is what the worker is charged: ``max(sum of its executors, storm.worker.min.cpu.pcore.percent)``.
  ``assignments`` has the input's shape, so one round's answer feeds the next. ``evicted`` lists evictions
  that were rolled back too (the topology still did not fit), as Storm's ``getEvictedTopologiesMap`` does.
  With Storm 1.x selected (``resource.aware.scheduler.eviction.strategy``), ``order`` is the sequence of
  picks: a topology evicted and picked again appears again; running topologies never picked are absent.

  ``explain=True`` adds ``"explain"`` at the top (generation, priority and eviction strategies, ``priority``:
  each pick with every user's score at that moment, ``defaults``: the Storm defaults applied) and per
  topology (``strategy``, ``attempts``: whether the strategy ran, its result and what was evicted after it,
  ``sorts``: the node sorter's records of every attempt, each tagged with its attempt number).

The topology's own ``topology.scheduler.strategy`` wins; ``default_strategy`` applies to topologies naming
none. Executors are numbered as Storm numbers tasks (components in id order, one task per executor), and
``index`` is an executor's position within its component; no acker executors are added (list a ``__acker``
component to model them).
"""
from __future__ import annotations

from typing import Any

from clusteremu.base.errors import InputError

from . import registry
from .cluster import ClusterState, Supervisor, WorkerSlot
from .config import (
    RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY,
    TOPOLOGY_SCHEDULER_STRATEGY,
)
from .decide_parse import DecideRequest, TopologySpec, parse_request
from .scheduler import RoundResult, schedule_round
from .topology import Component, Executor, Topology

__all__ = ["DecideRequest", "decide", "parse_request"]


def decide(request: DecideRequest, default_strategy: str, *, explain: bool = False) -> dict[str, Any]:
    """One round on ``request``'s cluster (see the module doc for the answer's shape).

    ``default_strategy``: the ``topology.scheduler.strategy`` of topologies that name none (simple or
    fully-qualified class name); an unknown one raises ``InputError``. A topology naming an unknown class gets
    Storm's "failed to create instance" status instead.
    """
    generation = registry.generation_of(request.config)
    try:
        registry.scheduling_strategy(default_strategy, generation)
    except KeyError as err:
        raise InputError("default strategy", err.args[0]) from None
    topologies = [_topology(spec, default_strategy) for spec in request.topologies]
    state = ClusterState(
        [Supervisor(s.id, s.host, s.cpu, s.memory_mb, s.generic, s.ports, s.rack) for s in request.supervisors],
        topologies, request.config, _assignments(request, topologies))
    result = schedule_round(state, request.now_secs, explain=explain)
    return _answer(request, topologies, result, default_strategy, explain)


def _topology(spec: TopologySpec, default_strategy: str) -> Topology:
    conf = dict(spec.conf)
    conf[TOPOLOGY_SCHEDULER_STRATEGY] = spec.strategy if spec.strategy is not None else default_strategy
    components = [Component(c.id, c.parallelism, c.kind, c.inputs, None, c.resources)
                  for c in spec.components]
    return Topology(spec.id, components, conf, name=spec.name, launch_time=spec.launch_time)


def _executor_at(td: Topology, component: str, index: int) -> Executor:
    return sorted(td.component_executors(component))[index]


def _assignments(request: DecideRequest, topologies: list[Topology]) -> dict[str, dict[Executor, WorkerSlot]]:
    by_id = {td.id: td for td in topologies}
    return {topo_id: {_executor_at(by_id[topo_id], a.component, a.index): WorkerSlot(a.supervisor, a.port)
                      for a in rows}
            for topo_id, rows in request.assignments.items()}


def _answer(request: DecideRequest, topologies: list[Topology], result: RoundResult, default_strategy: str,
            explain: bool) -> dict[str, Any]:
    state = result.state
    name_of = {td.id: td.name for td in topologies}
    out_topologies: dict[str, Any] = {}
    assignments: dict[str, list[dict[str, Any]]] = {}
    for td in topologies:
        workers = []
        rows = []
        for slot, execs in sorted(state.slot_to_executors(td.id).items()):
            charged = state.worker_resources(slot)
            assert charged is not None  # the slot holds this topology's worker
            labels = sorted((td.executor_label(ex) for ex in execs), key=lambda x: (x["component"], x["index"]))
            workers.append({"supervisor": slot.node_id, "port": slot.port, "cpu": charged.cpu,
                            "onheap_mb": charged.on_heap, "offheap_mb": charged.off_heap, "executors": labels})
            rows.extend({**label, "supervisor": slot.node_id, "port": slot.port} for label in labels)
        entry: dict[str, Any] = {
            "status": result.status.get(td.id, ""),
            "fully_scheduled": not state.needs_scheduling(td),
            "workers": workers,
        }
        if explain:
            entry["explain"] = _topology_explain(td, result, name_of)
        out_topologies[td.name] = entry
        if rows:
            assignments[td.id] = sorted(rows, key=lambda x: (x["component"], x["index"]))
    answer: dict[str, Any] = {
        "order": [name_of[i] for i in result.order],
        "topologies": out_topologies,
        "evicted": {name_of[k]: [name_of[v] for v in vs] for k, vs in result.evicted.items()},
        "assignments": assignments,
    }
    if explain:
        conf = request.config
        answer["explain"] = {
            "generation": result.generation,
            "priority_strategy": registry.canonical_name(
                "priority", conf[RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY], result.generation),
            "eviction_strategy": (registry.canonical_name("eviction", conf[registry.EVICTION_STRATEGY_KEY], "1.x")
                                  if result.generation == "1.x" else None),
            "default_strategy": registry.canonical_name("scheduling", default_strategy, result.generation),
            "priority": [{**p, "topology": name_of[p["topology"]]} for p in result.picks],
            "defaults": list(request.defaults),
        }
    return answer


def _topology_explain(td: Topology, result: RoundResult, name_of: dict[str, str]) -> dict[str, Any]:
    attempts = result.attempts.get(td.id, [])
    return {
        "strategy": result.strategies.get(td.id, td.conf[TOPOLOGY_SCHEDULER_STRATEGY]),
        "attempts": [{"attempt": a.attempt, "strategy_ran": a.strategy_ran, "result": a.result,
                      "evicted": [name_of[v] for v in a.evicted]} for a in attempts],
        "sorts": [{"attempt": a.attempt, **record} for a in attempts for record in a.sorts],
    }
