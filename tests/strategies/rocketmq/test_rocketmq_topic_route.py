"""Queues from a topic route: readable queue data only, ids 0..readQueueNums-1, HashSet order."""
import pytest

from clusteremu.strategies.rocketmq import MessageQueue
from clusteremu.strategies.rocketmq.topic_route import QueueData, is_readable, subscribe_queues


@pytest.mark.parametrize("perm, readable", [(6, True), (4, True), (7, True), (2, False), (0, False), (1, False),
                                            (8 | 4, True), (8 | 2, False)])
def test_read_bit(perm, readable):
    assert is_readable(perm) is readable


def test_only_readable_queue_data_contribute_their_read_queues():
    datas = [QueueData("broker-a", 4, 6), QueueData("broker-b", 4, 2), QueueData("broker-c", 3, 4),
             QueueData("broker-d", 0, 6), QueueData("broker-e", -1, 6)]
    got = subscribe_queues("T", datas)
    assert sorted(got) == [MessageQueue("T", "broker-a", i) for i in range(4)] + \
        [MessageQueue("T", "broker-c", i) for i in range(3)]


# Orders computed by running java.util.HashSet over RocketMQ's MessageQueue (JDK 17).
def test_order_is_java_hash_set_order():
    got = subscribe_queues("T", [QueueData("broker-a", 4, 6), QueueData("broker-c", 3, 4)])
    assert [(mq.broker_name, mq.queue_id) for mq in got] == [
        ("broker-a", 2), ("broker-a", 1), ("broker-a", 3), ("broker-c", 0), ("broker-a", 0), ("broker-c", 2),
        ("broker-c", 1)]


def test_order_at_the_resize_threshold():
    # 12 entries still fit a table of 16 (Java resizes when the size goes above 12)
    got = subscribe_queues("TopicTest", [QueueData("broker-a", 6, 6), QueueData("broker-b", 6, 6)])
    assert [(mq.broker_name[-1], mq.queue_id) for mq in got] == [
        ("a", 3), ("b", 4), ("a", 2), ("b", 3), ("a", 5), ("a", 4), ("b", 5), ("b", 0), ("a", 1), ("b", 2),
        ("a", 0), ("b", 1)]


def test_order_after_the_set_grows():
    got = subscribe_queues("TopicTest", [QueueData("broker-a", 8, 6), QueueData("broker-b", 8, 6)])
    assert [(mq.broker_name[-1], mq.queue_id) for mq in got] == [
        ("a", 7), ("a", 6), ("b", 7), ("a", 3), ("b", 4), ("a", 2), ("b", 3), ("a", 5), ("b", 6), ("a", 4),
        ("b", 5), ("b", 0), ("a", 1), ("b", 2), ("a", 0), ("b", 1)]


def test_duplicate_queue_data_collapse():
    got = subscribe_queues("T", [QueueData("a", 2, 6), QueueData("a", 3, 4)])
    assert sorted(got) == [MessageQueue("T", "a", i) for i in range(3)]
