"""The worker-to-worker mesh over ZeroMQ: each worker's inbox socket and its per-window exchange.

Components:

* :func:`bind_inbox` — a worker's inbox: for ``procs:N`` a Unix stream socket in the run's private directory
  (``unix:PATH``, mode 0600); for ``tcp`` a ZeroMQ PULL socket on the address it reaches the coordinator from
  (CurveZMQ with the run's mesh key unless the run is ``--insecure``).
* :class:`UnixExchange` — :class:`~clusteremu.emulator.transport.mesh.Exchange` over one Unix stream connection
  per pair of local workers, frames prefixed by their length. A write goes straight into the peer's socket buffer
  and wakes the peer's one thread: one wake-up per hop instead of ZeroMQ's three (sender's I/O thread,
  receiver's I/O thread, receiver's thread), about 7 µs per exchange against 60 µs on the 2-core machine.
* :class:`ZmqExchange` — :class:`~clusteremu.emulator.transport.mesh.Exchange` over one PUSH socket per peer and
  the inbox: per window one frame to each peer, ``[version, "window", window, [sender, candidate, messages]]``,
  and one frame from each. A peer is at most one window ahead (it cannot start window k+1 before it has every
  frame of window k), so its next frame may arrive before another peer's current one: it is kept for the next
  call. While it waits the worker also reads its coordinator socket: ``stop`` ends the run (:class:`Stopped`).
* :func:`mesh_keypair` and :func:`secure_inbox` / :func:`secure_push` — the run's CurveZMQ mesh key: the
  coordinator makes a fresh pair per run and sends it to the workers over their CURVE connection, so only the
  run's workers can reach each other's inboxes. A peer refused by an inbox (no CURVE, another key, a failed
  handshake) is logged once with its address and key id and counted (the worker reports its counts in ``done``).
"""
from __future__ import annotations

import logging
import os
import select
import socket
import struct
import time
from typing import Callable
from urllib.parse import urlsplit

import zmq

from . import wire
from .refusals import PeerName, Refusals

log = logging.getLogger("clusteremu.mesh")


class Stopped(Exception):
    """The coordinator told the worker to stop while it waited for its peers."""


UNIX = "unix:"
_LEN = struct.Struct("<I")
#: wall seconds a worker waiting for its peers' frames keeps polling (yielding the core) before it sleeps
SPIN_S = float(os.environ.get("CLUSTEREMU_MESH_SPIN_S", "0.0005"))


class Unsendable(Exception):
    """A window's frame for a peer cannot be sent: a message body msgpack cannot carry, or over the frame bound."""


def control_frame(frame: bytes, max_frame_bytes: int) -> None:
    """A frame the coordinator sent while the workers run the windows among themselves: a ``stop`` ends the run
    (:class:`Stopped`); anything else has no place there and is dropped with a warning."""
    try:
        kind, _, body = wire.decode(frame, wire.TO_WORKER, max_frame_bytes)
    except wire.WireError as err:
        log.warning("dropped frame from the coordinator: %s", err)
        return
    if kind == wire.STOP:
        raise Stopped(str(body))
    log.warning("dropped a %s from the coordinator during the windows", kind)


def first_unsafe(wires: list[list]) -> str:
    """Which message of ``wires`` (``Message.to_wire`` lists) msgpack cannot carry, and why."""
    import msgpack

    for w in wires:
        try:
            msgpack.packb(w, use_bin_type=True)
        except Exception as err:
            return f"{w[5]} from {w[2]} to {w[1]}: {err}"
    return "unknown"


def mesh_keypair() -> tuple[bytes, bytes]:
    """A fresh CurveZMQ key pair (public, secret) for one run's mesh."""
    return zmq.curve_keypair()


def _reachable_ip(coordinator: str) -> str:
    """The local address this host uses to reach ``coordinator`` (``tcp://HOST:PORT``): peers can reach it too.
    A UDP socket's connect only picks the route; nothing is sent."""
    parts = urlsplit(coordinator)
    host, port = parts.hostname or "127.0.0.1", parts.port or 9
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((socket.gethostbyname(host), port))
        return s.getsockname()[0]


def bind_inbox(ctx: zmq.Context, bind: str | None, coordinator: str, curve: tuple[bytes, bytes] | None,
               max_frame_bytes: int, refusals: Refusals) -> tuple[zmq.Socket | socket.socket, str, object | None]:
    """Bind this worker's PULL socket; return it, the endpoint peers connect to, and the authenticator (if any).

    ``bind`` is the coordinator's choice (``unix:PATH`` in its private directory) or None: then a ZeroMQ tcp
    port on the address that reaches the coordinator. With ``curve``, the peers it refuses go to ``refusals``.
    """
    if bind is not None and bind.startswith(UNIX):
        path = bind[len(UNIX):]
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        os.chmod(path, 0o600)
        listener.listen(64)
        return listener, bind, None
    sock = ctx.socket(zmq.PULL)
    sock.linger = 0
    sock.setsockopt(zmq.MAXMSGSIZE, max_frame_bytes)
    auth = None
    if curve is not None:
        auth = secure_inbox(ctx, sock, *curve, refusals)
    if bind is None:
        sock.bind(f"tcp://{_reachable_ip(coordinator)}:0")
    else:
        sock.bind(bind)
        if bind.startswith("ipc://"):
            os.chmod(bind[len("ipc://"):], 0o600)
    return sock, sock.getsockopt_string(zmq.LAST_ENDPOINT), auth


def secure_inbox(ctx: zmq.Context, sock: zmq.Socket, public: bytes, secret: bytes, refusals: Refusals) -> object:
    """Make ``sock`` a CURVE server that admits only clients holding the run's mesh key (``public``, Z85); the
    handshakes it refuses go to ``refusals``."""
    from .curve import ZapHandler
    from .monitor import ConnectionWatch

    # The worker's thread reads the inbox only between windows and never claims connections by their frames,
    # so only the refusals ZeroMQ states (mechanism, key, cryptography) are counted, not silent closes.
    watch = ConnectionWatch(sock, refusals, curve=True, silent_closes=False)
    auth = ZapHandler(ctx, public.__eq__, watch)
    watch.zap = auth
    auth.start()
    sock.curve_secretkey = secret
    sock.curve_publickey = public
    sock.curve_server = True
    return auth


def secure_push(sock: zmq.Socket, public: bytes, secret: bytes) -> None:
    """Make ``sock`` a CURVE client of a peer's inbox with the run's mesh key."""
    sock.curve_serverkey = public
    sock.curve_publickey = public
    sock.curve_secretkey = secret


class ZmqExchange:
    """The per-window exchange of worker ``me`` with the peers at ``endpoints`` (indexed by worker id)."""

    def __init__(self, ctx: zmq.Context, me: int, endpoints: list[str], inbox: zmq.Socket, control: zmq.Socket,
                 curve: tuple[bytes, bytes] | None, max_frame_bytes: int, linger_ms: int,
                 on_progress: Callable[[int], None] | None = None, refusals: Refusals | None = None) -> None:
        self.me = me
        self.refusals = refusals
        self.n = len(endpoints)
        self.inbox = inbox
        self.control = control
        self.max_frame_bytes = max_frame_bytes
        self._on_progress = on_progress
        self.pushes: dict[int, zmq.Socket] = {}
        for p, endpoint in enumerate(endpoints):
            if p == me:
                continue
            s = ctx.socket(zmq.PUSH)
            # the last frames of the run must reach the peers after this worker has left the loop
            s.linger = linger_ms
            s.sndhwm = 0
            if curve is not None:
                secure_push(s, *curve)
            s.connect(endpoint)
            self.pushes[p] = s
        self._poller = zmq.Poller()
        self._poller.register(inbox, zmq.POLLIN)
        self._poller.register(control, zmq.POLLIN)
        self._early: list[tuple[int, float, list]] = []  # frames of the next window from peers already there
        self.frames_sent = 0
        self.bytes_sent = 0

    def __call__(self, window: int, candidate: float, outbound: list[list[list]]) -> tuple[float, list[list]]:
        encode = wire.encode
        for p, sock in self.pushes.items():
            try:
                frame = encode(wire.WINDOW, window, [self.me, candidate, outbound[p]])
            except (TypeError, ValueError, OverflowError):
                raise Unsendable("a message body is not msgpack-safe: " + first_unsafe(outbound[p])) from None
            if len(frame) > self.max_frame_bytes:
                raise Unsendable(f"the frame of window {window} for worker {p} has {len(frame)} bytes, "
                                 f"over --max-frame-bytes")
            sock.send(frame, copy=len(frame) < 65536)
            self.bytes_sent += len(frame)
        self.frames_sent += len(self.pushes)
        best = candidate
        inbound: list[list] = []
        need = len(self.pushes)
        if self._early:
            early, self._early = self._early, []
            for w, c, msgs in early:
                if w == window:
                    need -= 1
                    best = c if c < best else best
                    inbound.extend(msgs)
                else:
                    self._early.append((w, c, msgs))
        recv = self.inbox.recv
        spin_until: float | None = None
        while need:
            try:
                frame = recv(zmq.NOBLOCK)
            except zmq.Again:
                if spin_until is None:
                    spin_until = time.perf_counter() + SPIN_S
                if time.perf_counter() < spin_until:
                    os.sched_yield()  # as UnixExchange: poll a little (the I/O thread gets the core) before sleeping
                else:
                    self._wait()
                continue
            try:
                _, w, body = wire.decode(frame, wire.MESH, self.max_frame_bytes)
                sender, c, msgs = body
                c = float(c)
            except (wire.WireError, TypeError, ValueError) as err:
                # only an --insecure mesh lets a stranger's frame this far; its sender is not looked up on the
                # windows' path (that would cost every frame a property read)
                reason = "wrong_protocol" if getattr(err, "version_mismatch", False) else "malformed_frame"
                if self.refusals is not None:
                    self.refusals.refuse(PeerName("a peer of this inbox"), reason, f"a mesh frame: {err}")
                else:
                    log.warning("dropped a mesh frame: %s", err)
                continue
            if w == window:
                need -= 1
                best = c if c < best else best
                inbound.extend(msgs)
            elif w == window + 1:
                self._early.append((w, c, msgs))
            else:
                log.warning("dropped a mesh frame of window %s from worker %s during window %d", w, sender, window)
        if self._on_progress is not None:
            self._on_progress(window)
        return best, inbound

    def _wait(self) -> None:
        """Block until a frame is there; a ``stop`` from the coordinator ends the run."""
        ready = dict(self._poller.poll(1000))
        if self.control in ready:
            control_frame(self.control.recv(), self.max_frame_bytes)

    def close(self) -> None:
        for s in self.pushes.values():
            s.close()


class UnixExchange:
    """The per-window exchange of local worker ``me`` over Unix stream connections, one per pair of workers.

    Worker ``a`` connects to the listener of every worker ``b > a`` and introduces itself with its id; it accepts
    the connections of the workers below it. Sockets are non-blocking: a worker sends while it reads, so two
    workers that send each other frames larger than a socket buffer cannot block each other.
    """

    def __init__(self, me: int, endpoints: list[str], listener: socket.socket, control: zmq.Socket,
                 max_frame_bytes: int, accept_timeout_s: float, on_window: Callable[[int], None] | None = None) -> None:
        self.me = me
        self.control = control
        self.max_frame_bytes = max_frame_bytes
        self._on_window = on_window
        #: how long a worker polls its peers' sockets before it sleeps
        self.spin_s = SPIN_S
        self.socks: dict[int, socket.socket] = {}
        for p in range(me + 1, len(endpoints)):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(endpoints[p][len(UNIX):])
            s.sendall(_LEN.pack(me))
            self.socks[p] = s
        listener.settimeout(accept_timeout_s)
        while len(self.socks) < len(endpoints) - 1:
            s, _ = listener.accept()
            s.settimeout(accept_timeout_s)
            (p,) = _LEN.unpack(_recv_exact(s, _LEN.size))
            if not 0 <= p < me or p in self.socks:
                s.close()
                raise ConnectionError(f"unexpected mesh connection from worker {p}")
            self.socks[p] = s
        # one poll set for the whole run: every peer for reading (a gone peer is unregistered), plus the
        # coordinator's socket, whose descriptor ZeroMQ signals edge-triggered
        self._poll = select.poll()
        for p, s in self.socks.items():
            s.setblocking(False)
            self._poll.register(s.fileno(), select.POLLIN)
        self._control_fd = control.getsockopt(zmq.FD)
        self._poll.register(self._control_fd, select.POLLIN)
        self._chunk = bytearray(1 << 18)  # recv_into this: a fresh large bytes object per recv costs more than the copy
        self._chunk_view = memoryview(self._chunk)
        self._buf: dict[int, bytearray] = {p: bytearray() for p in self.socks}
        self._gone: set[int] = set()
        self._early: list[tuple[int, float, list]] = []
        self.frames_sent = 0
        self.bytes_sent = 0

    def __call__(self, window: int, candidate: float, outbound: list[list[list]]) -> tuple[float, list[list]]:
        encode = wire.encode
        unsent: dict[int, memoryview] = {}
        for p, sock in self.socks.items():
            try:
                frame = encode(wire.WINDOW, window, [self.me, candidate, outbound[p]])
            except (TypeError, ValueError, OverflowError):
                raise Unsendable("a message body is not msgpack-safe: " + first_unsafe(outbound[p])) from None
            if len(frame) > self.max_frame_bytes:
                raise Unsendable(f"the frame of window {window} for worker {p} has {len(frame)} bytes, "
                                 f"over --max-frame-bytes")
            data = _LEN.pack(len(frame)) + frame
            self.bytes_sent += len(data)
            try:
                n = sock.send(data)
            except BlockingIOError:
                n = 0
            except OSError:  # the peer is gone: the coordinator will say which and stop this worker
                self._lose(p)
                n = len(data)
            if n < len(data):
                unsent[p] = memoryview(data)[n:]
        self.frames_sent += len(self.socks)
        best = candidate
        inbound: list[list] = []
        missing = set(self.socks)
        spin_until: float | None = None
        if self._early:
            early, self._early = self._early, []
            for p, c, msgs in early:
                missing.discard(p)
                best = c if c < best else best
                inbound.extend(msgs)
        while True:
            # read every peer, not only the missing ones: a peer's next frame left unread in the kernel's buffer
            # would keep its descriptor readable and turn the wait below into a spin
            for p in self.socks:
                got = self._read(p, window, p in missing)
                if got is not None:
                    missing.discard(p)
                    c, msgs = got
                    best = c if c < best else best
                    inbound.extend(msgs)
            for p in list(unsent):
                try:
                    n = self.socks[p].send(unsent[p])
                except BlockingIOError:
                    continue
                except OSError:  # the peer is gone: the coordinator will say which and stop this worker
                    self._lose(p)
                    n = len(unsent[p])
                if n == len(unsent[p]):
                    del unsent[p]
                else:
                    unsent[p] = unsent[p][n:]
            if not missing and not unsent:
                break
            if spin_until is None:
                spin_until = time.perf_counter() + self.spin_s
            if time.perf_counter() < spin_until:
                # A peer's frame is usually a few tens of microseconds away; sleeping in poll and being woken
                # costs about as much again. Yield the core meanwhile (a peer sharing it runs), then sleep.
                os.sched_yield()
                continue
            self._wait(unsent)
        if self._on_window is not None:
            self._on_window(window)
        return best, inbound

    def _read(self, p: int, window: int, wanted: bool) -> tuple[float, list] | None:
        """Read what peer ``p`` sent; its frame of ``window`` if ``wanted`` and complete (a frame of the next
        window is kept for the next call)."""
        buf = self._buf[p]
        if p not in self._gone:
            sock, view = self.socks[p], self._chunk_view
            while True:
                try:
                    n = sock.recv_into(view)
                except BlockingIOError:
                    break
                except OSError:
                    n = 0
                if not n:
                    self._lose(p)  # the coordinator will name the dead worker and stop this one
                    break
                buf += view[:n]
        result = None
        while len(buf) >= _LEN.size:
            (size,) = _LEN.unpack_from(buf)
            if size > self.max_frame_bytes:
                raise ConnectionError(f"worker {p} sent a mesh frame of {size} bytes, over --max-frame-bytes")
            if len(buf) < _LEN.size + size:
                break
            frame = bytes(buf[_LEN.size:_LEN.size + size])
            del buf[:_LEN.size + size]
            # the local peers are this run's own processes: a frame that breaks the protocol is a bug, not noise
            _, w, body = wire.decode(frame, wire.MESH, self.max_frame_bytes)
            _, c, msgs = body
            if w == window and wanted and result is None:
                result = (float(c), msgs)
            elif w == window + 1:
                self._early.append((p, float(c), msgs))
            else:
                raise ConnectionError(f"worker {p} sent window {w} during window {window}")
        return result

    def _lose(self, p: int) -> None:
        """Peer ``p`` is gone: stop watching its socket (an end-of-file stays readable and would make waits spin)."""
        if p not in self._gone:
            self._gone.add(p)
            self._poll.unregister(self.socks[p].fileno())

    def _wait(self, unsent: dict[int, memoryview]) -> None:
        """Sleep until a peer's frame or buffer space arrives, or the coordinator says something."""
        poll = self._poll
        for p in unsent:
            if p not in self._gone:
                poll.modify(self.socks[p].fileno(), select.POLLIN | select.POLLOUT)
        try:
            ready = poll.poll(100)
        finally:
            for p in unsent:
                if p not in self._gone:
                    poll.modify(self.socks[p].fileno(), select.POLLIN)
        # The coordinator's descriptor only says "something changed": look at its socket when it fired, and on
        # every timeout in case a change came while this worker was not polling (so a stop waits 100 ms at most).
        if not ready or any(fd == self._control_fd for fd, _ in ready):
            while self.control.getsockopt(zmq.EVENTS) & zmq.POLLIN:
                control_frame(self.control.recv(), self.max_frame_bytes)

    def close(self) -> None:
        for s in self.socks.values():
            s.close()


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("a mesh connection closed during the introductions")
        data += chunk
    return data


class Throttle:
    """Calls ``send()`` at most every ``every_s`` wall seconds (progress notes to the coordinator)."""

    def __init__(self, every_s: float, send: Callable[[], None]) -> None:
        self.every_s = every_s
        self.send = send
        self._next = time.monotonic() + every_s

    def __call__(self, _window: int) -> None:
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.every_s
            self.send()
