"""``AllocateMessageQueueConsistentHash`` ("CONSISTENT_HASH"): each queue goes to the client owning the first virtual
node after the queue's MD5 hash on a ring of ``virtualNodeCnt`` virtual nodes per client.

Holds :class:`AllocateMessageQueueConsistentHash`.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from clusteremu.base.java import INT_MAX, INT_MIN
from .errors import AllocationArgumentError
from .hash_ring import ConsistentHashRouter
from .message_queue import MessageQueue
from .strategy import AllocateMessageQueueStrategy, check

__all__ = ["AllocateMessageQueueConsistentHash", "DEFAULT_VIRTUAL_NODE_CNT"]

DEFAULT_VIRTUAL_NODE_CNT = 10
"""What the no-argument Java constructor uses."""


@lru_cache(maxsize=64)  # every client of a group builds the same ring from the same cidAll
def _router(cid_all: tuple[str, ...], virtual_node_cnt: int) -> ConsistentHashRouter:
    return ConsistentHashRouter(cid_all, virtual_node_cnt)


class AllocateMessageQueueConsistentHash(AllocateMessageQueueStrategy):
    """Consistent hashing with the default MD5 hash. There is no balance guarantee (a client may get nothing);
    ``virtual_node_cnt=0`` is accepted, as in Java, and leaves the ring empty so nobody gets anything.

    Queues are hashed by their Java ``toString()`` (``"MessageQueue [topic=T, brokerName=B, queueId=0]"``) and kept
    in ``mq_all`` order.
    """

    def __init__(self, virtual_node_cnt: int = DEFAULT_VIRTUAL_NODE_CNT) -> None:
        if isinstance(virtual_node_cnt, bool) or not isinstance(virtual_node_cnt, int):
            raise TypeError(f"virtualNodeCnt must be an int, got {virtual_node_cnt!r}")
        if not INT_MIN <= virtual_node_cnt <= INT_MAX:
            raise ValueError(f"virtualNodeCnt {virtual_node_cnt} does not fit a Java int")
        if virtual_node_cnt < 0:
            raise AllocationArgumentError(f"illegal virtualNodeCnt :{virtual_node_cnt}", "virtualNodeCnt")
        self.virtual_node_cnt = virtual_node_cnt

    @property
    def name(self) -> str:
        return "CONSISTENT_HASH"

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
        router = _router(tuple(cid_all), self.virtual_node_cnt)
        return [mq for mq in mq_all if router.route_node(mq.java_string()) == current_cid]
