"""Failure messages of the timing assertions: the offending events at their virtual times, with context.

A failed timing assertion is only useful if it shows what happened, so each offending event is printed with a
few events of any kind before and after it (the trace around it, in canonical order), the offending lines
marked ``>>`` and annotated with why they offend.
"""
from __future__ import annotations

import math
import os
from typing import Any, Callable, Iterable, Sequence

from clusteremu.emulator.trace.query import Trace, Window
from clusteremu.emulator.trace.reader import Event

#: How many offending events a message shows in full (the rest are counted).
SHOW = 5
#: Events of context printed on each side of an offending event.
CONTEXT = 3


def fmt_time(t: float) -> str:
    return f"t={t:.6f}" if math.isfinite(t) else f"t={t}"


def fmt_value(v: Any) -> str:
    if isinstance(v, float):
        return repr(v) if not math.isfinite(v) else f"{v:.6g}"
    if isinstance(v, dict) and len(v) > 6:
        return "{" + ", ".join(f"{k!r}: {fmt_value(x)}" for k, x in list(v.items())[:6]) + ", ...}"
    return repr(v)


def fmt_event(ev: Event) -> str:
    fields = ", ".join(f"{k}={fmt_value(v)}" for k, v in ev.fields.items())
    return f"{fmt_time(ev.t)}  {ev.agent}  {ev.kind}" + (f"  {fields}" if fields else "")


def fmt_window(within: Window) -> str:
    lo, hi = within if within is not None else (None, None)
    return f"[{'-inf' if lo is None else f'{lo:g}'}, {'+inf' if hi is None else f'{hi:g}'}] s"


def fmt_predicate(fn: Callable[..., Any]) -> str:
    """A predicate as the reader of a failure can find it: its name, or where a lambda was written."""
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__name__", None) or repr(fn)
    if code is not None:
        return f"{name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"
    return name


def fmt_selector(kind: Any = None, entity: str | None = None, within: Window = None, where: Callable | None = None) -> str:
    """The filters of an assertion in words: ``load_report (entity=broker-1, within [0, 60] s, where ...)``."""
    if kind is None:
        what = "any event"
    elif callable(kind):
        what = f"events where {fmt_predicate(kind)}"
    elif isinstance(kind, str):
        what = kind
    else:
        what = " or ".join(kind)
    extra = []
    if entity is not None:
        extra.append(f"entity={entity}")
    if within is not None:
        extra.append(f"within {fmt_window(within)}")
    if where is not None:
        extra.append(f"where {fmt_predicate(where)}")
    return what + (f" ({', '.join(extra)})" if extra else "")


def show(
    trace: Trace,
    focus: Sequence[Event],
    notes: dict[int, str] | None = None,
    *,
    limit: int = SHOW,
    context: int = CONTEXT,
) -> str:
    """The first ``limit`` focus events with ``context`` events around each; overlapping blocks are merged.
    ``notes`` maps ``id(event)`` to a remark printed after the event's line."""
    notes = notes or {}
    focus = sorted(focus, key=trace.position)
    shown = focus[:limit]
    # Offending events that fall inside another one's context are marked too, and not counted as "more".
    marked = {id(e) for e in focus}
    spans: list[list[int]] = []
    for ev in shown:
        i = trace.position(ev)
        lo, hi = max(0, i - context), min(len(trace.events) - 1, i + context)
        if spans and lo <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], hi)
        else:
            spans.append([lo, hi])
    lines: list[str] = []
    printed: set[int] = set()
    for n, (lo, hi) in enumerate(spans):
        if n:
            lines.append("      ...")
        for ev in trace.events[lo : hi + 1]:
            printed.add(id(ev))
            mark = ">>" if id(ev) in marked else "  "
            note = notes.get(id(ev))
            lines.append(f"  {mark}  {fmt_event(ev)}" + (f"    <-- {note}" if note else ""))
    rest = [e for e in focus if id(e) not in printed]
    if rest:
        lines.append(f"  ... and {len(rest)} more at: " + ", ".join(fmt_time(e.t) for e in rest[:20])
                     + (" ..." if len(rest) > 20 else ""))
    return "\n".join(lines)


def kinds_summary(trace: Trace, limit: int = 12) -> str:
    """The kinds in the trace with their counts, for messages where nothing matched."""
    items = list(trace.kinds.items())
    text = ", ".join(f"{k}×{n}" for k, n in items[:limit])
    return text + (", ..." if len(items) > limit else "") if items else "no events at all"


def listing(events: Iterable[Event]) -> str:
    return "\n".join(f"      {fmt_event(e)}" for e in events)
