"""UnloadDecision, Label, Reason: tuple shape, string-valued enums and JSON."""
from __future__ import annotations

from clusteremu.strategies.pulsar.extensible import Label, Reason, UnloadDecision


def test_decision_is_a_four_tuple_equal_to_plain_values():
    decision = UnloadDecision("b1", "t/n/0x0_0x1", "b2", Reason.Underloaded)
    source, bundle, destination, reason = decision
    assert (source, bundle, destination) == ("b1", "t/n/0x0_0x1", "b2")
    assert decision == ("b1", "t/n/0x0_0x1", "b2", "Underloaded")
    assert decision.label is Label.Success and decision.is_transfer
    assert not UnloadDecision("b1", "x", None, Reason.Overloaded).is_transfer


def test_enums_carry_the_java_names():
    assert [r.value for r in Reason] == [
        "Overloaded", "Underloaded", "Admin", "NoBundles", "CoolDown", "OutDatedData", "NoLoadData", "NoBrokers",
        "HitCount", "Unknown",
    ]
    assert str(Label.Skip) == "Skip" and Reason("CoolDown") is Reason.CoolDown


def test_json_uses_pulsars_unload_field_names():
    assert UnloadDecision("b1", "x", None, Reason.Overloaded).to_json() == {
        "sourceBroker": "b1", "serviceUnit": "x", "destBroker": None, "label": "Success", "reason": "Overloaded",
    }
