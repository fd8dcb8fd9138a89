"""Topologies as users submit them and as Nimbus schedules them.

Components:

* :data:`COMPONENT_KEYS` / :data:`OWN_KEYS`: the fields of a scenario's ``[[workload.topologies]]`` entry that are
  not Storm conf keys (every other key of an entry is a topology conf key: ``topology.priority``,
  ``topology.scheduler.strategy``, ``topology.worker.max.heap.size.mb``, ...);
* :func:`expand`: the scenario's entries to one submission per topology (``count`` copies named ``<name>-<i>``,
  ``every_s`` apart), msgpack-safe;
* :func:`decide_form`: a submission in the shape of ``clusteremu decide``'s input (``strategies/storm/decide_parse``),
  so that a scenario's topologies are checked by the same code that checks a decide input;
* :func:`build_topology`: a ``StormBase`` (what Nimbus stored for a submitted topology) to the scheduler's
  :class:`~clusteremu.strategies.storm.topology.Topology`, with the topology conf Storm would give it: the daemon
  conf's topology keys (``defaults.yaml`` + ``storm.yaml``) overridden by the topology's own;
* :func:`component_summary`: the components and their inputs (the topology's edges) as the trace records them.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from clusteremu.strategies.storm.config import KEYS, TOPOLOGY_SUBMITTER_USER
from clusteremu.strategies.storm.topology import Component, Topology

__all__ = ["COMPONENT_KEYS", "OWN_KEYS", "build_topology", "component_summary", "decide_form", "expand"]

#: fields of a component entry: identity and edges (the rest are Storm's per-component resource keys)
COMPONENT_KEYS = ("id", "type", "parallelism", "inputs")
#: fields of a topology entry that are the emulator's, not Storm conf keys
OWN_KEYS = ("name", "user", "submit_at_s", "rebalance_at_s", "rebalance_wait_s", "kill_at_s", "kill_wait_s", "count",
            "every_s", "components")

#: topology-scope conf keys: the daemon conf supplies their defaults to every topology
_TOPOLOGY_SCOPE = tuple(k.name for k in KEYS.values() if k.scope == "topology")


def expand(entries: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One submission per topology, in entry order: ``{"name", "user", "submit_at", "rebalance_at" and "kill_at"
    (None: never), "rebalance_wait_s" and "kill_wait_s" (None: topology.message.timeout.secs), "conf": {Storm
    topology keys}, "components": [{...}]}``."""
    out = []
    for e in entries:
        conf = {k: v for k, v in e.items() if k not in OWN_KEYS}
        n = int(e["count"])
        for i in range(n):
            name = e["name"] if n == 1 else f"{e['name']}-{i + 1}"
            shift = i * float(e["every_s"])
            out.append({
                "name": name, "user": e["user"], "submit_at": float(e["submit_at_s"]) + shift,
                "kill_at": None if e["kill_at_s"] is None else float(e["kill_at_s"]) + shift,
                "kill_wait_s": e["kill_wait_s"],
                "rebalance_at": None if e["rebalance_at_s"] is None else float(e["rebalance_at_s"]) + shift,
                "rebalance_wait_s": e["rebalance_wait_s"],
                "conf": dict(conf), "components": [dict(c) for c in e["components"]],
            })
    return out


def decide_form(sub: Mapping[str, Any], launch_secs: int = 0) -> dict[str, Any]:
    """The submission as a topology of ``clusteremu decide``'s input (id = name)."""
    return {"id": sub["name"], "name": sub["name"], TOPOLOGY_SUBMITTER_USER: sub["user"],
            "launchTimeSecs": launch_secs, **sub["conf"], "components": [dict(c) for c in sub["components"]]}


def build_topology(base: Mapping[str, Any], daemon_conf: Mapping[str, Any]) -> Topology:
    """The scheduler's view of a stored topology (``base``: ``{"id", "name", "user", "launch_secs", "conf",
    "components"}``)."""
    conf = {k: daemon_conf[k] for k in _TOPOLOGY_SCOPE if k in daemon_conf}
    conf.update(base["conf"])
    components = [Component(c["id"], int(c["parallelism"]), c["type"], tuple(c.get("inputs") or ()), None,
                            {k: v for k, v in c.items() if k not in COMPONENT_KEYS})
                  for c in base["components"]]
    return Topology(base["id"], components, conf, name=base["name"], user=base["user"],
                    launch_time=int(base["launch_secs"]))


def component_summary(base: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``[{"id", "type", "parallelism", "inputs"}]``: the topology's components and edges (input → component)."""
    return [{"id": c["id"], "type": c["type"], "parallelism": int(c["parallelism"]),
             "inputs": list(c.get("inputs") or ())} for c in base["components"]]
