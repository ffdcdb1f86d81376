"""The built HTML is read with lexbor (selectolax) for the word count and the link check (issue 26):
each reads what Python's HTMLParser read, on generated pages and on pages of the real site.

The oracles are the readers the build used before, written on ``html.parser`` (standard library),
kept here as they were."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from site_src.checking.words import REFERENCE_SECTIONS, visible_words
from site_src.publishing import linkcheck

REPO = Path(__file__).resolve().parents[1]

# --- the oracles -------------------------------------------------------------------------------

_UNSEEN = {"pre", "code", "svg", "script", "style", "template", "noscript"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_WORD = re.compile(r"[^\W_]", re.UNICODE)


class _OracleWords(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.words, self._stack, self._hidden, self._in_reference = 0, [], 0, False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h2":
            self._in_reference = a.get("id") in REFERENCE_SECTIONS
        parent = self._stack[-1][0] if self._stack else None
        hides = (tag in _UNSEEN or "hidden" in a or "headerlink" in (a.get("class") or "").split()
                 or (parent == "details-closed" and tag != "summary"))
        if tag == "details" and "open" not in a:
            tag = "details-closed"
        if tag in _VOID:
            return
        self._stack.append((tag, hides))
        self._hidden += hides

    def handle_endtag(self, tag):
        for i in range(len(self._stack) - 1, -1, -1):
            name = self._stack[i][0]
            if name == tag or (tag == "details" and name == "details-closed"):
                for _, hides in self._stack[i:]:
                    self._hidden -= hides
                del self._stack[i:]
                return

    def handle_data(self, data):
        if not self._hidden and not self._in_reference:
            self.words += sum(1 for w in data.split() if _WORD.search(w))


def _oracle_words(html: str) -> int:
    parser = _OracleWords()
    parser.feed(html)
    parser.close()
    return parser.words


class _OraclePage(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.page = linkcheck._Page()

    def handle_starttag(self, tag, attrs):
        self.page.add(tag, {k: (v or "") for k, v in attrs})


def _oracle_page(html: str) -> linkcheck._Page:
    parser = _OraclePage()
    parser.feed(html)
    parser.close()
    return parser.page


def _lexbor_page(tmp_path: Path, html: str) -> linkcheck._Page:
    path = tmp_path / "page.html"
    path.write_text(html, encoding="utf-8")
    return linkcheck._parse(path)


# --- generated pages ---------------------------------------------------------------------------

# Pages as Markdown and the theme write them: well formed, each element where HTML allows it (a
# misnested page is built again by the browser, and by lexbor as the browser does, not by
# HTMLParser: `<p>` inside `<p>` closes the first).
_TEXT = st.sampled_from(["two words", "—", "x1 · y", "a_b", "Ünïcode text", "&amp; more", "  ", "42"])
_ATTRS = st.sampled_from([
    "", ' id="a"', ' class="headerlink" href="#a"', " hidden", ' id="further-reading"', ' id="related"',
    ' id="source-and-verify"', ' id="method"', ' href="../x/#y"', ' src="img.svg"', ' srcset="a.png 1x, b.png 2x"',
    ' name="n"', ' class="x y"',
])
_PHRASING = ["span", "em", "code", "a"]
_BLOCKS = ["p", "div", "section", "details", "pre", "ul", "h2", "h3", "noscript", "svg", "script", "img", "br", "link"]


def _attrs(draw, tag: str) -> str:
    attrs = draw(_ATTRS)
    if tag == "details" and draw(st.booleans()):
        attrs += " open"
    if tag == "link":
        attrs = draw(st.sampled_from([' rel="stylesheet" href="s.css"', ' rel="canonical" href="https://e.org/"',
                                      ' rel="icon" href="//cdn.example/i.png"']))
    return attrs


@st.composite
def _phrasing(draw, depth: int, in_a: bool = False) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        tags = [t for t in _PHRASING if not (in_a and t == "a")]
        if depth < 4 and draw(st.booleans()):
            tag = draw(st.sampled_from(tags + ["img", "br"]))
            if tag in ("img", "br"):
                parts.append(f"<{tag}{_attrs(draw, tag)}>")
            else:
                inner = draw(_phrasing(depth + 1, in_a or tag == "a"))
                parts.append(f"<{tag}{_attrs(draw, tag)}>{inner}</{tag}>")
        else:
            parts.append(draw(_TEXT))
    return "".join(parts)


@st.composite
def _html(draw, depth: int = 0, in_noscript: bool = False) -> str:
    # A <noscript> inside a <noscript> is not allowed (HTML, 4.12.2): a browser with scripting on
    # reads the inner one as text, HTMLParser as an element (hypothesis found the difference).
    blocks = [t for t in _BLOCKS if not (in_noscript and t == "noscript")]
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        if depth >= 4 or not draw(st.booleans()):
            parts.append(draw(_phrasing(depth)))
            continue
        tag = draw(st.sampled_from(blocks))
        attrs = _attrs(draw, tag)
        inside = in_noscript or tag == "noscript"
        if tag in ("img", "br", "link"):
            parts.append(f"<{tag}{attrs}>")
        elif tag == "script":
            parts.append(f"<script{attrs}>var a = '<p>not a tag</p>';</script>")
        elif tag == "svg":
            parts.append(f"<svg{attrs}><text>{draw(_TEXT)}</text></svg>")
        elif tag in ("p", "pre", "h2", "h3"):
            parts.append(f"<{tag}{attrs}>{draw(_phrasing(depth + 1))}</{tag}>")
        elif tag == "details":
            summary = draw(_phrasing(depth + 1))
            parts.append(f"<details{attrs}><summary>{summary}</summary>{draw(_html(depth + 1, inside))}</details>")
        elif tag == "ul":
            items = "".join(f"<li>{draw(_html(depth + 1, inside))}</li>" for _ in range(draw(st.integers(0, 2))))
            parts.append(f"<ul{attrs}>{items}</ul>")
        else:
            parts.append(f"<{tag}{attrs}>{draw(_html(depth + 1, inside))}</{tag}>")
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(_html())
def test_visible_words_count_what_the_html_parser_counted(html):
    assert visible_words(html) == _oracle_words(html)


@settings(max_examples=200, deadline=None)
@given(_html())
def test_the_link_check_reads_what_the_html_parser_read(tmp_path_factory, html):
    ours, oracle = _lexbor_page(tmp_path_factory.mktemp("page"), html), _oracle_page(html)
    assert (ours.ids, ours.headings, ours.refs, ours.loads) == (oracle.ids, oracle.headings, oracle.refs, oracle.loads)


def test_both_read_the_pages_of_the_real_site_as_the_html_parser_did(tmp_path):
    # The site's own pages: Material's theme, the highlighted code (thousands of spans), folds,
    # figures, the calculator's <noscript>, the reference sections. The committed docs/ is not
    # here in a clone; the site is built from the tiny fixture site with the real theme and hooks.
    import shutil

    from site_src.build import BuildOptions, build

    root = tmp_path / "site-root"
    shutil.copytree(REPO / "tests" / "fixtures" / "tinysite", root)
    build(BuildOptions(root=root))
    pages = sorted((root / "site").rglob("*.html"))
    assert pages
    for path in pages:
        html = path.read_text(encoding="utf-8")
        assert visible_words(html) == _oracle_words(html), path
        ours, oracle = linkcheck._parse(path), _oracle_page(html)
        assert (ours.ids, ours.headings, ours.refs, ours.loads) == (oracle.ids, oracle.headings, oracle.refs,
                                                                    oracle.loads), path
