"""Equivalence tests for two groups' 0/1 outcomes: is the gap shown to be smaller than a margin?

A permutation test that does not reject says only that chance could explain the gap; it does not
say the gap is small. An equivalence test reverses the question (Schuirmann 1987): its null
hypothesis is that the gap is at least as large as a margin the audit declares, and rejecting it
shows that the gap lies within the margin. :func:`equivalence_test` runs the two one-sided tests
(TOST) for

- a difference of rates, ``low < p_a - p_b < high`` (``margin=0.05`` is ``(-0.05, 0.05)``, a gap
  within 5 percentage points either way), and
- a ratio of rates, ``low < p_a / p_b < high`` (``margin=(0.8, 1.25)``, the four-fifths band;
  ``(0.8, math.inf)``, a ratio of at least 0.8, the four-fifths rule's one-sided reading).

Each one-sided test orders the possible tables by the Miettinen and Nurminen (1985) score
statistic at the margin. ``method="score"`` refers the statistic to the normal distribution (the
test of statsmodels' ``tost_proportions_2indep(..., method="score")`` for a ratio, and for a
difference once its restricted maximum likelihood is corrected: statsmodels issue #10269, pull
request #10270; the shipped version differs, e.g. 0.336308 against the correct 0.336745 for
15/64 against 35/136 at 0.05); ``method="exact"`` is the
exact unconditional test of Chan (1998): the p-value is the largest probability, over every value
of the nuisance parameter (the advantaged group's rate) on the margin, of a table at least as
extreme as the one observed, so the test never rejects more often than ``alpha`` at the margin.
The score test can: at the margin its rejection rate reaches 5.8% for a nominal 5% (100 against
100 rows, a margin of 10 points, rates near 100%), more in small groups (6.5% at 15 against 15
with a margin of 30 points), and stays above 5% by a little at thousands of rows, because the
counts are discrete (the slow tests enumerate it). ``method="auto"`` uses the
exact test wherever its tables are few enough to enumerate (``EXACT_MAX_TABLES``).

The interval reported with a TOST at level ``alpha`` is the ``1 - 2 alpha`` interval (90% for
alpha = 0.05) that inverts the same two one-sided tests: equivalence is shown exactly when that
interval lies inside the margin (Schuirmann 1987; Berger and Hsu 1996).

The verdict that puts this test beside the usual one is in
:mod:`faircode.significance._verdict`.

References
----------
.. [1] Schuirmann, D. J. (1987). A comparison of the two one-sided tests procedure and the power
   approach for assessing the equivalence of average bioavailability. *Journal of
   Pharmacokinetics and Biopharmaceutics* 15(6), 657-680.
.. [2] Miettinen, O. and Nurminen, M. (1985). Comparative analysis of two rates. *Statistics in
   Medicine* 4(2), 213-226.
.. [3] Farrington, C. P. and Manning, G. (1990). Test statistics and sample size formulae for
   comparative binomial trials with null hypothesis of non-zero risk difference or non-unity
   relative risk. *Statistics in Medicine* 9(12), 1447-1454.
.. [4] Chan, I. S. F. (1998). Exact tests of equivalence and efficacy with a non-zero lower bound
   for comparative studies. *Statistics in Medicine* 17(12), 1403-1413.
.. [5] Berger, R. L. and Hsu, J. C. (1996). Bioequivalence trials, intersection-union tests and
   equivalence confidence sets. *Statistical Science* 11(4), 283-319.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np

from faircode.significance._results import _PValueResult
from faircode.significance._validation import _as_binary_sample, _check_choice, _check_open_unit, gammaln, ndtr

COMPARISONS = ("difference", "ratio")
_METHODS = ("auto", "exact", "score")

#: The exact test is used by ``method="auto"`` when ``(n_a + 1) * (n_b + 1)`` is at most this
#: many tables (about 200 rows against 200): each one-sided p-value then takes milliseconds, and
#: its interval well under a second.
EXACT_MAX_TABLES = 40_401

# Nuisance values scanned for the exact test's supremum before each local maximum is refined by
# golden-section search: at least this many, and more for larger groups (the probability of the
# tail, a polynomial in the nuisance rate, has bumps about 1/sqrt(n) wide).
_GRID_MIN = 65
_REFINE_POINTS = 33
_REFINE_LEVELS = 4  # each level narrows the bracket 16-fold: 2 grid cells become 3e-5 of one
_BISECTION_STEPS = 42  # an interval's limit to about 2e-13 of its search range
# Two scores closer than this (relative) are ties: a table as extreme as the observed one.
_TIE_RTOL = 1e-10


@dataclass(frozen=True, repr=False)
class EquivalenceTestResult(_PValueResult):
    """Result of :func:`equivalence_test`: is the gap shown to lie within the margin?

    Attributes
    ----------
    compare : str
        ``"difference"`` (``p_a - p_b``, a difference of rates in [-1, 1]) or ``"ratio"``
        (``p_a / p_b``).
    estimate : float
        The observed difference or ratio (``inf`` for a ratio over a rate of 0, NaN for 0/0).
    margin_low, margin_high : float
        The equivalence region ``margin_low < theta < margin_high`` (``margin_high`` may be
        ``inf`` for a one-sided ratio band).
    p_value : float
        The TOST p-value, ``max(p_value_low, p_value_high)``, in [0, 1].
    p_value_low : float
        One-sided p-value of the null hypothesis ``theta <= margin_low``.
    p_value_high : float
        One-sided p-value of ``theta >= margin_high`` (0.0 when ``margin_high`` is infinite).
    equivalent : bool
        ``p_value < alpha``: equivalence shown at the margin.
    alpha : float
        Level of each one-sided test (and of the TOST).
    ci_low, ci_high : float
        The ``1 - 2 alpha`` interval of ``theta`` that inverts the two one-sided tests.
    confidence_level : float
        ``1 - 2 alpha``.
    method : str
        ``"exact"`` (Chan's exact unconditional test) or ``"score"`` (Miettinen and Nurminen's
        score test, normal approximation).
    count_a, n_a, count_b, n_b : int
        Ones and rows of each group.
    p_value_floor : float
        0.0: no Monte Carlo is involved.
    """

    compare: str
    estimate: float
    margin_low: float
    margin_high: float
    p_value: float
    p_value_low: float
    p_value_high: float
    equivalent: bool
    alpha: float
    ci_low: float
    ci_high: float
    confidence_level: float
    method: str
    count_a: int
    n_a: int
    count_b: int
    n_b: int
    p_value_floor: float = 0.0

    def __repr__(self) -> str:
        return (
            f"EquivalenceTestResult({self.compare} {self.estimate:+.4g}, margin ({self.margin_low:g}, "
            f"{self.margin_high:g}), {self.format_p_value()} ({self.method}), equivalent={self.equivalent} "
            f"at alpha={self.alpha:g}, {self.confidence_level:.0%} CI [{self.ci_low:.4g}, {self.ci_high:.4g}], "
            f"{self.count_a:,}/{self.n_a:,} vs {self.count_b:,}/{self.n_b:,})"
        )


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------


def _as_margin(margin, compare: str) -> tuple[float, float]:
    """The margin as ``(low, high)`` in the unit of ``compare``, or a clear error."""
    four_fifths = "(0.8, 1.25) for the four-fifths band, (0.8, math.inf) for a ratio of at least 0.8"
    if margin is None:
        raise TypeError("`margin` is required: the smallest gap that matters, declared before looking "
                        "(e.g. margin=0.05 for 5 percentage points); there is no default")
    if isinstance(margin, (bool, np.bool_)):
        raise TypeError(f"`margin` must be a number or a pair (low, high); got {margin!r}")
    if isinstance(margin, numbers.Real):
        if compare == "ratio":
            raise TypeError(f"`margin` of a ratio must be a pair (low, high): {four_fifths}; got {margin!r}")
        width = float(margin)
        if not 0.0 < width < 1.0:
            hint = f" (did you mean {width / 100:g}, {width:g} percentage points?)" if 1.0 <= width < 100 else ""
            raise ValueError(f"`margin` of a difference must be a rate strictly between 0 and 1{hint}; got {margin!r}")
        return -width, width
    try:
        low, high = (float(v) for v in margin)
    except (TypeError, ValueError):
        raise TypeError(f"`margin` must be a number or a pair of numbers (low, high); got {margin!r}") from None
    if compare == "difference":
        if not (-1.0 < low < 0.0 < high < 1.0):
            raise ValueError(f"`margin` (low, high) of a difference must satisfy -1 < low < 0 < high < 1; "
                             f"got ({low:g}, {high:g})")
    elif not (0.0 < low < 1.0 < high):
        raise ValueError(f"`margin` (low, high) of a ratio must satisfy 0 < low < 1 < high (high may be "
                         f"math.inf): {four_fifths}; got ({low:g}, {high:g})")
    return low, high


def _as_counts(count, n, name: str) -> tuple[int, int]:
    for value, what in ((count, f"count_{name}"), (n, f"n_{name}")):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise TypeError(f"`{what}` must be a whole number; got {value!r}")
    count, n = int(count), int(n)
    if n < 1:
        raise ValueError(f"`n_{name}` must be at least 1 (a group with rows); got {n}")
    if not 0 <= count <= n:
        raise ValueError(f"`count_{name}` must lie between 0 and n_{name} = {n:,}; got {count:,}")
    return count, n


# ---------------------------------------------------------------------------------------------
# The score statistic at a hypothesised difference or ratio (Miettinen and Nurminen 1985)
# ---------------------------------------------------------------------------------------------


def _restricted_rates(x1, n1, x2, n2, value: float, compare: str):
    """Maximum likelihood rates ``(p1, p2)`` under ``p1 - p2 = value`` or ``p1 = value * p2``.

    ``x1``, ``x2``: counts (arrays that broadcast). The difference solves Farrington and
    Manning's cubic for ``p1`` in closed form (their eq. 2 and appendix, in the form of SAS's
    documentation of the Farrington-Manning test); the ratio, Miettinen and Nurminen's quadratic
    for ``p2`` by its smaller root, written without cancellation. (statsmodels' closed form for
    the difference, which solves for ``p2``, takes a root outside [0, 1] when the hypothesised
    difference is large, e.g. 11/390 against 103/178 at -0.605: its intervals then fail; the
    tests check this form against a numerical maximisation of the likelihood instead.)
    """
    x1 = np.asarray(x1, dtype=np.float64)
    x2 = np.asarray(x2, dtype=np.float64)
    if compare == "difference":
        d, theta = value, n2 / n1
        r1, r2 = x1 / n1, x2 / n2
        a = 1 + theta
        b = -(1 + theta + r1 + theta * r2 + d * (theta + 2))
        c = d * d + d * (2 * r1 + theta + 1) + r1 + theta * r2
        e = -r1 * d * (1 + d)
        v = b**3 / (27 * a**3) - b * c / (6 * a * a) + e / (2 * a)
        u = np.sqrt(np.maximum(b * b / (9 * a * a) - c / (3 * a), 0.0))
        u = np.where(v < 0, -u, u)
        with np.errstate(divide="ignore", invalid="ignore"):
            cos_arg = np.where(u == 0, 0.0, v / u**3)
        angle = (math.pi + np.arccos(np.clip(cos_arg, -1.0, 1.0))) / 3
        p1 = np.clip(2 * u * np.cos(angle) - b / (3 * a), max(0.0, d), min(1.0, 1.0 + d))
        return p1, p1 - d
    total, count = n1 + n2, x1 + x2
    a = total * value
    b = -(n1 * value + x1 + n2 + x2 * value)
    disc = np.sqrt(np.maximum(b * b - 4 * a * count, 0.0))
    p2 = np.clip(2 * count / (-b + disc), 0.0, min(1.0, 1.0 / value))
    return np.clip(value * p2, 0.0, 1.0), p2


def _score_statistic(x1, n1, x2, n2, value: float, compare: str, correction: bool = True):
    """Miettinen and Nurminen's z at the hypothesised ``value`` (array over the counts).

    ``(p1^ - p2^ - d) / se`` or ``(p1^ - theta p2^) / se``, ``se`` at the restricted maximum
    likelihood rates, times ``sqrt((N - 1) / N)`` with ``correction`` (their variance factor
    ``N / (N - 1)``). Where ``se`` is 0 (no table could differ: 0/0 on a ratio) the statistic is
    0 when the observed value equals ``value``'s and infinite otherwise.
    """
    x1 = np.asarray(x1, dtype=np.float64)
    x2 = np.asarray(x2, dtype=np.float64)
    r1, r2 = _restricted_rates(x1, n1, x2, n2, value, compare)
    if compare == "difference":
        excess = x1 / n1 - x2 / n2 - value
        var = r1 * (1 - r1) / n1 + r2 * (1 - r2) / n2
    else:
        excess = x1 / n1 - value * x2 / n2
        var = r1 * (1 - r1) / n1 + value * value * r2 * (1 - r2) / n2
    if correction:
        var = var * (n1 + n2) / (n1 + n2 - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = excess / np.sqrt(var)
    return np.where(var > 0, z, np.where(excess == 0, 0.0, np.copysign(np.inf, excess)))


# ---------------------------------------------------------------------------------------------
# One-sided p-values: score (normal) and exact unconditional (Chan 1998)
# ---------------------------------------------------------------------------------------------


def _nuisance_range(value: float, compare: str) -> tuple[float, float]:
    """The advantaged group's rates ``p2`` that keep ``p1`` in [0, 1] on the margin ``value``."""
    if compare == "difference":
        return max(0.0, -value), min(1.0, 1.0 - value)
    return 0.0, min(1.0, 1.0 / value)


def _log_binomial_pmf(n: int, p: np.ndarray) -> np.ndarray:
    """log pmf of Binomial(n, p) at 0..n for each rate in ``p``: shape (len(p), n + 1)."""
    k = np.arange(n + 1, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = np.where(k == 0, 0.0, k * np.log(p))
        log_q = np.where(k == n, 0.0, (n - k) * np.log1p(-p))
    return _log_choose(n) + log_p + log_q


@functools.lru_cache(maxsize=64)
def _log_choose(n: int) -> np.ndarray:
    """``log C(n, k)`` for k = 0..n (the exact test and its interval ask for the same n often)."""
    k = np.arange(n + 1, dtype=np.float64)
    out = gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
    out.flags.writeable = False
    return out


class _Tail:
    """The probability of one rejection region as a function of the nuisance rate ``p2``.

    The region holds, in each row ``x1``, the run of ``x2`` in ``[first[x1], stop[x1])``.
    ``probability(p2)``: the chance of the region, for each rate in ``p2``, when ``p1 = p2 +
    value`` (difference) or ``value * p2`` (ratio): for each row, a difference of the binomial
    distribution function of ``x2``, so O(n1 + n2) per rate instead of O(n1 n2).
    """

    def __init__(self, first: np.ndarray, stop: np.ndarray, n1: int, n2: int, value: float, compare: str):
        self.first, self.stop = first, stop
        self.n1, self.n2, self.value, self.compare = n1, n2, value, compare

    def probability(self, p2: np.ndarray) -> np.ndarray:
        p2 = np.asarray(p2, dtype=np.float64)
        p1 = p2 + self.value if self.compare == "difference" else self.value * p2
        pmf1 = np.exp(_log_binomial_pmf(self.n1, np.clip(p1, 0.0, 1.0)))  # (G, n1 + 1)
        pmf2 = np.exp(_log_binomial_pmf(self.n2, p2))  # (G, n2 + 1)
        cdf2 = np.concatenate([np.zeros((p2.size, 1)), np.cumsum(pmf2, axis=1)], axis=1)  # P(X2 < j)
        inside = cdf2[:, self.stop] - cdf2[:, self.first]  # (G, n1 + 1): P(X2 in row x1's run)
        return np.einsum("gi,gi->g", pmf1, inside)

    def supremum(self) -> float:
        """The largest probability over the nuisance range: a grid, then, around each of the
        three highest local maxima of the grid (the polynomial can have more than one), finer
        grids of ``_REFINE_POINTS`` points, each spanning the two cells beside the last best."""
        low, high = _nuisance_range(self.value, self.compare)
        size = max(_GRID_MIN, 2 * int(math.ceil(4 * math.sqrt(max(self.n1, self.n2)))) + 1)
        grid = np.linspace(low, high, size)
        values = self.probability(grid)
        best = float(values.max())
        peaks = np.flatnonzero((values >= np.r_[-1.0, values[:-1]]) & (values >= np.r_[values[1:], -1.0]))
        peaks = peaks[np.argsort(values[peaks], kind="stable")[::-1][:3]]
        left, right = grid[np.maximum(peaks - 1, 0)], grid[np.minimum(peaks + 1, size - 1)]
        steps = np.linspace(0.0, 1.0, _REFINE_POINTS)
        for _ in range(_REFINE_LEVELS):
            fine = left[:, None] + (right - left)[:, None] * steps[None, :]  # (peaks, points)
            values = self.probability(fine.ravel()).reshape(fine.shape)
            best = max(best, float(values.max()))
            at = values.argmax(axis=1)
            rows = np.arange(fine.shape[0])
            left = fine[rows, np.maximum(at - 1, 0)]
            right = fine[rows, np.minimum(at + 1, _REFINE_POINTS - 1)]
        return min(1.0, best)


def _one_sided_p(x1: int, n1: int, x2: int, n2: int, value: float, side: str, compare: str, method: str) -> float:
    """p-value of ``theta <= value`` (``side="larger"``: rejecting shows ``theta > value``) or of
    ``theta >= value`` (``side="smaller"``), by the score test or the exact unconditional test."""
    if math.isinf(value):  # no upper bound: the hypothesis theta >= inf is rejected outright
        return 0.0
    z_obs = float(_score_statistic(x1, n1, x2, n2, value, compare))
    if method == "score":
        return float(ndtr(-z_obs) if side == "larger" else ndtr(z_obs))
    tie = _TIE_RTOL * max(1.0, abs(z_obs)) if math.isfinite(z_obs) else 0.0
    first, stop = _region_runs(n1, n2, value, compare, z_obs, tie, side)
    return _Tail(first, stop, n1, n2, value, compare).supremum()


def _region_runs(n1: int, n2: int, value: float, compare: str, z_obs: float, tie: float,
                 side: str) -> tuple[np.ndarray, np.ndarray]:
    """Each row's run of tables at least as extreme as the observed one: ``[first, stop)``.

    The score statistic falls as ``x2`` rises, in every row ``x1`` (Barnard's convexity
    condition, which Röhmel and Mansmann 1999 report for the Farrington-Manning statistic; the
    tests check it over thousands of random sizes and margins). So the tables with
    ``z >= z_obs`` ("larger") are ``x2 < c`` and those with ``z <= z_obs`` ("smaller") are
    ``x2 >= c``: each row's ``c`` is found by bisection on ``x2``, all rows at once, in
    O(n1 log n2) evaluations of the statistic (the calculator's twin does the same steps).
    """
    rows = np.arange(n1 + 1)
    low = np.zeros(n1 + 1, dtype=np.int64)  # c lies in [low, high]: the first x2 outside (larger)
    high = np.full(n1 + 1, n2 + 1, dtype=np.int64)  # or inside (smaller) the region
    while True:
        open_ = low < high
        if not open_.any():
            break
        middle = (low + high) // 2
        z = _score_statistic(rows, n1, np.minimum(middle, n2), n2, value, compare)
        past = (z < z_obs - tie) if side == "larger" else (z <= z_obs + tie)
        high = np.where(open_ & past, middle, high)
        low = np.where(open_ & ~past, middle + 1, low)
    cut = np.minimum(low, n2 + 1)
    if side == "larger":
        return np.zeros(n1 + 1, dtype=np.int64), cut
    return cut, np.full(n1 + 1, n2 + 1, dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# The interval that inverts the two one-sided tests
# ---------------------------------------------------------------------------------------------


def _interval(x1: int, n1: int, x2: int, n2: int, alpha: float, compare: str, method: str) -> tuple[float, float]:
    """The ``1 - 2 alpha`` interval: the values that neither one-sided test at level ``alpha`` rejects.

    The lower limit is where ``p(theta <= value)`` falls through ``alpha`` as ``value`` moves down
    from the estimate, the upper where ``p(theta >= value)`` does as it moves up; each is
    bracketed by doubling steps, then bisected (on log(theta) for a ratio). A score test's
    p-value is monotone in ``value``; an exact one need not be, and the bisection then returns
    one crossing: the TOST p-value, not the interval, decides equivalence.
    """
    if compare == "ratio" and x1 == 0 and x2 == 0:
        return math.nan, math.nan  # every ratio fits 0/0

    def p_low(value):
        return _one_sided_p(x1, n1, x2, n2, value, "larger", compare, method)

    def p_high(value):
        return _one_sided_p(x1, n1, x2, n2, value, "smaller", compare, method)

    estimate = _estimate(x1, n1, x2, n2, compare)
    if compare == "difference":
        bounds = (-1.0 + 1e-12, 1.0 - 1e-12)
        return (_limit(p_low, estimate, -1, bounds, alpha, step=0.05),
                _limit(p_high, estimate, +1, bounds, alpha, step=0.05))
    # Ratio, on t = log(theta): a count of 0 puts a limit at 0 or infinity, and the search then
    # starts from the ratio one more (or one fewer) 1 would give.
    start = math.log(estimate) if 0 < estimate < math.inf else math.log(((x1 or 0.5) / n1) / ((x2 or 0.5) / n2))
    bounds = (start - 60.0, start + 60.0)  # e^60: past any ratio the counts can tell apart
    low = 0.0 if x1 == 0 else math.exp(_limit(lambda t: p_low(math.exp(t)), start, -1, bounds, alpha, step=0.25))
    high = math.inf if x2 == 0 else math.exp(_limit(lambda t: p_high(math.exp(t)), start, +1, bounds, alpha, step=0.25))
    return (0.0 if low <= math.exp(bounds[0]) * 1.0000001 else low), (math.inf if high >= math.exp(bounds[1]) / 1.0000001 else high)


def _limit(p, start: float, outward: int, bounds: tuple[float, float], alpha: float, *, step: float) -> float:
    """Where ``p`` falls below ``alpha`` going ``outward`` (-1 or +1) from ``start``.

    ``p`` is at least ``alpha`` near the estimate and below it far out. If it is below ``alpha``
    at ``start`` (a count of 0: the start is a guess), the search first steps inward. A limit that
    never crosses before its bound is the bound.
    """
    edge = bounds[0] if outward < 0 else bounds[1]
    inner = start
    inward = step
    while p(inner) < alpha:  # step back towards the inside until the p-value is large
        inner = inner - outward * inward
        inward *= 2
        if not bounds[0] < inner < bounds[1]:  # rejected everywhere: cannot happen at the estimate
            return bounds[1] if outward < 0 else bounds[0]
    outer = inner + outward * step
    while True:
        if (outer - edge) * outward >= 0:  # reached the bound
            outer = edge
            if p(outer) >= alpha:
                return edge
            break
        if p(outer) < alpha:
            break
        inner, step = outer, step * 2
        outer = inner + outward * step
    for _ in range(_BISECTION_STEPS):
        middle = (inner + outer) / 2
        if p(middle) >= alpha:
            inner = middle
        else:
            outer = middle
    return (inner + outer) / 2


# ---------------------------------------------------------------------------------------------
# The public test
# ---------------------------------------------------------------------------------------------


def _chosen_method(method: str, n1: int, n2: int) -> str:
    if method == "auto":
        return "exact" if (n1 + 1) * (n2 + 1) <= EXACT_MAX_TABLES else "score"
    return method


def equivalence_test(a, b, *, margin, compare: str = "difference", alpha: float = 0.05,
                     method: str = "auto") -> EquivalenceTestResult:
    """Two one-sided tests (TOST) that the gap between two groups' rates lies within a margin.

    Parameters
    ----------
    a : array_like of {0, 1}, shape (n_a,)
        Disadvantaged group's 0/1 outcomes (numbers or booleans); non-empty.
    b : array_like of {0, 1}, shape (n_b,)
        Advantaged (reference) group's 0/1 outcomes; non-empty.
    margin : float or (float, float)
        The equivalence region, declared before looking at the data; there is no default.
        Difference: ``0.05`` means ``-0.05 < p_a - p_b < 0.05`` (5 percentage points either
        way), or a pair ``(low, high)`` with ``-1 < low < 0 < high < 1``. Ratio: a pair
        ``(low, high)`` with ``0 < low < 1 < high``, ``(0.8, 1.25)`` for the four-fifths band or
        ``(0.8, math.inf)`` for a ratio of at least 0.8 (a one-sided, non-inferiority test).
    compare : {"difference", "ratio"}, default "difference"
        ``p_a - p_b`` (rates in [0, 1]) or ``p_a / p_b``.
    alpha : float, default 0.05
        Level of each one-sided test, strictly between 0 and 1; the interval is ``1 - 2 alpha``.
    method : {"auto", "exact", "score"}, default "auto"
        ``"exact"``: Chan's exact unconditional test, which holds its level at the margin;
        ``"score"``: Miettinen and Nurminen's score test against the normal distribution;
        ``"auto"``: exact when ``(n_a + 1)(n_b + 1) <= EXACT_MAX_TABLES``, else score.

    Returns
    -------
    EquivalenceTestResult
        ``p_value`` (the larger one-sided p-value), ``equivalent`` (``p_value < alpha``), the
        ``1 - 2 alpha`` interval ``(ci_low, ci_high)``, the margin, the method.

    Raises
    ------
    TypeError
        Non-numeric samples; ``margin`` missing, not a number or pair, or a single number for a
        ratio.
    ValueError
        Empty, non-1-D or non-0/1 samples; a margin outside its range (a difference margin of 5
        is taken for percentage points and refused with the rate it probably means); ``alpha``
        outside (0, 1); unknown ``compare`` or ``method``.

    Notes
    -----
    With ``theta`` the difference or ratio and the region ``low < theta < high``, the null
    hypothesis ``theta <= low or theta >= high`` is rejected when both ``theta <= low`` and
    ``theta >= high`` are, each at level ``alpha`` (Schuirmann 1987); the TOST p-value is the
    larger of the two one-sided p-values.

    Each one-sided test uses the score statistic of Miettinen and Nurminen (1985) at the bound,
    ``z = (p_a^ - p_b^ - low) / se~`` (difference) or ``(p_a^ - low p_b^) / se~`` (ratio), where
    ``se~`` is the standard error at the maximum likelihood rates restricted to the bound
    (Farrington and Manning 1990), with the variance factor ``N / (N - 1)``. The score method
    takes ``1 - Phi(z)``; it equals statsmodels' ``tost_proportions_2indep(count_a, n_a,
    count_b, n_b, low, high, method="score", compare=..., correction=True)`` for a ratio, and for
    a difference with the fix of statsmodels' pull request #10270 (the shipped cubic does not
    maximise the restricted likelihood; the tests check both facts). The exact method (Chan 1998) takes, over every rate ``p_b`` on the bound, the largest
    probability of a table whose statistic is at least as extreme: the maximum of a polynomial
    in ``p_b``, found on a grid and refined by finer grids around its highest local maxima; so
    its rejection rate at the margin is at most ``alpha`` whatever ``p_b`` is (the slow tests
    enumerate it). On the margin and beyond, a larger gap only makes rejection rarer (the
    statistic satisfies Barnard's convexity condition; Röhmel and Mansmann 1999).

    A 0/0 ratio (no 1s in either group) fits every ratio: its statistic is 0, so equivalence is
    never shown and the interval is NaN.

    References
    ----------
    .. [1] Schuirmann, D. J. (1987). *J. Pharmacokinetics and Biopharmaceutics* 15(6), 657-680.
    .. [2] Miettinen, O. and Nurminen, M. (1985). *Statistics in Medicine* 4(2), 213-226.
    .. [3] Farrington, C. P. and Manning, G. (1990). *Statistics in Medicine* 9(12), 1447-1454.
    .. [4] Chan, I. S. F. (1998). *Statistics in Medicine* 17(12), 1403-1413.
    .. [5] Röhmel, J. and Mansmann, U. (1999). Unconditional non-asymptotic one-sided tests for
       independent binomial proportions when the interest lies in showing non-inferiority
       and/or superiority. *Biometrical Journal* 41(2), 149-170.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import equivalence_test
    >>> a = np.r_[np.ones(15), np.zeros(49)]    # 15 of 64 flagged
    >>> b = np.r_[np.ones(35), np.zeros(101)]   # 35 of 136 flagged
    >>> result = equivalence_test(a, b, margin=0.10)
    >>> result.equivalent, round(result.ci_low, 3), round(result.ci_high, 3)
    (False, -0.127, 0.095)
    """
    a = _as_binary_sample(a, "a")
    b = _as_binary_sample(b, "b")
    return equivalence_test_from_counts(int(a.sum()), a.size, int(b.sum()), b.size, margin=margin,
                                        compare=compare, alpha=alpha, method=method)


def equivalence_test_from_counts(count_a, n_a, count_b, n_b, *, margin, compare: str = "difference",
                                 alpha: float = 0.05, method: str = "auto",
                                 interval: bool = True) -> EquivalenceTestResult:
    """:func:`equivalence_test` from counts: ``count_a`` ones among ``n_a`` rows, and so on.

    Parameters
    ----------
    count_a, n_a, count_b, n_b : int
        Ones (e.g. people flagged) and rows of each group, ``0 <= count <= n``, ``n >= 1``.
    margin, compare, alpha, method
        As :func:`equivalence_test`.
    interval : bool, default True
        Compute the ``1 - 2 alpha`` interval; ``False`` leaves ``ci_low`` and ``ci_high`` NaN
        (the p-value alone: for a table of hundreds of rows, where the exact interval would cost
        about a hundred exact tests each).

    Returns
    -------
    EquivalenceTestResult

    Raises
    ------
    TypeError, ValueError
        Counts that are not whole numbers, or out of range; the rest as :func:`equivalence_test`.
    """
    (x1, n1), (x2, n2) = _as_counts(count_a, n_a, "a"), _as_counts(count_b, n_b, "b")
    compare = _check_choice(compare, "compare", COMPARISONS)
    method = _chosen_method(_check_choice(method, "method", _METHODS), n1, n2)
    low, high = _as_margin(margin, compare)
    alpha = _check_open_unit(alpha, "alpha")
    if not alpha < 0.5:
        raise ValueError(f"`alpha` must be below 0.5 (the interval is 1 - 2 alpha); got {alpha}")
    p_low = _one_sided_p(x1, n1, x2, n2, low, "larger", compare, method)
    p_high = _one_sided_p(x1, n1, x2, n2, high, "smaller", compare, method)
    ci_low, ci_high = _interval(x1, n1, x2, n2, alpha, compare, method) if interval else (math.nan, math.nan)
    p_value = max(p_low, p_high)
    return EquivalenceTestResult(
        compare=compare, estimate=_estimate(x1, n1, x2, n2, compare), margin_low=low, margin_high=high,
        p_value=p_value, p_value_low=p_low, p_value_high=p_high, equivalent=bool(p_value < alpha), alpha=alpha,
        ci_low=float(ci_low), ci_high=float(ci_high), confidence_level=1 - 2 * alpha, method=method,
        count_a=x1, n_a=n1, count_b=x2, n_b=n2)


def _estimate(x1: int, n1: int, x2: int, n2: int, compare: str) -> float:
    if compare == "difference":
        return x1 / n1 - x2 / n2
    if x2 == 0:
        return math.nan if x1 == 0 else math.inf
    return (x1 / n1) / (x2 / n2)
