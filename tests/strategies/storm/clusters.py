"""Cluster and topology builders for the Storm RAS tests, shaped like Storm's ``TestUtilsForResourceAwareScheduler``
so that upstream test cases can be restated as data.

Import from a test module with ``from .clusters import ...`` (or ``from ..clusters import ...`` one folder down).

* :data:`CURRENT_TIME`, :data:`DOUBLE_MAX` — the upstream tests' launch-time base and ``Double.MAX_VALUE``.
* :func:`cluster_conf` — ``createClusterConfig``: component defaults, priority strategy, user pools, strategy.
* :func:`gen_supervisors` / :func:`gen_supervisors_with_racks` — ``genSupervisors*``: ids ``r000s000``
  (``r000s000n0`` with several NUMA zones per host), hosts ``host-000-rack-000``, ports ``0..n-1``, rack taken from
  the host name (``rack-000``) unless ``rack`` is given.
* :func:`rack_of_host`, :func:`rack_of_supervisor_id` — ``hostNameToRackName`` / ``supervisorIdToRackName``.
* :func:`build_components` — ``topologyBuilder``: ``spout-i`` and ``bolt-i`` (``bolt-i`` reads ``spout-(i mod
  spouts)``), plus extra components.
* :func:`gen_executors` — ``genExecsAndComps``: tasks from 0, spouts then bolts, each in Java ``HashMap`` order of
  their ids, one task per executor; returned in the iteration order of the ``HashMap`` they are put into.
* :func:`gen_topology` / :func:`to_topology` — ``genTopology`` / ``topoToTopologyDetails``: id ``<name>-<launch>``.
* :func:`make_state` — a :class:`ClusterState` from supervisors and topologies.
"""
from __future__ import annotations

import re
import sys
from typing import Any, Iterable, Mapping, Sequence

from clusteremu.base.java import java_order, string_hash_code
from clusteremu.base.java import capacity_after_puts, hash_order, table_size_for
from clusteremu.strategies.storm.cluster import ClusterState, Supervisor
from clusteremu.strategies.storm.config import DEFAULT_RACK
from clusteremu.strategies.storm.topology import Component, Executor, Topology

CURRENT_TIME = 1450418597
DOUBLE_MAX = sys.float_info.max
_PKG = "org.apache.storm.scheduler.resource.strategies."


def cluster_conf(comp_cpu: float = 10.0, comp_on_heap: float = 128.0, comp_off_heap: float = 0.0,
                 pools: Mapping[str, Mapping[str, float]] | None = None,
                 strategy: str = "DefaultResourceAwareStrategy",
                 generic: Mapping[str, float] | None = None, **extra: Any) -> dict[str, Any]:
    """``createClusterConfig`` (plus ``createGrasClusterConfig``'s generic map): one dict used both as the daemon
    conf and as the base of the topology confs, as the upstream tests do."""
    conf: dict[str, Any] = {
        "resource.aware.scheduler.priority.strategy": _PKG + "priority.DefaultSchedulingPriorityStrategy",
        "topology.scheduler.strategy": _PKG + "scheduling." + strategy,
        "topology.component.cpu.pcore.percent": comp_cpu,
        "topology.component.resources.onheap.memory.mb": comp_on_heap,
        "topology.component.resources.offheap.memory.mb": comp_off_heap,
    }
    if pools is not None:
        conf["resource.aware.scheduler.user.pools"] = {u: dict(p) for u, p in pools.items()}
    if generic is not None:
        conf["topology.component.resources.map"] = dict(generic)
    conf.update(extra)
    return conf


_HOST = re.compile(r"^(host-\d+)-(.+)$")
_SUP = re.compile(r"^(r\d+)s(\d+)$")


def rack_of_host(host: str) -> str:
    """``hostNameToRackName``: ``host-000-rack-003`` → ``rack-003``."""
    m = _HOST.match(host)
    return m.group(2) if m else DEFAULT_RACK


def rack_of_supervisor_id(sup_id: str) -> str:
    """``supervisorIdToRackName``: ``r003s007`` → ``r003``."""
    m = _SUP.match(sup_id)
    return m.group(1) if m else DEFAULT_RACK


def gen_supervisors_with_racks(num_racks: int, sups_per_rack: int, ports: int, rack_start: int, sup_start: int,
                               cpu: float, mem: float, generic: Mapping[str, float] | None = None,
                               zones_per_host: int = 1, numa_multiplier: float = 1.0,
                               rack: str | None = None) -> dict[str, Supervisor]:
    """``genSupervisorsWithRacksAndNuma``. ``rack`` forces one rack name for all (the tests' DNS mappings);
    default: the rack named in the host name."""
    out: dict[str, Supervisor] = {}
    for r in range(rack_start, rack_start + num_racks):
        for s in range(sup_start, sup_start + sups_per_rack):
            zone = s % zones_per_host
            if zones_per_host > 1:
                sup_id = f"r{r:03d}s{s:03d}n{zone}"
                host = f"host-{s // zones_per_host:03d}-rack-{r:03d}"
            else:
                sup_id = f"r{r:03d}s{s:03d}"
                host = f"host-{s:03d}-rack-{r:03d}"
            scale = numa_multiplier ** zone
            out[sup_id] = Supervisor(sup_id, host, cpu * scale, mem * scale, dict(generic or {}),
                                     tuple(range(ports)), rack if rack is not None else rack_of_host(host))
    return out


def gen_supervisors(num: int, ports: int, cpu: float, mem: float, start: int = 0,
                    generic: Mapping[str, float] | None = None, rack: str | None = None) -> dict[str, Supervisor]:
    """``genSupervisors(num, ports, start, cpu, mem, misc)``: one rack (``r000``)."""
    return gen_supervisors_with_racks(1, num, ports, 0, start, cpu, mem, generic, rack=rack)


def build_components(num_spouts: int, num_bolts: int, spout_parallelism: int, bolt_parallelism: int,
                     extra: Sequence[Component] = ()) -> list[Component]:
    """``topologyBuilder``: ``bolt-i`` reads from ``spout-(i mod num_spouts)``."""
    comps = [Component(f"spout-{i}", spout_parallelism, "spout") for i in range(num_spouts)]
    comps += [Component(f"bolt-{i}", bolt_parallelism, "bolt", (f"spout-{i % num_spouts}",))
              for i in range(num_bolts)]
    return comps + list(extra)


def gen_executors(components: Iterable[Component], system_bolts: Sequence[str] = ()) -> list[tuple[str, Executor]]:
    """``genExecsAndComps``: spouts (Java ``HashMap`` order of ids) then bolts, task ids from 0, one task per
    executor; the result is in the iteration order of the ``HashMap`` they are put into.

    ``system_bolts`` (e.g. ``("__acker", "__system")``) models ``StormCommon.systemTopology``: its bolt map is a
    copy of the user's (``new HashMap<>(n)``) to which the system bolts are added, in that order; a system bolt
    that is not among ``components`` has no executors (``__system``)."""
    comps = list(components)
    spouts = {c.id: c for c in comps if c.kind == "spout"}
    user_bolts = {c.id: c for c in comps if c.kind == "bolt" and c.id not in system_bolts}
    bolts = {c.id: c for c in comps if c.kind == "bolt"}
    bolt_order = java_order(user_bolts)
    if system_bolts:
        keys = bolt_order + list(system_bolts)
        cap = capacity_after_puts(len(keys), table_size_for(len(bolt_order)))
        bolt_order = hash_order(keys, [string_hash_code(k) for k in keys], cap)
    pairs: list[tuple[str, Executor]] = []
    task = 0
    for group, order in ((spouts, java_order(spouts)), (bolts, bolt_order)):
        for comp_id in order:
            if comp_id not in group:
                continue
            for _ in range(group[comp_id].parallelism):
                pairs.append((comp_id, Executor(task, task)))
                task += 1
    hashes = [ex.java_hash() for _, ex in pairs]
    return hash_order(pairs, hashes, capacity_after_puts(len(pairs)))


def to_topology(name: str, conf: Mapping[str, Any], components: Sequence[Component], launch_time: int,
                priority: int, user: str, max_heap: float = DOUBLE_MAX) -> Topology:
    """``topoToTopologyDetails``: id ``<name>-<launch_time>``, conf + priority, name, submitter, heap cap."""
    return Topology(f"{name}-{launch_time}", components, conf, name=name, user=user, priority=priority,
                    launch_time=launch_time, worker_max_heap_mb=max_heap, executors=gen_executors(components),
                    num_workers=0)


def gen_topology(name: str, conf: Mapping[str, Any], num_spouts: int, num_bolts: int, spout_parallelism: int,
                 bolt_parallelism: int, launch_time: int, priority: int, user: str,
                 max_heap: float = DOUBLE_MAX, extra: Sequence[Component] = ()) -> Topology:
    """``genTopology``."""
    comps = build_components(num_spouts, num_bolts, spout_parallelism, bolt_parallelism, extra)
    return to_topology(name, conf, comps, launch_time, priority, user, max_heap)


def make_state(supervisors: Mapping[str, Supervisor] | Iterable[Supervisor], topologies: Iterable[Topology] = (),
               conf: Mapping[str, Any] | None = None, **kwargs: Any) -> ClusterState:
    """A :class:`ClusterState`; ``supervisors`` as a dict (values used) or any iterable."""
    sups = supervisors.values() if isinstance(supervisors, Mapping) else supervisors
    return ClusterState(sups, topologies, conf, **kwargs)
