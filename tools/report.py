"""``report.html`` of an analysed run: its key figures and PNG plots, rendered from the analysis directory alone.

:func:`render_report` reads ``summary.json`` and the Parquet tables that ``clusteremu analyze`` wrote, asks the
run's model for its plot panels (:meth:`clusteremu.tools.analysis.model.ModelFigures.panels`), adds the GC-pause
panels every trace has, and writes one PNG per panel under ``plots/`` plus ``report.html`` referring to them.

What a reader sees is meant not to mislead:

* every figure is printed by :func:`fmt` (the terminal's too): noise below :data:`~clusteremu.tools.analysis.encoding.NOISE`
  is 0, four significant digits, thousands separated, bytes/s as MB/s; a figure the analysis could not compute
  is shown as absent with its reason (``summary.json``'s ``absent``), and a partial run is marked as such;
* gauge series are steps that hold their last value to the end of the run (a load report stays in force until
  the next one), unless the agent stopped;
* time axes carry the run's markers (shedding unloads and other point events as lines, scheduled faults and CPU
  spikes as hatched spans) in greys and black that no series uses, with a legend;
* a panel whose series are those of an earlier panel is not drawn twice: the earlier one's title says so;
* more than :data:`MAX_LINES` agents become their distribution (min, median, max) and the :data:`TOP_LINES`
  agents with the highest peak;
* panel kinds: lines over time (steps or points), bars over time, a histogram, and spans (rows × time intervals
  coloured by category, with marked spans over them).

Plots use matplotlib's Agg backend (no display needed); a series value of ±inf cannot be drawn as a line, so it
is shown as a triangle at the top (or bottom) of the axis.
"""
from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from clusteremu.tools.analysis.encoding import NOISE, meaningful

#: Directory of the PNGs, relative to the analysis directory.
PLOTS_DIR = "plots"
#: At most this many series get a legend entry (a 100-broker legend hides the plot).
MAX_LEGEND = 12
#: Above this many agents a per-agent panel shows their distribution instead of one line each.
MAX_LINES = 20
#: ... and the agents with the highest peak, one line each.
TOP_LINES = 3
#: Series colours: matplotlib's tab10 / tab20 without their greys, which belong to the markers.
SERIES_10 = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf")
SERIES_20 = SERIES_10 + ("#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5")
#: Marker kinds drawn as vertical lines: colour, line style, alpha. Black and greys only: no series uses them.
MARK_STYLE = {
    "unload": ("#000000", "-", 0.7),
    "leader": ("#555555", "--", 0.9),
    "session_expired": ("#000000", "--", 0.9),
    "session_restored": ("#555555", ":", 0.9),
    "agent_stopped": ("#000000", "-.", 0.9),
}
#: Marker kinds drawn as shaded spans: colour, alpha, hatch (hatched greys: never taken for a series).
SPAN_STYLE = {"fault": ("#7f7f7f", 0.22, "//"), "cpu_spike": ("#c7c7c7", 0.45, "\\\\")}
#: Legend entries of the marker kinds (a series may be called "unload" too).
MARK_LABEL = {"unload": "shedding unload", "leader": "leader elected", "fault": "fault (scheduled)",
              "cpu_spike": "CPU spike", "agent_stopped": "agent stopped"}
#: Marked spans of a spans panel (overlap, orphan...): edge colour and hatch, drawn over the categories' bars.
MARK_SPAN_STYLE = (("#000000", "xxxx"), ("#555555", "...."), ("#7f7f7f", "////"))
#: Units shown scaled: the unit a figure or series is declared in → (unit shown, factor).
UNIT_SCALE = {"bytes/s": ("MB/s", 1e-6), "bytes": ("MB", 1e-6)}
#: Progress callback of :func:`render_report`: (stage, done, total).
ReportProgress = Callable[[str, int, int], None]


@dataclass
class Panel:
    """One plot. Over virtual time unless ``x_label`` names another x quantity (a CDF's values, say: no time
    scaling, no run markers, limits from the data). ``style``:

    * ``steps``: named series, each value holding until the next (gauges) and the last one to the end of the run;
    * ``points``: named series of separate points;
    * ``bars``: named series of vertical bars from 0 at their time (events with a length: GC pauses);
    * ``hist``: a histogram of each named series' values (the x axis is ``x_label``; times are ignored);
    * ``spans``: ``rows`` × time, each row's intervals coloured by category (``spans``: row, start, end,
      category) with marked intervals hatched over them (``marks``: row, start, end, mark).

    ``hlines`` are horizontal reference lines; ``note`` is added to the title (what was merged or summarised);
    ``dots`` marks every non-zero point of a steps series (a spike of a tenth of a second is a line no wider than
    a pixel on a 30-minute axis)."""

    name: str
    title: str
    unit: str
    series: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    hlines: list[tuple[float, str]] = field(default_factory=list)
    style: str = "steps"
    x_label: str | None = None
    rows: list[str] = field(default_factory=list)
    spans: list[tuple[str, float, float, str]] = field(default_factory=list)
    marks: list[tuple[str, float, float, str]] = field(default_factory=list)
    note: str = ""
    dots: bool = False

    @classmethod
    def lines(
        cls,
        name: str,
        title: str,
        unit: str,
        series: Mapping[str, tuple[Iterable[float], Iterable[float]]],
        hlines: Sequence[tuple[float, str]] = (),
        style: str = "steps",
        x_label: str | None = None,
    ) -> "Panel":
        arrays = {label: (np.asarray(t, dtype=float), np.asarray(v, dtype=float)) for label, (t, v) in series.items()}
        return cls(name, title, unit, arrays, list(hlines), style, x_label)

    @classmethod
    def per_agent(
        cls,
        name: str,
        title: str,
        unit: str,
        table: pd.DataFrame,
        agent_col: str,
        value_col: str,
        hlines: Sequence[tuple[float, str]] = (),
        style: str = "steps",
        stops: pd.DataFrame | None = None,
    ) -> "Panel":
        """One series per distinct ``agent_col`` (one line per broker), in name order. ``stops`` (columns ``t``
        and ``agent_col``) ends an agent's series at each of those times (a crashed broker's gauge), until its
        next value. Above :data:`MAX_LINES` agents: :func:`distribution_series` instead."""
        table = table[["t", agent_col, value_col]]
        if stops is not None and not stops.empty:
            known = stops[stops[agent_col].isin(table[agent_col].unique())]
            table = pd.concat([table, known[["t", agent_col]].assign(**{value_col: np.nan})], ignore_index=True)
        table = table.sort_values("t", kind="stable")
        agents = table[agent_col].nunique()
        if agents > MAX_LINES:
            series = distribution_series(table, agent_col, value_col, top=TOP_LINES)
            note = f"distribution over {agents} {agent_col}s and the {TOP_LINES} with the highest peak"
            return cls(name, title, unit, series, list(hlines), style, note=note)
        series = {}
        for agent, g in table.groupby(agent_col, sort=True):
            series[str(agent)] = (g["t"].to_numpy(dtype=float), g[value_col].to_numpy(dtype=float))
        return cls(name, title, unit, series, list(hlines), style)

    @classmethod
    def histogram(cls, name: str, title: str, x_label: str, values: Mapping[str, Iterable[float]], unit: str = "count") -> "Panel":
        """A histogram of each named set of values (stacked), over ``x_label``."""
        series = {k: (np.zeros(0), np.asarray(list(v), dtype=float)) for k, v in values.items()}
        return cls(name, title, unit, series, style="hist", x_label=x_label)

    @classmethod
    def span_rows(
        cls,
        name: str,
        title: str,
        rows: Sequence[str],
        spans: Iterable[tuple[str, float, float, str]],
        marks: Iterable[tuple[str, float, float, str]] = (),
        unit: str = "",
    ) -> "Panel":
        """Rows × time intervals: ``spans`` (row, start, end, category) coloured by category, ``marks`` (row,
        start, end, mark) hatched over them; rows top to bottom in the order given."""
        return cls(name, title, unit, style="spans", rows=list(rows),
                   spans=[(str(r), float(a), float(b), str(c)) for r, a, b, c in spans],
                   marks=[(str(r), float(a), float(b), str(m)) for r, a, b, m in marks])

    @property
    def full_title(self) -> str:
        return f"{self.title} — {self.note}" if self.note else self.title


def latest_wide(table: pd.DataFrame, agent_col: str, value_col: str) -> pd.DataFrame:
    """One row per distinct time (index ``t``), one column per agent: the agent's latest value at that time
    (its last row at a time counts; NaN before its first value and while its latest value is NaN)."""
    df = table.reset_index(drop=True)
    pos = pd.DataFrame({"t": df["t"].to_numpy(dtype=float), "a": df[agent_col].astype(str).to_numpy(), "p": np.arange(len(df), dtype=float)})
    pos = pos.drop_duplicates(["t", "a"], keep="last")
    # Forward-fill row positions, not values: a NaN value (a stop) must stay NaN until the next value.
    wide = pos.pivot(index="t", columns="a", values="p").sort_index().ffill()
    idx = wide.to_numpy()
    have = ~np.isnan(idx)
    values = df[value_col].to_numpy(dtype=float)
    out = np.where(have, values[np.where(have, idx, 0).astype(np.int64)], np.nan)
    return pd.DataFrame(out, index=wide.index, columns=list(wide.columns))


def distribution_series(table: pd.DataFrame, agent_col: str, value_col: str, *, top: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``min``, ``median`` and ``max`` over the agents' latest values at every time, and the ``top`` agents by
    peak value, one series each (``top: <agent>``)."""
    wide = latest_wide(table, agent_col, value_col)
    t = wide.index.to_numpy(dtype=float)
    arr = wide.to_numpy()
    n = (~np.isnan(arr)).sum(axis=1)
    series: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    with np.errstate(invalid="ignore"):
        filled_lo = np.where(np.isnan(arr), np.inf, arr)
        filled_hi = np.where(np.isnan(arr), -np.inf, arr)
        series["min"] = (t, np.where(n > 0, filled_lo.min(axis=1), np.nan))
        series["median"] = (t, np.array([np.median(r[~np.isnan(r)]) if k else np.nan for r, k in zip(arr, n)]))
        series["max"] = (t, np.where(n > 0, filled_hi.max(axis=1), np.nan))
    peaks = pd.Series(np.where(np.isnan(arr), -np.inf, arr).max(axis=0) if arr.size else [], index=wide.columns)
    for agent in peaks.sort_values(ascending=False, kind="stable").index[:top]:
        g = table[table[agent_col].astype(str) == agent]
        series[f"top: {agent}"] = (g["t"].to_numpy(dtype=float), g[value_col].to_numpy(dtype=float))
    return series


def same_series(a: Panel, b: Panel) -> bool:
    """Whether two line panels plot the same series: same labels and times, values equal up to floating-point
    noise (a score that is its CPU usage, computed along another path, differs in its last bits)."""
    if a.style != b.style or a.style not in ("steps", "points") or a.x_label != b.x_label or len(a.series) != len(b.series):
        return False
    for (la, (ta, va)), (lb, (tb, vb)) in zip(a.series.items(), b.series.items()):
        if la != lb or not np.array_equal(ta, tb) or va.shape != vb.shape:
            return False
        if not np.allclose(va, vb, rtol=NOISE, atol=NOISE, equal_nan=True):
            return False
    return bool(a.series)


def merge_identical(panels: Sequence[Panel]) -> list[Panel]:
    """``panels`` without those whose series repeat an earlier panel's; that earlier panel's title says so
    ("— same as: CPU usage per broker")."""
    kept: list[Panel] = []
    for p in panels:
        twin = next((k for k in kept if same_series(k, p)), None)
        if twin is None:
            kept.append(p)
        else:
            same = f"same as: {p.title}"
            twin.note = f"{twin.note}; {same}" if twin.note else same
    return kept


def held_to_end(t: np.ndarray, v: np.ndarray, end: float) -> tuple[np.ndarray, np.ndarray]:
    """A step series with a last point at ``end`` holding its last value: a gauge (a load report) stays in force
    until the next one, so its line goes on to the end of the run (a NaN last value — a stopped agent — stays
    NaN: nothing is drawn after it)."""
    if t.size == 0 or t[-1] >= end:
        return t, v
    return np.append(t, end), np.append(v, v[-1])


def _time_scale(end: float) -> tuple[float, str]:
    return (60.0, "virtual time (min)") if end > 1200 else (1.0, "virtual time (s)")


def shown_unit(unit: str) -> tuple[str, float]:
    """The unit a value declared in ``unit`` is shown in, and the factor to it (bytes/s → MB/s)."""
    return UNIT_SCALE.get(unit, (unit, 1.0))


def _palette(n: int) -> tuple[str, ...]:
    return SERIES_10 if n <= len(SERIES_10) else SERIES_20


def draw_panel(panel: Panel, markers: pd.DataFrame, end: float, path: Path) -> None:
    """Draw ``panel`` with the run's markers into the PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    over_time = panel.x_label is None
    scale, xlabel = _time_scale(end) if over_time else (1.0, panel.x_label)
    unit, factor = shown_unit(panel.unit)
    rows = len(panel.rows) if panel.style == "spans" else 0
    height = 3.4 if rows <= 12 else min(3.4 + 0.16 * (rows - 12), 12.0)
    fig, ax = plt.subplots(figsize=(11, height), dpi=100)
    try:
        extra: list[Any] = []
        if panel.style == "spans":
            extra = _draw_spans(ax, panel, scale)
        elif panel.style == "hist":
            _draw_hist(ax, panel, factor)
        else:
            _draw_series(ax, panel, scale, factor, end if over_time else None)
        for y, label in panel.hlines:
            ax.axhline(y * factor, color="#444444", linestyle=":", linewidth=1.0, label=label)
        if over_time:
            _draw_markers(ax, markers, scale)
            ax.set_xlim(0, max(end, 1e-9) / scale)
        if panel.style != "spans":
            ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: fmt(float(y))))
        ax.set_title(panel.full_title, fontsize=11, loc="left")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(unit)
        ax.grid(True, alpha=0.25)
        handles, labels = ax.get_legend_handles_labels()
        handles, labels = extra + handles, [h.get_label() for h in extra] + labels
        if handles:
            ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)


def _draw_series(ax: Any, panel: Panel, scale: float, factor: float, end: float | None) -> None:
    many = len(panel.series) > MAX_LEGEND
    colors = _palette(len(panel.series))
    infinite: list[tuple[np.ndarray, np.ndarray, Any]] = []
    for i, (label, (t, v)) in enumerate(panel.series.items()):
        color = colors[i % len(colors)]
        if panel.style == "steps" and end is not None:
            t, v = held_to_end(t, v, end)
        finite_v = np.where(np.isfinite(v), v, np.nan) * factor
        kwargs = {"color": color, "label": None if many else label, "linewidth": 1.3}
        if panel.style == "points":
            ax.plot(t / scale, finite_v, linestyle="none", marker=".", markersize=4, **kwargs)
        elif panel.style == "bars":
            ax.vlines(t / scale, 0, finite_v, colors=color, linewidth=2.0, label=kwargs["label"])
            ax.plot(t / scale, finite_v, linestyle="none", marker="_", markersize=7, color=color)
        else:
            ax.plot(t / scale, finite_v, drawstyle="steps-post", **kwargs)
            if panel.dots:
                shown = np.nan_to_num(finite_v) != 0
                ax.plot(t[shown] / scale, finite_v[shown], linestyle="none", marker="o", markersize=4, color=color)
        inf = np.isinf(v)
        if inf.any():
            infinite.append((t[inf] / scale, np.sign(v[inf]), color))
    if panel.style == "bars":
        ax.set_ylim(bottom=0)
    if infinite:
        lo, hi = ax.get_ylim()
        for t, sign, color in infinite:
            ax.plot(t, np.where(sign > 0, hi, lo), linestyle="none", marker="^", markersize=8, color=color, clip_on=False)
        ax.plot([], [], linestyle="none", marker="^", color="#444444", label="infinite value")


def _draw_hist(ax: Any, panel: Panel, factor: float) -> None:
    data = [v[np.isfinite(v)] * factor for _t, v in panel.series.values()]
    labels = list(panel.series)
    values = np.concatenate(data) if data else np.zeros(0)
    if values.size == 0:
        return
    lo, hi = float(values.min()), float(values.max())
    bins = np.linspace(lo, hi if hi > lo else lo + 1.0, 31)
    colors = _palette(len(data))
    from matplotlib.ticker import MaxNLocator

    ax.hist(data, bins=bins, stacked=True, color=[colors[i % len(colors)] for i in range(len(data))],
            label=labels if len(labels) <= MAX_LEGEND else None)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts


def _draw_spans(ax: Any, panel: Panel, scale: float) -> list[Any]:
    """Draw the rows' spans and marks; return the legend handles of the categories and marks."""
    from matplotlib.patches import Patch

    y_of = {r: i for i, r in enumerate(panel.rows)}
    categories = list(dict.fromkeys(c for _r, _a, _b, c in panel.spans))
    colors = _palette(len(categories))
    color_of = {c: colors[i % len(colors)] for i, c in enumerate(categories)}
    for cat in categories:
        by_row: dict[int, list[tuple[float, float]]] = {}
        for r, a, b, c in panel.spans:
            if c == cat and r in y_of:
                by_row.setdefault(y_of[r], []).append((a / scale, max(b - a, 0.0) / scale))
        for y, bars in by_row.items():
            ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=color_of[cat], linewidth=0)
    marks = list(dict.fromkeys(m for _r, _a, _b, m in panel.marks))
    style_of = {m: MARK_SPAN_STYLE[i % len(MARK_SPAN_STYLE)] for i, m in enumerate(marks)}
    for r, a, b, m in panel.marks:
        if r in y_of:
            edge, hatch = style_of[m]
            ax.broken_barh([(a / scale, max(b - a, 0.0) / scale)], (y_of[r] - 0.45, 0.9), facecolors="none",
                           edgecolors=edge, hatch=hatch, linewidth=0.8)
    handles = [Patch(facecolor=color_of[c], label=c) for c in categories[:MAX_LEGEND]]
    counts = {m: sum(1 for x in panel.marks if x[3] == m) for m in marks}
    handles += [Patch(facecolor="white", edgecolor=style_of[m][0], hatch=style_of[m][1], label=f"{m} ({counts[m]})") for m in marks]
    n = len(panel.rows)
    step = max(1, math.ceil(n / 30))
    ax.set_yticks(range(0, n, step))
    ax.set_yticklabels(panel.rows[::step], fontsize=7)
    ax.set_ylim(n - 0.5, -0.5)
    return handles


def _draw_markers(ax: Any, markers: pd.DataFrame, scale: float) -> None:
    if markers is None or markers.empty:
        return
    seen: set[str] = set()
    for r in markers.itertuples(index=False):
        kind = r.kind
        label = None if kind in seen else MARK_LABEL.get(kind, kind.replace("_", " "))
        seen.add(kind)
        end_t = r.end_t if r.end_t is not None and not pd.isna(r.end_t) else None
        if kind in SPAN_STYLE and end_t is not None:
            color, alpha, hatch = SPAN_STYLE[kind]
            ax.axvspan(r.t / scale, end_t / scale, facecolor=color, alpha=alpha, hatch=hatch, edgecolor="#333333",
                       linewidth=0, label=label)
        else:
            color, style, alpha = MARK_STYLE.get(kind, ("#7f7f7f", "-", 0.6))
            ax.axvline(r.t / scale, color=color, linestyle=style, linewidth=0.9, alpha=alpha, label=label)


def gc_panels(table: pd.DataFrame | None) -> list[Panel]:
    """Stop-the-world pauses: each one as a bar at its time whose height is its length, one colour per agent
    (per cause above :data:`MAX_LINES` agents), and the histogram of their lengths by cause when they have more
    than one length."""
    if table is None or table.empty:
        return []
    n = len(table)
    by = "agent" if table["agent"].nunique() <= MAX_LINES else "cause"
    bars = {str(k): (g["t"].to_numpy(dtype=float), g["duration_s"].to_numpy(dtype=float))
            for k, g in table.sort_values("t", kind="stable").groupby(by, sort=True)}
    title = f"Stop-the-world pauses over time ({n:,} pause{'s' if n != 1 else ''}; bar height = pause length)"
    if by == "cause":
        title += f", by cause over {table['agent'].nunique()} agents"
    over_time = Panel.lines("gc_pauses", title, "pause (s)", bars, style="bars")
    if table["duration_s"].nunique() < 2:
        return [over_time]  # one length: a histogram would be a single bar saying what the bars already say
    causes = {str(k): g["duration_s"].to_numpy(dtype=float) for k, g in table.groupby("cause", sort=True)}
    hist = Panel.histogram("gc_pause_lengths", "Stop-the-world pause lengths (histogram, by cause)", "pause (s)", causes, unit="pauses")
    return [over_time, hist]


# -- figures as text ---------------------------------------------------------------------------------------------
def fmt(v: Any, unit: str = "") -> str:
    """A figure as the terminal, the report and the comparison tables print it: None as "—"; noise (below
    :data:`~clusteremu.tools.analysis.encoding.NOISE`) as 0; four significant digits, thousands separated, no
    exponent between 0.001 and 10⁶ (larger numbers in full); ``"inf"``/``"nan"`` as written in ``summary.json``.
    With a ``unit``, the value is given in the unit it is shown in, after it (bytes/s as MB/s)."""
    if v is None:
        return "—"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, str):
        if v not in ("inf", "-inf", "nan"):
            return v
        v = float(v)
    shown, factor = shown_unit(unit)
    suffix = f" {shown}" if shown else ""
    if isinstance(v, (int, np.integer)) and factor == 1.0:
        return f"{int(v):,}{suffix}"
    if not isinstance(v, (int, float, np.integer, np.floating)):
        return str(v)
    x = meaningful(float(v) * factor)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return ("∞" if x > 0 else "−∞") + suffix
    a = abs(x)
    if a == 0:
        text = "0"
    elif a >= 1e4:
        text = f"{x:,.0f}"
    elif a >= 1e-3:
        decimals = max(0, 3 - math.floor(math.log10(a)))
        text = f"{x:,.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
    else:
        text = f"{x:.3g}"
    return text + suffix


def lookup(figures: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path of the figures (None where absent)."""
    node: Any = figures
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def show_figure(summary: Mapping[str, Any], path: str, unit: str = "") -> str:
    """The figure at ``path`` of a summary as text: its value (:func:`fmt`), or "— (<reason>)" when the analysis
    recorded why it is absent (``summary["absent"]``); "(partial)" after it when the run is partial."""
    value = lookup(summary.get("figures", {}), path)
    reason = (summary.get("absent") or {}).get(path)
    text = f"— ({reason})" if value is None and reason else fmt(value, unit)
    return f"{text} (partial)" if summary.get("partial") and not (value is None and reason) else text


def coverage(summary: Mapping[str, Any]) -> str:
    """What a partial summary covers, in words ("" for a complete one)."""
    if not summary.get("partial"):
        return ""
    run = summary.get("run", {})
    read_to, until = run.get("end_s"), run.get("until")
    span = f"the trace read to {fmt(read_to)} s" + (f" of {fmt(until)} s" if until is not None and not run.get("complete") else "")
    problems = len(summary.get("problems", []))
    return f"{span}; {problems} problem{'s' if problems != 1 else ''} reading it" if problems else span


def _flatten(prefix: str, value: Any, out: list[tuple[str, str]], absent: Mapping[str, str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out, absent)
    elif isinstance(value, list):
        out.append((prefix, f"{len(value)} item(s)" if value and isinstance(value[0], dict) else ", ".join(fmt(x) for x in value)))
    elif value is None and prefix in absent:
        out.append((prefix, f"— ({absent[prefix]})"))
    else:
        out.append((prefix, fmt(value)))


_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px; color: #222; max-width: 1200px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; }
.meta { color: #555; font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; } td, th { padding: 3px 10px; border-bottom: 1px solid #e4e4e4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.absent { color: #8a6d00; }
.partial { background: #fff3cd; border: 1px solid #e0c36a; padding: 10px 14px; margin: 14px 0; }
.badge { background: #fff3cd; border: 1px solid #e0c36a; border-radius: 3px; padding: 0 4px; font-size: 11px; }
figure { margin: 18px 0; } img { max-width: 100%; border: 1px solid #eee; }
details { margin-top: 20px; font-size: 13px; }
"""


def render_report(analysis_dir: str | Path, progress: ReportProgress | None = None) -> Path:
    """Write ``plots/*.png`` and ``report.html`` in ``analysis_dir`` (which holds ``summary.json`` and the
    tables of an analysis) and return the report's path. ``progress(stage, done, total)`` is told of each
    plot drawn and of the page written."""
    from clusteremu.tools.analysis import figures_for

    adir = Path(analysis_dir)
    summary = json.loads((adir / "summary.json").read_text())
    tables = {}
    for name, fname in summary.get("tables", {}).items():
        p = adir / fname
        if p.exists():
            tables[name] = pd.read_parquet(p)
    run = summary.get("run", {})
    end = float(summary.get("window", {}).get("end_s") or 0.0)
    markers = tables.get("markers", pd.DataFrame(columns=["t", "end_t", "kind", "agent", "label"]))
    model = figures_for(run.get("model", ""))
    panels = merge_identical([*model.panels(tables, summary), *gc_panels(tables.get("gc_pauses"))])
    plots = adir / PLOTS_DIR
    plots.mkdir(exist_ok=True)
    for old in plots.glob("*.png"):
        old.unlink()
    images = []
    for i, panel in enumerate(panels):
        if progress is not None:
            progress(f"plot {panel.name}", i, len(panels))
        path = plots / f"{panel.name}.png"
        draw_panel(panel, markers, end, path)
        images.append((panel, f"{PLOTS_DIR}/{path.name}"))
    if progress is not None:
        progress("report.html", len(panels), len(panels))
    out = adir / "report.html"
    out.write_text(_html(summary, model.headline, images))
    return out


def _html(summary: Mapping[str, Any], headline: Sequence[Any], images: Sequence[tuple[Panel, str]]) -> str:
    e = html.escape
    run = summary.get("run", {})
    figures = summary.get("figures", {})
    absent = summary.get("absent") or {}
    partial = bool(summary.get("partial"))
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>clusteremu report: {e(str(run.get('scenario', '')))}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{e(str(run.get('scenario', 'run')))} — seed {e(fmt(run.get('seed')))}</h1>",
        f'<div class="meta">model {e(str(run.get("model")))} · strategy {e(str(run.get("strategy")))} · '
        f"{e(fmt(run.get('end_s')))} s of virtual time · {e(fmt(figures.get('events', {}).get('total')))} events · "
        f"run directory <code>{e(str(run.get('dir')))}</code></div>",
    ]
    if partial:
        items = "".join(
            f"<li><code>{e(p['file'])}</code> at byte {e(fmt(p['offset']))}: {e(p['reason'])}</li>" for p in summary.get("problems", [])
        )
        parts.append(f'<div class="partial"><b>Partial analysis</b> ({e(coverage(summary))}). Part of the trace could not be '
                     f"read or the run did not finish: every figure covers only what was read and is marked partial; "
                     f"figures that need the whole run are absent, with the reason.<ul>{items}</ul></div>")
    win = summary.get("window", {})
    parts.append(f"<h2>Key figures</h2><p class=\"meta\">settle window: the last {e(fmt(summary.get('options', {}).get('settle_window_s')))} s "
                 f"([{e(fmt(win.get('start_s')))}, {e(fmt(win.get('end_s')))}] s)</p><table>")
    badge = ' <span class="badge">partial</span>' if partial else ""
    for h in headline:
        value = lookup(figures, h.path)
        if value is None and h.path in absent:
            cell = f'<td class="absent">absent: {e(absent[h.path])}</td>'
        else:
            cell = f'<td class="num">{e(fmt(value))}{badge}</td>'
        parts.append(f"<tr><th>{e(h.label)}</th>{cell}<td>{e(h.path)}</td></tr>")
    parts.append("</table>")
    parts.append("<h2>Plots</h2>")
    for panel, src in images:
        parts.append(f'<figure><img src="{e(src)}" alt="{e(panel.full_title)}"></figure>')
    if not images:
        parts.append("<p>No time series in this run.</p>")
    rows: list[tuple[str, str]] = []
    _flatten("", figures, rows, absent)
    parts.append("<details><summary>All figures</summary><table>")
    parts += [f"<tr><td>{e(k)}</td><td class=\"num\">{e(v)}</td></tr>" for k, v in rows]
    parts.append("</table></details></body></html>")
    return "\n".join(parts)
