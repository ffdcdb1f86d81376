"""A bias-audit report made from a data file, end to end (issue 46): ``fairsite audit new``, the
manifest completed, ``fairsite build``, ``fairsite audit verify`` and ``fairsite audit export``, in a
copy of the tiny fixture site; and every bad input named, with nothing written.

The data are tests/report_data.py's (a seeded frame of people, some of unknown category). Expected
counts come from pandas on the data file, never from the record under test; the statistics
themselves are faircode.report's, tested against oracles in tests/test_report_*.py. The browser
tests of the real site's two reports, the export from file:// and its PDF are in
tests/e2e/test_reports.py.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

import report_data
from site_src import cli

REPO = Path(__file__).resolve().parents[1]
NAME = "my-screen"
# The fields each row of a record holds at least (issue 46, "A record that others can re-run").
ROW_FIELDS = {"table", "category", "n", "n_selected", "selection_rate", "impact_ratio", "impact_ratio_ci_low",
              "impact_ratio_ci_high", "p_value", "p_adjusted", "verdict", "excluded"}


def _fairsite(root: Path, *args: str) -> int:
    return cli.main(["--root", str(root), *args])


def _complete(manifest: Path) -> None:
    """What a user does with the manifest ``audit new`` wrote: every "FILL IN" answered, the
    guessed labels of race named; the guesses about columns, values and parsing kept."""
    raw = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    raw["title"] = "Bias audit of TestScreen (2025)"
    raw["tool"].update(name="TestScreen", distribution_date="2025-01-15")
    raw["audit_date"] = "2026-11-30"
    raw["data"].update(source="made by tests/report_data.py", kind="test", kind_reason="a test of the site",
                       period={"start": "2025-01-01", "end": "2025-12-31"})
    raw["practical_margin"]["reason"] = "the four-fifths line"
    raw["categories"]["race_ethnicity"]["labels"] = {"A": "Asian", "B": "Black", "H": "Hispanic", "W": "White"}
    manifest.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def made(tmp_path_factory, built_tinysite) -> Path:
    """The tiny site with a report made as a user would: data in data/, ``audit new`` on the CSV,
    the manifest completed, the page left as written, ``fairsite build``. Never modified."""
    from built_sites import copy_of_built

    root = copy_of_built(built_tinysite, tmp_path_factory.mktemp("audit-report"))
    # The bibliography the report's methods cite (a fresh clone has it; the fixture site's one explainer cites none).
    shutil.copyfile(REPO / "explainers" / "references.json", root / "explainers" / "references.json")
    (root / "data").mkdir()
    report_data.frame().to_csv(root / "data" / "decisions.csv", index=False)
    assert _fairsite(root, "audit", "new", NAME, "--data", str(root / "data" / "decisions.csv")) == 0
    shutil.copyfile(root / "reports" / NAME / "report.yaml", root.parent / "as-written.yaml")  # before it is completed
    _complete(root / "reports" / NAME / "report.yaml")
    assert _fairsite(root, "build", "--jobs", "1") == 0
    return root


@pytest.fixture
def made_copy(tmp_path, made) -> Path:
    from built_sites import copy_of_built

    return copy_of_built(made, tmp_path)


# ------------------------------------------------------------------------------------------- new

def test_audit_new_on_a_csv_writes_a_manifest_to_complete_from_the_columns(made):
    text = (made.parent / "as-written.yaml").read_text(encoding="utf-8")
    data = pd.read_csv(made / "data" / "decisions.csv", keep_default_na=False)
    raw = yaml.safe_load(text)
    assert raw["data"]["file"] == "data/decisions.csv"  # from the repository's root: the clone's own path
    assert raw["data"]["sha256"] == hashlib.sha256((made / "data" / "decisions.csv").read_bytes()).hexdigest()
    assert raw["outcome"]["decision"]["column"] == "decision"
    assert set(raw["outcome"]["decision"]["favourable"]) | set(raw["outcome"]["decision"]["other"]) == {"yes", "no"}
    assert raw["categories"]["sex"]["column"] == "sex"
    # Every label in the data mapped or unknown, with its count beside it for the user to check.
    assert set(raw["categories"]["sex"]["labels"]) | set(raw["categories"]["sex"]["unknown"]) == set(data["sex"])
    assert f"F: Female   # {(data['sex'] == 'F').sum():,} rows" in text
    assert "# exclusion:" in text and "FILL IN" in text and "GUESS" in text  # the rule off; what to answer


def test_audit_new_on_parquet_writes_a_manifest_without_csv_parsing(tmp_path, built_tinysite, capsys):
    from built_sites import copy_of_built

    root = copy_of_built(built_tinysite, tmp_path)
    (root / "data").mkdir()
    report_data.frame().to_parquet(root / "data" / "decisions.parquet")
    assert _fairsite(root, "audit", "new", NAME, "--data", str(root / "data" / "decisions.parquet")) == 0
    raw = yaml.safe_load((root / "reports" / NAME / "report.yaml").read_text(encoding="utf-8"))
    assert raw["data"]["file"] == "data/decisions.parquet" and "parse" not in raw["data"]
    assert raw["categories"]["race_ethnicity"]["column"] == "race"
    page = (root / "reports" / NAME / "report.md").read_text(encoding="utf-8")
    assert '{{ report_table("intersection") }}' in page


@pytest.mark.parametrize("name, data, said", [
    ("My Screen", "data/decisions.csv", "NAME must be lowercase"),
    (NAME, "data/nowhere.csv", "--data: no file or folder 'data/nowhere.csv'"),
    (NAME, "data/not-a-table.parquet", "--data: cannot read 'data/not-a-table.parquet' as Parquet"),
    ("coin-flips", "data/decisions.csv", "explainers/coin-flips.md has the name 'coin-flips'"),
])
def test_audit_new_names_a_bad_input_and_writes_nothing(tmp_path, built_tinysite, capsys, monkeypatch, name, data,
                                                       said):
    from built_sites import copy_of_built

    root = copy_of_built(built_tinysite, tmp_path)
    (root / "data").mkdir()
    report_data.frame().to_csv(root / "data" / "decisions.csv", index=False)
    (root / "data" / "not-a-table.parquet").write_text("id,sex\n1,F\n")
    before = _tree(root)
    monkeypatch.chdir(root)
    capsys.readouterr()
    assert _fairsite(root, "audit", "new", name, "--data", data) == 2
    assert said in " ".join(capsys.readouterr().err.split())
    assert _tree(root) == before  # not a reports/ folder, not a staging folder left behind


# ----------------------------------------------------------------------------------------- build

def test_the_report_is_a_page_with_its_record_beside_it(made):
    page = (made / "site" / "reports" / NAME / "index.html").read_text(encoding="utf-8")
    assert page.count('class="fc-report-table"') == 3  # sex, race/ethnicity, intersection
    assert 'href="reports/"' in (made / "site" / "index.html").read_text(encoding="utf-8")  # in the navigation
    record = json.loads((made / "site" / "reports" / NAME / "report.json").read_text(encoding="utf-8"))
    data = pd.read_csv(made / "data" / "decisions.csv", keep_default_na=False)
    assert record["data"]["sha256"] == hashlib.sha256((made / "data" / "decisions.csv").read_bytes()).hexdigest()
    assert record["data"]["rows"] == len(data)
    manifest = (made / "reports" / NAME / "report.yaml").read_text(encoding="utf-8")
    assert record["manifest"] == {"sha256": hashlib.sha256(manifest.encode()).hexdigest(), "text": manifest}
    assert {"commit", "dirty", "lock_sha256", "faircode"} <= set(record["project"])
    assert len(record["date"]) == 10 and record["date"][:2] == "20"
    rows = {(r["table"], r["category"]): r for t in record["tables"] for r in t["rows"]}
    assert all(ROW_FIELDS <= set(r) for r in rows.values())
    women = data[data["sex"] == "F"]
    assert rows["sex", "Female"]["n"] == len(women)
    assert rows["sex", "Female"]["n_selected"] == (women["decision"] == "yes").sum()
    assert {t["table"]: t["n_unknown"] for t in record["tables"]}["sex"] == data["sex"].isin(["", "U"]).sum()
    # The CSV beside it holds the same rows.
    with open(made / "site" / "reports" / NAME / "report.csv", newline="", encoding="utf-8") as fh:
        listed = list(csv.DictReader(fh))
    assert len(listed) == len(rows) and ROW_FIELDS <= set(listed[0])


def test_a_number_typed_by_hand_in_the_prose_fails_the_build(made_copy, capsys):
    page = made_copy / "reports" / NAME / "report.md"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("## Findings\n", "## Findings\n\nWomen were selected at 38.4%.\n", 1), encoding="utf-8")
    before = _tree(made_copy / "site")
    capsys.readouterr()
    assert _fairsite(made_copy, "build", "--jobs", "1") == 1
    said = " ".join("".join(capsys.readouterr()).split())
    line = text[:text.index("## Findings")].count("\n") + 3
    assert f"reports/{NAME}/report.md:{line}" in said and "38.4%" in said
    assert _tree(made_copy / "site") == before


def _break(manifest: Path, old: str, new: str) -> None:
    text = manifest.read_text(encoding="utf-8")
    assert old in text, old
    manifest.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("old, new, said", [
    # A mistyped column: the manifest's line, the column, the file, the closest column.
    ("column: sex\n", "column: sexx\n",
     ["report.yaml:", "categories.sex.column: 'sexx' is not a column of data/decisions.csv (did you mean 'sex'?)"]),
    # A label in the data that the manifest does not map: file, column, label, rows, first line, the fix.
    ("      W: White\n", "",
     ["categories.race_ethnicity.labels: the label 'W' of column 'race'", "rows of data/decisions.csv, first on line",
      "add it to categories.race_ethnicity.labels (`W: <category>`) or to categories.race_ethnicity.unknown"]),
    # A decision that is not one of the declared values.
    ("  - 'no'\n", "  - 'nope'\n", ["'no'", "add no to outcome.decision.favourable or outcome.decision.other"]),
    # A data file that is not the declared one: both digests and the fix.
    ("DIGEST", "f" * 64, ["data.sha256", "f" * 64, "if this is the data to audit, write sha256:"]),
])
def test_a_bad_manifest_is_named_with_its_place_and_the_fix_and_nothing_is_written(made_copy, capsys, old, new, said):
    manifest = made_copy / "reports" / NAME / "report.yaml"
    if old == "DIGEST":  # the data's own digest, also said in the fix
        old = hashlib.sha256((made_copy / "data" / "decisions.csv").read_bytes()).hexdigest()
        said = [*said, old]
    _break(manifest, old, new)
    before = {"site": _tree(made_copy / "site"), "docs": _tree(made_copy / "docs"),
              "reports": _tree(made_copy / "reports")}
    capsys.readouterr()
    assert _fairsite(made_copy, "build", "--jobs", "1") == 1
    out = " ".join("".join(capsys.readouterr()).split())
    assert f"[config] reports/{NAME}/report.yaml:" in out, out
    assert "Traceback" not in out and "raised ManifestError" not in out  # each problem said once, as the manifest's
    for words in said:
        assert words in out, (words, out)
    assert {"site": _tree(made_copy / "site"), "docs": _tree(made_copy / "docs"),
            "reports": _tree(made_copy / "reports")} == before


# ---------------------------------------------------------------------------------------- verify

def test_verify_passes_on_the_built_record_from_csv(made, capsys):
    record = made / "site" / "reports" / NAME / "report.json"
    capsys.readouterr()
    assert _fairsite(made, "audit", "verify", str(record), "--data", str(made / "data" / "decisions.csv")) == 0
    assert "verified: every number" in capsys.readouterr().out


def test_verify_names_the_one_number_changed_and_exits_nonzero(made, tmp_path, capsys):
    record = json.loads((made / "site" / "reports" / NAME / "report.json").read_text(encoding="utf-8"))
    row = next(r for t in record["tables"] if t["table"] == "race/ethnicity" for r in t["rows"] if not r["reference"])
    row["impact_ratio"] += 0.001
    changed = tmp_path / "report.json"
    changed.write_text(json.dumps(record), encoding="utf-8")
    capsys.readouterr()
    assert _fairsite(made, "audit", "verify", str(changed), "--data", str(made / "data" / "decisions.csv")) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "1 number differ" in out and f"race/ethnicity / {row['category']}: impact_ratio: recorded" in out


def test_verify_names_a_data_file_whose_hash_is_not_the_recorded_one(made, tmp_path, capsys):
    other = tmp_path / "decisions.csv"
    data = pd.read_csv(made / "data" / "decisions.csv", keep_default_na=False)
    data.loc[0, "decision"] = "no" if data.loc[0, "decision"] == "yes" else "yes"
    other.write_bytes(data.to_csv(index=False).encode())
    record = made / "site" / "reports" / NAME / "report.json"
    capsys.readouterr()
    assert _fairsite(made, "audit", "verify", str(record), "--data", str(other)) == 1
    out = " ".join(capsys.readouterr().out.split())
    recorded = json.loads(record.read_text(encoding="utf-8"))["data"]["sha256"]
    assert f"data.sha256: recorded '{recorded}', recomputed '{hashlib.sha256(other.read_bytes()).hexdigest()}'" in out


@pytest.mark.parametrize("content, said", [(None, "RECORD: no file"), ("{not json", "not a report's record")])
def test_verify_names_a_record_that_is_missing_or_not_one(made, tmp_path, capsys, content, said):
    record = tmp_path / "report.json"
    if content is not None:
        record.write_text(content)
    capsys.readouterr()
    assert _fairsite(made, "audit", "verify", str(record), "--data", str(made / "data" / "decisions.csv")) == 2
    assert said in capsys.readouterr().err


# ---------------------------------------------------------------------------------------- export

def test_export_writes_a_folder_that_needs_nothing_outside_it(made, tmp_path):
    import re

    out = tmp_path / "export"
    assert _fairsite(made, "audit", "export", NAME, "--out", str(out)) == 0
    names = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {"index.html", "report.json", "report.csv", "report.py", "assets/report.css", "assets/export.css"} <= names
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "<script" not in html and 'class="md-sidebar' not in html and 'class="md-header' not in html
    assert html.count('class="fc-report-table"') == 3
    # Every stylesheet and image it loads is in the folder; every outside address is a link to follow, not a load.
    for target in re.findall(r'<link rel="stylesheet" href="([^"]+)"|<img[^>]* src="([^"]+)"', html):
        target = next(t for t in target if t)
        assert (out / target).is_file(), target
    for sheet in (out / "assets").glob("*.css"):
        assert not re.search(r"url\(\s*['\"]?(https?:|//)", sheet.read_text(encoding="utf-8")), sheet.name
    assert json.loads((out / "report.json").read_text()) == json.loads(
        (made / "site" / "reports" / NAME / "report.json").read_text())


@pytest.mark.parametrize("what", ["not empty", "no report", "not built", "manifest changed"])
def test_export_refuses_and_writes_nothing(made_copy, tmp_path, capsys, what):
    out = tmp_path / "export"
    name, status, said = NAME, 2, ""
    if what == "not empty":
        out.mkdir()
        (out / "keep.txt").write_text("mine")
        said = "is not empty"
    elif what == "no report":
        name, said = "my-scren", "no report 'my-scren'"
    elif what == "not built":
        shutil.rmtree(made_copy / "site" / "reports" / NAME)
        status, said = 1, "is not in the built site"
    else:
        _break(made_copy / "reports" / NAME / "report.yaml", "points: 5", "points: 6")
        status, said = 1, "report.yaml changed since site/ was built"
    before = _tree(tmp_path)
    capsys.readouterr()
    assert _fairsite(made_copy, "audit", "export", name, "--out", str(out)) == status
    assert said in " ".join(capsys.readouterr().err.split())
    assert _tree(tmp_path) == before


def test_the_record_csv_is_the_records_rows(made):
    from faircode.report import record_csv

    record = json.loads((made / "site" / "reports" / NAME / "report.json").read_text(encoding="utf-8"))
    written = (made / "site" / "reports" / NAME / "report.csv").read_text(encoding="utf-8")
    assert written == record_csv(record)
    assert len(list(csv.reader(io.StringIO(written)))) == 1 + sum(len(t["rows"]) for t in record["tables"])
