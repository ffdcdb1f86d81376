"""References that link (issue 28): one bibliography, cited by key, every entry with a DOI or URL.

The keys the prose cites are read from the explainers' Jinja syntax trees and checked against the
bibliography file read as plain JSON (not through the code under test); the labels and entries
expected are written by hand from the items given.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2
import markdown
import pytest
from jinja2 import nodes

from site_src.errors import CheckError, ConfigError
from site_src.rendering.references import PageCitations, load_bibliography, reference_link

ROOT = Path(__file__).resolve().parents[1]
BIB = ROOT / "explainers" / "references.json"
EXPLAINERS = sorted(p for p in (ROOT / "explainers").glob("*.md"))


def _cited_keys(path: Path) -> list[str]:
    """The keys a source passes to cite(...) and further_reading(...), from its syntax tree."""
    tree = jinja2.Environment().parse(path.read_text(encoding="utf-8"))
    keys = []
    for call in tree.find_all(nodes.Call):
        if not isinstance(call.node, nodes.Name) or call.node.name not in ("cite", "further_reading"):
            continue
        for arg in call.args:
            if isinstance(arg, nodes.Const):
                keys.append(arg.value)
            elif isinstance(arg, (nodes.List, nodes.Tuple)):
                keys.append(arg.items[0].value)
    return keys


def test_every_entry_has_a_doi_or_an_https_url():
    items = json.loads(BIB.read_text(encoding="utf-8"))
    ids = [item["id"] for item in items]
    assert len(ids) == len(set(ids))
    for item in items:
        doi, url = item.get("DOI"), item.get("URL")
        assert doi or url, item["id"]
        if doi:
            assert re.fullmatch(r"10\.\d{4,9}/\S+", doi), item["id"]
        if url:
            assert url.startswith("https://"), item["id"]


def test_every_key_the_prose_cites_is_in_the_bibliography():
    ids = {item["id"] for item in json.loads(BIB.read_text(encoding="utf-8"))}
    for path in EXPLAINERS:
        missing = set(_cited_keys(path)) - ids
        assert not missing, f"{path.name}: {sorted(missing)}"


@pytest.mark.parametrize("path", EXPLAINERS, ids=lambda p: p.stem)
def test_further_reading_is_rendered_from_keys_with_no_entry_typed_by_hand(path):
    text = path.read_text(encoding="utf-8")
    section = text.split("\n## Further reading\n", 1)[1]
    section = re.split(r"\n## ", section, maxsplit=1)[0]
    assert "further_reading(" in section
    assert not re.search(r"^\s*- ", section, flags=re.M), "a typed entry: give it a key in explainers/references.json"
    # Author-year citations typed in the prose, outside the front matter, the code and Jinja (a
    # figure's alt text names its source as plain text): "(Holm 1979)", "Phipson and Smyth (2010)".
    body = text.split("\n---\n", 1)[1].split("\n## Further reading\n", 1)[0]
    prose = re.sub(r"```python explainer\n.*?\n```|\{\{.*?\}\}|\{%.*?%\}", "", body, flags=re.S)
    typed = re.findall(r"[A-Z][^\W\d_]+(?: and [A-Z][^\W\d_]+)?,? \(?(?:1[89]|20)\d\d[ab]?\)?(?=[);.,])", prose)
    assert not typed, typed


# ------------------------------------------------------------------------------ the render step

def _bib(tmp_path, items) -> dict:
    path = tmp_path / "explainers" / "references.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(items), encoding="utf-8")
    return load_bibliography(path)


def _item(key, authors, year, **extra):
    return {"id": key, "type": "article-journal", "title": f"Title of {key}", "issued": {"date-parts": [[year]]},
            "author": [{"family": f, "given": "A."} for f in authors], **extra}


def test_labels_name_one_two_or_the_first_of_many_authors(tmp_path):
    bib = _bib(tmp_path, [_item("one", ["Holm"], 1979, URL="https://example.org/1"),
                          _item("two", ["Benjamini", "Hochberg"], 1995, DOI="10.1111/x"),
                          _item("three", ["Kleinberg", "Mullainathan", "Raghavan"], 2017, DOI="10.1/y"),
                          _item("suffix", ["Cochran"], 1954, DOI="10.2/z", **{"citation-label": "Cochran 1954a"})])
    assert [bib[k].label for k in ("one", "two", "three", "suffix")] == [
        "Holm 1979", "Benjamini and Hochberg 1995", "Kleinberg et al. 2017", "Cochran 1954a"]
    assert bib["two"].link == "https://doi.org/10.1111/x"
    assert "(1954a)" in bib["suffix"].entry


def test_a_doi_with_markdown_and_url_characters_is_percent_encoded(tmp_path):
    doi = "10.1002/(SICI)1097-0258(19980430)17:8<873::AID-SIM779>3.0.CO;2-I"
    bib = _bib(tmp_path, [_item("newcombe1998", ["Newcombe"], 1998, DOI=doi)])
    assert bib["newcombe1998"].link == ("https://doi.org/10.1002/%28SICI%291097-0258%2819980430%2917:8"
                                        "%3C873::AID-SIM779%3E3.0.CO%3B2-I")


@pytest.mark.parametrize(("items", "message"), [
    ([_item("nolink", ["A"], 2000)], r"references.json: item 1 \('nolink'\): missing DOI or URL"),
    ([_item("x", ["A"], 2000, URL="https://a"), _item("x", ["B"], 2001, URL="https://b")], r"the key 'x' is used twice"),
    ([{"id": "Bad Key", "title": "t"}], r"'id' must be a key of lowercase letters"),
    ([{**_item("noyear", ["A"], 2000, URL="https://a"), "issued": {}}], r"\('noyear'\): missing issued"),
])
def test_a_broken_bibliography_names_the_file_and_the_key(tmp_path, items, message):
    with pytest.raises(ConfigError, match=message):
        _bib(tmp_path, items)


def test_a_citation_links_to_its_entry_in_the_pages_further_reading(tmp_path):
    bib = _bib(tmp_path, [_item("holm1979", ["Holm"], 1979, URL="https://www.jstor.org/stable/4615733"),
                          _item("good2005", ["Good"], 2005, DOI="10.1007/b138696")])
    refs = PageCitations(bib, explainer="explainers/x.md")
    text = f"As {refs.cite('holm1979')} showed.\n\n## Further reading\n\n" + refs.further_reading(["good2005", "a note"])
    html = markdown.markdown(text, extensions=["attr_list", "md_in_html"])
    assert '<a href="#ref-holm1979">Holm 1979</a>' in html
    # Cited but not named in the call: listed all the same, after the named ones.
    assert html.index('id="ref-good2005"') < html.index('id="ref-holm1979"')
    assert '<a href="https://www.jstor.org/stable/4615733">' in html and '<a href="https://doi.org/10.1007/b138696">' in html
    assert ": a note." in html


def test_unknown_keys_and_late_citations_are_errors(tmp_path):
    bib = _bib(tmp_path, [_item("holm1979", ["Holm"], 1979, URL="https://a"), _item("good2005", ["Good"], 2005, URL="https://b")])
    refs = PageCitations(bib, explainer="explainers/x.md")
    with pytest.raises(CheckError, match=r"no reference 'hol1979' in explainers/references.json.*holm1979"):
        refs.cite("hol1979")
    refs.further_reading("good2005")
    refs.cite("good2005")  # listed: fine
    with pytest.raises(CheckError, match=r"comes after further_reading"):
        refs.cite("holm1979")


def test_a_page_without_further_reading_links_a_citation_to_the_work(tmp_path):
    bib = _bib(tmp_path, [_item("chouldechova2017", ["Chouldechova"], 2017, DOI="10.1089/big.2016.0047")])
    assert reference_link(bib, "chouldechova2017") == "[Chouldechova 2017](https://doi.org/10.1089/big.2016.0047)"
    with pytest.raises(ConfigError, match=r"no reference 'chouldechova'.*chouldechova2017"):
        reference_link(bib, "chouldechova")
