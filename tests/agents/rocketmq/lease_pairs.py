"""One small RocketMQ cluster run twice, its periodic messages one by one and as kernel leases: the two runs and
what the comparisons of both test files read of them."""
from __future__ import annotations

from typing import Any, Callable, Iterable

from clusteremu.agents.rocketmq.views import RocketMQViews
from clusteremu.emulator.trace.query import Trace


def paired_runs(emulate: Callable[..., Any], scenario: dict, messages: dict, leases: dict) -> dict[str, Any]:
    """``{"messages": run, "lease": run}`` of ``scenario`` with each set of overrides (the plugin's run cache runs
    each once for a module's tests)."""
    return {name: emulate(scenario, **keys) for name, keys in (("messages", messages), ("lease", leases))}


def settled_alike(runs: dict[str, Any], times: Iterable[float]) -> tuple[Trace, Trace]:
    """Assert that both runs hold the same allocation at each of ``times``; their traces (messages, lease)."""
    one, lease = Trace(runs["messages"]), Trace(runs["lease"])
    vo, vl = RocketMQViews(one), RocketMQViews(lease)
    for t in times:
        assert vl.allocation_at(t) == vo.allocation_at(t), t
    return one, lease


def channel_expiries(trace: Trace) -> dict[tuple[str, str, str], float]:
    """When each broker expired each consumer's channel, and why: (broker, consumer, cause) -> t."""
    return {(e.agent, e.consumer, e.cause): e.t for e in trace.select("channel_expired")}


def takes(trace: Trace) -> list[tuple[str, str, str, float, float]]:
    """Every take after t = 0, sorted: (queue, client id, where its offset came from, offset, t)."""
    return sorted((e.queue, e.cid, e.offset_source, e.offset, e.t)
                  for e in trace.select("queue_taken", within=(1e-9, None)))
