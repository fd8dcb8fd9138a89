"""AllocateMessageQueueConsistentHash and its MD5 ring: hash values, ring lookup, constructor checks, results the
real Java code gives, the upstream stability properties and the full grid against an independent oracle."""
import hashlib
import random
import struct

import pytest

from clusteremu.strategies.rocketmq import AllocationArgumentError, MessageQueue, create
from clusteremu.strategies.rocketmq.consistent_hash import AllocateMessageQueueConsistentHash
from clusteremu.strategies.rocketmq.hash_ring import ConsistentHashRouter, md5_hash


def oracle_hash(key: str) -> int:
    """As MD5Hash: first four digest bytes, big-endian, unsigned."""
    return struct.unpack(">I", hashlib.md5(key.encode("utf-8")).digest()[:4])[0]


def oracle_owner(queue: MessageQueue, cid_all: list[str], vnodes: int) -> str | None:
    """Linear scan of the ring (later puts win): the first point at or after the queue's hash, else the lowest."""
    ring: dict[int, str] = {}
    for cid in cid_all:
        for i in range(vnodes):
            ring[oracle_hash(f"{cid}-{i}")] = cid
    if not ring:
        return None
    h = oracle_hash(f"MessageQueue [topic={queue.topic}, brokerName={queue.broker_name}, queueId={queue.queue_id}]")
    after = [k for k in ring if k >= h]
    return ring[min(after) if after else min(ring)]


@pytest.mark.parametrize("key", ["", "CID-0-0", "10.0.0.1@1234-9", "MessageQueue [topic=T, brokerName=b, queueId=0]",
                                 "é中\U0001f600"])
def test_md5_hash_is_the_first_four_digest_bytes_unsigned(key):
    assert md5_hash(key) == oracle_hash(key)
    assert 0 <= md5_hash(key) < 2**32


def test_md5_hash_known_values():
    # MD5("") = d41d8cd9..., MD5("a") = 0cc175b9...
    assert md5_hash("") == 0xD41D8CD9
    assert md5_hash("a") == 0x0CC175B9


def test_md5_hash_replaces_lone_surrogates_like_java():
    assert md5_hash("a\ud800") == oracle_hash("a?")


def test_ring_has_vnodes_per_node_and_routes_with_wrap_around():
    ring = ConsistentHashRouter(["x", "y"], 3)
    assert len(ring) == 6
    points = sorted((oracle_hash(f"{n}-{i}"), n) for n in ("x", "y") for i in range(3))
    for key in ["q1", "q2", "q3", "hello", "MessageQueue [topic=T, brokerName=b, queueId=1]"]:
        h = oracle_hash(key)
        expected = next((n for p, n in points if p >= h), points[0][1])
        assert ring.route_node(key) == expected


def test_a_queue_hashing_onto_a_virtual_node_belongs_to_that_node():
    # found by search: MD5 of "c9234-0" and of this queue's toString share their first four bytes
    queue = MessageQueue("T", "b", 107468)
    assert md5_hash("c9234-0") == md5_hash(queue.java_string()) == oracle_hash("c9234-0") == 502851989
    strategy = AllocateMessageQueueConsistentHash(1)
    mqs, cids = [queue, MessageQueue("T", "b", 107469)], ["c9234", "zz"]
    # Java's tailMap(hash) includes the equal key (checked against RocketMQ's own code)
    assert strategy.allocate("G", "c9234", mqs, cids) == [queue]
    assert strategy.allocate("G", "zz", mqs, cids) == [MessageQueue("T", "b", 107469)]


def test_empty_ring_routes_nowhere():
    assert ConsistentHashRouter(["x"], 0).route_node("k") is None
    assert ConsistentHashRouter([], 5).route_node("k") is None


def test_a_node_listed_twice_gets_further_replica_numbers():
    twice = ConsistentHashRouter(["a", "a"], 2)
    once = ConsistentHashRouter(["a"], 4)  # replicas a-0 .. a-3 either way
    assert len(twice) == len(once) == 4
    for key in map(str, range(50)):
        assert twice.route_node(key) == once.route_node(key) == "a"


def test_name_and_default_virtual_nodes():
    strategy = AllocateMessageQueueConsistentHash()
    assert strategy.name == "CONSISTENT_HASH" and strategy.virtual_node_cnt == 10


def test_negative_virtual_nodes_are_refused_with_rocketmq_message():
    with pytest.raises(AllocationArgumentError) as info:
        AllocateMessageQueueConsistentHash(-1)
    assert str(info.value) == "illegal virtualNodeCnt :-1" and info.value.argument == "virtualNodeCnt"


@pytest.mark.parametrize("bad, error", [(True, TypeError), (1.5, TypeError), ("3", TypeError), (2**31, ValueError)])
def test_virtual_nodes_must_be_a_java_int(bad, error):
    with pytest.raises(error):
        AllocateMessageQueueConsistentHash(bad)


def test_zero_virtual_nodes_is_accepted_and_nobody_gets_anything(queues):
    strategy = AllocateMessageQueueConsistentHash(0)
    mqs, cids = queues(6), ["a", "b"]
    assert [strategy.allocate("G", c, mqs, cids) for c in cids] == [[], []]


# Computed by running RocketMQ's own AllocateMessageQueueConsistentHash (develop @ 8fc57f1) on
# 10 queues MessageQueue("topic_test", "brokerName", 0..9) and clients CID-0..CID-3.
JAVA_RESULTS = {
    10: {"CID-0": [1], "CID-1": [], "CID-2": [0, 3, 4, 5, 8], "CID-3": [2, 6, 7, 9]},
    3: {"CID-0": [3, 5, 8], "CID-1": [2], "CID-2": [4], "CID-3": [0, 1, 6, 7, 9]},
}


@pytest.mark.parametrize("vnodes", sorted(JAVA_RESULTS))
def test_results_of_the_java_implementation(vnodes, queues):
    strategy = create("AllocateMessageQueueConsistentHash", {"virtualNodeCnt": vnodes})
    mqs, cids = queues(10, topic="topic_test"), [f"CID-{i}" for i in range(4)]
    got = {cid: [mq.queue_id for mq in strategy.allocate("G", cid, mqs, cids)] for cid in cids}
    assert got == JAVA_RESULTS[vnodes]


def test_upstream_not_a_member_and_bad_arguments(queues):
    strategy = AllocateMessageQueueConsistentHash()
    cids, mqs = ["CID-0", "CID-1"], queues(6)
    assert strategy.allocate("", str(2**31 - 1), mqs, cids) == []
    for current, mq_all, cid_all in [("", mqs, cids), ("0", None, cids), ("0", mqs, None)]:
        with pytest.raises(AllocationArgumentError):
            strategy.allocate("", current, mq_all, cid_all)


def owners(strategy, mqs, cids):
    table = {}
    for cid in cids:
        for mq in strategy.allocate("testConsumerGroup", cid, mqs, cids):
            assert mq not in table
            table[mq] = cid
    return table


# (queues, clients) as the upstream test runs them, plus a fixed sample standing in for its random cases
SIZES = [(20, 10), (10, 20)] + [(random.Random(seed).randint(1, 20), random.Random(seed + 100).randint(1, 20))
                                for seed in range(10)]


@pytest.mark.parametrize("n, c", SIZES)
def test_upstream_removing_or_adding_a_client_moves_only_its_queues(n, c, queues):
    strategy = AllocateMessageQueueConsistentHash(3)
    mqs = queues(n, topic="topic_test")
    cids = [f"CID-{i}" for i in range(c)]
    before = owners(strategy, mqs, cids)
    assert sorted(before) == mqs

    removed, rest = cids[0], cids[1:]
    after_remove = owners(strategy, mqs, rest)
    assert sorted(after_remove) == (mqs if rest else [])
    for mq, cid in before.items():
        if cid != removed:
            assert after_remove[mq] == cid

    grown = rest + ["CID-NEW"]
    after_add = owners(strategy, mqs, grown)
    assert sorted(after_add) == mqs
    for mq, cid in after_add.items():
        if cid != "CID-NEW":
            assert after_remove[mq] == cid


def test_results_keep_mq_all_order(queues):
    mqs = list(reversed(queues(12)))
    strategy = AllocateMessageQueueConsistentHash()
    for cid in ["a", "b"]:
        got = strategy.allocate("G", cid, mqs, ["a", "b"])
        assert got == [mq for mq in mqs if mq in got]


@pytest.mark.parametrize("c", range(1, 21))
def test_grid_each_queue_goes_to_the_oracle_owner(c, spread, cids, allocate_everyone, one_owner):
    strategy = create("AllocateMessageQueueConsistentHash")
    cid_all = cids(c)
    mq_all_40 = spread(40)
    owner = {mq: oracle_owner(mq, cid_all, 10) for mq in mq_all_40}
    for n in range(1, 41):
        mq_all = spread(n)
        result = allocate_everyone(strategy, mq_all, cid_all)
        one_owner(result, mq_all)
        for cid, mqs in result.items():
            assert all(owner[mq] == cid for mq in mqs)
