"""``report.html`` of an analysed run: its key figures and PNG plots, rendered from the analysis directory alone.

:func:`render_report` reads ``summary.json`` and the Parquet tables that ``clusteremu analyze`` wrote, asks the
run's model for its plot panels (:meth:`clusteremu.tools.analysis.model.ModelFigures.panels`), adds the GC-pause panel every
trace has, and writes one PNG per panel under ``plots/`` plus ``report.html`` referring to them. Every time axis
carries the run's markers: shedding unloads and other point events as vertical lines, scheduled faults as
shaded spans. Plots use matplotlib's Agg backend (no display needed); a series value of ±inf cannot be drawn as
a line, so it is shown as a triangle at the top (or bottom) of the axis.
"""
from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

#: Directory of the PNGs, relative to the analysis directory.
PLOTS_DIR = "plots"
#: At most this many series get a legend entry (a 100-broker legend hides the plot).
MAX_LEGEND = 12
#: Marker kinds drawn as lines, with their colour; spans (faults, CPU spikes) are shaded.
MARK_STYLE = {
    "unload": ("#d62728", "-", 0.55),
    "leader": ("#9467bd", "--", 0.8),
    "session_expired": ("#d62728", "--", 0.9),
    "session_restored": ("#2ca02c", ":", 0.9),
    "agent_stopped": ("#000000", "-.", 0.9),
}
SPAN_STYLE = {"fault": ("#ff7f0e", 0.18), "cpu_spike": ("#8c564b", 0.15)}


@dataclass
class Panel:
    """One plot: named series over virtual time, horizontal reference lines, drawn as steps (gauge values hold
    until the next report) or as points. With ``x_label`` the x axis is not time but that quantity (a CDF's
    values, say): no time scaling, no run markers, limits from the data."""

    name: str
    title: str
    unit: str
    series: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    hlines: list[tuple[float, str]] = field(default_factory=list)
    style: str = "steps"  # or "points"
    x_label: str | None = None

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
    ) -> "Panel":
        """One series per distinct ``agent_col`` (one line per broker), in name order."""
        series = {}
        for agent, g in table.sort_values("t", kind="stable").groupby(agent_col, sort=True):
            series[str(agent)] = (g["t"].to_numpy(dtype=float), g[value_col].to_numpy(dtype=float))
        return cls(name, title, unit, series, list(hlines), style)


def _time_scale(end: float) -> tuple[float, str]:
    return (60.0, "virtual time (min)") if end > 1200 else (1.0, "virtual time (s)")


def draw_panel(panel: Panel, markers: pd.DataFrame, end: float, path: Path) -> None:
    """Draw ``panel`` with the run's markers into the PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    over_time = panel.x_label is None
    scale, xlabel = _time_scale(end) if over_time else (1.0, panel.x_label)
    fig, ax = plt.subplots(figsize=(11, 3.4), dpi=100)
    try:
        many = len(panel.series) > MAX_LEGEND
        cmap = plt.get_cmap("tab10" if len(panel.series) <= 10 else "tab20")
        infinite: list[tuple[np.ndarray, np.ndarray, Any]] = []
        for i, (label, (t, v)) in enumerate(panel.series.items()):
            color = cmap(i % cmap.N)
            finite_v = np.where(np.isfinite(v), v, np.nan)
            kwargs = {"color": color, "label": None if many else label, "linewidth": 1.3}
            if panel.style == "points":
                ax.plot(t / scale, finite_v, linestyle="none", marker=".", markersize=4, **kwargs)
            else:
                ax.plot(t / scale, finite_v, drawstyle="steps-post", **kwargs)
            inf = np.isinf(v)
            if inf.any():
                infinite.append((t[inf] / scale, np.sign(v[inf]), color))
        for y, label in panel.hlines:
            ax.axhline(y, color="#444444", linestyle=":", linewidth=1.0, label=label)
        if over_time:
            _draw_markers(ax, markers, scale)
            ax.set_xlim(0, max(end, 1e-9) / scale)
        if infinite:
            lo, hi = ax.get_ylim()
            for t, sign, color in infinite:
                ax.plot(t, np.where(sign > 0, hi, lo), linestyle="none", marker="^", markersize=8, color=color, clip_on=False)
            ax.plot([], [], linestyle="none", marker="^", color="#444444", label="infinite value")
        ax.set_title(panel.title, fontsize=11, loc="left")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(panel.unit)
        ax.grid(True, alpha=0.25)
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
        fig.tight_layout()
        fig.savefig(path, format="png")
    finally:
        plt.close(fig)


def _draw_markers(ax: Any, markers: pd.DataFrame, scale: float) -> None:
    if markers is None or markers.empty:
        return
    seen: set[str] = set()
    for r in markers.itertuples(index=False):
        kind = r.kind
        label = None if kind in seen else kind.replace("_", " ")
        seen.add(kind)
        end_t = r.end_t if r.end_t is not None and not pd.isna(r.end_t) else None
        if kind in SPAN_STYLE and end_t is not None:
            color, alpha = SPAN_STYLE[kind]
            ax.axvspan(r.t / scale, end_t / scale, color=color, alpha=alpha, label=label)
        else:
            color, style, alpha = MARK_STYLE.get(kind, (SPAN_STYLE.get(kind, ("#7f7f7f", 0.0))[0], "-", 0.6))
            ax.axvline(r.t / scale, color=color, linestyle=style, linewidth=0.9, alpha=alpha, label=label)


def gc_panel(table: pd.DataFrame) -> Panel | None:
    """Every stop-the-world pause as a point (length over time), one series per agent."""
    if table is None or table.empty:
        return None
    return Panel.per_agent("gc_pauses", "Stop-the-world pauses", "pause (s)", table, "agent", "duration_s", style="points")


# -- HTML --------------------------------------------------------------------------------------------------------
def _flatten(prefix: str, value: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(value, list):
        out.append((prefix, f"{len(value)} item(s)" if value and isinstance(value[0], dict) else json.dumps(value)))
    else:
        out.append((prefix, fmt(value)))


def fmt(v: Any) -> str:
    """A figure as the report shows it."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e6 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def lookup(figures: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path of the figures (None where absent)."""
    node: Any = figures
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


_CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 24px; color: #222; max-width: 1200px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; }
.meta { color: #555; font-size: 13px; }
table { border-collapse: collapse; font-size: 13px; } td, th { padding: 3px 10px; border-bottom: 1px solid #e4e4e4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.partial { background: #fff3cd; border: 1px solid #e0c36a; padding: 10px 14px; margin: 14px 0; }
figure { margin: 18px 0; } img { max-width: 100%; border: 1px solid #eee; }
details { margin-top: 20px; font-size: 13px; }
"""


def render_report(analysis_dir: str | Path) -> Path:
    """Write ``plots/*.png`` and ``report.html`` in ``analysis_dir`` (which holds ``summary.json`` and the
    tables of an analysis) and return the report's path."""
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
    panels = list(model.panels(tables, summary))
    gc = gc_panel(tables.get("gc_pauses"))
    if gc is not None:
        panels.append(gc)
    plots = adir / PLOTS_DIR
    plots.mkdir(exist_ok=True)
    for old in plots.glob("*.png"):
        old.unlink()
    images = []
    for panel in panels:
        path = plots / f"{panel.name}.png"
        draw_panel(panel, markers, end, path)
        images.append((panel, f"{PLOTS_DIR}/{path.name}"))
    out = adir / "report.html"
    out.write_text(_html(summary, model.headline, images))
    return out


def _html(summary: Mapping[str, Any], headline: Sequence[Any], images: Sequence[tuple[Panel, str]]) -> str:
    e = html.escape
    run = summary.get("run", {})
    figures = summary.get("figures", {})
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
    if summary.get("partial"):
        items = "".join(
            f"<li><code>{e(p['file'])}</code> at byte {p['offset']}: {e(p['reason'])}</li>" for p in summary.get("problems", [])
        )
        parts.append(f'<div class="partial"><b>Partial analysis.</b> Part of the trace could not be read or the run '
                     f"did not finish; the figures cover what was read.<ul>{items}</ul></div>")
    win = summary.get("window", {})
    parts.append(f"<h2>Key figures</h2><p class=\"meta\">settle window: the last {e(fmt(summary.get('options', {}).get('settle_window_s')))} s "
                 f"([{e(fmt(win.get('start_s')))}, {e(fmt(win.get('end_s')))}] s)</p><table>")
    for h in headline:
        parts.append(f"<tr><th>{e(h.label)}</th><td class=\"num\">{e(fmt(lookup(figures, h.path)))}</td><td>{e(h.path)}</td></tr>")
    parts.append("</table>")
    parts.append("<h2>Plots</h2>")
    for panel, src in images:
        parts.append(f'<figure><img src="{e(src)}" alt="{e(panel.title)}" width="1100" height="340"></figure>')
    if not images:
        parts.append("<p>No time series in this run.</p>")
    rows: list[tuple[str, str]] = []
    _flatten("", figures, rows)
    parts.append("<details><summary>All figures</summary><table>")
    parts += [f"<tr><td>{e(k)}</td><td class=\"num\">{e(v)}</td></tr>" for k, v in rows]
    parts.append("</table></details></body></html>")
    return "\n".join(parts)
