"""Making room for a topology that does not fit.

* 2.x: :func:`select_evictions` — whole topologies from the end of the priority order, with the resource
  bookkeeping and cluster-wide sum check of :class:`SchedulingResources`.
* 1.x: :class:`DefaultEvictionStrategy` — one topology at a time by the users' guarantees
  (:class:`V1Eviction` says which and why).
"""
from __future__ import annotations

from .reverse_order import select_evictions
from .scheduling_resources import SchedulingResources
from .v1_default import DefaultEvictionStrategy, V1Eviction

__all__ = ["DefaultEvictionStrategy", "SchedulingResources", "V1Eviction", "select_evictions"]
