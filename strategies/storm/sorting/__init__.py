"""Orders used by the scheduling strategies.

* :mod:`.node_sorter` — racks → hosts → nodes (``NodeSorterHostProximity``) with the three sort types.
* :mod:`.exec_sorter` — the executor orders (``ExecSorterByConnectionCount``, ``ExecSorterByProximity``) and
  the ackers-last rule.
* :mod:`.recorder` — an optional recorder that keeps every sorting for explanations.
"""
from __future__ import annotations

from .exec_sorter import (
    component_connection_counts,
    isolate_ackers_to_end,
    sort_executors,
    sort_executors_by_connection_count,
    sort_executors_by_proximity,
    storm_unassigned_order,
    unassigned_ackers,
)
from .node_sorter import (
    LazyNodeSorting,
    NodeSorter,
    NodeSortType,
    ObjectResources,
    sort_object_resources,
)
from .recorder import SortRecorder

__all__ = [
    "LazyNodeSorting",
    "NodeSortType",
    "NodeSorter",
    "ObjectResources",
    "SortRecorder",
    "component_connection_counts",
    "isolate_ackers_to_end",
    "sort_executors",
    "sort_executors_by_connection_count",
    "sort_executors_by_proximity",
    "sort_object_resources",
    "storm_unassigned_order",
    "unassigned_ackers",
]
