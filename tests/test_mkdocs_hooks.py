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
