"""``MessageQueue``: RocketMQ's (topic, brokerName, queueId) triple with Java's ``compareTo``, ``toString`` and
``hashCode``.

Holds :class:`MessageQueue`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from clusteremu.base.java import int_sub, string_compare_to, string_hash_code

__all__ = ["MessageQueue"]


@functools.total_ordering
@dataclass(frozen=True, eq=True, order=False)
class MessageQueue:
    """One queue of a topic on one broker (``org.apache.rocketmq.common.message.MessageQueue``).

    Equality and hashing are by the three fields (as Java's ``equals``). Python comparisons follow
    :meth:`compare_to`, so ``sorted(queues)`` is ``Collections.sort(mqAll)``.
    """

    topic: str
    broker_name: str
    queue_id: int

    def compare_to(self, other: "MessageQueue") -> int:
        """Java ``compareTo``: topic, then brokerName (``String.compareTo``), then ``queueId - o.queueId``.

        The last step is an ``int`` subtraction and wraps for ids more than 2^31 apart, as in Java (such ids make
        the order non-transitive there too).
        """
        result = string_compare_to(self.topic, other.topic)
        if result != 0:
            return result
        result = string_compare_to(self.broker_name, other.broker_name)
        if result != 0:
            return result
        return int_sub(self.queue_id, other.queue_id)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, MessageQueue):
            return NotImplemented
        return self.compare_to(other) < 0

    def java_string(self) -> str:
        """Java ``toString()``; the consistent-hash strategy hashes exactly this text."""
        return f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, queueId={self.queue_id}]"

    def __str__(self) -> str:
        return self.java_string()

    def hash_code(self) -> int:
        """Java ``hashCode()`` (31-based over brokerName, queueId, topic; 32-bit wrap-around)."""
        result = 1
        result = (31 * result + string_hash_code(self.broker_name)) & 0xFFFFFFFF
        result = (31 * result + self.queue_id) & 0xFFFFFFFF
        result = (31 * result + string_hash_code(self.topic)) & 0xFFFFFFFF
        return result - (1 << 32) if result & 0x80000000 else result

    def to_json(self) -> dict[str, Any]:
        """The JSON object RocketMQ's tools print for a queue: ``{"topic", "brokerName", "queueId"}``."""
        return {"topic": self.topic, "brokerName": self.broker_name, "queueId": self.queue_id}
