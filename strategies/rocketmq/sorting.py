"""The sorting ``RebalanceImpl.rebalanceByTopic`` applies before calling a strategy: ``Collections.sort(mqAll)``
and ``Collections.sort(cidAll)``.

Holds :func:`sort_mq_all` and :func:`sort_cid_all`.
"""
from __future__ import annotations

import functools
from typing import Iterable

from clusteremu.base.java import string_compare_key
from .message_queue import MessageQueue

__all__ = ["sort_cid_all", "sort_mq_all"]


def sort_mq_all(mq_all: Iterable[MessageQueue]) -> list[MessageQueue]:
    """Queues in ``MessageQueue.compareTo`` order (topic, brokerName, queueId); stable, as Java's sort.

    Uses the Java comparator itself, so queue ids more than 2^31 apart compare as Java's wrapping subtraction
    says; with such a non-transitive comparator the result may differ from Java's TimSort in the order it picks.
    """
    return sorted(mq_all, key=functools.cmp_to_key(MessageQueue.compare_to))


def sort_cid_all(cid_all: Iterable[str]) -> list[str]:
    """Client ids in ``String.compareTo`` order: by UTF-16 code unit, so ``"CID_10" < "CID_2"`` and ``"B" < "a"``."""
    return sorted(cid_all, key=string_compare_key)
