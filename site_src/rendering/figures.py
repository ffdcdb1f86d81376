"""The results page's figures: each audit's gaps with their 95% intervals, drawn with matplotlib.

Drawn into SVG with a fixed SVG hash salt and no date in the metadata, so the same table gives
the same bytes. matplotlib is imported only when a figure is drawn: the results page is cached
(``results_page``), so most builds never draw. (An explainer's own figures are drawn by its code,
in its run: ``site_src.execution``.)
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from site_src.filters import gap as gap_pp
from site_src.rendering.results import is_missing, is_true, label, require_columns

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FIGURE_METRICS", "AuditFigure", "draw_audit_figures"]

# The gaps the per-audit figures show, when the table holds them (panel title for each).
FIGURE_METRICS = {
    "demographic_parity_difference": "Selection rate gap\n(demographic parity difference)",
    "equal_opportunity_difference": "Favourable outcome among the deserving\n(equal opportunity difference)",
}
# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00")
_MARKERS = ("o", "s", "D", "^", "v")
_STRATEGY_ORDER = ("S0", "S1", "S2", "S3")
_MODEL_ORDER = ("logistic_regression", "random_forest", "gradient_boosting")


@dataclass(frozen=True)
class AuditFigure:
    """One audit's figure, saved as ``<name>.svg`` in the output folder, and its phone version,
    the same panels stacked at a phone's width, as ``<name>-narrow.svg``."""

    audit: str
    title: str
    name: str
    alt: str  # the full description, for screen readers
    caption: str  # what to notice, under the figure


def draw_audit_figures(df: pd.DataFrame, out_dir: Path, *, alpha: float | None = None) -> list[AuditFigure]:
    """Draw, for each audit, its gaps with their 95% intervals; save each as SVG in ``out_dir``.

    One panel per gap in ``FIGURE_METRICS`` that the table holds; one row per strategy and model;
    one colour and marker per protected attribute. A filled marker is significant after FDR
    correction (``significant``: q below ``alpha``, by default ``faircode.benchmark.ALPHA``, the
    level the benchmark used), a hollow one is not. Undefined gaps are left out (the alt text
    counts them). Returns nothing to draw (an empty list) when the table holds none of the
    metrics; raises ValueError naming the columns the figures need and the table lacks.
    """
    metrics = [m for m in FIGURE_METRICS if "metric" in df.columns and (df["metric"] == m).any()]
    if not metrics:
        return []
    require_columns(df, ("audit", "strategy", "model", "attribute", "gap", "ci_low", "ci_high"))
    if alpha is None:
        from faircode.benchmark import ALPHA as alpha  # the level `significant` uses
    out_dir.mkdir(parents=True, exist_ok=True)
    figures = []
    for audit in sorted(df["audit"].astype(str).unique()):
        rows = df[(df["audit"].astype(str) == audit) & df["metric"].isin(metrics)]
        if rows.empty:
            continue
        title, combos = _audit_name(rows, audit), _combos(rows)
        name = f"gaps-{audit}"
        _draw(rows, metrics, combos, title=title, alpha=alpha, path=out_dir / f"{name}.svg")
        _draw(rows, metrics, combos, title=title, alpha=alpha, path=out_dir / f"{name}-narrow.svg", narrow=True)
        alt, caption = _alt(rows, title, metrics, combos)
        figures.append(AuditFigure(audit=audit, title=title, name=name, alt=alt, caption=caption))
    return figures


# The phone version's width in inches: 4.1 in is 394 CSS px, shown about 0.9 times as large on a
# 390 px screen, so its 10-point text reads at about 12 px (the wide figure's would be 4 to 5 px).
_NARROW_WIDTH = 4.1


def _draw(rows: pd.DataFrame, metrics: list[str], combos: list[tuple[str, str]], *, title: str, alpha: float,
          path: Path, narrow: bool = False) -> None:
    """One audit's figure: a panel per metric, sharing the strategy-and-model rows; saved to ``path``.

    ``narrow`` stacks the panels (each with its own row labels) at a phone's width, the legend
    in one column under them, so no text is scaled below about 12 px on a 390 px screen.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    attributes = sorted(rows["attribute"].astype(str).unique())
    handles = _legend(rows, attributes, alpha=alpha)
    panel_height = 0.3 * len(combos) + 1.1
    with matplotlib.rc_context({"svg.hashsalt": "fairsite", "font.size": 10}):
        if narrow:
            legend_height = 0.22 * len(handles) + 0.2
            fig = Figure(figsize=(_NARROW_WIDTH, panel_height * len(metrics) + legend_height + 0.7), facecolor="white",
                         layout="constrained")
            axes = fig.subplots(len(metrics), 1, squeeze=False)[:, 0]
        else:
            fig = Figure(figsize=(3.9 * len(metrics) + 1.6, 0.32 * len(combos) + 2.0), facecolor="white")
            axes = fig.subplots(1, len(metrics), sharey=True, squeeze=False)[0]
        FigureCanvasAgg(fig)
        ticks = [f"{s} · {label(m)}" for s, m in combos]
        for ax, metric in zip(axes, metrics):
            _panel(ax, rows[rows["metric"] == metric], combos, attributes)
            # On a phone the axes are narrower than the wide figure's title lines: wrap them shorter.
            title_text = "\n".join(textwrap.wrap(FIGURE_METRICS[metric].replace("\n", " "), 28)) if narrow \
                else FIGURE_METRICS[metric]
            ax.set_title(title_text, fontsize=10)
            if narrow or ax is axes[0]:  # side by side, the panels share the first one's y axis
                ax.set_yticks(range(len(combos)), ticks)
                ax.invert_yaxis()  # S0 at the top, as in the table
        if narrow:
            fig.legend(handles=handles, loc="outside lower center", ncol=1, frameon=False, fontsize=9.5)
            fig.suptitle(f"{title}: gaps with 95% intervals", fontsize=11)
        else:
            fig.legend(handles=handles, loc="lower center", ncol=min(4, len(handles)), frameon=False, fontsize=9)
            fig.suptitle(f"{title}: gaps (disadvantaged minus advantaged) with 95% intervals", fontsize=11)
            fig.tight_layout(rect=(0, 0.1 if len(handles) <= 4 else 0.15, 1, 1))
        fig.savefig(path, metadata={"Date": None})


def _legend(rows: pd.DataFrame, attributes: list[str], *, alpha: float) -> list:
    """A colour and marker per attribute, then what a filled and a hollow marker mean."""
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=_COLOURS[i % len(_COLOURS)], marker=_MARKERS[i % len(_MARKERS)], linestyle="",
                      label=_attribute_label(rows, a))
               for i, a in enumerate(attributes)]
    return handles + [
        Line2D([], [], color="0.3", marker="o", linestyle="", label=f"significant (q < {alpha:g})"),
        Line2D([], [], color="0.3", marker="o", markerfacecolor="white", linestyle="", label="not significant"),
    ]


def _panel(ax, rows: pd.DataFrame, combos, attributes) -> None:
    step = 0.6 / max(1, len(attributes))
    for i, attr in enumerate(attributes):
        colour, marker = _COLOURS[i % len(_COLOURS)], _MARKERS[i % len(_MARKERS)]
        offset = (i - (len(attributes) - 1) / 2) * step
        for y, (s, m) in enumerate(combos):
            hit = rows[(rows["attribute"].astype(str) == attr) & (rows["strategy"].astype(str) == s)
                       & (rows["model"].astype(str) == m)]
            if hit.empty or is_missing(hit["gap"].iloc[0]):
                continue
            r = hit.iloc[0]
            g = 100 * float(r["gap"])
            if not (is_missing(r["ci_low"]) or is_missing(r["ci_high"])):
                ax.plot([100 * float(r["ci_low"]), 100 * float(r["ci_high"])], [y + offset] * 2, color=colour, lw=1.4)
            filled = is_true(r.get("significant"))
            ax.plot([g], [y + offset], marker=marker, color=colour, markersize=5.5,
                    markerfacecolor=colour if filled else "white", markeredgewidth=1.3, linestyle="")
    ax.axvline(0, color="0.35", lw=0.8)
    ax.set_xlabel("percentage points")
    ax.grid(axis="x", color="0.9", lw=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _alt(rows: pd.DataFrame, title: str, metrics, combos) -> tuple[str, str]:
    """The alt text (what the chart shows, then its largest gaps) and the caption (the largest gaps)."""
    attrs = "; ".join(_attribute_label(rows, a) for a in sorted(rows["attribute"].astype(str).unique()))
    parts = [f"Dot-and-interval chart for the {title} audit: for each of {len(combos)} strategy and model "
             f"combinations, the gap (disadvantaged minus advantaged, in percentage points) and its 95% "
             f"score interval (Newcombe's; MOVER-R for a ratio), for {attrs}. Filled markers are significant after FDR correction."]
    for m in metrics:
        sub = rows[(rows["metric"] == m) & rows["gap"].notna()]
        if sub.empty:
            continue
        top = sub.loc[sub["gap"].astype(float).abs().idxmax()]
        parts.append(f"Largest {label(m)}: {gap_pp(float(top['gap']))} ({top['attribute']}, {top['strategy']}, "
                     f"{label(top['model'])}).")
    undefined = int(rows["gap"].isna().sum())
    if undefined:
        parts.append(f"{undefined} undefined gap(s) are not drawn.")
    return " ".join(parts), " ".join(parts[1:])


def _combos(rows: pd.DataFrame) -> list[tuple[str, str]]:
    def order(seq, v):
        return (seq.index(v), v) if v in seq else (len(seq), v)
    strategies = sorted(rows["strategy"].astype(str).unique(), key=lambda v: order(_STRATEGY_ORDER, v))
    models = sorted(rows["model"].astype(str).unique(), key=lambda v: order(_MODEL_ORDER, v))
    present = set(zip(rows["strategy"].astype(str), rows["model"].astype(str)))
    return [(s, m) for s in strategies for m in models if (s, m) in present]


def _audit_name(rows: pd.DataFrame, audit: str) -> str:
    if "audit_name" in rows.columns and rows["audit_name"].notna().any():
        return str(rows["audit_name"].dropna().iloc[0])
    return audit.replace("-", " ").title()


def _attribute_label(rows: pd.DataFrame, attr: str) -> str:
    sub = rows[rows["attribute"].astype(str) == attr]
    if {"disadvantaged_group", "advantaged_group"} <= set(sub.columns) and not sub.empty:
        return f"{attr} ({sub['disadvantaged_group'].iloc[0]} vs {sub['advantaged_group'].iloc[0]})"
    return attr
