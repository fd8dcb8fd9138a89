"""The broker's side of the extensible load manager's service-unit state channel (``ServiceUnitStateChannelImpl``).

Every broker tails the channel (here: the store nodes under :data:`CHANNEL_PREFIX`, standing in for the
compacted ``loadbalancer-service-unit-state`` system topic) into a table view, and reacts to the records that
name it:

* ``Assigning`` with ``dst`` = me → take the bundle and publish ``Owned``;
* ``Releasing`` with ``src`` = me → stop serving the bundle (its topics close, its traffic leaves this broker):
  a *transfer* (a destination is named) then publishes ``Assigning(dst)`` and keeps the clients connected
  until the destination owns the bundle (``loadBalancerMultiPhaseBundleUnload``); a plain *unload* disconnects
  the clients at once and publishes ``Free``;
* ``Owned`` with ``src`` = me (the end of a transfer) → disconnect the clients, telling them the new owner,
  so that they connect to it directly, without a lookup or a back-off;
* a *forced* ``Owned`` (an override by the channel owner's ownership monitor or its clean-up of a departed
  broker, see :mod:`clusteremu.strategies.pulsar.extensible.ownership_monitor`) with ``dst`` = me → own the
  bundle; clients this broker still holds for the bundle (a transfer that never completed) are closed — told
  this broker when it is the new owner (a rollback), left to look the topic up again otherwise.
* ``Splitting`` with ``src`` = me (a split this broker's split scheduler published, or the channel owner's
  override of it) → split the bundle (:func:`.extensible_split.split_service_unit`: the children ``Owned`` by me,
  the namespace's bundles updated, the parent ``Deleted``); ``Deleted`` with ``src`` = me → tombstone the record.
  Each broker also runs its split scheduler (:class:`.extensible_split.SplitScheduler`) from its channel.

Lookups read the table view, and so does a broker asked to serve a topic (:meth:`ServiceUnitChannel.owned_here`:
a record ``Owned`` by it is its bundle even if it was written while the broker was down, as Pulsar's
``getOwnershipAsync`` answers from the view): an owned bundle answers Connect to its owner; a bundle in flight makes the lookup
wait until it settles (up to ``loadBalancerInFlightServiceUnitStateWaitingTimeInMillis``); an unowned one is
assigned by the channel owner (the leader, see :mod:`.extensible_load_manager`) and answered once owned.

The channel also holds the pending clean-ups of departed brokers (``cleanupJobs``,
:meth:`ServiceUnitChannel.schedule_cleanup`): the channel owner's load manager schedules them, but they outlive
its role, as in Pulsar, where the job runs on the scheduling broker's load-manager executor and ``doCleanup``
does not ask whether that broker still owns the channel. A job that comes due on a broker that is no longer the channel owner reads the registry and the load
data as that broker's own views would show them and publishes its overrides like the owner's.

``Free`` is stored as the deletion of the bundle's record (what compaction does to a tombstone), so that the
next assignment can claim it with the store's atomic create. Each record carries its publisher's ``timestamp``
(virtual epoch ms), which the ownership monitor ages in-flight states by, and ``force`` (an override, accepted
whatever the current state).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generator

from clusteremu.emulator.executor import ScheduledTask
from clusteremu.emulator.messages import Message
from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.extensible import (BrokerLoadData, ServiceUnitState, StorageType, is_in_flight_state,
                                          is_valid_transition)
from clusteremu.strategies.pulsar.extensible.ownership_monitor import Override, StateData, cleanup_overrides

from .extensible_reporting import LOAD_DATA_PREFIX
from .extensible_split import SplitScheduler, split_service_unit, tombstone_deleted
from .store import BROKERS_PREFIX

if TYPE_CHECKING:
    from .port import BrokerPort

CHANNEL_PREFIX = "/loadbalance/service-unit-state/"

_M = __name__
declare("service_unit_state", "A broker published a service-unit state transition of `bundle` on the extensible "
        "load manager's channel: `state` (Assigning, Owned, Releasing, Free; for a split: Splitting, Deleted and "
        "Init, the tombstone), `src` the releasing owner, `dst` the new owner (\"\" when none), `reason` (assign, "
        "transfer, unload, shutdown; split: the parent Splitting and Deleted, the children Owned; tombstone; the "
        "channel owner's "
        "overrides: roll_forward, rollback, splitting (in-flight states older than "
        "loadBalancerInFlightServiceUnitStateWaitingTimeInMillis) and inactive_broker (the clean-up of a broker "
        "that left the registry or that the ownership monitor found gone, see broker_cleanup)).", _M,
        bundle="str", state="str", src="str", dst="str", reason="str")

#: transitions are checked against the metadata-store storage rules (the channel lives in the store here)
_STORAGE = StorageType.MetadataStore
#: ``ServiceUnitStateChannelImpl``: how long a graceful stop waits for its bundles to leave, and how often it looks
OWNERSHIP_CLEAN_UP_MAX_WAIT_S = 5.0
OWNERSHIP_CLEAN_UP_RETRY_S = 0.1


@dataclass(frozen=True)
class UnitRecord:
    """One channel record (``ServiceUnitStateData``): state, destination and source brokers, version."""

    state: ServiceUnitState
    dst: str
    src: str
    version: int
    reason: str = ""
    timestamp: int = 0
    force: bool = False
    children: tuple[str, ...] = ()  # a Splitting record's child ranges

    def to_dict(self) -> dict[str, Any]:
        out = {"state": self.state.value, "dst": self.dst, "src": self.src, "version": self.version,
               "reason": self.reason, "timestamp": self.timestamp, "force": self.force}
        if self.children:
            out["children"] = list(self.children)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "UnitRecord":
        return cls(ServiceUnitState(data["state"]), data["dst"], data["src"], int(data["version"]),
                   data.get("reason", ""), int(data.get("timestamp", 0)), bool(data.get("force", False)),
                   tuple(data.get("children", ())))


class ServiceUnitChannel:
    """A broker's table view of the channel and its handlers (see the module docstring)."""

    def __init__(self, broker: "BrokerPort") -> None:
        self.b = broker
        self.view: dict[str, UnitRecord] = {}
        self._waiters: dict[str, list] = {}
        # bundle -> (topic index -> client) of a transfer whose clients stay connected until the destination owns it
        self._held_clients: dict[str, tuple[dict[int, str], str]] = {}
        self.in_flight_wait_s = broker.config["loadBalancerInFlightServiceUnitStateWaitingTimeInMillis"] / 1000.0
        # handleMetadataSessionEvent: the last SessionLost / SessionReestablished (a broker starts as re-established
        # at time 0, so Stable), which the ownership monitor checks before acting
        self.session_lost = False
        self.last_session_event_ms = 0
        self.splitter = SplitScheduler(broker)  # this broker's SplitScheduler and SplitManager
        # cleanupJobs: departed broker -> its pending clean-up. A job belongs to this broker's channel, not to its
        # role: it outlives the load manager of the channel owner that scheduled it (see _cleanup_due)
        self.cleanup_jobs: dict[str, ScheduledTask] = {}

    def on_session_event(self, lost: bool) -> None:
        """The broker's metadata session was lost, or re-established after a loss."""
        self.session_lost = lost
        self.last_session_event_ms = self.b.now_ms()

    # -- table view -----------------------------------------------------------------------------------------
    def start(self) -> Generator:
        """Tail the channel: the snapshot first, then every change as a notification."""
        r = yield from self.b.store.op("watch", {"prefix": CHANNEL_PREFIX})
        if r is None:
            return
        for path, data in sorted(r["nodes"].items()):
            self.view[path[len(CHANNEL_PREFIX):]] = UnitRecord.from_dict(data)
        self.splitter.start()

    def on_notify(self, path: str, change: str, data: dict[str, Any] | None) -> None:
        bundle = path[len(CHANNEL_PREFIX):]
        record = None if change == "deleted" else UnitRecord.from_dict(data)
        if record is None:
            self.view.pop(bundle, None)
        else:
            self.view[bundle] = record
        self._wake(bundle)
        if self.splitter.in_flight and (record is None or record.state is not ServiceUnitState.Splitting):
            self.splitter.completed(bundle)
        if record is None or not self.b.alive or not self.b.store.is_open:
            return
        me = self.b.name
        if record.state is ServiceUnitState.Assigning and record.dst == me:
            self.b.spawn(self._take(bundle, record))
        elif record.state is ServiceUnitState.Releasing and record.src == me:
            self.b.spawn(self._release(bundle, record))
        elif record.state is ServiceUnitState.Owned and record.src == me:
            self._disconnect_held(bundle, record.dst)
        elif record.state is ServiceUnitState.Splitting and record.src == me:
            self.b.spawn(split_service_unit(self.b, bundle, record))
        elif record.state is ServiceUnitState.Deleted and record.src == me:
            self.b.spawn(tombstone_deleted(self.b, bundle))
        elif record.state is ServiceUnitState.Owned and record.force:
            self._take_override(bundle, record)
        elif record.state is ServiceUnitState.Owned and record.dst != me and bundle in self.b.ownership.owned:
            # Someone else owns it now (an override after this broker was thought gone): stop serving it.
            self.b.ownership.release(bundle, reason="orphaned", destination=record.dst, delete=False)

    def owners(self) -> dict[str, str]:
        """Bundle → owner, for the bundles the view has as Owned."""
        return {b: r.dst for b, r in self.view.items() if r.state is ServiceUnitState.Owned}

    # -- publishing -----------------------------------------------------------------------------------------
    def publish(self, bundle: str, state: ServiceUnitState, dst: str, src: str, reason: str,
                create: bool = False, force: bool = False,
                children: tuple[str, ...] = ()) -> Generator[Any, Any, dict | None]:
        """Write a transition (``create``: only if the bundle has no record, the store's atomic create;
        ``force``: an override, which the conflict check lets through whatever the current state)."""
        old = self.view.get(bundle)
        version = (old.version + 1) if old is not None else 1
        if not create and not force and old is not None and not is_valid_transition(old.state, state, _STORAGE):
            return {"ok": False, "invalid": True}  # a stale view: the channel's conflict check refuses it
        if state is ServiceUnitState.Splitting and not children and old is not None:
            children = old.children  # an override publishes the split again, with its children
        record = UnitRecord(state, dst, src, version, reason, self.b.now_ms(), force, tuple(children))
        op = "create" if create else "set"
        r = yield from self.b.store.op(op, {"path": CHANNEL_PREFIX + bundle, "data": record.to_dict()})
        if r is not None and r.get("ok"):
            self.b.emit("service_unit_state", bundle=bundle, state=state.value, src=src, dst=dst, reason=reason)
        return r

    def tombstone(self, bundle: str, reason: str) -> Generator[Any, Any, dict | None]:
        """``tombstoneAsync``: the record is deleted and reads as ``Init`` (a split parent's ``Deleted``)."""
        r = yield from self.b.store.op("delete", {"path": CHANNEL_PREFIX + bundle})
        if r is not None and r.get("ok"):
            self.b.emit("service_unit_state", bundle=bundle, state=ServiceUnitState.Init.value, src=self.b.name,
                        dst="", reason=reason)
        return r

    def publish_free(self, bundle: str, src: str, reason: str) -> Generator[Any, Any, dict | None]:
        """``Free``: the record is deleted (a tombstone), so the bundle can be assigned afresh."""
        r = yield from self.b.store.op("delete", {"path": CHANNEL_PREFIX + bundle})
        if r is not None and r.get("ok"):
            self.b.emit("service_unit_state", bundle=bundle, state=ServiceUnitState.Free.value, src=src, dst="",
                        reason=reason)
        return r

    def override(self, o: Override) -> Generator[Any, Any, dict | None]:
        """Publish a channel owner's forced record (``publishOverrideEventAsync``); ``Free`` is a deletion."""
        if o.state is ServiceUnitState.Free:
            return (yield from self.publish_free(o.bundle, o.src, o.action))
        return (yield from self.publish(o.bundle, o.state, o.dst, o.src, o.action, force=True))

    def owned_here(self, bundle: str) -> bool:
        """Whether the table view has ``bundle`` Owned by this broker (``isServiceUnitOwned`` reads the view)."""
        record = self.view.get(bundle)
        return record is not None and record.state is ServiceUnitState.Owned and record.dst == self.b.name

    # -- the owner's side of the protocol -------------------------------------------------------------------
    def claim_initial(self, bundle: str) -> Generator[Any, Any, str | None]:
        """A preassigned bundle at start: claim it as Owned directly (Init → Owned)."""
        r = yield from self.publish(bundle, ServiceUnitState.Owned, self.b.name, "", "assign", create=True)
        if r is None:
            return None
        if not r["ok"]:
            return r["data"]["dst"]
        self.b.ownership.own(bundle, via="initial")
        return self.b.name

    def _take(self, bundle: str, record: UnitRecord) -> Generator:
        if self.b.stopping:
            return
        self.b.ownership.own(bundle, via="transfer" if record.src else "assign")
        yield from self.publish(bundle, ServiceUnitState.Owned, self.b.name, record.src, record.reason)

    def _release(self, bundle: str, record: UnitRecord) -> Generator:
        b = self.b
        ownership = b.ownership
        transfer = bool(record.dst)
        if bundle in ownership.owned:
            if transfer:
                # The topics close here: the bundle's traffic leaves this broker now, but the clients stay
                # connected (multi-phase unload) and are told the new owner once it owns the bundle.
                own = ownership.owned.pop(bundle)
                b.usage.advance()
                ownership.task_counts -= own.task_counts
                self._held_clients[bundle] = (dict(own.topics), record.dst)
                b.emit("bundle_unloaded", bundle=bundle, destination=record.dst,
                       reason="shutdown" if record.reason == "shutdown" else "shedding", topics=len(own.topics))
            else:
                ownership.release(bundle, reason="shedding", destination="", delete=False)
        if transfer:
            yield from self.publish(bundle, ServiceUnitState.Assigning, record.dst, b.name, record.reason)
        else:
            yield from self.publish_free(bundle, b.name, "unload")

    def _take_override(self, bundle: str, record: UnitRecord) -> None:
        """A forced ``Owned``: the named broker owns the bundle (``handleOwnEvent`` on a forced record); clients
        held for a transfer it replaced are let go."""
        b = self.b
        me = b.name
        if record.dst == me and bundle not in b.ownership.owned and not b.stopping:
            b.ownership.own(bundle, via="override")
        elif record.dst != me and bundle in b.ownership.owned:
            b.ownership.release(bundle, reason="orphaned", destination=record.dst, delete=False)
        if bundle in self._held_clients and record.dst == me:
            self._disconnect_held(bundle, me)  # a rollback: the clients reconnect here
        elif bundle in self._held_clients:
            self._drop_held_bundle(bundle, "unload")  # a roll forward elsewhere: they look the topic up again

    def _drop_held_bundle(self, bundle: str, reason: str) -> None:
        b = self.b
        topics, _dst = self._held_clients.pop(bundle)
        for ti, client in sorted(topics.items()):
            b.send(client, "close", {"topic": b.workload.topics[ti], "reason": reason})

    def _disconnect_held(self, bundle: str, new_owner: str) -> None:
        held = self._held_clients.pop(bundle, None)
        if held is None:
            return
        topics, _dst = held
        b = self.b
        for ti, client in sorted(topics.items()):
            b.send(client, "close", {"topic": b.workload.topics[ti], "reason": "unload", "target": new_owner})

    def drop_held(self, reason: str) -> None:
        """The broker goes down (or loses its session) in the middle of transfers: the clients it still holds
        see their connections close and look the topics up again."""
        for bundle in sorted(self._held_clients):
            self._drop_held_bundle(bundle, reason)

    def clean_ownerships(self) -> Generator:
        """A graceful stop (``disableBroker`` → ``cleanOwnerships``, the channel's clean-up with ``gracefully``):
        each bundle this broker owns is overridden to ``Releasing`` towards a broker that the placement strategy
        picks among the other registered ones, so that it moves as a transfer — its clients are told the new
        owner and connect there without a lookup. Then wait, up to ``OWNERSHIP_CLEAN_UP_MAX_WAIT_S``, until
        nothing is owned here any more; what is left (no other broker, or a slow channel) the caller unloads.

        The selection reads the brokers' registry and ``BrokerLoadData`` once, as this broker's own table views
        would show them (every broker can run ``selectAsync``, not only the channel owner)."""
        b = self.b
        read = yield from self._read_brokers()
        if read is None:
            return
        registered, load_data = read
        candidates = [broker for broker in registered if broker != b.name]
        placer = pulsar.create(b.config["loadBalancerLoadPlacementStrategy"], b.config, rng=b.rng("shutdown-placement"))
        for bundle in sorted(b.ownership.owned):
            record = self.view.get(bundle)
            if record is None or record.state is not ServiceUnitState.Owned or record.dst != b.name:
                continue
            dst = placer.select_broker(candidates, bundle, load_data) if candidates else None
            if dst is None:
                return  # nobody to take it: the caller unloads what is left
            yield from self.publish(bundle, ServiceUnitState.Releasing, dst, b.name, "shutdown")
        deadline = b.now + OWNERSHIP_CLEAN_UP_MAX_WAIT_S
        while (b.ownership.owned or self._held_clients) and b.now < deadline:
            yield from b.sleep(OWNERSHIP_CLEAN_UP_RETRY_S)

    def _read_brokers(self) -> Generator[Any, Any, "tuple[list[str], dict[str, BrokerLoadData]] | None"]:
        """The registered brokers (sorted) and their ``BrokerLoadData``, read from the store (None when it could
        not be read): what ``selectAsync`` sees on a broker that is not the channel owner (every broker has the
        registry and the load-data table view)."""
        registry = yield from self.b.store.op("list", {"prefix": BROKERS_PREFIX})
        loads = yield from self.b.store.op("list", {"prefix": LOAD_DATA_PREFIX})
        if registry is None or loads is None:
            return None
        registered = sorted(p[len(BROKERS_PREFIX):] for p in registry["nodes"])
        load_data = {p[len(LOAD_DATA_PREFIX):]: BrokerLoadData.from_json(d, p) for p, d in sorted(loads["nodes"].items())}
        return registered, load_data

    # -- clean-up of a departed broker (scheduleCleanup -> doCleanup) --------------------------------------------
    def schedule_cleanup(self, broker: str, delay: float) -> bool:
        """``scheduleCleanup``: run ``broker``'s clean-up after ``delay`` s on the load-manager executor, unless one
        is pending already (``computeIfAbsent`` on ``cleanupJobs``); whether a job was scheduled."""
        if broker in self.cleanup_jobs:
            return False
        self.cleanup_jobs[broker] = self.b.timers.schedule(lambda: self._cleanup_due(broker), delay,
                                                           name="inactive-broker-cleanup")
        return True

    def cancel_cleanup(self, broker: str) -> bool:
        """``handleBrokerCreationEvent``: cancel ``broker``'s pending clean-up; whether one was pending."""
        job = self.cleanup_jobs.pop(broker, None)
        if job is None:
            return False
        job.cancel()
        return True

    def _cleanup_due(self, broker: str) -> None:
        """The job runs ``doCleanup``, which does not ask whether this broker is still the channel owner: neither
        the leader change (``playFollower`` cancels only the monitor and the unload scheduler) nor the channel
        cancels ``cleanupJobs``; only the broker process's end does (its executor goes with it)."""
        self.cleanup_jobs.pop(broker, None)
        lm = self.b.leadership.lm
        if lm is not None and not lm.stopped and hasattr(lm, "do_cleanup"):
            lm.do_cleanup(broker)  # still (or again) the channel owner: its own registry and load-data views
        else:
            self.b.spawn(self._cleanup_as_former_owner(broker))

    def _cleanup_as_former_owner(self, broker: str) -> Generator:
        """``doCleanup`` on a broker that has stopped being the channel owner since it scheduled the job: its
        overrides are chosen as the owner's would be (selected among the registered brokers without ``broker``)
        and published to the channel, whose every table view, the new owner's included, applies them.

        This broker no longer follows the registry's notifications in the model, so the creation event that
        would have cancelled the job (``handleBrokerCreationEvent`` runs on every broker) is read at run time
        instead: a departed broker registered again cancels the job then. When the store cannot be read no
        broker can be selected, so each target gets a ``Free`` (``selectBroker`` failing does the same)."""
        b = self.b
        read = yield from self._read_brokers()
        registered, load_data = read if read is not None else ([], {})
        if broker in registered:
            b.emit("broker_cleanup", broker=broker, action="cancelled", metadata="", delay=0.0, units=0)
            return
        placer = pulsar.create(b.config["loadBalancerLoadPlacementStrategy"], b.config, rng=b.rng("cleanup-placement"))

        def select(bundle: str, excluded: str) -> str | None:
            candidates = [c for c in registered if c != excluded]
            return placer.select_broker(candidates, bundle, load_data) if candidates else None

        records = {u: StateData(r.state, r.dst, r.src, r.timestamp) for u, r in self.view.items()}
        overrides = cleanup_overrides(records, broker, select)
        b.emit("broker_cleanup", broker=broker, action="run", metadata="", delay=0.0, units=len(overrides))
        for o in overrides:
            b.spawn(self.override(o))

    def on_released(self, bundle: str, reason: str) -> None:
        """The broker gave ``bundle`` up outside the channel protocol (graceful stop): mark it Free."""
        record = self.view.get(bundle)
        if reason == "shutdown" and self.b.store.is_open and record is not None and record.dst == self.b.name:
            self.b.spawn(self.publish_free(bundle, self.b.name, "shutdown"))

    # -- lookups --------------------------------------------------------------------------------------------
    def lookup(self, msg: Message, bundle: str) -> Generator:
        """Answer a lookup from the table view; assign an unowned bundle through the channel owner first."""
        b = self.b
        deadline = b.now + self.in_flight_wait_s
        asked = False
        while True:
            record = self.view.get(bundle)
            if record is not None and record.state is ServiceUnitState.Owned:
                b.reply(msg, {"response": "connect", "target": record.dst, "authoritative": True})
                return
            if record is None and not asked:
                dst = yield from self._assign(bundle)
                if dst is None:
                    b.reply(msg, {"response": "error", "error": f"No broker was available to own {bundle}"})
                    return
                asked = True
                continue
            if record is None or is_in_flight_state(record.state):
                if record is None:
                    asked = False  # freed again while we waited: ask anew
                left = deadline - b.now
                if left <= 0 or not (yield from self._wait(bundle, left)):
                    b.reply(msg, {"response": "error", "error": f"Timed out waiting for {bundle} to settle"})
                    return
                continue
            b.reply(msg, {"response": "error", "error": f"{bundle} is {record.state.value}"})
            return

    def _assign(self, bundle: str) -> Generator[Any, Any, str | None]:
        b = self.b
        lm, leader = b.leadership.lm, b.leadership.leader
        if lm is not None and hasattr(lm, "assign"):
            return (yield from lm.assign(bundle))
        if leader is None or leader == b.name:
            return None
        r = yield from b.call(leader, "assign", {"bundle": bundle},
                              timeout=b.config["metadataStoreOperationTimeoutSeconds"])
        return r.get("dst") if r is not None and r.get("ok") else None

    def serve_assign(self, msg: Message) -> Generator:
        """The channel owner's handler of another broker's assignment request."""
        b = self.b
        lm = b.leadership.lm
        if lm is None or not hasattr(lm, "assign"):
            b.reply(msg, {"ok": False})
            return
        dst = yield from lm.assign(msg.body["bundle"])
        b.reply(msg, {"ok": dst is not None, "dst": dst or ""})

    def _wait(self, bundle: str, timeout: float) -> Generator[Any, Any, bool]:
        """Wait until the bundle's record changes; False when ``timeout`` passed first."""
        env = self.b.env
        ev = env.event()
        self._waiters.setdefault(bundle, []).append(ev)
        expiry = env.timeout(timeout)
        expiry.callbacks.append(lambda _e: ev.triggered or ev.succeed(False))
        changed = yield ev
        yield from self.b.runnable()
        return bool(changed)

    def _wake(self, bundle: str) -> None:
        for ev in self._waiters.pop(bundle, ()):
            if not ev.triggered:
                ev.succeed(True)
