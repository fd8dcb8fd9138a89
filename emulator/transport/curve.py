"""CurveZMQ for tcp workers: key files, key ids, the ZAP handler that admits keys, and socket set-up.

Key files are ZeroMQ's certificate files (``zmq.auth.create_certificates``): ``NAME.key`` holds the public key,
``NAME.key_secret`` the public and the secret key. The coordinator needs its secret file and a directory of the
client public keys it accepts; a worker needs the server's public file and its own secret file.

A key is named in logs by its *key id* (:func:`key_id`): the first 8 hex digits of the SHA-256 of its Z85 text
(the 40 characters in the key file), which ``agent keygen`` prints. :class:`ZapHandler` answers ZeroMQ's ZAP
requests (ZeroMQ asks it about every CURVE client during the handshake): it admits the allowed keys, hands the
key id to ZeroMQ as the connection's ``User-Id`` (so every frame names its sender's key), and remembers the key of
each client it denied by address, so that the socket monitor's refusal line can name that key.
"""
from __future__ import annotations

import hashlib
import os
import threading
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import zmq
import zmq.auth
from zmq.utils import z85

from clusteremu.base.errors import InputError

if TYPE_CHECKING:
    from .monitor import ConnectionWatch

#: ZeroMQ's well-known endpoint of a context's ZAP handler
ZAP_ENDPOINT = "inproc://zeromq.zap.01"


def key_id(public_z85: bytes) -> str:
    """The key id of a CurveZMQ public key given as its Z85 text: 8 hex digits of its SHA-256."""
    return hashlib.sha256(public_z85).hexdigest()[:8]


class ZapHandler(threading.Thread):
    """A context's ZAP handler: admits the CURVE clients whose Z85 public key ``allowed`` accepts.

    It runs in a thread of its own (ZeroMQ waits for its answer during every handshake, whatever the socket's
    owner is doing); ``watch``, if given, is a socket monitor it pumps in the same thread (a worker's inbox,
    whose owner is busy running windows).
    """

    def __init__(self, ctx: zmq.Context, allowed: Callable[[bytes], bool],
                 watch: "ConnectionWatch | None" = None) -> None:
        super().__init__(name="clusteremu-zap", daemon=True)
        self._allowed = allowed
        self.watch = watch
        self._zap = ctx.socket(zmq.REP)
        self._zap.linger = 0
        self._zap.bind(ZAP_ENDPOINT)
        wake = f"inproc://clusteremu-zap-stop-{id(self)}"
        self._stop_rx = ctx.socket(zmq.PAIR)
        self._stop_rx.bind(wake)
        self._stop_tx = ctx.socket(zmq.PAIR)
        self._stop_tx.connect(wake)
        self._lock = threading.Lock()
        # (host, key id) of the clients denied, oldest first; bounded, as a flood of them must not grow it
        self._denied: deque[tuple[str, str]] = deque(maxlen=10_000)

    def run(self) -> None:
        poller = zmq.Poller()
        poller.register(self._zap, zmq.POLLIN)
        poller.register(self._stop_rx, zmq.POLLIN)
        if self.watch is not None:
            poller.register(self.watch.monitor, zmq.POLLIN)
        try:
            while True:
                ready = dict(poller.poll())
                if self._stop_rx in ready:
                    break
                if self._zap in ready:
                    self._answer(self._zap.recv_multipart())
                if self.watch is not None and self.watch.monitor in ready:
                    self.watch.pump()
        finally:
            self._zap.close(linger=0)
            self._stop_rx.close(linger=0)
            if self.watch is not None:
                self.watch.close()

    def _answer(self, request: list[bytes]) -> None:
        # [version, request id, domain, address, routing id, mechanism, credentials...] (ZeroMQ RFC 27)
        if len(request) < 6:
            return  # only ZeroMQ itself talks on this endpoint; a short request cannot be answered
        request_id, address, mechanism, credentials = request[1], request[3], request[5], request[6:]
        public = z85.encode(credentials[0]) if mechanism == b"CURVE" and credentials else b""
        kid = key_id(public) if public else ""
        ok = bool(public) and self._allowed(public)
        if not ok:
            with self._lock:
                host = address.decode(errors="replace")
                # named as PeerName.host names a connection's address: an IPv6 one in brackets
                self._denied.append((f"[{host}]" if ":" in host else host, kid))
        self._zap.send_multipart([b"1.0", request_id, b"200" if ok else b"400",
                                  b"OK" if ok else b"unknown key", kid.encode() if ok else b"", b""])

    def denied(self, host: str | None) -> tuple[str, str] | None:
        """``(host, key id)`` of the oldest client denied and not yet asked about, from ``host`` if given (the
        connection's own address), else from any host: ZeroMQ tells the handler the peer's IP during the
        handshake, so a refused peer whose connection was gone before the monitor could read its address is
        still named. None if there is none."""
        with self._lock:
            for i, entry in enumerate(self._denied):
                if host is None or entry[0] == host:
                    del self._denied[i]
                    return entry
            return None

    def stop(self) -> None:
        """Called from the owner's thread: end the handler (and its monitor) and close its sockets."""
        if self.is_alive():
            self._stop_tx.send(b"")
            self.join(timeout=5.0)
        else:
            self._zap.close(linger=0)
            self._stop_rx.close(linger=0)
        self._stop_tx.close(linger=0)


def keygen(out_dir: str | os.PathLike, name: str) -> tuple[Path, Path]:
    """Write ``NAME.key`` and ``NAME.key_secret`` (owner-only) into ``out_dir``; return (public, secret)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    public, secret = Path(out / f"{name}.key"), Path(out / f"{name}.key_secret")
    for p in (public, secret):
        if p.exists():
            raise InputError(str(p), "exists; refusing to overwrite a key")
    pub, sec = zmq.auth.create_certificates(str(out), name)
    os.chmod(sec, 0o600)
    return Path(pub), Path(sec)


def load_public(path: str | os.PathLike, flag: str) -> bytes:
    try:
        public, _ = zmq.auth.load_certificate(str(path))
    except (OSError, ValueError) as err:
        raise InputError(f"{flag} {path}", f"not a readable CurveZMQ key file: {err}") from None
    return public


def load_secret(path: str | os.PathLike, flag: str) -> tuple[bytes, bytes]:
    try:
        public, secret = zmq.auth.load_certificate(str(path))
    except (OSError, ValueError) as err:
        raise InputError(f"{flag} {path}", f"not a readable CurveZMQ key file: {err}") from None
    if secret is None:
        raise InputError(f"{flag} {path}", "holds no secret key (pass the NAME.key_secret file)")
    return public, secret


def secure_server(ctx: zmq.Context, sock: zmq.Socket, server_secret: str, allow_dir: str) -> ZapHandler:
    """Make ``sock`` a CURVE server that only admits the client keys found in ``allow_dir``."""
    if not Path(allow_dir).is_dir():
        raise InputError(f"--allow {allow_dir}", "not a directory of client public keys")
    try:
        allowed = frozenset(zmq.auth.load_certificates(str(allow_dir)))
    except (OSError, ValueError) as err:
        raise InputError(f"--allow {allow_dir}", f"holds an unreadable key file: {err}") from None
    if not allowed:
        raise InputError(f"--allow {allow_dir}", "holds no client public key (*.key); no worker could join")
    public, secret = load_secret(server_secret, "--server-key")
    auth = ZapHandler(ctx, allowed.__contains__)
    auth.start()
    sock.curve_secretkey = secret
    sock.curve_publickey = public
    sock.curve_server = True
    return auth


def secure_client(sock: zmq.Socket, server_public: bytes, client_public: bytes, client_secret: bytes) -> None:
    sock.curve_serverkey = server_public
    sock.curve_publickey = client_public
    sock.curve_secretkey = client_secret
