"""The common argument check: order, RocketMQ's messages, null vs empty, and a caller outside cidAll."""
import pytest

from clusteremu.strategies.rocketmq import AllocationArgumentError, MessageQueue, create
from clusteremu.strategies.rocketmq.strategy import check

MQS = [MessageQueue("T", "room1@b", i) for i in range(4)]
CIDS = ["c0", "c1"]
CHECKED = {
    "AllocateMessageQueueAveragely": {},
    "AllocateMessageQueueAveragelyByCircle": {},
    "AllocateMessageQueueConsistentHash": {},
    "AllocateMessageQueueByMachineRoom": {"consumeridcs": ["room1"]},
    "AllocateMachineRoomNearby": {"innerStrategy": "AllocateMessageQueueAveragely",
                                  "brokerMachineRoom": {"room1@b": "r"}, "consumerMachineRoom": {"c0": "r", "c1": "r"}},
}

# (currentCID, mqAll, cidAll) -> (message, argument); the first failing condition in RocketMQ's order wins
CASES = [
    ("", MQS, CIDS, "currentCID is empty", "currentCID"),
    (None, MQS, CIDS, "currentCID is empty", "currentCID"),
    ("", [], [], "currentCID is empty", "currentCID"),
    ("c0", None, CIDS, "mqAll is null or mqAll empty", "mqAll"),
    ("c0", [], None, "mqAll is null or mqAll empty", "mqAll"),
    ("c0", MQS, None, "cidAll is null or cidAll empty", "cidAll"),
    ("c0", MQS, [], "cidAll is null or cidAll empty", "cidAll"),
]


@pytest.mark.parametrize("name", sorted(CHECKED))
@pytest.mark.parametrize("current, mq_all, cid_all, message, argument", CASES)
def test_every_checking_strategy_refuses_with_rocketmq_message(name, current, mq_all, cid_all, message, argument):
    strategy = create(name, CHECKED[name])
    with pytest.raises(AllocationArgumentError) as info:
        strategy.allocate("G", current, mq_all, cid_all)
    assert str(info.value) == message
    assert info.value.message == message and info.value.argument == argument
    assert isinstance(info.value, ValueError)


def test_a_blank_but_non_empty_cid_passes_the_check():
    assert check(" ", MQS, [" "]) is True


@pytest.mark.parametrize("name", sorted(CHECKED))
def test_a_caller_outside_cid_all_gets_nothing(name):
    strategy = create(name, CHECKED[name])
    assert strategy.allocate("G", "stranger", MQS, CIDS) == []


def test_check_returns_membership():
    assert check("c1", MQS, CIDS) is True
    assert check("c2", MQS, CIDS) is False
