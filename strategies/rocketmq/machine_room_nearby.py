"""``AllocateMachineRoomNearby`` ("MACHINE_ROOM_NEARBY-<inner>"): queues are shared among the clients of their own
machine room; queues of rooms without clients are shared among all clients; each share is computed by an inner
strategy.

Holds :class:`AllocateMachineRoomNearby`. Java's ``MachineRoomResolver`` is given here as two mappings:
broker name → room and client id → room (a missing entry is Java's resolver returning null).
"""
from __future__ import annotations

from typing import Mapping, Sequence

from clusteremu.base.java import string_compare_key
from .errors import AllocationArgumentError
from .message_queue import MessageQueue
from .strategy import AllocateMessageQueueStrategy, check

__all__ = ["AllocateMachineRoomNearby"]


class AllocateMachineRoomNearby(AllocateMessageQueueStrategy):
    """Groups ``mq_all`` by broker room and ``cid_all`` by client room (both in list order, rooms in
    ``String.compareTo`` order as Java's ``TreeMap``). The caller first gets ``inner.allocate`` over the queues of
    its own room among the clients of its room, then, room by room in ascending order, ``inner.allocate`` over the
    queues of each room that has no client, among all clients. Clients in a room without brokers get only such
    orphan queues.

    A queue whose broker has no room (or an empty one) raises ``"Machine room is null for mq <queue>"``; a client
    likewise ``"Machine room is null for consumer id <cid>"`` — after the common check, queues first.
    """

    def __init__(
        self,
        inner: AllocateMessageQueueStrategy,
        broker_machine_room: Mapping[str, str | None],
        consumer_machine_room: Mapping[str, str | None],
    ) -> None:
        self.inner = inner
        self.broker_machine_room = dict(broker_machine_room)
        self.consumer_machine_room = dict(consumer_machine_room)

    @property
    def name(self) -> str:
        return "MACHINE_ROOM_NEARBY-" + self.inner.name

    def allocate(
        self,
        consumer_group: str,
        current_cid: str | None,
        mq_all: Sequence[MessageQueue] | None,
        cid_all: Sequence[str] | None,
    ) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        assert mq_all is not None and cid_all is not None and current_cid is not None
        mr2mq: dict[str, list[MessageQueue]] = {}
        for mq in mq_all:
            room = self.broker_machine_room.get(mq.broker_name)
            if not room:  # StringUtils.isNoneEmpty fails on null and ""
                raise AllocationArgumentError(f"Machine room is null for mq {mq.java_string()}", "brokerMachineRoom")
            mr2mq.setdefault(room, []).append(mq)
        mr2c: dict[str, list[str]] = {}
        for cid in cid_all:
            room = self.consumer_machine_room.get(cid)
            if not room:
                raise AllocationArgumentError(f"Machine room is null for consumer id {cid}", "consumerMachineRoom")
            mr2c.setdefault(room, []).append(cid)

        result: list[MessageQueue] = []
        current_room = self.consumer_machine_room[current_cid]  # resolved above: current_cid is in cid_all
        mine = mr2mq.pop(current_room, None)
        if mine:
            result.extend(self.inner.allocate(consumer_group, current_cid, mine, mr2c[current_room]))
        for room in sorted(mr2mq, key=string_compare_key):
            if room not in mr2c:  # no client alive in that room: everybody shares its queues
                result.extend(self.inner.allocate(consumer_group, current_cid, mr2mq[room], cid_all))
        return result
