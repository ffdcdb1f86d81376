"""The results explorer: the benchmark's fairness table as a filterable, sortable page with figures.

Everything on the page is generated from ``results/results_fairness.csv`` (its columns are
described in ``results/README.md``), so the page stays right when the results change. The table
is plain HTML that reads well without JavaScript; ``templates/assets/results-table.js`` adds
the filters and the sorting. Figures are drawn here with matplotlib into SVG, with a
fixed SVG hash salt and no date in the metadata, so the same table gives the same bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup
from markupsafe import escape as _escape

if TYPE_CHECKING:  # the build imports this module on every run; pandas only when the page is made
    import pandas as pd

from site_src.rendering.filters import gap as gap_pp
from site_src.rendering.filters import pvalue as pvalue_text

__all__ = ["FILTER_COLUMNS", "AuditFigure", "draw_audit_figures", "filter_options", "group_filter_options",
           "groups_table_html", "table_html"]

# The columns a reader filters on, in the order the filters appear.
FILTER_COLUMNS = ("audit", "strategy", "model", "attribute", "metric")
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


_HEADER_TITLES = {
    "value_disadvantaged": "the disadvantaged group's rate", "value_advantaged": "the advantaged group's rate",
    "gap": "disadvantaged minus advantaged (pp), or their ratio", "p_value": "permutation test p-value",
    "q_value": "Benjamini-Hochberg q-value within the audit",
}


@dataclass(frozen=True)
class AuditFigure:
    """One audit's figure, saved as ``<name>.svg`` in the output folder."""

    audit: str
    title: str
    name: str
    alt: str  # the full description, for screen readers
    caption: str  # what to notice, under the figure


def escape(value) -> str:
    """HTML-escaped text as a plain ``str`` (a ``Markup`` would escape what it is joined with)."""
    return str(_escape(value))


# Short names for the metrics, so the table fits a screen; the filter and README give the full ones.
_METRIC_LABELS = {
    "demographic_parity_difference": "selection rate (DP)", "equal_opportunity_difference": "equal opportunity (EO)",
    "true_positive_rate_difference": "true positive rate",
    "false_positive_rate_difference": "false positive rate", "precision_difference": "precision",
    "accuracy_difference": "accuracy", "disparate_impact_ratio": "disparate impact ratio (not flagged)",
}


def label(value) -> str:
    """A code value as a reader reads it: ``logistic_regression`` -> ``logistic regression``."""
    return str(value).replace("_", " ")


def filter_options(df: pd.DataFrame) -> dict[str, list[tuple[str, str]]]:
    """``(value, name)`` for each distinct value of each filter column in ``df``, sorted by value.

    The name is what the table shows for the value (the audit's name, the metric's short name),
    so a reader picks from the same words they read in the rows.
    """
    out = {}
    for c in FILTER_COLUMNS:
        if c not in df.columns:
            continue
        names = {}
        if c == "audit" and "audit_name" in df.columns:
            names = {str(a): str(n) for a, n in zip(df["audit"], df["audit_name"]) if not _missing(n)}
        elif c == "metric":
            names = _METRIC_LABELS
        out[c] = [(v, names.get(v, label(v))) for v in sorted(df[c].dropna().astype(str).unique())]
    return out


def table_html(df: pd.DataFrame) -> Markup:
    """The results as one HTML table: a row per CSV row, every cell escaped.

    Each row carries ``data-<column>`` attributes for the filters and ``data-significant``; each
    number cell carries its raw value in ``data-value`` for sorting (empty when undefined), while
    its text is formatted for reading (gaps of rates in percentage points, ratios as ratios).
    """
    # Every column the table shows or marks: a results file without one is an error, not a
    # page that quietly drops its significance or small-sample markers.
    _require(df, ("audit", "strategy", "model", "attribute", "metric", "value_disadvantaged", "value_advantaged",
                  "gap", "ci_low", "ci_high", "p_value", "significant", "small_sample_warning"))
    cols = [
        ("audit", "Audit", "text"), ("strategy", "Strategy", "text"), ("model", "Model", "text"),
        ("attribute", "Attribute", "text"), ("metric", "Metric", "text"),
        ("value_disadvantaged", "Disadv.", "number"), ("value_advantaged", "Adv.", "number"),
        ("gap", "Gap", "number"), ("ci", "95% interval", "none"), ("p_value", "p", "number"),
        ("q_value", "q (FDR)", "number"), ("significant", "Significant", "text"),
    ]
    cols = [c for c in cols if c[0] == "ci" or c[0] in df.columns]
    # Help is in `data-help`, which results-table.js turns into a toggletip that click, tap and
    # the keyboard open; `title` stays as the no-JavaScript fallback (the script removes it).
    head = "".join(
        f'<th data-type="{kind}" data-col="{key}" scope="col"'
        + (f' data-help="{_HEADER_TITLES[key]}" title="{_HEADER_TITLES[key]}"' if key in _HEADER_TITLES else "") + ">"
        + (f'<button type="button" class="fc-sort">{escape(title)}</button>' if kind != "none" else escape(title))
        + "</th>" for key, title, kind in cols
    )
    body = []
    for row in df.to_dict("records"):
        sig = _flag(row.get("significant"))
        attrs = "".join(f' data-{c}="{escape(row[c])}"' for c in FILTER_COLUMNS if c in row)
        attrs += f' data-significant="{"true" if sig else "false"}"'
        # data-col and data-label let a narrow screen show each row as a card (extra.css).
        cells = "".join(_cell(key, row).replace("<td", f'<td data-col="{key}" data-label="{escape(title)}"', 1)
                        for key, title, _ in cols)
        cls = ' class="fc-significant"' if sig else ""
        body.append(f"<tr{attrs}{cls}>{cells}</tr>")
    return Markup(
        f'<table data-fc-results>\n<thead><tr>{head}</tr></thead>\n<tbody>\n' + "\n".join(body)
        + "\n</tbody>\n</table>"
    )


def draw_audit_figures(df: pd.DataFrame, out_dir: Path) -> list[AuditFigure]:
    """Draw, for each audit, its gaps with their 95% intervals; save each as SVG in ``out_dir``.

    One panel per gap in ``FIGURE_METRICS`` that the table holds; one row per strategy and model;
    one colour and marker per protected attribute. A filled marker is significant after FDR
    correction (``significant``), a hollow one is not. Undefined gaps are left out (the alt text
    counts them). Returns nothing to draw (an empty list) when the table holds none of the
    metrics.
    """
    metrics = [m for m in FIGURE_METRICS if "metric" in df.columns and (df["metric"] == m).any()]
    if not metrics:
        return []
    _require(df, ("audit", "strategy", "model", "attribute", "gap", "ci_low", "ci_high"))
    # Imported here: the figures are cached (see render._audit_figures), so most builds never draw.
    import matplotlib
    import matplotlib.lines
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out_dir.mkdir(parents=True, exist_ok=True)
    figures = []
    for audit in sorted(df["audit"].astype(str).unique()):
        rows = df[(df["audit"].astype(str) == audit) & df["metric"].isin(metrics)]
        if rows.empty:
            continue
        title = _audit_name(rows, audit)
        combos = _combos(rows)
        attributes = sorted(rows["attribute"].astype(str).unique())
        with matplotlib.rc_context({"svg.hashsalt": "fairsite", "font.size": 10}):
            fig = Figure(figsize=(3.9 * len(metrics) + 1.6, 0.32 * len(combos) + 2.0), facecolor="white")
            FigureCanvasAgg(fig)
            axes = fig.subplots(1, len(metrics), sharey=True, squeeze=False)[0]
            for ax, metric in zip(axes, metrics):
                _panel(ax, rows[rows["metric"] == metric], combos, attributes)
                ax.set_title(FIGURE_METRICS[metric], fontsize=10)
            axes[0].set_yticks(range(len(combos)), [f"{s} · {label(m)}" for s, m in combos])
            axes[0].invert_yaxis()  # S0 at the top, as in the table
            handles = [matplotlib.lines.Line2D([], [], color=_COLOURS[i % len(_COLOURS)],
                                               marker=_MARKERS[i % len(_MARKERS)], linestyle="",
                                               label=_attribute_label(rows, a))
                       for i, a in enumerate(attributes)]
            handles += [matplotlib.lines.Line2D([], [], color="0.3", marker="o", linestyle="", label="significant (q < 0.05)"),
                        matplotlib.lines.Line2D([], [], color="0.3", marker="o", markerfacecolor="white", linestyle="",
                                                label="not significant")]
            fig.legend(handles=handles, loc="lower center", ncol=min(4, len(handles)), frameon=False, fontsize=9)
            fig.suptitle(f"{title}: gaps (disadvantaged minus advantaged) with 95% intervals", fontsize=11)
            fig.tight_layout(rect=(0, 0.1 if len(handles) <= 4 else 0.15, 1, 1))
            name = f"gaps-{audit}"
            fig.savefig(out_dir / f"{name}.svg", metadata={"Date": None})
        alt, caption = _alt(rows, title, metrics, combos)
        figures.append(AuditFigure(audit=audit, title=title, name=name, alt=alt, caption=caption))
    return figures


def _panel(ax, rows: pd.DataFrame, combos, attributes) -> None:
    step = 0.6 / max(1, len(attributes))
    for i, attr in enumerate(attributes):
        colour, marker = _COLOURS[i % len(_COLOURS)], _MARKERS[i % len(_MARKERS)]
        offset = (i - (len(attributes) - 1) / 2) * step
        for y, (s, m) in enumerate(combos):
            hit = rows[(rows["attribute"].astype(str) == attr) & (rows["strategy"].astype(str) == s)
                       & (rows["model"].astype(str) == m)]
            if hit.empty or _missing(hit["gap"].iloc[0]):
                continue
            r = hit.iloc[0]
            g = 100 * float(r["gap"])
            if not (_missing(r["ci_low"]) or _missing(r["ci_high"])):
                ax.plot([100 * float(r["ci_low"]), 100 * float(r["ci_high"])], [y + offset] * 2, color=colour, lw=1.4)
            filled = _flag(r.get("significant"))
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


def _cell(key: str, row: dict) -> str:
    ratio = str(row.get("kind", "")) == "ratio" or str(row.get("metric", "")).endswith("ratio")
    if key == "ci":
        low, high = row.get("ci_low"), row.get("ci_high")
        if _missing(low) or _missing(high):
            return "<td></td>"
        return f"<td>[{_num(low, ratio)}, {_num(high, ratio)}]</td>"
    value = row.get(key)
    if key in ("audit", "strategy", "model", "attribute", "metric"):
        title, text = "", label(value)
        if key == "attribute" and "disadvantaged_group" in row:
            title = _help(f'{row["disadvantaged_group"]} vs {row.get("advantaged_group", "")}')
        elif key == "audit" and not _missing(row.get("audit_name")):
            text = row["audit_name"]
        elif key == "metric" and value in _METRIC_LABELS:
            title, text = _help(label(value)), _METRIC_LABELS[value]
        return f"<td{title}>{escape(text)}</td>"
    if key == "significant":
        if _missing(value) or str(value) == "":
            return "<td></td>"
        warn = _flag(row.get("small_sample_warning"))
        mark = f'<span class="fc-warn"{_help("fewer than 30 rows in a group: fragile")}>⚠</span>' if warn else ""
        return f'<td>{"● yes" if _flag(value) else "no"}{mark}</td>'
    if _missing(value):
        reason = row.get("reason")
        tip = _help(reason) if not _missing(reason) and str(reason) else ""
        return f'<td data-value=""{tip}>—</td>'
    raw = float(value)
    if key in ("p_value", "q_value"):
        text = pvalue_text(raw).removeprefix("p = ").removeprefix("p ")
    elif key == "gap":
        text = _num(raw, ratio)
    else:
        text = f"{100 * raw:.1f}%"
    return f'<td data-value="{raw!r}">{escape(text)}</td>'


def _help(text) -> str:
    """Attributes for a piece of help (see table_html): data-help for the toggletip, title without JS."""
    return f' data-help="{escape(text)}" title="{escape(text)}"'


def _num(value, ratio: bool) -> str:
    """A gap or interval end: a ratio as a ratio, a difference of rates in percentage points."""
    x = float(value)
    if ratio:
        return f"{x:.2f}"
    return gap_pp(x).replace(" percentage points", " pp")


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


def _flag(value) -> bool:
    return str(value).strip().lower() == "true"


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType"


def _require(df: pd.DataFrame, columns) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"results table: missing column(s) {missing}; see results/README.md for the columns")


# --------------------------------------------------------------------------- the by-group view

# The columns a reader filters the by-group table on, and the view it opens with (one comparison).
GROUP_FILTER_COLUMNS = ("audit", "strategy", "model", "attribute", "metric")
GROUP_DEFAULTS = {"strategy": "S2", "model": "logistic_regression", "metric": "selection_rate"}
_GROUP_METRIC_LABELS = {
    "selection_rate": "selection rate", "true_positive_rate": "true positive rate",
    "false_positive_rate": "false positive rate", "true_negative_rate": "true negative rate",
    "precision": "precision", "accuracy": "accuracy",
    "true_favourable_rate": "favourable outcome among the deserving (equal opportunity)",
}


def group_filter_options(df: pd.DataFrame) -> dict[str, list[str]]:
    """The distinct values of each by-group filter column, sorted (metrics in the file's order)."""
    out = {}
    for c in GROUP_FILTER_COLUMNS:
        values = df[c].dropna().astype(str)
        out[c] = list(dict.fromkeys(values)) if c == "metric" else sorted(values.unique())
    return out


def groups_table_html(df: pd.DataFrame, *, alpha: float) -> Markup:
    """``results_by_group.csv`` as one HTML table: a row per group, rate, interval and tests.

    Rows carry ``data-<column>`` attributes for ``assets/results-groups.js``; a group below the
    manifest's minimum size is marked (``fc-small``) and its comparison cells say why they are
    empty. The largest gap and its max-gap p-value repeat on each row of a comparison.
    """
    _require(df, ("audit", "strategy", "model", "attribute", "group", "metric", "value", "ci_low", "ci_high",
                  "n_group", "small_cell", "diff_vs_reference", "p_value_vs_reference_holm", "max_gap",
                  "p_value_max_gap", "reference_group", "min_size"))
    head = ("<th scope='col'>Audit</th><th scope='col'>Strategy</th><th scope='col'>Model</th>"
            "<th scope='col'>Attribute</th><th scope='col'>Rate</th><th scope='col'>Group</th>"
            "<th scope='col' title='rows the rate is a mean over'>n</th><th scope='col'>Rate</th>"
            "<th scope='col' title='95% Wilson score interval'>95% interval</th>"
            "<th scope='col' title='group minus the reference group'>vs reference</th>"
            "<th scope='col' title='permutation test against the reference group, Holm-adjusted'>p (Holm)</th>"
            "<th scope='col' title='largest minus smallest rate among groups of at least the minimum size'>Largest gap</th>"
            "<th scope='col' title='max-gap permutation test: accounts for picking the largest gap'>p (max gap)</th>")
    body = []
    for row in df.to_dict("records"):
        attrs = "".join(f' data-{c}="{escape(row[c])}"' for c in GROUP_FILTER_COLUMNS)
        small = _flag(row["small_cell"])
        group = escape(row["group"])
        if str(row["group"]) == str(row["reference_group"]):
            group += ' <span class="fc-ref" title="the reference group">(ref.)</span>'
        if small:
            group += (f' <span class="fc-warn" title="fewer than {escape(row["min_size"])} rows: reported, left out of the '
                      'largest gap and the tests">⚠</span>')
        rate = "—" if _missing(row["value"]) else f"{100 * float(row['value']):.1f}%"
        ci = ("" if _missing(row["ci_low"]) else
              f"[{100 * float(row['ci_low']):.1f}%, {100 * float(row['ci_high']):.1f}%]")
        diff = "" if _missing(row["diff_vs_reference"]) else _num(row["diff_vs_reference"], False)
        p_ref = _p_text(row["p_value_vs_reference_holm"], alpha)
        largest = "" if _missing(row["max_gap"]) else _num(row["max_gap"], False).lstrip("+")
        p_max = _p_text(row["p_value_max_gap"], alpha)
        cells = [label(row["audit_name"] if "audit_name" in row else row["audit"]), row["strategy"], label(row["model"]),
                 label(row["attribute"]), _GROUP_METRIC_LABELS.get(row["metric"], label(row["metric"]))]
        tds = "".join(f"<td>{escape(c)}</td>" for c in cells)
        tds += (f"<td>{group}</td><td>{int(row['n_group']):,}</td><td>{rate}</td><td>{ci}</td><td>{escape(diff)}</td>"
                f"<td>{p_ref}</td><td>{escape(largest)}</td><td>{p_max}</td>")
        cls = ' class="fc-small"' if small else ""
        body.append(f"<tr{attrs}{cls}>{tds}</tr>")
    return Markup(f"<table data-fc-groups>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(body)
                  + "\n</tbody>\n</table>")


def _p_text(value, alpha: float) -> str:
    if _missing(value):
        return ""
    text = escape(pvalue_text(float(value)).removeprefix("p = ").replace("p < ", "< "))
    return f"<strong>{text}</strong>" if float(value) < alpha else text
