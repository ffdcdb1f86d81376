"""Permutation tests for the gap in means between two groups.

:func:`permutation_test_result` and :func:`permutation_test` (one test) and
:func:`permutation_tests` (many tests in one call, a simulation study): exact for 0/1 outcomes
(the hypergeometric distribution of the positives landing in ``a``, in exact integer arithmetic
for ties), vectorised Monte Carlo otherwise, cluster-preserving when ``groups=`` names the units
that are exchangeable [1]_. A Monte Carlo p-value is ``(b + 1) / (m + 1)``, never 0 [2]_. The
null gaps come from :mod:`faircode.significance._subset_sums`; the power of the exact test is in
:mod:`faircode.significance._power`; the k-group tests in :mod:`faircode.significance._groups`.

References
----------
.. [1] Good, P. I. (2005). *Permutation, Parametric, and Bootstrap Tests of Hypotheses*,
   3rd ed. Springer.
.. [2] Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero:
   calculating exact p-values when permutations are randomly drawn. *Statistical Applications
   in Genetics and Molecular Biology* 9(1), Article 39.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from faircode.significance._validation import (
    _BATCH_ELEMENTS,
    _as_groups,
    _as_rng,
    _as_sample,
    _check_exact_allowed,
    _check_test_options,
    _is_binary,
    _hypergeom_mass,
    _log_hypergeom_pmf,
    _logsumexp,
    _rescaled,
    _seconds,
    _TIE_RTOL,
    _warn_long,
)
from faircode.significance._results import _phipson_smyth, PermutationTestResult
from faircode.significance._subset_sums import _MAX_KINDS, _SubsetSums, _TABLE_BYTES


# Supports of fewer values than this are summed whole (one vectorised call), longer ones tail by tail.
_WHOLE_SUPPORT = 2048


def _exact_binary_p_value(a: np.ndarray, b: np.ndarray, alternative: str) -> float:
    """Exact permutation p-value for 0/1 outcomes from the hypergeometric distribution.

    Under random relabelling the count X of positives landing in ``a`` is hypergeometric
    (population N, K positives, n_a draws), and the gap is linear and increasing in X:
    ``gap(X) = N / (n_a n_b) * (X - K n_a / N)``. So ``|gap(x)| >= |gap(x_obs)|`` is
    ``|x N - K n_a| >= |x_obs N - K n_a|``, decided in exact integer arithmetic (ties are exact).
    The extreme values form up to two intervals of X. Each term is Loader's (issue 47: a sum of
    log-gammas of 10^6 kept nine digits of a tail of 1e-51). A short support is summed whole, as
    a share of its total; a long one tail by tail from the inner end (:func:`_hypergeom_mass`),
    and when the extreme intervals hold the mode, p is one minus the mass of the others.
    """
    return _exact_count_p_value(int(round(float(a.sum()))), a.size, int(round(float(b.sum()))), b.size, alternative)


def _exact_count_p_value(x_obs: int, n_a: int, y_obs: int, n_b: int, alternative: str) -> float:
    """:func:`_exact_binary_p_value` from counts: ``x_obs`` ones among ``n_a`` rows, ``y_obs``
    among ``n_b`` (what a verdict or a report of ten million rows holds, not the rows)."""
    n = n_a + n_b
    k = x_obs + y_obs
    lo, hi = max(0, n_a - (n - k)), min(n_a, k)
    if alternative == "greater":
        extreme, rest = [(x_obs, hi)], [(lo, x_obs - 1)]
    elif alternative == "less":
        extreme, rest = [(lo, x_obs)], [(x_obs + 1, hi)]
    else:
        centre, dist = k * n_a, abs(x_obs * n - k * n_a)  # |x n - centre| >= dist, in integers
        below, above = (centre - dist) // n, -(-(centre + dist) // n)  # floor and ceiling
        extreme, rest = [(lo, below), (above, hi)], [(below + 1, above - 1)]
    if hi - lo < _WHOLE_SUPPORT:
        x = np.arange(lo, hi + 1)
        log_w = _log_hypergeom_pmf(x, k, n - k, n_a)
        chosen = np.zeros(x.size, dtype=bool)
        for first, last in extreme:
            chosen |= (x >= first) & (x <= last)
        return min(1.0, math.exp(_logsumexp(log_w[chosen]) - _logsumexp(log_w)))
    mode = min(hi, max(lo, (n_a + 1) * (k + 1) // (n + 2)))
    if any(first <= mode <= last for first, last in extreme):
        p = 1.0 - sum(_hypergeom_mass(max(first, lo), min(last, hi), mode, k, n - k, n_a) for first, last in rest)
    else:
        p = sum(_hypergeom_mass(max(first, lo), min(last, hi), mode, k, n - k, n_a) for first, last in extreme)
    return min(1.0, max(0.0, p))


class _NullSetup(NamedTuple):
    """What a Monte Carlo permutation test draws from, and how its draws become gaps."""

    weights: np.ndarray  # (units, k): the units (rows or clusters) a relabelling moves
    size: int  # units drawn into the smaller group
    observed: float  # the observed gap
    scale: float  # outcome scale for the tie tolerance
    to_gaps: object  # callable: subset sums (count, k) -> relabelled gaps (count,)


def _row_null_setup(a: np.ndarray, b: np.ndarray) -> _NullSetup:
    """Row-level relabelling: the smaller group's rows are a uniform subset of the pooled rows."""
    n_a, n_b = a.size, b.size
    n = n_a + n_b
    # Sorting makes the pool independent of which rows came from which group, so a swap of
    # `a` and `b` (or a reordering of rows) replays exactly the same relabellings.
    pooled = np.sort(np.concatenate([a, b]))
    center = pooled.mean()
    z = pooled - center  # centring keeps sums small, so rounding stays far below _TIE_RTOL
    # Only the smaller group is drawn: its centred sum T fixes the gap, gap = sign * T * N/(n_a n_b).
    select_a = n_a <= n_b
    scale = (1.0 if select_a else -1.0) * n / (n_a * n_b)
    observed = scale * float(((a if select_a else b) - center).sum())
    return _NullSetup(z[:, None], n_a if select_a else n_b, observed, float(np.abs(z).max()),
                      lambda sums: scale * sums[:, 0])


def _cluster_totals(x: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.bincount(codes).astype(np.float64)
    sums = np.bincount(codes, weights=x, minlength=sizes.size)
    return sums, sizes


def _grouped_null_setup(a: np.ndarray, b: np.ndarray, codes_a: np.ndarray, codes_b: np.ndarray) -> _NullSetup:
    """Cluster-level relabelling: whole clusters move between the groups."""
    n_a, n_b = a.size, b.size
    center = np.concatenate([a, b]).mean()
    sums_a, sizes_a = _cluster_totals(a - center, codes_a)
    sums_b, sizes_b = _cluster_totals(b - center, codes_b)
    sums = np.concatenate([sums_a, sums_b])
    sizes = np.concatenate([sizes_a, sizes_b])
    # Canonical cluster order (by centred sum, then size), for the same reason as the row sort.
    order = np.lexsort((sizes, sums))
    sums, sizes = sums[order], sizes[order]
    total_sum, total_size = float(sums.sum()), float(n_a + n_b)
    select_a = sums_a.size <= sums_b.size
    observed = float(sums_a.sum() / n_a - sums_b.sum() / n_b)

    def to_gaps(drawn: np.ndarray) -> np.ndarray:
        sel_sum, sel_size = drawn.T
        sel_mean = sel_sum / sel_size
        rest_mean = (total_sum - sel_sum) / (total_size - sel_size)
        return sel_mean - rest_mean if select_a else rest_mean - sel_mean

    scale = max(float(np.abs(a - center).max()), float(np.abs(b - center).max()))
    return _NullSetup(np.column_stack([sums, sizes]), min(sums_a.size, sums_b.size), observed, scale, to_gaps)


# Relabellings times units (rows or clusters) from which the subset sampler says up front how long
# it will take: about 3 to 9 ns each on a 2-core machine of 2026, so 15 to 40 seconds and up.
_LONG_WORK = 1 << 32
# From this many rows a test whose units are of few kinds draws their counts (see _kind_gaps) rather
# than random subsets; below it, the subsets, which the published numbers come from.
_KINDS_FROM_ROWS = 1 << 20


def _draw_null(setup: _NullSetup, n_permutations, rng, batch_size, faster: str) -> np.ndarray:
    """The gaps of ``n_permutations`` random relabellings, drawn as random subsets.

    Warns up front (naming ``faster``) when the work passes ``_LONG_WORK``, with the time of a
    relabelling drawn from a generator of its own (the test's draws are not touched).
    """
    gaps = np.empty(n_permutations)
    sampler = _SubsetSums(setup.weights, setup.size)
    if setup.weights.shape[0] * n_permutations >= _LONG_WORK:
        pilot = np.random.default_rng(0)
        seconds = _seconds(lambda: sampler.draw(pilot, 1)) * n_permutations
        _warn_long(f"the permutation test's {n_permutations:,} relabellings of {setup.weights.shape[0]:,} "
                   f"{'rows' if setup.weights.shape[1] == 1 else 'clusters'}", seconds, faster)
    rows = batch_size if batch_size is not None else sampler.batch_rows(_BATCH_ELEMENTS)
    for start in range(0, n_permutations, rows):
        stop = min(start + rows, n_permutations)
        gaps[start:stop] = setup.to_gaps(sampler.draw(rng, stop - start))
    return gaps


def _extreme_count(observed: float, gaps: np.ndarray, alternative: str, scale: float) -> int:
    """How many relabelled gaps are at least as extreme as the observed, ties (within _TIE_RTOL) counted."""
    tol = _TIE_RTOL * scale
    if alternative == "greater":
        extreme = gaps >= observed - tol
    elif alternative == "less":
        extreme = gaps <= observed + tol
    else:
        extreme = np.abs(gaps) >= abs(observed) - tol
    return int(np.count_nonzero(extreme))


def _monte_carlo_p_value(observed: float, gaps: np.ndarray, alternative: str, scale: float) -> float:
    """Phipson & Smyth's (b + 1) / (m + 1) over the relabelled ``gaps``."""
    return _phipson_smyth(_extreme_count(observed, gaps, alternative, scale), gaps.size).p_value


def permutation_test_result(
    a,
    b,
    *,
    n_permutations: int = 9999,
    alternative: str = "two-sided",
    method: str = "auto",
    groups=None,
    random_state=None,
    batch_size: int | None = None,
) -> PermutationTestResult:
    """Permutation test for a gap in means, with everything needed to report it.

    Tests whether ``mean(a) - mean(b)`` is larger in magnitude than random relabelling of rows
    (or of whole clusters) between the two groups would produce [1]_.

    Parameters
    ----------
    a : array_like, shape (n_a,)
        Outcomes of the disadvantaged group: numbers, 0/1 or booleans; finite, non-empty.
    b : array_like, shape (n_b,)
        Outcomes of the advantaged group, same rules.
    n_permutations : int, default 9999
        Random relabellings drawn by the Monte Carlo methods (ignored by the exact test);
        ``>= 1``. With ``m`` relabellings the smallest reportable p-value is ``1 / (m + 1)``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"two-sided"``: share of relabellings with ``|gap| >= |observed gap|``;
        ``"greater"``: with ``gap >= observed`` (alternative: ``mean(a) > mean(b)``);
        ``"less"``: with ``gap <= observed``. Ties count as extreme.
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        ``"exact"``: hypergeometric sum, only for 0/1 outcomes without ``groups``.
        ``"monte_carlo"``: random relabellings (grouped when ``groups`` is given).
        ``"auto"``: exact when both samples are 0/1 and ``groups`` is None, else Monte Carlo.
    groups : tuple (groups_a, groups_b), optional
        Cluster labels, ``groups_a`` of shape (n_a,) and ``groups_b`` of shape (n_b,) (any
        comparable, non-missing labels: household id, person id, week...). Rows with one label
        move between the groups together, so the test stays valid when rows within a cluster
        are not exchangeable. A label may not appear in both groups (a cluster that straddles
        the groups cannot be moved whole). The number of clusters in each group is held fixed;
        the number of rows may change from one relabelling to the next.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the Monte Carlo draws (unused by the exact test).
    batch_size : int, optional
        Relabellings evaluated per vectorised batch; memory is O(batch_size x min group size).
        Default: as many as fit in about 16 MiB of indices. The result does not depend on it.

    Returns
    -------
    PermutationTestResult
        ``statistic`` (observed gap), ``p_value``, ``method`` (``"exact"``, ``"monte_carlo"``,
        ``"grouped_monte_carlo"``), ``n_permutations``, ``p_value_floor``,
        ``is_monte_carlo_minimum`` and ``null_distribution``.

    Raises
    ------
    TypeError
        Non-numeric ``a``/``b``, non-integer ``n_permutations``/``batch_size``, malformed
        ``groups`` or ``random_state``.
    ValueError
        Empty, non-1-D or non-finite samples; ``n_permutations < 1``; unknown ``alternative``
        or ``method``; ``method="exact"`` on non-0/1 data or with ``groups``; labels of a
        cluster in both groups; outcomes spanning more than the largest float (1.8e308).

    Warns
    -----
    UserWarning
        Before a Monte Carlo test of random subsets whose rows (or clusters) times relabellings
        pass 2^32 (about 15 to 40 seconds on a 2-core machine of 2026): how long it will take,
        timed on one relabelling, and what is faster. Whether it warns depends on the sizes only.

    Notes
    -----
    **Exact test (0/1 outcomes).** With ``N = n_a + n_b`` rows of which ``K`` are positive, the
    number ``X`` of positives a random relabelling puts in ``a`` is hypergeometric, and the gap
    is ``N / (n_a n_b) * (X - K n_a / N)``, increasing in ``X``. The two-sided p-value is
    ``P(|X N - K n_a| >= |x_obs N - K n_a|)``, decided in integers (exact ties) and summed over
    the support (``O(min(n_a, n_b, K, N - K))`` terms) in log space, each term by Loader's
    saddle-point expansion [3]_ (R's ``dhyper``): relative error near 1e-14 at 10^6 rows and in
    tails of 1e-50 and below, where differences of ``gammaln`` lose nine digits. It equals the
    share of all ``C(N, n_a)`` relabellings that are as extreme, with no Monte Carlo error. It
    is not the two-sided p of Fisher's exact test as ``scipy.stats.fisher_exact`` and R's
    ``fisher.test`` give it, which orders tables by their probability, not by the gap; on small
    tables the two differ widely (0 of 5 against 3 of 20: 0.587 here, 1.0 there; 1 of 5 against 2
    of 20: 1.0 here, 0.504 there). One-sided, they are the same test.

    **Monte Carlo test.** Each relabelling draws the smaller group's rows without replacement
    from the pooled outcomes; a batch of relabelled gaps is one gather-and-sum over a
    ``(batch_size, min(n_a, n_b))`` index array. With ``b`` of ``m`` relabellings at least as
    extreme as the data (ties within a relative 1e-9 of the outcome scale count as extreme),
    the p-value is ``(b + 1) / (m + 1)`` [2]_: a valid p-value that is never 0. When ``b = 0``
    the result has ``is_monte_carlo_minimum=True`` and should be read and printed as
    "p = 1/(m + 1)" (:func:`format_p_value`). Relabellings are drawn independently (the same one
    can recur), so ``(b + 1) / (m + 1)`` is conservative; markedly so when there are few distinct
    relabellings (few clusters), where exact enumeration is better [2]_.

    **Large samples.** A relabelling costs O(rows): 9,999 of 10^7 rows take minutes (about 3 to 9
    ns a row and relabelling), so the test warns first (see Warns). From 2^20 rows, outcomes (or
    clusters) of at most 32 distinct kinds are relabelled as a multivariate hypergeometric count
    of each kind, at O(kinds) a relabelling: the same null distribution, in seconds. Outcomes near
    1e308 (or below 1e-77) are tested in a unit a power of two away, an exact change of unit.

    **Grouped test.** Whole clusters are relabelled: the groups keep their number of clusters
    and the statistic is still the row-level ``mean(a) - mean(b)``. This is valid when clusters
    (not rows) are exchangeable under the null [1]_. With few clusters there are few distinct
    relabellings and small p-values are impossible (2 + 2 clusters allow only 6).

    References
    ----------
    .. [1] Good, P. I. (2005). *Permutation, Parametric, and Bootstrap Tests of Hypotheses*,
       3rd ed. Springer.
    .. [2] Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero.
       *Statistical Applications in Genetics and Molecular Biology* 9(1), Article 39.
    .. [3] Loader, C. (2000). Fast and accurate computation of binomial probabilities.
       Technical report, Bell Labs.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import permutation_test_result
    >>> a = np.r_[np.ones(30), np.zeros(70)]     # selection rate 0.30
    >>> b = np.r_[np.ones(45), np.zeros(55)]     # selection rate 0.45
    >>> res = permutation_test_result(a, b)      # 0/1 outcomes: exact
    >>> res.method, round(res.statistic, 2), round(res.p_value, 4)
    ('exact', -0.15, 0.0405)
    >>> rng = np.random.default_rng(0)
    >>> res = permutation_test_result(rng.normal(0.5, 1, 80), rng.normal(0, 1, 90),
    ...                               n_permutations=2000, random_state=0)
    >>> res.method, res.n_permutations, res.p_value_floor == 1 / 2001
    ('monte_carlo', 2000, True)
    """
    a = _as_sample(a, "a")
    b = _as_sample(b, "b")
    n_permutations, alternative, method, batch_size = _check_test_options(
        n_permutations, alternative, method, batch_size
    )
    codes = _as_groups(groups, a.size, b.size)
    binary = _is_binary(a) and _is_binary(b)
    _check_exact_allowed(method, codes is not None, None if binary else "")
    (a, b), unit = _rescaled((a, b), "`a` and `b`")  # p does not depend on the unit; gaps are multiplied back
    statistic = unit * float(a.mean() - b.mean())

    if method != "monte_carlo" and codes is None and binary:
        p = _exact_binary_p_value(a, b, alternative)
        return PermutationTestResult._exact(statistic, p, alternative, None)

    rng = _as_rng(random_state)
    kind = "monte_carlo" if codes is None else "grouped_monte_carlo"
    if np.ptp(np.concatenate([a, b])) == 0.0:
        # All outcomes equal: every relabelling gives the observed gap (zero), b = m; p = 1 exactly.
        null = np.zeros(n_permutations)
        null.setflags(write=False)
        return PermutationTestResult._monte_carlo(0.0, n_permutations, n_permutations, alternative, null, method=kind)
    if codes is None:
        setup = _row_null_setup(a, b)
        faster = ("n_permutations=999 takes a tenth of the time (smallest p-value 1/1,000); Welch's t-test, "
                  "scipy.stats.ttest_ind(a, b, equal_var=False), is the large-sample test, in milliseconds")
    else:
        setup = _grouped_null_setup(a, b, *codes)
        faster = "n_permutations=999 takes a tenth of the time (smallest p-value 1/1,000)"
    null = _kind_gaps(setup, n_permutations, rng) if a.size + b.size >= _KINDS_FROM_ROWS else None
    if null is None:
        null = _draw_null(setup, n_permutations, rng, batch_size, faster)
    b = _extreme_count(setup.observed, null, alternative, setup.scale)
    null *= unit
    null.setflags(write=False)
    return PermutationTestResult._monte_carlo(statistic, b, n_permutations, alternative, null, method=kind)


def permutation_test(
    a,
    b,
    *,
    n_permutations: int = 9999,
    alternative: str = "two-sided",
    method: str = "auto",
    groups=None,
    random_state=None,
    batch_size: int | None = None,
) -> float:
    """p-value of the permutation test for ``mean(a) - mean(b)``, as a plain float.

    Same parameters, conventions, errors and references as :func:`permutation_test_result`;
    use that function when the report needs to say "p = 1/(m + 1)" for a Monte Carlo minimum.

    Parameters
    ----------
    a : array_like, shape (n_a,)
        Disadvantaged group's outcomes (numbers, 0/1 or booleans).
    b : array_like, shape (n_b,)
        Advantaged group's outcomes.
    n_permutations, alternative, method, groups, random_state, batch_size
        See :func:`permutation_test_result`.

    Returns
    -------
    float
        The p-value: exact for 0/1 outcomes (``method="auto"``), else Phipson & Smyth's
        ``(b + 1) / (m + 1)`` over ``m = n_permutations`` relabellings, in (0, 1].

    Raises
    ------
    TypeError, ValueError
        See :func:`permutation_test_result`.

    Notes
    -----
    Two-sided p is the share of relabellings with ``|gap|`` at least the observed ``|gap|``
    (not twice the smaller tail). See :func:`permutation_test_result`.

    References
    ----------
    .. [1] Good (2005); Phipson and Smyth (2010): see the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import permutation_test
    >>> rng = np.random.default_rng(1)
    >>> p = permutation_test(rng.normal(size=50), rng.normal(size=60), n_permutations=2000,
    ...                      random_state=1)
    >>> 0 < p <= 1
    True
    """
    return float(
        permutation_test_result(
            a,
            b,
            n_permutations=n_permutations,
            alternative=alternative,
            method=method,
            groups=groups,
            random_state=random_state,
            batch_size=batch_size,
        ).p_value
    )


def permutation_tests(
    a,
    b,
    *,
    n_permutations: int = 9999,
    alternative: str = "two-sided",
    method: str = "auto",
    groups=None,
    random_state=None,
) -> np.ndarray:
    """p-values of many permutation tests at once, one per row: a simulation study in one call.

    Row ``i`` is the test of ``mean(a[i]) - mean(b[i])`` that :func:`permutation_test` runs on
    ``a[i]`` and ``b[i]`` (with ``groups=(groups_a[i], groups_b[i])`` when given): the same
    statistic, null distribution and p-value convention. A study of thousands of small audits
    draws many tests' relabellings together, avoiding most of the per-call overhead (see Notes).

    Parameters
    ----------
    a : array_like, shape (n_tests, n_a)
        Row ``i``: the disadvantaged group's outcomes in test ``i`` (numbers, 0/1 or booleans;
        finite). Every test has ``n_a >= 1`` rows in ``a`` and ``n_b >= 1`` in ``b``.
    b : array_like, shape (n_tests, n_b)
        Row ``i``: the advantaged group's outcomes in test ``i``.
    n_permutations : int, default 9999
        Random relabellings per Monte Carlo test, ``>= 1``; the smallest p-value is ``1 / (m + 1)``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        As in :func:`permutation_test_result`, for every test.
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        As in :func:`permutation_test_result`, test by test: ``"auto"`` is exact for a test whose
        outcomes are all 0/1 when ``groups`` is None, Monte Carlo otherwise.
    groups : tuple (groups_a, groups_b), optional
        Cluster labels, ``groups_a`` of shape (n_tests, n_a) and ``groups_b`` of shape
        (n_tests, n_b): row ``i`` labels test ``i``'s rows. Whole clusters are relabelled, as in
        :func:`permutation_test_result`; a label may not appear in both groups of a test.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator of the Monte Carlo draws.

    Returns
    -------
    numpy.ndarray of float, shape (n_tests,)
        The p-values, in (0, 1]: exact (the same numbers as :func:`permutation_test`) for 0/1
        outcomes without ``groups``, else Phipson & Smyth's ``(b + 1) / (m + 1)``.

    Raises
    ------
    TypeError
        Non-numeric outcomes, a non-integer ``n_permutations``, malformed ``groups`` or
        ``random_state``.
    ValueError
        ``a`` or ``b`` not 2-D, empty or non-finite; different numbers of tests; ``groups`` of
        the wrong shape or with a cluster in both groups; ``n_permutations < 1``; an unknown
        ``alternative`` or ``method``; ``method="exact"`` with ``groups`` or non-0/1 outcomes.
        Errors about one test name its row.

    See Also
    --------
    permutation_test : one test, with ``batch_size``; permutation_test_power : the exact power
        of the exact test, with no simulation.

    Notes
    -----
    A Monte Carlo relabelling moves units (rows, or whole clusters) and its gap depends only on
    the sums of the units it moves. When a test's units are of at most 32 kinds (distinct
    ``(centred sum, rows)`` pairs: 0/1 rows, or households of one size, whose flagged totals are
    whole numbers), a uniformly random relabelling draws a multivariate hypergeometric number of
    units of each kind, and that count is drawn directly, at O(kinds) per relabelling
    (``Generator.multivariate_hypergeometric``). Other tests use :func:`permutation_test`'s
    sampler of random subsets, one population table per test, drawn for many tests of one size
    at once and test after test. When no test in the call has units of few kinds, their p-values
    with one generator are the numbers :func:`permutation_test` called once per row would give;
    otherwise each test has the same null distribution but different draws.

    References
    ----------
    .. [1] Good (2005); Phipson and Smyth (2010): see the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import permutation_tests
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(0.3, 1, (500, 40)), rng.normal(0, 1, (500, 60))  # 500 simulated audits
    >>> p = permutation_tests(a, b, n_permutations=199, random_state=1)
    >>> p.shape, bool(0.2 < np.mean(p < 0.05) < 0.5)
    ((500,), True)
    """
    n_permutations, alternative, method, _ = _check_test_options(n_permutations, alternative, method, None)
    a, b = _as_sample_rows(a, "a"), _as_sample_rows(b, "b")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"`a` and `b` must hold one row per test each; got {a.shape[0]} and {b.shape[0]} rows")
    n_tests, n_a = a.shape
    n_b = b.shape[1]
    codes = _as_group_rows(groups, n_tests, n_a, n_b)
    binary = np.all((a == 0.0) | (a == 1.0), axis=1) & np.all((b == 0.0) | (b == 1.0), axis=1)
    _check_exact_allowed(method, codes is not None,
                         None if binary.all() else f"row {int(np.flatnonzero(~binary)[0])} has others; ")
    p = np.ones(n_tests)
    exact = binary & (method != "monte_carlo") & (codes is None)
    for i in np.flatnonzero(exact):
        p[i] = _exact_binary_p_value(a[i], b[i], alternative)
    # Monte Carlo tests; a test whose outcomes are all equal has p = 1 and draws nothing.
    drawn = [i for i in np.flatnonzero(~exact) if np.ptp(a[i]) > 0 or np.ptp(b[i]) > 0 or a[i, 0] != b[i, 0]]
    if not drawn:
        return p
    rng = _as_rng(random_state)
    setups = []
    for i in drawn:  # each test in a unit of its own size (p does not depend on it)
        (a_i, b_i), _ = _rescaled((a[i], b[i]), f"`a[{i}]` and `b[{i}]`")
        setups.append(_row_null_setup(a_i, b_i) if codes is None else _grouped_null_setup(a_i, b_i, *codes[i]))
    left = _p_values_by_kind(p, drawn, setups, n_permutations, alternative, rng)
    _p_values_by_subsets(p, [drawn[j] for j in left], [setups[j] for j in left], n_permutations, alternative, rng)
    return p


def _kind_gaps(setup: _NullSetup, n_permutations: int, rng) -> np.ndarray | None:
    """Gaps of ``n_permutations`` relabellings drawn as counts of each kind of unit; None past ``_MAX_KINDS`` kinds.

    Units of few kinds (0/1 rows, a rating of 1 to 5, households of one size, whose totals are
    whole numbers): a relabelling's sums depend only on how many units of each kind it draws, a
    multivariate hypergeometric count, drawn directly at O(kinds) per relabelling.
    """
    weights = setup.weights
    if weights.shape[1] == 1 and np.count_nonzero(np.diff(weights[:, 0])) >= _MAX_KINDS:
        return None  # sorted rows (_row_null_setup) of many values: no sort needed to say so
    # (A complex key sorts by sum, then rows: far cheaper than np.unique(axis=0)'s row sort.)
    key = weights[:, 0] + 1j * (weights[:, 1] if weights.shape[1] > 1 else 0.0)
    kinds, per_kind = np.unique(key, return_counts=True)
    if kinds.size > _MAX_KINDS:
        return None
    kinds = np.column_stack([kinds.real, kinds.imag])[:, : weights.shape[1]]
    counts = rng.multivariate_hypergeometric(per_kind, setup.size, size=n_permutations, method="marginals")
    return setup.to_gaps(counts @ kinds)


def _p_values_by_kind(p: np.ndarray, drawn: list, setups: list, n_permutations: int, alternative: str,
                      rng) -> list[int]:
    """Fill ``p[drawn[j]]`` for the tests whose units are of few kinds (:func:`_kind_gaps`); return the other ``j``."""
    left = []
    for j, (i, setup) in enumerate(zip(drawn, setups)):
        gaps = _kind_gaps(setup, n_permutations, rng)
        if gaps is None:
            left.append(j)
        else:
            p[i] = _monte_carlo_p_value(setup.observed, gaps, alternative, setup.scale)
    return left


def _p_values_by_subsets(p: np.ndarray, drawn: list, setups: list, n_permutations: int, alternative: str,
                         rng) -> None:
    """Fill ``p[drawn[j]]`` by drawing random subsets, many tests of one population size at once."""
    start = 0
    while start < len(drawn):  # runs of consecutive tests with one population size share a sampler
        shape = (setups[start].weights.shape, setups[start].size)
        most = max(1, _TABLE_BYTES // _SubsetSums.table_bytes(*shape[0]))  # tests whose tables fit together
        stop = start + 1
        while (stop < len(drawn) and stop - start < most
               and (setups[stop].weights.shape, setups[stop].size) == shape):
            stop += 1
        run = setups[start:stop]
        sampler = _SubsetSums(np.stack([setup.weights for setup in run]), shape[1])
        test = np.repeat(np.arange(len(run)), n_permutations)
        sums = np.empty((test.size, sampler.k))
        rows = sampler.batch_rows(_BATCH_ELEMENTS)
        for first in range(0, test.size, rows):
            last = min(first + rows, test.size)
            sums[first:last] = sampler.draw(rng, last - first, test[first:last])
        for j, setup in enumerate(run):
            gaps = setup.to_gaps(sums[j * n_permutations:(j + 1) * n_permutations])
            p[drawn[start + j]] = _monte_carlo_p_value(setup.observed, gaps, alternative, setup.scale)
        start = stop


def _as_sample_rows(x, name: str) -> np.ndarray:
    """Return ``x`` as a 2-D float64 array whose rows pass :func:`_as_sample`, or raise naming the row."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"`{name}` must be a 2-D array of numbers (one row per test), got a string")
    try:
        arr = np.asarray(x)
    except ValueError:  # NumPy refuses ragged nested lists
        raise ValueError(f"`{name}` must be 2-D with rows of one length (every test of the call has the same "
                         "group sizes); got rows of different lengths: call once per size") from None
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D (one row per test, one column per row of its group); "
                         f"got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"`{name}` must hold at least one test; it has no rows")
    if arr.dtype.kind in "biuf" and arr.shape[1] > 0 and np.isfinite(arr).all():
        return arr.astype(np.float64, copy=False)
    # Something is wrong (or unusual, e.g. objects): let the one-test check name it, row by row.
    return np.stack([_as_sample(row, f"{name}[{i}]") for i, row in enumerate(arr)])


def _as_group_rows(groups, n_tests: int, n_a: int, n_b: int):
    """Validate ``groups`` for :func:`permutation_tests`: per test, its (codes_a, codes_b); or None."""
    if groups is None:
        return None
    if not isinstance(groups, (tuple, list)) or len(groups) != 2:
        raise TypeError("`groups` must be a pair (groups_a, groups_b) of label arrays, shapes "
                        f"(n_tests, n_a) and (n_tests, n_b); got {type(groups).__name__}")
    labels = [np.asarray(g) for g in groups]
    for i, (arr, n) in enumerate(zip(labels, (n_a, n_b))):
        if arr.shape != (n_tests, n):
            raise ValueError(f"`groups[{i}]` must have shape ({n_tests}, {n}), one label per row of "
                             f"{'`a`' if i == 0 else '`b`'}; got {arr.shape}")
    out = []
    for i in range(n_tests):
        try:
            out.append(_as_groups((labels[0][i], labels[1][i]), n_a, n_b))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"test {i}: {exc}") from None
    return out
