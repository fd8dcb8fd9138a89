"""What Nimbus measures of a scheduling state for the trace (pure functions of the state).

Components:

* :func:`proximity`: the network metric of one topology's placement — over every pair of connected executors
  (an executor of a component and one of a component it reads from), how many share a worker, a node
  (supervisor) and a rack;
* :func:`cluster_usage`: the cluster's capacity, what the workers are charged, the slots, per node and in total;
* :func:`fragmentation`: Nimbus's own fragmentation gauge (``Nimbus.isFragmented``): the free CPU and memory of
  the nodes too full to take one more default executor plus one acker;
* :func:`stranded`: the free CPU and memory of the nodes where none of the executors still waiting for a place
  would fit (free but unusable by what is pending).
"""
from __future__ import annotations

from typing import Any, Mapping

from clusteremu.strategies.storm.cluster import ClusterState
from clusteremu.strategies.storm.config import (
    TOPOLOGY_ACKER_CPU_PCORE_PERCENT,
    TOPOLOGY_ACKER_RESOURCES_ONHEAP_MEMORY_MB,
    TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT,
    TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB,
)
from clusteremu.strategies.storm.topology import Topology

__all__ = ["cluster_usage", "fragmentation", "proximity", "stranded"]


def proximity(state: ClusterState, td: Topology) -> dict[str, int]:
    """``{"pairs", "same_worker", "same_node", "same_rack"}`` over the connected executor pairs whose two
    executors are both placed (a pair on one worker is also on one node and one rack)."""
    placed = state.assignment(td.id)
    pairs = same_worker = same_node = same_rack = 0
    rack_of: dict[str, str] = {}
    for comp in td.components.values():
        mine = [placed[e] for e in td.component_executors(comp.id) if e in placed]
        for parent in comp.inputs:
            theirs = [placed[e] for e in td.component_executors(parent) if e in placed]
            for a in mine:
                for b in theirs:
                    pairs += 1
                    if a == b:
                        same_worker += 1
                    if a.node_id == b.node_id:
                        same_node += 1
                        same_rack += 1
                        continue
                    for n in (a.node_id, b.node_id):
                        if n not in rack_of:
                            rack_of[n] = state.host_to_rack(state.supervisors[n].host)
                    if rack_of[a.node_id] == rack_of[b.node_id]:
                        same_rack += 1
    return {"pairs": pairs, "same_worker": same_worker, "same_node": same_node, "same_rack": same_rack}


def cluster_usage(state: ClusterState) -> dict[str, Any]:
    """Totals over the live supervisors (CPU in % of a core, memory in MB): ``cpu_total``, ``cpu_used``,
    ``memory_total_mb``, ``memory_used_mb``, ``slots_total``, ``slots_used``, ``generic_total``,
    ``generic_used`` (by resource name), and ``nodes``: ``[supervisor, rack, cpu_total, cpu_used,
    memory_total_mb, memory_used_mb, slots_total, slots_used]`` per supervisor in id order."""
    cpu_t = cpu_u = mem_t = mem_u = 0.0
    slots_t = slots_u = 0
    gen_t: dict[str, float] = {}
    gen_u: dict[str, float] = {}
    nodes = []
    for sid in sorted(state.supervisors):
        sup = state.supervisors[sid]
        used = state.scheduled_resources_for_node(sid)
        n_used = len(state.used_slots_on_node(sid))
        cpu_t += sup.cpu
        mem_t += sup.memory_mb
        cpu_u += used.cpu
        mem_u += used.memory
        slots_t += len(sup.ports)
        slots_u += n_used
        for g, v in sup.generic.items():
            gen_t[g] = gen_t.get(g, 0.0) + v
        for g, v in used.generic.items():
            gen_u[g] = gen_u.get(g, 0.0) + v
        nodes.append([sid, state.host_to_rack(sup.host), sup.cpu, used.cpu, sup.memory_mb, used.memory,
                      len(sup.ports), n_used])
    return {"cpu_total": cpu_t, "cpu_used": cpu_u, "memory_total_mb": mem_t, "memory_used_mb": mem_u,
            "slots_total": slots_t, "slots_used": slots_u, "generic_total": dict(sorted(gen_t.items())),
            "generic_used": dict(sorted(gen_u.items())), "nodes": nodes}


def _get(conf: Mapping[str, Any], key: str, default: float) -> float:
    # ObjectReader.getDouble(conf.get(key), default): the default only when the key is unset (null)
    v = conf.get(key)
    return default if v is None else float(v)


def fragmentation(nodes: list[list[Any]], conf: Mapping[str, Any]) -> tuple[float, float]:
    """``(fragmented CPU, fragmented memory MB)`` of :func:`cluster_usage`'s ``nodes``: Nimbus's
    ``fragmentedCpu``/``fragmentedMemory`` (summed positive free CPU and memory of the nodes whose free memory is
    below one default executor's on-heap plus one acker's, or whose free CPU is below one default executor's CPU
    plus one acker's)."""
    min_mem = _get(conf, TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB, 256.0) + \
        _get(conf, TOPOLOGY_ACKER_RESOURCES_ONHEAP_MEMORY_MB, 128.0)
    min_cpu = _get(conf, TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT, 50.0) + \
        _get(conf, TOPOLOGY_ACKER_CPU_PCORE_PERCENT, 50.0)
    cpu = mem = 0.0
    for _sid, _rack, cpu_total, cpu_used, mem_total, mem_used, _slots, _used in nodes:
        free_cpu, free_mem = cpu_total - cpu_used, mem_total - mem_used
        if min_mem > free_mem or min_cpu > free_cpu:
            cpu += max(free_cpu, 0.0)
            mem += max(free_mem, 0.0)
    return cpu, mem


def stranded(nodes: list[list[Any]], pending: set[tuple[float, float]]) -> tuple[float, float]:
    """``(stranded CPU, stranded memory MB)``: summed positive free CPU and memory of :func:`cluster_usage`'s
    ``nodes`` on which no ``pending`` request ``(cpu, memory_mb)`` — one per distinct request of the executors not
    placed after the round — fits; ``(0, 0)`` when nothing is pending (no free capacity is wanted)."""
    if not pending:
        return 0.0, 0.0
    cpu = mem = 0.0
    for _sid, _rack, cpu_total, cpu_used, mem_total, mem_used, _slots, _used in nodes:
        free_cpu, free_mem = cpu_total - cpu_used, mem_total - mem_used
        if not any(c <= free_cpu and m <= free_mem for c, m in pending):
            cpu += max(free_cpu, 0.0)
            mem += max(free_mem, 0.0)
    return cpu, mem
