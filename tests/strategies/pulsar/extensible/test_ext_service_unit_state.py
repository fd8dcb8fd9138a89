"""ServiceUnitState: every (from, to) pair over both storage kinds, in-flight and active states."""
from __future__ import annotations

import itertools

import pytest

from clusteremu.strategies.pulsar.extensible import (
    ServiceUnitState as S,
    StorageType,
    is_active_state,
    is_in_flight_state,
    is_valid_transition,
)

ALLOWED_SYSTEM_TOPIC = {
    ("Init", "Free"), ("Init", "Owned"), ("Init", "Assigning"), ("Init", "Releasing"), ("Init", "Splitting"),
    ("Init", "Deleted"),
    ("Free", "Assigning"), ("Free", "Init"),
    ("Owned", "Splitting"), ("Owned", "Releasing"),
    ("Assigning", "Owned"),
    ("Releasing", "Assigning"), ("Releasing", "Free"),
    ("Splitting", "Deleted"),
    ("Deleted", "Init"),
}
ALLOWED_METADATA_STORE = {
    ("Init", "Assigning"),
    ("Free", "Assigning"),
    ("Owned", "Splitting"), ("Owned", "Releasing"),
    ("Assigning", "Owned"),
    ("Releasing", "Assigning"), ("Releasing", "Free"),
    ("Splitting", "Deleted"),
    ("Deleted", "Init"),
}
NAMES = ["Init", "Free", "Owned", "Assigning", "Releasing", "Splitting", "Deleted"]


def test_the_seven_states_in_java_order():
    assert [s.value for s in S] == NAMES


@pytest.mark.parametrize(
    "storage, allowed",
    [(StorageType.SystemTopic, ALLOWED_SYSTEM_TOPIC), (StorageType.MetadataStore, ALLOWED_METADATA_STORE)],
)
@pytest.mark.parametrize("pair", list(itertools.product(NAMES, NAMES)))
def test_every_transition(storage, allowed, pair):
    from_state, to_state = pair
    expected = pair in allowed
    assert is_valid_transition(S(from_state), S(to_state), storage) is expected
    assert is_valid_transition(from_state, to_state, storage.value) is expected  # names work too


def test_no_state_goes_to_itself():
    for state, storage in itertools.product(S, StorageType):
        assert not is_valid_transition(state, state, storage)


def test_in_flight_and_active_states():
    assert {s.value for s in S if is_in_flight_state(s)} == {"Assigning", "Releasing", "Splitting"}
    assert {s.value for s in S if is_active_state(s)} == {"Owned", "Assigning", "Releasing", "Splitting"}


def test_unknown_names_are_rejected():
    with pytest.raises(ValueError):
        is_valid_transition("Assigned", "Owned", "SystemTopic")
    with pytest.raises(ValueError):
        is_valid_transition("Free", "Assigning", "Zookeeper")
