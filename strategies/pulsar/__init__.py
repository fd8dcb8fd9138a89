"""Pulsar load-balancing strategies, faithful to Pulsar's source (see ``shared/reference/pulsar.md``).

Public API::

    from clusteremu.strategies import pulsar
    load = pulsar.LoadData.from_json(obj)          # Pulsar's JSON names
    s = pulsar.create("AvgShedder", config)        # simple or fully-qualified Java class name
    s.find_bundles_for_unloading(load)             # shedders: [(broker, bundle), ...] in Pulsar's order
    s.select_broker(candidates, bundle, load)      # placements: a broker or None
    s.get_state(); s.set_state(state)              # carried state, keyed by the Java field names
    pulsar.names("shedding"); pulsar.names("placement")

Also exported for the emulated leader: ``canonical_name`` (fully-qualified name of a strategy name),
``BundleHistory`` (the leader's per-bundle averages) and ``weighted_max_4`` (score of a report dict).
"""
from .bundle_history import BundleHistory
from .config import PulsarConfig, parse_broker_conf
from .load_data import LoadData
from .registry import canonical_name, create, names
from .resource_usage import weighted_max_4

__all__ = [
    "BundleHistory",
    "LoadData",
    "PulsarConfig",
    "canonical_name",
    "create",
    "names",
    "parse_broker_conf",
    "weighted_max_4",
]
