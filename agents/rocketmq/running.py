"""A running start (``cluster.start = "running"``): the run begins with the cluster already running and every
consumer group settled, instead of RocketMQ's start-up (each consumer's first heartbeats registering it at every
broker of its topic, the notifications, and the rebalance storm they cause).

Components: :data:`STARTS`, :func:`running_state` (what the model passes to the agents), :func:`initial_client_id`
and :func:`group_client_ids` (the client ids of the initial consumers, which brokers and consumers compute alike).

What holds at t = 0, each agent setting up its own part from the same :func:`running_state`:

* the name server holds every initial broker's route (its ``broker_route_registered`` at 0);
* each initial broker holds a channel of every initial consumer of each group whose topic it serves, registered
  in consumer-number order (``consumer_registered`` at 0, versions 1..n; nothing is notified: nobody joined now),
  each last heard at 0, and the group's committed offset of each of its queues: the queue's max offset then,
  which is 0 (the model's queues fill from their broker's start);
* each initial consumer holds its topic's route (``route_updated`` at 0), the group's client-id list as every
  broker of its topic holds it, and exactly the queues the configured strategy allocates to it from that sorted
  view (a ``rebalance_result`` with trigger ``running`` naming that view, and a ``queue_taken`` per queue from the
  committed offset: caught up), so that every queue has one owner and every consumer's view is the same;
* its client timers (route poll, heartbeat, offset persist, GC) start at its start jitter, the phase they would
  have had from a cold start at that time, so that they do not all fire at once; its first heartbeat finds its
  channels registered already (no notification). Its rebalance service runs in step with its group's: the
  group's last membership change woke every member's ``RebalanceService`` together and each waits
  ``waitInterval`` after its rebalance from then on, so the group has one phase (drawn per group) and each member
  lags it by a millisecond or two (the notification's delivery and its own rebalance), as in a cold-started group
  once its start-up has settled.

Consumers added later (``scale_out``), restarted ones and joining brokers start cold, as real new ones do.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping, Sequence

from clusteremu.emulator.rng import keyed_rng

from .names import client_id

__all__ = ["COLD", "RUNNING", "STARTS", "group_client_ids", "initial_client_id", "running_state"]

COLD = "cold"
RUNNING = "running"
#: ``cluster.start``: RocketMQ's own start-up, or a cluster already running with settled groups
STARTS = (COLD, RUNNING)
#: the key of the consumer's rng that draws its pid at its n-th start (its client id's instance name)
PID_KEY = "pid-{}"


def initial_client_id(seed: int, consumer: str, room: str) -> str:
    """The client id ``consumer`` takes at its first start under run ``seed`` (the pid it draws then)."""
    pid = int(keyed_rng(seed, consumer, PID_KEY.format(1)).integers(1000, 100_000))
    return client_id(consumer, pid, room)


@lru_cache(maxsize=1024)
def _client_ids(seed: int, members: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    return tuple(initial_client_id(seed, name, room) for name, room in members)


def group_client_ids(seed: int, members: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """The client ids of a group's initial consumers (``[name, room]`` pairs), in registration order; computed
    once per process and group (every consumer of the group and every broker of its topic asks)."""
    return _client_ids(seed, tuple((name, room) for name, room in members))


def running_state(groups: Mapping[str, Sequence[str]], topics: Mapping[str, str],
                  queues: Mapping[str, Mapping[str, int]], consumer_room: Mapping[str, str],
                  broker_room: Mapping[str, str], rate_per_queue: float, perm: int) -> dict[str, Any]:
    """What a running start holds, msgpack-safe: ``groups`` (group -> its initial consumers in number order, as
    ``[name, room]``), ``topics`` (group -> topic), ``routes`` (topic -> ``{"brokers", "queue_datas"}`` as the
    name server answers them: broker names sorted, ``[broker, readQueueNums, perm]`` rows), ``rooms`` (initial
    broker -> room) and ``rate_per_queue``. ``queues`` is topic -> {initial broker -> its queues of the topic}."""
    routes = {}
    for topic, by_broker in queues.items():
        names = sorted(by_broker)
        routes[topic] = {"brokers": names, "queue_datas": [[b, by_broker[b], perm] for b in names]}
    return {
        "groups": {g: [[c, consumer_room[c]] for c in members] for g, members in groups.items()},
        "topics": dict(topics),
        "routes": routes,
        "rooms": {b: broker_room[b] for by in queues.values() for b in by},
        "rate_per_queue": float(rate_per_queue),
    }
