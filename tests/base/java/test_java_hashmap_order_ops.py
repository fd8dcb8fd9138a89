"""JavaHashMapOrder("hashmap") computes its order (keys sorted by bucket, then put order) instead of replaying
buckets: checked against a replay of Java's HashMap written here bucket by bucket (append on put, lo/hi split
keeping the order on resize, remove in place, clear keeping the table), through random puts, retains, removes and
clears (what selectBroker does to its candidate set)."""
import numpy as np
import pytest

from clusteremu.base.java import JavaHashMapOrder, hash_spread, string_hash_code


class Replay:
    """java.util.HashMap's table of string keys, bucket by bucket (the default constructor)."""

    def __init__(self) -> None:
        self.table: list[list[tuple[int, str]]] = []

    @property
    def capacity(self) -> int:
        return len(self.table)

    def __len__(self) -> int:
        return sum(map(len, self.table))

    def put(self, key: str) -> None:
        if not self.table:
            self.table = [[] for _ in range(16)]
        if key in self.keys():
            return
        h = hash_spread(string_hash_code(key))
        self.table[h & (len(self.table) - 1)].append((h, key))
        n = len(self.table)
        if len(self) > n * 3 // 4:
            grown: list[list[tuple[int, str]]] = [[] for _ in range(2 * n)]
            for i, bucket in enumerate(self.table):
                for node in bucket:
                    grown[i + n if node[0] & n else i].append(node)
            self.table = grown

    def remove(self, key: str) -> None:
        self.table = [[node for node in bucket if node[1] != key] for bucket in self.table]

    def clear(self) -> None:
        self.table = [[] for _ in self.table]

    def keys(self) -> list[str]:
        return [key for bucket in self.table for _, key in bucket]


def _names(rng, n):
    # broker ids as the scenarios name them, plus a few short keys that collide in small tables ("Aa"/"BB")
    return [f"broker-{i}:8080" for i in rng.permutation(n).tolist()] + ["Aa", "BB", "AaAa", "BBBB", "AaBB"]


@pytest.mark.parametrize("seed", range(6))
def test_random_puts_removes_and_clears_give_the_replayed_order(seed):
    rng = np.random.default_rng(seed)
    names = _names(rng, int(rng.integers(5, 1200)))
    fast, replay = JavaHashMapOrder("hashmap"), Replay()
    for _ in range(120):
        op = rng.random()
        if op < 0.55:  # addAll of a random run of names, in a random order (some already present)
            batch = [names[i] for i in rng.integers(0, len(names), int(rng.integers(1, 200))).tolist()]
            fast.put_all(batch)
            for key in batch:
                replay.put(key)
        elif op < 0.85:  # retainAll of a random subset of what is there
            kept = {k for k in replay.keys() if rng.random() < 0.7}
            fast.retain(kept)
            for key in replay.keys():
                if key not in kept:
                    replay.remove(key)
        elif op < 0.95:
            key = names[int(rng.integers(len(names)))]
            fast.remove(key)
            replay.remove(key)
        else:
            fast.clear()
            replay.clear()
        assert fast.keys() == replay.keys()
        assert fast.capacity == replay.capacity
        assert len(fast) == len(replay)


def test_a_present_key_keeps_its_place_and_a_removed_one_goes_to_the_end_of_its_bucket():
    fast, replay = JavaHashMapOrder("hashmap"), Replay()
    for op, key in [("put", "Aa"), ("put", "BB"), ("put", "Aa"), ("remove", "Aa"), ("put", "Aa"), ("put", "x")]:
        getattr(fast, op)(key)
        getattr(replay, op)(key)
    assert fast.keys() == replay.keys() == ["BB", "Aa", "x"]  # "Aa" and "BB" share a bucket
    assert "Aa" in fast and "y" not in fast


def test_clear_keeps_the_table_length():
    fast, replay = JavaHashMapOrder("hashmap"), Replay()
    big = [f"b{i}" for i in range(100)]
    fast.put_all(big)
    for key in big:
        replay.put(key)
    fast.clear()
    replay.clear()
    small = ["b7", "b3", "b99", "b12"]
    fast.put_all(small)
    for key in small:
        replay.put(key)
    assert fast.capacity == replay.capacity == 256
    assert fast.keys() == replay.keys()


def test_keys_is_a_new_list_each_time():
    fast = JavaHashMapOrder("hashmap")
    fast.put_all(["a", "b"])
    keys = fast.keys()
    keys.append("c")
    assert fast.keys() == [k for k in keys if k != "c"]
    assert JavaHashMapOrder().keys() == [] and JavaHashMapOrder().capacity == 0
