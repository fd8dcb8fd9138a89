"""The cyclic collector while windows run: off and frozen, then a full collection each time the tracked objects
have grown enough, and everything as it was afterwards."""
from __future__ import annotations

import gc
import weakref

import pytest

from clusteremu.emulator import collector
from clusteremu.emulator.agent import Agent
from clusteremu.emulator.coordinator import Coordinator, SoleCoordinator
from clusteremu.emulator.models import AgentSpec
from clusteremu.emulator.network import Latency, NetworkModel
from clusteremu.emulator.trace.writer import SegmentWriter
from clusteremu.emulator.transport.inproc import InprocLink
from clusteremu.emulator.transport.mesh import SoloExchange, WindowLoop
from clusteremu.emulator.worker import Worker


class _Node:
    """An object that only the collector can free once it refers to itself."""

    def __init__(self) -> None:
        self.me = self


def _cycle(dead: list) -> weakref.ref:
    node = _Node()
    return weakref.ref(node, lambda _ref: dead.append(True))


def test_the_block_turns_automatic_collection_off_freezes_what_exists_and_restores_both():
    assert gc.isenabled()
    before = gc.get_freeze_count()
    with collector.windows() as state:
        assert not gc.isenabled()
        assert gc.get_freeze_count() > before
        assert state.limit == collector.MIN_GROWTH and state.collections == 0
    assert gc.isenabled()
    assert gc.get_freeze_count() == before
    gc.disable()
    try:
        with collector.windows():
            pass
        assert not gc.isenabled()  # a process that had it off keeps it off
    finally:
        gc.enable()


def _tracked(obj: object) -> bool:
    """Whether ``obj`` is in the collector's generations (not frozen in the permanent one)."""
    return any(o is obj for o in gc.get_objects())


def test_a_process_that_froze_objects_of_its_own_keeps_them_frozen_and_its_runs_freeze_nothing():
    mine = [[i] for i in range(100)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector.windows(min_growth=5_000) as state:
            assert not state.freezes and not gc.isenabled()
            built = [0]  # what the first window built
            collector.check()  # the first window's end
            # nothing more was frozen (the count only falls, when frozen objects die meanwhile)
            assert gc.get_freeze_count() <= frozen and _tracked(built)
            ref = _cycle([])
            kept = [[i] for i in range(6_000)]
            collector.check()
            assert ref() is None and state.collections == 1
            del kept
        # the process's own objects stay frozen (an unfreeze would have given them back: a count of 0)
        assert 0 < gc.get_freeze_count() <= frozen and _tracked(built) and gc.isenabled()
    finally:
        gc.unfreeze()
        del mine


def test_what_the_first_window_built_is_frozen_at_its_end():
    with collector.windows() as state:
        frozen = gc.get_freeze_count()
        built = [[i] for i in range(1_000)]
        collector.check()
        assert state.started and gc.get_freeze_count() >= frozen + 1_000
        assert state.collections == 0 and gc.get_count()[0] < 10  # counting growth from there
        del built


def test_garbage_waits_for_the_growth_limit_then_one_full_collection_frees_it():
    dead: list = []
    with collector.windows(min_growth=5_000) as state:
        collector.check()  # the first window's end
        ref = _cycle(dead)
        collector.check()  # far below the limit: nothing collected
        assert ref() is not None and state.collections == 0
        kept = [[i] for i in range(6_000)]  # tracked objects that grow the heap past the limit
        collector.check()
        assert ref() is None and dead == [True]
        assert state.collections == 1
        # the next limit is a share of what that collection kept, never below the minimum
        assert state.limit >= 5_000
        assert gc.get_count()[0] < 100  # counting again from the collection
        del kept


def test_a_nested_block_keeps_the_outer_policy_and_leaves_it_in_force():
    with collector.windows(min_growth=5_000) as outer:
        with collector.windows(min_growth=10**9) as inner:
            assert inner is outer
        assert not gc.isenabled()
        collector.check()  # the first window's end
        ref = _cycle([])
        kept = [[i] for i in range(6_000)]
        collector.check()
        assert ref() is None and outer.collections == 1
        del kept
    assert gc.isenabled()


def test_an_error_in_the_block_restores_the_collector():
    with pytest.raises(ZeroDivisionError):
        with collector.windows():
            1 / 0
    assert gc.isenabled() and gc.get_freeze_count() == 0
    collector.check()  # outside any block: does nothing


class Litterer(Agent):
    """Leaves a cycle behind every 10 ms of virtual time, with a weak reference that notes when it is freed."""

    freed: list[float] = []
    refs: list[weakref.ref] = []

    def on_start(self) -> None:
        self.env.process(self._litter())

    def _litter(self):
        while True:
            yield self.env.timeout(0.01)
            for _ in range(50):
                node = _Node()
                Litterer.refs.append(weakref.ref(node, lambda _ref, env=self.env: Litterer.freed.append(env.now)))


def _run_sole(tmp_path, specs, network) -> None:
    worker = Worker(0, 1, specs, tmp_path)
    worker.attach_network(network)
    net = SegmentWriter(tmp_path / "events", "net")
    SoleCoordinator([InprocLink(worker)], network, 10.0, net).run()
    worker.finish(10.0)
    net.close()


def _run_two(tmp_path, specs, network) -> None:
    workers = [Worker(i, 1, [spec], tmp_path) for i, spec in enumerate(specs)]
    for w in workers:
        w.attach_network(network)
    net = SegmentWriter(tmp_path / "events", "net")
    Coordinator([InprocLink(w) for w in workers], network, 10.0, net).run()
    for w in workers:
        w.finish(10.0)
    net.close()


def _run_mesh(tmp_path, specs, network) -> None:
    worker = Worker(0, 1, specs, tmp_path)
    WindowLoop(worker, network, {s.name: 0 for s in specs}, 0, 1, 10.0).run(SoloExchange())
    worker.finish(10.0)


@pytest.mark.parametrize("loop", [_run_sole, _run_two, _run_mesh], ids=["sole", "coordinator", "mesh"])
def test_a_run_collects_its_cyclic_garbage_between_windows_and_leaves_the_collector_as_it_was(tmp_path,
                                                                                              monkeypatch, loop):
    monkeypatch.setattr(collector, "MIN_GROWTH", 20_000)
    Litterer.freed, Litterer.refs = [], []
    specs = [AgentSpec(f"litter-{i}", f"{__name__}:Litterer") for i in (1, 2)]
    loop(tmp_path, specs, NetworkModel(1, Latency("uniform", 0.001, 0.002), []))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    # 100,000 cycles (with their weak references, 300,000 tracked objects): several collections during the run
    # (the virtual times at which cycles were freed), each freeing what was left before it
    assert len(Litterer.refs) == 100_000
    during = [t for t in Litterer.freed if t < 10.0]
    assert len(set(during)) >= 3
    assert min(during) < 5.0 and len(during) > 60_000
