"""UnloadCounter: the fixed breakdown table, success counting and the JSON state."""
from __future__ import annotations

import pytest

from clusteremu.strategies.pulsar.extensible import Label, Reason, UnloadCounter


def test_breakdown_cells_start_at_zero():
    counter = UnloadCounter()
    assert {label.value: sorted(r.value for r in cells) for label, cells in counter.breakdown_counters.items()} == {
        "Success": ["Admin", "Overloaded", "Underloaded"],
        "Skip": ["CoolDown", "HitCount", "NoBrokers", "NoBundles", "NoLoadData", "OutDatedData", "Unknown"],
        "Failure": ["Unknown"],
    }
    assert all(n == 0 for cells in counter.breakdown_counters.values() for n in cells.values())


def test_updates_and_missing_cells():
    counter = UnloadCounter()
    counter.update(Label.Skip, Reason.HitCount)
    counter.update("Success", "Overloaded")
    assert counter.get("Skip", "HitCount") == 1 and counter.breakdown_counters["Skip"]["HitCount"] == 1
    assert counter.unload_bundle_count == 1
    with pytest.raises(KeyError):
        counter.update(Label.Failure, Reason.CoolDown)
    counter.update_load_data(0.5, 0.1)
    counter.update_unload_broker_count(2)
    assert (counter.load_avg, counter.load_std, counter.unload_broker_count) == (0.5, 0.1, 2)


def test_json_round_trip():
    counter = UnloadCounter()
    counter.update("Skip", "NoBundles")
    counter.update_load_data(0.3, 0.2)
    again = UnloadCounter.from_json(counter.to_json())
    assert again.to_json() == counter.to_json()
    with pytest.raises(KeyError):
        UnloadCounter.from_json({"breakdownCounters": {"Failure": {"HitCount": 1}}})
