"""Supervisors, worker slots and the mutable scheduling state (Storm's ``Cluster`` and ``RasNode`` rules).

* :class:`WorkerSlot` — ``WorkerSlot``: ``(node_id, port)``; ``id`` is ``"node:port"``.
* :class:`Supervisor` — ``SupervisorDetails``: id, host, rack (``None`` = ``/default-rack``), CPU and memory
  capacity, generic resources, ports.
* :class:`Layout` — the alive supervisors by rack and host, in Storm's orders (cached per blacklist).
* :class:`ClusterState` — ``Cluster``: supervisors, topologies, the current assignments, blacklisted hosts,
  greylisted supervisors, per-topology status messages; assign/free one slot or one executor, free slots,
  used/free slots, what each worker is charged (``max(sum of CPU, storm.worker.min.cpu.pcore.percent)``), what
  each node has scheduled and has left, ``wouldFit``/``couldEverFit``. A slot is never shared between
  topologies. :meth:`ClusterState.copy` gives an independent state to try a schedule on;
  :meth:`ClusterState.update_from` takes the assignments and statuses of such a copy back.

Numbers, not object graphs: assignments are dicts of :class:`~.topology.Executor` / :class:`WorkerSlot` tuples;
per-slot sums and per-node availability are cached and invalidated on change, so a 500-supervisor cluster is
answered without rebuilding anything.

Java orders kept (they decide ties): the free slots of a node iterate as ``RasNode``'s ``HashSet<WorkerSlot>``
(:meth:`ClusterState.node_slot_order`), nodes as ``RasNodes``' ``HashMap`` of supervisor ids
(:meth:`ClusterState.node_ids`), and a node's scheduled resources are summed in its slot order.
Departures: shared memory (``SharedMemory``) is not modelled; a worker's resources are summed in the order its
executors were added (Storm: ``HashSet`` order), which can only differ in the last bit of a float.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from clusteremu.base.errors import InputError
from clusteremu.base.java import java_order

from clusteremu.base.java import capacity_after_puts, hash_order, string_hash_code, to_int
from .config import (
    DEFAULT_RACK,
    STORM_WORKER_MIN_CPU_PCORE_PERCENT,
    TOPOLOGY_RAS_ONE_COMPONENT_PER_WORKER,
    TOPOLOGY_RAS_ONE_EXECUTOR_PER_WORKER,
    read_config,
)
from .resources import ResourceOffer, ResourceRequest
from .topology import Executor, Topology

__all__ = ["ClusterState", "Layout", "Supervisor", "WorkerSlot"]

_DEFAULT_PORTS = (6700, 6701, 6702, 6703)


class WorkerSlot(NamedTuple):
    """A worker slot: one port of one supervisor."""

    node_id: str
    port: int

    @property
    def id(self) -> str:
        """``getId()``: ``"<node>:<port>"``."""
        return f"{self.node_id}:{self.port}"

    def java_hash(self) -> int:
        """``WorkerSlot.hashCode()``."""
        return to_int(string_hash_code(self.node_id) + 13 * self.port)  # WorkerSlot.hashCode()

    def __str__(self) -> str:
        return self.id


@dataclass(frozen=True, eq=False)
class Supervisor:
    """``SupervisorDetails``: what one supervisor (node) offers.

    ``cpu`` in percent of a core (``supervisor.cpu.capacity``), ``memory_mb`` (``supervisor.memory.capacity.mb``),
    ``generic`` (``supervisor.resources.map``, e.g. ``{"gpu.count": 2}``), ``ports`` (one slot each), ``rack``
    (``None``: ``/default-rack`` unless the state is given a host→rack map).
    """

    id: str
    host: str
    cpu: float = 400.0
    memory_mb: float = 4096.0
    generic: Mapping[str, float] = field(default_factory=dict)
    ports: tuple[int, ...] = _DEFAULT_PORTS
    rack: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "ports", tuple(int(p) for p in self.ports))
        object.__setattr__(self, "generic", {str(k): float(v) for k, v in self.generic.items()})
        if len(set(self.ports)) != len(self.ports):
            raise InputError(f"supervisor {self.id}", f"ports listed twice: {list(self.ports)}")

    def total_resources(self) -> ResourceOffer:
        """A new offer with the full capacity (``getTotalResources``)."""
        return ResourceOffer(self.cpu, self.memory_mb, self.generic)

    def slots(self) -> list[WorkerSlot]:
        return [WorkerSlot(self.id, p) for p in self.ports]


class Layout:
    """Alive supervisors by rack and host, as ``NodeSorterHostProximity`` collects them: ``node_to_rack``,
    ``node_to_host``, ``host_to_nodes`` (nodes in ``RasNodes``' ``HashMap`` order) and ``rack_to_hosts`` (racks
    and hosts in ``HashMap``/``HashSet`` order). Read-only."""

    def __init__(self, state: "ClusterState") -> None:
        self.node_to_rack: dict[str, str] = {}
        self.node_to_host: dict[str, str] = {}
        self.host_to_nodes: dict[str, list[str]] = {}
        rack_hosts: dict[str, dict[str, None]] = {}
        for node_id in state.node_ids():
            if not state.is_alive(node_id):
                continue
            host = state.supervisors[node_id].host
            rack = state.host_to_rack(host)
            self.node_to_rack[node_id] = rack
            self.node_to_host[node_id] = host
            self.host_to_nodes.setdefault(host, []).append(node_id)
            rack_hosts.setdefault(rack, {})[host] = None
        self.rack_to_hosts: dict[str, list[str]] = {
            rack: java_order(rack_hosts[rack]) for rack in java_order(rack_hosts)}


class ClusterState:
    """Storm's ``Cluster`` as the RAS uses it: mutable, cheap to copy.

    ``supervisors`` in any order (Storm iterates them in ``HashMap`` order, reproduced where it matters);
    ``topologies`` the topologies known this round; ``conf`` the daemon conf (Storm keys, typed);
    ``assignments`` ``{topology id: {Executor: WorkerSlot}}``; ``host_to_rack`` overrides the supervisors'
    ``rack``; ``blacklisted_hosts`` makes their supervisors dead to the scheduler; ``greylisted_supervisors``
    (ids) are tried last by the node sorter; ``status`` ``{topology id: message}``.

    The supervisors and the host→rack map are fixed for the life of a state and all its copies (they share
    caches built from them): when supervisors join or leave, build a new state. ``blacklisted_hosts``,
    ``greylisted_supervisors``, ``status`` and ``topologies`` may be changed in place.
    """

    def __init__(
        self,
        supervisors: Iterable[Supervisor],
        topologies: Iterable[Topology] = (),
        conf: Mapping[str, Any] | None = None,
        assignments: Mapping[str, Mapping[Executor, WorkerSlot]] | None = None,
        *,
        host_to_rack: Mapping[str, str] | None = None,
        blacklisted_hosts: Iterable[str] = (),
        greylisted_supervisors: Sequence[str] = (),
        status: Mapping[str, str] | None = None,
    ) -> None:
        self.supervisors: dict[str, Supervisor] = {}
        for sup in supervisors:
            if sup.id in self.supervisors:
                raise InputError(f"supervisor {sup.id}", "declared twice")
            self.supervisors[sup.id] = sup
        self.topologies: dict[str, Topology] = {}
        for td in topologies:
            if td.id in self.topologies:
                raise InputError(f"topology {td.id}", "declared twice")
            self.topologies[td.id] = td
        self.conf: dict[str, Any] = read_config(conf, "cluster conf")
        self.min_worker_cpu: float = float(self.conf[STORM_WORKER_MIN_CPU_PCORE_PERCENT])
        rack_map = {s.host: s.rack for s in self.supervisors.values() if s.rack is not None}
        if host_to_rack:
            rack_map.update(host_to_rack)
        self._host_to_rack: dict[str, str] = rack_map
        self.blacklisted_hosts: set[str] = set(blacklisted_hosts)
        self.greylisted_supervisors: list[str] = list(greylisted_supervisors)
        self.status: dict[str, str] = dict(status or {})
        # assignment state
        self._slot_owner: dict[WorkerSlot, str] = {}
        self._slot_execs: dict[WorkerSlot, list[Executor]] = {}
        self._slot_raw: dict[WorkerSlot, ResourceRequest] = {}
        self._topo_slots: dict[str, dict[WorkerSlot, None]] = {}
        self._topo_exec_slot: dict[str, dict[Executor, WorkerSlot]] = {}
        self._node_used: dict[str, set[WorkerSlot]] = {}
        # caches (shared structure-free: safe to share between copies only when immutable)
        self._node_avail: dict[str, ResourceOffer] = {}
        # caches that depend only on the supervisors: shared by every copy
        self._slot_order: dict[str, tuple[WorkerSlot, ...]] = {}
        self._layouts: dict[frozenset[str], Layout] = {}
        self._node_ids: list[tuple[str, ...]] = []
        if assignments:
            for topo_id, exec_to_slot in assignments.items():
                by_slot: dict[WorkerSlot, list[Executor]] = {}
                for ex, slot in exec_to_slot.items():
                    by_slot.setdefault(WorkerSlot(*slot), []).append(Executor(*ex))
                for slot, execs in by_slot.items():
                    self.assign(slot, topo_id, execs)

    # ------------------------------------------------------------------ copies
    def copy(self) -> "ClusterState":
        """An independent state with the same supervisors, topologies, conf, assignments and statuses."""
        new = ClusterState.__new__(ClusterState)
        new.supervisors = self.supervisors
        new.topologies = dict(self.topologies)
        new.conf = self.conf
        new.min_worker_cpu = self.min_worker_cpu
        new._host_to_rack = self._host_to_rack
        new.blacklisted_hosts = set(self.blacklisted_hosts)
        new.greylisted_supervisors = list(self.greylisted_supervisors)
        new.status = dict(self.status)
        new._slot_owner = dict(self._slot_owner)
        new._slot_execs = {s: list(e) for s, e in self._slot_execs.items()}
        new._slot_raw = dict(self._slot_raw)  # values are replaced, never mutated
        new._topo_slots = {t: dict(s) for t, s in self._topo_slots.items()}
        new._topo_exec_slot = {t: dict(m) for t, m in self._topo_exec_slot.items()}
        new._node_used = {n: set(s) for n, s in self._node_used.items()}
        new._node_avail = dict(self._node_avail)  # values are replaced, never mutated
        new._slot_order = self._slot_order
        new._layouts = self._layouts
        new._node_ids = self._node_ids
        return new

    def update_from(self, other: "ClusterState") -> None:
        """``updateFrom``: take ``other``'s assignments and status messages (same supervisors)."""
        self._slot_owner = dict(other._slot_owner)
        self._slot_execs = {s: list(e) for s, e in other._slot_execs.items()}
        self._slot_raw = dict(other._slot_raw)
        self._topo_slots = {t: dict(s) for t, s in other._topo_slots.items()}
        self._topo_exec_slot = {t: dict(m) for t, m in other._topo_exec_slot.items()}
        self._node_used = {n: set(s) for n, s in other._node_used.items()}
        self._node_avail = dict(other._node_avail)
        self.status = dict(other.status)

    # ------------------------------------------------------------------ topology
    def host_to_rack(self, host: str) -> str:
        """Rack of a host (``/default-rack`` when unmapped)."""
        return self._host_to_rack.get(host, DEFAULT_RACK)

    def network_topography(self) -> dict[str, list[str]]:
        """``getNetworkTopography``: rack → hostnames, supervisors in the given order."""
        out: dict[str, list[str]] = {}
        for sup in self.supervisors.values():
            hosts = out.setdefault(self.host_to_rack(sup.host), [])
            if sup.host not in hosts:
                hosts.append(sup.host)
        return out

    def is_blacklisted(self, node_id: str) -> bool:
        """``isBlackListed(supervisorId)``: the supervisor's host is blacklisted."""
        sup = self.supervisors.get(node_id)
        return sup is not None and sup.host in self.blacklisted_hosts

    def is_alive(self, node_id: str) -> bool:
        """``RasNode.isAlive``: a known supervisor whose host is not blacklisted."""
        return node_id in self.supervisors and not self.is_blacklisted(node_id)

    def layout(self) -> "Layout":
        """Alive supervisors grouped by rack and host, in Storm's orders (cached until the blacklist changes)."""
        key = frozenset(self.blacklisted_hosts)
        layout = self._layouts.get(key)
        if layout is None:
            layout = self._layouts[key] = Layout(self)
        return layout

    def node_ids(self) -> tuple[str, ...]:
        """Supervisor ids in Java ``HashMap`` order (``RasNodes.getNodes()``)."""
        if not self._node_ids:
            self._node_ids.append(tuple(java_order(self.supervisors.keys())))
        return self._node_ids[0]

    def node_slot_order(self, node_id: str) -> tuple[WorkerSlot, ...]:
        """All slots of a supervisor in ``HashSet<WorkerSlot>`` iteration order (the order Storm tries them)."""
        order = self._slot_order.get(node_id)
        if order is None:
            sup = self.supervisors[node_id]
            ports = hash_order(list(sup.ports), list(sup.ports), capacity_after_puts(len(sup.ports)))
            by_id = {f"{node_id}:{p}": WorkerSlot(node_id, p) for p in ports}
            slots = [by_id[i] for i in java_order(by_id)]  # RasNode.slots: HashMap<String id, WorkerSlot>
            order = tuple(hash_order(slots, [s.java_hash() for s in slots],
                                           capacity_after_puts(len(slots))))
            self._slot_order[node_id] = order
        return order

    # ------------------------------------------------------------------ assignments: reading
    def assignment(self, topology_id: str) -> dict[Executor, WorkerSlot]:
        """``getAssignmentById(..).getExecutorToSlot()`` (a copy; empty when unassigned)."""
        return dict(self._topo_exec_slot.get(topology_id, {}))

    def assignments(self) -> dict[str, dict[Executor, WorkerSlot]]:
        """All non-empty assignments ``{topology id: {Executor: WorkerSlot}}`` (copies)."""
        return {t: dict(m) for t, m in self._topo_exec_slot.items() if m}

    def slot_to_executors(self, topology_id: str) -> dict[WorkerSlot, list[Executor]]:
        """``getSlotToExecutors``: the topology's workers and their executors (copies)."""
        return {s: list(self._slot_execs[s]) for s in self._topo_slots.get(topology_id, {})}

    def executors_on_slot(self, slot: WorkerSlot) -> tuple[Executor, ...]:
        return tuple(self._slot_execs.get(slot, ()))

    def is_assigned(self, topology_id: str) -> bool:
        return bool(self._topo_exec_slot.get(topology_id))

    def slot_of(self, topology_id: str, executor: Executor) -> WorkerSlot | None:
        return self._topo_exec_slot.get(topology_id, {}).get(executor)

    def unassigned_executors(self, topology: Topology) -> list[Executor]:
        """``getUnassignedExecutors``: the topology's executors without a slot, in :attr:`Topology.executors`
        order (Storm's ``HashSet`` copy keeps that order up to bucket collisions at a larger capacity)."""
        assigned = self._topo_exec_slot.get(topology.id, {})
        return [ex for ex in topology.executors if ex not in assigned]

    def needs_scheduling(self, topology: Topology) -> bool:
        """``needsSchedulingRas``: some executor is unassigned."""
        assigned = self._topo_exec_slot.get(topology.id, {})
        return any(ex not in assigned for ex in topology.executors)

    def assigned_num_workers(self, topology_id: str) -> int:
        return len(self._topo_slots.get(topology_id, {}))

    def is_slot_occupied(self, slot: WorkerSlot) -> bool:
        return slot in self._slot_owner

    def slot_owner(self, slot: WorkerSlot) -> str | None:
        """Topology id using the slot, or ``None``."""
        return self._slot_owner.get(slot)

    def used_slots(self) -> set[WorkerSlot]:
        return set(self._slot_owner)

    def used_slots_by_topology(self, topology_id: str) -> list[WorkerSlot]:
        """The topology's workers, in the order they were first assigned."""
        return list(self._topo_slots.get(topology_id, {}))

    def used_slots_on_node(self, node_id: str) -> set[WorkerSlot]:
        return set(self._node_used.get(node_id, ()))

    def free_slots_on_node(self, node_id: str) -> list[WorkerSlot]:
        """Slots of the node used by no topology, in :meth:`node_slot_order` (empty when the node is dead)."""
        if not self.is_alive(node_id):
            return []
        used = self._node_used.get(node_id, ())
        return [s for s in self.node_slot_order(node_id) if s not in used]

    def topologies_on_node(self, node_id: str) -> set[str]:
        """Ids of the topologies with a worker on the node."""
        return {self._slot_owner[s] for s in self._node_used.get(node_id, ())}

    # ------------------------------------------------------------------ resources
    def worker_resources(self, slot: WorkerSlot) -> ResourceRequest | None:
        """What the worker on ``slot`` is charged (CPU raised to the worker minimum), or ``None`` when free."""
        raw = self._slot_raw.get(slot)
        if raw is None:
            return None
        return self._charged(raw)

    def _charged(self, raw: ResourceRequest) -> ResourceRequest:
        out = raw.copy()
        if out.cpu < self.min_worker_cpu:
            out.cpu = self.min_worker_cpu
        return out

    def scheduled_resources_for_node(self, node_id: str) -> ResourceRequest:
        """``getAllScheduledResourcesForNode``: the sum of the node's workers' charges (slot order)."""
        total = ResourceRequest()
        used = self._node_used.get(node_id)
        if not used:
            return total
        order = self.node_slot_order(node_id) if node_id in self.supervisors else sorted(used)
        for slot in order:
            if slot in used:
                total.add(self._charged(self._slot_raw[slot]))
        return total

    def available_resources(self, node_id: str) -> ResourceOffer:
        """``RasNode.getTotalAvailableResources``: capacity minus scheduled, each resource clamped at 0; an
        empty offer for a dead or unknown node. Shared cached object: copy before mutating."""
        cached = self._node_avail.get(node_id)
        if cached is None:
            sup = self.supervisors.get(node_id)
            if sup is None:
                cached = ResourceOffer()
            else:
                cached = sup.total_resources()
                cached.remove(self.scheduled_resources_for_node(node_id))
            self._node_avail[node_id] = cached
        return cached

    def total_resources(self, node_id: str) -> ResourceOffer:
        """The node's capacity (empty for an unknown node)."""
        sup = self.supervisors.get(node_id)
        return sup.total_resources() if sup is not None else ResourceOffer()

    def topology_scheduled_resources(self, topology_id: str) -> ResourceRequest:
        """Sum of the charges of the topology's workers."""
        total = ResourceRequest()
        for slot in self._topo_slots.get(topology_id, {}):
            total.add(self._charged(self._slot_raw[slot]))
        return total

    def cluster_total_cpu(self) -> float:
        """``getClusterTotalCpuResource``: capacity of every supervisor."""
        return sum(self.supervisors[i].cpu for i in self.node_ids())

    def cluster_total_memory(self) -> float:
        """``getClusterTotalMemoryResource``."""
        return sum(self.supervisors[i].memory_mb for i in self.node_ids())

    def cluster_total_generic(self) -> dict[str, float]:
        """``getClusterTotalGenericResources``."""
        out: dict[str, float] = {}
        for i in self.node_ids():
            for name, amount in self.supervisors[i].generic.items():
                out[name] = out.get(name, 0.0) + amount
        return out

    def non_blacklisted_available_resources(self, blacklisted_ids: Iterable[str] = ()) -> ResourceOffer:
        """``getNonBlacklistedClusterAvailableResources``: Σ (capacity − scheduled) over supervisors that are
        neither on blacklisted hosts nor in ``blacklisted_ids``; clamping applies to the running sum, as in
        Storm."""
        skip = set(blacklisted_ids)
        out = ResourceOffer()
        for node_id in self.node_ids():
            if self.is_blacklisted(node_id) or node_id in skip:
                continue
            out.add(self.supervisors[node_id].total_resources())
            out.remove(self.scheduled_resources_for_node(node_id))
        return out

    # ------------------------------------------------------------------ fitting
    def would_fit(self, slot: WorkerSlot, executor: Executor, topology: Topology,
                  available: ResourceOffer | None = None, max_heap: float | None = None) -> bool:
        """``Cluster.wouldFit``: the node's free resources could hold the executor, the CPU and memory the
        worker would grow by are free on the node, and the worker's on-heap stays within ``max_heap``
        (default the topology's ``topology.worker.max.heap.size.mb``)."""
        if available is None:
            available = self.available_resources(slot.node_id)
        if max_heap is None:
            max_heap = topology.worker_max_heap_mb
        request = topology.request(executor)
        if not available.could_fit(self.min_worker_cpu, request):
            return False
        cur_cpu = 0.0
        cur_mem = 0.0
        cur_on = 0.0
        raw = self._slot_raw.get(slot) if self._slot_owner.get(slot) == topology.id else None
        if raw is not None:
            cur_cpu = max(raw.cpu, self.min_worker_cpu)
            cur_mem = raw.off_heap + raw.on_heap
            cur_on = raw.on_heap
        after_on = cur_on + request.on_heap
        after_mem = (raw.off_heap if raw is not None else 0.0) + request.off_heap + after_on
        after_cpu = max((raw.cpu if raw is not None else 0.0) + request.cpu, self.min_worker_cpu)
        if after_cpu - cur_cpu > available.cpu:
            return False
        if after_mem - cur_mem > available.memory:
            return False
        return after_on <= max_heap

    def could_ever_fit(self, node_id: str, executor: Executor, topology: Topology) -> bool:
        """``RasNode.couldEverFit``: the node is alive and its free resources could hold the executor."""
        if not self.is_alive(node_id):
            return False
        return self.available_resources(node_id).could_fit(self.min_worker_cpu, topology.request(executor))

    def node_would_fit(self, slot: WorkerSlot, executor: Executor, topology: Topology) -> bool:
        """``RasNode.wouldFit``: alive, :meth:`would_fit`, and the topology's one-executor-per-worker /
        one-component-per-worker rules."""
        if not self.is_alive(slot.node_id) or not self.would_fit(slot, executor, topology):
            return False
        owner = self._slot_owner.get(slot)
        if topology.conf[TOPOLOGY_RAS_ONE_EXECUTOR_PER_WORKER]:
            return owner != topology.id
        if topology.conf[TOPOLOGY_RAS_ONE_COMPONENT_PER_WORKER] and owner == topology.id:
            comp = topology.component_of(executor)
            return all(topology.component_of(e) == comp for e in self._slot_execs[slot])
        return True

    # ------------------------------------------------------------------ assignments: writing
    def assign(self, slot: WorkerSlot, topology_id: str, executors: Iterable[Executor]) -> None:
        """``Cluster.assign``: put ``executors`` of the topology on a free slot (``RuntimeException`` in Storm
        when occupied: ``ValueError`` here)."""
        slot = WorkerSlot(*slot)
        if slot in self._slot_owner:
            raise ValueError(f"slot: [{slot.node_id}, {slot.port}] is already occupied.")
        execs = [Executor(*e) for e in executors]
        td = self.topologies.get(topology_id)
        exec_slot = self._topo_exec_slot.setdefault(topology_id, {})
        for ex in execs:
            if ex in exec_slot:
                raise ValueError(f"executor {ex} of {topology_id} is already assigned to {exec_slot[ex]}")
        raw = ResourceRequest()
        if td is not None:
            for ex in execs:
                if td.has_executor(ex):
                    raw.add(td.request(ex))
        self._slot_owner[slot] = topology_id
        self._slot_execs[slot] = execs
        self._slot_raw[slot] = raw
        self._topo_slots.setdefault(topology_id, {})[slot] = None
        for ex in execs:
            exec_slot[ex] = slot
        self._node_used.setdefault(slot.node_id, set()).add(slot)
        self._node_avail.pop(slot.node_id, None)

    def free_slot(self, slot: WorkerSlot) -> None:
        """``freeSlot``: remove whatever worker runs on the slot (no-op when free)."""
        slot = WorkerSlot(*slot)
        owner = self._slot_owner.pop(slot, None)
        if owner is None:
            return
        execs = self._slot_execs.pop(slot)
        self._slot_raw.pop(slot)
        self._topo_slots[owner].pop(slot, None)
        exec_slot = self._topo_exec_slot[owner]
        for ex in execs:
            exec_slot.pop(ex, None)
        self._node_used[slot.node_id].discard(slot)
        self._node_avail.pop(slot.node_id, None)

    def free_slots(self, slots: Iterable[WorkerSlot]) -> None:
        for slot in list(slots):
            self.free_slot(slot)

    def unassign(self, topology_id: str) -> None:
        """``unassign``: free every slot of the topology."""
        self.free_slots(self.used_slots_by_topology(topology_id))

    def assign_executor(self, slot: WorkerSlot, topology: Topology, executor: Executor) -> None:
        """``RasNode.assignSingleExecutor``: add one executor to the topology's worker on ``slot`` (starting
        the worker when the slot is free)."""
        if not self.is_alive(slot.node_id):
            raise ValueError(f"Trying to adding to a dead node {slot.node_id}")
        owner = self._slot_owner.get(slot)
        if owner is None:
            self.assign(slot, topology.id, [executor])
            return
        if owner != topology.id:
            raise ValueError(f"Slot {slot} is not availble to schedue {executor} on")
        execs = self._slot_execs[slot] + [executor]
        self.free_slot(slot)
        self.assign(slot, topology.id, execs)

    def free_executor(self, topology: Topology, executor: Executor) -> None:
        """``RasNode.freeSingleExecutor``: take one executor off its worker (the worker stays if others
        remain)."""
        slot = self._topo_exec_slot.get(topology.id, {}).get(executor)
        if slot is None:
            raise ValueError(f"Executor {executor} is not assigned to {topology.id}")
        rest = [e for e in self._slot_execs[slot] if e != executor]
        self.free_slot(slot)
        if rest:
            self.assign(slot, topology.id, rest)

    # ------------------------------------------------------------------ status
    def set_status(self, topology_id: str, message: str) -> None:
        self.status[topology_id] = message

    def set_status_if_absent(self, topology_id: str, message: str) -> None:
        self.status.setdefault(topology_id, message)

    def get_status(self, topology_id: str) -> str | None:
        return self.status.get(topology_id)
