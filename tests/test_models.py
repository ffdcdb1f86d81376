"""build_model and fit_predict: valid estimators, honest predictions, deterministic runs."""

from __future__ import annotations

import numpy as np
import pytest
from fairlearn.metrics import demographic_parity_difference
from sklearn.base import is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.metrics import accuracy_score
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from faircode import build_model, encode_features, feature_columns, fit_predict, load_audit
from faircode.models import MODELS, Predictions


@pytest.fixture(scope="module")
def adult_s2():
    """Adult with logistic regression on S2, fitted once for the module (a few seconds)."""
    audit = load_audit("benefits-denial")
    return audit, fit_predict(audit, strategy="S2", model="logistic_regression")


@pytest.mark.parametrize("name", MODELS)
def test_build_model_is_unfitted_and_fits(name):
    est = build_model(name, 0)
    assert is_classifier(est)
    with pytest.raises(NotFittedError):
        check_is_fitted(est)
    audit = load_audit("german-credit")
    X = encode_features(audit.df, feature_columns(audit, "S2"))
    with threadpool_limits(limits=1):  # see build_model's Notes: OpenMP on a busy machine
        est.fit(X.iloc[audit.train], audit.y[audit.train])
        proba = est.predict_proba(X.iloc[audit.test])
    assert proba.shape == (len(audit.test), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_build_model_unknown_name():
    with pytest.raises(ValueError, match=r"`name` must be one of logistic_regression, random_forest, "
                                         r"gradient_boosting; got 'random_forrest' \(did you mean 'random_forest'\?\)"):
        build_model("random_forrest", 0)


def test_logistic_regression_scales_only_measured_columns():
    audit = load_audit("arrest-release")
    X = encode_features(audit.df, ["age", "checks", "sex", "employed"])
    est = build_model("logistic_regression", 0).fit(X, audit.y)
    ct = est.named_steps["scale"]
    scaled = [cols for name, _, cols in ct.transformers_ if name == "numeric"][0]
    assert list(scaled) == ["age", "checks"]
    # Oracle: the standardised columns have mean 0 and population sd 1; indicators untouched.
    Z = ct.transform(X)
    np.testing.assert_allclose(Z[:, :2].mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(Z[:, :2].std(axis=0), 1, atol=1e-12)
    np.testing.assert_array_equal(Z[:, 2:], X[["sex=Female", "sex=Male", "employed=No", "employed=Yes"]])


def test_predictions_line_up_with_the_test_rows(adult_s2):
    audit, p = adult_s2
    assert isinstance(p, Predictions) and (p.strategy, p.model, p.audit) == ("S2", "logistic_regression",
                                                                            "benefits-denial")
    np.testing.assert_array_equal(p.rows, audit.test)
    np.testing.assert_array_equal(p.y_true, audit.y[audit.test])
    assert p.y_pred.dtype == np.int8 and set(np.unique(p.y_pred)) <= {0, 1}
    assert p.y_score.dtype == np.float64 and p.y_score.min() >= 0 and p.y_score.max() <= 1
    # Logistic regression decides at probability 0.5.
    np.testing.assert_array_equal(p.y_pred, (p.y_score > 0.5).astype(np.int8))
    # better than always predicting the majority class
    assert accuracy_score(p.y_true, p.y_pred) > 1 - p.y_true.mean()


def test_s3_closes_the_selection_rate_gap(adult_s2):
    audit, s2 = adult_s2
    s3 = fit_predict(audit, strategy="S3", model="logistic_regression")
    sex = audit.masks["sex"][audit.test]
    gap2 = demographic_parity_difference(s2.y_true, s2.y_pred, sensitive_features=sex)
    gap3 = demographic_parity_difference(s3.y_true, s3.y_pred, sensitive_features=sex)
    assert gap2 > 0.05  # the S2 model flags men more often than women
    assert gap3 < 0.03  # the thresholds were fitted on the training rows, so not exactly 0 here
    np.testing.assert_array_equal(s3.y_score, s2.y_score)  # S3 changes decisions, not scores


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("strategy", ["S0", "S3"])
def test_fit_predict_is_deterministic(model, strategy):
    audit = load_audit("german-credit")
    a = fit_predict(audit, strategy=strategy, model=model)
    b = fit_predict(audit, strategy=strategy, model=model)
    np.testing.assert_array_equal(a.y_pred, b.y_pred)
    np.testing.assert_array_equal(a.y_score, b.y_score)


def test_predictions_are_read_only(adult_s2):
    _, p = adult_s2
    with pytest.raises(ValueError):
        p.y_pred[0] = 1


def test_fit_predict_validates_names():
    audit = load_audit("arrest-release")
    with pytest.raises(ValueError, match="`strategy` must be one of"):
        fit_predict(audit, strategy="S4")
    with pytest.raises(ValueError, match="`model` must be one of"):
        fit_predict(audit, model="svm")


def _by_hand(audit, strategy, model):
    """The oracle for fit_predict_strategies: scikit-learn and fairlearn called directly, one fit per strategy."""
    from fairlearn.postprocessing import ThresholdOptimizer

    X = encode_features(audit.df, feature_columns(audit, strategy))
    X_train, X_test, y_train = X.iloc[audit.train], X.iloc[audit.test], audit.y[audit.train]
    seed = audit.manifest.random_state
    with threadpool_limits(limits=1):
        est = build_model(model, seed).fit(X_train, y_train)
        score = est.predict_proba(X_test)[:, 1]
        if strategy != "S3":
            return est.predict(X_test), score
        sensitive = audit.masks[audit.attributes[0]]
        post = ThresholdOptimizer(estimator=est, constraints="demographic_parity", objective="accuracy_score",
                                  prefit=True, predict_method="predict_proba")
        post.fit(X_train, y_train, sensitive_features=sensitive[audit.train])
        return post.predict(X_test, sensitive_features=sensitive[audit.test], random_state=seed), score


@pytest.mark.parametrize("model", MODELS)
def test_shared_fit_gives_what_a_fit_per_strategy_gives(model):
    # Issue 26: S3 reuses S2's fitted model and the forest's decisions come from its one
    # predict_proba; neither may change a decision or a score.
    audit = load_audit("german-credit")
    from faircode.models import fit_predict_strategies

    preds = fit_predict_strategies(audit, strategies=["S0", "S2", "S3"], model=model)
    assert list(preds) == ["S0", "S2", "S3"]
    for strategy, p in preds.items():
        y_pred, y_score = _by_hand(audit, strategy, model)
        assert p.strategy == strategy
        np.testing.assert_array_equal(p.y_pred, y_pred)
        np.testing.assert_array_equal(p.y_score, y_score)


def test_fit_predict_strategies_fits_s2_once_for_s2_and_s3(monkeypatch):
    import faircode.models as models

    fits = []
    real = models.build_model

    def counting(name, random_state):
        est = real(name, random_state)
        fits.append(name)
        return est

    monkeypatch.setattr(models, "build_model", counting)
    models.fit_predict_strategies(load_audit("arrest-release"), strategies=["S2", "S3"], model="logistic_regression")
    assert fits == ["logistic_regression"]


def test_fit_predict_strategies_validates():
    from faircode.models import fit_predict_strategies

    audit = load_audit("arrest-release")
    with pytest.raises(ValueError, match="`strategies` must be a non-empty sequence"):
        fit_predict_strategies(audit, strategies=[])
    with pytest.raises(ValueError, match="`strategies` must be a non-empty sequence"):
        fit_predict_strategies(audit, strategies="S2")
    with pytest.raises(ValueError, match="`strategy` must be one of"):
        fit_predict_strategies(audit, strategies=["S2", "S9"])
    with pytest.raises(ValueError, match="`model` must be one of"):
        fit_predict_strategies(audit, strategies=["S2"], model="svm")
