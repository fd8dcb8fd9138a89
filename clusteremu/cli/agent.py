"""``clusteremu agent``: a worker process of a run (``--connect ADDR``), or ``agent keygen`` for CurveZMQ keys.

``run --agents procs:N`` spawns these itself over a private ipc socket; for ``run --agents tcp`` start them on
any host that sees the run directory at the same path (see ``docs/wire-protocol.md``).
"""
from __future__ import annotations

import argparse
import logging
import os
import signal

from clusteremu.base.errors import InputError
from clusteremu.emulator.transport import wire


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("agent", help="run a worker process that hosts agents of a run (or: agent keygen)")
    p.add_argument("action", nargs="?", choices=("keygen",), help="keygen: write a CurveZMQ key pair")
    p.add_argument("--connect", metavar="ADDR", help="the coordinator's address (tcp://HOST:PORT or ipc://PATH)")
    p.add_argument("--server-key", metavar="FILE", help="the coordinator's public key file (SERVER.key)")
    p.add_argument("--client-key", metavar="FILE", help="this worker's secret key file (CLIENT.key_secret)")
    p.add_argument("--insecure", action="store_true", help="plain tcp without CurveZMQ (the coordinator must agree)")
    p.add_argument("--heartbeat-s", type=float, default=0.5, help="heartbeat period, wall seconds (default 0.5)")
    p.add_argument("--timeout", type=float, default=5.0,
                   help="exit when the coordinator is silent this long, wall seconds (default 5)")
    p.add_argument("--join-timeout", type=float, default=60.0,
                   help="exit when no coordinator answers within this many seconds (default 60)")
    p.add_argument("--max-frame-bytes", type=int, default=wire.DEFAULT_MAX_FRAME_BYTES,
                   help="drop inbound frames larger than this")
    p.add_argument("--parent-pid", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--out", default=".", help="keygen: directory for the key files (default .)")
    p.add_argument("--name", default="client", help="keygen: key file name stem (default client)")
    p.add_argument("--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    p.set_defaults(func=agent)


def agent(args: argparse.Namespace) -> int:
    if args.action == "keygen":
        import zmq.auth

        from clusteremu.emulator.transport.curve import key_id, keygen

        public, secret = keygen(args.out, args.name)
        kid = key_id(zmq.auth.load_certificate(str(public))[0])
        print(f"public key {public}, key id {kid} (give it to the coordinator's --allow directory or use as "
              f"--server-key; logs name the key by its id)")
        print(f"secret key {secret} (keep it private)")
        return 0
    if not args.connect:
        raise InputError("--connect", "required: the coordinator's address (tcp://HOST:PORT or ipc://PATH)")
    if not args.connect.startswith(("tcp://", "ipc://")):
        raise InputError(f"--connect {args.connect}", "expected tcp://HOST:PORT or ipc://PATH")
    for flag, v in (("--heartbeat-s", args.heartbeat_s), ("--timeout", args.timeout), ("--join-timeout", args.join_timeout)):
        if not v > 0:
            raise InputError(flag, f"must be greater than 0, got {v}")
    if args.timeout <= args.heartbeat_s:
        raise InputError("--timeout", "must be longer than --heartbeat-s")
    curve = None
    if args.connect.startswith("tcp://") and not args.insecure:
        if not args.server_key or not args.client_key:
            raise InputError("agent --connect tcp://", "CurveZMQ needs --server-key SERVER.key and --client-key "
                                                        "CLIENT.key_secret (or an explicit --insecure)")
        from clusteremu.emulator.transport.curve import load_public, load_secret

        server_public = load_public(args.server_key, "--server-key")
        client_public, client_secret = load_secret(args.client_key, "--client-key")
        curve = (server_public, client_public, client_secret)
    logging.basicConfig(level=args.log_level, format=f"clusteremu agent[{os.getpid()}] %(levelname)s %(message)s")
    if args.parent_pid is not None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the spawning coordinator handles Ctrl-C and stops us
    from clusteremu.emulator.transport.agent_process import AgentOptions, serve

    return serve(AgentOptions(args.connect, args.heartbeat_s, args.timeout, args.join_timeout,
                              args.max_frame_bytes, args.parent_pid, curve))
