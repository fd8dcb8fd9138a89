"""Watching who connects to a tcp socket: ZeroMQ's socket monitor turned into named, counted refusals.

:class:`ConnectionWatch` reads a socket's monitor (``EVENT_ACCEPTED`` gives a connection's file descriptor, from
which it takes the peer's ``ip:port`` at once; the handshake events give the reason; ``EVENT_DISCONNECTED``
names the descriptor that closed) and records, in a :class:`~clusteremu.emulator.transport.refusals.Refusals`
ledger, each connection refused during its handshake:

* ``no_curve`` / ``wrong_mechanism`` — a security-mechanism mismatch (a client without CURVE on a CURVE server,
  or the other way round, or a greeting naming no mechanism ZeroMQ knows);
* ``unknown_key`` — the ZAP handler denied the client's key (its key id comes from the handler);
* ``bad_handshake`` — any other handshake failure (a client holding the wrong server key fails the CurveZMQ
  cryptography), or, with ``silent_closes``, a connection that closed without completing a handshake: raw bytes
  that are no ZeroMQ greeting, a port scan.

ZeroMQ's handshake events carry no descriptor: a failure is paired with the next connection that closes without
a completed handshake (ZeroMQ closes a failed connection right after saying why, in the same I/O thread), and a
success is claimed by the connection whose first frame the owner reads (:meth:`ConnectionWatch.seen`, from the
frame's ``SRCFD``). A connection that completed its handshake and closed before sending a frame is not refused.
"""
from __future__ import annotations

import os
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import zmq
from zmq.utils.monitor import parse_monitor_message

from .refusals import UNKNOWN_ADDRESS, PeerName, Refusals, closed_peers, peer_address

if TYPE_CHECKING:
    from .curve import ZapHandler

EVENTS = (zmq.EVENT_ACCEPTED | zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
          | zmq.EVENT_HANDSHAKE_FAILED_AUTH | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_DISCONNECTED)

#: ZMTP protocol errors worth a word in the refusal line
_PROTOCOL_ERRORS = {
    zmq.PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC: "CurveZMQ cryptography failed (does it hold this side's public key?)",
    zmq.PROTOCOL_ERROR_ZMTP_UNEXPECTED_COMMAND: "unexpected ZMTP command",
    zmq.PROTOCOL_ERROR_ZMTP_INVALID_SEQUENCE: "ZMTP commands out of sequence",
    zmq.PROTOCOL_ERROR_ZMTP_KEY_EXCHANGE: "key exchange failed",
}


@dataclass
class _Conn:
    address: str
    ok: bool = False  # its handshake completed (it sent a frame the owner read)


class ConnectionWatch:
    """Reads ``sock``'s monitor and refuses, in ``refusals``, the connections that fail their handshake.

    ``curve``: whether ``sock`` is a CURVE server (a mechanism mismatch is then ``no_curve``); ``zap``: its ZAP
    handler, which knows the key ids of denied clients; ``silent_closes``: also refuse connections that close
    without any handshake event (only sound when the owner claims every good connection with :meth:`seen`);
    ``on_lost(fd)``: called when a connection that completed its handshake closes.
    """

    def __init__(self, sock: zmq.Socket, refusals: Refusals, *, curve: bool, zap: "ZapHandler | None" = None,
                 silent_closes: bool = True, on_lost: Callable[[int], None] | None = None) -> None:
        self.monitor = sock.get_monitor_socket(EVENTS)
        self._sock = sock
        self.refusals = refusals
        self.curve = curve
        self.zap = zap
        self.silent_closes = silent_closes
        self.on_lost = on_lost
        self._conns: dict[int, _Conn] = {}
        self._failures: deque[tuple[str, str]] = deque()  # (reason, detail) not yet paired with a connection
        self._unclaimed = 0  # handshakes completed and not yet claimed by a connection's first frame
        self._named: set[str] = set()  # closing connections already named after their accept (see _accepted)

    def pump(self) -> bool:
        """Handle every event already queued; whether there was one."""
        got = False
        while True:
            try:
                frames = self.monitor.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                return got
            got = True
            event = parse_monitor_message(frames)
            self._event(event["event"], event["value"])

    def _event(self, kind: int, value: int) -> None:
        if kind == zmq.EVENT_ACCEPTED:
            self._conns[value] = _Conn(self._accepted(value))
        elif kind == zmq.EVENT_HANDSHAKE_SUCCEEDED:
            self._unclaimed += 1
        elif kind == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL:
            if value == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH:
                self._failures.append(("no_curve" if self.curve else "wrong_mechanism", ""))
            else:
                self._failures.append(("bad_handshake", _PROTOCOL_ERRORS.get(value, f"ZMTP protocol error {value:#x}")))
        elif kind == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
            self._failures.append(("unknown_key", "") if value == 400 else
                                  ("bad_handshake", f"the authenticator answered {value}"))
        elif kind == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL:
            self._failures.append(("bad_handshake", f"the connection failed during the handshake: "
                                                    f"{os.strerror(value) if value > 0 else 'no detail'}"))
        elif kind == zmq.EVENT_DISCONNECTED:
            self._closed(value)

    def _accepted(self, fd: int) -> str:
        """The address of the peer on ``fd``. ZeroMQ may have refused and closed the connection before its accept
        is read here (a mechanism mismatch takes microseconds): then the peer is the one closing connection to
        this socket's port not named yet (Linux keeps a closing connection in its table for a while)."""
        address = peer_address(fd)
        if address != UNKNOWN_ADDRESS:
            if len(self._named) > 10_000:
                self._named.clear()  # a flood of connections: forget rather than grow
            self._named.add(address)
            return address
        try:
            port = int(self._sock.getsockopt_string(zmq.LAST_ENDPOINT).rsplit(":", 1)[1])
        except (zmq.ZMQError, ValueError, IndexError):
            return address
        closing = closed_peers(port)
        self._named &= set(closing)  # forget the connections the kernel has forgotten
        for candidate in closing:
            if candidate not in self._named:
                self._named.add(candidate)
                return candidate
        return address

    def _closed(self, fd: int) -> None:
        conn = self._conns.pop(fd, None)
        if conn is None:
            return  # accepted before this watch began
        if conn.ok:
            if self.on_lost is not None:
                self.on_lost(fd)
            return
        if self._failures:
            reason, detail = self._failures.popleft()
            address, kid = conn.address, None
            if reason == "unknown_key" and self.zap is not None:
                named = address != UNKNOWN_ADDRESS
                denied = self.zap.denied(PeerName(address).host if named else None)
                if denied is not None:
                    # an unnamed connection still has the IP the handler was given (without the port)
                    address, kid = (address if named else denied[0]), denied[1] or None
            self.refusals.refuse(PeerName(address, kid), reason, detail)
        elif self._unclaimed:
            self._unclaimed -= 1  # a completed handshake, then a close before any frame: not a refusal
        elif self.silent_closes:
            self.refusals.refuse(PeerName(conn.address), "bad_handshake",
                                 "it closed without completing a ZeroMQ handshake (not a ZeroMQ peer?)")

    def seen(self, fd: int) -> str:
        """The owner read a frame that came in on ``fd``: its connection completed its handshake. Returns the
        peer's address."""
        conn = self._conns.get(fd)
        if conn is None:
            self.pump()  # ZeroMQ reports the accept before the connection's first frame arrives
            conn = self._conns.get(fd)
            if conn is None:
                return peer_address(fd)
        if not conn.ok:
            conn.ok = True
            if self._unclaimed:
                self._unclaimed -= 1
        return conn.address

    def address(self, fd: int) -> str:
        conn = self._conns.get(fd)
        return conn.address if conn is not None else peer_address(fd)

    def close(self) -> None:
        try:
            self._sock.disable_monitor()
        except zmq.ZMQError:
            pass  # the socket is closed already
        self.monitor.close(linger=0)
