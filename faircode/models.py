"""The benchmark's models, and one fit-and-predict step shared by the benchmark and explainers.

==================== =====================================================================
name                 estimator
==================== =====================================================================
logistic_regression  standardise the float64 (measured) columns, then LogisticRegression
random_forest        RandomForestClassifier(200 trees, min_samples_leaf=5)
gradient_boosting    HistGradientBoostingClassifier (scikit-learn's fast gradient boosting:
                     same model family as GradientBoostingClassifier, binned features, far
                     faster on Adult's 26k training rows; early stopping on for > 10,000 rows)
==================== =====================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from fairlearn.postprocessing import ThresholdOptimizer
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from faircode.audit import _frozen
from faircode.formatting import did_you_mean
from faircode.manifest import MODEL_NAMES
from faircode.strategies import STRATEGIES, _check_strategy, encode_features, feature_columns

if TYPE_CHECKING:
    from sklearn.base import ClassifierMixin

    from faircode.audit import Audit

__all__ = ["MODELS", "Predictions", "build_model", "fit_predict", "fit_predict_strategies"]

MODELS: tuple[str, ...] = MODEL_NAMES


@dataclass(frozen=True, eq=False, repr=False)
class Predictions:
    """A model's predictions on an audit's test rows.

    Attributes
    ----------
    rows : numpy.ndarray of int64, shape (n_test,)
        Row positions in ``audit.df`` (= ``audit.test``), so ``audit.masks[a][rows]`` are
        the test rows' groups.
    y_true : numpy.ndarray of int8, shape (n_test,)
        1 = positive class.
    y_pred : numpy.ndarray of int8, shape (n_test,)
        The decision, 1 = positive class.
    y_score : numpy.ndarray of float64, shape (n_test,)
        The model's probability of the positive class, in [0, 1]. For S3 this is the S2
        model's probability: the mitigation changes the decision rule (per-group, possibly
        randomised thresholds), not the score, so ranking metrics such as ROC AUC equal S2's.
    strategy, model : str
    audit : str
        The audit's slug.
    """

    rows: np.ndarray
    y_true: np.ndarray
    y_pred: np.ndarray
    y_score: np.ndarray
    strategy: str
    model: str
    audit: str = ""

    def __repr__(self) -> str:
        return (f"Predictions(audit={self.audit!r}, strategy={self.strategy!r}, model={self.model!r}, "
                f"n={len(self.rows)}, selection_rate={self.y_pred.mean():.3f}, "
                f"accuracy={(self.y_pred == self.y_true).mean():.3f})")


def build_model(name: str, random_state: int | None) -> ClassifierMixin:
    """An unfitted scikit-learn classifier for the benchmark.

    Parameters
    ----------
    name : str
        One of :data:`MODELS`: ``"logistic_regression"``, ``"random_forest"``,
        ``"gradient_boosting"``.
    random_state : int or None
        Seed of the model's randomness (the manifest's ``random_state`` in the benchmark).

    Returns
    -------
    sklearn estimator
        Unfitted. Expects the DataFrame that :func:`faircode.strategies.encode_features` makes:
        the logistic regression standardises its float64 columns and passes the uint8
        indicators through unchanged.

    Raises
    ------
    ValueError
        If ``name`` is not a known model (the message lists the valid names).

    Notes
    -----
    ``gradient_boosting`` uses OpenMP threads; on a busy machine fit it inside
    ``threadpoolctl.threadpool_limits(1)`` as :func:`fit_predict` does.

    Example
    -------
    >>> build_model("random_forest", 0).n_estimators
    200
    """
    if name not in MODELS:
        raise ValueError(f"`name` must be one of {', '.join(MODELS)}; got {name!r}{did_you_mean(name, MODELS)}")
    if name == "logistic_regression":
        scale = ColumnTransformer(
            [("numeric", StandardScaler(), make_column_selector(dtype_include=np.float64))],
            remainder="passthrough",
        )
        return Pipeline([("scale", scale),
                         ("model", LogisticRegression(max_iter=2000, random_state=random_state))])
    if name == "random_forest":
        # n_jobs=1: the benchmark parallelises across tasks; nested threads would oversubscribe
        # the 2 cores. min_samples_leaf=5 gives smoother probabilities for the thresholds of S3.
        return RandomForestClassifier(n_estimators=200, min_samples_leaf=5, n_jobs=1,
                                      random_state=random_state)
    return HistGradientBoostingClassifier(random_state=random_state)


def fit_predict(audit: Audit, *, strategy: str = "S2",
                model: str = "logistic_regression") -> Predictions:
    """Fit a model on the audit's training rows and predict its test rows.

    Parameters
    ----------
    audit : Audit
        From :func:`faircode.load_audit`.
    strategy : {"S0", "S1", "S2", "S3"}, default "S2"
        Feature strategy (see :mod:`faircode.strategies`).
    model : str, default "logistic_regression"
        One of :data:`MODELS`.

    Returns
    -------
    Predictions
        Test-row decisions and scores. Deterministic: the same call gives the same arrays.

    Raises
    ------
    ValueError
        Unknown strategy or model.

    Notes
    -----
    Features are encoded on all rows (see :func:`faircode.strategies.encode_features`), the
    model fits on ``audit.train`` with the manifest's ``random_state``. For S3 the fitted S2
    model is wrapped in ``ThresholdOptimizer(constraints="demographic_parity",
    prefit=True, predict_method="predict_proba")``, fitted on the training rows with the
    first protected attribute's disadvantaged mask (1 = disadvantaged, 0 = everyone else) as
    the sensitive feature; its randomised decisions use the manifest's ``random_state``.

    References
    ----------
    .. [1] M. Hardt, E. Price, N. Srebro, "Equality of Opportunity in Supervised Learning",
       NeurIPS 2016.

    Example
    -------
    >>> from faircode import load_audit  # doctest: +SKIP
    >>> p = fit_predict(load_audit("german-credit"), strategy="S2")  # doctest: +SKIP
    >>> p.y_pred.shape  # doctest: +SKIP
    (200,)
    """
    name = _check_strategy(strategy)
    return fit_predict_strategies(audit, strategies=(name,), model=model)[name]


def fit_predict_strategies(audit: Audit, *, strategies, model: str = "logistic_regression") -> dict[str, Predictions]:
    """`fit_predict` for several strategies of one model, fitting each feature set once.

    Parameters
    ----------
    audit : Audit
        From :func:`faircode.load_audit`.
    strategies : sequence of {"S0", "S1", "S2", "S3"}
        The strategies wanted (repeats are ignored).
    model : str, default "logistic_regression"
        One of :data:`MODELS`.

    Returns
    -------
    dict of str to Predictions
        One entry per strategy, in the order asked; each equal, array for array, to
        ``fit_predict(audit, strategy=s, model=model)``.

    Raises
    ------
    ValueError
        Unknown strategy or model, or ``strategies`` empty.

    Notes
    -----
    Strategies that give the model the same columns in the same order share one fit: S3 is
    the S2 model plus a post-processing step (:func:`fit_predict`'s Notes), so asking for S2
    and S3 fits the S2 model once and wraps that same fitted estimator, which is what
    `fit_predict` with ``strategy="S3"`` fits anew: the fit is deterministic (the manifest's
    ``random_state``, one thread), so sharing it changes no number and saves a quarter of the
    benchmark's fitting (issue 26).
    """
    if isinstance(strategies, str) or not list(strategies):
        raise ValueError("`strategies` must be a non-empty sequence of strategy names, e.g. ['S2', 'S3']")
    names = list(dict.fromkeys(_check_strategy(s) for s in strategies))
    if model not in MODELS:
        try:
            build_model(model, None)  # raises the ValueError listing valid names
        except ValueError as err:  # ... under build_model's argument name; say ours
            raise ValueError(str(err).replace("`name`", "`model`", 1)) from None
    by_columns: dict[tuple[str, ...], list[str]] = {}
    for name in names:
        by_columns.setdefault(tuple(feature_columns(audit, name)), []).append(name)
    out: dict[str, Predictions] = {}
    for columns, sharing in by_columns.items():
        out.update(_fit_and_derive(audit, list(columns), sharing, model))
    return {name: out[name] for name in names}


def _fit_and_derive(audit: Audit, columns: list[str], strategies: list[str], model: str) -> dict[str, Predictions]:
    """One fit on ``columns``, then each strategy's decisions from it (its mitigation, if any)."""
    X = encode_features(audit.df, columns)
    X_train, X_test = X.iloc[audit.train], X.iloc[audit.test]
    y_train = audit.y[audit.train]
    seed = audit.manifest.random_state
    out = {}

    # One OpenMP/BLAS thread: HistGradientBoosting's OpenMP threads spin-wait, and on a busy
    # 2-core machine (CI, or the benchmark's own parallel workers) that made a 0.1 s fit take
    # 15 s. Parallelism belongs to the caller (the benchmark runs tasks side by side).
    with threadpool_limits(limits=1):
        estimator = build_model(model, seed)
        if isinstance(estimator, RandomForestClassifier):
            _fit_forest(estimator, X_train, y_train)
        else:
            estimator.fit(X_train, y_train)
        proba = estimator.predict_proba(X_test)
        y_score = proba[:, 1].astype(np.float64)
        for name in strategies:
            if STRATEGIES[name].mitigation is None:
                y_pred = _decisions(estimator, X_test, proba)
            else:
                sensitive = audit.masks[audit.attributes[0]]
                post = ThresholdOptimizer(estimator=estimator, constraints="demographic_parity",
                                          objective="accuracy_score", prefit=True,
                                          predict_method="predict_proba")
                post.fit(X_train, y_train, sensitive_features=sensitive[audit.train])
                y_pred = post.predict(X_test, sensitive_features=sensitive[audit.test], random_state=seed)
            out[name] = Predictions(
                rows=_frozen(audit.test.copy()),
                y_true=_frozen(audit.y[audit.test].copy()),
                y_pred=_frozen(np.asarray(y_pred).astype(np.int8)),
                y_score=_frozen(y_score.copy()),
                strategy=name, model=model, audit=audit.slug,
            )
    return out


# The scikit-learn release whose private tree classes `_fit_forest` was checked against, tree for
# tree (tests/test_benchmark_forest.py; the version requirements/ pins). Any other release takes
# scikit-learn's own fit, and that test fails until the equality has been checked again.
_FOREST_VERIFIED_WITH = "1.9.1"

# The forest options `_fit_forest` reproduces; any other value takes scikit-learn's own fit.
_FOREST_DEFAULTS = {"bootstrap": True, "oob_score": False, "warm_start": False, "class_weight": None,
                    "max_samples": None, "criterion": "gini", "max_leaf_nodes": None, "ccp_alpha": 0.0,
                    "monotonic_cst": None, "min_weight_fraction_leaf": 0.0}


def _fit_forest(forest: RandomForestClassifier, X, y) -> RandomForestClassifier:
    """``forest.fit(X, y)``, tree for tree the same, without scikit-learn's per-tree Python work.

    ``RandomForestClassifier.fit`` clones its template tree, reads every tree's parameters back
    through ``inspect.signature``, and re-checks the targets and the weights of every tree: on
    the benchmark's 2,400 trees that was a quarter of the forests' CPU (12.2 s of 4 x 3 fits
    down to 9.2 s, issue 26). Here the data
    are checked once, as ``fit`` checks them (float32, classes, feature names), and each tree is
    grown by scikit-learn's own splitter and builder from the same draws: the forest's
    generator gives tree ``i`` the seed ``randint(2**31 - 1)`` (``_set_random_states``), the
    bootstrap is ``RandomState(seed).randint(0, n, n)`` counted into weights
    (``_parallel_build_trees``), and the splitter gets a fresh ``RandomState(seed)``
    (``DecisionTreeClassifier._fit``). tests/test_benchmark_forest.py holds every tree array
    and attribute equal to scikit-learn's fit on each benchmark data set. Options other than
    the benchmark's (`_FOREST_DEFAULTS`, dense finite X, two or more classes, one output) fall
    back to ``forest.fit``. The splitter, criterion and builder are scikit-learn's private
    classes (the version is pinned in requirements/); an upgrade that changes them fails that
    test rather than the benchmark's numbers.
    """
    params = _reproducible_forest_params(forest)
    if params is None:
        return forest.fit(X, y)
    checked = _checked_forest_data(forest, X, y)
    if checked is None:
        return forest.fit(X, y)
    Xv, y_enc = checked
    forest.estimators_ = _grow_trees(forest, params, Xv, y_enc)
    forest.classes_, forest.n_classes_ = forest.classes_[0], forest.n_classes_[0]
    return forest


def _reproducible_forest_params(forest: RandomForestClassifier) -> dict | None:
    """The forest's parameters when `_fit_forest` reproduces its fit (the verified release, the
    benchmark's options), else None: scikit-learn's own fit."""
    from sklearn.tree import DecisionTreeClassifier

    import sklearn

    if sklearn.__version__ != _FOREST_VERIFIED_WITH:
        # The private classes below may differ in another release: scikit-learn's own fit, the
        # same numbers, until tests/test_benchmark_forest.py has been run against that release.
        return None
    params = forest.get_params(deep=False)
    template = forest.estimator
    if (any(params[k] != v for k, v in _FOREST_DEFAULTS.items()) or type(template) is not DecisionTreeClassifier
            or template.get_params() != DecisionTreeClassifier().get_params()
            or not isinstance(params["min_samples_leaf"], int) or not isinstance(params["min_samples_split"], int)
            or params["max_features"] != "sqrt"):
        return None
    return params


def _checked_forest_data(forest: RandomForestClassifier, X, y) -> tuple[np.ndarray, np.ndarray] | None:
    """``RandomForestClassifier.fit``'s own checks of the data, in its order, and the attributes
    it sets from them: (float32 X, encoded float64 targets of shape (n, 1)), or None where the data
    are not the benchmark's kind (sparse or non-finite X, several outputs, one class)."""
    from sklearn.utils.validation import validate_data

    forest._validate_params()
    # validate_data sets n_features_in_ and feature_names_in_, as fit does.
    Xv, yv = validate_data(forest, X, y, multi_output=True, accept_sparse="csc", dtype=np.float32,
                           ensure_all_finite=False)
    if not isinstance(Xv, np.ndarray) or not np.isfinite(Xv).all() or np.ndim(yv) != 1:
        return None
    y2 = np.reshape(yv, (-1, 1))
    forest._n_samples, forest.n_outputs_ = y2.shape
    y_enc, _ = forest._validate_y_class_weight(y2, None)
    if forest.n_classes_[0] < 2:
        return None
    y_enc = np.ascontiguousarray(y_enc, dtype=np.float64)
    forest._sample_weight = None
    forest._n_samples_bootstrap = Xv.shape[0]  # _get_n_samples_bootstrap(n, None, None)
    forest._validate_estimator()  # estimator_ = DecisionTreeClassifier()
    return Xv, y_enc


def _grow_trees(forest: RandomForestClassifier, params: dict, Xv: np.ndarray, y_enc: np.ndarray) -> list:
    """The forest's trees, each grown by scikit-learn's splitter and builder from the draws its
    fit makes (see `_fit_forest`)."""
    from sklearn.tree import DecisionTreeClassifier
    from sklearn.tree._classes import CRITERIA_CLF, DENSE_SPLITTERS
    from sklearn.tree._tree import DepthFirstTreeBuilder, Tree
    from sklearn.utils import check_random_state

    # What DecisionTreeClassifier._fit derives from the forest's (encoded) targets and options.
    n = Xv.shape[0]
    tree_classes, tree_y = np.unique(y_enc[:, 0], return_inverse=True)
    tree_y = np.ascontiguousarray(tree_y.reshape(-1, 1), dtype=np.float64)
    n_classes = np.array([tree_classes.shape[0]], dtype=np.intp)
    n_features = Xv.shape[1]
    max_features = max(1, int(np.sqrt(n_features)))
    min_samples_leaf = params["min_samples_leaf"]
    min_samples_split = max(params["min_samples_split"], 2 * min_samples_leaf)
    max_depth = np.iinfo(np.int32).max if params["max_depth"] is None else params["max_depth"]
    tree_params = {p: getattr(forest, p) for p in forest.estimator_params}

    draw = check_random_state(forest.random_state)
    seeds = [draw.randint(np.iinfo(np.int32).max) for _ in range(forest.n_estimators)]
    trees = []
    for seed in seeds:
        tree = DecisionTreeClassifier(**{**tree_params, "random_state": seed})
        counts = np.random.RandomState(seed).randint(0, n, n).astype(np.int32)
        weight = np.bincount(counts, minlength=n).astype(np.float64)
        criterion = CRITERIA_CLF["gini"](1, n_classes)
        splitter = DENSE_SPLITTERS["best"](criterion, max_features, min_samples_leaf, 0.0,
                                           np.random.RandomState(seed), None)
        tree.n_features_in_, tree.n_outputs_ = n_features, 1
        tree.max_features_ = max_features
        tree.tree_ = Tree(n_features, n_classes, 1)
        DepthFirstTreeBuilder(splitter, min_samples_split, min_samples_leaf, 0.0, max_depth,
                              params["min_impurity_decrease"]).build(tree.tree_, Xv, tree_y, weight, None)
        tree.classes_, tree.n_classes_ = tree_classes.copy(), n_classes[0]
        trees.append(tree)
    return trees


def _decisions(estimator, X_test, proba: np.ndarray) -> np.ndarray:
    """``estimator.predict(X_test)``, without predicting twice where predict is argmax of proba."""
    if isinstance(estimator, RandomForestClassifier):
        # scikit-learn's ForestClassifier.predict is exactly this (one output), and the forest's
        # predict_proba is a tenth of its fit on Benefits Denial. HistGradientBoosting and the
        # logistic regression threshold the raw score instead, so they keep their own predict.
        return estimator.classes_.take(np.argmax(proba, axis=1), axis=0)
    return estimator.predict(X_test)
