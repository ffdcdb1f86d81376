"""The project's one p-value convention: ``faircode.significance.format_p_value`` decides, and the
site's ``pvalue`` filter and results page print exactly what it decides (issue 12, statement 7)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from faircode.significance import format_p_value, permutation_test_result
from site_src.filters import mc_percent, pvalue
from site_src.rendering.results_page import table_html

HYPOTHESIS = settings(max_examples=200, deadline=None, database=None, derandomize=True)


def _convention(p: float) -> str:
    """The project's p-value text, built independently of ``format_p_value``: exact decimal
    rounding (``decimal``, half-even on the exact binary value) to two significant digits, fixed
    notation from 0.001 up, ``m.m × 10ᵉ`` below with the exponent in Unicode superscripts (looked
    up by their Unicode names)."""
    from decimal import ROUND_HALF_EVEN, Decimal
    from unicodedata import lookup

    d = Decimal(p)  # the double's exact value
    if p >= 0.001:
        exp = d.adjusted()
        q = d.quantize(Decimal(1).scaleb(exp - 1), rounding=ROUND_HALF_EVEN)
        if q.adjusted() > exp:  # 0.0996 -> 0.10: two digits of the next decade
            q = d.quantize(Decimal(1).scaleb(exp), rounding=ROUND_HALF_EVEN)
        return f"p = {q:f}"
    exp = d.adjusted()
    mantissa = d.scaleb(-exp).quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN)
    if mantissa == 10:
        mantissa, exp = Decimal("1.0"), exp + 1
    names = {"-": "MINUS", **{str(i): n for i, n in enumerate(
        ["ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE"])}}
    power = "".join(lookup(f"SUPERSCRIPT {names[c]}") for c in str(exp))
    return f"p = {mantissa} {lookup('MULTIPLICATION SIGN')} 10{power}"


def _oracle_p_values() -> list[float]:
    """p-values computed by SciPy, not by faircode: exact tests on small tables, and normal tails."""
    from scipy import stats

    ps = [stats.fisher_exact([[a, 20 - a], [b, 20 - b]]).pvalue for a, b in ((3, 9), (5, 8), (2, 14), (10, 10))]
    ps += [stats.binomtest(k, 40, 0.5).pvalue for k in (8, 13, 17, 20)]
    ps += [2 * stats.norm.sf(z) for z in (1.0, 1.96, 3.3, 5.0, 10.0, 20.0)]
    return ps + [0.0996, 0.000999, 0.5, 1.0, 0.0012]  # the decade edges and the trailing zero


def test_the_p_value_convention_against_independent_values():
    """One convention, pinned: every p-value SciPy computes reads as the independent oracle
    writes it, the site's filter prints the same, and the Monte Carlo floor of ``m`` relabellings
    is the true smallest value of ``(b + 1) / (m + 1)``: ``1/(m + 1)``, never ``1/m``."""
    for p in _oracle_p_values():
        assert format_p_value(p) == _convention(p), p
        assert pvalue(p) == _convention(p)
    assert format_p_value(0.0) == "p < 10" + "\u207b\u00b3\u2070\u2070"  # an exact p that underflowed
    assert format_p_value(float("nan")) == "p = n/a"
    for m in (99, 2000, 9999):
        floor = 1 / (m + 1)  # no relabelling as extreme: (0 + 1) / (m + 1)
        assert format_p_value(floor, floor=floor) == f"p = 1/{m + 1:,}" == pvalue(floor, m)
        assert format_p_value(0.5, floor=floor) == _convention(0.5)  # above the floor: the usual text


@pytest.mark.parametrize("m", [99, 999, 2000, 9999])
def test_floor_text_is_one_over_m_plus_one_for_m_permutations(m):
    # Two groups that no relabelling can separate further: none of the m shuffles is as extreme,
    # so the Phipson-Smyth estimate (b + 1) / (m + 1) is 1 / (m + 1), and both the library and
    # the site say "p = 1/(m + 1)".
    a, b = np.arange(100.0, 140.0), np.arange(0.0, 40.0)
    res = permutation_test_result(a, b, n_permutations=m, random_state=0)
    assert res.is_monte_carlo_minimum
    assert res.p_value == pytest.approx(1 / (m + 1), rel=1e-12)  # (0 + 1) / (m + 1): the true floor
    expected = f"p = 1/{m + 1:,}"
    assert res.format_p_value() == expected
    assert pvalue(res.p_value, m) == expected


@HYPOTHESIS
@given(p=st.floats(0, 1), m=st.one_of(st.none(), st.integers(1, 10**6)))
def test_site_filter_prints_what_the_library_decides(p, m):
    floor = None if m is None else 1 / (m + 1)
    if m is not None:
        p = max(p, floor)  # a Monte Carlo p-value is never below its floor
    assert pvalue(p, m) == format_p_value(p, floor=floor)


@HYPOTHESIS
@given(p=st.floats(0, 1), m=st.integers(1, 10**6))
def test_never_prints_zero_and_keeps_two_significant_digits(p, m):
    p = max(p, 1 / (m + 1))
    text = format_p_value(p, floor=1 / (m + 1))
    if text.startswith("p = 1/"):
        assert int(text[len("p = 1/"):].replace(",", "")) == m + 1
        return
    shown = text.removeprefix("p = ")
    if "×" in shown:
        mantissa, power = shown.split(" × 10")
        exponent = int(power.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
        value = float(mantissa) * 10.0**exponent
        assert len(mantissa.replace(".", "")) == 2
    else:
        value = float(shown)
        assert len(shown.replace(".", "").lstrip("0")) == 2
    assert value > 0
    assert value == pytest.approx(p, rel=0.06)  # rounding to two significant digits


def test_results_page_prints_the_same_p_value():
    row = {"audit": "a", "strategy": "S0", "model": "m", "attribute": "sex", "metric": "demographic_parity_difference",
           "value_disadvantaged": 0.2, "value_advantaged": 0.3, "gap": -0.1, "ci_low": -0.2, "ci_high": 0.0,
           "significant": True, "small_sample_warning": False}
    for p, shown in ((0.0321, "0.032"), (3.2e-7, "3.2 × 10⁻⁷"), (0.0, "&lt; 10⁻³⁰⁰")):
        html = str(table_html(pd.DataFrame([{**row, "p_value": p}]), small_sample=30))
        assert f'data-col="p_value" data-label="p" data-value="{p!r}">{shown}</td>' in html


def test_filter_rejects_what_is_not_a_p_value():
    with pytest.raises(ValueError, match=r"p-value in \[0, 1\]"):
        pvalue(1.5)
    with pytest.raises(ValueError, match="n_resamples must be a positive whole number"):
        pvalue(0.5, 0)


@pytest.mark.parametrize(
    ("share", "n", "shown"),
    [
        (0.414, 500, "41% ± 2"),  # se = sqrt(.414 * .586 / 500) = 2.2 points
        (0.049, 2000, "4.9% ± 0.5"),  # se = 0.48 points
        (0.0005, 2000, "0.05% ± 0.05"),  # one count in 2,000: the resolution 1 / n
        (0.05, 500, "5% ± 1"),  # se = 0.97 points rounds to 1: no tenths
    ],
)
def test_mc_percent_shows_only_the_digits_the_simulation_supports(share, n, shown):
    assert mc_percent(share, n) == shown
    se = 100 * max(math.sqrt(share * (1 - share) / n), 1 / n)
    printed_se = float(shown.split("± ")[1])
    assert printed_se == pytest.approx(se, rel=0.25)


@pytest.mark.parametrize("n", [200, 500, 1000, 2000, 9999])
def test_mc_percent_of_none_or_all_is_a_true_bound_not_a_spread(n):
    """0 or n events out of n: a one-sided 95% bound. The oracle is the exact binomial bound
    (Clopper-Pearson, from SciPy's beta quantile), which the rule of three approximates; the shown
    bound must contain it (rounded outwards), and nothing may read as above 100%."""
    from scipy.stats import beta

    exact_upper = 100 * beta.ppf(0.95, 1, n)  # zero events: P(X = 0) = 0.05 at this rate
    none, every = mc_percent(0.0, n), mc_percent(1.0, n)
    assert none.startswith(f"0% (none of {n:,}; below ") and every.startswith(f"100% (all {n:,}; above ")
    assert none.endswith("% with 95% confidence)") and every.endswith("% with 95% confidence)")
    shown_upper = float(none.split("below ")[1].split("%")[0])
    shown_lower = float(every.split("above ")[1].split("%")[0])
    assert shown_upper >= exact_upper and shown_upper <= 3 * exact_upper
    assert shown_lower <= 100 - exact_upper and shown_lower < 100


def test_formatting_a_p_value_does_not_import_numpy():
    """The site formats p-values on every page it renders; faircode.formatting is kept NumPy-free
    so that a prose edit does not pay for importing NumPy (significance re-exports the function)."""
    import subprocess
    import sys

    probe = ("import sys, faircode.formatting as f; import faircode.significance as s; "
             "assert s.format_p_value is f.format_p_value") 
    done = subprocess.run([sys.executable, "-c", "import sys, faircode.formatting; print('numpy' in sys.modules)"],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    subprocess.run([sys.executable, "-c", probe], check=True)
