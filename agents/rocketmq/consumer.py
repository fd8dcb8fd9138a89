"""A consumer-group client: one push consumer in its own ``MQClientInstance`` (a JVM), with its own timers, its
own view of the group, and its own allocation.

Components: :class:`Consumer` and the event kinds it writes. Its parts, with the real classes they model:

* ``MQClientInstance`` scheduled tasks on one thread (``scheduleAtFixedRate``, or fixed delay when the scenario
  says so): ``updateTopicRouteInfoFromNameServer`` (after 10 ms, every ``pollNameServerInterval``; with
  ``workload.route_poll = "lease"`` a kernel poll lease after the first run: :mod:`.route_poll`),
  ``cleanOfflineBroker`` + ``sendHeartbeatToAllBrokerWithLock`` (after 1 s, every ``heartbeatBrokerInterval``;
  a synchronous call per broker of the cached route, or with ``workload.heartbeats = "lease"`` a kernel lease per
  broker after the first call: :mod:`.heartbeats`), ``persistAllConsumerOffset`` (after 10 s, every
  ``persistConsumerOffsetInterval``; one-way; with ``workload.persist_offsets = "lease"`` a kernel lease per broker
  whose keep-alives carry the offsets, the brokers computing them from the closed form the consumer publishes:
  :mod:`.persists`);
* ``RebalanceService``: waits ``rocketmq.client.rebalance.waitInterval`` or until woken (wake-ups are not lost),
  then rebalances; the 5.x loop retries after ``rocketmq.client.rebalance.minInterval`` while unbalanced;
  woken at start and by ``NOTIFY_CONSUMER_IDS_CHANGED``; with ``workload.trace_unchanged_rebalances = false`` a
  timer rebalance that changes nothing is counted (``rebalances_unchanged``), and while the group is steady the
  service counts those runs without running them (:mod:`.steady_rebalances`);
* ``RebalanceImpl.rebalanceByTopic``: its cached route's queues and the client ids of ONE broker of the route,
  picked at random (``findBrokerAddrByTopic``, the client's keyed rng; with ``workload.cid_lists = "lease"`` the
  list last read from that broker while the group is steady: :mod:`.cid_lists`), both sorted, through the configured
  strategy (:mod:`clusteremu.strategies.rocketmq`); ``updateProcessQueueTableInRebalance`` drops queues no longer
  its own (persisting their offsets; orderly: unlocking them) and takes new ones (orderly: after locking them at
  the broker) from ``computePullFromWhere``; a change sends a heartbeat (``messageQueueChanged``);
* 5.x broker-side assignment (``clientRebalance = false``): ``QUERY_ASSIGNMENT`` to one broker; PULL assignments as
  above, POP assignments (``(topic, broker, -1)``: every queue of the broker) popped with ``popInvisibleTime``;
* consumption as a fluid: every ``consume_tick_s`` the client pulls (one batched request per broker: each queue's
  max offset; the request commits each queue's consume offset, ``commitOffset`` of ``PullMessageRequestHeader``)
  and consumes up to its capacity, shared equally among its queues; POP pops ranges, consumes them
  over the next tick and acks them then (a consumer paused or crashed meanwhile leaves them to be revived);
  with ``workload.consumption = "closed_form"`` there is no step and no pull message: each held queue's offset is a
  closed form of time (:mod:`.fluid`, with the queue's rate and its broker's start as ``QUERY_CONSUMER_OFFSET``
  answered them), settled whenever an offset is read (persist, drop, report) or the consumption changes (take,
  drop, capacity, a stop-the-world pause); the brokers' committed offsets come from the persists and drops;
* orderly consumers (``ConsumeMessageOrderlyService``): re-lock their queues every 20 s and consume a queue only
  while its lock is younger than 30 s;
* ``consume_progress`` every ``progress_interval_s`` of virtual time (an observer: it reports during pauses) and
  when a queue is dropped or the consumer stops, with the exact ranges consumed: one record, a row a queue;
* ``cluster.start = "running"`` (:mod:`.running`): an initial consumer begins at t = 0 with its route, its group's
  view and the strategy's allocation of it, caught up, its client timers on the grid its start jitter gives them
  and its rebalance service in step with its group's (as the group's last membership change left them)
  instead of starting (no first heartbeats, no start rebalance);
* graceful shutdown (``DefaultMQPushConsumerImpl.shutdown``): orderly unlock, offsets persisted,
  ``UNREGISTER_CLIENT`` to every broker; a crash does none of it (the brokers notice only by channel expiry);
* the operator's rolling restart of the group, one consumer at a time (:class:`RollingRestarts`).
"""
from __future__ import annotations

import fnmatch
import math
from typing import Any, Generator, Iterable

from clusteremu.emulator.agent import AgentContext
from clusteremu.emulator.executor import FIXED_RATE
from clusteremu.emulator.jvm import JvmAgent
from clusteremu.emulator.messages import Message
from clusteremu.emulator.rng import keyed_rng
from clusteremu.emulator.timer import call_at, call_later
from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies.rocketmq import AllocationArgumentError

from .cid_lists import CID_LIST_CHANGED, CidLists
from .config import seconds
from .fluid import ClosedFormConsumption
from .heartbeats import Heartbeats
from .names import client_id, consumer_index, parse_queue_key, queue_of
from .persists import OffsetPersists
from .rebalance import allocate_view, make_strategy, share, sorted_cids, sorted_route
from .route_poll import RoutePoll
from .steady_rebalances import SteadyRebalances
from .running import PID_KEY, group_client_ids

__all__ = ["Consumer", "TURN"]

#: the message that hands a rolling restart's turn to the next consumer
TURN = "rolling_restart_turn"

declare("consumer_started",
        "A consumer (re)started with client id `cid` (ip@pid: a new pid, so a new id, on every start) in `group`, "
        "machine room `room` ('' if none), start number `incarnation`; `strategy`: its allocateMessageQueueStrategy, "
        "`rebalance`: client (RebalanceImpl) or server (QUERY_ASSIGNMENT), `orderly`: ConsumeMessageOrderlyService.",
        __name__, cid="str", group="str", room="str", incarnation="int", strategy="str", rebalance="str",
        orderly="bool")
declare("consumer_stopping",
        "A graceful shutdown began (`cause`: scale_in, rolling_restart): offsets persisted, UNREGISTER_CLIENT sent "
        "to `brokers`; the consumer's `agent_stopped` follows at the same instant.",
        __name__, cid="str", cause="str", brokers="list")
declare("route_updated",
        "The consumer's cached route of the topic changed (updateTopicRouteInfoFromNameServer): `brokers` "
        "(brokerDatas), `queues` (subscribable queues now), `previous_queues` (before; -1: no route yet).",
        __name__, cid="str", brokers="list", queues="int", previous_queues="int")
declare("rebalance_result",
        "One rebalance of the consumer, with the view that produced it. `trigger`: start, notify (NOTIFY_CONSUMER_IDS_"
        "CHANGED), timer (waitInterval), retry (5.x minInterval while unbalanced), running (cluster.start = "
        "\"running\": the allocation the consumer holds at t = 0, from the view every broker of its topic holds). "
        "`rebalance`: client (allocated here) or server (QUERY_ASSIGNMENT: the broker's view is in its "
        "assignment_queried). View: `cid_source` "
        "(the broker asked; with workload.cid_lists = \"lease\" a steady timer rebalance takes the list it last read "
        "from that broker, still that broker's list of that version, and its `duration_s` is 0), `cid_version` "
        "(the version of that broker's client-id list of the group it answered: "
        "the list is the replay of the broker's consumer_registered, consumer_unregistered and channel_expired "
        "events of the group up to that version, sorted by String.compareTo; -1 for server and BROADCASTING), "
        "`cids` (their count), `mq_count` (queues of the cached route), `route_changed_t` (when the cached route "
        "last changed: the consumer's route_updated at that time names it; -1 never), `strategy` (Java getName()). Outcome: `allocated` (queue keys, the strategy's "
        "order), `added`/`removed` (taken/dropped now), `failed` (allocated but not taken: lock refused or offset "
        "unavailable), `held` (queues held afterwards), `changed`, `balanced` (held == allocated), `duration_s` "
        "(from the start of the rebalance).",
        __name__, cid="str", trigger="str", rebalance="str", cid_source="str", cid_version="int", cids="int",
        mq_count="int", route_changed_t="float", strategy="str", allocated="list",
        added="list", removed="list", failed="list", held="int", changed="bool", balanced="bool",
        duration_s="float")
declare("rebalances_unchanged",
        "Timer rebalances of the consumer that changed nothing, counted instead of written "
        "(workload.trace_unchanged_rebalances = false): `runs` of them, the first ending at `first_t`, the last at "
        "`last_t`, each a rebalance_result with trigger timer, nothing added, removed or failed, and balanced, "
        "which is not in the trace (nor its view: cid_source, cid_version). Written before the consumer's next "
        "rebalance_result or rebalance_skipped, when it stops or crashes, and at the run's end.",
        __name__, cid="str", runs="int", first_t="float", last_t="float")
declare("rebalance_skipped",
        "A rebalance that changed nothing because part of the view was missing: `reason` no_route, cid_list_"
        "unavailable (the broker `cid_source` did not answer within mqClientApiTimeout), cid_list_empty, "
        "allocate_error (the strategy threw), assignment_unavailable (QUERY_ASSIGNMENT failed).",
        __name__, cid="str", trigger="str", reason="str", cid_source="str")
declare("queue_taken",
        "The consumer took `queue` (a new process queue). `offset`: where it starts consuming (messages; POP: -1, "
        "the broker tracks it); `offset_source`: committed (the broker's stored offset), last, first or timestamp "
        "(computePullFromWhere with no stored offset), local (BROADCASTING: LocalFileOffsetStore), pop; `mode` PULL "
        "(CLUSTERING), BROADCAST (every consumer takes every queue) or POP (queue id -1: every queue of that broker, "
        "shared by design).",
        __name__, queue="str", cid="str", offset="float", offset_source="str", mode="str")
declare("queue_dropped",
        "The consumer dropped `queue` (`reason`: rebalance, scale_in, rolling_restart). `offset`: its in-memory "
        "consume offset, sent to the broker as the committed offset (PULL); `held_s`: how long it held the queue. "
        "A crash drops nothing: the holdings end at the consumer's `agent_stopped`. (BROADCAST: the offset is stored "
        "locally.)",
        __name__, queue="str", cid="str", offset="float", reason="str", mode="str", held_s="float")
declare("consume_progress",
        "What the consumer consumed of `queue` since its previous report: `ranges` ([from, to) offset pairs, "
        "merged, ascending; the same offset in two consumers' ranges was consumed twice), `consumed` (messages), "
        "`offset` (next offset to consume; POP -1), `max_offset` (the queue's max offset at the last pull; closed-form "
        "consumption: when its offset was last settled; POP -1), "
        "`lag` (max_offset - offset, messages; POP -1). Written every progress_interval_s of virtual time, a row "
        "for every held queue, and at once when a queue is dropped (`reason` drop) or the consumer stops (stop, a "
        "row for every queue it held). A POP assignment's rows are per real queue, those with something consumed.",
        __name__, per_row=("queue", "mode", "ranges", "consumed", "offset", "max_offset", "lag"),
        queue="str", cid="str", mode="str", ranges="list", consumed="float", offset="float",
        max_offset="float", lag="float", reason="str")
declare("slow_consumer",
        "A slow_consumer fault changed the consumer's capacity to `capacity` msg/s (`factor` times its own); "
        "`factor` 1 at the end of the fault.",
        __name__, cid="str", factor="float", capacity="float")
declare("group_rolling_restart_done", "The last consumer of a rolling restart is back; `consumers` were restarted.",
        __name__, consumers="int")


class _ProcessQueue:
    """The client's state of one held queue (``ProcessQueue`` + its offset-store entry), as numbers."""

    __slots__ = ("key", "broker", "mode", "offset", "start", "max", "ranges", "taken_at", "locked", "lock_ts")

    def __init__(self, key: str, mode: str, offset: float, now: float, locked: bool) -> None:
        self.key = key
        self.broker = parse_queue_key(key).broker_name
        self.mode = mode
        self.offset = offset
        self.start = offset
        self.max = offset
        self.ranges: list[list[float]] = []
        self.taken_at = now
        self.locked = locked
        self.lock_ts = now

    def consumed(self, a: float, b: float) -> None:
        """Record [a, b) consumed, merging with the last range when contiguous."""
        if b <= a:
            return
        if self.ranges and self.ranges[-1][1] == a:
            self.ranges[-1][1] = b
        else:
            self.ranges.append([a, b])


class Consumer(JvmAgent):
    """One consumer of the group. Params: see :mod:`clusteremu.agents.rocketmq.model`."""

    kind = "consumer"

    def __init__(self, name: str, ctx: AgentContext) -> None:
        super().__init__(name, ctx)
        self.incarnation = 0
        self.factor = 1.0
        #: BROADCASTING: LocalFileOffsetStore, a file on the consumer's host (it survives restarts)
        self.local_offsets: dict[str, float] = {}
        self.restarts = RollingRestarts(self)
        self.fluid: ClosedFormConsumption | None = None
        self._steady: SteadyRebalances | None = None

    # -- life cycle ---------------------------------------------------------------------------------------
    def on_start(self) -> None:
        p = self.params
        self.cfg = p["config"]
        self.incarnation += 1
        pid = int(self.rng(PID_KEY.format(self.incarnation)).integers(1000, 100_000))
        room = p["room"]
        self.cid = client_id(self.name, pid, room)
        self.group, self.topic = p["group"], p["topic"]
        self.orderly = bool(p["orderly"])
        self.server_side = not self.cfg["clientRebalance"] and not self.orderly \
            and self.cfg["messageModel"] == "CLUSTERING"
        self.route_brokers: list[str] = []
        self.route_sig: Any = None  # the route's brokers and queue data: also the memo key of its views
        self.route_changed_t = -1.0
        self.mq_set: list | None = None
        self.mq_all: list = []
        self.pqs: dict[str, _ProcessQueue] = {}
        self.pop_progress: dict[str, _ProcessQueue] = {}  # POP: what was consumed, per real queue
        self._acks: dict[str, list] = {}  # POP: ranges being consumed, acked at the next tick
        self.started_at = self.now
        self._notified = False
        self._wake_cause = "timer"
        self._waiter = None
        self.booted = self.env.event()
        #: ``sendHeartbeatToAllBroker``: real calls, or leases (``workload.heartbeats = "lease"``)
        self.heartbeats = Heartbeats(self, lease=p["heartbeats"] == "lease" and p["timer_mode"] == FIXED_RATE)
        #: ``updateTopicRouteInfoFromNameServer``: real reads, or a poll lease (``workload.route_poll = "lease"``)
        self.route_poll = RoutePoll(self, lease=p["route_poll"] == "lease" and p["timer_mode"] == FIXED_RATE)
        #: ``findConsumerIdList``: a real read per rebalance, or held lists while steady (``workload.cid_lists``)
        self.cid_lists = CidLists(self, held=p["cid_lists"] == "lease")
        #: ``workload.consumption = "closed_form"``: the held PULL queues' offsets as functions of time
        self.fluid = ClosedFormConsumption(self._capacity(), self.now) \
            if p["consumption"] == "closed_form" else None
        #: ``persistAllConsumerOffset``: one-way messages, or leases (``workload.persist_offsets = "lease"``)
        self.persists = OffsetPersists(self, lease=p["persist_offsets"] == "lease")
        #: ``workload.trace_unchanged_rebalances = false``: [runs, first_t, last_t] of the timer rebalances that
        #: changed nothing since the last written result (None: every result written)
        self._unchanged: list | None = None if p["trace_unchanged_rebalances"] else [0, 0.0, 0.0]
        if self._unchanged is not None:
            self.at_end(self._write_unchanged)
        #: the timer rebalances counted without running while the group is steady (:mod:`.steady_rebalances`)
        self._steady = SteadyRebalances.of(self)
        self.spawn(self._boot())

    def _boot(self) -> Generator:
        p = self.params
        running = self.incarnation == 1 and p["running"] is not None
        phase = 0.0  # running: the start jitter is the phase of the timers of a client started that long ago
        if running:
            self._running_start(p["running"])
        if self.incarnation == 1 and p["start_jitter_s"] > 0:
            jitter = float(self.rng("start").uniform(0.0, p["start_jitter_s"]))
            if running:
                phase = jitter
            else:
                yield from self.sleep(jitter)
        if not running:
            self._started()

        def first(delay: float, period: float) -> float:
            """A task's first run: its initial delay after the start, or the next run on its running grid."""
            return (phase + delay) % period if running else delay

        mode = p["timer_mode"]
        ex = self.executor("MQClientFactoryScheduledThread")
        poll, beat = seconds(self.cfg, "pollNameServerInterval"), seconds(self.cfg, "heartbeatBrokerInterval")
        persist = seconds(self.cfg, "persistConsumerOffsetInterval")
        self.route_poll.task = ex.schedule_periodic(mode, self.route_poll.periodic, first(0.01, poll), poll,
                                                    name="updateTopicRouteInfoFromNameServer")
        self.heartbeats.task = ex.schedule_periodic(mode, self.heartbeats.periodic, first(1.0, beat), beat,
                                                    name="sendHeartbeatToAllBroker")
        self.persists.task = ex.schedule_periodic(mode, self.persists.periodic, first(10.0, persist), persist,
                                                  name="persistAllConsumerOffset")
        if self.orderly:
            lock = seconds(self.cfg, "rocketmq.client.rebalance.lockInterval")
            self.executor("ConsumeMessageScheduledThread").schedule_periodic(
                mode, self._lock_all, first(1.0, lock), lock, name="lockMQPeriodically")
        wait = seconds(self.cfg, "rocketmq.client.rebalance.waitInterval")
        self.spawn(self._rebalance_service(self._running_rebalance_phase(wait) if running else None))
        if self.fluid is None:
            self.spawn(self._consume_loop())
        if not running:
            self.spawn(self._progress_observer())
        self.start_gc(p["gc"])
        if not running:
            # DefaultMQPushConsumerImpl.start: route, heartbeat to all brokers, then rebalanceImmediately.
            yield from self.route_poll.read()
            yield from self.heartbeats.all()
            self._wakeup("start")
        self.booted.succeed()

    def _started(self) -> None:
        self.started_at = self.now
        self.emit("consumer_started", cid=self.cid, group=self.group, room=self.params["room"],
                  incarnation=self.incarnation, strategy=self.params["strategy"],
                  rebalance="server" if self.server_side else "client", orderly=self.orderly)

    def _running_start(self, state: dict[str, Any]) -> None:
        """``cluster.start = "running"`` (:mod:`.running`): at t = 0 the consumer holds its route, its group's
        client-id list as the brokers hold it, its channels registered at every broker of the route, and the
        queues the strategy gives it from that view, caught up at the committed offsets (0 at t = 0)."""
        self._started()
        route = state["routes"][self.topic]
        self._set_route(route["brokers"], route["queue_datas"])
        cids = group_client_ids(self.seed, state["groups"][self.group])
        cid_all = sorted_cids(cids)
        brokers = self.route_brokers
        source = brokers[int(self.rng("findBrokerAddrByTopic").integers(0, len(brokers)))]
        strategy_name, allocated = allocate_view(self.params, self.group, self.cid, self.route_sig, self.mq_all,
                                                 cid_all)
        rate = state["rate_per_queue"]
        for key in allocated:
            self._take(key, 0.0, "committed", "PULL")
            if self.fluid is not None:
                self.fluid.add(key, self.pqs[key], rate, 0.0, self.now)
        self.persists.changed()
        self.heartbeats.registered.update(brokers)
        self.cid_lists.seed(brokers, cids, len(cids))
        self.emit("rebalance_result", cid=self.cid, trigger="running", rebalance="client", cid_source=source,
                  cid_version=len(cids), cids=len(cid_all), mq_count=len(self.mq_set), route_changed_t=self.now,
                  strategy=strategy_name, allocated=list(allocated), added=list(allocated), removed=[], failed=[],
                  held=len(self.pqs), changed=bool(allocated), balanced=True, duration_s=0.0)
        self.spawn(self._progress_observer())

    def crash(self, reason: str = "crash") -> None:
        """Stop; what was consumed up to now is reported first (it happened, whatever follows)."""
        if self.alive:
            self._settle()
            self._report(list(self.pqs.values()), "stop")
            self._write_unchanged()
        super().crash(reason)

    def shutdown(self, cause: str) -> None:
        """``DefaultMQPushConsumerImpl.shutdown``: orderly unlock, POP acks, persist offsets, unregister, stop."""
        if not self.alive:
            return
        if self.orderly:
            self._unlock([k for k in self.pqs])
        self._ack_consumed()  # the consume service finishes its batch before it stops
        self._persist_all()
        brokers = list(self.route_brokers)
        for b in brokers:
            self.send(b, "UNREGISTER_CLIENT", {"group": self.group, "cid": self.cid})
        self.emit("consumer_stopping", cid=self.cid, cause=cause, brokers=brokers)
        self._report(list(self.pqs.values()), "stop")
        for key in list(self.pqs):
            pq = self.pqs.pop(key)
            self.emit("queue_dropped", queue=key, cid=self.cid, offset=pq.offset, reason=cause, mode=pq.mode,
                      held_s=self.now - pq.taken_at)
        self.crash(cause)

    def on_fault(self, kind: str, spec: dict[str, Any]) -> None:
        if kind == "scale_in":
            self.shutdown("scale_in")
        elif kind == "rolling_restart":
            self.restarts.on_fault(spec)
        elif kind == "scale_out":
            pass  # the consumer's start itself (its AgentSpec starts at the fault's time)
        elif kind == "slow_consumer":
            self._slow(spec["factor"])
            self.env.process(self._slow_end(spec["duration_s"]))
        else:
            super().on_fault(kind, spec)

    def _capacity(self) -> float:
        return float(self.params["capacity"]) * self.factor

    def _settle(self) -> None:
        """Closed form: bring every held queue's offset to now (nothing to do with the pull model)."""
        if self.fluid is not None:
            self.fluid.settle(self.now)

    def stop_the_world(self, duration: float, cause: str = "gc") -> None:
        """A pause stops the closed form's consumption until the gate opens again (the pull model's steps wait on
        the gate by themselves)."""
        fluid = self.fluid
        starts = fluid is not None and self.alive and duration > 0 and self.gate.is_open
        if starts:
            now = self.env._now
            fluid.pause(now)
            caught_up = fluid.caught_up()
        super().stop_the_world(duration, cause)
        if self._steady is not None and self.alive:
            self._steady.paused()
        if starts:
            persists = self.persists

            def resume() -> None:
                fluid.resume(self.env._now)
                persists.resumed(now, caught_up)

            self.gate.on_open(resume)

    def _slow(self, factor: float) -> None:
        if self.fluid is not None and self.alive:
            self.fluid.set_capacity(float(self.params["capacity"]) * float(factor), self.now)
            self.persists.changed(queues=False)
        self.factor = float(factor)
        if self.alive:
            self.emit("slow_consumer", cid=self.cid, factor=self.factor,
                      capacity=self.factor * float(self.params["capacity"]))

    def _slow_end(self, duration: float) -> Generator:
        yield self.env.timeout(duration)  # the operator's clock: outlives restarts
        self._slow(1.0)

    def on_message(self, msg: Message) -> None:
        if msg.kind == "NOTIFY_CONSUMER_IDS_CHANGED":
            self.cid_lists.heard(msg.src, msg.body.get("version"))
            self._wakeup("notify")
        elif msg.kind == CID_LIST_CHANGED:
            if self._steady is not None:
                self._steady.changed()
            self.cid_lists.heard(msg.src, msg.body["version"])
        elif msg.kind == TURN:
            self.restarts.on_turn(msg.body)

    # -- route and heartbeats ---------------------------------------------------------------------------
    def _timeout(self) -> float:
        return seconds(self.cfg, "mqClientApiTimeout")

    def _set_route(self, brokers: list[str], queue_datas: list) -> None:
        """A route read from the name server becomes the cached route (and ``route_updated``) if it changed."""
        sig = (self.topic, tuple(brokers), tuple(tuple(q) for q in queue_datas))
        if sig == self.route_sig:
            return
        if self._steady is not None:
            self._steady.changed()  # the runs before now drew from the route they had
        self.heartbeats.wake()
        previous = len(self.mq_set) if self.mq_set is not None else -1
        self.route_sig = sig
        self.route_brokers = list(brokers)
        # RebalanceImpl sorts mqAll on every rebalance; the order depends on the route only, so once per route.
        self.mq_set, self.mq_all = sorted_route(self.topic, queue_datas)
        self.route_changed_t = self.now
        self.emit("route_updated", cid=self.cid, brokers=self.route_brokers, queues=len(self.mq_set),
                  previous_queues=previous)

    def _persist_all(self) -> None:
        """``persistAllConsumerOffset``: the in-memory offsets of the held PULL queues, to their brokers (one
        one-way request per broker here, one per queue in the real client)."""
        by_broker: dict[str, list] = {}
        self._settle()
        for pq in self.pqs.values():
            if pq.mode == "PULL":
                by_broker.setdefault(pq.broker, []).append([pq.key, pq.offset])
            elif pq.mode == "BROADCAST":
                self.local_offsets[pq.key] = pq.offset
        for b, offsets in by_broker.items():
            self.send(b, "UPDATE_CONSUMER_OFFSET", {"group": self.group, "cid": self.cid, "offsets": offsets})

    # -- RebalanceService -------------------------------------------------------------------------------
    def _wakeup(self, cause: str) -> None:
        if not self._notified:
            self._notified = True
            self._wake_cause = cause
        self._rouse()

    def _rouse(self) -> None:
        """End the service's wait now (a wake-up, or a change its steady counting cannot count through)."""
        if self._waiter is not None and not self._waiter.triggered:
            self._waiter.succeed()

    def _running_rebalance_phase(self, wait: float) -> float:
        """A running start's first wait of the rebalance service. The group's last membership change woke every
        member's service together (``rebalanceImmediately``), and each waits ``waitInterval`` after its
        rebalance from then on, so a settled group's rebalances run in step: one phase per group, each member
        behind it by its notification's delivery and its own rebalance (a millisecond or two)."""
        group_phase = float(keyed_rng(self.seed, self.group, "rebalance-phase").uniform(0.0, wait))
        return group_phase + float(self.rng("rebalance-phase").uniform(0.0005, 0.002))

    def _wait_for_running(self, interval: float = 0.0, at: float | None = None) -> Generator:
        """``ServiceThread.waitForRunning``: return at once if woken since the last wait, else after
        ``interval`` (or at the time ``at``, a timer set earlier) or at the wake-up; returns the trigger."""
        if not self._notified:
            yield from self._woken_or_timer(delay=interval if at is None else None, at=at)
            yield from self.runnable()
        return self._trigger()

    def _trigger(self) -> str:
        """What a wait that ended now ran for: the wake-up's cause if woken since the last one (taken), else the
        timer."""
        woken, self._notified = self._notified, False
        return self._wake_cause if woken else "timer"

    def _woken_or_timer(self, delay: float | None = None, at: float | None = None) -> Generator:
        """Wait for a wake-up (``_waiter``) or a timer, whichever comes first: ``delay`` from now, or at the time
        ``at`` (computed earlier, as a timer set then would be), or none. As ``env.any_of([waiter,
        env.timeout(...)])`` without the condition's bookkeeping: the same entries in the same places of the event
        sequence (the timer's at once, the resumption's when the first of the two fires), so nothing else moves."""
        env = self.env
        resumed = env.event()

        def first(_ev: object) -> None:
            if not resumed.triggered:
                resumed.succeed()

        waiter = self._waiter = env.event()
        waiter.callbacks.append(first)
        if at is not None:
            call_at(env, at, first)
        elif delay is not None:
            call_later(env, delay, first)
        yield resumed
        self._waiter = None

    def _rebalance_service(self, first_wait: float | None = None) -> Generator:
        """``RebalanceService.run``; ``first_wait``: a running start's first wait (the service's phase)."""
        wait_interval = seconds(self.cfg, "rocketmq.client.rebalance.waitInterval")
        min_interval = seconds(self.cfg, "rocketmq.client.rebalance.minInterval")
        v5 = self.params["client_version"] == "5"
        wait, last = (wait_interval if first_wait is None else first_wait), -math.inf
        carry = ""  # a wake-up deferred by the 5.x minimum interval, or a retry while unbalanced
        while True:
            steady = self._steady
            if steady is not None and steady.active:
                trigger = yield from steady.wait()
            else:
                trigger = yield from self._wait_for_running(wait)
            wait = wait_interval
            if trigger == "timer" and carry:
                trigger = carry
            if v5:
                since = self.now - last
                if since < min_interval - 1e-6:  # Java compares whole milliseconds; floats must not spin
                    wait, carry = min_interval - since, trigger
                    continue
            balanced = yield from self._do_rebalance(trigger)
            carry = ""
            if v5:
                wait = wait_interval if balanced else min_interval
                last = self.now
                if not balanced:
                    carry = "retry"

    def _skipped(self, trigger: str, reason: str, source: str) -> bool:
        self._write_unchanged()
        self.emit("rebalance_skipped", cid=self.cid, trigger=trigger, reason=reason, cid_source=source)
        return False

    def _count_unchanged(self, first: float, last: float, runs: int = 1) -> None:
        """``runs`` more timer rebalances that changed nothing, the first ended at ``first``, the last at ``last``."""
        u = self._unchanged
        if not u[0]:
            u[1] = first
        u[0] += runs
        u[2] = last

    def _write_unchanged(self) -> None:
        """The count of timer rebalances that changed nothing, if any since the last written result (the
        steady ones due before now counted first)."""
        if self._steady is not None:
            self._steady.count_until(self.now)
        u = self._unchanged
        if u is not None and u[0]:
            self.emit("rebalances_unchanged", cid=self.cid, runs=u[0], first_t=u[1], last_t=u[2])
            u[0] = 0

    def _do_rebalance(self, trigger: str) -> Generator:
        t0 = self.now
        if self.mq_set is None or not self.route_brokers:
            return self._skipped(trigger, "no_route", "")
        mq_set, mq_all, brokers, route = self.mq_set, self.mq_all, list(self.route_brokers), self.route_sig
        source = brokers[int(self.rng("findBrokerAddrByTopic").integers(0, len(brokers)))]
        model = self.cfg["messageModel"]
        cid_all: tuple[str, ...] = ()
        cid_version = -1
        if self.server_side:
            # The broker gets the strategy's name (getName()) and allocates with its own view.
            strategy_name = make_strategy(self.params, []).name
            reply = yield from self.call(source, "QUERY_ASSIGNMENT", {
                "topic": self.topic, "group": self.group, "cid": self.cid,
                "strategy": strategy_name, "messageModel": model,
                "popShareQueueNum": self.cfg["popShareQueueNum"]}, timeout=self._timeout())
            if reply is None or not reply["ok"]:
                return self._skipped(trigger, "assignment_unavailable", source)
            mode, allocated = reply["mode"], list(reply["queues"])
        elif model == "BROADCASTING":
            mode, allocated, strategy_name = "BROADCAST", [queue_of(mq) for mq in mq_all], "BROADCASTING"
            source = ""
        else:
            reply = yield from self.cid_lists.read(source, trigger)
            if reply is None or not reply["cids"]:
                return self._skipped(trigger, "cid_list_unavailable" if reply is None else "cid_list_empty", source)
            cid_all, cid_version = sorted_cids(reply["cids"]), reply["version"]
            try:
                strategy_name, result = allocate_view(self.params, self.group, self.cid, route, mq_all, cid_all)
            except AllocationArgumentError:
                return self._skipped(trigger, "allocate_error", source)
            mode, allocated = "PULL", list(result)
        added, removed, failed = yield from self._update_process_queue_table(allocated, mode)
        held = sorted(self.pqs)
        balanced = set(held) == set(allocated)
        if self._unchanged is not None and trigger == "timer" and balanced and not (added or removed or failed):
            self._count_unchanged(self.now, self.now)
            if self._steady is not None:
                self._steady.enter(cid_all)
            return balanced
        self._write_unchanged()
        self.emit("rebalance_result", cid=self.cid, trigger=trigger, rebalance="server" if self.server_side else "client",
                  cid_source=source, cid_version=cid_version, cids=len(cid_all), mq_count=len(mq_set),
                  route_changed_t=self.route_changed_t, strategy=strategy_name, allocated=allocated, added=added,
                  removed=removed, failed=failed, held=len(held), changed=bool(added or removed), balanced=balanced,
                  duration_s=self.now - t0)
        if added or removed:
            yield from self.heartbeats.all()  # messageQueueChanged: subVersion bumped, a real heartbeat to all brokers
        return balanced

    def _update_process_queue_table(self, allocated: list[str], mode: str) -> Generator:
        """``updateProcessQueueTableInRebalance`` (and 5.x ``updateMessageQueueAssignment`` for POP)."""
        wanted = set(allocated)
        removed = []
        for key in list(self.pqs):
            if key not in wanted or self.pqs[key].mode != mode:
                self._drop(key, "rebalance")
                removed.append(key)
        if removed:
            self.persists.changed()
        added, failed = [], []
        for key in allocated:
            if key in self.pqs:
                continue
            if mode == "POP":
                self._take(key, -1.0, "pop", "POP")
                added.append(key)
                continue
            if self.orderly:
                locked = yield from self._lock([key])
                if key not in locked:
                    failed.append(key)
                    continue
            offset, source, supply = yield from self._compute_pull_from_where(key)
            if offset < 0 or key in self.pqs:
                failed.append(key)
                continue
            self._take(key, offset, source, mode)
            if self.fluid is not None:
                self.fluid.add(key, self.pqs[key], supply[0], supply[1], self.now)
                self.persists.changed()
            added.append(key)
        return added, removed, failed

    def _take(self, key: str, offset: float, source: str, mode: str) -> None:
        self.pqs[key] = _ProcessQueue(key, mode, offset, self.now, locked=self.orderly)
        self.emit("queue_taken", queue=key, cid=self.cid, offset=offset, offset_source=source, mode=mode)

    def _drop(self, key: str, reason: str) -> None:
        """``removeUnnecessaryMessageQueue``: persist the queue's offset, forget it; orderly: unlock it."""
        if self.fluid is not None:
            self.fluid.remove(key, self.now)
        pq = self.pqs.pop(key)
        self._report((pq,), "drop")
        if pq.mode == "PULL":
            self.send(pq.broker, "UPDATE_CONSUMER_OFFSET",
                      {"group": self.group, "cid": self.cid, "offsets": [[key, pq.offset]]})
        elif pq.mode == "BROADCAST":
            self.local_offsets[key] = pq.offset
        if self.orderly:
            self._unlock([key])
        self.emit("queue_dropped", queue=key, cid=self.cid, offset=pq.offset, reason=reason, mode=pq.mode,
                  held_s=self.now - pq.taken_at)

    def _compute_pull_from_where(self, key: str) -> Generator:
        cfw = self.cfg["consumeFromWhere"]
        body = {"group": self.group, "queue": key}
        if cfw == "CONSUME_FROM_TIMESTAMP":
            body["timestamp"] = self.started_at + self.cfg["consumeTimestamp"] / 1000.0
        reply = yield from self.call(parse_queue_key(key).broker_name, "QUERY_CONSUMER_OFFSET", body,
                                     timeout=self._timeout())
        if reply is None or not reply["ok"]:
            return -1.0, "unavailable", None
        supply = (float(reply["rate_per_queue"]), float(reply["since"]))  # what a pull would find: the closed form
        if self.cfg["messageModel"] == "BROADCASTING":
            if key in self.local_offsets:
                return self.local_offsets[key], "local", supply
        elif reply["offset"] >= 0:
            return float(reply["offset"]), "committed", supply
        if cfw == "CONSUME_FROM_FIRST_OFFSET":
            return 0.0, "first", supply
        if cfw == "CONSUME_FROM_TIMESTAMP":
            return float(reply["timestamp_offset"]), "timestamp", supply
        return float(reply["max_offset"]), "last", supply

    # -- orderly locks ----------------------------------------------------------------------------------
    def _lock(self, keys: list[str]) -> Generator:
        by_broker: dict[str, list[str]] = {}
        for k in keys:
            by_broker.setdefault(parse_queue_key(k).broker_name, []).append(k)
        locked: list[str] = []
        for b, ks in by_broker.items():
            reply = yield from self.call(b, "LOCK_BATCH_MQ", {"group": self.group, "cid": self.cid, "queues": ks},
                                         timeout=1.0)
            if reply is not None:
                locked += reply["locked"]
        return locked

    def _unlock(self, keys: list[str]) -> None:
        by_broker: dict[str, list[str]] = {}
        for k in keys:
            by_broker.setdefault(parse_queue_key(k).broker_name, []).append(k)
        for b, ks in by_broker.items():
            self.send(b, "UNLOCK_BATCH_MQ", {"group": self.group, "cid": self.cid, "queues": ks})

    def _lock_all(self) -> Generator:
        """``RebalanceImpl.lockAll``: re-lock every held queue; a queue the broker refuses stops being consumed."""
        keys = [k for k, pq in self.pqs.items() if pq.mode == "PULL"]
        if not keys:
            return
        locked = set((yield from self._lock(keys)))
        for k in keys:
            pq = self.pqs.get(k)
            if pq is None:
                continue
            pq.locked = k in locked
            if pq.locked:
                pq.lock_ts = self.now

    # -- consumption --------------------------------------------------------------------------------------
    def _consumable(self, pq: _ProcessQueue) -> bool:
        if not self.orderly:
            return True
        live = seconds(self.cfg, "rocketmq.client.rebalance.lockMaxLiveTime")
        return pq.locked and self.now - pq.lock_ts <= live

    def _consume_loop(self) -> Generator:
        tick = float(self.params["consume_tick_s"])
        while True:
            yield from self.sleep(tick)
            self._ack_consumed()
            budget = float(self.params["capacity"]) * self.factor * tick
            pull: dict[str, list[str]] = {}
            pops: list[str] = []
            for k, pq in self.pqs.items():
                if pq.mode == "POP":
                    pops.append(k)
                elif self._consumable(pq):
                    pull.setdefault(pq.broker, []).append(k)
            n = sum(len(v) for v in pull.values()) + len(pops)
            if n == 0:
                continue
            procs = [self.spawn(self._pull(b, ks)) for b, ks in pull.items()]
            procs += [self.spawn(self._pop(k, budget / n)) for k in pops]
            yield self.env.all_of(procs)
            yield from self.runnable()
            available: dict[str, float] = {}
            for proc in procs[:len(pull)]:
                for k, top in (proc.value or []):
                    pq = self.pqs.get(k)
                    if pq is not None and pq.mode != "POP":  # results of a dropped process queue are discarded
                        pq.max = max(pq.max, top)
                        available[k] = max(0.0, top - pq.offset)
            pop_used = sum(p.value or 0.0 for p in procs[len(pull):])
            for k, take in share(available, budget - pop_used).items():
                pq = self.pqs[k]
                pq.consumed(pq.offset, pq.offset + take)
                pq.offset += take

    def _pull(self, broker: str, keys: list[str]) -> Generator:
        """One batched pull of ``keys`` from ``broker``: each queue's max offset. Like every pull request of a
        CLUSTERING consumer it carries the queue's in-memory consume offset once there is one
        (``commitOffset``; the offset store has none until the first consumption), which the broker stores."""
        commit = [[k, pq.offset] for k in keys if (pq := self.pqs.get(k)) is not None and pq.mode == "PULL"
                  and pq.offset > pq.start] if self.cfg["messageModel"] == "CLUSTERING" else []
        reply = yield from self.call(broker, "PULL", {"group": self.group, "cid": self.cid, "queues": keys,
                                                      "commit": commit}, timeout=self._timeout())
        return reply["max"] if reply is not None else []

    def _pop(self, key: str, budget: float) -> Generator:
        """POP from the assignment's broker, consume what came, ack it; the messages consumed."""
        broker = parse_queue_key(key).broker_name
        reply = yield from self.call(broker, "POP", {
            "group": self.group, "cid": self.cid, "queue": key, "max": budget,
            "invisible_s": seconds(self.cfg, "popInvisibleTime")}, timeout=self._timeout())
        if reply is None or not reply["ranges"]:
            return 0.0
        pq = self.pqs.get(key)
        used = 0.0
        for qk, a, b in reply["ranges"]:
            if pq is not None:
                self._pop_ranges(qk, a, b)
            used += b - a
        if pq is not None:  # a dropped POP queue does not ack: its messages come back after the invisible time
            # Consumed over the next tick, acked when done: a pause or a crash before then leaves them unacked.
            self._acks.setdefault(broker, []).extend(reply["ranges"])
        return used

    def _ack_consumed(self) -> None:
        """Ack the messages popped at the previous tick, now consumed (per-message acks, as ranges)."""
        acks, self._acks = self._acks, {}
        for broker, ranges in acks.items():
            self.send(broker, "ACK", {"group": self.group, "cid": self.cid, "ranges": ranges})

    def _pop_ranges(self, key: str, a: float, b: float) -> None:
        # A POP assignment of queue id -1 covers every queue of the broker: progress is kept per real queue.
        sub = self.pop_progress.get(key)
        if sub is None:
            sub = self.pop_progress[key] = _ProcessQueue(key, "POP", -1.0, self.now, False)
        sub.consumed(a, b)

    # -- progress -----------------------------------------------------------------------------------------
    def _report(self, pqs: Iterable[_ProcessQueue], reason: str) -> None:
        """One ``consume_progress`` record of ``pqs``, a row a queue (their ranges since the last report), then
        forget the ranges. A POP assignment's row is per real queue with ranges (queue id -1 covers every queue of
        its broker)."""
        queue: list[str] = []
        mode: list[str] = []
        ranges: list[list[list[float]]] = []
        consumed: list[float] = []
        offset: list[float] = []
        max_offset: list[float] = []
        lag: list[float] = []
        for pq in pqs:
            if pq.mode == "POP":
                prefix = pq.key.rsplit("/", 1)[0] + "/"
                rows = [self.pop_progress[k] for k in sorted(k for k in self.pop_progress if k.startswith(prefix))
                        if self.pop_progress[k].ranges]
            else:
                rows = (pq,)
            for row in rows:
                r = row.ranges  # given away below: sorted in place
                if len(r) > 1:
                    r.sort()
                total = 0  # as sum() would: an int when nothing was consumed (the trace's encoding)
                for a, b in r:
                    total += b - a
                queue.append(row.key)
                mode.append(row.mode)
                ranges.append(r)
                consumed.append(total)
                if row.mode == "POP":
                    offset.append(-1.0)
                    max_offset.append(-1.0)
                    lag.append(-1.0)
                else:
                    offset.append(row.offset)
                    max_offset.append(row.max)
                    lag.append(row.max - row.offset)
                row.ranges = []
        if queue:
            self.emit_rows("consume_progress", {"queue": queue, "mode": mode, "ranges": ranges, "consumed": consumed,
                                                "offset": offset, "max_offset": max_offset, "lag": lag},
                           cid=self.cid, reason=reason)

    def _progress_observer(self) -> Generator:
        step = float(self.params["progress_interval_s"])
        t = math.floor(self.now / step) * step + step
        while True:
            yield self.env.timeout(t - self.now)  # an observer: not stopped by the JVM's pauses
            self._settle()
            self._report([self.pqs[key] for key in sorted(self.pqs)], "interval")
            t += step


class RollingRestarts:
    """The consumer's part in rolling restarts of the group: each consumer of the fault's globs, in number order,
    stops gracefully, stays down ``down_s``, starts, and ``gap_s`` after its start hands the turn to the next by a
    message (each consumer knows only its own state; they may live on different workers)."""

    def __init__(self, consumer: Consumer) -> None:
        self.c = consumer
        self.specs: dict[str, dict[str, Any]] = {}

    def order(self, spec: dict[str, Any]) -> list[str]:
        names = [n for n in self.c.params["all_consumers"] if any(fnmatch.fnmatchcase(n, g) for g in spec["agents"])]
        return sorted(names, key=consumer_index)

    def on_fault(self, spec: dict[str, Any]) -> None:
        key = f"{spec['at']}:{spec['label']}:{','.join(spec['agents'])}"
        self.specs[key] = spec
        if self.order(spec)[0] == self.c.name:
            self.c.env.process(self._turn(key))

    def on_turn(self, body: dict[str, Any]) -> None:
        if body["key"] in self.specs:
            self.c.env.process(self._turn(body["key"]))

    def _turn(self, key: str) -> Generator:
        """The operator's script for this consumer (not a process of the consumer: stopping it must not end it)."""
        c = self.c
        spec = self.specs[key]
        if not c.alive:
            return
        c.shutdown("rolling_restart")
        yield c.env.timeout(spec["down_s"])
        c.start()
        yield c.booted
        order = self.order(spec)
        i = order.index(c.name)
        if i + 1 == len(order):
            c.emit("group_rolling_restart_done", consumers=len(order))
            return
        yield c.env.timeout(spec["gap_s"])
        c.send(order[i + 1], TURN, {"key": key})
