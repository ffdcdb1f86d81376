"""report_tables: every number of a report's tables against an independent oracle.

Selection rates against fairlearn's MetricFrame and a pandas computation by hand; impact ratios
and unknowns by hand; the MOVER-R interval from statsmodels' Wilson limits and Donner and Zou's
formula (test_significance's oracle); the exact test by enumerating the hypergeometric distribution with SciPy; Holm against
statsmodels' multipletests; the equivalence test against statsmodels' score test; the exact power
by enumerating both groups' outcomes by hand, its normal approximation against statsmodels; the
2% exclusion at its boundary.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, hypergeom

from faircode.report import (
    FOUR_FIFTHS,
    count_categories,
    load_report_manifest,
    report_tables,
)
from faircode.significance import EXACT_POWER_SIZE, power_at_margin, power_method, z_test_power
from faircode.significance import VERDICTS, classify_gap, permutation_test_power

from report_data import RACE_LABELS, SEX_LABELS, frame, write
from test_significance import _mover_r_by_hand  # MOVER-R over statsmodels' Wilson limits, by hand

RTOL = 1e-9  # floating-point rounding: every number here is a closed form or an exact sum


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The tables of `frame`'s 2,000 people, with the data as pandas reads it."""
    folder = tmp_path_factory.mktemp("report")
    data = frame(seed=1)
    manifest = load_report_manifest(write(folder, data))
    return report_tables(count_categories(manifest), manifest), data


def _known(data: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The rows whose every category in ``columns`` is mapped, with the category names."""
    out = data.copy()
    out["sex"] = out["sex"].map(SEX_LABELS)
    out["race"] = out["race"].map(RACE_LABELS)
    out["selected"] = (out["decision"] == "yes").astype(int)
    return out.dropna(subset=columns)


def test_selection_rates_equal_fairlearns_metric_frame_and_a_hand_count(report):
    from fairlearn.metrics import MetricFrame, selection_rate

    tables, data = report
    for key, columns in (("sex", ["sex"]), ("race/ethnicity", ["race"]), ("intersection", ["sex", "race"])):
        known = _known(data, columns)
        frame_ = MetricFrame(metrics=selection_rate, y_true=known["selected"], y_pred=known["selected"],
                             sensitive_features=known[columns])
        by_hand = known.groupby(columns)["selected"].agg(["size", "sum"])
        for row in tables.table(key).rows:
            group = tuple(row.category.split(" & ")) if len(columns) > 1 else row.category
            assert row.selection_rate == pytest.approx(frame_.by_group[group], rel=RTOL)
            assert (row.n, row.n_selected) == tuple(by_hand.loc[group])
            assert row.share == pytest.approx(row.n / len(data), rel=RTOL)


def test_impact_ratios_divide_by_the_most_selected_category(report):
    tables, data = report
    for key, columns in (("sex", ["sex"]), ("race/ethnicity", ["race"]), ("intersection", ["sex", "race"])):
        rates = _known(data, columns).groupby(columns)["selected"].mean()
        top = rates.idxmax()
        table = tables.table(key)
        assert table.reference == (" & ".join(top) if isinstance(top, tuple) else top)
        for row in table.rows:
            group = tuple(row.category.split(" & ")) if len(columns) > 1 else row.category
            assert row.impact_ratio == pytest.approx(rates[group] / rates.max(), rel=RTOL)
            assert row.below_four_fifths == (rates[group] / rates.max() < FOUR_FIFTHS)


def test_unknowns_are_counted_per_table_and_join_no_category(report):
    tables, data = report
    sex_unknown = data["sex"].isin(["U", ""]).sum()
    race_unknown = (data["race"] == "").sum()
    assert tables.table("sex").n_unknown == sex_unknown
    assert tables.table("race/ethnicity").n_unknown == race_unknown
    either = (data["sex"].isin(["U", ""]) | (data["race"] == "")).sum()
    assert tables.table("intersection").n_unknown == either
    for table in tables.tables:
        assert sum(r.n for r in table.rows) + table.n_unknown == len(data)
    assert tables.n_rows == len(data)


def _two_sided_exact_p(x_a: int, n_a: int, x_b: int, n_b: int) -> float:
    """The permutation test's p-value enumerated by hand: the hypergeometric distribution of
    the selected in ``a``, tables at least as far from its mean as the observed (in integers)."""
    n, k = n_a + n_b, x_a + x_b
    support = np.arange(max(0, n_a - (n - k)), min(n_a, k) + 1)
    far = np.abs(support * n - k * n_a) >= abs(x_a * n - k * n_a)
    return float(hypergeom(n, k, n_a).pmf(support)[far].sum())


def _tested(tables):
    """Each tested row with its table and its reference's row."""
    for table in tables.tables:
        for row in table.rows:
            if row.tested:
                yield table, row, table.row(table.reference)


def test_exact_p_values_enumerate_the_hypergeometric_distribution(report):
    for table, row, ref in _tested(report[0]):
        want = _two_sided_exact_p(row.n_selected, row.n, ref.n_selected, ref.n)
        assert row.p_value == pytest.approx(want, rel=1e-9, abs=1e-300), (table.table, row.category)


def test_holm_over_each_table_equals_statsmodels(report):
    from statsmodels.stats.multitest import multipletests

    tables, _ = report
    for table in tables.tables:
        tested = [r for r in table.rows if r.tested]
        assert table.n_tested == len(tested) >= 1
        want = multipletests([r.p_value for r in tested], method="holm")[1]
        assert [r.p_adjusted for r in tested] == pytest.approx(list(want), rel=RTOL)
        want = multipletests([r.equivalence_p_value for r in tested], method="holm")[1]
        assert [r.equivalence_p_adjusted for r in tested] == pytest.approx(list(want), rel=RTOL)


def test_impact_ratio_intervals_are_mover_r_from_wilson_limits(report):
    for _, row, ref in _tested(report[0]):
        low, high = _mover_r_by_hand(row.n_selected, row.n, ref.n_selected, ref.n)
        assert (row.impact_ratio_ci_low, row.impact_ratio_ci_high) == pytest.approx((low, high), rel=1e-9)
        assert row.impact_ratio_ci_low < row.impact_ratio < row.impact_ratio_ci_high


def test_verdicts_are_classify_gap_on_the_adjusted_values(report):
    tables, _ = report
    for table in tables.tables:
        for row in table.rows:
            if not row.tested:
                assert row.verdict is None and math.isnan(row.p_value)
                continue
            assert row.verdict == classify_gap(
                p_value=row.p_adjusted, ci_low=row.impact_ratio_ci_low, ci_high=row.impact_ratio_ci_high,
                equivalence_p_value=row.equivalence_p_adjusted, margin=(0.8, math.inf), alpha=0.05)
            assert row.verdict in VERDICTS


def test_the_equivalence_test_of_large_groups_is_statsmodels_non_inferiority_score_test(tmp_path):
    # 400 and 300 people: more tables than the exact test enumerates, so the score test.
    from statsmodels.stats.proportion import test_proportions_2indep

    data = pd.DataFrame({"sex": ["F"] * 400 + ["M"] * 300, "race": "W",
                         "decision": ["yes"] * 150 + ["no"] * 250 + ["yes"] * 140 + ["no"] * 160})
    m = load_report_manifest(write(tmp_path, data))
    row = report_tables(count_categories(m), m).table("sex").row("Female")
    theirs = test_proportions_2indep(150, 400, 140, 300, value=0.8, method="score", compare="ratio",
                                     alternative="larger", correction=True)
    assert row.equivalence_p_value == pytest.approx(float(theirs.pvalue), abs=1e-12)


def _exact_power_by_hand(p_a: float, p_b: float, n_a: int, n_b: int, alpha: float) -> float:
    """The chance that the exact test rejects, summed over every outcome of both groups."""
    total = 0.0
    for x_a in range(n_a + 1):
        for x_b in range(n_b + 1):
            if _two_sided_exact_p(x_a, n_a, x_b, n_b) < alpha:
                total += binom.pmf(x_a, n_a, p_a) * binom.pmf(x_b, n_b, p_b)
    return total


def test_power_at_the_margin_of_small_groups_is_the_exact_power_at_alpha_over_m(tmp_path):
    # Three categories against the reference: the power is at 0.05 / 3, on the band's edge 0.8.
    rows = {"W": (30, 24), "B": (25, 10), "H": (20, 9), "A": (15, 6)}
    data = pd.DataFrame([{"sex": "F", "race": r, "decision": "yes" if i < x else "no"}
                         for r, (n, x) in rows.items() for i in range(n)])
    m = load_report_manifest(write(tmp_path, data))
    table = report_tables(count_categories(m), m).table("race/ethnicity")
    assert table.reference == "White" and table.n_tested == 3
    for race, name in (("B", "Black"), ("A", "Asian")):
        row = table.row(name)
        assert row.power_method == "exact"
        want = _exact_power_by_hand(0.8 * 24 / 30, 24 / 30, rows[race][0], 30, 0.05 / 3)
        assert row.power_at_margin == pytest.approx(want, rel=1e-9)


def test_the_normal_approximation_of_large_groups_power_is_statsmodels_and_near_the_exact():
    from statsmodels.stats.proportion import power_proportions_2indep

    for p_b, n_a, n_b, alpha in ((0.3, 12000, 12000, 0.05), (0.5, 9000, 40000, 0.01), (0.2, 30000, 12000, 0.025)):
        assert math.sqrt(min(n_a, n_b)) * (math.sqrt(n_a) + math.sqrt(n_b)) > EXACT_POWER_SIZE
        assert power_method(n_a, n_b) == "normal" and power_method(n_a, n_b, "exact") == "exact"
        p_a = 0.8 * p_b
        ours = z_test_power(p_a, p_b, n_a, n_b, alpha=alpha)
        assert power_at_margin(p_b, n_a, n_b, margin=(0.8, math.inf), compare="ratio", alpha=alpha) == ours
        theirs = power_proportions_2indep(p_a - p_b, p_b, n_a, ratio=n_b / n_a, alpha=alpha, return_results=False)
        assert ours == pytest.approx(float(theirs), rel=1e-9)
        # Where it is used, within 0.01 of the exact power of the exact test.
        assert abs(ours - permutation_test_power(p_a, p_b, n_a, n_b, alpha=alpha)) < 0.01


def _with_shares(n_small: int, total: int) -> pd.DataFrame:
    """``total`` people: an all-selected race ``A`` of ``n_small`` (the highest rate), the rest
    W (60% selected) and B (40%)."""
    rest = total - n_small
    half = rest // 2
    rows = [("A", "yes")] * n_small
    rows += [("W", "yes" if i < 0.6 * half else "no") for i in range(half)]
    rows += [("B", "yes" if i < 0.4 * (rest - half) else "no") for i in range(rest - half)]
    return pd.DataFrame({"sex": "F", "race": [r for r, _ in rows], "decision": [d for _, d in rows]})


@pytest.mark.parametrize("n_small, excluded", [(19, True), (20, False)])
def test_the_2_percent_rule_excludes_strictly_under_2_percent(tmp_path, n_small, excluded):
    # 19 of 1,000 is 1.9%: excluded, never the reference, its count and rate still reported. 20 of
    # 1,000 is exactly 2.0%, not "less than 2%" (6 RCNY 5-301): kept, and it is then the reference.
    reason = "categories under 2% of the data, as Local Law 144's rules allow"
    m = load_report_manifest(write(tmp_path, _with_shares(n_small, 1000),
                                   exclusion={"under_share": 0.02, "reason": reason}))
    table = report_tables(count_categories(m), m).table("race/ethnicity")
    asian = table.row("Asian")
    assert (asian.n, asian.n_selected, asian.selection_rate) == (n_small, n_small, 1.0)
    assert asian.share == pytest.approx(n_small / 1000, rel=RTOL)
    assert asian.excluded is excluded
    if excluded:
        assert asian.exclusion_reason == reason and not asian.reference
        assert table.reference == "White" and math.isnan(asian.impact_ratio) and asian.verdict is None
        assert table.n_tested == 1
    else:
        assert asian.exclusion_reason is None and asian.reference and table.reference == "Asian"
        assert table.n_tested == 2


def test_without_the_rule_a_tiny_category_sets_the_reference(tmp_path):
    m = load_report_manifest(write(tmp_path, _with_shares(19, 1000)))
    table = report_tables(count_categories(m), m).table("race/ethnicity")
    assert table.reference == "Asian" and not any(r.excluded for r in table.rows)
    assert table.row("White").impact_ratio == pytest.approx(0.6, rel=RTOL)


def test_a_tie_for_the_most_selected_goes_to_the_first_category_in_label_order(tmp_path):
    # Black and Hispanic both select 1 in 2 (10/20 and 20/40, equal as fractions); White is
    # listed first in the labels but selects less; Black comes before Hispanic.
    data = pd.DataFrame({"sex": "F", "race": ["W"] * 10 + ["H"] * 40 + ["B"] * 20,
                         "decision": ["yes"] * 2 + ["no"] * 8 + ["yes", "no"] * 20 + ["yes", "no"] * 10})
    m = load_report_manifest(write(tmp_path, data))
    assert report_tables(count_categories(m), m).table("race/ethnicity").reference == "Black"


def test_a_category_the_data_lack_is_listed_as_absent(tmp_path):
    data = frame(seed=2, n=300)
    data = data[data["race"] != "A"]
    m = load_report_manifest(write(tmp_path, data))
    tables = report_tables(count_categories(m), m)
    assert tables.table("race/ethnicity").absent == ("Asian",)
    assert set(tables.table("intersection").absent) == {"Female & Asian", "Male & Asian"}
    with pytest.raises(KeyError, match="Asian"):
        tables.table("race/ethnicity").row("Asian")


def test_an_extra_table_is_reported_like_the_laws(tmp_path):
    data = frame(seed=3, n=500)
    data["age"] = np.where(data["id"] % 3 == 0, "under 40", "40 or over")
    extra = [{"name": "age_band", "column": "age", "labels": {"under 40": "Under 40", "40 or over": "40 or over"}}]
    raw_categories = {"sex": {"column": "sex", "labels": SEX_LABELS, "unknown": ["", "U"]},
                      "race_ethnicity": {"column": "race", "labels": RACE_LABELS, "unknown": [""]}, "extra": extra}
    m = load_report_manifest(write(tmp_path, data, categories=raw_categories))
    table = report_tables(count_categories(m), m).table("age_band")
    assert [r.category for r in table.rows] == ["Under 40", "40 or over"]
    assert sum(r.n for r in table.rows) == 500 and table.n_unknown == 0


def test_a_verdict_sentence_reads_the_rows_numbers(report):
    tables, _ = report
    table = tables.table("sex")
    tested = next(r for r in table.rows if r.tested)
    sentence = tables.sentence("sex", tested.category, names=("those", "the others"), outcome="selected")
    assert sentence.startswith({"gap_shown": "A gap", "no_practical_gap_shown": "No gap",
                                "inconclusive": "Inconclusive"}[tested.verdict])
    # The table's p-values are Holm-adjusted over its family: the sentence calls them so.
    assert "Holm-adjusted p " in sentence and "test, p " not in sentence and "test p " not in sentence
    with pytest.raises(ValueError, match="reference"):
        tables.sentence("sex", table.reference)
