"""``AllocateMessageQueueAveragelyByCircle`` ("AVG_BY_CIRCLE"): queue ``k`` goes to client ``k mod len(cidAll)``.

Holds :class:`AllocateMessageQueueAveragelyByCircle`.
"""
from __future__ import annotations

from typing import Sequence

from .message_queue import MessageQueue
from .strategy import AllocateMessageQueueStrategy, check

__all__ = ["AllocateMessageQueueAveragelyByCircle"]


class AllocateMessageQueueAveragelyByCircle(AllocateMessageQueueStrategy):
    """Round-robin dealing: the client at index ``i`` takes queues ``i, i+c, i+2c, ...`` in ascending order."""

    @property
    def name(self) -> str:
        return "AVG_BY_CIRCLE"

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
        return [mq_all[k] for k in range(index, len(mq_all), len(cid_all))]
