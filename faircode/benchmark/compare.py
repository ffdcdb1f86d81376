"""The diff of a fresh run against the committed results files, cell by cell, within tolerance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from faircode import tolerances
from faircode.benchmark.columns import (
    BY_GROUP_COLUMNS,
    BY_GROUP_FILE,
    BY_GROUP_KEY,
    FAIRNESS_COLUMNS,
    FAIRNESS_FILE,
    FAIRNESS_KEY,
    PERFORMANCE_COLUMNS,
    PERFORMANCE_FILE,
    PERFORMANCE_KEY,
)
from faircode.benchmark.results_io import _csv_text, _read_as_text
from faircode.results_csv import read_results_csv
from faircode.benchmark.tables import BY_GROUP_Q_VALUES, _add_by_group_q_values, _adjusted_columns


#: How each results column is compared with its committed value (see `faircode.tolerances`):
#: every column of both files is classified; a column not listed is compared exactly.
COLUMN_KINDS: dict[str, str] = {
    **dict.fromkeys(["audit", "audit_name", "strategy", "model", "attribute", "disadvantaged_group",
                     "advantaged_group", "metric", "kind", "significant", "n_disadvantaged", "n_advantaged",
                     "small_sample_warning", "reason", "method", "n_permutations", "ci_method",
                     "same_test_as", "random_state", "n_test", "n_positive", "n_dropped"], "exact"),
    **dict.fromkeys(["value_disadvantaged", "value_advantaged", "accuracy", "balanced_accuracy", "roc_auc"],
                    "fitted"),
    "gap": "gap",  # fitted; for a ratio, the fitted bound propagated through a / b
    # Score-based intervals (Newcombe, MOVER-R) are closed-form in the group counts and rates: fitted,
    # like the gap they bracket.
    "ci_low": "gap",
    "ci_high": "gap",
    "p_value": "p_value",  # log scale, or Monte Carlo when n_permutations is set
    "q_value": "p_value",
    # results_by_group.csv: labels and counts exact; rates, intervals and the summaries built
    # from them fitted; the reference tests exact p-values; the max-gap test Monte Carlo.
    **dict.fromkeys(["attribute_kind", "group", "reference_group", "n_outcome", "n_group", "small_cell",
                     "min_size", "max_gap_high_group", "max_gap_low_group", "n_groups_compared",
                     "method_max_gap"], "exact"),
    **dict.fromkeys(["value", "diff_vs_reference", "ratio_vs_reference", "max_gap", "min_max_ratio"], "fitted"),
    "p_value_vs_reference": "p_value",
    "p_value_vs_reference_holm": "p_value",
    "p_value_max_gap": "p_value",  # Monte Carlo: n_permutations relabellings
    # The omnibus test: exact or asymptotic (deterministic), or Monte Carlo (method_omnibus);
    # the q-values follow their p-values.
    **dict.fromkeys(["omnibus_test", "method_omnibus"], "exact"),
    "p_value_omnibus": "p_value",
    "q_value_max_gap": "p_value",
    "q_value_omnibus": "p_value",
    # The three-state verdict (issue 45): the margin comes from the manifest and the verdict is a
    # decision, both exact; the equivalence p-values and their adjustments are functions of the
    # counts, like the exact test's (tolerances.py says why the same band holds); the power at the
    # margin has its own band; the interval of a group's difference with the reference is a score
    # interval, fitted like the gap's.
    **dict.fromkeys(["margin_low", "margin_high", "equivalence_method", "verdict"], "exact"),
    **dict.fromkeys(["equivalence_p_value", "equivalence_q_value", "equivalence_p_value_holm"], "p_value"),
    "power_at_margin": "power",
    **dict.fromkeys(["diff_vs_reference_ci_low", "diff_vs_reference_ci_high"], "fitted"),
}


def _cell(text: str):
    # A CSV cell as a number where it is one: "" is NaN (undefined), text stays text.
    if text == "":
        return float("nan")
    try:
        return float(text)
    except ValueError:
        return text


def _count(text: str) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def column_tolerance(column: str, committed_row) -> tolerances.Tolerance:
    """The rule a results cell is compared by, given the committed row it belongs to.

    Parameters
    ----------
    column : str
        A column of `FAIRNESS_COLUMNS` or `PERFORMANCE_COLUMNS` (see `COLUMN_KINDS`).
    committed_row : mapping of str to str
        The committed row, as the CSV holds it (the row's rates, interval and resample counts
        size the band).

    Returns
    -------
    faircode.tolerances.Tolerance
    """
    kind = COLUMN_KINDS.get(column, "exact")
    get = committed_row.get
    if kind == "fitted":
        return tolerances.fitted()
    if kind == "power":
        return tolerances.power()
    rates = (_cell(get("value_disadvantaged", "")), _cell(get("value_advantaged", "")))
    is_ratio = get("kind") == "ratio"
    if kind == "gap":
        return tolerances.fitted_ratio(*rates) if is_ratio else tolerances.fitted()
    if kind == "p_value":
        n = _count(get("n_permutations"))
        monte_carlo = column in ("p_value", "p_value_max_gap") or (
            column == "p_value_omnibus" and get("method_omnibus") == "monte_carlo")
        if monte_carlo and n is not None:
            return tolerances.monte_carlo(_cell(get(column, "")), n)
        if column in ("q_value_max_gap", "q_value_omnibus") and n is not None:
            # A q-value moves with the Monte Carlo p-values of its audit at or above its own, and is
            # written rounded to that error (tables._to_monte_carlo_digits): its own band.
            p_column = "p_value_max_gap" if column == "q_value_max_gap" else "p_value_omnibus"
            if p_column == "p_value_max_gap" or get("method_omnibus") == "monte_carlo":
                return tolerances.monte_carlo_q_value(_cell(get(column, "")), _cell(get(p_column, "")), n)
        return tolerances.p_value()
    return tolerances.exact()


def _diff_table(committed: pd.DataFrame, current: pd.DataFrame, key: list[str], file: str,
                lines: pd.Series | None = None) -> list[dict]:
    committed = committed.set_index(key)
    current = current.set_index(key)
    # Rows as plain dicts: some 2,600 rows x 20 cells compared one by one, where pandas' per-cell
    # lookups were most of the comparison's time (issue 26).
    old_rows, new_rows = _rows_by_key(committed), _rows_by_key(current)
    columns = list(current.columns.union(committed.columns, sort=False))
    diffs = []
    for idx in committed.index.union(current.index, sort=True):
        ident = dict(zip(key, idx if isinstance(idx, tuple) else (idx,)))
        base = {"file": file, **{k: ident.get(k, "") for k in [*FAIRNESS_KEY, "group"]}}
        row = {"tolerance": "exact", "difference": "", "within_tolerance": False}
        if idx not in new_rows:
            at = f" (line {lines.loc[idx]})" if lines is not None else ""
            diffs.append({**base, "column": "(row)", "committed": f"present{at}",
                          "current": "missing: the run gives no such row", **row})
        elif idx not in old_rows:
            diffs.append({**base, "column": "(row)", "committed": "missing", "current": "present", **row})
        else:
            old, new = old_rows[idx], new_rows[idx]
            for col in columns:
                o, n = old.get(col, "(no column)"), new.get(col, "(no column)")
                if o == n:
                    continue
                rule = column_tolerance(col, old)
                diffs.append({**base, "column": col, "committed": o, "current": n, "tolerance": rule.description,
                              "difference": rule.excess(_cell(o), _cell(n)),
                              "within_tolerance": rule.matches(_cell(o), _cell(n))})
    return diffs


def _rows_by_key(frame: pd.DataFrame) -> dict:
    """``frame.to_dict("index")`` of a text table, built from column lists: both tables are
    text (`_read_as_text`), so the cells need none of pandas' per-cell boxing."""
    columns = list(frame.columns)
    cells = zip(*(frame[c].tolist() for c in columns)) if columns else [()] * len(frame)
    return {idx: dict(zip(columns, row)) for idx, row in zip(frame.index, cells)}


def _tasks(committed: pd.DataFrame) -> list[tuple]:
    """Each committed row's (audit, strategy, model)."""
    return list(zip(*(committed[k].tolist() for k in PERFORMANCE_KEY))) if len(committed) else []


def _read_committed(path: Path, key: list[str]) -> tuple[pd.DataFrame, pd.Series, list[dict]]:
    """A committed results file as text, the line of each row, and a listing of its repeated rows.

    A repeated key is listed once per extra row (with the lines that hold it) and only its first
    row is compared: a copied row must not pass because it equals the row it copies.
    """
    file = read_results_csv(path, key=key, duplicates="keep")
    frame = pd.DataFrame(list(file.rows), columns=list(file.columns), dtype=object)
    lines = pd.Series(file.lines, index=frame.index)
    repeated = frame.duplicated(subset=key, keep="first") if len(frame) else pd.Series([], dtype=bool)
    listed = []
    for ident, at in file.duplicates:
        listed.append({"file": path.name, **_ident(key, ident), "column": "(row)",
                       "committed": f"lines {', '.join(map(str, at))}",
                       "current": f"duplicated: {len(at)} rows with this key, one expected",
                       "tolerance": "exact", "difference": "", "within_tolerance": False})
    return frame[~repeated.to_numpy()], lines[~repeated.to_numpy()], listed


def _ident(key: list[str], values) -> dict:
    ident = dict(zip(key, values))
    return {k: ident.get(k, "") for k in [*FAIRNESS_KEY, "group"]}


def _unaccounted(committed: pd.DataFrame, lines: pd.Series, key: list[str], file: str,
                 covered: set[tuple[str, ...]]) -> list[dict]:
    """Rows of a full check's committed file whose (audit, strategy, model) the run never fitted,
    each with why: an audit, strategy or model the run does not have."""
    audits = sorted({a for a, _, _ in covered})
    listed = []
    for i, task in zip(committed.index, _tasks(committed)):
        if task in covered:
            continue
        row = committed.loc[i]
        audit, strategy, model = task
        if audit not in audits:
            why = f"no audit {audit!r} (the audits are {', '.join(audits)})"
        elif (ran := sorted({s for a, s, _ in covered if a == audit})) and strategy not in ran:
            why = f"{audit} has no strategy {strategy!r} (it runs {', '.join(ran)})"
        else:
            ran = sorted({m for a, s, m in covered if a == audit and s == strategy})
            why = f"{audit} {strategy} has no model {model!r} (it runs {', '.join(ran)})"
        listed.append({"file": file, **_ident(key, [row[k] for k in key]), "column": "(row)",
                       "committed": f"present (line {lines.loc[i]})", "current": f"not produced by any run: {why}",
                       "tolerance": "exact", "difference": "", "within_tolerance": False})
    return listed


def _q_values_within(fairness: pd.DataFrame, committed: pd.DataFrame) -> pd.DataFrame:
    """Recompute a partial run's q-values as if it were part of the committed table.

    BH depends on every p-value of the audit, so the q-values of a subset run differ from
    the committed ones even when nothing changed; here the subset's p-values replace their
    rows in the committed table before adjusting within each audit.
    """
    key = pd.MultiIndex.from_frame(committed[FAIRNESS_KEY])
    ran = pd.MultiIndex.from_frame(fairness[FAIRNESS_KEY].astype(str))
    columns = [*FAIRNESS_KEY, "kind", "p_value", "same_test_as", "ci_low", "ci_high", "margin_low", "margin_high",
               "equivalence_p_value"]
    kept = committed.loc[~key.isin(ran)].reindex(columns=columns).replace("", np.nan)
    merged = pd.concat([kept, fairness[columns]], ignore_index=True)
    adjusted = _adjusted_columns(merged).set_axis(pd.MultiIndex.from_frame(merged[FAIRNESS_KEY].astype(str)))
    fairness = fairness.copy()
    for column in adjusted.columns:
        fairness[column] = adjusted[column].loc[ran].to_numpy()
    return fairness


def _by_group_q_values_within(by_group: pd.DataFrame, committed: pd.DataFrame) -> pd.DataFrame:
    """Recompute a partial run's by-group q-values as if it were part of the committed table
    (as `_q_values_within` does for the fairness file)."""
    task = ["audit", "strategy", "model"]
    ran = pd.MultiIndex.from_frame(by_group[task].astype(str))
    in_run = pd.MultiIndex.from_frame(committed[task]).isin(ran) if len(committed) else np.zeros(0, bool)
    columns = [*BY_GROUP_COLUMNS]
    kept = committed.loc[~in_run].reindex(columns=columns).replace("", np.nan)
    merged = pd.concat([kept, by_group[columns]], ignore_index=True)
    merged = _add_by_group_q_values(merged)
    by_group = by_group.copy()
    for q_column in BY_GROUP_Q_VALUES.values():
        by_group[q_column] = merged[q_column].to_numpy()[len(kept):]
    return by_group


def compare_results(fairness: pd.DataFrame, performance: pd.DataFrame, output_dir="results", *,
                    include_within: bool = False, by_group: pd.DataFrame | None = None,
                    complete: bool = False) -> pd.DataFrame:
    """List every cell where a fresh run differs from the committed results files beyond tolerance.

    A partial check (``complete=False``) compares only the committed rows whose (audit, strategy,
    model) the fresh run covers, so a check of a subset ignores the rest of the committed table
    (`unchecked_rows` counts what it left out). A full check (``complete=True``: the run is the
    whole benchmark) accounts for every committed row: a row of an audit, strategy or model the
    run does not have is listed, with why.

    Parameters
    ----------
    fairness, performance : DataFrame
        A fresh run, as returned by `run_benchmark`.
    output_dir : str or Path, default "results"
        Where the committed files are.
    include_within : bool, default False
        Also list the cells whose text differs but whose value is within its tolerance.
    by_group : DataFrame, optional
        A fresh by-group table (``run_benchmark(return_by_group=True)``), compared with the
        committed ``results_by_group.csv`` the same way.
    complete : bool, default False
        The run is the full benchmark: a committed row no task of it produced is listed.

    Returns
    -------
    DataFrame
        Columns file, audit, strategy, model, attribute, metric, group (empty outside the by-group
        file), column, committed, current,
        tolerance (the rule, e.g. ``"fitted model: |Δ| ≤ 0.0001"``), difference (on the rule's
        scale) and within_tolerance; empty when every cell matches. Cells are compared as the
        CSV holds them: identical text matches; otherwise by the rule of `column_tolerance`
        (``faircode.tolerances``: counts and labels exact, fitted-model quantities, Monte Carlo
        quantities, bootstrap endpoints and p-values each within their own tolerance). A
        missing, extra or repeated row is always listed (column ``"(row)"``, with the file's
        line numbers in ``committed`` and what is wrong in ``current``).

    Raises
    ------
    FileNotFoundError
        If a committed results file is missing.
    faircode.results_csv.ResultsFileError
        If a committed file is malformed (a row with more or fewer cells than the header, an
        empty key cell, not UTF-8): the message names the file and the line.
    """
    from io import StringIO

    out = Path(output_dir)
    diffs: list[dict] = []
    covered = set(map(tuple, performance[PERFORMANCE_KEY].astype(str).to_numpy().tolist()))
    files = [
        (FAIRNESS_FILE, fairness, FAIRNESS_COLUMNS, FAIRNESS_KEY),
        (PERFORMANCE_FILE, performance, PERFORMANCE_COLUMNS, PERFORMANCE_KEY),
    ]
    if by_group is not None:
        if (out / BY_GROUP_FILE).is_file():
            by_group = _by_group_q_values_within(by_group, _read_as_text(out / BY_GROUP_FILE))
        files.append((BY_GROUP_FILE, by_group, BY_GROUP_COLUMNS, BY_GROUP_KEY))
    for name, df, columns, key in files:
        path = out / name
        if not path.is_file():
            raise FileNotFoundError(f"committed results file {path} does not exist; run `faircode benchmark` first")
        committed, lines, repeated = _read_committed(path, key)
        diffs.extend(repeated)
        if name == FAIRNESS_FILE:
            df = _q_values_within(df, committed)
        in_run = pd.Series([task in covered for task in _tasks(committed)], dtype=bool)
        if complete:
            diffs.extend(_unaccounted(committed, lines, key, name, covered))
        committed, lines = committed[in_run.to_numpy()], lines[in_run.to_numpy()]
        current = _read_as_text(StringIO(_csv_text(df[columns])))
        by_key = lines.set_axis(pd.MultiIndex.from_frame(committed[key]))
        diffs.extend(_diff_table(committed, current, key, name, by_key))
    table = pd.DataFrame(diffs, columns=["file", *FAIRNESS_KEY, "group", "column", "committed", "current",
                                         "tolerance", "difference", "within_tolerance"])
    table["within_tolerance"] = table["within_tolerance"].astype(bool)
    return table if include_within else table[~table["within_tolerance"]].reset_index(drop=True)


def unchecked_rows(performance: pd.DataFrame, output_dir="results") -> dict[str, int]:
    """How many rows of each committed results file a partial check did not compare.

    Parameters
    ----------
    performance : DataFrame
        The partial run's performance table (one row per (audit, strategy, model) it fitted).
    output_dir : str or Path, default "results"

    Returns
    -------
    dict of str to int
        File name -> committed rows of tasks the run did not cover (files that do not exist are
        left out).
    """
    covered = set(map(tuple, performance[PERFORMANCE_KEY].astype(str).to_numpy().tolist()))
    counts = {}
    for name in (FAIRNESS_FILE, PERFORMANCE_FILE, BY_GROUP_FILE):
        path = Path(output_dir) / name
        if path.is_file():
            file = read_results_csv(path, duplicates="keep")
            counts[name] = sum(tuple(r.get(k, "") for k in PERFORMANCE_KEY) not in covered for r in file.rows)
    return counts
