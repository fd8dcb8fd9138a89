"""Several consumer groups, each with its own topic spread over a window of the brokers (the rocketmq-large shape):
the layout's arithmetic, and a small run in which each group rebalances among its own consumers only."""
from __future__ import annotations

from collections import Counter

import pytest

from clusteremu.agents.rocketmq.model import MODEL, group_layout
from clusteremu.agents.rocketmq.views import RocketMQViews
from clusteremu.base.errors import InputError
from clusteremu.emulator.trace.query import Trace
from clusteremu.scenarios.loader import load_scenario


def test_the_large_shape_spreads_20_topics_of_1280_queues_over_50_brokers_512_each():
    data = load_scenario("rocketmq-large").data
    groups = group_layout(data["workload"], data["cluster"]["brokers"])
    assert [g.topic for g in groups[:2]] == ["TopicTest-1", "TopicTest-2"] and len(groups) == 20
    assert all(len(g.brokers) == 10 for g in groups)
    per_broker = Counter(b for g in groups for b in g.brokers)
    assert set(per_broker) == set(range(50)) and set(per_broker.values()) == {4}
    specs = MODEL.agents(data)
    brokers = [s for s in specs if s.name.startswith("broker-")]
    queues = sum(t["queues"] for s in brokers for t in s.params["topics"].values())
    assert len(brokers) == 50 and queues == 25_600
    assert all(sum(t["queues"] for t in s.params["topics"].values()) == 512 for s in brokers)
    consumers = [s for s in specs if s.name.startswith("consumer-")]
    assert len(consumers) == 2_100  # 2,000 and the 100 of the scale-out
    by_group = Counter(s.params["group"] for s in consumers if s.start_at == 0.0)
    assert set(by_group.values()) == {100}
    # Dealt round robin by number: the scale-out adds five to each group.
    assert set(Counter(s.params["group"] for s in consumers if s.start_at > 0).values()) == {5}
    assert next(s for s in consumers if s.name == "consumer-37").params["group"] == "please_rename_unique_group_name_4-17"


def test_one_group_keeps_the_scenarios_own_names_and_every_broker():
    (g,) = group_layout({"groups": 1, "group": "G", "topic": "T", "topic_brokers": 0}, 3)
    assert (g.group, g.topic, sorted(g.brokers)) == ("G", "T", [0, 1, 2])


def test_a_topic_on_more_brokers_than_the_cluster_has_is_refused():
    with pytest.raises(InputError, match="workload.topic_brokers"):
        load_scenario("rocketmq-scale-out-averagely", ["workload.groups=2", "workload.topic_brokers=3"])


def test_each_group_allocates_its_own_topics_queues_among_its_own_consumers(emulate):
    run = emulate("rocketmq-scale-out-averagely", until=400, workload__groups=2, cluster__brokers=3,
                  workload__topic_brokers=2)
    trace = Trace(run)
    group_of = {e.agent: e.group for e in trace.select("consumer_started")}
    topic_of_group = {e.group: e.subscription for e in trace.select("queues_created")}
    assert len(topic_of_group) == 2
    # Group 1's topic on broker-a and broker-b, group 2's on broker-b and broker-c (windows from 0 and from 1).
    assert sorted((e.subscription, e.broker) for e in trace.select("queues_created")) == [
        ("TopicTest-1", "broker-a"), ("TopicTest-1", "broker-b"), ("TopicTest-2", "broker-b"), ("TopicTest-2", "broker-c")]
    v = RocketMQViews(trace)
    for h in v.holdings():
        assert h.queue.split("/")[0] == topic_of_group[group_of[h.consumer]]
    # At the end, each group's 16 queues are held once each, 4 by each of its 4 consumers (2 of the first 4 and 2
    # of the scale-out's: dealt round robin, odd numbers to group 1, even ones to group 2).
    end = trace.end - 1.0
    for group, topic in topic_of_group.items():
        held = {q: v.holders_at(q, end) for q in v.queues() if q.startswith(topic + "/")}
        assert len(held) == 16 and all(len(h) == 1 for h in held.values())
        assert all(group_of[h[0]] == group for h in held.values())
        assert set(Counter(h[0] for h in held.values()).values()) == {4}
    # The brokers' client-id lists are per group: a list never names another group's consumer.
    cid_group = {e.cid: e.group for e in trace.select("consumer_started")}
    for r in trace.select("rebalance_result", where=lambda r: r.cid_version >= 0):
        assert {cid_group[c] for c in v.cid_all(r)} <= {cid_group[r.cid]}
