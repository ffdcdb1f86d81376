"""The benchmark's random-forest fit (faircode.models._fit_forest) grows scikit-learn's forest, tree for tree.

The oracle is scikit-learn itself: ``RandomForestClassifier.fit`` on the same data and seed.
Every fitted attribute of the forest and of each tree, every array of each tree's nodes, and
the probabilities must be equal, bit for bit (issue 26: the benchmark's numbers must not move).
"""

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree._tree import Tree

from faircode.audit import load_audit
from faircode.models import _fit_forest, build_model
from faircode.strategies import encode_features, feature_columns


def _assert_same(a, b, path="forest"):
    """Recursive equality of fitted estimators: attributes, lists, arrays (dtype and shape), trees."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape, path
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), path
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), path
        for i, (x, z) in enumerate(zip(a, b)):
            _assert_same(x, z, f"{path}[{i}]")
    elif isinstance(a, Tree):
        assert isinstance(b, Tree), path
        state_a, state_b = a.__getstate__(), b.__getstate__()
        assert state_a.keys() == state_b.keys(), path
        for key in state_a:
            _assert_same(state_a[key], state_b[key], f"{path}.{key}")
    elif hasattr(a, "get_params"):
        assert type(a) is type(b), path
        assert vars(a).keys() == vars(b).keys(), (path, set(vars(a)) ^ set(vars(b)))
        for key in vars(a):
            _assert_same(vars(a)[key], vars(b)[key], f"{path}.{key}")
    else:
        assert type(a) is type(b) and a == b, (path, a, b)


def _data(slug, strategy):
    audit = load_audit(slug)
    X = encode_features(audit.df, feature_columns(audit, strategy))
    return X.iloc[audit.train], audit.y[audit.train], X.iloc[audit.test], audit.manifest.random_state


@pytest.mark.parametrize(("slug", "strategy", "n_estimators"), [
    ("german-credit", "S0", 200),      # the benchmark's forest, 62 mostly one-hot columns
    ("recidivism-risk", "S2", 200),    # few columns, ~5,000 rows
    ("benefits-denial", "S0", 12),     # 26,048 rows, 91 columns (fewer trees keep the test short)
])
def test_fast_forest_equals_scikit_learns_fit(slug, strategy, n_estimators, monkeypatch):
    X_train, y_train, X_test, seed = _data(slug, strategy)
    reference = build_model("random_forest", seed).set_params(n_estimators=n_estimators).fit(X_train, y_train)

    def no_fallback(self, *args, **kwargs):
        raise AssertionError("_fit_forest fell back to RandomForestClassifier.fit")

    monkeypatch.setattr(RandomForestClassifier, "fit", no_fallback)
    fast = _fit_forest(build_model("random_forest", seed).set_params(n_estimators=n_estimators), X_train, y_train)
    monkeypatch.undo()

    _assert_same(reference, fast)
    assert np.array_equal(fast.predict_proba(X_test), reference.predict_proba(X_test))
    assert np.array_equal(fast.predict(X_test), reference.predict(X_test))


def _fits_taken(monkeypatch, forest, patch=None) -> list:
    """The forests whose `RandomForestClassifier.fit` ran when ``_fit_forest(forest)`` did, on
    German Credit S2, with ``patch`` ({module: {name: value}}) set meanwhile."""
    X_train, y_train, _, _ = _data("german-credit", "S2")
    calls = []
    original = RandomForestClassifier.fit

    def counting(self, *args, **kwargs):
        calls.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(RandomForestClassifier, "fit", counting)
    for module, names in (patch or {}).items():
        for name, value in names.items():
            monkeypatch.setattr(module, name, value)
    assert _fit_forest(forest, X_train, y_train) is forest
    return calls


def test_other_forest_options_take_scikit_learns_fit(monkeypatch):
    # class_weight is not reproduced by the fast path: the forest must be scikit-learn's fit.
    forest = build_model("random_forest", 0).set_params(n_estimators=5, class_weight="balanced")
    assert _fits_taken(monkeypatch, forest) == [forest]


def test_another_scikit_learn_release_takes_its_own_fit(monkeypatch):
    # The private tree classes are checked against one release: any other gets scikit-learn's fit.
    import sklearn

    forest = build_model("random_forest", 0).set_params(n_estimators=5)
    assert _fits_taken(monkeypatch, forest, patch={sklearn: {"__version__": "99.0"}}) == [forest]
    monkeypatch.undo()
    # and the release it was checked against takes the fast path (no scikit-learn fit)
    assert _fits_taken(monkeypatch, build_model("random_forest", 0).set_params(n_estimators=5)) == []


def test_the_verified_release_is_the_one_the_lock_installs():
    # Bumping scikit-learn in requirements/ turns the fast path off; this names what to do.
    from pathlib import Path

    from faircode.models import _FOREST_VERIFIED_WITH

    lock = (Path(__file__).resolve().parents[1] / "requirements" / "site.txt").read_text(encoding="utf-8")
    pinned = next(line.split("==")[1].split()[0] for line in lock.splitlines() if line.startswith("scikit-learn=="))
    assert pinned == _FOREST_VERIFIED_WITH, (
        f"requirements/site.txt pins scikit-learn {pinned}: run tests/test_benchmark_forest.py against it "
        f"and set faircode.models._FOREST_VERIFIED_WITH")
