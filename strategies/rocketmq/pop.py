"""RocketMQ 5's POP-mode allocation (``QueryAssignmentProcessor.allocate4Pop`` on the broker, RIP-19).

Holds :func:`allocate4pop` and :data:`ALL_QUEUES_ID`.
"""
from __future__ import annotations

from typing import Sequence

from clusteremu.base.java import is_blank
from .errors import AllocationArgumentError
from .message_queue import MessageQueue
from .strategy import AllocateMessageQueueStrategy

__all__ = ["ALL_QUEUES_ID", "allocate4pop"]

ALL_QUEUES_ID = -1
"""Queue id of a POP assignment that stands for every queue of its broker."""


def _null(argument: str) -> AllocationArgumentError:
    return AllocationArgumentError(f"{argument} is null (allocate4Pop throws NullPointerException)", argument)


def allocate4pop(
    strategy: AllocateMessageQueueStrategy,
    consumer_group: str,
    client_id: str | None,
    mq_all: Sequence[MessageQueue] | None,
    cid_all: Sequence[str] | None,
    pop_share_queue_num: int,
) -> list[MessageQueue]:
    """What the broker assigns ``client_id`` in POP mode, in the order ``allocate4Pop`` builds the list.

    * ``pop_share_queue_num <= 0`` or ``>= len(cid_all) - 1``: one ``(topic, broker, -1)`` per queue of ``mq_all``,
      duplicates included (a broker with 4 queues appears 4 times; the broker keeps them in a set). No argument
      check at all: a client outside ``cid_all``, an empty ``cid_all`` (null too, when the number is <= 0) or an
      empty ``mq_all`` are all fine.
    * otherwise, if ``len(cid_all) <= len(mq_all)``: the strategy's share for ``client_id``, then the shares of the
      ``pop_share_queue_num`` clients after it in ``cid_all`` (wrapping), one after the other (with a strategy that splits
      the queues, one repeats only if ``cid_all`` lists a client twice); a client outside ``cid_all`` gets only its own (empty) share.
    * otherwise (more clients than queues): ``[mq_all[index % len(mq_all)]]`` after a check like the common one
      but with ``StringUtils.isBlank`` for ``currentCID``; a client outside ``cid_all`` gets nothing.

    With ``AllocateMessageQueueByConfig`` inside, Java's list aliasing is reproduced for one call on a fresh
    strategy: the configured list is appended to itself, so it comes out ``2 ** pop_share_queue_num`` times (the
    broker itself only runs AVG and AVG_BY_CIRCLE). Where Java dereferences a null list, this raises
    :class:`AllocationArgumentError` naming it.
    """
    if pop_share_queue_num <= 0:
        every = True
    else:
        if cid_all is None:
            raise _null("cidAll")
        every = pop_share_queue_num >= len(cid_all) - 1
    if every:
        if mq_all is None:
            raise _null("mqAll")
        return [MessageQueue(mq.topic, mq.broker_name, ALL_QUEUES_ID) for mq in mq_all]

    assert cid_all is not None
    if mq_all is None:
        raise _null("mqAll")
    if len(cid_all) <= len(mq_all):
        result = list(strategy.allocate(consumer_group, client_id, mq_all, cid_all))
        aliased = getattr(strategy, "returns_configured_list", False)
        cids = list(cid_all)
        if client_id in cids:
            index = cids.index(client_id)
            for _ in range(pop_share_queue_num):
                index = (index + 1) % len(cids)
                more = strategy.allocate(consumer_group, cids[index], mq_all, cid_all)
                # Java: allocateResult.addAll(tmp) where, for ByConfig, both are the configured list itself.
                result.extend(list(result) if aliased else more)
        return result
    return _allocate_one(client_id, mq_all, cid_all)


def _allocate_one(client_id: str | None, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]) -> list[MessageQueue]:
    """``QueryAssignmentProcessor.allocate``: one queue per client, ``mq_all[index % len(mq_all)]``."""
    if is_blank(client_id):
        raise AllocationArgumentError("currentCID is empty", "currentCID")
    if not mq_all:
        raise AllocationArgumentError("mqAll is null or mqAll empty", "mqAll")
    if not cid_all:
        raise AllocationArgumentError("cidAll is null or cidAll empty", "cidAll")
    cids = list(cid_all)
    if client_id not in cids:
        return []
    return [mq_all[cids.index(client_id) % len(mq_all)]]
