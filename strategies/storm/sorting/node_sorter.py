"""The node sorter: racks → hosts → nodes by "subordinate resource availability" (``NodeSorterHostProximity``).

* :class:`NodeSortType` — ``COMMON`` (2.x: existing ↓, average % ↓, minimum % ↓, id), ``GENERIC_RAS``
  (``GenericResourceAwareStrategyOld``: existing ↓, average % ↓, id) and ``DEFAULT_RAS``
  (``DefaultResourceAwareStrategyOld``, the 1.x order: existing ↓, minimum % ↓, average % ↓, id).
* :class:`ObjectResources` — one rack, host or node with what it has left and its two percentages.
* :func:`sort_object_resources` — one level's sort (``sortObjectResources*``).
* :class:`LazyNodeSorting` — one sorting: racks now, hosts and nodes when reached; iterates node ids.
* :class:`NodeSorter` — built once per scheduling attempt from a :class:`~..cluster.ClusterState` and a
  topology; :meth:`NodeSorter.prepare` picks the executor to sort for (``None``: no rare-resource affinity) and
  :meth:`NodeSorter.sort_all_nodes` returns a lazy iterable of node ids.

How Storm sorts (reproduced exactly, because the placements depend on it):

* Only alive supervisors count; a host's rack comes from the host→rack map (``/default-rack`` otherwise).
* An object's "available" is Σ over its nodes of (capacity − scheduled, clamped at 0); the reference for the
  percentages is the sum of "available" over the objects being sorted (the cluster for racks, the rack for
  hosts, the host for nodes). Slots are no part of it.
* "existing" = executors of the topology being scheduled already on the object, counted when the sorting is
  created (so executors placed during scheduling pull later executors to the same rack, host and node).
* ``COMMON`` and ``GENERIC_RAS`` with an executor: every generic resource the executor does not request is
  negated in each object's available before the percentages (nodes rich in GPUs rank low for executors that do
  not need them); the reference sum is taken before the negation.
* Lazy: racks are sorted when the sorting is created; the hosts of a rack and the nodes of a host are sorted
  the first time the iteration reaches them, from the state *at that moment*, and then kept for this sorting.
* Iteration: favoured nodes (``topology.scheduler.favored.nodes`` hostnames → their alive node ids, minus
  greylisted), then racks → hosts → nodes skipping favoured, unfavoured and greylisted ids, then unfavoured
  nodes (minus favoured and greylisted), then greylisted supervisors.

Sums over racks and hosts follow Java's ``HashMap``/``HashSet`` orders, as Storm's float sums do.

A :class:`~.recorder.SortRecorder` passed to :class:`NodeSorter` receives one record per sorting, filled as the
lazy sorts happen (see :mod:`.recorder`).
"""
from __future__ import annotations

import enum
from typing import Callable, Iterable, Iterator, Sequence

from clusteremu.base.java import string_compare_key

from ..cluster import ClusterState
from ..config import TOPOLOGY_SCHEDULER_FAVORED_NODES, TOPOLOGY_SCHEDULER_UNFAVORED_NODES
from ..resources import ResourceOffer, ResourceRequest
from ..topology import Executor, Topology
from .recorder import SortRecorder

__all__ = ["LazyNodeSorting", "NodeSortType", "NodeSorter", "ObjectResources", "sort_object_resources"]


class NodeSortType(enum.Enum):
    """``BaseResourceAwareStrategy.NodeSortType``."""

    GENERIC_RAS = "GENERIC_RAS"
    DEFAULT_RAS = "DEFAULT_RAS"
    COMMON = "COMMON"


class ObjectResources:
    """``ObjectResourcesItem``: a rack, host or node id, its available resources and percentages (0..100)."""

    __slots__ = ("id", "available", "min_percent", "avg_percent")

    def __init__(self, object_id: str, available: ResourceOffer) -> None:
        self.id = object_id
        self.available = available
        self.min_percent = 0.0
        self.avg_percent = 0.0

    def to_dict(self) -> dict:
        """The explain shape: ``{"id", "available", "min_percent", "avg_percent"}``."""
        return {"id": self.id, "available": self.available.to_dict(),
                "min_percent": self.min_percent, "avg_percent": self.avg_percent}

    def __repr__(self) -> str:
        return f"ObjectResources({self.id!r}, min={self.min_percent:.4f}, avg={self.avg_percent:.4f})"


def sort_object_resources(
    items: Sequence[ObjectResources],
    sort_type: NodeSortType,
    request: ResourceRequest | None,
    existing: Callable[[str], int],
) -> list[ObjectResources]:
    """Sort one level as Storm's ``sortObjectResources{Common,Generic,Default}`` does.

    ``items`` are fresh objects (their available offers are negated in place for the rare-resource affinity);
    the reference total is their sum in the given order, taken before any negation. ``request`` is the
    executor's request (``None``: sorting for no particular executor). ``existing(id)`` counts the topology's
    executors already on the object.
    """
    overall = ResourceOffer()
    for item in items:
        overall.add(item.available)
    negate = request is not None and sort_type is not NodeSortType.DEFAULT_RAS
    for item in items:
        if negate:
            item.available.update_for_rare_resource_affinity(request)  # type: ignore[arg-type]
        item.min_percent = overall.min_percentage_used_by(item.available)
        item.avg_percent = overall.average_percentage_used_by(item.available)
    counts = {item.id: existing(item.id) for item in items}
    if sort_type is NodeSortType.COMMON:
        key = lambda o: (-counts[o.id], -o.avg_percent, -o.min_percent, string_compare_key(o.id))  # noqa: E731
    elif sort_type is NodeSortType.GENERIC_RAS:
        key = lambda o: (-counts[o.id], -o.avg_percent, string_compare_key(o.id))  # noqa: E731
    else:
        key = lambda o: (-counts[o.id], -o.min_percent, -o.avg_percent, string_compare_key(o.id))  # noqa: E731
    return sorted(items, key=key)


class NodeSorter:
    """``NodeSorterHostProximity`` over a scheduling state, for one topology.

    Build it when the strategy starts (it snapshots which nodes are alive, the racks, hosts and
    favoured/unfavoured/greylisted lists); :meth:`prepare` then :meth:`sort_all_nodes` for each sorting.
    """

    def __init__(
        self,
        state: ClusterState,
        topology: Topology,
        sort_type: NodeSortType = NodeSortType.COMMON,
        recorder: SortRecorder | None = None,
    ) -> None:
        self.state = state
        self.topology = topology
        self.sort_type = sort_type
        self.recorder = recorder
        self.greylisted: list[str] = [s for s in state.greylisted_supervisors]
        layout = state.layout()
        self.node_to_rack: dict[str, str] = layout.node_to_rack
        self.node_to_host: dict[str, str] = layout.node_to_host
        self.host_to_nodes: dict[str, list[str]] = layout.host_to_nodes
        self.rack_to_hosts: dict[str, list[str]] = layout.rack_to_hosts
        conf = topology.conf
        grey = set(self.greylisted)
        self.favored: list[str] = [n for n in self._host_node_ids(conf[TOPOLOGY_SCHEDULER_FAVORED_NODES])
                                   if n not in grey]
        fav = set(self.favored)
        self.unfavored: list[str] = [n for n in self._host_node_ids(conf[TOPOLOGY_SCHEDULER_UNFAVORED_NODES])
                                     if n not in grey and n not in fav]
        self.executor: Executor | None = None

    def _host_node_ids(self, hosts: Iterable[str] | None) -> list[str]:
        out: list[str] = []
        for host in hosts or ():
            out.extend(self.host_to_nodes.get(host, ()))
        return out

    def prepare(self, executor: Executor | None) -> None:
        """Sort for ``executor`` from now on (``None``: for no executor, no rare-resource affinity)."""
        self.executor = executor

    def sort_all_nodes(self) -> "LazyNodeSorting":
        """A new lazy sorting of every node id for the prepared executor (re-iterable)."""
        return LazyNodeSorting(self, self.executor)

    def sorted_racks(self) -> list[ObjectResources]:
        """``getSortedRacks``: the racks in order, for the prepared executor (no recording)."""
        return self._sort_racks(self.executor, self._scheduled_counts()[0])

    # --- internals
    def _request(self, executor: Executor | None) -> ResourceRequest | None:
        return None if executor is None else self.topology.request(executor)

    def _scheduled_counts(self) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
        """Executors of the topology per rack, per host and per node, from the current assignment."""
        per_rack: dict[str, int] = {}
        per_host: dict[str, int] = {}
        per_node: dict[str, int] = {}
        for slot, execs in self.state.slot_to_executors(self.topology.id).items():
            n = len(execs)
            node = slot.node_id
            rack = self.node_to_rack.get(node)
            host = self.node_to_host.get(node)
            per_rack[rack] = per_rack.get(rack, 0) + n  # type: ignore[index]
            per_host[host] = per_host.get(host, 0) + n  # type: ignore[index]
            per_node[node] = per_node.get(node, 0) + n
        return per_rack, per_host, per_node

    def _sort_racks(self, executor: Executor | None, per_rack: dict[str, int]) -> list[ObjectResources]:
        state = self.state
        items = []
        for rack, hosts in self.rack_to_hosts.items():
            avail = ResourceOffer()
            for host in hosts:
                for node in self.host_to_nodes[host]:
                    avail.add(state.available_resources(node))
            items.append(ObjectResources(rack, avail))
        return sort_object_resources(items, self.sort_type, self._request(executor), lambda r: per_rack.get(r, 0))

    def _sort_hosts(self, rack: str, executor: Executor | None, per_host: dict[str, int]) -> list[ObjectResources]:
        state = self.state
        items = []
        for host in self.rack_to_hosts.get(rack, ()):
            avail = ResourceOffer()
            for node in self.host_to_nodes[host]:
                avail.add(state.available_resources(node))
            items.append(ObjectResources(host, avail))
        return sort_object_resources(items, self.sort_type, self._request(executor), lambda h: per_host.get(h, 0))

    def _sort_nodes(self, host: str, executor: Executor | None, per_node: dict[str, int]) -> list[ObjectResources]:
        state = self.state
        items = [ObjectResources(node, state.available_resources(node).copy())
                 for node in self.host_to_nodes.get(host, ())]
        return sort_object_resources(items, self.sort_type, self._request(executor), lambda n: per_node.get(n, 0))


class LazyNodeSorting:
    """``LazyNodeSorting``: racks sorted now; hosts and nodes sorted when first reached, then cached."""

    def __init__(self, sorter: NodeSorter, executor: Executor | None) -> None:
        self.sorter = sorter
        self.executor = executor
        self.skipped: set[str] = set(sorter.favored) | set(sorter.unfavored) | set(sorter.greylisted)
        per_rack, self.per_host, self.per_node = sorter._scheduled_counts()
        self.racks: list[ObjectResources] = sorter._sort_racks(executor, per_rack)
        self._hosts: dict[str, list[ObjectResources]] = {}
        self._nodes: dict[str, list[ObjectResources]] = {}
        self._record: dict | None = None
        if sorter.recorder is not None:
            label = None if executor is None else sorter.topology.executor_label(executor)
            self._record = sorter.recorder.start(label, [r.to_dict() for r in self.racks])

    def sorted_hosts(self, rack: str) -> list[ObjectResources]:
        hosts = self._hosts.get(rack)
        if hosts is None:
            hosts = self.sorter._sort_hosts(rack, self.executor, self.per_host)
            self._hosts[rack] = hosts
            if self._record is not None:
                self._record["hosts"][rack] = [h.to_dict() for h in hosts]
        return hosts

    def sorted_nodes(self, host: str) -> list[ObjectResources]:
        nodes = self._nodes.get(host)
        if nodes is None:
            nodes = self.sorter._sort_nodes(host, self.executor, self.per_node)
            self._nodes[host] = nodes
            if self._record is not None:
                self._record["nodes"][host] = [n.to_dict() for n in nodes]
        return nodes

    def __iter__(self) -> Iterator[str]:
        sorter = self.sorter
        yield from sorter.favored
        skipped = self.skipped
        for rack in self.racks:
            for host in self.sorted_hosts(rack.id):
                for node in self.sorted_nodes(host.id):
                    if node.id not in skipped:
                        yield node.id
        yield from sorter.unfavored
        known = sorter.state.supervisors
        for node_id in sorter.greylisted:
            if node_id in known:
                yield node_id
