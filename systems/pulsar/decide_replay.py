"""What the leader carries from one shedding interval to the next when ``decide`` replays a series of dumps.

A real leader keeps, between shedding cycles, its bundle history (``ModularLoadManagerImpl``'s ``loadData.bundleData``,
one sample folded per report) and the bundles (and, for the extensible load manager, the brokers) it unloaded
recently; a dump has neither. :class:`Replay` keeps them across the steps of one replay, and ``--state`` saves them
(:meth:`Replay.get_state`) beside the strategy's state, so that two invocations over halves of a series decide as one
over the whole. The envelope (``LoadData`` with its own ``bundleData`` and ``recentlyUnloadedBundles``) needs none of
this.

Contents: :class:`Step` (one shedding interval's input and where it came from), :class:`Replay`.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Iterable

from clusteremu.strategies.pulsar.extensible import TransferContext
from clusteremu.strategies.pulsar.json_input import key_path, read_document
from clusteremu.strategies.pulsar.load_data import BundleData, LoadData, TimeAverageBrokerData

__all__ = ["Replay", "Step"]

_MINUTE_MS = 60_000


@dataclass
class Step:
    """One shedding interval: the strategy's input and where it came from.

    ``load`` is a :class:`LoadData` (modular shedders) or, for the extensible format, a :class:`TransferContext`
    whose ``now`` is filled by :class:`Replay`. ``time`` is epoch ms when known (a timestamp in the entry's name,
    ``pulsar-client``'s ``publishTime``); :class:`Replay` fills it from the data otherwise.
    """

    source: str
    load: LoadData | TransferContext
    time: int | None = None


class Replay:
    """The leader's memory across the steps of a replay built from dumps (not for the envelope, which carries its
    own): its bundle history (modular), the bundles and brokers it unloaded and when."""

    def __init__(self) -> None:
        self.bundle_history: dict[str, BundleData] = {}
        self.recently_unloaded_bundles: dict[str, int] = {}
        self.recently_unloaded_brokers: dict[str, int] = {}

    # --- state (saved by ``--state`` beside the strategy's, so halves of a series replay like the whole)
    def get_state(self) -> dict[str, Any]:
        """``{"bundleData": {bundle: BundleData JSON}, "recentlyUnloadedBundles", "recentlyUnloadedBrokers"}``."""
        return {"bundleData": {b: d.to_json() for b, d in self.bundle_history.items()},
                "recentlyUnloadedBundles": dict(self.recently_unloaded_bundles),
                "recentlyUnloadedBrokers": dict(self.recently_unloaded_brokers)}

    def set_state(self, state: dict[str, Any], where: str) -> None:
        """Restore what :meth:`get_state` returned; a bad entry is an :class:`InputError` at ``where``."""
        bundles = state.get("bundleData") or {}
        self.bundle_history = {b: read_document(lambda v, b=b: BundleData.from_json(v, key_path("bundleData", b)),
                                                d, where) for b, d in bundles.items()}
        self.recently_unloaded_bundles = {
            str(b): int(t) for b, t in (state.get("recentlyUnloadedBundles") or {}).items()}
        self.recently_unloaded_brokers = {
            str(b): int(t) for b, t in (state.get("recentlyUnloadedBrokers") or {}).items()}

    # --- modular
    def prepare_modular(self, step: Step, grace_minutes: float) -> LoadData:
        """The step's ``LoadData`` after the leader's ``updateAll`` (see the module docstring)."""
        load = step.load
        assert isinstance(load, LoadData)
        stored = load.bundle_data
        now = step.time if step.time is not None else max(
            (b.local_data.last_update for b in load.broker_data.values()), default=0)
        history = self.bundle_history
        active: set[str] = set()
        for broker in load.brokers_in_java_order():
            data = load.broker_data[broker]
            for bundle, stats in data.local_data.last_stats.items():
                active.add(bundle)
                if bundle in history:
                    history[bundle].update(stats)
                else:
                    start = copy.deepcopy(stored[bundle]) if bundle in stored else BundleData.with_default_stats()
                    start.update(stats)
                    history[bundle] = start
            data.time_average_data = TimeAverageBrokerData()
            data.time_average_data.reset(list(data.local_data.last_stats), history)
        for bundle in [b for b in history if b not in active]:
            del history[bundle]
        grace_ms = grace_minutes * _MINUTE_MS
        self.recently_unloaded_bundles = {b: t for b, t in self.recently_unloaded_bundles.items()
                                          if t + grace_ms >= now}
        step.time = now
        return LoadData(broker_data=load.broker_data, bundle_data=dict(history),
                        recently_unloaded_bundles=dict(self.recently_unloaded_bundles))

    def unloaded(self, time: int, decisions: Iterable[tuple[str, str]]) -> None:
        """Remember the step's unloads: ``(source broker, bundle)`` at ``time`` (epoch ms)."""
        for broker, bundle in decisions:
            self.recently_unloaded_bundles[bundle] = time
            self.recently_unloaded_brokers[broker] = time

    # --- extensible
    def prepare_extensible(self, step: Step, grace_minutes: float) -> TransferContext:
        """The step's ``TransferContext`` at its time, with what this replay unloaded before."""
        ctx = step.load
        assert isinstance(ctx, TransferContext)
        now = step.time if step.time is not None else max(
            (d.updated_at for d in ctx.broker_load_data_store.values()), default=0)
        grace_ms = grace_minutes * _MINUTE_MS
        self.recently_unloaded_bundles = {b: t for b, t in self.recently_unloaded_bundles.items()
                                          if t + grace_ms >= now}
        step.time = now
        ctx.now = now
        ctx.recently_unloaded_bundles = dict(self.recently_unloaded_bundles)
        ctx.recently_unloaded_brokers = dict(self.recently_unloaded_brokers)
        return ctx
