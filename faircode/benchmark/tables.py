"""The run's rows as tables: sorted, typed, and with q-values adjusted within each audit."""

from __future__ import annotations

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


def _add_q_values(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["p_value"] = _as_written(df["p_value"].to_numpy(dtype=float))
    q = _family_q_values(df)
    df["q_value"] = q
    df["significant"] = _significant(q)
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
    family_q = np.full(first.size, np.nan)
    for audit in pd.unique(family_audit):
        mine = family_audit == audit
        family_q[mine] = adjust_p_values(family_p[mine], method="bh")
    return family_q[codes]


def _add_by_group_q_values(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for p_column, q_column in BY_GROUP_Q_VALUES.items():
        df[q_column] = _by_group_q_values(df, p_column)
    return df


def _sorted_by_group(rows: list[dict]) -> pd.DataFrame:
    # Tasks finish in any order; within a task the rows are already in manifest order.
    df = pd.DataFrame(rows, columns=BY_GROUP_COLUMNS)
    df = df.sort_values(PERFORMANCE_KEY, kind="stable").reset_index(drop=True)
    for col in ("n_outcome", "n_group", "min_size", "n_groups_compared", "n_permutations", "random_state"):
        df[col] = df[col].astype("Int64")
    df["small_cell"] = df["small_cell"].astype(bool)
    return _add_by_group_q_values(df)
