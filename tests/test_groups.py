"""faircode.groups: rates by group against fairlearn's MetricFrame on every audit, intervals
against statsmodels, group labels against pandas, the small-cell rule, manifest validation."""

from __future__ import annotations

import functools
import re
import textwrap

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    MetricFrame,
    false_positive_rate,
    selection_rate,
    true_negative_rate,
    true_positive_rate,
)
from sklearn.metrics import accuracy_score, precision_score
from statsmodels.stats.proportion import proportion_confint

from faircode import load_audit
from faircode.groups import GROUP_METRICS, compare_groups, group_labels, group_rate_outcomes, metric_by_group
from faircode.data import project_root
from faircode.manifest import ManifestError, load_manifest
from faircode.models import fit_predict

ROOT = project_root()
AUDITS = ["arrest-release", "benefits-denial", "german-credit", "recidivism-risk"]

# fairlearn's functions for our rates (favourable = negative: the equal-opportunity rate is
# the true negative rate of the flag). fairlearn reports 0 where a denominator is empty; we
# report NaN, so those groups are compared separately below.
def _precision(y_true, y_pred):
    return precision_score(y_true, y_pred, zero_division=np.nan)


ORACLE = {
    "selection_rate": selection_rate,
    "true_positive_rate": true_positive_rate,
    "false_positive_rate": false_positive_rate,
    "precision": _precision,
    "accuracy": accuracy_score,
    "true_negative_rate": true_negative_rate,
    "true_favourable_rate": true_negative_rate,
}


def _groupings(audit):
    """Every way the audit splits its test rows into groups: each protected column's raw
    values, and each declared group attribute and intersection."""
    out = {f"column:{p.column}": audit.df[p.column].astype(str).to_numpy(dtype=object)
           for p in audit.manifest.protected}
    if audit.manifest.groups is not None:
        for name in audit.manifest.groups.by_name():
            out[name] = group_labels(audit, name).labels
    return out


@functools.lru_cache(maxsize=None)
def _predictions(slug):
    audit = load_audit(slug)
    return audit, fit_predict(audit, strategy="S2", model="logistic_regression")


@pytest.mark.parametrize("slug", AUDITS)
def test_rates_by_group_and_summaries_agree_with_metricframe(slug):
    audit, pred = _predictions(slug)
    assert audit.manifest.target.favourable == "negative"
    for grouping, labels in _groupings(audit).items():
        groups = labels[pred.rows]
        frame = MetricFrame(metrics=ORACLE, y_true=pred.y_true, y_pred=pred.y_pred, sensitive_features=groups)
        for metric in GROUP_METRICS:
            ours = metric_by_group(metric, pred.y_true, pred.y_pred, groups, favourable="negative")
            defined = ours["n_group"] > 0
            theirs = frame.by_group[metric].reindex(ours.index)
            np.testing.assert_allclose(ours.loc[defined, "value"], theirs[defined], rtol=0, atol=1e-12,
                                       err_msg=f"{slug} {grouping} {metric}")
            assert ours.loc[~defined, "value"].isna().all()
            # The summaries over the groups with a rate: fairlearn's difference() and ratio().
            c = compare_groups(metric, pred.y_true, pred.y_pred, groups, favourable="negative",
                               min_size=1, n_permutations=99, random_state=0, all_pairs=False)
            kept = np.isin(groups, ours.index[defined])
            sub = MetricFrame(metrics=ORACLE[metric], y_true=pred.y_true[kept], y_pred=pred.y_pred[kept],
                              sensitive_features=groups[kept])
            if defined.sum() >= 2:
                assert c.difference == pytest.approx(sub.difference(), abs=1e-12)
                assert c.ratio == pytest.approx(sub.ratio(), abs=1e-12, nan_ok=True)
                assert c.high_group == sub.by_group.idxmax() or np.isclose(
                    sub.by_group[c.high_group], sub.by_group.max())


@pytest.mark.parametrize("slug", ["benefits-denial", "recidivism-risk"])
def test_min_size_leaves_small_groups_out_of_the_summaries(slug):
    audit, pred = _predictions(slug)
    min_size = audit.manifest.groups.min_size
    for name in audit.manifest.groups.by_name():
        labels = group_labels(audit, name)
        groups = labels.labels[pred.rows]
        for metric in ("selection_rate", "false_positive_rate", "precision"):
            c = compare_groups(metric, pred.y_true, pred.y_pred, groups, favourable="negative",
                               reference=labels.reference, order=labels.groups, min_size=min_size,
                               n_permutations=99, random_state=0, all_pairs=False)
            assert list(c.by_group.index) == list(labels.groups)
            small = c.by_group["n_group"] < min_size
            assert set(c.small_groups) == set(c.by_group.index[small])
            big = c.by_group.index[~small]
            kept = np.isin(groups, big)
            o = group_rate_outcomes(metric, pred.y_true, pred.y_pred, favourable="negative")
            if len(big) >= 2:
                frame = MetricFrame(metrics=ORACLE[metric], y_true=pred.y_true[kept], y_pred=pred.y_pred[kept],
                                    sensitive_features=groups[kept])
                assert c.difference == pytest.approx(frame.difference(), abs=1e-12)
                assert c.max_gap_test.statistic == pytest.approx(c.difference, abs=1e-12)
                assert set(c.max_gap_test.groups) == set(big)
                assert sum(c.max_gap_test.sizes) == int((o.rows & kept).sum())


def test_sex_x_race_cells_match_a_pandas_crosstab():
    audit = load_audit("benefits-denial")
    g = group_labels(audit, "sex_x_race")
    counts = pd.Series(g.labels).value_counts()
    cross = pd.crosstab(audit.df["sex"], audit.df["race"])
    assert counts["Women & Black"] == cross.loc["Female", "Black"]
    assert counts["Men & American Indian or Eskimo"] == cross.loc["Male", "Amer-Indian-Eskimo"]
    assert counts.sum() == cross.to_numpy().sum() == len(audit.df)
    assert len(g.groups) == 10 and g.reference == "Men & White"
    assert not g.labels.flags.writeable


def test_compas_race_has_every_category_and_white_as_reference():
    audit = load_audit("recidivism-risk")
    g = group_labels(audit, "race")
    assert g.groups == ("Black", "White", "Hispanic", "Asian", "Native American", "Other")
    assert g.reference == "White"
    raw = audit.df["race"].value_counts()
    counts = pd.Series(g.labels).value_counts()
    assert counts["Black"] == raw["African-American"] and counts["Native American"] == raw["Native American"]


def test_wilson_intervals_per_group_match_statsmodels():
    audit, pred = _predictions("recidivism-risk")
    g = group_labels(audit, "race")
    for metric in GROUP_METRICS:
        c = compare_groups(metric, pred.y_true, pred.y_pred, g.labels[pred.rows], favourable="negative",
                           order=g.groups, n_permutations=99, random_state=0, all_pairs=False)
        t = c.by_group[c.by_group["n_group"] > 0]
        low, high = proportion_confint(t["n_outcome"], t["n_group"], alpha=0.05, method="wilson")
        np.testing.assert_allclose(t["ci_low"], low, atol=1e-12)
        np.testing.assert_allclose(t["ci_high"], high, atol=1e-12)
        assert c.by_group.loc[c.by_group["n_group"] == 0, "ci_low"].isna().all()


def test_true_favourable_rate_follows_the_favourable_class():
    y_true = np.array([0, 0, 0, 1, 1, 1, 1])
    y_pred = np.array([0, 1, 0, 1, 0, 1, 1])
    groups = np.array(["a"] * 7)
    neg = metric_by_group("true_favourable_rate", y_true, y_pred, groups, favourable="negative")
    pos = metric_by_group("true_favourable_rate", y_true, y_pred, groups, favourable="positive")
    assert neg.at["a", "value"] == pytest.approx(true_negative_rate(y_true, y_pred))  # 2 of 3
    assert pos.at["a", "value"] == pytest.approx(true_positive_rate(y_true, y_pred))  # 3 of 4
    assert (neg.at["a", "n_group"], pos.at["a", "n_group"]) == (3, 4)


def test_reference_comparisons_are_holm_adjusted_tests_against_the_reference():
    from scipy.stats import permutation_test as scipy_permutation_test
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(5)
    groups = np.repeat(["a", "b", "c", "d"], [9, 8, 7, 3])
    y_pred = rng.binomial(1, np.repeat([0.2, 0.7, 0.4, 0.5], [9, 8, 7, 3]))
    y_true = np.zeros(groups.size, dtype=int)
    c = compare_groups("selection_rate", y_true, y_pred, groups, favourable="negative", reference="a",
                       min_size=5, random_state=0)
    assert c.small_groups == ("d",) and c.compared == ("a", "b", "c")
    raw = []
    for g in ("b", "c"):
        # SciPy enumerates every relabelling of these small groups: an exact oracle. Our two-sided
        # p counts |gap| >= |observed| (SciPy's "two-sided" doubles the smaller tail instead).
        res = scipy_permutation_test((y_pred[groups == g], y_pred[groups == "a"]),
                                     lambda x, y: abs(np.mean(x) - np.mean(y)), permutation_type="independent",
                                     n_resamples=np.inf, alternative="greater")
        raw.append(res.pvalue)
    table = c.by_group
    np.testing.assert_allclose(table.loc[["b", "c"], "p_value_vs_reference"], raw, rtol=1e-9)
    np.testing.assert_allclose(table.loc[["b", "c"], "p_value_vs_reference_holm"],
                               multipletests(raw, method="holm")[1], rtol=1e-9)
    assert np.isnan(table.at["d", "p_value_vs_reference"])  # small: reported, not tested
    assert table.at["d", "diff_vs_reference"] == pytest.approx(y_pred[groups == "d"].mean() - y_pred[groups == "a"].mean())
    assert len(c.pairwise) == 3  # every pair of the compared groups


def test_a_small_reference_is_described_but_not_tested():
    groups = np.repeat(["a", "b", "c"], [40, 40, 4])
    y_pred = np.tile([0, 1], 42)
    c = compare_groups("selection_rate", np.zeros(84, int), y_pred, groups, favourable="negative",
                       reference="c", min_size=10, n_permutations=99, random_state=0)
    assert c.by_group["p_value_vs_reference"].isna().all()
    assert c.by_group["diff_vs_reference"].notna().all()
    assert "reference group c has fewer than 10 rows" in c.reason


def test_fewer_than_two_large_groups_gives_no_gap_and_says_why():
    groups = np.repeat(["a", "b"], [40, 4])
    c = compare_groups("selection_rate", np.zeros(44, int), np.tile([0, 1], 22), groups,
                       favourable="negative", min_size=10)
    assert np.isnan(c.difference) and c.max_gap_test is None
    assert "fewer than two groups with at least 10 rows" in c.reason


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(metric="selection_rte"), r"`metric` must be one of .*did you mean 'selection_rate'"),
        (dict(favourable="good"), r"`favourable` must be 'positive' or 'negative'.*got 'good'"),
        (dict(min_size=0), r"`min_size` must be a positive integer"),
        (dict(reference="z"), r"`reference` must be one of the groups \['a', 'b'\]"),
        (dict(order=["a"]), r"`order` must list every group present; it misses \['b'\]"),
        (dict(groups=["a", "b"]), r"`groups` must hold one label per row \(4\)"),
    ],
)
def test_compare_groups_validation_messages(kwargs, message):
    args = dict(metric="selection_rate", y_true=[0, 1, 0, 1], y_pred=[1, 1, 0, 0], groups=["a", "a", "b", "b"],
                favourable="negative")
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        compare_groups(args.pop("metric"), args.pop("y_true"), args.pop("y_pred"), args.pop("groups"), **args)


def test_group_labels_names_the_declared_names():
    with pytest.raises(ValueError, match=r"got 'rase' \(did you mean 'race'\?\); declared: race"):
        group_labels(load_audit("recidivism-risk"), "rase")
    with pytest.raises(ValueError, match=r"german-credit's manifest has no `groups:` section"):
        group_labels(load_audit("german-credit"), "sex")


# --------------------------------------------------------------------------- manifests

BASE = (ROOT / "tests" / "fixtures" / "manifests" / "valid.yaml").read_text()


def _manifest(tmp_path, groups: str, name="groups.yaml"):
    path = tmp_path / name
    path.write_text(BASE + textwrap.dedent(groups))
    return path


def _problems(path, *, audit=False):
    with pytest.raises(ManifestError) as info:
        load_audit(path) if audit else load_manifest(path, root=ROOT)
    # Here, the wording: the line of a problem other than an unknown key (issue 26, stop 35) is
    # tested in test_manifest_lines.py.
    return [re.sub(r"^([^:]+):\d+: (?!.*unknown key)", r"\1: ", p.replace(f"{path.parent}/", ""))
            for p in info.value.problems]


def test_merge_leave_out_and_an_intersection_make_the_declared_groups(tmp_path):
    path = _manifest(tmp_path, """
        groups:
          min_size: 20
          attributes:
            - name: checks
              column: checks
              categories: [0, 1, 2]
              merge: [{values: [3, 4], into: 3 or 4, reason: fixture}]
              leave_out: [{values: [5, 6], reason: too few people}]
              reference: 0
              labels: {"0": none}
            - name: sex
              column: sex
              categories: [Male, Female]
              reference: Male
          intersections:
            - {name: checks_x_sex, attributes: [checks, sex], reference: [0, Male]}
        """)
    audit = load_audit(path)
    raw = audit.df["checks"].to_numpy()
    checks = group_labels(audit, "checks")
    assert checks.groups == ("none", "1", "2", "3 or 4") and checks.reference == "none"
    assert (checks.labels[np.isin(raw, [3, 4])] == "3 or 4").all()
    assert pd.isna(checks.labels[raw >= 5]).all() and pd.notna(checks.labels[raw < 5]).all()
    assert (checks.labels[raw == 0] == "none").all()
    cross = group_labels(audit, "checks_x_sex")
    assert len(cross.groups) == 8 and cross.reference == "none & Male"
    expected = audit.df.assign(c=checks.labels)[raw < 5].groupby(["c", "sex"]).size()
    counts = pd.Series(cross.labels).value_counts()
    assert counts["3 or 4 & Female"] == expected[("3 or 4", "Female")]
    assert pd.isna(cross.labels[raw >= 5]).all()
    assert any("5, 6 left out: too few people" in n for n in cross.notes)


def test_a_merge_needs_two_values_and_declared_values_must_occur(tmp_path):
    section = """
        groups:
          min_size: 20
          attributes:
            - name: colour
              column: colour
              categories: [White]
              merge: [{values: [Black], into: Not white, reason: fixture}]
              reference: White
        """
    path = _manifest(tmp_path, section)
    assert _problems(path) == [
        "groups.yaml: groups.attributes[0].merge[0].values: List should have at least 2 items after validation, not 1"
    ]
    path = _manifest(tmp_path, section.replace("[Black]", "[Black, Brown]"))
    assert load_manifest(path, root=ROOT).groups.min_size == 20  # only the data can tell
    assert any(p.startswith("groups.yaml: groups.attributes[0].merge[0].values[1]: 'Brown' never occurs in 'colour'")
               for p in _problems(path, audit=True))
    # What only the data can tell is named by its line too, as the schema's problems are (a fresh
    # user's typo in `categories` was named by its field alone): the line of the key, read here.
    with pytest.raises(ManifestError) as info:
        load_audit(path)
    line = next(i for i, text in enumerate(path.read_text().split("\n"), start=1) if "[Black, Brown]" in text)
    assert any(p.startswith(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{line}: "
                            "groups.attributes[0].merge[0].values[1]: 'Brown' never occurs") for p in info.value.problems), \
        info.value.problems


@pytest.mark.parametrize(
    "groups, expected",
    [
        ("""
         groups:
           min_size: 0
           attributes: [{name: colour, column: colour, categories: [Black, White], reference: White}]
         """, "groups.min_size: expected at least 1, got 0"),
        ("""
         groups:
           min_size: 30
           attributes: [{name: colour, column: colur, categories: [Black, White], reference: White}]
         """, "groups.attributes[0].column: 'colur' is not a column of arrests.csv (did you mean 'colour'?)"),
        ("""
         groups:
           min_size: 30
           attributes: [{name: colour, column: colour, categories: [Black, White], reference: Whit}]
         """, "groups.attributes[0]: `reference` 'Whit' is not one of the groups ['Black', 'White'] (did you mean 'White'?)"),
        ("""
         groups:
           min_size: 30
           attributes: [{name: colour, column: colour, categories: [Black, White, Black], reference: White}]
         """, "groups.attributes[0]: value 'Black' is declared twice (in `categories` and `categories`)"),
        ("""
         groups:
           min_size: 30
           attributes: [{name: colour, column: colour, categories: [White], reference: White}]
         """, "groups.attributes[0]: needs at least two groups to compare; declares ['White']"),
        ("""
         groups:
           min_size: 30
           attributes: [{name: colour, column: colour, categories: [Black, White], reference: White, lables: {}}]
         """, f":{len(BASE.splitlines()) + 4}: groups.attributes[0].lables: unknown key 'lables' (did you mean 'labels'?)"),
        ("""
         groups:
           min_size: 30
           attributes:
             - {name: colour, column: colour, categories: [Black, White], reference: White}
             - {name: sex, column: sex, categories: [Male, Female], reference: Male}
           intersections:
             - {name: colour_x_sex, attributes: [colour, sexx], reference: [White, Male]}
         """, "groups.intersections[0].attributes[1]: 'sexx' is not one of groups.attributes ['colour', 'sex'] (did you mean 'sex'?)"),
        ("""
         groups:
           min_size: 30
           attributes:
             - {name: colour, column: colour, categories: [Black, White], reference: White}
             - {name: sex, column: sex, categories: [Male, Female], reference: Male}
           intersections:
             - {name: colour_x_sex, attributes: [colour, sex], reference: [White, Mal]}
         """, "groups.intersections[0].reference[1]: 'Mal' is not a group of 'sex' ['Male', 'Female'] (did you mean 'Male'?)"),
        ("""
         groups:
           min_size: 30
           attributes:
             - {name: colour, column: colour, categories: [Black, White], reference: White}
           intersections:
             - {name: colour, attributes: [colour, colour], reference: [White, White]}
         """, "groups.intersections[0]: `attributes` repeats a name: ['colour', 'colour']"),
    ],
)
def test_groups_section_problems_name_file_and_field(tmp_path, groups, expected):
    # An unknown key keeps its line (file:L: ..., 4 lines into the section); the others are compared without theirs.
    assert f"groups.yaml{'' if expected.startswith(':') else ': '}{expected}" in _problems(_manifest(tmp_path, groups))


def test_undeclared_and_missing_values_are_errors_at_load(tmp_path):
    path = _manifest(tmp_path, """
        groups:
          min_size: 30
          attributes: [{name: sex, column: sex, categories: [Male], reference: Male, labels: {Male: Men}},
                       {name: colour, column: colour, categories: [Black, White], reference: White}]
        """)
    assert "groups.attributes[0]: needs at least two groups to compare; declares ['Male']" in " ".join(_problems(path))
    path.write_text(path.read_text().replace("categories: [Male]", "categories: [Male, Mars]"))
    problems = _problems(path, audit=True)
    assert any("groups.attributes[0].categories[1]: 'Mars' never occurs in 'sex' after the filters" in p for p in problems)
    assert any("groups.attributes[0]: values ['Female'] of 'sex' are not declared; list each in `categories`, "
               "`merge` or `leave_out`" in p for p in problems)


def test_missing_group_values_fail_unless_left_out(tmp_path):
    data = pd.read_csv(ROOT / "data" / "arrests.csv")
    data.loc[:9, "sex"] = np.nan
    csv = tmp_path / "arrests.csv"
    data.to_csv(csv, index=False)
    from faircode.data import sha256_of

    text = BASE.replace("data/arrests.csv", str(csv)).replace(
        "b795af23d2704da70cc4b265e1700c69faa03659283091f01e74c3ea1f813c6d", sha256_of(csv))
    path = tmp_path / "missing.yaml"
    groups = """
groups:
  min_size: 30
  attributes: [{name: sex, column: sex, categories: [Male, Female], reference: Male}]
"""
    path.write_text(text + groups)
    with pytest.raises(ManifestError, match=r"groups.attributes\[0\].missing: 'sex' is missing in 10 row\(s\)"):
        load_audit(path)
    path.write_text(text + groups.replace("reference: Male}", "reference: Male, missing: leave_out}"))
    g = group_labels(load_audit(path), "sex")
    assert pd.isna(g.labels[:10]).all() and pd.notna(g.labels[10:]).all()
    assert any("10 row(s) with a missing 'sex' left out" in n for n in g.notes)


def test_favourable_is_required(tmp_path):
    path = tmp_path / "nofav.yaml"
    path.write_text(BASE.replace(", favourable: negative", ""))
    (problem,) = _problems(path)
    assert problem.startswith("nofav.yaml: target.favourable: required field is missing")
    path.write_text(BASE.replace("favourable: negative", "favourable: good"))
    assert _problems(path) == ["nofav.yaml: target.favourable: Input should be 'positive' or 'negative'"]


# --------------------------------------------------------------------------- issue 24: the tests to quote


def test_omnibus_and_max_t_are_the_group_tests_over_the_compared_groups():
    from scipy.stats import chi2_contingency

    from faircode.group_tests import max_t_test

    rng = np.random.default_rng(24)
    sizes = [305, 267, 59, 40, 6]
    groups = np.repeat(["a", "b", "c", "d", "tiny"], sizes)
    y_pred = rng.binomial(1, np.repeat([0.25, 0.33, 0.25, 0.25, 0.9], sizes))
    c = compare_groups("selection_rate", np.zeros(groups.size, int), y_pred, groups, favourable="negative",
                       reference="a", min_size=30, random_state=3)
    assert c.compared == ("a", "b", "c", "d")
    big = groups != "tiny"
    table = pd.crosstab(groups[big], y_pred[big]).to_numpy()
    stat, p, dof, _ = chi2_contingency(table, correction=False)
    assert c.omnibus_test.groups == c.compared and c.omnibus_test.statistic == pytest.approx(stat, rel=1e-12)
    assert c.omnibus_test.dof == dof == 3
    if c.omnibus_test.method == "asymptotic":
        assert c.omnibus_test.p_value == pytest.approx(p, rel=1e-10)
    oracle = max_t_test(y_pred[big], groups[big], random_state=3)
    assert c.max_t_test.statistic == pytest.approx(oracle.statistic, rel=1e-12)
    assert c.max_t_test.p_value == pytest.approx(oracle.p_value, rel=1e-12)
    assert c.max_t_test.pair == oracle.pair and c.max_t_test.pairs_adjusted == oracle.pairs_adjusted
    assert "omnibus" in repr(c) and c.omnibus_test.format_p_value() in repr(c)
    assert "range test" in repr(c)


def test_without_pairs_there_is_no_max_t_but_an_omnibus_and_with_one_group_neither():
    groups = np.repeat(["a", "b", "c"], [40, 40, 4])
    y_pred = np.tile([0, 1], 42)
    c = compare_groups("selection_rate", np.zeros(84, int), y_pred, groups, favourable="negative",
                       min_size=10, n_permutations=99, random_state=0, all_pairs=False)
    assert c.max_t_test is None and c.omnibus_test is not None and c.omnibus_test.groups == ("a", "b")
    one = compare_groups("selection_rate", np.zeros(84, int), y_pred, groups, favourable="negative", min_size=41)
    assert one.omnibus_test is None and one.max_t_test is None


def test_a_declared_group_without_rows_says_no_rows():
    # Issue 25 point 9: "c" is declared (order) but has no rows at all; "b" has rows but no
    # actual positives.
    y_true = np.array([1, 1, 0, 0, 0, 0])
    y_pred = np.array([1, 0, 1, 0, 1, 0])
    groups = np.array(["a", "a", "a", "b", "b", "b"])
    c = compare_groups("true_positive_rate", y_true, y_pred, groups, favourable="negative",
                       order=["a", "b", "c"], min_size=1)
    assert c.by_group.at["c", "reason"] == "no rows"
    assert c.by_group.at["b", "reason"] == "no actual positives (y_true == 1)"
    assert c.by_group.at["a", "reason"] == ""


def test_a_numeric_reference_label_is_accepted_as_pairwise_tests_accepts_it():
    groups = np.repeat([0, 1, 2], 40)
    y_pred = np.r_[np.tile([0, 1], 20), np.ones(40, int), np.zeros(40, int)]
    c = compare_groups("selection_rate", np.zeros(120, int), y_pred, groups, favourable="negative",
                       reference=0, n_permutations=99, random_state=0)
    assert c.reference == "0"
    assert c.by_group.at["1", "diff_vs_reference"] == pytest.approx(0.5)
    assert c.by_group["p_value_vs_reference"].notna().sum() == 2
    same = compare_groups("selection_rate", np.zeros(120, int), y_pred, groups, favourable="negative",
                          reference="0", n_permutations=99, random_state=0)
    pd.testing.assert_frame_equal(c.by_group, same.by_group)


def test_labels_with_the_same_text_are_refused_naming_both():
    groups = np.array([1, 1, "1", "1", 2, 2], dtype=object)
    with pytest.raises(ValueError, match=r"`groups` has two labels written '1': 1 \(int\) and '1' \(str\)"):
        compare_groups("selection_rate", np.zeros(6, int), [0, 1, 0, 1, 0, 1], groups, favourable="negative")
    with pytest.raises(ValueError, match="two labels written '1'"):
        metric_by_group("selection_rate", np.zeros(6, int), [0, 1, 0, 1, 0, 1], groups, favourable="negative")
