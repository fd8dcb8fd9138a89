"""Scenario sections and agent construction of the Pulsar model.

``[config]`` takes Pulsar's own ``broker.conf`` keys (``loadBalancerSheddingIntervalMinutes``, …) with Pulsar's
defaults; ``[strategy]`` names the load manager and the strategies by their Java class names. The emulator's own
knobs (machines, resource costs, GC, client counts) live in ``[cluster]`` and ``[workload]``.
"""
from __future__ import annotations

from typing import Any

from clusteremu.agents.common.jvm import gc_table
from clusteremu.agents.common.lifecycle import in_name_order
from clusteremu.emulator import faults
from clusteremu.emulator.executor import MODES
from clusteremu.emulator.models import AgentSpec
from clusteremu.emulator.network import Condition
from clusteremu.scenarios.schema import ArrayOf, Field, MapOf, Table

from . import broker, client, events  # noqa: F401  (declares their event kinds)
from . import faults as pulsar_faults
from .store import LEADER_PATH, STORE
from .workload import parse_series, workload_for

MACHINE = {
    "cores": Field("float", default=8.0, gt=0, doc="CPU cores (the cgroup quota)"),
    "nic_gbps": Field("float", default=10.0, gt=0, doc="NIC speed"),
    "heap_gb": Field("float", default=8.0, gt=0, doc="JVM max heap"),
    "direct_memory_gb": Field("float", default=8.0, gt=0, doc="JVM max direct memory"),
}

PATTERN = Table(
    {
        "kind": Field("str", default="constant", choices=("constant", "on_off", "steps", "ramp", "csv")),
        "on_s": Field("float", default=60.0, gt=0),
        "off_s": Field("float", default=60.0, gt=0),
        "off_factor": Field("float", default=0.0, ge=0),
        "at_s": Field("list", default=[], item=Field("float", ge=0)),
        "factors": Field("list", default=[], item=Field("float", ge=0)),
        "start_s": Field("float", default=0.0, ge=0),
        "end_s": Field("float", default=0.0, ge=0),
        "from_factor": Field("float", default=1.0, ge=0),
        "to_factor": Field("float", default=1.0, ge=0),
        "path": Field("file", default=None, doc="csv: the t_s,factor file, relative to the scenario file"),
    },
    default={"kind": "constant"},
    check=lambda p: _pattern_problems(p),
)


def _pattern_problems(p: dict[str, Any]) -> list[tuple[str, str]]:
    if p["kind"] == "steps" and len(p["at_s"]) != len(p["factors"]):
        return [("factors", "needs as many factors as at_s")]
    if p["kind"] == "ramp" and p["end_s"] <= p["start_s"]:
        return [("end_s", "must be after start_s")]
    if p["kind"] == "csv":
        if p["path"] is None:
            return [("path", "a csv pattern needs the path of its t_s,factor file")]
        try:
            parse_series(p["path"]["text"])
        except ValueError as err:
            return [("path", f"{p['path']['path']}: {err}")]
    return []


def _strategy_names(kind: str):
    def names() -> tuple[str, ...]:
        from clusteremu.strategies import pulsar

        return tuple(pulsar.names(kind))

    return names


SECTIONS = {
    "cluster": Table(
        {
            "brokers": Field("int", default=5, ge=1, le=100_000),
            "machine": Table(MACHINE),
            "machines": MapOf(Table({k: Field(f.type, default=None, gt=0) for k, f in MACHINE.items()}),
                              doc="per-broker overrides, e.g. machines.broker-5 = {cores = 32}"),
            "clients": Field("int", default=4, ge=1, doc="client agents (each serves a share of the topics)"),
            "start": Field("str", default="lookup", choices=("lookup", "preassigned"),
                           doc="clients look every topic up at start, or bundles start owned round robin"),
            "start_jitter_s": Field("float", default=5.0, ge=0, doc="spread of the clients' first lookups"),
            "host_usage_mode": Field("str", default="fixed_delay", choices=MODES,
                                     doc="scheduling of the host-usage sampler (fixed_rate: older brokers)"),
            "host_usage_interval_s": Field("float", default=0.0, ge=0,
                                           doc="host-usage sampling period in seconds; 0 = Pulsar's "
                                               "loadBalancerHostUsageCheckIntervalMinutes (whole minutes only)"),
            "resource_model": Table(
                {
                    "background_cores": Field("float", default=0.2, ge=0),
                    "cpu_us_per_msg_in": Field("float", default=40.0, ge=0),
                    "cpu_us_per_msg_out": Field("float", default=20.0, ge=0),
                    "cpu_ms_per_mib": Field("float", default=10.0, ge=0),
                    "noise_sigma": Field("float", default=0.02, ge=0),
                    "heap_base_mb": Field("float", default=512.0, ge=0),
                    "heap_mb_per_topic": Field("float", default=0.2, ge=0),
                    "heap_mb_per_mibps": Field("float", default=20.0, ge=0),
                    "direct_base_mb": Field("float", default=256.0, ge=0),
                    "direct_mb_per_mibps": Field("float", default=40.0, ge=0),
                    "step_s": Field("float", default=1.0, gt=0, doc="integration sub-step"),
                }
            ),
            "gc": gc_table(),
            "store": Table(
                {
                    "op_latency_ms": Field("float", default=1.0, ge=0),
                    "tick_s": Field("float", default=2.0, gt=0, doc="session expiry check period (ZooKeeper tickTime)"),
                }
            ),
            "client": Table(
                {
                    "initialBackoffIntervalMs": Field("int", default=100, gt=0),
                    "maxBackoffIntervalMs": Field("int", default=60_000, gt=0),
                    "operationTimeoutMs": Field("int", default=30_000, gt=0),
                    "lookupTimeoutMs": Field("int", default=30_000, gt=0),
                    "maxLookupRedirects": Field("int", default=20, ge=0),
                }
            ),
        }
    ),
    "workload": Table(
        {
            "namespaces": ArrayOf(Table({"name": Field("str"), "bundles": Field("int", default=None, ge=1)}),
                                  default=[{"name": "public/default"}]),
            "tasks": ArrayOf(
                Table(
                    {
                        "name": Field("str"),
                        "namespace": Field("str", default="public/default"),
                        "topics": Field("int", ge=1),
                        "rate_msgs": Field("float", ge=0, doc="producer rate per topic, msg/s"),
                        "msg_bytes": Field("float", default=1024.0, gt=0),
                        "subscriptions": Field("int", default=1, ge=0),
                        "start_s": Field("float", default=0.0, ge=0),
                        "end_s": Field("float", default=0.0, ge=0, doc="when the task stops; 0 = never"),
                        "pattern": PATTERN,
                    }
                )
            ),
        }
    ),
    "strategy": Table(
        {
            "load_manager": Field("str", default="modular", choices=("modular", "extensible"),
                                  doc="modular: ModularLoadManagerImpl (unload, then placement on lookup); "
                                      "extensible: ExtensibleLoadManagerImpl (transfer: assign first, then move)"),
            "shedding": Field("str", default=None, choices=_strategy_names("shedding")),
            "placement": Field("str", default=None, choices=_strategy_names("placement")),
        }
    ),
    "config": Table({}, open=True, doc="broker.conf keys; missing keys take Pulsar's defaults"),
    "faults": pulsar_faults.schema(),
}


def broker_names(n: int) -> list[str]:
    return [f"broker-{i + 1}" for i in range(n)]


def client_names(n: int) -> list[str]:
    return [f"client-{i + 1}" for i in range(n)]


class PulsarModel:
    name = "pulsar"
    description = "Pulsar brokers, metadata store and clients with the modular or the extensible load manager"
    sections = SECTIONS

    def config(self, data: dict[str, Any]) -> dict[str, Any]:
        """Every broker.conf key with Pulsar's default, overridden by ``[config]`` and ``[strategy]``."""
        from clusteremu.strategies.pulsar.config import DEFAULTS

        cfg = dict(DEFAULTS)
        cfg.update(EMULATOR_CONFIG_DEFAULTS)
        cfg.update(data["config"])
        strat = data["strategy"]
        if strat["load_manager"] == "extensible":
            # The extensible load manager's own class and strategies, unless the scenario names others.
            cfg["loadManagerClassName"] = EXTENSIBLE_LOAD_MANAGER
            cfg["loadBalancerLoadSheddingStrategy"] = EXTENSIBLE_SHEDDER
            cfg["loadBalancerLoadPlacementStrategy"] = EXTENSIBLE_PLACEMENT
        if strat["shedding"]:
            cfg["loadBalancerLoadSheddingStrategy"] = strat["shedding"]
        if strat["placement"]:
            cfg["loadBalancerLoadPlacementStrategy"] = strat["placement"]
        return cfg

    def check(self, data: dict[str, Any]) -> list[tuple[str, str]]:
        from clusteremu.strategies.pulsar.config import DEFAULTS

        problems = []
        known = set(DEFAULTS) | set(EMULATOR_CONFIG_DEFAULTS)
        for key, value in data["config"].items():
            if key not in known:
                problems.append((f"config.{key}", "not a broker.conf key the emulator knows"))
            elif key in DEFAULTS and DEFAULTS[key] is not None and not _same_kind(DEFAULTS[key], value):
                problems.append((f"config.{key}", f"expected {type(DEFAULTS[key]).__name__}, got {value!r}"))
        problems += _load_manager_problems(data["strategy"])
        namespaces = {ns["name"] for ns in data["workload"]["namespaces"]}
        for i, task in enumerate(data["workload"]["tasks"]):
            if task["namespace"] not in namespaces:
                problems.append((f"workload.tasks[{i}].namespace", f"{task['namespace']!r} is not in workload.namespaces"))
        if not data["workload"]["tasks"]:
            problems.append(("workload.tasks", "at least one task is needed"))
        initial = broker_names(data["cluster"]["brokers"])
        others = [STORE] + client_names(data["cluster"]["clients"])
        problems += pulsar_faults.check(data["faults"], initial, others)
        names = set(initial) | set(pulsar_faults.scale_out_brokers(data["faults"]))
        for b in data["cluster"]["machines"]:
            if b not in names:
                problems.append((f"cluster.machines.{b}", "no such broker (cluster.brokers or a scale_out fault)"))
        return problems

    def agents(self, data: dict[str, Any]) -> list[AgentSpec]:
        cluster, work = data["cluster"], data["workload"]
        cfg = self.config(data)
        namespaces = [{"name": ns["name"], "bundles": ns["bundles"] or cfg["defaultNumberOfNamespaceBundles"]}
                      for ns in work["namespaces"]]
        tasks = work["tasks"]
        wl = workload_for(namespaces, tasks)
        brokers = broker_names(cluster["brokers"])
        added = pulsar_faults.scale_out_brokers(data["faults"])  # booted later by their scale_out fault
        clients = client_names(cluster["clients"])
        preassigned = cluster["start"] == "preassigned"
        # Bundles are dealt to the brokers round robin, topics to the clients likewise (client_of); each
        # client's topics are every len(clients)-th topic, in topic order (a million topics: slices, not a loop).
        initial: dict[str, list[str]] = {b: wl.bundles[i::len(brokers)] if preassigned else []
                                         for i, b in enumerate(brokers)}
        topics_of = {c: wl.topics[j::len(clients)] for j, c in enumerate(clients)}
        connected: dict[str, dict[str, str]] = {c: {} for c in clients}
        if preassigned:
            owner = (wl.topic_bundle % len(brokers)).tolist()  # the broker (index) of each topic's bundle
            for j, c in enumerate(clients):
                connected[c] = dict(zip(topics_of[c], (brokers[k] for k in owner[j::len(clients)])))
        specs = [AgentSpec(STORE, "clusteremu.emulator.metadata_store:MetadataStore",
                           {"op_latency_s": cluster["store"]["op_latency_ms"] / 1000.0,
                            "tick_s": cluster["store"]["tick_s"], "leader_paths": [LEADER_PATH]})]
        for b in brokers + in_name_order(added):
            machine = dict(cluster["machine"])
            machine.update({k: v for k, v in cluster["machines"].get(b, {}).items() if v is not None})
            specs.append(AgentSpec(b, "clusteremu.agents.pulsar.broker:Broker", {
                "config": cfg, "namespaces": namespaces, "tasks": tasks, "machine": machine,
                "resource_model": cluster["resource_model"], "gc": cluster["gc"],
                "host_usage_mode": cluster["host_usage_mode"],
                "host_usage_interval_s": cluster["host_usage_interval_s"], "initial_bundles": initial.get(b, []),
                "clients": clients,
                "load_manager": data["strategy"]["load_manager"],
                "all_brokers": brokers + in_name_order(added), "start_cause": "scale_out" if b in added else "start",
            }, start_at=added.get(b, 0.0)))
        for c in clients:
            specs.append(AgentSpec(c, "clusteremu.agents.pulsar.client:Client", {
                **cluster["client"], "brokers": brokers, "topics": topics_of[c], "connected": connected[c],
                "start_jitter_s": cluster["start_jitter_s"],
            }))
        return specs

    def network_conditions(self, data: dict[str, Any]) -> list[Condition]:
        return faults.network_conditions(data["faults"])


#: emulator-side settings that take broker.conf's form (they are real Pulsar keys the strategies' table lacks)
EMULATOR_CONFIG_DEFAULTS: dict[str, Any] = {
    "zooKeeperSessionTimeoutMillis": 30_000,
    "zookeeperSessionExpiredPolicy": "reconnect",
    "metadataStoreOperationTimeoutSeconds": 30,
    "defaultNumberOfNamespaceBundles": 4,
}


_EXT = "org.apache.pulsar.broker.loadbalance.extensions."
EXTENSIBLE_LOAD_MANAGER = _EXT + "ExtensibleLoadManagerImpl"
EXTENSIBLE_SHEDDER = _EXT + "scheduler.TransferShedder"
EXTENSIBLE_PLACEMENT = _EXT + "strategy.LeastResourceUsageWithWeight"


def _load_manager_problems(strategy: dict[str, Any]) -> list[tuple[str, str]]:
    """Each load manager takes only its own strategies (the extensible one's live in ``...extensions``)."""
    from clusteremu.strategies import pulsar

    extensible = strategy["load_manager"] == "extensible"
    problems = []
    for key, ext_name in (("shedding", EXTENSIBLE_SHEDDER), ("placement", EXTENSIBLE_PLACEMENT)):
        name = strategy[key]
        if not name:
            continue
        is_ext = pulsar.canonical_name(name) == pulsar.canonical_name(ext_name)
        if extensible and not is_ext:
            problems.append((f"strategy.{key}", f"the extensible load manager takes {ext_name}, not {name!r}"))
        elif not extensible and pulsar.canonical_name(name).startswith(_EXT):
            problems.append((f"strategy.{key}", f"{name!r} belongs to the extensible load manager "
                                                "(strategy.load_manager = \"extensible\")"))
    return problems


def _same_kind(default: Any, value: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, (int, float)):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, type(default))


MODEL = PulsarModel()
