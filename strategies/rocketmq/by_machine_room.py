"""``AllocateMessageQueueByMachineRoom`` ("MACHINE_ROOM"): only queues of brokers named ``<idc>@<name>`` whose idc is
in ``consumeridcs`` are shared out; the remainder is dealt one each from the tail.

Holds :class:`AllocateMessageQueueByMachineRoom`.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from clusteremu.base.java import string_split
from .message_queue import MessageQueue
from .strategy import AllocateMessageQueueStrategy, check

__all__ = ["AllocateMessageQueueByMachineRoom"]


class AllocateMessageQueueByMachineRoom(AllocateMessageQueueStrategy):
    """Client ``i`` of ``c`` takes ``pre[i*m : i*m+m]`` with ``m = len(pre) // c``, plus ``pre[i + m*c]`` when
    ``i < len(pre) % c`` — unlike AVG, whose extra queues are part of contiguous blocks.

    ``pre`` keeps the ``mq_all`` queues whose broker name splits on ``@`` (Java ``String.split``, trailing empty
    parts dropped) into exactly two parts, the first being in ``consumeridcs``. So ``"room1@b"`` and ``"room1@b@"``
    match room1, ``"room1@b@c"`` and names without ``@`` never match.
    """

    def __init__(self, consumeridcs: Iterable[str]) -> None:
        self.consumeridcs: frozenset[str] = frozenset(consumeridcs)

    @property
    def name(self) -> str:
        return "MACHINE_ROOM"

    def allocate(
        self,
        consumer_group: str,
        current_cid: str | None,
        mq_all: Sequence[MessageQueue] | None,
        cid_all: Sequence[str] | None,
    ) -> list[MessageQueue]:
        if not check(current_cid, mq_all, cid_all):
            return []
        assert mq_all is not None and cid_all is not None
        index = list(cid_all).index(current_cid)
        pre = []
        for mq in mq_all:
            parts = string_split(mq.broker_name, "@")
            if len(parts) == 2 and parts[0] in self.consumeridcs:
                pre.append(mq)
        c = len(cid_all)
        mod, rem = len(pre) // c, len(pre) % c
        result = pre[mod * index: mod * index + mod]
        if rem > index:
            result.append(pre[index + mod * c])
        return result
