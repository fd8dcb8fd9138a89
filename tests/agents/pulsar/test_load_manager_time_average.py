"""The modular leader's ``BrokerData.timeAverageData``, as LeastLongTermMessageRate scores placements with it."""
from __future__ import annotations

from typing import Any

import numpy as np

from clusteremu.agents.pulsar.load_manager import LoadManager
from clusteremu.strategies.pulsar.config import DEFAULTS
from clusteremu.strategies.pulsar.load_data import LocalBrokerData, NamespaceBundleStats
from clusteremu.strategies.pulsar.resource_usage import ResourceUsage

MODULAR = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"


class Port:
    """The little of a broker the leader's placement uses: its config, randomness, clock and events."""

    name = "10.0.0.1:8080"

    def __init__(self) -> None:
        self.config: dict[str, Any] = dict(DEFAULTS)
        self.events: list[tuple[str, dict[str, Any]]] = []

    def rng(self, purpose: str = "default") -> np.random.Generator:
        return np.random.default_rng(0)

    def now_ms(self) -> int:
        return 0

    def emit(self, kind: str, **fields: Any) -> None:
        self.events.append((kind, fields))


def report(rate_in: float, rate_out: float, bundle: str) -> dict[str, Any]:
    local = LocalBrokerData(cpu=ResourceUsage(10.0, 100.0), load_manager_class_name=MODULAR)
    local.last_stats = {bundle: NamespaceBundleStats(msg_rate_in=rate_in, msg_rate_out=rate_out, topics=1)}
    local.bundles = [bundle]
    return local.to_json()


def test_the_broker_with_the_lower_long_term_message_rate_wins_the_placements():
    # Two brokers at the same 10 % CPU. broker-a serves 1,000 + 1,000 msg/s; broker-b 10 + 10 msg/s. One report
    # each: a bundle's first sample replaces its default stats, so the long-term averages are the reported rates
    # and the brokers' timeAverageData sums are 2,000 and 20 msg/s. Placement 1: scores 2,000 and 20, broker-b.
    # It then holds a preallocated bundle with no history (default stats: 50 in + 50 out); placement 2 (another
    # namespace: placement spreads a namespace's bundles first): scores 2,000 and 20 + 100 = 120, broker-b again. (Without the averages, placement 2 would score broker-a 0 against
    # broker-b's 100 and go to broker-a.)
    lm = LoadManager(Port())
    lm.on_broker_report("broker-a", "created", report(1000.0, 1000.0, "t/ns/0x00000000_0x80000000"))
    lm.on_broker_report("broker-b", "created", report(10.0, 10.0, "t/ns/0x80000000_0xffffffff"))
    averages = lm.load_data().broker_data
    assert averages["broker-a"].time_average_data.long_term_msg_rate_in == 1000.0
    assert averages["broker-b"].time_average_data.long_term_msg_rate_out == 10.0
    assert lm.place("t/other/0x00000000_0x80000000") == "broker-b"
    assert lm.place("t/third/0x00000000_0xffffffff") == "broker-b"
