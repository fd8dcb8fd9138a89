"""A Storm user: submits its topologies at their times (``storm jar``), rebalances (``storm rebalance``) and kills
them (``storm kill``), through the Nimbus leader.

Components of :class:`User`: one process per topology — draw its components if it is a random one
(:mod:`.random_workload`), wait for its submission time, submit, then rebalance and kill it at their times (if
any). A request goes to the Nimbus it believes leads (at first the first of
``nimbus.seeds``); a Nimbus that does not lead answers with the leader it knows, and the request goes there at
once (Storm's ``NimbusClient`` asks the seeds for the leader); with no answer or no leader known the next seed is
tried, and after a full turn of the seeds the user waits ``client_retry_s``. The user is not a JVM model (a short-lived
client): no GC pauses.
"""
from __future__ import annotations

from typing import Any, Generator

from clusteremu.emulator.agent import Agent
from clusteremu.emulator.trace.kinds import declare

from .random_workload import draw_components

__all__ = ["User"]

declare("topology_request", "A user's request to Nimbus (`op`: `submit`, `rebalance` or `kill`) for topology "
        "`topology_name`, attempt `attempt` to Nimbus `nimbus`; `result`: `ok`, `not_leader`, `timeout`, "
        "`already_alive` (submit: a topology of that name runs; the request counts as done), `not_alive` "
        "(rebalance, kill: none of that name), `store`; `topology` the id when known.", __name__,
        op="str", topology_name="str", attempt="int", nimbus="str", result="str", topology="str")

#: results after which a request is done
_DONE = ("ok", "already_alive", "not_alive")


class User(Agent):
    kind = "storm-user"

    def on_start(self) -> None:
        self.leader: str | None = None
        for sub in self.params["topologies"]:
            self.spawn(self._lifecycle(sub))

    def _lifecycle(self, sub: dict[str, Any]) -> Generator:
        if sub.get("random") is not None:  # drawn now, on the topology's own stream of the run's seed
            sub = {**sub, "components": draw_components(self.rng(f"topology:{sub['name']}"), sub["random"])}
        yield from self.sleep(max(0.0, sub["submit_at"] - self.now))
        yield from self._request("submit_topology", "submit", {"name": sub["name"], "user": sub["user"],
                                                               "conf": sub["conf"], "components": sub["components"]})
        if sub["rebalance_at"] is not None:
            yield from self.sleep(max(0.0, sub["rebalance_at"] - self.now))
            yield from self._request("rebalance_topology", "rebalance", {"name": sub["name"],
                                                                         "wait_s": sub["rebalance_wait_s"]})
        if sub["kill_at"] is not None:
            yield from self.sleep(max(0.0, sub["kill_at"] - self.now))
            yield from self._request("kill_topology", "kill", {"name": sub["name"], "wait_s": sub["kill_wait_s"]})

    def _request(self, kind: str, op: str, body: dict[str, Any]) -> Generator:
        p = self.params
        seeds = p["nimbuses"]
        attempt = 0
        cursor = 0  # the next seed to try when no leader is known
        misses = 0  # failed tries since the last turn of the seeds
        while True:
            attempt += 1
            target = self.leader or seeds[cursor]
            r = yield from self.call(target, kind, body, timeout=p["client_timeout_s"])
            result = "timeout" if r is None else ("ok" if r["ok"] else r["error"])
            self.emit("topology_request", op=op, topology_name=body["name"], attempt=attempt, nimbus=target,
                      result=result, topology=(r or {}).get("topology", ""))
            if result in _DONE:
                return
            leader = (r or {}).get("leader") or None
            if leader is not None and leader != target:
                self.leader = leader
                continue
            self.leader = None
            cursor = (seeds.index(target) + 1) % len(seeds)
            misses += 1
            if misses >= len(seeds):
                misses = 0
                yield from self.sleep(p["client_retry_s"])
