"""``TopKBundles``: the few highest-loaded bundles a broker reports to the extensible load manager.

Follows ``EXT/models/TopKBundles.java`` and ``NamespaceBundleStats.compareTo``. Every broker keeps one
:class:`TopKBundles` and refreshes it from its bundle stats with
``k = loadBalancerMaxNumberOfBundlesInBundleLoadReport``; the result, :class:`TopBundlesLoadData`, is what
``TransferShedder`` reads from the top-bundles store.

:meth:`TopKBundles.update`:

1. walks the stats map in its iteration order and drops bundles of system-service namespaces
   (``pulsar/system``, heartbeat, SLA monitor), bundles whose namespace has an isolation policy or an
   anti-affinity group (``has_policies``) unless ``loadBalancerSheddingBundlesWithPoliciesEnabled``, and
   bundles of ``loadBalancerSheddingExcludedNamespaces``;
2. selects the top ``k`` with Pulsar's quickselect (:func:`partition_sort`: a three-way partition around
   the last element, then a stable sort of the part before the target, largest first);
3. emits them **in ascending order** (smallest first) — the order ``TransferShedder`` tries them in.

The order is :func:`compare_namespace_bundle_stats`, Pulsar's ``NamespaceBundleStats.compareTo``: throughput
in, then throughput out, then msgRateIn+msgRateOut, then topics+consumers+producers, then cache size,
where differences of at most 100 000 B/s, 100 msg/s, 500 and 100 000 count as equal (``Double.compare``
otherwise; NaN differences count as equal because ``abs(NaN) > t`` is false). Because of those tolerances
the order is not transitive, so ties and near-ties come out in whatever order the partition leaves them —
reproduced here step by step.

Reading of the code (documented choices):

* Bundles with zero throughput are **kept**. An older ``TopKBundles`` skipped them (and the team reference
  says so), but the newest ``TopKBundlesTest.testTopBundlesLoadData`` feeds bundles that only have a message
  rate and expects all of them back; the newest ``TransferShedder`` skips zero-throughput bundles itself.
* The newest tree also holds a ``StrictNamespaceBundleStatsComparator`` (no tolerances, added for Pulsar
  issue #24754); the ``TopKBundles`` version that would use it was not readable, so the tolerance
  comparator above is used, as the reference states.
* The final sort uses Python's stable sort with the same comparator. For fewer than 32 elements (always the
  case with the default ``k = 10``) CPython 3.11's list sort and Java's TimSort both find the leading run and
  finish with the same binary insertion sort, so they agree even for non-transitive orders; for 32 or more
  elements they merge differently and may disagree on near-ties (Java may even throw "Comparison method
  violates its general contract").
* ``has_policies(bundle)`` stands in for Pulsar's isolation-policy and anti-affinity lookups (metadata
  reads); the caller supplies it. The stats map is iterated as given: pass it in the order Pulsar's map
  would iterate if ties must match bit for bit. ``topk <= 0`` reports nothing (Java's quickselect can
  fail with an index error there).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cmp_to_key
from typing import Any, Callable, Iterable, Mapping, MutableSequence, NamedTuple, TypeVar

from clusteremu.base.errors import InputError
from clusteremu.base.java import double_compare_key

from ..config import PulsarConfig, as_config
from ..json_input import field_path, read_object, read_string, show
from ..load_data import NamespaceBundleStats, is_system_service_namespace
from ..split.bundles import bundle_namespace

__all__ = [
    "BundleLoadData",
    "TopBundlesLoadData",
    "TopKBundles",
    "compare_namespace_bundle_stats",
    "natural_compare",
    "partition_sort",
]

# NamespaceBundleStats' "consider equal" tolerances.
_THROUGHPUT_DIFFERENCE_THRESHOLD = 1e5  # bytes/s
_MSG_RATE_DIFFERENCE_THRESHOLD = 100.0  # msg/s
_TOPIC_CONNECTION_DIFFERENCE_THRESHOLD = 500
_CACHE_SIZE_DIFFERENCE_THRESHOLD = 100000  # bytes


def _double_compare(a: float, b: float) -> int:
    """``Double.compare``: NaN above everything, -0.0 below 0.0."""
    key_a, key_b = double_compare_key(a), double_compare_key(b)
    return (key_a > key_b) - (key_a < key_b)


def compare_namespace_bundle_stats(a: NamespaceBundleStats, b: NamespaceBundleStats) -> int:
    """``a.compareTo(b)`` for ``NamespaceBundleStats``: negative, 0 or positive (see the module docstring)."""
    if abs(a.msg_throughput_in - b.msg_throughput_in) > _THROUGHPUT_DIFFERENCE_THRESHOLD:
        result = _double_compare(a.msg_throughput_in, b.msg_throughput_in)
        if result != 0:
            return result
    if abs(a.msg_throughput_out - b.msg_throughput_out) > _THROUGHPUT_DIFFERENCE_THRESHOLD:
        result = _double_compare(a.msg_throughput_out, b.msg_throughput_out)
        if result != 0:
            return result
    rate_a = a.msg_rate_in + a.msg_rate_out
    rate_b = b.msg_rate_in + b.msg_rate_out
    if abs(rate_a - rate_b) > _MSG_RATE_DIFFERENCE_THRESHOLD:
        result = _double_compare(rate_a, rate_b)
        if result != 0:
            return result
    conn_a = a.topics + a.consumer_count + a.producer_count
    conn_b = b.topics + b.consumer_count + b.producer_count
    if abs(conn_a - conn_b) > _TOPIC_CONNECTION_DIFFERENCE_THRESHOLD:
        return (conn_a > conn_b) - (conn_a < conn_b)
    if abs(a.cache_size - b.cache_size) > _CACHE_SIZE_DIFFERENCE_THRESHOLD:
        return (a.cache_size > b.cache_size) - (a.cache_size < b.cache_size)
    return 0


def natural_compare(a: Any, b: Any) -> int:
    """``a.compareTo(b)`` of a Java ``Comparable``: the bundle-stats order for ``NamespaceBundleStats``,
    the natural order otherwise (numbers, strings)."""
    if isinstance(a, NamespaceBundleStats) and isinstance(b, NamespaceBundleStats):
        return compare_namespace_bundle_stats(a, b)
    return (a > b) - (a < b)


V = TypeVar("V")


def partition_sort(
    entries: MutableSequence[tuple[str, V]], k: int, compare: Callable[[V, V], int] = natural_compare
) -> None:
    """``TopKBundles.partitionSort``: reorder ``entries`` (``(name, value)`` pairs) in place so that the
    first ``k`` hold the ``k`` largest values, largest first.

    Three-way quickselect with the last element of the current range as pivot (elements greater than the
    pivot move to the front), stopping as soon as the target index ``k - 1`` lands in the pivot's run; then
    a stable descending sort of the elements before the final range end.
    """
    start = 0
    end = len(entries) - 1
    target = k - 1
    while start < end:
        lo = start
        hi = end
        mid = lo
        pivot = entries[hi][1]
        while mid <= hi:
            cmp = compare(pivot, entries[mid][1])
            if cmp < 0:
                entries[lo], entries[mid] = entries[mid], entries[lo]
                lo += 1
                mid += 1
            elif cmp > 0:
                entries[mid], entries[hi] = entries[hi], entries[mid]
                hi -= 1
            else:
                mid += 1
        if lo <= target < mid:
            end = lo
            break
        if target < lo:
            end = lo - 1
        else:
            start = mid
    if end > 0:
        head = list(entries[:end])
        head.sort(key=cmp_to_key(lambda x, y: compare(y[1], x[1])))
        entries[:end] = head


class BundleLoadData(NamedTuple):
    """One reported bundle: its name and its ``NamespaceBundleStats`` (throughputs in bytes/s)."""

    bundle_name: str
    stats: NamespaceBundleStats

    def to_json(self) -> dict[str, Any]:
        """``{"bundleName": .., "stats": {NamespaceBundleStats}}``."""
        return {"bundleName": self.bundle_name, "stats": self.stats.to_json()}


@dataclass
class TopBundlesLoadData:
    """A broker's reported top bundles, ascending (Pulsar's ``TopBundlesLoadData``)."""

    top_bundles_load_data: list[BundleLoadData] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"topBundlesLoadData": [{"bundleName", "stats"}, ...]}``."""
        return {"topBundlesLoadData": [entry.to_json() for entry in self.top_bundles_load_data]}

    @classmethod
    def from_json(cls, obj: Any, path: str = "") -> "TopBundlesLoadData":
        """Build from Pulsar's JSON object, or from a bare list of ``{"bundleName", "stats"}`` entries.

        A bad value raises :class:`clusteremu.base.errors.InputError` naming its JSON path.
        """
        where = path or "TopBundlesLoadData"
        if isinstance(obj, list):
            items, items_path = obj, where
        else:
            data = read_object(obj, where, "a TopBundlesLoadData object or a list of bundles")
            items = data.get("topBundlesLoadData") or []
            items_path = field_path(path, "topBundlesLoadData")
            if not isinstance(items, list):
                raise InputError(items_path, f"expected a list of bundles, got {show(items)}")
        entries = []
        for i, item in enumerate(items):
            item_path = f"{items_path}[{i}]"
            entry = read_object(item, item_path, 'a {"bundleName", "stats"} object')
            name = read_string(entry.get("bundleName"), field_path(item_path, "bundleName"))
            stats_path = field_path(item_path, "stats")
            stats = NamespaceBundleStats.from_json(entry.get("stats") or {}, stats_path)
            entries.append(BundleLoadData(name, stats))
        return cls(entries)


class TopKBundles:
    """Pulsar's ``TopKBundles``: keeps a :class:`TopBundlesLoadData` refreshed by :meth:`update`.

    ``config`` holds ServiceConfiguration keys (a ``PulsarConfig`` or a dict; missing keys take Pulsar's
    defaults); only ``loadBalancerSheddingBundlesWithPoliciesEnabled`` and
    ``loadBalancerSheddingExcludedNamespaces`` are read, at each :meth:`update`.
    """

    def __init__(self, config: Mapping[str, Any] | PulsarConfig | None = None) -> None:
        self.config = as_config(config)
        self.load_data = TopBundlesLoadData()

    def update(
        self,
        bundle_stats: Mapping[str, NamespaceBundleStats] | Iterable[tuple[str, NamespaceBundleStats]],
        topk: int,
        has_policies: Callable[[str], bool] | None = None,
    ) -> TopBundlesLoadData:
        """Recompute the top ``topk`` bundles of ``bundle_stats`` (bundle name → stats, iterated in the
        order given) and return :attr:`load_data`, ascending.

        ``has_policies(bundle)`` says whether the bundle's namespace has an isolation policy or an
        anti-affinity group (default: none has).
        """
        items = list(bundle_stats.items()) if isinstance(bundle_stats, Mapping) else list(bundle_stats)
        with_policies = bool(self.config["loadBalancerSheddingBundlesWithPoliciesEnabled"])
        excluded = self.config["loadBalancerSheddingExcludedNamespaces"]
        candidates: list[tuple[str, NamespaceBundleStats]] = []
        for bundle, stats in items:
            namespace = bundle_namespace(bundle)
            if is_system_service_namespace(namespace):
                continue
            if not with_policies and has_policies is not None and has_policies(bundle):
                continue
            if namespace in excluded:
                continue
            candidates.append((bundle, stats))
        top = self.load_data.top_bundles_load_data
        top.clear()
        if not candidates:
            return self.load_data
        k = min(topk, len(candidates))
        if k <= 0:
            return self.load_data
        partition_sort(candidates, k, compare_namespace_bundle_stats)
        for i in range(k - 1, -1, -1):
            top.append(BundleLoadData(*candidates[i]))
        return self.load_data
