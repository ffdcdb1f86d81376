"""The results page: the benchmark's tables as filterable, sortable HTML with figures, and its cache.

Everything on the page is generated from ``results/`` (``results_fairness.csv``, whose columns
``results/README.md`` describes, ``results_by_group.csv`` and ``results_performance.csv``), so the
page stays right when the results change. Each table is plain HTML that reads well without
JavaScript (``templates/results-table.html.j2``, ``templates/results-groups.html.j2``, escaped);
``templates/assets/results.js`` adds the filters and the sorting.
The figures are ``figures.draw_audit_figures``'s.

The page is made once per version of the results files and of the code and templates that make
it, then copied from ``.cache/fairsite-results``: drawing the figures and tabulating every row is
most of a re-render's time, and a prose edit should not pay for it.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
from markupsafe import Markup

from faircode.formatting import format_p_value  # NumPy-free
from site_src.filestate import digest_parts, hash_file
from site_src.publishing.provenance import results_facts
from site_src.rendering.environment import TEMPLATES, make_environment
from site_src.rendering.filters import gap as gap_pp
from site_src.rendering.filters import pvalue
from site_src.rendering.results import ResultsTable, is_missing, is_true, label, read_checked, require_columns

if TYPE_CHECKING:  # the build imports this module on every run; pandas only when the page is made
    import pandas as pd

    from site_src.sources.collect import Explainer

__all__ = ["BY_GROUP_FILE", "FILTER_COLUMNS", "GROUP_DEFAULTS", "filter_options", "group_filter_options",
           "groups_table_html", "label", "render_results_page", "table_html", "warm_results_page"]

# faircode.benchmark.BY_GROUP_FILE, spelt out: importing the benchmark (scikit-learn) on every build
# would cost more than the page (tests pin that the two agree).
BY_GROUP_FILE = "results_by_group.csv"
PERFORMANCE_FILE = "results_performance.csv"

# The columns a reader filters on, in the order the filters appear.
FILTER_COLUMNS = ("audit", "strategy", "model", "attribute", "metric")
# The by-group table's filters, and the view it opens with (one comparison).
GROUP_FILTER_COLUMNS = ("audit", "strategy", "model", "attribute", "metric")
GROUP_DEFAULTS = {"strategy": "S2", "model": "logistic_regression", "metric": "selection_rate"}

_HEADER_TITLES = {
    "value_disadvantaged": "the disadvantaged group's rate", "value_advantaged": "the advantaged group's rate",
    "gap": "disadvantaged minus advantaged (pp), or their ratio", "p_value": "permutation test p-value",
    "q_value": "Benjamini-Hochberg q-value within the audit",
}
# The table's columns: (key, heading, kind); "ci" is made of ci_low and ci_high.
_COLUMNS = (
    ("audit", "Audit", "text"), ("strategy", "Strategy", "text"), ("model", "Model", "text"),
    ("attribute", "Attribute", "text"), ("metric", "Metric", "text"),
    ("value_disadvantaged", "Disadv.", "number"), ("value_advantaged", "Adv.", "number"),
    ("gap", "Gap", "number"), ("ci", "95% interval", "none"), ("p_value", "p", "number"),
    ("q_value", "q (FDR)", "number"), ("significant", "Significant", "text"),
)
# Short names for the metrics, so the table fits a screen; the filter and README give the full ones.
_METRIC_LABELS = {
    "demographic_parity_difference": "selection rate (DP)", "equal_opportunity_difference": "equal opportunity (EO)",
    "true_positive_rate_difference": "true positive rate",
    "false_positive_rate_difference": "false positive rate", "precision_difference": "precision",
    "accuracy_difference": "accuracy", "disparate_impact_ratio": "disparate impact ratio (not flagged)",
}
_GROUP_METRIC_LABELS = {
    "selection_rate": "selection rate", "true_positive_rate": "true positive rate",
    "false_positive_rate": "false positive rate", "true_negative_rate": "true negative rate",
    "precision": "precision", "accuracy": "accuracy",
    "true_favourable_rate": "favourable outcome among the deserving (equal opportunity)",
}


# ----------------------------------------------------------------------------- the page and its cache

def render_results_page(env: jinja2.Environment, results: ResultsTable, docs_dir: Path, root: Path, *,
                        slugs: set[str]) -> None:
    """Write ``docs_dir/results/``: the page (``results.md.j2``), its figures and the CSV files.

    The cached part is copied from ``.cache/fairsite-results`` (made first if missing); the
    provenance (the results file's digest, package versions, the audits' data files) changes
    with every commit, so it is added after the cached part, not cached. Nothing is written when
    the results file does not exist. Raises ValueError when a results file lacks a column the
    page shows.
    """
    if not results.exists:
        return
    shutil.copytree(_cached_page(env, results, root, slugs=slugs), docs_dir / "results", dirs_exist_ok=True)
    provenance = env.get_template("results-provenance.md.j2").render(**results_facts(results.path, root))
    with open(docs_dir / "results" / "index.md", "a", encoding="utf-8") as fh:
        fh.write("\n" + provenance)


def warm_results_page(explainers: list[Explainer], results: ResultsTable, root: Path) -> None:
    """Make the results page's cached part now, if it is not made yet (``render`` then copies it).

    The page depends on ``results/`` alone, not on any explainer's run, so the build draws it
    while the explainers run. Problems are left for ``render`` to report: this returns quietly.
    """
    if not results.exists:
        return
    try:
        _cached_page(make_environment(explainers), results, root, slugs={e.slug for e in explainers})
    except Exception:  # noqa: BLE001 - render meets the same problem and reports it
        pass


def _cached_page(env, results: ResultsTable, root: Path, *, slugs: set[str]) -> Path:
    """The folder in ``.cache/fairsite-results`` holding the page for this version of the results
    files and of the code and templates that make it; drawn first if it is not there."""
    key = digest_parts([
        *(hash_file(results.path.with_name(n)) for n in (results.path.name, PERFORMANCE_FILE, BY_GROUP_FILE)),
        *(p.read_bytes() for p in sorted(TEMPLATES.glob("results*.j2"))),
        # The code that writes the page's text: this module, its figures, cells, filters and p-values.
        *(Path(__file__).with_name(m).read_bytes()
          for m in ("results_page.py", "figures.py", "results.py", "filters.py", "environment.py")),
        Path(format_p_value.__code__.co_filename).read_bytes(),
        " ".join(sorted(slugs)), metadata.version("matplotlib"),
    ])
    cache = root / ".cache" / "fairsite-results" / key[:20]
    if not cache.is_dir():
        shutil.rmtree(cache.parent, ignore_errors=True)  # older versions are never used again
        cache.parent.mkdir(parents=True)
        tmp = Path(tempfile.mkdtemp(dir=cache.parent))
        _write_page(env, results, tmp, slugs)
        tmp.rename(cache)
    return cache


def _write_page(env, results: ResultsTable, out: Path, slugs: set[str]) -> None:
    # Imported only on a miss: the level `significant` uses, and the small-group limit of the warning.
    from faircode.benchmark import ALPHA
    from faircode.significance import SMALL_SAMPLE_THRESHOLD
    from site_src.rendering.figures import draw_audit_figures

    shutil.copyfile(results.path, out / results.path.name)
    df = results.df
    page = env.get_template("results.md.j2").render(
        csv_name=results.path.name, n_rows=len(df), options=filter_options(df),
        table=table_html(df, small_sample=SMALL_SAMPLE_THRESHOLD), figures=draw_audit_figures(df, out, alpha=ALPHA),
        groups=_by_group_view(results.path.with_name(BY_GROUP_FILE), out, alpha=ALPHA), label=label,
        has_kind="kind" in df.columns, has_q="q_value" in df.columns, alpha=ALPHA, slugs=slugs,
        small_sample=SMALL_SAMPLE_THRESHOLD, dropped=_dropped_per_audit(results.path.with_name(PERFORMANCE_FILE)),
    )
    (out / "index.md").write_text(page, encoding="utf-8")


def _dropped_per_audit(performance: Path) -> dict[str, int]:
    """Rows each audit dropped for a missing target or protected value, by audit display name
    (empty when the performance file or its ``n_dropped`` column is absent)."""
    if not performance.exists():
        return {}
    rows = read_checked(performance).rows  # a malformed or repeated row: named by file and line
    return {r["audit_name"]: int(r["n_dropped"]) for r in rows if r.get("n_dropped", "") != ""}


def _by_group_view(path: Path, out: Path, *, alpha: float) -> dict | None:
    """The by-group table for the results page (None without ``results_by_group.csv``)."""
    if not path.exists():
        return None
    import pandas as pd

    shutil.copyfile(path, out / path.name)
    read_checked(path)  # a malformed or repeated row: an error naming file and line (issue 25)
    df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    return {"csv_name": path.name, "n_rows": len(df), "options": group_filter_options(df),
            "defaults": GROUP_DEFAULTS, "table": groups_table_html(df, alpha=alpha),
            "min_sizes": sorted(df["min_size"].dropna().astype(int).unique().tolist())}


@functools.cache
def _html_templates() -> jinja2.Environment:
    return make_environment([])  # *.html.j2 are autoescaped


def _html(template: str, **context) -> Markup:
    # The templates end with a newline (as files do); the table is placed inside other lines.
    return Markup(_html_templates().get_template(template).render(**context).removesuffix("\n"))


# -------------------------------------------------------------------------------- the fairness table

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
            names = {str(a): str(n) for a, n in zip(df["audit"], df["audit_name"]) if not is_missing(n)}
        elif c == "metric":
            names = _METRIC_LABELS
        out[c] = [(v, names.get(v, label(v))) for v in sorted(df[c].dropna().astype(str).unique())]
    return out


def table_html(df: pd.DataFrame, *, small_sample: int | None = None) -> Markup:
    """The results as one HTML table: a row per CSV row, every cell escaped.

    Each row carries ``data-<column>`` attributes for the filters and ``data-significant``; each
    number cell carries its raw value in ``data-value`` for sorting (empty when undefined), while
    its text is formatted for reading (gaps of rates in percentage points, ratios as ratios).
    A row with ``small_sample_warning`` is marked ⚠, whose help names ``small_sample`` (the
    group size below which faircode warns; by default ``faircode.significance.SMALL_SAMPLE_THRESHOLD``).
    Raises ValueError naming the columns the table shows and ``df`` lacks.
    """
    # Every column the table shows or marks: a results file without one is an error, not a
    # page that quietly drops its significance or small-sample markers.
    require_columns(df, ("audit", "strategy", "model", "attribute", "metric", "value_disadvantaged",
                         "value_advantaged", "gap", "ci_low", "ci_high", "p_value", "significant",
                         "small_sample_warning"))
    if small_sample is None:
        from faircode.significance import SMALL_SAMPLE_THRESHOLD as small_sample
    cols = [c for c in _COLUMNS if c[0] == "ci" or c[0] in df.columns]
    # Help is in `data-help`, which results.js turns into a toggletip that click, tap and
    # the keyboard open; `title` stays as the no-JavaScript fallback (the script removes it).
    head = [{"attrs": [("data-type", kind), ("data-col", key), ("scope", "col"), *_help(_HEADER_TITLES.get(key))],
             "title": title, "sortable": kind != "none"} for key, title, kind in cols]
    rows = []
    for row in df.to_dict("records"):
        sig = is_true(row.get("significant"))
        attrs = [(f"data-{c}", row[c]) for c in FILTER_COLUMNS if c in row]
        attrs += [("data-significant", "true" if sig else "false")] + ([("class", "fc-significant")] if sig else [])
        # data-col and data-label let a narrow screen show each row as a card (extra.css).
        cells = []
        for key, title, _ in cols:
            cell = _cell(key, row, small_sample=small_sample)
            cells.append({"warn": None, **cell, "attrs": [("data-col", key), ("data-label", title), *cell.get("attrs", [])]})
        rows.append({"attrs": attrs, "cells": cells})
    return _html("results-table.html.j2", head=head, rows=rows)


def _cell(key: str, row: dict, *, small_sample: int) -> dict:
    """The cell of column ``key`` in ``row``: ``text``, its ``attrs`` and an optional ``warn``
    (the help of a ⚠ after the text)."""
    ratio = str(row.get("kind", "")) == "ratio" or str(row.get("metric", "")).endswith("ratio")
    value = row.get(key)
    if key == "ci":
        low, high = row.get("ci_low"), row.get("ci_high")
        if is_missing(low) or is_missing(high):
            return {"text": ""}
        return {"text": f"[{_gap_text(low, ratio)}, {_gap_text(high, ratio)}]"}
    if key in FILTER_COLUMNS:
        return _word_cell(key, row)
    if key == "significant":
        if is_missing(value) or str(value) == "":
            return {"text": ""}
        warn = is_true(row.get("small_sample_warning"))
        return {"text": "● yes" if is_true(value) else "no",
                "warn": _help(f"fewer than {small_sample} rows in a group: the p-value and interval stay valid, but the interval is wide and a real gap is easily missed") if warn else None}
    if is_missing(value):
        reason = row.get("reason")
        return {"text": "—", "attrs": [("data-value", ""), *_help(reason if not is_missing(reason) else None)]}
    raw = float(value)
    if key == "p_value":  # the benchmark's tests are exact today; a Monte Carlo one shows its floor
        text = p_value_text(raw, n_permutations=_monte_carlo_shuffles(row, "method"))
    elif key == "q_value":
        text = p_value_text(raw)
    elif key == "gap":
        text = _gap_text(raw, ratio)
    else:
        text = f"{100 * raw:.1f}%"
    return {"text": text, "attrs": [("data-value", repr(raw))]}


def _word_cell(key: str, row: dict) -> dict:
    """An audit, strategy, model, attribute or metric: as words, with help where a code needs it."""
    value = row.get(key)
    help_text, text = None, label(value)
    if key == "attribute" and "disadvantaged_group" in row:
        help_text = f'{row["disadvantaged_group"]} vs {row.get("advantaged_group", "")}'
    elif key == "audit" and not is_missing(row.get("audit_name")):
        text = row["audit_name"]
    elif key == "metric" and value in _METRIC_LABELS:
        help_text, text = label(value), _METRIC_LABELS[value]
    return {"text": text, "attrs": _help(help_text)}


def _help(text) -> list[tuple[str, str]]:
    """Attributes for a piece of help (see table_html): data-help for the toggletip, title without
    JS; none for no help (None or empty)."""
    return [("data-help", text), ("title", text)] if text is not None and str(text) else []


def p_value_text(p: float, *, n_permutations: int | None = None) -> str:
    """A p- or q-value as a table cell shows it: :func:`faircode.formatting.format_p_value`'s text
    without the ``p =`` a column heading already says (``0.032``, ``< 10⁻³⁰⁰``). A Monte Carlo
    p-value gives its ``n_permutations``: at its floor it reads ``1/10,000``, as on the pages."""
    return pvalue(p, n_permutations).removeprefix("p = ").removeprefix("p ")


def _gap_text(value, ratio: bool) -> str:
    """A gap or interval end: a ratio as a ratio, a difference of rates in percentage points."""
    x = float(value)
    if ratio:
        return f"{x:.2f}"
    return gap_pp(x).replace(" percentage points", " pp")


# ----------------------------------------------------------------------------- the by-group table

def group_filter_options(df: pd.DataFrame) -> dict[str, list[str]]:
    """The distinct values of each by-group filter column, sorted (metrics in the file's order)."""
    out = {}
    for c in GROUP_FILTER_COLUMNS:
        values = df[c].dropna().astype(str)
        out[c] = list(dict.fromkeys(values)) if c == "metric" else sorted(values.unique())
    return out


def groups_table_html(df: pd.DataFrame, *, alpha: float) -> Markup:
    """``results_by_group.csv`` as one HTML table: a row per group, rate, interval and tests.

    Rows carry ``data-<column>`` attributes for ``assets/results.js``; a group below the
    manifest's minimum size is marked (``fc-small``) and its comparison cells say why they are
    empty. The largest gap, its max-gap p-value and the omnibus p-value (chi-squared test that
    every compared group has the same rate) repeat on each row of a comparison; p-values below
    ``alpha`` are bold. Raises ValueError naming the columns ``df`` lacks.
    """
    require_columns(df, ("audit", "strategy", "model", "attribute", "group", "metric", "value", "ci_low", "ci_high",
                         "n_group", "small_cell", "diff_vs_reference", "p_value_vs_reference_holm", "max_gap",
                         "p_value_max_gap", "reference_group", "min_size"))
    rows = []
    for row in df.to_dict("records"):
        small = is_true(row["small_cell"])
        rows.append({
            "attrs": [(f"data-{c}", row[c]) for c in GROUP_FILTER_COLUMNS] + ([("class", "fc-small")] if small else []),
            "words": [label(row["audit_name"] if "audit_name" in row else row["audit"]), row["strategy"],
                      label(row["model"]), label(row["attribute"]),
                      _GROUP_METRIC_LABELS.get(row["metric"], label(row["metric"]))],
            "group": row["group"], "reference": str(row["group"]) == str(row["reference_group"]),
            "small": small, "min_size": row["min_size"], "n": f"{int(row['n_group']):,}",
            "rate": "—" if is_missing(row["value"]) else f"{100 * float(row['value']):.1f}%",
            "ci": "" if is_missing(row["ci_low"]) else
                  f"[{100 * float(row['ci_low']):.1f}%, {100 * float(row['ci_high']):.1f}%]",
            "diff": "" if is_missing(row["diff_vs_reference"]) else _gap_text(row["diff_vs_reference"], False),
            "p_ref": _group_p(row["p_value_vs_reference_holm"], alpha),
            "largest": "" if is_missing(row["max_gap"]) else _gap_text(row["max_gap"], False).lstrip("+"),
            "p_max": _group_p(row["p_value_max_gap"], alpha, n_permutations=_monte_carlo_shuffles(row, "method_max_gap")),
            # The omnibus test (issue 24), beside the max-gap test; absent from older files.
            "p_omnibus": _group_p(row.get("p_value_omnibus"), alpha,
                                  n_permutations=_monte_carlo_shuffles(row, "method_omnibus")),
        })
    return _html("results-groups.html.j2", rows=rows)


def _group_p(value, alpha: float, *, n_permutations: int | None = None) -> dict:
    """A by-group p-value cell: its text, and whether it is below ``alpha`` (shown bold)."""
    if is_missing(value):
        return {"text": "", "bold": False}
    return {"text": p_value_text(float(value), n_permutations=n_permutations), "bold": float(value) < alpha}


def _monte_carlo_shuffles(row, method_column: str) -> int | None:
    """The row's number of shuffles when its test (named in ``method_column``) was Monte Carlo,
    so its p-value has a floor; None for an exact test (whose ``n_permutations`` is empty)."""
    # "monte_carlo" or "grouped_monte_carlo" (faircode.significance's method names)
    if not str(row.get(method_column)).endswith("monte_carlo") or is_missing(row.get("n_permutations")):
        return None
    return int(row["n_permutations"])
