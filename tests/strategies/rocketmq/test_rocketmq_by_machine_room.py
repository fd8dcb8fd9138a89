"""AllocateMessageQueueByMachineRoom: room filter on "idc@name" brokers, remainder dealt from the tail."""
import pytest

from clusteremu.strategies.rocketmq import AllocationArgumentError, MessageQueue, create
from clusteremu.strategies.rocketmq.by_machine_room import AllocateMessageQueueByMachineRoom


def upstream_queues(size: int) -> list[MessageQueue]:
    return [MessageQueue("topic", "room1@broker-a" if i < size // 2 else "room2@broker-b", i) for i in range(size)]


def test_upstream_example():
    strategy = AllocateMessageQueueByMachineRoom({"room1"})
    cids = ["CID_PREFIX0", "CID_PREFIX1"]
    assert strategy.name == "MACHINE_ROOM"
    with pytest.raises(AllocationArgumentError, match="^mqAll is null or mqAll empty$"):
        strategy.allocate("", cids[0], [], cids)
    got = {cid: [mq.queue_id for mq in strategy.allocate("", cid, upstream_queues(10), cids)] for cid in cids}
    assert got == {"CID_PREFIX0": [0, 1, 4], "CID_PREFIX1": [2, 3]}


@pytest.mark.parametrize("broker, kept", [
    ("room1@b", True), ("room1@b@", True),     # trailing empty part dropped by Java's split: two parts
    ("room1@", False), ("room1", False),       # one part
    ("room1@b@c", False),                      # three parts
    ("room2@b", False), ("@b", False),         # idc "" is not in the set
])
def test_broker_name_must_split_into_a_known_idc_and_a_name(broker, kept):
    strategy = AllocateMessageQueueByMachineRoom(["room1"])
    got = strategy.allocate("G", "c", [MessageQueue("T", broker, 0)], ["c"])
    assert got == ([MessageQueue("T", broker, 0)] if kept else [])


def test_empty_idc_is_a_room_name_like_any_other():
    strategy = AllocateMessageQueueByMachineRoom([""])
    assert strategy.allocate("G", "c", [MessageQueue("T", "@b", 0)], ["c"]) == [MessageQueue("T", "@b", 0)]


def test_no_matching_queue_gives_nothing_to_anybody():
    strategy = AllocateMessageQueueByMachineRoom([])
    assert strategy.allocate("G", "c", upstream_queues(6), ["c"]) == []


def test_remainder_is_dealt_from_the_tail_unlike_avg():
    mqs = [MessageQueue("T", "r@b", i) for i in range(7)]
    cids = ["a", "b", "c"]
    room = create("AllocateMessageQueueByMachineRoom", {"consumeridcs": ["r"]})
    avg = create("AllocateMessageQueueAveragely")
    assert [[mq.queue_id for mq in room.allocate("G", x, mqs, cids)] for x in cids] == [[0, 1, 6], [2, 3], [4, 5]]
    assert [[mq.queue_id for mq in avg.allocate("G", x, mqs, cids)] for x in cids] == [[0, 1, 2], [3, 4], [5, 6]]


@pytest.mark.parametrize("c", range(1, 21))
def test_grid_room_queues_have_one_owner_and_sizes_follow_the_arithmetic(c, cids, allocate_everyone, one_owner):
    strategy = AllocateMessageQueueByMachineRoom(["room1", "room3"])
    brokers = ("room1@a", "room2@b", "room3@c", "plain")
    for n in range(1, 41):
        mq_all = sorted(MessageQueue("T", brokers[k % 4], k // 4) for k in range(n))
        pre = [mq for mq in mq_all if mq.broker_name in ("room1@a", "room3@c")]
        cid_all = cids(c)
        result = allocate_everyone(strategy, mq_all, cid_all)
        one_owner(result, pre)
        m, rem = divmod(len(pre), c)
        for i, cid in enumerate(cid_all):
            assert result[cid] == pre[i * m: i * m + m] + ([pre[i + m * c]] if i < rem else [])
