"""The window coordinators (DESIGN.md principle 3).

Components:

* :class:`Coordinator` — in-process workers (``inproc``, ``inproc:N``). Workers advance their agents over
  [T, T+L) in turn, L being the network's lookahead. Between windows the coordinator routes what was sent — in
  the canonical order (send time, sender, sender's sequence number), so that the network's draws and its own
  events do not depend on placement — and starts the next window at the earliest pending event or delivery,
  skipping empty stretches of virtual time.
* :class:`SoleCoordinator` — one in-process worker (``inproc``): the same windows, run inside the worker, which
  routes its agents' messages itself at each window's end (every receiver is its own).
* :class:`MeshCoordinator` — worker processes (``procs:N``, ``tcp``). The workers run the same windows among
  themselves (``transport.mesh``: each routes its own agents' messages and sends the others' to their workers);
  this side starts them, watches them, and writes the network's and the fault schedule's events, numbered as
  :class:`Coordinator` numbers them.
* :class:`CoordinatorStats` — a run's counts (the manifest's ``stats``).
"""
from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from . import collector
from .messages import Message
from .network import NetworkModel
from .trace.writer import SegmentWriter
from .transport.base import WorkerLink
from .transport.inproc import InprocLink
from .transport.mesh import LoopStats

NETWORK_AGENT = "network"


@dataclass
class CoordinatorStats:
    windows: int = 0
    messages: int = 0
    dropped: int = 0
    events: int = 0
    virtual_time: float = 0.0
    wall_seconds: float = 0.0


class Coordinator:
    def __init__(
        self,
        links: Sequence[WorkerLink],
        network: NetworkModel,
        until: float,
        net_writer: SegmentWriter,
        progress: Callable[[float, CoordinatorStats], None] | None = None,
        progress_every_s: float = 0.2,
        boundaries: Sequence[tuple[float, str, dict]] = (),
        boundary_agent: str = "faults",
    ) -> None:
        self.links = list(links)
        self.network = network
        self.until = until
        self.stats = CoordinatorStats()
        self._owner: dict[str, int] = {a: i for i, link in enumerate(self.links) for a in link.agents}
        self._pending: list[tuple[tuple, Message]] = []
        self._net_events: list[tuple] = []
        self._net_seq = 0
        self._net_writer = net_writer
        self._progress = progress
        self._progress_every = progress_every_s
        self._boundaries = list(boundaries)
        self._boundary_agent = boundary_agent
        self._boundary_seq = 0
        self._started = self._last_progress = 0.0  # wall clock: the run's start, the last progress report
        network.agents = set(self._owner)
        network._emit = self._emit_network

    def _emit_network(self, kind: str, t: float, **fields) -> None:
        self._net_seq += 1
        self._net_events.append((t, NETWORK_AGENT, self._net_seq, kind, fields))

    def run(self) -> CoordinatorStats:
        """Run windows until ``until`` or until nothing is left to happen."""
        self._started = self._last_progress = time.perf_counter()
        L = self.network.lookahead
        links = self.links
        next_times = [link.next_time() for link in links]
        pending = self._pending
        stats = self.stats
        n_links = len(links)
        since = 0.0
        with collector.windows():
            while True:
                t_next = min(next_times)
                if pending and pending[0][0][0] < t_next:
                    t_next = pending[0][0][0]
                if math.isinf(t_next) or t_next >= self.until:
                    break
                end = min(t_next + L, self.until)
                due: list[list[Message]] = [[] for _ in range(n_links)]
                while pending and pending[0][0][0] < end:
                    _, msg = heapq.heappop(pending)
                    due[self._owner[msg.dst]].append(msg)
                # Only workers with an event or a delivery in the window take part. An idle worker has nothing to run;
                # ``since`` (the end of the previous window) brings its clock to where it would have been, so that
                # deliveries are scheduled from the same "now" (the same float rounding) whatever was skipped.
                active = [i for i in range(n_links) if due[i] or next_times[i] < end]
                for i in active:
                    links[i].advance(end, due[i], since)
                sent: list[Message] = []
                for i in active:
                    out, next_times[i], n_events = links[i].result()
                    sent.extend(out)
                    stats.events += n_events
                stats.windows += 1
                stats.virtual_time = since = end
                if sent:
                    self._route(sent)
                self._pass_boundaries(end)
                self._write_net_events()
                if self._progress is not None:
                    self._report(end)
                collector.check()
        return self._finish()

    def _report(self, end: float) -> None:
        """Call ``progress`` at the end of a window, at most once every ``progress_every_s`` of wall time."""
        now = time.perf_counter()
        if now - self._last_progress >= self._progress_every:
            self._last_progress = now
            stats = self.stats
            stats.virtual_time = end
            stats.wall_seconds = now - self._started
            self._progress(end, stats)

    def _finish(self) -> CoordinatorStats:
        """What remains at ``until``: the fault boundaries passed, the network's events, the last progress."""
        self._pass_boundaries(self.until)
        stats = self.stats
        stats.virtual_time = self.until
        self._write_net_events()
        stats.wall_seconds = time.perf_counter() - self._started
        if self._progress is not None:
            self._progress(stats.virtual_time, stats)
        return stats

    def _pass_boundaries(self, end: float) -> None:
        """Emit the fault boundaries that virtual time has passed (they are in time order)."""
        while self._boundaries and self._boundaries[0][0] < end:
            t, kind, fields = self._boundaries.pop(0)
            self._boundary_seq += 1
            self._net_events.append((t, self._boundary_agent, self._boundary_seq, kind, dict(fields)))

    def _write_net_events(self) -> None:
        if self._net_events:
            self.stats.events += len(self._net_events)
            self._net_writer.write(self._net_events)
            self._net_events.clear()

    def _route(self, sent: list[Message]) -> None:
        sent.sort(key=lambda m: (m.sent_t, m.src, m.seq))
        route = self.network.route
        pending = self._pending
        for msg in sent:
            self.stats.messages += 1
            if route(msg):
                heapq.heappush(pending, (msg.delivery_key, msg))
            else:
                self.stats.dropped += 1


class SoleCoordinator(Coordinator):
    """One in-process worker (``inproc``; ``links`` holds its one :class:`~.transport.inproc.InprocLink`): the
    same windows as :class:`Coordinator`, run inside the worker (:meth:`~.worker.Worker.run_alone`), and the same
    events of the network and the fault schedule, numbered the same way."""

    def __init__(self, links: Sequence[WorkerLink], *args: Any, **kwargs: Any) -> None:
        if len(links) != 1 or not isinstance(links[0], InprocLink):
            raise ValueError("SoleCoordinator runs exactly one in-process worker")
        super().__init__(links, *args, **kwargs)
        self._drops: list[tuple[float, str, dict]] = []

    def _emit_network(self, kind: str, t: float, **fields) -> None:
        self._drops.append((t, kind, fields))  # numbered after the window's routing (see _after_window)

    def run(self) -> CoordinatorStats:
        """Run windows until ``until`` or until nothing is left to happen."""
        self._started = self._last_progress = time.perf_counter()
        worker = self.links[0].worker  # type: ignore[attr-defined]  (an InprocLink: checked above)
        worker.run_alone(self.until, self.network.lookahead, self.network.route, self._after_window, self.stats)
        self._number_drops()
        return self._finish()

    def _after_window(self, end: float) -> None:
        self._number_drops()
        self._pass_boundaries(end)
        self._write_net_events()
        if self._progress is not None:
            self._report(end)

    def _number_drops(self) -> None:
        if self._drops:
            # Coordinator numbers the drops in (send time, sender, sequence) order; a window's messages were
            # routed sender by sender in each one's order, so a stable sort by (send time, sender) gives it.
            self._drops.sort(key=lambda d: (d[0], d[2]["src"]))
            for t, kind, fields in self._drops:
                super()._emit_network(kind, t, **fields)
            self._drops.clear()


class Mesh(Protocol):
    """Workers that run the windows among themselves (``transport.launch.ZmqWorkers``)."""

    def run(self, until: float, progress: Callable[[float, int, int], None] | None = None) -> list[LoopStats]:
        """Run every window up to ``until``; return each worker's counts."""


class MeshCoordinator:
    """Runs a mesh of workers to ``until`` and writes the coordinator's own events (network drops, fault
    boundaries) exactly as :class:`Coordinator` writes them."""

    def __init__(
        self,
        mesh: Mesh,
        until: float,
        net_writer: SegmentWriter,
        progress: Callable[[float, CoordinatorStats], None] | None = None,
        boundaries: Sequence[tuple[float, str, dict]] = (),
        boundary_agent: str = "faults",
    ) -> None:
        self.mesh = mesh
        self.until = until
        self.stats = CoordinatorStats()
        self._net_writer = net_writer
        self._progress = progress
        self._boundaries = list(boundaries)
        self._boundary_agent = boundary_agent
        self._started = 0.0
        #: what the workers reported: mesh frames and bytes sent, wall seconds in their windows, in the exchanges
        #: and in their whole loop (the manifest's ``transport.mesh``)
        self.report: dict[str, Any] = {}

    def _note(self, virtual_time: float, windows: int, events: int) -> None:
        stats = self.stats
        stats.virtual_time, stats.windows, stats.events = virtual_time, windows, events
        stats.wall_seconds = time.perf_counter() - self._started
        if self._progress is not None:
            self._progress(virtual_time, stats)

    def run(self) -> CoordinatorStats:
        self._started = time.perf_counter()
        try:
            results = self.mesh.run(self.until, self._note)
        except BaseException:
            # the fault boundaries that virtual time has passed, so that the partial trace still shows them
            self._write([], self.stats.virtual_time)
            raise
        stats = self.stats
        windows = {r.windows for r in results}
        if len(windows) != 1:
            raise RuntimeError(f"the workers disagree on the number of windows: {sorted(windows)}")
        stats.windows = windows.pop()
        stats.messages = sum(r.messages for r in results)
        stats.dropped = sum(r.dropped for r in results)
        stats.events = sum(r.events for r in results)
        self.report = {"frames": sum(r.frames for r in results), "bytes": sum(r.bytes for r in results),
                     "advance_s": [round(r.advance_s, 3) for r in results],
                     "exchange_s": [round(r.exchange_s, 3) for r in results],
                     "loop_s": [round(r.loop_s, 3) for r in results]}
        # Coordinator numbers the drops as it routes: window by window, in (send time, sender, sequence) order.
        # Windows are consecutive stretches of send time and a sender's drops come from one worker in its order,
        # so a stable sort of all of them by (send time, sender) gives that numbering.
        drops = sorted((d for r in results for d in r.drops), key=lambda d: (d[0], d[1]))
        events = [(t, NETWORK_AGENT, seq, kind, fields) for seq, (t, _src, kind, fields) in enumerate(drops, 1)]
        self._write(events, self.until)
        stats.virtual_time = self.until
        stats.wall_seconds = time.perf_counter() - self._started
        if self._progress is not None:
            self._progress(stats.virtual_time, stats)
        return stats

    def _write(self, events: list[tuple[Any, ...]], end: float) -> None:
        seq = 0
        while self._boundaries and self._boundaries[0][0] < end:
            t, kind, fields = self._boundaries.pop(0)
            seq += 1
            events.append((t, self._boundary_agent, seq, kind, dict(fields)))
        if events:
            self.stats.events += len(events)
            self._net_writer.write(events)
