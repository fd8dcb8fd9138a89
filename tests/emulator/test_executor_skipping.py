"""A fixed-rate task that skips its idle runs does what its one-by-one runs do, at the same instants.

Each case runs the same random world twice: a *check* on a 5 s grid that acts only when a version it reads has
moved (or a 60 s rule comes due), a *sampler* on the same thread that holds it for a few milliseconds and moves the
version, outside changes at random times (some exactly on the grid), and stop-the-world pauses. Once the check
runs every period; once it skips its idle runs and the changes wake it. What the check saw, when (to the bit) and
in which order with the sampler must be the same.
"""
from __future__ import annotations

import random

import pytest


def world(h, seed: int, skipping: bool, idle: bool = False) -> list[tuple]:
    rnd = random.Random(seed)
    a = h.agent()
    ex = a.executor()
    state = {"version": 0, "seen": -1, "acted_at": -1e9}
    log: list[tuple] = []
    task = None
    # a 5 s grid as Pulsar's check; others whose runs' float times are sums taken from far earlier instants
    period = (5.0, 7.3, 45.0)[seed % 3]
    rule_s = 12 * period

    def changed() -> None:
        state["version"] += 1
        if skipping and task is not None:
            task.wake()

    def sampler():
        log.append(("sample", a.now))
        changed()
        yield from a.sleep(rnd.uniform(0.001, 0.005))

    def check() -> None:
        now = a.now
        if state["version"] != state["seen"] or now - state["acted_at"] > rule_s:
            state["seen"], state["acted_at"] = state["version"], now
            log.append(("act", now, state["version"]))
        elif skipping:
            task.skip_until(state["acted_at"] + rule_s - 1e-3, idle=idle)

    start = rnd.uniform(0.0, 3.0)
    ex.schedule_at_fixed_rate(sampler, start, 30.0 if seed % 2 else 60.0)
    task = ex.schedule_at_fixed_rate(check, start, period)
    grid = [start + k * period for k in range(1, int(590 / period))]
    for _ in range(25):  # outside changes: some on the grid exactly, pushed long before
        t = rnd.choice(grid) if rnd.random() < 0.3 else rnd.uniform(0.0, 590.0)
        h.env.timeout(t).callbacks.append(lambda _e: changed())
    for _ in range(4):
        at, length = rnd.uniform(5.0, 580.0), rnd.choice([0.5, 3.0, 12.0, 70.0])
        h.env.timeout(at).callbacks.append(lambda _e, s=length: a.stop_the_world(s))
    h.env.run(until=600.0)
    return log


@pytest.mark.parametrize("idle", [False, True])
@pytest.mark.parametrize("seed", range(60))
def test_skipping_idle_runs_changes_nothing_the_task_does(make_harness, seed, idle):
    """``idle``: the check's skipped runs stay skipped through the pauses (they take no time), and a change
    during a pause brings back the run due since it began."""
    one_by_one = world(make_harness(), seed, skipping=False)
    skipped = world(make_harness(), seed, skipping=True, idle=idle)
    assert any(e[0] == "act" for e in one_by_one) and any(e[0] == "sample" for e in one_by_one)
    assert skipped == one_by_one


def idle_task(h, start: float, period: float, skip_to: float, wake_at: float | None = None, agent=None):
    """An agent's fixed-rate task that only records its runs and skips to ``skip_to``; woken at ``wake_at``."""
    a = agent if agent is not None else h.agent()
    runs: list[float] = []
    box: list = []

    def idle() -> None:
        runs.append(a.now)
        box[0].skip_until(skip_to)

    box.append(a.executor().schedule_at_fixed_rate(idle, start, period))
    if wake_at is not None:
        h.env.timeout(wake_at).callbacks.append(lambda _e: box[0].wake())
    return a, box[0], runs


def test_skipped_runs_cost_no_timer(make_harness):
    h = make_harness()
    _, _, runs = idle_task(h, 1.0, 1.0, 100.0, wake_at=50.5)
    h.env.run(until=50.0)
    assert runs == [1.0]  # the runs due at 2 .. 99 are skipped: no wake-up in between
    h.env.run(until=120.0)  # woken at 50.5: the run due at 51 comes back
    assert runs == [1.0, 51.0] + [float(t) for t in range(100, 120)]  # from 100 on it does not skip


@pytest.mark.parametrize("busy_first, runs_after", [(True, [12.5]), (False, [15.0])])
def test_a_wake_while_the_thread_is_busy_brings_back_the_first_run_not_taken_yet(make_harness, busy_first,
                                                                                   runs_after):
    # A task holds the thread from 10.0 to 12.5 and wakes the idle one at 10.0. Submitted first, it is ahead of
    # the idle task's run due at 10 in the queue: that run waits behind it and comes back (at 12.5). Submitted
    # second, it is behind that run, which has run (finding nothing): the next is the one due at 15.
    h = make_harness()
    a = h.agent()
    box: list = []

    def busy():
        box[0].wake()
        yield from a.sleep(2.5)

    if busy_first:
        a.executor().schedule(busy, 10.0)
    _, task, runs = idle_task(h, 0.0, 5.0, 1000.0, agent=a)
    box.append(task)
    if not busy_first:
        a.executor().schedule(busy, 10.0)
    h.env.run(until=30.0)
    assert runs == [0.0] + runs_after


def test_a_woken_run_is_due_at_the_instant_the_one_by_one_runs_would_have_reached(make_harness):
    # Run 1 of a 45 s task started at 2.567: the one-by-one runs arm its timer at 2.567 and it fires at
    # 2.567 + (47.567 - 2.567), which is 47.567; armed from the wake at 10.2 the same sum gives 47.56700000000001.
    h = make_harness()
    _, _, runs = idle_task(h, 2.567, 45.0, 1000.0, wake_at=10.2)
    h.env.run(until=50.0)
    assert runs == [2.567, 47.567]


def test_a_change_at_a_skipped_runs_very_instant_is_seen_then_and_counted_as_undecided(make_harness):
    # Due at 0, 5, 10, ...; a change scheduled long before for exactly 20.0, with nothing else due then: the run
    # due at 20 is taken as still to run (it sees the change at 20), and the executor counts the case.
    h = make_harness()
    a, task, runs = idle_task(h, 0.0, 5.0, 1000.0, wake_at=20.0)
    h.env.run(until=30.0)
    assert runs == [0.0, 20.0] and a.executor().ambiguous_wakes == 1


def test_only_a_fixed_rate_task_can_skip_and_only_to_a_finite_time(harness):
    ex = harness.agent().executor()
    delayed = ex.schedule_with_fixed_delay(lambda: None, 1.0, 1.0)
    with pytest.raises(ValueError, match="fixed-rate"):
        delayed.skip_until(10.0)
    rate = ex.schedule_at_fixed_rate(lambda: None, 1.0, 1.0)
    with pytest.raises(ValueError, match="finite"):
        rate.skip_until(float("inf"))
