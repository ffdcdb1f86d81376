"""Each results row's three-state verdict (issue 45): the equivalence test at the audit's margin,
the power at that margin, their family adjustment, and the verdict of `classify_gap`.

"Not significant" is not a pass. Beside its usual test each comparison of two rates gets the
equivalence test (TOST) at the margin its audit's manifest declares (``practical_margin``: points
for a difference, the four-fifths band for the disparate impact ratio) and the power the exact
test had against a true gap at that margin; once every row of an audit is in, the equivalence
p-values are adjusted for their family, as the usual p-values are, and the verdict is
`faircode.significance.classify_gap` on the adjusted numbers.

The tests run in the benchmark's workers, beside the fit (`equivalence_columns`,
`group_comparison_columns`); the adjustments and the verdicts run on the assembled tables
(`fairness_verdicts`, `group_verdicts`), from the values as the CSV holds them, so the files
alone reproduce them.

Families (results/README.md says the same to readers):

- ``results_fairness.csv``: Benjamini-Hochberg within each audit over its distinct equivalence
  hypotheses, as ``q_value`` is over its distinct tests. The two families differ in one place:
  the disparate impact ratio's band test (``0.8 < ratio < 1.25`` of the favourable rates) is not
  the demographic parity difference's points test (``|difference| < margin`` of the selection
  rates), so it counts in the equivalence family although its usual test repeats the selection
  rate's; the equal opportunity difference's test is the true or false positive rate
  difference's (``same_test_as``): with a favourable negative outcome its rate is one minus the
  false positive rate, and ``|(1 - a) - (1 - b)| < m`` is ``|a - b| < m`` when the margin is
  symmetric (every manifest's is), so it counts once and takes that row's adjusted value.
- ``results_by_group.csv``: Holm within each family of comparisons with the reference group
  (one attribute x rate of one fit), as ``p_value_vs_reference_holm`` is.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from faircode.benchmark.columns import ALPHA, BY_GROUP_FAMILY_KEY, CONFIDENCE_LEVEL
from faircode.significance import (
    adjust_p_values,
    classify_gap,
    equivalence_test_from_counts,
    power_at_margin,
    proportion_difference_ci,
)

#: The columns `equivalence_columns` fills, empty where a row has no verdict.
EMPTY_EQUIVALENCE = {"equivalence_p_value": math.nan, "equivalence_method": "", "power_at_margin": math.nan}


def equivalence_columns(count_a: int, n_a: int, count_b: int, n_b: int, *, margin: tuple[float, float],
                        compare: str) -> dict:
    """The equivalence test and the power at the margin of one comparison of two rates.

    Parameters
    ----------
    count_a, n_a, count_b, n_b : int
        Ones and rows of the disadvantaged (or compared) group ``a`` and the advantaged (or
        reference) group ``b``, of the rate the row's gap compares.
    margin : (float, float)
        ``(low, high)`` in the gap's unit (`faircode.manifest.PracticalMargin.of`).
    compare : {"difference", "ratio"}

    Returns
    -------
    dict
        ``equivalence_p_value`` (TOST, `faircode.significance.equivalence_test_from_counts` at
        ``ALPHA``), ``equivalence_method`` (``exact`` or ``score``) and ``power_at_margin``
        (`faircode.significance.power_at_margin`, the reference rate at its observed value).
    """
    low, high = (float(v) for v in margin)
    x1, n1, x2, n2 = (int(v) for v in (count_a, n_a, count_b, n_b))
    if compare == "difference" and low == -high and (n1 - x1, n2 - x2) < (x1, x2):
        # 1 - y mirrors both rates and the symmetric margin: the same test, the same power (the
        # false positive rate and the true negative rate; equal to 3e-14), computed once.
        x1, x2 = n1 - x1, n2 - x2
    p_value, method = _equivalence(x1, n1, x2, n2, low, high, compare)
    return {"equivalence_p_value": p_value, "equivalence_method": method,
            "power_at_margin": _power(x2, n2, n1, low, high, compare)}


# Cached per process: within one fit the same counts recur (the true negative rate is the rate
# equal opportunity compares, and the false positive rate its mirror; two groups' selection rate in
# both files), and so do the reference group's rate and the sizes, all the power depends on.
@functools.lru_cache(maxsize=8192)
def _equivalence(x1: int, n1: int, x2: int, n2: int, low: float, high: float, compare: str) -> tuple[float, str]:
    result = equivalence_test_from_counts(x1, n1, x2, n2, margin=(low, high), compare=compare, alpha=ALPHA,
                                          interval=False)
    return float(result.p_value), result.method


@functools.lru_cache(maxsize=8192)
def _power(x2: int, n2: int, n1: int, low: float, high: float, compare: str) -> float:
    return float(power_at_margin(x2 / n2, n1, n2, margin=(low, high), compare=compare, alpha=ALPHA))


def group_comparison_columns(group: dict, reference: dict, *, margin: tuple[float, float]) -> dict:
    """A by-group row's comparison with the reference group: the interval of the difference, and
    the equivalence test and the power where the group was tested against the reference.

    Parameters
    ----------
    group, reference : dict
        Rows of `faircode.groups.GroupComparison.by_group` (``n_outcome``, ``n_group``,
        ``diff_vs_reference``, ``p_value_vs_reference``).
    margin : (float, float)
        The audit's margin of a difference of rates.

    Returns
    -------
    dict
        ``diff_vs_reference_ci_low``/``_high`` (Newcombe's ``CONFIDENCE_LEVEL`` interval of the
        group's rate minus the reference's, wherever that difference is defined), ``margin_low``,
        ``margin_high`` and the columns of `equivalence_columns` (empty for a group not tested
        against the reference: a small cell, or a reference below the minimum size).
    """
    out = {"diff_vs_reference_ci_low": math.nan, "diff_vs_reference_ci_high": math.nan,
           "margin_low": margin[0], "margin_high": margin[1], **EMPTY_EQUIVALENCE}
    if pd.isna(group["diff_vs_reference"]):
        return out
    counts = [int(row[c]) for row in (group, reference) for c in ("n_outcome", "n_group")]
    x1, n1, x2, n2 = counts
    interval = proportion_difference_ci(_ones(x1, n1), _ones(x2, n2), confidence_level=CONFIDENCE_LEVEL)
    out.update(diff_vs_reference_ci_low=float(interval.low), diff_vs_reference_ci_high=float(interval.high))
    if not pd.isna(group["p_value_vs_reference"]):
        out.update(equivalence_columns(x1, n1, x2, n2, margin=margin, compare="difference"))
    return out


def _ones(count: int, n: int) -> np.ndarray:
    return np.repeat([1.0, 0.0], [count, n - count])


# --------------------------------------------------------------------------- on the assembled tables


def verdicts(p_value, ci_low, ci_high, equivalence_p_value, margin_low, margin_high) -> np.ndarray:
    """`faircode.significance.classify_gap` row by row; ``""`` where any number is missing.

    Parameters
    ----------
    p_value, ci_low, ci_high, equivalence_p_value, margin_low, margin_high : array_like of float
        One value per row, as the CSV holds them: the adjusted p-value of the usual test, the
        gap's interval, the adjusted equivalence p-value and the margin.

    Returns
    -------
    numpy.ndarray of str
        A key of `faircode.significance.VERDICTS`, or ``""`` (an undefined gap, or a row with no test).
    """
    columns = [np.asarray(pd.to_numeric(pd.Series(c), errors="coerce"), dtype=float)
               for c in (p_value, ci_low, ci_high, equivalence_p_value, margin_low, margin_high)]
    out = np.full(columns[0].size, "", dtype=object)
    for i, (p, low, high, p_equivalence, m_low, m_high) in enumerate(zip(*columns)):
        if not any(math.isnan(v) for v in (p, low, high, p_equivalence, m_low, m_high)):
            out[i] = classify_gap(p_value=p, ci_low=low, ci_high=high, equivalence_p_value=p_equivalence,
                                  margin=(m_low, m_high), alpha=ALPHA)
    return out


def equivalence_repeats(df: pd.DataFrame) -> pd.Series:
    """For each fairness row, the metric whose equivalence hypothesis it repeats, or ``""``.

    A row repeats another's equivalence test when it repeats its usual test (``same_test_as``),
    compares a difference (the disparate impact ratio's band is its own hypothesis) and its
    margin is symmetric (with ``(low, high) = (-m, m)`` the mirrored rate's test is the same
    test; a manifest declares its margin in points, always symmetric).
    """
    low = pd.to_numeric(df["margin_low"], errors="coerce")
    high = pd.to_numeric(df["margin_high"], errors="coerce")
    same = df["same_test_as"].fillna("").astype(str)
    repeats = (same != "") & (df["kind"].astype(str) == "difference") & (low == -high)
    return same.where(repeats, "")


def group_equivalence_holm(df: pd.DataFrame, written) -> np.ndarray:
    """Holm-adjusted equivalence p-values of the by-group file, within each family.

    Parameters
    ----------
    df : DataFrame
        Columns `BY_GROUP_FAMILY_KEY` and ``equivalence_p_value``.
    written : callable
        The p-values as the CSV writes them (``tables._as_written``), so the file reproduces the
        adjustment.

    Returns
    -------
    numpy.ndarray of float, shape (len(df),)
        NaN where the row has no equivalence test (the reference, small cells).
    """
    p = written(pd.to_numeric(df["equivalence_p_value"], errors="coerce").to_numpy(dtype=float))
    holm = np.full(len(df), np.nan)
    codes, _ = pd.factorize(pd.MultiIndex.from_frame(df[BY_GROUP_FAMILY_KEY].astype(str)))
    for family in np.unique(codes):
        mine = np.flatnonzero(codes == family)
        holm[mine] = adjust_p_values(p[mine], method="holm")
    return holm
