"""Power of the exact permutation test for 0/1 outcomes: :func:`permutation_test_power`, and its
normal approximation for large groups, :func:`z_test_power`.

The exact probability that the exact test of :mod:`faircode.significance._permutation` rejects
at level ``alpha`` when the groups' true rates are ``p_a`` and ``p_b``: a sum over the outcomes
(the flagged rows in each group) of their binomial probabilities, with the test's p-value of each
outcome from the hypergeometric distribution given the total, with no simulation. The references
are in the function's docstring.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from faircode.formatting import check_positive_int as _check_positive_int
from faircode.significance._validation import _ALTERNATIVES, _check_choice, _check_open_unit, gammaln


def _check_rate(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a rate in [0, 1]; got {value!r}")
    if not 0.0 <= float(value) <= 1.0:  # also refuses NaN
        raise ValueError(f"`{name}` must be a rate in [0, 1]; got {value}")
    return float(value)


def permutation_test_power(p_a, p_b, n_a, n_b, *, alpha: float = 0.05, alternative: str = "two-sided") -> float:
    """Exact power of the exact permutation test for a gap in selection rates.

    The probability that :func:`permutation_test` on 0/1 outcomes (its exact, hypergeometric
    method) returns ``p < alpha`` when group ``a`` has ``n_a`` rows flagged independently with
    probability ``p_a`` and group ``b`` has ``n_b`` rows flagged with probability ``p_b``.
    Computed with no simulation, by summing the probability of every outcome the test rejects.

    Parameters
    ----------
    p_a, p_b : float
        True selection rates of the disadvantaged group ``a`` and the advantaged group ``b``,
        in [0, 1]. ``p_a = p_b`` gives the false-alarm rate at that common rate (at most
        ``alpha``: the test is exact).
    n_a, n_b : int
        Rows in each group, ``>= 1``.
    alpha : float, default 0.05
        Significance level, strictly between 0 and 1; an outcome is a rejection when its p-value
        is below it (``p < alpha``, SciPy's ``scipy.stats.power`` convention).
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        The test's alternative, as in :func:`permutation_test` (``"greater"``: ``p_a > p_b``).

    Returns
    -------
    float
        The power, in [0, 1].

    Raises
    ------
    TypeError
        A rate that is not a number; a size that is not of an integer type (``50.0`` included:
        counts read as floats must be converted, so a fractional size cannot slip through).
    ValueError
        A rate outside [0, 1], a size below 1, ``alpha`` not strictly between 0 and 1, an
        unknown ``alternative``.

    Notes
    -----
    Given ``K`` flagged rows in all, the exact test's p-value for ``x`` of them in ``a`` is a
    tail of the hypergeometric distribution of ``X`` (``N = n_a + n_b`` rows, ``K`` flagged,
    ``n_a`` drawn): two-sided by distance from the null mean,
    ``P(|X N - K n_a| >= |x N - K n_a|)``, decided in integers as the test decides it. This is
    not the probability ordering of ``scipy.stats.fisher_exact`` or R's ``fisher.test``, whose
    power can differ by a point or so. The test conditions on ``K``; the power does not: it is
    the unconditional power of the conditional test, ``sum over K, over rejected x, of
    Binom(x; n_a, p_a) Binom(K - x; n_b, p_b)`` with the group sizes fixed [1]_ [2]_. Every ``K``
    of non-negligible probability is visited, vectorised over ``x``; the work is restricted to
    the outcomes whose probability is not negligible: the flagged counts within all but 2.5e-18
    of each group's binomial distribution, and for each ``K`` the values of ``X`` within
    ``12 s + 50`` of its null mean, with ``s^2 = n_a (K/N)(1 - K/N)`` (beyond, the
    hypergeometric probabilities sum to less than 1e-29, by Bernstein's inequality, which holds
    for sampling without replacement [3]_). So the work grows like the number of rows (well
    under a second for 15,000 rows) and the result has no Monte Carlo error: it is accurate to
    floating-point rounding of the sums (about 1e-15); the outcomes left out carry less than
    1e-17 in all. An outcome rejects when its p-value is below ``alpha (1 - 1e-12)``, so one whose
    p-value is ``alpha`` exactly (a tail of ``1/20``) does not, whatever the rounding; only a
    p-value within a relative 1e-12 below ``alpha`` is read as not rejecting.

    References
    ----------
    .. [1] Fisher, R. A. (1935). *The Design of Experiments*. Oliver & Boyd (the conditional
       test of a 2x2 table).
    .. [2] Mehta, C. R. and Hilton, J. F. (1993). Exact power of conditional and unconditional
       tests: going beyond the 2x2 contingency table. *The American Statistician* 47(2), 91-98.
    .. [3] Hoeffding, W. (1963). Probability inequalities for sums of bounded random variables.
       *Journal of the American Statistical Association* 58(301), 13-30 (section 6).

    Examples
    --------
    >>> from faircode.significance import permutation_test_power
    >>> round(permutation_test_power(0.3, 0.3, 50, 50), 4) <= 0.05   # false alarms: at most alpha
    True
    >>> round(permutation_test_power(0.2, 0.4, 100, 100), 3)
    0.844
    """
    p_a, p_b = _check_rate(p_a, "p_a"), _check_rate(p_b, "p_b")
    n_a, n_b = _check_positive_int(n_a, "n_a"), _check_positive_int(n_b, "n_b")
    alpha = _check_open_unit(alpha, "alpha")
    alternative = _check_choice(alternative, "alternative", _ALTERNATIVES)
    if n_a > n_b:  # the work is O(N min(n_a, n_b)): let `a` be the smaller group
        p_a, p_b, n_a, n_b = p_b, p_a, n_b, n_a
        alternative = {"greater": "less", "less": "greater"}.get(alternative, alternative)
    from scipy.stats import binom

    n = n_a + n_b
    log_factorial = gammaln(np.arange(n + 1) + 1.0)
    flagged_a = binom.pmf(np.arange(n_a + 1), n_a, p_a)
    flagged_b = binom.pmf(np.arange(n_b + 1), n_b, p_b)
    # Outcomes outside these ranges have probability below 1e-17 in all: they are skipped.
    x_first, x_last = _central(flagged_a)
    y_first, y_last = _central(flagged_b)
    power = 0.0
    k_all = np.arange(x_first + y_first, x_last + y_last + 1, dtype=np.int64)
    # Under the null, X given K is hypergeometric with mean K n_a / N. By Bernstein's inequality,
    # which holds for sampling without replacement with the with-replacement variance
    # s^2 = n_a (K/N)(1 - K/N) (Hoeffding 1963, sec. 6), P(|X - mean| >= t) <= 2 exp(-t^2 / (2 (s^2
    # + t/3))), below 1e-29 for t = 12 s + 50: those values are left out of the tails.
    mean = k_all * n_a / n
    spread = np.sqrt(n_a * (k_all / n) * (1 - k_all / n))
    reach = 12 * spread + 50
    lo_all = np.maximum(np.maximum(0, k_all - n_b), np.floor(mean - reach)).astype(np.int64)
    hi_all = np.minimum(np.minimum(n_a, k_all), np.ceil(mean + reach)).astype(np.int64)
    first = 0
    while first < k_all.size:
        width = int(max(hi_all[first], x_last) - min(lo_all[first], x_first)) + 1
        stop = min(k_all.size, first + max(1, (1 << 20) // width))
        k = k_all[first:stop, None]  # (chunk, 1)
        c0 = int(min(lo_all[first:stop].min(), x_first))
        c1 = int(max(hi_all[first:stop].max(), x_last))
        x = np.arange(c0, c1 + 1, dtype=np.int64)[None, :]
        y = k - x  # flagged rows in b
        valid = (y >= 0) & (y <= n_b)
        yc = np.clip(y, 0, n_b)
        log_w = -(log_factorial[x] + log_factorial[yc] + log_factorial[n_a - x] + log_factorial[n_b - yc])
        log_w = np.where(valid, log_w, -np.inf)
        w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)  # the hypergeometric pmf of X given K, over x
        p = _conditional_p_values(w, x, k, n, n_a, alternative)
        # An outcome whose p-value is alpha exactly (1/20 at 1 against 19 rows) does not reject;
        # the tail sums' rounding (about 1e-15) must not tip it below.
        reject = valid & (p < alpha * (1 - 1e-12)) & (x >= x_first) & (x <= x_last)
        power += float(np.sum(np.where(reject, flagged_a[np.clip(x, 0, n_a)] * flagged_b[yc], 0.0)))
        first = stop
    return min(1.0, power)


def _conditional_p_values(w: np.ndarray, x: np.ndarray, k: np.ndarray, n: int, n_a: int,
                          alternative: str) -> np.ndarray:
    """The exact test's p-value of every outcome (K, x), from the pmf ``w`` of X given K.

    ``w``: shape (chunk, width), row r the hypergeometric pmf of X (flagged rows in ``a``) given
    K = ``k[r, 0]`` flagged rows in all, over ``x[0]`` = c0..c1 (consecutive integers); ``n``
    rows in all, ``n_a`` in ``a``. Returns an array of ``w``'s shape.
    """
    below = np.cumsum(w, axis=1)  # P(X <= x)
    above = np.cumsum(w[:, ::-1], axis=1)[:, ::-1]  # P(X >= x)
    if alternative == "greater":
        return above
    if alternative == "less":
        return below
    c0, last = int(x[0, 0]), w.shape[1] - 1
    d = x * n - k * n_a  # signed distance from the expectation, times N: integers
    # The other tail starts where the distance is at least as large on the other side.
    hi = -((d - k * n_a) // n) - c0  # ceil((K n_a - d) / N), for x at or below the expectation
    lo = (k * n_a - d) // n - c0  # floor((K n_a - d) / N), for x above it
    hi_tail = np.where(hi <= last, np.take_along_axis(above, np.clip(hi, 0, last), axis=1), 0.0)
    lo_tail = np.where(lo >= 0, np.take_along_axis(below, np.clip(lo, 0, last), axis=1), 0.0)
    return np.where(d <= 0, below + hi_tail, above + lo_tail)


def _central(pmf: np.ndarray) -> tuple[int, int]:
    """The smallest index range holding all of ``pmf`` but at most 2.5e-18 on each side."""
    cdf = np.cumsum(pmf)
    sf = np.cumsum(pmf[::-1])[::-1]
    return int(np.searchsorted(cdf, 2.5e-18, side="right")), int(np.flatnonzero(sf > 2.5e-18)[-1])


#: :func:`permutation_test_power`'s work grows about as ``sqrt(min(n_a, n_b)) * (sqrt(n_a) +
#: sqrt(n_b))`` (the outcomes of non-negligible probability): at this much, about 0.2 s a side
#: on a 2-core machine (10,000 against 10,000 rows). Above it, ``method="auto"`` callers take
#: :func:`z_test_power`, which there differs from the exact power by under a point.
EXACT_POWER_SIZE = 20_000


def exact_power_is_cheap(n_a: int, n_b: int) -> bool:
    """Whether :func:`permutation_test_power` at these sizes is within :data:`EXACT_POWER_SIZE`."""
    return math.sqrt(min(n_a, n_b)) * (math.sqrt(n_a) + math.sqrt(n_b)) <= EXACT_POWER_SIZE


def z_test_power(p_a, p_b, n_a, n_b, *, alpha: float = 0.05) -> float:
    """Power of the two-sided test of equal rates at level ``alpha``, in the normal approximation.

    The pooled z-test, to which the exact conditional test's power converges as the groups grow:
    the null variance from the pooled rate, the alternative's from each group's (statsmodels'
    ``power_proportions_2indep``) [1]_.

    Parameters
    ----------
    p_a, p_b : float
        True rates of the two groups, in [0, 1].
    n_a, n_b : int
        Rows in each group, ``>= 1``.
    alpha : float, default 0.05
        Two-sided level, strictly between 0 and 1.

    Returns
    -------
    float
        ``Phi((|d| - z s0) / s1) + Phi((-|d| - z s0) / s1)``, in [0, 1], with ``d = p_a - p_b``,
        ``s0^2 = pbar (1 - pbar) (1/n_a + 1/n_b)`` (``pbar`` the pooled rate),
        ``s1^2 = p_a (1 - p_a)/n_a + p_b (1 - p_b)/n_b`` and ``z`` the ``1 - alpha/2`` quantile.

    Raises
    ------
    TypeError, ValueError
        As :func:`permutation_test_power`.

    References
    ----------
    .. [1] Fleiss, J. L., Levin, B. and Paik, M. C. (2003). *Statistical Methods for Rates and
       Proportions*, 3rd ed. Wiley (section 4.2).
    """
    from faircode.significance._validation import ndtr, ndtri

    p_a, p_b = _check_rate(p_a, "p_a"), _check_rate(p_b, "p_b")
    n_a, n_b = _check_positive_int(n_a, "n_a"), _check_positive_int(n_b, "n_b")
    alpha = _check_open_unit(alpha, "alpha")
    d = p_a - p_b
    pooled = (n_a * p_a + n_b * p_b) / (n_a + n_b)
    s0 = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    s1 = math.sqrt(p_a * (1 - p_a) / n_a + p_b * (1 - p_b) / n_b)
    z = float(ndtri(1 - alpha / 2))
    if s1 == 0:
        return 1.0 if abs(d) > z * s0 else 0.0
    return float(ndtr((abs(d) - z * s0) / s1) + ndtr((-abs(d) - z * s0) / s1))
