"""The wire protocol between the coordinator and ZeroMQ workers, and between workers (``docs/wire-protocol.md``).

Every frame is one msgpack array ``[version, kind, call, body]``: the protocol version, the frame kind, the call
id that pairs a reply with its request (0 for frames that answer nothing), and a kind-specific msgpack-safe body.
Nothing but msgpack crosses a socket — never pickle — and a frame that does not decode into that shape, is too
large, has another version or an unknown kind is refused here with a :class:`WireError` that the receiver logs
before dropping the frame.
"""
from __future__ import annotations

from typing import Any

import msgpack

#: 2: workers exchange a window's messages among themselves (the mesh); the coordinator no longer routes
#: 3: a worker's ``finished`` says how many events its records give (``rows``: kinds written in rows)
PROTOCOL_VERSION = 3

#: default bound on one inbound frame; larger frames are dropped unread (``--max-frame-bytes``)
DEFAULT_MAX_FRAME_BYTES = 256 * 1024 * 1024

# worker → coordinator
HELLO = "hello"            # body: {pid, host, protocol}
READY = "ready"            # reply to ASSIGN: {agents, next_time, mesh}: mesh is the endpoint of its inbox
DONE = "done"              # reply to RUN: {windows, messages, dropped, events, virtual_time, drops, frames, bytes,
                           #                advance_s, exchange_s, loop_s}
PROGRESS = "progress"      # answers nothing (call 0): [virtual_time, windows, events] every progress period
FINISHED = "finished"      # reply to FINISH: the writer summary {writer, count, segments, agent_digests, rows}
FAILED = "failed"          # the worker cannot go on: {reason}
# coordinator → worker
ASSIGN = "assign"          # {worker_id, seed, run_dir, scenario, agents, segment_bytes, placement, mesh}
RUN = "run"                # {endpoints, until}: connect to the peers' inboxes and run every window
FINISH = "finish"          # close the trace and report its summary
STOP = "stop"              # the run is over (failed or interrupted): close the trace and exit
# both ways, on the heartbeat sockets
HEARTBEAT = "heartbeat"    # {} (the worker's carries its pid)
# worker → worker, on the mesh (the call field is the window's number)
WINDOW = "window"          # [sender, candidate next time, messages for the receiver's agents as Message.to_wire()]

TO_COORDINATOR = frozenset({HELLO, READY, DONE, PROGRESS, FINISHED, FAILED, HEARTBEAT})
TO_WORKER = frozenset({ASSIGN, RUN, FINISH, STOP, HEARTBEAT})
MESH = frozenset({WINDOW})


class WireError(ValueError):
    """A frame that breaks the protocol; the receiver logs it and drops the frame. ``version_mismatch``: the
    frame is well formed but of another protocol version (a peer of another release)."""

    def __init__(self, message: str, version_mismatch: bool = False) -> None:
        super().__init__(message)
        self.version_mismatch = version_mismatch


def encode(kind: str, call: int, body: Any) -> bytes:
    """Pack a frame. Raises ``TypeError`` when ``body`` holds something msgpack cannot carry."""
    return msgpack.packb([PROTOCOL_VERSION, kind, call, body], use_bin_type=True)


def decode(frame: bytes, accepted: frozenset[str], max_bytes: int) -> tuple[str, int, Any]:
    """Unpack and check one frame: ``(kind, call, body)``, or :class:`WireError` saying what is wrong."""
    if len(frame) > max_bytes:
        raise WireError(f"oversized frame: {len(frame)} bytes > maximum {max_bytes}")
    try:
        obj = msgpack.unpackb(frame, raw=False, strict_map_key=False, use_list=True)
    except Exception as err:  # msgpack raises several unrelated types for malformed input
        raise WireError(f"undecodable frame ({len(frame)} bytes): {type(err).__name__}: {err}") from None
    if not isinstance(obj, list) or len(obj) != 4:
        raise WireError(f"not a [version, kind, call, body] frame: {type(obj).__name__}")
    version, kind, call, body = obj
    if version != PROTOCOL_VERSION:
        raise WireError(f"unknown protocol version {str(version)[:20]} (this side speaks {PROTOCOL_VERSION})",
                        version_mismatch=True)
    if kind not in accepted:
        raise WireError(f"unexpected frame kind {str(kind)[:40]!r}")
    if not isinstance(call, int) or isinstance(call, bool):
        raise WireError(f"call id must be an integer, got {type(call).__name__}")
    return kind, call, body
