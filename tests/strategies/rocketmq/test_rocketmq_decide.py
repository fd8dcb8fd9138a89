"""decide: requests as JSON objects (queues or a topic route), each client's answer, and every input error."""
import copy
import json

import pytest

from clusteremu.base.errors import InputError
from clusteremu.strategies.rocketmq import MessageQueue, create
from clusteremu.strategies.rocketmq.decide import AllocationRequest, decide, parse_request

AVG = "AllocateMessageQueueAveragely"
CH = "AllocateMessageQueueConsistentHash"
PKG = "org.apache.rocketmq.client.consumer.rebalance."

BRIEF = {"consumerGroup": "G",
         "mqAll": [{"topic": "T", "brokerName": "broker-a", "queueId": 0}],
         "cidAll": ["10.0.0.1@1234", "10.0.0.2@1234"],
         "currentCID": "10.0.0.1@1234",
         "strategyParams": {"virtualNodeCnt": 10}}


def q(broker, qid, topic="T"):
    return {"topic": topic, "brokerName": broker, "queueId": qid}


def request(**fields):
    base = {"consumerGroup": "G", "mqAll": [q("broker-a", i) for i in range(4)] + [q("broker-b", i) for i in range(2)],
            "cidAll": ["c1", "c0"]}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def run(obj, strategy=AVG, sort=False, where="snapshot.json"):
    return decide(parse_request(obj, where), strategy, sort=sort)


def queue_ids(answer):
    return [(mq["brokerName"], mq["queueId"]) for mq in answer]


def error(obj, strategy=AVG, sort=False):
    with pytest.raises(InputError) as info:
        run(obj, strategy, sort)
    return str(info.value)


def test_the_brief_example_with_and_without_current_cid():
    owner = create(CH).allocate("G", "10.0.0.1@1234", [MessageQueue("T", "broker-a", 0)], BRIEF["cidAll"])
    mine = run(BRIEF, CH)
    assert list(mine["allocation"]) == ["10.0.0.1@1234"]
    assert mine["allocation"]["10.0.0.1@1234"] == [mq.to_json() for mq in owner]
    everyone = run({k: v for k, v in BRIEF.items() if k != "currentCID"}, PKG + "AllocateMessageQueueConsistentHash")
    assert list(everyone["allocation"]) == BRIEF["cidAll"]
    held = [mq for answer in everyone["allocation"].values() for mq in answer]
    assert held == [BRIEF["mqAll"][0]]
    assert json.loads(json.dumps(everyone)) == everyone


def test_lists_are_used_as_given_unless_sort_is_asked():
    obj = request(mqAll=[q("broker-b", 1), q("broker-a", 0), q("broker-b", 0), q("broker-a", 1)])
    as_given = run(obj)["allocation"]
    assert list(as_given) == ["c1", "c0"]
    assert queue_ids(as_given["c1"]) == [("broker-b", 1), ("broker-a", 0)]
    assert queue_ids(as_given["c0"]) == [("broker-b", 0), ("broker-a", 1)]
    sorted_ = run(obj, sort=True)["allocation"]
    assert list(sorted_) == ["c0", "c1"]
    assert queue_ids(sorted_["c0"]) == [("broker-a", 0), ("broker-a", 1)]
    assert queue_ids(sorted_["c1"]) == [("broker-b", 0), ("broker-b", 1)]


def test_sort_uses_java_string_order_for_client_ids():
    obj = request(cidAll=["CID_2", "CID_10", "CID_1"], mqAll=[q("b", i) for i in range(3)])
    assert list(run(obj, sort=True)["allocation"]) == ["CID_1", "CID_10", "CID_2"]
    assert queue_ids(run(obj, sort=True)["allocation"]["CID_10"]) == [("b", 1)]


def test_current_cid_present_absent_or_not_a_member():
    assert queue_ids(run(request(currentCID="c0"))["allocation"]["c0"]) == [("broker-a", 3), ("broker-b", 0),
                                                                          ("broker-b", 1)]
    assert run(request(currentCID="stranger")) == {"allocation": {"stranger": []}}
    assert set(run(request())["allocation"]) == {"c0", "c1"}


def test_duplicate_members_answer_once():
    got = run(request(cidAll=["a", "b", "a"]))["allocation"]
    assert list(got) == ["a", "b"]


def test_by_config_answers_anyone_even_without_members():
    config = {"messageQueueList": [q("x", 7)]}
    obj = request(currentCID="stranger", cidAll=[], strategyParams=config)
    assert run(obj, "AllocateMessageQueueByConfig") == {"allocation": {"stranger": [q("x", 7)]}}
    assert run(request(cidAll=[], strategyParams=config), "AllocateMessageQueueByConfig") == {"allocation": {}}
    null_cid = run(request(currentCID=None, strategyParams=config), "AllocateMessageQueueByConfig")
    assert null_cid == {"allocation": {"null": [q("x", 7)]}}


def test_consumer_group_may_be_empty():
    assert run(request(consumerGroup="", currentCID="c1"))["allocation"]["c1"]


ROUTE = {
    "consumerGroup": "G",
    "cidAll": ["c1", "c0"],
    "topic": "T",
    "orderTopicConf": None,
    "brokerDatas": [
        {"cluster": "DefaultCluster", "brokerName": "broker-a", "brokerAddrs": {"0": "10.0.0.1:10911"}},
        {"cluster": "DefaultCluster", "brokerName": "broker-b", "brokerAddrs": {"1": "10.0.0.2:10911"}},
    ],
    "queueDatas": [
        {"brokerName": "broker-a", "readQueueNums": 4, "writeQueueNums": 4, "perm": 6, "topicSysFlag": 0},
        {"brokerName": "broker-b", "readQueueNums": 2, "writeQueueNums": 8, "perm": 6, "topicSysFlag": 0},
        {"brokerName": "broker-w", "readQueueNums": 4, "writeQueueNums": 4, "perm": 2, "topicSysFlag": 0},
        {"brokerName": "broker-c", "readQueueNums": 3, "writeQueueNums": 4, "perm": 4, "topicSysFlag": 0},
    ],
    "filterServerTable": {},
}


def test_topic_route_gives_readable_queues_of_every_broker_with_a_read_bit():
    # broker-b has no master and broker-c is absent from brokerDatas: subscription includes them all the same;
    # write-only broker-w contributes nothing
    got = run(ROUTE, sort=True)["allocation"]
    assert queue_ids(got["c0"]) == [("broker-a", i) for i in range(4)] + [("broker-b", 0)]
    assert queue_ids(got["c1"]) == [("broker-b", 1)] + [("broker-c", i) for i in range(3)]


def test_topic_route_without_sort_keeps_the_clients_hash_set_order():
    obj = dict(ROUTE, queueDatas=[ROUTE["queueDatas"][0], ROUTE["queueDatas"][3]], currentCID="c1")
    got = run(obj, "AllocateMessageQueueAveragelyByCircle")["allocation"]["c1"]
    # HashSet order (from Java): a2 a1 a3 c0 a0 c2 c1; c1 is first in cidAll, so it takes positions 0, 2, 4, 6
    assert queue_ids(got) == [("broker-a", 2), ("broker-a", 3), ("broker-a", 0), ("broker-c", 1)]


def test_topic_route_without_readable_queues_is_refused_as_rocketmq_refuses_it():
    obj = dict(ROUTE, queueDatas=[ROUTE["queueDatas"][2]])
    assert error(obj) == "snapshot.json: queueDatas: mqAll is null or mqAll empty"


def test_pop_share_number_switches_to_allocate4pop_whatever_its_value():
    obj = request(currentCID="c0", strategyParams={"popShareQueueNum": 0})
    assert queue_ids(run(obj)["allocation"]["c0"]) == [("broker-a", -1)] * 4 + [("broker-b", -1)] * 2
    cids = ["c0", "c1", "c2", "c3"]
    obj = request(currentCID="c3", cidAll=cids, mqAll=[q("a", i) for i in range(8)],
                  strategyParams={"popShareQueueNum": 1})
    assert queue_ids(run(obj)["allocation"]["c3"]) == [("a", 6), ("a", 7), ("a", 0), ("a", 1)]


def test_pop_with_no_members_and_no_current_cid_has_nobody_to_answer():
    assert run(request(cidAll=[], strategyParams={"popShareQueueNum": 0})) == {"allocation": {}}


def test_machine_room_settings():
    obj = request(currentCID="c0", mqAll=[q("room1@a", i) for i in range(3)] + [q("room2@b", 0)],
                  strategyParams={"consumeridcs": ["room1"]})
    assert queue_ids(run(obj, "AllocateMessageQueueByMachineRoom")["allocation"]["c0"]) == [("room1@a", 1)]
    nearby = {"innerStrategy": CH, "virtualNodeCnt": 0, "brokerMachineRoom": {"broker-a": "r", "broker-b": "r"},
              "consumerMachineRoom": {"c0": "r", "c1": "r"}}
    assert run(request(strategyParams=nearby), "AllocateMachineRoomNearby") == {"allocation": {"c1": [], "c0": []}}


# ------------------------------------------------------------------------------------------------- errors
def test_parse_request_returns_typed_fields():
    parsed = parse_request(request(currentCID="c0", strategyParams={"popShareQueueNum": 2}), "f.json")
    assert isinstance(parsed, AllocationRequest)
    assert parsed.mq_all[0] == MessageQueue("T", "broker-a", 0) and parsed.cid_all == ("c1", "c0")
    assert parsed.pop_share_queue_num == 2 and parsed.strategy_params == {} and parsed.has_current_cid
    assert parse_request(ROUTE, "f.json").mq_all_field == "queueDatas"


@pytest.mark.parametrize("change, message", [
    ({"mqAll": [q("b", 0)] * 3 + [q("b", "x")]}, 'snapshot.json: mqAll[3].queueId: expected an integer, got "x"'),
    ({"mqAll": [q("b", True)]}, "snapshot.json: mqAll[0].queueId: expected an integer, got true"),
    ({"mqAll": [q("b", 1.0)]}, "snapshot.json: mqAll[0].queueId: expected an integer, got 1.0"),
    ({"mqAll": [q("b", 2**31)]},
     "snapshot.json: mqAll[0].queueId: expected a 32-bit integer (Java int), got 2147483648"),
    ({"mqAll": [{"topic": "T", "brokerName": "b"}]}, "snapshot.json: mqAll[0].queueId: missing"),
    ({"mqAll": [{"topic": "T", "brokerName": 3, "queueId": 0}]},
     "snapshot.json: mqAll[0].brokerName: expected a string, got 3"),
    ({"mqAll": [dict(q("b", 0), extra=1)]},
     "snapshot.json: mqAll[0]: unknown key(s) 'extra'; known keys: topic, brokerName, queueId"),
    ({"mqAll": "queues"}, 'snapshot.json: mqAll: expected a list, got "queues"'),
    ({"mqAll": [None]}, "snapshot.json: mqAll[0]: expected an object, got null"),
    ({"cidAll": ["a", 2]}, "snapshot.json: cidAll[1]: expected a string, got 2"),
    ({"cidAll": ...}, "snapshot.json: cidAll: missing"),
    ({"consumerGroup": ...}, "snapshot.json: consumerGroup: missing"),
    ({"consumerGroup": None}, "snapshot.json: consumerGroup: expected a string, got null"),
    ({"currentCID": 7}, "snapshot.json: currentCID: expected a string, got 7"),
    ({"mqAll": ...}, "snapshot.json: mqAll: missing (give mqAll, or a topic route with 'topic' and 'queueDatas')"),
    ({"strategyParams": []}, "snapshot.json: strategyParams: expected an object, got []"),
    ({"strategyParams": {"virtualNodeCount": 3}},
     "snapshot.json: strategyParams: unknown key(s) 'virtualNodeCount'; known keys: virtualNodeCnt, messageQueueList, "
     "consumeridcs, innerStrategy, brokerMachineRoom, consumerMachineRoom, popShareQueueNum"),
    ({"strategyParams": {"popShareQueueNum": "1"}},
     'snapshot.json: strategyParams.popShareQueueNum: expected an integer, got "1"'),
    ({"strategyParams": {"consumeridcs": "room1"}},
     'snapshot.json: strategyParams.consumeridcs: expected a list, got "room1"'),
    ({"strategyParams": {"messageQueueList": [q("b", "0")]}},
     'snapshot.json: strategyParams.messageQueueList[0].queueId: expected an integer, got "0"'),
    ({"strategyParams": {"brokerMachineRoom": {"b": 1}}},
     "snapshot.json: strategyParams.brokerMachineRoom.b: expected a string, got 1"),
])
def test_field_errors_name_the_path(change, message):
    assert error(request(**change)) == message


def test_unknown_top_level_keys_are_listed_with_the_known_ones():
    message = error(request(consumer_group="G"))
    assert message.startswith(
        "snapshot.json: unknown key(s) 'consumer_group'; known keys: consumerGroup, mqAll, cidAll,")
    assert "queueDatas" in message


def test_the_request_must_be_an_object():
    assert error([1, 2]) == "snapshot.json: expected an object, got [1, 2]"


def test_queues_and_route_together_are_refused():
    assert error(dict(ROUTE, mqAll=[])) == "snapshot.json: topic: give either mqAll or a topic route, not both"


@pytest.mark.parametrize("change, message", [
    ({"topic": ...}, "snapshot.json: topic: missing"),
    ({"queueDatas": ...}, "snapshot.json: queueDatas: missing"),
    ({"queueDatas": [{"brokerName": "a", "readQueueNums": "4", "perm": 6}]},
     'snapshot.json: queueDatas[0].readQueueNums: expected an integer, got "4"'),
    ({"queueDatas": [{"brokerName": "a", "readQueueNums": 4}]}, "snapshot.json: queueDatas[0].perm: missing"),
    ({"queueDatas": [{"brokerName": "a", "readQueueNums": 4, "perm": 6, "writeQueueNums": None}]},
     "snapshot.json: queueDatas[0].writeQueueNums: expected an integer, got null"),
    ({"brokerDatas": {}}, "snapshot.json: brokerDatas: expected a list, got {}"),
    ({"topicQueueMappingByBroker": {"broker-a": {}}},
     "snapshot.json: topicQueueMappingByBroker: "
     "static topics (logic queue mappings) are not supported; give mqAll instead"),
])
def test_route_errors(change, message):
    obj = copy.deepcopy(ROUTE)
    obj.update(change)
    assert error({k: v for k, v in obj.items() if v is not ...}) == message


@pytest.mark.parametrize("change, message", [
    ({"mqAll": None}, "snapshot.json: mqAll: mqAll is null or mqAll empty"),
    ({"mqAll": []}, "snapshot.json: mqAll: mqAll is null or mqAll empty"),
    ({"cidAll": None, "currentCID": "c0"}, "snapshot.json: cidAll: cidAll is null or cidAll empty"),
    ({"cidAll": [], "currentCID": "c0"}, "snapshot.json: cidAll: cidAll is null or cidAll empty"),
    ({"currentCID": ""}, "snapshot.json: currentCID: currentCID is empty"),
    ({"currentCID": None}, "snapshot.json: currentCID: currentCID is empty"),
    ({"currentCID": "", "mqAll": []}, "snapshot.json: currentCID: currentCID is empty"),
    ({"cidAll": []}, "snapshot.json: cidAll: cidAll is null or cidAll empty"),        # nobody asks, any client would
    ({"cidAll": None, "mqAll": []}, "snapshot.json: mqAll: mqAll is null or mqAll empty"),
])
def test_rocketmq_refusals_carry_its_message(change, message):
    assert error(request(**change)) == message


def test_refusals_inside_pop_and_nearby():
    pop = request(currentCID="c0", mqAll=None, strategyParams={"popShareQueueNum": 0})
    assert error(pop).startswith("snapshot.json: mqAll: mqAll is null")
    nearby = request(strategyParams={"innerStrategy": AVG, "brokerMachineRoom": {"broker-a": "r"},
                                     "consumerMachineRoom": {"c0": "r", "c1": "r"}})
    assert error(nearby, "AllocateMachineRoomNearby") == (
        "snapshot.json: strategyParams.brokerMachineRoom: "
        "Machine room is null for mq MessageQueue [topic=T, brokerName=broker-b, queueId=0]")


@pytest.mark.parametrize("strategy, params, message", [
    (CH, {"virtualNodeCnt": -1}, "snapshot.json: strategyParams.virtualNodeCnt: illegal virtualNodeCnt :-1"),
    (AVG, {"virtualNodeCnt": 3},
     "snapshot.json: strategyParams.virtualNodeCnt: not read by AllocateMessageQueueAveragely; "
     "it reads: nothing (and popShareQueueNum)"),
    ("AllocateMessageQueueByConfig", {}, "snapshot.json: strategyParams.messageQueueList: missing; "
                                         "AllocateMessageQueueByConfig needs it"),
    ("AllocateMessageQueueByMachineRoom", {}, "snapshot.json: strategyParams.consumeridcs: missing; "
                                              "AllocateMessageQueueByMachineRoom needs it"),
    ("AllocateMachineRoomNearby", {"innerStrategy": "Nope", "brokerMachineRoom": {}, "consumerMachineRoom": {}},
     None),
    ("AllocateMachineRoomNearby", {"innerStrategy": PKG + "AllocateMachineRoomNearby", "brokerMachineRoom": {},
                                   "consumerMachineRoom": {}},
     "snapshot.json: strategyParams.innerStrategy: AllocateMachineRoomNearby cannot be its own inner strategy"),
    ("AllocateMachineRoomNearby", {"innerStrategy": AVG, "brokerMachineRoom": {}},
     "snapshot.json: strategyParams.consumerMachineRoom: missing; AllocateMachineRoomNearby needs it"),
    ("AllocateMachineRoomNearby", {"innerStrategy": "AllocateMessageQueueByMachineRoom", "brokerMachineRoom": {},
                                   "consumerMachineRoom": {}},
     "snapshot.json: strategyParams.consumeridcs: missing; AllocateMessageQueueByMachineRoom needs it"),
])
def test_strategy_setting_errors(strategy, params, message):
    got = error(request(strategyParams=params), strategy)
    if message is None:
        assert got.startswith(
            "snapshot.json: strategyParams.innerStrategy: unknown RocketMQ allocation strategy 'Nope'")
    else:
        assert got == message


def test_unknown_strategy_name():
    with pytest.raises(InputError) as info:
        run(request(), "AVG")
    assert info.value.where == "strategy"
    assert "unknown RocketMQ allocation strategy 'AVG'" in info.value.reason
    assert "AllocateMessageQueueAveragely" in info.value.reason


def test_the_input_file_name_is_a_parameter():
    with pytest.raises(InputError) as info:
        run(request(mqAll=[]), where="dump/route-2024.json")
    assert info.value.where == "dump/route-2024.json: mqAll"
    assert info.value.reason == "mqAll is null or mqAll empty"
