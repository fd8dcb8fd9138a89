"""Builders shared by the RocketMQ strategy tests, given as fixtures: ``queues`` (n queues of one broker),
``spread`` (n queues over three brokers, sorted), ``cids`` (c client ids, sorted as Java sorts them),
``allocate_everyone`` (every client's answer over one view) and ``one_owner`` (each queue held exactly once)."""
from __future__ import annotations

from typing import Callable, Sequence

import pytest

from clusteremu.strategies.rocketmq import AllocateMessageQueueStrategy, MessageQueue, sort_cid_all, sort_mq_all


def make_queues(n: int, topic: str = "topic", broker: str = "brokerName") -> list[MessageQueue]:
    return [MessageQueue(topic, broker, i) for i in range(n)]


def spread_queues(n: int, brokers: Sequence[str] = ("broker-a", "broker-b", "broker-c")) -> list[MessageQueue]:
    """``n`` queues dealt over ``brokers``, in RebalanceImpl's sorted order (so blocks cross broker boundaries)."""
    return sort_mq_all(MessageQueue("T", brokers[k % len(brokers)], k // len(brokers)) for k in range(n))


def make_cids(c: int, prefix: str = "CID_") -> list[str]:
    """``c`` client ids in RebalanceImpl's sorted (String) order: CID_0, CID_1, CID_10, CID_11, ..., CID_2, ..."""
    return sort_cid_all(f"{prefix}{i}" for i in range(c))


def allocate_all(strategy: AllocateMessageQueueStrategy, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str], group: str = "G") -> dict[str, list[MessageQueue]]:
    """Every client's answer over one shared view."""
    return {cid: strategy.allocate(group, cid, mq_all, cid_all) for cid in cid_all}


def assert_one_owner_each(result: dict[str, list[MessageQueue]], queues: Sequence[MessageQueue]) -> None:
    """Each of ``queues`` is held by exactly one client and nobody holds anything else."""
    held = [mq for mqs in result.values() for mq in mqs]
    assert sorted(held) == sorted(queues), (len(held), len(queues))


# Test modules are imported with --import-mode=importlib and cannot import this file: they get the helpers as
# fixtures.
@pytest.fixture
def queues() -> Callable[..., list[MessageQueue]]:
    return make_queues


@pytest.fixture
def spread() -> Callable[..., list[MessageQueue]]:
    return spread_queues


@pytest.fixture
def cids() -> Callable[..., list[str]]:
    return make_cids


@pytest.fixture
def allocate_everyone() -> Callable[..., dict[str, list[MessageQueue]]]:
    return allocate_all


@pytest.fixture
def one_owner() -> Callable[..., None]:
    return assert_one_owner_each
