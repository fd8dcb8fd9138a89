"""Topologies as the scheduler sees them: components, executors, per-executor requests (``TopologyDetails``).

* :class:`Executor` — ``ExecutorDetails``: a task range ``(start_task, end_task)``; hashable, the key of
  assignments.
* :class:`Component` — one spout or bolt: id, parallelism (executors), tasks, inputs (the components it reads
  from; they make the connection counts the executor order uses), per-component resource overrides.
* :class:`Topology` — id, name, submitter, priority, launch time, typed conf, components, executors with their
  components, per-executor :class:`~.resources.ResourceRequest`, the worker heap cap; the executor orders Storm's
  hash maps give (:meth:`Topology.executors`, :meth:`Topology.component_executors`).
* :func:`component_request` — the request of each executor of a component under a topology conf.
* :func:`estimated_worker_count`, :func:`acker_executor_configs` — what Nimbus computes at submission to size
  the ackers (``ServerUtils.getEstimatedWorkerCountForRasTopo``, ``Nimbus.setUpAckerExecutorConfigs``).
* :func:`storm_executors` — Storm's task numbering (components sorted by id, task ids from 1, tasks split into
  executors by ``partitionFixed``).

Requests (``NormalizedResourceRequest(ComponentCommon, topoConf, componentId)``): start from the topology's
``topology.component.resources.map``; put CPU / off-heap / on-heap from the topology conf when missing (ackers:
``topology.acker.*`` keys first); then the component's own overrides replace any of them.

Executor order. ``TopologyDetails`` keeps ``executor → component`` in a ``HashMap`` (``new HashMap<>(0)`` then
``putAll``), so every Storm loop over executors (``componentToExecs``, unassigned executors) follows
``ExecutorDetails.hashCode()`` buckets; :meth:`Topology.executors` reproduces that from the insertion order
given (Storm's own insertion order is unknown: taken to be the order of ``executors`` as passed, or the
numbering order of :func:`storm_executors`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping, NamedTuple, Sequence

from clusteremu.base.errors import InputError

from clusteremu.base.java import capacity_putall_into_empty, hash_order, to_int
from .config import (
    ACKER_COMPONENT_ID,
    CPU,
    OFFHEAP,
    ONHEAP,
    TOPOLOGY_ACKER_CPU_PCORE_PERCENT,
    TOPOLOGY_ACKER_EXECUTORS,
    TOPOLOGY_ACKER_RESOURCES_OFFHEAP_MEMORY_MB,
    TOPOLOGY_ACKER_RESOURCES_ONHEAP_MEMORY_MB,
    TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT,
    TOPOLOGY_COMPONENT_RESOURCES_MAP,
    TOPOLOGY_COMPONENT_RESOURCES_OFFHEAP_MEMORY_MB,
    TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB,
    TOPOLOGY_NAME,
    TOPOLOGY_PRIORITY,
    TOPOLOGY_RAS_ACKER_EXECUTORS_PER_WORKER,
    TOPOLOGY_SUBMITTER_USER,
    TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB,
    TOPOLOGY_WORKERS,
    read_config,
)
from .resources import ResourceRequest, normalize_resource_map

__all__ = [
    "Component",
    "Executor",
    "Topology",
    "acker_executor_configs",
    "component_request",
    "estimated_worker_count",
    "is_system_component",
    "storm_executors",
]


class Executor(NamedTuple):
    """``ExecutorDetails``: the tasks ``start_task..end_task`` (inclusive) run by one executor."""

    start_task: int
    end_task: int

    def java_hash(self) -> int:
        """``ExecutorDetails.hashCode()``."""
        return to_int(self.start_task + 13 * self.end_task)  # ExecutorDetails.hashCode()

    def __str__(self) -> str:
        return f"[{self.start_task}, {self.end_task}]"


def is_system_component(component_id: str) -> bool:
    """``Utils.isSystemId``: ids starting with ``__`` (``__acker``, ``__system``, ``__metrics...``)."""
    return component_id.startswith("__")


@dataclass(frozen=True)
class Component:
    """A spout or bolt.

    ``parallelism`` executors run ``tasks`` tasks (default: one per executor). ``inputs`` are the ids of the
    components this one reads from (parents). ``resources`` override the topology's per-executor defaults, as a
    component's JSON conf does in Storm (``NormalizedResourceRequest.parseResources``): Storm's keys
    (``topology.component.cpu.pcore.percent``, ``topology.component.resources.onheap.memory.mb``,
    ``...offheap.memory.mb``) or common names (``cpu.pcore.percent``, ``onheap.memory.mb``, ``gpu.count``), and
    ``topology.component.resources.map``: a nested map of amounts by name (config or common names, generic
    resources such as ``gpu.count``), whose entries win over the flat keys.
    ``groupings`` names the stream grouping from each parent (``"shuffle"``, ``"local_or_shuffle"``,
    ``"fields"``, ...); a parent not listed is taken as ``"shuffle"``. Only the executor order by proximity
    (``topology.ras.order.executors.by.proximity.needs``) reads it.
    """

    id: str
    parallelism: int = 1
    kind: Literal["spout", "bolt"] = "bolt"
    inputs: tuple[str, ...] = ()
    tasks: int | None = None
    resources: Mapping[str, float | Mapping[str, float]] = field(default_factory=dict)
    groupings: Mapping[str, str] = field(default_factory=dict)

    def grouping_from(self, parent: str) -> str:
        """The grouping of the stream this component reads from ``parent`` (default ``"shuffle"``)."""
        return self.groupings.get(parent, "shuffle")

    def __post_init__(self) -> None:
        if self.parallelism < 0:
            raise InputError(f"component {self.id}", f"parallelism must be >= 0, got {self.parallelism}")
        if self.tasks is not None and self.tasks < 0:
            raise InputError(f"component {self.id}", f"tasks must be >= 0, got {self.tasks}")
        object.__setattr__(self, "inputs", tuple(self.inputs))


def storm_executors(components: Iterable[Component]) -> list[tuple[str, Executor]]:
    """Storm's numbering: components in ``String`` order of id, task ids from 1, each component's tasks split
    over its executors by ``partitionFixed`` (the first ``tasks mod n`` executors take one task more)."""
    out: list[tuple[str, Executor]] = []
    task = 1
    for comp in sorted(components, key=lambda c: c.id.encode("utf-16-be")):
        tasks = comp.parallelism if comp.tasks is None else comp.tasks
        n = min(comp.parallelism, tasks) if tasks else 0
        if n == 0:
            task += tasks
            continue
        base, extra = divmod(tasks, n)
        for i in range(n):
            size = base + (1 if i < extra else 0)
            out.append((comp.id, Executor(task, task + size - 1)))
            task += size
    return out


def component_request(conf: Mapping[str, Any], comp: Component, where: str = "topology") -> ResourceRequest:
    """``NormalizedResourceRequest(component, topoConf, componentId)``: each executor's request of ``comp`` under
    the typed topology ``conf`` (see the module docstring for the precedence)."""
    merged = normalize_resource_map(conf.get(TOPOLOGY_COMPONENT_RESOURCES_MAP) or {})
    if comp.id == ACKER_COMPONENT_ID:
        for key, name in ((TOPOLOGY_ACKER_RESOURCES_ONHEAP_MEMORY_MB, ONHEAP),
                          (TOPOLOGY_ACKER_RESOURCES_OFFHEAP_MEMORY_MB, OFFHEAP),
                          (TOPOLOGY_ACKER_CPU_PCORE_PERCENT, CPU)):
            if conf.get(key) is not None:
                merged[name] = float(conf[key])
    for key, name in ((TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT, CPU),
                      (TOPOLOGY_COMPONENT_RESOURCES_OFFHEAP_MEMORY_MB, OFFHEAP),
                      (TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB, ONHEAP)):
        if name not in merged and conf.get(key) is not None:
            merged[name] = float(conf[key])
    own = dict(comp.resources)
    nested = own.pop(TOPOLOGY_COMPONENT_RESOURCES_MAP, None) or {}
    if not isinstance(nested, Mapping):
        raise InputError(f"{where}: component {comp.id}.resources.{TOPOLOGY_COMPONENT_RESOURCES_MAP}",
                         f"expected a map of amounts by resource name, got {nested!r}")
    for path, values in (("", own), (f"{TOPOLOGY_COMPONENT_RESOURCES_MAP}.", nested)):
        for key, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise InputError(f"{where}: component {comp.id}.resources.{path}{key}",
                                 f"expected a number, got {value!r}")
    # the component's own amounts replace the defaults; its nested map's entries replace its flat keys
    merged.update(normalize_resource_map(own))
    merged.update(normalize_resource_map(nested))
    return ResourceRequest.from_normalized_map(merged)


def estimated_worker_count(components: Iterable[Component], conf: Mapping[str, Any] | None = None) -> int:
    """``ServerUtils.getEstimatedWorkerCountForRasTopo`` (Nimbus, at submission): ``ceil((Σ over spouts and bolts
    of on-heap × tasks + acker total memory × ackers) / topology.worker.max.heap.size.mb)``; ackers are
    ``topology.acker.executors``, or ``topology.workers`` when that is unset. ``components`` are the user's."""
    typed = read_config(conf, "topology conf")
    total = 0.0
    for comp in components:
        if comp.id == ACKER_COMPONENT_ID:
            continue
        tasks = comp.parallelism if comp.tasks is None else comp.tasks
        total += component_request(typed, comp).on_heap * tasks
    ackers = typed[TOPOLOGY_ACKER_EXECUTORS]
    ackers = typed[TOPOLOGY_WORKERS] if ackers is None else ackers
    total += component_request(typed, Component(ACKER_COMPONENT_ID, ackers)).memory * ackers
    return math.ceil(total / typed[TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB])


def acker_executor_configs(conf: Mapping[str, Any] | None, estimated_workers: int) -> tuple[int, int]:
    """``Nimbus.setUpAckerExecutorConfigs``: ``(topology.acker.executors, topology.ras.acker.executors.per.worker)``
    as Nimbus rewrites them: without ``topology.acker.executors``, ``per_worker × estimated_workers`` ackers; with
    it, ``ceil(ackers / estimated_workers)`` per worker (0 when no worker is estimated)."""
    typed = read_config(conf, "topology conf")
    ackers = typed[TOPOLOGY_ACKER_EXECUTORS]
    if ackers is None:
        per_worker = typed[TOPOLOGY_RAS_ACKER_EXECUTORS_PER_WORKER]
        return estimated_workers * per_worker, per_worker
    per_worker = 0 if estimated_workers == 0 else math.ceil(ackers / estimated_workers)
    return ackers, per_worker


class Topology:
    """``TopologyDetails``: a submitted topology as the scheduler sees it (immutable after construction).

    ``components``: the user's spouts and bolts plus, optionally, system components (``__acker`` ...).
    ``executors``: ``(component id, Executor)`` pairs in insertion order; default :func:`storm_executors`.
    ``conf``: the topology conf (Storm keys, typed by :func:`~.config.read_config`); ``name``, ``user``,
    ``priority`` and ``worker_max_heap_mb`` override ``topology.name``, ``topology.submitter.user``,
    ``topology.priority`` and ``topology.worker.max.heap.size.mb``. ``launch_time`` in seconds.
    """

    def __init__(
        self,
        topology_id: str,
        components: Sequence[Component],
        conf: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        user: str | None = None,
        priority: int | None = None,
        launch_time: int = 0,
        worker_max_heap_mb: float | None = None,
        executors: Sequence[tuple[str, Executor]] | None = None,
        num_workers: int | None = None,
    ) -> None:
        where = f"topology {topology_id}"
        raw = dict(conf or {})
        if name is not None:
            raw[TOPOLOGY_NAME] = name
        if user is not None:
            raw[TOPOLOGY_SUBMITTER_USER] = user
        if priority is not None:
            raw[TOPOLOGY_PRIORITY] = priority
        if worker_max_heap_mb is not None:
            raw[TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB] = worker_max_heap_mb
        self.id: str = topology_id
        self.conf: dict[str, Any] = read_config(raw, where)
        self.name: str = self.conf[TOPOLOGY_NAME] if self.conf[TOPOLOGY_NAME] is not None else topology_id
        self.user: str | None = self.conf[TOPOLOGY_SUBMITTER_USER]
        self.priority: int = self.conf[TOPOLOGY_PRIORITY]
        self.launch_time: int = int(launch_time)
        self.worker_max_heap_mb: float = self.conf[TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB]
        self.num_workers: int = self.conf[TOPOLOGY_WORKERS] if num_workers is None else int(num_workers)

        self.components: dict[str, Component] = {}
        for comp in components:
            if comp.id in self.components:
                raise InputError(where, f"component {comp.id!r} declared twice")
            self.components[comp.id] = comp
        for comp in self.components.values():
            for parent in comp.inputs:
                if parent not in self.components:
                    raise InputError(f"{where}: component {comp.id}", f"input {parent!r} is not a component")

        pairs = list(storm_executors(self.components.values()) if executors is None else executors)
        self._exec_to_comp: dict[Executor, str] = {}
        for comp_id, ex in pairs:
            ex = Executor(*ex)
            if comp_id not in self.components:
                raise InputError(where, f"executor {ex} names unknown component {comp_id!r}")
            if ex in self._exec_to_comp:
                raise InputError(where, f"executor {ex} listed twice")
            self._exec_to_comp[ex] = comp_id
        inserted = list(self._exec_to_comp)
        # HashMap<ExecutorDetails, String> built by new HashMap<>(0).putAll(...)
        self._executors: tuple[Executor, ...] = tuple(hash_order(
            inserted, [e.java_hash() for e in inserted], capacity_putall_into_empty(len(inserted))))
        by_comp: dict[str, list[Executor]] = {c: [] for c in self.components}
        for ex in self._executors:
            by_comp[self._exec_to_comp[ex]].append(ex)
        self._comp_execs: dict[str, tuple[Executor, ...]] = {c: tuple(v) for c, v in by_comp.items()}
        self._index: dict[Executor, int] = {}
        for comp_id, execs in self._comp_execs.items():
            for i, ex in enumerate(sorted(execs)):
                self._index[ex] = i

        self._comp_request: dict[str, ResourceRequest] = {
            c.id: self._component_request(c, where) for c in self.components.values()}
        children: dict[str, set[str]] = {c: set() for c in self.components}
        for comp in self.components.values():
            for parent in comp.inputs:
                children[parent].add(comp.id)
        self._children = {c: frozenset(v) for c, v in children.items()}

    # --- construction helpers
    def _component_request(self, comp: Component, where: str) -> ResourceRequest:
        return component_request(self.conf, comp, where)

    # --- executors
    @property
    def executors(self) -> tuple[Executor, ...]:
        """All executors in the iteration order of Storm's ``executorToComponent`` ``HashMap``."""
        return self._executors

    def component_of(self, executor: Executor) -> str:
        """``getComponentFromExecutor``."""
        return self._exec_to_comp[executor]

    def executor_index(self, executor: Executor) -> int:
        """Position of the executor inside its component, by task id (0-based): the ``index`` of explain output."""
        return self._index[executor]

    def executor_label(self, executor: Executor) -> dict[str, Any]:
        """``{"component", "index"}`` for explain output."""
        return {"component": self._exec_to_comp[executor], "index": self._index[executor]}

    @property
    def executor_to_component(self) -> dict[Executor, str]:
        """Executor → component id, in :attr:`executors` order (a copy)."""
        return {ex: self._exec_to_comp[ex] for ex in self._executors}

    def component_executors(self, component_id: str) -> tuple[Executor, ...]:
        """The component's executors in Storm's ``componentToExecs`` order (:attr:`executors` order)."""
        return self._comp_execs[component_id]

    def has_executor(self, executor: Executor) -> bool:
        return executor in self._exec_to_comp

    def has_spouts(self) -> bool:
        """At least one non-system spout."""
        return any(c.kind == "spout" and not is_system_component(c.id) for c in self.components.values())

    def user_components(self) -> list[Component]:
        """Non-system components (``getUserTopolgyComponents``), in declaration order."""
        return [c for c in self.components.values() if not is_system_component(c.id)]

    def parents(self, component_id: str) -> frozenset[str]:
        return frozenset(self.components[component_id].inputs)

    def children(self, component_id: str) -> frozenset[str]:
        return self._children[component_id]

    def neighbors(self, component_id: str) -> frozenset[str]:
        """Parents ∪ children."""
        return self.parents(component_id) | self._children[component_id]

    # --- resources
    def request(self, executor: Executor) -> ResourceRequest:
        """``getTotalResources(exec)``: the executor's request (shared object: do not mutate)."""
        return self._comp_request[self._exec_to_comp[executor]]

    def component_request(self, component_id: str) -> ResourceRequest:
        """The request of each executor of a component (shared object: do not mutate)."""
        return self._comp_request[component_id]

    def total_request(self, executors: Iterable[Executor] | None = None) -> ResourceRequest:
        """Sum of the requests of ``executors`` (default all: ``getApproximateTotalResources``)."""
        out = ResourceRequest()
        for ex in (self._executors if executors is None else executors):
            out.add(self.request(ex))
        return out

    def total_requested_cpu(self) -> float:
        """``getTotalRequestedCpu``."""
        return sum(self.request(ex).cpu for ex in self._executors)

    def total_requested_memory(self) -> float:
        """``getTotalRequestedMemOnHeap() + getTotalRequestedMemOffHeap()`` (no shared memory here)."""
        return sum(self.request(ex).on_heap for ex in self._executors) + \
            sum(self.request(ex).off_heap for ex in self._executors)

    def total_requested_generic(self) -> dict[str, float]:
        """``getTotalRequestedGenericResources``."""
        return dict(self.total_request().generic)

    def up_time(self, now_secs: int) -> int:
        """``getUpTime``: ``now - launch_time`` (the caller supplies the virtual time)."""
        return now_secs - self.launch_time

    def __repr__(self) -> str:
        return f"Topology({self.id!r}, priority={self.priority}, user={self.user!r}, executors={len(self._executors)})"
