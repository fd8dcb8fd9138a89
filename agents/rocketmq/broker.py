"""A broker: the topic's queues it holds, the consumer groups it learns from heartbeats, their committed offsets,
the orderly consumers' queue locks, and RocketMQ 5's broker-side assignment and POP consumption.

Components: :class:`Broker` and the event kinds it writes. The broker's parts, with the real classes they model:

* queues (``ConsumeQueue``): per topic it serves (``topics``: topic -> its consumer group and queue count), that
  many queues whose max offset grows at ``rate_per_queue`` msg/s from the broker's start (messages are a fluid:
  offsets are numbers);
* route registration (``BrokerController.registerBrokerAll``): at start and every ``registerNameServerPeriod``
  to the name server (with ``workload.register_broker = "lease"`` the periodic ones as a kernel lease:
  :mod:`.registration`); ``UNREGISTER_BROKER`` on a graceful stop;
* ``ConsumerManager`` / ``ConsumerGroupInfo``: ``HEARTBEAT`` registers a client id (a new channel: ``CHANGE``),
  ``UNREGISTER_CLIENT`` removes it; ``ClientHousekeepingService`` scans every 10 s (after 10 s) and closes channels
  without a heartbeat for more than ``channelExpiredTimeout`` (removing them itself: no notification), and Netty's
  idle handler closes a channel without any traffic for ``serverChannelMaxIdleTimeSeconds`` (its close event removes
  it and notifies); registrations, unregistrations and close events are sent to the group's remaining channels as
  ``NOTIFY_CONSUMER_IDS_CHANGED`` when ``notifyConsumerIdsChangedEnable`` (``DefaultConsumerIdsChangeListener``):
  at once, or, on a 5.x broker with ``realTimeNotifyConsumerChange = false``, batched: each change (a CHANGE
  event) remembers the group's channels of that moment, replacing what an earlier change of the group remembered,
  and a task of its own executor (``scheduleAtFixedRate``, 30 s after the broker starts, then every 15 s) sends
  the notification to each remembered channel still open and forgets them;
  ``GET_CONSUMER_LIST_BY_GROUP`` answers the group's client ids (with ``workload.cid_lists = "lease"`` it also
  remembers who read the list, and tells each reader every new version: :mod:`.cid_lists`). The trace names each
  list by its *version* on this broker (one more at each registration, unregistration or expiry of the group):
  the events of a change carry the client id that changed, so the list of any version is the replay of the
  group's changes on this broker (:meth:`clusteremu.agents.rocketmq.views.RocketMQViews.cid_list`), written once
  instead of at every use;
* ``ConsumerOffsetManager``: ``UPDATE_CONSUMER_OFFSET`` (one-way) and each ``PULL`` request's commit offsets
  store, ``QUERY_CONSUMER_OFFSET`` reads (-1 if none) with the queue's max offset and the offset at a timestamp
  (``computePullFromWhere`` needs them), and the queue's rate and start (a closed-form consumer's supply); with
  ``workload.persist_offsets = "lease"`` the stored offset is the later of the last real commit and the last
  keep-alive of a persist lease carrying the queue, whose offset the broker computes (:mod:`.persists`);
* ``RebalanceLockManager``: ``LOCK_BATCH_MQ`` / ``UNLOCK_BATCH_MQ`` with a ``rocketmq.broker.rebalance.lockMaxLiveTime``
  lease (60 s);
* ``PULL``: a consumer's batched pull answers each queue's max offset (the fluid's "messages available");
* ``QueryAssignmentProcessor`` (``QUERY_ASSIGNMENT``, 5.x): the broker allocates with its own consumer list and its
  own cached route, AVG and AVG_BY_CIRCLE only. ``TopicRouteInfoManager`` caches the route of a topic from its first
  query on: a query finding nothing cached for its topic asks the name server first (and answers after the reply),
  and a task (``scheduleAtFixedRate``, 1 s after the start, then every ``loadBalancePollNameServerInterval``, 30 s)
  refreshes the cached topics;
* ``PopMessageProcessor`` / ``AckMessageProcessor`` (``POP`` / ``ACK``, 5.x): the broker hands out ranges from
  its pop position (revived ranges first), each invisible for the consumer's invisible time, and revives ranges
  not acked in time;
* ``queue_stats`` every ``stats_interval_s`` of virtual time (an observer, not a broker thread): one record, a row
  per queue with the committed offset and the lag (and the broker's max offset), for lag and orphan analyses.
"""
from __future__ import annotations

import math
from typing import Any, Generator, Iterable

from clusteremu.emulator.executor import FIXED_RATE
from clusteremu.emulator.jvm import JvmAgent
from clusteremu.emulator.lease import LeaseTable
from clusteremu.emulator.messages import Message
from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies.rocketmq import allocate4pop, create, sort_cid_all, sort_mq_all
from clusteremu.strategies.rocketmq.errors import AllocationArgumentError
from clusteremu.strategies.rocketmq.topic_route import QueueData, subscribe_queues

from .cid_lists import CID_LIST_CHANGED
from .config import seconds
from .names import heartbeat_lease_key, parse_queue_key, persist_lease_key, queue_key, queue_of
from .persists import PersistedOffsets
from .registration import Registration, register_period
from .running import group_client_ids

__all__ = ["Broker", "GET_TOPIC_ROUTE_TIMEOUT_S", "NOTIFY_BATCH_INITIAL_S", "NOTIFY_BATCH_PERIOD_S", "PERM_READ_WRITE",
           "QUERY_ASSIGNMENT_STRATEGIES"]

#: ``PermName.PERM_READ | PermName.PERM_WRITE``
PERM_READ_WRITE = 6
#: ``QueryAssignmentProcessor``'s registered strategies (Java ``getName()`` -> registered class)
QUERY_ASSIGNMENT_STRATEGIES = {"AVG": "AllocateMessageQueueAveragely", "AVG_BY_CIRCLE": "AllocateMessageQueueAveragelyByCircle"}
#: ``DefaultConsumerIdsChangeListener``'s batch task (5.x): first run and period, seconds (constants in the code)
NOTIFY_BATCH_INITIAL_S = 30.0
NOTIFY_BATCH_PERIOD_S = 15.0
#: ``TopicRouteInfoManager.GET_TOPIC_ROUTE_TIMEOUT`` (3 000 ms, a constant, not ``mqClientApiTimeout``)
GET_TOPIC_ROUTE_TIMEOUT_S = 3.0

declare("queues_created",
        "A broker started serving `queues` queues (ids 0..queues-1) of the topic `subscription` (consumed by "
        "`group`), named `<subscription>/<broker>/<id>` in `queue` fields; producers append `rate_per_queue` msg/s "
        "to each; machine room `room` ('' if none). One event per topic the broker serves.",
        __name__, broker="str", subscription="str", group="str", queues="int", rate_per_queue="float", room="str")
declare("consumer_registered",
        "The broker registered a new consumer channel of `group` from a heartbeat: client id `cid` of agent "
        "`consumer`, appended to the group's client-id list on this broker (registration order), which is now "
        "version `version` (`cids` ids). With cluster.start = \"running\", every initial consumer's channel is "
        "registered at t = 0, in consumer-number order, and nobody is notified.",
        __name__, group="str", cid="str", consumer="str", version="int", cids="int")
declare("consumer_unregistered",
        "The broker removed a consumer channel on the client's UNREGISTER_CLIENT (graceful shutdown): `cid` left the "
        "list, now version `version` (`cids` ids).",
        __name__, group="str", cid="str", consumer="str", version="int", cids="int")
declare("channel_expired",
        "The broker closed a silent consumer channel. `cause` scan: ClientHousekeepingService (every 10 s) found no "
        "heartbeat for `silent_s` seconds (> channelExpiredTimeout) and removed it itself, so the close event that "
        "follows finds nothing and the group is NOT notified (as in RocketMQ 4.9.x and 5.x); `cause` idle: Netty's "
        "idle handler closed the channel after `silent_s` seconds without any traffic (> serverChannelMaxIdleTime"
        "Seconds), and the close event removed it and notified the group. `cid` left the list, now version "
        "`version` (`cids` ids).",
        __name__, group="str", cid="str", consumer="str", silent_s="float", version="int", cids="int", cause="str")
declare("consumer_ids_changed_notified",
        "The broker sent NOTIFY_CONSUMER_IDS_CHANGED to the `notified` remaining channels of `group` (`cause`: "
        "registered, unregistered, expired: at once, at the change; batched: realTimeNotifyConsumerChange = false, "
        "the batch task's run sent it to the channels remembered at the group's last change that are still open); "
        "`version`: the version of the group's client-id list it now holds.",
        __name__, group="str", cause="str", version="int", notified="int")
declare("consumer_ids_change_deferred",
        "realTimeNotifyConsumerChange = false (5.x): a change of `group` (`cause`: registered, unregistered, "
        "expired) notified nobody now; the broker remembered the group's `channels` channels of this moment "
        "(replacing what an earlier change remembered) for its batch task's next run. `version`: the version of "
        "the group's client-id list after the change.",
        __name__, group="str", cause="str", version="int", channels="int")
declare("offset_committed",
        "The broker stored a consumer offset (UPDATE_CONSUMER_OFFSET or a pull request's commit offset, from `cid`): "
        "`queue`'s committed offset of "
        "`group` went from `previous` (-1: none) to `offset` (messages, the next one to consume). Written only "
        "when the value changes, and only when the scenario's workload.trace_commits is true (the default). `via`: "
        "update (UPDATE_CONSUMER_OFFSET: persistAllConsumerOffset, or a dropped queue's offset), pull, or running "
        "(cluster.start = \"running\": the offset the broker holds at t = 0; `cid` '').",
        __name__, group="str", queue="str", cid="str", offset="float", previous="float", via="str")
declare("queue_locked",
        "RebalanceLockManager gave `queue`'s lock of `group` to `cid` (a new holder, not a renewal); `previous`: "
        "the former holder ('' if none), `expired`: whether its 60 s lease had run out.",
        __name__, group="str", queue="str", cid="str", previous="str", expired="bool")
declare("queue_lock_denied",
        "RebalanceLockManager refused `queue`'s lock to `cid`: `holder` holds it, its lease `age_s` seconds old.",
        __name__, group="str", queue="str", cid="str", holder="str", age_s="float")
declare("queue_unlocked", "`cid` released `queue`'s lock of `group` (UNLOCK_BATCH_MQ).",
        __name__, group="str", queue="str", cid="str")
declare("assignment_queried",
        "QUERY_ASSIGNMENT (5.x broker-side assignment): the broker allocated `assigned` entries to `cid` with "
        "`strategy` from its own view: version `cid_version` of its client-id list of the group (`cids` ids) and "
        "`route_queues` (its cached route's queue count); `mode` PULL or POP; `ok` false when it could not (no "
        "route, no consumers, unknown strategy).",
        __name__, group="str", cid="str", strategy="str", mode="str", cid_version="int", cids="int",
        route_queues="int", assigned="int", ok="bool")
declare("pop_revived",
        "Popped messages of `queue` not acked by `cid` within their invisible time became visible again: "
        "`messages` messages from `from_offset` (they are delivered again: duplicates if they had been consumed).",
        __name__, group="str", queue="str", cid="str", from_offset="float", messages="float")
declare("queue_stats",
        "Every stats_interval_s of virtual time, a row per queue of this broker: `max_offset` (messages appended so "
        "far, the broker's), `committed` (the group's committed offset; POP: the lowest offset not yet acked; -1: none "
        "yet) and `lag` (max_offset - committed, messages; -1 when nothing is committed).",
        __name__, per_row=("group", "queue", "committed", "lag"),
        group="str", queue="str", max_offset="float", committed="float", lag="float")


#: what :meth:`Broker._stored` is passed when the caller has not read the persist leases for the queue
_UNREAD = object()


class Broker(JvmAgent):
    """One broker (a master; the model has no slaves). Params: see :mod:`clusteremu.agents.rocketmq.model`."""

    kind = "broker"
    #: starts of this agent so far (a running start sets up the first one only; a restart starts empty)
    starts = 0

    def on_start(self) -> None:
        p = self.params
        self.cfg = p["config"]
        self.topics: dict[str, dict[str, Any]] = p["topics"]  # topic -> {group, queues}
        self.created_at = self.now
        self.keys_of = {t: [queue_key(t, self.name, i) for i in range(v["queues"])] for t, v in self.topics.items()}
        self.keys = [k for keys in self.keys_of.values() for k in keys]
        self.group_of = {k: self.topics[t]["group"] for t, keys in self.keys_of.items() for k in keys}  # queue -> group
        self._groups: dict[str, dict[str, dict[str, Any]]] = {}  # group -> cid -> {consumer, last}
        self._versions: dict[str, int] = {}  # group -> version of its client-id list here
        self._offsets: dict[str, dict[str, float]] = {}  # group -> queue -> committed offset
        self._locks: dict[str, dict[str, list]] = {}  # group -> queue -> [cid, last update]
        self._pop: dict[str, dict[str, Any]] = {}  # queue -> {next, retry: [[a, b]], inflight: [[a, b, deadline, cid]]}
        self._route_queues: dict[str, list] = {}  # topic -> TopicRouteInfoManager's cached subscribe info (5.x)
        #: ``realTimeNotifyConsumerChange = false``: group -> [(cid, consumer)] of its last change (5.x)
        self._pending_change: dict[str, list[tuple[str, str]]] = {}
        self._channel_of: dict[str, str] = {}  # consumer agent -> the client id of its current channel
        self._idle_wakeup = None
        #: ``workload.cid_lists = "lease"``: group -> the consumers that read its list here (:mod:`.cid_lists`)
        self._readers: dict[str, dict[str, None]] | None = {} if p["cid_lists"] == "lease" else None
        #: ``workload.heartbeats = "lease"``: the consumers' periodic heartbeats as leases (:mod:`.heartbeats`);
        #: ``workload.persist_offsets = "lease"``: their offset persists (:mod:`.persists`)
        self.leases = LeaseTable(self, scope_alive=self._has_channel) \
            if "lease" in (p["heartbeats"], p["persist_offsets"]) else None
        #: the offsets the persist leases carry, and when each queue's last real commit arrived
        self.persisted = PersistedOffsets(self.leases, self.group_of) if p["persist_offsets"] == "lease" else None
        self._commit_t: dict[str, float] = {}
        #: a lease in closed form has kept contact within a heartbeat period, shorter than either timeout: no
        #: decision on such a channel needs its exact last keep-alive (the scans skip computing it)
        self._beat_period = seconds(self.cfg, "heartbeatBrokerInterval")
        self._short_leases = p["heartbeats"] == "lease" and self._beat_period < min(
            seconds(self.cfg, "channelExpiredTimeout"), float(self.cfg["serverChannelMaxIdleTimeSeconds"]))
        for topic, v in self.topics.items():
            self.emit("queues_created", broker=self.name, subscription=topic, group=v["group"], queues=v["queues"],
                      rate_per_queue=float(p["rate_per_queue"]), room=p["room"])
        self.starts += 1
        if p["running"] is not None and self.starts == 1:
            self._running_start(p["running"])
        mode = p["timer_mode"]
        #: ``registerBrokerAll``: real registrations, or the periodic ones as a lease (``workload.register_broker``)
        self.registration = Registration(self, self._register, lease=p["register_broker"] == "lease",
                                         keep_grid=mode == FIXED_RATE)
        self._register()
        ctl = self.executor("BrokerControllerScheduledThread")
        ctl.schedule_periodic(mode, self.registration.periodic, 10.0, register_period(self.cfg),
                              name="registerBrokerAll")
        self.executor("ClientHousekeepingScheduledThread").schedule_periodic(
            mode, self._scan_exception_channel, 10.0, 10.0, name="scanExceptionChannel")
        if not self.cfg["realTimeNotifyConsumerChange"]:
            # DefaultConsumerIdsChangeListener's own single-thread executor (built with the broker): 30 s, 15 s.
            self.executor("DefaultConsumerIdsChangeListener").schedule_periodic(
                mode, self._notify_consumer_change, NOTIFY_BATCH_INITIAL_S, NOTIFY_BATCH_PERIOD_S,
                name="notifyConsumerChange")
        if p["assignment"]:
            self.executor("TopicRouteInfoManager").schedule_periodic(
                mode, self._update_route, 1.0, seconds(self.cfg, "loadBalancePollNameServerInterval"),
                name="updateTopicRouteInfoFromNameServer")
            self.executor("PopReviveService").schedule_with_fixed_delay(self._revive, 1.0, 1.0, name="revive")
        self.spawn(self._stats())
        self.spawn(self._idle_watch())
        self.start_gc(p["gc"])

    def _running_start(self, state: dict[str, Any]) -> None:
        """``cluster.start = "running"`` (:mod:`.running`): the channels of every initial consumer of the groups
        whose topics this broker serves, registered in consumer-number order and last heard now, and each queue's
        committed offset at its max offset (0: the queues fill from now)."""
        for topic, v in self.topics.items():
            group = v["group"]
            members = state["groups"].get(group, [])
            channels = self._groups.setdefault(group, {})
            for (consumer, _room), cid in zip(members, group_client_ids(self.seed, members)):
                channels[cid] = {"consumer": consumer, "last": self.now, "io": self.now}
                self._channel_of[consumer] = cid
                self.emit("consumer_registered", group=group, cid=cid, consumer=consumer, version=self._bump(group),
                          cids=len(channels))
                if self._readers is not None:  # each holds the list as its last reads found it (cid_lists.seed)
                    self._readers.setdefault(group, {})[consumer] = None
            self._commit(group, "", [[k, self.max_offset()] for k in self.keys_of[topic]], "running")

    # -- queues ------------------------------------------------------------------------------------------
    def max_offset(self, at: float | None = None) -> float:
        """Messages appended to each queue by time ``at`` (now by default)."""
        t = self.now if at is None else at
        return float(self.params["rate_per_queue"]) * max(0.0, t - self.created_at)

    def _committed(self, group: str, key: str, persisted: Any = _UNREAD) -> float:
        """The queue's committed offset (POP: its low-water mark); ``persisted``: the persist leases' latest for it
        (see :meth:`_stored`; None: there is none), when the caller has read it already."""
        if self._pop.get(key) is not None:
            st = self._pop[key]
            low = st["next"]
            for r in st["retry"]:
                low = min(low, r[0])
            for r in st["inflight"]:
                low = min(low, r[0])
            return low
        return self._stored(group, key, persisted)

    def _stored(self, group: str, key: str, persisted: Any = _UNREAD) -> float:
        """``ConsumerOffsetManager.queryOffset``: the offset stored last, by a real commit or, with persist leases,
        a keep-alive carrying it (whichever reached the broker later; :mod:`.persists`)."""
        table = self._offsets.get(group)
        offset = -1.0 if table is None else table.get(key, -1.0)
        if self.persisted is None:
            return offset
        if persisted is _UNREAD:
            persisted = self.persisted.latest(key)
        if persisted is not None and persisted[0] > self._commit_t.get(key, -math.inf):
            return persisted[1]
        return offset

    def _stats(self) -> Generator:
        step = float(self.params["stats_interval_s"])
        t = math.floor(self.now / step) * step + step
        while True:
            yield self.env.timeout(t - self.now)
            top = self.max_offset()
            persisted = self.persisted.latest_all() if self.persisted is not None else {}
            groups, queues, committed, lags = [], [], [], []
            for key in self.keys:
                group = self.group_of[key]
                c = self._committed(group, key, persisted.get(key))
                groups.append(group)
                queues.append(key)
                committed.append(c)
                lags.append((top - c) if c >= 0 else -1.0)
            if queues:
                self.emit_rows("queue_stats", {"group": groups, "queue": queues, "committed": committed, "lag": lags},
                               max_offset=top)
            t += step

    # -- name server -------------------------------------------------------------------------------------
    def _register(self) -> None:
        self.send(self.params["namesrv"], "REGISTER_BROKER",
                  {"broker": self.name, "topics": [[t, v["queues"], PERM_READ_WRITE] for t, v in self.topics.items()],
                   "room": self.params["room"]})

    def _update_route(self) -> Generator:
        """``TopicRouteInfoManager.updateTopicRouteInfoFromNameServer``: the route of every topic cached (those
        queried so far), one request each."""
        for topic in list(self._route_queues):
            reply = yield from self.call(self.params["namesrv"], "GET_ROUTEINFO_BY_TOPIC", {"topic": topic},
                                         timeout=GET_TOPIC_ROUTE_TIMEOUT_S)
            self._route_read(topic, reply)

    def _route_read(self, topic: str, reply: dict | None) -> None:
        """A name-server answer about ``topic`` updates the cached subscribe info: a route replaces it, "no such
        topic" drops it (``cleanNoneRouteTopic``), no answer keeps it."""
        if reply is not None and reply["found"]:
            qds = [QueueData(b, n, perm) for b, n, perm in reply["queue_datas"]]
            self._route_queues[topic] = sort_mq_all(subscribe_queues(topic, qds))  # sorted once per route
        elif reply is not None:
            self._route_queues.pop(topic, None)

    def shutdown(self, cause: str) -> None:
        """A graceful stop: unregister from the name server, then stop."""
        self.send(self.params["namesrv"], "UNREGISTER_BROKER", {"broker": self.name})
        self.crash(cause)

    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        """``broker_loss``: the machine is gone (nothing closed cleanly); ``broker_join`` is its start itself."""
        if kind == "broker_loss":
            self.crash("broker_loss")
        elif kind != "broker_join":
            super().on_fault(kind, spec)

    # -- messages ----------------------------------------------------------------------------------------
    def on_message(self, msg: Message) -> None:
        cid = self._channel_of.get(msg.src)
        if cid is not None:  # any request is traffic on the client's channel (Netty's idle handler)
            for channels in self._groups.values():
                if cid in channels:
                    channels[cid]["io"] = self.now
        handler = getattr(self, "_on_" + msg.kind, None)
        if handler is not None:
            handler(msg, msg.body)

    def _on_HEARTBEAT(self, msg: Message, body: dict) -> None:
        group, cid = body["group"], body["cid"]
        channels = self._groups.setdefault(group, {})
        new = cid not in channels
        channels[cid] = {"consumer": msg.src, "last": self.now, "io": self.now}
        self._channel_of[msg.src] = cid
        self.reply(msg, {})
        if new:
            if self._idle_wakeup is not None and not self._idle_wakeup.triggered:
                self._idle_wakeup.succeed()
            self.emit("consumer_registered", group=group, cid=cid, consumer=msg.src, version=self._bump(group),
                      cids=len(channels))
            self._tell_readers(group, self._notify(group, "registered"))

    def _on_UNREGISTER_CLIENT(self, msg: Message, body: dict) -> None:
        group, cid = body["group"], body["cid"]
        channels = self._groups.get(group, {})
        if channels.pop(cid, None) is not None:
            self._closed(cid)
            self.emit("consumer_unregistered", group=group, cid=cid, consumer=msg.src, version=self._bump(group),
                      cids=len(channels))
            self._tell_readers(group, self._notify(group, "unregistered"))

    def _has_channel(self, cid: str) -> bool:
        return any(cid in channels for channels in self._groups.values())

    def _heard(self, cid: str, ch: dict[str, Any], field: str) -> float:
        """The channel's last heartbeat (``field`` "last") or last traffic ("io"): with heartbeat leases, the later
        of the last real message and the lease's last keep-alive; with persist leases, traffic is also their last
        keep-alive (a persist is a request on the channel)."""
        t = ch[field]
        if self.leases is not None:
            kept = self.leases.last(ch["consumer"], heartbeat_lease_key(cid, self.name))
            if kept is not None and kept > t:
                t = kept
            if field == "io" and self.persisted is not None:  # a persist is traffic on the channel too
                kept = self.leases.last(ch["consumer"], persist_lease_key(cid, self.name))
                if kept is not None and kept > t:
                    t = kept
        return t

    def _kept(self, cid: str) -> bool:
        """Whether the channel's heartbeat lease is in closed form (see ``_short_leases``)."""
        return self._short_leases and self.leases.scope_running(cid)

    def _closed(self, cid: str) -> None:
        """A channel is gone: so is its heartbeat lease (a later keep-alive of it is answered "expired")."""
        if self.leases is not None:
            self.leases.end_scope(cid)

    def _all_kept(self) -> bool:
        """Whether every channel's heartbeat lease is in closed form (:meth:`_kept`): a lease's scope is its
        channel's client id, accepted only while the channel exists and ended with it, so as many running scopes
        as channels means all of them."""
        return self._short_leases and self.leases.scopes_running >= sum(map(len, self._groups.values()))

    def _scan_exception_channel(self) -> None:
        if self._all_kept():
            return  # no channel can have been silent for channelExpiredTimeout (hundreds a broker, every 10 s)
        timeout = seconds(self.cfg, "channelExpiredTimeout")
        for group in sorted(self._groups):
            channels = self._groups[group]
            now, kept = self.now, self._kept
            expired = [(cid, last) for cid, ch in channels.items()
                       if now - ch["last"] > timeout and not kept(cid)
                       and now - (last := self._heard(cid, ch, "last")) > timeout]
            for cid, last in expired:
                ch = channels.pop(cid)
                self._closed(cid)
                # ConsumerManager.scanNotActiveChannel removes the channel before Netty's close event runs, so
                # doChannelCloseEvent finds nothing to remove and nothing is notified.
                self.emit("channel_expired", group=group, cid=cid, consumer=ch["consumer"],
                          silent_s=self.now - last, version=self._bump(group), cids=len(channels), cause="scan")
                self._tell_readers(group, ())

    def _idle_watch(self) -> Generator:
        """Netty's ``IdleStateHandler(0, 0, serverChannelMaxIdleTimeSeconds)``: a channel without traffic that long
        is closed; ``ClientHousekeepingService.onChannelIdle`` -> ``doChannelCloseEvent`` -> CHANGE."""
        idle = float(self.cfg["serverChannelMaxIdleTimeSeconds"])
        while True:
            deadlines, kept = [], False
            for chs in self._groups.values():
                for cid, ch in chs.items():
                    if self._kept(cid):
                        kept = True  # idle at the soonest a period less than the idle time from now
                    else:
                        deadlines.append(self._heard(cid, ch, "io") + idle)
            if kept:
                deadlines.append(self.now + idle - self._beat_period)
            if not deadlines:
                self._idle_wakeup = self.env.event()
                yield self._idle_wakeup
                self._idle_wakeup = None
                continue
            yield from self.sleep(max(0.0, min(deadlines) - self.now))
            for group in sorted(self._groups):
                channels = self._groups[group]
                # the wake-up time is computed as io + idle: compare with slack, or a rounding error spins here
                for cid, io in [(c, io) for c, ch in channels.items()
                                if not self._kept(c) and self.now - (io := self._heard(c, ch, "io")) >= idle - 1e-9]:
                    ch = channels.pop(cid)
                    self._closed(cid)
                    self.emit("channel_expired", group=group, cid=cid, consumer=ch["consumer"],
                              silent_s=self.now - io, version=self._bump(group), cids=len(channels),
                              cause="idle")
                    self._tell_readers(group, self._notify(group, "expired"))

    def _notify(self, group: str, cause: str) -> list[str]:
        """``DefaultConsumerIdsChangeListener``: CHANGE -> NOTIFY_CONSUMER_IDS_CHANGED to every channel left, or
        (``realTimeNotifyConsumerChange = false``) those channels remembered for the batch task; the consumers
        notified now. With held client-id lists the notification also carries the list's new version."""
        if not self.cfg["notifyConsumerIdsChangedEnable"]:
            return []
        channels = self._groups.get(group, {})
        if not self.cfg["realTimeNotifyConsumerChange"]:
            # consumerChannelMap.put(group, channels): the last change of the group wins, even with no channel left
            self._pending_change[group] = [(cid, ch["consumer"]) for cid, ch in channels.items()]
            self.emit("consumer_ids_change_deferred", group=group, cause=cause, version=self._versions[group],
                      channels=len(channels))
            return []
        return self._send_notify(group, [ch["consumer"] for ch in channels.values()], cause)

    def _send_notify(self, group: str, consumers: list[str], cause: str) -> list[str]:
        """NOTIFY_CONSUMER_IDS_CHANGED (one-way) to each of ``consumers``."""
        if not consumers:
            return []
        body = {"group": group} if self._readers is None else {"group": group, "version": self._versions[group]}
        for consumer in consumers:
            self.send(consumer, "NOTIFY_CONSUMER_IDS_CHANGED", body)
        self.emit("consumer_ids_changed_notified", group=group, cause=cause, version=self._versions[group],
                  notified=len(consumers))
        return consumers

    def _notify_consumer_change(self) -> None:
        """The batch task (``notifyConsumerChange``): take every group's remembered channels, forget them, and
        notify those still open (a one-way send on a closed channel reaches nobody). Held client-id lists need no
        telling here: their readers were told of each change when it happened (:meth:`_tell_readers`)."""
        if not self._pending_change:
            return
        pending, self._pending_change = self._pending_change, {}
        for group, remembered in pending.items():
            open_now = self._groups.get(group, {})
            self._send_notify(group, [consumer for cid, consumer in remembered if cid in open_now], "batched")

    def _tell_readers(self, group: str, notified: Iterable[str]) -> None:
        """Held client-id lists (:mod:`.cid_lists`): the group's list changed; each consumer that read it here
        and was not notified (which carried the version) learns the new version."""
        readers = self._readers.get(group) if self._readers is not None else None
        if not readers:
            return
        told = set(notified)
        body = {"group": group, "version": self._versions[group]}
        for consumer in readers:
            if consumer not in told:
                self.send(consumer, CID_LIST_CHANGED, body)

    def _bump(self, group: str) -> int:
        """The next version of ``group``'s client-id list on this broker (the first list is version 1)."""
        v = self._versions[group] = self._versions.get(group, 0) + 1
        return v

    def _on_GET_CONSUMER_LIST_BY_GROUP(self, msg: Message, body: dict) -> None:
        group = body["group"]
        if self._readers is not None:
            self._readers.setdefault(group, {})[msg.src] = None
        self.reply(msg, {"cids": list(self._groups.get(group, {})), "version": self._versions.get(group, 0)})

    def _on_QUERY_CONSUMER_OFFSET(self, msg: Message, body: dict) -> None:
        key = body["queue"]
        if key not in self.group_of:
            self.reply(msg, {"ok": False})
            return
        ts = body.get("timestamp")
        self.reply(msg, {"ok": True, "offset": self._stored(body["group"], key),
                         "max_offset": self.max_offset(), "min_offset": 0.0,
                         "timestamp_offset": self.max_offset(ts) if ts is not None else -1.0,
                         # the producers' rate and the queue's start: what a consumer's closed form needs
                         "rate_per_queue": float(self.params["rate_per_queue"]), "since": self.created_at})

    def _on_UPDATE_CONSUMER_OFFSET(self, msg: Message, body: dict) -> None:
        self._commit(body["group"], body["cid"], body["offsets"], "update")

    def _commit(self, group: str, cid: str, offsets: list, via: str) -> None:
        """``ConsumerOffsetManager.commitOffset`` of each [queue, offset] (queues of other brokers ignored)."""
        table = self._offsets.setdefault(group, {})
        ours, traced = self.group_of, self.params["trace_commits"]
        times = self._commit_t if self.persisted is not None else None
        for key, offset in offsets:
            if key not in ours:
                continue
            if times is not None:
                times[key] = self.now
            prev = table.get(key, -1.0)
            if offset != prev:
                table[key] = offset
                if traced:
                    self.emit("offset_committed", group=group, queue=key, cid=cid, offset=offset, previous=prev,
                              via=via)

    def _on_PULL(self, msg: Message, body: dict) -> None:
        # PullMessageProcessor: a new (not suspended) request with the commit-offset flag stores the offsets it
        # carries on a master broker (every broker of the model is one).
        if body["commit"]:
            self._commit(body["group"], body["cid"], body["commit"], "pull")
        top = self.max_offset()
        self.reply(msg, {"max": [[k, top] for k in body["queues"] if k in self.group_of]})

    # -- RebalanceLockManager ----------------------------------------------------------------------------
    def _on_LOCK_BATCH_MQ(self, msg: Message, body: dict) -> None:
        group, cid = body["group"], body["cid"]
        lease = seconds(self.cfg, "rocketmq.broker.rebalance.lockMaxLiveTime")
        table = self._locks.setdefault(group, {})
        locked = []
        for key in body["queues"]:
            if key not in self.group_of:
                continue
            entry = table.get(key)
            if entry is None or entry[0] == cid or self.now - entry[1] > lease:
                if entry is None or entry[0] != cid:
                    self.emit("queue_locked", group=group, queue=key, cid=cid,
                              previous=entry[0] if entry else "", expired=entry is not None)
                table[key] = [cid, self.now]
                locked.append(key)
            else:
                self.emit("queue_lock_denied", group=group, queue=key, cid=cid, holder=entry[0],
                          age_s=self.now - entry[1])
        self.reply(msg, {"locked": locked})

    def _on_UNLOCK_BATCH_MQ(self, msg: Message, body: dict) -> None:
        group, cid = body["group"], body["cid"]
        table = self._locks.get(group, {})
        for key in body["queues"]:
            entry = table.get(key)
            if entry is not None and entry[0] == cid:
                del table[key]
                self.emit("queue_unlocked", group=group, queue=key, cid=cid)

    # -- 5.x: QueryAssignmentProcessor -------------------------------------------------------------------
    def _on_QUERY_ASSIGNMENT(self, msg: Message, body: dict) -> None:
        topic = body["topic"]
        if self._route_queues.get(topic):
            self._answer_assignment(msg, body)
            return

        # TopicRouteInfoManager.getTopicSubscribeInfo: nothing (or no queue) cached for the topic -> a synchronous
        # name-server read first; the topic is cached (and refreshed by the periodic task) from then on.
        def then(reply: dict | None) -> None:
            self._route_read(topic, reply)
            self._answer_assignment(msg, body)

        self.call_then(self.params["namesrv"], "GET_ROUTEINFO_BY_TOPIC", {"topic": topic},
                       GET_TOPIC_ROUTE_TIMEOUT_S, then)

    def _answer_assignment(self, msg: Message, body: dict) -> None:
        """``QueryAssignmentProcessor.doLoadBalance`` from the broker's own consumer list and cached route."""
        group, cid, strategy_name = body["group"], body["cid"], body["strategy"]
        mode = self.cfg["defaultMessageRequestMode"]
        cids = list(self._groups.get(group, {}))
        mqs = self._route_queues.get(body["topic"])
        assigned: list | None = None
        if body["messageModel"] == "BROADCASTING" and mqs is not None:
            assigned = list(mqs)
        elif mqs is not None and cids:
            if not self.cfg["serverLoadBalancerEnable"]:
                assigned = list(mqs)
            elif strategy_name in QUERY_ASSIGNMENT_STRATEGIES:
                strategy = create(QUERY_ASSIGNMENT_STRATEGIES[strategy_name])
                mq_all, cid_all = mqs, sort_cid_all(cids)
                try:
                    if mode == "POP":
                        assigned = allocate4pop(strategy, group, cid, mq_all, cid_all, body["popShareQueueNum"])
                    else:
                        assigned = strategy.allocate(group, cid, mq_all, cid_all)
                except AllocationArgumentError:
                    assigned = None
        ok = assigned is not None
        keys = list(dict.fromkeys(queue_of(mq) for mq in assigned)) if ok else []
        self.emit("assignment_queried", group=group, cid=cid, strategy=strategy_name, mode=mode,
                  cid_version=self._versions.get(group, 0), cids=len(cids), route_queues=len(mqs) if mqs is not None else 0, assigned=len(keys), ok=ok)
        self.reply(msg, {"ok": ok, "mode": mode, "queues": keys})

    # -- 5.x: POP and ACK --------------------------------------------------------------------------------
    def _pop_state(self, group: str, key: str) -> dict[str, Any]:
        st = self._pop.get(key)
        if st is None:
            # No pop checkpoint yet: start where the group's committed offset is, else at the end
            # (CONSUME_FROM_LAST_OFFSET, the default of a new group).
            start = self._offsets.get(group, {}).get(key, -1.0)
            st = self._pop[key] = {"next": start if start >= 0 else self.max_offset(), "retry": [], "inflight": []}
        return st

    def _on_POP(self, msg: Message, body: dict) -> None:
        group, cid = body["group"], body["cid"]
        budget = float(body["max"])
        deadline = self.now + float(body["invisible_s"])
        mq = parse_queue_key(body["queue"])
        keys = self.keys_of.get(mq.topic, [])
        if mq.queue_id >= 0:
            order = [keys[mq.queue_id]] if mq.queue_id < len(keys) else []
        else:
            # PopMessageProcessor: a random start queue, then every queue of the topic on the broker in turn.
            start = int(self.rng("pop").integers(0, 100))
            order = [keys[(start + i) % len(keys)] for i in range(len(keys))]
        top = self.max_offset()
        out = []
        for key in order:
            if budget <= 0:
                break
            st = self._pop_state(group, key)
            while st["retry"] and budget > 0:  # revived messages first
                a, b = st["retry"][0]
                take = min(b - a, budget)
                out.append([key, a, a + take])
                st["inflight"].append([a, a + take, deadline, cid])
                budget -= take
                if a + take >= b:
                    st["retry"].pop(0)
                else:
                    st["retry"][0][0] = a + take
            take = min(max(0.0, top - st["next"]), budget)
            if take > 0:
                out.append([key, st["next"], st["next"] + take])
                st["inflight"].append([st["next"], st["next"] + take, deadline, cid])
                st["next"] += take
                budget -= take
        self.reply(msg, {"ranges": out})

    def _on_ACK(self, msg: Message, body: dict) -> None:
        for key, a, b in body["ranges"]:
            st = self._pop.get(key)
            if st is None:
                continue
            for i, r in enumerate(st["inflight"]):
                if r[0] == a and r[1] == b and r[3] == body["cid"]:
                    del st["inflight"][i]
                    break

    def _revive(self) -> None:
        for key in self.keys:
            st = self._pop.get(key)
            if st is None:
                continue
            group = self.group_of[key]
            keep = []
            for r in st["inflight"]:
                if r[2] <= self.now:
                    st["retry"].append([r[0], r[1]])
                    self.emit("pop_revived", group=group, queue=key, cid=r[3], from_offset=r[0], messages=r[1] - r[0])
                else:
                    keep.append(r)
            st["inflight"] = keep
            st["retry"].sort()
