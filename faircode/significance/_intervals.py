"""Score intervals for 0/1 outcomes: the intervals of the benchmark's results table.

:func:`proportion_difference_ci` (a difference of two rates: Newcombe's hybrid score interval
from Wilson limits, Newcombe 1998, or Agresti and Caffo 2000), :func:`proportion_ratio_ci` (a
ratio of two rates: MOVER-R with Wilson limits, Donner and Zou 2012, or Koopman's score interval,
Koopman 1984) and :func:`wilson_interval` (one rate, Wilson 1927). No resampling: the bootstrap
intervals are in :mod:`faircode.significance._bootstrap`. The full references are in each
function's docstring.
"""

from __future__ import annotations

import math

import numpy as np

from faircode.significance._validation import _as_binary_sample, _check_choice, _check_open_unit, ndtri
from faircode.significance._results import ConfidenceInterval


def _z(confidence_level: float) -> float:
    return float(ndtri(0.5 + confidence_level / 2))


def _wilson(k: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's score interval for a proportion k/n, n > 0 (no continuity correction)."""
    low, high = _wilson_limits(np.float64(k), np.float64(n), z)
    return float(low), float(high)


def _wilson_limits(k, n, z: float) -> tuple[np.ndarray, np.ndarray]:
    """The formula of :func:`wilson_interval`: float arrays ``k``, ``n`` (``n > 0``) of one shape."""
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At a rate of 0 (or 1) the bound is exactly 0 (or 1); the formula leaves rounding noise.
    return (np.where(k == 0, 0.0, np.clip(center - half, 0.0, 1.0)),
            np.where(k == n, 1.0, np.clip(center + half, 0.0, 1.0)))


def _newcombe(k1, n1, k2, n2, z) -> tuple[float, float]:
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = _wilson(k1, n1, z)
    l2, u2 = _wilson(k2, n2, z)
    d = p1 - p2
    return d - math.hypot(p1 - l1, u2 - p2), d + math.hypot(u1 - p1, p2 - l2)


def _agresti_caffo(k1, n1, k2, n2, z) -> tuple[float, float]:
    q1, q2 = (k1 + 1) / (n1 + 2), (k2 + 1) / (n2 + 2)
    half = z * math.sqrt(q1 * (1 - q1) / (n1 + 2) + q2 * (1 - q2) / (n2 + 2))
    return max(-1.0, q1 - q2 - half), min(1.0, q1 - q2 + half)


_DIFFERENCE_METHODS = {"newcombe": _newcombe, "agresti_caffo": _agresti_caffo}


def proportion_difference_ci(a, b, *, confidence_level: float = 0.95, method: str = "newcombe") -> ConfidenceInterval:
    """Score-based interval for the difference of two proportions, ``mean(a) - mean(b)``.

    The interval the results table gives every gap of two rates: unlike the percentile
    bootstrap, it keeps at or above its nominal coverage on small groups (at 10 against 10 rows
    with rates 5% and 20%, a nominal 95% interval covers the true gap 98.6% of the time, the
    percentile bootstrap 87.0%: exact figures, binomial probabilities summed over all 11 x 11
    pairs of counts) and it never has zero width (0/63 against 0/116 gives an interval around 0,
    not "[0, 0]").

    Parameters
    ----------
    a : array_like of {0, 1}, shape (n_a,)
        Disadvantaged group's 0/1 outcomes (numbers or booleans); non-empty.
    b : array_like of {0, 1}, shape (n_b,)
        Advantaged group's 0/1 outcomes; non-empty.
    confidence_level : float, default 0.95
        Nominal coverage, strictly between 0 and 1.
    method : {"newcombe", "agresti_caffo"}, default "newcombe"
        ``"newcombe"``: Newcombe's hybrid score interval (his method 10), built from the Wilson
        score interval of each rate [1]_. ``"agresti_caffo"``: the Wald interval after adding
        one success and one failure to each group [2]_, clipped to [-1, 1].

    Returns
    -------
    ConfidenceInterval
        ``(low, high)``, a difference of rates in [-1, 1], ``low < high``.

    Raises
    ------
    TypeError
        Non-numeric samples.
    ValueError
        Empty, non-1-D or non-0/1 samples; ``confidence_level`` outside (0, 1); unknown
        ``method``.

    Notes
    -----
    With ``p_i = k_i / n_i`` and Wilson limits ``(l_i, u_i)`` at ``z = Phi^-1((1 + level) / 2)``,
    Newcombe's interval is ``p_1 - p_2 - sqrt((p_1 - l_1)^2 + (u_2 - p_2)^2)`` to
    ``p_1 - p_2 + sqrt((u_1 - p_1)^2 + (p_2 - l_2)^2)``. Both methods equal statsmodels'
    ``confint_proportions_2indep(..., compare="diff")`` with ``method="newcomb"`` and
    ``"agresti-caffo"`` (the tests check this). Deterministic: no resampling.

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Interval estimation for the difference between independent
       proportions: comparison of eleven methods. *Statistics in Medicine* 17(8), 873-890.
    .. [2] Agresti, A. and Caffo, B. (2000). Simple and effective confidence intervals for
       proportions and differences of proportions result from adding two successes and two
       failures. *The American Statistician* 54(4), 280-288.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import proportion_difference_ci
    >>> low, high = proportion_difference_ci(np.zeros(63), np.zeros(116))
    >>> round(low, 3), round(high, 3)
    (-0.032, 0.057)
    """
    a = _as_binary_sample(a, "a")
    b = _as_binary_sample(b, "b")
    confidence_level = _check_open_unit(confidence_level, "confidence_level")
    method = _check_choice(method, "method", tuple(_DIFFERENCE_METHODS))
    low, high = _DIFFERENCE_METHODS[method](float(a.sum()), a.size, float(b.sum()), b.size, _z(confidence_level))
    return ConfidenceInterval(float(low), float(high))


def _ratio_score(theta: float, k1: float, n1: float, k2: float, n2: float) -> float:
    """Score (Pearson) statistic of ``p1 = theta * p2`` at its restricted MLE (Koopman 1984)."""
    # Restricted MLE of p2 under p1 = theta p2: the smaller root of
    # theta N p^2 - (theta n1 + k1 + n2 + k2 theta) p + (k1 + k2) = 0 (Miettinen and Nurminen 1985).
    n = n1 + n2
    qa = theta * n
    qb = -(theta * n1 + k1 + n2 + k2 * theta)
    qc = k1 + k2
    disc = max(qb * qb - 4 * qa * qc, 0.0)
    # The smaller root, written to avoid cancellation: 2c / (-b + sqrt(disc)).
    p2 = 2 * qc / (-qb + math.sqrt(disc))
    p1 = theta * p2
    var = p1 * (1 - p1) / n1 + theta * theta * p2 * (1 - p2) / n2
    diff = k1 / n1 - theta * k2 / n2
    if var <= 0.0:
        return math.inf if diff != 0.0 else 0.0
    return diff * diff / var


def _koopman(k1, n1, k2, n2, z) -> tuple[float, float]:
    from scipy.optimize import brentq

    crit = z * z
    estimate = (k1 / n1) / (k2 / n2) if k2 > 0 else math.inf

    def excess(log_theta: float) -> float:
        return _ratio_score(math.exp(log_theta), k1, n1, k2, n2) - crit

    def root(start: float, step: float) -> float:
        # Walk away from the estimate (where the statistic is 0) until the statistic passes
        # the critical value, then solve on that bracket in log(theta).
        inner, outer = start, start + step
        while excess(outer) < 0:
            inner, outer, step = outer, outer + step, step * 2
        return math.exp(brentq(excess, min(inner, outer), max(inner, outer), xtol=1e-14, rtol=1e-14))

    # k1 = 0: the estimate is 0 and so is the lower limit; k2 = 0: the upper limit is infinite.
    log_estimate = math.log(estimate) if 0 < estimate < math.inf else None
    if k1 == 0:
        low = 0.0
    else:
        low = root(log_estimate if log_estimate is not None else math.log((k1 / n1) * n2), -0.5)
    if k2 == 0:
        high = math.inf
    else:
        high = root(log_estimate if log_estimate is not None else math.log(n1 / (k2 + 0.5)) - 10, 0.5)
    return low, high


def _mover_ratio(k1, n1, k2, n2, z) -> tuple[float, float]:
    """MOVER-R with Wilson limits for ``p1 / p2`` (Donner and Zou 2012, eq. 9)."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = _wilson(k1, n1, z)
    l2, u2 = _wilson(k2, n2, z)
    a = p1 * p2
    # Each limit recovers the variance of p1 - theta p2 from the Wilson limits of its parts.
    low_den = u2 * (2 * p2 - u2)
    low = (a - math.sqrt(max(a * a - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2), 0.0))) / low_den
    high_den = l2 * (2 * p2 - l2)
    high = ((a + math.sqrt(max(a * a - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2), 0.0))) / high_den
            if high_den > 0 else math.inf)
    return max(low, 0.0), high


def proportion_ratio_ci(a, b, *, confidence_level: float = 0.95, method: str = "mover") -> ConfidenceInterval:
    """A score-based interval for the ratio of two proportions, ``mean(a) / mean(b)``.

    The interval the results table gives the disparate impact ratio, with no resampling (so no
    resample can have a zero denominator). ``method="mover"`` (the default) is Donner and Zou's
    MOVER-R built from each group's Wilson score interval, the ratio analogue of Newcombe's hybrid
    score interval for a difference; ``method="koopman"`` inverts the score test of
    ``p_a = theta * p_b`` (Koopman 1984; Miettinen and Nurminen's statistic without their
    ``N / (N - 1)`` factor). MOVER-R is the default because it holds its coverage on small groups
    better: at 10 against 10 rows, over the rate grid {0.05, 0.1, 0.2, 0.3, 0.5} for each group,
    its exact coverage is at least 0.938 where Koopman's dips to 0.928, counting every pair of
    counts (an infinite upper limit when ``b`` has no 1s, ``(0, inf)`` for 0/0, both covering).
    The results table prints no interval when ``b`` has no 1s; among the intervals it does print,
    MOVER-R's exact coverage falls to 0.847 (rates 0.5 for ``a`` against 0.05 for ``b``; Koopman's
    to 0.820, at 0.2 against 0.05): a small ``b`` rate is printed only when ``b`` happened to hold
    a 1, which biases the ratio down. Each figure is exact: binomial probabilities summed over
    all 11 x 11 pairs of counts, the second divided by the probability that ``b`` holds a 1.

    Parameters
    ----------
    a : array_like of {0, 1}, shape (n_a,)
        Disadvantaged group's 0/1 outcomes; non-empty.
    b : array_like of {0, 1}, shape (n_b,)
        Advantaged group's 0/1 outcomes; non-empty.
    confidence_level : float, default 0.95
        Nominal coverage, strictly between 0 and 1.
    method : {"mover", "koopman"}, default "mover"

    Returns
    -------
    ConfidenceInterval
        ``(low, high)`` with ``0 <= low < high <= inf``. When ``a`` has no 1s the ratio is 0 and
        ``low`` is 0; when ``b`` has no 1s the ratio is infinite and so is ``high`` (the results
        table reports such a ratio as undefined instead, with no interval); when neither has a
        1, every ratio fits the data and the result is ``(nan, nan)``.

    Raises
    ------
    TypeError, ValueError
        As :func:`proportion_difference_ci`; ``ValueError`` for an unknown ``method``.

    Notes
    -----
    MOVER-R: with Wilson limits ``(l_a, u_a)``, ``(l_b, u_b)`` and ``a = p_a p_b``, ``low = (a -
    sqrt(a^2 - l_a u_b (2 p_a - l_a)(2 p_b - u_b))) / (u_b (2 p_b - u_b))`` and ``high = (a +
    sqrt(a^2 - u_a l_b (2 p_a - u_a)(2 p_b - l_b))) / (l_b (2 p_b - l_b))`` (infinite when
    ``l_b = 0``). Koopman: the interval is ``{theta : S(theta) <= z^2}`` with ``S(theta) = (p_a - theta p_b)^2 /
    (p~_a (1 - p~_a) / n_a + theta^2 p~_b (1 - p~_b) / n_b)``, where ``p~`` are the maximum
    likelihood estimates under ``p_a = theta p_b`` (closed form, a quadratic); each limit is
    found by Brent's method on ``log(theta)``. It equals statsmodels'
    ``confint_proportions_2indep(..., compare="ratio", method="score", correction=False)``
    wherever that one is well defined (the tests check this).

    References
    ----------
    .. [1] Koopman, P. A. R. (1984). Confidence intervals for the ratio of two binomial
       proportions. *Biometrics* 40(2), 513-517.
    .. [2] Miettinen, O. and Nurminen, M. (1985). Comparative analysis of two rates.
       *Statistics in Medicine* 4(2), 213-226.
    .. [3] Donner, A. and Zou, G. Y. (2012). Closed-form confidence intervals for functions of
       the normal mean and standard deviation. *Statistical Methods in Medical Research* 21(4),
       347-359 (MOVER-R, eq. 9); Newcombe, R. G. (2013). *Confidence Intervals for Proportions
       and Related Measures of Effect Size*, ch. 10.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import proportion_ratio_ci
    >>> a = np.r_[np.ones(30), np.zeros(70)]   # selection rate 0.30
    >>> b = np.r_[np.ones(40), np.zeros(60)]   # selection rate 0.40
    >>> low, high = proportion_ratio_ci(a, b)
    >>> bool(low < 0.75 < high)
    True
    """
    a = _as_binary_sample(a, "a")
    b = _as_binary_sample(b, "b")
    confidence_level = _check_open_unit(confidence_level, "confidence_level")
    if method not in _RATIO_METHODS:
        raise ValueError(f"`method` must be one of {', '.join(map(repr, _RATIO_METHODS))}; got {method!r}")
    k1, k2 = float(a.sum()), float(b.sum())
    if k1 == 0 and k2 == 0:
        return ConfidenceInterval(math.nan, math.nan)
    low, high = _RATIO_METHODS[method](k1, a.size, k2, b.size, _z(confidence_level))
    return ConfidenceInterval(float(low), float(high))


_RATIO_METHODS = {"mover": _mover_ratio, "koopman": _koopman}


def _first(bad: np.ndarray) -> tuple[tuple, str]:
    """The index of the first entry set in the boolean array ``bad``, and how a message says where
    it is: ``((), "")`` for a scalar, ``((2,), " at index 2")``, ``((0, 1), " at index (0, 1)")``."""
    if bad.ndim == 0:
        return (), ""
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    return at, f" at index {at[0] if len(at) == 1 else at}"


def wilson_interval(count, nobs, *, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for a proportion (a group's rate).

    Parameters
    ----------
    count : int or array_like of int
        Rows with outcome 1, ``0 <= count <= nobs``.
    nobs : int or array_like of int
        Rows the rate is a mean over (broadcast against ``count``). 0 is allowed and gives NaN
        limits (a group with no rows has no rate, so no interval): the by-group table passes every
        group at once, and a group with no rows of a kind (no actual positives for a true positive
        rate) is one of them, its interval left empty (:func:`faircode.groups.compare_groups`). A
        comparison of two groups refuses an empty one instead (:func:`gap_verdict` and the
        intervals of two rates need at least one row each).
    confidence_level : float, default 0.95
        Strictly between 0 and 1.

    Returns
    -------
    ConfidenceInterval
        ``(low, high)`` in [0, 1]: floats for scalar input, arrays of the broadcast shape
        otherwise; NaN where ``nobs == 0``.

    Raises
    ------
    TypeError
        Non-integer counts, or a non-numeric ``confidence_level``.
    ValueError
        Negative counts, ``count > nobs`` (the message gives both, and the index in an array),
        shapes that do not broadcast, or ``confidence_level`` outside (0, 1).

    Notes
    -----
    With ``p = count / nobs`` and ``z`` the two-sided normal quantile, the interval is the set of
    proportions that a score test does not reject [1]_:

    ``(p + z^2 / (2n) ± z sqrt(p (1 - p) / n + z^2 / (4 n^2))) / (1 + z^2 / n)``.

    Unlike the Wald interval ``p ± z sqrt(p (1 - p) / n)`` it never has zero width at a rate of
    0 or 1 and keeps close to its nominal coverage on small groups [2]_; it equals statsmodels'
    ``proportion_confint(count, nobs, method="wilson")``.

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
       inference. *Journal of the American Statistical Association* 22(158), 209-212.
    .. [2] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval estimation for a binomial
       proportion. *Statistical Science* 16(2), 101-133.

    Examples
    --------
    >>> from faircode.significance import wilson_interval
    >>> low, high = wilson_interval(0, 12)
    >>> round(low, 4), round(high, 4)
    (0.0, 0.2425)
    """
    level = _check_open_unit(confidence_level, "confidence_level")
    k_arr, n_arr = np.asarray(count), np.asarray(nobs)
    for name, arr in (("count", k_arr), ("nobs", n_arr)):
        if arr.dtype.kind not in "iu":
            raise TypeError(f"`{name}` must be integer counts; got dtype {arr.dtype}")
        if np.any(arr < 0):
            at, where = _first(arr < 0)
            raise ValueError(f"`{name}` must be >= 0; got {name}={arr[at]}{where}")
    try:
        k_arr, n_arr = np.broadcast_arrays(k_arr, n_arr)
    except ValueError as exc:
        raise ValueError(f"`count` and `nobs` must broadcast to one shape; got shapes {k_arr.shape} and "
                         f"{n_arr.shape}") from exc
    if np.any(k_arr > n_arr):
        at, where = _first(k_arr > n_arr)
        raise ValueError(f"`count` must not exceed `nobs`; got count={k_arr[at]}, nobs={n_arr[at]}{where}")
    k, n = k_arr.astype(np.float64), n_arr.astype(np.float64)
    z = _z(level)
    with np.errstate(invalid="ignore", divide="ignore"):
        low, high = _wilson_limits(k, n, z)
    low, high = np.where(n > 0, low, np.nan), np.where(n > 0, high, np.nan)
    if low.ndim == 0:
        return ConfidenceInterval(float(low), float(high))
    return ConfidenceInterval(low, high)
