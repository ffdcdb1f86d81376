"""The run's rows as tables: sorted, typed, and with q-values adjusted within each audit."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from faircode.benchmark.columns import (
    _FLOAT_FORMAT,
    ALPHA,
    BY_GROUP_COLUMNS,
    BY_GROUP_FAMILY_KEY,
    FAIRNESS_COLUMNS,
    PERFORMANCE_COLUMNS,
    PERFORMANCE_KEY,
)
from faircode.benchmark.verdicts import equivalence_repeats, group_equivalence_holm, verdicts
from faircode.metrics import GAP_METRICS


def _sorted_fairness(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=FAIRNESS_COLUMNS)
    order = {m: i for i, m in enumerate(GAP_METRICS)}
    df["_metric_order"] = df["metric"].map(order)
    df = df.sort_values(["audit", "strategy", "model", "attribute", "_metric_order"], kind="stable")
    return df.drop(columns="_metric_order").reset_index(drop=True)


def _sorted_performance(rows) -> pd.DataFrame:
    # ``rows``: a list of dicts or a DataFrame; one row per task, in key order.
    df = pd.DataFrame(rows, columns=PERFORMANCE_COLUMNS)
    return df.sort_values(PERFORMANCE_KEY, kind="stable").reset_index(drop=True)


def _as_written(values: np.ndarray) -> np.ndarray:
    # The p-values exactly as the CSV holds them, so that the q-values can be recomputed from
    # the file alone (and a partial --check recomputes them bit for bit).
    return np.array([float(_FLOAT_FORMAT % v) for v in values], dtype=float)


def _significant(q: np.ndarray) -> pd.arrays.BooleanArray:
    # The decision after FDR correction; empty (NA), not False, where the gap is undefined.
    flags = pd.array(q < ALPHA, dtype="boolean")
    flags[np.isnan(q)] = pd.NA
    return flags


def _family_q_values(df: pd.DataFrame) -> np.ndarray:
    """Benjamini-Hochberg q-values within each audit, one per distinct hypothesis.

    The family is one audit's rows (the family an auditor of one system faces), not the whole
    table. A row whose ``same_test_as`` names another metric repeats that row's permutation
    test (the disparate impact ratio repeats the selection-rate test, the equal opportunity
    difference the false or true positive rate test); it is left out of the family and takes
    the q-value of the row it repeats, so one hypothesis is never counted twice.

    Parameters
    ----------
    df : DataFrame
        Columns ``audit, strategy, model, attribute, metric, p_value, same_test_as``; p-values
        as written in the CSV.

    Returns
    -------
    numpy.ndarray of float, shape (len(df),)
        q-values in [0, 1]; NaN where the p-value is NaN.
    """
    from faircode.significance import adjust_p_values

    p = pd.to_numeric(df["p_value"], errors="coerce").to_numpy(dtype=float)
    repeats = df["same_test_as"].fillna("").astype(str).to_numpy() != ""
    q = np.full(len(df), np.nan)
    for _, idx in df.groupby("audit", sort=False).indices.items():
        own = idx[~repeats[idx]]
        q[own] = adjust_p_values(p[own], method="bh")
    if repeats.any():
        attr_key = ["audit", "strategy", "model", "attribute"]
        primary = pd.Series(q, index=pd.MultiIndex.from_frame(df[attr_key + ["metric"]].astype(str)))
        wanted = pd.MultiIndex.from_frame(
            df.loc[repeats, attr_key].astype(str).assign(metric=df.loc[repeats, "same_test_as"].astype(str)))
        q[repeats] = primary.reindex(wanted).to_numpy()
    return q


def _adjusted_columns(df: pd.DataFrame) -> pd.DataFrame:
    """The fairness file's columns that depend on the whole audit: ``q_value``, ``significant``,
    ``equivalence_q_value`` (Benjamini-Hochberg within each audit over its distinct equivalence
    hypotheses, `verdicts.equivalence_repeats`) and ``verdict`` (`verdicts.verdicts` on the
    adjusted values), from the other columns as the CSV holds them.

    Parameters
    ----------
    df : DataFrame
        Columns `FAIRNESS_KEY`, ``kind``, ``p_value``, ``same_test_as``, ``ci_low``, ``ci_high``,
        ``margin_low``, ``margin_high``, ``equivalence_p_value`` (numbers, or text as the CSV
        holds them).

    Returns
    -------
    DataFrame
        The four columns, on ``df``'s index.
    """
    def number(column: str) -> np.ndarray:
        return _as_written(pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float))

    q = _family_q_values(df.assign(p_value=number("p_value")))
    equivalence = _family_q_values(df.assign(p_value=number("equivalence_p_value"),
                                             same_test_as=equivalence_repeats(df)))
    verdict = verdicts(_as_written(q), number("ci_low"), number("ci_high"), _as_written(equivalence),
                       number("margin_low"), number("margin_high"))
    return pd.DataFrame({"q_value": q, "significant": _significant(q), "equivalence_q_value": equivalence,
                         "verdict": verdict}, index=df.index)


def _add_q_values(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["p_value"] = _as_written(df["p_value"].to_numpy(dtype=float))
    for column, values in _adjusted_columns(df).items():
        df[column] = values
    df["small_sample_warning"] = df["small_sample_warning"].astype(bool)
    for col in ("n_disadvantaged", "n_advantaged", "n_permutations", "random_state"):
        df[col] = df[col].astype("Int64")
    return df


#: The by-group file's family tests and the q-value column of each.
BY_GROUP_Q_VALUES = {"p_value_max_gap": "q_value_max_gap", "p_value_omnibus": "q_value_omnibus"}


def _by_group_q_values(df: pd.DataFrame, p_column: str) -> np.ndarray:
    """Benjamini-Hochberg q-values of one family test of the by-group file, within each audit.

    A family is one comparison of k groups (`BY_GROUP_FAMILY_KEY`: audit x strategy x model x
    attribute x metric); its test's p-value repeats on each of its group rows and counts once,
    as `_family_q_values` counts each distinct hypothesis of the fairness file once. The
    adjustment runs over one audit's families, the family an auditor of one system faces.

    Parameters
    ----------
    df : DataFrame
        Columns `BY_GROUP_FAMILY_KEY` and ``p_column``; p-values as written in the CSV (they are
        rounded to it here, so the q-values can be recomputed from the file alone).
    p_column : str
        ``"p_value_max_gap"`` or ``"p_value_omnibus"``.

    Returns
    -------
    numpy.ndarray of float, shape (len(df),)
        Each row's family q-value in [0, 1]; NaN where the family has no test.
    """
    from faircode.significance import adjust_p_values

    p = _as_written(pd.to_numeric(df[p_column], errors="coerce").to_numpy(dtype=float))
    codes, _ = pd.factorize(pd.MultiIndex.from_frame(df[BY_GROUP_FAMILY_KEY].astype(str)))
    _, first = np.unique(codes, return_index=True)  # one row per family, in code order
    family_p = p[first]
    family_audit = df["audit"].astype(str).to_numpy()[first]
    monte_carlo = (df[_METHOD_OF[p_column]].astype(str).to_numpy()[first] == "monte_carlo")
    draws = pd.to_numeric(df["n_permutations"], errors="coerce").to_numpy(dtype=float)[first]
    family_q = np.full(first.size, np.nan)
    for audit in pd.unique(family_audit):
        mine = family_audit == audit
        q = adjust_p_values(family_p[mine], method="bh")
        family_q[mine] = _to_monte_carlo_digits(q, family_p[mine], monte_carlo[mine], draws[mine])
    return family_q[codes]


#: The column naming how each family test's p-value was computed.
_METHOD_OF = {"p_value_max_gap": "method_max_gap", "p_value_omnibus": "method_omnibus"}


def _to_monte_carlo_digits(q: np.ndarray, p: np.ndarray, monte_carlo: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """One audit's family q-values with the digits their Monte Carlo error supports (issue 47).

    A Benjamini-Hochberg q-value is ``m p / j`` for one p-value at or above the row's own (or 1),
    so its relative Monte Carlo error is at most that of the smallest Monte Carlo p-value at or
    above the row's, ``mc_error(p, n) / p`` (the error shrinks as p grows). Each q-value is
    rounded to the decimal place of the leading digit of ``q`` times that bound, at most the
    standard error ``--check``'s band is built on (`faircode.tolerances.monte_carlo_q_value`, from
    the row's own p-value; the rounding moves it by less than a tenth of that band); a q-value with
    no Monte Carlo p-value at or above its own is exact and kept whole. The p-values themselves are written whole: ``(b + 1) / (m + 1)`` is the exact
    p-value of the Monte Carlo test (Phipson and Smyth 2010), at most 4 significant digits here.
    """
    from faircode.tolerances import mc_error

    order = np.argsort(np.where(monte_carlo, p, np.inf), kind="stable")[: int(monte_carlo.sum())]
    sources, n = p[order], draws[order]
    at = np.searchsorted(sources, p, side="left")  # the smallest Monte Carlo p-value >= each p
    out = q.copy()
    for i in np.flatnonzero((at < sources.size) & ~np.isnan(q) & (q > 0)):
        source = sources[at[i]]
        se = q[i] * mc_error(source, int(n[at[i]])) / source
        decimals = -math.floor(math.log10(se))
        out[i] = round(float(q[i]), decimals) or float(f"{q[i]:.1g}")
    return out


def _add_by_group_q_values(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for p_column, q_column in BY_GROUP_Q_VALUES.items():
        df[q_column] = _by_group_q_values(df, p_column)
    return df


def _add_group_verdicts(df: pd.DataFrame) -> pd.DataFrame:
    """``equivalence_p_value_holm`` (Holm within each family, as ``p_value_vs_reference_holm``)
    and ``verdict`` (`verdicts.verdicts` on the Holm-adjusted values), from the written values."""
    df = df.copy()
    holm = group_equivalence_holm(df, _as_written)
    df["equivalence_p_value_holm"] = holm

    def written(column: str) -> np.ndarray:
        return _as_written(pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float))

    df["verdict"] = verdicts(written("p_value_vs_reference_holm"), written("diff_vs_reference_ci_low"),
                             written("diff_vs_reference_ci_high"), _as_written(holm), written("margin_low"),
                             written("margin_high"))
    return df


def _sorted_by_group(rows: list[dict]) -> pd.DataFrame:
    # Tasks finish in any order; within a task the rows are already in manifest order.
    df = pd.DataFrame(rows, columns=BY_GROUP_COLUMNS)
    df = df.sort_values(PERFORMANCE_KEY, kind="stable").reset_index(drop=True)
    for col in ("n_outcome", "n_group", "min_size", "n_groups_compared", "n_permutations", "random_state"):
        df[col] = df[col].astype("Int64")
    df["small_cell"] = df["small_cell"].astype(bool)
    return _add_group_verdicts(_add_by_group_q_values(df))
