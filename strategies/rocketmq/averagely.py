"""``AllocateMessageQueueAveragely`` ("AVG"): contiguous blocks, the first ``len(mqAll) % len(cidAll)`` clients
taking one queue more. RocketMQ's default strategy.

Holds :class:`AllocateMessageQueueAveragely`.
"""
from __future__ import annotations

from typing import Sequence

from .message_queue import MessageQueue
from .strategy import AllocateMessageQueueStrategy, check

__all__ = ["AllocateMessageQueueAveragely"]


class AllocateMessageQueueAveragely(AllocateMessageQueueStrategy):
    """Average allocation over the list as given: client ``i`` takes a block starting at ``i*size`` (plus the
    remainder for clients past it). More clients than queues: client ``i < n`` takes queue ``i``, others none.

    4.9.x (and the code quoted in the 4.9.4 article, ``shared/seeds/004_*``) reads ``mqAll.get((startIndex + i) %
    mqAll.size())``; 5.x drops the ``%``. Same result: ``startIndex + i`` never reaches ``mqAll.size()``.
    """

    @property
    def name(self) -> str:
        return "AVG"

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
        n, c = len(mq_all), len(cid_all)
        index = list(cid_all).index(current_cid)
        mod = n % c
        if n <= c:
            average_size = 1
        elif mod > 0 and index < mod:
            average_size = n // c + 1
        else:
            average_size = n // c
        start = index * average_size if (mod > 0 and index < mod) else index * average_size + mod
        # range can be <= 0 (client index past the last queue): Java's loop then runs zero times.
        count = max(0, min(average_size, n - start))
        return [mq_all[start + k] for k in range(count)]
