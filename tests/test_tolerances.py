"""faircode.tolerances: each kind of quantity just inside and just outside its tolerance, with the
bands checked against independent computations (SciPy, simulation, closed forms)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from faircode import tolerances as tol


def test_mc_error_is_the_binomial_standard_error_floored_at_one_resample():
    assert tol.mc_error(0.5, 10_000) == pytest.approx(stats.binom(10_000, 0.5).std() / 10_000)
    assert tol.mc_error(0.0, 2_000) == pytest.approx(1 / 2_000)
    with pytest.raises(ValueError, match="n must be a positive number of resamples"):
        tol.mc_error(0.5, 0)


def test_site_checks_use_the_one_mc_error():
    from site_src.checking import check

    assert check.mc_error is tol.mc_error


def test_exact_counts_and_labels():
    rule = tol.exact()
    assert rule.matches(412, 412) and rule.matches("exact", "exact")
    assert not rule.matches(412, 413)
    assert not rule.matches("True", "False")


def test_fitted_quantity_just_inside_and_just_outside():
    rule = tol.fitted()
    assert rule.matches(0.7346269162, 0.7346269162 - 0.99e-4)
    assert not rule.matches(0.7346269162, 0.7346269162 - 1.01e-4)
    assert rule.matches(0.7346269162, 0.7346176625)  # the ROC AUC that moved by 9e-6 (issue 10)


def test_undefined_matches_only_undefined():
    for rule in (tol.fitted(), tol.p_value(), tol.monte_carlo(0.5, 100)):
        assert rule.matches(math.nan, math.nan)
        assert not rule.matches(math.nan, 0.5) and not rule.matches(0.5, math.nan)


def test_fitted_ratio_propagates_the_rate_bound():
    a, b = 0.3, 0.5
    rule = tol.fitted_ratio(a, b)
    # The largest first-order move of a / b when a and b each move by FITTED_ATOL.
    worst = abs(np.gradient([(a - 1e-4) / (b + 1e-4), a / b, (a + 1e-4) / (b - 1e-4)])[1])
    assert rule.atol == pytest.approx(worst, rel=1e-3)
    assert rule.matches(a / b, a / b + 0.99 * rule.atol)
    assert not rule.matches(a / b, a / b + 1.01 * rule.atol)
    assert tol.fitted_ratio(0.3, 0.0).kind == "exact"  # undefined ratio: nothing to propagate


def test_monte_carlo_band_is_four_standard_errors_of_a_difference():
    p, n = 0.5, 10_000
    se_of_difference = math.sqrt(2) * stats.binom(n, p).std() / n
    rule = tol.monte_carlo(p, n)
    assert rule.matches(p, p + 3.99 * se_of_difference)
    assert not rule.matches(p, p + 4.01 * se_of_difference)
    assert tol.monte_carlo(p, 0).kind == "exact"


def test_a_monte_carlo_q_value_moves_as_its_p_value_does_scaled_plus_its_rounding():
    """Issue 47: a q-value m p / j carries p's relative Monte Carlo error, which mc_error(q, n)
    understates (here 6 times: q = 0.02 adjusts p = 0.0005 over 40 families); the band is four
    standard errors of a difference of two q-values plus the rounding to one standard error."""
    q, p, n = 0.02, 0.0005, 10_000
    se_of_q = q * (stats.binom(n, p).std() / n) / p
    rule = tol.monte_carlo_q_value(q, p, n)
    band = 4 * math.sqrt(2) * se_of_q + se_of_q
    assert rule.matches(q, q + 0.999 * band) and not rule.matches(q, q + 1.001 * band)
    assert se_of_q > 6 * tol.mc_error(q, n) and rule.atol > 6 * tol.monte_carlo(q, n).atol
    assert tol.monte_carlo_q_value(q, float("nan"), n).kind == "exact"
    assert tol.monte_carlo_q_value(q, p, 0).kind == "exact"


def test_p_values_on_the_log_scale_with_a_floor():
    rule = tol.p_value()
    assert rule.matches(1e-3, 1e-3 * 10 ** 0.049)
    assert not rule.matches(1e-3, 1e-3 * 10 ** 0.051)
    assert rule.matches(0.5, 0.5 * 10 ** -0.049)
    assert not rule.matches(0.5, 0.5 * 10 ** -0.051)
    # Below the floor every p-value is the same; across it, the floored value is compared.
    assert rule.matches(1e-14, 1e-30) and rule.matches(0.0, 1e-12)
    assert not rule.matches(1e-12, tol.P_FLOOR * 10 ** 0.06)
