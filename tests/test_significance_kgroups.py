"""More than two groups: the max-gap permutation test against exhaustive enumeration and a
hand-written shuffle, its size in simulation, pairwise tests with Holm, Wilson intervals."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import permutation_test as scipy_permutation_test
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from faircode.significance import (
    max_gap_test,
    pairwise_tests,
    permutation_test,
    wilson_interval,
)


def _range(x, codes, k):
    means = np.array([x[codes == g].mean() for g in range(k)])
    return means.max() - means.min()


def _exact_max_gap_p(x, sizes):
    """Every assignment of the rows to groups of these sizes, counted one by one."""
    n = sum(sizes)
    labels = np.repeat(np.arange(len(sizes)), sizes)
    observed = _range(x, labels, len(sizes))
    extreme = total = 0
    for perm in set(itertools.permutations(labels)):  # distinct relabellings
        total += 1
        extreme += _range(x, np.array(perm), len(sizes)) >= observed - 1e-12
    assert total == math.factorial(n) // math.prod(math.factorial(s) for s in sizes)
    return extreme / total


def _mc_error(p, m):
    return math.sqrt(p * (1 - p) / m)


@pytest.mark.parametrize("kind", ["binary", "continuous"])
def test_monte_carlo_p_value_matches_exhaustive_enumeration(kind):
    sizes = [3, 3, 2]  # 560 distinct relabellings
    if kind == "binary":
        x = np.array([1, 1, 0, 0, 0, 1, 1, 1], dtype=float)
    else:
        x = np.array([0.3, 1.9, 2.2, -0.4, 0.1, 3.5, 2.8, 4.0])
    groups = np.repeat(["p", "q", "r"], sizes)
    exact = _exact_max_gap_p(x, sizes)
    m = 20_000
    res = max_gap_test(x, groups, n_permutations=m, random_state=11)
    assert res.method == "monte_carlo"
    assert abs(res.p_value - exact) <= 4 * _mc_error(exact, m) + 1 / (m + 1)


def test_monte_carlo_p_value_matches_a_hand_written_shuffle_test():
    rng = np.random.default_rng(2)
    sizes = [60, 45, 30, 12]
    groups = np.repeat(["w", "x", "y", "z"], sizes)
    x = rng.binomial(1, np.repeat([0.30, 0.42, 0.30, 0.55], sizes)).astype(float)
    codes = np.repeat(np.arange(4), sizes)
    observed = _range(x, codes, 4)
    m = 4000
    shuffled = np.array([_range(x, rng.permutation(codes), 4) for _ in range(m)])
    by_hand = (np.sum(shuffled >= observed - 1e-12) + 1) / (m + 1)
    res = max_gap_test(x, groups, n_permutations=m, random_state=3)
    assert res.statistic == pytest.approx(observed, abs=1e-12)
    assert abs(res.p_value - by_hand) <= 4 * math.sqrt(2) * _mc_error(by_hand, m)


def test_two_binary_groups_give_the_exact_two_sided_test():
    rng = np.random.default_rng(4)
    a, b = rng.binomial(1, 0.3, 8), rng.binomial(1, 0.7, 6)  # C(14, 6) = 3,003 relabellings
    x, groups = np.r_[a, b], np.repeat(["a", "b"], [8, 6])
    res = max_gap_test(x, groups)
    assert res.method == "exact" and res.n_permutations is None and res.null_distribution is None
    # SciPy enumerates every relabelling; |gap| >= |observed| is the two-sided event.
    oracle = scipy_permutation_test((a, b), lambda u, v: abs(np.mean(u) - np.mean(v)),
                                    permutation_type="independent", n_resamples=np.inf, alternative="greater")
    assert res.p_value == pytest.approx(oracle.pvalue, rel=1e-9)
    assert res.p_value == pytest.approx(permutation_test(a, b), rel=1e-12)
    mc = max_gap_test(x, groups, method="monte_carlo", n_permutations=20_000, random_state=0)
    assert abs(mc.p_value - res.p_value) <= 4 * _mc_error(res.p_value, 20_000) + 1 / 20_001


def test_result_describes_the_groups():
    x = np.r_[np.ones(3), np.zeros(7), np.ones(6), np.zeros(4), np.ones(1), np.zeros(9)]
    groups = np.repeat(["b", "a", "c"], 10)
    res = max_gap_test(x, groups, n_permutations=99, random_state=0)
    assert res.groups == ("a", "b", "c") and res.sizes == (10, 10, 10)
    assert res.means == pytest.approx((0.6, 0.3, 0.1))
    assert (res.high_group, res.low_group) == ("a", "c") and res.statistic == pytest.approx(0.5)
    assert res.null_distribution.shape == (99,) and not res.null_distribution.flags.writeable
    assert res.p_value_floor == pytest.approx(1 / 100)
    assert "k=3" in repr(res)


def test_renaming_groups_and_reordering_rows_do_not_change_the_p_value():
    rng = np.random.default_rng(8)
    sizes = [50, 50, 20, 9]
    x = rng.binomial(1, 0.35, sum(sizes))
    groups = np.repeat(["a", "b", "c", "d"], sizes)
    renamed = np.repeat(["z", "y", "x", "w"], sizes)
    order = rng.permutation(x.size)
    p = max_gap_test(x, groups, n_permutations=999, random_state=5).p_value
    assert max_gap_test(x, renamed, n_permutations=999, random_state=5).p_value == p
    assert max_gap_test(x[order], groups[order], n_permutations=999, random_state=5).p_value == p
    for batch in (1, 17):
        assert max_gap_test(x, groups, n_permutations=999, random_state=5, batch_size=batch).p_value == p
    z = rng.normal(size=x.size)
    q = max_gap_test(z, groups, n_permutations=500, random_state=5).p_value
    assert max_gap_test(z[order], renamed[order], n_permutations=500, random_state=5, batch_size=7).p_value == q


def test_a_clear_difference_reaches_the_monte_carlo_floor():
    groups = np.repeat(["a", "b", "c"], 200)
    x = np.r_[np.ones(180), np.zeros(20), np.ones(20), np.zeros(180), np.ones(100), np.zeros(100)]
    res = max_gap_test(x, groups, n_permutations=999, random_state=0)
    assert res.is_monte_carlo_minimum and res.p_value == pytest.approx(1 / 1000)
    assert res.format_p_value() == "p = 1/1,000"  # (0 + 1) / (999 + 1): Phipson and Smyth 2010


def test_constant_outcomes_give_p_one():
    res = max_gap_test(np.zeros(30), np.repeat(["a", "b", "c"], 10), n_permutations=50, random_state=0)
    assert res.statistic == 0 and res.p_value == 1.0


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        (([0, 1, 1], ["a", "a", "a"]), {}, ValueError, r"`groups` must hold at least two groups to compare; got 1"),
        (([0, 1, 1], ["a", "b"]), {}, ValueError, r"`groups` must have one label per row of its group \(3\); got 2"),
        (([0, 1, 1], ["a", None, "b"]), {}, ValueError, r"`groups` must not contain missing cluster labels"),
        (([0, 1, 1, 0], list("abca")), dict(method="exact"), ValueError,
         r"`method='exact'` is available for two groups of 0/1 outcomes only; got 3 groups"),
        (([0, 1, np.nan], list("aab")), {}, ValueError, r"`outcome` must not contain NaN"),
        (([0, 1, 1], list("aab")), dict(n_permutations=0), ValueError, r"`n_permutations` must be a positive integer"),
        (([0, 1, 1], list("aab")), dict(method="fast"), ValueError, r"`method` must be one of"),
        ((["x", "y"], list("ab")), {}, TypeError, r"`outcome` must be numeric"),
    ],
)
def test_max_gap_test_validation_messages(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        max_gap_test(*args, **kwargs)


def test_pairwise_tests_all_pairs_are_holm_adjusted():
    rng = np.random.default_rng(1)
    sizes = [40, 35, 30, 25]
    groups = np.repeat(["a", "b", "c", "d"], sizes)
    x = rng.binomial(1, np.repeat([0.2, 0.5, 0.3, 0.6], sizes))
    pairs = pairwise_tests(x, groups)
    assert [(c.group_a, c.group_b) for c in pairs] == list(itertools.combinations("abcd", 2))
    raw = [permutation_test(x[groups == c.group_a], x[groups == c.group_b]) for c in pairs]
    np.testing.assert_allclose([c.p_value for c in pairs], raw, rtol=1e-12)
    np.testing.assert_allclose([c.p_value_adjusted for c in pairs], multipletests(raw, method="holm")[1], rtol=1e-12)
    for c in pairs:
        assert c.gap == pytest.approx(x[groups == c.group_a].mean() - x[groups == c.group_b].mean())
    ref = pairwise_tests(x, groups, reference="c", adjust="bh")
    assert [(c.group_a, c.group_b) for c in ref] == [("a", "c"), ("b", "c"), ("d", "c")]
    np.testing.assert_allclose([c.p_value_adjusted for c in ref],
                               multipletests([c.p_value for c in ref], method="fdr_bh")[1], rtol=1e-12)
    with pytest.raises(ValueError, match=r"`reference` must be one of the groups \['a', 'b', 'c', 'd'\]; got 'e'"):
        pairwise_tests(x, groups, reference="e")
    with pytest.raises(ValueError, match=r"`adjust` must be one of 'holm', 'bh'"):
        pairwise_tests(x, groups, adjust="bonferroni")


def test_wilson_interval_matches_statsmodels_on_a_grid():
    counts, nobs = np.meshgrid(np.arange(0, 41), np.arange(1, 41))
    counts, nobs = counts[counts <= nobs], nobs[counts <= nobs]
    for level in (0.9, 0.95, 0.99):
        low, high = wilson_interval(counts, nobs, confidence_level=level)
        ref_low, ref_high = proportion_confint(counts, nobs, alpha=1 - level, method="wilson")
        np.testing.assert_allclose(low, ref_low, atol=1e-12)
        np.testing.assert_allclose(high, ref_high, atol=1e-12)
    assert wilson_interval(0, 12).low == 0.0 and wilson_interval(12, 12).high == 1.0
    low, high = wilson_interval(np.array([0, 3]), np.array([0, 10]))
    assert np.isnan(low[0]) and np.isnan(high[0]) and 0 < low[1] < 0.3 < high[1]
    # nobs = 0 is no rate, so NaN limits, not an error, for a scalar too: the by-group table
    # passes every group at once, groups with no rows of a kind among them (issue 47: the choice
    # documented, not refused).
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    assert isinstance(wilson_interval(3, 10).low, float)


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        # Each message gives the values it refused (issue 47: "must not exceed" said no more).
        ((11, 10), {}, ValueError, r"^`count` must not exceed `nobs`; got count=11, nobs=10$"),
        ((np.array([1, 5]), np.array([2, 4])), {}, ValueError,
         r"^`count` must not exceed `nobs`; got count=5, nobs=4 at index 1$"),
        ((3, np.array([[4, 2], [5, 6]])), {}, ValueError, r"got count=3, nobs=2 at index \(0, 1\)$"),
        ((-1, 4), {}, ValueError, r"^`count` must be >= 0; got count=-1$"),
        ((np.array([1, 2]), np.array([3, -4])), {}, ValueError, r"^`nobs` must be >= 0; got nobs=-4 at index 1$"),
        ((np.array([1, 2]), np.array([3, 4, 5])), {}, ValueError,
         r"`count` and `nobs` must broadcast to one shape; got shapes \(2,\) and \(3,\)"),
        ((1.5, 4), {}, TypeError, r"`count` must be integer counts"),
        ((1, 4), dict(confidence_level=95), ValueError, r"`confidence_level` must be strictly between 0 and 1"),
    ],
)
def test_wilson_interval_validation_messages(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        wilson_interval(*args, **kwargs)


@pytest.mark.slow
def test_max_gap_test_holds_its_size_under_the_null():
    """With no group effect, p <= alpha in alpha of the simulated audits (within binomial error),
    while testing the largest gap as if it were one pre-chosen pair rejects far more often."""
    rng = np.random.default_rng(20261130)
    alpha, n_sims, m = 0.05, 2000, 399
    sizes = [300, 150, 80, 40, 30]  # unequal, as in COMPAS's race categories
    groups = np.repeat(np.arange(5), sizes)
    rejected = naive = 0
    for _ in range(n_sims):
        x = rng.binomial(1, 0.35, groups.size)
        res = max_gap_test(x, groups, n_permutations=m, random_state=rng)
        rejected += res.p_value <= alpha
        # The naive reading: the exact two-group test of the two groups that happen to be extreme.
        hi, lo = res.groups.index(res.high_group), res.groups.index(res.low_group)
        naive += permutation_test(x[groups == hi], x[groups == lo]) <= alpha
    # With m = 399 relabellings, p <= 0.05 means at most 19 as extreme: exactly level 0.05 for a
    # continuous statistic, slightly below it with ties.
    size, se = rejected / n_sims, _mc_error(alpha, n_sims)
    assert abs(size - alpha) <= 3 * se, f"type I error {size:.4f}, expected {alpha} +/- {3 * se:.4f}"
    assert naive / n_sims > alpha + 6 * se  # picking the largest gap inflates the naive test


def test_object_dtype_string_labels_are_accepted():
    # pandas columns hand over object arrays of str; the labels must come back as plain str.
    groups = np.array(["a"] * 50 + ["b"] * 50 + ["c"] * 40, dtype=object)
    flagged = np.r_[np.ones(20), np.zeros(30), np.ones(30), np.zeros(20), np.ones(10), np.zeros(30)]
    res = max_gap_test(flagged, groups, n_permutations=99, random_state=0)
    assert (res.high_group, res.low_group) == ("b", "c")
    pairs = pairwise_tests(flagged, groups, reference="a")
    assert [(c.group_a, c.group_b) for c in pairs] == [("b", "a"), ("c", "a")]
