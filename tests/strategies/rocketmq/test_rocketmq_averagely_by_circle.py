"""AllocateMessageQueueAveragelyByCircle: round-robin dealing, the upstream example and the full grid."""
import pytest

from clusteremu.strategies.rocketmq import create
from clusteremu.strategies.rocketmq.averagely_by_circle import AllocateMessageQueueAveragelyByCircle


def test_name():
    assert AllocateMessageQueueAveragelyByCircle().name == "AVG_BY_CIRCLE"


def test_upstream_ten_queues_four_clients(queues):
    mqs, cids = queues(10), [f"CID_PREFIX{i}" for i in range(4)]
    strategy = AllocateMessageQueueAveragelyByCircle()
    assert strategy.allocate("", "CID_PREFIX", mqs, cids) == []  # a prefix of the ids is no member
    got = {cid: [mq.queue_id for mq in strategy.allocate("", cid, mqs, cids)] for cid in cids}
    assert got == {"CID_PREFIX0": [0, 4, 8], "CID_PREFIX1": [1, 5, 9], "CID_PREFIX2": [2, 6], "CID_PREFIX3": [3, 7]}


def test_more_clients_than_queues(queues):
    mqs, cids = queues(2), ["a", "b", "c"]
    got = [[mq.queue_id for mq in AllocateMessageQueueAveragelyByCircle().allocate("G", x, mqs, cids)] for x in cids]
    assert got == [[0], [1], []]


@pytest.mark.parametrize("c", range(1, 21))
def test_grid_queue_k_goes_to_client_k_mod_c(c, spread, cids, allocate_everyone, one_owner):
    strategy = create("AllocateMessageQueueAveragelyByCircle")
    for n in range(1, 41):
        mq_all, cid_all = spread(n), cids(c)
        result = allocate_everyone(strategy, mq_all, cid_all)
        one_owner(result, mq_all)
        for i, cid in enumerate(cid_all):
            assert result[cid] == mq_all[i::c]
            assert len(result[cid]) == n // c + (1 if i < n % c else 0)
