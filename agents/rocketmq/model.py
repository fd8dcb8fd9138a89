"""Scenario sections and agent construction of the RocketMQ model.

``[config]`` takes RocketMQ's own property names (``pollNameServerInterval``, ``heartbeatBrokerInterval``,
``rocketmq.client.rebalance.waitInterval``, ``notifyConsumerIdsChangedEnable``, 5.x brokers'
``realTimeNotifyConsumerChange`` and ``loadBalancePollNameServerInterval``, ...; :mod:`.config`) with RocketMQ's
defaults; ``[strategy]`` names the ``allocateMessageQueueStrategy`` by its Java class name, the listener kind and
the client generation. The emulator's own knobs (cluster size, rates, capacities, observation cadences) live in
``[cluster]`` and ``[workload]``.

Agents: ``namesrv``, brokers ``broker-a``, ``broker-b``, ... (and those a ``broker_join`` fault adds), consumers
``consumer-1``, ... (and those a ``scale_out`` fault adds). With ``cluster.rooms``, brokers and consumers are
dealt to the rooms round robin.

Groups and topics (:func:`group_layout`): ``workload.groups`` consumer groups, each subscribed to its own topic
(one group: ``workload.group`` and ``workload.topic``; several: ``<group>-<n>`` and ``<topic>-<n>``, n from 1).
Consumers are dealt to the groups round robin by number (consumer-1 to group 1, consumer-2 to group 2, ...; a
scale-out's consumers too). Group n's topic has ``cluster.queues_per_broker`` queues on each of
``workload.topic_brokers`` consecutive brokers (0: every broker), the windows starting at ``floor((n-1) ×
brokers / groups)`` and wrapping, so that the topics spread evenly; a broker that a ``broker_join`` adds serves
every group's topic.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from clusteremu.agents.common.jvm import gc_table
from clusteremu.emulator import faults as kernel_faults
from clusteremu.emulator.executor import FIXED_RATE, MODES
from clusteremu.emulator.models import AgentSpec
from clusteremu.emulator.network import Condition
from clusteremu.scenarios.schema import Field, Table

from . import broker, consumer, namesrv  # noqa: F401  (declares their event kinds)
from . import config as rmq_config
from . import faults as rmq_faults
from .broker import PERM_READ_WRITE
from .cid_lists import UNANSWERED, stop_times, unanswered_problems
from .names import NAMESRV, broker_names, consumer_index, consumer_names
from .running import RUNNING, STARTS, running_state

__all__ = ["GroupLayout", "MODEL", "RocketMQModel", "SECTIONS", "group_layout"]

#: ``workload.consumption``: the consumers' steps and pulls, or their closed form (:mod:`.fluid`)
CONSUMPTIONS = ("pull", "closed_form")
#: ``workload.heartbeats``: every periodic heartbeat a real call, or the periodic ones as leases (:mod:`.heartbeats`)
HEARTBEATS = ("messages", "lease")
#: ``workload.route_poll``: every route poll a real call, or a kernel poll lease (:mod:`.route_poll`)
ROUTE_POLLS = ("messages", "lease")
#: ``workload.cid_lists``: a real client-id list read per rebalance, or held lists while steady (:mod:`.cid_lists`)
CID_LISTS = ("messages", "lease")
#: ``workload.register_broker``: every periodic REGISTER_BROKER a message, or the periodic ones as a kernel lease
#: (:mod:`.registration`)
REGISTER_BROKERS = ("messages", "lease")
#: ``workload.persist_offsets``: every periodic UPDATE_CONSUMER_OFFSET a message, or the periodic ones as kernel
#: leases whose keep-alives carry the closed form's offsets (:mod:`.persists`)
PERSIST_OFFSETS = ("messages", "lease")

#: strategies the model can build from a scenario (ByConfig and ByMachineRoom need per-client lists)
MODEL_STRATEGIES = ("AllocateMessageQueueAveragely", "AllocateMessageQueueAveragelyByCircle",
                    "AllocateMessageQueueConsistentHash", "AllocateMachineRoomNearby")


def _strategy_names() -> tuple[str, ...]:
    from clusteremu.strategies.rocketmq.registry import PACKAGE

    return MODEL_STRATEGIES + tuple(PACKAGE + n for n in MODEL_STRATEGIES)


SECTIONS = {
    "cluster": Table(
        {
            "brokers": Field("int", default=2, ge=1, le=10_000, doc="brokers at the start (broker-a, broker-b, ...)"),
            "queues_per_broker": Field("int", default=8, ge=1, le=100_000,
                                       doc="read queues of the topic on each broker (4 in RocketMQ's "
                                           "defaultTopicQueueNums; 8 is common for a created topic)"),
            "consumers": Field("int", default=4, ge=1, le=100_000, doc="consumers at the start (consumer-1, ...)"),
            "consumer_capacity": Field("float", default=1000.0, gt=0, doc="messages a consumer consumes per second"),
            "rooms": Field("list", default=[], item=Field("str"),
                           doc="machine rooms; brokers and consumers are dealt to them round robin"),
            "start_jitter_s": Field("float", default=2.0, ge=0,
                                    doc="spread of the consumers' first starts (start = \"running\": of their "
                                        "timers' phases)"),
            "start": Field("str", default="cold", choices=STARTS,
                           doc="cold: RocketMQ's start-up (first heartbeats, notifications, the rebalance storm); "
                               "running: at t = 0 the cluster is running, every group settled on its strategy's "
                               "allocation of one shared view (agents/rocketmq/running.py); added consumers start "
                               "cold"),
            "timer_mode": Field("str", default="fixed_rate", choices=MODES,
                                doc="the kind of every task RocketMQ schedules with scheduleAtFixedRate (the "
                                    "clients' MQClientInstance tasks, the brokers' registerBrokerAll, "
                                    "ClientHousekeepingService scan and 5.x TopicRouteInfoManager refresh and "
                                    "DefaultConsumerIdsChangeListener batch task, the name server's scan); "
                                    "fixed_delay shows what scheduleWithFixedDelay would do. Loops that wait after "
                                    "each run (RebalanceService, PopReviveService) keep their own kind"),
            "gc": gc_table(young_every_s=30.0, young_pause_ms=20.0),
        }
    ),
    "workload": Table(
        {
            "topic": Field("str", default="TopicTest"),
            "group": Field("str", default="please_rename_unique_group_name_4",
                           doc="the consumer group (RocketMQ's quick-start name by default)"),
            "groups": Field("int", default=1, ge=1, le=10_000,
                            doc="consumer groups, each with its own topic (names <group>-<n>, <topic>-<n> when > 1)"),
            "topic_brokers": Field("int", default=0, ge=0, le=10_000,
                                   doc="brokers each group's topic is created on (consecutive, wrapping; 0: all)"),
            "rate_per_queue": Field("float", default=100.0, ge=0, doc="producers' rate into each queue, msg/s"),
            "consume_tick_s": Field("float", default=1.0, gt=0,
                                    doc="the consumers' pull-and-consume step (the fluid's time step; pull only)"),
            "consumption": Field("str", default="pull", choices=CONSUMPTIONS,
                                 doc="pull: a pull per broker and a consume step every consume_tick_s; closed_form: "
                                     "each held queue's offset a closed form of time, no step and no pull message "
                                     "(CLUSTERING concurrently consumers with client-side rebalance, brokers that "
                                     "always answer)"),
            "progress_interval_s": Field("float", default=5.0, gt=0, doc="consume_progress cadence"),
            "stats_interval_s": Field("float", default=5.0, gt=0, doc="the brokers' queue_stats cadence"),
            "heartbeats": Field("str", default="messages", choices=HEARTBEATS,
                                doc="messages: every periodic HEARTBEAT a call per broker; lease: the periodic "
                                    "ones as kernel leases, the first one to a broker and those after a change "
                                    "still calls (agents/rocketmq/heartbeats.py; fixed_rate timers only: under "
                                    "fixed_delay they stay calls)"),
            "route_poll": Field("str", default="messages", choices=ROUTE_POLLS,
                                doc="messages: every pollNameServerInterval run a GET_ROUTEINFO_BY_TOPIC call; "
                                    "lease: the first run declares a kernel poll lease with the name server, "
                                    "which delivers a changed route at the next poll time "
                                    "(agents/rocketmq/route_poll.py; fixed_rate timers only: under fixed_delay "
                                    "the polls stay calls)"),
            "cid_lists": Field("str", default="messages", choices=CID_LISTS,
                               doc="messages: every rebalance reads the client-id list from the broker it draws; "
                                   "lease: a timer rebalance takes the list last read from that broker while the "
                                   "group is steady (no change heard for twice waitInterval, none of that "
                                   "broker's since that read, no network condition on the link and no fault "
                                   "stopping the consumer within serverChannelMaxIdleTimeSeconds), brokers "
                                   "telling their readers each new version (agents/rocketmq/cid_lists.py; "
                                   "client-side rebalance of CLUSTERING consumers, brokers that always answer)"),
            "register_broker": Field("str", default="messages", choices=REGISTER_BROKERS,
                                     doc="messages: every registerNameServerPeriod run a REGISTER_BROKER to the "
                                         "name server; lease: the task's first run declares a kernel keep-alive "
                                         "lease with it, whose last keep-alive is the broker's last update for "
                                         "scanNotActiveBroker; the start's registration and one the name server "
                                         "would take as a first (it removed or forgot the broker) stay messages "
                                         "(agents/rocketmq/registration.py)"),
            "persist_offsets": Field("str", default="messages", choices=PERSIST_OFFSETS,
                                     doc="messages: every persistConsumerOffsetInterval run an "
                                         "UPDATE_CONSUMER_OFFSET per broker; lease: the run after a broker gets "
                                         "queues declares a kernel lease with it whose keep-alives carry the "
                                         "offsets, each broker computing them from the closed form the consumer "
                                         "publishes at every change of its consumption; drops and shutdowns still "
                                         "persist by message (agents/rocketmq/persists.py; needs workload."
                                         "consumption = \"closed_form\", workload.trace_commits = false and "
                                         "fixed_rate timers)"),
            "trace_commits": Field("bool", default=True,
                                   doc="write offset_committed at every change of a stored offset (false: the "
                                       "committed offsets are seen in queue_stats only; for large runs)"),
            "trace_unchanged_rebalances": Field("bool", default=True,
                                                doc="write a rebalance_result for every timer rebalance (false: one "
                                                    "that changed nothing and is balanced is counted, each "
                                                    "consumer's count written as rebalances_unchanged before its "
                                                    "next result, when it stops and at the run's end; for large "
                                                    "runs)"),
        }
    ),
    "strategy": Table(
        {
            "allocateMessageQueueStrategy": Field("str", default="AllocateMessageQueueAveragely",
                                                  choices=_strategy_names),
            "virtualNodeCnt": Field("int", default=10, ge=0, doc="AllocateMessageQueueConsistentHash"),
            "innerStrategy": Field("str", default="AllocateMessageQueueAveragely", choices=_strategy_names,
                                   doc="AllocateMachineRoomNearby's strategy within a room"),
            "listener": Field("str", default="concurrently", choices=("concurrently", "orderly"),
                              doc="MessageListenerConcurrently or MessageListenerOrderly (queue locks)"),
            "client_version": Field("str", default="4.9", choices=("4.9", "5"),
                                    doc="RebalanceService of 4.9.x (every waitInterval) or 5.x (retry every "
                                        "minInterval while unbalanced; broker-side assignment possible)"),
        }
    ),
    "config": Table({}, open=True, doc="RocketMQ properties; missing keys take RocketMQ's defaults"),
    "faults": rmq_faults.schema(),
}


@dataclass(frozen=True)
class GroupLayout:
    """One consumer group, its topic and the indexes (0-based, among the initial brokers) of the brokers the topic
    is created on."""

    group: str
    topic: str
    brokers: frozenset[int]


def group_layout(workload: dict[str, Any], brokers: int) -> list[GroupLayout]:
    """The groups of ``workload`` (its ``groups``, ``group``, ``topic``, ``topic_brokers``) over ``brokers``
    brokers: see the module's docs."""
    n = workload["groups"]
    span = workload["topic_brokers"] or brokers
    out = []
    for g in range(n):
        start = g * brokers // n
        names = (workload["group"], workload["topic"]) if n == 1 else \
            (f"{workload['group']}-{g + 1}", f"{workload['topic']}-{g + 1}")
        out.append(GroupLayout(*names, frozenset((start + j) % brokers for j in range(span))))
    return out


def _rooms(names: list[str], rooms: list[str]) -> dict[str, str]:
    return {n: (rooms[i % len(rooms)] if rooms else "") for i, n in enumerate(names)}


def _closed_form_problems(data: dict[str, Any], cfg: dict[str, Any]) -> list[tuple[str, str]]:
    """Where ``workload.consumption = "closed_form"`` would not consume what pulls would: it has no pull to fail,
    to wait on a lock or to pop, so it needs PULL consumers of CLUSTERING, concurrently, and brokers that answer
    throughout."""
    key = "workload.consumption"
    problems = []
    if cfg["messageModel"] != "CLUSTERING":
        problems.append((key, "closed_form models CLUSTERING consumers only (config.messageModel)"))
    if data["strategy"]["listener"] != "concurrently":
        problems.append((key, "closed_form models concurrently consumers only (orderly ones hold queue locks)"))
    if not cfg["clientRebalance"]:
        problems.append((key, "closed_form models client-side rebalance only (config.clientRebalance)"))
    brokers = broker_names(data["cluster"]["brokers"]) + list(rmq_faults.broker_joins(data["faults"]))
    for i, f in enumerate(data["faults"]):
        if f["kind"] in kernel_faults.NETWORK_FAULTS:
            problems.append((f"faults[{i}].kind", f"a {f['kind']} fault can stop pulls, which closed_form does not "
                                                  "send: use workload.consumption = \"pull\""))
        elif f["kind"] in UNANSWERED and any(fnmatch.fnmatchcase(b, g) for b in brokers for g in f["agents"]):
            problems.append((f"faults[{i}].agents", f"a {f['kind']} fault of a broker stops its answers to pulls, "
                                                    "which closed_form does not send: use workload.consumption = "
                                                    "\"pull\""))
    return problems


def _client_side_problems(key: str, what: str, cfg: dict[str, Any]) -> list[tuple[str, str]]:
    """``key``'s setting ``what`` ("running sets up", ...) needs CLUSTERING consumers that rebalance themselves."""
    problems = []
    if cfg["messageModel"] != "CLUSTERING":
        problems.append((key, f"{what} CLUSTERING consumers only (config.messageModel)"))
    if not cfg["clientRebalance"]:
        problems.append((key, f"{what} client-side rebalance only (config.clientRebalance)"))
    return problems


def _cid_lists_problems(data: dict[str, Any], cfg: dict[str, Any]) -> list[tuple[str, str]]:
    """Where ``workload.cid_lists = "lease"`` has no list to hold (BROADCASTING and broker-side assignment read
    none), or cannot see a broker stop answering."""
    key = "workload.cid_lists"
    brokers = broker_names(data["cluster"]["brokers"]) + list(rmq_faults.broker_joins(data["faults"]))
    return _client_side_problems(key, "lease holds the lists of", cfg) + \
        unanswered_problems(data["faults"], brokers, key)


def _register_broker_problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Where ``workload.register_broker = "lease"`` is not exact: a pause of the name server (the one-by-one
    registrations it holds race its overdue scan at the pause's end; :mod:`.registration`)."""
    return [(f"faults[{i}].agents", f"a {f['kind']} fault of the name server races its held registrations "
                                    "against its scan, which workload.register_broker = \"lease\" does not model: "
                                    "use \"messages\"")
            for i, f in enumerate(data["faults"]) if f["kind"] in ("pause", "gc_storm")
            and any(fnmatch.fnmatchcase(NAMESRV, g) for g in f.get("agents", ()))]


def _persist_offsets_problems(data: dict[str, Any]) -> list[tuple[str, str]]:
    """Where ``workload.persist_offsets = "lease"`` has nothing to compute the offsets from (the pull model), no
    commit event to write per keep-alive (``trace_commits``), or no fixed grid (``fixed_delay``: a run delayed
    behind another task of the thread moves every later run)."""
    key, work = "workload.persist_offsets", data["workload"]
    problems = []
    if work["consumption"] != "closed_form":
        problems.append((key, "lease needs workload.consumption = \"closed_form\" (the brokers compute the "
                              "offsets from it)"))
    if work["trace_commits"]:
        problems.append((key, "lease writes no offset_committed per keep-alive: set workload.trace_commits = "
                              "false"))
    if data["cluster"]["timer_mode"] != FIXED_RATE:
        problems.append((key, "lease keeps scheduleAtFixedRate's grid: cluster.timer_mode must be fixed_rate"))
    return problems


def _running_problems(data: dict[str, Any], cfg: dict[str, Any]) -> list[tuple[str, str]]:
    """Where ``cluster.start = "running"`` has no settled state to start from: it sets up client-side
    allocations of CLUSTERING concurrently consumers (orderly ones would hold broker locks, POP and broker-side
    assignment keep their state at the broker)."""
    key = "cluster.start"
    problems = _client_side_problems(key, "running sets up", cfg)
    if data["strategy"]["listener"] != "concurrently":
        problems.append((key, "running sets up concurrently consumers only (orderly ones hold queue locks)"))
    return problems


class RocketMQModel:
    name = "rocketmq"
    description = "RocketMQ name server, brokers and push consumers: client-side rebalance (4.9.x/5.x), queue " \
                  "locks, broker-side assignment and POP"
    sections = SECTIONS

    def check(self, data: dict[str, Any]) -> list[tuple[str, str]]:
        problems = rmq_config.check(data["config"])
        strat = data["strategy"]
        cfg = rmq_config.resolve(data["config"])
        from clusteremu.strategies.rocketmq.registry import simple_name

        if simple_name(strat["allocateMessageQueueStrategy"]) == "AllocateMachineRoomNearby":
            if not data["cluster"]["rooms"]:
                problems.append(("cluster.rooms", "AllocateMachineRoomNearby needs machine rooms"))
            if simple_name(strat["innerStrategy"]) == "AllocateMachineRoomNearby":
                problems.append(("strategy.innerStrategy", "cannot be AllocateMachineRoomNearby itself"))
        if not cfg["clientRebalance"] and strat["client_version"] != "5":
            problems.append(("config.clientRebalance", "broker-side assignment is RocketMQ 5: set "
                                                       "strategy.client_version = \"5\""))
        if cfg["defaultMessageRequestMode"] == "POP" and strat["listener"] == "orderly":
            problems.append(("strategy.listener", "orderly consumers rebalance on the client: POP does not apply"))
        cluster = data["cluster"]
        if data["workload"]["topic_brokers"] > cluster["brokers"]:
            problems.append(("workload.topic_brokers", f"more than the {cluster['brokers']} brokers of cluster.brokers"))
        problems += rmq_faults.check(data["faults"], consumer_names(cluster["consumers"]),
                                     broker_names(cluster["brokers"]))
        if data["workload"]["consumption"] == "closed_form":
            problems += _closed_form_problems(data, cfg)
        if cluster["start"] == RUNNING:
            problems += _running_problems(data, cfg)
        if data["workload"]["cid_lists"] == "lease":
            problems += _cid_lists_problems(data, cfg)
        if data["workload"]["register_broker"] == "lease":
            problems += _register_broker_problems(data)
        if data["workload"]["persist_offsets"] == "lease":
            problems += _persist_offsets_problems(data)
        return problems

    def agents(self, data: dict[str, Any]) -> list[AgentSpec]:
        cluster, work, strat = data["cluster"], data["workload"], data["strategy"]
        cfg = rmq_config.resolve(data["config"])
        rooms = cluster["rooms"]
        brokers = broker_names(cluster["brokers"])
        joins = rmq_faults.broker_joins(data["faults"])
        broker_room = _rooms(brokers + list(joins), rooms)
        for b, f in joins.items():
            if f["room"]:
                broker_room[b] = f["room"]
        consumers = consumer_names(cluster["consumers"])
        added = rmq_faults.scale_out_consumers(data["faults"])
        all_consumers = consumers + list(added)
        consumer_room = _rooms(all_consumers, rooms)
        assignment = not cfg["clientRebalance"]
        common = {"config": cfg, "gc": cluster["gc"], "timer_mode": cluster["timer_mode"], "namesrv": NAMESRV,
                  "heartbeats": work["heartbeats"], "route_poll": work["route_poll"],
                  "cid_lists": work["cid_lists"], "register_broker": work["register_broker"],
                  "persist_offsets": work["persist_offsets"]}
        groups = group_layout(work, len(brokers))
        running = None
        if cluster["start"] == RUNNING:
            members = {g.group: [] for g in groups}
            for c in consumers:
                members[groups[(consumer_index(c) - 1) % len(groups)].group].append(c)
            running = running_state(
                members, {g.group: g.topic for g in groups},
                {g.topic: {brokers[i]: cluster["queues_per_broker"] for i in g.brokers} for g in groups},
                consumer_room, broker_room, work["rate_per_queue"], PERM_READ_WRITE)
        specs = [AgentSpec(NAMESRV, "clusteremu.agents.rocketmq.namesrv:NameServer", {**common, "running": running})]
        for i, b in enumerate(brokers + list(joins)):
            f = joins.get(b)
            queues = f["queues"] if f and f["queues"] else cluster["queues_per_broker"]
            served = [g for g in groups if f or i in g.brokers]
            specs.append(AgentSpec(b, "clusteremu.agents.rocketmq.broker:Broker", {
                **common, "topics": {g.topic: {"group": g.group, "queues": queues} for g in served},
                "room": broker_room[b], "rate_per_queue": work["rate_per_queue"],
                "stats_interval_s": work["stats_interval_s"], "assignment": assignment,
                "trace_commits": work["trace_commits"], "running": None if f else running,
            }, start_at=f["at"] if f else 0.0))
        strategy_params: dict[str, Any] = {}
        from clusteremu.strategies.rocketmq.registry import simple_name

        name = simple_name(strat["allocateMessageQueueStrategy"])
        inner = simple_name(strat["innerStrategy"])
        if name == "AllocateMessageQueueConsistentHash" or (name == "AllocateMachineRoomNearby"
                                                            and inner == "AllocateMessageQueueConsistentHash"):
            strategy_params["virtualNodeCnt"] = strat["virtualNodeCnt"]
        if name == "AllocateMachineRoomNearby":
            strategy_params["innerStrategy"] = inner
        for c in all_consumers:
            g = groups[(consumer_index(c) - 1) % len(groups)]
            specs.append(AgentSpec(c, "clusteremu.agents.rocketmq.consumer:Consumer", {
                **common, "group": g.group, "topic": g.topic, "room": consumer_room[c], "strategy": name, "strategy_params": strategy_params,
                "broker_rooms": {b: r for b, r in broker_room.items() if r},
                "orderly": strat["listener"] == "orderly", "client_version": strat["client_version"],
                "capacity": cluster["consumer_capacity"], "consume_tick_s": work["consume_tick_s"],
                "consumption": work["consumption"],
                "progress_interval_s": work["progress_interval_s"], "start_jitter_s": cluster["start_jitter_s"],
                "trace_unchanged_rebalances": work["trace_unchanged_rebalances"],
                "all_consumers": all_consumers, "running": None if c in added else running,
                "stops": stop_times(data["faults"], c),
            }, start_at=added.get(c, 0.0)))
        return specs

    def network_conditions(self, data: dict[str, Any]) -> list[Condition]:
        return kernel_faults.network_conditions(data["faults"])


MODEL = RocketMQModel()
