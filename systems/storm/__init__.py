"""Apache Storm's control plane as a clusteremu system: Nimbus (leader-elected on ZooKeeper), supervisors and users
submitting topologies (``agents/storm``), the Resource Aware Scheduler's strategies (``strategies/storm``), the
scenarios of Storm's RAS documentation (``scenarios/library/storm``, ``shared/seeds/003``), and ``decide`` on a
cluster snapshot (:mod:`.decide`)."""
from __future__ import annotations

from clusteremu.emulator.systems import System

SYSTEM = System(
    name="storm",
    description="Apache Storm Nimbus (leader-elected), supervisors and users submitting topologies: the Resource "
                "Aware Scheduler's rounds, supervisor failures and rescheduling, eviction by priority",
    model="clusteremu.agents.storm.model:MODEL",
    events=("clusteremu.agents.storm.assignments", "clusteremu.agents.storm.nimbus",
            "clusteremu.agents.storm.supervisor", "clusteremu.agents.storm.user",
            "clusteremu.emulator.metadata_store"),
    entity_keys=("topology", "supervisor", "user"),
    entity_fields=("by", "topology_name"),
    figures="clusteremu.tools.analysis.storm:StormFigures",
    rating="clusteremu.tools.analysis.storm_rating:RATING",
    decide="clusteremu.systems.storm.decide:ADAPTER",
    strategies="clusteremu.systems.storm.decide:STRATEGIES",
    views="clusteremu.agents.storm.views:StormViews",
    suites="clusteremu.systems.storm.suites:SUITES",
    library="clusteremu.scenarios.library.storm",
)
