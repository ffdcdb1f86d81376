"""Is any of k groups treated differently? :func:`homogeneity_test` and :func:`max_t_test`.

:func:`homogeneity_test` (Pearson's chi-squared test of one shared rate, asymptotic, exact or Monte Carlo) and :func:`max_t_test` (the
studentised maximum over pairs, Westfall and Young's maxT, which also names the pairs that
differ with family-wise error control). Both weigh each group's gap by its standard error, so
a large group's moderate gap counts for what it is worth; the range test
:func:`faircode.significance.max_gap_test` weighs raw gaps and spends its power on the
smallest, noisiest group.

Every p-value follows the conventions of :mod:`faircode.significance`: Monte Carlo p-values
are Phipson and Smyth's ``(b + 1) / (m + 1)`` with ``p_value_floor = 1 / (m + 1)``; exact and
asymptotic ones have floor 0; results print them with ``format_p_value()``.

The tests within strata are in :mod:`faircode.significance._strata`.

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
from faircode.significance._validation import (
    _as_binary_outcome,
    _as_group_labels,
    _as_rng,
    _as_sample,
    _batch_rows,
    _check_choice,
    _is_binary,
    _log_choose,
    _logsumexp,
    _rescaled,
    _TEST_METHODS,
    _TIE_RTOL,
)
from faircode.significance._results import _permutations_note, _phipson_smyth, _PValueResult, _RelabellingTestResult


#: Default cap on the tables an exact k x 2 test enumerates (see :func:`homogeneity_test`).
MAX_EXACT_TABLES = 200_000

_HOMOGENEITY_METHODS = ("auto", "exact", "asymptotic", "monte_carlo")

#: ``method="auto"`` trusts the chi-squared approximation only when every expected count is at
#: least this: stricter than Cochran's (1954) rule, which allows expected counts down to 1 when at
#: most about a fifth of them are below 5. Below it the Monte Carlo test, valid at any counts, runs.
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
        The smallest expected count of the table under one shared rate (``method="auto"`` uses
        the chi-squared approximation only when it is at least 5).
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
        return (f"HomogeneityTestResult(X2={self.statistic:.4g}, dof={self.dof}, {self.format_p_value()}, "
                f"method={self.method!r}, k={len(self.groups)}{_permutations_note(self.n_permutations)})")


@dataclass(frozen=True, repr=False)
class MaxTTestResult(_RelabellingTestResult):
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

    groups: tuple
    sizes: tuple
    means: tuple
    pair: tuple
    pairs_adjusted: tuple

    def __repr__(self) -> str:
        return (f"MaxTTestResult(T={self.statistic:.4g} ({self.pair[0]!r} vs {self.pair[1]!r}), "
                f"{self.format_p_value()}, method={self.method!r}, k={len(self.groups)}"
                f"{_permutations_note(self.n_permutations)})")


# --------------------------------------------------------------------------- k x 2 tables


def _check_max_tables(max_tables) -> int:
    return _check_positive_int(max_tables, "max_tables")


def _refuse_exact(n_tables: float, max_tables: int, instead: str):
    """``method='exact'`` past the cap on the tables it enumerates; ``instead``: the methods that remain."""
    raise ValueError(f"`method='exact'`: {n_tables:.3g} tables share these margins, more than "
                     f"`max_tables` ({max_tables:,}); use {instead}")


def _at_least(null: np.ndarray, observed: float, scale: float) -> np.ndarray:
    """Where a null statistic is at least the observed: ties within ``_TIE_RTOL`` of the scale count."""
    return null >= observed - _TIE_RTOL * max(scale, 1.0)


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
    extreme = _at_least(null, observed, scale)
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
        asymptotic when every expected count is at least 5 (stricter than Cochran's rule; see
        Notes), else Monte Carlo.
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
    convolution over the groups (``n_tables``). Past the cap, ``"auto"`` trusts the asymptotic
    approximation only when every expected count is at least 5: stricter than Cochran's rule
    [4]_, which allows expected counts down to 1 when no more than about one in five is below 5.
    Where the stricter condition fails, the Monte Carlo test runs instead: valid at any counts,
    only slower, so the stricter condition costs no validity.

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
    >>> from faircode.significance import homogeneity_test
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
        _refuse_exact(n_tables, max_tables, "'auto', 'asymptotic' or 'monte_carlo'")
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
    mc = _phipson_smyth(int(np.count_nonzero(_at_least(null, statistic, statistic))), n_permutations)
    return HomogeneityTestResult(statistic, k - 1, mc.p_value, "monte_carlo", n_permutations, mc.p_value_floor,
                                 mc.is_monte_carlo_minimum, **describe)


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


@dataclass(frozen=True)
class _MaxTNull:
    """The null distribution of the largest ``|t|``, sorted (``values``): enumerated, with the
    probability of each value and all above it (``upper``), or drawn (``upper`` None)."""

    values: np.ndarray
    upper: np.ndarray | None = None

    def _first_at_least(self, value: float) -> int:
        return int(np.searchsorted(self.values, value - _TIE_RTOL * max(value, 1.0), side="left"))

    def drawn_at_least(self, value: float) -> int:
        """How many draws reach ``value`` (ties within ``_TIE_RTOL`` count)."""
        return self.values.size - self._first_at_least(value)

    def p_value(self, value: float) -> float:
        """The null probability that the largest ``|t|`` reaches ``value``: exact, or ``(b + 1) / (m + 1)``."""
        if self.upper is None:
            return _phipson_smyth(self.drawn_at_least(value), self.values.size).p_value
        pos = self._first_at_least(value)
        return float(min(1.0, self.upper[pos])) if pos < self.upper.size else 0.0


def _enumerated_max_t_null(sizes: np.ndarray, ones: int, s2: float, method: str, max_tables: int) -> _MaxTNull | None:
    """The exact null of the largest ``|t|`` of 0/1 outcomes over every k x 2 table with the observed
    margins; None past ``max_tables`` tables (``method="exact"`` there raises)."""
    n_tables = _count_tables(sizes, ones)
    if method == "exact" and n_tables > max_tables:
        _refuse_exact(n_tables, max_tables, "'auto' or 'monte_carlo'")
    if n_tables > max_tables:
        return None
    tables, log_p = _enumerate_tables(sizes, ones)
    null = np.abs(_studentised(tables / sizes, sizes.astype(np.float64), s2)).max(axis=-1)
    order = np.argsort(null)
    # Upper tail mass at each sorted position, summed from the top (exact, in linear space).
    prob = np.exp(log_p[order])
    return _MaxTNull(null[order], np.cumsum(prob[::-1])[::-1])


def _drawn_max_t_null(x: np.ndarray, sizes: np.ndarray, ones: int, s2: float, binary: bool, n_permutations: int,
                      rng) -> _MaxTNull:
    """The largest ``|t|`` of ``n_permutations`` random relabellings: multivariate hypergeometric
    counts for 0/1 outcomes, permutations of the pooled rows otherwise."""
    # Groups in order of size: the draws do not depend on the groups' names.
    sorted_sizes = sizes[np.argsort(sizes, kind="stable")]
    if binary:
        draws = _hypergeometric_draws(sorted_sizes, ones, n_permutations, rng)
        null = np.abs(_studentised(draws / sorted_sizes, sorted_sizes.astype(np.float64), s2)).max(axis=-1)
    else:
        null = _max_abs_t_null(x, sorted_sizes.astype(np.float64), s2, n_permutations, rng)
    return _MaxTNull(np.sort(null))


def _max_t_result(t: np.ndarray, labels: list, null: _MaxTNull, describe: dict) -> MaxTTestResult:
    """The pair with the largest ``|t|``, every pair's adjusted p-value and the test's, from the null."""
    i_idx, j_idx = _pair_index(len(labels))
    best = int(np.argmax(np.abs(t)))
    statistic = float(abs(t[best]))
    named = dict(pair=(labels[i_idx[best]], labels[j_idx[best]]),
                 pairs_adjusted=tuple((labels[i], labels[j], float(tv), null.p_value(abs(tv)))
                                      for i, j, tv in zip(i_idx, j_idx, t)),
                 **describe)
    if null.upper is not None:
        return MaxTTestResult._exact(statistic, null.p_value(statistic), **named)
    return MaxTTestResult._monte_carlo(statistic, null.drawn_at_least(statistic), null.values.size, **named)


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
    >>> from faircode.significance import max_t_test
    >>> groups = np.repeat(["a", "b", "c"], [300, 200, 40])
    >>> y = np.r_[np.ones(60), np.zeros(240), np.ones(50), np.zeros(150), np.ones(16), np.zeros(24)]
    >>> res = max_t_test(y, groups, random_state=0)
    >>> res.pair, res.method
    (('a', 'c'), 'exact')
    """
    x = _as_sample(outcome, "outcome")
    uniques, codes = _as_group_labels(groups, x.size)
    method = _check_choice(method, "method", _TEST_METHODS)
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    max_tables = _check_max_tables(max_tables)
    rng = _as_rng(random_state)
    binary = _is_binary(x)
    if method == "exact" and not binary:
        raise ValueError("`method='exact'` needs 0/1 `outcome`; use 'auto' or 'monte_carlo' for other outcomes")
    (x,), unit = _rescaled((x,), "`outcome`")  # T does not depend on the unit; the means follow it
    sizes = np.bincount(codes, minlength=uniques.size).astype(np.int64)
    sums = np.bincount(codes, weights=x, minlength=uniques.size)
    means = sums / sizes
    s2 = float(x.var())
    labels = uniques.tolist()
    describe = dict(groups=tuple(labels), sizes=tuple(int(s) for s in sizes),
                    means=tuple(unit * float(m) for m in means))
    if s2 <= 0.0:  # every row has the same outcome: T is 0 with p-value 1
        pairs = tuple((labels[i], labels[j], 0.0, 1.0) for i, j in zip(*_pair_index(uniques.size)))
        return MaxTTestResult._exact(0.0, 1.0, pair=(labels[0], labels[1]), pairs_adjusted=pairs, **describe)
    t = _studentised(means, sizes.astype(np.float64), s2)  # signed, one per pair i < j
    ones = int(round(float(sums.sum()))) if binary else 0
    null = _enumerated_max_t_null(sizes, ones, s2, method, max_tables) if binary and method != "monte_carlo" else None
    if null is None:  # past the cap on tables, or not 0/1
        null = _drawn_max_t_null(x, sizes, ones, s2, binary, n_permutations, rng)
    return _max_t_result(t, labels, null, describe)
