"""The results files' three-state verdicts (issue 45) and the digits of their Monte Carlo q-values
and the README's interval coverage (issue 47, item 18).

Expected values come from independent oracles: statsmodels (``multipletests``, the score TOST
``tost_proportions_2indep``, Newcombe's interval), exact enumeration with SciPy's binomial pmf, the
audit's data refitted, and the rule's one home (``classify_gap``) applied to the numbers as the
files hold them.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from statsmodels.stats.multitest import multipletests
from statsmodels.stats import proportion as statsmodels_proportion
from statsmodels.stats.proportion import confint_proportions_2indep

from faircode import benchmark as bm
from faircode.significance import VERDICTS, classify_gap, equivalence_test_from_counts, power_at_margin
from results_oracles import check_family_q_values
# statsmodels' proportion module with the fix of its open bug in the difference's restricted
# likelihood (statsmodels #10269; see that module), as a fixture.
from test_significance_equivalence import statsmodels_fixed  # noqa: F401

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "results"
FAMILY = ["audit", "strategy", "model", "attribute", "metric"]


@pytest.fixture(scope="module")
def fairness() -> pd.DataFrame:
    return pd.read_csv(RESULTS / bm.FAIRNESS_FILE, keep_default_na=False, na_values=[""])


@pytest.fixture(scope="module")
def by_group() -> pd.DataFrame:
    return pd.read_csv(RESULTS / bm.BY_GROUP_FILE, keep_default_na=False, na_values=[""])


def _counts(row) -> tuple[int, int, int, int]:
    """The two groups' counts of the rate the row compares, from its rates and sizes."""
    n1, n2 = int(row["n_disadvantaged"]), int(row["n_advantaged"])
    return round(row["value_disadvantaged"] * n1), n1, round(row["value_advantaged"] * n2), n2


# ------------------------------------------------------------------------------ results_fairness.csv


def test_every_defined_gap_has_a_verdict_and_the_audits_margin(fairness):
    defined = fairness["gap"].notna()
    assert fairness.loc[defined, "verdict"].isin(list(VERDICTS)).all()
    assert fairness.loc[~defined, "verdict"].isna().all()
    ratio = fairness["kind"] == "ratio"
    # Every audit declares 5 points and the four-fifths band (audits/*/audit.yaml, practical_margin).
    assert (fairness.loc[ratio, ["margin_low", "margin_high"]] == [0.8, 1.25]).all().all()
    assert (fairness.loc[~ratio, ["margin_low", "margin_high"]] == [-0.05, 0.05]).all().all()


def test_each_verdict_is_classify_gap_on_the_rows_adjusted_numbers(fairness):
    rows = fairness[fairness["verdict"].notna()]
    assert len(rows) > 600
    for row in rows.to_dict("records"):
        expected = classify_gap(p_value=row["q_value"], ci_low=row["ci_low"], ci_high=row["ci_high"],
                                equivalence_p_value=row["equivalence_q_value"],
                                margin=(row["margin_low"], row["margin_high"]), alpha=bm.ALPHA)
        assert row["verdict"] == expected, row
    # The adjusted values, not the raw ones: some rows' raw p-values alone would read otherwise.
    raw = [classify_gap(p_value=r["p_value"], ci_low=r["ci_low"], ci_high=r["ci_high"],
                        equivalence_p_value=r["equivalence_p_value"], margin=(r["margin_low"], r["margin_high"]))
           for r in rows.to_dict("records")]
    assert (np.array(raw) != rows["verdict"].to_numpy()).any()


def _statsmodels_tost(fixed, x1, n1, x2, n2, margin, kind) -> float:
    """statsmodels' score TOST (its fixed module for a difference, as shipped for a ratio)."""
    module, compare = (fixed, "diff") if kind == "difference" else (statsmodels_proportion, "ratio")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(module.tost_proportions_2indep(x1, n1, x2, n2, *margin, method="score", compare=compare,
                                                    correction=True).pvalue)


def test_the_equivalence_p_value_is_the_tost_on_the_rows_counts(fairness, statsmodels_fixed):  # noqa: F811
    rows = fairness[fairness["verdict"].notna()]
    sample = rows.iloc[::9]  # every audit, metric and method; the whole table takes a minute
    assert set(sample["equivalence_method"]) == {"exact", "score"} and set(sample["kind"]) == {"difference", "ratio"}
    for row in sample.to_dict("records"):
        x1, n1, x2, n2 = _counts(row)
        result = equivalence_test_from_counts(x1, n1, x2, n2, margin=(row["margin_low"], row["margin_high"]),
                                              compare=row["kind"], interval=False)
        assert result.method == row["equivalence_method"], row
        assert row["equivalence_p_value"] == pytest.approx(result.p_value, rel=1e-9, abs=1e-300), row
        if result.method == "score":  # and statsmodels' score TOST, an independent implementation
            stats_p = _statsmodels_tost(statsmodels_fixed, x1, n1, x2, n2, (row["margin_low"], row["margin_high"]),
                                        row["kind"])
            assert row["equivalence_p_value"] == pytest.approx(stats_p, rel=1e-9, abs=1e-15), row


def test_the_power_is_the_exact_tests_power_at_the_margin(fairness):
    rows = fairness[fairness["verdict"].notna()].iloc[::23]
    for row in rows.to_dict("records"):
        x1, n1, x2, n2 = _counts(row)
        expected = power_at_margin(x2 / n2, n1, n2, margin=(row["margin_low"], row["margin_high"]),
                                   compare=row["kind"], alpha=bm.ALPHA)
        assert row["power_at_margin"] == pytest.approx(expected, abs=1e-9), row


def test_the_equivalence_q_values_adjust_the_distinct_equivalence_hypotheses_within_each_audit(fairness):
    """BH within each audit. The disparate impact ratio's band test counts (it is not the demographic
    parity difference's points test, which its usual test repeats); the equal opportunity difference
    (favourable negative: one minus the false positive rate, a symmetric margin) repeats the false
    positive rate difference's test and carries its q-value."""
    key = ["audit", "strategy", "model", "attribute"]
    for audit, rows in fairness[fairness["verdict"].notna()].groupby("audit"):
        distinct = rows[rows["metric"] != "equal_opportunity_difference"]
        expected = multipletests(distinct["equivalence_p_value"], method="fdr_bh")[1]
        np.testing.assert_allclose(distinct["equivalence_q_value"], expected, rtol=1e-9, err_msg=audit)
        eo = rows[rows["metric"] == "equal_opportunity_difference"].set_index(key)
        fpr = rows[rows["metric"] == "false_positive_rate_difference"].set_index(key).loc[eo.index]
        np.testing.assert_allclose(eo["equivalence_p_value"], fpr["equivalence_p_value"], rtol=1e-9)
        np.testing.assert_allclose(eo["equivalence_q_value"], fpr["equivalence_q_value"], rtol=0)
        di = rows[rows["metric"] == "disparate_impact_ratio"].set_index(key)
        dp = rows[rows["metric"] == "demographic_parity_difference"].set_index(key).loc[di.index]
        assert (di["q_value"] == dp["q_value"]).all()  # one usual test...
        assert (di["equivalence_p_value"] != dp["equivalence_p_value"]).any()  # ...two equivalence tests


def test_the_equivalence_p_value_from_the_audits_data(statsmodels_fixed):  # noqa: F811
    """Oracle from the data: refit one task, count each group's flags, and test them."""
    from faircode.audit import load_audit
    from faircode.models import fit_predict

    audit = load_audit("recidivism-risk")
    pred = fit_predict(audit, strategy="S2", model="logistic_regression")
    rows = pd.read_csv(RESULTS / bm.FAIRNESS_FILE).query(
        "audit == 'recidivism-risk' and strategy == 'S2' and model == 'logistic_regression' and attribute == 'race'"
    ).set_index("metric")
    dis = audit.masks["race"][pred.rows] == 1
    adv = audit.reference_masks["race"][pred.rows] == 1
    flagged = np.asarray(pred.y_pred)
    x1, n1, x2, n2 = int(flagged[dis].sum()), int(dis.sum()), int(flagged[adv].sum()), int(adv.sum())
    dp = rows.loc["demographic_parity_difference"]
    stats_p = _statsmodels_tost(statsmodels_fixed, x1, n1, x2, n2, (-0.05, 0.05), "difference")
    assert dp["equivalence_method"] == "score" and dp["equivalence_p_value"] == pytest.approx(stats_p, rel=1e-9)
    di = rows.loc["disparate_impact_ratio"]  # the favourable decision: not flagged
    stats_p = _statsmodels_tost(statsmodels_fixed, n1 - x1, n1, n2 - x2, n2, (0.8, 1.25), "ratio")
    assert di["equivalence_p_value"] == pytest.approx(stats_p, rel=1e-9)
    negative = np.asarray(pred.y_true) == 0  # the false positive rate: flags among the true negatives
    f1, m1 = int(flagged[dis & negative].sum()), int((dis & negative).sum())
    f2, m2 = int(flagged[adv & negative].sum()), int((adv & negative).sum())
    fpr = rows.loc["false_positive_rate_difference"]
    expected = equivalence_test_from_counts(f1, m1, f2, m2, margin=0.05, interval=False)
    assert (fpr["n_disadvantaged"], fpr["n_advantaged"]) == (m1, m2)
    assert fpr["equivalence_p_value"] == pytest.approx(expected.p_value, rel=1e-9)


# ----------------------------------------------------------------------------- results_by_group.csv


def test_each_group_verdict_is_classify_gap_against_the_reference(by_group):
    reference = by_group["group"] == by_group["reference_group"]
    verdict_columns = ["diff_vs_reference_ci_low", "margin_low", "equivalence_p_value", "equivalence_p_value_holm",
                       "power_at_margin", "verdict"]
    assert by_group.loc[reference, verdict_columns].isna().all().all()  # the reference row's are empty
    tested = by_group["p_value_vs_reference"].notna()
    assert by_group.loc[~tested, "verdict"].isna().all()  # small cells and untested groups: no verdict
    rows = by_group[tested]
    assert len(rows) > 1000 and rows["verdict"].isin(list(VERDICTS)).all()
    for row in rows.to_dict("records"):
        expected = classify_gap(p_value=row["p_value_vs_reference_holm"], ci_low=row["diff_vs_reference_ci_low"],
                                ci_high=row["diff_vs_reference_ci_high"],
                                equivalence_p_value=row["equivalence_p_value_holm"],
                                margin=(row["margin_low"], row["margin_high"]), alpha=bm.ALPHA)
        assert row["verdict"] == expected, row


def test_the_group_interval_equivalence_and_holm_against_independent_oracles(by_group):
    ref = by_group[by_group["group"] == by_group["reference_group"]].set_index(FAMILY)
    rows = by_group[by_group["p_value_vs_reference"].notna()]
    for row in rows.iloc[::17].to_dict("records"):
        r = ref.loc[tuple(row[k] for k in FAMILY)]
        x1, n1, x2, n2 = int(row["n_outcome"]), int(row["n_group"]), int(r["n_outcome"]), int(r["n_group"])
        low, high = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff")
        assert (row["diff_vs_reference_ci_low"], row["diff_vs_reference_ci_high"]) == pytest.approx((low, high),
                                                                                                   abs=1e-9)
        result = equivalence_test_from_counts(x1, n1, x2, n2, margin=(-0.05, 0.05), interval=False)
        assert row["equivalence_method"] == result.method
        assert row["equivalence_p_value"] == pytest.approx(result.p_value, rel=1e-9), row
        assert row["power_at_margin"] == pytest.approx(
            power_at_margin(x2 / n2, n1, n2, margin=(-0.05, 0.05), compare="difference"), abs=1e-9)
    for _, family in rows.groupby(FAMILY):
        np.testing.assert_allclose(family["equivalence_p_value_holm"],
                                   multipletests(family["equivalence_p_value"], method="holm")[1], rtol=1e-9)


# ------------------------------------------------- the digits of Monte Carlo q-values (issue 47, 18)


def test_monte_carlo_q_values_carry_the_digits_their_error_supports(by_group):
    assert (by_group["method_max_gap"] == "monte_carlo").any()
    check_family_q_values(by_group)
    # No more "0.004666666667": a Monte Carlo test's q-value has at most a few significant digits.
    text = pd.read_csv(RESULTS / bm.BY_GROUP_FILE, dtype=str, keep_default_na=False)
    written = text.loc[text["method_max_gap"] == "monte_carlo", "q_value_max_gap"]
    digits = [len(re.sub(r"^0\.0*|e.*$|\.", "", w)) for w in written]
    assert len(digits) > 100 and max(digits) <= 3


# ------------------------------------------------ the README's interval coverage (issue 47, 18)


def _newcombe_coverage(p_a: float, p_b: float, n: int = 10) -> float:
    """Exact coverage of statsmodels' Newcombe interval at n against n rows: every table enumerated."""
    k = np.arange(n + 1)
    weight = np.outer(binom.pmf(k, n, p_a), binom.pmf(k, n, p_b))
    covered = np.zeros((n + 1, n + 1), dtype=bool)
    for x in k:
        for y in k:
            low, high = confint_proportions_2indep(int(x), n, int(y), n, method="newcomb", compare="diff")
            covered[x, y] = low <= p_a - p_b <= high
    return float((weight * covered).sum())


def test_the_coverage_the_readme_and_the_results_page_quote_is_the_exact_one():
    assert f"{_newcombe_coverage(0.05, 0.20):.1%}" == "98.6%"
    assert f"{_newcombe_coverage(0.04, 0.96):.1%}" == "87.9%"
    readme = (RESULTS / "README.md").read_text(encoding="utf-8")
    page = (REPO / "site_src" / "templates" / "results.md.j2").read_text(encoding="utf-8")
    assert "coverage near 95%" not in readme
    assert "98.6% with rates of 5% and 20%" in readme and "87.9% at 4% against 96%" in readme
    assert "rates of 5%\n    and 20%, it covers the true gap 98.6%" in page


def test_the_readmes_average_coverage_over_rates():
    grid = np.linspace(0.01, 0.99, 99)
    n = 10
    k = np.arange(n + 1)
    limits = {(x, y): confint_proportions_2indep(int(x), n, int(y), n, method="newcomb", compare="diff")
              for x in k for y in k}
    low = np.array([[limits[x, y][0] for y in k] for x in k])
    high = np.array([[limits[x, y][1] for y in k] for x in k])
    coverage = [float((np.outer(binom.pmf(k, n, a), binom.pmf(k, n, b)) * ((low <= a - b) & (a - b <= high))).sum())
                for a in grid for b in grid]
    assert f"{np.mean(coverage):.1%}" == "95.3%"
    assert "95.3% averaged over rates from 1% to 99%" in (RESULTS / "README.md").read_text(encoding="utf-8")
