"""AllocateMachineRoomNearby: same-room sharing, orphan rooms shared by everybody, room errors, and the upstream
IDC scenarios."""
import random

import pytest

from clusteremu.strategies.rocketmq import AllocationArgumentError, MessageQueue, create
from clusteremu.strategies.rocketmq.averagely import AllocateMessageQueueAveragely
from clusteremu.strategies.rocketmq.machine_room_nearby import AllocateMachineRoomNearby

TOPIC = "topic_test"


def idc_queues(idc_count: int, per_idc: int) -> list[MessageQueue]:
    return [MessageQueue(TOPIC, f"IDC{r}-brokerName", i) for r in range(1, idc_count + 1) for i in range(per_idc)]


def idc_cids(idc_count: int, per_idc: int) -> list[str]:
    return [f"IDC{r}-CID-{i}" for r in range(1, idc_count + 1) for i in range(per_idc)]


def nearby(mq_all, cid_all, inner=None):
    """The upstream resolver: the room is the part before the first '-'."""
    return AllocateMachineRoomNearby(inner or AllocateMessageQueueAveragely(),
                                     {mq.broker_name: mq.broker_name.split("-")[0] for mq in mq_all},
                                     {cid: cid.split("-")[0] for cid in cid_all})


def run(strategy, mq_all, cid_all):
    return {cid: strategy.allocate("Test-C-G", cid, mq_all, cid_all) for cid in cid_all}


def all_allocated_once(result, mq_all, cid_all):
    held = [mq for mqs in result.values() for mq in mqs]
    if not cid_all:
        return not held
    return sorted(held) == sorted(mq_all)


def room(name: str) -> str:
    return name.split("-")[0]


@pytest.mark.parametrize("per_idc_clients", [10, 20, 30, 0])
def test_upstream_same_rooms_on_both_sides(per_idc_clients):
    mq_all, cid_all = idc_queues(5, 20), idc_cids(5, per_idc_clients)
    result = run(nearby(mq_all, cid_all), mq_all, cid_all)
    for cid, mqs in result.items():
        assert all(room(mq.broker_name) == room(cid) for mq in mqs)
    assert all_allocated_once(result, mq_all, cid_all)


@pytest.mark.parametrize("per_idc_clients", [10, 5, 20, 0])
def test_upstream_clients_in_more_rooms_than_brokers(per_idc_clients):
    mq_all, cid_all = idc_queues(5, 10), idc_cids(6, per_idc_clients)
    result = run(nearby(mq_all, cid_all), mq_all, cid_all)
    for cid, mqs in result.items():
        assert all(room(mq.broker_name) == room(cid) for mq in mqs)  # every broker room has clients
    assert not result.get("IDC6-CID-0", [])  # the extra room has no broker and no orphan queue to share
    assert all_allocated_once(result, mq_all, cid_all)


@pytest.mark.parametrize("per_idc_clients", [10, 5, 20, 0])
def test_upstream_clients_in_fewer_rooms_than_brokers(per_idc_clients):
    mq_all, cid_all = idc_queues(5, 10), idc_cids(3, per_idc_clients)
    result = run(nearby(mq_all, cid_all), mq_all, cid_all)
    for r in {room(c) for c in cid_all}:
        held = [mq for cid, mqs in result.items() if room(cid) == r for mq in mqs]
        assert set(MessageQueue(TOPIC, f"{r}-brokerName", i) for i in range(10)) <= set(held)
    assert all_allocated_once(result, mq_all, cid_all)


@pytest.mark.parametrize("seed", range(10))
def test_upstream_random_shapes_fixed_seeds(seed):
    rng = random.Random(seed)
    clients, per_room_queues = rng.randint(1, 40), rng.randint(1, 30)
    broker_rooms, client_rooms = rng.randint(1, 10), rng.randint(1, 10)
    mq_all, cid_all = idc_queues(broker_rooms, per_room_queues), idc_cids(client_rooms, clients)
    result = run(nearby(mq_all, cid_all), mq_all, cid_all)
    with_clients = {room(c) for c in cid_all}
    for cid, mqs in result.items():
        for mq in mqs:
            if room(mq.broker_name) in with_clients:
                assert room(mq.broker_name) == room(cid)
    assert all_allocated_once(result, mq_all, cid_all)


def test_own_room_first_then_orphan_rooms_in_string_order():
    mq_all = [MessageQueue("T", b, i) for b in ("b-x", "a-x", "B-x", "c-x") for i in range(2)]
    rooms = {"b-x": "b", "a-x": "a", "B-x": "B", "c-x": "c"}
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), rooms, {"k1": "c", "k2": "c"})
    got = strategy.allocate("G", "k1", mq_all, ["k1", "k2"])
    # own room c: one of its two queues; then orphan rooms B < a < b (UTF-16 order), one queue of each
    assert [(mq.broker_name, mq.queue_id) for mq in got] == [("c-x", 0), ("B-x", 0), ("a-x", 0), ("b-x", 0)]


def test_orphan_rooms_follow_utf16_order_not_code_point_order():
    rooms = {"x": "\uffff", "y": "\U0001f600"}  # the emoji starts with surrogate 0xD83D < 0xFFFF
    mq_all = [MessageQueue("T", "x", 0), MessageQueue("T", "y", 0)]
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), rooms, {"k": "home"})
    assert strategy.allocate("G", "k", mq_all, ["k"]) == [MessageQueue("T", "y", 0), MessageQueue("T", "x", 0)]


def test_client_in_a_room_without_brokers_only_shares_orphans():
    mq_all = [MessageQueue("T", "x", i) for i in range(4)] + [MessageQueue("T", "y", i) for i in range(2)]
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), {"x": "r1", "y": "r2"},
                                         {"a": "r1", "b": "r3"})
    assert strategy.allocate("G", "a", mq_all, ["a", "b"]) == mq_all[:4] + [MessageQueue("T", "y", 0)]
    assert strategy.allocate("G", "b", mq_all, ["a", "b"]) == [MessageQueue("T", "y", 1)]


def test_name_includes_the_inner_strategy():
    strategy = create("AllocateMachineRoomNearby", {"innerStrategy": "AllocateMessageQueueAveragelyByCircle",
                                                    "brokerMachineRoom": {}, "consumerMachineRoom": {}})
    assert strategy.name == "MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE"


@pytest.mark.parametrize("brokers, clients, message, argument", [
    ({"b": None}, {"c": "r"}, "Machine room is null for mq MessageQueue [topic=T, brokerName=b, queueId=0]",
     "brokerMachineRoom"),
    ({}, {"c": "r"}, "Machine room is null for mq MessageQueue [topic=T, brokerName=b, queueId=0]",
     "brokerMachineRoom"),
    ({"b": "r"}, {"c": ""}, "Machine room is null for consumer id c", "consumerMachineRoom"),
    ({"b": ""}, {}, "Machine room is null for mq MessageQueue [topic=T, brokerName=b, queueId=0]",
     "brokerMachineRoom"),  # queues are resolved before clients
])
def test_unresolved_rooms_raise_rocketmq_messages(brokers, clients, message, argument):
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), brokers, clients)
    with pytest.raises(AllocationArgumentError) as info:
        strategy.allocate("G", "c", [MessageQueue("T", "b", 0)], ["c"])
    assert str(info.value) == message and info.value.argument == argument


def test_rooms_are_not_resolved_for_a_caller_outside_cid_all():
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), {}, {})
    assert strategy.allocate("G", "stranger", [MessageQueue("T", "b", 0)], ["c"]) == []


@pytest.mark.parametrize("c", range(1, 21))
def test_grid_one_owner_each_and_locality(c, cids, allocate_everyone, one_owner):
    broker_rooms = {"room-a": "east", "room-b": "west", "room-c": "north"}  # nobody lives in "north"
    cid_all = cids(c)
    client_rooms = {cid: ("east", "west", "south")[i % 3] for i, cid in enumerate(cid_all)}
    strategy = create("AllocateMachineRoomNearby", {"innerStrategy": "AllocateMessageQueueAveragely",
                                                    "brokerMachineRoom": broker_rooms,
                                                    "consumerMachineRoom": client_rooms})
    for n in range(1, 41):
        mq_all = sorted(MessageQueue("T", ("room-a", "room-b", "room-c")[k % 3], k // 3) for k in range(n))
        result = allocate_everyone(strategy, mq_all, cid_all)
        present = set(client_rooms.values())
        one_owner(result, mq_all)  # each queue is either local to some client's room or an orphan shared by all
        for cid, mqs in result.items():
            for mq in mqs:
                broker_room = broker_rooms[mq.broker_name]
                assert broker_room == client_rooms[cid] or broker_room not in present
