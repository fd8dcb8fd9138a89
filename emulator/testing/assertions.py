"""Timing assertions over a finished run, written the way the behaviour is said.

Every helper takes the run first (a :class:`~clusteremu.emulator.trace.reader.Run`, a run directory, or a
:class:`~clusteremu.emulator.trace.query.Trace`), then what to look at — an event kind (or several) and the filters of
:mod:`clusteremu.emulator.trace.query` (``entity=``, ``within=(start, end)``, ``where=``) — then the expectation. On success
it returns what it found (events or intervals), so a test can go on from there; on failure it raises
``AssertionError`` whose message shows the offending events at their virtual times with the trace around them.

Guards against tests that cannot fail:

* The run must be complete (finished, every segment intact): a truncated trace would make ``assert_never``
  pass on what is missing. Pass ``Trace(run, allow_partial=True)`` to assert over a partial trace on purpose.
* A kind that is neither declared (:mod:`clusteremu.emulator.trace.kinds`) nor present in the run is refused with
  ``ValueError`` — a misspelt kind would otherwise match nothing and pass.
* ``assert_always`` needs at least one matching event, ``assert_eventually`` at least one trigger,
  ``assert_interval`` at least one interval, ``assert_before`` both events, unless told otherwise.
"""
from __future__ import annotations

import bisect
import math
from typing import Any, Callable, Iterable, NoReturn

from clusteremu.emulator.trace.kinds import check_kind
from clusteremu.emulator.trace.query import Interval, Kinds, Predicate, RunLike, Trace, Window, trace_of
from clusteremu.emulator.trace.reader import Event

from .explain import fmt_predicate, fmt_selector, fmt_time, fmt_window, kinds_summary, show

#: What names a trigger or an anchor: an event kind, or a predicate on events.
Selector = str | Callable[[Event], bool]


def assert_count(
    run: RunLike,
    kind: Kinds,
    *,
    exactly: int | None = None,
    at_least: int | None = None,
    at_most: int | None = None,
    entity: str | None = None,
    within: Window = None,
    where: Predicate | None = None,
) -> list[Event]:
    """The number of matching events is ``exactly`` n, or between ``at_least`` and ``at_most`` (inclusive).

    >>> assert_count(run, "bundle_unloaded", at_most=1, within=(0, 30 * 60))
    """
    __tracebackhide__ = True
    if exactly is None and at_least is None and at_most is None:
        raise TypeError("assert_count needs exactly=, at_least= or at_most=")
    if exactly is not None and (at_least is not None or at_most is not None):
        raise TypeError("assert_count takes exactly= alone, or at_least=/at_most=")
    lo = exactly if exactly is not None else at_least
    hi = exactly if exactly is not None else at_most
    trace = _trace(run, kind)
    found = trace.select(kind, entity=entity, within=within, where=where)
    n = len(found)
    if (lo is None or n >= lo) and (hi is None or n <= hi):
        return found
    if exactly is not None:
        want = f"exactly {exactly}"
    else:
        want = " and ".join(p for p in (f"at least {lo}" if lo is not None else "", f"at most {hi}" if hi is not None else "") if p)
    head = f"expected {want} {fmt_selector(kind, entity, within, where)}, found {n}"
    if not found:
        raise AssertionError(f"{head}.\n  The trace has: {kinds_summary(trace)}")
    notes = {}
    if hi is not None and n > hi:
        for i, ev in enumerate(found[hi:], start=hi + 1):
            notes[id(ev)] = f"#{i}, beyond the {hi} allowed"
        focus = found[hi:]
    else:
        focus = found
    _fail(f"{head}:", trace, focus, notes)


def assert_never(
    run: RunLike,
    kind: Kinds,
    *,
    where: Predicate | None = None,
    entity: str | None = None,
    within: Window = None,
) -> None:
    """No matching event occurs.

    >>> assert_never(run, "load_report", where=lambda e: not math.isfinite(e.cpu))
    """
    __tracebackhide__ = True
    trace = _trace(run, kind)
    found = trace.select(kind, entity=entity, within=within, where=where)
    if found:
        _fail(f"expected no {fmt_selector(kind, entity, within, where)}, found {len(found)}:", trace, found)


def assert_always(
    run: RunLike,
    kind: Kinds,
    where: Predicate,
    *,
    entity: str | None = None,
    within: Window = None,
    allow_empty: bool = False,
) -> list[Event]:
    """Every matching event satisfies ``where`` (and there is at least one, unless ``allow_empty``).

    >>> assert_always(run, "heartbeat_received", lambda e: e.gap_s < 10, entity="member-1")
    """
    __tracebackhide__ = True
    trace = _trace(run, kind)
    found = trace.select(kind, entity=entity, within=within)
    if not found and not allow_empty:
        raise AssertionError(
            f"expected every {fmt_selector(kind, entity, within)} to satisfy {fmt_predicate(where)}, but there is "
            f"none (pass allow_empty=True if that is fine).\n  The trace has: {kinds_summary(trace)}"
        )
    bad = [e for e in found if not where(e)]
    if bad:
        notes = {id(e): f"fails {fmt_predicate(where)}" for e in bad}
        _fail(
            f"expected every {fmt_selector(kind, entity, within)} to satisfy {fmt_predicate(where)}; "
            f"{len(bad)} of {len(found)} do not:",
            trace,
            bad,
            notes,
        )
    return found


def assert_eventually(
    run: RunLike,
    kind: Kinds,
    *,
    within: float | None = None,
    after: Selector | None = None,
    entity: str | None = None,
    where: Predicate | None = None,
    same_entity: bool = False,
    require_trigger: bool = True,
) -> list[Event]:
    """A matching event follows every occurrence of the trigger ``after`` within ``within`` seconds.

    ``after`` is an event kind or a predicate on events; None means the start of the run (t = 0). A response
    must come after its trigger in canonical order and at most ``within`` seconds later (None: by the end of
    the run). With ``same_entity``, it must be about the trigger's entity (:func:`entity_of`). When the run
    ends before a trigger's deadline without a response, that is a failure too: run longer. Returns the first
    response to each trigger.

    >>> assert_eventually(run, "leader_elected", within=35, after="agent_stopped")
    >>> assert_eventually(run, "session_restored", after="session_expired", same_entity=True)
    """
    __tracebackhide__ = True
    trace = _trace(run, kind, after if isinstance(after, str) else None)
    if within is not None and not within >= 0:
        raise ValueError(f"within must be a number of seconds >= 0, got {within!r}")
    responses = trace.positions(kind, entity=entity, where=where)
    what = fmt_selector(kind, entity, None, where)
    limit = f"within {within:g} s" if within is not None else "by the end of the run"
    if after is None:
        deadline = math.inf if within is None else within
        hit = next((i for i in responses if trace.times[i] <= deadline), None)
        if hit is not None:
            return [trace.events[hit]]
        first = trace.events[responses[0]] if responses else None
        late = f"; the first came at {fmt_time(first.t)}" if first is not None else "; there is none"
        end = f" (the run ended at t={trace.end:g}, before the deadline)" if within is not None and trace.end < within else ""
        if first is None:
            raise AssertionError(f"expected {what} {limit} of the start of the run{late}{end}.\n  The trace has: {kinds_summary(trace)}")
        _fail(f"expected {what} {limit} of the start of the run{late}{end}:", trace, [first], {id(first): "late"})

    triggers = _selected(trace, after)
    if not triggers:
        if require_trigger:
            raise AssertionError(
                f"the trigger {_selector_text(after)} never occurs, so nothing can be checked "
                f"(pass require_trigger=False if that is fine).\n  The trace has: {kinds_summary(trace)}"
            )
        return []
    out: list[Event] = []
    missed: list[Event] = []
    notes: dict[int, str] = {}
    for trig in triggers:
        p = trace.position(trig)
        deadline = math.inf if within is None else trig.t + within
        key = trace.entity_of(trig)
        found = None
        late = None
        for j in responses[bisect.bisect_right(responses, p) :]:
            ev = trace.events[j]
            if same_entity and trace.entity_of(ev) != key:
                continue
            if ev.t <= deadline:
                found = ev
            else:
                late = ev
            break
        if found is not None:
            out.append(found)
            continue
        missed.append(trig)
        if late is not None:
            notes[id(trig)] = f"next {_kinds_text(kind)} at {fmt_time(late.t)}, {late.t - trig.t:.6g} s later"
        elif deadline > trace.end:
            notes[id(trig)] = f"none by the end of the run at t={trace.end:g}, before the deadline t={deadline:g}"
        else:
            notes[id(trig)] = "none after it"
        if within is not None:
            notes[id(trig)] += f" (deadline {fmt_time(deadline)})"
    if missed:
        scope = " about the same entity" if same_entity else ""
        _fail(
            f"expected {what}{scope} {limit} after every {_selector_text(after)}; "
            f"{len(missed)} of {len(triggers)} trigger(s) had none:",
            trace,
            missed,
            notes,
        )
    return out


def assert_interval(
    run: RunLike,
    kind: Kinds,
    *,
    at_least: float | None = None,
    at_most: float | None = None,
    entity: str | None = None,
    within: Window = None,
    where: Predicate | None = None,
    by: str | Callable[[Event], Any] | None = None,
) -> list[Interval]:
    """Every interval between successive matching events of one entity lies in [``at_least``, ``at_most``].

    Intervals are taken per entity (:func:`entity_of`, or ``by``), only between events inside ``within``; there
    must be at least one. Silence after the last event is not an interval: check it with ``assert_eventually``
    or ``assert_count`` over a window.

    >>> assert_interval(run, "load_report", entity="broker-1", at_least=55, at_most=65)
    """
    __tracebackhide__ = True
    if at_least is None and at_most is None:
        raise TypeError("assert_interval needs at_least= or at_most=")
    trace = _trace(run, kind)
    gaps = trace.intervals(kind, entity=entity, within=within, where=where, by=by)
    what = fmt_selector(kind, entity, within, where)
    bounds = " and ".join(
        p for p in (f">= {at_least:g} s" if at_least is not None else "", f"<= {at_most:g} s" if at_most is not None else "") if p
    )
    if not gaps:
        n = trace.count(kind, entity=entity, within=within, where=where)
        raise AssertionError(
            f"expected intervals between successive {what} {bounds}, but there are {n} such events per entity at "
            f"most one, so no interval.\n  The trace has: {kinds_summary(trace)}"
        )
    bad = [g for g in gaps if (at_least is not None and g.seconds < at_least) or (at_most is not None and g.seconds > at_most)]
    if bad:
        focus = [g.after for g in bad]
        notes = {id(g.after): f"{g.seconds:.6g} s after the previous one of {g.entity} at {fmt_time(g.before.t)}" for g in bad}
        shortest = min(g.seconds for g in gaps)
        longest = max(g.seconds for g in gaps)
        _fail(
            f"expected intervals between successive {what} {bounds}; {len(bad)} of {len(gaps)} are not "
            f"(observed {shortest:.6g} .. {longest:.6g} s):",
            trace,
            focus,
            notes,
        )
    return gaps


def assert_before(
    run: RunLike,
    earlier: Selector,
    later: Selector,
    *,
    entity: str | None = None,
    within: Window = None,
    same_entity: bool = False,
) -> tuple[Event, Event]:
    """``earlier`` happens, ``later`` happens, and the first ``earlier`` precedes the first ``later``.

    Each is an event kind or a predicate on events. With ``same_entity``, the rule holds per entity: each
    entity's first ``later`` is preceded by an ``earlier`` of the same entity. Returns the first pair.

    >>> assert_before(run, "session_expired", "session_restored", same_entity=True)
    """
    __tracebackhide__ = True
    trace = _trace(run, *(s for s in (earlier, later) if isinstance(s, str)))
    first_e = _selected(trace, earlier, entity, within)
    first_l = _selected(trace, later, entity, within)
    head = f"expected {_selector_text(earlier)} before {_selector_text(later)}" + (
        f" (entity={entity})" if entity else ""
    ) + (f" within {fmt_window(within)}" if within is not None else "")
    if not first_e or not first_l:
        missing = " and ".join(_selector_text(s) for s, f in ((earlier, first_e), (later, first_l)) if not f)
        raise AssertionError(f"{head}, but there is no {missing}.\n  The trace has: {kinds_summary(trace)}")
    if same_entity:
        return _before_per_entity(trace, head, earlier, later, first_e, first_l)
    a, b = first_e[0], first_l[0]
    if trace.position(a) > trace.position(b):
        _fail(f"{head}, but the first {_selector_text(later)} comes first:", trace, [b, a],
              {id(b): "first " + _selector_text(later), id(a): "first " + _selector_text(earlier)})
    return a, b


def _before_per_entity(
    trace: Trace, head: str, earlier: Selector, later: Selector, first_e: list[Event], first_l: list[Event]
) -> tuple[Event, Event]:
    __tracebackhide__ = True
    seen: dict[str, Event] = {}
    for ev in first_e:
        seen.setdefault(trace.entity_of(ev), ev)
    bad: list[Event] = []
    notes: dict[int, str] = {}
    done: set[str] = set()
    pair = None
    for ev in first_l:
        key = trace.entity_of(ev)
        if key in done:
            continue
        done.add(key)
        prior = seen.get(key)
        if prior is None or trace.position(prior) > trace.position(ev):
            bad.append(ev)
            notes[id(ev)] = (
                f"no {_selector_text(earlier)} of {key} before it"
                + (f" (first at {fmt_time(prior.t)})" if prior is not None else "")
            )
        elif pair is None:
            pair = (prior, ev)
    if bad:
        _fail(f"{head} for the same entity; {len(bad)} entit{'y' if len(bad) == 1 else 'ies'} not:", trace, bad, notes)
    assert pair is not None
    return pair


# -- helpers --------------------------------------------------------------------------------------------------
def _trace(run: RunLike, *kinds: Kinds) -> Trace:
    __tracebackhide__ = True
    trace = trace_of(run)
    if not trace.complete and not trace.allow_partial:
        problems = "; ".join(str(p) for p in trace.run.problems[:3]) or "the manifest says it did not finish"
        raise AssertionError(
            f"run {trace.run.dir} is incomplete ({problems}); assertions over it could pass on what is missing. "
            "Use Trace(run, allow_partial=True) to assert over a partial trace on purpose."
        )
    for kind in kinds:
        for k in (kind,) if isinstance(kind, str) else (kind or ()):
            _check_known(trace, k)
    return trace


def _check_known(trace: Trace, kind: str) -> None:
    if kind in trace.kinds or _declared(kind):
        return
    # The run's model may not be imported in this process (a run read from disk): its declarations live there.
    model = trace.manifest.get("scenario", {}).get("scenario", {}).get("model")
    try:
        from clusteremu.emulator.models import declare_events, model_names

        if model in model_names():
            declare_events(model)
    except Exception:  # a model that cannot be imported here only loses us this check's precision
        pass
    if not _declared(kind):
        raise ValueError(
            f"unknown event kind {kind!r}: it is not declared (see `clusteremu events`) and does not occur in "
            f"{trace.run.dir}. The trace has: {kinds_summary(trace)}"
        )


def _declared(kind: str) -> bool:
    try:
        check_kind(kind)
    except KeyError:
        return False
    return True


def _selected(trace: Trace, sel: Selector, entity: str | None = None, within: Window = None) -> list[Event]:
    if callable(sel):
        return trace.select(entity=entity, within=within, where=sel)
    return trace.select(sel, entity=entity, within=within)


def _selector_text(sel: Selector | None) -> str:
    if sel is None:
        return "start of the run"
    return fmt_predicate(sel) if callable(sel) else sel


def _kinds_text(kind: Kinds) -> str:
    return "event" if kind is None else kind if isinstance(kind, str) else "/".join(kind)


def _fail(head: str, trace: Trace, focus: Iterable[Event], notes: dict[int, str] | None = None) -> NoReturn:
    __tracebackhide__ = True
    raise AssertionError(f"{head}\n{show(trace, list(focus), notes)}")


__all__ = [
    "assert_before",
    "assert_count",
    "assert_eventually",
    "assert_interval",
    "assert_always",
    "assert_never",
]
