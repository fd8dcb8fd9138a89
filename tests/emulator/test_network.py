"""The network never delivers faster than the lookahead, and applies partitions, drops and delays."""
from __future__ import annotations

import pytest

from clusteremu.emulator.messages import Message
from clusteremu.emulator.network import Condition, Latency, Link, NetworkModel


def net(**kw):
    default = Latency("uniform", 0.001, max_s=0.003)
    links = [Link("client-*", "broker-*", Latency("lognormal", 0.0005, median_s=0.002, sigma=1.0)),
             Link("broker-*", "store", Latency("exponential", 0.002, mean_s=0.004))]
    n = NetworkModel(3, default, links, agents=["client-1", "broker-1", "broker-2", "store"], **kw)
    return n


def test_lookahead_is_the_smallest_link_minimum_and_is_never_beaten():
    n = net()
    assert n.lookahead == pytest.approx(0.0005)
    seq = 0
    for src, dst in [("client-1", "broker-1"), ("broker-1", "store"), ("broker-2", "broker-1"), ("store", "client-1")]:
        for i in range(2000):
            seq += 1
            m = Message(src, dst, "k", None, sent_t=i * 0.01, seq=seq)
            assert n.route(m)
            assert m.deliver_t - m.sent_t >= n.lookahead
            assert m.deliver_t - m.sent_t >= n.latency_for(src, dst).min_s


def test_a_zero_minimum_latency_is_refused():
    with pytest.raises(ValueError):
        NetworkModel(1, Latency("constant", 0.0))


def test_partition_drop_and_delay_apply_to_messages_sent_while_active():
    dropped = []
    n = net(emit=lambda kind, **f: dropped.append(f))
    n.add_condition(Condition("partition", 10, 20, ("broker-*",), ("store",)))
    n.add_condition(Condition("delay", 30, 40, ("client-*",), ("broker-1",), extra_s=0.5))
    inside = Message("store", "broker-2", "k", None, 15.0, 1)  # either direction
    outside = Message("broker-1", "store", "k", None, 20.0, 1)
    other = Message("client-1", "broker-1", "k", None, 15.0, 1)
    slow = Message("client-1", "broker-1", "k", None, 35.0, 2)
    assert not n.route(inside)
    assert n.route(outside) and n.route(other)
    assert n.route(slow) and slow.deliver_t - slow.sent_t >= 0.5
    assert dropped[0]["reason"] == "partition"
    assert not n.route(Message("store", "nobody", "k", None, 1.0, 2))
    assert dropped[-1]["reason"] == "unknown_receiver"


def test_drop_probability_is_applied_per_message():
    n = net()
    n.add_condition(Condition("drop", 0, 100, ("*",), ("*",), probability=0.3))
    kept = sum(n.route(Message("client-1", "broker-1", "k", None, i * 0.01, i)) for i in range(1, 5001))
    assert 0.65 * 5000 < kept < 0.75 * 5000
