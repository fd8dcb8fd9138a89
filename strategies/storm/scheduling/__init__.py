"""Storm's resource-aware scheduling strategies (``IStrategy`` implementations).

* :mod:`.result` — ``SchedulingResult`` and ``SchedulingStatus``.
* :mod:`.base` — the shared backtracking search (``BaseResourceAwareStrategy``).
* :mod:`.ackers` — binding ackers to new workers (``topology.ras.acker.executors.per.worker``).
* :mod:`.round_robin` — ``RoundRobinResourceAwareStrategy``.
* :mod:`.strategies` — the named strategies and ``STRATEGIES`` by class name.
"""
from __future__ import annotations

from .base import BaseResourceAwareStrategy, max_state_search
from .result import SchedulingResult, SchedulingStatus
from .round_robin import RoundRobinResourceAwareStrategy
from .strategies import (
    PACKAGE,
    STRATEGIES,
    DefaultResourceAwareStrategy,
    DefaultResourceAwareStrategyOld,
    GenericResourceAwareStrategy,
    GenericResourceAwareStrategyOld,
    strategy_class,
)

__all__ = [
    "BaseResourceAwareStrategy",
    "DefaultResourceAwareStrategy",
    "DefaultResourceAwareStrategyOld",
    "GenericResourceAwareStrategy",
    "GenericResourceAwareStrategyOld",
    "PACKAGE",
    "RoundRobinResourceAwareStrategy",
    "STRATEGIES",
    "SchedulingResult",
    "SchedulingStatus",
    "max_state_search",
    "strategy_class",
]
