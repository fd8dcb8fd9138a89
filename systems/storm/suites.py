"""Storm's sweep suite: the scenarios of the Resource Aware Scheduler's documentation (shared/seeds/003)."""
from __future__ import annotations

from clusteremu.emulator.systems import Suite

SUITES: dict[str, Suite] = {
    "storm": Suite(
        ("storm-steady-multi-user", "storm-supervisor-failure", "storm-eviction-2x", "storm-eviction-1x",
         "storm-priority-classes", "storm-random-topologies", "storm-rolling-restart", "storm-gpu-racks",
         "storm-nimbus-failover", "storm-doc-five-racks-old", "storm-doc-five-racks", "storm-doc-two-users",
         "storm-doc-heap-cap"),
        "Storm's Resource Aware Scheduler (shared/seeds/003): a steady multi-user cluster, supervisor failures and "
        "rescheduling, eviction by priority on an over-subscribed cluster (2.x and 1.x rules), three priority "
        "classes with user pools, random topologies on random clusters (the documentation's evaluation), a "
        "rolling restart of the supervisors, heterogeneous racks with GPUs, a Nimbus failover during "
        "submissions, and the documentation's worked examples (the five-rack table under the old and the 2.x "
        "rack sort, the two-user priority example, the worker heap cap)",
    ),
}
