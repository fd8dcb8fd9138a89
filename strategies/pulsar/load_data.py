"""The modular load manager leader's ``LoadData``, with Pulsar's JSON field names.

Shape (JSON; Python attributes are the snake_case twins)::

    {"brokerData": {broker: {"localData": LocalBrokerData,
                             "timeAverageData": TimeAverageBrokerData,
                             "preallocatedBundleData": {bundle: BundleData}}},
     "bundleData": {bundle: BundleData},
     "recentlyUnloadedBundles": {bundle: epoch ms}}

``LocalBrokerData`` is what ``pulsar-admin broker-stats load-report`` prints: ``cpu``, ``memory``,
``directMemory``, ``bandwidthIn``, ``bandwidthOut`` as ``{"usage", "limit"}`` (see
:mod:`clusteremu.strategies.pulsar.resource_usage` for units), broker totals ``msgRateIn/Out`` (msg/s) and
``msgThroughputIn/Out`` (bytes/s), counters, ``bundles`` (names), ``lastStats`` (bundle →
``NamespaceBundleStats``), ``lastUpdate`` (epoch ms) and identity fields. Fields this module does not
model are kept verbatim in ``extra`` so ``to_json()`` gives back what ``from_json()`` read.

Java iteration order: ``LoadData``'s three maps are ``ConcurrentHashMap``s, ``getBundleDataForLoadShedding()``
collects into a ``HashMap`` and ``LocalBrokerData.bundles`` is a ``HashSet``. The ``*_in_java_order``
accessors give their keys in the order Java iterates them (see :mod:`clusteremu.base.java`),
taking the Python dict's insertion order (the snapshot's order) as the insertion history.

Departures: a snapshot that omits ``bundles`` gets it from the keys of ``lastStats`` (what
``LocalBrokerData.update`` would have set); broker totals are *not* recomputed from ``lastStats``.
A missing ``shortTermData``/``longTermData`` reads as an empty average (0 samples, all rates 0) where Java
would hold ``null``. Numbers may be JSON numbers or Jackson's ``"NaN"``/``"Infinity"``/``"-Infinity"``.
``TimeAverageBrokerData.reset`` follows the modular manager's aggregation (sums of the bundles' short/long
term averages, default stats for bundles without data).
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, MutableMapping

from clusteremu.base.errors import InputError
from clusteremu.base.java import format_fixed, jackson_double_out, java_order

from .json_input import JsonObject, read_document, show
from .resource_usage import (
    ResourceUsage,
    max_resource_usage,
    max_resource_usage_with_weight,
    max_resource_usage_with_weight_5,
)
from .split.bundles import bundle_namespace

__all__ = [
    "BrokerData",
    "BundleData",
    "DEFAULT_MESSAGE_RATE",
    "DEFAULT_MESSAGE_THROUGHPUT",
    "LoadData",
    "LocalBrokerData",
    "NUM_LONG_SAMPLES",
    "NUM_SHORT_SAMPLES",
    "NamespaceBundleStats",
    "TimeAverageBrokerData",
    "TimeAverageMessageData",
    "default_bundle_stats",
    "is_system_service_namespace",
]

#: Samples kept by a bundle's short-term history (``ModularLoadManagerImpl.NUM_SHORT_SAMPLES``).
NUM_SHORT_SAMPLES = 10
#: Samples kept by a bundle's long-term history (``NUM_LONG_SAMPLES``).
NUM_LONG_SAMPLES = 1000
#: Default msg/s (in and out each) of a bundle without history (``DEFAULT_MESSAGE_RATE``).
DEFAULT_MESSAGE_RATE = 50.0
#: Default bytes/s (in and out each) of a bundle without history (``DEFAULT_MESSAGE_THROUGHPUT``).
DEFAULT_MESSAGE_THROUGHPUT = 50000.0

# NamespaceService's patterns for the namespaces that getBundleDataForLoadShedding() leaves out.
_SYSTEM_NAMESPACE = "pulsar/system"
_HEARTBEAT_NAMESPACE = re.compile(r"pulsar/[^/]+/([^:]+:\d+)")
_HEARTBEAT_NAMESPACE_V2 = re.compile(r"pulsar/([^:]+:\d+)")
_SLA_NAMESPACE = re.compile(r"sla-monitor/[^/]+/([^:]+:\d+)")


@functools.lru_cache(maxsize=1024)  # a shedding cycle asks for every bundle's namespace, of which there are few
def is_system_service_namespace(namespace: str) -> bool:
    """``NamespaceService.isSystemServiceNamespace``: ``pulsar/system``, heartbeat (v1, v2) or SLA monitor."""
    return (
        namespace == _SYSTEM_NAMESPACE
        or _SLA_NAMESPACE.fullmatch(namespace) is not None
        or _HEARTBEAT_NAMESPACE.fullmatch(namespace) is not None
        or _HEARTBEAT_NAMESPACE_V2.fullmatch(namespace) is not None
    )


# --------------------------------------------------------------------------------------------------
# Data classes


@dataclass
class NamespaceBundleStats:
    """One bundle's stats as its owner reports them: msg/s and bytes/s, in and out, and counters."""

    msg_rate_in: float = 0.0
    msg_throughput_in: float = 0.0
    msg_rate_out: float = 0.0
    msg_throughput_out: float = 0.0
    consumer_count: int = 0
    producer_count: int = 0
    topics: int = 0
    cache_size: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: Any, path: str) -> "NamespaceBundleStats":
        # The leader reads every bundle of every report: take well-formed objects without the field-by-field
        # checks (same result), and leave anything unusual to the checking reader below.
        n = len(obj) if type(obj) is dict else 0
        if n == len(_BUNDLE_STATS_KEYS) or (n == len(_BUNDLE_STATS_KEYS) - 1 and "cacheSize" not in obj):
            try:
                values = [obj[k] for k in _BUNDLE_STATS_KEYS[:n]] + [0] * (len(_BUNDLE_STATS_KEYS) - n)
            except KeyError:
                values = None
            if values is not None and all(type(v) is float or type(v) is int for v in values[:4]) and all(
                    type(v) is int for v in values[4:]):
                return cls(float(values[0]), float(values[1]), float(values[2]), float(values[3]), *values[4:])
        r = JsonObject(obj, path)
        out = cls(
            msg_rate_in=r.number("msgRateIn"),
            msg_throughput_in=r.number("msgThroughputIn"),
            msg_rate_out=r.number("msgRateOut"),
            msg_throughput_out=r.number("msgThroughputOut"),
            consumer_count=r.integer("consumerCount"),
            producer_count=r.integer("producerCount"),
            topics=r.integer("topics"),
            cache_size=r.integer("cacheSize"),
        )
        out.extra = r.extra()
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "msgRateIn": jackson_double_out(self.msg_rate_in),
            "msgThroughputIn": jackson_double_out(self.msg_throughput_in),
            "msgRateOut": jackson_double_out(self.msg_rate_out),
            "msgThroughputOut": jackson_double_out(self.msg_throughput_out),
            "consumerCount": self.consumer_count,
            "producerCount": self.producer_count,
            "topics": self.topics,
            "cacheSize": self.cache_size,
            **self.extra,
        }


#: NamespaceBundleStats' JSON keys in constructor order: four rates (numbers), then four counters (integers);
#: ``cacheSize`` comes last because reports may leave it out
_BUNDLE_STATS_KEYS = ("msgRateIn", "msgThroughputIn", "msgRateOut", "msgThroughputOut",
                      "consumerCount", "producerCount", "topics", "cacheSize")


def default_bundle_stats() -> NamespaceBundleStats:
    """The leader's default stats for a bundle without history: 50 msg/s and 50000 B/s, in and out each."""
    return NamespaceBundleStats(
        msg_rate_in=DEFAULT_MESSAGE_RATE,
        msg_throughput_in=DEFAULT_MESSAGE_THROUGHPUT,
        msg_rate_out=DEFAULT_MESSAGE_RATE,
        msg_throughput_out=DEFAULT_MESSAGE_THROUGHPUT,
    )


@dataclass
class LocalBrokerData:
    """A broker's own load report (``LocalBrokerData``)."""

    cpu: ResourceUsage = field(default_factory=ResourceUsage)
    memory: ResourceUsage = field(default_factory=ResourceUsage)
    direct_memory: ResourceUsage = field(default_factory=ResourceUsage)
    bandwidth_in: ResourceUsage = field(default_factory=ResourceUsage)
    bandwidth_out: ResourceUsage = field(default_factory=ResourceUsage)
    msg_throughput_in: float = 0.0
    msg_throughput_out: float = 0.0
    msg_rate_in: float = 0.0
    msg_rate_out: float = 0.0
    last_update: int = 0
    last_stats: dict[str, NamespaceBundleStats] = field(default_factory=dict)
    num_topics: int = 0
    num_bundles: int = 0
    num_consumers: int = 0
    num_producers: int = 0
    bundles: list[str] = field(default_factory=list)
    last_bundle_gains: list[str] = field(default_factory=list)
    last_bundle_losses: list[str] = field(default_factory=list)
    broker_version_string: str | None = None
    load_manager_class_name: str | None = None
    persistent_topics_enabled: bool = True
    non_persistent_topics_enabled: bool = True
    web_service_url: str | None = None
    web_service_url_tls: str | None = None
    pulsar_service_url: str | None = None
    pulsar_service_url_tls: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    # --- resource usage (fractions, 1.0 = 100 %)
    def max_resource_usage(self) -> float:
        """Newest unweighted ``getMaxResourceUsage()`` (CPU, direct memory, bandwidth in/out), float32."""
        return max_resource_usage(self.cpu, self.direct_memory, self.bandwidth_in, self.bandwidth_out)

    def max_resource_usage_with_memory(self) -> float:
        """2.x unweighted ``getMaxResourceUsage()`` that also considers heap memory, float32."""
        return max_resource_usage(self.cpu, self.direct_memory, self.bandwidth_in, self.bandwidth_out, self.memory)

    def max_resource_usage_with_weight(
        self, cpu_weight: float, direct_memory_weight: float, bandwidth_in_weight: float, bandwidth_out_weight: float
    ) -> float:
        """Newest 4-argument ``getMaxResourceUsageWithWeight`` (memory ignored)."""
        return max_resource_usage_with_weight(
            self.cpu, self.direct_memory, self.bandwidth_in, self.bandwidth_out,
            cpu_weight, direct_memory_weight, bandwidth_in_weight, bandwidth_out_weight,
        )

    def max_resource_usage_with_weight_5(
        self,
        cpu_weight: float,
        memory_weight: float,
        direct_memory_weight: float,
        bandwidth_in_weight: float,
        bandwidth_out_weight: float,
    ) -> float:
        """Old/extensible 5-argument ``getMaxResourceUsageWithWeight`` (memory included)."""
        return max_resource_usage_with_weight_5(
            self.cpu, self.memory, self.direct_memory, self.bandwidth_in, self.bandwidth_out,
            cpu_weight, memory_weight, direct_memory_weight, bandwidth_in_weight, bandwidth_out_weight,
        )

    def print_resource_usage(self) -> str:
        """``printResourceUsage()``: ``"cpu: 10.00%, memory: 50.00%, directMemory: ..."`` as Java formats it."""
        return ", ".join(
            f"{name}: {format_fixed(usage.percent_usage(), 2)}%"
            for name, usage in (
                ("cpu", self.cpu),
                ("memory", self.memory),
                ("directMemory", self.direct_memory),
                ("bandwidthIn", self.bandwidth_in),
                ("bandwidthOut", self.bandwidth_out),
            )
        )

    def bundles_in_java_order(self) -> list[str]:
        """``getBundles()`` in ``HashSet`` iteration order."""
        return java_order(self.bundles, "hashmap")

    @classmethod
    def from_json(cls, obj: Any, path: str,
                  last_stats: dict[str, NamespaceBundleStats] | None = None) -> "LocalBrokerData":
        """``last_stats``: ``lastStats`` already parsed from JSON equal to ``obj["lastStats"]`` (the caller
        compared them), taken as they are instead of parsing hundreds of bundles again."""
        r = JsonObject(obj, path)
        if last_stats is not None:
            r.used.add("lastStats")
        out = cls(
            web_service_url=r.string("webServiceUrl"),
            web_service_url_tls=r.string("webServiceUrlTls"),
            pulsar_service_url=r.string("pulsarServiceUrl"),
            pulsar_service_url_tls=r.string("pulsarServiceUrlTls"),
            persistent_topics_enabled=r.boolean("persistentTopicsEnabled", True),
            non_persistent_topics_enabled=r.boolean("nonPersistentTopicsEnabled", True),
            cpu=r.build("cpu", ResourceUsage.from_json, ResourceUsage),
            memory=r.build("memory", ResourceUsage.from_json, ResourceUsage),
            direct_memory=r.build("directMemory", ResourceUsage.from_json, ResourceUsage),
            bandwidth_in=r.build("bandwidthIn", ResourceUsage.from_json, ResourceUsage),
            bandwidth_out=r.build("bandwidthOut", ResourceUsage.from_json, ResourceUsage),
            msg_throughput_in=r.number("msgThroughputIn"),
            msg_throughput_out=r.number("msgThroughputOut"),
            msg_rate_in=r.number("msgRateIn"),
            msg_rate_out=r.number("msgRateOut"),
            last_update=r.integer("lastUpdate"),
            last_stats=r.mapping("lastStats", NamespaceBundleStats.from_json) if last_stats is None else last_stats,
            num_topics=r.integer("numTopics"),
            num_bundles=r.integer("numBundles"),
            num_consumers=r.integer("numConsumers"),
            num_producers=r.integer("numProducers"),
            last_bundle_gains=r.strings("lastBundleGains") or [],
            last_bundle_losses=r.strings("lastBundleLosses") or [],
            broker_version_string=r.string("brokerVersionString"),
            load_manager_class_name=r.string("loadManagerClassName"),
        )
        bundles = r.strings("bundles")
        out.bundles = list(out.last_stats) if bundles is None else bundles
        out.extra = r.extra()
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in (
            ("webServiceUrl", self.web_service_url),
            ("webServiceUrlTls", self.web_service_url_tls),
            ("pulsarServiceUrl", self.pulsar_service_url),
            ("pulsarServiceUrlTls", self.pulsar_service_url_tls),
        ):
            if value is not None:
                out[name] = value
        out.update(
            {
                "persistentTopicsEnabled": self.persistent_topics_enabled,
                "nonPersistentTopicsEnabled": self.non_persistent_topics_enabled,
                "cpu": self.cpu.to_json(),
                "memory": self.memory.to_json(),
                "directMemory": self.direct_memory.to_json(),
                "bandwidthIn": self.bandwidth_in.to_json(),
                "bandwidthOut": self.bandwidth_out.to_json(),
                "msgThroughputIn": jackson_double_out(self.msg_throughput_in),
                "msgThroughputOut": jackson_double_out(self.msg_throughput_out),
                "msgRateIn": jackson_double_out(self.msg_rate_in),
                "msgRateOut": jackson_double_out(self.msg_rate_out),
                "lastUpdate": self.last_update,
                "lastStats": {k: v.to_json() for k, v in self.last_stats.items()},
                "numTopics": self.num_topics,
                "numBundles": self.num_bundles,
                "numConsumers": self.num_consumers,
                "numProducers": self.num_producers,
                "bundles": list(self.bundles),
                "lastBundleGains": list(self.last_bundle_gains),
                "lastBundleLosses": list(self.last_bundle_losses),
            }
        )
        if self.broker_version_string is not None:
            out["brokerVersionString"] = self.broker_version_string
        if self.load_manager_class_name is not None:
            out["loadManagerClassName"] = self.load_manager_class_name
        out.update(self.extra)
        return out


@dataclass
class TimeAverageMessageData:
    """A bundle's averaged traffic: msg/s and bytes/s in and out over up to ``max_samples`` samples.

    :meth:`update` is Pulsar's rule: ``n = min(numSamples + 1, maxSamples)`` and each value becomes
    ``((n - 1) * old + new) / n`` — a running mean that turns into an EMA of weight ``1/maxSamples`` once
    full; with ``numSamples == 0`` the first sample replaces the (default) values.
    """

    max_samples: int = NUM_SHORT_SAMPLES
    num_samples: int = 0
    msg_throughput_in: float = 0.0
    msg_throughput_out: float = 0.0
    msg_rate_in: float = 0.0
    msg_rate_out: float = 0.0

    @classmethod
    def with_default_stats(cls, max_samples: int, stats: NamespaceBundleStats) -> "TimeAverageMessageData":
        """``new TimeAverageMessageData(maxSamples, defaultStats)``: 0 samples, values from ``stats``."""
        return cls(
            max_samples=max_samples,
            num_samples=0,
            msg_throughput_in=stats.msg_throughput_in,
            msg_throughput_out=stats.msg_throughput_out,
            msg_rate_in=stats.msg_rate_in,
            msg_rate_out=stats.msg_rate_out,
        )

    def update(self, sample: NamespaceBundleStats) -> None:
        """Fold one sample in (see the class docstring)."""
        self.update_values(sample.msg_throughput_in, sample.msg_throughput_out, sample.msg_rate_in, sample.msg_rate_out)

    def update_values(
        self, msg_throughput_in: float, msg_throughput_out: float, msg_rate_in: float, msg_rate_out: float
    ) -> None:
        """Fold one sample given as bytes/s in/out and msg/s in/out."""
        self.num_samples = min(self.num_samples + 1, self.max_samples)
        n = self.num_samples
        self.msg_throughput_in = ((n - 1) * self.msg_throughput_in + msg_throughput_in) / n
        self.msg_throughput_out = ((n - 1) * self.msg_throughput_out + msg_throughput_out) / n
        self.msg_rate_in = ((n - 1) * self.msg_rate_in + msg_rate_in) / n
        self.msg_rate_out = ((n - 1) * self.msg_rate_out + msg_rate_out) / n

    def total_msg_rate(self) -> float:
        """``msgRateIn + msgRateOut`` (msg/s)."""
        return self.msg_rate_in + self.msg_rate_out

    def total_msg_throughput(self) -> float:
        """``msgThroughputIn + msgThroughputOut`` (bytes/s)."""
        return self.msg_throughput_in + self.msg_throughput_out

    @classmethod
    def from_json(cls, obj: Any, path: str, default_max_samples: int) -> "TimeAverageMessageData":
        r = JsonObject(obj, path)
        return cls(
            max_samples=r.integer("maxSamples", default_max_samples),
            num_samples=r.integer("numSamples"),
            msg_throughput_in=r.number("msgThroughputIn"),
            msg_throughput_out=r.number("msgThroughputOut"),
            msg_rate_in=r.number("msgRateIn"),
            msg_rate_out=r.number("msgRateOut"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "maxSamples": self.max_samples,
            "numSamples": self.num_samples,
            "msgThroughputIn": jackson_double_out(self.msg_throughput_in),
            "msgThroughputOut": jackson_double_out(self.msg_throughput_out),
            "msgRateIn": jackson_double_out(self.msg_rate_in),
            "msgRateOut": jackson_double_out(self.msg_rate_out),
        }


@dataclass
class BundleData:
    """A bundle's history at the leader: short-term (10 samples) and long-term (1000) averages, topics."""

    short_term_data: TimeAverageMessageData = field(
        default_factory=lambda: TimeAverageMessageData(max_samples=NUM_SHORT_SAMPLES)
    )
    long_term_data: TimeAverageMessageData = field(
        default_factory=lambda: TimeAverageMessageData(max_samples=NUM_LONG_SAMPLES)
    )
    topics: int = 0

    @classmethod
    def with_default_stats(
        cls,
        stats: NamespaceBundleStats | None = None,
        num_short_samples: int = NUM_SHORT_SAMPLES,
        num_long_samples: int = NUM_LONG_SAMPLES,
    ) -> "BundleData":
        """``new BundleData(NUM_SHORT_SAMPLES, NUM_LONG_SAMPLES, defaultStats)`` (0 samples each)."""
        stats = stats or default_bundle_stats()
        return cls(
            short_term_data=TimeAverageMessageData.with_default_stats(num_short_samples, stats),
            long_term_data=TimeAverageMessageData.with_default_stats(num_long_samples, stats),
        )

    def update(self, sample: NamespaceBundleStats) -> None:
        """Fold a reported sample into both averages and take its topic count."""
        self.short_term_data.update(sample)
        self.long_term_data.update(sample)
        self.topics = sample.topics

    @classmethod
    def from_json(cls, obj: Any, path: str) -> "BundleData":
        r = JsonObject(obj, path)
        return cls(
            short_term_data=r.build(
                "shortTermData",
                lambda value, at: TimeAverageMessageData.from_json(value, at, NUM_SHORT_SAMPLES),
                lambda: TimeAverageMessageData(max_samples=NUM_SHORT_SAMPLES),
            ),
            long_term_data=r.build(
                "longTermData",
                lambda value, at: TimeAverageMessageData.from_json(value, at, NUM_LONG_SAMPLES),
                lambda: TimeAverageMessageData(max_samples=NUM_LONG_SAMPLES),
            ),
            topics=r.integer("topics"),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "shortTermData": self.short_term_data.to_json(),
            "longTermData": self.long_term_data.to_json(),
            "topics": self.topics,
        }


_TIME_AVERAGE_FIELDS = (
    ("short_term_msg_throughput_in", "shortTermMsgThroughputIn"),
    ("short_term_msg_throughput_out", "shortTermMsgThroughputOut"),
    ("short_term_msg_rate_in", "shortTermMsgRateIn"),
    ("short_term_msg_rate_out", "shortTermMsgRateOut"),
    ("long_term_msg_throughput_in", "longTermMsgThroughputIn"),
    ("long_term_msg_throughput_out", "longTermMsgThroughputOut"),
    ("long_term_msg_rate_in", "longTermMsgRateIn"),
    ("long_term_msg_rate_out", "longTermMsgRateOut"),
)


@dataclass
class TimeAverageBrokerData:
    """A broker's aggregate of its bundles' short- and long-term averages (msg/s, bytes/s)."""

    short_term_msg_throughput_in: float = 0.0
    short_term_msg_throughput_out: float = 0.0
    short_term_msg_rate_in: float = 0.0
    short_term_msg_rate_out: float = 0.0
    long_term_msg_throughput_in: float = 0.0
    long_term_msg_throughput_out: float = 0.0
    long_term_msg_rate_in: float = 0.0
    long_term_msg_rate_out: float = 0.0

    def reset(
        self,
        bundles: Iterable[str],
        data: Mapping[str, BundleData],
        default_stats: NamespaceBundleStats | None = None,
    ) -> None:
        """Recompute from ``bundles``: each bundle's averages from ``data``, or ``default_stats`` if absent.

        ``bundles`` is iterated in the order given (pass the Java order to match Pulsar's float sums).
        """
        default_stats = default_stats or default_bundle_stats()
        for attr, _ in _TIME_AVERAGE_FIELDS:
            setattr(self, attr, 0.0)
        for bundle in bundles:
            bd = data.get(bundle)
            if bd is not None:
                s, lt = bd.short_term_data, bd.long_term_data
                self.short_term_msg_throughput_in += s.msg_throughput_in
                self.short_term_msg_throughput_out += s.msg_throughput_out
                self.short_term_msg_rate_in += s.msg_rate_in
                self.short_term_msg_rate_out += s.msg_rate_out
                self.long_term_msg_throughput_in += lt.msg_throughput_in
                self.long_term_msg_throughput_out += lt.msg_throughput_out
                self.long_term_msg_rate_in += lt.msg_rate_in
                self.long_term_msg_rate_out += lt.msg_rate_out
            else:
                self.short_term_msg_throughput_in += default_stats.msg_throughput_in
                self.short_term_msg_throughput_out += default_stats.msg_throughput_out
                self.short_term_msg_rate_in += default_stats.msg_rate_in
                self.short_term_msg_rate_out += default_stats.msg_rate_out
                self.long_term_msg_throughput_in += default_stats.msg_throughput_in
                self.long_term_msg_throughput_out += default_stats.msg_throughput_out
                self.long_term_msg_rate_in += default_stats.msg_rate_in
                self.long_term_msg_rate_out += default_stats.msg_rate_out

    @classmethod
    def from_json(cls, obj: Any, path: str) -> "TimeAverageBrokerData":
        r = JsonObject(obj, path)
        return cls(**{attr: r.number(name) for attr, name in _TIME_AVERAGE_FIELDS})

    def to_json(self) -> dict[str, Any]:
        return {name: jackson_double_out(getattr(self, attr)) for attr, name in _TIME_AVERAGE_FIELDS}


@dataclass
class BrokerData:
    """The leader's view of one broker: its report, its time averages and its preallocated bundles."""

    local_data: LocalBrokerData = field(default_factory=LocalBrokerData)
    time_average_data: TimeAverageBrokerData = field(default_factory=TimeAverageBrokerData)
    preallocated_bundle_data: dict[str, BundleData] = field(default_factory=dict)

    @classmethod
    def from_json(cls, obj: Any, path: str) -> "BrokerData":
        r = JsonObject(obj, path)
        return cls(
            local_data=r.build("localData", LocalBrokerData.from_json, LocalBrokerData),
            time_average_data=r.build("timeAverageData", TimeAverageBrokerData.from_json, TimeAverageBrokerData),
            preallocated_bundle_data=r.mapping("preallocatedBundleData", BundleData.from_json),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "localData": self.local_data.to_json(),
            "timeAverageData": self.time_average_data.to_json(),
            "preallocatedBundleData": {k: v.to_json() for k, v in self.preallocated_bundle_data.items()},
        }


_TOP_LEVEL = ("brokerData", "bundleData", "recentlyUnloadedBundles")


@functools.lru_cache(maxsize=8)
def _sheddable_order(bundles: tuple[str, ...]) -> tuple[tuple[str, ...], frozenset[str]]:
    # Memoised: every shedding cycle of a large cluster filters and orders the same 100,000 bundle names.
    kept = [b for b in bundles if not is_system_service_namespace(bundle_namespace(b))]
    order = tuple(java_order(kept, "hashmap"))
    return order, frozenset(order)


class _OrderedView(Mapping[str, BundleData]):
    """Some keys of a mapping, in a given order, with the mapping's values (a ``HashMap`` of references)."""

    def __init__(self, order: tuple[str, ...], members: frozenset[str], values: Mapping[str, BundleData]) -> None:
        self._order, self._members, self._values = order, members, values

    def __getitem__(self, bundle: str) -> BundleData:
        if bundle not in self._members:
            raise KeyError(bundle)
        return self._values[bundle]

    def __contains__(self, bundle: object) -> bool:
        return bundle in self._members

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


@dataclass
class LoadData:
    """Everything the leader decides from: brokers, bundle histories, recently unloaded bundles.

    The three dicts keep insertion order (= the order Java inserted, as far as known); strategies read
    them through the ``*_in_java_order`` accessors to iterate as Pulsar's ``ConcurrentHashMap`` does.
    """

    broker_data: dict[str, BrokerData] = field(default_factory=dict)
    #: a dict, or any mapping that behaves as one (the leader passes a snapshot of its bundle history)
    bundle_data: MutableMapping[str, BundleData] = field(default_factory=dict)
    recently_unloaded_bundles: dict[str, int] = field(default_factory=dict)

    # --- Java iteration order
    def brokers_in_java_order(self) -> list[str]:
        """Broker names as ``getBrokerData()`` (a ``ConcurrentHashMap``) iterates them."""
        return java_order(self.broker_data, "concurrent")

    def bundles_in_java_order(self) -> list[str]:
        """Bundle names as ``getBundleData()`` (a ``ConcurrentHashMap``) iterates them."""
        return java_order(self.bundle_data, "concurrent")

    def get_bundle_data_for_load_shedding(self) -> Mapping[str, BundleData]:
        """``getBundleDataForLoadShedding()``: bundle data minus system, heartbeat and SLA-monitor
        namespaces, as a read-only mapping in the iteration order of the ``HashMap`` Java collects it into.
        Its values are ``bundle_data``'s, read when asked for."""
        order, members = _sheddable_order(tuple(self.bundles_in_java_order()))
        return _OrderedView(order, members, self.bundle_data)

    # --- JSON
    @classmethod
    def from_json(cls, obj: Any, where: str = "") -> "LoadData":
        """Validate and build from Pulsar-named JSON; errors name ``where`` and the JSON path.

        Raises :class:`clusteremu.base.errors.InputError` (e.g. ``brokerData["b1"].localData.cpu.usage: expected
        a number, got "x"``).
        """
        return read_document(cls._from_json, obj, where)

    @classmethod
    def _from_json(cls, obj: Any) -> "LoadData":
        r = JsonObject(obj, "", "a LoadData object")
        unknown = [k for k in obj if k not in _TOP_LEVEL]
        if unknown:
            raise InputError(
                unknown[0], f"unknown LoadData field (expected {', '.join(_TOP_LEVEL)})"
            )
        out = cls(
            broker_data=r.mapping("brokerData", BrokerData.from_json),
            bundle_data=r.mapping("bundleData", BundleData.from_json),
        )

        def timestamp(value: Any, path: str) -> int:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                isinstance(value, float) and not (math.isfinite(value) and value.is_integer())
            ):
                raise InputError(path, f"expected an epoch-millisecond integer, got {show(value)}")
            return int(value)

        out.recently_unloaded_bundles = r.mapping("recentlyUnloadedBundles", timestamp)
        return out

    def to_json(self) -> dict[str, Any]:
        """Pulsar-named JSON; ``LoadData.from_json(x.to_json()) == x``."""
        return {
            "brokerData": {k: v.to_json() for k, v in self.broker_data.items()},
            "bundleData": {k: v.to_json() for k, v in self.bundle_data.items()},
            "recentlyUnloadedBundles": dict(self.recently_unloaded_bundles),
        }
