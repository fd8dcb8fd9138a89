"""Shared helpers of the transport tests: short runs of built-in scenarios under any placement."""
from __future__ import annotations

import pytest

from clusteremu.scenarios.catalog import builtins

#: the scale scenarios shrunk to a size that runs in a second or two (the benchmark runs it at full size)
SHRINK = {
    "pulsar-large": ["cluster.brokers=20", "cluster.clients=40",
                     "workload.namespaces.0.bundles=64", "workload.namespaces.1.bundles=64",
                     "workload.namespaces.2.bundles=32", "workload.tasks.0.topics=2000",
                     "workload.tasks.1.topics=2000", "workload.tasks.2.topics=1000"],
    "rocketmq-large": ["workload.groups=2", "cluster.consumers=8", "cluster.brokers=4", "workload.topic_brokers=2",
                       "cluster.queues_per_broker=4", 'faults.0.agents=["consumer-9", "consumer-10"]',
                       'faults.1.agents=["consumer-3"]'],
    "storm-large": ['cluster.supervisors=[{count=5, rack="/rack-00"}, {count=5, rack="/rack-01"}]',
                    'faults=[{kind="restart", at=60.0, duration_s=30.0, agents=["supervisor-3"]}]'],
    # Pulsar's published load-manager benchmark at the golden test's size (twenty brokers, a tenth of the publishers)
    **{f"lm-bench-rolling-restart-{lm}": ["cluster.brokers=20", "cluster.clients=4",
                                          "workload.namespaces.0.bundles=64", "workload.tasks.0.topics=300"]
       for lm in ("modular", "extensible")},
    **{f"lm-bench-scale-out-{lm}": ["cluster.clients=4", "workload.tasks.0.topics=1000",
                                    "workload.tasks.0.rate_msgs=500"] for lm in ("modular", "extensible")},
}


@pytest.fixture(scope="session")
def builtin_names() -> list[str]:
    return [b.name for b in builtins()]


@pytest.fixture(autouse=True)
def reap():
    """Kill the subprocesses a test left running, even when it failed."""
    from .proc_helpers import reap_started

    yield
    reap_started()
