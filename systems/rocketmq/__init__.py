"""Apache RocketMQ's consumer load balancing as a clusteremu system: the name server, brokers and push consumers
(``agents/rocketmq``), the allocation strategies and ``allocate4Pop`` (``strategies/rocketmq``), the scenarios of
shared/seeds/004 and their variations (``scenarios/library/rocketmq``), the sweep suites (:mod:`.suites`) and
``decide`` on an allocation snapshot (:mod:`.decide`)."""
from __future__ import annotations

from clusteremu.emulator.systems import System

SYSTEM = System(
    name="rocketmq",
    description="Apache RocketMQ name server, brokers and push consumers: client-side rebalance from stale views "
                "(4.9.x and 5.x), orderly queue locks, broker-side assignment and POP",
    model="clusteremu.agents.rocketmq.model:MODEL",
    events=("clusteremu.agents.rocketmq.namesrv", "clusteremu.agents.rocketmq.broker",
            "clusteremu.agents.rocketmq.consumer"),
    entity_keys=("queue", "consumer", "cid"),
    entity_fields=("broker", "group"),
    figures="clusteremu.tools.analysis.rocketmq:RocketMQFigures",
    rating="clusteremu.tools.analysis.rocketmq_rating:RATING",
    decide="clusteremu.systems.rocketmq.decide:ADAPTER",
    strategies="clusteremu.strategies.rocketmq.registry",
    views="clusteremu.agents.rocketmq.views:RocketMQViews",
    suites="clusteremu.systems.rocketmq.suites:SUITES",
    library="clusteremu.scenarios.library.rocketmq",
)
