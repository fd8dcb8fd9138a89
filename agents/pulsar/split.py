"""Bundle split in the cluster: each agent's view of the namespaces' bundles, and the split on the owning broker.

The scenario's :class:`~.workload.Workload` is shared read-only by every agent of a process, so a split never
changes it: each broker keeps a :class:`BundleMap`, the workload's initial bundles plus the boundaries of the
namespaces that were split since. The boundaries live in the store at ``/admin/local-policies/<namespace>``
(``LocalPolicies.bundles``). The splitting broker tells the other brokers of the new boundaries at once (Pulsar's
brokers see the change through their metadata cache); a broker that starts or restarts later reads them from the
store. Departure: a broker cut off from the splitter when it tells the others keeps the old bundles until it
restarts; the lookup path then refuses to claim a bundle that no longer exists, so the client retries.

The split itself (``NamespaceService.splitAndOwnBundle``) runs on the owner when the leader asks
(:func:`split_on_owner`): boundaries from ``defaultNamespaceBundleSplitAlgorithm``
(:mod:`clusteremu.strategies.pulsar.split.algorithms`, over the topics the broker serves in the bundle), the children
(:func:`clusteremu.strategies.pulsar.split.bundles.split_bundle`) owned by the same broker first, then the namespace's
boundaries updated, then the parent's ownership dropped; the connected topics stay where they are, remapped to
the child that holds their hash (with the per-bundle traffic arrays). With ``unload`` (the leader's
``loadBalancerAutoUnloadSplitBundlesEnabled``) the children are then unloaded like any bundle.
"""
from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any, Generator

import numpy as np

from clusteremu.emulator.messages import Message
from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies.pulsar.split import algorithms
from clusteremu.strategies.pulsar.split.bundles import FULL_UPPER_BOUND, BundleRange, split_bundle

from .store import OWNERSHIP_PREFIX
from .workload import FULL_RANGE_END, Workload, bundle_name, topic_hash

if TYPE_CHECKING:
    from .port import BrokerPort

POLICIES_PREFIX = "/admin/local-policies/"

_M = __name__
declare("split_decided", "The leader asked `broker` to split `bundle` (`unload`: unload the children afterwards, "
        "loadBalancerAutoUnloadSplitBundlesEnabled).", _M, bundle="str", broker="str", unload="bool")
declare("bundle_split_failed", "The owner could not split `bundle` with `algorithm` (`reason`: the algorithm "
        "found no boundary, or refused, as Pulsar's does with specified_positions_divide and no positions).", _M,
        bundle="str", algorithm="str", reason="str")


def _to_range(lower: int, upper: int) -> BundleRange:
    """Workload bounds (last upper 2^32, exclusive) as Pulsar's range (last upper 0xffffffff, inclusive)."""
    return BundleRange(lower, min(upper, FULL_UPPER_BOUND))


def _from_range(r: BundleRange) -> tuple[int, int]:
    return r.lower, (FULL_RANGE_END if r.upper == FULL_UPPER_BOUND else r.upper)


class BundleMap:
    """One agent's current bundles: the workload's initial ones, replaced per namespace after splits."""

    def __init__(self, workload: Workload) -> None:
        self.wl = workload
        self._bounds: dict[str, list[int]] = {}  # split namespaces only: sorted lower bounds + FULL_RANGE_END
        self._topics: dict[str, np.ndarray] = {}  # child bundle -> its topic indices (cache)
        self._hashes: dict[int, int] = {}
        self._initial: dict[str, list[tuple[int, int]]] | None = None

    # -- reading ------------------------------------------------------------------------------------------
    def bundle_of(self, ti: int) -> str:
        """The bundle that holds topic ``ti`` now."""
        wl = self.wl
        initial = int(wl.topic_bundle[ti])
        ns = wl.bundle_namespace[initial]
        bounds = self._bounds.get(ns)
        if bounds is None:
            return wl.bundles[initial]
        h = self._hash(ti)
        i = bisect.bisect_right(bounds, h) - 1
        return bundle_name(ns, bounds[i], bounds[i + 1])

    def topics_of(self, bundle: str) -> np.ndarray:
        """Indices of the topics whose hash falls in ``bundle`` (a current or an initial bundle)."""
        wl = self.wl
        i = wl.bundle_index.get(bundle)
        if i is not None:
            return wl.bundle_topics[i]
        cached = self._topics.get(bundle)
        if cached is None:
            ns, lo, hi = self._parse(bundle)
            parents = [j for j, b in enumerate(wl.bundles) if wl.bundle_namespace[j] == ns]
            candidates = np.concatenate([wl.bundle_topics[j] for j in parents]) if parents else np.array([], int)
            keep = [int(t) for t in candidates if lo <= self._hash(int(t)) < hi]
            cached = self._topics[bundle] = np.array(sorted(keep), dtype=np.int64)
        return cached

    def ranges(self, namespace: str) -> list[tuple[int, int]]:
        """The namespace's current bundles as (lower, upper) with the workload's bounds."""
        bounds = self._bounds.get(namespace)
        if bounds is None:
            return list(self._initial_ranges().get(namespace, ()))
        return list(zip(bounds[:-1], bounds[1:]))

    def namespace_bundles(self) -> dict[str, list[str]]:
        """Namespace → its current bundle ranges (``"0x..._0x..."``), as the split decision reads them."""
        out: dict[str, list[str]] = {}
        for ns in dict.fromkeys(self.wl.bundle_namespace):
            out[ns] = [str(_to_range(lo, hi)) for lo, hi in self.ranges(ns)]
        return out

    def exists(self, bundle: str) -> bool:
        """Whether ``bundle`` is one of its namespace's current bundles."""
        if not self._bounds:  # nothing was split: the workload's bundles, without parsing the name
            return bundle in self.wl.bundle_index
        ns, lo, hi = self._parse(bundle)
        bounds = self._bounds.get(ns)
        if bounds is None:
            return bundle in self.wl.bundle_index
        i = bisect.bisect_left(bounds, lo)
        return i + 1 < len(bounds) and bounds[i] == lo and bounds[i + 1] == hi

    # -- changing -----------------------------------------------------------------------------------------
    def apply(self, namespace: str, bounds: list[int]) -> None:
        """The namespace's bundles are now those between consecutive ``bounds``."""
        self._bounds[namespace] = sorted(int(b) for b in bounds)
        self._topics.clear()

    def bounds_after_split(self, namespace: str, children: list[tuple[int, int]]) -> list[int]:
        edges = {lo for lo, _hi in self.ranges(namespace)} | {lo for lo, _hi in children}
        return sorted(edges) + [FULL_RANGE_END]

    # -- helpers ------------------------------------------------------------------------------------------
    def _initial_ranges(self) -> dict[str, list[tuple[int, int]]]:
        """Namespace → the workload's initial bundles as (lower, upper), parsed once (a million-bundle cluster
        asks at every ownership claim)."""
        if self._initial is None:
            self._initial = {}
            for j, b in enumerate(self.wl.bundles):
                self._initial.setdefault(self.wl.bundle_namespace[j], []).append(self._parse(b)[1:])
        return self._initial

    def _hash(self, ti: int) -> int:
        h = self._hashes.get(ti)
        if h is None:
            h = self._hashes[ti] = topic_hash(self.wl.topics[ti])
        return h

    @staticmethod
    def _parse(bundle: str) -> tuple[str, int, int]:
        ns, _, text = bundle.rpartition("/")
        lo, hi = _from_range(BundleRange.parse(text))
        return ns, lo, hi


def split_on_owner(b: "BrokerPort", msg: Message) -> Generator:
    """The owner's handler of the leader's split request (see the module docstring)."""
    bundle, unload = msg.body["bundle"], bool(msg.body.get("unload"))
    ownership = b.ownership
    own = ownership.owned.get(bundle)
    if own is None or own.disabled:
        b.reply(msg, {"ok": False})
        return
    wl, cfg = b.workload, b.config
    name = cfg["defaultNamespaceBundleSplitAlgorithm"]
    ns, lo, hi = BundleMap._parse(bundle)
    parent = _to_range(lo, hi)
    served = sorted(own.topics)
    topics = [wl.topics[ti] for ti in served]
    rates = wl.topic_rates(np.array(served, dtype=np.int64), b.now) if served else np.zeros((0, 4))
    stats = {wl.topics[ti]: algorithms.TopicTraffic(rates[k, 0], rates[k, 1], rates[k, 2], rates[k, 3])
             for k, ti in enumerate(served)}
    try:
        bounds = algorithms.get_split_boundaries(name, parent, topics, config=cfg, topic_stats=stats)
    except ValueError as e:
        bounds, why = None, str(e)
    else:
        why = "no split boundary"
    if not bounds:
        b.emit("bundle_split_failed", bundle=bundle, algorithm=name, reason=why)
        b.reply(msg, {"ok": False})
        return
    children = [_from_range(r) for r in split_bundle(parent, boundaries=bounds)]
    child_names = [bundle_name(ns, clo, chi) for clo, chi in children]
    # Own the children first, so that no lookup finds the range unowned while the split is in progress.
    for child in child_names:
        yield from b.store.op("create", {"path": OWNERSHIP_PREFIX + child,
                                         "data": {"broker": b.name, "disabled": False}, "ephemeral": True})
    if ownership.owned.get(bundle) is not own:
        b.reply(msg, {"ok": False})
        return
    # Remap at once (no yield in between), so that this broker never serves a topic under a stale bundle.
    bundle_map = ownership.bundle_map
    new_bounds = bundle_map.bounds_after_split(ns, children)
    bundle_map.apply(ns, new_bounds)
    b.usage.advance()
    del ownership.owned[bundle]
    b.emit("bundle_split", bundle=bundle, children=child_names, algorithm=name)
    # The parent's ownership ends here; no topic is closed (they stay on the children).
    b.emit("bundle_unloaded", bundle=bundle, destination="", reason="split", topics=0)
    for child in child_names:
        ownership.own_split_child(child, own)
    yield from b.store.op("set", {"path": POLICIES_PREFIX + ns, "data": {"bounds": new_bounds}})
    for other in b.params["all_brokers"]:
        if other != b.name:
            b.send(other, "bundles_changed", {"namespace": ns, "bounds": new_bounds})
    yield from b.store.op("delete", {"path": OWNERSHIP_PREFIX + bundle})
    if unload:
        for child in child_names:
            part = ownership.owned.get(child)
            if part is None:
                continue
            part.disabled = True
            yield from b.store.op("set", {"path": OWNERSHIP_PREFIX + child,
                                          "data": {"broker": b.name, "disabled": True}})
            if ownership.owned.get(child) is part:
                ownership.release(child, reason="split", destination="", delete=True)
    b.reply(msg, {"ok": True, "children": child_names})


def on_bundles_changed(b: "BrokerPort", body: dict[str, Any]) -> None:
    """The splitting broker's news of a namespace's new boundaries."""
    on_policies(b, POLICIES_PREFIX + body["namespace"], {"bounds": body["bounds"]})


def on_policies(b: "BrokerPort", path: str, data: dict[str, Any] | None) -> None:
    """A broker split a bundle of this namespace: adopt its boundaries.

    Splits only ever add boundaries, so the view takes the union of what it knew and what it is told: two
    owners splitting bundles of one namespace at once both stay known, whatever order the writes land in
    (Pulsar retries a conflicting write of the bundles' list instead)."""
    if data is not None:
        ns = path[len(POLICIES_PREFIX):]
        bundle_map = b.ownership.bundle_map
        known = {lo for lo, _hi in bundle_map.ranges(ns)}
        bundle_map.apply(ns, sorted(known | set(data["bounds"])))
