"""faircode.metrics against fairlearn's MetricFrame, scikit-learn and closed forms."""

import math

import numpy as np
import pytest
from fairlearn.metrics import (
    MetricFrame,
    false_positive_rate as fl_false_positive_rate,
    true_negative_rate as fl_true_negative_rate,
    selection_rate as fl_selection_rate,
    true_positive_rate as fl_true_positive_rate,
)
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, precision_score

from faircode import metrics as fm


@pytest.fixture(scope="module")
def predictions():
    """Real-ish predictions: a fitted logistic regression, groups from a feature's sign."""
    X, y = make_classification(n_samples=1200, n_features=6, n_informative=4, random_state=7)
    train, test = slice(0, 800), slice(800, None)
    model = LogisticRegression().fit(X[train], y[train])
    y_pred = model.predict(X[test])
    # Groups correlated with the features, so the gaps are not all zero.
    group = np.where(X[test, 0] > 0.3, "reference", "disadvantaged")
    return y[test], y_pred, group


FAIRLEARN_RATES = {
    "selection_rate": fl_selection_rate,
    # fairlearn's selection rate of the label 0: the share not selected (not flagged).
    "non_selection_rate": lambda t, p: fl_selection_rate(t, p, pos_label=0),
    "true_positive_rate": fl_true_positive_rate,
    "false_positive_rate": fl_false_positive_rate,
    "true_negative_rate": fl_true_negative_rate,
    "precision": lambda t, p: precision_score(t, p, zero_division=np.nan),
    "accuracy": accuracy_score,
}


@pytest.mark.parametrize("metric", fm.RATE_METRICS)
def test_rates_match_fairlearn_metricframe_by_group(predictions, metric):
    y_true, y_pred, group = predictions
    frame = MetricFrame(
        metrics=FAIRLEARN_RATES[metric], y_true=y_true, y_pred=y_pred, sensitive_features=group
    )
    for label in ("disadvantaged", "reference"):
        mask = group == label
        ours = getattr(fm, metric)(y_true[mask], y_pred[mask])
        assert ours.defined
        assert ours.value == pytest.approx(frame.by_group[label], abs=1e-12)


@pytest.mark.parametrize("favourable", fm.FAVOURABLE)
@pytest.mark.parametrize("metric", fm.GAP_METRICS)
def test_gaps_are_signed_disadvantaged_vs_advantaged_from_fairlearn(predictions, metric, favourable):
    y_true, y_pred, group = predictions
    rate_name = fm.gap_rate(metric, favourable=favourable)
    frame = MetricFrame(
        metrics=FAIRLEARN_RATES[rate_name], y_true=y_true, y_pred=y_pred, sensitive_features=group
    )
    dis, ref = frame.by_group["disadvantaged"], frame.by_group["reference"]
    expected = dis / ref if fm.GAP_KIND[metric] == "ratio" else dis - ref
    result = getattr(fm, metric)(y_true, y_pred, disadvantaged=group == "disadvantaged", favourable=favourable)
    assert result.value == pytest.approx(expected, abs=1e-12)
    assert result.kind == fm.GAP_KIND[metric]
    # fairlearn's difference is max - min over groups: our unsigned size must agree.
    if fm.GAP_KIND[metric] == "difference":
        assert abs(result.value) == pytest.approx(frame.difference(), abs=1e-12)


def test_explicit_reference_group_leaves_other_rows_out():
    y_true = np.array([1, 0, 1, 0, 1, 1])
    y_pred = np.array([1, 1, 0, 0, 1, 0])
    dis = np.array([1, 1, 0, 0, 0, 0])
    adv = np.array([0, 0, 1, 1, 0, 0])  # rows 4, 5 belong to neither group
    g = fm.demographic_parity_difference(y_true, y_pred, disadvantaged=dis, advantaged=adv)
    assert g.value == pytest.approx(1.0 - 0.0)
    assert (g.disadvantaged.denominator, g.advantaged.denominator) == (2, 2)


@pytest.mark.parametrize("metric", fm.RATE_METRICS)
def test_group_outcomes_mean_is_the_rate(predictions, metric):
    y_true, y_pred, group = predictions
    dis = group == "disadvantaged"
    g = fm.group_outcomes(metric, y_true, y_pred, disadvantaged=dis)
    assert g.a.mean() == pytest.approx(getattr(fm, metric)(y_true[dis], y_pred[dis]).value)
    assert g.b.mean() == pytest.approx(getattr(fm, metric)(y_true[~dis], y_pred[~dis]).value)
    assert set(np.unique(np.concatenate([g.a, g.b]))) <= {0, 1}


def test_rate_outcomes_rows_by_brute_force():
    y_true = np.array([1, 1, 0, 0, 1])
    y_pred = np.array([1, 0, 1, 0, 1])
    # Each rate's denominator rows, enumerated by hand from its definition.
    expected_rows = {
        "selection_rate": [0, 1, 2, 3, 4],
        "true_positive_rate": [0, 1, 4],
        "false_positive_rate": [2, 3],
        "precision": [0, 2, 4],
        "accuracy": [0, 1, 2, 3, 4],
    }
    for metric, rows in expected_rows.items():
        o = fm.rate_outcomes(metric, y_true, y_pred)
        assert np.flatnonzero(o.rows).tolist() == rows, metric
    acc = fm.rate_outcomes("accuracy", y_true, y_pred)
    assert acc.outcome.tolist() == [1, 0, 0, 1, 1]
    assert fm.rate_outcomes("precision", y_true, y_pred).outcome[[0, 2, 4]].tolist() == [1, 0, 1]


@pytest.mark.parametrize(
    ("metric", "y_true", "y_pred", "reason"),
    [
        ("true_positive_rate", [0, 0, 0], [1, 0, 1], "no actual positives"),
        ("false_positive_rate", [1, 1], [1, 0], "no actual negatives"),
        ("precision", [1, 0, 1], [0, 0, 0], "no predicted positives"),
        ("selection_rate", [], [], "no rows"),
        ("accuracy", [], [], "no rows"),
    ],
)
def test_undefined_rate_is_nan_with_reason_not_zero(metric, y_true, y_pred, reason):
    r = getattr(fm, metric)(np.array(y_true, dtype=int), np.array(y_pred, dtype=int))
    assert math.isnan(r.value)
    assert not r.defined
    assert reason in r.reason
    assert "undefined" in repr(r)


def test_gap_with_undefined_group_rate_is_nan_with_reason():
    y_true = np.array([0, 0, 1, 0])
    y_pred = np.array([1, 0, 1, 0])
    g = fm.true_positive_rate_difference(y_true, y_pred, disadvantaged=[1, 1, 0, 0])
    assert math.isnan(g.value)
    assert g.reason == "disadvantaged group: no actual positives (y_true == 1)"
    assert g.advantaged.value == 1.0


def test_disparate_impact_ratio_with_zero_denominator_is_undefined():
    y_true = np.zeros(4, dtype=int)
    y_pred = np.array([1, 0, 0, 0])
    g = fm.disparate_impact_ratio(y_true, y_pred, disadvantaged=[1, 1, 0, 0], favourable="positive")
    assert math.isnan(g.value)
    assert "advantaged group's selection rate is 0" in g.reason
    # 0 / 0 is undefined too, not 1.
    g0 = fm.disparate_impact_ratio(y_true, np.zeros(4, dtype=int), disadvantaged=[1, 1, 0, 0], favourable="positive")
    assert math.isnan(g0.value) and g0.reason
    # Everyone in the advantaged group flagged: no favourable decisions to divide by.
    g1 = fm.disparate_impact_ratio(y_true, np.array([0, 0, 1, 1]), disadvantaged=[1, 1, 0, 0], favourable="negative")
    assert math.isnan(g1.value) and "advantaged group's non selection rate is 0" in g1.reason


def test_disparate_impact_ratio_zero_numerator_is_zero():
    g = fm.disparate_impact_ratio([0, 0, 0, 0], [0, 0, 1, 0], disadvantaged=[1, 1, 0, 0], favourable="positive")
    assert g.value == 0.0 and g.defined


def test_disparate_impact_ratio_is_the_favourable_decision_rate_ratio():
    """EEOC Uniform Guidelines (29 CFR 1607.4(D)): the ratio of the favourable decision's rates.

    Oracle by hand: disadvantaged rows flagged 3 of 4, advantaged 1 of 4. Not flagged
    (favourable negative): 1/4 over 3/4 = 1/3; flagged (favourable positive): 3/4 over 1/4 = 3.
    """
    y_pred = np.array([1, 1, 1, 0, 1, 0, 0, 0])
    dis = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    y_true = np.zeros(8, dtype=int)
    neg = fm.disparate_impact_ratio(y_true, y_pred, disadvantaged=dis, favourable="negative")
    pos = fm.disparate_impact_ratio(y_true, y_pred, disadvantaged=dis, favourable="positive")
    assert neg.value == pytest.approx(1 / 3) and neg.disadvantaged.metric == "non_selection_rate"
    assert pos.value == pytest.approx(3.0) and pos.disadvantaged.metric == "selection_rate"
    with pytest.raises(ValueError, match=r"`favourable` is required for disparate_impact_ratio"):
        fm.disparate_impact_ratio(y_true, y_pred, disadvantaged=dis)


def test_gap_functions_require_keyword_groups():
    with pytest.raises(TypeError):
        fm.demographic_parity_difference([0, 1], [0, 1], [1, 0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(y_true=[0, 2], y_pred=[0, 1]), r"`y_true` must hold only 0 and 1"),
        (dict(y_true=[0, 1], y_pred=[0, 1, 1]), r"`y_true` and `y_pred` must have the same length"),
        (dict(y_true=[[0, 1]], y_pred=[[0, 1]]), r"`y_true` must be one-dimensional"),
        (dict(y_true=["a", "b"], y_pred=[0, 1]), r"`y_true` must hold 0/1 numbers"),
    ],
)
def test_label_validation_messages(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fm.selection_rate(**kwargs)


def test_group_validation_messages():
    with pytest.raises(ValueError, match=r"`disadvantaged` must have one entry per row \(3\)"):
        fm.demographic_parity_difference([0, 1, 1], [0, 1, 1], disadvantaged=[1, 0])
    with pytest.raises(ValueError, match=r"must not overlap"):
        fm.demographic_parity_difference([0, 1], [0, 1], disadvantaged=[1, 0], advantaged=[1, 1])
    with pytest.raises(ValueError, match=r"`metric` must be one of"):
        fm.gap("statistical_parity", [0], [0], disadvantaged=[1])


def test_results_are_frozen():
    r = fm.selection_rate([0, 1], [1, 1])
    with pytest.raises(AttributeError):
        r.value = 0.0


def test_equal_opportunity_is_the_favourable_outcome_rate_of_the_deserving():
    """Hardt et al. (2016): among people who merit the favourable outcome, the rate who get it.

    Favourable negative (the positive class is a harmful flag): among y_true == 0, the share
    not flagged, i.e. 1 - FPR, so the gap is minus the false positive rate gap. Favourable
    positive: among y_true == 1, the share flagged (the TPR). Counted by hand below.
    """
    y_true = np.array([0, 0, 0, 1, 1, 0, 0, 1, 1, 1])
    y_pred = np.array([1, 0, 0, 1, 0, 0, 0, 0, 1, 1])
    dis = np.array([1, 1, 1, 1, 1, 0, 0, 0, 0, 0])
    # Disadvantaged deserving-of-negative rows 0-2: 2 of 3 not flagged; advantaged rows 5, 6: 2 of 2.
    neg = fm.equal_opportunity_difference(y_true, y_pred, disadvantaged=dis, favourable="negative")
    assert neg.value == pytest.approx(2 / 3 - 1) and neg.disadvantaged.metric == "true_negative_rate"
    fpr = fm.false_positive_rate_difference(y_true, y_pred, disadvantaged=dis)
    assert neg.value == pytest.approx(-fpr.value)
    # Disadvantaged positives rows 3, 4: 1 of 2 flagged; advantaged rows 7-9: 2 of 3.
    pos = fm.equal_opportunity_difference(y_true, y_pred, disadvantaged=dis, favourable="positive")
    assert pos.value == pytest.approx(1 / 2 - 2 / 3)


@pytest.mark.parametrize(
    ("favourable", "match"),
    [(None, r"`favourable` is required for equal_opportunity_difference"),
     ("good", r"`favourable` must be 'positive' or 'negative'.*got 'good'")],
)
def test_equal_opportunity_needs_the_favourable_outcome(favourable, match):
    with pytest.raises(ValueError, match=match):
        fm.gap("equal_opportunity_difference", [0, 1], [0, 1], disadvantaged=[1, 0], favourable=favourable)
