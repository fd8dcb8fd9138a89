"""Messages between agents.

A message only ever crosses the emulated network, and between processes only as a msgpack-safe list
(``Message.to_wire``): never a pickled object. Delivery order at a receiver is canonical:
``(deliver_t, src, seq)`` where ``seq`` is the sender's own message counter.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Message:
    """One message: ``body`` is any msgpack-safe value (dict, list, str, numbers, bool, None)."""

    src: str
    dst: str
    kind: str
    body: Any
    sent_t: float
    seq: int
    deliver_t: float = -1.0

    def to_wire(self) -> list:
        return [self.deliver_t, self.dst, self.src, self.seq, self.sent_t, self.kind, self.body]

    @classmethod
    def from_wire(cls, w: list) -> "Message":
        deliver_t, dst, src, seq, sent_t, kind, body = w
        return cls(src=src, dst=dst, kind=kind, body=body, sent_t=sent_t, seq=seq, deliver_t=deliver_t)

    @property
    def delivery_key(self) -> tuple[float, str, str, int]:
        """Canonical order of deliveries: time, receiver, sender, sender's sequence number."""
        return (self.deliver_t, self.dst, self.src, self.seq)
