"""Feature strategies' column sets, and encode_features against pandas.get_dummies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from faircode import encode_features, feature_columns, load_audit
from faircode.strategies import STRATEGIES, protected_columns

AUDITS = ["benefits-denial", "german-credit", "recidivism-risk", "arrest-release"]


@pytest.mark.parametrize("slug", AUDITS)
def test_strategy_column_sets(slug):
    audit = load_audit(slug)
    m = audit.manifest
    prot = {p.column for p in m.protected}
    proxies = {p.column for p in m.proxies}
    s0, s1, s2, s3 = (feature_columns(audit, s) for s in ("S0", "S1", "S2", "S3"))
    assert s0 == list(audit.X.columns)
    assert prot <= set(s0) and m.target.column not in s0
    assert not prot & set(s1) and set(s1) < set(s0)
    assert not (prot | proxies) & set(s2)
    assert s2 == list(m.core_features) == s3
    assert set(s2) <= set(s1)


def test_s1_drops_the_columns_a_protected_column_is_derived_from():
    # German Credit: sex is read from status_sex, age_under_25 from age.
    audit = load_audit("german-credit")
    s1 = set(feature_columns(audit, "S1"))
    assert not {"sex", "status_sex", "age_under_25", "age"} & s1
    assert set(protected_columns(audit.manifest)) == {"sex", "status_sex", "age_under_25", "age"}
    assert set(feature_columns(audit, "S0")) - s1 == {"sex", "status_sex", "age_under_25", "age"}


def test_benefits_denial_strategies_by_name():
    audit = load_audit("benefits-denial")
    assert set(feature_columns(audit, "S0")) - set(feature_columns(audit, "S1")) == {"sex", "race"}
    assert set(feature_columns(audit, "S1")) - set(feature_columns(audit, "S2")) == {
        "relationship", "marital_status", "native_country"}


def test_strategy_objects_are_accepted_and_only_s3_mitigates():
    audit = load_audit("arrest-release")
    assert feature_columns(audit, STRATEGIES["S2"]) == feature_columns(audit, "S2")
    assert [s.name for s in STRATEGIES.values() if s.mitigation] == ["S3"]


def test_unknown_strategy():
    with pytest.raises(ValueError, match=r"`strategy` must be one of S0, S1, S2, S3; got 's2' \(did you mean 'S2'\?\)"):
        feature_columns(load_audit("arrest-release"), "s2")


# --- encode_features ------------------------------------------------------------------------------


@pytest.fixture
def toy():
    return pd.DataFrame({
        "age": [30, 41, 25, 60],
        "city": ["Rome", "Oslo", None, "Oslo"],
        "member": [True, False, True, True],
        "income": [1.5, 2.0, 0.5, 3.25],
    })


def test_encoding_matches_get_dummies(toy):
    out = encode_features(toy, ["age", "city", "member", "income"])
    # Oracle: pandas' own one-hot with an explicit missing level, columns sorted per block.
    dummies = pd.get_dummies(toy["city"].fillna("<missing>"), prefix="city", prefix_sep="=", dtype=np.uint8)
    dummies = dummies[["city=Oslo", "city=Rome", "city=<missing>"]]
    expected = pd.concat([toy[["age"]].astype(float), dummies, toy[["member"]].astype(np.uint8),
                          toy[["income"]]], axis=1)
    pd.testing.assert_frame_equal(out, expected)


def test_encoding_dtypes_mark_what_gets_scaled(toy):
    out = encode_features(toy, ["age", "city", "member"])
    assert out["age"].dtype == np.float64
    assert (out.drop(columns="age").dtypes == np.uint8).all()


def test_encoding_is_stable_across_row_order_and_splits(toy):
    full = encode_features(toy, ["city", "age"])
    shuffled = encode_features(toy.iloc[[3, 1, 0, 2]], ["city", "age"])
    pd.testing.assert_frame_equal(full.loc[shuffled.index], shuffled)
    # Encoded on all rows, a split that lacks "Rome" still has its column.
    test_rows = full.iloc[[1, 3]]
    assert list(test_rows.columns) == list(full.columns) and test_rows["city=Rome"].sum() == 0


def test_encoding_follows_requested_column_order(toy):
    assert list(encode_features(toy, ["income", "age"]).columns) == ["income", "age"]


def test_real_audit_encodes_without_missing_numbers():
    audit = load_audit("benefits-denial")
    X = encode_features(audit.df, feature_columns(audit, "S0"))
    assert len(X) == len(audit.df) and not X.isna().any().any()
    assert "workclass=<missing>" in X.columns


@pytest.mark.parametrize("columns, message", [
    ([], "`columns` must be a non-empty list"),
    (["age", "age"], r"`columns` repeats \['age'\]"),
    (["agee"], r"`columns` names columns not in `df`: 'agee' \(did you mean 'age'\?\)"),
])
def test_encoding_validates_columns(toy, columns, message):
    with pytest.raises(ValueError, match=message):
        encode_features(toy, columns)


def test_encoding_refuses_missing_numbers(toy):
    toy.loc[1, "income"] = np.nan
    with pytest.raises(ValueError, match=r"numeric column 'income' has 1 missing values"):
        encode_features(toy, ["income"])


def test_encoding_needs_a_dataframe():
    with pytest.raises(TypeError, match="`df` must be a pandas DataFrame"):
        encode_features(np.zeros((2, 2)), ["a"])
