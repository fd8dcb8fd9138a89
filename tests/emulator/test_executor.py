"""The scheduled executor keeps Java's ScheduledThreadPoolExecutor semantics around pauses."""
from __future__ import annotations

import pytest


def run_times(h, mode: str, pause_at: float, pause_s: float, until: float = 7.5, period: float = 1.0):
    a = h.agent()
    times: list[float] = []
    a.executor().schedule_periodic(mode, lambda: times.append(a.now), 1.0, period)
    h.env.timeout(pause_at).callbacks.append(lambda _e: a.stop_the_world(pause_s))
    h.env.run(until=until)
    return times


def test_fixed_rate_fires_missed_runs_back_to_back_after_a_pause(harness):
    # Due at 1, 2, 3, 4, 5, 6, 7; paused over [2.5, 5.5): runs due at 3, 4 and 5 all fire at 5.5.
    assert run_times(harness, "fixed_rate", 2.5, 3.0) == [1.0, 2.0, 5.5, 5.5, 5.5, 6.0, 7.0]


def test_fixed_delay_runs_once_after_a_pause_and_then_a_full_period_later(harness):
    assert run_times(harness, "fixed_delay", 2.5, 3.0) == [1.0, 2.0, 5.5, 6.5]


def test_without_pause_both_modes_run_on_the_period(make_harness):
    rate = run_times(make_harness(), "fixed_rate", 100, 1)
    assert rate == run_times(make_harness(), "fixed_delay", 100, 1) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]


def test_one_thread_runs_overdue_tasks_in_due_time_order(harness):
    h = harness
    a = h.agent()
    ran: list[tuple[str, float]] = []
    ex = a.executor()
    ex.schedule_at_fixed_rate(lambda: ran.append(("A", a.now)), 1.0, 1.0)
    ex.schedule_at_fixed_rate(lambda: ran.append(("B", a.now)), 1.5, 1.0)
    h.env.timeout(1.2).callbacks.append(lambda _e: a.stop_the_world(2.8))
    h.env.run(until=4.2)
    # Overdue at 4.0: B@1.5, A@2, B@2.5, A@3, B@3.5, A@4 — interleaved by due time, as Java's queue orders them.
    assert [n for n, _ in ran] == ["A", "B", "A", "B", "A", "B", "A"]
    assert [t for _, t in ran] == [1.0] + [4.0] * 6


def test_a_task_that_takes_time_holds_the_thread(make_harness):
    def collect(mode):
        h = make_harness()
        a = h.agent()
        starts: list[float] = []

        def task():
            starts.append(a.now)
            yield from a.sleep(1.5)

        a.executor().schedule_periodic(mode, task, 1.0, 1.0)
        h.env.run(until=8.0)
        return starts

    assert collect("fixed_rate") == [1.0, 2.5, 4.0, 5.5, 7.0]  # late runs start as soon as the thread is free
    assert collect("fixed_delay") == [1.0, 3.5, 6.0]  # a period after each run ends


def test_a_pause_during_a_task_delays_its_sleep(harness):
    h = harness
    a = h.agent()
    ends: list[float] = []

    def task():
        yield from a.sleep(1.0)
        ends.append(a.now)

    a.executor().schedule(task, 1.0)
    h.env.timeout(1.5).callbacks.append(lambda _e: a.stop_the_world(2.0))
    h.env.run(until=10)
    assert ends == [3.5]


def test_overlapping_pauses_extend_the_closed_period(harness):
    h = harness
    a = h.agent()
    times: list[float] = []
    a.executor().schedule_with_fixed_delay(lambda: times.append(a.now), 1.0, 1.0)
    h.env.timeout(0.5).callbacks.append(lambda _e: a.stop_the_world(2.0))  # until 2.5
    h.env.timeout(1.0).callbacks.append(lambda _e: a.stop_the_world(3.0))  # until 4.0
    h.env.run(until=5.5)
    assert times == [4.0, 5.0]


def test_cancel_and_crash_stop_tasks(harness):
    h = harness
    a = h.agent()
    times: list[float] = []
    st = a.executor().schedule_at_fixed_rate(lambda: times.append(a.now), 1.0, 1.0)
    h.env.timeout(2.5).callbacks.append(lambda _e: st.cancel())
    h.env.run(until=5)
    assert times == [1.0, 2.0]

    b = h.agent(name="b")
    bt: list[float] = []
    b.executor().schedule_at_fixed_rate(lambda: bt.append(b.now), 1.0, 1.0)
    h.env.timeout(2.5).callbacks.append(lambda _e: b.crash())  # b started at 5: runs at 6 and 7, crash at 7.5
    h.env.run(until=10)
    assert bt == [6.0, 7.0]
    assert not b.alive


def test_bad_schedules_are_refused(harness):
    a = harness.agent()
    with pytest.raises(ValueError):
        a.executor().schedule_at_fixed_rate(lambda: None, 0.0, 0.0)
    with pytest.raises(ValueError):
        a.executor().schedule_periodic("every_now_and_then", lambda: None, 0.0, 1.0)
