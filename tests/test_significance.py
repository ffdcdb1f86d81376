"""Tests for faircode.significance against independent oracles.

Oracles: scipy.stats.hypergeom (exact 0/1 p-values), brute-force enumeration of relabellings in
exact rational arithmetic, scipy.stats.permutation_test, scipy.stats.bootstrap (paired=False is
the stratified bootstrap), statsmodels' multipletests. Monte Carlo agreement is checked within a
tolerance derived from the number of resamples, never a hand-picked epsilon.
"""

from __future__ import annotations

import dataclasses
import decimal
import itertools
import math
import warnings
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from faircode import significance as sig
from faircode.significance import (
    SMALL_SAMPLE_THRESHOLD,
    ConfidenceInterval,
    DegenerateSampleWarning,
    adjust_p_values,
    bootstrap_ci,
    format_p_value,
    permutation_test,
    permutation_test_result,
    permutation_tests,
    proportion_difference_ci,
    significance_report,
)

HYPOTHESIS = settings(max_examples=25, deadline=None, database=None, derandomize=True)
# A Monte Carlo p-value estimate from m draws has sd sqrt(p(1-p)/m); five of them bound a
# false failure at about 1 in 1.7 million.
Z_TOL = 5.0


def mc_tolerance(p: float, m: int, n_estimates: int = 1) -> float:
    """Tolerance for |p_mc - p_ref|: Z_TOL binomial sds (summed variances) plus the (b+1)/(m+1) shift."""
    p = min(max(p, 1.0 / m), 1 - 1.0 / m)
    return Z_TOL * math.sqrt(n_estimates * p * (1 - p) / m) + 1.0 / (m + 1)


def binary(n_pos: int, n: int) -> np.ndarray:
    return np.r_[np.ones(n_pos), np.zeros(n - n_pos)]


def mean_gap(x, y, axis=-1):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def abs_mean_gap(x, y, axis=-1):
    return np.abs(np.mean(x, axis=axis) - np.mean(y, axis=axis))


# --- oracles -----------------------------------------------------------------------------------


def hypergeom_oracle(x_obs: int, n_a: int, k: int, n_b: int, alternative: str) -> float:
    """Sum of scipy's hypergeometric pmf over counts whose exact (rational) gap is as extreme."""
    n = n_a + n_b
    xs = np.arange(max(0, n_a - (n - k)), min(n_a, k) + 1)
    pmf = stats.hypergeom.pmf(xs, n, k, n_a)

    def gap(x):
        return Fraction(int(x), n_a) - Fraction(k - int(x), n_b)

    g_obs = gap(x_obs)
    if alternative == "greater":
        mask = [gap(x) >= g_obs for x in xs]
    elif alternative == "less":
        mask = [gap(x) <= g_obs for x in xs]
    else:
        mask = [abs(gap(x)) >= abs(g_obs) for x in xs]
    return float(pmf[np.array(mask)].sum())


def decimal_hypergeom_oracle(x_obs: int, n_a: int, k: int, n_b: int, alternative: str) -> float:
    """The exact p as a ratio of sums of hypergeometric terms, in 60-digit decimal arithmetic.

    Terms relative to the mode, each the one before times an exact ratio of integers, so the only
    error is 60-digit rounding; terms below 1e-700 of the mode (far below any double) are left out.
    """
    n = n_a + n_b
    lo, hi, rest = max(0, n_a - (n - k)), min(n_a, k), n - k - n_a

    def extreme(x):
        if alternative == "greater":
            return x >= x_obs
        if alternative == "less":
            return x <= x_obs
        return abs(x * n - k * n_a) >= abs(x_obs * n - k * n_a)

    with decimal.localcontext() as ctx:
        ctx.prec = 60
        tiny, mode = decimal.Decimal(10) ** -700, min(hi, max(lo, (n_a + 1) * (k + 1) // (n + 2)))
        total = tail = decimal.Decimal(0)
        for step in (1, -1):
            term, x = decimal.Decimal(1), mode
            if step == -1:  # the mode was counted going up
                term, x = term * x * (rest + x) / ((k - x + 1) * (n_a - x + 1)), x - 1
            while (x <= hi if step == 1 else x >= lo) and term > tiny:
                total += term
                tail += term if extreme(x) else 0
                if step == 1:
                    term, x = term * (k - x) * (n_a - x) / ((x + 1) * (rest + x + 1)), x + 1
                else:
                    term, x = term * x * (rest + x) / ((k - x + 1) * (n_a - x + 1)), x - 1
        return float(tail / total)


def enumeration_oracle(a, b, alternative="two-sided") -> float:
    """Share of all C(N, n_a) relabellings as extreme as the data, in exact rational arithmetic."""
    pooled = [Fraction(v).limit_denominator(10**6) for v in np.r_[a, b]]
    n_a, n = len(a), len(pooled)
    total = sum(pooled)

    def gap(sel_sum):
        return sel_sum / n_a - (total - sel_sum) / (n - n_a)

    g_obs = gap(sum(pooled[:n_a]))
    count = hits = 0
    for combo in itertools.combinations(range(n), n_a):
        g = gap(sum(pooled[i] for i in combo))
        count += 1
        if alternative == "greater":
            hits += g >= g_obs
        elif alternative == "less":
            hits += g <= g_obs
        else:
            hits += abs(g) >= abs(g_obs)
    return hits / count


def cluster_enumeration_oracle(a, b, groups_a, groups_b) -> float:
    """Two-sided share of all relabellings of whole clusters (cluster counts fixed), exactly."""
    clusters = []
    for values, labels in ((a, groups_a), (b, groups_b)):
        for label in dict.fromkeys(labels):
            rows = [Fraction(v).limit_denominator(10**6) for v, g in zip(values, labels) if g == label]
            clusters.append((sum(rows), len(rows)))
    g_a = len(dict.fromkeys(groups_a))
    total_sum = sum(s for s, _ in clusters)
    total_n = sum(n for _, n in clusters)

    def gap(chosen):
        s = sum(clusters[i][0] for i in chosen)
        n = sum(clusters[i][1] for i in chosen)
        return s / n - (total_sum - s) / (total_n - n)

    g_obs = abs(gap(range(g_a)))
    combos = list(itertools.combinations(range(len(clusters)), g_a))
    return sum(abs(gap(c)) >= g_obs for c in combos) / len(combos)


# --- exact test ----------------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize(
    ("x_obs", "n_a", "k", "n_b"),
    [(3, 10, 9, 15), (30, 100, 75, 100), (12, 40, 50, 80), (0, 5, 3, 200), (7, 7, 20, 13), (2, 50, 2, 50)],
)
def test_exact_p_equals_hypergeometric_sum(x_obs, n_a, k, n_b, alternative):
    a = binary(x_obs, n_a)
    b = binary(k - x_obs, n_b)
    expected = hypergeom_oracle(x_obs, n_a, k, n_b, alternative)
    res = permutation_test_result(a, b, alternative=alternative)
    assert res.method == "exact"
    assert res.p_value == pytest.approx(expected, rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize(("a", "b"), [([1, 0, 0, 1], [0, 0, 0, 1, 1]), ([1, 1, 1], [0, 0, 1, 0]), ([0, 1], [1, 1, 1, 0, 0, 0])])
def test_exact_p_equals_full_enumeration(a, b, alternative):
    expected = enumeration_oracle(a, b, alternative)
    assert permutation_test(a, b, alternative=alternative) == pytest.approx(expected, rel=1e-12)


def test_exact_p_equals_scipy_exact_permutation_test():
    # Two-sided here is |gap| >= |observed|, which is scipy's one-sided test of |gap|.
    a, b = binary(4, 9), binary(1, 8)
    scipy_res = stats.permutation_test(
        (a, b), abs_mean_gap, n_resamples=np.inf, alternative="greater", vectorized=True
    )
    assert permutation_test(a, b) == pytest.approx(scipy_res.pvalue, rel=1e-12)


def test_exact_p_at_a_million_rows_matches_scipy_hypergeom_tails():
    n_a, n_b = 1_000_000, 1_500_000
    x_obs, k = 300_400, 300_400 + 449_000
    a, b = binary(x_obs, n_a), binary(k - x_obs, n_b)
    n = n_a + n_b
    d = abs(x_obs * n - k * n_a)
    lo, hi = (k * n_a - d) // n, -((-(k * n_a + d)) // n)
    expected = stats.hypergeom.cdf(lo, n, k, n_a) + stats.hypergeom.sf(hi - 1, n, k, n_a)
    assert 1e-8 < expected < 0.5  # a p-value where precision matters
    assert permutation_test(a, b) == pytest.approx(expected, rel=1e-7)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize(
    ("x_obs", "n_a", "k", "n_b"),
    [(1_200, 400_000, 4_200, 600_000),  # issue 47: 5.89141688839e-51, off by 1.1e-9 relative
     (0, 500_000, 300, 500_000),  # a tail of 1e-90
     (300_400, 1_000_000, 749_400, 1_500_000),  # 2.5 million rows, p near 0.07
     (30_000, 100_000, 59_000, 100_000), (100, 200, 150, 200), (1, 2, 1, 1_000_000), (3, 10, 9, 15)],
)
def test_exact_p_is_exact_to_1e_13_at_a_million_rows_and_in_extreme_tails(x_obs, n_a, k, n_b, alternative):
    # Issue 47: a sum of log-gammas of 10^6 kept nine digits of the tail. The oracle sums exact
    # ratios in 60 digits.
    expected = decimal_hypergeom_oracle(x_obs, n_a, k, n_b, alternative)
    got = permutation_test(binary(x_obs, n_a), binary(k - x_obs, n_b), alternative=alternative)
    assert got == pytest.approx(expected, rel=1e-13, abs=0)


def test_exact_p_tiny_but_not_zero_at_large_n():
    a, b = binary(30_000, 100_000), binary(29_000, 100_000)
    expected = stats.hypergeom.sf(29_999, 200_000, 59_000, 100_000) * 2  # symmetric: equal sizes
    res = permutation_test_result(a, b)
    assert res.p_value == pytest.approx(expected, rel=1e-7)
    assert 0 < res.p_value < 1e-5


def test_auto_uses_exact_for_bool_and_01_and_monte_carlo_otherwise():
    assert permutation_test_result([True, False, True], [False, False]).method == "exact"
    assert permutation_test_result([0.0, 2.0, 1.0], [1.0, 1.0], random_state=0).method == "monte_carlo"
    with pytest.raises(ValueError, match="`method='exact'` needs 0/1 outcomes"):
        permutation_test_result([0.5, 1.0], [0.0, 1.0], method="exact")


def test_exact_result_fields():
    res = permutation_test_result(binary(3, 10), binary(6, 10))
    assert res.n_permutations is None and res.null_distribution is None
    assert res.p_value_floor == 0.0 and res.is_monte_carlo_minimum is False
    assert res.statistic == pytest.approx(-0.3)


def test_one_sided_exact_p_values_mirror_each_other_when_groups_swap():
    a, b = binary(7, 30), binary(20, 45)
    assert permutation_test(a, b, alternative="less") == pytest.approx(
        permutation_test(b, a, alternative="greater"), rel=1e-12
    )


# --- Monte Carlo test ----------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
@pytest.mark.parametrize(("a", "b"), [(binary(30, 100), binary(45, 100)), (binary(12, 40), binary(20, 50))])
def test_monte_carlo_agrees_with_exact_within_binomial_error(a, b, alternative):
    m = 20_000
    exact = permutation_test(a, b, alternative=alternative)
    mc = permutation_test(a, b, alternative=alternative, method="monte_carlo", n_permutations=m, random_state=3)
    assert abs(mc - exact) <= mc_tolerance(exact, m)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_monte_carlo_agrees_with_enumeration_on_continuous_data(alternative):
    rng = np.random.default_rng(11)
    a, b = rng.normal(0.8, 1, 6), rng.normal(0, 1, 7)
    exact = enumeration_oracle(a, b, alternative)
    m = 20_000
    mc = permutation_test(a, b, alternative=alternative, n_permutations=m, random_state=5)
    assert abs(mc - exact) <= mc_tolerance(exact, m)


def test_monte_carlo_agrees_with_scipy_permutation_test():
    rng = np.random.default_rng(12)
    a, b = rng.exponential(1.0, 60), rng.exponential(1.4, 90)
    m = 20_000
    ours = permutation_test(a, b, n_permutations=m, random_state=1)
    scipy_p = stats.permutation_test(
        (a, b), abs_mean_gap, n_resamples=m, alternative="greater", vectorized=True, rng=2
    ).pvalue
    assert abs(ours - scipy_p) <= mc_tolerance(scipy_p, m, n_estimates=2)


def test_floating_point_ties_count_as_extreme():
    # Multiples of 0.1: many relabellings tie the observed |gap| in exact arithmetic but not in
    # floating point (0.1 + 0.6 != 0.3 + 0.4). Gaps are multiples of 0.1/3, so rounding the
    # drawn gaps to that lattice recovers exact extremeness for each draw.
    a, b = [0.1, 0.6, 0.3], [0.2, 0.4, 0.5]
    m = 3000
    res = permutation_test_result(a, b, n_permutations=m, random_state=0)
    lattice = np.rint(np.asarray(res.null_distribution) * 30).astype(int)
    observed = round(res.statistic * 30)
    b_exact = int(np.count_nonzero(np.abs(lattice) >= abs(observed)))
    assert res.p_value == (b_exact + 1) / (m + 1)
    assert abs(res.p_value - enumeration_oracle(a, b)) <= mc_tolerance(0.5, m)


def test_monte_carlo_minimum_uses_phipson_smyth_floor():
    a, b = np.arange(100.0, 140.0), np.arange(0.0, 40.0)
    res = permutation_test_result(a, b, n_permutations=99, random_state=0)
    assert res.p_value == 1 / 100 == res.p_value_floor
    assert res.is_monte_carlo_minimum
    assert res.format_p_value() == "p = 1/100"
    assert permutation_test(a, b, n_permutations=99, random_state=0) == 0.01


def test_monte_carlo_result_fields_and_null_distribution():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=20), rng.normal(size=25)
    res = permutation_test_result(a, b, n_permutations=500, random_state=4)
    assert res.method == "monte_carlo" and res.n_permutations == 500
    assert res.p_value_floor == 1 / 501
    assert res.null_distribution.shape == (500,)
    assert not res.null_distribution.flags.writeable
    assert res.statistic == pytest.approx(a.mean() - b.mean(), rel=1e-12)
    # Every relabelled gap is a gap of some split of the pooled rows, so it lies within the
    # extreme splits: the smallest n_a values against the rest and vice versa.
    pooled = np.sort(np.r_[a, b])
    lowest = pooled[:20].mean() - pooled[20:].mean()
    highest = pooled[-20:].mean() - pooled[:-20].mean()
    assert np.all(res.null_distribution >= lowest - 1e-12)
    assert np.all(res.null_distribution <= highest + 1e-12)


def test_monte_carlo_reproducible_with_seed_and_generator():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=30), rng.normal(size=40)
    p1 = permutation_test(a, b, n_permutations=300, random_state=7)
    p2 = permutation_test(a, b, n_permutations=300, random_state=np.random.default_rng(7))
    assert p1 == p2


def test_constant_outcomes_give_p_one():
    res = permutation_test_result([2.5, 2.5, 2.5], [2.5, 2.5], n_permutations=50, random_state=0)
    assert res.p_value == 1.0 and res.statistic == 0.0


samples = st.lists(
    st.floats(min_value=-100, max_value=100, allow_nan=False, allow_subnormal=False), min_size=1, max_size=12
)


@HYPOTHESIS
@given(a=samples, b=samples, batch=st.integers(min_value=1, max_value=40))
def test_monte_carlo_invariant_to_batch_size(a, b, batch):
    full = permutation_test_result(a, b, n_permutations=97, method="monte_carlo", random_state=1)
    batched = permutation_test_result(a, b, n_permutations=97, method="monte_carlo", random_state=1, batch_size=batch)
    assert batched.p_value == full.p_value
    np.testing.assert_array_equal(batched.null_distribution, full.null_distribution)


@HYPOTHESIS
@given(a=samples, b=samples, seed=st.integers(0, 2**32 - 1), data=st.data())
def test_monte_carlo_invariant_to_group_swap_and_row_order(a, b, seed, data):
    p = permutation_test(a, b, n_permutations=97, method="monte_carlo", random_state=seed)
    assert permutation_test(b, a, n_permutations=97, method="monte_carlo", random_state=seed) == p
    shuffled = data.draw(st.permutations(a))
    assert permutation_test(shuffled, b, n_permutations=97, method="monte_carlo", random_state=seed) == p


@HYPOTHESIS
@given(
    a=st.lists(st.integers(0, 1), min_size=1, max_size=60),
    b=st.lists(st.integers(0, 1), min_size=1, max_size=60),
)
def test_exact_invariant_to_group_swap(a, b):
    assert permutation_test(a, b) == pytest.approx(permutation_test(b, a), rel=1e-12)


@HYPOTHESIS
@given(a=samples, b=samples, seed=st.integers(0, 2**32 - 1))
def test_one_sided_monte_carlo_mirrors_when_sizes_differ(a, b, seed):
    if len(a) == len(b):
        b = b + [0.0]
    kwargs = dict(n_permutations=97, method="monte_carlo", random_state=seed)
    assert permutation_test(a, b, alternative="greater", **kwargs) == permutation_test(
        b, a, alternative="less", **kwargs
    )


# --- grouped permutation -----------------------------------------------------------------------


def test_grouped_with_singleton_clusters_equals_row_level_test():
    rng = np.random.default_rng(8)
    a, b = rng.normal(0.3, 1, 25), rng.normal(0, 1, 35)
    groups = (np.arange(25), np.arange(25, 60))
    row = permutation_test_result(a, b, n_permutations=2000, random_state=9)
    grouped = permutation_test_result(a, b, n_permutations=2000, random_state=9, groups=groups)
    assert grouped.method == "grouped_monte_carlo"
    assert grouped.p_value == row.p_value
    np.testing.assert_allclose(grouped.null_distribution, row.null_distribution, rtol=1e-9, atol=1e-12)


def test_grouped_agrees_with_enumeration_of_cluster_relabellings():
    rng = np.random.default_rng(10)
    groups_a = ["h1"] * 3 + ["h2"] * 1 + ["h3"] * 4 + ["h4"] * 2
    groups_b = ["h5"] * 2 + ["h6"] * 5 + ["h7"] * 1 + ["h8"] * 3 + ["h9"] * 2
    a = np.round(rng.normal(0.7, 1, len(groups_a)), 3)
    b = np.round(rng.normal(0.0, 1, len(groups_b)), 3)
    exact = cluster_enumeration_oracle(a, b, groups_a, groups_b)
    m = 20_000
    p = permutation_test(a, b, groups=(groups_a, groups_b), n_permutations=m, random_state=2)
    assert abs(p - exact) <= mc_tolerance(exact, m)


def test_grouped_respects_cluster_structure():
    # Two clusters per group: only C(4, 2) = 6 relabellings, two of them (the data and its
    # mirror) as extreme as the data, so p is near 1/3 however large the row-level gap.
    a, b = np.r_[np.full(50, 1.0), np.full(50, 1.1)], np.r_[np.full(50, 0.0), np.full(50, 0.1)]
    groups = (np.repeat([1, 2], 50), np.repeat([3, 4], 50))
    m = 6000
    p = permutation_test(a, b, groups=groups, n_permutations=m, random_state=0)
    assert abs(p - 1 / 3) <= mc_tolerance(1 / 3, m)
    assert permutation_test(a, b, n_permutations=m, random_state=0) == 1 / (m + 1)


@HYPOTHESIS
@given(a=samples, b=samples, batch=st.integers(1, 20), data=st.data())
def test_grouped_invariant_to_batch_size(a, b, batch, data):
    ga = data.draw(st.lists(st.integers(0, 3), min_size=len(a), max_size=len(a)))
    gb = data.draw(st.lists(st.integers(10, 13), min_size=len(b), max_size=len(b)))
    kwargs = dict(groups=(ga, gb), n_permutations=53, random_state=3)
    assert permutation_test(a, b, batch_size=batch, **kwargs) == permutation_test(a, b, **kwargs)


# --- many tests at once ------------------------------------------------------------------------


def test_many_grouped_tests_agree_with_enumeration_of_cluster_relabellings():
    """Each row's p-value against the exact share of all cluster relabellings (rational arithmetic)."""
    rng = np.random.default_rng(21)
    groups_a = ["h1"] * 3 + ["h2"] * 1 + ["h3"] * 4 + ["h4"] * 2
    groups_b = ["h5"] * 2 + ["h6"] * 5 + ["h7"] * 1 + ["h8"] * 3 + ["h9"] * 2
    a = np.round(rng.normal(0.6, 1, (4, len(groups_a))), 3)
    b = np.round(rng.normal(0.0, 1, (4, len(groups_b))), 3)
    m = 20_000
    p = permutation_tests(a, b, groups=([groups_a] * 4, [groups_b] * 4), n_permutations=m, random_state=3)
    for i in range(4):
        exact = cluster_enumeration_oracle(a[i], b[i], groups_a, groups_b)
        assert abs(p[i] - exact) <= mc_tolerance(exact, m)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_many_row_level_tests_agree_with_scipy_exact_permutation_test(alternative):
    """Continuous outcomes: each row against scipy.stats.permutation_test's exact enumeration."""
    rng = np.random.default_rng(22)
    a, b = rng.normal(0.7, 1, (3, 6)), rng.normal(0, 1, (3, 7))
    m = 20_000
    p = permutation_tests(a, b, alternative=alternative, n_permutations=m, random_state=4)
    for i in range(3):
        # SciPy's two-sided p doubles the smaller tail; ours counts |gap|: test |gap| one-sided.
        statistic, scipy_alternative = ((abs_mean_gap, "greater") if alternative == "two-sided"
                                        else (mean_gap, alternative))
        exact = stats.permutation_test((a[i], b[i]), statistic, n_resamples=np.inf, vectorized=True,
                                       alternative=scipy_alternative).pvalue
        assert abs(p[i] - exact) <= mc_tolerance(exact, m)


def test_many_tests_equal_one_call_per_row_with_one_generator():
    """Units of many kinds (continuous outcomes) go through permutation_test's own sampler, test
    after test: the same numbers as permutation_test in a loop. Tests of different cluster counts
    (separate samplers) and a constant test (p = 1, no draws) are interleaved."""
    rng = np.random.default_rng(23)
    labels_a = [np.repeat(np.arange(40), 2), np.repeat(np.arange(20), 4), np.repeat(np.arange(40), 2)]
    labels_b = [np.repeat(np.arange(100, 150), 2)] * 3
    a = rng.normal(0.2, 1, (5, 80))
    b = rng.normal(0.0, 1, (5, 100))
    a[3], b[3] = 1.0, 1.0  # constant: p = 1, no draws
    ga = np.array([labels_a[i % 3] for i in range(5)])
    gb = np.array([labels_b[i % 3] for i in range(5)])
    together = permutation_tests(a, b, groups=(ga, gb), n_permutations=301, random_state=np.random.default_rng(7))
    one_at_a_time = np.random.default_rng(7)
    for i in range(5):
        assert together[i] == permutation_test(a[i], b[i], groups=(ga[i], gb[i]), n_permutations=301,
                                               random_state=one_at_a_time)
    assert together[3] == 1.0
    one_at_a_time = np.random.default_rng(8)
    np.testing.assert_array_equal(
        permutation_tests(a, b, n_permutations=99, random_state=np.random.default_rng(8)),
        [permutation_test(a[i], b[i], n_permutations=99, random_state=one_at_a_time) for i in range(5)])
    binary_a, binary_b = rng.integers(0, 2, (4, 12)), rng.integers(0, 2, (4, 16))
    np.testing.assert_array_equal(permutation_tests(binary_a, binary_b),  # 0/1, no groups: exact
                                  [permutation_test(binary_a[i], binary_b[i]) for i in range(4)])


def test_many_tests_of_few_kinds_of_unit_agree_with_permutation_test():
    """0/1 outcomes in households of three (few kinds of unit, drawn as counts of each kind):
    each p-value within Monte Carlo error of permutation_test's own sampler, and of the exact
    test when every household has one person."""
    rng = np.random.default_rng(25)
    a = (rng.random((4, 60)) < 0.3).astype(float)
    b = (rng.random((4, 90)) < 0.45).astype(float)
    groups = (np.tile(np.repeat(np.arange(20), 3), (4, 1)), np.tile(np.repeat(np.arange(20, 50), 3), (4, 1)))
    m = 20_000
    ours = permutation_tests(a, b, groups=groups, n_permutations=m, random_state=6)
    for i in range(4):
        ref = permutation_test(a[i], b[i], groups=(groups[0][i], groups[1][i]), n_permutations=m, random_state=7)
        assert abs(ours[i] - ref) <= mc_tolerance(ref, m, n_estimates=2)
    singletons = permutation_tests(a, b, method="monte_carlo", n_permutations=m, random_state=8)
    for i in range(4):
        exact = permutation_test(a[i], b[i])
        assert abs(singletons[i] - exact) <= mc_tolerance(exact, m)


def test_a_long_permutation_test_says_up_front_how_long_and_what_is_faster(monkeypatch):
    # Issue 47: 5 million against 5 million continuous rows ran 18 minutes with no word. The bound
    # on the work is lowered here so that a small test passes it; whether a call warns depends only
    # on rows x relabellings, never on the machine. The timing uses a generator of its own: the
    # p-value and null distribution are those of a call that does not warn.
    from faircode.significance import _permutation

    rng = np.random.default_rng(26)
    a, b = rng.normal(0.3, 1, 40), rng.normal(0, 1, 60)
    quiet = permutation_test_result(a, b, n_permutations=499, random_state=9)
    monkeypatch.setattr(_permutation, "_LONG_WORK", 100 * 499)
    with pytest.warns(UserWarning, match=r"^the permutation test's 499 relabellings of 100 rows will take about \d+ "
                                         r"seconds on this machine \(a first draw, timed\); faster: n_permutations=999 "
                                         r".*scipy\.stats\.ttest_ind\(a, b, equal_var=False\)") as record:
        loud = permutation_test_result(a, b, n_permutations=499, random_state=9)
    assert record[0].filename == __file__  # it points at the caller, not into faircode
    assert loud.p_value == quiet.p_value
    np.testing.assert_array_equal(loud.null_distribution, quiet.null_distribution)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one relabelling fewer: below the bound, silent
        permutation_test_result(a, b, n_permutations=498, random_state=9)


def test_a_long_bootstrap_says_up_front_how_long_and_the_report_says_it_before_its_test(monkeypatch):
    from faircode.significance import _bootstrap

    rng = np.random.default_rng(27)
    a, b = rng.normal(0.3, 1, 40), rng.normal(0, 1, 50)
    quiet_ci = bootstrap_ci(a, b, n_resamples=499, random_state=10)
    quiet = significance_report(a, b, n_permutations=199, n_resamples=499, random_state=10)
    monkeypatch.setattr(_bootstrap, "_LONG_WORK", 90 * 499)
    faster = r"faster: n_resamples=999 .*scipy\.stats\.ttest_ind\(a, b, equal_var=False\)\.confidence_interval\(\)"
    with pytest.warns(UserWarning, match=r"^bootstrap_ci's 499 bootstrap resamples of 40 and 50 rows will take about "
                                         r"\d+ seconds on this machine .*" + faster):
        assert bootstrap_ci(a, b, n_resamples=499, random_state=10) == quiet_ci
    with pytest.warns(UserWarning, match=r"^significance_report's 499 bootstrap resamples of 40 and 50 rows, after the "
                                         r"permutation test, will take about \d+ seconds") as record:
        loud = significance_report(a, b, n_permutations=199, n_resamples=499, random_state=10)
    assert len(record) == 1 and record[0].filename == __file__  # said once, by the report
    assert loud == quiet


def test_a_large_test_of_few_distinct_values_draws_counts_of_each(monkeypatch):
    # From 2^20 rows, outcomes of at most 32 distinct values (a rating of 1 to 5) are relabelled as
    # multivariate hypergeometric counts of each value: O(values), not O(rows), per relabelling.
    # Lowered bound, small data: the null distribution has the exact permutation mean (0) and
    # variance s^2 (1/n_a + 1/n_b) (s^2 the pooled rows' variance with N - 1), and the p-value is
    # permutation_tests' for the same generator (the same counts).
    from faircode.significance import _permutation

    rng = np.random.default_rng(28)
    a, b = rng.integers(1, 6, 70).astype(float), rng.integers(1, 6, 90).astype(float)
    m = 20_000
    subsets = permutation_test(a, b, n_permutations=m, random_state=12)  # 160 rows: random subsets
    monkeypatch.setattr(_permutation, "_KINDS_FROM_ROWS", 100)
    res = permutation_test_result(a, b, n_permutations=m, random_state=11)
    pooled = np.r_[a, b]
    variance = pooled.var(ddof=1) * (1 / a.size + 1 / b.size)
    assert abs(res.null_distribution.mean()) <= 5 * math.sqrt(variance / m)
    assert res.null_distribution.var() == pytest.approx(variance, rel=5 * math.sqrt(2 / m))
    assert res.p_value == permutation_tests(a[None], b[None], n_permutations=m, random_state=11)[0]
    assert abs(res.p_value - subsets) <= mc_tolerance(subsets, m, n_estimates=2)


def test_many_grouped_tests_hold_their_level_under_the_null():
    """Clustered data with no true gap: the share of p < 0.1 over 400 tests is within binomial error."""
    rng = np.random.default_rng(24)
    n_tests, alpha = 400, 0.1
    shared = rng.normal(0, 2, (n_tests, 40))  # 40 clusters of 3 rows, strongly alike within
    values = (rng.random((n_tests, 40, 3)) < 1 / (1 + np.exp(-shared[:, :, None]))).astype(float)
    a, b = values[:, :20].reshape(n_tests, 60), values[:, 20:].reshape(n_tests, 60)
    labels = np.repeat(np.arange(40), 3)
    groups = (np.tile(labels[:60], (n_tests, 1)), np.tile(labels[60:], (n_tests, 1)))
    p = permutation_tests(a, b, groups=groups, n_permutations=199, random_state=5)
    assert abs(np.mean(p < alpha) - alpha) <= Z_TOL * math.sqrt(alpha * (1 - alpha) / n_tests)
    # ... and the row-wise test on the same data is not valid: far more false alarms
    assert np.mean(permutation_tests(a, b) < alpha) > alpha + Z_TOL * math.sqrt(alpha * (1 - alpha) / n_tests)


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((np.zeros(5), np.zeros((1, 5))), {}, ValueError, "`a` must be 2-D"),
    (([[1, 0], [1]], [[0, 1], [0]]), {}, ValueError, "`a` must be 2-D with rows of one length"),
    ((np.zeros((2, 5)), np.zeros((3, 5))), {}, ValueError, "one row per test each; got 2 and 3"),
    ((np.zeros((2, 0)), np.zeros((2, 5))), {}, ValueError, r"`a\[0\]` must contain at least one row"),
    ((np.array([[0.0, np.nan], [1.0, 0.0]]), np.zeros((2, 3))), {}, ValueError, r"`a\[0\]` must not contain NaN"),
    ((np.array([["x", "y"]]), np.zeros((1, 3))), {}, TypeError, r"`a\[0\]` must be numeric"),
    ((np.zeros((2, 2)), np.zeros((2, 3))), {"groups": (np.zeros((2, 3)), np.ones((2, 3)))}, ValueError,
     r"`groups\[0\]` must have shape \(2, 2\)"),
    ((np.zeros((2, 2)), np.zeros((2, 3))), {"groups": (np.array([[1, 2], [1, 2]]), np.array([[3, 4, 5], [2, 4, 5]]))},
     ValueError, "test 1: `groups`: a cluster must lie wholly in `a` or wholly in `b`"),
    ((np.zeros((2, 2)), np.zeros((2, 3))), {"groups": [np.zeros((2, 2))]}, TypeError, "must be a pair"),
    ((np.zeros((2, 2)), np.zeros((2, 3))), {"method": "exact", "groups": (np.zeros((2, 2)), np.ones((2, 3)))},
     ValueError, "not available with `groups`"),
    ((np.full((2, 2), 0.5), np.zeros((2, 3))), {"method": "exact"}, ValueError, "row 0 has others"),
    ((np.zeros((2, 2)), np.zeros((2, 3))), {"n_permutations": 0}, ValueError, "`n_permutations` must be a positive"),
    ((np.zeros((2, 2)), np.zeros((2, 3))), {"alternative": "both"}, ValueError, "alternative"),
])
def test_many_tests_reject_bad_input(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        permutation_tests(*args, **kwargs)


# --- bootstrap interval ----------------------------------------------------------------------------


def _our_distribution(a, b, random_state, groups=None, n_resamples=2000):
    a, b = np.asarray(a, float), np.asarray(b, float)
    codes = sig._as_groups(groups, a.size, b.size)
    sampler_a, sampler_b = sig._bootstrap_setup(a, b, codes, random_state)
    return sig._bootstrap_gaps(sampler_a, sampler_b, n_resamples, None)


CI_DATA = {
    "continuous": lambda rng: (rng.gamma(2.0, 1.0, 40), rng.normal(1.5, 1.0, 55)),
    "binary": lambda rng: (rng.binomial(1, 0.3, 70).astype(float), rng.binomial(1, 0.45, 53).astype(float)),
    "mixed": lambda rng: (rng.binomial(1, 0.3, 31).astype(float), rng.exponential(0.5, 64)),
}


@pytest.mark.parametrize("kind", sorted(CI_DATA))
@pytest.mark.parametrize(("method", "scipy_method"), [("percentile", "percentile"), ("bca", "BCa")])
def test_interval_formula_matches_scipy_on_the_same_bootstrap_distribution(kind, method, scipy_method):
    a, b = CI_DATA[kind](np.random.default_rng(20))
    dist = _our_distribution(a, b, random_state=4)
    scipy_ci = stats.bootstrap(
        (a, b), mean_gap, n_resamples=0, paired=False, method=scipy_method, confidence_level=0.9,
        bootstrap_result=SimpleNamespace(bootstrap_distribution=dist),
    ).confidence_interval
    ours = bootstrap_ci(a, b, confidence_level=0.9, n_resamples=2000, method=method, random_state=4)
    np.testing.assert_allclose(ours, (scipy_ci.low, scipy_ci.high), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_cluster_bootstrap_matches_scipy_on_cluster_means_for_equal_sized_clusters(method):
    # With equal-sized clusters the ratio estimator is the mean of cluster means, and leaving out
    # one cluster is leaving out one cluster mean: scipy on the cluster means is the oracle.
    rng = np.random.default_rng(21)
    a = rng.normal(0.0, 1.0, (12, 4)) + rng.normal(0, 1, (12, 1))  # 12 clusters x 4 rows
    b = rng.normal(0.5, 1.0, (15, 4)) + rng.normal(0, 1, (15, 1))
    groups = (np.repeat(np.arange(12), 4), np.repeat(np.arange(100, 115), 4))
    dist = _our_distribution(a.ravel(), b.ravel(), random_state=6, groups=groups)
    scipy_ci = stats.bootstrap(
        (a.mean(axis=1), b.mean(axis=1)), mean_gap, n_resamples=0, paired=False,
        method="BCa" if method == "bca" else "percentile",
        bootstrap_result=SimpleNamespace(bootstrap_distribution=dist),
    ).confidence_interval
    ours = bootstrap_ci(a.ravel(), b.ravel(), n_resamples=2000, method=method, random_state=6, groups=groups)
    np.testing.assert_allclose(ours, (scipy_ci.low, scipy_ci.high), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", sorted(CI_DATA))
@pytest.mark.parametrize(("method", "scipy_method"), [("percentile", "percentile"), ("bca", "BCa")])
def test_interval_agrees_with_scipy_bootstrap_within_monte_carlo_error(kind, method, scipy_method):
    # Independent streams: endpoints differ by Monte Carlo error only. The sd of an estimated
    # q-quantile from B draws is sqrt(q (1 - q) / B) / f(x_q); f from a normal with the bootstrap
    # standard error (the gap of means is close to normal at these sizes).
    a, b = CI_DATA[kind](np.random.default_rng(22))
    n_res, level = 4000, 0.95
    ours = bootstrap_ci(a, b, n_resamples=n_res, method=method, confidence_level=level, random_state=1)
    ref = stats.bootstrap(
        (a, b), mean_gap, n_resamples=n_res, paired=False, method=scipy_method, confidence_level=level, rng=2
    )
    q = (1 - level) / 2
    density = stats.norm.pdf(stats.norm.ppf(q)) / ref.standard_error
    tol = Z_TOL * math.sqrt(2 * q * (1 - q) / n_res) / density
    assert abs(ours.low - ref.confidence_interval.low) <= tol
    assert abs(ours.high - ref.confidence_interval.high) <= tol


@HYPOTHESIS
@given(a=samples, b=samples, batch=st.integers(1, 50), method=st.sampled_from(["percentile", "bca"]))
def test_bootstrap_invariant_to_batch_size(a, b, batch, method):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateSampleWarning)
        full = bootstrap_ci(a, b, n_resamples=101, method=method, random_state=2)
        batched = bootstrap_ci(a, b, n_resamples=101, method=method, random_state=2, batch_size=batch)
    # Same resamples whatever the batch size; a mean over a differently shaped array may differ in
    # its last bit (NumPy's SIMD summation depends on memory layout), so equal to rounding.
    assert tuple(batched) == pytest.approx(tuple(full), rel=1e-12, abs=1e-12)
    assert not any(map(math.isnan, full))


def test_coverage_at_10_against_10_rows_is_the_figure_the_docstrings_give():
    # Issue 47: _intervals.py said the bootstrap "covers about 65%". Exact coverage at rates 5% and
    # 20%: binomial probabilities summed over all 11 x 11 pairs of counts (an interval depends on
    # the data only through them). The ideal bootstrap's quantiles, from the exact convolution of
    # two binomials, are an independent check on the resampled ones.
    p_a, p_b, truth = 0.05, 0.2, 0.05 - 0.2
    values = np.arange(11)

    def ideal(k_a, k_b):
        gaps = np.round((values[:, None] - values[None, :]) / 10, 12).ravel()
        weights = np.outer(stats.binom.pmf(values, 10, k_a / 10), stats.binom.pmf(values, 10, k_b / 10)).ravel()
        order = np.argsort(gaps, kind="stable")
        cdf = np.cumsum(weights[order])
        return gaps[order][np.searchsorted(cdf, 0.025 - 1e-12)], gaps[order][np.searchsorted(cdf, 0.975 - 1e-12)]

    covered = {"ideal": 0.0, "percentile": 0.0, "newcombe": 0.0}
    for k_a, k_b in itertools.product(range(11), repeat=2):
        a, b = binary(k_a, 10), binary(k_b, 10)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateSampleWarning)  # an all-0 group cannot vary
            intervals = {"ideal": ideal(k_a, k_b), "percentile": bootstrap_ci(a, b, random_state=0),
                         "newcombe": proportion_difference_ci(a, b)}
        weight = stats.binom.pmf(k_a, 10, p_a) * stats.binom.pmf(k_b, 10, p_b)
        for name, (low, high) in intervals.items():
            covered[name] += weight * (low <= truth <= high)
    assert round(covered["ideal"], 3) == round(covered["percentile"], 3) == 0.870
    assert round(covered["newcombe"], 3) == 0.986


def test_bootstrap_returns_named_tuple_that_unpacks():
    ci = bootstrap_ci([0.0, 1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0], n_resamples=200, random_state=0)
    low, high = ci
    assert isinstance(ci, ConfidenceInterval) and (ci.low, ci.high) == (low, high) and low <= high


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize(
    ("a", "b", "gap"),
    [([0.0] * 10, [0.0] * 15, 0.0), ([1.0] * 4, [0.0] * 7, 1.0), ([3.5], [2.0], 1.5), ([2.0] * 3, [5.0], -3.0)],
)
def test_fully_degenerate_samples_warn_and_give_zero_width_interval(a, b, gap, method):
    with pytest.warns(DegenerateSampleWarning, match="zero width"):
        ci = bootstrap_ci(a, b, n_resamples=500, method=method, random_state=0)
    assert ci == (gap, gap)


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("flat", [[0.0] * 20, [1.0]])
def test_one_degenerate_group_warns_and_interval_reflects_the_other_group(flat, method):
    b = np.random.default_rng(3).binomial(1, 0.4, 60).astype(float)
    with pytest.warns(DegenerateSampleWarning, match="group `a` cannot vary"):
        ci = bootstrap_ci(flat, b, n_resamples=2000, method=method, random_state=0)
    # Oracle: a's mean is fixed, so the interval is flat[0] minus scipy's interval for mean(b).
    ref = stats.bootstrap(
        (b,), np.mean, n_resamples=2000, method="percentile" if method == "percentile" else "BCa", rng=1
    ).confidence_interval
    se = b.std(ddof=1) / math.sqrt(b.size)
    tol = Z_TOL * math.sqrt(2 * 0.025 * 0.975 / 2000) / (stats.norm.pdf(1.96) / se)
    assert np.all(np.isfinite(ci))
    assert abs(ci.low - (flat[0] - ref.high)) <= tol
    assert abs(ci.high - (flat[0] - ref.low)) <= tol


def test_bca_falls_back_to_percentile_when_correction_is_undefined():
    gaps = np.linspace(1.0, 2.0, 101)  # the observed gap 0.5 lies below every resample
    assert sig._bca_levels(gaps, 0.5, np.ones(3), np.ones(3), 3, 3, 0.05, 0.0) is None
    sampler = SimpleNamespace(jackknife_u=lambda: np.ones(3), units=3)
    with pytest.warns(DegenerateSampleWarning, match="BCa correction is undefined"):
        ci = sig._interval_from_gaps(gaps, 0.5, sampler, sampler, 0.95, "bca", 1.0)
    np.testing.assert_allclose(ci, [1.025, 1.975], rtol=1e-12)


# --- report --------------------------------------------------------------------------------------


def test_report_fields_agree_with_the_functions_it_summarises():
    rng = np.random.default_rng(30)
    a, b = rng.normal(0.4, 1, 45), rng.normal(0, 1, 70)
    rep = significance_report(a, b, n_permutations=999, n_resamples=999, random_state=5, alpha=0.1)
    assert rep.p_value == permutation_test(a, b, n_permutations=999, random_state=5)
    assert rep.gap == pytest.approx(a.mean() - b.mean(), rel=1e-12)
    assert (rep.mean_a, rep.mean_b) == (pytest.approx(a.mean()), pytest.approx(b.mean()))
    assert (rep.n_a, rep.n_b, rep.alpha, rep.confidence_level) == (45, 70, 0.1, 0.95)
    assert rep.significant == (rep.p_value < 0.1)
    assert rep.ci_low < rep.gap < rep.ci_high
    assert (rep.method, rep.n_permutations, rep.n_resamples, rep.ci_method) == ("monte_carlo", 999, 999, "percentile")
    assert rep.p_value_floor == 1 / 1000 and not rep.small_sample_warning
    with pytest.raises(dataclasses.FrozenInstanceError):
        rep.gap = 0.0


@pytest.mark.parametrize(("k_a", "n_a", "k_b", "n_b"), [(1, 10, 2, 10), (0, 63, 0, 116), (40, 100, 60, 100), (3, 12, 30, 40)])
def test_report_of_two_rates_defaults_to_the_newcombe_score_interval(k_a, n_a, k_b, n_b):
    from statsmodels.stats.proportion import confint_proportions_2indep

    a, b = binary(k_a, n_a), binary(k_b, n_b)
    rep = significance_report(a, b, random_state=0)
    low, high = confint_proportions_2indep(k_a, n_a, k_b, n_b, method="newcomb", compare="diff", alpha=0.05)
    assert (rep.ci_low, rep.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert (rep.ci_low, rep.ci_high) == tuple(proportion_difference_ci(a, b))
    assert rep.ci_method == "newcombe" and rep.n_resamples is None
    assert "newcombe score interval" in repr(rep)
    # The seed API is unchanged: the p-value is the permutation test's, drawn from the same seed.
    assert rep.p_value == permutation_test(a, b, random_state=0)
    assert (rep.gap, rep.significant) == (pytest.approx(k_a / n_a - k_b / n_b), rep.p_value < 0.05)
    narrow = significance_report(a, b, confidence_level=0.8, random_state=0)
    assert (narrow.ci_low, narrow.ci_high) == tuple(proportion_difference_ci(a, b, confidence_level=0.8))


def test_report_bootstraps_other_outcomes_clusters_and_on_request():
    rng = np.random.default_rng(31)
    x, y = rng.normal(0.3, 1, 40), rng.normal(0, 1, 50)
    cont = significance_report(x, y, n_resamples=300, random_state=1)
    assert cont.ci_method == "percentile" and cont.n_resamples == 300
    a, b = binary(20, 60), binary(30, 60)
    asked = significance_report(a, b, ci_method="percentile", n_resamples=300, random_state=1)
    assert asked.ci_method == "percentile" and asked.n_resamples == 300
    assert "percentile bootstrap, 300 resamples" in repr(asked)
    assert (asked.ci_low, asked.ci_high) != tuple(proportion_difference_ci(a, b))
    groups = (np.repeat(np.arange(6), 10), np.repeat(np.arange(6, 12), 10))
    clustered = significance_report(a, b, groups=groups, n_permutations=200, n_resamples=200, random_state=0)
    assert clustered.ci_method == "percentile" and clustered.method == "grouped_monte_carlo"


@pytest.mark.parametrize("unit", [2.0**1023, 2.0**400, 2.0**-600])
def test_outcomes_near_the_largest_float_give_the_results_of_a_change_of_unit(unit):
    # Issue 47: outcomes around 1e308 gave gap=+inf, "significant" and a false "cannot vary"
    # warning (sums overflow; BCa's cubes overflow from 1e103, its squares underflow below 1e-154).
    # A change of unit by a power of two is exact: every p-value must be the same, every gap,
    # mean and interval end the same times `unit`, and nothing may warn (warnings are errors here).
    rng = np.random.default_rng(47)
    a, b = rng.uniform(0.5, 1.7, 40), rng.uniform(0.5, 1.7, 55)
    for ci_method in ("percentile", "bca"):
        small = significance_report(a, b, n_permutations=999, n_resamples=999, ci_method=ci_method, random_state=1)
        large = significance_report(a * unit, b * unit, n_permutations=999, n_resamples=999, ci_method=ci_method,
                                    random_state=1)
        assert (large.p_value, large.significant) == (small.p_value, small.significant)
        for field in ("gap", "ci_low", "ci_high", "mean_a", "mean_b"):
            assert getattr(large, field) == getattr(small, field) * unit, field
    test_small = permutation_test_result(a, b, n_permutations=199, random_state=2)
    test_large = permutation_test_result(a * unit, b * unit, n_permutations=199, random_state=2)
    assert test_large.p_value == test_small.p_value and test_large.statistic == test_small.statistic * unit
    np.testing.assert_array_equal(test_large.null_distribution, test_small.null_distribution * unit)
    assert tuple(bootstrap_ci(a * unit, b * unit, method="bca", n_resamples=499, random_state=3)) == tuple(
        v * unit for v in bootstrap_ci(a, b, method="bca", n_resamples=499, random_state=3))
    many = [permutation_tests(np.stack([a, a / 2]) * u, np.stack([b, b]) * u, n_permutations=99, random_state=4)
            for u in (1.0, unit)]
    np.testing.assert_array_equal(many[1], many[0])


def test_k_group_and_stratified_tests_follow_a_change_of_unit_near_the_largest_float():
    from faircode.significance import max_gap_test, max_t_test, pairwise_tests, stratified_permutation_test

    rng = np.random.default_rng(48)
    x, groups, strata = rng.uniform(0.5, 1.7, 90), np.repeat([0, 1, 2], 30), rng.integers(0, 3, 90)
    unit = 2.0**1023
    for test, field in ((lambda y: max_gap_test(y, groups, n_permutations=99, random_state=0), "statistic"),
                        (lambda y: max_t_test(y, groups, n_permutations=99, random_state=0), "means"),
                        (lambda y: pairwise_tests(y, groups, n_permutations=99, random_state=0)[0], "gap"),
                        (lambda y: stratified_permutation_test(y, groups == 0, strata, n_permutations=99,
                                                               random_state=0), "statistic")):
        small, large = test(x), test(x * unit)
        assert large.p_value == small.p_value
        assert np.all(np.asarray(getattr(large, field)) == np.asarray(getattr(small, field)) * unit), field


def test_outcomes_spanning_more_than_the_largest_float_are_refused_naming_the_arguments():
    with pytest.raises(ValueError, match=r"`a` and `b`: the outcomes run from -1\.5e\+308 to 1\.5e\+308, a span "
                                         r"beyond the largest float"):
        significance_report([-1.5e308, 1.0, 2.0], [1.5e308, 3.0])
    with pytest.raises(ValueError, match=r"`a\[1\]` and `b\[1\]`: the outcomes run from"):
        permutation_tests([[1.0, 2.0], [-1.5e308, 1.0]], [[3.0, 4.0], [1.5e308, 2.0]])


def test_report_repr_is_readable():
    rep = significance_report(binary(40, 100), binary(60, 100), n_resamples=500, random_state=0)
    text = repr(rep)
    assert text.startswith("SignificanceReport(gap=-0.2")
    for piece in ("95% CI [", "p = ", "exact", "significant=True", "n_a=100", "small_sample_warning=False"):
        assert piece in text


@pytest.mark.parametrize(("n_a", "flag"), [(SMALL_SAMPLE_THRESHOLD - 1, True), (SMALL_SAMPLE_THRESHOLD, False)])
def test_small_sample_warning_threshold(n_a, flag):
    a = binary(n_a // 2, n_a)
    rep = significance_report(a, binary(40, 100), n_resamples=200, random_state=0)
    assert rep.small_sample_warning is flag
    assert significance_report(binary(40, 100), a, n_resamples=200, random_state=0).small_sample_warning is flag


def test_report_says_monte_carlo_minimum():
    rep = significance_report(np.arange(50.0, 90.0), np.arange(40.0), n_permutations=999, n_resamples=200, random_state=0)
    assert rep.is_monte_carlo_minimum and rep.p_value == 1 / 1000
    assert rep.format_p_value() == "p = 1/1,000"
    assert "p = 1/1,000" in repr(rep)


def test_report_grouped_uses_cluster_methods():
    a, b = np.r_[np.full(50, 1.0), np.full(50, 1.1)], np.r_[np.full(50, 0.0), np.full(50, 0.1)]
    groups = (np.repeat([1, 2], 50), np.repeat([3, 4], 50))
    rep = significance_report(a, b, groups=groups, n_permutations=500, n_resamples=500, random_state=0)
    assert rep.method == "grouped_monte_carlo" and not rep.significant
    # A cluster bootstrap of 2 clusters per group gives cluster means {1, 1.05, 1.1} - {0, .05, .1}.
    assert rep.ci_low == pytest.approx(0.9, abs=1e-12) and rep.ci_high == pytest.approx(1.1, abs=1e-12)


# --- multiple comparisons --------------------------------------------------------------------------


p_lists = st.lists(st.one_of(st.floats(0, 1), st.just(float("nan"))), min_size=0, max_size=30)


@HYPOTHESIS
@given(p=p_lists, method=st.sampled_from(["holm", "bh", "fdr_bh"]))
def test_adjustments_equal_statsmodels_multipletests(p, method):
    p = np.array(p, dtype=float)
    out = adjust_p_values(p, method=method)
    assert out.shape == p.shape
    np.testing.assert_array_equal(np.isnan(out), np.isnan(p))
    valid = ~np.isnan(p)
    if valid.any():
        sm_method = "holm" if method == "holm" else "fdr_bh"
        expected = multipletests(p[valid], method=sm_method)[1]
        np.testing.assert_allclose(out[valid], expected, rtol=1e-12, atol=1e-15)


def test_adjustment_keeps_shape_and_nan_is_not_a_test():
    p = np.array([[0.01, np.nan], [0.04, 0.03]])
    out = adjust_p_values(p, method="holm")
    assert out.shape == (2, 2) and np.isnan(out[0, 1])
    # Three tests, not four: Holm multiplies the smallest by 3.
    assert out[0, 0] == pytest.approx(0.03)
    np.testing.assert_allclose(adjust_p_values(p, method="fdr_bh"), adjust_p_values(p, method="bh"))
    assert adjust_p_values([]).shape == (0,)


# --- validation ----------------------------------------------------------------------------------

GOOD = np.array([0.0, 1.0, 0.5])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(a=[]), ValueError, "`a` must contain at least one row"),
        (dict(b=np.array([])), ValueError, "`b` must contain at least one row"),
        (dict(a=[1.0, np.nan]), ValueError, "`a` must not contain NaN or infinite values"),
        (dict(b=[1.0, np.inf]), ValueError, "`b` must not contain NaN or infinite values"),
        (dict(a=["x", "y"]), TypeError, "`a` must be numeric"),
        (dict(a=np.array(["1", 2], dtype=object)), TypeError, "`a` must contain numbers"),
        (dict(a="101"), TypeError, "`a` must be a 1-D array of numbers"),
        (dict(a=[1 + 2j]), TypeError, "`a` must be numeric"),
        (dict(a=[[1.0, 2.0]]), ValueError, r"`a` must be 1-D .* got shape \(1, 2\)"),
        (dict(b=3.0), ValueError, r"`b` must be 1-D .* got shape \(\)"),
        (dict(a=[1.0, None]), ValueError, "`a` must not contain NaN"),
        (dict(n_permutations=0), ValueError, r"`n_permutations` must be a positive integer \(>= 1\)"),
        (dict(n_permutations=2.5), TypeError, "`n_permutations` must be a positive integer"),
        (dict(n_permutations=True), TypeError, "`n_permutations` must be a positive integer"),
        (dict(alternative="two_sided"), ValueError, "`alternative` must be one of 'two-sided', 'less', 'greater'"),
        (dict(method="permutation"), ValueError, "`method` must be one of 'auto', 'exact', 'monte_carlo'"),
        (dict(batch_size=0), ValueError, "`batch_size` must be a positive integer"),
        (dict(random_state="seed"), TypeError, "`random_state` must be None"),
        (dict(groups=np.zeros((2, 3))), TypeError, r"`groups` must be a pair \(groups_a, groups_b\)"),
        (dict(groups=([1, 1], [2, 2, 2])), ValueError, r"`groups\[0\]` must have one label per row of its group \(3\)"),
        (dict(groups=([1, 1, 2], [2, 3, 3])), ValueError, "a cluster must lie wholly in `a` or wholly in `b`"),
        (dict(groups=([1.0, np.nan, 2.0], [3, 3, 3])), ValueError,
         r"`groups\[0\]` must not contain NaN cluster labels; found 1 \(first at index 1\)"),
        (dict(groups=([1, 1, 2], ["x", None, "y"])), ValueError,
         r"`groups\[1\]` must not contain missing cluster labels \(None/NA/NaN\); found 1 \(first at index 1\)"),
        # Labels that cannot be sorted together say which kinds they mix (issue 47).
        (dict(groups=(np.array([1, "x", 1], dtype=object), [3, 3, 3])), TypeError,
         r"`groups\[0\]` labels must be mutually comparable .*; found int and str labels"),
        (dict(groups=(np.array([1, 1, 2], dtype=object), np.array(["x", "x", "y"], dtype=object))), TypeError,
         r"mutually comparable across both groups; found int labels in `groups\[0\]` and str in `groups\[1\]`"),
        (dict(groups=([1, 1, 2], [3, 3, 3]), method="exact"), ValueError, "not available with `groups`"),
    ],
)
def test_permutation_test_validation(kwargs, error, match):
    args = dict(a=GOOD, b=GOOD, n_permutations=10, random_state=0) | kwargs
    with pytest.raises(error, match=match):
        permutation_test(args.pop("a"), args.pop("b"), **args)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(confidence_level=0.0), ValueError, "`confidence_level` must be strictly between 0 and 1"),
        (dict(confidence_level=1.0), ValueError, "`confidence_level` must be strictly between 0 and 1"),
        (dict(confidence_level=95), ValueError, "`confidence_level` must be strictly between 0 and 1"),
        (dict(confidence_level="0.95"), TypeError, "`confidence_level` must be a number"),
        (dict(n_resamples=0), ValueError, "`n_resamples` must be a positive integer"),
        (dict(method="basic"), ValueError, "`method` must be one of 'percentile', 'bca'"),
        (dict(a=[]), ValueError, "`a` must contain at least one row"),
    ],
)
def test_bootstrap_ci_validation(kwargs, error, match):
    args = dict(a=GOOD, b=GOOD, n_resamples=10, random_state=0) | kwargs
    with pytest.raises(error, match=match):
        bootstrap_ci(args.pop("a"), args.pop("b"), **args)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(alpha=0.0), ValueError, "`alpha` must be strictly between 0 and 1"),
        (dict(alpha=1.5), ValueError, "`alpha` must be strictly between 0 and 1"),
        (dict(ci_method="BCa"), ValueError, "`ci_method` must be one of 'auto', 'newcombe', 'percentile', 'bca'"),
        (dict(ci_method="newcombe", a=[0.5, 1.0, 0.0]), ValueError, "`ci_method='newcombe'` needs 0/1 outcomes"),
        (dict(ci_method="newcombe", a=[0, 1, 1], b=[1, 0, 0], groups=([1, 1, 2], [3, 3, 4])), ValueError,
         "`ci_method='newcombe'` .* not available with `groups`"),
        (dict(n_permutations=-5), ValueError, "`n_permutations` must be a positive integer"),
        (dict(confidence_level=-0.1), ValueError, "`confidence_level` must be strictly between 0 and 1"),
    ],
)
def test_significance_report_validation(kwargs, error, match):
    args = dict(a=GOOD, b=GOOD, n_resamples=10, n_permutations=10, random_state=0) | kwargs
    with pytest.raises(error, match=match):
        significance_report(args.pop("a"), args.pop("b"), **args)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: adjust_p_values([0.1, 0.2], method="bonferroni"), ValueError, "`method` must be one of 'holm', 'bh', 'fdr_bh'"),
        (lambda: adjust_p_values([0.1, 1.2]), ValueError, r"`p_values` must lie in \[0, 1\]"),
        (lambda: adjust_p_values([0.1, -np.inf]), ValueError, r"`p_values` must lie in \[0, 1\]"),
        (lambda: adjust_p_values(["0.1"]), TypeError, "`p_values` must be numeric"),
        (lambda: format_p_value(1.5), ValueError, r"`p` must lie in \[0, 1\]"),
        (lambda: format_p_value("0.1"), TypeError, r"`p` must be a number in \[0, 1\]"),
        (lambda: format_p_value(0.1, floor=2.0), ValueError, r"`floor` must lie in \[0, 1\]"),
        (lambda: format_p_value(0.1, digits=0), ValueError, "`digits` must be a positive integer"),
    ],
)
def test_adjust_and_format_validation(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_accepts_pandas_series_and_rejects_missing_values():
    pd = pytest.importorskip("pandas")
    a = pd.Series([1, 0, 1, 1], dtype="Int64")
    b = pd.Series([0.0, 0.0, 1.0])
    assert permutation_test(a, b) == pytest.approx(permutation_test([1, 0, 1, 1], [0, 0, 1]))
    with pytest.raises(ValueError, match="`a` must not contain NaN"):
        permutation_test(pd.Series([1.0, None], dtype="Float64"), b)
    with pytest.raises(TypeError, match="`b`"):
        permutation_test(a, pd.Series(["x", "y"]))


# ---------------------------------------------------------------------------------------------
# Score intervals for 0/1 outcomes (the results table's intervals)
# ---------------------------------------------------------------------------------------------


def _ones(k, n):
    return np.r_[np.ones(k), np.zeros(n - k)]


_COUNTS = [(k1, n1, k2, n2) for n1 in (1, 3, 10, 63) for n2 in (1, 4, 10, 116)
           for k1 in sorted({0, 1, n1 // 2, n1 - 1, n1}) for k2 in sorted({0, 1, n2 // 3, n2 - 1, n2})]


@pytest.mark.parametrize(("method", "sm_method"), [("newcombe", "newcomb"), ("agresti_caffo", "agresti-caffo")])
def test_difference_interval_equals_statsmodels(method, sm_method):
    from statsmodels.stats.proportion import confint_proportions_2indep

    for k1, n1, k2, n2 in _COUNTS:
        for level in (0.9, 0.95):
            ours = sig.proportion_difference_ci(_ones(k1, n1), _ones(k2, n2), confidence_level=level, method=method)
            low, high = confint_proportions_2indep(k1, n1, k2, n2, method=sm_method, alpha=1 - level)
            # Agresti-Caffo's Wald step can leave [-1, 1]; ours is clipped to the range of a difference.
            assert ours == pytest.approx((max(low, -1.0), min(high, 1.0)), abs=1e-12), (k1, n1, k2, n2)
            assert ours.low < ours.high


def test_difference_interval_regression_zero_width_for_zero_counts():
    """0/63 against 0/116 read as "[0, 0]" under the bootstrap; the score interval has width."""
    low, high = sig.proportion_difference_ci(np.zeros(63), np.zeros(116))
    assert low < 0 < high
    # Closed form: Wilson's upper limit for 0/n is z^2 / (n + z^2).
    z2 = stats.norm.ppf(0.975) ** 2
    assert (low, high) == pytest.approx((-z2 / (116 + z2), z2 / (63 + z2)))


def test_ratio_interval_equals_statsmodels_score_inside_the_boundary():
    from statsmodels.stats.proportion import confint_proportions_2indep

    for k1, n1, k2, n2 in _COUNTS:
        if not (0 < k1 < n1 and 0 < k2 < n2):
            continue  # statsmodels' cubic solution picks the wrong root at a rate of 0 or 1
        low, high = sig.proportion_ratio_ci(_ones(k1, n1), _ones(k2, n2), method="koopman")
        sm_low, sm_high = confint_proportions_2indep(k1, n1, k2, n2, compare="ratio", method="score",
                                                     correction=False)
        assert (low, high) == pytest.approx((sm_low, sm_high), rel=1e-6), (k1, n1, k2, n2)


def _restricted_score(theta, k1, n1, k2, n2):
    """The score statistic with the restricted MLE found numerically (independent of the code)."""
    from scipy.optimize import minimize_scalar

    def nll(p2):
        p1 = theta * p2
        return -(stats.binom.logpmf(k1, n1, p1) + stats.binom.logpmf(k2, n2, p2))

    upper = min(1.0, 1.0 / theta)
    p2 = minimize_scalar(nll, bounds=(1e-12, upper - 1e-12), method="bounded",
                         options={"xatol": 1e-13}).x
    p1 = theta * p2
    var = p1 * (1 - p1) / n1 + theta**2 * p2 * (1 - p2) / n2
    return (k1 / n1 - theta * k2 / n2) ** 2 / var


@pytest.mark.parametrize(("k1", "n1", "k2", "n2"), [(1, 1, 1, 4), (10, 10, 10, 10), (3, 10, 10, 10), (9, 10, 4, 10)])
def test_ratio_interval_limits_solve_the_score_equation_at_a_rate_of_one(k1, n1, k2, n2):
    low, high = sig.proportion_ratio_ci(_ones(k1, n1), _ones(k2, n2), method="koopman")
    z2 = stats.norm.ppf(0.975) ** 2
    estimate = (k1 / n1) / (k2 / n2)
    assert low < estimate < high
    assert _restricted_score(low, k1, n1, k2, n2) == pytest.approx(z2, rel=1e-4)
    assert _restricted_score(high, k1, n1, k2, n2) == pytest.approx(z2, rel=1e-4)


def _mover_r_by_hand(k1, n1, k2, n2):
    """MOVER-R (Donner and Zou 2012, eq. 9) over statsmodels' Wilson intervals, written out."""
    from statsmodels.stats.proportion import proportion_confint

    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = proportion_confint(k1, n1, alpha=0.05, method="wilson")
    l2, u2 = proportion_confint(k2, n2, alpha=0.05, method="wilson")
    low = (p1 * p2 - np.sqrt((p1 * p2) ** 2 - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2))) / (u2 * (2 * p2 - u2))
    high = (p1 * p2 + np.sqrt((p1 * p2) ** 2 - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2))) / (l2 * (2 * p2 - l2))
    return low, high


def test_ratio_interval_default_is_mover_r_over_wilson_limits():
    for k1, n1, k2, n2 in _COUNTS:
        if not (0 < k1 <= n1 and 0 < k2 <= n2):
            continue  # the zero counts are pinned below
        low, high = sig.proportion_ratio_ci(_ones(k1, n1), _ones(k2, n2))
        assert (low, high) == pytest.approx(_mover_r_by_hand(k1, n1, k2, n2), rel=1e-9), (k1, n1, k2, n2)


@pytest.mark.parametrize("method", ["mover", "koopman"])
def test_ratio_interval_at_zero_counts(method):
    low, high = sig.proportion_ratio_ci(np.zeros(10), _ones(3, 10), method=method)
    assert low == 0.0 and 0 < high < np.inf
    low, high = sig.proportion_ratio_ci(_ones(3, 10), np.zeros(10), method=method)
    assert 0 < low and high == np.inf
    assert all(np.isnan(sig.proportion_ratio_ci(np.zeros(5), np.zeros(7), method=method)))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: sig.proportion_difference_ci([0, 2], [1, 0]), r"`a` must hold only 0 and 1 .*; found 2 at index 1$"),
        # The value as written, not NumPy's repr "np.float64(0.5)" (issue 47).
        (lambda: sig.proportion_difference_ci([0, 1], [1, 0.5]), r"`b` must hold only 0 and 1 .*; found 0.5 at index 1$"),
        (lambda: sig.proportion_difference_ci([0, 1], [1, 0], method="wald"), r"`method` must be one of"),
        (lambda: sig.proportion_ratio_ci([0, 1], [], confidence_level=0.9), r"`b` must contain at least one row"),
        (lambda: sig.proportion_ratio_ci([0, 1], [1], confidence_level=1.0), r"`confidence_level` must be strictly"),
        (lambda: sig.proportion_ratio_ci([0, 1], [1], method="wald"), r"`method` must be one of"),
        (lambda: sig.bootstrap_ratio_ci([0, 1], [1], n_resamples=0), r"`n_resamples` must be a positive integer"),
    ],
)
def test_score_interval_validation_messages(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bootstrap_ratio_matches_resampling_rows():
    """The binomial shortcut has the distribution of resampling 0/1 rows with replacement."""
    rng = np.random.default_rng(0)
    a = (rng.random(300) < 0.3).astype(np.int8)
    b = (rng.random(500) < 0.5).astype(np.int8)
    low, high = sig.bootstrap_ratio_ci(a, b, n_resamples=20000, random_state=1)
    ia = rng.integers(0, a.size, size=(20000, a.size))
    ib = rng.integers(0, b.size, size=(20000, b.size))
    brute = a[ia].mean(axis=1) / b[ib].mean(axis=1)
    lo_b, hi_b = np.quantile(brute, [0.025, 0.975])
    assert low == pytest.approx(lo_b, abs=0.02) and high == pytest.approx(hi_b, abs=0.02)


def test_bootstrap_ratio_zero_denominators_ranked_infinite():
    """Resamples with no advantaged selection rank as +inf: a few above the upper quantile leave
    the interval defined; once a quantile falls on them it is NaN with a warning counting them."""
    a = np.r_[np.ones(10), np.zeros(90)]
    b = np.r_[np.ones(2), np.zeros(198)]  # P(resample has 0 ones) = 0.99**200 ~ 13%
    with pytest.warns(sig.DegenerateSampleWarning, match=r"selection rate is 0 in \d+ of 4000"):
        low, high = sig.bootstrap_ratio_ci(a, b, n_resamples=4000, random_state=3)
    assert math.isnan(low) and math.isnan(high)
    b = np.r_[np.ones(6), np.zeros(194)]  # ~0.2% of resamples have 0 ones: above the 97.5% quantile
    low, high = sig.bootstrap_ratio_ci(a, b, n_resamples=4000, random_state=3)
    assert 0 < low < 0.1 / 0.03 < high < np.inf
