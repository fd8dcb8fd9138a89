"""The coordinator side of the ZeroMQ transport: one ROUTER socket, the workers that joined it, their liveness.

:class:`Hub` binds the socket, admits workers (each says hello on its main socket and beats on a second one whose
identity is the main one plus ``#hb``), assigns them their agents, and hands out one :class:`ZmqLink` per worker
to the coordinator. While the workers run their windows the hub keeps reading the socket: it matches replies
to the calls it made, keeps each worker's latest progress note, answers nothing else, beats to every worker,
and fails the run (:class:`~clusteremu.base.errors.RunFailure`) as soon as a worker is dead or has been silent
longer than the timeout.
Frames that break the protocol — garbage, oversized, another version, unknown peers, replies to calls never made
— are refused: counted in ``dropped`` (by frame fault, the manifest's ``transport.dropped_frames``) and in
``refusals`` (by reason, ``transport.refused_peers``), the first of each host and reason logged, and otherwise
ignored. On tcp a :class:`~clusteremu.emulator.transport.monitor.ConnectionWatch` also refuses the connections
that fail their handshake (no CURVE, unknown key, bad handshake), and every peer is named by address and key id
(:class:`~clusteremu.emulator.transport.refusals.PeerName`), never by its identity bytes.
"""
from __future__ import annotations

import logging
import os
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import zmq

from clusteremu.base.errors import RunFailure
from ..trace.writer import WriterSummary
from . import wire
from .mesh import LoopStats
from .monitor import ConnectionWatch
from .refusals import UNKNOWN_ADDRESS, PeerName, Refusals, peer_address

log = logging.getLogger("clusteremu.hub")

HB_SUFFIX = b"#hb"


@dataclass
class HubOptions:
    """Liveness and size limits of the coordinator's socket."""

    heartbeat_s: float = 0.5
    #: a worker silent this long (wall seconds) fails the run
    timeout_s: float = 5.0
    #: how long to wait for the expected workers to join
    join_timeout_s: float = 60.0
    max_frame_bytes: int = wire.DEFAULT_MAX_FRAME_BYTES


@dataclass
class _Peer:
    identity: bytes
    pid: int
    host: str
    last_seen: float
    worker_id: int = -1
    agents: list[str] = field(default_factory=list)
    process: subprocess.Popen | None = None
    call: int = 0  # the call this worker still owes a reply to (0: none)
    reply: tuple[str, Any] | None = None
    finished: bool = False  # it sent its trace summary and may exit: no longer watched
    progress: Any = None  # its latest progress note during the windows: [virtual_time, windows, events]
    mesh: str = ""  # the endpoint of its mesh inbox (from its ready)
    name: PeerName | None = None  # its main connection's address and key id
    #: the descriptor each of its identities (main, heartbeat) last arrived on: another one is a new connection
    fds: dict[bytes, int] = field(default_factory=dict)
    lost_at: float | None = None  # when a connection of it closed before it finished (tcp)
    lost_logged: bool = False

    def describe(self) -> str:
        shown = ", ".join(self.agents[:8])
        more = f" and {len(self.agents) - 8} more" if len(self.agents) > 8 else ""
        # a local worker's address (ipc pid N) says nothing its pid does not
        where = f", {self.name}" if self.name is not None and not self.name.address.startswith("ipc") else ""
        return f"worker {self.worker_id} (pid {self.pid} on {self.host}{where}; agents {shown}{more})"


class Hub:
    def __init__(self, endpoint: str, opts: HubOptions, secure: Callable[[zmq.Context, zmq.Socket], Any] | None = None):
        self.opts = opts
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.linger = 0
        self.sock.router_handover = True
        self._auth = secure(self.ctx, self.sock) if secure is not None else None
        self.refusals = Refusals(log, "the coordinator")
        self._poller = zmq.Poller()
        self._poller.register(self.sock, zmq.POLLIN)
        #: tcp: who connects and who is refused during the handshake (the ipc socket is private to the run)
        self.watch: ConnectionWatch | None = None
        if endpoint.startswith("tcp://"):
            self.watch = ConnectionWatch(self.sock, self.refusals, curve=secure is not None, zap=self._auth,
                                         on_lost=self._lost)
            self._poller.register(self.watch.monitor, zmq.POLLIN)
        self.sock.bind(endpoint)
        self.endpoint = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
        self.peers: dict[bytes, _Peer] = {}
        self.dropped: Counter[str] = Counter()
        self._calls = 0
        self._next_beat = 0.0
        self._beat = wire.encode(wire.HEARTBEAT, 0, {})
        self.processes: list[subprocess.Popen] = []
        #: how many workers this run admits (set by ``wait_for_workers``)
        self.capacity = 1 << 30

    # -- joining ------------------------------------------------------------------------------------------
    def wait_for_workers(self, n: int) -> list[_Peer]:
        """Admit ``n`` workers (in the order they say hello), or fail after ``join_timeout_s``."""
        deadline = time.monotonic() + self.opts.join_timeout_s
        self.capacity = n
        while len(self.peers) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RunFailure(f"only {len(self.peers)} of {n} workers joined {self.endpoint} within "
                                 f"{self.opts.join_timeout_s:g} s")
            for proc in self.processes:
                if proc.poll() is not None:
                    raise RunFailure(f"worker process {proc.pid} exited with status {proc.returncode} before joining")
            self._pump(min(left, self.opts.heartbeat_s))
        peers = list(self.peers.values())
        for i, p in enumerate(peers):
            p.worker_id = i
            p.process = next((q for q in self.processes if q.pid == p.pid), None)
        return peers

    def assign(self, peer: _Peer, body: dict[str, Any]) -> "ZmqLink":
        peer.agents = list(body["agents"])
        frame = self._encode(wire.ASSIGN, peer, body)
        self.sock.send_multipart([peer.identity, frame], copy=len(frame) < 65536)
        return ZmqLink(self, peer)

    # -- calls --------------------------------------------------------------------------------------------
    def _encode(self, kind: str, peer: _Peer, body: Any) -> bytes:
        self._calls += 1
        peer.call = self._calls
        peer.reply = None
        return wire.encode(kind, peer.call, body)

    def call(self, peer: _Peer, kind: str, body: Any) -> None:
        frame = self._encode(kind, peer, body)
        self.sock.send_multipart([peer.identity, frame], copy=len(frame) < 65536)

    def wait(self, peer: _Peer) -> tuple[str, Any]:
        """The reply ``peer`` owes, reading (and checking liveness) meanwhile."""
        while peer.reply is None:
            self._pump(self.opts.heartbeat_s)
        kind, body = peer.reply
        peer.reply = None
        peer.call = 0
        if kind == wire.FAILED:
            raise RunFailure(f"{peer.describe()} failed: {body.get('reason') if isinstance(body, dict) else body}")
        return kind, body

    def _pump(self, timeout_s: float) -> None:
        """Read what has arrived (waiting at most ``timeout_s``), beat, and check that every worker is alive."""
        # A non-blocking read first: in the window loop the reply is often there already, and the poller (kept,
        # not made anew per call) only runs when nothing is.
        if self._drain() or self._poller.poll(max(1, int(timeout_s * 1000))) and self._drain():
            if time.monotonic() < self._next_beat:
                return  # traffic flows: liveness is checked once per heartbeat period, or when a wait times out
        self._liveness()

    def _drain(self) -> bool:
        """Receive every frame already queued (and, on tcp, every monitor event); whether there was one."""
        recv, got = self.sock.recv_multipart, False
        if self.watch is not None:
            got = self.watch.pump()
        while True:
            try:
                frames = recv(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return got
            got = True
            self._receive(frames)

    def _refuse(self, dropped: str, reason: str, detail: str, name: PeerName) -> None:
        """Drop a frame: ``dropped`` is its fault in the manifest's ``dropped_frames`` (kept for older readers),
        ``reason`` its refusal reason (``refused_peers``)."""
        self.dropped[dropped] += 1
        self.refusals.refuse(name, reason, detail)

    def _name(self, identity: bytes, frame: zmq.Frame) -> tuple[PeerName, int]:
        """The sender of ``frame`` (which arrived for ``identity``) by address and key id, and its descriptor."""
        try:
            fd = frame.get(zmq.SRCFD)
        except zmq.ZMQError:
            return PeerName(UNKNOWN_ADDRESS), -1
        address = self.watch.seen(fd) if self.watch is not None else peer_address(fd)
        try:
            kid = frame.get("User-Id") or None  # set by the ZAP handler to the key id (CurveZMQ only)
        except zmq.ZMQError:
            kid = None
        return PeerName(address, kid), fd

    def _receive(self, raw: list[zmq.Frame]) -> None:
        now = time.monotonic()
        identity = raw[0].bytes
        is_hb = identity.endswith(HB_SUFFIX)
        peer = self.peers.get(identity[: -len(HB_SUFFIX)] if is_hb else identity)
        if peer is not None and raw[-1].get(zmq.SRCFD) == peer.fds.get(identity):
            name = peer.name
        else:
            name, fd = self._name(identity, raw[-1])
            if peer is not None:
                self._moved(peer, identity, fd, name)
        if len(raw) != 2:
            self._refuse("garbage", "malformed_frame", f"{len(raw) - 1} frames instead of one", name)
            return
        payload = raw[1].bytes
        if len(payload) > self.opts.max_frame_bytes:
            self._refuse("oversized", "oversized", f"{len(payload)} bytes > maximum {self.opts.max_frame_bytes}",
                         name)
            return
        try:
            kind, call, body = wire.decode(payload, wire.TO_COORDINATOR, self.opts.max_frame_bytes)
        except wire.WireError as err:
            self._refuse("invalid", "wrong_protocol" if err.version_mismatch else "malformed_frame", str(err), name)
            return
        if kind == wire.HELLO and not is_hb:
            if peer is not None:
                self._refuse("unexpected hello", "duplicate_hello", f"{peer.describe()} said hello again", name)
                return
            if not isinstance(body, dict):
                self._refuse("unexpected hello", "malformed_frame", "a hello whose body is not a map", name)
                return
            if body.get("protocol") != wire.PROTOCOL_VERSION:
                self._refuse("unexpected hello", "wrong_protocol", f"its hello speaks protocol "
                             f"{str(body.get('protocol'))[:20]} (this side speaks {wire.PROTOCOL_VERSION})", name)
                return
            if not isinstance(body.get("pid"), int) or not isinstance(body.get("host"), str):
                self._refuse("unexpected hello", "malformed_frame", "a hello without an integer pid and a host",
                             name)
                return
            if len(self.peers) >= self.capacity:
                self._refuse("unexpected hello", "run_full", f"--expect {self.capacity} workers have joined", name)
                self.sock.send_multipart([identity, wire.encode(wire.STOP, 0, {"reason": "the run is full"})])
                return
            peer = _Peer(identity, body["pid"], body["host"][:200], now, name=name)
            peer.fds[identity] = fd
            self.peers[identity] = peer
            return
        if peer is None and is_hb and kind == wire.HEARTBEAT:
            return  # a worker's heartbeat socket may connect before its hello arrives on the main one
        if peer is None:
            self._refuse("unknown peer", "unknown_worker", f"a {kind} from a peer that never said hello", name)
            return
        peer.last_seen = now
        if kind == wire.HEARTBEAT:
            return
        if kind == wire.PROGRESS and call == 0 and not is_hb:
            peer.progress = body  # the latest of its notes; checked when the coordinator reads it
            return
        if call == 0 or call != peer.call or peer.reply is not None:
            self._refuse("unknown call", "unknown_call", f"a {kind} from {peer.describe()} answers call {call}, "
                         f"which was never made or is already answered", name)
            return
        peer.reply = (kind, body)
        if kind == wire.FINISHED:
            peer.finished = True

    def _moved(self, peer: _Peer, identity: bytes, fd: int, name: PeerName) -> None:
        """A joined worker's identity arrives on another connection: its own reconnection (same host and key;
        ZeroMQ reconnects by itself after a network failure), or another peer that took its identity over (the
        socket hands an identity to its newest connection), which ends the run: the worker's calls would go to
        the newcomer."""
        old = peer.fds.get(identity)
        peer.fds[identity] = fd
        if old is None:
            return  # the first frame of its heartbeat connection
        if peer.name is not None and (name.host != peer.name.host or name.key_id != peer.name.key_id):
            self.refusals.refuse(name, "identity_taken", f"it claims the identity of {peer.describe()}")
            raise RunFailure(f"{peer.describe()}: its identity was taken over by {name}")
        log.warning("%s reconnected from %s", peer.describe(), name)
        if identity == peer.identity:
            peer.name = name
        peer.lost_at = None

    def _lost(self, fd: int) -> None:
        """The watch saw a connection that completed its handshake close: if it was a worker's, note when."""
        for peer in self.peers.values():
            if fd in peer.fds.values() and not peer.finished and peer.lost_at is None:
                peer.lost_at = time.monotonic()

    def _liveness(self) -> None:
        now = time.monotonic()
        if now >= self._next_beat:
            self._next_beat = now + self.opts.heartbeat_s
            for peer in self.peers.values():
                self.sock.send_multipart([peer.identity + HB_SUFFIX, self._beat])
        for peer in self.peers.values():
            if peer.finished:
                continue
            if peer.process is not None and peer.process.poll() is not None:
                code = peer.process.returncode
                how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
                raise RunFailure(f"{peer.describe()} {how}")
            gone = ""
            if peer.lost_at is not None:
                gone = f"; its connection closed {now - peer.lost_at:.1f} s ago"
                # a worker's last frames are read after its close may be seen: say it once it stayed away
                if not peer.lost_logged and now - peer.lost_at > self.opts.heartbeat_s:
                    peer.lost_logged = True
                    self.refusals.refuse(peer.name or PeerName(UNKNOWN_ADDRESS), "disconnected",
                                         f"{peer.describe()} closed its connection before it finished")
            silent = now - peer.last_seen
            if silent > self.opts.timeout_s:
                raise RunFailure(f"{peer.describe()} has been silent for {silent:.1f} s "
                                 f"(timeout {self.opts.timeout_s:g} s{gone})")

    def beat(self) -> None:
        """Between windows: send heartbeats and check liveness if a heartbeat period has passed."""
        if time.monotonic() >= self._next_beat:
            self._pump(0)

    # -- ending -------------------------------------------------------------------------------------------
    def stop(self, reason: str) -> None:
        """Tell every worker to stop (the run failed or was interrupted) and reap the spawned ones."""
        frame = wire.encode(wire.STOP, 0, {"reason": reason})
        for peer in self.peers.values():
            try:
                self.sock.send_multipart([peer.identity, frame], zmq.NOBLOCK)
            except zmq.ZMQError:
                pass
        deadline = time.monotonic() + 5.0
        for proc in self.processes:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def close(self) -> None:
        for proc in self.processes:
            if proc.poll() is None:
                try:
                    proc.wait(timeout=5.0)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self.watch is not None:
            self.watch.pump()  # the last refusals, then the repeats counted without a line of their own
            self.watch.close()
        self.refusals.summarise()
        self.sock.close(linger=0)
        if self._auth is not None:
            self._auth.stop()
        self.ctx.term()


class ZmqLink:
    """The coordinator's handle on one worker on the other side of the hub's socket: its agents, its mesh inbox,
    its trace summary at the end. The windows themselves run among the workers (``mesh``)."""

    def __init__(self, hub: Hub, peer: _Peer) -> None:
        self.hub = hub
        self.peer = peer
        self.agents = peer.agents

    def _malformed(self, kind: str, err: Exception) -> RunFailure:
        return RunFailure(f"{self.peer.describe()} broke the protocol: malformed {kind} ({type(err).__name__}: {err})")

    def ready(self) -> None:
        """Wait for the worker to have built its agents and bound its mesh inbox."""
        _, body = self.hub.wait(self.peer)
        try:
            float(body["next_time"])
            if not isinstance(body["mesh"], str) or not body["mesh"]:
                raise ValueError(f"bad mesh endpoint {body['mesh']!r}")
            self.peer.mesh = body["mesh"]
        except (TypeError, ValueError, KeyError) as err:
            raise self._malformed(wire.READY, err) from None

    def done(self) -> LoopStats:
        """The worker's counts once its windows are over (after a ``run`` call)."""
        _, b = self.hub.wait(self.peer)
        try:
            refused = {str(k): int(v) for k, v in dict(b.get("refused") or {}).items()}
            return LoopStats(int(b["windows"]), int(b["messages"]), int(b["dropped"]), int(b["events"]),
                             float(b["virtual_time"]), list(b["drops"]), int(b["frames"]), int(b["bytes"]),
                             float(b["advance_s"]), float(b["exchange_s"]), float(b["loop_s"]), refused)
        except (TypeError, ValueError, KeyError, AttributeError) as err:
            raise self._malformed(wire.DONE, err) from None

    def finish(self, until: float | None = None) -> WriterSummary:
        """FINISH after a run that reached its end: the worker has its agents' last word at the ``until`` of its
        assignment, then closes its trace (``until`` is that same time, not sent again)."""
        self.hub.call(self.peer, wire.FINISH, None)
        _, b = self.hub.wait(self.peer)
        try:
            return WriterSummary(b["writer"], int(b["count"]), list(b["segments"]), dict(b["agent_digests"]),
                                 int(b["rows"]))
        except (TypeError, ValueError, KeyError) as err:
            raise self._malformed(wire.FINISHED, err) from None


def owner_only_ipc_dir() -> str:
    """A private directory (mode 0700) for the ipc socket of locally spawned workers."""
    import tempfile

    d = tempfile.mkdtemp(prefix="clusteremu-ipc-")
    os.chmod(d, 0o700)
    return d
