"""RebalanceImpl's sorting of mqAll and cidAll."""
import functools
import random

from clusteremu.strategies.rocketmq import MessageQueue, sort_cid_all, sort_mq_all


def test_cids_sort_by_utf16_code_unit():
    assert sort_cid_all(["CID_2", "CID_10", "CID_1"]) == ["CID_1", "CID_10", "CID_2"]
    assert sort_cid_all(["a", "B", "A", "b"]) == ["A", "B", "a", "b"]
    assert sort_cid_all(["10.0.0.2@1234", "10.0.0.10@1234", "10.0.0.1@99"]) == \
        ["10.0.0.10@1234", "10.0.0.1@99", "10.0.0.2@1234"]
    assert sort_cid_all(["\U0001f600", "\uffff", "z"]) == ["z", "\U0001f600", "\uffff"]
    assert sort_cid_all(["ab", "a", ""]) == ["", "a", "ab"]


def test_queues_sort_by_topic_broker_then_id():
    mqs = [MessageQueue("T", "broker-b", 0), MessageQueue("T", "broker-a", 10), MessageQueue("S", "broker-z", 5),
           MessageQueue("T", "broker-a", 2), MessageQueue("T", "broker-A", 7)]
    assert sort_mq_all(mqs) == [MessageQueue("S", "broker-z", 5), MessageQueue("T", "broker-A", 7),
                                MessageQueue("T", "broker-a", 2), MessageQueue("T", "broker-a", 10),
                                MessageQueue("T", "broker-b", 0)]


def test_sorting_does_not_touch_the_input_and_keeps_duplicates():
    mqs = [MessageQueue("T", "b", 1), MessageQueue("T", "b", 0), MessageQueue("T", "b", 1)]
    before = list(mqs)
    assert sort_mq_all(mqs) == [MessageQueue("T", "b", 0), MessageQueue("T", "b", 1), MessageQueue("T", "b", 1)]
    assert mqs == before
    assert sort_cid_all(["b", "a", "b"]) == ["a", "b", "b"]


def test_queues_sort_as_the_java_comparator_says_with_ids_near_and_past_the_int_range():
    rng = random.Random(3)
    names = ["T", "t", "T1", "T10", "T2", "\U0001f600", "\uffff", "broker-a", "broker-A", ""]
    # ids 2^31 - 1 apart at most (the key), exactly 2^31 and more apart (the comparator, which wraps)
    for ids in ([0, 1, 2, 15], [-5, 2 ** 31 - 6], [-1, 2 ** 31 - 1], [-5, 2 ** 31 - 2], [-(2 ** 31), 0, 2 ** 31 - 1]):
        for _ in range(30):
            mqs = [MessageQueue(rng.choice(names), rng.choice(names), rng.choice(ids)) for _ in range(12)]
            java = sorted(mqs, key=functools.cmp_to_key(MessageQueue.compare_to))
            assert sort_mq_all(mqs) == java, ids
    # ids 2^31 + 1 apart: Java's subtraction wraps, and so does the sort (0 sorts after 2^31 + 1 here)
    wrapped = [MessageQueue("T", "b", 2 ** 31 + 1), MessageQueue("T", "b", 0)]
    assert [mq.queue_id for mq in sort_mq_all(wrapped)] == [2 ** 31 + 1, 0]
