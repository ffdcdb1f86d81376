"""load_report_manifest and scaffold_report_manifest: the example manifests load; each bad
manifest the issue names is refused with the file, its line, the field and the fix, all problems
at once; a scaffold loads with "fill this in" problems until it is completed, then cleanly."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import yaml

from faircode.data import project_root
from faircode.manifest import ManifestError
from faircode.report import (count_categories, data_sha256, load_report_manifest, report_tables,
                             scaffold_report_manifest)

from report_data import frame, manifest, write, write_manifest

ROOT = project_root()


def _problems(path, **kwargs) -> list[str]:
    with pytest.raises(ManifestError) as info:
        load_report_manifest(path, **kwargs)
    return info.value.problems


def _line_of(path, text: str) -> int:
    """The 1-based line of ``path`` on which ``text`` is written (the test's own reading)."""
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("slug, rows, excluded", [("compas-ll144", 7214, True), ("adult-ll144", 32561, False)])
def test_the_example_reports_load_and_count_every_row(slug, rows, excluded):
    m = load_report_manifest(ROOT / "reports" / slug / "report.yaml")
    assert m.slug == slug and m.text == (ROOT / "reports" / slug / "report.yaml").read_text()
    counts = count_categories(m)
    assert counts.n_rows == rows
    tables = report_tables(counts, m)
    assert [t.table for t in tables.tables] == ["sex", "race/ethnicity", "intersection"]
    assert all(t.n_unknown == 0 for t in tables.tables)
    assert (tables.under_share is not None) is excluded


def test_compas_favourable_is_rated_low_risk_deciles_1_to_4():
    m = load_report_manifest(ROOT / "reports" / "compas-ll144" / "report.yaml")
    data = pd.read_csv(ROOT / "data" / "compas-scores-two-years.csv", usecols=["sex", "decile_score", "score_text"])
    low = data["decile_score"].between(1, 4)
    assert (low == (data["score_text"] == "Low")).all()  # COMPAS's own "Low" label agrees
    sex = report_tables(count_categories(m), m).table("sex")
    for category in ("Female", "Male"):
        assert sex.row(category).n_selected == int(low[data["sex"] == category].sum())


def test_a_label_the_manifest_does_not_map_is_named_with_its_rows_and_first_line(tmp_path):
    data = frame(seed=4, n=200)
    data.loc[[17, 60, 61], "sex"] = "X"
    path = write(tmp_path, data)
    problems = _problems(path)
    [problem] = [p for p in problems if "'X'" in p]
    line = _line_of(path, "labels:")  # categories.sex.labels, the first `labels:` of the file
    assert problem.startswith(f"{path}:{line}: categories.sex.labels: the label 'X' of column 'sex'")
    # Row 17 of the data is line 19 of the file (the header is line 1).
    assert "3 rows of" in problem and "first on line 19" in problem
    assert "add it to categories.sex.labels" in problem and "or to categories.sex.unknown" in problem


def test_an_empty_category_value_must_be_declared_unknown(tmp_path):
    frame(seed=5, n=200).to_csv(tmp_path / "data.csv", index=False)
    raw = manifest(tmp_path / "data.csv")
    raw["categories"]["sex"]["unknown"] = ["U"]  # "" left out: the empty values are then undeclared
    [problem] = [p for p in _problems(write_manifest(tmp_path, raw)) if "no value" in p]
    assert "categories.sex.unknown:" in problem and "add \"\" to categories.sex.unknown" in problem


def test_a_decision_that_is_not_declared_is_named(tmp_path):
    data = frame(seed=6, n=200)
    data.loc[5, "decision"] = "maybe"
    path = write(tmp_path, data)
    [problem] = [p for p in _problems(path) if "maybe" in p]
    assert f"{path}:{_line_of(path, 'decision:')}: outcome.decision: the value 'maybe'" in problem
    assert "1 row of" in problem and "first on line 7" in problem
    assert "add maybe to outcome.decision.favourable or outcome.decision.other" in problem


def test_a_mistyped_column_gets_a_did_you_mean(tmp_path):
    frame(seed=7, n=100).to_csv(tmp_path / "data.csv", index=False)
    raw = manifest(tmp_path / "data.csv")
    raw["categories"]["race_ethnicity"]["column"] = "rcae"
    path = write_manifest(tmp_path, raw)
    [problem] = _problems(path)
    assert problem == (f"{path}:{_line_of(path, 'column: rcae')}: categories.race_ethnicity.column: 'rcae' is not "
                       f"a column of {tmp_path / 'data.csv'} (did you mean 'race'?)")


def test_a_data_file_whose_sha256_is_not_the_declared_one_names_both(tmp_path):
    path = write(tmp_path, frame(seed=8, n=100))
    declared = yaml.safe_load(path.read_text())["data"]["sha256"]
    with open(tmp_path / "data.csv", "a") as fh:
        fh.write("100,F,W,yes,50.0,12345\n")
    actual = data_sha256(tmp_path / "data.csv")
    [problem] = _problems(path)
    assert problem.startswith(f"{path}:{_line_of(path, 'sha256:')}: data.sha256: expected {declared} but ")
    assert f"has {actual}" in problem and f"write sha256: {actual}" in problem


def test_every_problem_is_reported_at_once(tmp_path):
    data = frame(seed=9, n=200)
    data.loc[3, "race"] = "Z"
    data.loc[4, "decision"] = "perhaps"
    data.to_csv(tmp_path / "data.csv", index=False)
    raw = manifest(tmp_path / "data.csv", title="", practical_margin={"points": 5, "ratio": [1.2], "reason": "r"})
    raw["data"]["sha256"] = "0" * 64
    raw["tool"]["nmae"] = "x"
    problems = _problems(write_manifest(tmp_path, raw))
    for needle in ("title:", "tool.nmae: unknown key 'nmae' (did you mean 'name'?)", "practical_margin",
                   "data.sha256: expected 000", "the label 'Z'", "the value 'perhaps'"):
        assert any(needle in p for p in problems), (needle, problems)


@pytest.mark.parametrize(("margin", "fragment"), [
    ({"points": 0.05, "ratio": [0.8], "reason": "r"}, "practical_margin.points: `points` is 0.05, a margin of 0.05 "
                                                      "percentage points"),
    (5, "practical_margin: expected a mapping with the keys `points` "),
])
def test_a_report_takes_the_audits_practical_margin_rules(tmp_path, margin, fragment):
    """A report's margin is the audit manifest's (issue 47): a proportion for points, and a scalar
    for the mapping, are refused with the same words."""
    path = write(tmp_path, frame(seed=13, n=100), practical_margin=margin)
    assert any(fragment in p for p in _problems(path)), _problems(path)


def test_a_manifest_with_decision_and_score_is_refused(tmp_path):
    path = write(tmp_path, frame(seed=10, n=100), outcome={"decision": {"column": "decision", "favourable": ["yes"],
                                                                          "other": ["no"]}, "score": {"column": "score"}})
    assert any("exactly one of `decision`" in p for p in _problems(path))


def test_an_exclusion_needs_its_reason(tmp_path):
    path = write(tmp_path, frame(seed=11, n=100), exclusion={"under_share": 0.02})
    assert any("exclusion.reason: required field is missing" in p for p in _problems(path))


def test_check_values_false_reads_only_the_header_and_the_digest(tmp_path):
    data = frame(seed=12, n=100)
    data.loc[0, "sex"] = "X"
    m = load_report_manifest(write(tmp_path, data), check_values=False)
    with pytest.raises(ManifestError, match="the label 'X'"):
        count_categories(m)


# ---------------------------------------------------------------------------------------------
# The scaffold
# ---------------------------------------------------------------------------------------------


def _filled(text: str) -> str:
    """The scaffold's text with each "FILL IN" answered as its author would, in place."""
    answers = {"the report's title": "Bias audit of TestScreen", "the tool's name": "TestScreen",
               "the date the tool": "2025-01-15", "the date of this audit": "2026-11-30",
               "where the data come": "an export", "historical (the": "historical", "why this kind": "its real use",
               "first date": "2025-01-01", "last date": "2025-12-31", "why these values": "the four-fifths line"}

    def answer(match: re.Match) -> str:
        return next(a for key, a in answers.items() if key in match[0])

    return re.sub(r"""(?<=: )(?:"FILL IN: [^"]*"|'FILL IN: (?:[^']|'')*')""", answer, text)


def _mixed() -> pd.DataFrame:
    data = frame(seed=13, n=300)
    data["gender"] = data.pop("sex").replace({"F": "female", "M": "male", "U": "Unknown"})
    data["ethnicity"] = data.pop("race").replace({"W": "White", "B": "Black", "H": "Hispanic", "A": "Asian"})
    data["selected"] = data.pop("decision")
    return data


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_a_scaffold_loads_with_fill_this_in_problems_until_completed(tmp_path, kind):
    data = _mixed()
    if kind == "parquet":
        pytest.importorskip("pyarrow", reason="Parquet needs pyarrow, which the lock does not hold yet")
        data_file = tmp_path / "data.parquet"
        data.to_parquet(data_file)
    else:
        data_file = tmp_path / "data.csv"
        data.to_csv(data_file, index=False)
    text = scaffold_report_manifest("screen", data_file)
    assert "sha256: " + data_sha256(data_file) in text
    assert "column: gender   # GUESS" in text and "column: ethnicity   # GUESS" in text
    assert "column: selected   # GUESS" in text and "favourable: ['yes']" in text
    sex = yaml.safe_load(text)["categories"]["sex"]
    assert sex["labels"] == {"female": "Female", "male": "Male"} and sex["unknown"] == ["", "Unknown"]
    path = tmp_path / "report.yaml"
    path.write_text(text)
    problems = _problems(path, root=tmp_path)
    assert problems and all("fill this in" in p for p in problems)
    # A label taken out of the mapping is named beside the fill-ins, not after them.
    path.write_text(text.replace("      female: Female", "      femme: Female"))
    problems = _problems(path, root=tmp_path)
    assert any("the label 'female' of column 'gender'" in p for p in problems)
    path.write_text(text)
    assert any(p.startswith(f"report.yaml:{_line_of(path, 'audit_date:')}: audit_date: fill this in") for p in problems)
    path.write_text(_filled(text))
    m = load_report_manifest(path, root=tmp_path)
    tables = report_tables(count_categories(m), m)
    assert tables.table("sex").n_unknown == int(data["gender"].isin(["Unknown", ""]).sum() + data["gender"].isna().sum())


def test_a_scaffold_of_a_headerless_file_names_its_columns_and_finds_the_roles_by_value():
    text = scaffold_report_manifest("adult", ROOT / "data" / "adult.data")
    raw = yaml.safe_load(text)
    assert raw["data"]["file"] == "data/adult.data"
    assert raw["data"]["parse"]["header"] is False and raw["data"]["parse"]["skipinitialspace"] is True
    assert raw["categories"]["sex"]["column"] == "column_10" and raw["categories"]["race_ethnicity"]["column"] == "column_9"
    assert raw["categories"]["race_ethnicity"]["labels"]["Amer-Indian-Eskimo"] == "Amer-Indian-Eskimo"
    assert raw["outcome"]["decision"]["favourable"].startswith("FILL IN: which of the values mean selected")
