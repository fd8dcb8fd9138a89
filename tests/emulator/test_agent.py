"""Agent base: messages wait for a pause to end, a crash ends everything, randomness is keyed."""
from __future__ import annotations

import numpy as np
import pytest

from clusteremu.emulator.agent import Agent
from clusteremu.emulator.messages import Message
from clusteremu.emulator.rng import keyed_rng
from clusteremu.emulator.timer import call_at


class Recorder(Agent):
    def on_start(self):
        self.got: list[tuple[float, str]] = []

    def on_message(self, msg):
        self.got.append((self.now, msg.kind))


def deliver_at(h, agent, t, kind, seq):
    msg = Message("peer", agent.name, kind, None, 0.0, seq, deliver_t=t)
    h.env.timeout(t).callbacks.append(lambda _e: agent.deliver(msg))


def test_inbound_messages_are_held_during_a_pause_and_delivered_in_order(harness):
    a = harness.agent(Recorder)
    deliver_at(harness, a, 1.0, "before", 1)
    harness.env.timeout(2.0).callbacks.append(lambda _e: a.stop_the_world(3.0))
    deliver_at(harness, a, 3.0, "during-1", 2)
    deliver_at(harness, a, 4.0, "during-2", 3)
    deliver_at(harness, a, 6.0, "after", 4)
    harness.env.run(until=10)
    assert a.got == [(1.0, "before"), (5.0, "during-1"), (5.0, "during-2"), (6.0, "after")]


def test_what_waits_for_a_pauses_end_runs_after_what_else_is_due_at_that_instant(harness):
    a = harness.agent(Recorder)
    order = []
    harness.env.timeout(2.0).callbacks.append(lambda _e: a.stop_the_world(1.0))  # ends at 3.0
    deliver_at(harness, a, 2.5, "held", 1)
    # due at the pause's very end, queued after its end was: it runs before the gate's waiters, as before
    harness.env.timeout(2.5).callbacks.append(lambda _e: call_at(harness.env, 3.0, lambda _t: order.append("other")))
    harness.env.timeout(2.5).callbacks.append(lambda _e: a.gate.on_open(lambda: order.append(("open", a.now))))
    harness.env.run(until=10)
    assert order == ["other", ("open", 3.0)]
    assert a.got == [(3.0, "held")]
    # with nothing else due then, the waiters run at the end all the same
    b = harness.agent(Recorder, name="b")
    harness.env.timeout(1.0).callbacks.append(lambda _e: b.stop_the_world(0.25))
    harness.env.timeout(1.1).callbacks.append(lambda _e: b.gate.on_open(lambda: order.append(("b", b.now))))
    harness.env.run(until=20)
    assert order[-1] == ("b", 11.25) and b.gate.is_open


def test_a_crashed_agent_ignores_messages_and_sends_nothing(harness):
    a = harness.agent(Recorder)
    harness.env.timeout(1.0).callbacks.append(lambda _e: a.crash("test"))
    deliver_at(harness, a, 2.0, "late", 1)
    harness.env.run(until=3)
    a.send("peer", "hello")
    assert a.got == [] and harness.outbox == []
    kinds = [e[3] for e in harness.events]
    assert kinds == ["agent_started", "agent_stopped"]


def test_a_crash_interrupts_sleeping_processes(harness):
    a = harness.agent()
    woke: list[float] = []

    def proc():
        yield from a.sleep(5)
        woke.append(a.now)

    a.spawn(proc())
    harness.env.timeout(1).callbacks.append(lambda _e: a.crash())
    harness.env.run(until=10)
    assert woke == []


def test_events_carry_the_agents_own_sequence_numbers(harness):
    a = harness.agent(name="x")
    b = harness.agent(name="y")
    a.stop_the_world(0.5)
    b.stop_the_world(0.5)
    a.stop_the_world(0.1)  # a nested pause extends nothing but is still recorded
    seqs = [(e[1], e[2]) for e in harness.events]
    assert seqs == [("x", 1), ("y", 1), ("x", 2), ("y", 2), ("x", 3)]


def test_a_kind_written_in_rows_is_one_record_and_rows_of_unequal_lengths_are_refused(harness):
    from clusteremu.emulator.trace.kinds import ROWS_KEY, declare, expand_rows

    with pytest.raises(ValueError, match="per-row fields \\['depth'\\]"):
        declare("test_rows_bad", "rows naming a field it lacks", __name__, per_row=("depth",), queue="str")
    declare("test_rows", "a sample of queues", __name__, per_row=("queue", "lag"), queue="str", lag="float", by="str")
    a = harness.agent(name="x")
    a.emit_rows("test_rows", {"queue": ["q0", "q1"], "lag": [1.0, 2.5]}, by="x")
    with pytest.raises(ValueError, match="rows of unequal lengths \\(queue 2, lag 1\\)"):
        a.emit_rows("test_rows", {"queue": ["q0", "q1"], "lag": [1.0]}, by="x")
    [(_t, agent, seq, _kind, fields)] = [e for e in harness.events if e[3] == "test_rows"]
    assert agent == "x" and set(fields) == {"by", ROWS_KEY}
    assert expand_rows(fields) == [{"by": "x", "queue": "q0", "lag": 1.0}, {"by": "x", "queue": "q1", "lag": 2.5}]
    a.emit("agent_started", agent_kind="x")  # the next record takes the next number: the refused one took none
    assert harness.events[-1][2] == seq + 1


def test_keyed_generators_are_independent_of_other_entities():
    a1 = keyed_rng(7, "broker-1", "gc").random(5)
    keyed_rng(7, "broker-2", "gc").random(1000)  # drawing elsewhere changes nothing for broker-1
    a2 = keyed_rng(7, "broker-1", "gc").random(5)
    assert np.array_equal(a1, a2)
    assert not np.array_equal(a1, keyed_rng(8, "broker-1", "gc").random(5))
    assert not np.array_equal(a1, keyed_rng(7, "broker-1", "report").random(5))


class Echo(Agent):
    def on_message(self, msg):
        if msg.kind == "ping":
            self.reply(msg, {"pong": msg.body["n"]})


def route_all(h, latency=0.01, lose=()):
    """Deliver the harness's outbox after ``latency`` (a stand-in for the coordinator)."""
    agents = {}

    def pump():
        while True:
            yield h.env.timeout(0.001)
            out, h.outbox[:] = list(h.outbox), []
            for m in out:
                if m.kind in lose:
                    continue
                m.deliver_t = h.env.now + latency
                t = h.env.timeout(latency)
                t.callbacks.append(lambda _e, m=m: agents[m.dst].deliver(m))

    h.env.process(pump())
    return agents


def test_call_returns_the_reply_or_none_after_the_timeout(harness):
    agents = route_all(harness)
    a = harness.agent(name="a")
    b = harness.agent(Echo, name="b")
    agents.update(a=a, b=b)
    got = []

    def client():
        got.append((yield from a.call("b", "ping", {"n": 7}, timeout=1.0)))
        got.append((yield from a.call("nobody", "ping", {"n": 8}, timeout=1.0)))

    a.spawn(client())
    agents["nobody"] = harness.agent(name="nobody")  # receives but never answers
    harness.env.run(until=5)
    assert got[0]["pong"] == 7
    assert got[1] is None


@pytest.mark.parametrize("pause_at, replies, last_at", [
    (None, [7, None], 1.021),
    (0.005, [None, None], 2.005),  # the reply is held past the call's timeout (1.0), which waits for the end
    (0.5, [7, None], 1.5),  # the second call times out at 1.021, in the pause (0.5 to 1.5)
])
def test_call_then_hands_the_reply_or_the_timeout_over_where_a_waiting_process_would_resume(
        harness, pause_at, replies, last_at):
    # The same two calls (one answered, one timing out), made by a process with call and by callbacks with
    # call_then, log the same replies at the same times; a pause holds the reply, or the timeout, until it ends.
    logs = []
    for style in ("process", "callbacks"):
        h = type(harness)()
        agents = route_all(h)
        a = h.agent(name="a")
        agents.update(a=a, b=h.agent(Echo, name="b"), nobody=h.agent(name="nobody"))
        log = []
        if pause_at is not None:
            h.env.timeout(pause_at).callbacks.append(lambda _ev: a.stop_the_world(1.0))
        if style == "process":
            def client():
                reply = yield from a.call("b", "ping", {"n": 7}, timeout=1.0)
                log.append((h.env.now, reply))
                reply = yield from a.call("nobody", "ping", {"n": 8}, timeout=1.0)
                log.append((h.env.now, reply))
            a.spawn(client())
        else:
            def second(reply):
                log.append((h.env.now, reply))

            def first(reply):
                log.append((h.env.now, reply))
                a.call_then("nobody", "ping", {"n": 8}, 1.0, second)
            a.call_then("b", "ping", {"n": 7}, 1.0, first)
        h.env.run(until=5)
        logs.append(log)
    assert logs[0] == logs[1]
    assert [r["pong"] if r else r for _t, r in logs[0]] == replies
    assert logs[0][-1][0] == pytest.approx(last_at)


def test_call_then_is_never_answered_after_a_crash(harness):
    agents = route_all(harness)
    a = harness.agent(name="a")
    agents.update(a=a, b=harness.agent(Echo, name="b"))
    got = []
    a.call_then("b", "ping", {"n": 1}, 1.0, got.append)
    harness.env.timeout(0.005).callbacks.append(lambda _ev: a.crash())
    harness.env.run(until=5)
    assert got == []
    a.call_then("b", "ping", {"n": 2}, 1.0, got.append)  # down: nothing is sent
    assert harness.outbox == []
