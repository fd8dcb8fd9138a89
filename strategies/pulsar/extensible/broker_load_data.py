"""``BrokerLoadData``: what each broker publishes to the extensible load manager's load-data store.

Follows ``EXT/data/BrokerLoadData.java`` (newest: with ``topics`` and ``msgThroughputEMA``).

Units: the five resources are :class:`..resource_usage.ResourceUsage` (usage and limit in the resource's
own unit; see that module); ``msgThroughputIn/Out`` and ``msgThroughputEMA`` are bytes/s;
``msgRateIn/Out`` msg/s; ``maxResourceUsage`` and ``weightedMaxEMA`` are fractions (1.0 = 100 %, more
when a resource is over its limit); ``updatedAt``/``reportedAt`` epoch milliseconds.

:meth:`BrokerLoadData.update` is Pulsar's rule, with ``H = loadBalancerHistoryResourcePercentage``:

* ``maxResourceUsage = max(cpu%, directMemory%, bandwidthIn%, bandwidthOut%) / 100`` — unweighted, memory
  skipped. Each ``percentUsage()`` is float32 (as in Java), but the max and the division are double:
  ``BrokerLoadData`` reaches ``LocalBrokerData``'s public ``max(double...)``, so 4 % gives exactly 0.04
  (Pulsar's ``BrokerLoadDataTest`` asserts that);
* ``weightedMaxEMA``: ``w = max(cpu%·w_cpu, memory%·w_mem, directMemory%·w_dm, bwIn%·w_in, bwOut%·w_out) / 100``
  (5 resources, memory included); the first update (``updatedAt == 0``) takes ``w`` as is, later ones
  ``old·H + (1 − H)·w``;
* ``msgThroughputEMA``: the same rule over ``msgThroughputIn + msgThroughputOut``;
* ``updatedAt = now``.

A fresh object has ``maxResourceUsage = weightedMaxEMA = 1.0`` (Pulsar's ``DEFAULT_RESOURCE_USAGE``) and
everything else 0; :meth:`BrokerLoadData.clear` returns to that state.

Departures: Java reads the wall clock for ``updatedAt``; here the caller passes ``now`` (virtual time).
The bandwidth weights follow the renamed-key rule of ``PulsarConfig`` (``loadBalancerBandwidthIn...``
unless it is 1.0, else the old ``loadBalancerBandwith...`` spelling), which is what the newest
``ServiceConfiguration`` getter does. Java's ``update`` keeps references to the caller's
``ResourceUsage`` objects; here they are copied, so later edits to the caller's objects do not leak in.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from clusteremu.base.java import format_fixed, jackson_double_out, strict_max

from ..config import PulsarConfig, as_config
from ..json_input import JsonObject, read_object
from ..resource_usage import ResourceUsage, max_resource_usage_with_weight_5

__all__ = ["BrokerLoadData", "SystemResourceUsage"]

# Pulsar's DEFAULT_RESOURCE_USAGE: a broker that never reported looks fully loaded.
_DEFAULT_RESOURCE_USAGE = 1.0

_RESOURCE_FIELDS = (
    ("cpu", "cpu"),
    ("memory", "memory"),
    ("direct_memory", "directMemory"),
    ("bandwidth_in", "bandwidthIn"),
    ("bandwidth_out", "bandwidthOut"),
)


@dataclass
class SystemResourceUsage:
    """A broker's raw resource sample (Pulsar's ``SystemResourceUsage``): five ``ResourceUsage`` values."""

    cpu: ResourceUsage = field(default_factory=ResourceUsage)
    memory: ResourceUsage = field(default_factory=ResourceUsage)
    direct_memory: ResourceUsage = field(default_factory=ResourceUsage)
    bandwidth_in: ResourceUsage = field(default_factory=ResourceUsage)
    bandwidth_out: ResourceUsage = field(default_factory=ResourceUsage)


def _copy(usage: ResourceUsage) -> ResourceUsage:
    return ResourceUsage(usage.usage, usage.limit)


@dataclass
class BrokerLoadData:
    """One broker's entry in the load-data store (Python names are the snake_case twins of Pulsar's)."""

    cpu: ResourceUsage = field(default_factory=ResourceUsage)
    memory: ResourceUsage = field(default_factory=ResourceUsage)
    direct_memory: ResourceUsage = field(default_factory=ResourceUsage)
    bandwidth_in: ResourceUsage = field(default_factory=ResourceUsage)
    bandwidth_out: ResourceUsage = field(default_factory=ResourceUsage)
    msg_throughput_in: float = 0.0
    msg_throughput_out: float = 0.0
    msg_rate_in: float = 0.0
    msg_rate_out: float = 0.0
    bundle_count: int = 0
    topics: int = 0
    max_resource_usage: float = _DEFAULT_RESOURCE_USAGE
    weighted_max_ema: float = _DEFAULT_RESOURCE_USAGE
    msg_throughput_ema: float = 0.0
    updated_at: int = 0
    reported_at: int = 0

    # --- updates
    def update(
        self,
        usage: SystemResourceUsage,
        msg_throughput_in: float,
        msg_throughput_out: float,
        msg_rate_in: float,
        msg_rate_out: float,
        bundle_count: int,
        topics: int,
        config: Mapping[str, Any] | PulsarConfig | None,
        now: int,
    ) -> None:
        """Fold a new sample in (see the module docstring); ``now`` is epoch ms and becomes ``updatedAt``.

        Throughputs in bytes/s, rates in msg/s; ``config`` holds ServiceConfiguration keys.
        """
        conf = as_config(config)
        self.cpu = _copy(usage.cpu)
        self.memory = _copy(usage.memory)
        self.direct_memory = _copy(usage.direct_memory)
        self.bandwidth_in = _copy(usage.bandwidth_in)
        self.bandwidth_out = _copy(usage.bandwidth_out)
        self.msg_throughput_in = float(msg_throughput_in)
        self.msg_throughput_out = float(msg_throughput_out)
        self.msg_rate_in = float(msg_rate_in)
        self.msg_rate_out = float(msg_rate_out)
        self.bundle_count = int(bundle_count)
        self.topics = int(topics)
        self._update_features(conf)
        self.updated_at = int(now)

    def update_from(self, other: "BrokerLoadData") -> None:
        """``update(BrokerLoadData other)``: copy every field of ``other``, timestamps included."""
        for name in self.__dataclass_fields__:
            value = getattr(other, name)
            setattr(self, name, _copy(value) if isinstance(value, ResourceUsage) else value)

    def clear(self) -> None:
        """Back to the state of a fresh ``BrokerLoadData()``."""
        self.update_from(BrokerLoadData())

    def _update_features(self, conf: PulsarConfig) -> None:
        # Both EMAs test updatedAt before it is overwritten, so the first sample seeds them.
        first = self.updated_at == 0
        history = float(conf["loadBalancerHistoryResourcePercentage"])
        self.max_resource_usage = (
            strict_max(
                (
                    self.cpu.percent_usage(),
                    self.direct_memory.percent_usage(),
                    self.bandwidth_in.percent_usage(),
                    self.bandwidth_out.percent_usage(),
                )
            )
            / 100
        )
        weighted_max = max_resource_usage_with_weight_5(
            self.cpu, self.memory, self.direct_memory, self.bandwidth_in, self.bandwidth_out,
            *conf.resource_weights_5(),
        )
        self.weighted_max_ema = (
            weighted_max if first else self.weighted_max_ema * history + (1 - history) * weighted_max
        )
        throughput = self.msg_throughput_in + self.msg_throughput_out
        self.msg_throughput_ema = (
            throughput if first else self.msg_throughput_ema * history + (1 - history) * throughput
        )

    # --- rendering
    def to_string(self, config: Mapping[str, Any] | PulsarConfig | None) -> str:
        """``toString(ServiceConfiguration)``: the one-line summary Pulsar logs, formatted as Java does."""
        conf = as_config(config)
        w_cpu, w_mem, w_dm, w_in, w_out = conf.resource_weights_5()
        f2 = lambda v: format_fixed(v, 2)  # noqa: E731 - Java's %.2f
        f6 = format_fixed  # Java's %f
        return (
            f"cpu= {f2(self.cpu.percent_usage())}%, memory= {f2(self.memory.percent_usage())}%, "
            f"directMemory= {f2(self.direct_memory.percent_usage())}%, "
            f"bandwidthIn= {f2(self.bandwidth_in.percent_usage())}%, "
            f"bandwidthOut= {f2(self.bandwidth_out.percent_usage())}%, "
            f"cpuWeight= {f6(w_cpu)}, memoryWeight= {f6(w_mem)}, directMemoryWeight= {f6(w_dm)}, "
            f"bandwidthInResourceWeight= {f6(w_in)}, bandwidthOutResourceWeight= {f6(w_out)}, "
            f"msgThroughputIn= {f2(self.msg_throughput_in)}, msgThroughputOut= {f2(self.msg_throughput_out)}, "
            f"msgRateIn= {f2(self.msg_rate_in)}, msgRateOut= {f2(self.msg_rate_out)}, "
            f"bundleCount= {self.bundle_count}, "
            f"maxResourceUsage= {f2(self.max_resource_usage * 100)}%, "
            f"weightedMaxEMA= {f2(self.weighted_max_ema * 100)}%, "
            f"msgThroughputEMA= {f2(self.msg_throughput_ema)}, "
            f"updatedAt= {self.updated_at}, reportedAt= {self.reported_at}"
        )

    # --- JSON (Pulsar's field names)
    def to_json(self) -> dict[str, Any]:
        """The JSON Pulsar stores for a broker (``{"cpu": {"usage", "limit"}, ..., "reportedAt"}``)."""
        out: dict[str, Any] = {java: getattr(self, attr).to_json() for attr, java in _RESOURCE_FIELDS}
        out.update(
            {
                "msgThroughputIn": jackson_double_out(self.msg_throughput_in),
                "msgThroughputOut": jackson_double_out(self.msg_throughput_out),
                "msgRateIn": jackson_double_out(self.msg_rate_in),
                "msgRateOut": jackson_double_out(self.msg_rate_out),
                "bundleCount": self.bundle_count,
                "topics": self.topics,
                "maxResourceUsage": jackson_double_out(self.max_resource_usage),
                "weightedMaxEMA": jackson_double_out(self.weighted_max_ema),
                "msgThroughputEMA": jackson_double_out(self.msg_throughput_ema),
                "updatedAt": self.updated_at,
                "reportedAt": self.reported_at,
            }
        )
        return out

    @classmethod
    def from_json(cls, obj: Any, path: str = "") -> "BrokerLoadData":
        """Build from Pulsar-named JSON; missing fields take a fresh object's values, unknown fields are
        ignored (as Pulsar's Jackson reader does). A bad value raises :class:`clusteremu.base.errors.InputError`
        naming its JSON path (e.g. ``brokerLoadDataStore["b1"].cpu.usage``)."""
        r = JsonObject(read_object(obj, path or "BrokerLoadData", "a BrokerLoadData object"), path)
        return cls(
            **{attr: r.build(java, ResourceUsage.from_json, ResourceUsage) for attr, java in _RESOURCE_FIELDS},
            msg_throughput_in=r.number("msgThroughputIn"),
            msg_throughput_out=r.number("msgThroughputOut"),
            msg_rate_in=r.number("msgRateIn"),
            msg_rate_out=r.number("msgRateOut"),
            bundle_count=r.integer("bundleCount"),
            topics=r.integer("topics"),
            max_resource_usage=r.number("maxResourceUsage", _DEFAULT_RESOURCE_USAGE),
            weighted_max_ema=r.number("weightedMaxEMA", _DEFAULT_RESOURCE_USAGE),
            msg_throughput_ema=r.number("msgThroughputEMA"),
            updated_at=r.integer("updatedAt"),
            reported_at=r.integer("reportedAt"),
        )
