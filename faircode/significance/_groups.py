"""More than two groups by their gaps: :func:`max_gap_test` and :func:`pairwise_tests`.

fairlearn's ``MetricFrame.difference()`` and Aequitas report the largest of k group gaps as it
is. The largest of many noisy gaps is biased upward (it is a maximum), so :func:`max_gap_test`
judges it against the permutation distribution of the maximum itself (Good 2005), with a Monte
Carlo p-value that is never 0 (Phipson and Smyth 2010; both cited in full in
:mod:`faircode.significance._permutation` and in the functions' docstrings);
:func:`pairwise_tests` tests each pair with the two-group permutation test and adjusts the
family (:mod:`faircode.significance._multiplicity`). The tests that weigh each group's gap by its
standard error (:func:`homogeneity_test`, :func:`max_t_test`) are in
:mod:`faircode.significance._homogeneity`; the tests within strata in
:mod:`faircode.significance._strata`; the per-group score interval, :func:`wilson_interval`, in
:mod:`faircode.significance._intervals`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from faircode.formatting import check_positive_int as _check_positive_int
from faircode.significance._validation import (
    _as_group_labels,
    _as_rng,
    _as_sample,
    _batch_rows,
    _check_choice,
    _is_binary,
    _rescaled,
    _TIE_RTOL,
)
from faircode.significance._results import _permutations_note, _RelabellingTestResult
from faircode.significance._permutation import _exact_binary_p_value, permutation_test_result
from faircode.significance._multiplicity import adjust_p_values


# fairlearn's MetricFrame.difference() and Aequitas report the largest of k group gaps as it is.
# The largest of many noisy gaps is biased upward (it is a maximum), so its significance must be
# judged against the null distribution of the maximum itself, not of one pre-chosen gap.

_BINARY_METHODS = ("auto", "exact", "monte_carlo")


@dataclass(frozen=True, repr=False)
class MaxGapTestResult(_RelabellingTestResult):
    """Result of :func:`max_gap_test`: is the spread of k group means more than chance?

    Attributes
    ----------
    statistic : float
        The observed between-groups gap: largest group mean minus smallest, ``>= 0``.
    p_value : float
        For Monte Carlo, Phipson & Smyth's ``(b + 1) / (m + 1)`` with ``b`` of ``m`` relabellings
        at least as large as the observed gap: the observed labelling counted as one more, a
        valid p-value (not the share ``b / m``, and not a bound on the exact p); exact
        (hypergeometric) for two 0/1 groups.
    method : str
        ``"exact"`` or ``"monte_carlo"``.
    n_permutations : int or None
        Relabellings drawn; None for the exact test.
    p_value_floor : float
        ``1 / (n_permutations + 1)``, 0.0 for the exact test.
    is_monte_carlo_minimum : bool
        True when no relabelling was as extreme (read as "p < 1/(m + 1)").
    groups : tuple
        The group labels, sorted.
    means : tuple of float
        Each group's mean, in the order of ``groups`` (rates in [0, 1] for 0/1 outcomes).
    sizes : tuple of int
        Rows per group, in the order of ``groups``.
    high_group, low_group
        The groups with the largest and the smallest mean (the first in ``groups`` on a tie).
    null_distribution : numpy.ndarray or None
        Read-only gaps (max minus min) of the drawn relabellings, shape ``(n_permutations,)``;
        None for the exact test.
    """

    groups: tuple
    means: tuple
    sizes: tuple
    high_group: object
    low_group: object
    null_distribution: np.ndarray | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        return (
            f"MaxGapTestResult(statistic={self.statistic:.4g} ({self.high_group!r} - {self.low_group!r}), "
            f"{self.format_p_value()}, method={self.method!r}, k={len(self.groups)}"
            f"{_permutations_note(self.n_permutations)})"
        )


@dataclass(frozen=True)
class PairwiseComparison:
    """One pair of groups in :func:`pairwise_tests`.

    Attributes
    ----------
    group_a, group_b
        The two groups: ``group_b`` is the reference when there is one (see
        :func:`pairwise_tests`); ``gap = mean_a - mean_b``.
    gap : float
        Difference of the group means, in the outcome's unit.
    mean_a, mean_b : float
        Group means.
    n_a, n_b : int
        Rows per group.
    p_value : float
        Two-sided permutation test of the pair alone (exact for 0/1 outcomes).
    p_value_adjusted : float
        ``p_value`` adjusted over every pair of the family (Holm: family-wise error rate).
    """

    group_a: object
    group_b: object
    gap: float
    mean_a: float
    mean_b: float
    n_a: int
    n_b: int
    p_value: float
    p_value_adjusted: float


def _max_gap_null_binary(x: np.ndarray, sorted_sizes: np.ndarray, n_permutations: int, rng,
                         batch_size) -> tuple[np.ndarray, float]:
    """Largest minus smallest group rate of each relabelling of 0/1 outcomes ``x``, and the scale (1).

    A relabelling's flagged count per group is multivariate hypergeometric: drawn directly.
    """
    ones = int(round(float(x.sum())))
    k = sorted_sizes.size
    null = np.empty(n_permutations)
    rows = _batch_rows(batch_size, k)
    for start in range(0, n_permutations, rows):
        stop = min(start + rows, n_permutations)
        counts = rng.multivariate_hypergeometric(sorted_sizes, ones, size=stop - start, method="marginals")
        null[start:stop] = _range_of_means(counts.astype(np.float64), sorted_sizes)  # counts: (batch, k)
    return null, 1.0


def _max_gap_null(x: np.ndarray, sorted_sizes: np.ndarray, n_permutations: int, rng,
                  batch_size) -> tuple[np.ndarray, float]:
    """Largest minus smallest group mean of each random permutation of ``x``, and the outcome scale."""
    # Sorting makes the pool independent of which rows came from which group.
    pooled = np.sort(x)
    z = pooled - pooled.mean()
    starts = np.concatenate([[0], np.cumsum(sorted_sizes)[:-1]])
    null = np.empty(n_permutations)
    rows = _batch_rows(batch_size, x.size)
    for start in range(0, n_permutations, rows):
        stop = min(start + rows, n_permutations)
        shuffled = rng.permuted(np.broadcast_to(z, (stop - start, z.size)), axis=1)  # (batch, n)
        null[start:stop] = _range_of_means(np.add.reduceat(shuffled, starts, axis=1), sorted_sizes)
    return null, float(np.abs(z).max()) or 1.0


def _range_of_means(sums: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    means = sums / sizes  # (..., k)
    return means.max(axis=-1) - means.min(axis=-1)


def max_gap_test(
    outcome,
    groups,
    *,
    n_permutations: int = 9999,
    method: str = "auto",
    random_state=None,
    batch_size: int | None = None,
) -> MaxGapTestResult:
    """Permutation test of the between-groups gap (largest minus smallest group mean).

    With k groups the largest of the k(k-1)/2 pairwise gaps is chosen after looking at the
    data, so testing it as if it were one pre-chosen pair overstates its significance. This
    test compares the observed maximum gap with the maximum gaps that random relabelling of
    the rows among the groups produces, so its p-value accounts for the choice of the largest.

    Parameters
    ----------
    outcome : array_like, shape (n,)
        One outcome per row: numbers, 0/1 or booleans; finite.
    groups : array_like, shape (n,)
        The group of each row (any mutually comparable, non-missing labels); at least two
        groups. Every group given takes part: leave small groups out before calling (see
        ``faircode.groups.compare_groups``, which applies the manifest's minimum size).
    n_permutations : int, default 9999
        Monte Carlo relabellings, ``>= 1``; the smallest reportable p-value is ``1 / (m + 1)``.
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        ``"exact"`` is available for two groups of 0/1 outcomes (the gap is then the absolute
        two-group gap and the test is the exact two-sided permutation test of
        :func:`permutation_test_result`). ``"auto"`` uses it there and Monte Carlo otherwise.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the Monte Carlo draws.
    batch_size : int, optional
        Relabellings per vectorised batch for non-0/1 outcomes (memory O(batch_size x n));
        default about 16 MiB per batch. The result does not depend on it.

    Returns
    -------
    MaxGapTestResult
        The observed gap, its p-value, the groups' means and sizes, and the null distribution.

    Raises
    ------
    TypeError
        Non-numeric ``outcome``; labels that cannot be compared; bad ``n_permutations``,
        ``batch_size`` or ``random_state``.
    ValueError
        Empty, non-1-D or non-finite ``outcome``; ``groups`` of another length, with missing
        labels or with fewer than two groups; unknown ``method``; ``method="exact"`` with more
        than two groups or non-0/1 outcomes.

    Notes
    -----
    The statistic is ``T = max_g mean_g - min_g mean_g`` (fairlearn's ``between_groups``
    difference). Under the null hypothesis that the outcome does not depend on the group, every
    assignment of the rows to groups of the observed sizes is equally likely [1]_.

    **0/1 outcomes.** A relabelling changes ``T`` only through the number of ones each group
    receives, and that vector of counts is multivariate hypergeometric (the ``K`` ones of ``N``
    rows drawn into groups of sizes ``n_1 .. n_k``). Each relabelling is therefore one draw
    of ``numpy.random.Generator.multivariate_hypergeometric``: O(k) work, exactly the
    distribution of a random relabelling of rows, with no Monte Carlo error beyond the number
    of draws. Exhaustive enumeration of the count vectors is possible in principle but its size
    grows as ``n^(k-1)``; we enumerate only for two groups (the hypergeometric sum).

    **Other outcomes.** Each relabelling is a random permutation of the pooled outcomes cut into
    groups of the observed sizes, in vectorised batches.

    The p-value is ``(b + 1) / (m + 1)`` with ``b`` of ``m`` relabellings at least as large as
    the observed gap (ties within a relative 1e-9 count as extreme) [2]_. Groups enter in order
    of size and the pooled outcomes are sorted, so renaming the groups or reordering the rows
    does not change the draws. For two 0/1 groups the Monte Carlo p-value estimates the exact
    two-sided p-value of :func:`permutation_test_result`.

    References
    ----------
    .. [1] Good, P. I. (2005). *Permutation, Parametric, and Bootstrap Tests of Hypotheses*,
       3rd ed. Springer, ch. 3 (k-sample comparisons) and 5.
    .. [2] Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero.
       *Statistical Applications in Genetics and Molecular Biology* 9(1), Article 39.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import max_gap_test
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat(["a", "b", "c", "d"], [200, 150, 40, 10])
    >>> flagged = rng.binomial(1, 0.3, size=groups.size)   # no group effect at all
    >>> res = max_gap_test(flagged, groups, random_state=1)
    >>> res.method, res.n_permutations, res.p_value > 0.05
    ('monte_carlo', 9999, True)
    """
    x = _as_sample(outcome, "outcome")
    uniques, codes = _as_group_labels(groups, x.size)
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    method = _check_choice(method, "method", _BINARY_METHODS)
    if batch_size is not None:
        batch_size = _check_positive_int(batch_size, "batch_size")
    binary = _is_binary(x)
    k = uniques.size
    if method == "exact" and (k != 2 or not binary):
        raise ValueError(
            "`method='exact'` is available for two groups of 0/1 outcomes only; got "
            f"{k} groups{'' if binary else ' and non-0/1 outcomes'}; use 'auto' or 'monte_carlo'"
        )
    (x,), unit = _rescaled((x,), "`outcome`")  # outcomes near 1e308 in a unit that cannot overflow
    sizes = np.bincount(codes, minlength=k)
    sums = np.bincount(codes, weights=x, minlength=k)
    means = sums / sizes
    statistic = unit * float(means.max() - means.min())
    describe = dict(
        groups=tuple(uniques.tolist()),
        means=tuple(unit * float(m) for m in means),
        sizes=tuple(int(s) for s in sizes),
        high_group=uniques.tolist()[int(np.argmax(means))],  # tolist: plain Python labels, also from object arrays
        low_group=uniques.tolist()[int(np.argmin(means))],
    )
    if method != "monte_carlo" and k == 2 and binary:
        p = _exact_binary_p_value(x[codes == 0], x[codes == 1], "two-sided")
        return MaxGapTestResult._exact(statistic, p, **describe)

    rng = _as_rng(random_state)
    # Groups in order of size: equal-sized groups are exchangeable under the null, so the draws
    # (and the p-value) do not depend on the groups' names.
    sorted_sizes = sizes[np.argsort(sizes, kind="stable")].astype(np.int64)
    draw = _max_gap_null_binary if binary else _max_gap_null
    null, scale = draw(x, sorted_sizes, n_permutations, rng, batch_size)
    b = int(np.count_nonzero(null >= statistic / unit - _TIE_RTOL * scale))
    null *= unit
    null.setflags(write=False)
    return MaxGapTestResult._monte_carlo(statistic, b, n_permutations, null_distribution=null, **describe)


def pairwise_tests(
    outcome,
    groups,
    *,
    reference=None,
    adjust: str = "holm",
    n_permutations: int = 9999,
    random_state=None,
) -> tuple[PairwiseComparison, ...]:
    """Two-group permutation tests between groups, adjusted for the family of comparisons.

    Parameters
    ----------
    outcome : array_like, shape (n,)
        One outcome per row: numbers, 0/1 or booleans; finite.
    groups : array_like, shape (n,)
        The group of each row (mutually comparable, non-missing labels); at least two groups.
    reference : optional
        A group label. Given: each other group against it (k - 1 comparisons, ``gap = group -
        reference``, as Aequitas reports disparities against a reference group). None: every
        pair (k(k - 1)/2 comparisons, ``gap = earlier - later`` in sorted label order).
    adjust : {"holm", "bh"}, default "holm"
        The multiple-comparison adjustment over the family (see :func:`adjust_p_values`):
        Holm controls the family-wise error rate, which is what a claim about any one pair needs.
    n_permutations : int, default 9999
        Relabellings for non-0/1 outcomes (0/1 outcomes get the exact test).
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed for the Monte Carlo tests; each pair draws from its own child stream.

    Returns
    -------
    tuple of PairwiseComparison
        In sorted label order of the groups (pairs ``(i, j)`` with ``i < j``, or each
        non-reference group in order).

    Raises
    ------
    TypeError, ValueError
        As :func:`max_gap_test` for ``outcome`` and ``groups``; a ``reference`` that is not one
        of the groups; an unknown ``adjust``.

    Notes
    -----
    Each p-value is the two-sided permutation test of :func:`permutation_test_result` on the
    pair's rows alone; the adjusted p-values are compared with alpha directly. The max-gap test
    (:func:`max_gap_test`) answers "do the groups differ at all?"; these answer "which pairs?".

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
       *Scandinavian Journal of Statistics* 6(2), 65-70.
    .. [2] Saleiro, P. et al. (2018). Aequitas: A Bias and Fairness Audit Toolkit.
       arXiv:1811.05577.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import pairwise_tests
    >>> groups = np.repeat(["a", "b", "c"], 100)
    >>> flagged = np.r_[np.ones(30), np.zeros(70), np.ones(50), np.zeros(50), np.ones(31), np.zeros(69)]
    >>> [(c.group_a, c.group_b, round(c.gap, 2)) for c in pairwise_tests(flagged, groups, reference="a")]
    [('b', 'a', 0.2), ('c', 'a', 0.01)]
    """
    x = _as_sample(outcome, "outcome")
    uniques, codes = _as_group_labels(groups, x.size)
    adjust = _check_choice(adjust, "adjust", ("holm", "bh"))
    (x,), unit = _rescaled((x,), "`outcome`")  # outcomes near 1e308 in a unit that cannot overflow
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    if reference is None:
        pairs = [(i, j) for i in range(uniques.size) for j in range(i + 1, uniques.size)]
    else:
        hits = np.flatnonzero(uniques == reference)
        if hits.size != 1:
            raise ValueError(
                f"`reference` must be one of the groups {uniques.tolist()}; got {reference!r}"
            )
        ref = int(hits[0])
        pairs = [(i, ref) for i in range(uniques.size) if i != ref]
    streams = _as_rng(random_state).spawn(len(pairs))
    tests = []
    for (i, j), rng in zip(pairs, streams):
        a, b = x[codes == i], x[codes == j]
        tests.append((a, b, permutation_test_result(a, b, n_permutations=n_permutations, random_state=rng)))
    adjusted = adjust_p_values(np.array([t.p_value for _, _, t in tests]), method=adjust)
    names = uniques.tolist()  # plain Python labels, also from object arrays
    return tuple(
        PairwiseComparison(
            group_a=names[i], group_b=names[j], gap=unit * t.statistic,
            mean_a=unit * float(a.mean()), mean_b=unit * float(b.mean()), n_a=int(a.size), n_b=int(b.size),
            p_value=float(t.p_value), p_value_adjusted=float(q),
        )
        for (i, j), (a, b, t), q in zip(pairs, tests, adjusted)
    )
