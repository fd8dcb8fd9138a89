"""The registry: simple and fully-qualified Java names, create with RocketMQ setting names, errors."""
import pytest

from clusteremu.strategies import rocketmq
from clusteremu.strategies.rocketmq import AllocationArgumentError, MessageQueue, registry

PKG = "org.apache.rocketmq.client.consumer.rebalance."
CLASSES = {
    "AllocateMessageQueueAveragely": ("AVG", {}),
    "AllocateMessageQueueAveragelyByCircle": ("AVG_BY_CIRCLE", {}),
    "AllocateMessageQueueConsistentHash": ("CONSISTENT_HASH", {}),
    "AllocateMessageQueueByConfig": ("CONFIG", {"messageQueueList": []}),
    "AllocateMessageQueueByMachineRoom": ("MACHINE_ROOM", {"consumeridcs": []}),
    "AllocateMachineRoomNearby": ("MACHINE_ROOM_NEARBY-AVG", {"innerStrategy": "AllocateMessageQueueAveragely",
                                                              "brokerMachineRoom": {}, "consumerMachineRoom": {}}),
}


@pytest.mark.parametrize("simple", sorted(CLASSES))
def test_simple_and_fully_qualified_names_build_the_same_strategy(simple):
    java_name, params = CLASSES[simple]
    a, b = rocketmq.create(simple, params), rocketmq.create(PKG + simple, params)
    assert type(a) is type(b) is registry.resolve(simple)
    assert type(a).__name__ == simple
    assert a.name == b.name == java_name
    assert rocketmq.canonical_name(simple) == rocketmq.canonical_name(PKG + simple) == PKG + simple
    assert registry.simple_name(PKG + simple) == simple


def test_names_lists_both_spellings_of_each_class():
    assert sorted(rocketmq.names()) == sorted([*CLASSES, *(PKG + s for s in CLASSES)])


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(KeyError) as info:
        rocketmq.create("AllocateMessageQueueByGray")
    assert "AllocateMessageQueueByGray" in str(info.value)
    assert "AllocateMessageQueueAveragely" in str(info.value) and PKG + "AllocateMachineRoomNearby" in str(info.value)
    with pytest.raises(KeyError):
        rocketmq.canonical_name("AVG")


def test_consistent_hash_settings():
    assert rocketmq.create("AllocateMessageQueueConsistentHash").virtual_node_cnt == 10
    assert rocketmq.create("AllocateMessageQueueConsistentHash", {"virtualNodeCnt": 0}).virtual_node_cnt == 0
    with pytest.raises(AllocationArgumentError, match=r"^illegal virtualNodeCnt :-2$"):
        rocketmq.create("AllocateMessageQueueConsistentHash", {"virtualNodeCnt": -2})


def test_settings_a_strategy_does_not_read_are_refused():
    with pytest.raises(ValueError, match="virtualNodeCnt"):
        rocketmq.create("AllocateMessageQueueAveragely", {"virtualNodeCnt": 3})
    with pytest.raises(ValueError, match="consumeridcs"):
        rocketmq.create("AllocateMachineRoomNearby", {"innerStrategy": "AllocateMessageQueueAveragely",
                                                      "brokerMachineRoom": {}, "consumerMachineRoom": {},
                                                      "consumeridcs": ["x"]})


@pytest.mark.parametrize("name, missing", [("AllocateMessageQueueByConfig", "messageQueueList"),
                                           ("AllocateMessageQueueByMachineRoom", "consumeridcs"),
                                           ("AllocateMachineRoomNearby", "innerStrategy")])
def test_required_settings(name, missing):
    assert missing in registry.required_params_of(name)
    with pytest.raises(ValueError, match=missing):
        rocketmq.create(name, {})


def test_nearby_passes_the_inner_settings_on_and_refuses_itself_as_inner():
    rooms = {"brokerMachineRoom": {"b": "r"}, "consumerMachineRoom": {"c": "r"}}
    strategy = rocketmq.create("AllocateMachineRoomNearby",
                               {"innerStrategy": "AllocateMessageQueueConsistentHash", "virtualNodeCnt": 4, **rooms})
    assert strategy.name == "MACHINE_ROOM_NEARBY-CONSISTENT_HASH" and strategy.inner.virtual_node_cnt == 4
    with pytest.raises(ValueError):
        rocketmq.create("AllocateMachineRoomNearby", {"innerStrategy": PKG + "AllocateMachineRoomNearby", **rooms})
    ready = rocketmq.create("AllocateMessageQueueByConfig", {"messageQueueList": [MessageQueue("T", "b", 0)]})
    assert rocketmq.create("AllocateMachineRoomNearby", {"innerStrategy": ready, **rooms}).inner is ready


def test_params_of_lists_the_java_setting_names():
    assert registry.params_of("AllocateMessageQueueConsistentHash") == ("virtualNodeCnt",)
    assert registry.required_params_of("AllocateMessageQueueConsistentHash") == ()
    assert registry.params_of("AllocateMessageQueueAveragely") == ()
