"""The MkDocs hook that hands Material's search each page's own HTML.

mkdocs-glightbox serialises a page's HTML as a whole document; Material's search parser then
opens an empty section at ``<html>`` and a page-level hit has no preview. The expected sections
come from Material's own parser, run on the hook's output.
"""

from __future__ import annotations

import pytest

from site_src.publishing.mkdocs_hooks import on_page_content

_BODY = ('<h1 id="t">Title</h1>\n<p class="fc-subtitle">The summary.</p>\n'
         '<h2 id="next">Next</h2>\n<p>Body.</p>')


def _sections(html: str) -> list[tuple[str | None, str, str]]:
    from material.plugins.search.plugin import Parser

    parser = Parser()
    parser.feed(html)
    parser.close()
    return [(s.id, "".join(s.title).strip(), "".join(s.text).strip()) for s in parser.data]


def test_the_wrapped_page_reaches_search_as_the_page_itself():
    wrapped = f"<html><head></head><body>{_BODY}</body></html>"
    assert _sections(wrapped)[0] == (None, "", "")  # what Material indexed before: an empty first section
    out = on_page_content(wrapped, page=None, config=None, files=None)
    assert out == _BODY
    assert _sections(out) == [(None, "Title", "<p>The summary.</p>"), ("next", "Next", "<p>Body.</p>")]


@pytest.mark.parametrize("html", [_BODY, "", "<p>An <html> tag in prose</p>",
                                  "<html><head><title>x</title></head><body><p>kept</p></body></html>"])
def test_anything_else_passes_through_unchanged(html):
    assert on_page_content(html, page=None, config=None, files=None) == html


def _nav(tmp_path, pages: dict[str, str]):
    """MkDocs' navigation of a docs folder holding ``pages`` ({path: text}), after ``on_nav``."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import get_files
    from mkdocs.structure.nav import get_navigation

    from site_src.publishing.mkdocs_hooks import on_nav

    docs = tmp_path / "docs"
    for rel, text in pages.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n", encoding="utf-8")
    config = load_config(str(tmp_path / "mkdocs.yml"), docs_dir=str(docs))
    files = get_files(config)
    return on_nav(get_navigation(files, config), config, files)


def test_each_explainer_is_a_page_of_its_section_in_front_matter_order(tmp_path):
    # Folder names sort the other way round from `order`: the order must come from the front matter.
    nav = _nav(tmp_path, {
        "index.md": "# Home\n",
        "glossary/index.md": "---\norder: 1\n---\n# Glossary\n",
        "results/index.md": "---\norder: 200\n---\n# Results\n",
        "explainers/alpha/index.md": "---\norder: 2\n---\n# Alpha\n",
        "explainers/zeta/index.md": "---\norder: 1\n---\n# Zeta\n",
        "explainers/mid/index.md": "# Mid, no front matter: after the ordered ones\n",
    })
    top = [item.file.src_uri if item.is_page else item.title for item in nav.items]
    assert top == ["index.md", "glossary/index.md", "Explainers", "results/index.md"]
    section = nav.items[2]
    assert [p.file.src_uri for p in section.children] == [
        "explainers/zeta/index.md", "explainers/alpha/index.md", "explainers/mid/index.md"]
    assert all(p.is_page and p.parent is section for p in section.children)  # no one-page sections
    # Previous and next follow the new order, across the sections.
    order = [p.file.src_uri for p in nav.pages]
    assert order == ["index.md", "glossary/index.md", "explainers/zeta/index.md", "explainers/alpha/index.md",
                     "explainers/mid/index.md", "results/index.md"]
    for prev, page in zip(nav.pages, nav.pages[1:]):
        assert page.previous_page is prev and prev.next_page is page


def test_on_config_keeps_the_facts_the_build_gives_and_reads_the_tree_otherwise(tmp_path):
    from types import SimpleNamespace

    from site_src.publishing.mkdocs_hooks import on_config

    given = SimpleNamespace(extra={"build": "the build's facts"}, config_file_path=str(tmp_path / "mkdocs.yml"))
    assert on_config(given).extra["build"] == "the build's facts"
    plain = SimpleNamespace(extra={}, config_file_path=str(tmp_path / "mkdocs.yml"))  # `mkdocs build` on its own
    facts = on_config(plain).extra["build"]
    assert facts.commit is None and facts.date  # not a git checkout: no commit, but a date
