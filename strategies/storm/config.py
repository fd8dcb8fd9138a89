"""Storm configuration keys read by the Resource Aware Scheduler, their defaults and a typed reader.

Keys are Storm's own yaml names (``conf/defaults.yaml`` of Storm 2.8 / master @ 73da988), so users paste their
``storm.yaml`` and topology confs as they are. Units are the ones in the names: CPU in percent of one physical
core (100 = one core), memory in MB.

* :class:`ConfigKey` — one key: name, default, kind, whether it is a daemon or a topology key, a one-line doc.
* :data:`KEYS` — every key the RAS data model, strategies, priority, eviction and the scheduling round read.
  Keys that ``defaults.yaml`` does not list take the default Storm's code applies (``ObjectReader.getInt(x, 5)``
  and the like), noted in the doc; ``None`` means "unset" where Storm distinguishes it.
* :data:`DEFAULTS` — ``{name: default}`` from :data:`KEYS`.
* :func:`read_config` — a raw dict (yaml/json) to a dict of typed values, defaults filled in; a value of the
  wrong type raises :class:`clusteremu.base.errors.InputError` naming the key. Unknown keys are kept as they are.
* :func:`convert_value` — the conversion of one value to a key's kind (also used by the topology/cluster
  builders for per-component overrides).
* Constants for the key names used in code (``TOPOLOGY_PRIORITY`` ...), the resource names of Storm's
  ``Constants`` (``CPU``, ``MEMORY``, ``ONHEAP``, ``OFFHEAP``), ``ACKER_COMPONENT_ID`` and ``DEFAULT_RACK``.

Departures: Storm's ``ObjectReader`` accepts strings for numbers ("10") and anything for booleans; here
numbers must be numbers (bool is not a number) or numeric strings, booleans must be ``true``/``false``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Mapping

from clusteremu.base.errors import InputError

__all__ = [
    "ACKER_COMPONENT_ID",
    "CPU",
    "ConfigKey",
    "DEFAULT_RACK",
    "DEFAULTS",
    "KEYS",
    "Kind",
    "MEMORY",
    "OFFHEAP",
    "ONHEAP",
    "convert_value",
    "read_config",
]

#: Storm's ``Constants.COMMON_*_RESOURCE_NAME``: the normalized names of the four built-in resources.
CPU = "cpu.pcore.percent"
MEMORY = "memory.mb"
ONHEAP = "onheap.memory.mb"
OFFHEAP = "offheap.memory.mb"
#: ``Acker.ACKER_COMPONENT_ID``: system component of the ackers.
ACKER_COMPONENT_ID = "__acker"
#: ``DNSToSwitchMapping.DEFAULT_RACK``: the rack of a host without a rack mapping.
DEFAULT_RACK = "/default-rack"

Kind = Literal["double", "int", "bool", "str", "str_list", "int_list", "number_map", "user_pools"]


@dataclass(frozen=True)
class ConfigKey:
    """One Storm config key. ``scope`` is ``"daemon"`` (nimbus/supervisor ``storm.yaml``) or ``"topology"``
    (topology conf, defaulted from the daemon conf); ``nullable`` keys accept ``None`` (null in yaml)."""

    name: str
    default: Any
    kind: Kind
    scope: Literal["daemon", "topology"]
    doc: str
    nullable: bool = False


_PKG = "org.apache.storm.scheduler.resource.strategies."

_KEY_LIST: tuple[ConfigKey, ...] = (
    # --- supervisor offer
    ConfigKey("supervisor.cpu.capacity", 400.0, "double", "daemon", "CPU a supervisor offers (100 = one core)"),
    ConfigKey("supervisor.memory.capacity.mb", 4096.0, "double", "daemon", "memory a supervisor offers, MB"),
    ConfigKey("supervisor.resources.map", {}, "number_map", "daemon",
              "generic resources a supervisor offers, e.g. {gpu.count: 2} (not in defaults.yaml: empty)"),
    ConfigKey("supervisor.slots.ports", [6700, 6701, 6702, 6703], "int_list", "daemon",
              "worker ports of a supervisor: one slot per port"),
    # --- component requests
    ConfigKey("topology.component.cpu.pcore.percent", 10.0, "double", "topology", "CPU per executor"),
    ConfigKey("topology.component.resources.onheap.memory.mb", 128.0, "double", "topology",
              "on-heap memory per executor, MB"),
    ConfigKey("topology.component.resources.offheap.memory.mb", 0.0, "double", "topology",
              "off-heap memory per executor, MB"),
    ConfigKey("topology.component.resources.map", {}, "number_map", "topology",
              "default generic resources per executor (not in defaults.yaml: empty)"),
    ConfigKey("topology.acker.cpu.pcore.percent", None, "double", "topology",
              "CPU per acker executor; unset = the component default", nullable=True),
    ConfigKey("topology.acker.resources.onheap.memory.mb", None, "double", "topology",
              "on-heap per acker executor; unset = the component default", nullable=True),
    ConfigKey("topology.acker.resources.offheap.memory.mb", None, "double", "topology",
              "off-heap per acker executor; unset = the component default", nullable=True),
    ConfigKey("topology.worker.max.heap.size.mb", 768.0, "double", "topology",
              "cap on the summed on-heap requests of the executors of one worker, MB"),
    # --- topology identity and scheduling
    ConfigKey("topology.name", None, "str", "topology", "topology name", nullable=True),
    ConfigKey("topology.priority", 29, "int", "topology", "priority, 0 = most important"),
    ConfigKey("topology.scheduler.strategy", _PKG + "scheduling.DefaultResourceAwareStrategy", "str", "topology",
              "scheduling strategy class (simple or fully-qualified name)"),
    ConfigKey("topology.submitter.user", None, "str", "topology",
              "submitting user (set by nimbus; not in defaults.yaml)", nullable=True),
    ConfigKey("topology.workers", 1, "int", "topology", "requested workers (ignored by RAS strategies)"),
    ConfigKey("topology.acker.executors", None, "int", "topology",
              "acker executors; null = one per worker (topology.workers)", nullable=True),
    ConfigKey("topology.ras.one.executor.per.worker", False, "bool", "topology",
              "at most one executor per worker"),
    ConfigKey("topology.ras.one.component.per.worker", False, "bool", "topology",
              "executors of one component only per worker"),
    ConfigKey("topology.ras.acker.executors.per.worker", 1, "int", "topology",
              "ackers bound to each new worker (acker binding: not modelled by the strategies here)"),
    ConfigKey("topology.ras.constraint.max.state.search", 10000, "int", "topology",
              "per-topology bound on the states the backtracking search may visit"),
    ConfigKey("topology.ras.order.executors.by.proximity.needs", False, "bool", "topology",
              "order executors by ExecSorterByProximity instead of by connection count (not in defaults.yaml)"),
    ConfigKey("topology.scheduler.favored.nodes", None, "str_list", "topology",
              "hostnames tried first", nullable=True),
    ConfigKey("topology.scheduler.unfavored.nodes", None, "str_list", "topology",
              "hostnames tried last", nullable=True),
    ConfigKey("topology.isolated.machines", None, "int", "topology",
              "RoundRobinResourceAwareStrategy: number of nodes to keep (not in defaults.yaml)", nullable=True),
    # --- daemon: RAS
    ConfigKey("resource.aware.scheduler.user.pools", {}, "user_pools", "daemon",
              "per-user guarantees {user: {cpu: .., memory: .., <generic>: ..}} (not in defaults.yaml: empty)"),
    ConfigKey("resource.aware.scheduler.priority.strategy", _PKG + "priority.DefaultSchedulingPriorityStrategy",
              "str", "daemon", "scheduling priority strategy class"),
    ConfigKey("resource.aware.scheduler.max.topology.scheduling.attempts", 5, "int", "daemon",
              "scheduling attempts (with eviction) per topology and round (code default 5)"),
    ConfigKey("resource.aware.scheduler.constraint.max.state.search", 100000, "int", "daemon",
              "daemon bound on searched states; the strategy uses min(this, the topology's)"),
    ConfigKey("scheduling.timeout.seconds.per.topology", 60, "int", "daemon",
              "wall-clock budget per topology (code default 60); not modelled: strategies here are pure"),
    ConfigKey("storm.worker.min.cpu.pcore.percent", 0.0, "double", "daemon",
              "each worker is charged max(sum of its executors' CPU, this)"),
    # --- daemon: timing (read by the agents)
    ConfigKey("nimbus.monitor.freq.secs", 10, "int", "daemon", "nimbus scheduling round period, s"),
    ConfigKey("nimbus.supervisor.timeout.secs", 60, "int", "daemon", "supervisor considered dead after, s"),
    ConfigKey("supervisor.heartbeat.frequency.secs", 5, "int", "daemon", "supervisor heartbeat period, s"),
)

#: Every key, by name.
KEYS: dict[str, ConfigKey] = {k.name: k for k in _KEY_LIST}
#: ``{name: default}`` (mutable defaults are copied by :func:`read_config`).
DEFAULTS: dict[str, Any] = {k.name: k.default for k in _KEY_LIST}

# Names used in code
SUPERVISOR_CPU_CAPACITY = "supervisor.cpu.capacity"
SUPERVISOR_MEMORY_CAPACITY_MB = "supervisor.memory.capacity.mb"
SUPERVISOR_RESOURCES_MAP = "supervisor.resources.map"
SUPERVISOR_SLOTS_PORTS = "supervisor.slots.ports"
TOPOLOGY_COMPONENT_CPU_PCORE_PERCENT = "topology.component.cpu.pcore.percent"
TOPOLOGY_COMPONENT_RESOURCES_ONHEAP_MEMORY_MB = "topology.component.resources.onheap.memory.mb"
TOPOLOGY_COMPONENT_RESOURCES_OFFHEAP_MEMORY_MB = "topology.component.resources.offheap.memory.mb"
TOPOLOGY_COMPONENT_RESOURCES_MAP = "topology.component.resources.map"
TOPOLOGY_ACKER_CPU_PCORE_PERCENT = "topology.acker.cpu.pcore.percent"
TOPOLOGY_ACKER_RESOURCES_ONHEAP_MEMORY_MB = "topology.acker.resources.onheap.memory.mb"
TOPOLOGY_ACKER_RESOURCES_OFFHEAP_MEMORY_MB = "topology.acker.resources.offheap.memory.mb"
TOPOLOGY_WORKER_MAX_HEAP_SIZE_MB = "topology.worker.max.heap.size.mb"
TOPOLOGY_NAME = "topology.name"
TOPOLOGY_PRIORITY = "topology.priority"
TOPOLOGY_SCHEDULER_STRATEGY = "topology.scheduler.strategy"
TOPOLOGY_SUBMITTER_USER = "topology.submitter.user"
TOPOLOGY_WORKERS = "topology.workers"
TOPOLOGY_ACKER_EXECUTORS = "topology.acker.executors"
TOPOLOGY_RAS_ONE_EXECUTOR_PER_WORKER = "topology.ras.one.executor.per.worker"
TOPOLOGY_RAS_ONE_COMPONENT_PER_WORKER = "topology.ras.one.component.per.worker"
TOPOLOGY_RAS_ACKER_EXECUTORS_PER_WORKER = "topology.ras.acker.executors.per.worker"
TOPOLOGY_RAS_CONSTRAINT_MAX_STATE_SEARCH = "topology.ras.constraint.max.state.search"
TOPOLOGY_RAS_ORDER_EXECUTORS_BY_PROXIMITY_NEEDS = "topology.ras.order.executors.by.proximity.needs"
TOPOLOGY_SCHEDULER_FAVORED_NODES = "topology.scheduler.favored.nodes"
TOPOLOGY_SCHEDULER_UNFAVORED_NODES = "topology.scheduler.unfavored.nodes"
TOPOLOGY_ISOLATED_MACHINES = "topology.isolated.machines"
RESOURCE_AWARE_SCHEDULER_USER_POOLS = "resource.aware.scheduler.user.pools"
RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY = "resource.aware.scheduler.priority.strategy"
RESOURCE_AWARE_SCHEDULER_MAX_TOPOLOGY_SCHEDULING_ATTEMPTS = "resource.aware.scheduler.max.topology.scheduling.attempts"
RESOURCE_AWARE_SCHEDULER_MAX_STATE_SEARCH = "resource.aware.scheduler.constraint.max.state.search"
SCHEDULING_TIMEOUT_SECONDS_PER_TOPOLOGY = "scheduling.timeout.seconds.per.topology"
STORM_WORKER_MIN_CPU_PCORE_PERCENT = "storm.worker.min.cpu.pcore.percent"
NIMBUS_MONITOR_FREQ_SECS = "nimbus.monitor.freq.secs"
NIMBUS_SUPERVISOR_TIMEOUT_SECS = "nimbus.supervisor.timeout.secs"
SUPERVISOR_HEARTBEAT_FREQUENCY_SECS = "supervisor.heartbeat.frequency.secs"


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise InputError(where, f"expected a number, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.replace("_", ""))
        except ValueError:
            pass
    raise InputError(where, f"expected a number, got {value!r}")


def convert_value(kind: Kind, value: Any, where: str, nullable: bool = False) -> Any:
    """``value`` converted to ``kind`` (see :data:`Kind`); ``where`` names the key in the error."""
    if value is None:
        if nullable:
            return None
        raise InputError(where, "must not be null")
    if kind == "double":
        v = _number(value, where)
        if math.isnan(v):
            raise InputError(where, "must not be NaN")
        return v
    if kind == "int":
        v = _number(value, where)
        if not math.isfinite(v) or v != int(v):
            raise InputError(where, f"expected an integer, got {value!r}")
        return int(v)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise InputError(where, f"expected true or false, got {value!r}")
    if kind == "str":
        if not isinstance(value, str):
            raise InputError(where, f"expected a string, got {value!r}")
        return value
    if kind == "str_list":
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise InputError(where, f"expected a list of strings, got {value!r}")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise InputError(f"{where}[{i}]", f"expected a string, got {item!r}")
        return list(value)
    if kind == "int_list":
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise InputError(where, f"expected a list of integers, got {value!r}")
        return [convert_value("int", item, f"{where}[{i}]") for i, item in enumerate(value)]
    if kind == "number_map":
        if not isinstance(value, Mapping):
            raise InputError(where, f"expected a map of resource name to number, got {value!r}")
        out: dict[str, float] = {}
        for name, amount in value.items():
            if not isinstance(name, str):
                raise InputError(where, f"resource names must be strings, got {name!r}")
            out[name] = convert_value("double", amount, f"{where}.{name}")
        return out
    if kind == "user_pools":
        if not isinstance(value, Mapping):
            raise InputError(where, f"expected a map of user to resource guarantees, got {value!r}")
        return {str(user): convert_value("number_map", pool, f"{where}.{user}") for user, pool in value.items()}
    raise ValueError(f"unknown kind {kind!r}")


def read_config(raw: Mapping[str, Any] | None, where: str = "config") -> dict[str, Any]:
    """A typed copy of ``raw``: every key of :data:`KEYS` present (its default when missing), values converted
    to the key's kind; unknown keys are kept unchanged. Raises :class:`InputError` ``"<where>.<key>"``."""
    out: dict[str, Any] = {}
    for key in KEYS.values():
        default = key.default
        out[key.name] = dict(default) if isinstance(default, dict) else (
            list(default) if isinstance(default, list) else default)
    if raw is None:
        return out
    if not isinstance(raw, Mapping):
        raise InputError(where, f"expected a map of Storm config keys, got {type(raw).__name__}")
    for name, value in raw.items():
        spec = KEYS.get(name)
        if spec is None:
            out[name] = value
        else:
            out[name] = convert_value(spec.kind, value, f"{where}.{name}", spec.nullable)
    return out
