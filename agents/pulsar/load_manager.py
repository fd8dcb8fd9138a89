"""The modular load manager as the leader runs it (``ModularLoadManagerImpl``).

* ``updateAll`` on every broker report the leader is notified of: keep each broker's latest ``LocalBrokerData``
  and fold its per-bundle stats into the bundle history (short/long-term samples), once per notification — the
  event-driven sampling of the real code.
* ``doLoadShedding`` every ``loadBalancerSheddingIntervalMinutes`` (first run one interval after becoming leader,
  then with fixed delay): drop grace-period entries, run the configured shedding strategy, choose each
  destination through the placement pipeline, and send the unload to the owner; the destination becomes the
  bundle's affinity, honoured at its next placement.
* Placement on lookups of unowned bundles: the filter pipeline and the placement strategy.
* ``checkNamespaceBundleSplit`` at the end of every ``updateAll`` (``loadBalancerAutoBundleSplitEnabled``): the
  hot bundles (:mod:`clusteremu.strategies.pulsar.split.auto_split`) are split by their owners (:mod:`.split`), each once
  at a time, their history forgotten; the children are unloaded afterwards when
  ``loadBalancerAutoUnloadSplitBundlesEnabled`` says so.

The strategies come from ``clusteremu.strategies.pulsar`` by name; this loop does not care which.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generator

from clusteremu.emulator.executor import FIXED_DELAY
from clusteremu.strategies import pulsar
from clusteremu.strategies.pulsar.config import as_config
from clusteremu.strategies.pulsar.load_data import BrokerData, BundleData, LocalBrokerData
from clusteremu.strategies.pulsar.placement.filters import broker_to_namespace_to_bundle_range_of
from clusteremu.strategies.pulsar.placement.pipeline import select_broker_for_assignment
from clusteremu.strategies.pulsar.split.auto_split import check_namespace_bundle_split

from .leader import LeaderLoadManager
from .store import BROKERS_PREFIX

if TYPE_CHECKING:
    from .port import BrokerPort


class LoadManager(LeaderLoadManager):
    watched = (BROKERS_PREFIX,)
    shedding_mode = FIXED_DELAY
    shedding_task = "load-shedding"

    def __init__(self, broker: "BrokerPort") -> None:
        super().__init__(broker)
        cfg = self.cfg
        self.reports: dict[str, dict[str, Any]] = {}
        # each report parsed once, when it arrives: the leader reads every broker's on every report and shed
        self.local_data: dict[str, LocalBrokerData] = {}
        self.last_stats: dict[str, Any] = {}  # each broker's lastStats, as the bundle history takes them
        self.active: set[str] = set()
        self.history = pulsar.BundleHistory()
        self.recently_unloaded: dict[str, int] = {}  # bundle -> epoch ms
        self.affinity: dict[str, str] = {}
        self.preallocated: dict[str, dict[str, Any]] = {}
        shedding = cfg["loadBalancerLoadSheddingStrategy"]
        placement = cfg["loadBalancerLoadPlacementStrategy"]
        self.shedder = pulsar.create(shedding, cfg, rng=broker.rng("shedding-strategy"))
        # A strategy that does both (AvgShedder) must be the same object for both roles, as Pulsar requires.
        if pulsar.canonical_name(placement) == pulsar.canonical_name(shedding):
            self.placer = self.shedder
        else:
            self.placer = pulsar.create(placement, cfg, rng=broker.rng("placement-strategy"))
        self.splitting: set[str] = set()  # bundles whose split request is in flight
        self._ns_reported: dict[str, Any] = {}  # brokerToNamespaceToBundleRange's reported part, per broker
        self._scores: dict[str, tuple[dict[str, Any], float]] = {}  # per broker: (report, its score)
        # What every placement reads again, kept between them: the config as the pipeline takes it, the
        # candidates (sorted active brokers) with their scores, updated for the brokers whose report changed,
        # and how many reports hold each bundle (a preallocation goes once a report holds its bundle).
        self._placement_cfg = as_config(cfg)
        self._candidates: list[str] | None = None
        self._score_row: dict[str, float] | None = None
        self._stale_scores: set[str] = set()
        self._reported_in: dict[str, int] = {}

    # -- updateAll ------------------------------------------------------------------------------------------
    def on_notify(self, path: str, change: str, data: Any) -> None:
        """A broker's report node (``/loadbalance/brokers/<broker>``) changed."""
        self.on_broker_report(path[len(BROKERS_PREFIX):], change, data)

    def on_broker_report(self, broker: str, change: str, data: dict[str, Any] | None) -> None:
        if self.stopped:
            return
        self._stale_scores.add(broker)
        old_report = self.reports.get(broker)
        if change == "deleted":
            self._count_reported(old_report, -1)
            self.reports.pop(broker, None)
            self.local_data.pop(broker, None)
            self.last_stats.pop(broker, None)
            self.active.discard(broker)
            self._candidates = self._score_row = None
            if hasattr(self.placer, "on_active_brokers_change"):
                self.placer.on_active_brokers_change(sorted(self.active))
        else:
            previous = self.reports.get(broker)
            # A report usually brings the same bundle stats as the broker's last one (its usage changed, not its
            # bundles): their parsed form is kept, and the bundle history then reuses its samples too.
            same = previous is not None and data.get("lastStats") == previous.get("lastStats")
            local = self.local_data[broker] = LocalBrokerData.from_json(
                data, f'brokerData["{broker}"].localData', self.local_data[broker].last_stats if same else None)
            self.last_stats[broker] = local.last_stats
            if not same:
                self._count_reported(old_report, -1)
                self._count_reported(data, 1)
            self.reports[broker] = data
            if broker not in self.active:
                self.active.add(broker)
                self._candidates = self._score_row = None
        self.history.update_all_stats(self.last_stats, changed=(broker,))
        # Preallocations some report now holds (their owner's, usually) are real: drop them.
        reported_in = self._reported_in
        for bundle in [b for b in self.preallocated if reported_in.get(b, 0) > 0]:
            del self.preallocated[bundle]
        if self.cfg["loadBalancerAutoBundleSplitEnabled"]:
            self.check_namespace_bundle_split()

    def _count_reported(self, report: dict[str, Any] | None, step: int) -> None:
        """Count ``report``'s bundles in (``step`` 1) or out (-1) of :attr:`_reported_in`."""
        if report is None:
            return
        reported_in = self._reported_in
        for bundle in report["lastStats"]:
            n = reported_in.get(bundle, 0) + step
            if n:
                reported_in[bundle] = n
            else:
                del reported_in[bundle]

    # -- split ----------------------------------------------------------------------------------------------
    def check_namespace_bundle_split(self) -> None:
        if len(self.active) <= 1 or not self._any_hot_bundle():
            return  # nothing to split: spare building the LoadData on every report
        decisions = check_namespace_bundle_split(
            self.load_data(), self.cfg, is_leader=True, known_brokers=sorted(self.active),
            namespace_bundles=self.b.ownership.bundle_map.namespace_bundles())
        for d in decisions:
            if d.bundle in self.splitting:
                continue
            self.splitting.add(d.bundle)
            self.history.forget(d.bundle)
            self.b.emit("split_decided", bundle=d.bundle, broker=d.broker, unload=d.unload)
            self.b.spawn(self._split(d.broker, d.bundle, d.unload))

    def _any_hot_bundle(self) -> bool:
        """Whether some reported bundle meets a split threshold (the necessary condition of
        ``find_bundles_to_split``, checked on the raw reports and the history)."""
        cfg = self.cfg
        max_topics = cfg["loadBalancerNamespaceBundleMaxTopics"]
        max_sessions = cfg["loadBalancerNamespaceBundleMaxSessions"]
        max_rate = cfg["loadBalancerNamespaceBundleMaxMsgRate"]
        max_bytes = cfg["loadBalancerNamespaceBundleMaxBandwidthMbytes"] * 1024 * 1024
        for report in self.reports.values():
            for bundle, st in report["lastStats"].items():
                if st["topics"] < 2:
                    continue
                if st["topics"] > max_topics or (max_sessions > 0 and
                                                 st["consumerCount"] + st["producerCount"] > max_sessions):
                    return True
                data = self.history.get(bundle)
                if data is not None and (data.long_term_data.total_msg_rate() > max_rate
                                         or data.long_term_data.total_msg_throughput() > max_bytes):
                    return True
        return False

    def _split(self, broker: str, bundle: str, unload: bool) -> Generator:
        yield from self.b.call(broker, "split", {"bundle": bundle, "unload": unload},
                               timeout=self.cfg["namespaceBundleUnloadingTimeoutMs"] / 1000.0)
        if not self.stopped:
            self.splitting.discard(bundle)

    def load_data(self) -> "pulsar.LoadData":
        """The leader's ``LoadData``: latest reports, bundle history, preallocations, grace-period bundles.

        Its dicts and ``BrokerData`` are new, its bundle data a snapshot of the history; the reports and the
        brokers' ``timeAverageData`` in them are the leader's own objects, which strategies only read (placement
        adds entries to the new mappings)."""
        history = self.history.snapshot()
        averages = self.history.time_average_data()  # as updateBundleData set them at the last report
        preallocated: dict[str, dict[str, BundleData]] = {}
        for bundle, owner in self.preallocated.items():
            data = history.get(bundle)
            preallocated.setdefault(owner, {})[bundle] = data if data is not None else BundleData.with_default_stats()
        return pulsar.LoadData(
            broker_data={b: BrokerData(local_data=ld, time_average_data=averages[b],
                                       preallocated_bundle_data=preallocated.get(b, {}))
                         for b, ld in sorted(self.local_data.items())},
            bundle_data=history,
            recently_unloaded_bundles=dict(self.recently_unloaded),
        )

    # -- shedding -------------------------------------------------------------------------------------------
    def shed(self) -> None:
        name = self.begin_shedding()
        if name is None:
            return
        self.forget_grace_period(self.recently_unloaded, self.b.now_ms())
        load = self.load_data()
        plan = self.shedder.find_bundles_for_unloading(load)
        unloads = 0
        for broker, bundle in plan:
            dest = self.place(bundle, exclude=broker, load=load, during_shedding=True)
            if dest is None or dest == broker:
                continue
            unloads += 1
            self.affinity[bundle] = dest
            self.b.emit("unload_decided", bundle=bundle, source=broker, destination=dest, reason="shedding")
            self.b.spawn(self._unload(broker, bundle, dest))
        if hasattr(self.shedder, "on_unload_attempt_completed"):
            self.shedder.on_unload_attempt_completed([b for _, b in plan])
        self.b.emit("shedding_cycle", strategy=name, brokers=len(self.active), unloads=unloads,
                    skipped="" if unloads else "no_decision")

    def _unload(self, broker: str, bundle: str, dest: str) -> Generator:
        r = yield from self.b.call(broker, "unload", {"bundle": bundle, "destination": dest, "reason": "shedding"},
                                   timeout=self.cfg["namespaceBundleUnloadingTimeoutMs"] / 1000.0)
        if r is not None and r.get("ok") and not self.stopped:
            self.recently_unloaded[bundle] = self.b.now_ms()

    # -- placement ------------------------------------------------------------------------------------------
    def place(self, bundle: str, exclude: str | None = None, load: "pulsar.LoadData | None" = None,
              during_shedding: bool = False) -> str | None:
        """Choose the owner of an unowned bundle (or the destination of one being shed)."""
        dest = self.affinity.pop(bundle, None) if not during_shedding else None
        if dest is not None and dest in self.active:
            return dest
        if self._candidates is None:
            self._candidates = sorted(self.active)
        candidates = self._candidates
        if not candidates:
            return None
        owner = self.preallocated.get(bundle) if not during_shedding else None
        if owner is not None and owner in self.local_data:
            # selectBrokerForAssignment answers a preallocated bundle first (the clients of a bundle's other
            # topics look it up before its new owner reports it), without the LoadData
            broker, random_fallback = owner, False
        else:
            load = load if load is not None else self.load_data()
            choice = select_broker_for_assignment(
                bundle, candidates, load, self.placer, self._placement_cfg,
                broker_to_namespace_to_bundle_range=broker_to_namespace_to_bundle_range_of(load, self._ns_reported))
            if choice.broker is None:
                return None
            broker, random_fallback = choice.broker, bool(choice.random_fallback)
        if not during_shedding:
            self.preallocated[bundle] = broker
        scores = self._scores_of(candidates)
        self.b.emit("bundle_placed", bundle=bundle, broker=broker, strategy=type(self.placer).__name__,
                    random_fallback=random_fallback, scores=scores)
        return broker

    def _scores_of(self, candidates: list[str]) -> dict[str, float]:
        """``{broker: score}`` of the candidates (a new dict), from the row kept since the candidates changed."""
        row = self._score_row
        if row is None:
            row = self._score_row = {b: self.score(b) for b in candidates}
        else:
            for broker in self._stale_scores:
                if broker in row:
                    row[broker] = self.score(broker)
        self._stale_scores.clear()
        return dict(row)

    def score(self, broker: str) -> float:
        r = self.reports.get(broker)
        if r is None:
            return float("nan")
        cached = self._scores.get(broker)
        if cached is None or cached[0] is not r:  # once per report: a placement lists every broker's score
            cached = self._scores[broker] = (r, 100.0 * pulsar.weighted_max_4(r, self.cfg))
        return cached[1]
