"""The kernel's metadata store: what a reader learns besides the data (ZooKeeper's ``Stat.mzxid``)."""
from __future__ import annotations

from clusteremu.emulator.agent import Agent
from clusteremu.emulator.election import MetadataSession, StoreProtocol

from .test_lease import STORE, Net


class Reader(Agent):
    """Writes ``/n/a`` and ``/n/b``, rewrites ``/n/a``, and lists ``/n/`` with its Stat after each step."""

    def on_start(self):
        self.lists: list[dict] = []
        self.session = MetadataSession(self, StoreProtocol("store"), 30.0, op_timeout_s=2.0, on_lost=lambda: None)
        self.spawn(self._run())

    def _run(self):
        yield from self.session.open()
        for path, data in (("/n/a", 1), ("/n/b", 2), ("/n/a", 3)):
            yield from self.session.op("set", {"path": path, "data": data, "ephemeral": False})
            r = yield from self.session.op("list", {"prefix": "/n/", "stat": True})
            self.lists.append(r)


def test_a_listing_with_stat_tells_which_nodes_were_rewritten_and_the_zxid_only_grows():
    n = Net({"store": STORE, "reader": (Reader, {})}).run(5.0)
    first, second, third = (r["mzxid"] for r in n.agents["reader"].lists)
    assert second["/n/a"] == first["/n/a"] < second["/n/b"] < third["/n/a"]  # a rewrite moves its own mzxid only
    assert third["/n/b"] == second["/n/b"] and third.keys() == {"/n/a", "/n/b"}
    plain = [m for m in n.sent if m.kind == "list_reply"]
    assert all("nodes" in m.body for m in plain)
    store = n.agents["store"]
    store.crash()
    store.start()  # a new run of the store: its writes get larger ids than the last run's
    n.agents["reader"].crash()
    n.agents["reader"].start()
    n.run(10.0)
    assert min(n.agents["reader"].lists[0]["mzxid"].values()) > max(third.values())
