"""Bundle ranges, names, the topic → bundle mapping and the split of a range (NamespaceBundle(s)/Factory).

Includes cases of Pulsar's NamespaceBundlesTest and NamespaceBundleTest.
"""
import zlib

import pytest

from clusteremu.strategies.pulsar.split.bundles import (
    FULL_RANGE,
    BundleRange,
    bundle_for_topic,
    bundle_name,
    bundle_namespace,
    bundle_range_name,
    can_split_bundle,
    complete_topic_name,
    find_bundle_index,
    namespace_of_bundle,
    range_of_bundle,
    split_bundle,
    topic_hash,
)


def test_bundle_names_are_made_and_taken_apart_at_the_last_slash():
    name = bundle_name("tenant/ns", BundleRange(0, 0x80000000))
    assert name == "tenant/ns/0x00000000_0x80000000" == bundle_name("tenant/ns", "0x00000000_0x80000000")
    assert bundle_namespace(name) == namespace_of_bundle(name) == "tenant/ns"
    assert bundle_range_name(name) == range_of_bundle(name) == "0x00000000_0x80000000"
    # the lenient pair reads a name without "/" as its own namespace and range; the strict pair refuses it
    assert bundle_namespace("odd") == bundle_range_name("odd") == "odd"
    for strict in (namespace_of_bundle, range_of_bundle):
        with pytest.raises(ValueError):
            strict("odd")


def test_range_names_and_parsing():
    assert str(FULL_RANGE) == "0x00000000_0xffffffff"
    r = BundleRange.parse("0x10000000_0x40000000")
    assert (r.lower, r.upper) == (0x10000000, 0x40000000) and str(r) == "0x10000000_0x40000000"
    assert BundleRange.of_bundle("pulsar/use/ns1/0x00000000_0x80000000") == BundleRange(0, 0x80000000)
    assert BundleRange.parse("0X0000000A_0x000000ff") == BundleRange(10, 255)
    with pytest.raises(ValueError):
        BundleRange.parse("0x00000000")
    with pytest.raises(ValueError):
        BundleRange(5, 5)  # empty [5, 5)


def test_only_the_range_ending_at_0xffffffff_includes_its_upper_bound():
    assert FULL_RANGE.includes(0xFFFFFFFF)
    r = BundleRange(0, 0x80000000)
    assert r.includes(0) and r.includes(0x7FFFFFFF) and not r.includes(0x80000000)


def test_pulsar_constructor_ranges():
    parts = [0, 0x10000000, 0x40000000, 0xFFFFFFFF]
    ranges = [BundleRange(parts[i], parts[i + 1]) for i in range(3)]
    assert [str(r) for r in ranges] == [
        "0x00000000_0x10000000",
        "0x10000000_0x40000000",
        "0x40000000_0xffffffff",
    ]
    assert not ranges[0].upper_inclusive and ranges[2].upper_inclusive


def test_topic_hash_is_unsigned_crc32_of_the_complete_name():
    assert topic_hash("persistent://pulsar/global/ns1/topic-1") == zlib.crc32(b"persistent://pulsar/global/ns1/topic-1")
    assert complete_topic_name("tenant/ns/t") == "persistent://tenant/ns/t"
    assert complete_topic_name("t") == "persistent://public/default/t"
    assert complete_topic_name("non-persistent://a/b/c") == "non-persistent://a/b/c"
    with pytest.raises(ValueError):
        complete_topic_name("a/b")


def test_pulsar_find_bundle_case():
    parts = [0, 0x40000000, 0xA0000000, 0xB0000000, 0xC0000000, 0xFFFFFFFF]
    topic = "persistent://pulsar/global/ns1/topic-1"
    found = BundleRange.parse(bundle_for_topic(topic, parts))
    assert found.includes(topic_hash(topic))
    # With boundaries all above the topic's hash there is no bundle (Java's IndexOutOfBoundsException).
    h = topic_hash(topic)
    with pytest.raises(IndexError):
        find_bundle_index([h + 1, 0xFFFFFFFF], h)


def test_binary_search_rule_at_boundaries():
    parts = [0, 0x80000000, 0xFFFFFFFF]
    assert find_bundle_index(parts, 0) == 0
    assert find_bundle_index(parts, 0x7FFFFFFF) == 0
    assert find_bundle_index(parts, 0x80000000) == 1  # a boundary belongs to the bundle it starts
    assert find_bundle_index(parts, 0xFFFFFFFE) == 1
    with pytest.raises(IndexError):
        find_bundle_index(parts, 0xFFFFFFFF)  # equal to the last boundary: Java fails too
    with pytest.raises(IndexError):
        find_bundle_index([0x10, 0x20], 0x5)


def test_bundle_for_topic_accepts_string_boundaries_and_short_names():
    assert bundle_for_topic("tenant/ns/t", ["0x00000000", "0xffffffff"]) == "0x00000000_0xffffffff"
    expected = "0x00000000_0x80000000" if topic_hash("persistent://tenant/ns/t") < 0x80000000 else "0x80000000_0xffffffff"
    assert bundle_for_topic("tenant/ns/t", ["0x00000000", "0x80000000", "0xffffffff"]) == expected


def test_pulsar_split_bundle_in_two_repeatedly():
    first = split_bundle(FULL_RANGE)
    assert [str(r) for r in first] == ["0x00000000_0x7fffffff", "0x7fffffff_0xffffffff"]
    assert [str(r) for r in split_bundle(first[0])] == ["0x00000000_0x3fffffff", "0x3fffffff_0x7fffffff"]
    assert [str(r) for r in split_bundle(first[1])] == ["0x7fffffff_0xbfffffff", "0xbfffffff_0xffffffff"]
    third = split_bundle(split_bundle(first[0])[0])
    assert [str(r) for r in third] == ["0x00000000_0x1fffffff", "0x1fffffff_0x3fffffff"]


def test_pulsar_split_in_four_spans_the_parent():
    children = split_bundle(FULL_RANGE, num_bundles=4)
    assert len(children) == 4
    assert children[0].lower == 0 and children[-1].upper == 0xFFFFFFFF
    assert all(children[i].upper == children[i + 1].lower for i in range(3))
    assert [c.lower for c in children] == [0, 0x3FFFFFFF, 0x7FFFFFFE, 0xBFFFFFFD]


def test_pulsar_split_by_fixed_boundary():
    target = BundleRange(0, 0x40000000)
    with pytest.raises(ValueError):
        split_bundle(target, boundaries=[target.lower])
    with pytest.raises(ValueError):
        split_bundle(target, boundaries=[target.upper])
    children = split_bundle(target, boundaries=[target.lower + 10])
    assert children[0].lower == 0 and children[1].lower == 10


def test_split_by_several_boundaries_sorts_them():
    children = split_bundle(FULL_RANGE, boundaries=[0xC0000000, 0x40000000])
    assert [str(c) for c in children] == [
        "0x00000000_0x40000000",
        "0x40000000_0xc0000000",
        "0xc0000000_0xffffffff",
    ]
    with pytest.raises(ValueError):
        split_bundle(FULL_RANGE, boundaries=[0x40000000, 0x40000000])  # an empty child


def test_range_that_cannot_be_split_further():
    tiny = BundleRange(7, 8)
    assert not can_split_bundle(tiny)
    assert can_split_bundle(BundleRange(7, 9))
    with pytest.raises(ValueError):
        split_bundle(tiny)
    assert [str(c) for c in split_bundle(BundleRange(7, 9))] == ["0x00000007_0x00000008", "0x00000008_0x00000009"]
