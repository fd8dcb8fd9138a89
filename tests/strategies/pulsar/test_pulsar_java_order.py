"""Java HashMap / ConcurrentHashMap iteration order; the expected orders below were printed by a JVM."""
import pytest

from clusteremu.base.java import (
    JavaHashMapOrder,
    double_compare_key,
    java_order,
    string_compare_key,
    string_hash_code,
)


def test_string_hash_code_matches_java():
    assert string_hash_code("") == 0
    assert string_hash_code("hello") == 99162322
    assert string_hash_code("Aa") == string_hash_code("BB") == 2112
    assert string_hash_code("broker1") == 150569848
    assert string_hash_code("polygenelubricants") == -2147483648  # int overflow wraps


def test_five_brokers_iterate_in_bucket_order():
    keys = ["broker0", "broker1", "broker2", "broker3", "broker4"]
    expected = ["broker2", "broker1", "broker4", "broker3", "broker0"]
    assert java_order(keys, "hashmap") == expected
    assert java_order(keys, "concurrent") == expected


def test_concurrent_hash_map_resizes_one_key_earlier_than_hash_map():
    keys = ["broker-637", "broker-261", "broker-759", "broker-367", "broker-814", "broker-707",
            "broker-965", "broker-861", "broker-757", "broker-667", "broker-944", "broker-542"]
    assert java_order(keys, "hashmap") == [
        "broker-261", "broker-707", "broker-861", "broker-542", "broker-367", "broker-667",
        "broker-757", "broker-944", "broker-965", "broker-759", "broker-814", "broker-637"]
    assert java_order(keys, "concurrent") == [
        "broker-707", "broker-367", "broker-667", "broker-757", "broker-944", "broker-965",
        "broker-759", "broker-814", "broker-637", "broker-261", "broker-861", "broker-542"]


def test_concurrent_hash_map_transfer_reverses_nodes_before_the_last_run():
    keys = ["bundle-93337", "bundle-8229", "bundle-73972", "bundle-7812", "bundle-81134", "bundle-26995",
            "bundle-65066", "bundle-89181", "bundle-69693", "bundle-56045", "bundle-41175", "bundle-61027",
            "bundle-76750", "bundle-59399"]
    order = java_order(keys, "concurrent")
    assert order == [
        "bundle-89181", "bundle-69693", "bundle-73972", "bundle-41175", "bundle-7812", "bundle-8229",
        "bundle-65066", "bundle-76750", "bundle-26995", "bundle-61027", "bundle-59399", "bundle-81134",
        "bundle-56045", "bundle-93337"]
    # a HashMap keeps insertion order inside a bucket: 8229 (inserted first) before 7812
    hm = java_order(keys, "hashmap")
    assert hm.index("bundle-8229") < hm.index("bundle-7812")


def test_clear_keeps_the_table_length_and_remove_does_not_shrink():
    table = JavaHashMapOrder("hashmap")
    for i in range(20):
        table.put(f"k{i}")
    assert table.capacity == 32
    table.clear()
    assert table.capacity == 32 and len(table) == 0 and table.keys() == []
    table.put("k1")
    table.remove("k1")
    assert table.capacity == 32


def test_double_compare_key_orders_like_java():
    values = [1.0, float("nan"), -0.0, 0.0, float("inf"), -float("inf")]
    ordered = sorted(values, key=double_compare_key)
    assert ordered[:2] == [-float("inf"), -0.0] and str(ordered[1]) == "-0.0"
    assert ordered[2] == 0.0 and str(ordered[2]) == "0.0"
    assert ordered[4] == float("inf") and ordered[5] != ordered[5]


def test_string_compare_key_uses_utf16_code_units():
    # by code point U+FF5E < U+1F600, but U+1F600 is the surrogate pair D83D DE00 in UTF-16, below FF5E
    a, b = "\uff5e", "\U0001f600"
    assert sorted([a, b]) == [a, b]
    assert sorted([a, b], key=string_compare_key) == [b, a]


@pytest.mark.parametrize("kind", ["hashmap", "concurrent"])
def test_large_map_orders_match_the_replayed_puts(kind):
    import random

    from clusteremu.base.java import JavaHashMapOrder, java_order

    rnd = random.Random(11)
    for count, capacity in ((65, None), (96, None), (97, None), (768, None), (1000, None), (5000, 3), (3072, 4096)):
        keys = [f"tenant/ns-{rnd.randrange(50)}/0x{rnd.getrandbits(32):08x}_0x{rnd.getrandbits(32):08x}"
                for _ in range(count)]
        keys += keys[: count // 10]  # puts of present keys keep their place
        table = JavaHashMapOrder(kind, capacity)
        for key in keys:
            table.put(key)
        assert java_order(keys, kind, capacity) == table.keys()
