"""The queues a consumer sees for a topic, derived from its route as the client derives them
(``MQClientInstance.topicRouteData2TopicSubscribeInfo`` and ``PermName.isReadable``).

Holds :class:`QueueData`, :data:`PERM_READ`, :func:`is_readable` and :func:`subscribe_queues`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from clusteremu.base.java import hash_set_order
from .message_queue import MessageQueue

__all__ = ["PERM_READ", "QueueData", "is_readable", "subscribe_queues"]

PERM_READ = 1 << 2
"""``PermName.PERM_READ``."""


@dataclass(frozen=True)
class QueueData:
    """What subscription reads of one ``queueDatas`` entry of a topic route: the broker, its read queue count and
    its permission bits (``writeQueueNums`` and ``topicSysFlag`` play no part)."""

    broker_name: str
    read_queue_nums: int
    perm: int


def is_readable(perm: int) -> bool:
    """``PermName.isReadable``: the read bit (4) is set."""
    return (perm & PERM_READ) == PERM_READ


def subscribe_queues(topic: str, queue_datas: Iterable[QueueData]) -> list[MessageQueue]:
    """The topic's subscribable queues in the iteration order of the ``HashSet`` the client builds.

    Every readable queue data contributes queues ``0 .. readQueueNums-1`` of its broker, whether or not the broker
    appears in ``brokerDatas`` or has a master (unlike the producer's publish info, which needs both); unreadable
    ones contribute nothing, and duplicates collapse. Static topics (``topicQueueMappingByBroker``) are not covered.
    """
    seen: dict[MessageQueue, None] = {}
    for qd in queue_datas:
        if is_readable(qd.perm):
            for i in range(qd.read_queue_nums):
                seen.setdefault(MessageQueue(topic, qd.broker_name, i), None)
    queues = list(seen)
    return hash_set_order(queues, [mq.hash_code() for mq in queues])
