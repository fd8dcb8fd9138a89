"""RebalanceImpl's sorting of mqAll and cidAll."""
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
