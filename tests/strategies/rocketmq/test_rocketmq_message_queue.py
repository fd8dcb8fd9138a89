"""MessageQueue: Java compareTo, toString and hashCode."""
import pytest

from clusteremu.strategies.rocketmq import MessageQueue


def java_string_hash(s: str) -> int:
    """String.hashCode over UTF-16 code units, unsigned."""
    data = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i:i + 2], "big")) % 2**32
    return h


def test_compare_to_orders_topic_then_broker_then_queue_id():
    a = MessageQueue("A", "z", 9)
    assert a.compare_to(MessageQueue("B", "a", 0)) < 0
    assert MessageQueue("T", "broker-a", 9).compare_to(MessageQueue("T", "broker-b", 0)) < 0
    assert MessageQueue("T", "b", 2).compare_to(MessageQueue("T", "b", 10)) == -8
    assert MessageQueue("T", "b", 3).compare_to(MessageQueue("T", "b", 3)) == 0


def test_comparisons_use_java_string_order_not_natural_order():
    assert MessageQueue("T", "broker10", 0) < MessageQueue("T", "broker2", 0)
    assert MessageQueue("T", "Z", 0) < MessageQueue("T", "a", 0)
    assert MessageQueue("T", "\uffff", 0) > MessageQueue("T", "\U0001f600", 0)  # UTF-16 units, not code points


def test_queue_id_difference_wraps_as_a_java_int():
    low, high = MessageQueue("T", "b", -2**31), MessageQueue("T", "b", 1)
    assert low.compare_to(high) == 2**31 - 1  # Integer.MIN_VALUE - 1 overflows: "low" sorts after
    assert high.compare_to(low) == -(2**31 - 1)
    assert (low < high) is False and (high < low) is True  # Python's operators follow compare_to


def test_java_string_is_the_exact_tostring():
    assert MessageQueue("topic_test", "brokerName", 3).java_string() == \
        "MessageQueue [topic=topic_test, brokerName=brokerName, queueId=3]"
    assert str(MessageQueue("T", "b", -1)) == "MessageQueue [topic=T, brokerName=b, queueId=-1]"


def test_hash_code_is_the_31_based_java_formula():
    for topic, broker, qid in [("T", "broker-a", 0), ("TopicTest", "broker-b", 7), ("é", "中", -1)]:
        expected = (31 * (31 * (31 + java_string_hash(broker)) + qid) + java_string_hash(topic)) % 2**32
        expected -= 2**32 if expected >= 2**31 else 0
        assert MessageQueue(topic, broker, qid).hash_code() == expected


def test_equality_and_hash_are_by_value():
    assert MessageQueue("T", "b", 1) == MessageQueue("T", "b", 1)
    assert len({MessageQueue("T", "b", 1), MessageQueue("T", "b", 1), MessageQueue("T", "b", 2)}) == 2
    with pytest.raises(Exception):
        MessageQueue("T", "b", 1).queue_id = 2  # frozen


def test_to_json_uses_rocketmq_field_names():
    assert MessageQueue("T", "b", 4).to_json() == {"topic": "T", "brokerName": "b", "queueId": 4}
