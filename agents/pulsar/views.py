"""Pulsar's views over a trace: which broker owns a bundle, and every broker's load report in force, at any
virtual time. A test or an analysis reaches them as ``trace.views`` of a Pulsar run (see
:attr:`clusteremu.emulator.trace.query.Trace.views`); the leader at a time is the kernel's own ``trace.leader_at``."""
from __future__ import annotations

import bisect

from clusteremu.emulator.trace.query import Trace
from clusteremu.emulator.trace.reader import Event

__all__ = ["PulsarViews"]


class PulsarViews:
    """Ownership and load reports of a Pulsar run, computed from its events once and then answered by bisection."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._owners: dict[str, tuple[list[float], list[str | None]]] | None = None

    def owner_at(self, bundle: str, t: float) -> str | None:
        """The broker owning ``bundle`` at ``t`` (events at ``t`` applied), or None.

        ``bundle_owned`` makes its agent the owner. The owner stops owning at its own ``bundle_unloaded`` of the
        bundle, or when the store's ``store_session_expired`` names it as ``owner`` (its ephemeral ownership nodes are
        deleted). A broker's ``bundle_unloaded`` of a bundle another broker already owns changes nothing. A
        crashed broker still owns its bundles until its session expires, as it does in the store.
        """
        times, owners = self._ownership().get(bundle, ([], []))
        i = bisect.bisect_right(times, t)
        return owners[i - 1] if i else None

    def owners_at(self, t: float) -> dict[str, str]:
        """Every owned bundle at ``t`` and its owner."""
        out = {}
        for bundle in self._ownership():
            owner = self.owner_at(bundle, t)
            if owner is not None:
                out[bundle] = owner
        return dict(sorted(out.items()))

    def ownership_changes(self, bundle: str) -> list[tuple[float, str | None]]:
        """The ownership history of ``bundle``: (time, new owner or None), in order."""
        times, owners = self._ownership().get(bundle, ([], []))
        return list(zip(times, owners))

    def last_report(self, broker: str, t: float) -> Event | None:
        """``broker``'s latest ``load_report`` at or before ``t``."""
        return self.trace.latest("load_report", broker, t)

    def reports_at(self, t: float) -> dict[str, Event]:
        """Every broker's latest ``load_report`` at or before ``t``."""
        return self.trace.latest_per_agent("load_report", t)

    def _ownership(self) -> dict[str, tuple[list[float], list[str | None]]]:
        if self._owners is None:
            current: dict[str, str | None] = {}
            history: dict[str, tuple[list[float], list[str | None]]] = {}

            def change(bundle: str, t: float, owner: str | None) -> None:
                current[bundle] = owner
                times, owners = history.setdefault(bundle, ([], []))
                if times and times[-1] == t:
                    owners[-1] = owner  # only the state after every event at t is observable
                else:
                    times.append(t)
                    owners.append(owner)

            for ev in self.trace.select(("bundle_owned", "bundle_unloaded", "store_session_expired")):
                if ev.kind == "bundle_owned":
                    change(ev.bundle, ev.t, ev.agent)
                elif ev.kind == "bundle_unloaded":
                    if current.get(ev.bundle) == ev.agent:
                        change(ev.bundle, ev.t, None)
                else:
                    lost = ev.get("owner")
                    if lost:
                        for bundle, owner in list(current.items()):
                            if owner == lost:
                                change(bundle, ev.t, None)
            self._owners = history
        return self._owners
