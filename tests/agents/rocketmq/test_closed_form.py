"""The consumers' consumption in closed form (``workload.consumption = "closed_form"``): the water-filling
arithmetic of :class:`ClosedFormConsumption` against hand-computed cases and against the pull model's steps in the
limit of a small step, and what a closed-form run shows in the trace."""
from __future__ import annotations

from copy import deepcopy

import numpy as np
import pytest

from clusteremu.agents.rocketmq.fluid import ClosedFormConsumption
from clusteremu.agents.rocketmq.rebalance import share
from clusteremu.agents.rocketmq.views import RocketMQViews
from clusteremu.base.errors import InputError
from clusteremu.emulator.trace.query import Trace
from clusteremu.scenarios.loader import load_scenario


class Q:
    """A held queue as the consumer keeps it: its offset, the max offset last seen and what it consumed."""

    def __init__(self, offset: float) -> None:
        self.offset = offset
        self.max = offset
        self.ranges: list[list[float]] = []

    def consumed(self, a: float, b: float) -> None:
        if self.ranges and self.ranges[-1][1] == a:
            self.ranges[-1][1] = b
        else:
            self.ranges.append([a, b])


def fluid_with(capacity: float, rate: float, offsets: list[float], now: float = 10.0):
    """Queues of brokers started at 0 (max offset rate × t), taken at ``now`` from ``offsets``."""
    f = ClosedFormConsumption(capacity, now)
    qs = [Q(o) for o in offsets]
    for i, q in enumerate(qs):
        f.add(f"T/b/{i}", q, rate, 0.0, now)
    return f, qs


def pull_until(ref: dict[str, list[float]], t: float, t_next: float, step: float, rate: float, cap: float,
               paused: bool) -> float:
    """The pull model from ``t`` to ``t_next`` (``ref``: queue -> [offset, since]): every step, pull (the max offset
    now), then consume up to capacity × step, water-filled. Returns the time reached."""
    while t < t_next - 1e-9:
        t = round(t + step, 6)
        if not paused and ref:
            avail = {q: max(0.0, rate * (t - v[1]) - v[0]) for q, v in ref.items()}
            for q, take in share(avail, cap * step).items():
                ref[q][0] += take
    return t


# (capacity, rate, backlogs at t=10, settle times, expected backlogs at each time), worked by hand:
CASES = [
    # caught-up queues take what arrives
    (1000.0, 100.0, [0, 0], [15.0], [[0, 0]]),
    # one backlog of 300: the caught-up queue takes 100/s, the other 300/s (200/s net): empty after 1.5 s
    (400.0, 100.0, [300, 0], [11.0, 11.5, 13.0], [[100, 0], [0, 0], [0, 0]]),
    # backlogs 0, 100, 400 at capacity 500: 100 + 200 + 200 (100/s net each) until t=11, then 100 + 100 + 300
    # (200/s net): the last one empties at 12.5 s
    (500.0, 100.0, [0, 100, 400], [11.0, 12.0, 12.5, 20.0], [[0, 0, 300], [0, 0, 100], [0, 0, 0], [0, 0, 0]]),
    # less capacity than arrives: equal shares (75/s each), every backlog grows by 25/s
    (150.0, 100.0, [0, 10], [14.0], [[100, 110]]),
    # exactly enough: the backlog stays
    (200.0, 100.0, [50, 0], [30.0], [[50, 0]]),
]


@pytest.mark.parametrize("capacity, rate, backlogs, times, expected", CASES)
def test_water_filling_in_closed_form(capacity, rate, backlogs, times, expected):
    f, qs = fluid_with(capacity, rate, [rate * 10.0 - b for b in backlogs])
    start = [q.offset for q in qs]
    for t, want in zip(times, expected):
        f.settle(t)
        assert [round(rate * t - q.offset, 9) for q in qs] == pytest.approx(want, abs=1e-6), t
        assert all(q.max == pytest.approx(rate * t) for q in qs)
    # what was consumed is one contiguous range per queue, from where it was taken to where it is
    for q, a in zip(qs, start):
        assert q.ranges == ([[a, q.offset]] if q.offset > a else [])


def test_closed_form_is_the_pull_models_limit_of_a_small_step():
    rng = np.random.default_rng(3)
    for _ in range(8):
        n = int(rng.integers(1, 8))
        rate = 100.0
        capacity = float(rng.uniform(0.5, 3.0) * n * rate)
        offsets = [rate * 10.0 - float(rng.uniform(0, 800)) for _ in range(n)]
        f, qs = fluid_with(capacity, rate, offsets)
        f.settle(14.0)
        # the pull model: every step, pull (max offset now), then consume up to capacity × step, water-filled
        step, t, off = 1e-3, 10.0, list(offsets)
        while t < 14.0 - 1e-9:
            t += step
            avail = {i: max(0.0, rate * t - off[i]) for i in range(n)}
            for i, take in share(avail, capacity * step).items():
                off[i] += take
        assert [q.offset for q in qs] == pytest.approx(off, abs=rate * step * 2)


def random_changes(seed: int, *, trials: int, changes: int, capacity: float, gap: tuple[float, float],
                   ops: list[str], behind: float, behind_share: float, capacities: tuple[float, float]) -> int:
    """Random changes at random times (``ops``: add, remove, pause, capacity, snapshot), the closed form against
    small pull steps at every change: a queue is taken up to ``behind`` behind (``behind_share`` of them, the others
    caught up); a snapshot restored elsewhere computes what the original does. Returns how many pauses began
    with every queue caught up."""
    rng = np.random.default_rng(seed)
    rate, step = 50.0, 2e-3
    caught_up_pauses = 0
    for trial in range(trials):
        f = ClosedFormConsumption(capacity, 0.0)
        ref: dict[str, list[float]] = {}  # key -> [offset, since]
        held: dict[str, Q] = {}
        cap, paused, t, k = capacity, False, 0.0, 0
        for _ in range(changes):
            t = pull_until(ref, t, round(t + float(rng.uniform(*gap)), 3), step, rate, cap, paused)
            op = rng.choice(ops)
            if op == "add" or not ref:
                k += 1
                key, since = f"T/b/{k}", float(rng.uniform(0, t))
                offset = rate * (t - since) - (float(rng.uniform(0, behind)) if rng.random() < behind_share else 0.0)
                held[key], ref[key] = Q(offset), [offset, since]
                f.add(key, held[key], rate, since, t)
            elif op == "remove":
                key = sorted(ref)[int(rng.integers(0, len(ref)))]
                f.remove(key, t)
                assert held.pop(key).offset == pytest.approx(ref.pop(key)[0], abs=rate * step * 3), (trial, t)
            elif op == "pause":
                if not paused:
                    caught_up_pauses += f.caught_up()
                paused = not paused
                (f.pause if paused else f.resume)(t)
            elif op == "capacity":
                cap = float(rng.uniform(*capacities))
                f.set_capacity(cap, t)
            else:  # another agent's copy computes what the original would until its next change
                later = round(t + float(rng.uniform(0.01, 0.5)), 3)
                qs = {key: Q(0.0) for key in held}
                copy = ClosedFormConsumption.restore(f.snapshot(t), qs)
                original, its_queues = deepcopy((f, held))  # the original's queues copied with it
                # a broker reads only its own queues of the copy: theirs come out as when every queue is read
                ours = sorted(held)[::2]
                part = {key: Q(0.0) for key in held}
                partial = ClosedFormConsumption.restore(f.snapshot(t), part)
                read_ours = partial.reader(ours)
                read_ours((t + later) / 2)
                read_ours(later)
                copy.settle(later)
                original.settle(later)
                assert {key: q.offset for key, q in qs.items()} == pytest.approx(
                    {key: q.offset for key, q in its_queues.items()}, abs=1e-6), (trial, t)
                assert {key: part[key].offset for key in ours} == pytest.approx(
                    {key: qs[key].offset for key in ours}, abs=1e-6), (trial, t)
            f.settle(t)
            for key, q in held.items():
                assert q.offset == pytest.approx(ref[key][0], abs=rate * step * 3), (trial, t, op, key)
                assert sum(b - a for a, b in q.ranges) == pytest.approx(q.offset - q.ranges[0][0]) if q.ranges \
                    else True
    return caught_up_pauses


def test_takes_drops_pauses_and_capacity_changes_follow_the_pull_models_limit():
    """Random changes at random times, most queues taken behind."""
    random_changes(11, trials=4, changes=25, capacity=1000.0, gap=(0.05, 0.6),
                   ops=["add", "add", "add", "remove", "pause", "capacity"], behind=60.0, behind_share=1.0,
                   capacities=(100.0, 1500.0))


def test_a_pause_that_begins_caught_up_ends_with_every_queue_draining_the_same_backlog_together():
    # three caught-up queues (100 msg/s each, capacity 1,000): paused from 12 s to 13 s, each is 100 behind, and
    # drains at 1000/3 - 100 msg/s: caught up at 13 + 100 / 233.3 s
    f, qs = fluid_with(1000.0, 100.0, [1000.0, 1000.0, 1000.0])
    f.settle(11.0)
    assert f.caught_up()
    f.pause(12.0)
    f.settle(12.5)  # read during the pause: where the pause found them
    assert [(q.offset, q.max) for q in qs] == [(pytest.approx(1200.0), pytest.approx(1200.0))] * 3
    f.resume(13.0)
    assert not f.caught_up()
    f.settle(13.2)
    assert [q.offset for q in qs] == pytest.approx([1320.0 - (100.0 - 0.2 * (1000.0 / 3 - 100.0))] * 3)
    f.settle(13.0 + 100.0 / (1000.0 / 3 - 100.0) + 1e-6)
    assert f.caught_up()
    f.settle(15.0)
    assert [q.offset for q in qs] == pytest.approx([1500.0] * 3)
    assert [q.ranges for q in qs] == [[[1000.0, pytest.approx(1500.0)]]] * 3


@pytest.mark.parametrize("change", ["add 0", "add 30", "add 80", "remove", "capacity", "pause"])
def test_a_change_while_the_queues_catch_up_after_a_pause_follows_the_pull_models_limit(change):
    # caught-up queues paused 0.5 s, then, 0.1 s after the pause's end (still catching up, 42.5 behind), a change
    # (a queue taken 0, 30 or 80 behind, one dropped, less capacity, another pause): the closed form against small
    # pull steps up to and after it
    rate, step, cap = 100.0, 1e-3, 700.0
    f = ClosedFormConsumption(cap, 10.0)
    held = {f"T/b/{i}": Q(rate * 10.0) for i in range(4)}
    ref = {k: [q.offset, 0.0] for k, q in held.items()}
    for k, q in held.items():
        f.add(k, q, rate, 0.0, 10.0)
    t, paused = 10.0, False
    plan = {11.0: "pause", 11.5: "resume", 11.6: change, 11.7: "resume" if change == "pause" else None}
    for t_next, op in sorted(plan.items()) + [(13.0, None)]:
        t = pull_until(ref, t, t_next, step, rate, cap, paused)
        if op == "pause":
            paused = True
            f.pause(t)
        elif op == "resume":
            paused = False
            f.resume(t)
        elif op is not None and op.startswith("add"):
            behind = float(op.split()[1])
            held["T/b/new"], ref["T/b/new"] = Q(rate * t - behind), [rate * t - behind, 0.0]
            f.add("T/b/new", held["T/b/new"], rate, 0.0, t)
        elif op == "remove":
            f.remove("T/b/0", t)
            assert held.pop("T/b/0").offset == pytest.approx(ref.pop("T/b/0")[0], abs=rate * step * 3)
        elif op == "capacity":
            cap = 550.0
            f.set_capacity(cap, t)
        f.settle(t)
        for k, q in held.items():
            assert q.offset == pytest.approx(ref[k][0], abs=rate * step * 3), (t, op, k)
    assert all(len(q.ranges) == 1 for q in held.values())
    assert f.caught_up()


def test_pauses_that_begin_caught_up_follow_the_pull_models_limit_through_random_changes():
    """Mostly caught-up queues, short pauses and changes at random times, some during a pause or while the queues
    catch up after one, and snapshots restored elsewhere."""
    caught_up_pauses = random_changes(5, trials=8, changes=40, capacity=400.0, gap=(0.02, 0.4),
                                      ops=["add", "remove", "pause", "pause", "pause", "capacity", "snapshot"],
                                      behind=20.0, behind_share=0.3, capacities=(120.0, 600.0))
    assert caught_up_pauses > 20  # the path under test was taken


def test_nothing_is_consumed_while_paused_and_the_backlog_drains_after():
    f, (q,) = fluid_with(300.0, 100.0, [1000.0])
    f.pause(12.0)
    f.settle(14.0)
    assert q.offset == pytest.approx(1200.0) and q.max == pytest.approx(1200.0)
    f.resume(15.0)
    f.settle(16.0)  # backlog 300 at 15 s, draining at 200/s
    assert q.offset == pytest.approx(1600.0 - 100.0)
    f.settle(20.0)
    assert q.offset == pytest.approx(2000.0)
    assert q.ranges == [[1000.0, 2000.0]]


def test_a_capacity_change_and_a_removed_queue_change_the_shares_from_then_on():
    f, (a, b) = fluid_with(1000.0, 100.0, [500.0, 500.0])  # backlogs 500 each: 500/s each, 400/s net
    f.set_capacity(400.0, 11.0)  # at 11 s: backlogs 100 each; then 200/s each, 100/s net: empty at 12 s
    assert a.offset == pytest.approx(1000.0)
    f.remove("T/b/1", 11.5)
    assert b.offset == pytest.approx(1100.0)  # settled when dropped, then no more
    f.settle(13.0)  # alone from 11.5 s with backlog 50 at 400/s: empty at 11.5 + 50/300
    assert a.offset == pytest.approx(1300.0) and b.offset == pytest.approx(1100.0)


def test_queues_of_another_rate_are_refused():
    f, _ = fluid_with(1000.0, 100.0, [0.0])
    with pytest.raises(ValueError, match="rate"):
        f.add("T/c/0", Q(0.0), 50.0, 0.0, 10.0)


def test_a_closed_form_run_consumes_without_pulls_and_keeps_the_crash_figures(emulate):
    closed = Trace(emulate("rocketmq-crash-averagely", until=600, **{"workload.consumption": "closed_form"}))
    pulled = Trace(emulate("rocketmq-crash-averagely", until=600, **{"workload.consume_tick_s": 5.0}))
    assert closed.count("offset_committed", where=lambda e: e.via == "pull") == 0
    assert closed.count("offset_committed", where=lambda e: e.via == "update") > 0
    # the same allocation changes at the same moments (up to the network's draws, which depend on the messages
    # sent): consumption does not drive the rebalances
    def changes(tr):
        return [(e.t, e.agent, tuple(e.added), tuple(e.removed)) for e in tr.select("rebalance_result") if e.changed]
    a, b = changes(closed), changes(pulled)
    assert [x[1:] for x in a] == [x[1:] for x in b]
    assert np.allclose([x[0] for x in a], [x[0] for x in b], atol=0.05)
    vc, vp = RocketMQViews(closed), RocketMQViews(pulled)
    assert vc.orphan_seconds() == pytest.approx(vp.orphan_seconds(), abs=0.5)
    # what the producers appended was consumed, up to the last commits' lag, as with 5 s pull steps
    assert vc.consumed_total() == pytest.approx(vp.consumed_total(), rel=0.01)
    # after the crash, what consumer-4 consumed since its last persist (5 s at most) is consumed again
    lost = [e for e in closed.select("consume_progress") if e.agent == "consumer-4" and e.reason == "stop"]
    assert lost and 0 < vc.duplicates_total() <= 5.0 * 100.0 * 4 + 1e-6


def test_a_paused_consumer_consumes_nothing_during_its_pause(emulate):
    tr = Trace(emulate("rocketmq-gc-pause-averagely", until=480, **{"workload.consumption": "closed_form"}))
    # consumer-3's 150 s pause from 300 s: its observer still reports at 305 .. 445 s, with nothing consumed
    during = [e for e in tr.select("consume_progress", within=(305.0, 450.0)) if e.agent == "consumer-3"]
    assert during and all(e.consumed == 0.0 for e in during)
    before = [e for e in tr.select("consume_progress", within=(100.0, 300.0)) if e.agent == "consumer-3"]
    assert before and sum(e.consumed for e in before) > 0


@pytest.mark.parametrize("override, key", [
    (['faults=[{kind="broker_loss", at=100.0, agents=["broker-b"]}]'], "faults[0].agents"),
    (['faults=[{kind="partition", at=100.0, duration_s=10.0, between=[["consumer-1"], ["broker-a"]]}]'],
     "faults[0].kind"),
    (['strategy.listener="orderly"'], "workload.consumption"),
    (['config.messageModel="BROADCASTING"'], "workload.consumption"),
    (['workload.consumption="steps"'], "workload.consumption"),
])
def test_closed_form_refuses_what_it_cannot_see(override, key):
    with pytest.raises(InputError) as err:
        load_scenario("rocketmq-scale-out-averagely", ['workload.consumption="closed_form"', *override])
    assert key in str(err.value)
