"""Pulsar's modular-load-manager placement (``org.apache.pulsar.broker.loadbalance.impl``).

Strategies, each built as ``Strategy(config: PulsarConfig, rng: numpy.random.Generator)`` and offering
``select_broker(candidates, bundle, load) -> str | None`` (see :mod:`.strategy`):

* :mod:`.least_long_term_message_rate` — ``LeastLongTermMessageRate`` (the default);
* :mod:`.least_resource_usage_with_weight` — ``LeastResourceUsageWithWeight`` (stateful history);
* :mod:`.round_robin` — ``RoundRobinBrokerSelector`` (used for ``loadBalancerSheddingExcludedNamespaces``).

Around them: :mod:`.filters` (isolation policies, topic-count, anti-affinity, even-spread, load-manager-class
and version filters; the shedding guards), :mod:`.broker_version` (the version filter's semantic versions)
and :mod:`.pipeline` (``select_broker_for_assignment``: the whole placement of a bundle).
``AvgShedder``'s placement lives with its shedding in :mod:`clusteremu.strategies.pulsar.shedding.avg_shedder`.
"""
from .least_long_term_message_rate import LeastLongTermMessageRate
from .least_resource_usage_with_weight import LeastResourceUsageWithWeight
from .round_robin import RoundRobinBrokerSelector
from .strategy import BrokerChoice, PlacementStrategy

__all__ = [
    "BrokerChoice",
    "LeastLongTermMessageRate",
    "LeastResourceUsageWithWeight",
    "PlacementStrategy",
    "RoundRobinBrokerSelector",
]
