"""Event kinds: every kind the emulator can write is declared here or next to the code that writes it.

A declaration names the kind, its fields (name → type name: ``float``, ``int``, ``str``, ``bool``, ``list``,
``dict``, with ``?`` for optional) and what it means. A kind may be written in rows (``per_row``): one record
carries the fields every row shares and, under :data:`ROWS_KEY`, a list per row field, one item a row (an
observer's sample of all its queues in one record instead of one record a queue); readers give one event per row
(:func:`expand_rows`), all with the record's ``t``, ``agent`` and ``seq``. ``clusteremu events`` prints the
catalogue of all of them (the committed copy is ``docs/events.md``). Emitting an undeclared kind is an error, so
the catalogue cannot fall behind the code. The catalogue's version is ``EVENT_SCHEMA_VERSION``, recorded in every
run's manifest: bump it when a kind's fields change meaning.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EVENT_SCHEMA_VERSION = 3

#: The key of a record's fields under which a kind written in rows keeps its row fields (name → list)
ROWS_KEY = "_rows"

#: Attributes every event has, whatever its kind.
COMMON_FIELDS = ("t", "agent", "seq", "kind")


@dataclass(frozen=True)
class EventKind:
    name: str
    doc: str
    fields: dict[str, str]
    module: str
    #: the fields given per row when the kind is written in rows (each a list in the record), empty otherwise
    per_row: tuple[str, ...] = ()


_KINDS: dict[str, EventKind] = {}

#: Kernel modules that declare kinds of their own but are imported only by the models that use them.
KERNEL_EVENT_MODULES = ("clusteremu.emulator.faults", "clusteremu.emulator.metadata_store", "clusteremu.emulator.election")


def declare(name: str, doc: str, module: str, *, per_row: tuple[str, ...] = (), **fields: str) -> EventKind:
    """Declare an event kind (idempotent for an identical declaration); ``per_row``: the fields of a kind written
    in rows (see the module docs), each typed as one row's value."""
    unknown = [f for f in per_row if f not in fields]
    if unknown:
        raise ValueError(f"event kind {name!r}: per-row fields {unknown} are not among its fields")
    kind = EventKind(name, doc, dict(fields), module, tuple(per_row))
    old = _KINDS.get(name)
    if old is not None and old != kind:
        raise ValueError(f"event kind {name!r} declared twice with different fields ({old.module}, {module})")
    _KINDS[name] = kind
    return kind


def rows_problem(fields: Any) -> str | None:
    """What is wrong with the rows of a record's ``fields`` (a decoded record: lists may be tuples), or None
    when they are fine or the record is not written in rows."""
    if not isinstance(fields, dict) or ROWS_KEY not in fields:
        return None
    rows = fields[ROWS_KEY]
    if not isinstance(rows, dict) or not all(isinstance(v, (list, tuple)) for v in rows.values()):
        return f"{ROWS_KEY} is not a map of lists"
    if len({len(v) for v in rows.values()}) > 1:
        return f"rows of unequal lengths: {', '.join(f'{k} {len(v)}' for k, v in rows.items())}"
    return None


def expand_rows(fields: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a record's ``fields``: one dict a row (the shared fields and that row's items) when the record
    is written in rows, else ``[fields]`` itself. Check :func:`rows_problem` first: the rows' lists must have one
    length."""
    rows = fields.get(ROWS_KEY) if type(fields) is dict else None
    if rows is None:
        return [fields]
    shared = {k: v for k, v in fields.items() if k != ROWS_KEY}
    columns = list(rows.items())
    n = len(columns[0][1]) if columns else 0
    return [{**shared, **{k: v[i] for k, v in columns}} for i in range(n)]


def check_kind(name: str) -> None:
    if name not in _KINDS:
        raise KeyError(f"event kind {name!r} is not declared (see emulator/trace/kinds.py)")


def kernel_kinds_declared() -> None:
    """Import the kernel's declaring modules that a run need not import (the fault schedule, the metadata store)."""
    import importlib

    for module in KERNEL_EVENT_MODULES:
        importlib.import_module(module)


def declared_kinds() -> dict[str, EventKind]:
    """The kinds declared so far in this process (the kernel's, and those of the systems imported), without
    importing any model."""
    kernel_kinds_declared()
    return dict(_KINDS)


def all_kinds() -> dict[str, EventKind]:
    """Every declared kind, after importing the kernel's declaring modules and every model, so that all their
    declarations are loaded."""
    from clusteremu.emulator.models import load_all_models

    kernel_kinds_declared()
    load_all_models()
    return dict(sorted(_KINDS.items()))


def catalogue_markdown() -> str:
    """The catalogue of event kinds as Markdown (what ``docs/events.md`` holds)."""
    lines = [
        "# Event kinds",
        "",
        f"Event schema version {EVENT_SCHEMA_VERSION}. Generated by `clusteremu events`; do not edit by hand.",
        "",
        "Every event has `t` (virtual time, seconds), `agent` (the agent that wrote it), `seq` (that agent's own",
        "sequence number, from 1) and `kind`. The canonical order of a trace is (t, agent, seq).",
        "",
    ]
    for kind in all_kinds().values():
        lines.append(f"## `{kind.name}`")
        lines.append("")
        lines.append(f"{kind.doc} *(written by `{kind.module}`)*")
        lines.append("")
        if kind.per_row:
            lines.append("Written in rows: one record a sample, the fields marked *per row* a list each, one item a "
                         "row; readers give one event per row, with the record's `t`, `agent` and `seq`.")
            lines.append("")
        if kind.fields:
            lines.append("| field | type |")
            lines.append("|---|---|")
            for f, ty in kind.fields.items():
                lines.append(f"| `{f}` | {ty}{' (per row)' if f in kind.per_row else ''} |")
            lines.append("")
    return "\n".join(lines)


_K = "emulator"
declare("agent_started", "The agent started (at its start time).", _K, agent_kind="str")
declare("agent_stopped", "The agent stopped: crashed or shut down; its processes and timers ended.", _K, reason="str")
declare(
    "stw_pause",
    "A stop-the-world pause began: none of the agent's processes run for `duration_s` seconds.",
    _K,
    duration_s="float",
    cause="str",
)
declare(
    "message_dropped",
    "The network dropped a message (written by the pseudo-agent `network`, at the send time).",
    _K,
    src="str",
    dst="str",
    msg_kind="str",
    reason="str",
)
