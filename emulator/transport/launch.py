"""Starting a run's ZeroMQ workers: spawned locally over ``ipc://`` (``procs:N``) or joining over ``tcp://``.

Either way the coordinator binds a :class:`~clusteremu.emulator.transport.hub.Hub`, waits for the workers, sends each its
share of the placement (the scenario as data, the names of its agents, the whole placement and where to bind its
mesh inbox), returns one link per group, then starts the windows, which the workers run among themselves
(:mod:`~clusteremu.emulator.transport.mesh`), and collects their counts.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from clusteremu.base.errors import InputError
from . import wire
from .hub import Hub, HubOptions, ZmqLink, owner_only_ipc_dir
from .mesh import LoopStats
from .peers import UNIX, mesh_keypair

#: wall seconds between two calls of the progress callback while the workers run
PROGRESS_EVERY_S = 0.2



@dataclass
class ZmqOptions:
    """Flags of ``run`` for the ZeroMQ transports (``--bind``, ``--expect``, keys, liveness, frame bound)."""

    bind: str | None = None
    expect: int | None = None
    server_key: str | None = None
    allow: str | None = None
    insecure: bool = False
    hub: HubOptions = field(default_factory=HubOptions)


class ZmqWorkers:
    """The hub and, for ``procs:N``, the worker processes and their private ipc directory."""

    def __init__(self, kind: str, n: int, opts: ZmqOptions) -> None:
        self.kind = kind
        self._ipc_dir: str | None = None
        self._links: list[ZmqLink] = []
        #: what the workers' mesh inboxes refused, by reason (from their ``done``)
        self._mesh_refused: Counter[str] = Counter()
        #: tcp with CurveZMQ: the workers' mesh is encrypted too, with a key pair made for this run
        self._curve_mesh = kind == "tcp" and not opts.insecure
        if kind == "procs":
            self._ipc_dir = owner_only_ipc_dir()
            path = os.path.join(self._ipc_dir, "coordinator.sock")
            self.hub = Hub(f"ipc://{path}", opts.hub)
            os.chmod(path, 0o600)
            self.hub.processes = [self._spawn(opts.hub) for _ in range(n)]
        else:
            if not opts.bind or not opts.bind.startswith("tcp://"):
                raise InputError("--bind", "tcp workers need --bind tcp://HOST:PORT")
            if opts.expect is None or opts.expect < 1:
                raise InputError("--expect", "tcp workers need --expect N (N >= 1 workers to wait for)")
            secure = None
            if not opts.insecure:
                if not opts.server_key or not opts.allow:
                    raise InputError("--agents tcp", "CurveZMQ needs --server-key FILE.key_secret and --allow DIR "
                                                     "(make keys with `clusteremu agent keygen`), or an explicit --insecure")
                from .curve import secure_server

                secure = lambda ctx, sock: secure_server(ctx, sock, opts.server_key, opts.allow)  # noqa: E731
            try:
                self.hub = Hub(opts.bind, opts.hub, secure)
            except Exception as err:
                if isinstance(err, InputError):
                    raise
                raise InputError(f"--bind {opts.bind}", f"cannot bind: {err}") from None

    def _spawn(self, hub_opts: HubOptions) -> subprocess.Popen:
        env = dict(os.environ)
        cmd = [sys.executable, "-m", "clusteremu", "agent", "--connect", self.hub.endpoint,
               "--parent-pid", str(os.getpid()), "--heartbeat-s", repr(hub_opts.heartbeat_s),
               "--timeout", repr(hub_opts.timeout_s), "--max-frame-bytes", str(hub_opts.max_frame_bytes)]
        # the workers ignore SIGINT: a Ctrl-C reaches the coordinator, which stops them in order
        return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))

    def links(self, groups: list[list[str]], common: dict[str, Any]) -> list[ZmqLink]:
        """Wait for one worker per group, assign the groups in order (each worker gets the whole placement, to
        route its agents' messages, and where to bind its mesh inbox), wait until every worker is ready."""
        peers = self.hub.wait_for_workers(len(groups))
        mesh: dict[str, Any] = {}
        if self._curve_mesh:
            public, secret = mesh_keypair()
            mesh = {"public": public, "secret": secret}
        links = []
        for wid, (peer, names) in enumerate(zip(peers, groups)):
            bind = None if self._ipc_dir is None else UNIX + os.path.join(self._ipc_dir, f"mesh-{wid}.sock")
            body = {**common, "worker_id": wid, "agents": names, "placement": groups, "mesh": {**mesh, "bind": bind}}
            try:
                links.append(self.hub.assign(peer, body))
            except (TypeError, ValueError) as err:
                raise InputError("scenario", f"cannot be sent to workers as msgpack: {err}") from None
        for link in links:
            link.ready()
        self._links = links
        return links

    def run(self, until: float, progress: Callable[[float, int, int], None] | None = None) -> list[LoopStats]:
        """Start the windows on every worker (they exchange messages among themselves) and wait until they are
        over; ``progress(virtual_time, windows, events)`` is called with the workers' notes meanwhile."""
        hub, links = self.hub, self._links
        endpoints = [link.peer.mesh for link in links]
        for link in links:
            hub.call(link.peer, wire.RUN, {"endpoints": endpoints, "until": until})
        period = hub.opts.heartbeat_s if progress is None else min(hub.opts.heartbeat_s, PROGRESS_EVERY_S)
        # Wait for every reply at once: a worker that fails leaves its peers waiting for its frames, so its
        # ``failed`` must end the run whichever worker is still running.
        while any(link.peer.reply is None for link in links):
            hub._pump(period)
            for link in links:
                if link.peer.reply is not None and link.peer.reply[0] == wire.FAILED:
                    hub.wait(link.peer)  # raises RunFailure with the worker's reason
            if progress is not None:
                notes = [link.peer.progress for link in links]
                try:
                    vt, windows, events = (min(float(n[0]) for n in notes), max(int(n[1]) for n in notes),
                                           sum(int(n[2]) for n in notes))
                except (TypeError, ValueError, IndexError):
                    continue  # some worker has not sent a (well-formed) note yet
                progress(vt, windows, events)
        results = [link.done() for link in links]
        for r in results:
            self._mesh_refused.update(r.refused)
        return results

    def report(self) -> dict[str, Any]:
        """The manifest's ``transport``: the coordinator's endpoint, the frames it dropped by fault (as older
        readers know them) and the peers refused by reason, at the coordinator and at the workers' inboxes."""
        refused = Counter(self.hub.refusals.counts())
        refused.update(self._mesh_refused)
        return {"endpoint": self.hub.endpoint, "dropped_frames": dict(self.hub.dropped),
                "refused_peers": dict(sorted(refused.items()))}

    def stop(self, reason: str) -> None:
        self.hub.stop(reason)

    def close(self) -> None:
        try:
            self.hub.close()
        finally:
            if self._ipc_dir is not None:
                shutil.rmtree(self._ipc_dir, ignore_errors=True)


__all__ = ["ZmqOptions", "ZmqWorkers", "HubOptions", "wire"]
