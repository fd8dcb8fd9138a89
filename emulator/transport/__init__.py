"""Transports of the window protocol between the coordinator and its workers.

A transport offers :class:`WorkerLink` objects. Per window the coordinator calls ``advance(until, inbound)`` on
every link (which may return at once, letting workers run in parallel), then ``result()`` on every link. Only
msgpack-safe data crosses a link — messages travel as ``Message.to_wire()`` lists — so the in-process link and
the ZeroMQ one carry exactly the same information.
"""
from .base import WorkerLink
from .inproc import InprocLink

__all__ = ["WorkerLink", "InprocLink"]
