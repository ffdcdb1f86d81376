"""Takeaway first (issue 28): the summary, then the box; "In one sentence" is one plain sentence;
no section that is a heading over nothing.

The explainers are read as sources (the sections their authors write); the code section is
checked on what the page renderer writes.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from site_src.rendering.environment import make_environment
from site_src.rendering.pages import _place_cells
from site_src.sources.collect import CODE_PLACEHOLDER

ROOT = Path(__file__).resolve().parents[1]
EXPLAINERS = sorted((ROOT / "explainers").glob("*.md"))
_ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|et al|vs|cf|ed|eq)\.", re.I)


def _body(path: Path) -> str:
    return path.read_text(encoding="utf-8").split("\n---\n", 1)[1]


def _plain(text: str) -> str:
    """What a reader reads of a Markdown source: Jinja values and link targets stand for a word."""
    text = re.sub(r"\{\{.*?\}\}", "X", text, flags=re.S)
    text = re.sub(r"\{%.*?%\}|\{#.*?#\}", "", text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    return _ABBREVIATIONS.sub("abbr", text)


def _sentences(text: str) -> int:
    return len(re.findall(r"[.!?](?=\s|$)", _plain(text).strip()))


@pytest.mark.parametrize("path", EXPLAINERS, ids=lambda p: p.stem)
def test_the_box_comes_first_and_in_one_sentence_is_one_plain_sentence(path):
    body = _body(path)
    first = next(line for line in body.split("\n") if line.strip() and not line.startswith("{%"))
    assert first.startswith('!!! tip "What this means for your audit"'), first
    m = re.search(r"^## In one sentence\n(.*?)(?=^## )", body, flags=re.M | re.S)
    if m is None:
        return  # a page without the section (a reproduction) says it in its summary
    section = m.group(1).strip()
    assert _sentences(section) == 1, section
    # No API names: code, calls, or snake_case identifiers.
    plain = _plain(section)
    assert "`" not in plain and not re.search(r"\b[a-z]+_[a-z_]+\b|\w\(", plain), section


@pytest.mark.parametrize(("text", "n"), [
    ("A test reassigns labels at random, e.g. many times.", 1),
    ("One gap is {{ gap | percent }}. Another [is](../x/index.md) bigger.", 2),
    ("Kleinberg et al. showed it (after {{ cite(\"x\") }}).", 1),
])
def test_the_sentence_count_reads_as_a_reader_does(text, n):
    assert _sentences(text) == n


def _rendered(prose: str, unplaced: list[int]) -> str:
    env = make_environment([])
    cells = [{"first": 1, "last": 2, "title": "One", "code": "x = 1", "shown": SimpleNamespace(streams=[], cut=0)}]
    placed = SimpleNamespace(cells=[], folded=set())
    return _place_cells(env, prose, cells, placed, unplaced, code_rel="explainers/code/x.py")


_PROSE = ("Intro.\n\n## The code\n\n<!-- the explainer's code; the build runs it -->\n"
          f"{CODE_PLACEHOLDER}\n\n## Limitations\n\nSome.\n")


def test_no_code_heading_over_nothing_when_every_cell_is_placed():
    out = _rendered(_PROSE, unplaced=[])
    assert "## The code" not in out and CODE_PLACEHOLDER not in out
    assert out.startswith("Intro.") and "## Limitations\n\nSome." in out


def test_the_code_heading_stays_over_cells_the_prose_did_not_place():
    out = _rendered(_PROSE, unplaced=[1])
    assert "## The code" in out and "x = 1" in out and CODE_PLACEHOLDER not in out


def test_the_power_page_defines_power_before_it_first_uses_it():
    body = _body(ROOT / "explainers" / "small-samples-statistical-power.md")
    first_use = re.search(r"\bpower\b", body, flags=re.I)
    definition = re.search(r"\[power\]\([^)]*\): the\s+chance that", body)
    assert definition is not None and definition.start() <= first_use.start() + len("[")
