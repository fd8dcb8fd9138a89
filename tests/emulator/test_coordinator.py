"""The in-process coordinators: one worker (``SoleCoordinator``) runs the windows of several (``Coordinator``)."""
from __future__ import annotations

import pytest

from clusteremu.emulator.agent import Agent
from clusteremu.emulator.coordinator import Coordinator, SoleCoordinator
from clusteremu.emulator.models import AgentSpec
from clusteremu.emulator.network import Condition, Latency, NetworkModel
from clusteremu.emulator.trace.writer import SegmentWriter
from clusteremu.emulator.trace import open_run
from clusteremu.emulator.transport.inproc import InprocLink
from clusteremu.emulator.worker import Worker

UNTIL = 5.0


class Sender(Agent):
    """Sends one message to ``to`` at each of ``at`` (seconds)."""

    def on_start(self) -> None:
        for t in self.params["at"]:
            self.env.timeout(t).callbacks.append(lambda _ev: self.send(self.params["to"], "hello", {}))


class Receiver(Agent):
    def on_message(self, msg):
        self.emit("agent_started", agent_kind=f"got {msg.src} {msg.seq}")  # a declared kind, as a receipt


def _specs() -> list[AgentSpec]:
    # "zed" is built and started first, so at t = 1 its message is sent before "alpha"'s; the canonical order
    # (send time, sender, sequence) puts "alpha" first.
    return [AgentSpec("zed", f"{__name__}:Sender", {"at": [1.0, 3.0], "to": "mid"}),
            AgentSpec("alpha", f"{__name__}:Sender", {"at": [1.0, 3.0], "to": "mid"}),
            AgentSpec("mid", f"{__name__}:Receiver")]


def _run(tmp_path, n_workers: int):
    network = NetworkModel(3, Latency("uniform", 0.001, 0.004), [])
    network.add_condition(Condition("partition", 0.5, 2.0))  # both messages at t = 1 dropped
    specs = _specs()
    groups = [specs] if n_workers == 1 else [specs[:1], specs[1:]]
    workers = [Worker(i, 3, g, tmp_path) for i, g in enumerate(groups)]
    for w in workers:
        w.attach_network(network)
    net = SegmentWriter(tmp_path / "events", "net")
    coordinator = SoleCoordinator if n_workers == 1 else Coordinator
    stats = coordinator([InprocLink(w) for w in workers], network, UNTIL, net).run()
    for w in workers:
        w.finish()
    net.close()
    return stats, [e.as_dict() for e in open_run(tmp_path).events()]


def test_one_worker_runs_the_windows_routes_and_numbers_the_drops_as_the_coordinator_of_two(tmp_path):
    sole_stats, sole = _run(tmp_path / "sole", 1)
    two_stats, two = _run(tmp_path / "two", 2)
    assert sole == two
    assert (sole_stats.windows, sole_stats.messages, sole_stats.dropped, sole_stats.events) == \
        (two_stats.windows, two_stats.messages, two_stats.dropped, two_stats.events)
    drops = [(e["t"], e["seq"], e["src"]) for e in sole if e["kind"] == "message_dropped"]
    assert drops == [(1.0, 1, "alpha"), (1.0, 2, "zed")]
    receipts = sorted(e["agent_kind"] for e in sole if e["agent"] == "mid" and e["agent_kind"].startswith("got"))
    assert receipts == ["got alpha 2", "got zed 2"]
    assert sole_stats.messages == 4 and sole_stats.dropped == 2


class Failing(Agent):
    """Writes an event each second and fails at 3.5 s, right after writing one more."""

    def on_start(self) -> None:
        for t in (1.0, 2.0, 3.0):
            self.env.timeout(t).callbacks.append(lambda _ev: self.emit("agent_started", agent_kind="tick"))
        self.env.timeout(3.5).callbacks.append(self._fail)

    def _fail(self, _ev) -> None:
        self.emit("agent_started", agent_kind="last words")  # in the failing window: not written
        raise ZeroDivisionError("a model's bug")


def _failing_run(tmp_path, n_workers: int) -> list[dict]:
    network = NetworkModel(3, Latency("uniform", 0.001, 0.004), [])
    specs = [AgentSpec("bomb", f"{__name__}:Failing"), AgentSpec("mid", f"{__name__}:Receiver")]
    groups = [specs] if n_workers == 1 else [specs[:1], specs[1:]]
    workers = [Worker(i, 3, g, tmp_path) for i, g in enumerate(groups)]
    net = SegmentWriter(tmp_path / "events", "net")
    coordinator = SoleCoordinator if n_workers == 1 else Coordinator
    with pytest.raises(ZeroDivisionError):
        coordinator([InprocLink(w) for w in workers], network, UNTIL, net).run()
    for w in workers:
        w.finish()
    net.close()
    return [e.as_dict() for e in open_run(tmp_path).events()]


def test_a_failing_run_keeps_the_events_of_every_window_that_ended_as_the_coordinator_of_two_does(tmp_path):
    sole = _failing_run(tmp_path / "sole", 1)
    assert sole == _failing_run(tmp_path / "two", 2)
    assert [e["t"] for e in sole if e["agent"] == "bomb"] == [0.0, 1.0, 2.0, 3.0]


class Counting(Agent):
    """Counts a tick each second instead of writing it, and writes the count as its last word; crashes at
    ``crash_at`` if given (a crashed run of the agent has no last word)."""

    def on_start(self) -> None:
        self.ticks = 0
        self.at_end(lambda: self.emit("agent_started", agent_kind=f"last word: {self.ticks} ticks"))
        for t in range(1, int(UNTIL) + 1):
            self.env.timeout(float(t)).callbacks.append(self._tick)
        if "crash_at" in self.params:
            self.env.timeout(self.params["crash_at"]).callbacks.append(lambda _ev: self.crash())

    def _tick(self, _ev) -> None:
        self.ticks += 1


def _counting_run(tmp_path, n_workers: int, until: float | None) -> list[dict]:
    network = NetworkModel(3, Latency("uniform", 0.001, 0.004), [])
    specs = [AgentSpec("counter", f"{__name__}:Counting"),
             AgentSpec("crasher", f"{__name__}:Counting", {"crash_at": 2.5}), AgentSpec("mid", f"{__name__}:Receiver")]
    groups = [specs] if n_workers == 1 else [specs[:1], specs[1:]]
    workers = [Worker(i, 3, g, tmp_path) for i, g in enumerate(groups)]
    net = SegmentWriter(tmp_path / "events", "net")
    coordinator = SoleCoordinator if n_workers == 1 else Coordinator
    coordinator([InprocLink(w) for w in workers], network, UNTIL, net).run()
    for link in (InprocLink(w) for w in workers):
        link.finish(until)
    net.close()
    return [e.as_dict() for e in open_run(tmp_path).events()]


def test_a_run_that_reaches_its_end_gives_each_live_agent_its_last_word_at_that_time(tmp_path):
    sole = _counting_run(tmp_path / "sole", 1, UNTIL)
    assert sole == _counting_run(tmp_path / "two", 2, UNTIL)
    words = [(e["t"], e["agent"], e["agent_kind"]) for e in sole if e.get("agent_kind", "").startswith("last word")]
    # the tick at t = 5 is the run's end, not before it: four ticks; the crashed agent says nothing
    assert words == [(UNTIL, "counter", "last word: 4 ticks")]
    # finished without the run's end (a failed or interrupted run): no last word
    unfinished = _counting_run(tmp_path / "cut", 1, None)
    assert not [e for e in unfinished if e.get("agent_kind", "").startswith("last word")]
    assert [e for e in unfinished if e["kind"] == "agent_stopped"] == [e for e in sole if e["kind"] == "agent_stopped"]
