"""Pulsar ``ServiceConfiguration`` keys used by the load balancer, with their defaults, and a typed accessor.

Keys, defaults and units are Pulsar's own (newest ``ServiceConfiguration``, reference §3), so users paste
their ``broker.conf`` as it is. Units are the ones in the key names: percentages are 0–100 points unless
the key says otherwise (``loadBalancerHistoryResourcePercentage`` and ``maxUnloadPercentage`` are
fractions 0–1, as in Pulsar), ``minUnloadMessage`` is msg/s, ``minUnloadMessageThroughput`` bytes/s,
``loadBalancerBundleUnloadMinThroughputThreshold`` MiB/s.

* :data:`DEFAULTS` — every key of reference §3 with its default; a value's Python type is the key's type
  (``bool``, ``int`` for Java int/long, ``float`` for double, ``str``, ``frozenset`` for Java ``Set<String>``;
  ``loadBalancerOverrideBrokerNicSpeedGbps`` is an optional float, ``None`` when unset).
* :class:`PulsarConfig` — built from a dict; missing keys take the defaults, values are converted to the
  key's type (a bad value raises :class:`clusteremu.base.errors.InputError`), unknown keys are kept and listed by
  :meth:`PulsarConfig.unknown_keys` so a scenario loader can refuse them.
* :func:`as_config` — what every strategy does with the ``config`` it is given: a ``PulsarConfig`` as is, a plain
  mapping (or ``None``) wrapped.
* :func:`parse_broker_conf` — ``broker.conf`` lines to a dict of typed values.

Departures from Pulsar: Pulsar parses booleans with ``Boolean.valueOf`` (anything but ``true`` is
``false``); here only ``true``/``false`` (any case) are accepted and anything else is an error, since a
typo silently turning a feature off is exactly what a user of this tool wants to hear about. Keys Pulsar
has but the load balancer does not read are simply unknown here (kept, reported by ``unknown_keys()``).
"""
from __future__ import annotations

import math
from typing import Any, Iterable, Iterator, Mapping

from clusteremu.base.errors import InputError

__all__ = ["DEFAULTS", "OPTIONAL_FLOAT_KEYS", "PulsarConfig", "as_config", "convert_value", "parse_broker_conf"]

_IMPL = "org.apache.pulsar.broker.loadbalance.impl."

#: Every load-balancing key of reference §3 with Pulsar's default (type = the key's type).
DEFAULTS: dict[str, Any] = {
    # --- load manager and strategies
    "loadBalancerEnabled": True,
    "loadManagerClassName": _IMPL + "ModularLoadManagerImpl",
    "loadBalancerLoadSheddingStrategy": _IMPL + "ThresholdShedder",
    "loadBalancerLoadPlacementStrategy": _IMPL + "LeastLongTermMessageRate",
    # --- shedding cycle
    "loadBalancerSheddingEnabled": True,
    "loadBalancerSheddingIntervalMinutes": 1,
    "loadBalancerSheddingGracePeriodMinutes": 30,
    "loadBalancerSheddingExcludedNamespaces": frozenset(),
    # --- load reports
    "loadBalancerReportUpdateThresholdPercentage": 10,
    "loadBalancerReportUpdateMinIntervalMillis": 5000,
    "loadBalancerReportUpdateMaxIntervalMinutes": 15,
    "loadBalancerHostUsageCheckIntervalMinutes": 1,
    "loadBalancerResourceQuotaUpdateIntervalMinutes": 15,
    "loadBalancerMaxNumberOfBundlesInBundleLoadReport": 10,
    "loadBalancerOverrideBrokerNicSpeedGbps": None,
    # --- placement filters and strategies
    "loadBalancerDistributeBundlesEvenlyEnabled": True,
    "loadBalancerBrokerMaxTopics": 50000,
    "loadBalancerBrokerOverloadedThresholdPercentage": 85,
    "loadBalancerAverageResourceUsageDifferenceThresholdPercentage": 10,
    # --- resource weights (newest defaults: memory and direct memory 0)
    "loadBalancerCPUResourceWeight": 1.0,
    "loadBalancerMemoryResourceWeight": 0.0,
    "loadBalancerDirectMemoryResourceWeight": 0.0,
    "loadBalancerBandwidthInResourceWeight": 1.0,
    "loadBalancerBandwidthOutResourceWeight": 1.0,
    "loadBalancerBandwithInResourceWeight": 1.0,  # deprecated spelling, still honoured (see getters)
    "loadBalancerBandwithOutResourceWeight": 1.0,
    # --- ThresholdShedder
    "loadBalancerBrokerThresholdShedderPercentage": 10,
    "lowerBoundarySheddingEnabled": False,
    "loadBalancerHistoryResourcePercentage": 0.9,
    "loadBalancerBundleUnloadMinThroughputThreshold": 10.0,
    "atLeastOneBundleSelected": True,
    # --- UniformLoadShedder (and AvgShedder for the unload amounts)
    "loadBalancerMsgRateDifferenceShedderThreshold": 50.0,
    "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold": 4.0,
    "maxUnloadPercentage": 0.2,
    "minUnloadMessage": 1000,
    "minUnloadMessageThroughput": 1048576,
    "maxUnloadBundleNumPerShedding": -1,
    # --- AvgShedder
    "loadBalancerAvgShedderLowThreshold": 15,
    "loadBalancerAvgShedderHighThreshold": 40,
    "loadBalancerAvgShedderHitCountLowThreshold": 8,
    "loadBalancerAvgShedderHitCountHighThreshold": 2,
    # --- bundle split
    "loadBalancerAutoBundleSplitEnabled": True,
    "loadBalancerAutoUnloadSplitBundlesEnabled": True,
    "loadBalancerNamespaceBundleMaxTopics": 1000,
    "loadBalancerNamespaceBundleMaxSessions": 1000,
    "loadBalancerNamespaceBundleMaxMsgRate": 30000,
    "loadBalancerNamespaceBundleMaxBandwidthMbytes": 100,
    "loadBalancerNamespaceMaximumBundles": 128,
    "defaultNamespaceBundleSplitAlgorithm": "range_equally_divide",
    "flowOrQpsDifferenceThresholdPercentage": 10,
    "topicBundleAssignmentStrategy": "org.apache.pulsar.common.naming.ConsistentHashingTopicBundleAssigner",
    "namespaceBundleUnloadingTimeoutMs": 60000,
    "metadataStoreOperationTimeoutSeconds": 30,
    # --- extensible load manager only
    "loadBalancerDebugModeEnabled": False,
    "loadBalancerBrokerLoadTargetStd": 0.25,
    "loadBalancerSheddingConditionHitCountThreshold": 3,
    "loadBalancerTransferEnabled": True,
    "loadBalancerMaxNumberOfBrokerSheddingPerCycle": 3,
    "loadBalanceSheddingDelayInSeconds": 180,
    "loadBalancerBrokerLoadDataTTLInSeconds": 1800,
    "loadBalancerSheddingBundlesWithPoliciesEnabled": False,
    "loadBalancerSplitIntervalMinutes": 1,
    "loadBalancerMaxNumberOfBundlesToSplitPerCycle": 10,
    "loadBalancerNamespaceBundleSplitConditionHitCountThreshold": 3,
    "loadBalancerServiceUnitStateTombstoneDelayTimeInSeconds": 3600,
    "loadBalancerInFlightServiceUnitStateWaitingTimeInMillis": 30000,
    "loadBalancerServiceUnitStateMonitorIntervalInSeconds": 60,
    "loadBalancerMultiPhaseBundleUnload": True,
    "loadBalancerServiceUnitStateMaxConcurrentOverrides": 64,
}

#: Keys whose Java type is ``Optional<Double>``: unset (``None``) by default, a float when given.
OPTIONAL_FLOAT_KEYS: frozenset[str] = frozenset({"loadBalancerOverrideBrokerNicSpeedGbps"})

_TRUE = "true"
_FALSE = "false"


def _key_type(key: str) -> type:
    if key in OPTIONAL_FLOAT_KEYS:
        return float
    return type(DEFAULTS[key])


def convert_value(key: str, value: Any, where: str = "config") -> Any:
    """Convert ``value`` (a ``broker.conf`` string or a JSON value) to the type of the known ``key``.

    Raises :class:`InputError` naming ``where`` and the key when the value does not fit the type.
    Unknown keys are returned unchanged.
    """
    if key not in DEFAULTS:
        return value
    kind = _key_type(key)

    def bad(expected: str) -> InputError:
        return InputError(where, f"{key}: expected {expected}, got {value!r}")

    if key in OPTIONAL_FLOAT_KEYS and (value is None or (isinstance(value, str) and value.strip() == "")):
        return None
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in (_TRUE, _FALSE):
            return value.strip().lower() == _TRUE
        raise bad("true or false")
    if kind is int:
        if isinstance(value, bool):
            raise bad("an integer")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                raise bad("an integer") from None
        raise bad("an integer")
    if kind is float:
        if isinstance(value, bool):
            raise bad("a number")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                raise bad("a number") from None
        raise bad("a number")
    if kind is frozenset:
        if isinstance(value, str):
            return frozenset(part.strip() for part in value.split(",") if part.strip())
        if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
            return frozenset(value)
        raise bad("a comma-separated string or a list of strings")
    if isinstance(value, str):
        return value.strip()
    raise bad("a string")


class PulsarConfig(Mapping[str, Any]):
    """A typed, read-only view of ``ServiceConfiguration`` values keyed by Pulsar's names.

    ``PulsarConfig({"maxUnloadPercentage": 0.5})["maxUnloadPercentage"] == 0.5``; missing keys read as
    :data:`DEFAULTS`; ``cfg.maxUnloadPercentage`` works too (attribute access by the Java key name).
    Iteration yields every known key followed by the unknown keys given.
    """

    def __init__(self, values: Mapping[str, Any] | None = None, *, where: str = "config") -> None:
        given = dict(values or {})
        self._values: dict[str, Any] = dict(DEFAULTS)
        self._unknown: dict[str, Any] = {}
        for key, value in given.items():
            if not isinstance(key, str):
                raise InputError(where, f"configuration keys must be strings, got {key!r}")
            if key in DEFAULTS:
                self._values[key] = convert_value(key, value, where)
            else:
                self._unknown[key] = value
        self._given = frozenset(given)

    # --- Mapping protocol
    def __getitem__(self, key: str) -> Any:
        if key in self._values:
            return self._values[key]
        return self._unknown[key]

    def __iter__(self) -> Iterator[str]:
        yield from self._values
        yield from self._unknown

    def __len__(self) -> int:
        return len(self._values) + len(self._unknown)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: expose the Java key names as attributes.
        values = self.__dict__.get("_values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        changed = {k: v for k, v in self._values.items() if v != DEFAULTS[k]}
        return f"PulsarConfig({changed!r}, unknown={sorted(self._unknown)!r})"

    # --- introspection
    def unknown_keys(self) -> list[str]:
        """Keys given that are not load-balancing keys known here, in the order given."""
        return list(self._unknown)

    def is_set(self, key: str) -> bool:
        """Whether ``key`` was given explicitly (rather than defaulted)."""
        return key in self._given

    def with_updates(self, updates: Mapping[str, Any], *, where: str = "config") -> "PulsarConfig":
        """A new config with ``updates`` applied on top of this one's given values."""
        merged = {k: self[k] for k in self._given}
        merged.update(updates)
        return PulsarConfig(merged, where=where)

    def to_dict(self) -> dict[str, Any]:
        """All values (defaults included, unknown keys too); sets become sorted lists (JSON-able)."""
        out: dict[str, Any] = {}
        for key in self:
            value = self[key]
            out[key] = sorted(value) if isinstance(value, frozenset) else value
        return out

    # --- getters with Pulsar logic beyond a plain read
    def get_load_balancer_bandwidth_in_resource_weight(self) -> float:
        """``getLoadBalancerBandwidthInResourceWeight()``: the new key if it is not 1.0, else the old
        ``loadBalancerBandwithInResourceWeight`` spelling if that is not 1.0, else 1.0."""
        return _renamed_weight(
            self._values["loadBalancerBandwidthInResourceWeight"], self._values["loadBalancerBandwithInResourceWeight"]
        )

    def get_load_balancer_bandwidth_out_resource_weight(self) -> float:
        """``getLoadBalancerBandwidthOutResourceWeight()``, same rule as the "in" getter."""
        return _renamed_weight(
            self._values["loadBalancerBandwidthOutResourceWeight"], self._values["loadBalancerBandwithOutResourceWeight"]
        )

    def resource_weights(self) -> tuple[float, float, float, float]:
        """(cpu, directMemory, bandwidthIn, bandwidthOut) weights for the newest 4-argument weighted max."""
        return (
            self._values["loadBalancerCPUResourceWeight"],
            self._values["loadBalancerDirectMemoryResourceWeight"],
            self.get_load_balancer_bandwidth_in_resource_weight(),
            self.get_load_balancer_bandwidth_out_resource_weight(),
        )

    def resource_weights_5(self) -> tuple[float, float, float, float, float]:
        """(cpu, memory, directMemory, bandwidthIn, bandwidthOut) weights for the 5-argument weighted max."""
        return (
            self._values["loadBalancerCPUResourceWeight"],
            self._values["loadBalancerMemoryResourceWeight"],
            self._values["loadBalancerDirectMemoryResourceWeight"],
            self.get_load_balancer_bandwidth_in_resource_weight(),
            self.get_load_balancer_bandwidth_out_resource_weight(),
        )


def _renamed_weight(new: float, old: float) -> float:
    if new != 1.0:
        return new
    if old != 1.0:
        return old
    return 1.0


def as_config(config: Mapping[str, Any] | PulsarConfig | None) -> PulsarConfig:
    """``config`` as a :class:`PulsarConfig`: one given as such is used as is, a plain mapping of Pulsar keys is
    converted (``InputError`` for a bad value), ``None`` means Pulsar's defaults."""
    return config if isinstance(config, PulsarConfig) else PulsarConfig(config)


def parse_broker_conf(lines: Iterable[str], source: str = "broker.conf") -> dict[str, Any]:
    """Parse ``broker.conf`` lines (``key=value``; ``#`` comments and blank lines skipped).

    Known keys are converted to their type; unknown keys are kept as strings. An empty value of a known
    non-string key means "unset" in Pulsar and is skipped (the default stays). A line without ``=`` or a
    value that does not fit raises :class:`InputError` naming ``source``, the line number and the key.
    A later line for the same key wins, as in Java's ``Properties``.
    """
    out: dict[str, Any] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("!"):
            continue
        if "=" not in line:
            raise InputError(f"{source}:{number}", f"expected key=value, got {line!r}")
        key, value = (part.strip() for part in line.split("=", 1))
        if not key:
            raise InputError(f"{source}:{number}", f"empty key in {line!r}")
        if key in DEFAULTS and value == "" and not isinstance(DEFAULTS[key], (str, frozenset)):
            continue
        out[key] = convert_value(key, value, f"{source}:{number}")
    return out
