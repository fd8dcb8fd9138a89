"""A broker's lookup and ownership role: the bundles it owns, the topics it serves, lookups, claims and unloads.

Components:

* :class:`Ownership` / :class:`OwnedBundles`: one owned bundle (its connected topics and their task counts) and
  the set of them, versioned so that reports can reuse their per-bundle stats;
* :class:`BundleOwnership`: the role — the bundles as this broker knows them (:class:`~.split.BundleMap`), the
  owned ones and their traffic (``task_counts``), the lookup protocol of the modular load manager (ownership
  nodes under :data:`~.store.OWNERSHIP_PREFIX`; the extensible one answers through :mod:`.extensible_channel`),
  ephemeral claims, client connections, unloads and releases.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generator

import numpy as np

from clusteremu.emulator.messages import Message

from .split import BundleMap
from .store import OWNERSHIP_PREFIX
from .workload import clients_of

if TYPE_CHECKING:
    from .broker import Broker

_owned_versions = itertools.count()


@dataclass
class Ownership:
    disabled: bool = False
    topics: dict[int, str] = field(default_factory=dict)  # topic index -> client agent
    task_counts: np.ndarray | None = None  # topics per task; only ever grows while the bundle is owned


class OwnedBundles(dict[str, Ownership]):
    """The bundles a broker owns. ``version`` is new (unique across brokers) whenever a bundle is added or
    removed: with the broker's total task counts, which only grow while the set is the same, it tells that no
    bundle's counts changed, so the report's bundle stats can be reused without reading 100 ownerships."""

    __slots__ = ("version", "on_change")

    def __init__(self, on_change: Callable[[], None]) -> None:
        super().__init__()
        self.version = next(_owned_versions)
        self.on_change = on_change  # told of every change (the load report's check reads the set)

    def __setitem__(self, bundle: str, own: Ownership) -> None:
        super().__setitem__(bundle, own)
        self.version = next(_owned_versions)
        self.on_change()

    def __delitem__(self, bundle: str) -> None:
        super().__delitem__(bundle)
        self.version = next(_owned_versions)
        self.on_change()

    def pop(self, bundle: str, *default: Any) -> Any:
        self.version = next(_owned_versions)
        self.on_change()
        return super().pop(bundle, *default)

    def _unsupported(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("OwnedBundles changes one bundle at a time (set, del, pop)")

    clear = popitem = setdefault = update = __ior__ = _unsupported  # type: ignore[assignment]


def close_reason(reason: str) -> str:
    """What a client is told when a bundle is released for ``reason``."""
    return "unload" if reason in ("shedding", "split", "transfer", "admin", "shutdown") else "broker_down"


class BundleOwnership:
    """The broker's bundles and the topics it serves (one per run of the broker process)."""

    def __init__(self, broker: "Broker") -> None:
        self.b = broker
        self.bundle_map = BundleMap(broker.workload)  # the bundles as this broker knows them (splits)
        self.owned = OwnedBundles(lambda: broker.reporter.changed())
        self.task_counts = np.zeros(len(broker.workload.tasks))  # topics served per task, all bundles

    # -- owning ---------------------------------------------------------------------------------------------
    def own(self, bundle: str, via: str) -> None:
        """Record ``bundle`` as owned (no topic connected yet), unless it is already."""
        if bundle not in self.owned:
            self.owned[bundle] = Ownership(task_counts=np.zeros(len(self.b.workload.tasks)))
            self.b.emit("bundle_owned", bundle=bundle, via=via)

    def own_split_child(self, child: str, parent: Ownership) -> None:
        """Own ``child`` of a split bundle with the parent's connected topics whose hash it holds (the bundle
        map has the new boundaries already)."""
        wl = self.b.workload
        part = Ownership(task_counts=np.zeros(len(wl.tasks)))
        for ti, client in parent.topics.items():
            if self.bundle_map.bundle_of(ti) == child:
                part.topics[ti] = client
                part.task_counts[wl.topic_task[ti]] += 1
        self.owned[child] = part
        self.b.emit("bundle_owned", bundle=child, via="split")

    def acquire(self, bundle: str, via: str) -> Generator[Any, Any, str | None]:
        """Claim ``bundle`` with an ephemeral ownership node; return the owner that is actually recorded."""
        b = self.b
        if bundle in self.owned:
            return b.name
        if b.stopping:
            return None
        if b.xchannel is not None:
            return (yield from b.xchannel.claim_initial(bundle))
        if not self.bundle_map.exists(bundle):
            return None  # split meanwhile: the client retries and finds a child
        r = yield from b.store.op("create", {"path": OWNERSHIP_PREFIX + bundle,
                                             "data": {"broker": b.name, "disabled": False}, "ephemeral": True})
        if r is None:
            return None
        if not r["ok"]:
            return r["data"]["broker"]
        if b.stopping:  # began closing while the claim was in flight: give it back
            yield from b.store.op("delete", {"path": OWNERSHIP_PREFIX + bundle})
            return None
        self.own(bundle, via)
        return b.name

    def serve_preassigned_topics(self, bundle: str) -> None:
        """A bundle preassigned at start comes with its topics' connections: their clients were started
        connected to this broker (``cluster.start = "preassigned"``), so its traffic flows from now on."""
        b = self.b
        own = self.owned[bundle]
        wl = b.workload
        clients = b.params["clients"]
        topics = wl.bundle_topics[wl.bundle_index[bundle]]
        b.usage.advance()
        own.topics.update(clients_of(topics.tolist(), clients))
        counts = np.bincount(wl.topic_task[topics], minlength=len(wl.tasks))
        own.task_counts += counts
        self.task_counts += counts

    # -- requests -------------------------------------------------------------------------------------------
    def lookup(self, msg: Message) -> Generator:
        """A client's topic lookup: connect to the owner, redirect to the leader or the chosen broker, or
        claim the bundle here."""
        b = self.b
        topic = msg.body["topic"]
        bundle = self.bundle_map.bundle_of(b.workload.topic_index[topic])
        if b.xchannel is not None:
            yield from b.xchannel.lookup(msg, bundle)
            return
        r = yield from b.store.op("get", {"path": OWNERSHIP_PREFIX + bundle})
        if r is None:
            b.reply(msg, {"response": "error", "error": "MetadataError"})
            return
        if r["ok"]:
            owner = r["data"]
            if owner["disabled"]:
                b.reply(msg, {"response": "error", "error": f"Namespace bundle {bundle} is being unloaded"})
            else:
                b.reply(msg, {"response": "connect", "target": owner["broker"], "authoritative": True})
            return
        lm, leader = b.leadership.lm, b.leadership.leader
        if msg.body["authoritative"]:
            candidate = b.name  # the leader already chose us
        elif lm is not None or leader is None or leader not in b.leadership.known_brokers():
            candidate = lm.place(bundle) if lm is not None else b.name
            if candidate is None:
                b.reply(msg, {"response": "error", "error": f"No broker was available to own {topic}"})
                return
        else:
            b.reply(msg, {"response": "redirect", "target": leader, "authoritative": False})
            return
        if candidate != b.name:
            b.reply(msg, {"response": "redirect", "target": candidate, "authoritative": True})
            return
        owner = yield from self.acquire(bundle, via="lookup")
        if owner is None:
            b.reply(msg, {"response": "error", "error": "MetadataError"})
        else:
            b.reply(msg, {"response": "connect", "target": owner, "authoritative": True})

    def connect(self, msg: Message) -> None:
        """A client connects a topic: served if its bundle is owned here and not being unloaded."""
        b = self.b
        ti = b.workload.topic_index[msg.body["topic"]]
        bundle = self.bundle_map.bundle_of(ti)
        own = self.owned.get(bundle)
        if own is None and b.xchannel is not None and not b.stopping and b.xchannel.owned_here(bundle):
            # The extensible load manager checks ownership against the channel's table view: a record Owned by
            # this broker (e.g. written while it restarted) is its bundle, whether or not it saw the record come.
            self.own(bundle, via="table_view")
            own = self.owned.get(bundle)
        if own is None or own.disabled:
            b.reply(msg, {"ok": False, "error": "ServiceUnitNotReady"})
            return
        if ti not in own.topics:
            b.usage.advance()
            task = b.workload.topic_task[ti]
            own.topics[ti] = msg.src
            own.task_counts[task] += 1
            self.task_counts[task] += 1
        b.reply(msg, {"ok": True})

    def unload(self, msg: Message) -> Generator:
        """The leader's unload of a bundle: disable its ownership node, then release it."""
        b = self.b
        bundle = msg.body["bundle"]
        own = self.owned.get(bundle)
        if own is None:
            b.reply(msg, {"ok": False})
            return
        own.disabled = True
        yield from b.store.op("set", {"path": OWNERSHIP_PREFIX + bundle, "data": {"broker": b.name, "disabled": True}})
        if self.owned.get(bundle) is own:
            self.release(bundle, reason=msg.body.get("reason", "shedding"),
                         destination=msg.body.get("destination", ""), delete=True)
        b.reply(msg, {"ok": True})

    def unload_all(self) -> Generator:
        """A graceful stop's unload of every owned bundle, one at a time (disable, release, delete the node)."""
        b = self.b
        for bundle in sorted(self.owned):
            own = self.owned.get(bundle)
            if own is None:
                continue
            own.disabled = True
            yield from b.store.op("set", {"path": OWNERSHIP_PREFIX + bundle,
                                          "data": {"broker": b.name, "disabled": True}})
            if self.owned.get(bundle) is own:
                self.release(bundle, reason="shutdown", destination="", delete=False)
                yield from b.store.op("delete", {"path": OWNERSHIP_PREFIX + bundle})

    # -- releasing ------------------------------------------------------------------------------------------
    def release(self, bundle: str, reason: str, destination: str, delete: bool) -> None:
        """Close the bundle's topics (clients get a close and reconnect) and give up its ownership."""
        b = self.b
        own = self.owned.pop(bundle)
        b.usage.advance()
        for ti, client in sorted(own.topics.items()):
            b.send(client, "close", {"topic": b.workload.topics[ti], "reason": close_reason(reason)})
        self.task_counts -= own.task_counts
        b.emit("bundle_unloaded", bundle=bundle, destination=destination, reason=reason, topics=len(own.topics))
        if b.xchannel is not None:
            b.xchannel.on_released(bundle, reason)
        if delete and b.store.is_open:
            b.spawn(b.store.op("delete", {"path": OWNERSHIP_PREFIX + bundle}))

    def release_all(self, reason: str) -> None:
        """Give every bundle up at once, leaving the ownership nodes to the store (the session is gone)."""
        for bundle in sorted(self.owned):
            self.release(bundle, reason=reason, destination="", delete=False)

    def close_connections(self, reason: str) -> None:
        """The process dies: every connected client sees its connection close (the host closes the sockets)."""
        b = self.b
        for own in self.owned.values():
            for ti, client in sorted(own.topics.items()):
                b.send(client, "close", {"topic": b.workload.topics[ti], "reason": reason})
