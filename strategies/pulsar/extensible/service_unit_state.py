"""``ServiceUnitState``: the ownership states of a bundle under the extensible load manager, and which state
changes are allowed.

Follows ``EXT/channel/ServiceUnitState.java`` (newest; early 3.0 drafts had Free/Owned/Assigned/Released/
Splitting instead). States:

* ``Init`` — no state yet (also what a compacted/tombstoned record reads as);
* ``Free`` — owned by nobody (semi-terminal);
* ``Owned`` — owned by a broker;
* ``Assigning`` — a new owner is being told it owns the bundle;
* ``Releasing`` — the current owner is closing the bundle's topics;
* ``Splitting`` — the bundle is being split (children are being written);
* ``Deleted`` — gone (semi-terminal; tombstoned after
  ``loadBalancerServiceUnitStateTombstoneDelayTimeInSeconds``).

In-flight = {Assigning, Releasing, Splitting}; active = in-flight or Owned.

Allowed transitions depend on where the channel keeps its records (:class:`StorageType`):

======================  =====================================================  ===================
from                    system topic (``SystemTopic``)                         metadata store
======================  =====================================================  ===================
Init                    Free, Owned, Assigning, Releasing, Splitting, Deleted  Assigning
Free                    Assigning, Init                                        Assigning
Owned                   Splitting, Releasing                                   same
Assigning               Owned                                                  same
Releasing               Assigning, Free                                        same
Splitting               Deleted                                                same
Deleted                 Init                                                   same
======================  =====================================================  ===================

The system-topic channel needs Init → anything because topic compaction can drop a record in the middle
of an assign, transfer or split. No state may go to itself.
"""
from __future__ import annotations

from enum import Enum
from typing import Mapping

__all__ = [
    "ACTIVE_STATES",
    "IN_FLIGHT_STATES",
    "ServiceUnitState",
    "StorageType",
    "VALID_TRANSITIONS_OVER_METADATA_STORE",
    "VALID_TRANSITIONS_OVER_SYSTEM_TOPIC",
    "is_active_state",
    "is_in_flight_state",
    "is_valid_transition",
    "valid_transitions",
]


class ServiceUnitState(str, Enum):
    """A bundle's ownership state (names as in Java; ``ServiceUnitState.Owned == "Owned"``)."""

    Init = "Init"
    Free = "Free"
    Owned = "Owned"
    Assigning = "Assigning"
    Releasing = "Releasing"
    Splitting = "Splitting"
    Deleted = "Deleted"

    def __str__(self) -> str:
        return self.value


class StorageType(str, Enum):
    """Where the service-unit state channel stores its records."""

    SystemTopic = "SystemTopic"
    MetadataStore = "MetadataStore"

    def __str__(self) -> str:
        return self.value


_S = ServiceUnitState

#: Allowed next states per state when the channel is a (compacted) system topic.
VALID_TRANSITIONS_OVER_SYSTEM_TOPIC: Mapping[ServiceUnitState, frozenset[ServiceUnitState]] = {
    _S.Init: frozenset({_S.Free, _S.Owned, _S.Assigning, _S.Releasing, _S.Splitting, _S.Deleted}),
    _S.Free: frozenset({_S.Assigning, _S.Init}),
    _S.Owned: frozenset({_S.Splitting, _S.Releasing}),
    _S.Assigning: frozenset({_S.Owned}),
    _S.Releasing: frozenset({_S.Assigning, _S.Free}),
    _S.Splitting: frozenset({_S.Deleted}),
    _S.Deleted: frozenset({_S.Init}),
}

#: Allowed next states per state when the channel is the metadata store.
VALID_TRANSITIONS_OVER_METADATA_STORE: Mapping[ServiceUnitState, frozenset[ServiceUnitState]] = {
    _S.Init: frozenset({_S.Assigning}),
    _S.Free: frozenset({_S.Assigning}),
    _S.Owned: frozenset({_S.Splitting, _S.Releasing}),
    _S.Assigning: frozenset({_S.Owned}),
    _S.Releasing: frozenset({_S.Assigning, _S.Free}),
    _S.Splitting: frozenset({_S.Deleted}),
    _S.Deleted: frozenset({_S.Init}),
}

#: States of a bundle that is moving: a lookup waits for them to settle.
IN_FLIGHT_STATES: frozenset[ServiceUnitState] = frozenset({_S.Assigning, _S.Releasing, _S.Splitting})
#: In-flight states plus ``Owned``.
ACTIVE_STATES: frozenset[ServiceUnitState] = IN_FLIGHT_STATES | {_S.Owned}


def valid_transitions(
    state: ServiceUnitState | str, storage: StorageType | str
) -> frozenset[ServiceUnitState]:
    """The states ``state`` may move to over ``storage``."""
    table = (
        VALID_TRANSITIONS_OVER_SYSTEM_TOPIC
        if StorageType(storage) is StorageType.SystemTopic
        else VALID_TRANSITIONS_OVER_METADATA_STORE
    )
    return table[ServiceUnitState(state)]


def is_valid_transition(
    from_state: ServiceUnitState | str, to_state: ServiceUnitState | str, storage: StorageType | str
) -> bool:
    """``isValidTransition(from, to, storageType)``. Names are accepted for states and storage
    (``ValueError`` for an unknown one)."""
    return ServiceUnitState(to_state) in valid_transitions(from_state, storage)


def is_in_flight_state(state: ServiceUnitState | str) -> bool:
    """Whether ``state`` is Assigning, Releasing or Splitting."""
    return ServiceUnitState(state) in IN_FLIGHT_STATES


def is_active_state(state: ServiceUnitState | str) -> bool:
    """Whether ``state`` is in flight or Owned."""
    return ServiceUnitState(state) in ACTIVE_STATES
