"""Storm 2.x eviction: whole topologies from the end of the round's priority order.

There is no eviction strategy class in 2.x (``DefaultEvictionStrategy`` was removed by STORM-2792); the
scheduling round itself, after an attempt failed for lack of resources, walks the ordered topologies from the
last one towards the failed one — never reaching it or anything ordered before it — and evicts every one that
still holds slots, until the evicted requests cover what the topology still needs and the cluster's free
resources would cover its whole request. Users play no part: a user's own lower-priority topologies are
victims like anyone else's, and the last topology of the order can never evict anything.
"""
from __future__ import annotations

from typing import Callable, Sequence

from ..resources import ResourceRequest
from .scheduling_resources import SchedulingResources

__all__ = ["select_evictions"]


def select_evictions(
    order: Sequence[str],
    topology_id: str,
    holds_slots: Callable[[str], bool],
    resources_of: Callable[[str], tuple[ResourceRequest, float]],
    resources: SchedulingResources,
) -> list[str]:
    """The topologies to evict for ``topology_id``, in eviction order (possibly none).

    ``order``: the round's topology ids, most important first; ``holds_slots(id)``: the topology still has
    workers in the working cluster; ``resources_of(id)``: its placed executors' requests and its workers'
    charged memory. ``resources`` is updated as each victim is counted (``adjustResourcesForEvictedTopology``).
    """
    reversed_order = list(reversed(order))
    own_index = reversed_order.index(topology_id)
    evicted: list[str] = []
    for victim in reversed_order[:own_index]:
        if not holds_slots(victim):
            continue
        request, memory = resources_of(victim)
        resources.adjust_for_evicted(request, memory)
        evicted.append(victim)
        if resources.can_schedule():
            break  # enough to hope: do not evict more than needed
    return evicted
