"""One category against the reference: the numbers of a report's row, from the counts.

Every test and interval is :mod:`faircode.significance`'s: the impact ratio's 95% interval is
MOVER-R (:func:`~faircode.significance.proportion_ratio_ci`), the p-value the exact two-sided
permutation test of equal rates (:func:`~faircode.significance.permutation_test`, exact for 0/1
outcomes), the equivalence test the TOST of the ratio against the manifest's band
(:func:`~faircode.significance.equivalence_test_from_counts`), the power the exact power of the
exact test at the band (:func:`~faircode.significance.power_at_margin`). The first two take the
0/1 outcomes, which :func:`_outcomes` rebuilds from the counts (their order does not matter).

The exact power sums over every outcome of both groups and takes about a second per comparison
at a few thousand rows a group, and minutes at millions; a report over large groups takes the
power of the same test in the normal approximation instead (the pooled z-test's power, to which
the exact conditional test's converges: statsmodels' ``power_proportions_2indep``), recorded as
``power_method="normal"``. It is used only where the groups are large enough
(:data:`EXACT_POWER_SIZE`) that the two are close: within 0.01 on the tests' grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from faircode.significance import (
    equivalence_test_from_counts,
    permutation_test,
    power_at_margin,
    proportion_ratio_ci,
)
from scipy.special import ndtr, ndtri

#: The exact power is computed while ``sqrt(n_small) * (sqrt(n_a) + sqrt(n_b))`` is at most
#: this (its cost grows about so: under half a second on this project's machines); above, the
#: normal approximation.
EXACT_POWER_SIZE = 2500


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
    if math.sqrt(min(n_a, n_b)) * (math.sqrt(n_a) + math.sqrt(n_b)) <= EXACT_POWER_SIZE:
        return power_at_margin(rate_b, n_a, n_b, margin=band, compare="ratio", alpha=alpha), "exact"
    sides = [bound * rate_b for bound in band if math.isfinite(bound * rate_b) and 0 <= bound * rate_b <= 1
             and bound * rate_b != rate_b]
    if not sides:
        return math.nan, "normal"
    return min(normal_power(rate_a, rate_b, n_a, n_b, alpha=alpha) for rate_a in sides), "normal"


def normal_power(p_a: float, p_b: float, n_a: int, n_b: int, *, alpha: float) -> float:
    """Power of the two-sided test of equal rates at level ``alpha``, normal approximation.

    The z-test with the pooled rate's variance under the null and each group's under the
    alternative (statsmodels' ``power_proportions_2indep``; Fleiss, Levin and Paik 2003,
    section 4.2): ``Phi((|d| - z s0) / s1) + Phi((-|d| - z s0) / s1)`` with ``d = p_a - p_b``,
    ``s0^2 = pbar (1 - pbar) (1/n_a + 1/n_b)``, ``s1^2 = p_a (1 - p_a)/n_a + p_b (1 - p_b)/n_b``
    and ``z`` the ``1 - alpha/2`` normal quantile.

    Parameters
    ----------
    p_a, p_b : float
        True rates, in [0, 1].
    n_a, n_b : int
        Rows of each group.
    alpha : float

    Returns
    -------
    float
        In [0, 1].
    """
    d = p_a - p_b
    pooled = (n_a * p_a + n_b * p_b) / (n_a + n_b)
    s0 = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    s1 = math.sqrt(p_a * (1 - p_a) / n_a + p_b * (1 - p_b) / n_b)
    z = float(ndtri(1 - alpha / 2))
    if s1 == 0:
        return 1.0 if abs(d) > z * s0 else 0.0
    return float(ndtr((abs(d) - z * s0) / s1) + ndtr((-abs(d) - z * s0) / s1))
