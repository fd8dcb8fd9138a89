"""Shared helpers of the transport tests: short runs of built-in scenarios under any placement."""
from __future__ import annotations

import pytest

from clusteremu.scenarios.catalog import builtins

#: the scale scenario shrunk to a size that runs in a second or two (the benchmark runs it at full size)
SHRINK = {
    "pulsar-large": ["cluster.brokers=20", "cluster.clients=40",
                     "workload.namespaces.0.bundles=64", "workload.namespaces.1.bundles=64",
                     "workload.namespaces.2.bundles=32", "workload.tasks.0.topics=2000",
                     "workload.tasks.1.topics=2000", "workload.tasks.2.topics=1000"],
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
