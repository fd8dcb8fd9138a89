"""JVM agents: collections as keyed chains of pauses, GC storms, the JVM fault kinds and the ``gc`` table."""
from __future__ import annotations

import pytest

from clusteremu.agents.common.jvm import JVM_FAULT_FIELDS, complete_jvm_fault, gc_table
from clusteremu.emulator.jvm import GcSettings, JvmAgent
from clusteremu.scenarios.schema import validate


class Jvm(JvmAgent):
    def on_start(self):
        self.start_gc(self.params["gc"])


def pauses(h):
    return [(e[0], e[4]["cause"], e[4]["duration_s"]) for e in h.events if e[3] == "stw_pause"]


def test_young_and_full_collections_pause_the_agent_on_their_own_streams(make_harness):
    h = make_harness()
    h.agent(Jvm, gc={"young_every_s": 5.0, "young_pause_ms": 30.0, "full_every_s": 60.0, "full_pause_s": 2.0,
                     "sigma": 0.3})
    h.env.run(until=600)
    got = pauses(h)
    assert {c for _t, c, _d in got} == {"gc-young", "gc-full"}
    young_only = make_harness()
    young_only.agent(Jvm, gc=GcSettings(young_every_s=5.0))
    young_only.env.run(until=600)
    # the full collections draw from their own stream: the young pauses' lengths are the same without them
    assert [d for _t, c, d in got if c == "gc-young"][:5] == [d for _t, _c, d in pauses(young_only)][:5]


def test_a_crash_ends_the_collections_and_a_restart_starts_them_again(harness):
    a = harness.agent(Jvm, gc=GcSettings(young_every_s=2.0))
    harness.env.timeout(100.0).callbacks.append(lambda _e: a.crash("test"))
    harness.env.timeout(200.0).callbacks.append(lambda _e: a.start())
    harness.env.run(until=300)
    times = [t for t, _c, _d in pauses(harness)]
    assert any(t < 100.0 for t in times) and any(t >= 200.0 for t in times)
    assert not any(100.0 <= t < 200.0 for t in times)
    # one chain per run of the agent: about one stream's pauses after the restart (a mean gap of 2 s over
    # 100 s), not two chains' worth
    one_stream = 100.0 / 2.0
    assert len([t for t in times if t >= 200.0]) < 1.5 * one_stream


def test_a_collection_due_during_a_pause_waits_for_its_end(harness):
    a = harness.agent(Jvm, gc=GcSettings(young_every_s=1.0, young_pause_ms=1.0))
    harness.env.timeout(10.0).callbacks.append(lambda _e: a.stop_the_world(30.0, cause="fault"))
    harness.env.run(until=60)
    got = pauses(harness)
    assert not any(10.0 < t < 40.0 for t, _c, _d in got)
    # the gap that ran out in the long pause starts its collection the moment the pause ends
    assert (40.0, "gc-young") in [(t, c) for t, c, _d in got]


def test_no_collections_when_their_mean_gap_is_zero(harness):
    harness.agent(Jvm, gc=GcSettings())
    harness.env.run(until=600)
    assert pauses(harness) == []


def test_a_gc_storm_pauses_only_within_its_window(harness):
    a = harness.agent(Jvm, gc=GcSettings())
    spec = {"at": 10.0, "duration_s": 30.0, "every_s": 2.0, "pause_s": 0.5, "sigma": 0.5, "label": ""}
    harness.env.timeout(10.0).callbacks.append(lambda _e: a.on_fault("gc_storm", spec))
    harness.env.run(until=100)
    got = pauses(harness)
    assert got and all(10.0 <= t < 40.0 and c == "gc_storm" for t, c, _d in got)


def test_the_gc_table_takes_a_models_defaults_and_the_fault_fields_their_per_kind_ones():
    assert validate({}, gc_table(young_pause_ms=20.0))["young_pause_ms"] == 20.0
    assert GcSettings.of(validate({}, gc_table())) == GcSettings()
    with pytest.raises(TypeError):
        gc_table(young_pauses_ms=1.0)
    entry = {"kind": "gc_storm", **{k: None for k in JVM_FAULT_FIELDS}, "duration_s": None}
    assert complete_jvm_fault(entry) == [("duration_s", "a gc_storm fault needs duration_s"),
                                         ("every_s", "a gc_storm fault needs every_s"),
                                         ("pause_s", "a gc_storm fault needs pause_s")]
    assert entry["sigma"] == 0.5
