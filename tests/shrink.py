"""The built-in scenarios too large for a test run, shrunk to a size that runs in a second or two (their
benchmarks run them at full size): the overrides (``--set`` paths) each gets in the golden-digest test and the
placement tests. One table, so a new large scenario is shrunk once."""
from __future__ import annotations

#: scenario name -> the overrides that shrink it
SHRINK = {
    "pulsar-large": ["cluster.brokers=20", "cluster.clients=40",
                     "workload.namespaces.0.bundles=64", "workload.namespaces.1.bundles=64",
                     "workload.namespaces.2.bundles=32", "workload.tasks.0.topics=2000",
                     "workload.tasks.1.topics=2000", "workload.tasks.2.topics=1000"],
    "storm-large": ['cluster.supervisors=[{count=5, rack="/rack-00"}, {count=5, rack="/rack-01"}, '
                    '{count=5, rack="/rack-02"}, {count=5, rack="/rack-03"}]',
                    'faults=[{kind="restart", at=600.0, duration_s=120.0, agents=["supervisor-3"]}, '
                    '{kind="pause", at=1200.0, duration_s=40.0, agents=["supervisor-7"]}]'],
    "rocketmq-large": ["workload.groups=2", "cluster.consumers=8", "cluster.brokers=4", "workload.topic_brokers=2",
                       "cluster.queues_per_broker=4", 'faults.0.agents=["consumer-9", "consumer-10"]',
                       'faults.1.agents=["consumer-3"]'],
    # Pulsar's published load-manager benchmark: twenty brokers (two per restart wave), a thousandth of the bundles.
    **{f"lm-bench-rolling-restart-{lm}": ["cluster.brokers=20", "cluster.clients=4",
                                          "workload.namespaces.0.bundles=64", "workload.tasks.0.topics=300"]
       for lm in ("modular", "extensible")},
    # A tenth of the publishers, each ten times as busy: the same load per broker.
    **{f"lm-bench-{row}-{lm}": ["cluster.clients=4", "workload.tasks.0.topics=1000",
                                "workload.tasks.0.rate_msgs=500"]
       for row in ("scale-out", "scale-in") for lm in ("modular", "extensible")},
    # Split: 300 hot topics at 2,000 msg/s, 600,000 msg/s in all: still split by rate, to about 30 bundles.
    **{f"lm-bench-split-{lm}": ["cluster.clients=4", "workload.tasks.0.topics=300",
                                "workload.tasks.0.rate_msgs=2000"] for lm in ("modular", "extensible")},
}
