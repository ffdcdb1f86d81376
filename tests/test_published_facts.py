"""Published facts (site_src/checking/published.py): each datasheet's facts from the published
record, verified on the committed data with their citation.

Expected values come from the publications (adult.names, Grömping 2019, ProPublica's notebook and
article), typed here from those sources, never from the verifier. Changes are made on temporary
copies of the datasheets; the real files are only read.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from site_src.checking.published import load_facts, verify
from site_src.errors import CheckError, ConfigError

ROOT = Path(__file__).resolve().parents[1]


def _copy(tmp_path: Path, name: str) -> Path:
    copy = tmp_path / name
    shutil.copyfile(ROOT / "data" / name, copy)
    return copy


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_committed_datasheets_hold_against_the_data():
    assert verify(ROOT, use_cache=False) == []


def test_the_declared_facts_cover_what_the_issue_asks():
    """Adult's row counts, German Credit's 700/300, ProPublica's table on all rows and filtered."""
    declared = {p.name: {f.fact: f.expected for f in load_facts(p)} for p in (ROOT / "data").glob("*.md")
                if p.name != "README.md"}
    assert {32561, 30162, 48842, 45222} <= set(declared["adult.md"].values())
    assert sorted(declared["german.md"].values()) == [300, 700, 1000]
    compas = declared["compas.md"]
    # ProPublica's "Black defendants" and "White defendants" tables (Low/High by Survived/Recidivated).
    for counts in ((990, 805, 532, 1369), (1139, 349, 461, 505)):
        for n in counts:
            assert n in compas.values()
    assert 7214 in compas.values() and 6172 in compas.values()


def test_a_changed_count_fails_naming_the_fact_the_citation_and_both_values(tmp_path):
    sheet = _copy(tmp_path, "german.md")
    _edit(sheet, "expected: 700", "expected: 701")
    problems = verify(ROOT, datasheets=[sheet], use_cache=False)
    assert len(problems) == 1 and isinstance(problems[0], CheckError)
    message = str(problems[0])
    assert "'good credit risks'" in message
    assert "Grömping (2019)" in message and "Report-2019-004.pdf" in message
    assert "expected 701" in message and "found 700" in message


def test_one_count_off_in_propublicas_table_fails(tmp_path):
    """Zero tolerance: 805 false positives among Black defendants, not 804."""
    sheet = _copy(tmp_path, "compas.md")
    _edit(sheet, "expected: 805", "expected: 804")
    problems = verify(ROOT, datasheets=[sheet], use_cache=False)
    assert [re.search(r"found ([\d,]+)", str(p))[1] for p in problems] == ["805"]
    assert "How We Analyzed the COMPAS Recidivism Algorithm" in str(problems[0])


def test_a_share_is_checked_to_its_published_decimals(tmp_path):
    sheet = _copy(tmp_path, "compas.md")
    _edit(sheet, 'expected: "44.85%"', 'expected: "44.86%"')
    problems = verify(ROOT, datasheets=[sheet], use_cache=False)
    assert len(problems) == 1
    assert "expected 44.86%" in str(problems[0]) and "found 44.85%" in str(problems[0])
    # 805 / 1,795 = 44.846...%, which rounds to 44.85 at two decimals and to 44.8 at one.
    _edit(sheet, 'expected: "44.86%"', 'expected: "44.8%"')
    assert verify(ROOT, datasheets=[sheet], use_cache=False) == []


def test_filtered_facts_count_the_audits_rows_after_its_filters(tmp_path):
    """6,172 is a fact about the manifest's filters: on the raw file the same fact fails."""
    sheet = _copy(tmp_path, "compas.md")
    _edit(sheet, "  - fact: rows after ProPublica's filters\n    rows: audit",
          "  - fact: rows after ProPublica's filters\n    rows: file")
    problems = verify(ROOT, datasheets=[sheet], use_cache=False)
    assert len(problems) == 1 and "expected 6,172" in str(problems[0]) and "found 7,214" in str(problems[0])


def test_malformed_facts_are_named_with_file_and_field(tmp_path):
    sheet = _copy(tmp_path, "german.md")
    _edit(sheet, 'where: ["credit == good"]', 'where: ["credit is good"]')
    _edit(sheet, "expected: 300", "expected: lots")
    with pytest.raises(ConfigError) as err:
        load_facts(sheet)
    text = str(err.value)
    assert "published[1]: where[0]: 'credit is good' is not \"column op value\"" in text
    assert "published[2]: expected: expected a count" in text


# adult.names: "48842 instances ... (train=32561, test=16281)", "45222 if instances with unknown
# values are removed (train=30162, test=15060)", "Probability for the label '>50K' : 23.93% / 24.78%
# (without unknowns)" (class probabilities of train and test together).
ADULT_NAMES = {"rows": 48842, "complete": 45222, "test rows": 16281, "test complete": 15060,
               "share": "23.93%", "share complete": "24.78%"}


def test_adult_facts_over_train_and_test_hold_on_the_committed_files():
    facts = load_facts(ROOT / "data" / "adult.md")
    two_file = [f for f in facts if [r.file for r in f.files] == ["adult.data", "adult.test"]]
    declared = {(f.complete, f.share_of is not None): f.expected_text for f in two_file}
    assert declared == {(False, False): "48,842", (True, False): "45,222",
                        (False, True): ADULT_NAMES["share"], (True, True): ADULT_NAMES["share complete"]}
    assert all("adult.names" in f.citation for f in two_file)
    test_only = sorted(f.expected for f in facts if [r.file for r in f.files] == ["adult.test"])
    assert test_only == [ADULT_NAMES["test complete"], ADULT_NAMES["test rows"]]
    assert verify(ROOT, datasheets=[ROOT / "data" / "adult.md"], use_cache=False) == []


def _adult_site(tmp_path: Path) -> Path:
    """A copy of the repository's Adult audit, manifest and data, to change a file in."""
    (tmp_path / "audits" / "benefits-denial").mkdir(parents=True)
    shutil.copyfile(ROOT / "audits" / "benefits-denial" / "audit.yaml",
                    tmp_path / "audits" / "benefits-denial" / "audit.yaml")
    (tmp_path / "data").mkdir()
    for name in ("adult.md", "adult.data", "adult.test"):
        shutil.copyfile(ROOT / "data" / name, tmp_path / "data" / name)
    return tmp_path


def test_a_changed_test_file_fails_the_two_file_facts_naming_adult_names(tmp_path):
    """One >50K row fewer in adult.test: every count and share over it moves, and says so."""
    site = _adult_site(tmp_path)
    test = site / "data" / "adult.test"
    lines = test.read_text(encoding="utf-8").split("\n")
    # The last complete >50K row: dropping it changes all six facts that read adult.test.
    drop = max(i for i, line in enumerate(lines) if line.endswith(">50K.") and "?" not in line)
    test.write_text("\n".join(lines[:drop] + lines[drop + 1:]), encoding="utf-8")
    problems = verify(site, use_cache=False)
    assert all(isinstance(p, CheckError) for p in problems)
    messages = [str(p) for p in problems]
    # The four counts over adult.test move by one; the shares (11,686 / 48,841 = 23.927% and
    # 11,207 / 45,221 = 24.783%) still round to the published two decimals, so they hold.
    found = sorted(re.search(r"found ([\d,.]+%?)", m)[1] for m in messages)
    assert found == sorted(["48,841", "45,221", "16,280", "15,059"])
    assert all("adult.names (UCI)" in m and "archive.ics.uci.edu" in m for m in messages)
    assert any("expected 48,842" in m and "found 48,841" in m and "adult.data + adult.test" in m for m in messages)


def test_a_changed_two_file_count_in_the_datasheet_fails_naming_the_citation(tmp_path):
    sheet = _copy(tmp_path, "adult.md")
    _edit(sheet, "expected: 45222", "expected: 45223")
    problems = verify(ROOT, datasheets=[sheet], use_cache=False)
    assert len(problems) == 1 and isinstance(problems[0], CheckError)
    message = str(problems[0])
    assert '"45222 if instances with unknown values are removed"' in message
    assert "expected 45,223" in message and "found 45,222" in message


def test_without_the_test_files_tweaks_the_facts_fail(tmp_path):
    """The tweaks are needed: without strip_suffix no test row reads '>50K', so the share falls."""
    sheet = _copy(tmp_path, "adult.md")
    text = sheet.read_text(encoding="utf-8")
    sheet.write_text(text.replace(', strip_suffix: {income: "."}', ""), encoding="utf-8")
    messages = [str(p) for p in verify(ROOT, datasheets=[sheet], use_cache=False)]
    assert any("expected 23.93%" in m for m in messages) and any("expected 24.78%" in m for m in messages)


@pytest.mark.parametrize("files, field", [
    ("[../german.data]", "published[2]: files[0]: file: expected the name of a file"),
    ("[{file: adult.test, skip_rows: -1}]", "published[2]: files[0]: skip_rows: expected a whole number"),
    ("[{file: adult.test, strip_suffix: .}]", "published[2]: files[0]: strip_suffix: expected a mapping"),
    ("[{file: adult.test, skip: 1}]", "published[2]: files[0]: unknown key 'skip'"),
    ("adult.test", "published[2]: files: expected a list"),
])
def test_a_malformed_files_field_names_the_datasheet_and_field(tmp_path, files, field):
    sheet = _copy(tmp_path, "adult.md")
    _edit(sheet, 'files: [{file: adult.test, skip_rows: 1, strip_suffix: {income: "."}}]\n    expected: 16281',
          f"files: {files}\n    expected: 16281")
    with pytest.raises(ConfigError) as err:
        load_facts(sheet, shown="data/adult.md")
    assert f"data/adult.md: {field}" in str(err.value)


def test_files_with_an_audits_filtered_rows_is_refused(tmp_path):
    sheet = _copy(tmp_path, "adult.md")
    _edit(sheet, "    rows: file\n    files: [{file: adult.test", "    rows: audit\n    files: [{file: adult.test")
    with pytest.raises(ConfigError, match=r"adult.md: published\[2\]: files: only with rows: file"):
        load_facts(sheet)


def test_a_site_without_datasheets_has_nothing_to_verify(tmp_path):
    """A site with no data/ folder (the build's tiny fixture site) passes, rather than failing to list it."""
    assert verify(tmp_path, use_cache=False) == []


def test_the_sites_own_counts_are_pinned_not_published_and_fail_as_such(tmp_path):
    """The eight filtered-row confusion counts are the site's own (ProPublica published the filter
    and the filtered rows by race and decile, not this split): declared ``kind: pinned``, with no
    number typed into their citation, and still checked to the row."""
    facts = load_facts(ROOT / "data" / "compas.md")
    pinned = [f for f in facts if f.pinned]
    # ProPublica's filtered rows by race, split by two_year_recid and decile >= 5 (the site's table)
    assert sorted(f.expected for f in pinned) == sorted([873, 641, 473, 1188, 999, 282, 408, 414])
    assert all(not re.search(r"\d", f.citation) for f in pinned)
    assert all(f.rows == "audit" for f in pinned)
    assert not any(f.pinned for f in facts if f.expected in (990, 805, 532, 1369, 7214, 6172))
    sheet = _copy(tmp_path, "compas.md")
    _edit(sheet, "expected: 641", "expected: 640")
    problems = verify(ROOT, datasheets=[sheet], use_cache=False)
    assert len(problems) == 1 and "pinned count" in str(problems[0]) and "found 641" in str(problems[0])
    _edit(sheet, "kind: pinned", "kind: ours")
    with pytest.raises(ConfigError, match=r"kind: expected 'published' or 'pinned', got 'ours'"):
        load_facts(sheet)
