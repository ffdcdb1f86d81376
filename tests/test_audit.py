"""load_audit: rows, labels, groups and split agree with counts made independently from the raw
files (the standard library's csv module, PROVENANCE.md's row counts), not with our own output."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from faircode import Audit, ManifestError, list_audits, load_audit
from faircode.data import project_root

ROOT = project_root()
DATA = ROOT / "data"
FIX = ROOT / "tests" / "fixtures" / "manifests"
AUDITS = ["benefits-denial", "german-credit", "recidivism-risk", "arrest-release"]

# Rows after the manifest's filters, from shared/data/PROVENANCE.md.
PROVENANCE_ROWS = {"benefits-denial": 32_561, "german-credit": 1_000,
                   "recidivism-risk": 6_172, "arrest-release": 5_226}


# --- independent oracles: the raw files read with the csv module ---------------------------------


def _adult_rows() -> list[list[str]]:
    with open(DATA / "adult.data", newline="") as fh:
        return [[f.strip() for f in row] for row in csv.reader(fh) if row]


def _compas_rows_propublica() -> list[dict[str, str]]:
    """ProPublica's filters, written from their R notebook, in plain Python."""
    with open(DATA / "compas-scores-two-years.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [r for r in rows
            if r["days_b_screening_arrest"] != "" and -30 <= float(r["days_b_screening_arrest"]) <= 30
            and r["is_recid"] != "-1" and r["c_charge_degree"] != "O" and r["score_text"] != "N/A"]


def _german_rows() -> list[list[str]]:
    return [line.split() for line in (DATA / "german.data").read_text().splitlines() if line.strip()]


def _arrest_rows() -> list[dict[str, str]]:
    with open(DATA / "arrests.csv", newline="") as fh:
        return list(csv.DictReader(fh))


# --- row counts, labels and groups ----------------------------------------------------------------


@pytest.mark.parametrize("slug", AUDITS)
def test_row_counts_match_provenance(slug):
    audit = load_audit(slug)
    assert len(audit.df) == len(audit.X) == len(audit.y) == PROVENANCE_ROWS[slug]
    assert list(audit.df.index) == list(range(PROVENANCE_ROWS[slug]))


def test_benefits_denial_labels_and_groups():
    rows = _adult_rows()
    audit = load_audit("benefits-denial")
    assert audit.name == "Benefits Denial"
    assert audit.y.sum() == sum(r[14] == ">50K" for r in rows)
    assert audit.masks["sex"].sum() == sum(r[9] == "Female" for r in rows)
    assert audit.reference_masks["sex"].sum() == sum(r[9] == "Male" for r in rows)
    assert audit.masks["race"].sum() == sum(r[8] == "Black" for r in rows)
    assert audit.reference_masks["race"].sum() == sum(r[8] == "White" for r in rows)
    others = sum(r[8] not in ("Black", "White") for r in rows)
    neither = (audit.masks["race"] == 0) & (audit.reference_masks["race"] == 0)
    assert others > 0 and neither.sum() == others
    assert audit.group_labels == {"sex": ("Women", "Men"), "race": ("Black", "White")}


def test_benefits_denial_features_exclude_weight_and_target():
    X = load_audit("benefits-denial").X
    assert "income" not in X and "fnlwgt" not in X and "education" not in X
    assert {"sex", "race", "relationship", "age"} <= set(X.columns)
    # "?" is read as missing, not as a category called "?"
    assert not (X["workclass"] == "?").any() and X["workclass"].isna().sum() > 0


def test_recidivism_risk_follows_propublica():
    rows = _compas_rows_propublica()
    audit = load_audit("recidivism-risk")
    assert len(rows) == 6_172
    assert audit.df["id"].tolist() == [int(r["id"]) for r in rows]
    assert audit.y.sum() == sum(r["two_year_recid"] == "1" for r in rows)
    black = sum(r["race"] == "African-American" for r in rows)
    assert audit.masks["race"].sum() == audit.masks["race_all"].sum() == black
    assert audit.reference_masks["race"].sum() == sum(r["race"] == "Caucasian" for r in rows)
    # race_all names no advantaged values: the reference group is everyone else
    np.testing.assert_array_equal(audit.reference_masks["race_all"], 1 - audit.masks["race_all"])
    assert audit.masks["sex"].sum() == sum(r["sex"] == "Male" for r in rows)


def test_recidivism_risk_drops_leaky_columns():
    audit = load_audit("recidivism-risk")
    X = set(audit.X.columns)
    leaky = {"is_recid", "two_year_recid", "event", "start", "end", "is_violent_recid",
             "decile_score", "decile_score.1", "priors_count.1", "id"}
    assert not (X & leaky)
    assert not [c for c in X if c.startswith(("r_", "vr_"))]
    assert X == {"sex", "age", "age_cat", "race", "juv_fel_count", "juv_misd_count",
                 "juv_other_count", "priors_count", "c_charge_degree"}
    # the CSV's repeated columns are copies (so dropping the second loses nothing)
    df = audit.df
    assert (df["decile_score"] == df["decile_score.1"]).all()
    assert (df["priors_count"] == df["priors_count.1"]).all()


def test_german_credit_decodes_and_derives():
    rows = _german_rows()
    audit = load_audit("german-credit")
    assert audit.y.sum() == sum(r[20] == "2" for r in rows)
    assert set(audit.df["credit"]) == {"good", "bad"}
    assert audit.masks["sex"].sum() == sum(r[8] in ("A92", "A95") for r in rows)
    assert audit.reference_masks["sex"].sum() == sum(r[8] in ("A91", "A93", "A94") for r in rows)
    assert audit.masks["age"].sum() == sum(int(r[12]) < 25 for r in rows)
    np.testing.assert_array_equal(audit.reference_masks["age"], 1 - audit.masks["age"])
    assert audit.df["telephone"].dtype == bool
    assert audit.df.loc[0, "purpose"] == "radio/television"  # row 1 is A43 in german.data


def test_arrest_release_target_is_not_released():
    rows = _arrest_rows()
    audit = load_audit("arrest-release")
    assert audit.y.sum() == sum(r["released"] == "No" for r in rows)
    assert audit.masks["colour"].sum() == sum(r["colour"] == "Black" for r in rows)
    assert audit.reference_masks["colour"].sum() == sum(r["colour"] == "White" for r in rows)


@pytest.mark.parametrize("slug", AUDITS)
def test_masks_are_int8_disjoint_and_read_only(slug):
    audit = load_audit(slug)
    n = len(audit.df)
    assert audit.y.dtype == np.int8 and audit.y.shape == (n,)
    assert set(np.unique(audit.y)) == {0, 1}
    assert list(audit.masks) == [p.name for p in audit.manifest.protected] == audit.attributes
    for attr in audit.masks:
        m, r = audit.masks[attr], audit.reference_masks[attr]
        assert m.dtype == r.dtype == np.int8 and m.shape == r.shape == (n,)
        assert not np.any(m & r)
        assert m.sum() > 0 and r.sum() > 0
        assert not m.flags.writeable and not r.flags.writeable
    with pytest.raises(ValueError):
        audit.y[0] = 1


@pytest.mark.parametrize("slug", AUDITS)
def test_split_sizes_and_stratification(slug):
    audit = load_audit(slug)
    n = len(audit.df)
    n_test = math.ceil(0.2 * n)  # scikit-learn rounds the test share up
    assert len(audit.test) == n_test and len(audit.train) == n - n_test
    assert np.all(np.diff(audit.train) > 0) and np.all(np.diff(audit.test) > 0)
    np.testing.assert_array_equal(np.union1d(audit.train, audit.test), np.arange(n))
    # stratified: the test set holds its share of positives, to within one row
    assert abs(audit.y[audit.test].sum() - n_test * audit.y.mean()) <= 1


def test_split_is_reproducible_from_the_manifest_seed():
    from sklearn.model_selection import train_test_split
    audit = load_audit("german-credit")
    _, test = train_test_split(np.arange(1000), test_size=0.2, random_state=audit.manifest.random_state,
                               stratify=audit.y)
    np.testing.assert_array_equal(audit.test, np.sort(test))


@pytest.mark.parametrize("slug", AUDITS)
def test_the_split_made_at_first_use_is_scikit_learns_and_shared(slug):
    """The split is made when first asked for (issue 26): the same rows as scikit-learn's own
    call on the manifest's settings, made once, read-only."""
    from sklearn.model_selection import train_test_split

    audit = load_audit(slug)
    train, test = train_test_split(np.arange(len(audit.df)), test_size=audit.manifest.test_size,
                                   random_state=audit.manifest.random_state, stratify=audit.y)
    np.testing.assert_array_equal(audit.train, np.sort(train))
    np.testing.assert_array_equal(audit.test, np.sort(test))
    assert audit.train.dtype == audit.test.dtype == np.int64
    assert audit.train is load_audit(slug).train and audit.test is load_audit(slug).test
    assert not audit.train.flags.writeable and not audit.test.flags.writeable


def test_reading_an_audits_rows_imports_no_scikit_learn():
    """The site's data page and a datasheet's published facts read an audit's rows, groups and
    labels: in a fresh interpreter that reads no scikit-learn (0.8 s of CPU in every `fairsite
    check`, issue 26); asking for the split imports it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from faircode import load_audit\n"
        "a = load_audit('recidivism-risk')\n"
        "print(len(a.df), int(a.y.sum()), sorted(a.masks), a.missing_summary())\n"
        "before = 'sklearn' in sys.modules\n"
        "n = len(a.train) + len(a.test)\n"
        "print(before, 'sklearn' in sys.modules, n == len(a.df))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.splitlines()[-1] == "False True True", done.stdout + done.stderr


# --- resolution and caching -----------------------------------------------------------------------


def test_slug_name_folder_and_file_give_the_same_cached_object():
    a = load_audit("arrest-release")
    assert load_audit("Arrest Release") is a
    assert load_audit(ROOT / "audits" / "arrest-release") is a
    assert load_audit(str(ROOT / "audits" / "arrest-release" / "audit.yaml")) is a
    assert isinstance(a, Audit) and "arrest-release" in repr(a)


def test_list_audits():
    assert list_audits() == sorted(AUDITS)


def test_unknown_slug_suggests_a_close_one():
    with pytest.raises(FileNotFoundError, match=r"no audit 'benefit-denial'.*did you mean 'benefits-denial'"):
        load_audit("benefit-denial")


def test_missing_path():
    with pytest.raises(FileNotFoundError, match="no audit manifest at"):
        load_audit(FIX / "nope.yaml")


def test_name_or_path_type():
    with pytest.raises(TypeError, match="`name_or_path` must be a str or Path"):
        load_audit(3)


# --- problems only the data can reveal -----------------------------------------------------------


def test_sha256_is_verified_on_load():
    with pytest.raises(ManifestError, match=r"dataset\.sha256: expected a{64}"):
        load_audit(FIX / "wrong_sha256.yaml")


def test_values_that_never_occur():
    with pytest.raises(ManifestError) as info:
        load_audit(FIX / "bad_values.yaml")
    problems = info.value.problems
    assert len(problems) == 2
    assert ("target.positive[0]: False never occurs in 'released' after the filters (YAML reads bare "
            "yes/no/true/false as booleans: quote the word)") in problems[0]
    assert "protected[0].disadvantaged[0]: 'black' never occurs in 'colour' after the filters " \
           "(did you mean 'Black'?)" in problems[1]


def test_operations_the_data_cannot_take():
    with pytest.raises(ManifestError) as info:
        load_audit(FIX / "bad_ops_on_data.yaml")
    text = str(info.value)
    assert "derived[0].mapping: values ['Black'] of 'colour' are not mapped" in text
    assert "filters[0].op: 'gt' needs a numeric column, but 'sex' holds" in text


# --- missing values of the target and of protected columns -----------------------------------------


def _missing_audit(tmp_path, *, target_missing=None, protected_missing=None, advantaged=None,
                   derived=False) -> Path:
    """A small audit whose file has 2 empty target cells and 3 empty group cells (1 row has both)."""
    import hashlib

    import yaml

    rows = [("1" if i % 3 == 0 else "0", ["A", "B"][i % 2], str(20 + i), str(i % 5)) for i in range(40)]
    rows[1] = ("", "A", "21", "1")
    rows[2] = ("", "", "22", "2")
    rows[5] = ("0", "", "25", "0")
    rows[8] = ("1", "", "28", "3")
    data = tmp_path / "data.csv"
    data.write_text("y,group,age,score\n" + "".join(",".join(r) + "\n" for r in rows))
    if derived:  # a group derived from a column with missing values stays missing
        rows_age = data.read_text().replace(",25,0\n", ",,0\n")
        data.write_text(rows_age)
    protected = {"name": "g", "column": "young" if derived else "group",
                 "disadvantaged": [True] if derived else ["A"], "disadvantaged_label": "A"}
    if advantaged is not None:
        protected["advantaged"] = advantaged
    if protected_missing is not None:
        protected["missing"] = protected_missing
    target = {"column": "y", "positive": [1], "meaning": "flagged", "favourable": "negative"}
    if target_missing is not None:
        target["missing"] = target_missing
    raw = {
        "name": "Missing", "dataset": {"file": str(data), "sha256": hashlib.sha256(data.read_bytes()).hexdigest()},
        "target": target, "protected": [protected], "core_features": ["score"],
        "test_size": 0.25, "random_state": 0, "models": ["logistic_regression"], "strategies": ["S0"],
        "practical_margin": {"points": 5, "ratio": [0.8, 1.25], "reason": "the test's margin"},
    }
    if derived:
        raw["derived"] = [{"name": "young", "from": "age", "op": "lt", "value": 30}]
    path = tmp_path / "audit.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_missing_values_without_a_policy_name_the_column_and_the_count(tmp_path):
    with pytest.raises(ManifestError) as info:
        load_audit(_missing_audit(tmp_path))
    problems = info.value.problems
    assert len(problems) == 2
    assert ("target.missing: column 'y' has 2 missing values after the filters and the manifest does not "
            "say what to do with them; add `missing: drop` to target") in problems[0]
    assert "protected[0].missing: column 'group' has 3 missing values" in problems[1]


def test_missing_fail_refuses_the_rows(tmp_path):
    with pytest.raises(ManifestError, match=r"column 'group' has 3 missing values after the filters and "
                                            r"the manifest says `missing: fail`"):
        load_audit(_missing_audit(tmp_path, target_missing="drop", protected_missing="fail"))


@pytest.mark.parametrize("advantaged", [None, ["B"]])
def test_missing_drop_removes_the_rows_and_counts_them(tmp_path, advantaged):
    audit = load_audit(_missing_audit(tmp_path, target_missing="drop", protected_missing="drop",
                                      advantaged=advantaged))
    # Rows 1, 2, 5, 8 have a missing target or group (row 2 has both): 40 - 4 = 36 remain.
    assert len(audit.df) == len(audit.y) == 36 and audit.n_dropped == 4
    assert dict(audit.dropped) == {"y": 2, "group": 3}
    assert audit.df["y"].notna().all() and audit.df["group"].notna().all()
    # No empty cell joined either group: every remaining row is A or B, counted independently.
    assert audit.masks["g"].sum() == (audit.df["group"] == "A").sum()
    assert audit.reference_masks["g"].sum() == (audit.df["group"] == "B").sum()
    assert audit.missing_summary() == "Missing: 4 rows dropped for a missing value (y: 2, group: 3)"
    assert "dropped=4" in repr(audit)


def test_an_empty_target_never_becomes_class_zero(tmp_path):
    audit = load_audit(_missing_audit(tmp_path, target_missing="drop", protected_missing="drop"))
    raw = [line.split(",")[0] for line in (tmp_path / "data.csv").read_text().splitlines()[1:]]
    groups = [line.split(",")[1] for line in (tmp_path / "data.csv").read_text().splitlines()[1:]]
    kept = [y for y, g in zip(raw, groups) if y != "" and g != ""]
    assert audit.y.tolist() == [int(y) for y in kept]


def test_a_group_derived_from_a_missing_value_stays_missing(tmp_path):
    """age < 30 of an unknown age is unknown, not "30 and over" (the reference group)."""
    with pytest.raises(ManifestError, match=r"protected\[0\]\.missing: column 'young' has 1 missing value "):
        load_audit(_missing_audit(tmp_path, target_missing="drop", derived=True))
