"""The extensible load manager (``ExtensibleLoadManagerImpl``, PIP-192) as the channel owner — the leader — runs it.

* It reads the brokers' registry (``/loadbalance/brokers``), their ``BrokerLoadData`` and top bundles
  (:mod:`.extensible_reporting`), and the service-unit state channel through its broker's table view
  (:mod:`.extensible_channel`).
* ``UnloadScheduler`` every ``loadBalancerSheddingIntervalMinutes`` (fixed rate, first run one interval after
  becoming the channel owner): prune ``recentlyUnloadedBundles`` by ``loadBalancerSheddingGracePeriodMinutes``,
  run the shedding strategy (``TransferShedder``) on a :class:`~clusteremu.strategies.pulsar.extensible.TransferContext`,
  and publish each decision as ``Releasing`` on the channel — with the destination when
  ``loadBalancerTransferEnabled`` (a *transfer*: the destination is assigned before the clients move), without
  it otherwise (an *unload*: the bundle goes Free and the clients' next lookups assign it). A cycle of
  ``TransferShedder`` that computed the brokers' load stats writes them and its outcome
  (``transfer_shedder_stats``: the counter's ``loadAvg``/``loadStd``, ``loadBalancerBrokerLoadTargetStd``).
* Assignment of unowned bundles (any broker's lookup asks the channel owner): the extensible
  ``LeastResourceUsageWithWeight`` over the registered brokers, published as ``Assigning``.
* When a broker leaves the registry (session expired, stopped): ``handleBrokerDeletionEvent`` schedules its
  clean-up (``scheduleCleanup`` → ``doCleanup``) after
  :func:`~clusteremu.strategies.pulsar.extensible.ownership_monitor.cleanup_delay` of the channel owner's metadata
  state (at once when ``Stable``, 180 s when ``Jittery``, not at all when ``Unstable``); a clean-up already
  pending for that broker is not scheduled again, and the broker registering again
  (``handleBrokerCreationEvent``) cancels it. The clean-up overrides the broker's service units to an owner the
  placement strategy selects without it (forced ``Owned``, the departed broker as the source), ``Free`` only
  when no broker can be selected. Each step is traced as ``broker_cleanup``. The pending job belongs to the
  broker's channel (``cleanupJobs``), not to this load manager: when this broker stops being the channel owner
  it still runs when due (``doCleanup`` does not check the role; see
  :meth:`~.extensible_channel.ServiceUnitChannel.schedule_cleanup`), and its overrides reach every table view.
* A new channel owner adopts what departed brokers left while there was none through its monitor's first run.
* The ownership monitor (``scheduleOwnershipMonitor`` → ``monitorOwnerships``): on becoming the channel owner,
  a fixed-delay task every ``loadBalancerServiceUnitStateMonitorIntervalInSeconds`` (first run at once),
  cancelled when it stops being the owner. Its decisions are
  :func:`~clusteremu.strategies.pulsar.extensible.ownership_monitor.monitor_ownerships` over the table view and
  the registered brokers: in-flight states older than ``loadBalancerInFlightServiceUnitStateWaitingTimeInMillis``
  are overridden (rolled forward to a broker the placement strategy selects without the stuck one, or rolled
  back to an available source); when a record names a broker that is not registered, that broker's clean-up
  is scheduled as for a registry deletion instead. Each run that finds anything is traced as
  ``ownership_monitor``; each override as ``service_unit_state`` with the action as its ``reason``.

Departures: the shedder's ``isTransferable`` check (isolation/anti-affinity policies and the broker filters) is
not modelled: scenarios have no such policies, so every bundle is transferable. ``doCleanup`` overrides every
service unit in one pass: there are no system-namespace bundles to hold back until the others have moved, and
the departed broker's load data nodes (which it removes) are already gone with the broker's session. The
metadata session state the monitor checks (``Stable`` only when no session event happened in the last 180 s)
comes from the broker's own session: lost when it expires, re-established when the broker reconnects (``zookeeperSessionExpiredPolicy=reconnect``). The monitor's tombstoning applies to ``Deleted`` records only:
``Free`` is stored as a deletion already, and a split parent's ``Deleted`` (:mod:`.extensible_split`) is
tombstoned by its source broker at once, so only one whose source went away first is left for the monitor.
``assign`` refuses a bundle that this broker's bundle map no longer has (a split parent asked for by a broker that
has not heard of the split yet): its lookup fails and the client retries.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

from clusteremu.emulator.executor import FIXED_DELAY, FIXED_RATE, ScheduledTask
from clusteremu.emulator.trace.kinds import declare
from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.extensible import (BrokerLoadData, ServiceUnitState, TopBundlesLoadData,
                                                     TransferContext, TransferShedder)
from clusteremu.strategies.pulsar.extensible.ownership_monitor import (Override, StateData, cleanup_delay,
                                                                        cleanup_overrides, cleanup_targets,
                                                                        metadata_state, monitor_ownerships)

from .extensible_reporting import LOAD_DATA_PREFIX, TOP_BUNDLES_PREFIX
from .leader import LeaderLoadManager
from .store import BROKERS_PREFIX

if TYPE_CHECKING:
    from .port import BrokerPort

declare("ownership_monitor", "A run of the channel owner's ownership monitor (monitorOwnerships) that has "
        "something to override: `brokers` available, `inactive` brokers named by records but not registered "
        "(their clean-up is scheduled, see broker_cleanup), `cleanups` the service units those clean-ups target "
        "at the time of the run (the orphans then wait for a later run), `orphans` in-flight states older than "
        "loadBalancerInFlightServiceUnitStateWaitingTimeInMillis, "
        "`overrides` published for them, `failed` orphans no broker could take (retried by the next run).",
        __name__, brokers="int", inactive="str", cleanups="int", orphans="int", overrides="int", failed="int")
declare("broker_cleanup", "The channel owner's clean-up of a departed `broker` (handleBrokerDeletionEvent → "
        "scheduleCleanup → doCleanup): `action` scheduled (after `delay` s, by the `metadata` state: 0 when "
        "Stable, MAX_CLEAN_UP_DELAY_TIME_IN_SECS when Jittery), ignored (Unstable), cancelled (the broker "
        "registered again before it ran; on a broker no longer the channel owner, found registered when the job "
        "came due) or run (`units` service units overridden, reason inactive_broker). The job runs on the broker "
        "that scheduled it, even if another broker owns the channel by then.",
        __name__, broker="str", action="str", metadata="str", delay="float", units="int")


class ExtensibleLoadManager(LeaderLoadManager):
    watched = (BROKERS_PREFIX, LOAD_DATA_PREFIX, TOP_BUNDLES_PREFIX)
    shedding_mode = FIXED_RATE
    shedding_task = "unload-scheduler"

    def __init__(self, broker: "BrokerPort") -> None:
        super().__init__(broker)
        cfg = self.cfg
        self.active: set[str] = set()
        self.load_data: dict[str, BrokerLoadData] = {}
        self.top_bundles: dict[str, TopBundlesLoadData] = {}
        self.recently_unloaded_bundles: dict[str, int] = {}
        self.recently_unloaded_brokers: dict[str, int] = {}
        self.shedder = pulsar.create(cfg["loadBalancerLoadSheddingStrategy"], cfg, rng=broker.rng("shedding-strategy"))
        self.placer = pulsar.create(cfg["loadBalancerLoadPlacementStrategy"], cfg,
                                    rng=broker.rng("placement-strategy"))
        self._assigning: dict[str, str] = {}
        self._monitor: ScheduledTask | None = None
        # bundle -> its record when this channel owner began writing a clean-up or override for it: no second
        # write is based on that record until the table view shows the first one (in Pulsar the second of two
        # writes at the same version loses the channel's conflict check)
        self._writing: dict[str, Any] = {}

    def start(self) -> Generator:
        yield from super().start()
        if not self.stopped and self._task is not None:
            # scheduleOwnershipMonitor: fixed delay, the first run at once
            self._monitor = self.b.timers.schedule_periodic(
                FIXED_DELAY, self.monitor_ownerships, 0.0,
                float(self.cfg["loadBalancerServiceUnitStateMonitorIntervalInSeconds"]), name="ownership-monitor")

    def stop(self) -> None:
        super().stop()
        if self._monitor is not None:  # cancelOwnershipMonitor
            self._monitor.cancel()
            self._monitor = None
        # The pending clean-ups stay: they belong to the broker's channel (playFollower leaves cleanupJobs alone)

    # -- inputs ---------------------------------------------------------------------------------------------
    def on_broker_report(self, broker: str, change: str, data: dict[str, Any] | None) -> None:
        """The broker registry changed (the broker's notification path for ``/loadbalance/brokers``)."""
        if self.stopped:
            return
        if change == "deleted":
            self.active.discard(broker)
            self.handle_broker_deletion(broker)
        else:
            self.active.add(broker)
            if change == "created":
                self.handle_broker_creation(broker)

    def on_notify(self, path: str, change: str, data: Any) -> None:
        if self.stopped:
            return
        if path.startswith(BROKERS_PREFIX):
            self.on_broker_report(path[len(BROKERS_PREFIX):], change, data)
        elif path.startswith(LOAD_DATA_PREFIX):
            broker = path[len(LOAD_DATA_PREFIX):]
            if change == "deleted":
                self.load_data.pop(broker, None)
            else:
                self.load_data[broker] = BrokerLoadData.from_json(data, path)
        elif path.startswith(TOP_BUNDLES_PREFIX):
            broker = path[len(TOP_BUNDLES_PREFIX):]
            if change == "deleted":
                self.top_bundles.pop(broker, None)
            else:
                self.top_bundles[broker] = TopBundlesLoadData.from_json(data, path)

    def _pending(self, bundle: str) -> bool:
        """Whether a write of this channel owner for ``bundle`` has not reached its table view yet."""
        if bundle not in self._writing:
            return False
        if self.b.xchannel.view.get(bundle) is self._writing[bundle]:
            return True
        del self._writing[bundle]
        return False

    def _write(self, bundle: str, write: Generator) -> None:
        self._writing[bundle] = self.b.xchannel.view.get(bundle)
        self.b.spawn(self._tracked(bundle, write))

    def _tracked(self, bundle: str, write: Generator) -> Generator:
        r = yield from write
        if r is None or not r.get("ok"):
            self._writing.pop(bundle, None)  # nothing was written: the view will not change for it

    # -- clean-up of a departed broker ------------------------------------------------------------------------
    def handle_broker_deletion(self, broker: str) -> None:
        """``handleBrokerDeletionEvent`` on the channel owner: schedule ``broker``'s clean-up (see the module
        docstring), unless the metadata state is ``Unstable`` or one is already pending."""
        channel = self.b.xchannel
        state = metadata_state(channel.session_lost, channel.last_session_event_ms, self.b.now_ms())
        delay = cleanup_delay(state)
        if delay is None:
            self.b.emit("broker_cleanup", broker=broker, action="ignored", metadata=str(state), delay=0.0, units=0)
            return
        if not channel.schedule_cleanup(broker, float(delay)):
            return  # one is pending already
        self.b.emit("broker_cleanup", broker=broker, action="scheduled", metadata=str(state), delay=float(delay),
                    units=0)

    def handle_broker_creation(self, broker: str) -> None:
        """``handleBrokerCreationEvent``: a broker that registers again cancels its pending clean-up."""
        if self.b.xchannel.cancel_cleanup(broker):
            self.b.emit("broker_cleanup", broker=broker, action="cancelled", metadata="", delay=0.0, units=0)

    def do_cleanup(self, broker: str) -> None:
        """``doCleanup`` on the channel owner (its job came due, see
        :meth:`~.extensible_channel.ServiceUnitChannel.schedule_cleanup`): override every service unit the departed
        ``broker`` still holds."""
        overrides = cleanup_overrides(self._state_data(), broker, self._select)
        self.b.emit("broker_cleanup", broker=broker, action="run", metadata="", delay=0.0, units=len(overrides))
        for o in overrides:
            self._publish_override(o)

    # -- ownership monitor ----------------------------------------------------------------------------------
    def monitor_ownerships(self) -> None:
        """One run of the ownership monitor (see the module docstring)."""
        if self.stopped:
            return
        cfg = self.cfg
        channel = self.b.xchannel
        now_ms = self.b.now_ms()
        records = self._state_data()
        result = monitor_ownerships(
            records, sorted(self.active), now_ms, self._select,
            cfg["loadBalancerInFlightServiceUnitStateWaitingTimeInMillis"],
            cfg["loadBalancerServiceUnitStateTombstoneDelayTimeInSeconds"] * 1000,
            metadata_state(channel.session_lost, channel.last_session_event_ms, now_ms))
        targets = {broker: cleanup_targets(records, broker) for broker in result.inactive_brokers}
        cleanups = {bundle for bundles in targets.values() for bundle in bundles}
        for bundle in result.tombstones:
            # Free is stored as a deletion already; a split parent's Deleted is tombstoned by its source broker at
            # once, so only one whose source went away before doing it is left here
            if channel.view[bundle].state is ServiceUnitState.Deleted:
                self._write(bundle, channel.tombstone(bundle, "tombstone"))
        if not (cleanups or result.orphans):
            return  # nothing to override (an inactive broker's clean-up with nothing to do is not traced)
        self.b.emit("ownership_monitor", brokers=len(self.active), inactive=",".join(result.inactive_brokers),
                    cleanups=len(cleanups), orphans=len(result.orphans), overrides=len(result.overrides),
                    failed=len(result.failed))
        for broker in result.inactive_brokers:
            if targets[broker]:  # a departed broker left only as the source of Owned records: nothing to clean
                self.handle_broker_deletion(broker)
        for o in result.overrides:
            self._publish_override(o)

    def _state_data(self) -> dict[str, StateData]:
        return {b: StateData(r.state, r.dst, r.src, r.timestamp) for b, r in self.b.xchannel.view.items()
                if not self._pending(b)}

    def _select(self, bundle: str, excluded: str) -> str | None:
        """``selectAsync`` with ``excluded`` left out of the registered brokers."""
        candidates = sorted(self.active - {excluded})
        return self.placer.select_broker(candidates, bundle, self.load_data) if candidates else None

    def _publish_override(self, o: Override) -> None:
        self._write(o.bundle, self.b.xchannel.override(o))

    # -- assignment -----------------------------------------------------------------------------------------
    def assign(self, bundle: str) -> Generator[Any, Any, str | None]:
        """Choose an owner for an unowned bundle and publish ``Assigning``; return the owner (or None)."""
        if self.stopped or not self.b.ownership.bundle_map.exists(bundle):
            return None  # a split parent asked by a broker that has not heard of the split yet: it retries
        record = self.b.xchannel.view.get(bundle)
        if record is not None:
            return record.dst or None
        if bundle in self._assigning:  # deduplicate concurrent lookups of one bundle
            return self._assigning[bundle]
        candidates = sorted(self.active)
        dst = self.placer.select_broker(candidates, bundle, self.load_data)
        if dst is None:
            return None
        self._assigning[bundle] = dst
        self.b.emit("bundle_placed", bundle=bundle, broker=dst, strategy=type(self.placer).__name__,
                    random_fallback=self._fell_back(candidates),
                    scores={c: (100.0 * self.load_data[c].weighted_max_ema if c in self.load_data else float("nan"))
                            for c in candidates})
        r = yield from self.b.xchannel.publish(bundle, ServiceUnitState.Assigning, dst, "", "assign", create=True)
        self._assigning.pop(bundle, None)
        if r is None:
            return None
        return dst if r["ok"] else (r["data"]["dst"] or None)

    def _fell_back(self, candidates: list[str]) -> bool:
        """Whether no candidate was clearly below the average, so any broker could be drawn."""
        loads = [self.load_data[c].weighted_max_ema for c in candidates if c in self.load_data]
        if not loads:
            return True
        avg = sum(loads) / len(loads)
        diff = self.cfg["loadBalancerAverageResourceUsageDifferenceThresholdPercentage"] / 100.0
        return not any(x + diff <= avg for x in loads)

    # -- UnloadScheduler ------------------------------------------------------------------------------------
    def shed(self) -> None:
        name = self.begin_shedding()
        if name is None:
            return
        available = sorted(self.active)
        now_ms = self.b.now_ms()
        self.forget_grace_period(self.recently_unloaded_bundles, now_ms)
        channel = self.b.xchannel
        ctx = TransferContext(
            broker_load_data_store=dict(sorted(self.load_data.items())),
            top_bundle_load_data_store=dict(sorted(self.top_bundles.items())),
            available_brokers=available, now=now_ms, bundle_owners=channel.owners(),
            recently_unloaded_bundles=dict(self.recently_unloaded_bundles),
            recently_unloaded_brokers=dict(self.recently_unloaded_brokers),
        )
        result = self.shedder.find_bundles_for_unloading(ctx)
        if isinstance(self.shedder, TransferShedder) and self.shedder.stats.total_brokers > 0:
            # The stats are cleared at the start of each cycle and set only once they are computed.
            counter = self.shedder.counter
            self.b.emit("transfer_shedder_stats", load_avg=float(counter.load_avg), load_std=float(counter.load_std),
                        target_std=float(self.cfg["loadBalancerBrokerLoadTargetStd"]), label=result.label.value,
                        reason="" if result.reason is None else result.reason.value)
        self.recently_unloaded_brokers = dict(result.recently_unloaded_brokers)
        unloads = 0
        for d in result.decisions:
            record = channel.view.get(d.bundle)
            if record is None or record.state is not ServiceUnitState.Owned or record.dst != d.source_broker:
                continue  # moved meanwhile
            unloads += 1
            dst = d.destination_broker or ""
            self.b.emit("unload_decided", bundle=d.bundle, source=d.source_broker, destination=dst,
                        reason=str(d.reason))
            self.b.spawn(channel.publish(d.bundle, ServiceUnitState.Releasing, dst, d.source_broker,
                                         "transfer" if dst else "unload"))
            self.recently_unloaded_bundles[d.bundle] = now_ms
            self.recently_unloaded_brokers[d.source_broker] = now_ms
        skipped = "" if unloads else (str(result.reason) if result.reason is not None else "no_decision")
        self.b.emit("shedding_cycle", strategy=name, brokers=len(available), unloads=unloads, skipped=skipped)
