"""Pulsar's modular-load-manager shedding strategies (``org.apache.pulsar.broker.loadbalance.impl``).

Every shedder is built as ``Shedder(config: PulsarConfig, rng: numpy.random.Generator)`` and offers
``find_bundles_for_unloading(load: LoadData) -> list[(broker, bundle)]`` in the order Pulsar's leader
walks the returned Guava multimap (see :mod:`.unload_plan`), plus ``get_state()``/``set_state()`` for the
state it carries across calls (keyed by the Java field names; ``{}`` for stateless shedders).

Modules: :mod:`.overload_shedder`, :mod:`.threshold_shedder`, :mod:`.uniform_load_shedder`,
:mod:`.avg_shedder` (also a placement strategy), :mod:`.unload_plan` (the returned multimap),
:mod:`.bundle_selection` (the largest-first pick shared by Threshold and Overload), :mod:`.stateless` (the
base class of the shedders without state: Overload and Uniform).
"""
