"""The ConcurrentHashMap order of a large map, computed a table at a time, is the put-by-put replay's, also where
bins hold long lists of nodes that go both ways at each resize (transfer's last run and reversed prefix)."""
import random

import pytest

from clusteremu.base.java import JavaHashMapOrder, hash_spread, java_order, string_hash_code


def _colliding(rnd: random.Random, count: int, low_bits: int) -> list[str]:
    """``count`` distinct bundle-like names whose hash spreads agree in their ``low_bits`` lowest bits."""
    out: list[str] = []
    while len(out) < count:
        key = f"t/ns/0x{rnd.getrandbits(32):08x}"
        if hash_spread(string_hash_code(key)) & ((1 << low_bits) - 1) == 0 and key not in out:
            out.append(key)
    return out


@pytest.mark.parametrize("low_bits, capacity", [(4, None), (6, None), (3, 5), (5, 100)])
def test_colliding_names_give_the_replayed_order(low_bits, capacity):
    rnd = random.Random(low_bits * 31 + (capacity or 0))
    keys = _colliding(rnd, 300, low_bits) + [f"b-{rnd.getrandbits(40)}" for _ in range(500)]
    rnd.shuffle(keys)
    keys += keys[:50]  # puts of present keys keep their place
    table = JavaHashMapOrder("concurrent", capacity)
    for key in keys:
        table.put(key)
    assert java_order(keys, "concurrent", capacity) == table.keys()


@pytest.mark.parametrize("count", [65, 95, 96, 97, 191, 192, 193, 768])
def test_maps_ending_at_a_resize_threshold_give_the_replayed_order(count):
    # the key that brings the size to three quarters of the table resizes it, even as the last put
    rnd = random.Random(count)
    keys = [f"broker-{rnd.getrandbits(24)}:8080" for _ in range(count)]
    table = JavaHashMapOrder("concurrent")
    for key in keys:
        table.put(key)
    assert java_order(keys, "concurrent") == table.keys()


@pytest.mark.parametrize("kind", ["hashmap", "concurrent"])
def test_names_of_every_length_and_any_characters_give_the_replayed_order(kind):
    # large maps hash all their names at once, a length at a time: every UTF-16 unit counts as Java counts it
    # (a character above U+FFFF as its two surrogates, a lone surrogate as itself), and "" hashes to 0
    rnd = random.Random(17)
    alphabet = "ab/_-0x9é中\U0001F600\ud800"
    keys = [""] + ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 60))) for _ in range(700)]
    table = JavaHashMapOrder(kind)
    for key in keys:
        table.put(key)
    assert java_order(keys, kind) == table.keys()
