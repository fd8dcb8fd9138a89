"""One scheduling round of Storm's ``ResourceAwareScheduler``: which topologies get placed, which are evicted,
and the status text Storm shows for each.

2.x (the default; ``ResourceAwareScheduler.schedule`` of Storm 2.8):

1. The priority strategy orders every topology (:mod:`.priority`).
2. Down that order, a topology with no unassigned executor keeps its status ("Fully Scheduled" when it has
   none). Any other is tried on a working copy of the cluster, up to
   ``resource.aware.scheduler.max.topology.scheduling.attempts`` times: each attempt first makes the
   cluster-wide sum check (:class:`.eviction.SchedulingResources`) and runs the topology's
   ``topology.scheduler.strategy`` only when it passes. Placement is all-or-nothing: success commits the
   attempt (with the evictions made for it) to the cluster; "not enough resources" evicts whole topologies
   from the end of the order (:func:`.eviction.select_evictions`) and tries again; any other failure stops.
   When the topology still fails, the cluster is left as it was — the evictions are rolled back — but the
   round's evicted map still lists them, as Storm's ``getEvictedTopologiesMap`` does.

1.x (selected by ``resource.aware.scheduler.eviction.strategy``, see :func:`.registry.generation_of`;
``ResourceAwareScheduler`` of Storm 1.2): users keep pending/running/attempted/invalid queues; the 1.x
priority strategy names one topology at a time by "% of guarantee used"; its strategy runs with no attempt
limit and no sum check; each "not enough resources" asks ``DefaultEvictionStrategy`` for one victim, whose
slots are freed and who goes back to pending (and is tried again later in the round); when no victim is
found the state is restored from the checkpoint taken before the topology, evictions included.

Not modelled: the per-topology scheduling timeout (strategies here are pure and bounded by their state-search
limit), the strategy whitelist, blacklisting, shared memory. Storm 1.x could loop forever when evictions
chase each other; here a 1.x round that exceeds a generous bound of picks raises ``RunFailure``. The 1.x
placement is modelled by ``DefaultResourceAwareStrategyOld`` (backtracking where 1.2 was greedy), with 1.2's
result texts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from clusteremu.base.errors import RunFailure
from clusteremu.base.java import java_order

from . import registry
from .cluster import ClusterState
from .config import (
    RESOURCE_AWARE_SCHEDULER_MAX_TOPOLOGY_SCHEDULING_ATTEMPTS,
    RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY,
    RESOURCE_AWARE_SCHEDULER_USER_POOLS,
    TOPOLOGY_SCHEDULER_STRATEGY,
)
from .eviction import SchedulingResources, select_evictions
from .priority import (
    PriorityInput,
    TopologyDemand,
    UserGuarantee,
    V1User,
)
from .resources import ResourceRequest
from .scheduling.result import SchedulingResult, SchedulingStatus
from .sorting.recorder import SortRecorder
from .topology import Topology

__all__ = ["AttemptRecord", "RoundResult", "schedule_round", "topology_demand"]

FULLY_SCHEDULED = "Fully Scheduled"


@dataclass
class AttemptRecord:
    """One try of one topology: whether its strategy ran (the sum check may skip it), the result, and the
    topologies evicted after it; ``sorts`` are the node sorter's records when explaining."""

    attempt: int
    strategy_ran: bool
    result: str
    evicted: list[str] = field(default_factory=list)
    sorts: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class RoundResult:
    """What one round decided.

    ``order``: topology ids in the order the priority strategy gave (2.x: every topology; 1.x: each pick, a
    topology evicted and picked again appears again); ``picks``: for ``--explain``, each pick with every
    user's score; ``status``: Storm's status text per topology id; ``evicted``: id → ids evicted while
    trying it (kept even when rolled back); ``attempts``: id → its tries; ``strategies``: id → the
    scheduling strategy class name it ran with; ``state``: the cluster after the round.
    """

    generation: registry.Generation
    order: list[str]
    picks: list[dict[str, Any]]
    status: dict[str, str]
    evicted: dict[str, list[str]]
    attempts: dict[str, list[AttemptRecord]]
    strategies: dict[str, str]
    state: ClusterState


def _run_strategy(cls: type, state: ClusterState, topology: Topology,
                  recorder: SortRecorder | None) -> SchedulingResult:
    """A new instance of ``cls`` schedules ``topology`` on ``state`` (Storm creates one per topology and
    round; the strategies here keep no state between calls, so one per attempt is the same)."""
    return cls().schedule(state, topology, recorder)


def topology_demand(td: Topology, now_secs: int) -> TopologyDemand:
    """What priority and eviction read of a topology (its whole request, uptime at ``now_secs``)."""
    total = td.total_request()
    return TopologyDemand(
        id=td.id, name=td.name, submitter=td.user or "", priority=td.priority, uptime=td.up_time(now_secs),
        cpu=td.total_requested_cpu(), memory=td.total_requested_memory(), generic=dict(total.generic))


def schedule_round(state: ClusterState, now_secs: int, *, explain: bool = False) -> RoundResult:
    """Run one round on ``state`` (modified in place) with its daemon conf ``state.conf``; ``now_secs`` is the
    virtual time uptimes are measured at; ``explain`` keeps the node sorter's records of every attempt.
    ``KeyError`` for an unknown priority or eviction strategy."""
    generation = registry.generation_of(state.conf)
    if generation == "1.x":
        return _Round1x(state, now_secs, explain).run()
    return _Round2x(state, now_secs, explain).run()


def _topologies_in_map_order(state: ClusterState) -> list[Topology]:
    # Storm's Topologies is a HashMap by id: users and ties follow its iteration order
    return [state.topologies[i] for i in java_order(state.topologies)]


def _pools(state: ClusterState) -> Mapping[str, Mapping[str, float]]:
    return state.conf.get(RESOURCE_AWARE_SCHEDULER_USER_POOLS) or {}


def _strategy_name(td: Topology, generation: registry.Generation) -> str:
    name = td.conf[TOPOLOGY_SCHEDULER_STRATEGY]
    if generation == "2.x" and name.startswith("backtype.storm"):
        name = name.replace("backtype.storm", "org.apache.storm")  # topologies submitted by Storm 0.x clients
    return name


def _unknown_strategy_status(td: Topology) -> str:
    return ("Unsuccessful in scheduling - failed to create instance of topology strategy "
            f"{td.conf[TOPOLOGY_SCHEDULER_STRATEGY]}. Please check logs for details")


def _java_str(value: str | None) -> str:
    return "null" if value is None else value  # StringBuilder.append / concatenation of a null String


class _Round2x:
    def __init__(self, state: ClusterState, now_secs: int, explain: bool) -> None:
        self.state = state
        self.now = now_secs
        self.explain = explain
        self.max_attempts = int(state.conf[RESOURCE_AWARE_SCHEDULER_MAX_TOPOLOGY_SCHEDULING_ATTEMPTS])
        self.evicted: dict[str, list[str]] = {}
        self.attempts: dict[str, list[AttemptRecord]] = {}
        self.strategies: dict[str, str] = {}

    def run(self) -> RoundResult:
        state = self.state
        priority = registry.priority_strategy(state.conf[RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY], "2.x")
        topologies = _topologies_in_map_order(state)
        inp = PriorityInput(
            topologies=tuple(topology_demand(td, self.now) for td in topologies),
            pools=_pools(state), total_cpu=state.cluster_total_cpu(), total_memory=state.cluster_total_memory(),
            total_generic=state.cluster_total_generic())
        ordered = priority.ordered(inp)
        order = list(ordered.order)
        for topology_id in order:
            td = state.topologies[topology_id]
            if not state.needs_scheduling(td):
                state.set_status_if_absent(topology_id, FULLY_SCHEDULED)
            else:
                self._schedule_topology(td, order)
        picks = [{"topology": p.topology, "user": p.user, "score": p.score, "scores": dict(p.scores)}
                 for p in ordered.picks]
        return RoundResult("2.x", order, picks, dict(state.status), self.evicted, self.attempts,
                           self.strategies, state)

    def _schedule_topology(self, td: Topology, order: list[str]) -> None:
        state = self.state
        name = _strategy_name(td, "2.x")
        try:
            cls = registry.scheduling_strategy(name, "2.x")
        except KeyError:
            state.set_status(td.id, _unknown_strategy_status(td))
            return
        self.strategies[td.id] = registry.canonical_name("scheduling", name, "2.x")
        records = self.attempts.setdefault(td.id, [])
        working = state.copy()  # evictions happen here; committed only with a successful attempt
        resources = SchedulingResources(
            working.non_blacklisted_available_resources(), td.total_request(),
            *_scheduled(working, td), known_generic=state.cluster_total_generic())
        for attempt_no in range(1, self.max_attempts + 1):
            attempt = working.copy()
            resources.reset_remaining()
            recorder = SortRecorder() if self.explain else None
            ran = resources.can_schedule()
            if ran:
                result = _run_strategy(cls, attempt, td, recorder)
            else:
                result = SchedulingResult.failure(SchedulingStatus.FAIL_NOT_ENOUGH_RESOURCES, "")
            record = AttemptRecord(attempt_no, ran, str(result), sorts=recorder.sorts if recorder else [])
            records.append(record)
            if result.is_success():
                state.update_from(attempt)
                state.set_status(td.id, "Running - " + _java_str(result.message))
                return
            if result.status is not SchedulingStatus.FAIL_NOT_ENOUGH_RESOURCES:
                state.set_status(td.id, str(result))  # User.markTopoUnsuccess(td, cluster, result.toString())
                return
            resources.set_remaining(*_scheduled(attempt, td))
            victims = select_evictions(
                order, td.id,
                lambda t: bool(working.used_slots_by_topology(t)),
                lambda t: _scheduled(attempt, state.topologies[t]),
                resources)
            if not victims:
                state.set_status(td.id, "Not enough resources to schedule after evicting lower priority topologies. "
                                 + resources.remaining_message() + _java_str(result.error_message))
                return
            for victim in victims:
                working.unassign(victim)
            record.evicted = list(victims)
            listed = self.evicted.setdefault(td.id, [])
            listed.extend(v for v in victims if v not in listed)
        state.set_status(td.id, f"Failed to make enough resources for {td.id} by evicting lower priority topologies "
                         f"within {self.max_attempts} attempts. " + resources.remaining_message())


def _scheduled(state: ClusterState, td: Topology) -> tuple[ResourceRequest, float]:
    """The requests of ``td``'s placed executors (``getApproximateResources``) and the memory its workers are
    charged."""
    placed = state.assignment(td.id)
    if not placed:
        return ResourceRequest(), 0.0
    return td.total_request(ex for ex in td.executors if ex in placed), state.topology_scheduled_resources(td.id).memory


class _Round1x:
    def __init__(self, state: ClusterState, now_secs: int, explain: bool) -> None:
        self.state = state
        self.now = now_secs
        self.explain = explain
        self.priority = registry.priority_strategy(state.conf[RESOURCE_AWARE_SCHEDULER_PRIORITY_STRATEGY], "1.x")
        self.eviction = registry.eviction_strategy(state.conf[registry.EVICTION_STRATEGY_KEY])
        self.evicted: dict[str, list[str]] = {}
        self.attempts: dict[str, list[AttemptRecord]] = {}
        self.strategies: dict[str, str] = {}
        self.demands: dict[str, TopologyDemand] = {}
        self.users: dict[str, V1User] = {}
        self.total_cpu = state.cluster_total_cpu()
        self.total_memory = state.cluster_total_memory()

    def run(self) -> RoundResult:
        state = self.state
        pools = _pools(state)
        for td in _topologies_in_map_order(state):
            demand = topology_demand(td, self.now)
            self.demands[td.id] = demand
            if not demand.submitter:
                continue  # Storm logs an error and skips the topology
            user = self.users.get(demand.submitter)
            if user is None:
                user = self.users[demand.submitter] = V1User(demand.submitter, UserGuarantee.from_pool(
                    pools.get(demand.submitter)))
            if state.needs_scheduling(td):
                user.add("pending", demand)
            else:
                user.add("running", demand)
                if not state.get_status(td.id):
                    state.set_status(td.id, FULLY_SCHEDULED)
        user_order = java_order(self.users)
        order: list[str] = []
        picks: list[dict[str, Any]] = []
        bound = 10_000 + 100 * len(state.topologies) ** 2
        while True:
            pick = self.priority.next_topology([self.users[u] for u in user_order], self.total_cpu,
                                               self.total_memory)
            if pick.topology is None:
                break
            if len(order) >= bound:
                raise RunFailure(f"the Storm 1.x scheduling round did not end after {bound} picks "
                                 "(evictions chasing each other)")
            order.append(pick.topology.id)
            picks.append({"topology": pick.topology.id, "user": pick.user, "score": pick.scores[pick.user],
                          "scores": dict(pick.scores)})
            self._schedule_topology(state.topologies[pick.topology.id])
        return RoundResult("1.x", order, picks, dict(state.status), self.evicted, self.attempts,
                           self.strategies, state)

    def _checkpoint(self) -> tuple[ClusterState, dict[str, V1User]]:
        return self.state.copy(), {u: user.copy() for u, user in self.users.items()}

    def _restore(self, checkpoint: tuple[ClusterState, dict[str, V1User]]) -> None:
        saved_state, saved_users = checkpoint
        self.state.update_from(saved_state)
        self.users = saved_users

    def _schedule_topology(self, td: Topology) -> None:
        state = self.state
        demand = self.demands[td.id]
        if not state.needs_scheduling(td):
            self.users[demand.submitter].move(demand, "pending", "running")
            if not state.get_status(td.id):
                state.set_status(td.id, FULLY_SCHEDULED)
            return
        checkpoint = self._checkpoint()
        name = _strategy_name(td, "1.x")
        try:
            cls = registry.scheduling_strategy(name, "1.x")
        except KeyError:
            self._restore(checkpoint)
            self.users[demand.submitter].move(demand, "pending", "invalid")
            state.set_status(td.id, _unknown_strategy_status(td))
            return
        self.strategies[td.id] = registry.canonical_name("scheduling", name, "1.x")
        records = self.attempts.setdefault(td.id, [])
        while True:
            attempt = state.copy()  # the strategy works on a copy of the scheduling state
            recorder = SortRecorder() if self.explain else None
            result = _as_v1_result(_run_strategy(cls, attempt, td, recorder), attempt, td,
                                   len(state.unassigned_executors(td)))
            record = AttemptRecord(len(records) + 1, True, str(result), sorts=recorder.sorts if recorder else [])
            records.append(record)
            user = self.users[demand.submitter]
            if result.is_success():
                state.update_from(attempt)
                user.move(demand, "pending", "running")
                state.set_status(td.id, "Running - " + _java_str(result.message))
                return
            if result.status is SchedulingStatus.FAIL_NOT_ENOUGH_RESOURCES:
                victim = self.eviction.make_space_for(demand, [self.users[u] for u in java_order(self.users)])
                if victim is None:
                    self._restore(checkpoint)
                    self.users[demand.submitter].move(demand, "pending", "attempted")
                    state.set_status(td.id, "Not enough resources to schedule - " + _java_str(result.error_message))
                    return
                state.unassign(victim.topology.id)
                self.users[victim.user].move(victim.topology, "running", "pending")
                state.set_status(victim.topology.id, "Scheduling Pending")
                record.evicted = [victim.topology.id]
                listed = self.evicted.setdefault(td.id, [])
                if victim.topology.id not in listed:
                    listed.append(victim.topology.id)
                continue
            self._restore(checkpoint)
            if result.status is SchedulingStatus.FAIL_INVALID_TOPOLOGY:
                self.users[demand.submitter].move(demand, "pending", "invalid")
                state.set_status(td.id, "Scheduling Attempted but topology is invalid")
            else:
                self.users[demand.submitter].move(demand, "pending", "attempted")
                state.set_status(td.id, "Scheduling Attempted but Failed")
            return


def _as_v1_result(result: SchedulingResult, attempt: ClusterState, td: Topology,
                  unassigned_before: int) -> SchedulingResult:
    """The 1.x ``DefaultResourceAwareStrategy``'s result for a placement made by the model of it.

    Storm 1.2's strategy placed executors greedily and reported failure whenever any was left over, with
    its own texts; the 2.x search it is modelled by can report success for a one-executor topology it could
    not place (``areAllExecsScheduled`` is true at index 0), so success is judged by the placement here.
    """
    total = len(td.executors)
    if result.status in (SchedulingStatus.SUCCESS, SchedulingStatus.FAIL_NOT_ENOUGH_RESOURCES):
        if attempt.needs_scheduling(td):
            return SchedulingResult.failure(SchedulingStatus.FAIL_NOT_ENOUGH_RESOURCES,
                                            f"{total - unassigned_before}/{total} executors scheduled")
        return SchedulingResult.success("Fully Scheduled by DefaultResourceAwareStrategy")
    return result
