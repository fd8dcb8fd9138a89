"""allocate4Pop (RocketMQ 5 broker, POP mode): all-queue markers, shared neighbours, one queue per client, and the
upstream QueryAssignmentProcessorTest grid."""
import pytest

from clusteremu.strategies.rocketmq import ALL_QUEUES_ID, AllocationArgumentError, MessageQueue, allocate4pop, create
from clusteremu.strategies.rocketmq.averagely import AllocateMessageQueueAveragely
from clusteremu.strategies.rocketmq.by_config import AllocateMessageQueueByConfig

AVG = AllocateMessageQueueAveragely()


def ids(mqs):
    return [(mq.broker_name, mq.queue_id) for mq in mqs]


@pytest.mark.parametrize("share", [0, -5, 2, 3, 100])
def test_share_out_of_range_gives_every_queue_as_a_broker_marker(share):
    mqs = [MessageQueue("T", "a", 0), MessageQueue("T", "a", 1), MessageQueue("T", "b", 0)]
    got = allocate4pop(AVG, "G", "c0", mqs, ["c0", "c1", "c2"], share)  # c - 1 = 2 <= share, or share <= 0
    assert ids(got) == [("a", ALL_QUEUES_ID), ("a", -1), ("b", -1)]  # one per queue, duplicates kept


def test_markers_need_no_valid_arguments():
    mqs = [MessageQueue("T", "a", 0)]
    assert ids(allocate4pop(AVG, "G", "stranger", mqs, ["c0"], 1)) == [("a", -1)]
    assert ids(allocate4pop(AVG, "G", None, mqs, [], 1)) == [("a", -1)]  # share >= -1
    assert ids(allocate4pop(AVG, "G", "", mqs, None, 0)) == [("a", -1)]  # cidAll never read when share <= 0
    assert allocate4pop(AVG, "G", "c", [], ["c"], 0) == []


def test_null_lists_that_java_dereferences_raise():
    with pytest.raises(AllocationArgumentError) as info:
        allocate4pop(AVG, "G", "c", None, ["c"], 0)
    assert info.value.argument == "mqAll"
    with pytest.raises(AllocationArgumentError) as info:
        allocate4pop(AVG, "G", "c", [MessageQueue("T", "a", 0)], None, 1)
    assert info.value.argument == "cidAll"


def test_own_share_then_the_next_clients_shares_wrapping():
    mqs = [MessageQueue("T", "a", i) for i in range(8)]
    cids = ["c0", "c1", "c2", "c3"]
    assert [q for _, q in ids(allocate4pop(AVG, "G", "c3", mqs, cids, 1))] == [6, 7, 0, 1]
    assert [q for _, q in ids(allocate4pop(AVG, "G", "c1", mqs, cids, 2))] == [2, 3, 4, 5, 6, 7]


def test_more_clients_than_queues_gives_one_queue_each():
    mqs = [MessageQueue("T", "a", i) for i in range(3)]
    cids = [f"c{i}" for i in range(6)]
    assert [ids(allocate4pop(AVG, "G", c, mqs, cids, 1)) for c in cids] == \
        [[("a", 0)], [("a", 1)], [("a", 2)], [("a", 0)], [("a", 1)], [("a", 2)]]
    assert allocate4pop(AVG, "G", "stranger", mqs, cids, 1) == []


def test_one_queue_each_checks_with_is_blank():
    mqs = [MessageQueue("T", "a", 0)]
    cids = [" ", "b", "c", "d"]
    with pytest.raises(AllocationArgumentError, match="^currentCID is empty$"):
        allocate4pop(AVG, "G", " ", mqs, cids, 1)  # the client-side check would have accepted " "
    with pytest.raises(AllocationArgumentError, match="^mqAll is null or mqAll empty$"):
        allocate4pop(AVG, "G", "b", [], cids, 1)


def test_the_inner_strategy_check_applies_in_the_sharing_branch():
    with pytest.raises(AllocationArgumentError, match="^currentCID is empty$"):
        allocate4pop(AVG, "G", "", [MessageQueue("T", "a", i) for i in range(4)], ["a", "b", "c"], 1)


def test_a_stranger_gets_only_its_own_share_in_the_sharing_branch():
    mqs = [MessageQueue("T", "a", i) for i in range(4)]
    assert allocate4pop(AVG, "G", "x", mqs, ["a", "b", "c"], 1) == []


def test_by_config_inside_doubles_its_list_per_shared_client_like_java():
    configured = [MessageQueue("T", "z", 9)]
    mqs = [MessageQueue("T", "a", i) for i in range(6)]
    strategy = AllocateMessageQueueByConfig(configured)
    assert len(allocate4pop(strategy, "G", "a", mqs, ["a", "b", "c", "d", "e"], 3)) == 2 ** 3
    assert allocate4pop(strategy, "G", "x", mqs, ["a", "b", "c", "d"], 2) == configured  # not a member: no sharing
    assert strategy.allocate("G", "a", None, None) == configured  # the configuration itself is untouched


def upstream_rule_holds(share, n, c, size, strategy_name):
    """QueryAssignmentProcessorTest.checkAllocateResult."""
    if size > n or size <= 0:
        return False
    if share <= 0 or share >= c - 1:
        return size == n
    if n < c:
        return size == 1
    if strategy_name in ("AVG", "AVG_BY_CIRCLE"):
        if n % c == 0:
            return size == (n // c) * (share + 1)
        return (n // c) * (share + 1) <= size <= (n // c + 1) * (share + 1)
    return True


@pytest.mark.parametrize("name", ["AllocateMessageQueueAveragely", "AllocateMessageQueueAveragelyByCircle",
                                  "AllocateMessageQueueConsistentHash"])
def test_upstream_grid(name):
    strategy = create(name)
    mq_all = []
    for n in range(1, 17):
        mq_all.append(MessageQueue("FooBar", "defaultBroker", n - 1))
        cid_all = []
        for c in range(1, 17):
            client = str(c - 1)  # the newest client asks, over the list as built (not sorted)
            cid_all.append(client)
            for share in range(16):
                got = allocate4pop(strategy, "FooBarGroup", client, mq_all, cid_all, share)
                assert upstream_rule_holds(share, n, c, len(got), strategy.name), (n, c, share, len(got))


@pytest.mark.parametrize("c", range(3, 21))
def test_grid_pop_share_is_the_own_block_followed_by_the_next_clients_blocks(c, spread, cids):
    cid_all = cids(c)
    for n in range(c, 41):  # the sharing branch needs at least as many queues as clients
        mq_all = spread(n)
        blocks = [AVG.allocate("G", cid, mq_all, cid_all) for cid in cid_all]
        for share in range(1, c - 1):
            for i, cid in enumerate(cid_all):
                expected = [mq for k in range(share + 1) for mq in blocks[(i + k) % c]]
                assert allocate4pop(AVG, "G", cid, mq_all, cid_all, share) == expected
