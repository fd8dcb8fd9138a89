"""The registry of modelled systems: every system (Pulsar, RocketMQ, Storm, the kernel's heartbeat model, a user's
own) is one :class:`System` plug-in, found through the ``clusteremu.systems`` entry point group.

Components:

* :class:`Suite`: a named list of built-in scenarios swept together;
* :class:`System`: what a system contributes, as ``"module:attribute"`` targets that are imported only when used
  (so a system whose analysis needs Spark costs nothing to a run, and the kernel imports no system);
* :func:`systems` / :func:`system`: the registered systems, by name (``scenario.model`` of a scenario);
  :func:`broken`: entry points that failed to load (skipped, and named when used);
* :func:`register` / :func:`unregister`: the documented hook for a system that is not installed (tests, notebooks);
* :func:`reload`: read the entry points again;
* :func:`load`: import a target.

A package registers its system in its ``pyproject.toml``, exactly as clusteremu registers its built-in ones::

    [project.entry-points."clusteremu.systems"]
    mysystem = "mypackage.system:SYSTEM"

The kernel reads only ``name``, ``model`` and ``events``; the tools read ``figures`` and ``rating``; the CLI reads
the rest. A target left ``None`` means the system does not offer it (``decide`` then says so for that system).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

__all__ = ["ENTRY_POINT_GROUP", "Suite", "System", "broken", "generation", "load", "register", "reload", "system", "systems", "unregister"]

#: The entry point group a package registers its systems in.
ENTRY_POINT_GROUP = "clusteremu.systems"


@dataclass(frozen=True)
class Suite:
    """A named list of a system's built-in scenarios that ``clusteremu sweep --suite NAME`` runs together."""

    scenarios: tuple[str, ...]
    description: str


@dataclass(frozen=True)
class System:
    """One modelled system.

    ``name`` is what scenarios name in ``scenario.model``. Targets (``"module:attribute"``):

    * ``model``: the model object: ``sections`` (the scenario schema of its own sections), ``agents(scenario)``
      and ``network_conditions(scenario)`` (see :mod:`clusteremu.emulator.models`);
    * ``figures``: a :class:`clusteremu.tools.analysis.ModelFigures` subclass (its figures, tables, report
      panels); ``None``: a run gets the figures every trace has;
    * ``rating``: the comparison rules of ``compare`` (strategy label, rating tables), see
      :class:`clusteremu.tools.compare.Rating`;
    * ``decide``: the ``decide`` adapter (see :mod:`clusteremu.cli.decide`);
    * ``strategies``: a module with ``names()`` and ``canonical_name(name)`` over the system's strategy names
      (simple and fully-qualified Java class names), which ``decide`` uses to find the system of a strategy;
    * ``views``: a class of trace views a test or analysis builds over a :class:`clusteremu.emulator.trace.query.Trace`
      (``PulsarViews(trace).owner_at(bundle, t)``);
    * ``suites``: a mapping of sweep suite name → :class:`Suite`.

    ``events`` are modules imported to declare the system's event kinds. ``entity_keys`` are the event fields
    that name an entity of the system (a bundle, a queue, a topology), in the order that picks an event's
    grouping key in trace queries; ``entity_fields`` are more fields an ``entity=`` filter matches (a broker
    named in a lookup) without grouping by them;
    ``library`` is the package (a folder, with or without ``__init__.py``) that holds its built-in scenarios
    (``*.toml``).
    """

    name: str
    description: str
    model: str
    events: tuple[str, ...] = ()
    entity_keys: tuple[str, ...] = ()
    entity_fields: tuple[str, ...] = ()
    figures: str | None = None
    rating: str | None = None
    decide: str | None = None
    strategies: str | None = None
    views: str | None = None
    suites: str | None = None
    library: str | None = None

    def library_dir(self) -> Path | None:
        """The folder of the system's built-in scenarios, or None."""
        if self.library is None:
            return None
        return Path(list(importlib.import_module(self.library).__path__)[0])


_REGISTERED: dict[str, System] = {}
_LOADED: dict[str, System] | None = None
_BROKEN: dict[str, str] = {}
_GENERATION = 0  # bumped whenever the set of systems may change, for caches derived from it


def generation() -> int:
    """A number that changes whenever the registered systems may have changed (for caches derived from them)."""
    return _GENERATION


def _from_entry_points() -> tuple[dict[str, System], dict[str, str]]:
    """The entry points' systems, and the entry points that could not be loaded (name → why): one broken
    plug-in must not take the others down; naming it is an error only where it is used."""
    found: dict[str, System] = {}
    broken: dict[str, str] = {}
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            obj = ep.load()
        except Exception as err:  # noqa: BLE001 - any import error of a plug-in
            broken[ep.name] = f"entry point {ep.value!r} cannot be loaded: {type(err).__name__}: {err}"
            continue
        if not isinstance(obj, System):
            broken[ep.name] = f"entry point {ep.value!r} gives {type(obj).__name__}, not System"
        elif obj.name != ep.name:
            broken[ep.name] = f"entry point {ep.name!r} gives the system named {obj.name!r}"
        else:
            found[obj.name] = obj
    return found, broken


def systems() -> dict[str, System]:
    """Every registered system by name, in name order: the entry points', then :func:`register`'s."""
    global _LOADED, _BROKEN
    if _LOADED is None:
        _LOADED, _BROKEN = _from_entry_points()
    merged = {**_LOADED, **_REGISTERED}
    return dict(sorted(merged.items()))


def system(name: str) -> System:
    """The system named ``name``; ``KeyError`` listing the known ones."""
    found = systems()
    try:
        return found[name]
    except KeyError:
        if name in _BROKEN:
            raise KeyError(f"model {name!r} is registered but broken: {_BROKEN[name]}") from None
        raise KeyError(f"unknown model {name!r}; known: {', '.join(found)}") from None


def broken() -> dict[str, str]:
    """Entry points of the group that could not be loaded, by name, with the reason."""
    systems()
    return dict(_BROKEN)


def register(sys_: System) -> None:
    """Register ``sys_`` in this process (it wins over an entry point of the same name). Worker processes
    started by ``--agents procs:N`` know only the entry points' systems: a system used with them must be
    installed (or its ``*.dist-info/entry_points.txt`` be on the workers' ``sys.path``)."""
    if not isinstance(sys_, System):
        raise TypeError(f"register() takes a System, not {type(sys_).__name__}")
    global _GENERATION
    _REGISTERED[sys_.name] = sys_
    _GENERATION += 1


def unregister(name: str) -> None:
    """Forget a system registered with :func:`register` (entry points stay)."""
    global _GENERATION
    _REGISTERED.pop(name, None)
    _GENERATION += 1


def reload() -> None:
    """Read the entry points again (after a package was installed or put on ``sys.path`` in this process)."""
    global _LOADED, _GENERATION
    _LOADED = None
    _GENERATION += 1


def load(target: str) -> Any:
    """Import ``"module:attribute"`` (or ``"module"``) and return the attribute (or the module)."""
    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    for part in filter(None, attr.split(".")):
        obj = getattr(obj, part)
    return obj
