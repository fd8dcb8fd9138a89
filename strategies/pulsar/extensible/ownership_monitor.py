"""The channel owner's ownership monitor (``ServiceUnitStateChannelImpl.monitorOwnerships``) and the clean-up of
an inactive broker's service units (``doCleanup``), as pure decisions over a table view.

Follows the stored ``ServiceUnitStateChannelImpl`` of apache/pulsar (the version with ``brokerId``, multi-phase
transfers and ``LookupOptions``: the channel model follows the newest protocol, see
:mod:`.service_unit_state`). One run of the monitor, given the available brokers:

1. Skipped when there is no available broker, or when the metadata session is not ``Stable`` (a session event
   less than ``MAX_CLEAN_UP_DELAY_TIME_IN_SECS``, 180 s, ago, or the session lost).
2. Each record, in turn (the first rule that applies wins):

   * an active state (in flight or ``Owned``) whose source broker is set and not available → that broker is
     *inactive*;
   * an active state whose destination broker is set and not available → that broker is inactive;
   * an in-flight state older than ``loadBalancerInFlightServiceUnitStateWaitingTimeInMillis`` (strictly) → an
     *orphan*;
   * a semi-terminal state (``Free``, ``Deleted``, ``Init``) older than
     ``loadBalancerServiceUnitStateTombstoneDelayTimeInSeconds`` → *tombstoned*.

3. When any broker is inactive, its clean-up runs (``handleBrokerDeletionEvent``) and the orphans are left for a
   later run ("a bigger problem"); otherwise each orphan is overridden (``getOverrideInFlightStateData``):

   * ``Assigning`` → *roll forward*: ``Owned`` by a broker selected without the stuck destination (no source);
   * ``Releasing`` → *roll back* to ``Owned`` by the source when the source is available, else roll forward
     without the source;
   * ``Splitting`` → the same ``Splitting`` record again (forced), so the split handler retries;
   * a roll forward with no broker to select is not published: the orphan is retried by the next run.

The clean-up of an inactive broker (``doCleanup``) overrides every record whose destination is that broker in an
active state, or whose source is that broker in flight: ``Owned`` by a broker selected without it (the inactive
broker kept as the source), ``Splitting`` with the selected broker as the source, or ``Free`` (source: the
inactive broker) when no broker can be selected. The channel owner schedules that clean-up
(``handleBrokerDeletionEvent`` → ``scheduleCleanup``) when the registry reports a broker gone and when the monitor
finds an inactive one, after :func:`cleanup_delay`: at once when the metadata state is ``Stable``, after
``MAX_CLEAN_UP_DELAY_TIME_IN_SECS`` when ``Jittery``, not at all when ``Unstable``. :func:`cleanup_overrides` is
the clean-up's whole decision; it does not depend on which broker runs it (a job outlives its broker's role as
channel owner, and ``doCleanup`` does not check the role).

Every override is published *forced*: the channel accepts it whatever the current state (the transition table
is not checked). Times are epoch milliseconds; ``select(bundle, excluded)`` is the load manager's ``selectAsync``
with one broker excluded (None when no broker fits).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Callable, Iterable, Mapping

from .service_unit_state import ServiceUnitState, is_active_state, is_in_flight_state

__all__ = [
    "MAX_CLEAN_UP_DELAY_TIME_IN_SECS",
    "MIN_CLEAN_UP_DELAY_TIME_IN_SECS",
    "MetadataState",
    "MonitorResult",
    "Override",
    "StateData",
    "cleanup_delay",
    "cleanup_overrides",
    "cleanup_targets",
    "metadata_state",
    "monitor_ownerships",
    "override_in_flight",
    "override_inactive_broker",
]

_S = ServiceUnitState

#: ``ServiceUnitStateChannelImpl.MAX_CLEAN_UP_DELAY_TIME_IN_SECS``: how long after a session event the metadata
#: state stays ``Jittery`` (and an inactive broker's clean-up is delayed by)
MAX_CLEAN_UP_DELAY_TIME_IN_SECS = 180
#: ``MIN_CLEAN_UP_DELAY_TIME_IN_SECS``: the clean-up delay while the metadata state is ``Stable`` (at once)
MIN_CLEAN_UP_DELAY_TIME_IN_SECS = 0

Select = Callable[[str, str], "str | None"]


class MetadataState(str, Enum):
    """``ServiceUnitStateChannelImpl.MetadataState``: how trustworthy the registry is right now."""

    Stable = "Stable"
    Jittery = "Jittery"
    Unstable = "Unstable"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class StateData:
    """What the monitor reads of one channel record (``ServiceUnitStateData``); ``""`` for an unset broker."""

    state: ServiceUnitState
    dst: str
    src: str
    timestamp: int


@dataclass(frozen=True)
class Override:
    """A forced record to publish for ``bundle``. ``action``: ``roll_forward``, ``rollback``, ``splitting``
    (in-flight orphans) or ``inactive_broker`` (an inactive broker's clean-up)."""

    bundle: str
    state: ServiceUnitState
    dst: str
    src: str
    action: str


@dataclass(frozen=True)
class MonitorResult:
    """One monitor run. ``skipped``: ``""``, ``no_brokers`` or ``metadata_<state>``; ``failed``: orphans whose
    override found no broker (retried next run)."""

    skipped: str = ""
    inactive_brokers: tuple[str, ...] = ()
    orphans: tuple[str, ...] = ()
    overrides: tuple[Override, ...] = ()
    failed: tuple[str, ...] = ()
    tombstones: tuple[str, ...] = ()


def metadata_state(session_lost: bool, last_event_ms: int, now_ms: int) -> MetadataState:
    """``getMetadataState``: ``Unstable`` while the session is lost; after it is re-established, ``Jittery`` for
    ``MAX_CLEAN_UP_DELAY_TIME_IN_SECS`` (strictly more is ``Stable``). A broker that never saw a session event
    has ``last_event_ms`` 0."""
    if session_lost:
        return MetadataState.Unstable
    if now_ms - last_event_ms > 1000 * MAX_CLEAN_UP_DELAY_TIME_IN_SECS:
        return MetadataState.Stable
    return MetadataState.Jittery


def cleanup_delay(metadata: MetadataState) -> int | None:
    """``handleBrokerDeletionEvent``: the delay in seconds before an inactive broker's clean-up runs, or None
    when the metadata state is ``Unstable`` (the clean-up is not scheduled: the registry is not trusted)."""
    if metadata is MetadataState.Stable:
        return MIN_CLEAN_UP_DELAY_TIME_IN_SECS
    if metadata is MetadataState.Jittery:
        return MAX_CLEAN_UP_DELAY_TIME_IN_SECS
    return None


def override_in_flight(bundle: str, data: StateData, available: Iterable[str], select: Select) -> Override | None:
    """``getOverrideInFlightStateData`` for one orphan (None: no broker to roll forward to)."""
    if data.state is _S.Assigning:
        return _roll_forward(bundle, data.dst, select)
    if data.state is _S.Splitting:
        return Override(bundle, _S.Splitting, data.dst, data.src, "splitting")
    if data.state is _S.Releasing:
        if data.src in set(available):
            return Override(bundle, _S.Owned, data.src, "", "rollback")
        return _roll_forward(bundle, data.src, select)
    raise ValueError(f"{bundle}: {data.state} is not an in-flight state")


def _roll_forward(bundle: str, excluded: str, select: Select) -> Override | None:
    selected = select(bundle, excluded)
    return None if selected is None else Override(bundle, _S.Owned, selected, "", "roll_forward")


def monitor_ownerships(records: Mapping[str, StateData], available_brokers: Iterable[str], now_ms: int,
                       select: Select, in_flight_waiting_ms: int, tombstone_delay_ms: int,
                       metadata: MetadataState = MetadataState.Stable) -> MonitorResult:
    """One run of ``monitorOwnerships`` (see the module docstring); records are read in bundle order."""
    active = set(available_brokers)
    if not active:
        return MonitorResult(skipped="no_brokers")
    if metadata is not MetadataState.Stable:
        return MonitorResult(skipped=f"metadata_{metadata.value.lower()}")
    inactive: set[str] = set()
    orphans: list[str] = []
    tombstones: list[str] = []
    for bundle, data in sorted(records.items()):
        state = data.state
        if is_active_state(state) and data.src and data.src not in active:
            inactive.add(data.src)
        elif is_active_state(state) and data.dst and data.dst not in active:
            inactive.add(data.dst)
        elif is_in_flight_state(state) and now_ms - data.timestamp > in_flight_waiting_ms:
            orphans.append(bundle)
        elif not is_active_state(state) and now_ms - data.timestamp > tombstone_delay_ms:
            tombstones.append(bundle)
    if inactive:
        return MonitorResult(inactive_brokers=tuple(sorted(inactive)), orphans=tuple(orphans),
                             tombstones=tuple(tombstones))
    overrides: list[Override] = []
    failed: list[str] = []
    for bundle in orphans:
        o = override_in_flight(bundle, records[bundle], active, select)
        if o is None:
            failed.append(bundle)
        else:
            overrides.append(o)
    return MonitorResult(orphans=tuple(orphans), overrides=tuple(overrides), failed=tuple(failed),
                         tombstones=tuple(tombstones))


def cleanup_targets(records: Mapping[str, StateData], broker: str) -> list[str]:
    """The bundles ``doCleanup(broker)`` overrides, in bundle order: ``broker`` is the destination of an active
    state, or the source of an in-flight one."""
    return [bundle for bundle, d in sorted(records.items())
            if (d.dst == broker and is_active_state(d.state)) or (d.src == broker and is_in_flight_state(d.state))]


def cleanup_overrides(records: Mapping[str, StateData], broker: str, select: Select) -> list[Override]:
    """``doCleanup(broker)``'s decisions: for each of :func:`cleanup_targets`, in bundle order, the forced record
    of :func:`override_inactive_broker` given the broker ``select`` picks without ``broker``."""
    return [override_inactive_broker(bundle, records[bundle], broker, select(bundle, broker))
            for bundle in cleanup_targets(records, broker)]


def override_inactive_broker(bundle: str, data: StateData, broker: str, selected: str | None) -> Override:
    """``getOverrideInactiveBrokerStateData``: the forced record replacing ``data`` of inactive ``broker``,
    given the broker selected without it (None when none could be)."""
    if selected is None:
        return Override(bundle, _S.Free, "", broker, "inactive_broker")
    if data.state is _S.Splitting:
        return Override(bundle, _S.Splitting, data.dst, selected, "inactive_broker")
    return Override(bundle, _S.Owned, selected, broker, "inactive_broker")
