"""``workload.trace_unchanged_rebalances = false``: a timer rebalance that changed nothing is counted, not written.

The model runs exactly as with every result written: the trace differs only in those results, and each consumer's
``rebalances_unchanged`` records account for every one of them, in order, before its next written result, when it
stops or crashes, and at the run's end, whatever the placement of the agents.
"""
from __future__ import annotations

import pytest

from clusteremu.emulator.trace.query import Trace
from clusteremu.scenarios.loader import load_scenario

from ...shrink import SHRINK

COUNTED = {"workload.trace_unchanged_rebalances": False}


def _unchanged(e) -> bool:
    return (e.kind == "rebalance_result" and e.trigger == "timer" and e.balanced
            and not (e.added or e.removed or e.failed))


def _rest(events) -> list[tuple]:
    return [(e.t, e.agent, e.kind, e.fields) for e in events]


#: held client-id lists and route polls as leases: a steady group's timer rebalances are counted without running
#: (agents/rocketmq/steady_rebalances.py), here through a broker joining the route
HELD = {"workload.cid_lists": "lease", "workload.route_poll": "lease"}


@pytest.mark.parametrize("name, until, agents, overrides", [
    ("rocketmq-crash-circle", 400.0, "procs:2", {}),
    ("rocketmq-rolling-restart-averagely", 600.0, "inproc", {}),
    ("rocketmq-broker-join-averagely", 900.0, "inproc", HELD),
])
def test_counted_rebalances_are_the_written_ones_that_changed_nothing(emulate, name, until, agents, overrides):
    written = list(Trace(emulate(name, until=until, **overrides)).events)
    counted = list(Trace(emulate(name, until=until, agents=agents, **overrides, **COUNTED)).events)
    elided = [e for e in written if _unchanged(e)]
    records = [e for e in counted if e.kind == "rebalances_unchanged"]
    assert len(elided) > 50 and records
    # everything else, field for field
    assert _rest(e for e in written if not _unchanged(e)) == _rest(e for e in counted if e.kind != "rebalances_unchanged")
    assert not [e for e in counted if _unchanged(e)]
    for consumer in sorted({e.agent for e in elided} | {e.agent for e in records}):
        times = [e.t for e in elided if e.agent == consumer]
        mine = [e for e in records if e.agent == consumer]
        assert sum(r.runs for r in mine) == len(times), consumer
        results = [e.t for e in counted if e.agent == consumer and e.kind in ("rebalance_result", "rebalance_skipped")]
        stops = [e.t for e in counted if e.agent == consumer and e.kind == "agent_stopped"]
        i = 0
        for r in mine:
            span = times[i:i + r.runs]
            i += r.runs
            assert (r.first_t, r.last_t) == (span[0], span[-1]), (consumer, r)
            # written at the first of: the consumer's next written result, its stop, the run's end
            after = [t for t in results + stops if t >= r.last_t]
            assert r.t == min(after, default=until), (consumer, r)
    # the run's end: every consumer alive with a count pending says it then
    assert any(r.t == until for r in records)


def test_steady_groups_count_their_timer_rebalances_without_running_them_to_the_same_trace(emulate):
    """``rocketmq-large`` shrunk (held client-id lists, leases): while a group is steady its consumers' timer
    rebalances are counted without running (agents/rocketmq/steady_rebalances.py). Its trace is the one whose
    results are all written, less those results, through a running start, young pauses, a 40 s pause of one
    consumer (a stop coming within the channel's idle time, and a pause longer than waitInterval), a scale-out
    and a crash, at two placements."""
    faults = ('faults=[{kind="scale_out", at=1200.0, agents=["consumer-9", "consumer-10"]}, '
              '{kind="pause", at=600.0, duration_s=40.0, agents=["consumer-5"]}, '
              '{kind="crash", at=2400.0, agents=["consumer-3"]}]')
    large = load_scenario("rocketmq-large", [*SHRINK["rocketmq-large"], faults])
    written = Trace(emulate(large, until=3000.0, **{"workload.trace_unchanged_rebalances": True})).events
    for agents in ("inproc", "procs:2"):
        counted = Trace(emulate(large, until=3000.0, agents=agents)).events
        elided = [e for e in written if _unchanged(e)]
        records = [e for e in counted if e.kind == "rebalances_unchanged"]
        assert len(elided) > 500
        assert _rest(e for e in written if not _unchanged(e)) == \
            _rest(e for e in counted if e.kind != "rebalances_unchanged"), agents
        for consumer in sorted({e.agent for e in elided}):
            times = [e.t for e in elided if e.agent == consumer]
            spans = [(r.first_t, r.last_t, r.runs) for r in records if r.agent == consumer]
            i = 0
            for first_t, last_t, runs in spans:
                assert (first_t, last_t) == (times[i], times[i + runs - 1]), consumer
                i += runs
            assert i == len(times), consumer
