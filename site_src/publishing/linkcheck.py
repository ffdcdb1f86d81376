"""Check a built site offline: every internal link and anchor resolves, nothing loads from outside.

MkDocs' own validation sees the Markdown links; this sees the HTML readers get, including the
theme's links, raw HTML in the pages and the ``#anchors`` they point at.
"""

from __future__ import annotations

import functools

import posixpath
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["broken_links", "external_loads"]

# Attributes that make the browser fetch something as the page loads (not links a reader follows).
_LOAD_ATTRS = {"script": ("src",), "img": ("src", "srcset"), "source": ("src", "srcset"), "iframe": ("src",),
               "audio": ("src",), "video": ("src", "poster"), "embed": ("src",), "object": ("data",),
               "link": ("href",)}
# <link rel=...> values that load a resource; canonical, alternate and similar are only hints.
_LOAD_RELS = {"stylesheet", "icon", "preload", "modulepreload", "prefetch", "manifest", "apple-touch-icon",
              "preconnect", "dns-prefetch"}
_CSS_URL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])((?:https?:)?//[^'")\s]+)""")


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.refs: list[str] = []  # hrefs and srcs, as written
        self.loads: list[str] = []  # what the browser fetches on load

    def handle_starttag(self, tag, attrs):
        a = {k: (v or "") for k, v in attrs}
        for key in ("id", "name") if tag == "a" else ("id",):
            if a.get(key):
                self.ids.add(a[key])
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


def _parse(path: Path) -> _Page:
    st = path.stat()
    return _parse_file(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=4096)
def _parse_file(path: str, mtime_ns: int, size: int) -> _Page:
    # Keyed on modification time and size too: `broken_links` and `external_loads` read the
    # same pages once between them, and a long-running `serve` never sees a stale parse.
    page = _Page()
    page.feed(Path(path).read_text(encoding="utf-8", errors="replace"))
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
