"""Refused peers: why each was refused, how it is named, logged once, counted (``docs/wire-protocol.md``).

Components:

* :data:`REASONS` — the refusal reasons (the keys of the manifest's ``transport.refused_peers``) and their words
  in the log line.
* :class:`PeerName` — a peer as logs and errors name it: its address (``ip:port`` for tcp, ``ipc pid N`` for a
  local socket) and, with CurveZMQ, its key id (:func:`~clusteremu.emulator.transport.curve.key_id`); never its
  raw ZeroMQ identity, which a peer chooses itself.
* :data:`UNKNOWN_ADDRESS` — how a peer whose connection is already gone is named.
* :func:`peer_address` — the address of the peer on the other end of a connection's file descriptor, and
  :func:`closed_peers` — the peers of connections to a port that are closing (for a connection that ZeroMQ
  closed before its accept could be looked at).
* :class:`Refusals` — the ledger: counts every refusal by reason, logs the first one from each (host, reason)
  as a warning naming the peer and the reason (a peer with no address left is logged only for a reason no
  named peer was logged for), counts the repeats and summarises them at the end, so a peer
  that retries every 100 ms (as a ZeroMQ client does) cannot flood the log.
"""
from __future__ import annotations

import logging
import os
import socket
import struct
import threading
from collections import Counter
from dataclasses import dataclass

#: refusal reason → what the log line says
REASONS: dict[str, str] = {
    "no_curve": "no CURVE (its security mechanism is not CurveZMQ, which this side requires)",
    "wrong_mechanism": "wrong security mechanism (it speaks CurveZMQ; this side runs --insecure)",
    "unknown_key": "unknown key (not in the allow-list)",
    "bad_handshake": "bad handshake",
    "malformed_frame": "malformed frame",
    "wrong_protocol": "wrong protocol version",
    "oversized": "oversized frame",
    "unknown_worker": "unknown worker (it never said hello)",
    "unknown_call": "reply to no call",
    "duplicate_hello": "duplicate hello",
    "run_full": "the run already has its workers",
    "identity_taken": "identity taken over (another connection claims a joined worker's identity)",
    "disconnected": "disconnected mid-run",
}


@dataclass(frozen=True)
class PeerName:
    """A peer named by address and, with CurveZMQ, key id: ``127.0.0.1:53122 key 3f9a1c2b``."""

    address: str
    key_id: str | None = None

    @property
    def host(self) -> str:
        """The address without the port: repeats are counted per host (a reconnecting client changes port)."""
        if self.address.startswith("ipc"):
            return "ipc"
        host, sep, port = self.address.rpartition(":")
        return host if sep and port.isdigit() else self.address

    def __str__(self) -> str:
        return f"{self.address} key {self.key_id}" if self.key_id else self.address


#: how a peer whose connection is already gone is named
UNKNOWN_ADDRESS = "unknown address"


def peer_address(fd: int) -> str:
    """``ip:port`` of the tcp peer on ``fd`` (``[ip]:port`` for IPv6), ``ipc pid N`` for a Unix socket, or
    ``unknown address`` when the connection is already gone. Works on a duplicate, never closes ``fd``."""
    try:
        s = socket.socket(fileno=os.dup(fd))
    except OSError:
        return UNKNOWN_ADDRESS
    try:
        if s.family == socket.AF_UNIX:
            pid, _, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
            return f"ipc pid {pid}"
        host, port = s.getpeername()[:2]
        return f"[{host}]:{port}" if s.family == socket.AF_INET6 else f"{host}:{port}"
    except OSError:
        return UNKNOWN_ADDRESS
    finally:
        s.close()


#: TCP states of /proc/net/tcp* that hold no closing connection: ESTABLISHED, LISTEN
_OPEN_STATES = {"01", "0A"}


def _proc_address(hex_addr: str) -> str:
    ip_hex, port_hex = hex_addr.split(":")
    raw = bytes.fromhex(ip_hex)
    if len(raw) == 4:
        return f"{socket.inet_ntop(socket.AF_INET, raw[::-1])}:{int(port_hex, 16)}"
    # IPv6: four 32-bit words, each in host (little-endian) order
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    host = socket.inet_ntop(socket.AF_INET6, words)
    return f"{host[7:]}:{int(port_hex, 16)}" if host.startswith("::ffff:") else f"[{host}]:{int(port_hex, 16)}"


def closed_peers(local_port: int) -> list[str]:
    """The peers (``ip:port``) of this host's tcp connections to ``local_port`` that are closing or closed
    (FIN_WAIT, TIME_WAIT, CLOSE_WAIT...), from Linux's ``/proc/net/tcp`` and ``tcp6``; empty elsewhere."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                next(fh, None)
                for line in fh:
                    cols = line.split()
                    if len(cols) > 3 and cols[3] not in _OPEN_STATES and int(cols[1].rsplit(":", 1)[1], 16) == local_port:
                        found.append(_proc_address(cols[2]))
        except (OSError, ValueError):
            continue
    return found


class Refusals:
    """Counts refusals by reason and logs the first of each (host, reason) on ``log``; thread-safe (the ZAP and
    monitor thread of a worker's inbox refuses while its main thread runs the windows)."""

    def __init__(self, log: logging.Logger, where: str) -> None:
        self.log = log
        #: what refused: "the coordinator" or "worker 1's mesh inbox", in the summary lines
        self.where = where
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._repeats: dict[tuple[str, str], int] = {}

    def refuse(self, peer: PeerName, reason: str, detail: str = "") -> None:
        """Count one refusal of ``peer`` for ``reason`` (a key of :data:`REASONS`); log it if it is the first
        from that host for that reason."""
        with self._lock:
            self._counts[reason] += 1
            key = (peer.host, reason)
            if peer.address == UNKNOWN_ADDRESS and key not in self._repeats:
                # a peer whose connection was gone before it could be named is most likely one already named
                # for this reason (a retrying client): a repeat of that, not a new line saying less
                key = next((k for k in self._repeats if k[1] == reason), key)
            if key in self._repeats:
                self._repeats[key] += 1
                return
            self._repeats[key] = 0
        self.log.warning("%s refused %s: %s%s", self.where, peer, REASONS[reason], f": {detail}" if detail else "",
                         extra={"peer": str(peer), "peer_address": peer.address, "key_id": peer.key_id,
                                "refusal": reason})

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def summarise(self) -> None:
        """Log, once, how many repeats of each logged refusal were only counted."""
        with self._lock:
            repeats = [(k, n) for k, n in self._repeats.items() if n]
            for k, _ in repeats:
                self._repeats[k] = 0
        for (host, reason), n in sorted(repeats):
            self.log.warning("%s refused %d more from %s (%s) without logging each", self.where, n, host,
                             REASONS[reason], extra={"refusal": reason, "peer_address": host, "repeats": n})
