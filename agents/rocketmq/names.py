"""Names shared by the RocketMQ agents and the trace: agents, queues and client ids.

Components:

* :data:`NAMESRV`: the name server's agent name;
* :func:`broker_name` / :func:`broker_names`: ``broker-a``, ``broker-b``, ... (RocketMQ's ``brokerName``; the
  agent has the same name);
* :func:`consumer_names`: ``consumer-1``, ``consumer-2``, ...;
* :func:`queue_key` / :func:`parse_queue_key`: the text of a ``MessageQueue`` in the trace,
  ``"<topic>/<brokerName>/<queueId>"`` (queue id -1: every queue of that broker, a POP assignment);
* :func:`client_ip` / :func:`client_id`: RocketMQ's ``clientId``, ``<ip>@<instanceName>``, where the default
  instance name becomes the process id (``changeInstanceNameToPID``), so that a restarted consumer has a new id;
* :func:`heartbeat_lease_key`: the name of a client's heartbeat lease with one broker
  (``workload.heartbeats = "lease"``), which the broker reads back to know the channel's last heartbeat;
  :func:`persist_lease_key`: that of its offset persists to one broker (``workload.persist_offsets = "lease"``).
"""
from __future__ import annotations

import re

from clusteremu.strategies.rocketmq import MessageQueue

__all__ = ["BROKER_NAME", "CONSUMER_NAME", "NAMESRV", "broker_name", "broker_names", "client_id", "client_ip",
           "consumer_index", "consumer_names", "heartbeat_lease_key", "parse_queue_key", "persist_lease_key",
           "queue_key", "queue_of"]

NAMESRV = "namesrv"
BROKER_NAME = re.compile(r"broker-[a-z]+")
CONSUMER_NAME = re.compile(r"consumer-[1-9][0-9]*")


def broker_name(i: int) -> str:
    """The i-th broker's name (0-based): broker-a .. broker-z, broker-aa, ..."""
    letters = ""
    n = i + 1
    while n > 0:
        n, r = divmod(n - 1, 26)
        letters = chr(ord("a") + r) + letters
    return f"broker-{letters}"


def broker_names(n: int) -> list[str]:
    return [broker_name(i) for i in range(n)]


def consumer_names(n: int) -> list[str]:
    return [f"consumer-{i + 1}" for i in range(n)]


def consumer_index(name: str) -> int:
    """consumer-7 -> 7 (the order of a rolling restart, and the host part of its address)."""
    return int(name.rsplit("-", 1)[1])


def queue_key(topic: str, broker: str, queue_id: int) -> str:
    return f"{topic}/{broker}/{queue_id}"


def queue_of(mq: MessageQueue) -> str:
    return queue_key(mq.topic, mq.broker_name, mq.queue_id)


def parse_queue_key(key: str) -> MessageQueue:
    topic, broker, qid = key.rsplit("/", 2)
    return MessageQueue(topic, broker, int(qid))


def client_ip(name: str) -> str:
    """The consumer's host address: 10.0.<i div 250>.<i mod 250 + 1>."""
    i = consumer_index(name) - 1
    return f"10.0.{i // 250}.{i % 250 + 1}"


def client_id(name: str, pid: int, room: str = "") -> str:
    """``MQClientInstance``'s client id: ``ip@pid`` (the default instance name is replaced by the pid); in a machine
    room, ``ip@<room>#pid`` (a room-aware deployment puts the room in the instance name, where its
    MachineRoomResolver reads it)."""
    return f"{client_ip(name)}@{pid}" if not room else f"{client_ip(name)}@{room}#{pid}"


def heartbeat_lease_key(cid: str, broker: str) -> str:
    """The heartbeat lease of client ``cid`` with ``broker``: one per channel (a restarted client, a new id, has a
    new lease, so it never keeps its former channel alive)."""
    return f"HEARTBEAT {cid} {broker}"


def persist_lease_key(cid: str, broker: str) -> str:
    """The lease of client ``cid``'s offset persists to ``broker`` (one per client id and broker, as its
    heartbeat lease)."""
    return f"PERSIST {cid} {broker}"
