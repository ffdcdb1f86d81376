"""The reader's furniture of the site: plain-language sentences, glossary, tag index, explainer boxes.

Expected values are written by hand from the inputs (a gap of -0.098 is 9.8 people in 100), or
read from the audit manifests themselves, not from the functions under test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from site_src.filters import per_100
from site_src.rendering.glossary import TERMS, audit_conventions, terms_used

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("value", "expected"), [
    (-0.098, "per 100 women, about 10 fewer are turned away than per 100 men"),
    (0.2049, "per 100 women, about 20 more are turned away than per 100 men"),
    (-0.004, "per 100 women, about 0.4 fewer are turned away than per 100 men"),
    (0.0001, "per 100 women and per 100 men, the same number are turned away, to within a twentieth of a person"),
])
def test_per_100_says_the_gap_in_people_with_the_direction_from_the_sign(value, expected):
    assert per_100(value, "women", "men", "are turned away") == expected


@pytest.mark.parametrize(("args", "match"), [
    ((1.5, "a", "b", "are x"), r"per_100 filter expects a gap of rates in \[-1, 1\], got 1.5"),
    ((0.1, "", "b", "are x"), r"per_100 filter: who must be non-empty words"),
    ((float("nan"), "a", "b", "are x"), r"per_100 filter got NaN"),
    (("0.1", "a", "b", "are x"), r"per_100 filter expects a number, got str"),
])
def test_per_100_rejects_what_is_not_a_gap(args, match):
    with pytest.raises((ValueError, TypeError), match=match):
        per_100(*args)


def test_glossary_table_is_read_from_every_manifest():
    audits = {a.slug: a for a in audit_conventions(ROOT)}
    paths = sorted((ROOT / "audits").glob("*/audit.yaml"))
    assert set(audits) == {p.parent.name for p in paths}
    for path in paths:
        raw = yaml.safe_load(path.read_text())
        a = audits[path.parent.name]
        assert a.flagged == raw["target"]["meaning"]
        assert a.favourable == {"negative": "not flagged", "positive": "flagged"}[raw["target"]["favourable"]]
        assert [g[1] for g in a.groups] == [p["disadvantaged_label"] for p in raw["protected"]]


def test_terms_used_finds_terms_in_prose_not_in_code():
    text = "The gap has a p-value.\n```python\ncalibration = 1\n```\n<pre>precision</pre>"
    found = {t.anchor for t in terms_used(text)}
    assert {"gap", "p-value"} <= found
    assert not found & {"calibration", "precision"}


def test_no_definition_points_to_a_place_on_the_page():
    """A definition is also the tooltip of every link to its term, on any page (issue 47: "see the
    table above" on pages with no table): it names what it points to, not where it is."""
    from site_src.rendering.glossary import definition_text

    # "the table above", "see below", "(above)": a place; "below 0.05", "above $50K": a number
    where = re.compile(r"\b(?:see|the \w+) (?:above|below)\b|\b(?:above|below)\s*(?:[.,;:)]|$)", re.I)
    assert [t.anchor for t in TERMS if where.search(definition_text(t))] == []
    flagged = next(t for t in TERMS if t.anchor == "flagged")
    assert "the glossary's table of the audits says what it means in each" in definition_text(flagged)
    assert "](#audits)" in flagged.definition  # on the glossary page, a link to that table


def test_every_issue_term_has_one_glossary_entry():
    anchors = [t.anchor for t in TERMS]
    assert len(anchors) == len(set(anchors))
    for needed in ("gap", "percentage-points", "flagged", "disadvantaged", "base-rate", "strategies",
                   "test-split", "p-value", "q-value", "tpr", "fpr", "precision", "interval", "equal-opportunity"):
        assert needed in anchors


@pytest.mark.parametrize("path", sorted((ROOT / "explainers").glob("*.md")), ids=lambda p: p.stem)
def test_every_explainer_opens_with_what_it_means_for_your_audit(path):
    """Issue 17: the takeaway box comes first, before any section of the page."""
    text = path.read_text()
    body = text[text.index("\n---", 4) + 4:]
    first_heading = re.search(r"^#{2,} ", body, flags=re.M)
    box = body.find('!!! tip "What this means for your audit"')
    assert box != -1 and (first_heading is None or box < first_heading.start())
    points = re.findall(r"^    \d\. ", body[box:first_heading.start() if first_heading else None], flags=re.M)
    assert 2 <= len(points) <= 3
