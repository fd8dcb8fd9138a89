"""AllocateMessageQueueAveragely: exact blocks, the upstream example, and the full 1..20 x 1..40 grid."""
import pytest

from clusteremu.strategies.rocketmq import MessageQueue, create
from clusteremu.strategies.rocketmq.averagely import AllocateMessageQueueAveragely


def test_name():
    assert AllocateMessageQueueAveragely().name == "AVG"


def test_upstream_ten_queues_four_clients_sizes(queues):
    mqs, cids = queues(10), [f"CID_PREFIX{i}" for i in range(4)]
    sizes = [len(AllocateMessageQueueAveragely().allocate("", cid, mqs, cids)) for cid in cids]
    assert sizes == [3, 3, 2, 2]


def test_blocks_are_contiguous_and_cross_broker_boundaries():
    mqs = [MessageQueue("T", b, i) for b in ("a", "b") for i in range(4)]
    cids = ["c0", "c1", "c2"]
    got = {cid: [(mq.broker_name, mq.queue_id) for mq in AllocateMessageQueueAveragely().allocate("G", cid, mqs, cids)]
           for cid in cids}
    assert got == {"c0": [("a", 0), ("a", 1), ("a", 2)], "c1": [("a", 3), ("b", 0), ("b", 1)],
                   "c2": [("b", 2), ("b", 3)]}


def test_more_clients_than_queues(queues):
    mqs, cids = queues(3), [f"c{i}" for i in range(5)]
    got = [[mq.queue_id for mq in AllocateMessageQueueAveragely().allocate("G", cid, mqs, cids)] for cid in cids]
    assert got == [[0], [1], [2], [], []]


def test_lists_are_used_as_given_not_sorted(queues):
    mqs = list(reversed(queues(4)))
    cids = ["c1", "c0"]  # c1 first: it takes the first block
    assert [mq.queue_id for mq in AllocateMessageQueueAveragely().allocate("G", "c1", mqs, cids)] == [3, 2]


def test_duplicate_cid_uses_its_first_position(queues):
    mqs = queues(6)
    assert [mq.queue_id for mq in AllocateMessageQueueAveragely().allocate("G", "b", mqs, ["a", "b", "b"])] == [2, 3]


def expected_sizes(n: int, c: int) -> list[int]:
    if n <= c:
        return [1 if i < n else 0 for i in range(c)]
    return [n // c + (1 if i < n % c else 0) for i in range(c)]


@pytest.mark.parametrize("c", range(1, 21))
def test_grid_one_owner_each_and_rocketmq_sizes(c, spread, cids, allocate_everyone, one_owner):
    strategy = create("AllocateMessageQueueAveragely")
    for n in range(1, 41):
        mq_all, cid_all = spread(n), cids(c)
        result = allocate_everyone(strategy, mq_all, cid_all)
        one_owner(result, mq_all)
        assert [len(result[cid]) for cid in cid_all] == expected_sizes(n, c), (n, c)
        # consecutive blocks in client order rebuild the sorted list
        assert [mq for cid in cid_all for mq in result[cid]] == mq_all
