"""Bundle split under the extensible load manager: each broker's ``SplitScheduler`` and the channel's ``Splitting``
path (``publishSplitEventAsync`` → ``handleSplitEvent`` → ``splitServiceUnitOnceAndRetry``).

* :class:`SplitScheduler` — every broker runs one (``ExtensibleLoadManagerImpl.start`` starts it on each broker,
  not only on the leader), at a fixed rate of ``loadBalancerSplitIntervalMinutes`` (first run one interval after
  the start), when ``loadBalancerEnabled`` and ``loadBalancerAutoBundleSplitEnabled``. A run asks
  :class:`~clusteremu.strategies.pulsar.extensible.split_strategy.DefaultNamespaceBundleSplitStrategyImpl` which of
  the bundles this broker serves to split — from its own bundle stats (``getBundleStats``: every bundle it serves,
  in ``ConcurrentHashMap`` order), the channel's table view (bundles ``Owned`` here, bundles ``Splitting``) and the
  namespaces' bundle counts of its bundle map — and publishes each decision as ``Splitting`` (no destination,
  this broker as the source, the two child ranges in the record). Traced as ``ext_split_decided``. The split
  manager's counter counts a decision as a success once the parent's record leaves ``Splitting`` within
  ``namespaceBundleUnloadingTimeoutMs``.
* :func:`split_service_unit` — the source broker's handler of a ``Splitting`` record: the children are published
  ``Owned`` by it (each unless it already has a record), the namespace's bundles are updated (the bundle map, the
  boundaries at ``/admin/local-policies/<namespace>`` and the other brokers told, as the modular split does, see
  :mod:`.split`), the parent's connected topics are remapped to the children (``refreshTopicToStatsMaps``: their
  clients stay connected, to the same broker), and the parent is published ``Deleted``. Traced as
  ``bundle_split``, the children's ``bundle_owned`` (via ``split``), the parent's ``bundle_unloaded`` (reason
  ``split``, 0 topics) and the channel's ``service_unit_state`` records.
* :func:`tombstone_deleted` — the source broker's handler of the parent's ``Deleted`` record
  (``handleDeleteEvent``): the record is tombstoned at once (``service_unit_state`` with state ``Init``, reason
  ``tombstone``).

Departures: the scheduler does not hold the load-manager executor while it waits for its splits (Pulsar's
``execute`` blocks its thread up to ``namespaceBundleUnloadingTimeoutMs``; the model's splits take milliseconds).
The namespace's bundles are written without a version, so there is no ``BadVersion`` retry
(``BUNDLE_SPLIT_RETRY_LIMIT``); two splits of one namespace merge their boundaries (see :func:`.split.on_policies`).
With the splitting broker the only owner, its topics are remapped before the bundles are written (the modular
split's order), so that no topic is served under a stale bundle in between.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

import numpy as np

from clusteremu.base.java import java_order
from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.extensible import ServiceUnitState, SplitContext, SplitDecision
from clusteremu.strategies.pulsar.split import algorithms
from clusteremu.strategies.pulsar.split.bundles import FULL_UPPER_BOUND, BundleRange, namespace_of_bundle

from .reporting import namespace_bundle_stats
from .split import POLICIES_PREFIX
from .workload import FULL_RANGE_END, bundle_name

if TYPE_CHECKING:
    from .extensible_channel import UnitRecord
    from .port import BrokerPort

_M = __name__
declare("ext_split_decided", "A broker's SplitScheduler (extensible load manager) chose to split `bundle`, which it "
        "owns, into `children` for `reason` (Topics, Sessions, MsgRate, Bandwidth: the first split condition met "
        "for more than loadBalancerNamespaceBundleSplitConditionHitCountThreshold cycles in a row), and publishes "
        "it Splitting on the channel.", _M, bundle="str", children="list", reason="str")

_S = ServiceUnitState
_TOPIC_ALGORITHMS = (algorithms.TOPIC_COUNT_EQUALLY_DIVIDE, algorithms.FLOW_OR_QPS_EQUALLY_DIVIDE,
                     algorithms.SPECIFIED_POSITIONS_DIVIDE)


class SplitScheduler:
    """One broker's split scheduler and split manager (see the module docstring)."""

    def __init__(self, broker: "BrokerPort") -> None:
        self.b = broker
        self.strategy = pulsar.create("DefaultNamespaceBundleSplitStrategyImpl", broker.config)
        self.counter = self.strategy.counter
        self.in_flight: dict[str, tuple[SplitDecision, float]] = {}  # bundle -> (decision, deadline)

    def start(self) -> None:
        """Schedule the runs. The model's configuration is fixed for a run, so a scheduler whose every run would
        find splitting disabled is not scheduled at all."""
        cfg = self.b.config
        if not (cfg["loadBalancerEnabled"] and cfg["loadBalancerAutoBundleSplitEnabled"]):
            return
        interval = cfg["loadBalancerSplitIntervalMinutes"] * 60.0
        self.b.timers.schedule_at_fixed_rate(self.execute, interval, interval, name="split-scheduler")

    def execute(self) -> None:
        """One run: find the bundles to split and publish each as ``Splitting``."""
        b = self.b
        if not b.store.is_open or b.stopping:
            return  # the channel is closed: publishing would fail
        now = b.now
        for bundle in [u for u, (_d, deadline) in self.in_flight.items() if deadline < now]:
            del self.in_flight[bundle]  # the split manager's wait timed out
        decisions = self.strategy.find_bundles_to_split(self._context())
        channel = b.xchannel
        timeout_s = b.config["namespaceBundleUnloadingTimeoutMs"] / 1000.0
        for d in decisions:
            bundle = d.split.service_unit
            namespace = namespace_of_bundle(bundle)
            b.emit("ext_split_decided", bundle=bundle, children=[f"{namespace}/{c}" for c in d.split.children],
                   reason=d.reason.value)
            self.in_flight.setdefault(bundle, (d, now + timeout_s))
            b.spawn(channel.publish(bundle, _S.Splitting, "", b.name, "split", children=d.split.children))

    def completed(self, bundle: str) -> None:
        """The parent's record left ``Splitting``: a success of the split manager (``SplitManager.complete``)."""
        entry = self.in_flight.pop(bundle, None)
        if entry is not None and self.b.now <= entry[1]:
            self.counter.update_decision(entry[0])

    def _context(self) -> SplitContext:
        b = self.b
        me = b.name
        view = b.xchannel.view
        owned = {u for u, r in view.items() if r.state is _S.Owned and r.dst == me}
        splitting = [u for u, r in view.items() if r.state is _S.Splitting]
        raw = b.reporter.refresh().bundle_stats
        stats = {u: namespace_bundle_stats(raw[u]) for u in java_order(raw, "concurrent")}
        bundle_map = b.ownership.bundle_map
        counts = {ns: len(bundle_map.ranges(ns)) for ns in {namespace_of_bundle(u) for u in stats}}
        topics: dict[str, list[str]] = {}
        traffic: dict[str, algorithms.TopicTraffic] = {}
        if b.config["defaultNamespaceBundleSplitAlgorithm"] in _TOPIC_ALGORITHMS:
            wl = b.workload
            for u, own in b.ownership.owned.items():
                served = sorted(own.topics)
                topics[u] = [wl.topics[ti] for ti in served]
                rates = wl.topic_rates(np.array(served, dtype=np.int64), b.now) if served else np.zeros((0, 4))
                for k, ti in enumerate(served):
                    traffic[wl.topics[ti]] = algorithms.TopicTraffic(*map(float, rates[k, :4]))
        return SplitContext(me, stats, owned, splitting, counts, topics, traffic)


def _bounds(bundle: str) -> tuple[str, int, int]:
    """``tenant/ns/0x..._0x...`` as (namespace, lower, upper) with the workload's bounds (last upper 2^32)."""
    namespace, _, text = bundle.rpartition("/")
    r = BundleRange.parse(text)
    return namespace, r.lower, (FULL_RANGE_END if r.upper == FULL_UPPER_BOUND else r.upper)


def split_service_unit(b: "BrokerPort", bundle: str, record: "UnitRecord") -> Generator:
    """The source broker's ``splitServiceUnit`` (see the module docstring)."""
    channel = b.xchannel
    namespace = bundle.rpartition("/")[0]
    children = [f"{namespace}/{c}" for c in record.children]
    if not children:
        b.emit("bundle_split_failed", bundle=bundle, algorithm=b.config["defaultNamespaceBundleSplitAlgorithm"],
               reason="the Splitting record names no children")
        return
    for child in children:  # ownChildBundles
        if child not in channel.view:
            r = yield from channel.publish(child, _S.Owned, b.name, "", "split", create=True)
            if r is None:
                return  # no session: the channel owner's monitor publishes the Splitting again later
    ownership = b.ownership
    bundle_map = ownership.bundle_map
    if bundle_map.exists(bundle):
        child_bounds = [_bounds(c)[1:] for c in children]
        new_bounds = bundle_map.bounds_after_split(namespace, child_bounds)
        # Remap at once (no yield in between), so that this broker never serves a topic under a stale bundle.
        bundle_map.apply(namespace, new_bounds)
        b.usage.advance()
        own = ownership.owned.pop(bundle, None)
        if own is not None:
            b.emit("bundle_unloaded", bundle=bundle, destination="", reason="split", topics=0)
        b.emit("bundle_split", bundle=bundle, children=children,
               algorithm=b.config["defaultNamespaceBundleSplitAlgorithm"])
        for child in children:
            if own is not None:
                ownership.own_split_child(child, own)
            else:
                ownership.own(child, via="split")
        r = yield from b.store.op("set", {"path": POLICIES_PREFIX + namespace, "data": {"bounds": new_bounds}})
        if r is None:
            return
        for other in b.params["all_brokers"]:
            if other != b.name:
                b.send(other, "bundles_changed", {"namespace": namespace, "bounds": new_bounds})
    elif not all(bundle_map.exists(c) for c in children):
        b.emit("bundle_split_failed", bundle=bundle, algorithm=b.config["defaultNamespaceBundleSplitAlgorithm"],
               reason="Namespace bundles do not contain the child bundles")
        return
    yield from channel.publish(bundle, _S.Deleted, "", b.name, "split")


def tombstone_deleted(b: "BrokerPort", bundle: str) -> Generator[Any, Any, None]:
    """``handleDeleteEvent`` on the source broker: tombstone the ``Deleted`` record."""
    yield from b.xchannel.tombstone(bundle, "tombstone")
