"""``AllocateMessageQueueByConfig`` ("CONFIG"): every caller gets the configured queue list.

Holds :class:`AllocateMessageQueueByConfig`.
"""
from __future__ import annotations

from typing import Iterable, Sequence

from .message_queue import MessageQueue
from .strategy import AllocateMessageQueueStrategy

__all__ = ["AllocateMessageQueueByConfig"]


class AllocateMessageQueueByConfig(AllocateMessageQueueStrategy):
    """Returns ``messageQueueList`` as configured, whoever asks: no argument check, no membership test, the
    arguments are not read at all (so even a null ``currentCID``, ``mqAll`` or ``cidAll`` is fine).

    Java hands out its own list object; here each call returns a fresh copy (see :mod:`.pop` for the one place
    where Java's aliasing shows).
    """

    #: Java's ``allocate`` returns the configured list object itself, not a copy.
    returns_configured_list = True

    def __init__(self, message_queue_list: Iterable[MessageQueue]) -> None:
        self.message_queue_list: tuple[MessageQueue, ...] = tuple(message_queue_list)

    @property
    def name(self) -> str:
        return "CONFIG"

    def allocate(
        self,
        consumer_group: str,
        current_cid: str | None,
        mq_all: Sequence[MessageQueue] | None,
        cid_all: Sequence[str] | None,
    ) -> list[MessageQueue]:
        return list(self.message_queue_list)
