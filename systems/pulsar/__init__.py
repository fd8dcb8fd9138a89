"""Apache Pulsar's load manager as a clusteremu system: brokers, the metadata store and clients (``agents/pulsar``),
the shedders, placements, filters, bundle split and the extensible load manager (``strategies/pulsar``), the
AvgShedder article's and the slides' scenarios (``scenarios/library/pulsar``), their figures and rating
(``tools/analysis``), and ``decide`` on a load snapshot (:mod:`.decide`)."""
from __future__ import annotations

from clusteremu.emulator.systems import System

SYSTEM = System(
    name="pulsar",
    description="Apache Pulsar brokers, metadata store and clients: load reports, shedding, placement, bundle "
                "unloads and reconnects (modular and extensible load managers)",
    model="clusteremu.agents.pulsar.model:MODEL",
    events=("clusteremu.agents.pulsar.events",),
    entity_keys=("bundle", "topic", "owner"),
    entity_fields=("broker",),
    figures="clusteremu.tools.analysis.pulsar:PulsarFigures",
    rating="clusteremu.tools.analysis.pulsar_rating:RATING",
    decide="clusteremu.systems.pulsar.decide:ADAPTER",
    strategies="clusteremu.strategies.pulsar.registry",
    views="clusteremu.agents.pulsar.views:PulsarViews",
    suites="clusteremu.systems.pulsar.suites:SUITES",
    library="clusteremu.scenarios.library.pulsar",
)
