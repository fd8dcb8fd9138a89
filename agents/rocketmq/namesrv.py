"""The name server (``NamesrvController`` + ``RouteInfoManager``): brokers register their topics' queues, clients
read a topic's route, silent brokers are dropped.

Components: :class:`NameServer` and the event kinds it writes.

* ``REGISTER_BROKER`` (one-way, from a broker at start and every ``registerNameServerPeriod``): the broker's
  queue count for the topic and its last-update time;
* ``UNREGISTER_BROKER`` (graceful broker shutdown): the broker's route goes at once;
* ``GET_ROUTEINFO_BY_TOPIC`` (a call): the topic's ``brokerDatas`` and ``queueDatas``, or no route;
* ``scanNotActiveBroker`` every ``scanNotActiveBrokerInterval``: a broker silent for more than
  ``brokerChannelExpiredTime`` (120 s) is removed (a lost machine; a closed connection would be noticed at once);
* with ``workload.route_poll = "lease"``, the consumers' route polls as kernel poll leases on their topic
  (:mod:`.route_poll`): a change of a topic's route is delivered at each poller's next poll time;
* with ``workload.register_broker = "lease"``, the brokers' periodic registrations as kernel keep-alive leases
  scoped by the broker's name (:mod:`.registration`): a broker's last update is the later of its last
  ``REGISTER_BROKER`` and its lease's last keep-alive, and a beat of a broker whose route is gone is answered
  "expired" (the broker then registers for real).
"""
from __future__ import annotations

from typing import Any

from clusteremu.emulator.jvm import JvmAgent
from clusteremu.emulator.lease import LeaseTable
from clusteremu.emulator.messages import Message
from clusteremu.emulator.trace.kinds import declare

from .config import seconds
from .registration import REGISTER_LEASE_KEY
from .route_poll import changed_topics

__all__ = ["NameServer"]

declare("broker_route_registered",
        "The name server recorded a broker's route for the first time (or again after it was removed): `broker` "
        "(brokerName) serves `queues` read queues in all of the `topics` it registered, in machine room `room` ('' "
        "if none).",
        __name__, broker="str", topics="list", queues="int", room="str")
declare("broker_route_removed",
        "The name server removed a broker's route: `reason` is `expired` (no registration for `silent_s` seconds, "
        "more than brokerChannelExpiredTime) or `unregistered` (graceful shutdown; `silent_s` 0).",
        __name__, broker="str", reason="str", silent_s="float")


class NameServer(JvmAgent):
    """The name server of the cluster (one agent: the model's clients use one name-server address)."""

    kind = "namesrv"
    #: starts of this agent so far (a running start sets up the first one only; a restart starts empty)
    starts = 0

    def on_start(self) -> None:
        p = self.params
        cfg = p["config"]
        self._routes: dict[str, dict[str, Any]] = {}  # brokerName -> {topics: {topic: (queues, perm)}, room, last}
        #: the consumers' route polls as poll leases on their topic (``workload.route_poll = "lease"``) and the
        #: brokers' registrations as keep-alive leases scoped by broker name (``workload.register_broker``)
        self._kept = p["register_broker"] == "lease"
        self.leases = LeaseTable(self, read=self._route, scope_alive=self._routes.__contains__) \
            if p["route_poll"] == "lease" or self._kept else None
        self.starts += 1
        if p["running"] is not None and self.starts == 1:
            self._running_start(p["running"])
        self.executor("NSScheduledThread").schedule_periodic(
            p["timer_mode"], self._scan_not_active_broker, 5.0, seconds(cfg, "scanNotActiveBrokerInterval"),
            name="scanNotActiveBroker")
        self.start_gc(p["gc"])

    def _running_start(self, state: dict[str, Any]) -> None:
        """``cluster.start = "running"`` (:mod:`.running`): every initial broker's route is held already."""
        topics: dict[str, dict[str, tuple[int, int]]] = {}
        for topic, route in state["routes"].items():
            for b, n, perm in route["queue_datas"]:
                topics.setdefault(b, {})[topic] = (n, perm)
        for b in sorted(topics):
            self._routes[b] = {"topics": topics[b], "room": state["rooms"][b], "last": self.now}
            self.emit("broker_route_registered", broker=b, topics=list(topics[b]),
                      queues=sum(n for n, _perm in topics[b].values()), room=state["rooms"][b])

    def on_message(self, msg: Message) -> None:
        body = msg.body
        if msg.kind == "REGISTER_BROKER":
            b = body["broker"]
            old = self._routes.get(b)
            first = old is None
            topics = {t: (n, perm) for t, n, perm in body["topics"]}
            self._routes[b] = {"topics": topics, "room": body["room"], "last": self.now}
            self._changed(None if old is None else old["topics"], topics)
            if first:
                self.emit("broker_route_registered", broker=b, topics=list(topics),
                          queues=sum(n for n, _perm in topics.values()), room=body["room"])
        elif msg.kind == "UNREGISTER_BROKER":
            old = self._routes.pop(body["broker"], None)
            if old is not None:
                self._gone(body["broker"])
                self._changed(old["topics"], None)
                self.emit("broker_route_removed", broker=body["broker"], reason="unregistered", silent_s=0.0)
        elif msg.kind == "GET_ROUTEINFO_BY_TOPIC":
            self.reply(msg, self._route(body["topic"]))

    def _route(self, topic: str) -> dict[str, Any]:
        """``pickupTopicRouteData``: the brokers serving ``topic``, in name order (RocketMQ iterates a map of broker
        names)."""
        names = sorted(b for b, r in self._routes.items() if topic in r["topics"])
        if not names:
            return {"topic": topic, "found": False, "brokers": [], "queue_datas": []}
        return {"topic": topic, "found": True, "brokers": names,
                "queue_datas": [[b, *self._routes[b]["topics"][topic]] for b in names]}

    def _changed(self, before: dict | None, after: dict | None) -> None:
        """A broker's registered topics went from ``before`` to ``after``: the route polls of the topics whose
        route changed get it at their next poll time."""
        if self.leases is not None:
            for topic in changed_topics(before, after):
                self.leases.changed(topic)

    def _last_update(self, broker: str) -> float:
        """The broker's ``BrokerLiveInfo`` last-update time: its last registration, or its lease's keep-alive."""
        last = self._routes[broker]["last"]
        if self._kept:
            kept = self.leases.last(broker, REGISTER_LEASE_KEY)
            if kept is not None and kept > last:
                return kept
        return last

    def _gone(self, broker: str) -> None:
        """The broker's route is gone: so is its registration lease (a later beat of it is answered "expired")."""
        if self._kept:
            self.leases.end_scope(broker)

    def _scan_not_active_broker(self) -> None:
        timeout = seconds(self.params["config"], "brokerChannelExpiredTime")
        for b in sorted(self._routes):
            silent = self.now - self._last_update(b)
            if silent > timeout:
                self._gone(b)
                self._changed(self._routes.pop(b)["topics"], None)
                self.emit("broker_route_removed", broker=b, reason="expired", silent_s=silent)
