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

_INT_MIN, _INT_MAX = -(2 ** 31), 2 ** 31 - 1


def sort_mq_all(mq_all: Iterable[MessageQueue]) -> list[MessageQueue]:
    """Queues in ``MessageQueue.compareTo`` order (topic, brokerName, queueId); stable, as Java's sort.

    The last step of the comparator is Java's wrapping ``int`` subtraction: when queue ids lie 2^31 or more apart
    (or outside ``int``), they compare as it says, with the Java comparator itself (with such a non-transitive
    comparator the result may differ from Java's TimSort in the order it picks). Otherwise the subtraction never
    wraps and the comparator is the order of the key (topic and broker by UTF-16 code unit, id), which sorts the
    same, without a call a pair.
    """
    mqs = list(mq_all)
    ids = [mq.queue_id for mq in mqs]
    if ids and (min(ids) < _INT_MIN or max(ids) > _INT_MAX or max(ids) - min(ids) > _INT_MAX):
        return sorted(mqs, key=functools.cmp_to_key(MessageQueue.compare_to))
    return sorted(mqs, key=lambda mq: (string_compare_key(mq.topic), string_compare_key(mq.broker_name),
                                       mq.queue_id))


def sort_cid_all(cid_all: Iterable[str]) -> list[str]:
    """Client ids in ``String.compareTo`` order: by UTF-16 code unit, so ``"CID_10" < "CID_2"`` and ``"B" < "a"``."""
    return sorted(cid_all, key=string_compare_key)
