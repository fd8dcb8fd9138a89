"""The worker side of the ZeroMQ transport: what ``clusteremu agent --connect ADDR`` runs.

The process connects a DEALER socket to the coordinator's ROUTER, says hello, receives its share of the agents
(the scenario itself, so that it builds its agents from data, plus the names placed on it), then answers one
frame per window until told to finish or stop. A second DEALER socket, owned by a heartbeat thread, keeps the
liveness exchange going while the main thread is busy stepping SimPy; when the coordinator falls silent (or the
parent process that spawned this worker is gone) the thread ends the process, so no worker outlives its run.
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
from ..messages import Message
from ..models import load_model
from ..worker import Worker
from . import wire

log = logging.getLogger("clusteremu.agent")

#: exit status of a worker that gave up on a silent or vanished coordinator
EXIT_COORDINATOR_GONE = 3


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


def serve(opts: AgentOptions) -> int:
    """Serve one run; return the process exit status (0 finished, 1 failed or stopped by the coordinator)."""
    ctx = zmq.Context()
    identity = f"w{os.getpid()}-{os.urandom(4).hex()}".encode()
    main = _dealer(ctx, opts, identity)
    liveness = _Liveness(ctx, opts, identity)
    liveness.start()
    main.send(wire.encode(wire.HELLO, 0, {"pid": os.getpid(), "host": socket.gethostname(),
                                           "protocol": wire.PROTOCOL_VERSION}))
    worker: Worker | None = None
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
            if kind == wire.ADVANCE:
                if worker is None:
                    log.warning("dropped advance before assign")
                    continue
                until, inbound, since = body
                try:
                    sent, next_time, n = worker.advance(until, [Message.from_wire(w) for w in inbound], since)
                except Exception as err:  # an agent raised: the coordinator fails the run with the reason
                    log.exception("window up to %s failed", until)
                    return _fail(main, call, f"an agent raised in the window up to t={until}: {type(err).__name__}: {err}")
                reply = _encode_result(call, sent, next_time, n)
                if reply is None:
                    return _fail(main, call, "a message body is not msgpack-safe: " + _first_unsafe(sent))
                if len(reply) > opts.max_frame_bytes:
                    return _fail(main, call, f"window result of {len(reply)} bytes exceeds --max-frame-bytes")
                main.send(reply, copy=len(reply) < 65536)
            elif kind == wire.ASSIGN:
                if worker is not None:
                    log.warning("dropped a second assign")
                    continue
                try:
                    worker = _build(body)
                except Exception as err:  # report why this worker cannot take part, then leave
                    return _fail(main, call, f"cannot build agents: {type(err).__name__}: {err}")
                main.send(wire.encode(wire.READY, call, {"agents": worker.agent_names, "next_time": worker.next_time()}))
            elif kind == wire.FINISH:
                if worker is None:
                    log.warning("dropped finish before assign")
                    continue
                s = worker.finish()
                worker = None
                main.send(wire.encode(wire.FINISHED, call, {"writer": s.writer, "count": s.count,
                                                            "segments": s.segments, "agent_digests": s.agent_digests}))
                status = 0
                return status
            elif kind == wire.STOP:
                log.info("stopped by the coordinator: %s", body)
                return status
            # coordinator heartbeats on the main socket only refresh liveness (done above)
    finally:
        if worker is not None:
            worker.finish()  # flush what this worker wrote, so the partial trace stays readable
        liveness.stop()
        main.close(linger=1000)
        ctx.term()


def _build(body: dict[str, Any]) -> Worker:
    data = body["scenario"]
    model = load_model(data["scenario"]["model"])
    specs = {s.name: s for s in model.agents(data)}
    wanted = body["agents"]
    missing = [a for a in wanted if a not in specs]
    if missing:
        raise ValueError(f"the scenario builds no agent called {missing[0]!r} (code versions differ?)")
    if not os.path.isdir(body["run_dir"]):
        raise ValueError(f"run directory {body['run_dir']} is not visible here (tcp workers need it shared)")
    worker = Worker(body["worker_id"], body["seed"], [specs[a] for a in wanted], body["run_dir"], body["segment_bytes"])
    worker.schedule_faults(faults.agent_faults(data.get("faults", []), list(specs)))
    return worker


def _encode_result(call: int, sent: list[Message], next_time: float, n: int) -> bytes | None:
    try:
        return wire.encode(wire.RESULT, call, [[m.to_wire() for m in sent], next_time, n])
    except (TypeError, ValueError, OverflowError):
        return None


def _first_unsafe(sent: list[Message]) -> str:
    import msgpack

    for m in sent:
        try:
            msgpack.packb(m.to_wire(), use_bin_type=True)
        except Exception as err:
            return f"{m.kind} from {m.src} to {m.dst}: {err}"
    return "unknown"


def _fail(sock: zmq.Socket, call: int, reason: str) -> int:
    log.error("worker %d failed: %s", os.getpid(), reason)
    sock.send(wire.encode(wire.FAILED, call, {"reason": reason}))
    return 1
