"""The results page: the benchmark's tables as filterable, sortable HTML with figures, and its cache.

Everything on the page is generated from ``results/`` (``results_fairness.csv``, whose columns
``results/README.md`` describes, ``results_by_group.csv`` and ``results_performance.csv``), so the
page stays right when the results change. Each table is plain HTML that reads well without
JavaScript (``templates/results-table.html.j2``, ``templates/results-groups.html.j2``, escaped);
``templates/assets/results.js`` adds the filters, the sorting and the paging.
The figures are ``figures.draw_audit_figures``'s.

The page ships only the first rows of each table (issue 28: the whole table was 1.7 MB of HTML,
7.7 s to load on a phone); every row is in a small script beside the page (``ROWS_FILES``),
which ``results.js`` loads the first time a reader filters, sorts or asks for more. A script,
not a JSON file fetched: it loads from the built site opened from disk too. The tables are
written as fragments (``FRAGMENTS_DIR``) that the MkDocs hook puts into the page after Markdown
is converted (``publishing.mkdocs_hooks.insert_fragments``), so Markdown never parses them and
search never indexes them.

The page is made once per version of the results files and of the code and templates that make
it, then copied from ``.cache/fairsite-results``: drawing the figures and tabulating every row is
most of a re-render's time, and a prose edit should not pay for it, nor a page added elsewhere
(what the page asks of the explainers, whether one is there, is noted and asked again:
``rendering.reads``).
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import tempfile
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
from markupsafe import Markup

from faircode.formatting import format_p_value  # NumPy-free
from site_src.filestate import digest_parts, hash_file
from site_src.provenance import results_facts
from site_src.rendering.environment import TEMPLATES, make_environment
from site_src import filters
from site_src.filters import gap as gap_pp
from site_src.filters import pvalue
from site_src.rendering.reads import noting, shared_set, still_hold
from site_src.rendering.results import ResultsTable, is_missing, is_true, label, read_checked, require_columns
from site_src.rendering.results_verdicts import verdict_cell, verdict_options

if TYPE_CHECKING:  # the build imports this module on every run; pandas only when the page is made
    import pandas as pd

    from site_src.sources.collect import Explainer

__all__ = ["BY_GROUP_FILE", "FILTER_COLUMNS", "FIRST_ROWS", "FRAGMENTS_DIR", "GROUP_DEFAULTS", "ROWS_FILES",
           "filter_options", "group_defaults", "group_filter_options", "group_rows", "groups_table_html", "label",
           "render_results_page",
           "row_sentence", "table_html", "table_rows", "warm_results_page"]

# faircode.benchmark.BY_GROUP_FILE, spelt out: importing the benchmark (scikit-learn) on every build
# would cost more than the page (tests pin that the two agree).
BY_GROUP_FILE = "results_by_group.csv"
PERFORMANCE_FILE = "results_performance.csv"

# The fragments the MkDocs hook inserts (``<!-- fairsite:fragment NAME -->`` in the page), in a
# folder MkDocs leaves out of the site (it skips dot-folders).
FRAGMENTS_DIR = ".fragments"
# Every row of each table, as a script beside the page that results.js loads on demand.
ROWS_FILES = {"results": "results-rows.js", "groups": "groups-rows.js"}
# How many of the fairness table's rows the page itself carries (the rest load on demand).
FIRST_ROWS = 25

# The columns a reader filters on, in the order the filters appear.
FILTER_COLUMNS = ("audit", "strategy", "model", "attribute", "metric", "verdict")
# The by-group table's filters, and the view it opens with (one comparison).
GROUP_FILTER_COLUMNS = ("audit", "strategy", "model", "attribute", "metric", "verdict")
GROUP_DEFAULTS = {"strategy": "S2", "model": "logistic_regression", "metric": "selection_rate"}

_HEADER_TITLES = {
    "groups": "each group's rate; open a row for what it says in a sentence",
    "gap": "disadvantaged group's rate minus the advantaged group's, in percentage points",
    "ratio": "disparate impact ratio: the disadvantaged group's favourable-outcome rate over the advantaged "
             "group's (1 is parity; below 0.8 fails the four-fifths rule)",
    "p_value": "exact permutation test p-value: the chance, were the two groups' true rates equal, of a gap at "
               "least this far from zero; for one comparison chosen in advance",
    "q_value": "Benjamini-Hochberg q-value within the audit: the smallest false discovery rate at which this row "
               "would be called a discovery. Below 0.05, the row is among findings of which at most about 5% are "
               "expected to be false; it does not say this row is unlikely to be chance",
    "verdict": "a gap shown (q below 0.05 and the interval beyond the audit's margin), no gap of practical size "
               "shown (the equivalence test at the margin, adjusted as q is), or inconclusive (neither); open it "
               "for the sentence",
}
# The table's columns: (key, heading, kind); "ci" is made of ci_low and ci_high, "groups" of the
# two groups' names and rates, "ratio" is the gap of a ratio row (the gap column holds differences).
_COLUMNS = (
    ("audit", "Audit", "text"), ("attribute", "Attribute", "text"), ("metric", "Metric", "text"),
    ("strategy", "Strategy", "text"), ("model", "Model", "text"), ("groups", "Groups compared", "none"),
    ("verdict", "Verdict", "text"), ("gap", "Gap (pp)", "number"), ("ratio", "Ratio", "number"),
    ("ci", "95% interval", "none"),
    ("p_value", "p", "number"), ("q_value", "q", "number"), ("significant", "Significant", "text"),
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
    shutil.copytree(_cached_page(env, results, root, slugs=slugs), docs_dir / "results", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(_READS))
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
    files and of the code and templates that make it, drawn first if it is not there or if what it
    read of the site's pages (whether an explainer is there: ``slugs``, the titles; noted as it
    read them, `rendering.reads`) reads otherwise now: a page added does not draw it again."""
    key = digest_parts([
        *(hash_file(results.path.with_name(n)) for n in (results.path.name, PERFORMANCE_FILE, BY_GROUP_FILE)),
        *(p.read_bytes() for p in sorted(TEMPLATES.glob("results*.j2"))),
        # The code that writes the page's text: this module, its figures, cells, filters and p-values.
        *(Path(__file__).with_name(m).read_bytes()
          for m in ("results_page.py", "results_verdicts.py", "figures.py", "results.py", "environment.py",
                    "reads.py")),
        Path(filters.__file__).read_bytes(),
        # The p-values' and the verdicts' words (faircode.formatting, faircode/significance/_verdict.py),
        # found beside formatting.py so that computing the key imports no NumPy.
        *(p.read_bytes() for p in (Path(format_p_value.__code__.co_filename),
                                    Path(format_p_value.__code__.co_filename).parent / "significance" / "_verdict.py")),
        # Each audit's margin and its reason, which the page quotes.
        *(hash_file(p) for p in sorted((root / "audits").glob("*/audit.yaml"))),
        metadata.version("matplotlib"),
    ])
    cache = root / ".cache" / "fairsite-results" / key[:20]
    shared = {**env.globals, "slugs": slugs}
    try:
        holds = still_hold(json.loads((cache / _READS).read_text()), shared)
    except (OSError, ValueError):
        holds = False
    if not holds:
        shutil.rmtree(cache.parent, ignore_errors=True)  # older versions are never used again
        cache.parent.mkdir(parents=True)
        tmp = Path(tempfile.mkdtemp(dir=cache.parent))
        with noting() as reads:
            _write_page(env, results, tmp, shared_set("slugs", slugs), root)
        (tmp / _READS).write_text(json.dumps(reads.as_json()))
        tmp.rename(cache)
    return cache


_READS = ".reads.json"  # beside the cached page: what it read of the site's pages (not copied into docs/)


def _write_page(env, results: ResultsTable, out: Path, slugs: set[str], root: Path) -> None:
    # Imported only on a miss: the level `significant` uses, and the small-group limit of the warning.
    from faircode.benchmark import ALPHA
    from faircode.significance import SMALL_SAMPLE_THRESHOLD
    from site_src.rendering.figures import draw_audit_figures
    from site_src.rendering.results_verdicts import audit_margins, verdict_counts, yardstick_disagreements

    shutil.copyfile(results.path, out / results.path.name)
    df = results.df
    fragments = out / FRAGMENTS_DIR
    fragments.mkdir()
    rows = table_rows(df, small_sample=SMALL_SAMPLE_THRESHOLD)
    _write_rows(out / ROWS_FILES["results"], "results", rows)
    (fragments / "results-table.html").write_text(_html(
        "results-explorer.html.j2", kind="results", table=table_html(df, small_sample=SMALL_SAMPLE_THRESHOLD,
                                                                      first=FIRST_ROWS),
        options=filter_options(df), n_rows=len(df), first=min(FIRST_ROWS, len(df)), rows_src=ROWS_FILES["results"],
    ), encoding="utf-8")
    groups = _by_group_view(results.path.with_name(BY_GROUP_FILE), out, alpha=ALPHA)
    if groups:
        (fragments / "results-groups.html").write_text(groups.pop("html"), encoding="utf-8")
    page = env.get_template("results.md.j2").render(
        csv_name=results.path.name, n_rows=len(df), figures=draw_audit_figures(df, out, alpha=ALPHA),
        groups=groups, label=label,
        has_kind="kind" in df.columns, has_q="q_value" in df.columns, alpha=ALPHA, slugs=slugs,
        verdicts=({"counts": verdict_counts(df), "margins": audit_margins(df, root),
                   "disagreements": yardstick_disagreements(df)} if "verdict" in df.columns
                  else None),
        small_sample=SMALL_SAMPLE_THRESHOLD, dropped=_dropped_per_audit(results.path.with_name(PERFORMANCE_FILE)),
    )
    (out / "index.md").write_text(page, encoding="utf-8")


def _write_rows(path: Path, name: str, rows: list[str]) -> None:
    """Every row of table ``name`` as a script that hands results.js their HTML (``window.fcRows``).

    Without the cells' ``data-label`` (a third of the bytes): results.js gives each loaded cell
    its column's heading, as the page's own rows carry it for a phone without JavaScript.
    """
    import json

    text = re.sub(r' data-label="[^"]*"', "", "\n".join(rows))
    body = json.dumps(text, ensure_ascii=False).replace("</", "<\\/")  # no "</script>" inside
    path.write_text(f"(window.fcRows = window.fcRows || {{}})[{json.dumps(name)}] = {body};\n", encoding="utf-8")


def _dropped_per_audit(performance: Path) -> dict[str, int]:
    """Rows each audit dropped for a missing target or protected value, by audit display name
    (empty when the performance file or its ``n_dropped`` column is absent)."""
    if not performance.exists():
        return {}
    rows = read_checked(performance).rows  # a malformed or repeated row: named by file and line
    return {r["audit_name"]: int(r["n_dropped"]) for r in rows if r.get("n_dropped", "") != ""}


def _by_group_view(path: Path, out: Path, *, alpha: float) -> dict | None:
    """The by-group table for the results page (None without ``results_by_group.csv``): its
    section's HTML (the rows of the view it opens on), and every row in a script beside the page."""
    if not path.exists():
        return None
    import pandas as pd

    shutil.copyfile(path, out / path.name)
    read_checked(path)  # a malformed or repeated row: an error naming file and line (issue 25)
    df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    defaults = group_defaults(df)
    first = df
    for col, value in defaults.items():
        first = first[first[col].astype(str) == value]
    _write_rows(out / ROWS_FILES["groups"], "groups", group_rows(df, alpha=alpha))
    html = _html("results-explorer.html.j2", kind="groups", table=groups_table_html(first, alpha=alpha),
                 n_rows=len(df), first=len(first), options=group_filter_options(df), defaults=defaults,
                 rows_src=ROWS_FILES["groups"])
    from site_src.rendering.results_verdicts import verdict_counts

    return {"csv_name": path.name, "n_rows": len(df), "html": html,
            "min_sizes": sorted(df["min_size"].dropna().astype(int).unique().tolist()),
            "verdicts": verdict_counts(df[df["group"] != df["reference_group"]]) if "verdict" in df.columns else None}


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
        elif c == "verdict":  # the three states in their order and words
            out[c] = verdict_options(df[c])
            continue
        out[c] = [(v, names.get(v, label(v))) for v in sorted(df[c].dropna().astype(str).unique())]
    return out


def table_html(df: pd.DataFrame, *, small_sample: int | None = None, first: int | None = None,
               alpha: float | None = None) -> Markup:
    """The results as one HTML table: a row per CSV row (the ``first`` rows only, if given),
    every cell escaped.

    Each row carries ``data-<column>`` attributes for the filters and ``data-significant``; each
    number cell carries its raw value in ``data-value`` for sorting (empty when undefined), while
    its text is formatted for reading: a difference of rates in percentage points in the gap
    column, a ratio in its own column. The groups' cell names both groups with their rates and
    opens (``<details>``) to :func:`row_sentence`; the verdict's cell (where the file has one)
    names the state in the words of ``faircode.significance.VERDICTS`` and opens to its sentence,
    written at level ``alpha`` (default ``faircode.benchmark.ALPHA``). A row with
    ``small_sample_warning`` is marked ⚠, whose help names ``small_sample`` (the group size below
    which faircode warns; by default ``faircode.significance.SMALL_SAMPLE_THRESHOLD``). Raises
    ValueError naming the columns the table shows and ``df`` lacks.
    """
    head, rows = _table(df, small_sample=small_sample, alpha=alpha)
    return _html("results-table.html.j2", head=head, rows=rows if first is None else rows[:first])


def table_rows(df: pd.DataFrame, *, small_sample: int | None = None, alpha: float | None = None) -> list[str]:
    """Each row of :func:`table_html`'s table as one line of HTML (``<tr>...</tr>``), in order."""
    _, rows = _table(df, small_sample=small_sample, alpha=alpha)
    return _html("results-table.html.j2", rows=rows, rows_only=True).splitlines()


def _table(df: pd.DataFrame, *, small_sample: int | None, alpha: float | None) -> tuple[list[dict], list[dict]]:
    """The fairness table's head and rows, as the template takes them."""
    # Every column the table shows or marks: a results file without one is an error, not a
    # page that quietly drops its significance or small-sample markers.
    require_columns(df, ("audit", "strategy", "model", "attribute", "metric", "value_disadvantaged",
                         "value_advantaged", "gap", "ci_low", "ci_high", "p_value", "significant",
                         "small_sample_warning"))
    if small_sample is None:
        from faircode.significance import SMALL_SAMPLE_THRESHOLD as small_sample
    if alpha is None:
        from faircode.benchmark import ALPHA as alpha
    cols = [c for c in _COLUMNS if c[0] in ("ci", "groups", "ratio") or c[0] in df.columns]
    # Help is in `data-help`, which results.js turns into a toggletip that click, tap and
    # the keyboard open; `title` stays as the no-JavaScript fallback (the script removes it).
    head = [{"attrs": [("data-type", kind), ("data-col", key), ("scope", "col"), *_help(_HEADER_TITLES.get(key))],
             "title": title, "sortable": kind != "none"} for key, title, kind in cols]
    rows = []
    for row in df.to_dict("records"):
        sig = is_true(row.get("significant"))
        attrs = [(f"data-{c}", "" if is_missing(row[c]) else row[c]) for c in FILTER_COLUMNS if c in row]
        attrs += [("data-significant", "true" if sig else "false")] + ([("class", "fc-significant")] if sig else [])
        # data-col and data-label let a narrow screen show each row as a card (extra.css).
        cells = []
        for key, title, _ in cols:
            cell = _cell(key, row, small_sample=small_sample, alpha=alpha)
            cells.append({"warn": None, "sentence": None, "details": None, **cell,
                          "attrs": [("data-col", key), ("data-label", title), *cell.get("attrs", [])]})
        rows.append({"attrs": attrs, "cells": cells})
    return head, rows


def _is_ratio(row: dict) -> bool:
    return str(row.get("kind", "")) == "ratio" or str(row.get("metric", "")).endswith("ratio")


def _cell(key: str, row: dict, *, small_sample: int, alpha: float) -> dict:
    """The cell of column ``key`` in ``row``: ``text``, its ``attrs``, an optional ``warn``
    (the help of a ⚠ after the text) and, for the groups' and the verdict's cells, the
    ``sentence`` it opens to (``details``: the class of its disclosure)."""
    ratio = _is_ratio(row)
    value = row.get(key)
    if key == "verdict":
        return {**verdict_cell(row, alpha=alpha), "details": "fc-row-sentence fc-verdict"}
    if key == "ci":
        low, high = row.get("ci_low"), row.get("ci_high")
        if is_missing(low) or is_missing(high):
            return {"text": ""}
        return {"text": f"[{_gap_text(low, ratio)}, {_gap_text(high, ratio)}]"}
    if key == "groups":
        return {"text": _groups_text(row), "sentence": row_sentence(row, small_sample=small_sample)}
    if key in FILTER_COLUMNS:
        return _word_cell(key, row)
    if key == "significant":
        if is_missing(value) or str(value) == "":
            return {"text": ""}
        warn = is_true(row.get("small_sample_warning"))
        return {"text": "● yes" if is_true(value) else "no",
                "warn": _help(f"fewer than {small_sample} rows in a group: the p-value and interval stay valid, but the interval is wide and a real gap is easily missed") if warn else None}
    if key in ("gap", "ratio"):
        if (key == "ratio") != ratio:  # the other column holds this row's gap
            return {"text": "", "attrs": [("data-value", "")]}
        value = row.get("gap")
    if is_missing(value):
        reason = row.get("reason")
        return {"text": "—", "attrs": [("data-value", ""), *_help(reason if not is_missing(reason) else None)]}
    raw = float(value)
    if key == "p_value":  # the benchmark's tests are exact today; a Monte Carlo one shows its floor
        text = p_value_text(raw, n_permutations=_monte_carlo_shuffles(row, "method"))
    elif key == "q_value":
        text = p_value_text(raw)
    else:
        text = _gap_text(raw, ratio)
    return {"text": text, "attrs": [("data-value", repr(raw))]}


def _rate(value) -> str:
    return "—" if is_missing(value) else f"{100 * float(value):.1f}%"


def _group_names(row: dict) -> tuple[str, str]:
    """The two groups a row compares, by the names the results file gives them."""
    names = [row.get(c) for c in ("disadvantaged_group", "advantaged_group")]
    if any(is_missing(n) or str(n) == "" for n in names):
        return "disadvantaged", "advantaged"
    return str(names[0]), str(names[1])


def _groups_text(row: dict) -> str:
    """``Under 25: 50.0% vs 25 and over: 21.4%``: each group by name, with its rate."""
    a, b = _group_names(row)
    return f"{a}: {_rate(row.get('value_disadvantaged'))} vs {b}: {_rate(row.get('value_advantaged'))}"


# What each metric's two rates say, with {x} and {y} the rates and {a} and {b} the groups.
_SENTENCES = {
    "demographic_parity_difference": "the model flagged {x} of the {a} group and {y} of the {b} group",
    "equal_opportunity_difference": "of the people who merit the favourable outcome, {x} of the {a} group got it "
                                    "and {y} of the {b} group",
    "true_positive_rate_difference": "of the people whose true label is positive, the model flagged {x} of the "
                                     "{a} group and {y} of the {b} group",
    "false_positive_rate_difference": "of the people whose true label is negative, the model wrongly flagged {x} "
                                      "of the {a} group and {y} of the {b} group",
    "precision_difference": "of the people the model flagged, {x} of the {a} group and {y} of the {b} group "
                            "truly had the positive label",
    "accuracy_difference": "the model was right about {x} of the {a} group and {y} of the {b} group",
    "disparate_impact_ratio": "{x} of the {a} group got the favourable outcome and {y} of the {b} group",
}


def row_sentence(row: dict, *, small_sample: int) -> str:
    """One plain sentence that says what a row of the fairness table found.

    The two rates with the groups' names, the gap (percentage points) or the ratio, and what
    the row's q-value says (its p-value where the file has no q), with the ⚠ warning when a
    group is small. A row whose gap is undefined says why (``reason``).

    Parameters
    ----------
    row : dict
        One row of ``results_fairness.csv`` (rates in [0, 1]; ``gap`` disadvantaged minus
        advantaged, or their ratio for a ratio row).
    small_sample : int
        The group size below which the row carries ``small_sample_warning``.
    """
    a, b = _group_names(row)
    metric = str(row.get("metric", ""))
    x, y = _rate(row.get("value_disadvantaged")), _rate(row.get("value_advantaged"))
    what = _SENTENCES.get(metric, label(metric) + ": {x} for the {a} group, {y} for the {b} group")
    text = f"In {row.get('audit_name') or label(row.get('audit'))} ({row.get('strategy')}, {label(row.get('model'))}), "
    text += what.format(x=x, y=y, a=a, b=b)
    gap = row.get("gap")
    if is_missing(gap):
        reason = row.get("reason")
        text += "; the gap is undefined" + (f" ({reason})" if not is_missing(reason) and str(reason) else "")
    else:
        ratio = _is_ratio(row)
        text += f": a ratio of {float(gap):.2f}" if ratio else f": a gap of {gap_pp(float(gap))}"
        if ratio:
            text += ", under the four-fifths rule's 0.8" if float(gap) < 0.8 else ", not under the four-fifths rule's 0.8"
        q, p = row.get("q_value"), row.get("p_value")
        if not is_missing(q):
            sig = is_true(row.get("significant"))
            # q is the smallest false discovery rate at which the row is a discovery, not the chance
            # that this gap is chance (issue 47): say what q < 0.05 claims about the audit's findings.
            q_text = f"q{pvalue(float(q)).removeprefix('p')}"
            text += (f"; counted with this audit's other tests it is among findings of which at most about 5% are "
                     f"expected to be false ({q_text})" if sig else
                     f"; counted with this audit's other tests it is not a finding at a false discovery rate of 5% "
                     f"({q_text}), which does not mean the groups are treated alike")
        elif not is_missing(p):
            text += f" ({pvalue(float(p), _monte_carlo_shuffles(row, 'method'))})"
    if is_true(row.get("small_sample_warning")):
        text += f"; a group has fewer than {small_sample} rows, so the interval is wide and a real gap is easily missed (the p-value and interval stay valid)"
    return text + "."


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

def group_filter_options(df: pd.DataFrame) -> dict[str, list[tuple[str, str]]]:
    """``(value, name)`` for each distinct value of each by-group filter column, sorted by value
    (metrics in the file's order); the name is the one the table's rows show."""
    out = {}
    for c in GROUP_FILTER_COLUMNS:
        if c == "verdict":  # the three states in their order and words; absent from older files
            if c in df.columns:
                out[c] = verdict_options(df[c])
            continue
        values = df[c].dropna().astype(str)
        values = list(dict.fromkeys(values)) if c == "metric" else sorted(values.unique())
        out[c] = [(v, _group_word(c, v, df)) for v in values]
    return out


def _group_word(column: str, value, df: pd.DataFrame | None = None) -> str:
    """What the by-group table shows for ``value`` of ``column`` (the audit's name, the metric's words)."""
    if column == "audit" and df is not None and "audit_name" in df.columns:
        names = df.loc[df["audit"].astype(str) == str(value), "audit_name"].dropna()
        if len(names):
            return str(names.iloc[0])
    if column == "metric":
        return _GROUP_METRIC_LABELS.get(value, label(value))
    if column == "strategy":
        return str(value)
    return label(value)


def group_defaults(df: pd.DataFrame) -> dict[str, str]:
    """The comparison the by-group table opens on: ``GROUP_DEFAULTS`` (strategy, model, metric)
    where the file has them, in its first audit and that audit's first attribute having them."""
    defaults = {c: v for c, v in GROUP_DEFAULTS.items() if (df[c].astype(str) == v).any()}
    view = df
    for c, v in defaults.items():
        view = view[view[c].astype(str) == v]
    if view.empty:
        return {}
    audit = sorted(view["audit"].astype(str).unique())[0]
    attribute = sorted(view.loc[view["audit"].astype(str) == audit, "attribute"].astype(str).unique())[0]
    return {"audit": audit, **{c: defaults[c] for c in ("strategy", "model") if c in defaults},
            "attribute": attribute, **({"metric": defaults["metric"]} if "metric" in defaults else {})}


def groups_table_html(df: pd.DataFrame, *, alpha: float) -> Markup:
    """``results_by_group.csv`` as one HTML table: a row per group, rate, interval and tests.

    Rows carry ``data-<column>`` attributes for ``assets/results.js``, cells ``data-label`` (their
    column's name, for the card a phone shows); a group below the manifest's minimum size is
    marked (``fc-small``) and its comparison cells say why they are empty. The largest gap, its
    max-gap p-value and the omnibus p-value (chi-squared test that every compared group has the
    same rate) repeat on each row of a comparison; p-values below ``alpha`` are bold. Raises
    ValueError naming the columns ``df`` lacks.
    """
    return _html("results-groups.html.j2", rows=_group_rows(df, alpha=alpha))


def group_rows(df: pd.DataFrame, *, alpha: float) -> list[str]:
    """Each row of :func:`groups_table_html`'s table as one line of HTML, in order."""
    return _html("results-groups.html.j2", rows=_group_rows(df, alpha=alpha), rows_only=True).splitlines()


def _group_rows(df: pd.DataFrame, *, alpha: float) -> list[dict]:
    """The by-group table's rows as its template takes them (see :func:`groups_table_html`)."""
    require_columns(df, ("audit", "strategy", "model", "attribute", "group", "metric", "value", "ci_low", "ci_high",
                         "n_group", "small_cell", "diff_vs_reference", "p_value_vs_reference_holm", "max_gap",
                         "p_value_max_gap", "reference_group", "min_size"))
    rows = []
    for row in df.to_dict("records"):
        small = is_true(row["small_cell"])
        rows.append({
            "attrs": [(f"data-{c}", "" if is_missing(row[c]) else row[c]) for c in GROUP_FILTER_COLUMNS if c in row]
                     + ([("class", "fc-small")] if small else []),
            "words": [label(row["audit_name"] if "audit_name" in row else row["audit"]), row["strategy"],
                      label(row["model"]), label(row["attribute"]),
                      _GROUP_METRIC_LABELS.get(row["metric"], label(row["metric"]))],
            "group": row["group"], "reference": str(row["group"]) == str(row["reference_group"]),
            "small": small, "min_size": row["min_size"], "n": f"{int(row['n_group']):,}",
            "rate": "—" if is_missing(row["value"]) else f"{100 * float(row['value']):.1f}%",
            "ci": "" if is_missing(row["ci_low"]) else
                  f"[{100 * float(row['ci_low']):.1f}%, {100 * float(row['ci_high']):.1f}%]",
            "diff": _difference_text(row),
            "verdict": verdict_cell(row, alpha=alpha, by_group=True),
            "p_ref": _group_p(row["p_value_vs_reference_holm"], alpha),
            "largest": "" if is_missing(row["max_gap"]) else _gap_text(row["max_gap"], False).lstrip("+"),
            "p_max": _group_p(row["p_value_max_gap"], alpha, n_permutations=_monte_carlo_shuffles(row, "method_max_gap")),
            # The omnibus test (issue 24), beside the max-gap test; absent from older files.
            "p_omnibus": _group_p(row.get("p_value_omnibus"), alpha,
                                  n_permutations=_monte_carlo_shuffles(row, "method_omnibus")),
        })
    return rows


def _difference_text(row: dict) -> str:
    """A group's rate minus the reference's, with its 95% interval where the file has one."""
    if is_missing(row["diff_vs_reference"]):
        return ""
    text = _gap_text(row["diff_vs_reference"], False)
    low, high = row.get("diff_vs_reference_ci_low"), row.get("diff_vs_reference_ci_high")
    if is_missing(low) or is_missing(high):
        return text
    return f"{text} [{_gap_text(low, False)}, {_gap_text(high, False)}]"


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
