"""Namespace bundles as hash ranges: their names, the topic → bundle mapping, and the split of one bundle into children.

The one place where Pulsar bundle names (``tenant/ns/0x..._0x...``) are formatted and taken apart; every strategy
(and the emulated brokers) use it.

Follows ``NamespaceBundle``, ``NamespaceBundles``, ``NamespaceBundleFactory`` and the default
``ConsistentHashingTopicBundleAssigner`` (``pulsar-broker/.../common/naming/``).

API::

    r = BundleRange.parse("0x00000000_0xffffffff")     # or BundleRange.of_bundle("tenant/ns/0x..._0x...")
    r.lower, r.upper                                   # ints; str(r) == "0x00000000_0xffffffff"
    r.includes(h); can_split_bundle(r)
    bundle_name("tenant/ns", r)                        # -> "tenant/ns/0x00000000_0xffffffff"
    bundle_namespace(b), bundle_range_name(b)          # "tenant/ns", "0x..._0x..." (lenient)
    namespace_of_bundle(b), range_of_bundle(b)         # the same, ValueError for a name without "/"
    topic_hash("persistent://tenant/ns/t")             # unsigned CRC32 of the UTF-8 name
    bundle_for_topic("tenant/ns/t", ["0x00000000", "0x80000000", "0xffffffff"])   # -> "0x80000000_0xffffffff"
    split_bundle(r, boundaries=[0x40000000])           # -> [BundleRange, BundleRange]
    split_bundle(r, num_bundles=4)                     # equal segments, as the factory does without boundaries

Ranges, as Pulsar has them:

* Hashes are unsigned 32-bit values. The whole namespace is ``[0x00000000, 0xffffffff]`` — the upper bound
  ``FULL_UPPER_BOUND = 0xffffffff`` is *inclusive*; every other bundle is ``[lower, upper)``. So splitting the
  full bundle in two gives ``0x00000000_0x7fffffff`` and ``0x7fffffff_0xffffffff`` (``(0xffffffff - 0) / 2``),
  not ``0x80000000``.
* A bundle range is named ``String.format("0x%08x_0x%08x", lower, upper)`` (lower-case hex, at least 8 digits)
  and a bundle ``"<namespace>/<range>"``. Pulsar takes names apart at the last ``/`` in two ways:
  ``LoadManagerShared.getNamespaceNameFromBundleName``/``getBundleRangeFromBundleName`` insist on a ``/``
  (:func:`namespace_of_bundle`, :func:`range_of_bundle`); the shedding and split code's ``lastIndexOf`` use
  reads a name without one as its own namespace and range (:func:`bundle_namespace`, :func:`bundle_range_name`).
* Topic hash: the namespace service builds its bundle factory with Guava's ``Hashing.crc32()`` and hashes
  ``TopicName.toString()`` (the complete ``persistent://tenant/ns/topic`` name) as UTF-8, ``padToLong()`` =
  the unsigned CRC32. (It is CRC32, not Murmur3: ``NamespaceService`` passes ``Hashing.crc32()``.)
* Topic → bundle: ``Arrays.binarySearch`` over the sorted boundaries; a hash equal to a boundary belongs to
  the bundle starting there, otherwise to the one starting at the insertion point − 1. Like Java, a hash
  below the first boundary or equal to the *last* boundary (0xffffffff with the default boundaries) has no
  bundle and raises ``IndexError`` (Java: ``IndexOutOfBoundsException``), even though the last bundle's range
  includes 0xffffffff. The chance of a CRC32 equal to 0xffffffff is 2^-32.
* ``canSplitBundle``: ``upper - lower > 1``.

Departure: ``complete_topic_name`` only normalises the short forms (``topic`` → ``persistent://public/default/topic``,
``tenant/ns/topic`` → ``persistent://tenant/ns/topic``); it does not validate names the way ``TopicName`` does.
"""
from __future__ import annotations

import bisect
import zlib
from dataclasses import dataclass
from typing import Iterable, Sequence

__all__ = [
    "FULL_LOWER_BOUND",
    "FULL_UPPER_BOUND",
    "FULL_RANGE",
    "BundleRange",
    "bundle_for_topic",
    "bundle_name",
    "bundle_namespace",
    "bundle_range_name",
    "can_split_bundle",
    "complete_topic_name",
    "find_bundle_index",
    "format_boundary",
    "namespace_of_bundle",
    "parse_boundary",
    "range_of_bundle",
    "split_bundle",
    "topic_hash",
]

#: Lowest hash of a namespace (``NamespaceBundles.FULL_LOWER_BOUND``).
FULL_LOWER_BOUND = 0x00000000
#: Highest hash of a namespace, inclusive (``NamespaceBundles.FULL_UPPER_BOUND``).
FULL_UPPER_BOUND = 0xFFFFFFFF


def parse_boundary(text: str) -> int:
    """``Long.decode`` of a boundary string (``0x``/``0X``/``#`` hex, or decimal)."""
    s = text.strip()
    negative = s.startswith("-")
    if s[:1] in "+-":
        s = s[1:]
    if s[:2] in ("0x", "0X"):
        value = int(s[2:], 16)
    elif s.startswith("#"):
        value = int(s[1:], 16)
    elif len(s) > 1 and s.startswith("0"):
        value = int(s[1:], 8)
    else:
        value = int(s, 10)
    return -value if negative else value


def format_boundary(value: int) -> str:
    """``String.format("0x%08x", value)``."""
    return f"0x{value:08x}"


@dataclass(frozen=True, order=True)
class BundleRange:
    """A bundle's hash range ``[lower, upper)``, or ``[lower, 0xffffffff]`` for the last bundle."""

    lower: int
    upper: int

    def __post_init__(self) -> None:
        if not (FULL_LOWER_BOUND <= self.lower and self.upper <= FULL_UPPER_BOUND):
            raise ValueError(f"bundle range {self.lower:#x}..{self.upper:#x} outside the 32-bit hash space")
        if self.is_empty():
            raise ValueError(f"Cannot create bundle object for an empty key range {self}")

    @classmethod
    def parse(cls, bundle_range: str) -> "BundleRange":
        """``NamespaceBundleFactory.getBundle(namespace, "0x..._0x...")``'s range parsing."""
        if "_" not in bundle_range:
            raise ValueError(f"Invalid bundle range {bundle_range!r}")
        parts = bundle_range.split("_")
        return cls(parse_boundary(parts[0]), parse_boundary(parts[1]))

    @classmethod
    def of_bundle(cls, bundle: str) -> "BundleRange":
        """The range of a full bundle name ``tenant/ns/0x..._0x...`` (the part after the last ``/``)."""
        return cls.parse(bundle_range_name(bundle))

    @property
    def upper_inclusive(self) -> bool:
        """Only the range ending at ``0xffffffff`` includes its upper bound."""
        return self.upper == FULL_UPPER_BOUND

    def is_empty(self) -> bool:
        return self.upper < self.lower or (self.upper == self.lower and not self.upper_inclusive)

    def includes(self, hash_value: int) -> bool:
        """``NamespaceBundle.includes``: the Guava range contains the hash."""
        if self.upper_inclusive:
            return self.lower <= hash_value <= self.upper
        return self.lower <= hash_value < self.upper

    def __str__(self) -> str:
        return f"{format_boundary(self.lower)}_{format_boundary(self.upper)}"


#: ``0x00000000_0xffffffff``, the single bundle of a namespace without stored boundaries.
FULL_RANGE = BundleRange(FULL_LOWER_BOUND, FULL_UPPER_BOUND)


def bundle_name(namespace: str, bundle_range: BundleRange | str) -> str:
    """``NamespaceBundle.toString()``: ``"<namespace>/0x..._0x..."``."""
    return f"{namespace}/{bundle_range}"


def bundle_namespace(bundle: str) -> str:
    """The part of a bundle name before the last ``/`` (the name itself if it has none)."""
    index = bundle.rfind("/")
    return bundle[:index] if index != -1 else bundle


def bundle_range_name(bundle: str) -> str:
    """The part of a bundle name after the last ``/``, ``"0x..._0x..."`` (the name itself if it has none)."""
    return bundle[bundle.rfind("/") + 1 :]


def namespace_of_bundle(bundle: str) -> str:
    """``getNamespaceNameFromBundleName``: the part before the last ``/`` (``ValueError`` if there is none)."""
    pos = bundle.rfind("/")
    if pos == -1:
        raise ValueError(f"not a bundle name: {bundle!r}")
    return bundle[:pos]


def range_of_bundle(bundle: str) -> str:
    """``getBundleRangeFromBundleName``: the part after the last ``/`` (``ValueError`` if there is none)."""
    pos = bundle.rfind("/")
    if pos == -1:
        raise ValueError(f"not a bundle name: {bundle!r}")
    return bundle[pos + 1 :]


def can_split_bundle(bundle_range: BundleRange) -> bool:
    """``NamespaceBundleFactory.canSplitBundle``: ``upper - lower > 1``."""
    return bundle_range.upper - bundle_range.lower > 1


def complete_topic_name(topic: str) -> str:
    """``TopicName.toString()`` for the common forms: complete names unchanged, short names completed."""
    if "://" in topic:
        return topic
    parts = topic.split("/")
    if len(parts) == 1:
        return f"persistent://public/default/{topic}"
    if len(parts) == 3:
        return f"persistent://{topic}"
    raise ValueError(f"Invalid short topic name {topic!r}, it should be in the format of <tenant>/<namespace>/<topic> or <topic>")


def topic_hash(name: str) -> int:
    """``getLongHashCode(name)``: unsigned CRC32 of the UTF-8 bytes of ``name`` (hashed as given)."""
    return zlib.crc32(name.encode("utf-8")) & 0xFFFFFFFF


def find_bundle_index(boundaries: Sequence[int], hash_value: int) -> int:
    """``NamespaceBundles.getBundle(hash)``: index of the bundle (``boundaries[i]``..``boundaries[i+1]``).

    Raises ``IndexError`` where Java throws ``IndexOutOfBoundsException`` (hash below the first boundary,
    or equal to the last boundary).
    """
    i = bisect.bisect_left(boundaries, hash_value)
    index = i if i < len(boundaries) and boundaries[i] == hash_value else i - 1
    if index < 0 or index >= len(boundaries) - 1:
        raise IndexError(f"hash {hash_value:#010x} has no bundle among boundaries {[format_boundary(b) for b in boundaries]}")
    return index


def bundle_for_topic(topic: str, boundaries: Iterable[int | str]) -> str:
    """The bundle range (``0x..._0x...``) that owns ``topic`` under the default ``ConsistentHashingTopicBundleAssigner``.

    ``boundaries`` are the namespace's partition boundaries (``BundlesData.boundaries``: ints or ``"0x..."``
    strings, at least two, sorted). The topic name is completed first (``TopicName.toString()``).
    """
    parts = [parse_boundary(b) if isinstance(b, str) else int(b) for b in boundaries]
    if len(parts) < 2:
        raise ValueError("Need to specify at least 2 boundaries")
    index = find_bundle_index(parts, topic_hash(complete_topic_name(topic)))
    return str(BundleRange(parts[index], parts[index + 1]))


def split_bundle(
    bundle_range: BundleRange, *, boundaries: Sequence[int] | None = None, num_bundles: int = 2
) -> list[BundleRange]:
    """``NamespaceBundleFactory.splitBundles``: the children replacing ``bundle_range``.

    With ``boundaries`` (what a split algorithm returned; sorted here), there are ``len(boundaries) + 1``
    children and every boundary must lie strictly inside the range. Without, the range is cut into
    ``num_bundles`` segments of ``(upper - lower) // num_bundles`` (the last one takes the remainder).
    Raises ``ValueError`` when the bundle cannot be split further (``upper - lower <= 1``), a boundary is
    outside the range, or a child would be empty (a repeated boundary).
    """
    if not can_split_bundle(bundle_range):
        raise ValueError(f"{bundle_range} bundle can't be split further since range not larger than 1")
    lower, upper = bundle_range.lower, bundle_range.upper
    if boundaries:
        cuts = sorted(int(b) for b in boundaries)
        if not (cuts[0] > lower and cuts[-1] < upper):
            raise ValueError(f"The given fixed keys must between the key range of the {bundle_range} bundle")
    else:
        if num_bundles < 1:
            raise ValueError(f"cannot split into {num_bundles} bundles")
        seg = (upper - lower) // num_bundles
        cuts = [lower + seg * (j + 1) for j in range(num_bundles - 1)]
    points = [lower, *cuts, upper]
    return [BundleRange(points[i], points[i + 1]) for i in range(len(points) - 1)]
