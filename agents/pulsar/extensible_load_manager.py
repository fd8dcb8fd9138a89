"""The extensible load manager (``ExtensibleLoadManagerImpl``, PIP-192) as the channel owner — the leader — runs it.

* It reads the brokers' registry (``/loadbalance/brokers``), their ``BrokerLoadData`` and top bundles
  (:mod:`.extensible_reporting`), and the service-unit state channel through its broker's table view
  (:mod:`.extensible_channel`).
* ``UnloadScheduler`` every ``loadBalancerSheddingIntervalMinutes`` (fixed rate, first run one interval after
  becoming the channel owner): prune ``recentlyUnloadedBundles`` by ``loadBalancerSheddingGracePeriodMinutes``,
  run the shedding strategy (``TransferShedder``) on a :class:`~clusteremu.strategies.pulsar.extensible.TransferContext`,
  and publish each decision as ``Releasing`` on the channel — with the destination when
  ``loadBalancerTransferEnabled`` (a *transfer*: the destination is assigned before the clients move), without
  it otherwise (an *unload*: the bundle goes Free and the clients' next lookups assign it).
* Assignment of unowned bundles (any broker's lookup asks the channel owner): the extensible
  ``LeastResourceUsageWithWeight`` over the registered brokers, published as ``Assigning``.
* When a broker leaves the registry (session expired, stopped), its bundles are orphans: they are set Free so
  that the clients' lookups reassign them (the monitor's override in Pulsar).

Departure: the shedder's ``isTransferable`` check (isolation/anti-affinity policies and the broker filters) is
not modelled: scenarios have no such policies, so every bundle is transferable.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

from clusteremu.emulator.executor import FIXED_RATE
from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.extensible import BrokerLoadData, ServiceUnitState, TopBundlesLoadData, TransferContext

from .extensible_reporting import LOAD_DATA_PREFIX, TOP_BUNDLES_PREFIX
from .leader import LeaderLoadManager
from .store import BROKERS_PREFIX

if TYPE_CHECKING:
    from .port import BrokerPort


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

    def on_snapshot(self) -> None:
        # A new channel owner adopts the orphans left while there was none.
        for bundle, record in sorted(self.b.xchannel.view.items()):
            self._free_if_orphan(bundle, record)

    # -- inputs ---------------------------------------------------------------------------------------------
    def on_broker_report(self, broker: str, change: str, data: dict[str, Any] | None) -> None:
        """The broker registry changed (the broker's notification path for ``/loadbalance/brokers``)."""
        if self.stopped:
            return
        if change == "deleted":
            self.active.discard(broker)
            for bundle, record in sorted(self.b.xchannel.view.items()):
                self._free_if_orphan(bundle, record)
        else:
            self.active.add(broker)

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

    def _free_if_orphan(self, bundle: str, record) -> None:
        holder = record.src if record.state is ServiceUnitState.Releasing else record.dst
        if holder not in self.active:
            self.b.spawn(self.b.xchannel.publish_free(bundle, holder, "orphaned"))

    # -- assignment -----------------------------------------------------------------------------------------
    def assign(self, bundle: str) -> Generator[Any, Any, str | None]:
        """Choose an owner for an unowned bundle and publish ``Assigning``; return the owner (or None)."""
        if self.stopped:
            return None
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
