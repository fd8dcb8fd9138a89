"""Pulsar's four bundle split algorithms (``NamespaceBundleSplitAlgorithm`` implementations), by config name.

Each computes the *split boundaries* of one bundle — hash positions strictly inside its range — from which
``NamespaceService`` creates ``len(boundaries) + 1`` children (:func:`clusteremu.strategies.pulsar.split.bundles.split_bundle`).
``None`` (or an empty list) means "no valid boundary": Pulsar then logs and leaves the bundle alone.

API::

    from clusteremu.strategies.pulsar.split import algorithms as a
    a.range_equally_divide(r)                                   # r: BundleRange -> [boundary]
    a.topic_count_equally_divide(topics)                        # topics in the bundle -> [boundary] | None
    a.specified_positions_divide(r, topics, positions)          # -> [boundaries] | None; ValueError if no positions
    a.flow_or_qps_equally_divide(topics, stats, max_msg_rate, max_bandwidth_mbytes, diff_pct)  # -> [..] | None
    a.get_split_boundaries(name, r, topics, config=cfg, positions=None, topic_stats=None)      # by name
    a.of(name)                                                  # the function, or None for an unknown name

Units: ``max_msg_rate`` msg/s (in + out), ``max_bandwidth_mbytes`` MiB/s (in + out; Pulsar multiplies by
1024 * 1024), ``diff_pct`` percent. ``topics`` are topic names exactly as the owning broker lists them
(``getOwnedTopicListForNamespaceBundle``: complete names, one per partition); each is hashed as given
(:func:`~clusteremu.strategies.pulsar.split.bundles.topic_hash`, unsigned CRC32). Integer arithmetic is Java ``long``
arithmetic on non-negative values, i.e. floor division.

Algorithms (``pulsar-broker/.../common/naming/*BundleSplitAlgorithm.java``):

* ``range_equally_divide`` — ``lower + (upper - lower) / 2``; the default (``defaultNamespaceBundleSplitAlgorithm``).
* ``topic_count_equally_divide`` — ``None`` for fewer than 2 topics; else with the sorted hashes ``h`` and
  ``n = len(h)``: ``s = h[max(n/2 - 1, 0)]``, ``e = h[n/2]``, boundary ``s + (e - s) / 2``.
* ``specified_positions_divide`` — positions given by the admin; null or empty → ``ValueError`` (checked
  before anything else, like Java's ``IllegalArgumentException``); fewer than 2 topics → ``None``; keep the
  sorted positions strictly inside ``(lower, upper)``; none left → ``None``.
* ``flow_or_qps_equally_divide`` — fewer than 2 topics → ``None``. Per topic with stats: ``rate = in + out``
  msg/s, ``thr = in + out`` bytes/s; topics without stats, or with both ≤ 0, are skipped. ``None`` if fewer
  than two distinct hashes remain, or if the bundle's total rate < ``max_msg_rate * (1 + d)`` **and** total
  throughput < ``max_bandwidth * (1 + d)`` (``d = diff_pct / 100``). Otherwise walk the sorted hashes
  accumulating rate and throughput from the first; before adding topic ``i``, if the running sums already
  exceed a limit or adding it would, cut at ``h[i-1] + (h[i] - h[i-1]) / 2 + 1`` and restart the sums at
  topic ``i``. Topics whose names hash equal keep one stats entry (the last one seen), as Java's
  ``HashMap<Long, TopicInfo>`` does, but stay twice in the walk.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from .bundles import BundleRange, topic_hash

__all__ = [
    "AVAILABLE_ALGORITHMS",
    "FLOW_OR_QPS_EQUALLY_DIVIDE",
    "RANGE_EQUALLY_DIVIDE",
    "SPECIFIED_POSITIONS_DIVIDE",
    "TOPIC_COUNT_EQUALLY_DIVIDE",
    "TopicTraffic",
    "flow_or_qps_equally_divide",
    "get_split_boundaries",
    "of",
    "range_equally_divide",
    "specified_positions_divide",
    "topic_count_equally_divide",
]

RANGE_EQUALLY_DIVIDE = "range_equally_divide"
TOPIC_COUNT_EQUALLY_DIVIDE = "topic_count_equally_divide"
SPECIFIED_POSITIONS_DIVIDE = "specified_positions_divide"
FLOW_OR_QPS_EQUALLY_DIVIDE = "flow_or_qps_equally_divide"
#: The names ``NamespaceBundleSplitAlgorithm.AVAILABLE_ALGORITHMS`` accepts.
AVAILABLE_ALGORITHMS = (
    RANGE_EQUALLY_DIVIDE,
    TOPIC_COUNT_EQUALLY_DIVIDE,
    SPECIFIED_POSITIONS_DIVIDE,
    FLOW_OR_QPS_EQUALLY_DIVIDE,
)

_MIB = 1024 * 1024


@dataclass(frozen=True)
class TopicTraffic:
    """The part of a topic's ``TopicStats`` the flow/QPS algorithm reads: msg/s and bytes/s, in and out."""

    msg_rate_in: float = 0.0
    msg_rate_out: float = 0.0
    msg_throughput_in: float = 0.0
    msg_throughput_out: float = 0.0

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "TopicTraffic":
        """From ``TopicStats`` JSON (``msgRateIn``, ``msgRateOut``, ``msgThroughputIn``, ``msgThroughputOut``)."""
        return cls(
            float(obj.get("msgRateIn", 0.0)),
            float(obj.get("msgRateOut", 0.0)),
            float(obj.get("msgThroughputIn", 0.0)),
            float(obj.get("msgThroughputOut", 0.0)),
        )


def range_equally_divide(bundle_range: BundleRange) -> list[int]:
    """``RangeEquallyDivideBundleSplitAlgorithm``: the middle of the hash range."""
    return [bundle_range.lower + (bundle_range.upper - bundle_range.lower) // 2]


def topic_count_equally_divide(topics: Sequence[str] | None) -> list[int] | None:
    """``TopicCountEquallyDivideBundleSplitAlgorithm``: the midpoint between the two median topic hashes."""
    if topics is None or len(topics) <= 1:
        return None
    hashes = sorted(topic_hash(t) for t in topics)
    n = len(hashes)
    start = hashes[max(n // 2 - 1, 0)]
    end = hashes[n // 2]
    return [start + (end - start) // 2]


def specified_positions_divide(
    bundle_range: BundleRange, topics: Sequence[str] | None, positions: Sequence[int] | None
) -> list[int] | None:
    """``SpecifiedPositionsBundleSplitAlgorithm``: the admin's positions that fall strictly inside the range."""
    if not positions:
        raise ValueError("SplitBoundaries can't be empty")
    ordered = sorted(int(p) for p in positions)
    if topics is None or len(topics) <= 1:
        return None
    inside = [p for p in ordered if bundle_range.lower < p < bundle_range.upper]
    return inside or None


def flow_or_qps_equally_divide(
    topics: Sequence[str] | None,
    topic_stats: Mapping[str, TopicTraffic],
    max_msg_rate: int,
    max_bandwidth_mbytes: int,
    flow_or_qps_difference_threshold_percentage: float,
) -> list[int] | None:
    """``FlowOrQpsEquallyDivideBundleSplitAlgorithm``: cut so that every child stays under the rate and bandwidth limits."""
    if topics is None or len(topics) <= 1:
        return None
    diff = flow_or_qps_difference_threshold_percentage / 100.0
    max_bandwidth = max_bandwidth_mbytes * _MIB
    bundle_rate = 0.0
    bundle_throughput = 0.0
    info: dict[int, tuple[float, float]] = {}
    hashes: list[int] = []
    for topic in topics:
        stats = topic_stats.get(topic)
        if stats is None:
            continue
        rate = stats.msg_rate_in + stats.msg_rate_out
        throughput = stats.msg_throughput_in + stats.msg_throughput_out
        if rate <= 0 and throughput <= 0:
            continue  # an idle topic does not pull a boundary towards it
        h = topic_hash(topic)
        hashes.append(h)
        info[h] = (rate, throughput)
        bundle_throughput += throughput
        bundle_rate += rate
    if len(info) < 2 or (
        bundle_rate < max_msg_rate * (1 + diff) and bundle_throughput < max_bandwidth * (1 + diff)
    ):
        return None
    hashes.sort()
    cuts: list[int] = []
    acc_rate, acc_throughput = info[hashes[0]]
    for i in range(1, len(hashes)):
        rate, throughput = info[hashes[i]]
        if (
            acc_rate > max_msg_rate
            or acc_throughput > max_bandwidth
            or acc_rate + rate > max_msg_rate
            or acc_throughput + throughput > max_bandwidth
        ):
            start, end = hashes[i - 1], hashes[i]
            cuts.append(start + (end - start) // 2 + 1)
            acc_rate, acc_throughput = rate, throughput
        else:
            acc_rate += rate
            acc_throughput += throughput
    return cuts


def of(name: str | None) -> Callable[..., list[int] | None] | None:
    """``NamespaceBundleSplitAlgorithm.of(name)``: the algorithm function, ``None`` for null/unknown names."""
    return {
        RANGE_EQUALLY_DIVIDE: range_equally_divide,
        TOPIC_COUNT_EQUALLY_DIVIDE: topic_count_equally_divide,
        SPECIFIED_POSITIONS_DIVIDE: specified_positions_divide,
        FLOW_OR_QPS_EQUALLY_DIVIDE: flow_or_qps_equally_divide,
    }.get(name) if name is not None else None


def get_split_boundaries(
    algorithm: str,
    bundle_range: BundleRange,
    topics: Sequence[str] | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    positions: Sequence[int] | None = None,
    topic_stats: Mapping[str, TopicTraffic] | None = None,
) -> list[int] | None:
    """Run the algorithm named ``algorithm`` (a ``defaultNamespaceBundleSplitAlgorithm`` value) on one bundle.

    ``config`` supplies ``loadBalancerNamespaceBundleMaxMsgRate``, ``loadBalancerNamespaceBundleMaxBandwidthMbytes``
    and ``flowOrQpsDifferenceThresholdPercentage`` for the flow/QPS algorithm (Pulsar's defaults 30000, 100, 10
    when absent). Raises ``ValueError`` for an unknown name.
    """
    cfg = config or {}
    if algorithm == RANGE_EQUALLY_DIVIDE:
        return range_equally_divide(bundle_range)
    if algorithm == TOPIC_COUNT_EQUALLY_DIVIDE:
        return topic_count_equally_divide(topics)
    if algorithm == SPECIFIED_POSITIONS_DIVIDE:
        return specified_positions_divide(bundle_range, topics, positions)
    if algorithm == FLOW_OR_QPS_EQUALLY_DIVIDE:
        return flow_or_qps_equally_divide(
            topics,
            topic_stats or {},
            int(cfg.get("loadBalancerNamespaceBundleMaxMsgRate", 30000)),
            int(cfg.get("loadBalancerNamespaceBundleMaxBandwidthMbytes", 100)),
            float(cfg.get("flowOrQpsDifferenceThresholdPercentage", 10)),
        )
    raise ValueError(
        f"Unsupported namespace bundle split algorithm {algorithm!r}, supported algorithms are {list(AVAILABLE_ALGORITHMS)}"
    )

