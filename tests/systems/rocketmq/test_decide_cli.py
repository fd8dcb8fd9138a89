"""``clusteremu decide`` for RocketMQ: the system found from the strategy's class name, every consumer's queues or
one consumer's, ``--sort``, a topic route instead of ``mqAll``, and RocketMQ's own messages for what it refuses."""
from __future__ import annotations

import json

import pytest

from clusteremu.cli import main

QUEUES = [{"topic": "T", "brokerName": b, "queueId": q} for b in ("broker-a", "broker-b") for q in range(3)]
GROUP = {"consumerGroup": "G", "mqAll": QUEUES, "cidAll": ["10.0.0.2@1", "10.0.0.1@1"]}


def decide(tmp_path, capsys, obj, *flags):
    path = tmp_path / "group.json"
    path.write_text(json.dumps(obj))
    code = main(["decide", str(path), *flags])
    return code, capsys.readouterr()


@pytest.mark.parametrize("name", ["AllocateMessageQueueAveragely",
                                  "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely"])
def test_averagely_by_simple_or_qualified_name(tmp_path, capsys, name):
    code, out = decide(tmp_path, capsys, GROUP, "--strategy", name, "--format", "json")
    assert code == 0
    allocation = json.loads(out.out)["allocation"]
    # cidAll as given (not sorted): the first member takes the first three queues
    assert [q["queueId"] for q in allocation["10.0.0.2@1"]] == [0, 1, 2]
    assert {q["brokerName"] for q in allocation["10.0.0.1@1"]} == {"broker-b"}


def test_sort_applies_rebalance_impls_order_first(tmp_path, capsys):
    code, out = decide(tmp_path, capsys, GROUP, "--strategy", "AllocateMessageQueueAveragely", "--sort",
                       "--format", "json")
    assert code == 0
    assert [q["brokerName"] for q in json.loads(out.out)["allocation"]["10.0.0.1@1"]] == ["broker-a"] * 3


def test_current_cid_answers_for_that_consumer_only(tmp_path, capsys):
    code, out = decide(tmp_path, capsys, dict(GROUP, currentCID="10.0.0.1@1"), "--strategy",
                       "AllocateMessageQueueAveragelyByCircle", "--format", "json")
    assert code == 0 and list(json.loads(out.out)["allocation"]) == ["10.0.0.1@1"]


def test_a_topic_route_gives_the_readable_queues(tmp_path, capsys):
    route = {"consumerGroup": "G", "topic": "T", "cidAll": ["c1"],
             "brokerDatas": [{"brokerName": "broker-a", "cluster": "c", "brokerAddrs": {"0": "10.0.0.9:10911"}}],
             "queueDatas": [{"brokerName": "broker-a", "readQueueNums": 2, "writeQueueNums": 2, "perm": 6,
                             "topicSysFlag": 0}]}
    code, out = decide(tmp_path, capsys, route, "--strategy", "AllocateMessageQueueAveragely", "--format", "json")
    assert code == 0
    assert sorted(q["queueId"] for q in json.loads(out.out)["allocation"]["c1"]) == [0, 1]


def test_rocketmqs_own_message_for_an_empty_mq_all(tmp_path, capsys):
    code, out = decide(tmp_path, capsys, dict(GROUP, mqAll=[]), "--strategy", "AllocateMessageQueueAveragely")
    assert code == 2 and "mqAll is null or mqAll empty" in out.err and "group.json" in out.err


def test_no_strategy_is_refused_with_the_known_names(tmp_path, capsys):
    code, out = decide(tmp_path, capsys, GROUP)
    assert code == 2 and "AllocateMessageQueueConsistentHash" in out.err


def test_the_table_lists_each_consumer(tmp_path, capsys):
    code, out = decide(tmp_path, capsys, GROUP, "--strategy", "AllocateMessageQueueAveragely")
    assert code == 0 and "10.0.0.1@1" in out.out and "T@broker-a:0" in out.out
