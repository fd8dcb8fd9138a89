"""Pulsar's extensible load manager (PIP-192, ``org.apache.pulsar.broker.loadbalance.extensions``): its
shedding and placement strategies and the data they read, faithful to Pulsar's source (reference §11).

Same API style as the modular strategies::

    from clusteremu.strategies import pulsar
    from clusteremu.strategies.pulsar.extensible import TransferContext

    s = pulsar.create("TransferShedder", config)     # or the fully-qualified Java class name
    ctx = TransferContext.from_json(recorded)         # or TransferContext(store, top_bundles, available, now)
    result = s.find_bundles_for_unloading(ctx)        # UnloadResult
    result.decisions                                  # [(source_broker, bundle, destination or None, reason)]
    result.skip_reason                                # e.g. Reason.HitCount when nothing moved
    s.get_state(); s.set_state(state)                 # {"unloadConditionHitCount": n, "counter": {...}}

    p = pulsar.create("org.apache.pulsar.broker.loadbalance.extensions.strategy.LeastResourceUsageWithWeight",
                      config, rng=rng)
    p.select_broker(candidates, bundle, ctx)          # a broker, or None without candidates

``config`` is a ``PulsarConfig`` or a dict of Pulsar's ServiceConfiguration keys (missing keys take Pulsar's
defaults); every strategy is built as ``Class(config, rng)`` and is pure: no I/O, no clock (time comes in
as ``now``, epoch ms), no globals.

Modules:

* :mod:`.broker_load_data` — ``BrokerLoadData`` (per-broker report with ``weightedMaxEMA``), ``SystemResourceUsage``;
* :mod:`.top_k_bundles` — ``TopKBundles`` (a broker's top-k bundle report), ``TopBundlesLoadData``,
  ``BundleLoadData``, Pulsar's bundle-stats comparator and quickselect;
* :mod:`.transfer_context` — ``TransferContext`` (the inputs of a shedding cycle, with its JSON form);
* :mod:`.transfer_shedder` — ``TransferShedder``, ``LoadStats``, ``UnloadResult``;
* :mod:`.unload_decision` — ``UnloadDecision``, ``Label``, ``Reason``;
* :mod:`.unload_counter` — ``UnloadCounter`` (outcome counters), whose breakdown table :mod:`.breakdown` shares with
  ``SplitCounter``;
* :mod:`.least_resource_usage_with_weight` — the extension's ``LeastResourceUsageWithWeight``;
* :mod:`.service_unit_state` — ``ServiceUnitState``, ``StorageType`` and the allowed transitions;
* :mod:`.ownership_monitor` — the channel owner's ownership monitor and inactive-broker clean-up
  (``monitorOwnerships``, ``doCleanup``) as pure decisions;
* :mod:`.split_strategy` — ``DefaultNamespaceBundleSplitStrategyImpl`` (which of a broker's bundles to split) and
  its ``SplitContext``; :mod:`.split_decision` — ``Split``, ``SplitDecision``, ``SplitLabel``, ``SplitReason``;
  :mod:`.split_counter` — ``SplitCounter``.

The JSON readers use :mod:`clusteremu.strategies.pulsar.json_input`, as the modular load manager's ``LoadData`` does.
"""
from .broker_load_data import BrokerLoadData, SystemResourceUsage
from .least_resource_usage_with_weight import LeastResourceUsageWithWeight
from .service_unit_state import (
    ServiceUnitState,
    StorageType,
    is_active_state,
    is_in_flight_state,
    is_valid_transition,
)
from .split_counter import SplitCounter
from .split_decision import Split, SplitDecision, SplitLabel, SplitReason
from .split_strategy import DefaultNamespaceBundleSplitStrategyImpl, SplitContext
from .top_k_bundles import BundleLoadData, TopBundlesLoadData, TopKBundles
from .transfer_context import NonTransferableRule, NonTransferableRules, TransferContext
from .transfer_shedder import LoadStats, TransferShedder, UnloadResult
from .unload_counter import UnloadCounter
from .unload_decision import Label, Reason, UnloadDecision

__all__ = [
    "BrokerLoadData",
    "BundleLoadData",
    "DefaultNamespaceBundleSplitStrategyImpl",
    "Label",
    "LeastResourceUsageWithWeight",
    "LoadStats",
    "NonTransferableRule",
    "NonTransferableRules",
    "Reason",
    "ServiceUnitState",
    "Split",
    "SplitContext",
    "SplitCounter",
    "SplitDecision",
    "SplitLabel",
    "SplitReason",
    "StorageType",
    "SystemResourceUsage",
    "TopBundlesLoadData",
    "TopKBundles",
    "TransferContext",
    "TransferShedder",
    "UnloadCounter",
    "UnloadDecision",
    "UnloadResult",
    "is_active_state",
    "is_in_flight_state",
    "is_valid_transition",
]
