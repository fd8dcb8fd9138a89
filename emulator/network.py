"""The emulated network between agents (DESIGN.md principle 3).

Each link (sender glob, receiver glob) has a latency distribution with a hard minimum > 0. The smallest minimum
over all links is the lookahead L of the conservative windows: nothing sent inside a window [T, T+L) can arrive
inside it. Conditions that the fault schedule turns on and off in virtual time (partitions, drops, extra delay)
apply to the messages *sent* while they are active. Draws come from a generator keyed by the sender, consumed in
the sender's own message order, so routing is the same whatever worker sent the message.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np

from .messages import Message
from .rng import keyed_rng

DISTRIBUTIONS = ("constant", "uniform", "exponential", "lognormal")

#: Message kinds that are a kernel component's bookkeeping rather than an agent's traffic (``Agent.send_notice``):
#: delivered after the link's minimum latency, never dropped, delayed or drawn for by a condition (the lease's
#: stop notice, its "server lost" notice and a client's published state, :mod:`.lease`).
NOTICE_KINDS: frozenset[str] = frozenset({"lease_notice", "lease_lost", "lease_state"})


@dataclass(frozen=True)
class Latency:
    """A latency distribution in seconds; every draw is >= ``min_s``.

    ``constant``: always ``min_s``. ``uniform``: in [min_s, max_s]. ``exponential``: ``min_s`` plus an
    exponential with mean ``mean_s - min_s``. ``lognormal``: ``min_s`` plus a lognormal whose median is
    ``median_s - min_s`` and shape ``sigma``.
    """

    dist: str
    min_s: float
    max_s: float = 0.0
    mean_s: float = 0.0
    median_s: float = 0.0
    sigma: float = 0.0

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> "Latency":
        """From the scenario's milliseconds form, e.g. ``{dist="uniform", min_ms=1, max_ms=3}``."""
        def ms(key: str) -> float:
            v = spec.get(key)
            return 0.0 if v is None else float(v) / 1000.0

        return cls(
            dist=spec["dist"],
            min_s=ms("min_ms"),
            max_s=ms("max_ms"),
            mean_s=ms("mean_ms"),
            median_s=ms("median_ms"),
            sigma=float(spec.get("sigma") or 0.0),
        )

    def sample(self, rng: np.random.Generator) -> float:
        if self.dist == "constant":
            return self.min_s
        if self.dist == "uniform":
            return self.min_s + (self.max_s - self.min_s) * rng.random()
        if self.dist == "exponential":
            return self.min_s + rng.exponential(self.mean_s - self.min_s)
        if self.dist == "lognormal":
            return self.min_s + float(np.exp(np.log(self.median_s - self.min_s) + self.sigma * rng.standard_normal()))
        raise ValueError(f"unknown latency distribution {self.dist!r}")


@dataclass(frozen=True)
class Link:
    """Latency of the messages from agents matching ``src`` (a glob) to agents matching ``dst``."""

    src: str
    dst: str
    latency: Latency


@dataclass
class Condition:
    """A network fault active on [start, end) of virtual time, for messages between two groups of agents.

    ``kind`` is ``partition`` (all dropped), ``drop`` (each dropped with ``probability``) or ``delay`` (``extra_s``
    added). Groups are lists of globs; a message matches when it goes from one group to the other, either way.
    """

    kind: str
    start: float
    end: float
    group_a: tuple[str, ...] = ("*",)
    group_b: tuple[str, ...] = ("*",)
    probability: float = 1.0
    extra_s: float = 0.0
    label: str = ""
    _match: dict[tuple[str, str], bool] = field(default_factory=dict, repr=False, compare=False)

    def matches(self, src: str, dst: str) -> bool:
        key = (src, dst)
        hit = self._match.get(key)
        if hit is None:
            a_src, b_src = _in(src, self.group_a), _in(src, self.group_b)
            a_dst, b_dst = _in(dst, self.group_a), _in(dst, self.group_b)
            hit = self._match[key] = (a_src and b_dst) or (b_src and a_dst)
        return hit


def _in(name: str, globs: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


class NetworkModel:
    """Routes messages: decides drop or delivery time for each, applying links and active conditions.

    ``emit(kind, **fields)`` receives the network's own trace events (``message_dropped``).
    """

    def __init__(
        self,
        seed: int,
        default: Latency,
        links: Iterable[Link] = (),
        agents: Iterable[str] = (),
        emit: Callable[..., None] | None = None,
    ) -> None:
        self.seed = seed
        self.default = default
        self.links = list(links)
        self.agents = set(agents)
        self.conditions: list[Condition] = []
        self._emit = emit
        self._rngs: dict[str, np.random.Generator] = {}
        self._link_of: dict[tuple[str, str], Latency] = {}
        for lat in [default, *(l.latency for l in self.links)]:
            if not lat.min_s > 0:
                raise ValueError("every link latency needs a minimum > 0 (it is the lookahead)")

    @property
    def lookahead(self) -> float:
        """The smallest possible latency of any link: the width of a conservative window."""
        return min([self.default.min_s, *(l.latency.min_s for l in self.links)])

    def add_condition(self, condition: Condition) -> None:
        self.conditions.append(condition)

    def condition_windows(self, src: str, dst: str) -> list[tuple[float, float]]:
        """The [start, end) windows of virtual time in which some condition applies to messages from ``src`` to
        ``dst``, merged where they overlap or touch, in time order (the schedule is known before the run)."""
        spans = sorted((c.start, c.end) for c in self.conditions if c.matches(src, dst))
        out: list[tuple[float, float]] = []
        for start, end in spans:
            if out and start <= out[-1][1]:
                out[-1] = (out[-1][0], max(out[-1][1], end))
            else:
                out.append((start, end))
        return out

    def latency_for(self, src: str, dst: str) -> Latency:
        if not self.links:
            return self.default  # one latency for every pair: no table of pairs to look up (or fill)
        key = (src, dst)
        lat = self._link_of.get(key)
        if lat is None:
            lat = self.default
            for link in self.links:  # last matching link wins, like later config lines overriding earlier ones
                if fnmatch.fnmatchcase(src, link.src) and fnmatch.fnmatchcase(dst, link.dst):
                    lat = link.latency
            self._link_of[key] = lat
        return lat

    def _rng(self, src: str) -> np.random.Generator:
        rng = self._rngs.get(src)
        if rng is None:
            rng = self._rngs[src] = keyed_rng(self.seed, "network", src)
        return rng

    def route(self, msg: Message) -> bool:
        """Set ``msg.deliver_t``; return False when the message is dropped."""
        if msg.dst not in self.agents:
            self._drop(msg, "unknown_receiver")
            return False
        if msg.kind in NOTICE_KINDS:
            msg.deliver_t = msg.sent_t + self.latency_for(msg.src, msg.dst).min_s
            return True
        rng = self._rng(msg.src)
        extra = 0.0
        t = msg.sent_t
        for c in self.conditions:
            if c.start <= t < c.end and c.matches(msg.src, msg.dst):
                if c.kind == "partition":
                    self._drop(msg, c.label or "partition")
                    return False
                if c.kind == "drop" and rng.random() < c.probability:
                    self._drop(msg, c.label or "drop")
                    return False
                if c.kind == "delay":
                    extra += c.extra_s
        msg.deliver_t = t + self.latency_for(msg.src, msg.dst).sample(rng) + extra
        return True

    def _drop(self, msg: Message, reason: str) -> None:
        if self._emit is not None:
            self._emit(
                "message_dropped", t=msg.sent_t, src=msg.src, dst=msg.dst, msg_kind=msg.kind, reason=reason
            )
