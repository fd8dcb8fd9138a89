"""The input of ``clusteremu decide`` for Storm: one JSON object, checked field by field.

:func:`parse_request` turns the object into a :class:`DecideRequest` of plain, typed values, or raises
:class:`~clusteremu.base.errors.InputError` naming the field's path (``in.json: topologies[0].components[1].
parallelism: expected an integer``). Missing fields are errors, except those with a documented Storm default
(``defaults.yaml``), which are filled in and listed in :attr:`DecideRequest.defaults` for the explanation.
Keys other than those listed below are Storm conf keys: known ones (:data:`.config.KEYS`) are type-checked,
unknown ones kept as they are, as Storm keeps them.

Shape (see ``decide.py`` for the output)::

    {"config": {<daemon keys>},                      # optional; Storm defaults
     "nowSecs": int,
     "supervisors": [{"id", "host", "rack"?, "supervisor.cpu.capacity"?, "supervisor.memory.capacity.mb"?,
                      "supervisor.resources.map"?, "ports"?}],
     "topologies": [{"id", "name", "topology.submitter.user", "launchTimeSecs", "topology.priority"?,
                     "topology.worker.max.heap.size.mb"?, "topology.scheduler.strategy"?, <topology keys>?,
                     "components": [{"id", "type": "spout"|"bolt", "parallelism", "inputs"?,
                                     "topology.component.cpu.pcore.percent"?, "...onheap.memory.mb"?,
                                     "...offheap.memory.mb"?, "topology.component.resources.map"?}]}],
     "assignments": {"<topology id>": [{"component", "index", "supervisor", "port"}]}}   # optional
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

from clusteremu.base.errors import InputError

from . import registry
from .config import (
    DEFAULTS,
    KEYS,
    RESOURCE_AWARE_SCHEDULER_MAX_TOPOLOGY_SCHEDULING_ATTEMPTS,
    RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY,
    SUPERVISOR_CPU_CAPACITY,
    SUPERVISOR_MEMORY_CAPACITY_MB,
    SUPERVISOR_RESOURCES_MAP,
    SUPERVISOR_SLOTS_PORTS,
    TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT,
    TOPOLOGY_COMPONENT_RESOURCES_MAP,
    TOPOLOGY_COMPONENT_RESOURCES_OFFHEAP_MEMORY_MB,
    TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB,
    TOPOLOGY_PRIORITY,
    TOPOLOGY_SCHEDULER_STRATEGY,
    TOPOLOGY_SUBMITTER_USER,
    TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB,
    convert_value,
    read_config,
)

__all__ = [
    "AssignedExecutor",
    "ComponentSpec",
    "DecideRequest",
    "SupervisorSpec",
    "TopologySpec",
    "parse_request",
]

_COMPONENT_RESOURCE_KEYS = (
    TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT,
    TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB,
    TOPOLOGY_COMPONENT_RESOURCES_OFFHEAP_MEMORY_MB,
    TOPOLOGY_COMPONENT_RESOURCES_MAP,
)
_COMPONENT_KEYS = frozenset(("id", "type", "parallelism", "inputs", *_COMPONENT_RESOURCE_KEYS))
_TOPOLOGY_OWN = frozenset(("id", "name", "launchTimeSecs", "components"))
#: Daemon keys whose Storm default the explanation lists when the config leaves them out.
_LISTED_CONFIG = (
    RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY,
    RESOURCE_AWARE_SCHEDULER_MAX_TOPOLOGY_SCHEDULING_ATTEMPTS,
    "storm.worker.min.cpu.pcore.percent",
    "resource.aware.scheduler.user.pools",
)


@dataclass(frozen=True)
class SupervisorSpec:
    id: str
    host: str
    rack: str | None
    cpu: float
    memory_mb: float
    generic: dict[str, float]
    ports: tuple[int, ...]


@dataclass(frozen=True)
class ComponentSpec:
    id: str
    kind: str
    parallelism: int
    inputs: tuple[str, ...]
    resources: dict[str, Any]  # only the keys the input gave (the topology conf supplies the rest)


@dataclass(frozen=True)
class TopologySpec:
    id: str
    name: str
    launch_time: int
    strategy: str | None  # None: the caller's default strategy applies
    conf: dict[str, Any]  # the topology's Storm keys as given (type-checked)
    components: tuple[ComponentSpec, ...]


@dataclass(frozen=True)
class AssignedExecutor:
    component: str
    index: int
    supervisor: str
    port: int


@dataclass(frozen=True)
class DecideRequest:
    """A checked ``decide`` input. ``config`` is typed with Storm defaults filled in; ``defaults`` lists
    ``{"path", "value"}`` for every default applied."""

    config: dict[str, Any]
    now_secs: int
    supervisors: tuple[SupervisorSpec, ...]
    topologies: tuple[TopologySpec, ...]
    assignments: dict[str, tuple[AssignedExecutor, ...]]
    defaults: list[dict[str, Any]] = field(default_factory=list)


class _Reader:
    """Field access with JSON paths in errors and a record of the defaults applied."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.defaults: list[dict[str, Any]] = []

    def error(self, path: str, reason: str) -> InputError:
        return InputError(f"{self.where}: {path}" if path else self.where, reason)

    def obj(self, value: Any, path: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error(path, f"expected an object, got {_kind(value)}")
        return value

    def lst(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.error(path, f"expected a list, got {_kind(value)}")
        return value

    def need(self, obj: Mapping[str, Any], key: str, path: str) -> Any:
        if key not in obj:
            raise self.error(_join(path, key), "missing")
        return obj[key]

    def string(self, value: Any, path: str, *, non_empty: bool = True) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"expected a string, got {_kind(value)}")
        if non_empty and not value:
            raise self.error(path, "expected a non-empty string")
        return value

    def integer(self, value: Any, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, "expected an integer")
        return value

    def number(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.error(path, "expected a number")
        return float(value)

    def storm_key(self, obj: Mapping[str, Any], key: str, path: str) -> Any:
        """A Storm key's typed value, or its Storm default (recorded) when absent."""
        full = _join(path, key)
        if key in obj:
            spec = KEYS[key]
            try:
                return convert_value(spec.kind, obj[key], full, spec.nullable)
            except InputError as err:
                raise self.error(err.where, err.reason) from None
        default = DEFAULTS[key]
        self.defaults.append({"path": full, "value": default})
        return dict(default) if isinstance(default, dict) else (list(default) if isinstance(default, list) else default)


def parse_request(obj: Any, where: str) -> DecideRequest:
    """Check a ``decide`` input object; ``where`` names the input (a file name) in errors."""
    r = _Reader(where)
    root = r.obj(obj, "")
    config = _config(r, root)
    now = r.integer(r.need(root, "nowSecs", ""), "nowSecs")
    sups = tuple(_supervisor(r, s, f"supervisors[{i}]")
                 for i, s in enumerate(r.lst(r.need(root, "supervisors", ""), "supervisors")))
    seen: set[str] = set()
    for i, sup in enumerate(sups):
        if sup.id in seen:
            raise r.error(f"supervisors[{i}].id", f"supervisor {sup.id!r} listed twice")
        seen.add(sup.id)
    topos = tuple(_topology(r, t, f"topologies[{i}]")
                  for i, t in enumerate(r.lst(r.need(root, "topologies", ""), "topologies")))
    ids: set[str] = set()
    names: set[str] = set()
    for i, td in enumerate(topos):
        if td.id in ids:
            raise r.error(f"topologies[{i}].id", f"topology id {td.id!r} listed twice")
        if td.name in names:
            raise r.error(f"topologies[{i}].name", f"topology name {td.name!r} listed twice")
        ids.add(td.id)
        names.add(td.name)
    assignments = _assignments(r, root.get("assignments"), sups, topos)
    return DecideRequest(config, now, sups, topos, assignments, r.defaults)


def _config(r: _Reader, root: Mapping[str, Any]) -> dict[str, Any]:
    raw = root.get("config")
    raw = {} if raw is None else dict(r.obj(raw, "config"))
    config = read_config(raw, f"{r.where}: config")
    for key in _LISTED_CONFIG:
        if key not in raw:
            r.defaults.append({"path": f"config.{key}", "value": config[key]})
    generation = registry.generation_of(config)
    eviction = config.get(registry.EVICTION_STRATEGY_KEY)
    if eviction is not None:
        path = f"config.{registry.EVICTION_STRATEGY_KEY}"
        try:
            registry.eviction_strategy(r.string(eviction, path))
        except KeyError as err:
            raise r.error(path, err.args[0]) from None
    priority = config[RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY]
    try:
        registry.priority_strategy(priority, generation)
    except KeyError as err:
        raise r.error(f"config.{RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY}", err.args[0]) from None
    if config[RESOURCE_AWARE_SCHEDULER_MAX_TOPOLOGY_SCHEDULING_ATTEMPTS] < 1:
        # Storm would fail the whole round with a NullPointerException
        raise r.error(f"config.{RESOURCE_AWARE_SCHEDULER_MAX_TOPOLOGY_SCHEDULING_ATTEMPTS}", "must be >= 1")
    return config


def _supervisor(r: _Reader, value: Any, path: str) -> SupervisorSpec:
    s = r.obj(value, path)
    sup_id = r.string(r.need(s, "id", path), f"{path}.id")
    host = r.string(r.need(s, "host", path), f"{path}.host")
    rack = None
    if s.get("rack") is not None:
        rack = r.string(s["rack"], f"{path}.rack")
    else:
        r.defaults.append({"path": f"{path}.rack", "value": "/default-rack"})
    cpu = r.storm_key(s, SUPERVISOR_CPU_CAPACITY, path)
    mem = r.storm_key(s, SUPERVISOR_MEMORY_CAPACITY_MB, path)
    generic = r.storm_key(s, SUPERVISOR_RESOURCES_MAP, path)
    if "ports" in s:
        ports = [r.integer(p, f"{path}.ports[{i}]") for i, p in enumerate(r.lst(s["ports"], f"{path}.ports"))]
    else:
        ports = list(DEFAULTS[SUPERVISOR_SLOTS_PORTS])
        r.defaults.append({"path": f"{path}.ports", "value": ports})
    if len(set(ports)) != len(ports):
        raise r.error(f"{path}.ports", f"a port is listed twice: {ports}")
    for name, amount in [("supervisor.cpu.capacity", cpu), ("supervisor.memory.capacity.mb", mem),
                         *((f"supervisor.resources.map.{k}", v) for k, v in generic.items())]:
        if amount < 0:
            raise r.error(f"{path}.{name}", "must be >= 0")
    return SupervisorSpec(sup_id, host, rack, cpu, mem, generic, tuple(ports))


def _topology(r: _Reader, value: Any, path: str) -> TopologySpec:
    t = r.obj(value, path)
    topo_id = r.string(r.need(t, "id", path), f"{path}.id")
    name = r.string(r.need(t, "name", path), f"{path}.name")
    r.string(r.need(t, TOPOLOGY_SUBMITTER_USER, path), f"{path}.{TOPOLOGY_SUBMITTER_USER}")
    launch = r.integer(r.need(t, "launchTimeSecs", path), f"{path}.launchTimeSecs")
    raw_conf = {k: v for k, v in t.items() if k not in _TOPOLOGY_OWN}
    read_config(raw_conf, f"{r.where}: {path}")  # type-checks every known Storm key
    strategy = None
    if TOPOLOGY_SCHEDULER_STRATEGY in raw_conf:
        strategy = r.string(raw_conf.pop(TOPOLOGY_SCHEDULER_STRATEGY), f"{path}.{TOPOLOGY_SCHEDULER_STRATEGY}")
    for key in (TOPOLOGY_PRIORITY, TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB):
        if key not in raw_conf:
            r.defaults.append({"path": f"{path}.{key}", "value": DEFAULTS[key]})
    comps_raw = r.lst(r.need(t, "components", path), f"{path}.components")
    comps = tuple(_component(r, c, f"{path}.components[{j}]", raw_conf) for j, c in enumerate(comps_raw))
    ids = [c.id for c in comps]
    for j, comp in enumerate(comps):
        if comp.id in ids[:j]:
            raise r.error(f"{path}.components[{j}].id", f"component {comp.id!r} listed twice")
        for k, parent in enumerate(comp.inputs):
            if parent not in ids:
                raise r.error(f"{path}.components[{j}].inputs[{k}]", f"{parent!r} is not a component of {name}")
    return TopologySpec(topo_id, name, launch, strategy, raw_conf, comps)


def _component(r: _Reader, value: Any, path: str, topo_conf: Mapping[str, Any]) -> ComponentSpec:
    c = r.obj(value, path)
    for key in c:
        if key not in _COMPONENT_KEYS:
            raise r.error(f"{path}.{key}", f"unknown component field; expected one of {sorted(_COMPONENT_KEYS)}")
    comp_id = r.string(r.need(c, "id", path), f"{path}.id")
    kind = r.string(r.need(c, "type", path), f"{path}.type")
    if kind not in ("spout", "bolt"):
        raise r.error(f"{path}.type", f"expected \"spout\" or \"bolt\", got {kind!r}")
    parallelism = r.integer(r.need(c, "parallelism", path), f"{path}.parallelism")
    if parallelism < 0:
        raise r.error(f"{path}.parallelism", "must be >= 0")
    if "inputs" in c:
        inputs = tuple(r.string(x, f"{path}.inputs[{k}]") for k, x in enumerate(r.lst(c["inputs"], f"{path}.inputs")))
    else:
        inputs = ()
        r.defaults.append({"path": f"{path}.inputs", "value": []})
    resources: dict[str, Any] = {}
    for key in _COMPONENT_RESOURCE_KEYS:
        full = f"{path}.{key}"
        if key in c:
            spec = KEYS[key]
            try:
                resources[key] = convert_value(spec.kind, c[key], full)
            except InputError as err:
                raise r.error(err.where, err.reason) from None
            amounts = resources[key].values() if isinstance(resources[key], dict) else [resources[key]]
            if any(a < 0 for a in amounts):
                raise r.error(full, "must be >= 0")
        else:
            # Storm: the topology conf's value, itself defaulted from defaults.yaml
            own = topo_conf.get(key)
            value_used = own if own is not None else DEFAULTS[key]
            r.defaults.append({"path": full, "value": value_used})
    return ComponentSpec(comp_id, kind, parallelism, inputs, resources)


def _assignments(r: _Reader, value: Any, sups: tuple[SupervisorSpec, ...],
                 topos: tuple[TopologySpec, ...]) -> dict[str, tuple[AssignedExecutor, ...]]:
    if value is None:
        return {}
    raw = r.obj(value, "assignments")
    by_id = {t.id: t for t in topos}
    ports = {s.id: set(s.ports) for s in sups}
    slot_owner: dict[tuple[str, int], str] = {}
    out: dict[str, tuple[AssignedExecutor, ...]] = {}
    for topo_id, entries in raw.items():
        path = f"assignments.{topo_id}"
        td = by_id.get(topo_id)
        if td is None:
            raise r.error(path, "not the id of a topology in \"topologies\"")
        parallelism = {c.id: c.parallelism for c in td.components}
        seen: set[tuple[str, int]] = set()
        rows: list[AssignedExecutor] = []
        for i, entry in enumerate(r.lst(entries, path)):
            p = f"{path}[{i}]"
            e = r.obj(entry, p)
            comp = r.string(r.need(e, "component", p), f"{p}.component")
            index = r.integer(r.need(e, "index", p), f"{p}.index")
            sup = r.string(r.need(e, "supervisor", p), f"{p}.supervisor")
            port = r.integer(r.need(e, "port", p), f"{p}.port")
            if comp not in parallelism:
                raise r.error(f"{p}.component", f"{comp!r} is not a component of {td.name}")
            if not 0 <= index < parallelism[comp]:
                raise r.error(f"{p}.index", f"expected 0..{parallelism[comp] - 1} (parallelism of {comp})")
            if sup not in ports:
                raise r.error(f"{p}.supervisor", f"{sup!r} is not a supervisor in \"supervisors\"")
            if port not in ports[sup]:
                raise r.error(f"{p}.port", f"{port} is not a port of supervisor {sup}")
            if (comp, index) in seen:
                raise r.error(p, f"executor {comp}[{index}] is assigned twice")
            owner = slot_owner.setdefault((sup, port), topo_id)
            if owner != topo_id:
                raise r.error(p, f"slot {sup}:{port} is already used by topology {owner} (Storm never shares one)")
            seen.add((comp, index))
            rows.append(AssignedExecutor(comp, index, sup, port))
        out[topo_id] = tuple(rows)
    return out


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)
