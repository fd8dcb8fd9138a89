"""AllocateMessageQueueByConfig: the configured list for everybody, no check at all."""
from clusteremu.strategies.rocketmq import MessageQueue, create
from clusteremu.strategies.rocketmq.by_config import AllocateMessageQueueByConfig


def test_upstream_every_client_gets_the_configured_queues(queues):
    mqs, cids = queues(4), ["CID_PREFIX0", "CID_PREFIX1"]
    strategy = AllocateMessageQueueByConfig(mqs)
    assert strategy.name == "CONFIG"
    for cid in cids:
        assert [mq.queue_id for mq in strategy.allocate("", cid, mqs, cids)] == [0, 1, 2, 3]


def test_arguments_are_not_read():
    configured = [MessageQueue("T", "b", 7), MessageQueue("S", "a", 1)]
    strategy = create("AllocateMessageQueueByConfig", {"messageQueueList": configured})
    assert strategy.allocate("G", "stranger", [], []) == configured
    assert strategy.allocate("G", None, None, None) == configured  # no check: nulls are fine
    assert strategy.allocate("G", "", [MessageQueue("X", "y", 0)], ["a"]) == configured


def test_each_call_returns_its_own_copy():
    strategy = AllocateMessageQueueByConfig([MessageQueue("T", "b", 0)])
    first = strategy.allocate("G", "a", None, None)
    first.append(MessageQueue("T", "b", 1))
    assert strategy.allocate("G", "a", None, None) == [MessageQueue("T", "b", 0)]


def test_grid_everyone_gets_the_whole_configuration(spread, cids, allocate_everyone):
    for c in range(1, 21):
        for n in range(1, 41, 13):
            mq_all = spread(n)
            result = allocate_everyone(AllocateMessageQueueByConfig(mq_all[: n // 2]), mq_all, cids(c))
            assert all(got == mq_all[: n // 2] for got in result.values())
