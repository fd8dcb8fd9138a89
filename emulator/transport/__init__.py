"""Transports of the window protocol.

In-process workers offer :class:`WorkerLink` objects: per window the coordinator calls ``advance(until, inbound,
since)`` on every link with work in the window, then ``result()``. Worker processes run the same windows among
themselves (a mesh): each routes its own agents' messages and sends each peer, once per window, one frame with
the messages for that peer's agents and its candidate next time; the coordinator only starts, watches and ends
them. Only msgpack-safe data crosses a process boundary — messages travel as ``Message.to_wire()`` lists.

Modules: ``inproc`` (workers in the coordinator's process), ``mesh`` (the window loop every worker process runs),
``peers`` (the mesh's sockets: Unix stream sockets for ``procs:N``, ZeroMQ for ``tcp``), ``wire`` (the versioned
msgpack frames), ``hub`` (the coordinator's ROUTER socket, liveness and ``ZmqLink``), ``launch`` (spawning
``procs:N`` workers over ipc or admitting ``tcp`` workers), ``agent_process`` (the worker process),
``curve`` (CurveZMQ keys, key ids, the ZAP handler), ``monitor`` (the socket monitor that turns failed handshakes
into refusals), ``refusals`` (the refusal reasons, peer names, the ledger that logs each refusal once and counts
it). See ``docs/wire-protocol.md``.
"""
from .base import WorkerLink
from .inproc import InprocLink

__all__ = ["WorkerLink", "InprocLink"]
