"""The ownership monitor's decisions (``monitorOwnerships``, ``getOverrideInFlightStateData``, ``doCleanup``),
as cases drawn from Pulsar's ServiceUnitStateChannelTest (the orphan and inactive-broker override tests, the
in-flight "monitor update state" checks) and the rules of ServiceUnitStateChannelImpl, written as data."""
from __future__ import annotations

import pytest

from clusteremu.strategies.pulsar.extensible import ServiceUnitState as S
from clusteremu.strategies.pulsar.extensible.ownership_monitor import (
    MAX_CLEAN_UP_DELAY_TIME_IN_SECS,
    MetadataState,
    Override,
    StateData,
    cleanup_delay,
    cleanup_overrides,
    cleanup_targets,
    metadata_state,
    monitor_ownerships,
    override_in_flight,
    override_inactive_broker,
)

WAIT_MS = 30_000  # loadBalancerInFlightServiceUnitStateWaitingTimeInMillis
TOMBSTONE_MS = 3_600_000  # loadBalancerServiceUnitStateTombstoneDelayTimeInSeconds
NOW = 10_000_000
OLD = NOW - WAIT_MS - 1  # just over the waiting time
FRESH = NOW - WAIT_MS  # exactly the waiting time: not yet an orphan (the test is strict)


def rec(state: str, dst: str = "", src: str = "", at: int = OLD) -> StateData:
    return StateData(S(state), dst, src, at)


def always(broker: str | None):
    """A placement that picks ``broker`` whatever is excluded, recording what it was asked."""
    asked = []

    def select(bundle: str, excluded: str) -> str | None:
        asked.append((bundle, excluded))
        return broker
    select.asked = asked
    return select


def run(records, brokers=("b1", "b2", "b3"), select=None, metadata=MetadataState.Stable):
    return monitor_ownerships(records, brokers, NOW, select or always("b2"), WAIT_MS, TOMBSTONE_MS, metadata)


# -- in-flight overrides (all brokers available) ---------------------------------------------------------------
# (record, available brokers, broker the placement picks, expected override as (state, dst, src, action) or None)
IN_FLIGHT = [
    # Assigning towards a broker that never took it: rolled forward, the stuck destination excluded, no source
    (rec("Assigning", dst="b1"), ("b1", "b2"), "b2", ("Owned", "b2", "", "roll_forward")),
    (rec("Assigning", dst="b1", src="b2"), ("b1", "b2"), "b2", ("Owned", "b2", "", "roll_forward")),
    # Releasing whose source is still available: rolled back to the source, whatever the destination
    (rec("Releasing", dst="b1", src="b2"), ("b1", "b2"), "b1", ("Owned", "b2", "", "rollback")),
    (rec("Releasing", dst="", src="b2"), ("b1", "b2"), "b1", ("Owned", "b2", "", "rollback")),
    # Releasing whose source is not available: rolled forward without the source
    (rec("Releasing", dst="b1", src="gone"), ("b1", "b2"), "b1", ("Owned", "b1", "", "roll_forward")),
    # Splitting: the same split again, forced
    (rec("Splitting", dst="", src="b1"), ("b1", "b2"), "b2", ("Splitting", "", "b1", "splitting")),
    # no broker to roll forward to: nothing published (retried by the next run)
    (rec("Assigning", dst="b1"), ("b1",), None, None),
]


@pytest.mark.parametrize("data, available, picked, expected", IN_FLIGHT)
def test_override_of_an_in_flight_orphan(data, available, picked, expected):
    o = override_in_flight("ns/0x0_0x1", data, available, always(picked))
    assert (None if o is None else (o.state.value, o.dst, o.src, o.action)) == expected


def test_roll_forward_excludes_the_stuck_broker():
    select = always("b2")
    override_in_flight("u", rec("Assigning", dst="b1", src="b3"), ("b1", "b2", "b3"), select)
    override_in_flight("v", rec("Releasing", dst="b1", src="gone"), ("b1", "b2"), select)
    assert select.asked == [("u", "b1"), ("v", "gone")]


@pytest.mark.parametrize("state", ["Owned", "Free", "Deleted", "Init"])
def test_only_in_flight_states_are_overridden(state):
    with pytest.raises(ValueError, match=state):
        override_in_flight("u", rec(state, dst="b1"), ("b1",), always("b1"))


# -- one monitor run ---------------------------------------------------------------------------------------------
def test_in_flight_states_older_than_the_waiting_time_are_orphans():
    records = {
        "ns/assigning-old": rec("Assigning", dst="b1", at=OLD),
        "ns/assigning-fresh": rec("Assigning", dst="b1", at=FRESH),
        "ns/releasing-old": rec("Releasing", dst="b1", src="b3", at=OLD),
        "ns/owned-old": rec("Owned", dst="b1", at=0),
    }
    result = run(records)
    assert result.skipped == "" and result.inactive_brokers == ()
    assert result.orphans == ("ns/assigning-old", "ns/releasing-old")
    assert result.overrides == (Override("ns/assigning-old", S.Owned, "b2", "", "roll_forward"),
                                Override("ns/releasing-old", S.Owned, "b3", "", "rollback"))
    assert result.failed == ()


def test_an_orphan_without_a_broker_to_take_it_is_retried():
    result = run({"ns/a": rec("Assigning", dst="b1")}, brokers=("b1",), select=always(None))
    assert result.orphans == ("ns/a",) and result.overrides == () and result.failed == ("ns/a",)


# The orphan test's table view (ServiceUnitStateChannelTest.testOverrideOrphanStateData), available brokers b1,
# b2, b3: a record naming a broker that is not available makes it inactive; its clean-up runs and the in-flight
# orphans are left for a later run.
ORPHAN_TABLE = {
    "ns/releasing1": rec("Releasing", dst="b1", src="b2"),
    "ns/releasing2": rec("Releasing", dst="b2", src="b3"),
    "ns/splitting": rec("Splitting", dst="", src="b1"),
    "ns/assigning1": rec("Assigning", dst="b1"),
    "ns/assigning2": rec("Assigning", dst="b1", src="b2"),
    "ns/free": rec("Free", src="b1"),
    "ns/deleted": rec("Deleted", src="b1"),
    "ns/owned1": rec("Owned", dst="b1"),
    "ns/owned2": rec("Owned", dst="b1", src="inactive"),  # the source of a finished transfer is gone
    "ns/owned3": rec("Owned", dst="inactive", src="b1"),  # the owner is gone
}


def test_an_inactive_broker_defers_the_orphans_to_its_clean_up():
    result = run(ORPHAN_TABLE)
    assert result.inactive_brokers == ("inactive",)
    assert result.orphans == ("ns/assigning1", "ns/assigning2", "ns/releasing1", "ns/releasing2", "ns/splitting")
    assert result.overrides == () and result.failed == ()
    # the clean-up of the inactive broker: only what it owns or is releasing; the finished transfer stays put
    assert cleanup_targets(ORPHAN_TABLE, "inactive") == ["ns/owned3"]
    assert override_inactive_broker("ns/owned3", ORPHAN_TABLE["ns/owned3"], "inactive", "b2") == \
        Override("ns/owned3", S.Owned, "b2", "inactive", "inactive_broker")


def test_without_the_inactive_broker_every_orphan_is_overridden():
    table = {k: v for k, v in ORPHAN_TABLE.items() if "inactive" not in (v.dst, v.src)}
    result = run(table)
    got = {o.bundle: (o.state.value, o.dst, o.src, o.action) for o in result.overrides}
    assert got == {
        "ns/releasing1": ("Owned", "b2", "", "rollback"),
        "ns/releasing2": ("Owned", "b3", "", "rollback"),
        "ns/splitting": ("Splitting", "", "b1", "splitting"),
        "ns/assigning1": ("Owned", "b2", "", "roll_forward"),
        "ns/assigning2": ("Owned", "b2", "", "roll_forward"),
    }
    assert result.tombstones == ()  # Free and Deleted are younger than the tombstone delay


def test_semi_terminal_states_older_than_the_tombstone_delay_are_tombstoned():
    old = NOW - TOMBSTONE_MS - 1
    records = {"ns/free": rec("Free", src="b1", at=old), "ns/deleted": rec("Deleted", src="b1", at=old),
               "ns/free-young": rec("Free", src="b1", at=NOW - TOMBSTONE_MS), "ns/owned": rec("Owned", dst="b1", at=0)}
    assert run(records).tombstones == ("ns/deleted", "ns/free")


@pytest.mark.parametrize("brokers, metadata, skipped", [
    ((), MetadataState.Stable, "no_brokers"),
    (("b1",), MetadataState.Jittery, "metadata_jittery"),
    (("b1",), MetadataState.Unstable, "metadata_unstable"),
])
def test_a_run_is_skipped_without_brokers_or_a_stable_session(brokers, metadata, skipped):
    result = run({"ns/a": rec("Assigning", dst="gone")}, brokers=brokers, metadata=metadata)
    assert result.skipped == skipped and result.orphans == () and result.inactive_brokers == ()


@pytest.mark.parametrize("lost, since_event_ms, expected", [
    (True, 10**9, MetadataState.Unstable),
    (False, 180_000, MetadataState.Jittery),
    (False, 180_001, MetadataState.Stable),
])
def test_metadata_state(lost, since_event_ms, expected):
    assert metadata_state(lost, NOW - since_event_ms, NOW) is expected


# -- the clean-up of an inactive broker (testOverrideInactiveBrokerStateData) --------------------------------------
INACTIVE_TABLE = {
    "ns/releasing": rec("Releasing", dst="", src="x"),
    "ns/splitting": rec("Splitting", dst="", src="x"),
    "ns/assigning": rec("Assigning", dst="x"),
    "ns/free": rec("Free", src="x"),
    "ns/deleted": rec("Deleted", src="x"),
    "ns/owned": rec("Owned", dst="x"),
    "ns/transferred-away": rec("Owned", dst="b1", src="x"),
    "ns/assigning-from-x": rec("Assigning", dst="b1", src="x"),
}


def test_clean_up_targets_what_the_broker_owns_or_is_moving():
    assert cleanup_targets(INACTIVE_TABLE, "x") == [
        "ns/assigning", "ns/assigning-from-x", "ns/owned", "ns/releasing", "ns/splitting"]


@pytest.mark.parametrize("bundle, selected, expected", [
    ("ns/releasing", "b2", ("Owned", "b2", "x")),
    ("ns/assigning", "b2", ("Owned", "b2", "x")),
    ("ns/owned", "b2", ("Owned", "b2", "x")),
    ("ns/splitting", "b2", ("Splitting", "", "b2")),  # the selected broker finishes the split
    ("ns/owned", None, ("Free", "", "x")),  # nobody to take it
])
def test_clean_up_override(bundle, selected, expected):
    o = override_inactive_broker(bundle, INACTIVE_TABLE[bundle], "x", selected)
    assert (o.state.value, o.dst, o.src, o.action) == (*expected, "inactive_broker")


def test_a_clean_up_selects_without_the_departed_broker_for_each_target_in_turn():
    # doCleanup: every target gets its own selection (selectAsync with the departed broker excluded); a target no
    # broker can take is freed, the others are owned by their selection
    asked = []

    def select(bundle, excluded):
        asked.append((bundle, excluded))
        return None if bundle == "ns/owned" else "b2"

    overrides = cleanup_overrides(INACTIVE_TABLE, "x", select)
    assert asked == [(b, "x") for b in cleanup_targets(INACTIVE_TABLE, "x")]
    assert [(o.bundle, o.state.value, o.dst, o.src) for o in overrides] == [
        ("ns/assigning", "Owned", "b2", "x"), ("ns/assigning-from-x", "Owned", "b2", "x"), ("ns/owned", "Free", "", "x"),
        ("ns/releasing", "Owned", "b2", "x"), ("ns/splitting", "Splitting", "", "b2")]


# handleBrokerDeletionEvent: the delay of a departed broker's clean-up by the channel owner's metadata state
# (ServiceUnitStateChannelTest.handleBrokerDeletionEventTest: Stable cleans at once, Jittery after the maximum
# delay, Unstable is ignored).
@pytest.mark.parametrize("metadata, delay", [
    (MetadataState.Stable, 0),
    (MetadataState.Jittery, 180),
    (MetadataState.Unstable, None),
])
def test_clean_up_delay_by_metadata_state(metadata, delay):
    assert cleanup_delay(metadata) == delay
    assert MAX_CLEAN_UP_DELAY_TIME_IN_SECS == 180
