"""permutation_test_power and binary_bootstrap_ci against independent oracles (SciPy, simulation)."""

import itertools

import numpy as np
import pytest
from scipy import stats

from faircode.significance import binary_bootstrap_ci, permutation_test, permutation_test_power


def _enumerated_two_sided(p_a, p_b, n_a, n_b, alpha):
    """Every (x, y) outcome, p-values from scipy.stats.hypergeom with ties by integer distance."""
    n = n_a + n_b
    power = 0.0
    for x, y in itertools.product(range(n_a + 1), range(n_b + 1)):
        k = x + y
        support = np.arange(max(0, k - n_b), min(n_a, k) + 1)
        null = stats.hypergeom.pmf(support, n, k, n_a)
        far = np.abs(support * n - k * n_a) >= abs(x * n - k * n_a)
        if null[far].sum() < alpha:
            power += stats.binom.pmf(x, n_a, p_a) * stats.binom.pmf(y, n_b, p_b)
    return power


def _enumerated_fisher(p_a, p_b, n_a, n_b, alpha, alternative):
    """One-sided: the exact test is Fisher's exact test of the 2x2 table (scipy.stats.fisher_exact)."""
    power = 0.0
    for x, y in itertools.product(range(n_a + 1), range(n_b + 1)):
        p = stats.fisher_exact([[x, n_a - x], [y, n_b - y]], alternative=alternative).pvalue
        if p < alpha:
            power += stats.binom.pmf(x, n_a, p_a) * stats.binom.pmf(y, n_b, p_b)
    return power


@pytest.mark.parametrize("p_a, p_b, n_a, n_b, alpha", [
    (0.2, 0.5, 12, 15, 0.05), (0.5, 0.5, 10, 10, 0.05), (0.1, 0.3, 7, 20, 0.10), (0.0, 0.4, 9, 6, 0.05),
    (0.35, 1.0, 5, 8, 0.2), (0.6, 0.25, 16, 11, 0.01),
])
def test_two_sided_power_equals_enumeration_with_scipy(p_a, p_b, n_a, n_b, alpha):
    expected = _enumerated_two_sided(p_a, p_b, n_a, n_b, alpha)
    assert permutation_test_power(p_a, p_b, n_a, n_b, alpha=alpha) == pytest.approx(expected, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("alternative", ["greater", "less"])
@pytest.mark.parametrize("p_a, p_b, n_a, n_b", [(0.5, 0.2, 11, 9), (0.3, 0.3, 8, 13), (0.1, 0.6, 14, 7)])
def test_one_sided_power_equals_fisher_exact_enumeration(p_a, p_b, n_a, n_b, alternative):
    expected = _enumerated_fisher(p_a, p_b, n_a, n_b, 0.05, alternative)
    got = permutation_test_power(p_a, p_b, n_a, n_b, alternative=alternative)
    assert got == pytest.approx(expected, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("rate", [0.05, 0.3, 0.5])
def test_size_of_the_exact_test_is_at_most_alpha(rate):
    for n_a, n_b in ((20, 30), (150, 400), (1000, 2000)):
        assert permutation_test_power(rate, rate, n_a, n_b, alpha=0.05) <= 0.05


def test_power_matches_a_simulation_of_the_test_itself():
    """Simulated audits tested with permutation_test: the share with p < alpha, within 4 SE."""
    rng = np.random.default_rng(11)
    p_a, p_b, n_a, n_b, sims = 0.22, 0.32, 180, 260, 2000
    flagged_a = rng.random((sims, n_a)) < p_a
    flagged_b = rng.random((sims, n_b)) < p_b
    share = np.mean([permutation_test(a, b) < 0.05 for a, b in zip(flagged_a, flagged_b)])
    power = permutation_test_power(p_a, p_b, n_a, n_b)
    assert abs(share - power) <= 4 * np.sqrt(power * (1 - power) / sims)


def test_large_audit_agrees_with_the_normal_approximation():
    """At 15,000 rows the exact test's power is close to the z-test's (statsmodels)."""
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    h = proportion_effectsize(0.22, 0.2)
    z_power = NormalIndPower().power(effect_size=h, nobs1=5000, alpha=0.05, ratio=2.0)
    assert permutation_test_power(0.22, 0.2, 5000, 10000) == pytest.approx(z_power, abs=0.02)


def test_swapping_the_groups_swaps_the_one_sided_alternative():
    assert permutation_test_power(0.1, 0.3, 40, 25, alternative="less") == pytest.approx(
        permutation_test_power(0.3, 0.1, 25, 40, alternative="greater"), rel=1e-12)


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((1.2, 0.3, 10, 10), {}, ValueError, "`p_a` must be a rate in"),
    ((0.2, float("nan"), 10, 10), {}, ValueError, "`p_b` must be a rate in"),
    ((0.2, 0.3, 0, 10), {}, ValueError, "`n_a` must be a positive integer"),
    ((0.2, 0.3, 10, 2.5), {}, TypeError, "`n_b` must be a positive integer"),
    ((0.2, 0.3, 10, 10), {"alpha": 1.0}, ValueError, "alpha"),
    ((0.2, 0.3, 10, 10), {"alternative": "bigger"}, ValueError, "alternative"),
])
def test_power_rejects_bad_input(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        permutation_test_power(*args, **kwargs)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_binary_bootstrap_matches_scipy_bootstrap(method):
    """Each audit's interval is SciPy's two-sample bootstrap interval, within Monte Carlo error."""
    audits = [(12, 40, 20, 45), (30, 100, 45, 100), (3, 25, 40, 200)]
    k_a, n_a, k_b, n_b = (np.array(c) for c in zip(*audits))
    low, high = binary_bootstrap_ci(k_a, n_a, k_b, n_b, n_resamples=20000, method=method, random_state=3)
    for i, (ka, na, kb, nb) in enumerate(audits):
        a = np.r_[np.ones(ka), np.zeros(na - ka)]
        b = np.r_[np.ones(kb), np.zeros(nb - kb)]
        ref = stats.bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis) - y.mean(axis), n_resamples=20000,
                              method="BCa" if method == "bca" else "percentile", rng=4, vectorized=True)
        assert low[i] == pytest.approx(ref.confidence_interval.low, abs=0.012)
        assert high[i] == pytest.approx(ref.confidence_interval.high, abs=0.012)


@pytest.mark.parametrize("k_a, n_a", [(3, 40), (30, 333), (174, 2176)])
def test_binary_bootstrap_against_the_binomial_quantiles(k_a, n_a):
    """With group b constant (it resamples to itself), the percentile interval's ends are the
    2.5% and 97.5% quantiles of Binomial(n_a, k_a / n_a) / n_a (scipy.stats.binom.ppf), shifted by
    b's rate: within one lattice step, the Monte Carlo error of 40,000 resamples."""
    low, high = binary_bootstrap_ci([k_a, k_a], [n_a, n_a], [0, 7], [50, 7], n_resamples=40000, random_state=5)
    dist = stats.binom(n_a, k_a / n_a)
    for shift, lo, hi in zip((0.0, 1.0), low, high):
        assert lo == pytest.approx(dist.ppf(0.025) / n_a - shift, abs=1.01 / n_a)
        assert hi == pytest.approx(dist.ppf(0.975) / n_a - shift, abs=1.01 / n_a)


def test_binary_bootstrap_broadcasts_and_is_reproducible():
    first = binary_bootstrap_ci([5, 6, 7], 20, 10, 30, n_resamples=500, random_state=1)
    again = binary_bootstrap_ci([5, 6, 7], 20, 10, 30, n_resamples=500, random_state=1)
    np.testing.assert_array_equal(first[0], again[0])
    assert first[0].shape == (3,) and np.all(first[0] <= first[1])


@pytest.mark.parametrize("args, error, match", [
    (([1.5], [10], [2], [10]), TypeError, "`flagged_a` must hold whole numbers"),
    (([11], [10], [2], [10]), ValueError, r"`flagged_a` must lie in \[0, n_a\]"),
    (([1, 2], [10, 10, 10], [2], [10]), ValueError, "one length"),
    (([1], [0], [2], [10]), ValueError, "`n_a` must be >= 1"),
])
def test_binary_bootstrap_rejects_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        binary_bootstrap_ci(*args)


def test_binary_bootstrap_ci_takes_one_audit_as_four_scalars():
    scalars = binary_bootstrap_ci(12, 40, 20, 40, n_resamples=500, random_state=2)
    lists = binary_bootstrap_ci([12], [40], [20], [40], n_resamples=500, random_state=2)
    assert scalars[0].shape == (1,) and np.array_equal(scalars[0], lists[0]) and np.array_equal(scalars[1], lists[1])


@pytest.mark.parametrize("args, error, message", [
    (([], [], [], []), ValueError, "`flagged_a` is empty"),
    (([1, 50], [40, 40], [1, 1], [40, 40]), ValueError, r"`flagged_a` must lie in \[0, n_a\] for every audit; audit 1 has 50 flagged of 40"),
    (([1, 1], [40, 0], [1, 1], [40, 40]), ValueError, "`n_a` must be >= 1 for every audit; audit 1 has 0"),
])
def test_binary_bootstrap_ci_names_the_bad_audit(args, error, message):
    with pytest.raises(error, match=message):
        binary_bootstrap_ci(*args, n_resamples=10)
