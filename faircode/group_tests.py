"""Tests across many groups and within strata.

Two questions a fairness audit asks that a two-group test does not answer:

- **Is any of k groups treated differently?** :func:`homogeneity_test` (Pearson's chi-squared
  test of one shared rate, asymptotic, exact or Monte Carlo) and :func:`max_t_test` (the
  studentised maximum over pairs, Westfall and Young's maxT, which also names the pairs that
  differ with family-wise error control). Both weigh each group's gap by its standard error, so
  a large group's moderate gap counts for what it is worth; the range test
  :func:`faircode.significance.max_gap_test` weighs raw gaps and spends its power on the
  smallest, noisiest group.
- **Do two groups differ within strata?** (within deciles of a score, within departments:
  the comparison Simpson's paradox warns about). :func:`cmh_test` (Cochran-Mantel-Haenszel,
  with the Mantel-Haenszel common odds ratio and its Robins-Breslow-Greenland interval),
  :func:`breslow_day_test` (is that odds ratio the same in every stratum?) and
  :func:`stratified_permutation_test` (relabelling within strata; exact for 0/1 outcomes).

Every p-value follows the conventions of :mod:`faircode.significance`: Monte Carlo p-values
are Phipson and Smyth's ``(b + 1) / (m + 1)`` with ``p_value_floor = 1 / (m + 1)``; exact and
asymptotic ones have floor 0; results print them with ``format_p_value()``.

References
----------
.. [1] Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed. Wiley: sec. 3.2 (chi-squared
   tests of independence), 3.5 (exact tests), 6.4 (Cochran-Mantel-Haenszel, Breslow-Day).
.. [2] Westfall, P. H. and Young, S. S. (1993). *Resampling-Based Multiple Testing*. Wiley,
   ch. 2 (single-step maxT adjusted p-values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from faircode.formatting import check_positive_int as _check_positive_int
from faircode.significance import (
    _TIE_RTOL,
    _PValueResult,
    _as_group_labels,
    _as_rng,
    _as_sample,
    _batch_rows,
    _check_choice,
    _check_open_unit,
    _is_binary,
    _is_missing,
    _logsumexp,
    gammaln,
)

__all__ = [
    "BreslowDayResult",
    "CMHTestResult",
    "HomogeneityTestResult",
    "MaxTTestResult",
    "StratifiedTestResult",
    "breslow_day_test",
    "cmh_test",
    "homogeneity_test",
    "max_t_test",
    "stratified_permutation_test",
]

#: Default cap on the tables an exact k x 2 test enumerates (see :func:`homogeneity_test`).
MAX_EXACT_TABLES = 200_000

_HOMOGENEITY_METHODS = ("auto", "exact", "asymptotic", "monte_carlo")
_PERMUTATION_METHODS = ("auto", "exact", "monte_carlo")
_ALTERNATIVES = ("two-sided", "less", "greater")

#: Cochran's rule for the chi-squared approximation: every expected count at least 5.
_MIN_EXPECTED = 5.0


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, repr=False)
class HomogeneityTestResult(_PValueResult):
    """Result of :func:`homogeneity_test`: do k groups share one rate?

    Attributes
    ----------
    statistic : float
        Pearson's ``X^2 = sum_g (x_g - n_g p)^2 / (n_g p (1 - p))`` over the k x 2 table, with
        ``p`` the pooled rate, ``>= 0`` (0 when every row has the same outcome).
    dof : int
        ``k - 1``.
    p_value : float
        Chi-squared(k - 1) tail (``"asymptotic"``), the exact permutation probability of a
        table with ``X^2`` at least the observed (``"exact"``) or Phipson and Smyth's
        ``(b + 1) / (m + 1)`` (``"monte_carlo"``).
    method : str
        ``"exact"``, ``"asymptotic"`` or ``"monte_carlo"``: the method used.
    n_permutations : int or None
        Relabellings drawn; None unless Monte Carlo.
    p_value_floor : float
        ``1 / (n_permutations + 1)`` for Monte Carlo, else 0.0.
    is_monte_carlo_minimum : bool
        True when no relabelling was as extreme, so ``p_value == p_value_floor``.
    groups : tuple
        The group labels, sorted.
    sizes : tuple of int
        Rows per group, in the order of ``groups``.
    rates : tuple of float
        Each group's rate of ones, in [0, 1].
    min_expected : float
        The smallest expected count of the table under one shared rate (Cochran's rule asks
        for 5).
    n_tables : float
        How many k x 2 tables have the observed margins (a float: it can be astronomically
        large).
    """

    statistic: float
    dof: int
    p_value: float
    method: str
    n_permutations: int | None
    p_value_floor: float
    is_monte_carlo_minimum: bool
    groups: tuple
    sizes: tuple
    rates: tuple
    min_expected: float
    n_tables: float = field(default=math.nan, compare=False)

    def __repr__(self) -> str:
        draws = "" if self.n_permutations is None else f", n_permutations={self.n_permutations:,}"
        return (f"HomogeneityTestResult(X2={self.statistic:.4g}, dof={self.dof}, {self.format_p_value()}, "
                f"method={self.method!r}, k={len(self.groups)}{draws})")


@dataclass(frozen=True, repr=False)
class MaxTTestResult(_PValueResult):
    """Result of :func:`max_t_test`: the studentised largest pairwise gap and its permutation p.

    Attributes
    ----------
    statistic : float
        ``T = max_{i<j} |mean_i - mean_j| / sqrt(s2 (1/n_i + 1/n_j))``, ``>= 0``; ``s2`` is the
        pooled variance of all rows (``p (1 - p)`` for 0/1 outcomes).
    p_value : float
        Probability under relabelling of a maximum at least ``T``: exact, or ``(b + 1) / (m + 1)``.
    method : str
        ``"exact"`` or ``"monte_carlo"``.
    n_permutations : int or None
        Relabellings drawn; None for exact.
    p_value_floor : float
        ``1 / (n_permutations + 1)`` for Monte Carlo, else 0.0.
    is_monte_carlo_minimum : bool
        True when no relabelling was as extreme.
    groups : tuple
        The group labels, sorted.
    sizes : tuple of int
        Rows per group.
    means : tuple of float
        Each group's mean (a rate in [0, 1] for 0/1 outcomes).
    pair : tuple
        ``(group_a, group_b)``, the pair attaining ``T`` (``group_a`` sorts first).
    pairs_adjusted : tuple of tuple
        ``(group_a, group_b, t, p_adjusted)`` for every pair in sorted label order: ``t`` is the
        signed studentised gap ``(mean_a - mean_b) / se``, ``p_adjusted`` the single-step maxT
        adjusted p-value (the null probability that the maximum reaches ``|t|``). It controls
        the family-wise error rate only in the weak sense, under the complete null that every
        group shares one rate: the standard errors use the rate pooled over all groups and the
        relabelling mixes all groups, so when some groups differ a truly equal pair can get too
        small a p (subset pivotality fails; Petrondas and Gabriel 1983). Use it as an omnibus
        test; to name the pairs that differ, use
        :func:`faircode.significance.pairwise_tests` with Holm's adjustment.
    """

    statistic: float
    p_value: float
    method: str
    n_permutations: int | None
    p_value_floor: float
    is_monte_carlo_minimum: bool
    groups: tuple
    sizes: tuple
    means: tuple
    pair: tuple
    pairs_adjusted: tuple

    def __repr__(self) -> str:
        draws = "" if self.n_permutations is None else f", n_permutations={self.n_permutations:,}"
        return (f"MaxTTestResult(T={self.statistic:.4g} ({self.pair[0]!r} vs {self.pair[1]!r}), "
                f"{self.format_p_value()}, method={self.method!r}, k={len(self.groups)}{draws})")


@dataclass(frozen=True, repr=False)
class CMHTestResult(_PValueResult):
    """Result of :func:`cmh_test`.

    Attributes
    ----------
    statistic : float
        The Cochran-Mantel-Haenszel chi-squared statistic (1 degree of freedom).
    p_value : float
        Its chi-squared(1) upper tail.
    odds_ratio : float
        Mantel-Haenszel common odds ratio: odds of outcome 1 in group 1 over group 0 (0 or inf
        when no stratum has a discordant product on one side).
    ci_low, ci_high : float
        Robins-Breslow-Greenland interval of the odds ratio at ``confidence_level`` (NaN when
        the odds ratio is 0 or infinite).
    confidence_level : float
    risk_difference : float
        Mantel-Haenszel weighted gap ``sum_s w_s (rate_1s - rate_0s) / sum_s w_s`` with
        ``w_s = n_1s n_0s / n_s``: group 1 minus group 0, in [-1, 1].
    n_strata : int
        Strata used (both groups present).
    n_strata_dropped : int
        Strata left out because one group is absent (they carry no within-stratum comparison).
    correction : bool
        Whether the continuity correction was applied.
    """

    statistic: float
    p_value: float
    odds_ratio: float
    ci_low: float
    ci_high: float
    confidence_level: float
    risk_difference: float
    n_strata: int
    n_strata_dropped: int
    correction: bool

    p_value_floor = 0.0  # an asymptotic p-value has no Monte Carlo floor

    def __repr__(self) -> str:
        return (f"CMHTestResult(statistic={self.statistic:.4g}, {self.format_p_value()}, "
                f"odds_ratio={self.odds_ratio:.4g} {self.confidence_level:.0%} CI [{self.ci_low:.4g}, "
                f"{self.ci_high:.4g}], risk_difference={self.risk_difference:+.4g}, n_strata={self.n_strata}"
                f"{f', dropped={self.n_strata_dropped}' if self.n_strata_dropped else ''})")


@dataclass(frozen=True, repr=False)
class BreslowDayResult(_PValueResult):
    """Result of :func:`breslow_day_test`.

    Attributes
    ----------
    statistic : float
        Breslow-Day chi-squared statistic (with Tarone's correction when ``tarone``).
    dof : int
        ``n_strata - 1``.
    p_value : float
        Chi-squared(dof) upper tail.
    tarone : bool
    n_strata, n_strata_dropped : int
        As :class:`CMHTestResult`.
    """

    statistic: float
    dof: int
    p_value: float
    tarone: bool
    n_strata: int
    n_strata_dropped: int

    p_value_floor = 0.0

    def __repr__(self) -> str:
        return (f"BreslowDayResult(statistic={self.statistic:.4g}, dof={self.dof}, {self.format_p_value()}, "
                f"tarone={self.tarone})")


@dataclass(frozen=True, repr=False)
class StratifiedTestResult(_PValueResult):
    """Result of :func:`stratified_permutation_test`.

    Attributes
    ----------
    statistic : float
        Within-strata gap ``sum_s w_s (mean_1s - mean_0s) / sum_s w_s``, ``w_s = n_1s n_0s /
        n_s``: group 1 minus group 0, in the outcome's unit.
    p_value : float
        Exact (0/1 outcomes) or ``(b + 1) / (m + 1)``.
    method : str
        ``"exact"`` or ``"monte_carlo"``.
    n_permutations : int or None
    p_value_floor : float
    is_monte_carlo_minimum : bool
    alternative : str
    n_strata, n_strata_dropped : int
        As :class:`CMHTestResult`.
    """

    statistic: float
    p_value: float
    method: str
    n_permutations: int | None
    p_value_floor: float
    is_monte_carlo_minimum: bool
    alternative: str
    n_strata: int
    n_strata_dropped: int

    def __repr__(self) -> str:
        draws = "" if self.n_permutations is None else f", n_permutations={self.n_permutations:,}"
        return (f"StratifiedTestResult(statistic={self.statistic:+.4g}, {self.format_p_value()}, "
                f"method={self.method!r}, alternative={self.alternative!r}, n_strata={self.n_strata}{draws})")


# --------------------------------------------------------------------------- k x 2 tables


def _as_binary_outcome(outcome, name: str = "outcome") -> np.ndarray:
    x = _as_sample(outcome, name)
    if not _is_binary(x):
        bad = x[(x != 0.0) & (x != 1.0)][0]
        raise ValueError(f"`{name}` must hold 0/1 outcomes (or booleans); found {bad:g}")
    return x


def _check_max_tables(max_tables) -> int:
    return _check_positive_int(max_tables, "max_tables")


def _count_tables(sizes: np.ndarray, ones: int) -> float:
    """How many count vectors ``c`` with ``0 <= c_g <= n_g`` and ``sum c = ones`` there are.

    Dynamic programme over the groups on the partial sum (a convolution of boxes), in floats so
    that an astronomical count becomes a large number instead of overflowing: O(k x ones).
    """
    ways = np.zeros(ones + 1)
    ways[0] = 1.0
    for n in sizes:
        run = np.cumsum(ways)
        shifted = np.concatenate([np.zeros(int(n) + 1), run])[: ones + 1]
        ways = run - shifted  # ways_new[s] = sum_{c=0..n} ways[s - c]
    return float(ways[ones])


def _enumerate_tables(sizes: np.ndarray, ones: int) -> tuple[np.ndarray, np.ndarray]:
    """Every count vector with the given margins, and its log probability under relabelling.

    Returns ``counts`` of shape ``(n_tables, k)`` (columns in the order of ``sizes``) and
    ``log_p`` of shape ``(n_tables,)``: the multivariate hypergeometric ``prod_g C(n_g, c_g) /
    C(N, K)``. Group by group, smallest first, a partial vector is kept only if the groups still
    to come can complete it, so no stage holds more rows than the final enumeration (the cap on
    tables bounds the work); the largest group comes last and takes what is left.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    order = np.argsort(sizes, kind="stable")
    ordered = sizes[order]
    room_after = np.concatenate([np.cumsum(ordered[::-1])[::-1][1:], [0]])  # capacity of later groups
    partial = np.zeros((1, 0), dtype=np.int64)
    total = np.zeros(1, dtype=np.int64)
    log_w = np.zeros(1)
    for g, n in enumerate(ordered[:-1]):
        c = np.arange(n + 1, dtype=np.int64)
        new_total = total[:, None] + c[None, :]
        ok = (new_total <= ones) & (new_total + room_after[g] >= ones)
        rows, cols = np.nonzero(ok)
        partial = np.column_stack([partial[rows], c[cols]])
        total = new_total[rows, cols]
        log_w = log_w[rows] + _log_choose(int(n), c[cols])
    last = ones - total  # within [0, n_last] by the pruning above
    partial = np.column_stack([partial, last])
    log_w = log_w + _log_choose(int(ordered[-1]), last)
    counts = np.empty_like(partial)
    counts[:, order] = partial
    log_p = log_w - float(_log_choose(int(sizes.sum()), np.array([ones]))[0])
    return counts, log_p


def _log_choose(n: int, k: np.ndarray) -> np.ndarray:
    k = np.asarray(k, dtype=np.float64)
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def _chi2_of_counts(counts: np.ndarray, sizes: np.ndarray, ones: int) -> np.ndarray:
    """Pearson's X^2 of k x 2 tables from the ones per group, shape ``(..., k)`` -> ``(...)``."""
    n = float(sizes.sum())
    p = ones / n
    if p in (0.0, 1.0):
        return np.zeros(counts.shape[:-1])
    expected = sizes * p
    return (((counts - expected) ** 2) / (expected * (1.0 - p))).sum(axis=-1)


def _tail(null: np.ndarray, log_p: np.ndarray, observed: float, scale: float) -> float:
    """Exact upper tail: total probability of the tables whose statistic is at least ``observed``."""
    extreme = null >= observed - _TIE_RTOL * max(scale, 1.0)
    if not extreme.any():
        return 0.0
    return min(1.0, math.exp(_logsumexp(log_p[extreme])))


def _hypergeometric_draws(sorted_sizes: np.ndarray, ones: int, n_permutations: int, rng) -> np.ndarray:
    """Ones per group of ``n_permutations`` random relabellings, shape ``(m, k)``."""
    out = np.empty((n_permutations, sorted_sizes.size), dtype=np.float64)
    rows = _batch_rows(None, sorted_sizes.size)
    for start in range(0, n_permutations, rows):
        stop = min(start + rows, n_permutations)
        out[start:stop] = rng.multivariate_hypergeometric(sorted_sizes, ones, size=stop - start,
                                                          method="marginals")
    return out


def _k_by_2(outcome, groups):
    x = _as_binary_outcome(outcome)
    uniques, codes = _as_group_labels(groups, x.size)
    k = uniques.size
    sizes = np.bincount(codes, minlength=k).astype(np.int64)
    counts = np.bincount(codes, weights=x, minlength=k).round()
    return x, uniques, codes, sizes, counts


def homogeneity_test(
    outcome,
    groups,
    *,
    method: str = "auto",
    n_permutations: int = 9999,
    random_state=None,
    max_tables: int = MAX_EXACT_TABLES,
) -> HomogeneityTestResult:
    """Pearson's chi-squared test that k groups share one rate (0/1 outcomes).

    The question "is any group treated differently?" for a rate: the null hypothesis is that
    the outcome does not depend on the group.

    Parameters
    ----------
    outcome : array_like of {0, 1}, shape (n,)
        One 0/1 outcome (or boolean) per row.
    groups : array_like, shape (n,)
        The group of each row (mutually comparable, non-missing labels); at least two groups.
        Every group given takes part: leave out groups too small to report before calling.
    method : {"auto", "exact", "asymptotic", "monte_carlo"}, default "auto"
        ``"exact"``: the permutation distribution of ``X^2`` given the table's margins
        (multivariate hypergeometric), enumerated; ``"asymptotic"``: chi-squared with k - 1
        degrees of freedom; ``"monte_carlo"``: ``n_permutations`` multivariate hypergeometric
        draws. ``"auto"``: exact when at most ``max_tables`` tables share the margins, else
        asymptotic when every expected count is at least 5 (Cochran's rule), else Monte Carlo.
        The choice depends only on the margins, not on the observed counts.
    n_permutations : int, default 9999
        Draws of the Monte Carlo method (smallest reportable p ``1 / (m + 1)``).
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed for the Monte Carlo draws.
    max_tables : int, default 200,000
        Cap on the tables the exact method enumerates (time and memory are linear in it:
        about 0.2 ms and ``16 k`` bytes per thousand tables). ``method="exact"`` above the cap
        raises ValueError.

    Returns
    -------
    HomogeneityTestResult

    Raises
    ------
    TypeError
        Non-numeric ``outcome``; incomparable labels; bad ``n_permutations``, ``max_tables``
        or ``random_state``.
    ValueError
        ``outcome`` not 0/1, empty, non-1-D or non-finite; ``groups`` of another length, with
        missing labels or fewer than two groups; unknown ``method``; ``method="exact"`` with
        more than ``max_tables`` tables.

    Notes
    -----
    ``X^2 = sum_g (x_g - n_g p)^2 / (n_g p (1 - p))`` with ``x_g`` ones among ``n_g`` rows and
    ``p`` the pooled rate is Pearson's statistic of the k x 2 table (SciPy's
    ``chi2_contingency(table, correction=False)``) [1]_. Each group's gap from the pooled rate
    is divided by its standard error, so a large group's small gap and a small group's large
    gap count alike when they are equally surprising; the range of raw rates
    (:func:`faircode.significance.max_gap_test`) instead gives most weight to the noisiest,
    smallest group. For k = 2, ``X^2`` is the squared studentised gap, and the exact test is
    the two-sided exact permutation test (:func:`faircode.significance.permutation_test`).

    The exact test orders tables by ``X^2`` (the Freeman-Halton test orders them by their
    probability instead) [2]_ [3]_ [5]_: it is the permutation test of ``X^2``, computed by
    enumeration rather than sampling. Enumerating is practical only for small tables: the
    number of tables with given margins grows like ``n^(k - 1)``; it is counted first by a
    convolution over the groups (``n_tables``). The asymptotic approximation is trusted when
    every expected count is at least 5 [4]_.

    References
    ----------
    .. [1] Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed. Wiley, sec. 3.2 and 3.5.
    .. [2] Freeman, G. H. and Halton, J. H. (1951). Note on an exact treatment of contingency,
       goodness of fit and other problems of significance. *Biometrika* 38, 141-149.
    .. [3] Mehta, C. R. and Patel, N. R. (1983). A network algorithm for performing Fisher's
       exact test in r x c contingency tables. *JASA* 78, 427-434.
    .. [4] Cochran, W. G. (1954). Some methods for strengthening the common chi-squared tests.
       *Biometrics* 10, 417-451.
    .. [5] Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero.
       *Statistical Applications in Genetics and Molecular Biology* 9(1), Article 39.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.group_tests import homogeneity_test
    >>> groups = np.repeat(["a", "b", "c"], [300, 200, 40])
    >>> y = np.r_[np.ones(60), np.zeros(240), np.ones(50), np.zeros(150), np.ones(16), np.zeros(24)]
    >>> res = homogeneity_test(y, groups)
    >>> res.method, res.dof, round(res.statistic, 2), res.format_p_value()
    ('exact', 2, 8.39, 'p = 0.015')
    """
    x, uniques, codes, sizes, counts = _k_by_2(outcome, groups)
    method = _check_choice(method, "method", _HOMOGENEITY_METHODS)
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    max_tables = _check_max_tables(max_tables)
    rng = _as_rng(random_state)  # validated even when the method draws nothing
    k = uniques.size
    n = int(sizes.sum())
    ones = int(counts.sum())
    p = ones / n
    expected = np.concatenate([sizes * p, sizes * (1.0 - p)])
    min_expected = float(expected.min())
    statistic = float(_chi2_of_counts(counts, sizes, ones))
    n_tables = _count_tables(sizes, ones)
    if method == "exact" and n_tables > max_tables:
        raise ValueError(f"`method='exact'`: {n_tables:.3g} tables share these margins, more than "
                         f"`max_tables` ({max_tables:,}); use 'auto', 'asymptotic' or 'monte_carlo'")
    if method == "auto":
        if n_tables <= max_tables:
            method = "exact"
        elif min_expected >= _MIN_EXPECTED:
            method = "asymptotic"
        else:
            method = "monte_carlo"
    describe = dict(groups=tuple(uniques.tolist()), sizes=tuple(int(s) for s in sizes),
                    rates=tuple(float(c / s) for c, s in zip(counts, sizes)), min_expected=min_expected,
                    n_tables=n_tables)
    if method == "exact":
        tables, log_p = _enumerate_tables(sizes, ones)
        pv = _tail(_chi2_of_counts(tables, sizes, ones), log_p, statistic, statistic)
        return HomogeneityTestResult(statistic, k - 1, pv, "exact", None, 0.0, False, **describe)
    if method == "asymptotic":
        from scipy.stats import chi2

        pv = float(chi2.sf(statistic, k - 1)) if statistic > 0 else 1.0
        return HomogeneityTestResult(statistic, k - 1, pv, "asymptotic", None, 0.0, False, **describe)
    # Groups in order of size: the draws do not depend on the groups' names.
    order = np.argsort(sizes, kind="stable")
    draws = _hypergeometric_draws(sizes[order], ones, n_permutations, rng)
    null = _chi2_of_counts(draws, sizes[order].astype(np.float64), ones)
    b = int(np.count_nonzero(null >= statistic - _TIE_RTOL * max(statistic, 1.0)))
    return HomogeneityTestResult(statistic, k - 1, (b + 1) / (n_permutations + 1), "monte_carlo",
                                 n_permutations, 1.0 / (n_permutations + 1), b == 0, **describe)


# --------------------------------------------------------------------------- maxT


def _pair_index(k: int) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(k, 1)
    return i, j


def _studentised(means: np.ndarray, sizes: np.ndarray, s2: float) -> np.ndarray:
    """Signed ``(mean_i - mean_j) / sqrt(s2 (1/n_i + 1/n_j))`` for every pair i < j, shape (..., pairs)."""
    i, j = _pair_index(sizes.size)
    se = np.sqrt(s2 * (1.0 / sizes[i] + 1.0 / sizes[j]))
    return (means[..., i] - means[..., j]) / se


def _max_abs_t_null(x: np.ndarray, sizes: np.ndarray, s2: float, n_permutations: int, rng) -> np.ndarray:
    """Largest |t| of each random permutation of non-0/1 outcomes ``x`` into groups of ``sizes``."""
    pooled = np.sort(x)
    starts = np.concatenate([[0], np.cumsum(sizes.astype(np.int64))[:-1]])
    null = np.empty(n_permutations)
    rows = _batch_rows(None, x.size)
    for start in range(0, n_permutations, rows):
        stop = min(start + rows, n_permutations)
        shuffled = rng.permuted(np.broadcast_to(pooled, (stop - start, pooled.size)), axis=1)
        means = np.add.reduceat(shuffled, starts, axis=1) / sizes
        null[start:stop] = np.abs(_studentised(means, sizes, s2)).max(axis=-1)
    return null


def max_t_test(
    outcome,
    groups,
    *,
    method: str = "auto",
    n_permutations: int = 9999,
    random_state=None,
    max_tables: int = MAX_EXACT_TABLES,
) -> MaxTTestResult:
    """Studentised maximum (maxT) permutation test over every pair of k groups.

    Parameters
    ----------
    outcome : array_like, shape (n,)
        One outcome per row: numbers, 0/1 or booleans; finite.
    groups : array_like, shape (n,)
        The group of each row (mutually comparable, non-missing labels); at least two groups.
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        ``"exact"`` (0/1 outcomes only) enumerates every k x 2 table with the observed margins
        with its multivariate hypergeometric probability; ``"auto"`` uses it when there are at
        most ``max_tables`` of them, else Monte Carlo.
    n_permutations : int, default 9999
        Monte Carlo relabellings.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed for the Monte Carlo draws.
    max_tables : int, default 200,000
        Cap on the enumeration (see :func:`homogeneity_test`).

    Returns
    -------
    MaxTTestResult
        The statistic, its p-value, the pair that attains it and every pair's adjusted p-value.

    Raises
    ------
    TypeError, ValueError
        As :func:`homogeneity_test`; ``method="exact"`` with non-0/1 outcomes.

    Notes
    -----
    ``T = max_{i<j} |mean_i - mean_j| / sqrt(s2 (1/n_i + 1/n_j))``, with ``s2`` the variance of
    all rows pooled (``p (1 - p)`` for 0/1 outcomes), which relabelling leaves unchanged. Each
    pair's gap is measured in its own standard errors, so the maximum is not dominated by the
    noisiest pair, as the raw range is. The null distribution of the maximum under random
    relabelling gives the p-value, which accounts for having picked the largest, and the
    single-step adjusted p-value of every pair (the probability that the null maximum reaches
    that pair's ``|t|``), after Westfall and Young's maxT procedure [1]_.

    **Weak control only.** The maxT adjusted p-values control the family-wise error rate over
    the pairs in the weak sense: under the complete null that every group has the same rate.
    Strong control (any true null pair, whatever the other groups do) needs subset pivotality,
    which fails here: the standard errors use the rate pooled over all groups and relabelling
    shuffles rows across all groups, so when some groups truly differ the null distribution of
    the maximum is not that of the true-null pairs, and an equal pair can get too small a p
    [3]_. For example, with two groups of 40 at rate 0.5 and two of 2,000 at 0.05, the two
    equal small groups were called different at 0.05 in about a quarter of simulated runs.
    Quote ``p_value`` as an omnibus test (beside :func:`homogeneity_test`); to say which pairs
    differ, use :func:`faircode.significance.pairwise_tests` (each pair's own exact test,
    Holm-adjusted). For 0/1 outcomes each
    relabelling is a multivariate hypergeometric vector of ones per group, enumerated or drawn;
    for other outcomes, a random permutation of the pooled rows. When every row has the same
    outcome, ``s2 = 0`` and ``T`` is 0 with p-value 1.

    References
    ----------
    .. [1] Westfall, P. H. and Young, S. S. (1993). *Resampling-Based Multiple Testing:
       Examples and Methods for p-Value Adjustment*. Wiley, sec. 2.6 and ch. 4.
    .. [2] Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero.
       *Statistical Applications in Genetics and Molecular Biology* 9(1), Article 39.
    .. [3] Petrondas, D. A. and Gabriel, K. R. (1983). Multiple comparisons by rerandomization
       tests. *Journal of the American Statistical Association* 78(384), 949-957.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.group_tests import max_t_test
    >>> groups = np.repeat(["a", "b", "c"], [300, 200, 40])
    >>> y = np.r_[np.ones(60), np.zeros(240), np.ones(50), np.zeros(150), np.ones(16), np.zeros(24)]
    >>> res = max_t_test(y, groups, random_state=0)
    >>> res.pair, res.method
    (('a', 'c'), 'exact')
    """
    x = _as_sample(outcome, "outcome")
    uniques, codes = _as_group_labels(groups, x.size)
    method = _check_choice(method, "method", _PERMUTATION_METHODS)
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    max_tables = _check_max_tables(max_tables)
    rng = _as_rng(random_state)
    binary = _is_binary(x)
    if method == "exact" and not binary:
        raise ValueError("`method='exact'` needs 0/1 `outcome`; use 'auto' or 'monte_carlo' for other outcomes")
    k = uniques.size
    sizes = np.bincount(codes, minlength=k).astype(np.int64)
    sums = np.bincount(codes, weights=x, minlength=k)
    means = sums / sizes
    s2 = float(x.var())
    labels = uniques.tolist()
    i_idx, j_idx = _pair_index(k)
    describe = dict(groups=tuple(labels), sizes=tuple(int(s) for s in sizes),
                    means=tuple(float(m) for m in means))
    if s2 <= 0.0:
        pairs = tuple((labels[i], labels[j], 0.0, 1.0) for i, j in zip(i_idx, j_idx))
        return MaxTTestResult(0.0, 1.0, "exact", None, 0.0, False, pair=(labels[0], labels[1]),
                              pairs_adjusted=pairs, **describe)
    t = _studentised(means, sizes.astype(np.float64), s2)
    best = int(np.argmax(np.abs(t)))
    statistic = float(abs(t[best]))
    pair = (labels[i_idx[best]], labels[j_idx[best]])
    ones = int(round(float(sums.sum()))) if binary else 0
    if binary and method != "monte_carlo":
        n_tables = _count_tables(sizes, ones)
        if method == "exact" and n_tables > max_tables:
            raise ValueError(f"`method='exact'`: {n_tables:.3g} tables share these margins, more than "
                             f"`max_tables` ({max_tables:,}); use 'auto' or 'monte_carlo'")
        if n_tables <= max_tables:
            tables, log_p = _enumerate_tables(sizes, ones)
            null = np.abs(_studentised(tables / sizes, sizes.astype(np.float64), s2)).max(axis=-1)
            order = np.argsort(null)
            null_sorted = null[order]
            # Upper tail mass at each sorted position, summed from the top (exact, in linear space).
            prob = np.exp(log_p[order])
            upper = np.cumsum(prob[::-1])[::-1]

            def adjusted(value: float) -> float:
                pos = np.searchsorted(null_sorted, value - _TIE_RTOL * max(value, 1.0), side="left")
                return float(min(1.0, upper[pos])) if pos < upper.size else 0.0

            pairs = tuple((labels[i], labels[j], float(tv), adjusted(abs(tv))) for i, j, tv in zip(i_idx, j_idx, t))
            return MaxTTestResult(statistic, adjusted(statistic), "exact", None, 0.0, False, pair=pair,
                                  pairs_adjusted=pairs, **describe)
    order = np.argsort(sizes, kind="stable")
    sorted_sizes = sizes[order]
    if binary:
        draws = _hypergeometric_draws(sorted_sizes, ones, n_permutations, rng)
        null = np.abs(_studentised(draws / sorted_sizes, sorted_sizes.astype(np.float64), s2)).max(axis=-1)
    else:
        null = _max_abs_t_null(x, sorted_sizes.astype(np.float64), s2, n_permutations, rng)
    null_sorted = np.sort(null)
    m = n_permutations

    def mc(value: float) -> tuple[float, int]:
        b = m - int(np.searchsorted(null_sorted, value - _TIE_RTOL * max(value, 1.0), side="left"))
        return (b + 1) / (m + 1), b

    p, b = mc(statistic)
    pairs = tuple((labels[i], labels[j], float(tv), mc(abs(tv))[0]) for i, j, tv in zip(i_idx, j_idx, t))
    return MaxTTestResult(statistic, p, "monte_carlo", m, 1.0 / (m + 1), b == 0, pair=pair,
                          pairs_adjusted=pairs, **describe)


# --------------------------------------------------------------------------- strata


@dataclass(frozen=True)
class _Strata:
    """Per stratum with both groups present: rows of group 1 (``n1``) and 0 (``n0``), ones in
    group 1 (``a``) and in all (``m1``); and the rows of ``x``/``g`` kept, with stratum codes."""

    n1: np.ndarray
    n0: np.ndarray
    a: np.ndarray
    m1: np.ndarray
    n_dropped: int
    x: np.ndarray
    g: np.ndarray
    codes: np.ndarray


def _as_strata(outcome, group, strata, *, binary_outcome: bool) -> _Strata:
    x = _as_binary_outcome(outcome) if binary_outcome else _as_sample(outcome, "outcome")
    g = _as_sample(group, "group")
    if g.size != x.size:
        raise ValueError(f"`group` must have one value per row of `outcome` ({x.size}); got {g.size}")
    if not _is_binary(g):
        bad = g[(g != 0.0) & (g != 1.0)][0]
        raise ValueError(f"`group` must be 0/1 (1 = the group of interest) or boolean; found {bad:g}")
    labels = np.asarray(strata)
    if labels.ndim != 1 or labels.size != x.size:
        raise ValueError(f"`strata` must hold one label per row of `outcome` ({x.size}); got shape {labels.shape}")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError("`strata` must not contain NaN labels")
    if labels.dtype.kind == "O" and any(_is_missing(v) or (isinstance(v, float) and math.isnan(v)) for v in labels):
        raise ValueError("`strata` must not contain missing labels (None/NA/NaN)")
    try:
        _, codes = np.unique(labels, return_inverse=True)
    except TypeError as exc:
        raise TypeError("`strata` labels must be mutually comparable (e.g. all str or all int)") from exc
    codes = codes.ravel()
    s = int(codes.max()) + 1
    n1 = np.bincount(codes, weights=g, minlength=s).round()
    n_all = np.bincount(codes, minlength=s).astype(np.float64)
    n0 = n_all - n1
    keep = (n1 > 0) & (n0 > 0)
    if not keep.any():
        raise ValueError("`group` must have both 0 and 1 in at least one stratum of `strata`; no stratum "
                         "compares the two groups")
    rows = keep[codes]
    remap = np.cumsum(keep) - 1
    x, g, codes = x[rows], g[rows], remap[codes[rows]]
    s_kept = int(keep.sum())
    a = np.bincount(codes, weights=x * g, minlength=s_kept)
    m1 = np.bincount(codes, weights=x, minlength=s_kept)
    return _Strata(n1[keep], n0[keep], a, m1, int((~keep).sum()), x, g, codes)


def cmh_test(outcome, group, strata, *, confidence_level: float = 0.95, correction: bool = False) -> CMHTestResult:
    """Cochran-Mantel-Haenszel test of no association between group and outcome within strata.

    Parameters
    ----------
    outcome : array_like of {0, 1}, shape (n,)
        One 0/1 outcome per row.
    group : array_like of {0, 1}, shape (n,)
        1 for the group of interest (e.g. the disadvantaged group), 0 for the other.
    strata : array_like, shape (n,)
        Each row's stratum (mutually comparable, non-missing labels): score deciles,
        departments. Strata with only one of the groups carry no comparison and are dropped
        (counted in ``n_strata_dropped``).
    confidence_level : float, default 0.95
        Of the odds ratio's interval.
    correction : bool, default False
        Subtract 1/2 from ``|sum_s (a_s - E a_s)|`` before squaring (continuity correction).

    Returns
    -------
    CMHTestResult

    Raises
    ------
    TypeError
        Non-numeric ``outcome`` or ``group``; incomparable ``strata`` labels.
    ValueError
        ``outcome`` or ``group`` not 0/1; lengths that differ; missing stratum labels; no
        stratum with both groups; ``confidence_level`` outside (0, 1).

    Notes
    -----
    In stratum ``s``, with ``a_s`` ones among the ``n_1s`` rows of group 1, ``m_1s`` ones
    among all ``n_s`` rows, the statistic is ``(sum_s a_s - E)^2 / V`` with ``E = sum_s n_1s
    m_1s / n_s`` and ``V = sum_s n_1s n_0s m_1s m_0s / (n_s^2 (n_s - 1))``, chi-squared with
    1 dof under the null [1]_ [2]_. It has power against a common direction of association
    across strata, so it can find a small consistent difference that no single stratum shows
    [2]_. The Mantel-Haenszel odds ratio is ``sum_s a_s d_s / n_s / sum_s b_s c_s / n_s``
    [1]_; its interval uses the Robins-Breslow-Greenland variance of the log odds ratio,
    valid both for many sparse strata and for few large ones [3]_. ``risk_difference`` is the
    Mantel-Haenszel weighted difference of rates (the statistic of
    :func:`stratified_permutation_test`). Whether the odds ratio is the same in every stratum is
    :func:`breslow_day_test`.

    References
    ----------
    .. [1] Mantel, N. and Haenszel, W. (1959). Statistical aspects of the analysis of data from
       retrospective studies of disease. *JNCI* 22, 719-748.
    .. [2] Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed. Wiley, sec. 6.4.
    .. [3] Robins, J., Breslow, N. and Greenland, S. (1986). Estimators of the Mantel-Haenszel
       variance consistent in both sparse data and large-strata limiting models. *Biometrics*
       42, 311-323.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.group_tests import cmh_test
    >>> strata = np.repeat([0, 1], 100)
    >>> group = np.tile(np.repeat([1, 0], 50), 2)
    >>> y = np.r_[np.ones(30), np.zeros(20), np.ones(25), np.zeros(25), np.ones(10), np.zeros(40), np.ones(6), np.zeros(44)]
    >>> res = cmh_test(y, group, strata)
    >>> res.n_strata, round(res.odds_ratio, 2)
    (2, 1.61)
    """
    st = _as_strata(outcome, group, strata, binary_outcome=True)
    confidence_level = _check_open_unit(confidence_level, "confidence_level")
    if not isinstance(correction, (bool, np.bool_)):
        raise TypeError(f"`correction` must be True or False; got {correction!r}")
    from scipy.stats import chi2, norm

    n1, n0, a, m1 = st.n1, st.n0, st.a, st.m1
    n = n1 + n0
    b, c = n1 - a, m1 - a
    d = n0 - c
    m0 = n - m1
    expected = n1 * m1 / n
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = float(np.sum(np.where(n > 1, n1 * n0 * m1 * m0 / (n**2 * (n - 1)), 0.0)))
        deviation = abs(float(np.sum(a - expected)))
        if correction:
            deviation = max(deviation - 0.5, 0.0)
        statistic = deviation**2 / variance if variance > 0 else 0.0
        p_value = float(chi2.sf(statistic, 1)) if variance > 0 else 1.0
        r, s = float(np.sum(a * d / n)), float(np.sum(b * c / n))
        odds_ratio = r / s if s > 0 else (math.inf if r > 0 else math.nan)
        pp, qq = (a + d) / n, (b + c) / n
        var_log = (np.sum(pp * a * d / n) / (2 * r**2) + np.sum(pp * b * c / n + qq * a * d / n) / (2 * r * s)
                   + np.sum(qq * b * c / n) / (2 * s**2))
    if r > 0 and s > 0:
        half = float(norm.ppf(0.5 + confidence_level / 2)) * math.sqrt(float(var_log))
        ci_low, ci_high = math.exp(math.log(odds_ratio) - half), math.exp(math.log(odds_ratio) + half)
    else:
        ci_low = ci_high = math.nan
    w = n1 * n0 / n
    risk_difference = float(np.sum(w * (a / n1 - c / n0)) / np.sum(w))
    return CMHTestResult(statistic, p_value, odds_ratio, ci_low, ci_high, confidence_level, risk_difference,
                         int(n.size), st.n_dropped, bool(correction))


def breslow_day_test(outcome, group, strata, *, tarone: bool = True) -> BreslowDayResult:
    """Breslow-Day test that the odds ratio is the same in every stratum.

    Parameters
    ----------
    outcome, group, strata
        As :func:`cmh_test`.
    tarone : bool, default True
        Subtract Tarone's correction, which makes the statistic chi-squared when the
        Mantel-Haenszel estimate is used (the uncorrected statistic is not).

    Returns
    -------
    BreslowDayResult

    Raises
    ------
    TypeError, ValueError
        As :func:`cmh_test`.

    Notes
    -----
    Under a common odds ratio ``psi`` (the Mantel-Haenszel estimate), each stratum's expected
    count ``A_s`` of ones in group 1 solves ``A (n_0s - m_1s + A) = psi (n_1s - A)(m_1s - A)``
    within the table's bounds, with variance ``1 / (1/A + 1/(n_1s - A) + 1/(m_1s - A) +
    1/(n_0s - m_1s + A))``. The statistic is ``sum_s (a_s - A_s)^2 / var_s`` [1]_, minus
    ``(sum_s a_s - sum_s A_s)^2 / sum_s var_s`` with Tarone's correction [2]_, on ``S - 1`` dof
    (statsmodels' ``StratifiedTable.test_equal_odds``). It needs large strata; a small p says
    the strata's odds ratios differ and one common odds ratio summarises them poorly.

    References
    ----------
    .. [1] Breslow, N. E. and Day, N. E. (1980). *Statistical Methods in Cancer Research, Vol. 1:
       The Analysis of Case-Control Studies*. IARC, sec. 4.4.
    .. [2] Tarone, R. E. (1985). On heterogeneity tests based on efficient scores.
       *Biometrika* 72, 91-95.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.group_tests import breslow_day_test
    >>> strata = np.repeat([0, 1], 100)
    >>> group = np.tile(np.repeat([1, 0], 50), 2)
    >>> y = np.r_[np.ones(30), np.zeros(20), np.ones(25), np.zeros(25), np.ones(10), np.zeros(40), np.ones(6), np.zeros(44)]
    >>> res = breslow_day_test(y, group, strata)
    >>> res.dof, round(res.p_value, 2)
    (1, 0.77)
    """
    st = _as_strata(outcome, group, strata, binary_outcome=True)
    if not isinstance(tarone, (bool, np.bool_)):
        raise TypeError(f"`tarone` must be True or False; got {tarone!r}")
    from scipy.stats import chi2

    n1, n0, a, m1 = st.n1, st.n0, st.a, st.m1
    n = n1 + n0
    c = m1 - a
    r, s = float(np.sum(a * (n0 - c) / n)), float(np.sum((n1 - a) * c / n))
    if not (r > 0 and s > 0):
        raise ValueError("`outcome`: the Mantel-Haenszel odds ratio is 0 or infinite (no discordant pairs on "
                         "one side), so the Breslow-Day test is undefined")
    psi = r / s
    quad = 1.0 - psi
    lin = psi * (n1 + m1) + (n0 - m1)
    const = -psi * n1 * m1
    with np.errstate(invalid="ignore", divide="ignore"):
        if abs(quad) < 1e-12:
            fitted = -const / lin
        else:
            fitted = (-lin + np.sqrt(lin**2 - 4 * quad * const)) / (2 * quad)
        var = 1.0 / (1.0 / fitted + 1.0 / (n1 - fitted) + 1.0 / (m1 - fitted) + 1.0 / (n0 - m1 + fitted))
    statistic = float(np.sum((a - fitted) ** 2 / var))
    if tarone:
        statistic -= float(np.sum(a - fitted)) ** 2 / float(np.sum(var))
    dof = int(n.size) - 1
    p_value = float(chi2.sf(statistic, dof)) if dof > 0 else 1.0
    return BreslowDayResult(statistic, dof, p_value, bool(tarone), int(n.size), st.n_dropped)


def _hypergeometric_pmf(n1: int, n0: int, m1: int) -> tuple[int, np.ndarray]:
    """(lowest value, pmf over the support) of the ones among ``n1`` rows drawn from ``n1 + n0``
    rows with ``m1`` ones."""
    low, high = max(0, m1 - n0), min(n1, m1)
    k = np.arange(low, high + 1, dtype=np.float64)
    log_p = _log_choose(m1, k) + _log_choose(n1 + n0 - m1, n1 - k) - _log_choose(n1 + n0, np.array([n1]))[0]
    return low, np.exp(log_p)


def stratified_permutation_test(
    outcome,
    group,
    strata,
    *,
    method: str = "auto",
    n_permutations: int = 9999,
    alternative: str = "two-sided",
    random_state=None,
) -> StratifiedTestResult:
    """Permutation test of a gap between two groups within strata (group relabelled within each stratum).

    Parameters
    ----------
    outcome : array_like, shape (n,)
        One outcome per row: numbers, 0/1 or booleans; finite.
    group : array_like of {0, 1}, shape (n,)
        1 for the group of interest, 0 for the other.
    strata : array_like, shape (n,)
        Each row's stratum; strata with one group only are dropped (``n_strata_dropped``).
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        ``"exact"`` (0/1 outcomes only): the exact null distribution, a convolution of one
        hypergeometric distribution per stratum (Mantel's exact conditional test); its cost is
        about the product of the total support and the largest stratum's, small for any real
        audit. ``"auto"``: exact for 0/1 outcomes, Monte Carlo otherwise.
    n_permutations : int, default 9999
        Monte Carlo relabellings.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"greater"``: group 1's outcome is higher within strata.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed for the Monte Carlo draws.

    Returns
    -------
    StratifiedTestResult

    Raises
    ------
    TypeError, ValueError
        As :func:`cmh_test` (``outcome`` may be any finite numbers here); unknown ``method`` or
        ``alternative``; ``method="exact"`` with non-0/1 outcomes; bad ``n_permutations`` or
        ``random_state``.

    Notes
    -----
    The statistic is the Mantel-Haenszel weighted gap ``sum_s w_s (mean_1s - mean_0s) / sum_s
    w_s`` with ``w_s = n_1s n_0s / n_s``. Because ``w_s (mean_1s - mean_0s) = S_1s - n_1s T_s /
    n_s`` (``S_1s`` the sum of group 1's outcomes, ``T_s`` the stratum's total), it is an
    increasing function of ``sum_s S_1s``, the statistic of Mantel's test [1]_ [2]_. Each
    stratum keeps its group sizes and its outcomes; under the null, which rows of a stratum
    are group 1 is a uniformly random choice, independently across strata. For 0/1 outcomes
    ``S_1s`` is hypergeometric, so ``sum_s S_1s`` has the convolution of those laws, computed
    exactly (with ``alternative="two-sided"`` the tables whose ``|sum_s S_1s - E|`` is at
    least the observed). Otherwise the rows of each stratum are shuffled and the p-value is
    ``(b + 1) / (m + 1)``. For 0/1 outcomes the two-sided exact test is the exact version of
    :func:`cmh_test`.

    References
    ----------
    .. [1] Mantel, N. and Haenszel, W. (1959). Statistical aspects of the analysis of data from
       retrospective studies of disease. *JNCI* 22, 719-748.
    .. [2] Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed. Wiley, sec. 7.3.5 (exact
       conditional test for 2 x 2 x K tables).
    .. [3] Good, P. I. (2005). *Permutation, Parametric, and Bootstrap Tests of Hypotheses*,
       3rd ed. Springer, sec. 3.6 (stratified permutation tests).

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.group_tests import stratified_permutation_test
    >>> strata = np.repeat([0, 1], 100)
    >>> group = np.tile(np.repeat([1, 0], 50), 2)
    >>> y = np.r_[np.ones(30), np.zeros(20), np.ones(25), np.zeros(25), np.ones(10), np.zeros(40), np.ones(6), np.zeros(44)]
    >>> res = stratified_permutation_test(y, group, strata)
    >>> res.method, round(res.statistic, 3), round(res.p_value, 2)
    ('exact', 0.09, 0.2)
    """
    st = _as_strata(outcome, group, strata, binary_outcome=False)
    method = _check_choice(method, "method", _PERMUTATION_METHODS)
    alternative = _check_choice(alternative, "alternative", _ALTERNATIVES)
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    rng = _as_rng(random_state)
    binary = _is_binary(st.x)
    if method == "exact" and not binary:
        raise ValueError("`method='exact'` needs 0/1 `outcome`; use 'auto' or 'monte_carlo' for other outcomes")
    n1, n0 = st.n1, st.n0
    n = n1 + n0
    totals = np.bincount(st.codes, weights=st.x, minlength=n.size)
    sums1 = np.bincount(st.codes, weights=st.x * st.g, minlength=n.size)
    centre = float(np.sum(n1 * totals / n))  # E[sum_s S_1s] under the null
    weight = float(np.sum(n1 * n0 / n))
    observed = float(sums1.sum())
    statistic = (observed - centre) / weight
    scale = max(float(np.abs(st.x).max()), 1.0)
    tol = _TIE_RTOL * scale * max(abs(observed), 1.0)

    def extreme(values: np.ndarray) -> np.ndarray:
        if alternative == "greater":
            return values >= observed - tol
        if alternative == "less":
            return values <= observed + tol
        return np.abs(values - centre) >= abs(observed - centre) - tol

    common = dict(alternative=alternative, n_strata=int(n.size), n_strata_dropped=st.n_dropped)
    if binary and method != "monte_carlo":
        low, pmf = 0, np.ones(1)
        for n1s, n0s, m1s in zip(n1.astype(int), n0.astype(int), totals.round().astype(int)):
            lo, p_s = _hypergeometric_pmf(n1s, n0s, m1s)
            low, pmf = low + lo, np.convolve(pmf, p_s)
        support = np.arange(low, low + pmf.size, dtype=np.float64)
        p = float(min(1.0, pmf[extreme(support)].sum() / pmf.sum()))
        return StratifiedTestResult(statistic, p, "exact", None, 0.0, False, **common)
    null = np.zeros(n_permutations)
    if binary:
        for n1s, n0s, m1s in zip(n1.astype(np.int64), n0.astype(np.int64), totals.round().astype(np.int64)):
            null += rng.hypergeometric(m1s, n1s + n0s - m1s, n1s, size=n_permutations)
    else:
        order = np.argsort(st.codes, kind="stable")
        values = st.x[order]
        starts = np.concatenate([[0], np.cumsum(n.astype(np.int64))[:-1]])
        for s, (start, size, take) in enumerate(zip(starts, n.astype(np.int64), n1.astype(np.int64))):
            pool = np.sort(values[start:start + size])
            rows = _batch_rows(None, int(size))
            for b0 in range(0, n_permutations, rows):
                b1 = min(b0 + rows, n_permutations)
                shuffled = rng.permuted(np.broadcast_to(pool, (b1 - b0, pool.size)), axis=1)
                null[b0:b1] += shuffled[:, :take].sum(axis=1)
    b = int(np.count_nonzero(extreme(null)))
    return StratifiedTestResult(statistic, (b + 1) / (n_permutations + 1), "monte_carlo", n_permutations,
                                1.0 / (n_permutations + 1), b == 0, **common)
