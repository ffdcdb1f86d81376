"""The MkDocs hook that hands Material's search each page's own HTML.

mkdocs-glightbox serialises a page's HTML as a whole document; Material's search parser then
opens an empty section at ``<html>`` and a page-level hit has no preview. The expected sections
come from Material's own parser, run on the hook's output.
"""

from __future__ import annotations

import re

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


def test_the_reports_section_comes_after_the_explainers_and_before_the_results(tmp_path):
    # "reports" sorts before "results" and after "explainers" by name alike; "areports" would
    # sort first: the order must come from the pages' front matter (issue 46: 119 and 120).
    nav = _nav(tmp_path, {
        "index.md": "# Home\n",
        "glossary/index.md": "---\norder: 1\n---\n# Glossary\n",
        "results/index.md": "---\norder: 200\n---\n# Results\n",
        "explainers/alpha/index.md": "---\norder: 2\n---\n# Alpha\n",
        "explainers/beta/index.md": "---\norder: 3\n---\n# Beta\n",
        "areports/index.md": "---\norder: 119\n---\n# Audit reports\n",
        "areports/one/index.md": "---\norder: 120\n---\n# One\n",
    })
    top = [item.file.src_uri if item.is_page else item.title for item in nav.items]
    assert top == ["index.md", "glossary/index.md", "Explainers", "Areports", "results/index.md"]


def test_on_config_keeps_the_facts_the_build_gives_and_reads_the_tree_otherwise(tmp_path):
    from types import SimpleNamespace

    from site_src.publishing.mkdocs_hooks import on_config

    given = SimpleNamespace(extra={"build": "the build's facts"}, config_file_path=str(tmp_path / "mkdocs.yml"))
    assert on_config(given).extra["build"] == "the build's facts"
    plain = SimpleNamespace(extra={}, config_file_path=str(tmp_path / "mkdocs.yml"))  # `mkdocs build` on its own
    facts = on_config(plain).extra["build"]
    assert facts.commit is None and facts.date  # not a git checkout: no commit, but a date


# --- Issue 28: fragments, glossary definitions, reading time, the 404 page ------------------------

from types import SimpleNamespace  # noqa: E402

from mkdocs.exceptions import PluginError  # noqa: E402

from site_src.publishing import mkdocs_hooks  # noqa: E402
from site_src.rendering.glossary import TERMS  # noqa: E402


def test_a_fragment_is_put_in_after_markdown_and_out_of_search(tmp_path):
    (tmp_path / ".fragments").mkdir()
    table = '<section data-search-exclude><table><tr><td>gap *not emphasis*</td></tr></table></section>'
    (tmp_path / ".fragments" / "t.html").write_text(table, encoding="utf-8")
    html = '<h1 id="r">Results</h1>\n<p>Intro.</p>\n<!-- fairsite:fragment t -->\n<p><!-- fairsite:fragment t --></p>'
    out = mkdocs_hooks.insert_fragments(html, tmp_path)
    assert out.count(table) == 2 and "fairsite:fragment" not in out and "<p><section" not in out
    assert _sections(out) == [(None, "Results", "<p>Intro.</p>")]  # the table is not indexed
    with pytest.raises(PluginError, match=r"fragment 'missing'.*missing\.html does not exist"):
        mkdocs_hooks.insert_fragments("<!-- fairsite:fragment missing -->", tmp_path)


def test_every_glossary_term_link_carries_its_definition_from_the_glossary():
    assert {"gap", "power"} <= {t.anchor for t in TERMS}
    html = ('<h1 id="t">T</h1><p>A <a href="../../glossary/#gap">gap</a>, its <a href="../../glossary/#power">power</a>, '
            'a <a href="../../glossary/#gap">gap</a> again and the <a href="../../glossary/#audits">conventions</a>.</p>')
    out = mkdocs_hooks.define_terms(html)
    assert out.count('data-fc-term="gap" aria-describedby="fc-def-gap" title="Gap (its sign): A gap compares') == 2
    assert 'aria-describedby="fc-def-power"' in out
    assert '<a href="../../glossary/#audits">conventions</a>' in out  # not a term: left alone
    # One hidden definition per term, in plain words (the Markdown's ** and links gone), and search skips it.
    defs = re.search(r'<section class="fc-defs" hidden data-search-exclude>(.*)</section>', out).group(1)
    assert defs.count('id="fc-def-gap"') == 1 and defs.count("<span") == 2
    assert "the disadvantaged group&#x27;s rate minus the advantaged group&#x27;s" in defs and "**" not in defs
    assert "Hoenig and Heisey 2001" in defs
    assert _sections(out) == _sections(html)
    assert mkdocs_hooks.define_terms(html, glossary_page=True) == html


def test_an_explainer_gets_its_reading_time_and_its_card_too():
    words = " ".join(["word"] * 700)
    html = (f'<h1 id="t">T</h1>\n<p class="fc-subtitle">A question?</p>\n<p>{words}</p>'
            f'<details class="fc-cell"><summary>Code</summary><p>{words} {words}</p></details>')
    page = SimpleNamespace(url="explainers/x/")
    out = mkdocs_hooks.add_reading_time(html, page)
    # 700 + 1 (title) + 2 (subtitle) + 1 (summary) visible words at 230 a minute: 4 minutes; with
    # the fold open, 1,400 more: 10 minutes (issue 47)
    assert ('<p class="fc-subtitle">A question?</p>\n<p class="fc-reading-time"><span class="fc-reading-time__minutes" '
            'title="at 230 words a minute: the page with its folds closed, then with them open">'
            '4 min read, 10 with the details</span></p>') in out
    home = ('<div class="grid cards fc-cards"><ul><li><p><strong><a href="explainers/x/">X</a></strong></p>'
            '<p><a href="explainers/x/" tabindex="-1" aria-hidden="true"><img></a></p></li></ul></div>')
    card = mkdocs_hooks.on_post_page(home, SimpleNamespace(is_homepage=True), None)
    assert card.count("4 min read, 10 with the details") == 1 and '</a></strong> <span class="fc-card-time">· ' in card


def test_permalinks_leave_the_tab_order():
    html = '<h2 id="a">A<a class="headerlink" href="#a" title="Permanent link">¶</a></h2>'
    assert 'class="headerlink" tabindex="-1" href="#a"' in on_page_content(html, page=None, config=None, files=None)


def test_the_404_page_finds_the_site_root_wherever_it_is_served(tmp_path):
    (tmp_path / "404.html").write_text(
        '<!doctype html><html><head>\n<link rel="stylesheet" href="/fair-code/assets/main.css">'
        '<link rel="stylesheet" href="//cdn.example/x.css"></head><body>'
        '<a href="/fair-code/">home</a><img src="/fair-code/assets/logo.svg">'
        '<script id="__config" type="application/json">{"base": "/fair-code/", "search": "/fair-code/w.js"}</script>'
        '<script src="/fair-code/assets/bundle.js"></script></body></html>', encoding="utf-8")
    mkdocs_hooks.on_post_build(SimpleNamespace(site_dir=str(tmp_path), site_url="https://x.github.io/fair-code/"))
    out = (tmp_path / "404.html").read_text(encoding="utf-8")
    assert "/fair-code/assets" not in out.split("<script id=\"__config\"")[1].split("</script>", 1)[1]
    assert 'href="./assets/main.css"' in out and 'href="./"' in out and 'src="./assets/logo.svg"' in out
    assert 'src="./assets/bundle.js"' in out and 'href="//cdn.example/x.css"' in out  # not the site's: kept
    head = out.split("<head>", 1)[1]
    assert head.lstrip().startswith("<script>") and "fairsite-manifest.json" in head.split("<link")[0]
    # The address it was built for, as a <base> the preloader reads, before any URL that needs it.
    assert '</script>\n<base href="/fair-code/">\n<link rel="stylesheet" href="./assets/main.css">' in head
