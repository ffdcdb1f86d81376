"""One category against the reference: the numbers of a report's row, from the counts.

Every test and interval is :mod:`faircode.significance`'s: the impact ratio's 95% interval is
MOVER-R (:func:`~faircode.significance.proportion_ratio_ci`), the p-value the exact two-sided
permutation test of equal rates (:func:`~faircode.significance.permutation_test`, exact for 0/1
outcomes), the equivalence test the TOST of the ratio against the manifest's band
(:func:`~faircode.significance.equivalence_test_from_counts`), the power the exact power of the
exact test at the band (:func:`~faircode.significance.power_at_margin`). The first two take the
0/1 outcomes, which :func:`_outcomes` rebuilds from the counts (their order does not matter).

The exact power sums over every outcome of both groups, and its work grows with the rows; above
10,000 against 10,000 rows or so :func:`~faircode.significance.power_at_margin` takes the
normal approximation instead (:func:`~faircode.significance.z_test_power`), recorded as
``power_method="normal"`` (:func:`~faircode.significance.power_method`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from faircode.significance import (
    equivalence_test_from_counts,
    permutation_test,
    power_at_margin,
    power_method,
    proportion_ratio_ci,
)


@dataclass(frozen=True)
class Comparison:
    """One category (``a``) against the reference (``b``), before the family's adjustment.

    ``impact_ratio`` is ``rate_a / rate_b`` (NaN when the reference selected no one), with its
    95% MOVER-R interval; ``p_value`` the exact test; ``equivalence_p_value`` the TOST against
    the band (without its ``1 - 2 alpha`` interval: inverting the exact test takes seconds a
    comparison, and the verdict reads the p-value); ``power_at_margin`` at the level given
    (``power_method`` ``"exact"`` or ``"normal"``).
    """

    impact_ratio: float
    ci_low: float
    ci_high: float
    p_value: float
    equivalence_p_value: float
    power_at_margin: float
    power_method: str


def compare(x_a: int, n_a: int, x_b: int, n_b: int, *, band: tuple[float, float], alpha: float,
            power_alpha: float) -> Comparison:
    """The numbers of one row: ``x_a`` selected of ``n_a`` against the reference's ``x_b`` of ``n_b``.

    Parameters
    ----------
    x_a, n_a, x_b, n_b : int
        Selected and rows of the category and of the reference (``n >= 1``).
    band : (float, float)
        The ratio band of the practical margin, ``(low, high)`` (``high`` may be ``inf``).
    alpha : float
        Level of each one-sided equivalence test.
    power_alpha : float
        Level the power is computed at (a report gives ``alpha / m``, see
        :func:`faircode.report.report_tables`).

    Returns
    -------
    Comparison
    """
    a, b = _outcomes(x_a, n_a), _outcomes(x_b, n_b)
    p_value = float(permutation_test(a, b))
    if x_b == 0:  # the reference is the most selected: no one was selected at all
        nan = math.nan
        return Comparison(nan, nan, nan, p_value, nan, nan, "none")
    low, high = proportion_ratio_ci(a, b, confidence_level=0.95)
    equivalence = equivalence_test_from_counts(x_a, n_a, x_b, n_b, margin=band, compare="ratio", alpha=alpha,
                                               interval=False)
    power, method = _power(x_b / n_b, n_a, n_b, band, power_alpha)
    return Comparison(impact_ratio=(x_a / n_a) / (x_b / n_b), ci_low=float(low), ci_high=float(high),
                      p_value=p_value, equivalence_p_value=float(equivalence.p_value),
                      power_at_margin=float(power), power_method=method)


def _outcomes(selected: int, n: int) -> np.ndarray:
    """``n`` 0/1 outcomes of which ``selected`` are 1."""
    out = np.zeros(n, dtype=np.int8)
    out[:selected] = 1
    return out


def _power(rate_b: float, n_a: int, n_b: int, band: tuple[float, float], alpha: float) -> tuple[float, str]:
    return (power_at_margin(rate_b, n_a, n_b, margin=band, compare="ratio", alpha=alpha),
            power_method(n_a, n_b))
