"""Pulsar ``decide``'s output: the decisions of each step and, with ``--explain``, why.

Contents: :class:`StepResult` (one step's decisions, TransferShedder's outcome, the shedder's explanation),
:func:`step_json` (a step's JSON, in the shapes documented in :mod:`.decide`), :func:`explain_json` (an explanation
summarised per broker), :func:`print_table` (the rich tables), :func:`print_explain_stderr` (the explanation as text
on stderr, for the envelope's JSON output, whose shape must not change).

Per broker, the rule that fired is the last record about it whose rule decides something; records that only give
figures (:data:`INFORMATIVE_RULES`: a broker's load, score, traffic, pairing, a bundle taken) add their figures.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import Any

from clusteremu.strategies.pulsar.explain import Explain, ExplainRecord
from clusteremu.strategies.pulsar.extensible import UnloadResult

__all__ = ["INFORMATIVE_RULES", "StepResult", "explain_json", "print_explain_stderr", "print_table", "step_json"]

#: rules of records that give figures without deciding anything about the broker
INFORMATIVE_RULES = frozenset({"load", "traffic", "score", "paired", "bundle"})


@dataclass
class StepResult:
    """One step: its decisions (``{"broker", "bundle", "destination"[, "reason"]}``), TransferShedder's outcome,
    and the shedder's explanation (``None`` without ``--explain``)."""

    index: int
    source: str
    time: int | None
    format: str = ""
    decisions: list[dict[str, Any]] = field(default_factory=list)
    outcome: UnloadResult | None = None
    explain: Explain | None = None


def _brokers(records: list[ExplainRecord]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for record in records:
        if record.broker is None:
            continue
        entry = out.setdefault(record.broker, {"rule": None, "figures": {}})
        entry["figures"].update(record.to_json()["figures"])
        if record.rule not in INFORMATIVE_RULES:
            entry["rule"] = record.rule
    return out


def explain_json(explain: Explain) -> dict[str, Any]:
    """``{"records": [...], "cluster": {figures}, "brokers": {broker: {"rule", "figures"}}}``."""
    cluster: dict[str, Any] = {}
    for record in explain:
        if record.broker is None:
            cluster.update(record.to_json()["figures"])
    return {"records": [r.to_json() for r in explain], "cluster": cluster, "brokers": _brokers(list(explain))}


def step_json(result: StepResult, envelope: bool) -> Any:
    """The step's JSON: the envelope's list of decisions (each with an ``"explain"`` key about its broker when
    explained), or the step object of the other formats (see :mod:`.decide`)."""
    if envelope:
        out = []
        for decision in result.decisions:
            item = dict(decision)
            if result.explain is not None:
                item["explain"] = [r.to_json() for r in result.explain if r.broker == decision["broker"]]
            out.append(item)
        return out
    step: dict[str, Any] = {"step": result.index, "format": result.format, "source": result.source,
                            "time": result.time, "decisions": result.decisions}
    if result.outcome is not None:
        step["outcome"] = {"label": result.outcome.label.value,
                           "reason": None if result.outcome.reason is None else result.outcome.reason.value}
        if result.outcome.error is not None:
            step["outcome"]["error"] = result.outcome.error
    if result.explain is not None:
        step["explain"] = explain_json(result.explain)
    return step


def print_explain_stderr(results: list[StepResult]) -> None:
    """Every record as ``explain [step i] <broker or cluster> <rule>: <log>`` on stderr."""
    for result in results:
        for record in result.explain or ():
            print(f"explain [step {result.index}] {record.broker or '(cluster)'} {record.rule}: {record.log}",
                  file=sys.stderr)


def _figure(value: Any) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.6g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_figure(v)}" for k, v in value.items()) + "}"
    return str(value)


def _figures(figures: dict[str, Any]) -> str:
    return "\n".join(f"{k}={_figure(v)}" for k, v in figures.items())


def print_table(results: list[StepResult], name: str, fmt: str, path: str, explain: bool) -> None:
    """The decisions (and, with ``explain``, per step a table of the reasons) as rich tables on stdout."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    table = Table(title=Text(f"{name} on {fmt} ({path}): bundles to unload"))
    table.add_column("step", justify="right")
    table.add_column("broker", overflow="fold")
    table.add_column("bundle", overflow="fold")
    table.add_column("destination", overflow="fold")
    transfer = any(r.outcome is not None for r in results)
    if transfer:
        table.add_column("reason", overflow="fold")
    for r in results:
        if not r.decisions:
            why = "-"
            if r.outcome is not None and r.outcome.reason is not None:
                why = f"{r.outcome.label.value}: {r.outcome.reason.value}"
            table.add_row(str(r.index), "-", "(nothing to unload)", "-", *([why] if transfer else []))
        for d in r.decisions:
            table.add_row(str(r.index), Text(d["broker"]), Text(d["bundle"]),
                          Text(d["destination"] or "(placement decides)"),
                          *([d.get("reason") or "-"] if transfer else []))
    console.print(table)
    if not explain:
        return
    for r in results:
        if r.explain is None:
            continue
        summary = Table(title=Text(f"why, per broker: step {r.index} ({r.source})"), show_lines=True)
        summary.add_column("broker", overflow="fold")
        summary.add_column("rule that fired", overflow="fold")
        summary.add_column("figures", overflow="fold")
        cluster: dict[str, Any] = {}
        for record in r.explain:
            if record.broker is None:
                cluster.update(record.to_json()["figures"])
        if cluster:
            summary.add_row("(cluster)", "-", Text(_figures(cluster)))
        for broker, entry in _brokers(list(r.explain)).items():
            summary.add_row(Text(broker), entry["rule"] or "-", Text(_figures(entry["figures"])))
        console.print(summary)
        console.print(Text(f"step {r.index}: Pulsar's log lines (in parentheses: lines Pulsar does not log)"))
        for record in r.explain:
            log = record.log if record.pulsar_log else f"({record.log})"
            # one line each, never wrapped: they are read (and grepped) as Pulsar's log
            console.print(Text(f"  {record.broker or '(cluster)'} [{record.rule}] {log}"), soft_wrap=True)
