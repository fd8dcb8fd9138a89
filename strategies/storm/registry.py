"""Storm strategies by Java class name, simple (``FIFOSchedulingPriorityStrategy``) or fully qualified
(``org.apache.storm.scheduler.resource.strategies.priority.FIFOSchedulingPriorityStrategy``).

Three kinds, as Storm's config keys name them:

* scheduling (``topology.scheduler.strategy``): the classes of :data:`..scheduling.STRATEGIES`;
* priority (``resource.aware.scheduler.priority.strategy``);
* eviction (``resource.aware.scheduler.eviction.strategy``) — a Storm 1.x key: 2.x has no eviction class.

Generation: Storm 2.x behaviour is the default. A daemon conf that sets
``resource.aware.scheduler.eviction.strategy`` (only Storm 1.x reads it; its one class is
``DefaultEvictionStrategy``) selects the 1.x round, in which ``DefaultSchedulingPriorityStrategy`` means the 1.x
"% of guarantee" class and ``DefaultResourceAwareStrategy`` the 1.x placement (modelled by
``DefaultResourceAwareStrategyOld``, the pre-2.3 node order). Unknown names raise ``KeyError`` listing the
known ones.
"""
from __future__ import annotations

from typing import Any, Literal, Mapping

from .eviction.v1_default import DefaultEvictionStrategy
from .priority.fifo import FIFOSchedulingPriorityStrategy
from .priority.generic import GenericResourceAwareSchedulingPriorityStrategy
from .priority.simulated import DefaultSchedulingPriorityStrategy
from .priority.v1_default import DefaultSchedulingPriorityStrategy as DefaultSchedulingPriorityStrategyV1

__all__ = [
    "EVICTION_STRATEGY_KEY",
    "Generation",
    "Kind",
    "canonical_name",
    "eviction_strategy",
    "generation_of",
    "names",
    "priority_strategy",
    "scheduling_strategy",
]

Generation = Literal["2.x", "1.x"]
Kind = Literal["scheduling", "priority", "eviction"]

#: The Storm 1.x daemon key naming the eviction strategy; setting it selects the 1.x round.
EVICTION_STRATEGY_KEY = "resource.aware.scheduler.eviction.strategy"

_PKG = "org.apache.storm.scheduler.resource.strategies."
_PACKAGES: dict[Kind, str] = {
    "scheduling": _PKG + "scheduling.",
    "priority": _PKG + "priority.",
    "eviction": _PKG + "eviction.",
}

_PRIORITY: dict[Generation, dict[str, type]] = {
    "2.x": {
        "DefaultSchedulingPriorityStrategy": DefaultSchedulingPriorityStrategy,
        "FIFOSchedulingPriorityStrategy": FIFOSchedulingPriorityStrategy,
        "GenericResourceAwareSchedulingPriorityStrategy": GenericResourceAwareSchedulingPriorityStrategy,
    },
    "1.x": {"DefaultSchedulingPriorityStrategy": DefaultSchedulingPriorityStrategyV1},
}
_EVICTION: dict[str, type] = {"DefaultEvictionStrategy": DefaultEvictionStrategy}
#: Storm 1.2's only placement class, and the model of it.
_V1_SCHEDULING = {"DefaultResourceAwareStrategy": "DefaultResourceAwareStrategyOld"}


def generation_of(conf: Mapping[str, Any]) -> Generation:
    """"1.x" when the daemon conf names an eviction strategy (a key only Storm 1.x reads), else "2.x"."""
    return "1.x" if conf.get(EVICTION_STRATEGY_KEY) is not None else "2.x"


def _simple(name: str, kind: Kind) -> str:
    """The simple class name of a simple or fully-qualified ``name`` of ``kind``; ``KeyError`` for a
    fully-qualified name in another package."""
    if "." not in name:
        return name
    package = _PACKAGES[kind]
    if not name.startswith(package) or "." in name[len(package):]:
        raise KeyError(name)
    return name[len(package):]


def _scheduling_classes() -> dict[str, type]:
    from .scheduling import STRATEGIES  # the model's module; imported when first needed

    out: dict[str, type] = {}
    for key, cls in STRATEGIES.items():
        out[key.rsplit(".", 1)[-1]] = cls
    return out


def _table(kind: Kind, generation: Generation) -> dict[str, Any]:
    if kind == "priority":
        return _PRIORITY[generation]
    if kind == "eviction":
        return _EVICTION if generation == "1.x" else {}
    classes = _scheduling_classes()
    if generation == "2.x":
        return classes
    return {simple: classes[model] for simple, model in _V1_SCHEDULING.items() if model in classes}


def names(kind: Kind, generation: Generation = "2.x") -> list[str]:
    """Every accepted name of ``kind`` in ``generation``: simple names, then fully-qualified ones."""
    simple = sorted(_table(kind, generation))
    return simple + [_PACKAGES[kind] + s for s in simple]


def _lookup(kind: Kind, name: str, generation: Generation) -> Any:
    table = _table(kind, generation)
    try:
        return table[_simple(name, kind)]
    except KeyError:
        known = ", ".join(names(kind, generation)) or "none (Storm 2.x has no eviction strategy class)"
        raise KeyError(f"unknown Storm {generation} {kind} strategy {name!r}; known: {known}") from None


def canonical_name(kind: Kind, name: str, generation: Generation = "2.x") -> str:
    """The fully-qualified Java class name for a known simple or fully-qualified ``name``."""
    _lookup(kind, name, generation)
    return _PACKAGES[kind] + _simple(name, kind)


def scheduling_strategy(name: str, generation: Generation = "2.x") -> type:
    """The scheduling strategy class for ``topology.scheduler.strategy`` = ``name``."""
    return _lookup("scheduling", name, generation)


def priority_strategy(name: str, generation: Generation = "2.x") -> Any:
    """A new priority strategy for ``resource.aware.scheduler.priority.strategy`` = ``name``."""
    return _lookup("priority", name, generation)()


def eviction_strategy(name: str) -> DefaultEvictionStrategy:
    """A new 1.x eviction strategy for ``resource.aware.scheduler.eviction.strategy`` = ``name``."""
    return _lookup("eviction", name, "1.x")()
