"""Java HashMap / ConcurrentHashMap iteration order; the expected orders below were printed by a JVM."""
import pytest

from clusteremu.base.java import JavaHashMapOrder, hash_spread, java_order, string_hash_code, table_size_for


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


@pytest.mark.parametrize("kind", ["hashmap", "concurrent"])
def test_large_map_orders_match_the_replayed_puts(kind):
    import random

    rnd = random.Random(11)
    for count, capacity in ((65, None), (96, None), (97, None), (768, None), (1000, None), (5000, 3), (3072, 4096)):
        keys = [f"tenant/ns-{rnd.randrange(50)}/0x{rnd.getrandbits(32):08x}_0x{rnd.getrandbits(32):08x}"
                for _ in range(count)]
        keys += keys[: count // 10]  # puts of present keys keep their place
        table = JavaHashMapOrder(kind, capacity)
        for key in keys:
            table.put(key)
        assert java_order(keys, kind, capacity) == table.keys()


def test_hash_map_resize_after_the_thirteenth_key_keeps_each_bucket_in_insertion_order():
    # HashMap doubles 16 -> 32 when the 13th key makes size > 12; the order is then by bucket of the 32-table
    keys = [f"k{i}" for i in range(13)]
    table = JavaHashMapOrder("hashmap")
    for key in keys[:12]:
        table.put(key)
    assert table.capacity == 16
    table.put(keys[12])
    assert table.capacity == 32
    assert table.keys() == java_order(keys, "hashmap")
    # "k0".hashCode() = 3365 -> bucket 5 of 32, ..., "k9" -> 14; "k10" = 104394, spread 104395 -> 11; "k11" -> 10;
    # "k12" -> 13. Within a bucket the insertion order stays: k5 before k11, k6 before k10, k8 before k12.
    assert table.keys() == ["k0", "k1", "k2", "k3", "k4", "k5", "k11", "k6", "k10", "k7", "k8", "k12", "k9"]


def test_hash_spread_and_table_size_for():
    assert hash_spread(-1) == 0x7FFF0000  # (h ^ (h >>> 16)) & HASH_BITS of 0xffffffff
    assert hash_spread(0x12345678) == 0x12345678 ^ 0x1234
    assert hash_spread(string_hash_code("k10")) & 31 == 11  # 104394 ^ 1 = 104395 -> bucket 11 of 32
    assert [table_size_for(c) for c in (0, 1, 16, 17, 100, 2**31)] == [1, 1, 16, 32, 128, 2**30]
