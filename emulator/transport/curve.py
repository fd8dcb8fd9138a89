"""CurveZMQ for tcp workers: key files, the coordinator's allow-list, and socket set-up.

Key files are ZeroMQ's certificate files (``zmq.auth.create_certificates``): ``NAME.key`` holds the public key,
``NAME.key_secret`` the public and the secret key. The coordinator needs its secret file and a directory of the
client public keys it accepts; a worker needs the server's public file and its own secret file.
"""
from __future__ import annotations

import os
from pathlib import Path

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

from clusteremu.base.errors import InputError


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


def secure_server(ctx: zmq.Context, sock: zmq.Socket, server_secret: str, allow_dir: str) -> ThreadAuthenticator:
    """Make ``sock`` a CURVE server that only admits the client keys found in ``allow_dir``."""
    if not Path(allow_dir).is_dir():
        raise InputError(f"--allow {allow_dir}", "not a directory of client public keys")
    if not any(Path(allow_dir).glob("*.key")):
        raise InputError(f"--allow {allow_dir}", "holds no client public key (*.key); no worker could join")
    public, secret = load_secret(server_secret, "--server-key")
    auth = ThreadAuthenticator(ctx)
    auth.start()
    auth.configure_curve(domain="*", location=str(allow_dir))
    sock.curve_secretkey = secret
    sock.curve_publickey = public
    sock.curve_server = True
    return auth


def secure_client(sock: zmq.Socket, server_public: bytes, client_public: bytes, client_secret: bytes) -> None:
    sock.curve_serverkey = server_public
    sock.curve_publickey = client_public
    sock.curve_secretkey = client_secret
