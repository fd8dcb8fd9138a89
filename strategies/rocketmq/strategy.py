"""The allocation-strategy contract and the argument check every RocketMQ strategy but ``ByConfig`` runs first.

Holds :class:`AllocateMessageQueueStrategy` (Java's interface of that name with its abstract base
``AbstractAllocateMessageQueueStrategy``) and :func:`check` (``AbstractAllocateMessageQueueStrategy.check``).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Sequence

from clusteremu.base.java import is_empty
from .errors import AllocationArgumentError
from .message_queue import MessageQueue

__all__ = ["AllocateMessageQueueStrategy", "check"]


def check(current_cid: str | None, mq_all: Sequence[MessageQueue] | None, cid_all: Sequence[str] | None) -> bool:
    """RocketMQ's common check, in its order: raise on an empty ``currentCID``, ``mqAll`` or ``cidAll``
    (null counts as empty); return False (Java logs "[BUG]") when ``currentCID`` is not in ``cidAll``."""
    if is_empty(current_cid):
        raise AllocationArgumentError("currentCID is empty", "currentCID")
    if not mq_all:
        raise AllocationArgumentError("mqAll is null or mqAll empty", "mqAll")
    if not cid_all:
        raise AllocationArgumentError("cidAll is null or cidAll empty", "cidAll")
    return current_cid in cid_all


class AllocateMessageQueueStrategy(ABC):
    """A queue-allocation strategy: each client calls :meth:`allocate` with its own id and the group's view.

    Strategies are pure: the result depends only on the arguments and the constructor's settings.
    """

    @property
    @abstractmethod
    def name(self) -> str:
        """Java ``getName()`` (``"AVG"``, ``"CONSISTENT_HASH"``, ...)."""

    @abstractmethod
    def allocate(
        self,
        consumer_group: str,
        current_cid: str | None,
        mq_all: Sequence[MessageQueue] | None,
        cid_all: Sequence[str] | None,
    ) -> list[MessageQueue]:
        """The queues ``current_cid`` takes, in the order the Java strategy returns them.

        ``mq_all`` and ``cid_all`` are used as given (RebalanceImpl sorts them before the call; see
        :mod:`.sorting`). Raises :class:`~.errors.AllocationArgumentError` where RocketMQ throws.
        """
