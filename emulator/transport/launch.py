"""Starting a run's ZeroMQ workers: spawned locally over ``ipc://`` (``procs:N``) or joining over ``tcp://``.

Either way the coordinator binds a :class:`~clusteremu.emulator.transport.hub.Hub`, waits for the workers, sends each its
share of the placement (the scenario as data plus the names of its agents) and returns one link per group.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from clusteremu.base.errors import InputError
from . import wire
from .hub import Hub, HubOptions, ZmqLink, owner_only_ipc_dir



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
        """Wait for one worker per group, assign the groups in order, wait until every worker is ready."""
        peers = self.hub.wait_for_workers(len(groups))
        links = []
        for wid, (peer, names) in enumerate(zip(peers, groups)):
            try:
                links.append(self.hub.assign(peer, {**common, "worker_id": wid, "agents": names}))
            except (TypeError, ValueError) as err:
                raise InputError("scenario", f"cannot be sent to workers as msgpack: {err}") from None
        for link in links:
            link.ready()
        return links

    def stop(self, reason: str) -> None:
        self.hub.stop(reason)

    def close(self) -> None:
        try:
            self.hub.close()
        finally:
            if self._ipc_dir is not None:
                shutil.rmtree(self._ipc_dir, ignore_errors=True)


__all__ = ["ZmqOptions", "ZmqWorkers", "HubOptions", "wire"]
