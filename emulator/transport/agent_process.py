"""The worker side of the ZeroMQ transport: what ``clusteremu agent --connect ADDR`` runs.

Components:

* :func:`serve` — the process's life: it connects a DEALER socket to the coordinator's ROUTER, says hello,
  receives its share of the agents (the scenario itself, so that it builds its agents and its copy of the network
  model from data, the names placed on it and the whole placement), binds its mesh inbox, and on ``run`` runs
  every window with its peers (:class:`~clusteremu.emulator.transport.mesh.WindowLoop` over a
  :mod:`~clusteremu.emulator.transport.peers` exchange), sending the coordinator only progress notes and, at the
  end, its counts; then it closes its trace on ``finish``.
* ``_Liveness`` — a second DEALER socket, owned by a heartbeat thread, keeps the liveness exchange going while
  the main thread is busy stepping SimPy; when the coordinator falls silent (or the parent process that spawned
  this worker is gone) the thread ends the process, so no worker outlives its run.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any

import zmq

from .. import faults
from ..models import load_model
from ..worker import Worker
from . import wire
from .mesh import LoopStats, SoloExchange, WindowLoop
from .peers import UNIX, Stopped, Throttle, UnixExchange, Unsendable, ZmqExchange, bind_inbox
from .refusals import Refusals

log = logging.getLogger("clusteremu.agent")

#: exit status of a worker that gave up on a silent or vanished coordinator
EXIT_COORDINATOR_GONE = 3
#: wall seconds between two progress notes to the coordinator during the windows
PROGRESS_EVERY_S = 0.2


@dataclass
class AgentOptions:
    """How a worker process connects and how long it waits for a silent coordinator."""

    connect: str
    heartbeat_s: float = 0.5
    timeout_s: float = 5.0
    join_timeout_s: float = 60.0
    max_frame_bytes: int = wire.DEFAULT_MAX_FRAME_BYTES
    parent_pid: int | None = None
    #: (server public, client public, client secret) for CURVE, None for plain sockets
    curve: tuple[bytes, bytes, bytes] | None = None


class _Liveness(threading.Thread):
    """Heartbeats to the coordinator on a socket of its own; exits the process when the coordinator is gone."""

    def __init__(self, ctx: zmq.Context, opts: AgentOptions, identity: bytes) -> None:
        super().__init__(name="clusteremu-heartbeat", daemon=True)
        self.opts = opts
        self.sock = _dealer(ctx, opts, identity + b"#hb")
        self.last_heard = time.monotonic()
        self.heard_once = False
        self.done = False
        # an inproc pair wakes the thread at once when the worker ends, so the process exits without a delay
        wake = f"inproc://clusteremu-wake-{id(self)}"
        self._wake_rx = ctx.socket(zmq.PAIR)
        self._wake_rx.bind(wake)
        self._wake_tx = ctx.socket(zmq.PAIR)
        self._wake_tx.connect(wake)

    def stop(self) -> None:
        """Called from the main thread: end the thread and close its sockets."""
        self.done = True
        self._wake_tx.send(b"")
        self.join(timeout=2 * self.opts.heartbeat_s + 1)
        self._wake_tx.close(linger=0)

    def run(self) -> None:
        opts, sock = self.opts, self.sock
        beat = wire.encode(wire.HEARTBEAT, 0, {"pid": os.getpid()})
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        poller.register(self._wake_rx, zmq.POLLIN)
        next_beat = 0.0
        while not self.done:
            now = time.monotonic()
            if now >= next_beat:
                try:
                    sock.send(beat, zmq.NOBLOCK)  # a DEALER with no connected peer would block
                except zmq.Again:
                    pass
                next_beat = now + opts.heartbeat_s
            ready = dict(poller.poll(max(1, int((next_beat - now) * 1000))))
            if self.done:
                break
            if sock in ready:
                frame = sock.recv()
                try:
                    wire.decode(frame, frozenset({wire.HEARTBEAT}), opts.max_frame_bytes)
                    self.last_heard = time.monotonic()
                    self.heard_once = True
                except wire.WireError as err:
                    log.warning("heartbeat socket: dropped frame: %s", err)
            silent = time.monotonic() - self.last_heard
            limit = opts.timeout_s if self.heard_once else opts.join_timeout_s
            if silent > limit:
                _give_up(f"the coordinator at {opts.connect} has been silent for {silent:.1f} s")
            if opts.parent_pid is not None and os.getppid() != opts.parent_pid:
                _give_up(f"the coordinator process {opts.parent_pid} is gone")
        sock.close(linger=0)
        self._wake_rx.close(linger=0)


def _give_up(why: str) -> None:
    log.error("worker %d exiting: %s", os.getpid(), why)
    logging.shutdown()
    os._exit(EXIT_COORDINATOR_GONE)


def _dealer(ctx: zmq.Context, opts: AgentOptions, identity: bytes) -> zmq.Socket:
    sock = ctx.socket(zmq.DEALER)
    sock.linger = 1000
    sock.identity = identity
    sock.setsockopt(zmq.MAXMSGSIZE, opts.max_frame_bytes)
    if opts.curve is not None:
        from .curve import secure_client

        secure_client(sock, *opts.curve)
    sock.connect(opts.connect)
    return sock


@dataclass
class _Share:
    """What a worker holds once assigned: its agents, its copy of the network model, its mesh inbox."""

    worker: Worker
    loop: WindowLoop
    inbox: zmq.Socket | socket.socket
    endpoint: str
    curve: tuple[bytes, bytes] | None
    refusals: Refusals
    auth: Any = None

    def close(self) -> None:
        if self.auth is not None:
            self.auth.stop()  # its thread reads the inbox's monitor: stop it before the inbox closes
        if isinstance(self.inbox, zmq.Socket):
            self.inbox.close(linger=0)
        else:
            self.inbox.close()
        self.refusals.summarise()


def serve(opts: AgentOptions) -> int:
    """Serve one run; return the process exit status (0 finished, 1 failed or stopped by the coordinator)."""
    ctx = zmq.Context()
    identity = f"w{os.getpid()}-{os.urandom(4).hex()}".encode()
    main = _dealer(ctx, opts, identity)
    liveness = _Liveness(ctx, opts, identity)
    liveness.start()
    main.send(wire.encode(wire.HELLO, 0, {"pid": os.getpid(), "host": socket.gethostname(),
                                           "protocol": wire.PROTOCOL_VERSION}))
    share: _Share | None = None
    status = 1
    try:
        while True:
            frame = main.recv()
            try:
                kind, call, body = wire.decode(frame, wire.TO_WORKER, opts.max_frame_bytes)
            except wire.WireError as err:
                log.warning("dropped frame from the coordinator: %s", err)
                continue
            liveness.last_heard = time.monotonic()
            if kind == wire.RUN:
                if share is None:
                    log.warning("dropped run before assign")
                    continue
                try:
                    stats, exchange = _run_windows(ctx, main, share, body, opts)
                except Stopped as why:
                    log.info("stopped by the coordinator: %s", why)
                    return status
                except Unsendable as err:
                    return _fail(main, call, str(err))
                except (ConnectionError, wire.WireError) as err:  # a peer broke the mesh protocol
                    return _fail(main, call, f"the workers' mesh broke: {type(err).__name__}: {err}")
                except Exception as err:  # an agent raised: the coordinator fails the run with the reason
                    log.exception("the windows failed")
                    return _fail(main, call, f"an agent raised in the window up to t={share.worker.env.now}: "
                                             f"{type(err).__name__}: {err}")
                done = {"windows": stats.windows, "messages": stats.messages, "dropped": stats.dropped,
                        "events": stats.events, "virtual_time": stats.virtual_time, "drops": stats.drops,
                        "frames": stats.frames, "bytes": stats.bytes, "advance_s": stats.advance_s,
                        "exchange_s": stats.exchange_s, "loop_s": stats.loop_s, "refused": stats.refused}
                try:
                    reply = wire.encode(wire.DONE, call, done)
                except (TypeError, ValueError, OverflowError) as err:
                    return _fail(main, call, f"a dropped message's fields are not msgpack-safe: {err}")
                main.send(reply, copy=len(reply) < 65536)
                if exchange is not None:
                    exchange.close()
            elif kind == wire.ASSIGN:
                if share is not None:
                    log.warning("dropped a second assign")
                    continue
                try:
                    share = _build(ctx, body, opts)
                except Exception as err:  # report why this worker cannot take part, then leave
                    return _fail(main, call, f"cannot build agents: {type(err).__name__}: {err}")
                main.send(wire.encode(wire.READY, call, {"agents": share.worker.agent_names,
                                                         "next_time": share.worker.next_time(),
                                                         "mesh": share.endpoint}))
            elif kind == wire.FINISH:
                if share is None:
                    log.warning("dropped finish before assign")
                    continue
                s = share.worker.finish(share.loop.until)  # FINISH follows a run that reached its end
                share.close()
                share = None
                main.send(wire.encode(wire.FINISHED, call, {"writer": s.writer, "count": s.count,
                                                            "segments": s.segments, "agent_digests": s.agent_digests,
                                                            "rows": s.rows}))
                status = 0
                return status
            elif kind == wire.STOP:
                log.info("stopped by the coordinator: %s", body)
                return status
            # coordinator heartbeats on the main socket only refresh liveness (done above)
    finally:
        if share is not None:
            share.worker.finish()  # flush what this worker wrote, so the partial trace stays readable
            share.close()
        liveness.stop()
        main.close(linger=1000)
        ctx.term()


def _build(ctx: zmq.Context, body: dict[str, Any], opts: AgentOptions) -> _Share:
    from ..runner import network_for  # the runner imports this package: import it when a run is assigned

    data = body["scenario"]
    model = load_model(data["scenario"]["model"])
    specs = {s.name: s for s in model.agents(data)}
    wanted = body["agents"]
    missing = [a for a in wanted if a not in specs]
    if missing:
        raise ValueError(f"the scenario builds no agent called {missing[0]!r} (code versions differ?)")
    if not os.path.isdir(body["run_dir"]):
        raise ValueError(f"run directory {body['run_dir']} is not visible here (tcp workers need it shared)")
    placement: list[list[str]] = body["placement"]
    me = body["worker_id"]
    if placement[me] != wanted:
        raise ValueError("the placement does not hold this worker's agents")
    worker = Worker(me, body["seed"], [specs[a] for a in wanted], body["run_dir"], body["segment_bytes"])
    worker.schedule_faults(faults.agent_faults(data.get("faults", []), list(specs)))
    owner = {name: w for w, names in enumerate(placement) for name in names}
    network = network_for(data, body["seed"], model)
    worker.attach_network(network)
    loop = WindowLoop(worker, network, owner, me, len(placement), body["until"])
    mesh = body["mesh"]
    curve = (bytes(mesh["public"]), bytes(mesh["secret"])) if mesh.get("public") else None
    refusals = Refusals(logging.getLogger("clusteremu.mesh"), f"worker {me}'s mesh inbox")
    inbox, endpoint, auth = bind_inbox(ctx, mesh.get("bind"), opts.connect, curve, opts.max_frame_bytes, refusals)
    return _Share(worker, loop, inbox, endpoint, curve, refusals, auth)


def _run_windows(ctx: zmq.Context, main: zmq.Socket, share: _Share, body: dict[str, Any],
                 opts: AgentOptions) -> tuple[LoopStats, ZmqExchange | UnixExchange | None]:
    """Connect to the peers and run every window; progress notes go to the coordinator as the windows pass."""
    endpoints: list[str] = body["endpoints"]
    loop = share.loop
    stats = loop.stats

    def note() -> None:
        try:
            main.send(wire.encode(wire.PROGRESS, 0, [stats.virtual_time, stats.windows, stats.events]), zmq.NOBLOCK)
        except zmq.Again:
            pass

    throttle = Throttle(PROGRESS_EVERY_S, note)
    if len(endpoints) == 1:
        return loop.run(SoloExchange(throttle)), None
    exchange: ZmqExchange | UnixExchange
    if share.endpoint.startswith(UNIX):
        exchange = UnixExchange(loop.me, endpoints, share.inbox, main, opts.max_frame_bytes, opts.join_timeout_s,
                                throttle)
    else:
        exchange = ZmqExchange(ctx, loop.me, endpoints, share.inbox, main, share.curve, opts.max_frame_bytes,
                               int(opts.timeout_s * 1000), throttle, share.refusals)
    loop.run(exchange)
    stats.frames, stats.bytes = exchange.frames_sent, exchange.bytes_sent
    stats.refused = share.refusals.counts()
    return stats, exchange


def _fail(sock: zmq.Socket, call: int, reason: str) -> int:
    log.error("worker %d failed: %s", os.getpid(), reason)
    sock.send(wire.encode(wire.FAILED, call, {"reason": reason}))
    return 1
