"""Scenario sections and agent construction of the Storm model.

``[config]`` takes Storm's own daemon keys (``storm.yaml``: ``nimbus.monitor.freq.secs``,
``resource.aware.scheduler.user.pools``, topology defaults such as ``topology.priority``, ...) with Storm's
``defaults.yaml`` values (:mod:`clusteremu.strategies.storm.config`, plus the two keys this model reads beyond the
scheduler's: ``storm.zookeeper.session.timeout`` and ``topology.message.timeout.secs``). ``[strategy]`` names the
strategies by Storm's class names: ``scheduling`` (the default ``topology.scheduler.strategy``), ``priority``
(``resource.aware.scheduler.priority.strategy``) and ``eviction`` (Storm 1.x's
``resource.aware.scheduler.eviction.strategy``: setting it selects the 1.x scheduler). ``[cluster]`` holds the
daemons (Nimbus count, supervisor groups with their racks and capacities — fixed, or drawn from the seed with
``random_capacity``), GC and timers; ``[workload]`` the topologies users submit (their components, Storm topology
keys, submission and kill times), and ``[[workload.random]]`` topologies whose components the user draws from the
seed (:mod:`.random_workload`).

Agents: ``zookeeper`` (the kernel's metadata store), ``nimbus-1..n``, ``supervisor-1..m`` (on ``host-1..m``),
``user-<name>`` per submitting user.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from clusteremu.agents.common.jvm import gc_table
from clusteremu.base.errors import InputError
from clusteremu.emulator import faults
from clusteremu.emulator.executor import MODES
from clusteremu.emulator.models import AgentSpec
from clusteremu.emulator.network import Condition
from clusteremu.scenarios.schema import ArrayOf, Field, Table
from clusteremu.strategies.storm import registry
from clusteremu.strategies.storm.config import (
    KEYS,
    RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY,
    SUPERVISOR_CPU_CAPACITY,
    SUPERVISOR_MEMORY_CAPACITY_MB,
    SUPERVISOR_RESOURCES_MAP,
    SUPERVISOR_SLOTS_PORTS,
    TOPOLOGY_SCHEDULER_STRATEGY,
    convert_value,
    read_config,
)
from clusteremu.strategies.storm.decide_parse import parse_request

from . import assignments, nimbus, supervisor, user  # noqa: F401  (declares their event kinds)
from . import faults as storm_faults
from .nimbus import KILL_WAIT, ZK_SESSION_TIMEOUT
from .random_workload import RANDOM_CAPACITY, RANDOM_OWN_KEYS, RANDOM_TOPOLOGY, check_ranges, draw_components
from .store import LEADER_PATH, STORE
from .topologies import decide_form, expand

__all__ = ["MODEL", "MODEL_KEYS", "StormModel"]

#: Storm keys the model reads beyond the scheduler's, with ``defaults.yaml``'s values
MODEL_KEYS: dict[str, int] = {ZK_SESSION_TIMEOUT: 20_000, KILL_WAIT: 30}

_SUPERVISOR_GROUP = Table({
    "count": Field("int", default=1, ge=1, le=100_000, doc="supervisors in this group (one per host)"),
    "rack": Field("str", default=None, doc="their rack; none: /default-rack"),
    SUPERVISOR_CPU_CAPACITY: Field("float", default=None, ge=0, doc="default: [config]'s, else 400"),
    SUPERVISOR_MEMORY_CAPACITY_MB: Field("float", default=None, ge=0, doc="default: [config]'s, else 4096"),
    SUPERVISOR_RESOURCES_MAP: Field("any", default=None, doc="generic resources, e.g. {\"gpu.count\" = 2}"),
    SUPERVISOR_SLOTS_PORTS: Field("list", default=None, item=Field("int", gt=0), doc="default: 6700-6703"),
    "start_at_s": Field("float", default=0.0, ge=0, doc="when these supervisors start (join the cluster)"),
    "random_capacity": RANDOM_CAPACITY,
})

_COMPONENT = Table({
    "id": Field("str"),
    "type": Field("str", choices=("spout", "bolt")),
    "parallelism": Field("int", ge=0, doc="executors"),
    "inputs": Field("list", default=[], item=Field("str"), doc="the components it reads from"),
}, open=True, doc="plus Storm's per-component resource keys (topology.component.cpu.pcore.percent, ...)")

_TOPOLOGY = Table({
    "name": Field("str"),
    "user": Field("str", doc="topology.submitter.user"),
    "submit_at_s": Field("float", default=0.0, ge=0),
    "rebalance_at_s": Field("float", default=None, ge=0, doc="when the user rebalances it (storm rebalance); none: "
                                                            "never"),
    "rebalance_wait_s": Field("float", default=None, ge=0, doc="rebalance wait; none: topology.message.timeout.secs"),
    "kill_at_s": Field("float", default=None, ge=0, doc="when the user kills it; none: never"),
    "kill_wait_s": Field("float", default=None, ge=0, doc="kill wait; none: topology.message.timeout.secs"),
    "count": Field("int", default=1, ge=1, doc="copies named <name>-1..n"),
    "every_s": Field("float", default=0.0, ge=0, doc="the copies' submissions this far apart"),
    "components": ArrayOf(_COMPONENT),
}, open=True, doc="plus Storm topology conf keys (topology.priority, topology.scheduler.strategy, ...)")

SECTIONS = {
    "cluster": Table({
        "nimbuses": Field("int", default=1, ge=1, le=9, doc="Nimbus daemons (one leads)"),
        "supervisors": ArrayOf(_SUPERVISOR_GROUP, default=[{"count": 4}]),
        "gc": gc_table(),
        "timer_mode": Field("str", default="fixed_delay", choices=MODES,
                            doc="Nimbus's timer (Storm's StormTimer: fixed delay); the supervisors' heartbeats and "
                                "assignment re-reads are kernel leases on a fixed grid, whatever this says"),
        "worker_launch_s": Field("float", default=2.0, ge=0, doc="a supervisor takes this long to start a worker"),
        "op_timeout_s": Field("float", default=10.0, gt=0, doc="ZooKeeper operation timeout of the daemons"),
        "client_timeout_s": Field("float", default=10.0, gt=0, doc="a user's request timeout (Nimbus Thrift)"),
        "client_retry_s": Field("float", default=2.0, gt=0, doc="a user's wait after trying every Nimbus seed"),
        "store": Table({
            "op_latency_ms": Field("float", default=1.0, ge=0),
            "tick_s": Field("float", default=2.0, gt=0, doc="session expiry check period (ZooKeeper tickTime)"),
        }),
    }),
    "workload": Table({"topologies": ArrayOf(_TOPOLOGY),
                       "random": ArrayOf(RANDOM_TOPOLOGY, doc="topologies whose components are drawn from the seed")}),
    "strategy": Table({
        "scheduling": Field("str", default=None, doc="default topology.scheduler.strategy (class name)"),
        "priority": Field("str", default=None, doc="resource.aware.scheduler.priority.strategy (class name)"),
        "eviction": Field("str", default=None, doc="resource.aware.scheduler.eviction.strategy: Storm 1.x only "
                                                  "(DefaultEvictionStrategy); selects the 1.x scheduler"),
    }),
    "config": Table({}, open=True, doc="Storm daemon keys (storm.yaml); missing keys take Storm's defaults"),
    "faults": storm_faults.schema(),
}


def nimbus_names(n: int) -> list[str]:
    return [f"nimbus-{i + 1}" for i in range(n)]


def user_agent(user_name: str) -> str:
    return f"user-{user_name}"


class StormModel:
    name = "storm"
    description = "Storm Nimbus (leader-elected), supervisors and users submitting topologies; Resource Aware Scheduler"
    sections = SECTIONS

    def config(self, data: dict[str, Any]) -> dict[str, Any]:
        """The daemon conf: Storm's defaults, ``[config]``, then ``[strategy]``'s class names (typed)."""
        raw: dict[str, Any] = dict(MODEL_KEYS)
        raw.update(data["config"])
        strat = data["strategy"]
        for key, conf_key in (("scheduling", TOPOLOGY_SCHEDULER_STRATEGY),
                              ("priority", RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY),
                              ("eviction", registry.EVICTION_STRATEGY_KEY)):
            if strat[key]:
                raw[conf_key] = strat[key]
        return read_config(raw, "config")

    def check(self, data: dict[str, Any]) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        known = set(KEYS) | set(MODEL_KEYS) | {registry.EVICTION_STRATEGY_KEY}
        for key, value in data["config"].items():
            if key not in known:
                problems.append((f"config.{key}", "not a Storm key the model knows"))
            elif key in MODEL_KEYS and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                problems.append((f"config.{key}", f"expected a positive integer, got {value!r}"))
        if problems:
            return problems
        try:
            conf = self.config(data)
        except InputError as err:
            return [(err.where, err.reason)]
        generation = registry.generation_of(conf)
        for path, kind, key in (("strategy.scheduling", "scheduling", TOPOLOGY_SCHEDULER_STRATEGY),
                                ("strategy.priority", "priority", RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY),
                                ("strategy.eviction", "eviction", registry.EVICTION_STRATEGY_KEY)):
            name = conf.get(key)
            if name is None:
                continue
            try:
                registry.canonical_name(kind, name, generation)
            except KeyError as err:
                where = path if data["strategy"][path.split(".")[1]] else f"config.{key}"
                problems.append((where, err.args[0]))
        for i, group in enumerate(data["cluster"]["supervisors"]):
            if group[SUPERVISOR_RESOURCES_MAP] is not None:
                try:
                    convert_value("number_map", group[SUPERVISOR_RESOURCES_MAP], SUPERVISOR_RESOURCES_MAP)
                except InputError as err:
                    problems.append((f"cluster.supervisors[{i}].{SUPERVISOR_RESOURCES_MAP}", err.reason))
        entries = data["workload"]["topologies"]
        if not entries and not data["workload"]["random"]:
            problems.append(("workload.topologies", "at least one topology (or workload.random entry) is needed"))
        for i, group in enumerate(data["cluster"]["supervisors"]):
            problems += check_ranges(group["random_capacity"], ("cpu", "memory_mb"),
                                     f"cluster.supervisors[{i}].random_capacity")
        for i, entry in enumerate(data["workload"]["random"]):
            path = f"workload.random[{i}]"
            bad = check_ranges(entry, ("components", "parallelism", "cpu", "onheap_mb"), path)
            if entry["components"] is not None and entry["components"][0] < 1:
                bad.append((f"{path}.components", "at least one component"))
            problems += bad
            if bad:
                continue
            if not entry["user"] or not all(c.isalnum() or c in "-_." for c in entry["user"]):
                problems.append((f"{path}.user", "a user name of letters, digits, '-', '_' or '.'"))
            if entry["kill_at_s"] is not None and entry["kill_at_s"] <= entry["submit_at_s"]:
                problems.append((f"{path}.kill_at_s", "must be after submit_at_s"))
            sample = {"name": entry["name"], "user": entry["user"],
                      "conf": {k: v for k, v in entry.items() if k not in RANDOM_OWN_KEYS},
                      "components": draw_components(np.random.default_rng(0), entry)}
            try:  # the conf keys and their types, on one draw
                parse_request({"config": data["config"], "nowSecs": 0, "supervisors": [],
                               "topologies": [decide_form(sub=sample)]}, path)
            except InputError as err:
                problems.append((err.where.replace(": topologies[0].", "."), err.reason))
        for i, entry in enumerate(entries):
            sub = expand([entry])[0]  # the copies differ only by name
            path = f"workload.topologies[{i}]"
            if not sub["user"] or not all(c.isalnum() or c in "-_." for c in sub["user"]):
                problems.append((f"{path}.user", "a user name of letters, digits, '-', '_' or '.'"))
            if sub["kill_at"] is not None and sub["kill_at"] <= sub["submit_at"]:
                problems.append((f"{path}.kill_at_s", "must be after submit_at_s"))
            if sub["rebalance_at"] is not None and not (
                    sub["submit_at"] < sub["rebalance_at"] < (sub["kill_at"] if sub["kill_at"] is not None else 1e308)):
                problems.append((f"{path}.rebalance_at_s", "must be after submit_at_s (and before kill_at_s)"))
            try:
                parse_request({"config": data["config"], "nowSecs": 0, "supervisors": [],
                               "topologies": [decide_form(sub)]}, path)
            except InputError as err:
                problems.append((err.where.replace(": topologies[0].", "."), err.reason))
        return problems

    def agents(self, data: dict[str, Any]) -> list[AgentSpec]:
        cluster = data["cluster"]
        conf = self.config(data)
        common = {"config": conf, "gc": cluster["gc"], "timer_mode": cluster["timer_mode"],
                  "op_timeout_s": cluster["op_timeout_s"]}
        nimbuses = nimbus_names(cluster["nimbuses"])
        specs = [AgentSpec(STORE, "clusteremu.emulator.metadata_store:MetadataStore",
                           {"op_latency_s": cluster["store"]["op_latency_ms"] / 1000.0,
                            "tick_s": cluster["store"]["tick_s"], "leader_paths": [LEADER_PATH]})]
        specs += [AgentSpec(n, "clusteremu.agents.storm.nimbus:Nimbus", common) for n in nimbuses]
        k = 0
        n_supervisors = sum(g["count"] for g in cluster["supervisors"])
        for group in cluster["supervisors"]:
            for _ in range(group["count"]):
                k += 1
                generic = group[SUPERVISOR_RESOURCES_MAP]
                specs.append(AgentSpec(f"supervisor-{k}", "clusteremu.agents.storm.supervisor:Supervisor", {
                    **common, "host": f"host-{k}", "rack": group["rack"],
                    "cpu": _or(group[SUPERVISOR_CPU_CAPACITY], conf[SUPERVISOR_CPU_CAPACITY]),
                    "memory_mb": _or(group[SUPERVISOR_MEMORY_CAPACITY_MB], conf[SUPERVISOR_MEMORY_CAPACITY_MB]),
                    "generic": convert_value("number_map", generic if generic is not None
                                             else conf[SUPERVISOR_RESOURCES_MAP], SUPERVISOR_RESOURCES_MAP),
                    "ports": list(group[SUPERVISOR_SLOTS_PORTS] or conf[SUPERVISOR_SLOTS_PORTS]),
                    "worker_launch_s": cluster["worker_launch_s"], "supervisors": n_supervisors,
                    "random_capacity": group["random_capacity"]
                    if any(v is not None for v in group["random_capacity"].values()) else None,
                }, start_at=group["start_at_s"]))
        subs = expand(data["workload"]["topologies"]) + expand_random(data["workload"]["random"])
        for u in sorted({s["user"] for s in subs}):
            specs.append(AgentSpec(user_agent(u), "clusteremu.agents.storm.user:User", {
                "nimbuses": nimbuses, "topologies": [s for s in subs if s["user"] == u],
                "client_timeout_s": cluster["client_timeout_s"], "client_retry_s": cluster["client_retry_s"]}))
        return specs

    def network_conditions(self, data: dict[str, Any]) -> list[Condition]:
        return faults.network_conditions(data["faults"])


def expand_random(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``[[workload.random]]`` entries as submissions (see :func:`.topologies.expand`); ``components`` is
    empty and ``random`` holds the ranges the user draws them from when it starts."""
    out = []
    for e in entries:
        n = int(e["count"])
        for i in range(n):
            shift = i * float(e["every_s"])
            out.append({"name": e["name"] if n == 1 else f"{e['name']}-{i + 1}", "user": e["user"],
                        "submit_at": float(e["submit_at_s"]) + shift,
                        "kill_at": None if e["kill_at_s"] is None else float(e["kill_at_s"]) + shift,
                        "kill_wait_s": None, "rebalance_at": None, "rebalance_wait_s": None,
                        "conf": {k: v for k, v in e.items() if k not in RANDOM_OWN_KEYS}, "components": [],
                        "random": {k: e[k] for k in ("components", "parallelism", "cpu", "onheap_mb")}})
    return out


def _or(value: float | None, default: float) -> float:
    return float(default if value is None else value)


MODEL = StormModel()
