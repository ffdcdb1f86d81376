"""Check a built site offline: every internal link and anchor resolves, nothing loads from outside.

MkDocs' own validation sees the Markdown links; this sees the HTML readers get, including the
theme's links, raw HTML in the pages and the ``#anchors`` they point at. `in_sources` words
MkDocs' warnings about a page's links for the writer: the source to edit, the line, and the
page or anchor that exists.
"""

from __future__ import annotations

import functools
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from selectolax.lexbor import LexborHTMLParser

from faircode.formatting import at, closest

__all__ = ["broken_links", "external_loads", "in_sources"]

# Attributes that make the browser fetch something as the page loads (not links a reader follows).
_LOAD_ATTRS = {"script": ("src",), "img": ("src", "srcset"), "source": ("src", "srcset"), "iframe": ("src",),
               "audio": ("src",), "video": ("src", "poster"), "embed": ("src",), "object": ("data",),
               "link": ("href",)}
# <link rel=...> values that load a resource; canonical, alternate and similar are only hints.
_LOAD_RELS = {"stylesheet", "icon", "preload", "modulepreload", "prefetch", "manifest", "apple-touch-icon",
              "preconnect", "dns-prefetch"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_CSS_URL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])((?:https?:)?//[^'")\s]+)""")


class _Page:
    """What the link check reads of a page: its ids, headings, links and what it loads."""

    def __init__(self):
        self.ids: set[str] = set()
        self.headings: list[str] = []  # the ids of h1-h6, in page order: the anchors a writer links to
        self.refs: list[str] = []  # hrefs and srcs, as written
        self.loads: list[str] = []  # what the browser fetches on load

    def add(self, tag: str, a: dict[str, str]) -> None:
        """Read one element ``tag`` with attributes ``a`` (values unescaped, "" for none)."""
        for key in ("id", "name") if tag == "a" else ("id",):
            if a.get(key):
                self.ids.add(a[key])
        if tag in _HEADINGS and a.get("id"):
            self.headings.append(a["id"])
        for key in ("href", "src"):
            if a.get(key):
                self.refs.append(a[key])
        if a.get("srcset"):
            self.refs += [part.strip().split()[0] for part in a["srcset"].split(",") if part.strip()]
        if tag == "link" and not (_LOAD_RELS & set(a.get("rel", "").lower().split())):
            return
        for key in _LOAD_ATTRS.get(tag, ()):
            for url in (a.get(key, "").split(",") if key == "srcset" else [a.get(key, "")]):
                url = url.strip().split(" ")[0] if url.strip() else ""
                if url:
                    self.loads.append(url)


# The elements `_Page.add` reads something of; every other element has nothing it reads.
_READ = "[id], a[name], [href], [src], [srcset], " + ", ".join(sorted(_LOAD_ATTRS))


def _parse(path: Path) -> _Page:
    st = path.stat()
    return _parse_file(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=4096)
def _parse_file(path: str, mtime_ns: int, size: int) -> _Page:
    # Keyed on modification time and size too: `broken_links` and `external_loads` read the
    # same pages once between them, and a long-running `serve` never sees a stale parse.
    # Parsed by lexbor (selectolax): Python's HTMLParser made this check about 1 s of every
    # `fairsite check` (issue 26). A node matching several selectors of the list comes once each.
    page, seen = _Page(), set()
    for node in LexborHTMLParser(Path(path).read_text(encoding="utf-8", errors="replace")).css(_READ):
        if node.mem_id not in seen:
            seen.add(node.mem_id)
            page.add(node.tag, {k: v or "" for k, v in node.attributes.items()})
    return page


def _is_external(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme) or url.startswith("//")


def broken_links(site_dir: Path, *, site_url: str | None = None) -> list[str]:
    """Every internal link or resource in ``site_dir``'s HTML that leads nowhere.

    Parameters
    ----------
    site_dir : Path
        A built site (``site/``).
    site_url : str, optional
        Where the site is served (MkDocs' ``site_url``). Its path is the prefix of the site's
        absolute links: with ``https://host/fair-code/``, ``/fair-code/assets/x.css`` is
        ``assets/x.css`` of the site and ``/other/`` leaves it. Default: served from the root.

    Returns
    -------
    list of str
        One line per problem, ``"<page>: <url>: <why>"``: a missing file, or a ``#fragment``
        that no element of the target page has as its ``id``. External links (with a scheme,
        such as ``https:`` or ``mailto:``) are not followed. Empty when all is well.
    """
    site_dir = Path(site_dir)
    base = "/" + urlsplit(site_url or "").path.strip("/")
    base = base.rstrip("/") + "/"
    pages = {p.relative_to(site_dir).as_posix(): _parse(p) for p in sorted(site_dir.rglob("*.html"))}
    problems = []
    for rel, page in pages.items():
        for url in page.refs:
            if _is_external(url):
                continue
            parts = urlsplit(url)
            if parts.path.startswith("/"):
                if not (parts.path + "/").startswith(base):
                    problems.append(f"{rel}: {url}: leaves the site (served under {base})")
                    continue
                target = parts.path[len(base):]
            else:
                target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), unquote(parts.path)))
                target = "" if target == "." else target
            if target.startswith(".."):
                problems.append(f"{rel}: {url}: leaves the site")
                continue
            if parts.path == "":
                target = rel
            elif target == "" or parts.path.endswith("/") or (site_dir / target).is_dir():
                target = posixpath.join(target, "index.html")
            if not (site_dir / target).is_file():
                problems.append(f"{rel}: {url}: no such file {target}")
                continue
            if parts.fragment and target in pages and unquote(parts.fragment) not in pages[target].ids:
                problems.append(f"{rel}: {url}: {target} has no element with id '{unquote(parts.fragment)}'")
    return problems


def external_loads(site_dir: Path) -> list[str]:
    """Every resource the site's HTML or CSS would fetch from outside the site.

    Scripts, images, stylesheets, icons, frames and media whose address has a scheme or starts
    with ``//``, and ``url(...)`` or ``@import`` of such addresses in CSS. Links a reader may
    follow (``<a href>``, ``<link rel="canonical">``) are not loads and are not listed.
    """
    site_dir = Path(site_dir)
    found = []
    for path in sorted(site_dir.rglob("*.html")):
        rel = path.relative_to(site_dir).as_posix()
        found += [f"{rel}: {url}" for url in _parse(path).loads if _is_external(url) and not url.startswith("data:")]
    for path in sorted(site_dir.rglob("*.css")):
        rel = path.relative_to(site_dir).as_posix()
        found += [f"{rel}: {m.group(1)}" for m in _CSS_URL.finditer(path.read_text(encoding="utf-8", errors="replace"))]
    return found


# MkDocs' (1.6) warnings about a link of a page (`mkdocs.structure.pages`), worded as MkDocs words them.
_NOT_FOUND = re.compile(r"Doc file '(?P<page>.+?)' contains a link '(?P<url>.*)', but the target(?: '(?P<target>.*)')? "
                        r"is not found among documentation files\.(?: Did you mean '(?P<theirs>.*)'\?)?", re.S)
_LEFT_AS_IS = re.compile(r"Doc file '(?P<page>.+?)' contains an? (?P<kind>unrecognized relative|absolute) link "
                         r"'(?P<url>.*)', it was left as is\.(?: Did you mean '(?P<theirs>.*)'\?)?", re.S)
_NO_ANCHOR = re.compile(r"Doc file '(?P<page>.+?)' contains a link '(?P<url>.*)', but (?:the doc '(?P<target>.*)' "
                        r"does not contain an anchor '#(?P<anchor>.*)'|there is no such anchor on this page)\.", re.S)
_EXPLAINER_PAGE = re.compile(r"explainers/(?P<slug>[^/]+)/index\.md")
# How an explainer's prose links the site's other pages (CONTRIBUTING.md, "Writing an explainer").
LINK_FORMS = ("another explainer as '../<slug>/index.md#<anchor>', the glossary as "
              "'../../glossary/index.md#<term>' (also results/, data/)")


def in_sources(warnings: list[str], *, root: Path, docs_dir: Path, site_dir: Path) -> list[str]:
    """MkDocs' warnings, each one about a page's link worded for the writer of that page.

    MkDocs names the page it converted (``explainers/<slug>/index.md`` in the generated
    ``docs/``), not the source the writer edits. A link it could not follow is named here by
    the explainer's source (``explainers/<slug>.md``) and the lines of the source that hold it
    (none when the link is not written in the source, e.g. made by a template), with what exists
    instead: the page whose name is closest to the one linked (as a link from that page), or the
    target page's anchor closest to the one linked (else its headings' anchors).

    Parameters
    ----------
    warnings : list of str
        MkDocs' warning messages, as logged. Those not about a link are returned as they are.
    root : Path
        The repository (where ``explainers/`` is).
    docs_dir, site_dir : Path
        The ``docs/`` MkDocs read and the ``site/`` it wrote (the target pages' anchors are read
        from their HTML, when it was written).

    Returns
    -------
    list of str
        One message per warning, ``"<source>:L: the link '<url>' ...; did you mean
        '<link>'?"`` for a link: the explainers' sources first, by file and line, then the pages
        the build made, then the warnings not about a link, as MkDocs gave them.
    """
    pages: list[str] | None = None
    out: list[tuple[tuple, str]] = []
    for i, message in enumerate(warnings):
        if m := _NOT_FOUND.fullmatch(message):
            pages = pages if pages is not None else _doc_pages(docs_dir)
            what = f"leads to no page ({m['target'] or m['url']} does not exist)"
            out.append(_worded(root, m["page"], m["url"], what, _page_hint(m["page"], m["url"], pages, m["theirs"]), i))
        elif m := _LEFT_AS_IS.fullmatch(message):
            pages = pages if pages is not None else _doc_pages(docs_dir)
            what = ("is absolute, which breaks when the site is served under a path" if m["kind"] == "absolute"
                    else "names no page's Markdown file")
            out.append(_worded(root, m["page"], m["url"], what, _page_hint(m["page"], m["url"], pages, m["theirs"]), i))
        elif m := _NO_ANCHOR.fullmatch(message):
            target = m["target"] or m["page"]
            anchor = m["anchor"] if m["anchor"] is not None else unquote(urlsplit(m["url"]).fragment)
            what = f"leads to {_page_label(root, target)}, which does not contain an anchor '#{anchor}'"
            out.append(_worded(root, m["page"], m["url"], what, _anchor_hint(site_dir, target, anchor), i))
        else:
            out.append(((3, "", 0, i), message))
    # MkDocs warns page by page in its own order, and about anchors only after every page: a
    # writer reads the list beside the source, so it goes by file and line (issue 26).
    return [message for _, message in sorted(out)]


def _worded(root: Path, page: str, url: str, what: str, hint: str, index: int) -> tuple[tuple, str]:
    """``"<where>: the link '<url>' <what>; <hint>"``, ``where`` the source and its lines, with
    the key it is listed by (`_where`) and, for ties, ``index``: its place in MkDocs' order."""
    where, key = _where(root, page, url)
    return (*key, index), f"{where}: the link '{url}' {what}{'; ' + hint if hint else ''}"


def _where(root: Path, page: str, url: str) -> tuple[str, tuple]:
    """The file the writer edits for the page ``page`` of ``docs/``, with the lines holding ``url``,
    and the key a message about it is listed by: the explainers' sources first, by name and line
    (a link a template made after the lines of its source), then the pages the build made."""
    m = _EXPLAINER_PAGE.fullmatch(page)
    source = root / "explainers" / f"{m['slug']}.md" if m else None
    if source is None or not source.is_file():
        return f"docs/{page} (made by the build)", (2, page, 0)
    shown = f"explainers/{source.name}"
    try:
        lines = source.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return shown, (1, shown, 0)
    # The whole address, not a part of a longer one ('../x/' in '../x/index.md').
    written = re.compile(rf"(?<![\w./#%-]){re.escape(url)}(?![\w./#%-])")
    found = [n for n, line in enumerate(lines, start=1) if written.search(line)]
    if not found:
        return f"{shown} (the link is not written in it: a template or a value made it)", (1, shown, len(lines) + 1)
    also = f" (and line{'s' if len(found) > 2 else ''} {', '.join(map(str, found[1:]))})" if len(found) > 1 else ""
    return f"{at(shown, found[0])}{also}", (1, shown, found[0])


def _page_label(root: Path, target: str) -> str:
    m = _EXPLAINER_PAGE.fullmatch(target)
    if m and (root / "explainers" / f"{m['slug']}.md").is_file():
        return f"the page of explainers/{m['slug']}.md"
    return f"the page {target}"


def _doc_pages(docs_dir: Path) -> list[str]:
    """Every page of ``docs/`` (``docs``-relative), not those in dot-folders (fragments)."""
    docs_dir = Path(docs_dir)
    return sorted(p.relative_to(docs_dir).as_posix() for p in docs_dir.rglob("*.md")
                  if not any(part.startswith(".") for part in p.relative_to(docs_dir).parts))


def _page_name(path: str) -> str:
    """What a writer calls a page: ``explainers/x/index.md``, ``../x/``, ``x.md`` -> ``x``."""
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]
    if parts and parts[-1] in ("index.md", "index.html"):
        parts.pop()
    name = parts[-1] if parts else ""
    for suffix in (".md", ".html"):
        name = name.removesuffix(suffix)
    return name


def _page_hint(page: str, url: str, pages: list[str], theirs: str | None) -> str:
    """"did you mean '<link>'?" to the page whose name is (closest to) the one ``url`` names,
    written as a link from ``page``; else MkDocs' own guess; else how links are written."""
    parts = urlsplit(url)
    names = {_page_name(p): p for p in pages if _page_name(p)}
    name = _page_name(unquote(parts.path))
    found = names.get(name) or names.get(closest(name, names) or "")
    if found is not None and found != page:
        link = posixpath.relpath(found, posixpath.dirname(page))
        return f"did you mean '{link}{'#' + parts.fragment if parts.fragment else ''}'?"
    if theirs:
        return f"did you mean '{theirs}'?"
    return f"link {LINK_FORMS}" if _EXPLAINER_PAGE.fullmatch(page) else ""


def _anchor_hint(site_dir: Path, target: str, anchor: str) -> str:
    """"did you mean '#x'?" for the anchor of the built page ``target`` closest to ``anchor``,
    else its headings' anchors (the first dozen); "" when the page's HTML is not there."""
    html = target[: -len("index.md")] + "index.html" if target.endswith("index.md") else (
        target.removesuffix(".md") + "/index.html")
    path = Path(site_dir) / html
    if not path.is_file():
        return ""
    page = _parse(path)
    near = closest(anchor, page.headings) or closest(anchor, page.ids)
    if near is not None:
        return f"did you mean '#{near}'?"
    shown = page.headings[:12]
    more = ", ..." if len(page.headings) > len(shown) else ""
    return f"its headings' anchors: {', '.join('#' + h for h in shown)}{more}" if shown else ""
