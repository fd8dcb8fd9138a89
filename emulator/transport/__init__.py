"""Transports of the window protocol between the coordinator and its workers.

A transport offers :class:`WorkerLink` objects. Per window the coordinator calls ``advance(until, inbound,
since)`` on every link with work in the window (which may return at once, letting workers run in parallel), then
``result()`` on those links. Only msgpack-safe data crosses a link — messages travel as ``Message.to_wire()``
lists — so the in-process link and the ZeroMQ one carry exactly the same information.

Modules: ``inproc`` (workers in the coordinator's process), ``wire`` (the versioned msgpack frames), ``hub``
(the coordinator's ROUTER socket, liveness and ``ZmqLink``), ``launch`` (spawning ``procs:N`` workers over ipc or
admitting ``tcp`` workers), ``agent_process`` (the worker process's loop), ``curve`` (CurveZMQ keys). See
``docs/wire-protocol.md``.
"""
from .base import WorkerLink
from .inproc import InprocLink

__all__ = ["WorkerLink", "InprocLink"]
