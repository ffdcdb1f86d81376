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
    assert 32561 in declared["adult.md"].values() and 30162 in declared["adult.md"].values()
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


def test_a_site_without_datasheets_has_nothing_to_verify(tmp_path):
    """A site with no data/ folder (the build's tiny fixture site) passes, rather than failing to list it."""
    assert verify(tmp_path, use_cache=False) == []
