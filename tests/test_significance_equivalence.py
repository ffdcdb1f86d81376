"""Equivalence tests (TOST) and the three-state verdict, against independent oracles.

- The score test against statsmodels' ``tost_proportions_2indep(method="score")``: for a ratio as
  statsmodels ships it; for a difference with the one-token fix of its open bug (statsmodels
  issue #10269, pull request #10270: the cubic's linear coefficient reads ``count0`` where
  ``nobs0`` belongs), applied to statsmodels' own source in this test, since the shipped form does
  not maximise the restricted likelihood. The restricted maximum likelihood rates are also checked
  against SciPy's numerical maximisation.
- The exact unconditional test at a margin of zero against SciPy's ``barnard_exact`` (pooled):
  the same ordering statistic, so the same p-value.
- Level at the margin and coverage of the interval, enumerated exactly over every table (slow).
"""

from __future__ import annotations

import doctest
import importlib.util
import inspect
import math

from faircode.formatting import format_p_value
import sys
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import barnard_exact, binom, norm

import faircode.significance._equivalence as equivalence_module
import faircode.significance._verdict as verdict_module
from faircode.significance import (
    EXACT_MAX_TABLES,
    VERDICTS,
    classify_gap,
    equivalence_test,
    equivalence_test_from_counts,
    gap_verdict,
    gap_verdict_from_counts,
    permutation_test,
    permutation_test_power,
    proportion_difference_ci,
    proportion_ratio_ci,
    verdict_sentence,
)
from faircode.significance._equivalence import _region_runs, _restricted_rates, _score_statistic

statsmodels_proportion = pytest.importorskip("statsmodels.stats.proportion")

_BUGGY = "tmp1 = (count0 * diff - nobs - 2 * count0) * diff + count"
_FIXED = "tmp1 = (nobs0 * diff - nobs - 2 * count0) * diff + count"


@pytest.fixture(scope="module")
def statsmodels_fixed():
    """statsmodels' proportion module with the fix of its pull request #10270 applied."""
    source = inspect.getsource(statsmodels_proportion)
    assert _BUGGY in source or _FIXED in source, "statsmodels' Miettinen-Nurminen cubic moved: read it again"
    name = "statsmodels_proportion_fixed"
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader=None))
    sys.modules[name] = module  # its dataclasses look their module up while being made
    try:
        exec(compile(source.replace(_BUGGY, _FIXED), name, "exec"), module.__dict__)
        yield module
    finally:
        del sys.modules[name]


def _random_tables(seed: int, count: int, largest: int = 400):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n1, n2 = (int(v) for v in rng.integers(1, largest, 2))
        yield int(rng.integers(0, n1 + 1)), n1, int(rng.integers(0, n2 + 1)), n2


# Zero cells, all 0s or all 1s, groups of one.
_EDGE_TABLES = [(0, 1, 0, 1), (1, 1, 0, 1), (0, 1, 1, 1), (1, 1, 1, 1), (0, 20, 0, 30), (20, 20, 30, 30),
                (0, 20, 30, 30), (20, 20, 0, 30), (1, 1, 12, 40), (0, 1, 12, 40), (3, 40, 0, 1), (5, 9, 5, 9),
                (0, 500, 3, 700), (500, 500, 690, 700)]


def _quiet(call, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(*args, **kwargs)


# ---------------------------------------------------------------------------------------------
# The score test against statsmodels
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("margin", [0.02, 0.05, 0.1, 0.2])
def test_score_tost_of_a_difference_equals_statsmodels_with_its_fix(statsmodels_fixed, margin):
    for x1, n1, x2, n2 in [*_random_tables(1, 60), *_EDGE_TABLES]:
        ours = equivalence_test_from_counts(x1, n1, x2, n2, margin=margin, method="score")
        theirs = _quiet(statsmodels_fixed.tost_proportions_2indep, x1, n1, x2, n2, -margin, margin,
                        method="score", compare="diff", correction=True)
        sides = (theirs.results_larger.pvalue, theirs.results_smaller.pvalue)
        if np.isnan(sides).any():
            # statsmodels' cubic divides 0 by 0 where all rows of both groups are 0 or 1 (its
            # TOST then drops the NaN side and reports the other); ours stays defined there.
            assert x1 in (0, n1) and x2 in (0, n2), (x1, n1, x2, n2)
            assert math.isfinite(ours.p_value)
            continue
        assert (ours.p_value_low, ours.p_value_high) == pytest.approx(sides, abs=1e-12), (x1, n1, x2, n2)
        assert ours.p_value == pytest.approx(max(sides), abs=1e-12)


@pytest.mark.parametrize("band", [(0.8, 1.25), (0.9, 1.1), (0.5, 2.0)])
def test_score_tost_of_a_ratio_equals_statsmodels(band):
    low, high = band
    for x1, n1, x2, n2 in [*_random_tables(2, 60), *_EDGE_TABLES]:
        if x1 == 0 and x2 == 0:
            continue  # 0/0: statsmodels divides by zero; ours is covered below
        ours = equivalence_test_from_counts(x1, n1, x2, n2, margin=band, compare="ratio", method="score")
        theirs = _quiet(statsmodels_proportion.tost_proportions_2indep, x1, n1, x2, n2, low, high,
                        method="score", compare="ratio", correction=True)
        assert ours.p_value == pytest.approx(float(theirs.pvalue), abs=1e-12), (x1, n1, x2, n2)


def test_a_one_sided_ratio_band_is_statsmodels_non_inferiority_test():
    for x1, n1, x2, n2 in _random_tables(3, 60):
        if x1 == 0 and x2 == 0:
            continue
        ours = equivalence_test_from_counts(x1, n1, x2, n2, margin=(0.8, math.inf), compare="ratio", method="score")
        theirs = _quiet(statsmodels_proportion.test_proportions_2indep, x1, n1, x2, n2, value=0.8, method="score",
                        compare="ratio", alternative="larger", correction=True)
        assert ours.p_value == pytest.approx(float(theirs.pvalue), abs=1e-12)
        assert ours.p_value_high == 0.0


def test_score_intervals_equal_statsmodels_where_its_inversion_succeeds(statsmodels_fixed):
    compared = 0
    for x1, n1, x2, n2 in _random_tables(4, 80):
        for compare, module in (("difference", statsmodels_fixed), ("ratio", statsmodels_proportion)):
            if compare == "ratio" and (x1 == 0 or x2 == 0 or x1 == n1):
                continue  # statsmodels' root bracket fails or picks the far root there (checked below)
            margin = 0.1 if compare == "difference" else (0.8, 1.25)
            ours = equivalence_test_from_counts(x1, n1, x2, n2, margin=margin, compare=compare, method="score")
            try:
                low, high = _quiet(module.confint_proportions_2indep, x1, n1, x2, n2, method="score",
                                   compare="diff" if compare == "difference" else "ratio", alpha=0.1, correction=True)
            except ValueError:  # statsmodels' brentq meets a NaN at the edge of its bracket
                continue
            compared += 1
            assert ours.ci_low == pytest.approx(low, rel=1e-9, abs=1e-10), (compare, x1, n1, x2, n2)
            assert ours.ci_high == pytest.approx(high, rel=1e-9, abs=1e-10), (compare, x1, n1, x2, n2)
    assert compared > 100


def test_each_interval_limit_is_where_the_score_statistic_reaches_its_critical_value(statsmodels_fixed):
    """Where statsmodels' own interval fails (its bracket meets NaN, or x_a = n_a for a ratio), its
    score statistic at our limits is still the oracle: z = +-z_0.95 there."""
    z = norm.ppf(0.95)
    for x1, n1, x2, n2 in [(7, 7, 53, 88), (17, 204, 317, 344), (59, 384, 0, 15), (2, 3, 54, 65), (20, 370, 58, 59)]:
        for compare, module in (("difference", statsmodels_fixed), ("ratio", statsmodels_proportion)):
            margin = 0.1 if compare == "difference" else (0.8, 1.25)
            ours = equivalence_test_from_counts(x1, n1, x2, n2, margin=margin, compare=compare, method="score")
            for limit, expected in ((ours.ci_low, z), (ours.ci_high, -z)):
                if limit in (0.0, math.inf) or abs(limit) >= 1 - 1e-9 and compare == "difference":
                    continue  # a limit at the parameter's bound: no crossing to check
                stat = module.score_test_proportions_2indep(x1, n1, x2, n2, value=limit,
                                                            compare="diff" if compare == "difference" else "ratio",
                                                            correction=True).statistic
                assert stat == pytest.approx(expected, abs=1e-6), (compare, x1, n1, x2, n2, limit)


def test_statsmodels_shipped_cubic_does_not_maximise_the_restricted_likelihood_ours_does():
    """Why the difference is compared with statsmodels' fixed source (issue #10269): at 36/343
    against 52/242 and a difference of -0.2, its restricted rates have a lower likelihood than
    ours, and ours are SciPy's numerical maximum."""
    x1, n1, x2, n2, d = 36, 343, 52, 242, -0.2

    def log_likelihood(p1, p2):
        return x1 * np.log(p1) + (n1 - x1) * np.log1p(-p1) + x2 * np.log(p2) + (n2 - x2) * np.log1p(-p2)

    shipped = statsmodels_proportion.score_test_proportions_2indep(x1, n1, x2, n2, value=d, compare="diff",
                                                                   return_results=True)
    ours = _restricted_rates(x1, n1, x2, n2, d, "difference")
    numeric = minimize_scalar(lambda p2: -log_likelihood(p2 + d, p2), bounds=(-d + 1e-12, 1 - 1e-12),
                              method="bounded", options={"xatol": 1e-12}).x
    assert float(ours[1]) == pytest.approx(numeric, abs=1e-7)
    assert log_likelihood(*ours) > log_likelihood(shipped.prop1_null, shipped.prop2_null) + 1.0


@pytest.mark.parametrize("compare", ["difference", "ratio"])
def test_restricted_rates_are_the_numerical_maximum_of_the_likelihood(compare):
    rng = np.random.default_rng(6)
    for x1, n1, x2, n2 in _random_tables(7, 150):
        value = float(rng.uniform(-0.9, 0.9)) if compare == "difference" else float(np.exp(rng.uniform(-1.5, 1.5)))
        p1, p2 = (float(v) for v in _restricted_rates(x1, n1, x2, n2, value, compare))
        if compare == "difference":
            assert p1 - p2 == pytest.approx(value, abs=1e-12)
            bounds, to_p1 = (max(0.0, -value), min(1.0, 1.0 - value)), (lambda q: q + value)
        else:
            assert p1 == pytest.approx(value * p2, abs=1e-12)
            bounds, to_p1 = (0.0, min(1.0, 1.0 / value)), (lambda q: value * q)

        def minus_log_likelihood(q):
            r1 = min(max(to_p1(q), 1e-300), 1 - 1e-16)
            r2 = min(max(q, 1e-300), 1 - 1e-16)
            return -(x1 * math.log(r1) + (n1 - x1) * math.log1p(-r1) + x2 * math.log(r2) + (n2 - x2) * math.log1p(-r2))

        best = minimize_scalar(minus_log_likelihood, bounds=bounds, method="bounded", options={"xatol": 1e-12})
        assert minus_log_likelihood(p2) <= best.fun + 1e-7, (compare, x1, n1, x2, n2, value)


# ---------------------------------------------------------------------------------------------
# The exact unconditional test
# ---------------------------------------------------------------------------------------------


def test_exact_test_at_a_margin_of_zero_is_scipys_barnard_test():
    """At a difference of 0 the score statistic orders tables as Barnard's pooled statistic
    does, so Chan's exact test is Barnard's: SciPy's barnard_exact is the oracle."""
    for x1, n1, x2, n2 in _random_tables(8, 30, largest=40):
        for side, alternative in (("larger", "greater"), ("smaller", "less")):
            ours = equivalence_module._one_sided_p(x1, n1, x2, n2, 0.0, side, "difference", "exact")
            theirs = barnard_exact([[x1, x2], [n1 - x1, n2 - x2]], alternative=alternative, pooled=True, n=200).pvalue
            assert ours == pytest.approx(theirs, abs=1e-9), (x1, n1, x2, n2, side)


def test_each_row_of_a_rejection_region_is_the_run_the_bisection_finds():
    """The exact test finds each row's run of extreme tables by bisection on x2, which needs the
    statistic to fall as x2 rises in every row (Barnard's convexity): the whole table of
    statistics, computed cell by cell, is the oracle, over random sizes, margins and tables."""
    rng = np.random.default_rng(9)
    for trial in range(150):
        n1, n2 = (int(v) for v in rng.integers(1, 90, 2))
        compare = ("difference", "ratio")[trial % 2]
        value = float(rng.uniform(-0.9, 0.9)) if compare == "difference" else float(np.exp(rng.uniform(-1.5, 1.5)))
        x1, x2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        z_obs = float(_score_statistic(x1, n1, x2, n2, value, compare))
        z = _score_statistic(np.arange(n1 + 1)[:, None], n1, np.arange(n2 + 1)[None, :], n2, value, compare)
        column = np.arange(n2 + 1)[None, :]
        for side, region in (("larger", z >= z_obs), ("smaller", z <= z_obs)):
            first, stop = _region_runs(n1, n2, value, compare, z_obs, 0.0, side)
            runs = (column >= first[:, None]) & (column < stop[:, None])
            np.testing.assert_array_equal(runs, region, err_msg=f"{compare} {n1} {n2} {value} {side}")


def test_auto_uses_the_exact_test_up_to_its_table_limit():
    small = equivalence_test_from_counts(15, 64, 35, 136, margin=0.1)
    large = equivalence_test_from_counts(150, 600, 200, 700, margin=0.1)
    assert (64 + 1) * (136 + 1) <= EXACT_MAX_TABLES < (600 + 1) * (700 + 1)
    assert (small.method, large.method) == ("exact", "score")


def test_swapping_the_groups_mirrors_the_margin():
    for method in ("score", "exact"):
        for x1, n1, x2, n2 in _random_tables(10, 8, largest=60):
            forward = equivalence_test_from_counts(x1, n1, x2, n2, margin=(-0.05, 0.15), method=method)
            backward = equivalence_test_from_counts(x2, n2, x1, n1, margin=(-0.15, 0.05), method=method)
            assert forward.p_value == pytest.approx(backward.p_value, abs=1e-12)
            assert forward.ci_low == pytest.approx(-backward.ci_high, abs=1e-9)


def test_arrays_and_counts_give_one_result():
    a = np.r_[np.ones(15), np.zeros(49)]
    b = np.r_[np.ones(35), np.zeros(101)]
    assert equivalence_test(a, b, margin=0.1) == equivalence_test_from_counts(15, 64, 35, 136, margin=0.1)
    assert equivalence_test(a.astype(bool), b.astype(bool), margin=0.1).p_value == \
        equivalence_test_from_counts(15, 64, 35, 136, margin=0.1).p_value


def test_a_zero_over_zero_ratio_shows_nothing():
    result = equivalence_test_from_counts(0, 10, 0, 12, margin=(0.8, 1.25), compare="ratio")
    assert not result.equivalent and math.isnan(result.estimate) and math.isnan(result.ci_low)


def test_interval_false_skips_the_interval_only():
    full = equivalence_test_from_counts(15, 64, 35, 136, margin=0.1)
    bare = equivalence_test_from_counts(15, 64, 35, 136, margin=0.1, interval=False)
    assert bare.p_value == full.p_value and math.isnan(bare.ci_low) and math.isnan(bare.ci_high)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"margin": None}, TypeError, "`margin` is required"),
    ({"margin": 5}, ValueError, "did you mean 0.05, 5 percentage points"),
    ({"margin": 0.0}, ValueError, "strictly between 0 and 1"),
    ({"margin": 0.8, "compare": "ratio"}, TypeError, r"four-fifths band"),
    ({"margin": (1.25, 0.8), "compare": "ratio"}, ValueError, "0 < low < 1 < high"),
    ({"margin": (0.05, 0.1)}, ValueError, "-1 < low < 0 < high < 1"),
    ({"margin": "five"}, TypeError, "a number or a pair"),
    ({"margin": True}, TypeError, "a number or a pair"),
    ({"margin": 0.1, "alpha": 0.5}, ValueError, "below 0.5"),
    ({"margin": 0.1, "compare": "odds"}, ValueError, "`compare` must be one of"),
    ({"margin": 0.1, "method": "wald"}, ValueError, "`method` must be one of"),
])
def test_bad_options_are_refused_by_name(kwargs, error, match):
    with pytest.raises(error, match=match):
        equivalence_test_from_counts(15, 64, 35, 136, **kwargs)


@pytest.mark.parametrize(("counts", "error", "match"), [
    ((15, 64, 137, 136), ValueError, "`count_b` must lie between 0 and n_b"),
    ((15, 0, 3, 136), ValueError, "`n_a` must be at least 1"),
    ((1.5, 64, 3, 136), TypeError, "`count_a` must be a whole number"),
    ((True, 64, 3, 136), TypeError, "`count_a` must be a whole number"),
])
def test_bad_counts_are_refused_by_name(counts, error, match):
    with pytest.raises(error, match=match):
        equivalence_test_from_counts(*counts, margin=0.1)


def test_non_binary_samples_are_refused():
    with pytest.raises(ValueError, match="`a` must hold only 0 and 1"):
        equivalence_test(np.array([0, 1, 2]), np.array([0, 1]), margin=0.1)


# ---------------------------------------------------------------------------------------------
# Level at the margin and coverage, enumerated exactly (slow)
# ---------------------------------------------------------------------------------------------


def _rejection_matrix(n1, n2, margin, method, alpha=0.05):
    reject = np.zeros((n1 + 1, n2 + 1))
    for x1 in range(n1 + 1):
        for x2 in range(n2 + 1):
            reject[x1, x2] = equivalence_test_from_counts(x1, n1, x2, n2, margin=margin, method=method,
                                                          interval=False).p_value < alpha
    return reject


def _largest_rejection_rate(reject, n1, n2, margin_side):
    """P(reject) at p_a = p_b + margin_side, over a fine grid of p_b: SciPy's binomial pmf."""
    p2 = np.linspace(max(0.0, -margin_side), min(1.0, 1.0 - margin_side), 4001)
    pmf1 = binom.pmf(np.arange(n1 + 1)[None, :], n1, np.clip(p2 + margin_side, 0, 1)[:, None])
    pmf2 = binom.pmf(np.arange(n2 + 1)[None, :], n2, p2[:, None])
    return float(np.einsum("gi,ij,gj->g", pmf1, reject, pmf2).max())


@pytest.mark.slow
@pytest.mark.parametrize(("n1", "n2", "margin"), [(10, 10, 0.2), (20, 30, 0.1), (25, 25, 0.2), (40, 60, 0.1),
                                                   (64, 136, 0.1)])
def test_the_exact_tost_holds_its_level_at_the_margin(n1, n2, margin):
    reject = _rejection_matrix(n1, n2, margin, "exact")
    for side in (-margin, margin):
        assert _largest_rejection_rate(reject, n1, n2, side) <= 0.05 + 1e-9, (n1, n2, side)


@pytest.mark.slow
def test_the_score_tost_exceeds_its_level_on_small_tables_which_is_why_auto_is_exact_there():
    """The module's docstring: at 100 against 100 rows and a margin of 10 points the score test
    rejects 5.8% of the time at the margin (rates near 100%)."""
    reject = _rejection_matrix(100, 100, 0.1, "score")
    worst = max(_largest_rejection_rate(reject, 100, 100, side) for side in (-0.1, 0.1))
    assert 0.0575 < worst < 0.0580


@pytest.mark.slow
@pytest.mark.parametrize(("n1", "n2"), [(8, 8), (6, 12)])
def test_the_exact_interval_covers_at_least_its_level(n1, n2):
    """Over every table, the 90% interval of the exact test covers the true difference at least
    90% of the time, at every pair of true rates on a grid."""
    limits = {}
    for x1 in range(n1 + 1):
        for x2 in range(n2 + 1):
            result = equivalence_test_from_counts(x1, n1, x2, n2, margin=0.1, method="exact")
            limits[x1, x2] = (result.ci_low, result.ci_high)
    rates = np.linspace(0.02, 0.98, 13)
    for p1 in rates:
        for p2 in rates:
            d = p1 - p2
            covered = sum(binom.pmf(x1, n1, p1) * binom.pmf(x2, n2, p2)
                          for (x1, x2), (low, high) in limits.items() if low <= d + 1e-12 and d - 1e-12 <= high)
            assert covered >= 0.90 - 1e-9, (p1, p2, covered)


# ---------------------------------------------------------------------------------------------
# The verdict
# ---------------------------------------------------------------------------------------------


def test_classify_gap_reads_the_three_states():
    margin = (-0.05, 0.05)
    assert classify_gap(p_value=1e-6, ci_low=-0.19, ci_high=-0.15, equivalence_p_value=1.0, margin=margin) == "gap_shown"
    assert classify_gap(p_value=0.77, ci_low=-0.012, ci_high=0.008, equivalence_p_value=1e-9,
                        margin=margin) == "no_practical_gap_shown"
    assert classify_gap(p_value=0.86, ci_low=-0.14, ci_high=0.11, equivalence_p_value=0.12, margin=margin) == "inconclusive"
    # Significant, but the interval reaches inside the margin: not shown to be of practical size.
    assert classify_gap(p_value=0.002, ci_low=-0.062, ci_high=-0.016, equivalence_p_value=0.2,
                        margin=margin) == "inconclusive"
    # The interval beyond the margin but the exact test not rejecting: inconclusive too.
    assert classify_gap(p_value=0.06, ci_low=-0.3, ci_high=-0.06, equivalence_p_value=0.9, margin=margin) == "inconclusive"
    # A one-sided ratio band: below the line is a gap; above it, equivalence decides.
    assert classify_gap(p_value=1e-4, ci_low=0.5, ci_high=0.7, equivalence_p_value=1.0,
                        margin=(0.8, math.inf)) == "gap_shown"


def test_classify_gap_refuses_an_undefined_gap():
    with pytest.raises(ValueError, match="has no verdict"):
        classify_gap(p_value=math.nan, ci_low=0.0, ci_high=0.1, equivalence_p_value=0.5, margin=(-0.05, 0.05))


def test_gap_verdict_uses_the_projects_exact_test_interval_and_power():
    women = np.r_[np.ones(15), np.zeros(49)]
    men = np.r_[np.ones(35), np.zeros(101)]
    v = gap_verdict(women, men, margin=0.10, names=("women", "men"), outcome="rated a bad risk")
    assert v.p_value == pytest.approx(permutation_test(women, men), rel=1e-12)
    assert (v.ci_low, v.ci_high) == pytest.approx(tuple(proportion_difference_ci(women, men)), abs=1e-12)
    rate_b = 35 / 136
    expected_power = min(permutation_test_power(rate_b - 0.1, rate_b, 64, 136),
                         permutation_test_power(rate_b + 0.1, rate_b, 64, 136))
    assert v.power_at_margin == pytest.approx(expected_power, rel=1e-12)
    assert v.verdict == "inconclusive" and v.label == VERDICTS["inconclusive"]
    assert v.equivalence == equivalence_test(women, men, margin=0.10)


def test_gap_verdict_of_a_ratio_uses_the_mover_interval():
    a = np.r_[np.ones(60), np.zeros(40)]
    b = np.r_[np.ones(80), np.zeros(20)]
    v = gap_verdict(a, b, margin=(0.8, math.inf), compare="ratio")
    assert (v.ci_low, v.ci_high) == pytest.approx(tuple(proportion_ratio_ci(a, b)), abs=1e-12)
    assert v.estimate == pytest.approx(0.75)


@pytest.mark.parametrize(("counts", "margin", "state"), [
    ((179, 2176, 1115, 4337), 0.05, "gap_shown"),
    ((500, 5000, 510, 5000), 0.05, "no_practical_gap_shown"),
    ((15, 64, 35, 136), 0.10, "inconclusive"),
])
def test_each_state_on_a_table_whose_answer_is_plain(counts, margin, state):
    assert gap_verdict_from_counts(*counts, margin=margin).verdict == state


def test_no_table_is_both_a_gap_shown_and_equivalent():
    """The interval beyond the margin and the equivalence interval inside it would both hold the
    estimate: a table that shows a gap never also shows equivalence."""
    for x1, n1, x2, n2 in _random_tables(11, 40, largest=150):
        v = gap_verdict_from_counts(x1, n1, x2, n2, margin=0.05)
        if v.verdict == "gap_shown":
            assert not v.equivalence.equivalent


def test_the_sentence_says_the_state_and_what_it_does_not_say():
    shown = gap_verdict_from_counts(179, 2176, 1115, 4337, margin=0.05, names=("women", "men"), outcome="turned away")
    assert shown.sentence.startswith("A gap of practical size is shown: women were turned away 17.5 percentage points "
                                     "less often than men.")
    small = gap_verdict_from_counts(500, 5000, 510, 5000, margin=0.05)
    assert small.sentence.startswith("No gap of practical size is shown") and "may remain" in small.sentence
    unclear = gap_verdict_from_counts(15, 64, 35, 136, margin=0.10)
    assert unclear.sentence.startswith("Inconclusive") and "too small to tell" in unclear.sentence
    assert "\u221214.1 to +11.1 percentage points" in unclear.sentence  # the 95% interval, as the power page reads it


def test_an_inconclusive_sentence_mentions_power_only_when_it_is_known():
    text = verdict_sentence("inconclusive", compare="difference", estimate=-0.02, ci_low=-0.1, ci_high=0.06,
                            p_value=0.6, equivalence_p_value=0.3, equivalence_ci=(math.nan, math.nan),
                            margin=(-0.05, 0.05), power_at_margin=math.nan)
    assert "chance" not in text
    powered = verdict_sentence("inconclusive", compare="difference", estimate=-0.02, ci_low=-0.1, ci_high=0.06,
                               p_value=0.6, equivalence_p_value=0.3, equivalence_ci=(math.nan, math.nan),
                               margin=(-0.05, 0.05), power_at_margin=0.91)
    assert powered.endswith("Against a true gap at the margin of ±5 percentage points, the exact test had a 91% "
                            "chance of calling it significant.")


def test_an_inconclusive_sentence_says_which_condition_failed():
    """Review of issue 45: a significant gap whose interval reaches inside the margin, and an
    interval beyond the margin whose (family-adjusted) test does not reject, are told apart; the
    power clause, which explains only a test that did not reject, is left out of both."""
    common = dict(compare="difference", equivalence_p_value=0.5, equivalence_ci=(math.nan, math.nan),
                  margin=(-0.05, 0.05), power_at_margin=0.87)
    reaching = verdict_sentence("inconclusive", estimate=0.1, ci_low=0.02, ci_high=0.18, p_value=0.01, **common)
    assert "significant, but not shown to be of practical size (its 95% interval reaches inside the margin" in reaching
    assert "chance" not in reaching
    cleared = verdict_sentence("inconclusive", estimate=0.2, ci_low=0.053, ci_high=0.407, p_value=0.096, p_label="q",
                               **common)
    assert "the 95% interval lies beyond the margin of ±5 percentage points, but the exact test is not significant " \
           "once the family is counted" in cleared and "q = 0.096" in cleared and "chance" not in cleared
    shown = verdict_sentence("gap_shown", estimate=0.2, ci_low=0.1, ci_high=0.3, p_value=0.001, p_label="q", **common)
    assert "q = 0.0010; the interval is not adjusted for the family)" in shown


def test_a_ratio_verdict_names_its_yardstick():
    """A ratio inside the four-fifths band can sit beside a difference beyond a margin in points:
    the sentence says which yardstick showed "no gap of practical size"."""
    v = gap_verdict_from_counts(870, 1000, 980, 1000, margin=(0.8, math.inf), compare="ratio")
    assert v.verdict == "no_practical_gap_shown"
    assert v.sentence.startswith("No gap of practical size against group A is shown by the four-fifths line of 0.8:")
    band = gap_verdict_from_counts(870, 1000, 900, 1000, margin=(0.8, 1.25), compare="ratio")
    assert band.sentence.startswith("No gap of practical size is shown by the band 0.80 to 1.25:")


def test_a_ratio_far_above_a_one_sided_line_is_not_called_a_small_gap():
    """A reader's review (issue 47): 30 of 100 against 10 of 100 with the line 0.8 read "a gap
    smaller than the four-fifths line of 0.8 allows is shown" of a ratio of 3.00."""
    v = gap_verdict_from_counts(30, 100, 10, 100, margin=(0.8, math.inf), compare="ratio", names=("women", "men"))
    assert v.verdict == "no_practical_gap_shown" and v.p_value < 0.05
    assert "against women is shown" in v.sentence and "smaller than" not in v.sentence
    assert v.sentence.endswith(f"The exact test finds that the rates differ ({format_p_value(v.p_value)}).")


def test_a_margin_is_named_with_every_digit_it_was_declared_with():
    """A reader's review (issue 47): a margin of 0.05 points was named "±0.1"; "±1 percentage points"."""
    from faircode.significance import verdict_sentence

    def name(margin):
        return verdict_sentence("inconclusive", compare="difference", estimate=0.0, ci_low=-0.1, ci_high=0.1, p_value=0.9,
                                equivalence_p_value=0.5, equivalence_ci=(math.nan, math.nan), margin=margin,
                                power_at_margin=math.nan)
    assert "the margin of \u00b10.05 percentage points" in name((-0.0005, 0.0005))
    assert "the margin of \u00b11 percentage point " in name((-0.01, 0.01))
    assert "the margin of \u22123 to +5 percentage points" in name((-0.03, 0.05))


def test_the_verdict_names_and_outcome_are_checked():
    with pytest.raises(ValueError, match="`names` must be two non-empty words"):
        gap_verdict_from_counts(1, 10, 2, 10, margin=0.1, names=("women",))
    with pytest.raises(ValueError, match="`outcome` must be non-empty words"):
        gap_verdict_from_counts(1, 10, 2, 10, margin=0.1, outcome=" ")


def test_the_docstring_examples_hold():
    for module in (equivalence_module, verdict_module):
        failures, _ = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert failures == 0, module.__name__


def test_groups_of_one_by_hand():
    """1 of 1 against 0 of 1 at a margin of 0.1, worked by hand: under p_a - p_b = 0.1 the
    restricted likelihood log(p_b + 0.1) + log(1 - p_b) peaks at p_b = 0.45; the variance is
    (0.55 * 0.45 + 0.45 * 0.55) * N / (N - 1) = 0.99, so z = (1 - 0.1) / sqrt(0.99) for the upper
    side (where statsmodels divides 0 by 0)."""
    result = equivalence_test_from_counts(1, 1, 0, 1, margin=0.1, method="score")
    assert result.p_value_high == pytest.approx(norm.cdf(0.9 / math.sqrt(0.99)), abs=1e-12)
    assert result.p_value == result.p_value_high


def test_the_sentence_names_adjusted_values_and_reads_an_before_eight():
    text = verdict_sentence("inconclusive", compare="difference", estimate=-0.02, ci_low=-0.1, ci_high=0.06,
                            p_value=0.6, equivalence_p_value=0.3, equivalence_ci=(math.nan, math.nan),
                            margin=(-0.05, 0.05), power_at_margin=0.87, p_label="q")
    assert "exact test q = 0.60; equivalence test q = 0.30" in text and " p = " not in text
    assert "had an 87% chance" in text
    assert "had a 9% chance" in verdict_sentence("inconclusive", compare="difference", estimate=-0.02, ci_low=-0.1,
                                                ci_high=0.06, p_value=0.6, equivalence_p_value=0.3,
                                                equivalence_ci=(math.nan, math.nan), margin=(-0.05, 0.05),
                                                power_at_margin=0.09)


def test_a_small_gap_that_the_usual_test_finds_is_said_to_be_shown():
    """A new user's review (issue 47): 'no gap of practical size shown' with an interval clear of
    zero said only that a smaller gap 'may remain'; it is shown."""
    v = gap_verdict_from_counts(5200, 10000, 5000, 10000, margin=0.05)
    assert v.verdict == "no_practical_gap_shown" and v.p_value < 0.05
    assert v.sentence.endswith("a gap smaller than the margin is shown.") and "may remain" not in v.sentence
    quiet = gap_verdict_from_counts(5010, 10000, 5000, 10000, margin=0.05)
    assert quiet.p_value >= 0.05 and quiet.sentence.endswith("A gap smaller than the margin may remain.")


def test_an_undefined_or_unbounded_ratio_is_said_in_words():
    none = gap_verdict_from_counts(0, 10, 0, 10, margin=(0.8, 1.25), compare="ratio")
    assert "no one among group A or group B was given the favourable outcome, so their ratio is undefined" \
        in none.sentence and "n/a" not in none.sentence
    unbounded = gap_verdict_from_counts(3, 10, 0, 10, margin=(0.8, 1.25), compare="ratio")
    assert "no one among group B was given the favourable outcome" in unbounded.sentence
    assert "\u221e times" not in unbounded.sentence


def test_large_groups_take_the_normal_power_and_small_ones_the_exact():
    """A verdict on a million rows a group took minutes in the exact power sum; above
    EXACT_POWER_SIZE the power is the z-test's (statsmodels' power_proportions_2indep, the oracle),
    which there is within a point of the exact one."""
    from faircode.significance import power_at_margin
    from statsmodels.stats.proportion import power_proportions_2indep

    big = gap_verdict_from_counts(300_000, 1_000_000, 290_000, 1_000_000, margin=0.002)
    assert big.power_method == "normal"
    rate_b = 0.29
    expected = min(float(power_proportions_2indep(d, rate_b, 1_000_000, ratio=1.0, return_results=False))
                   for d in (-0.002, 0.002))
    assert big.power_at_margin == pytest.approx(expected, rel=1e-9)
    small = gap_verdict_from_counts(15, 64, 35, 136, margin=0.10)
    assert small.power_method == "exact"
    n = 10_000  # at the threshold: exact, and the normal approximation within a point of it
    assert power_at_margin(0.3, n, n, margin=(-0.02, 0.02), compare="difference") == pytest.approx(
        min(permutation_test_power(0.3 + d, 0.3, n, n) for d in (-0.02, 0.02)), rel=1e-12)
    assert abs(power_at_margin(0.3, n, n, margin=(-0.02, 0.02), compare="difference", method="normal")
               - power_at_margin(0.3, n, n, margin=(-0.02, 0.02), compare="difference")) < 0.01
