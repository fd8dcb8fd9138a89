"""The named scheduling strategies and their lookup by class name.

* :class:`DefaultResourceAwareStrategy` — Storm's default (2.x): nodes re-sorted per executor, ``COMMON`` order
  (average % first).
* :class:`GenericResourceAwareStrategy` — the same search and order as the default in 2.x (kept as a name).
* :class:`DefaultResourceAwareStrategyOld` — the pre-2.3 default: nodes sorted once, for no executor, in
  ``DEFAULT_RAS`` order (minimum % first — the 1.x "subordinate resource" order); re-sorted after a backtrack.
* :class:`GenericResourceAwareStrategyOld` — nodes re-sorted per executor in ``GENERIC_RAS`` order (average %
  only).
* :class:`~.round_robin.RoundRobinResourceAwareStrategy` — see :mod:`.round_robin`.
* :data:`STRATEGIES` — simple and fully-qualified class names (``org.apache.storm.scheduler.resource.strategies.
  scheduling.X``; the pre-1.0 ``backtype.storm`` prefix too) to classes.
* :func:`strategy_class` — a name to its class, or ``None``.

Not implemented: ``ConstraintSolverStrategy``.
"""
from __future__ import annotations

from ..sorting.node_sorter import NodeSortType
from .base import BaseResourceAwareStrategy
from .round_robin import RoundRobinResourceAwareStrategy

__all__ = [
    "DefaultResourceAwareStrategy",
    "DefaultResourceAwareStrategyOld",
    "GenericResourceAwareStrategy",
    "GenericResourceAwareStrategyOld",
    "PACKAGE",
    "RoundRobinResourceAwareStrategy",
    "STRATEGIES",
    "strategy_class",
]

#: Java package of Storm's scheduling strategies.
PACKAGE = "org.apache.storm.scheduler.resource.strategies.scheduling"


class DefaultResourceAwareStrategy(BaseResourceAwareStrategy):
    """``DefaultResourceAwareStrategy`` (2.x default)."""

    sort_nodes_for_each_executor = True
    node_sort_type = NodeSortType.COMMON


class GenericResourceAwareStrategy(BaseResourceAwareStrategy):
    """``GenericResourceAwareStrategy``: identical to the default in 2.x."""

    sort_nodes_for_each_executor = True
    node_sort_type = NodeSortType.COMMON


class DefaultResourceAwareStrategyOld(BaseResourceAwareStrategy):
    """``DefaultResourceAwareStrategyOld``: sort once, minimum-percentage first."""

    sort_nodes_for_each_executor = False
    node_sort_type = NodeSortType.DEFAULT_RAS


class GenericResourceAwareStrategyOld(BaseResourceAwareStrategy):
    """``GenericResourceAwareStrategyOld``: sort per executor, average percentage only."""

    sort_nodes_for_each_executor = True
    node_sort_type = NodeSortType.GENERIC_RAS


_CLASSES: tuple[type[BaseResourceAwareStrategy], ...] = (
    DefaultResourceAwareStrategy,
    GenericResourceAwareStrategy,
    DefaultResourceAwareStrategyOld,
    GenericResourceAwareStrategyOld,
    RoundRobinResourceAwareStrategy,
)

#: Class name (simple, fully qualified, or with Storm's old ``backtype.storm`` prefix) → strategy class.
STRATEGIES: dict[str, type[BaseResourceAwareStrategy]] = {}
for _cls in _CLASSES:
    STRATEGIES[_cls.__name__] = _cls
    STRATEGIES[f"{PACKAGE}.{_cls.__name__}"] = _cls
    STRATEGIES[f"backtype.storm.scheduler.resource.strategies.scheduling.{_cls.__name__}"] = _cls


def strategy_class(name: str) -> type[BaseResourceAwareStrategy] | None:
    """The strategy class for a ``topology.scheduler.strategy`` value, or ``None`` when unknown."""
    return STRATEGIES.get(name.strip())
