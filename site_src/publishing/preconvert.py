"""Stage 6 begun during the runs: MkDocs' conversion of each explainer page as its run ends (issue 26).

When every explainer runs (``check``, ``build --force``), the pages are written one by one as the
runs end (``build._PageStream``), and a core is idle while an explainer's code runs. The Markdown
conversion of an explainer page (its highlighted code, its printed output: most of MkDocs' time)
depends on little besides the page's own Markdown, so `Preconverter.page` does it then, with the
config MkDocs will use, and `reused` hands the result to MkDocs' build in place of converting the
page again, only where converting it again would give the same result:

- the page's Markdown, as MkDocs has it when it converts it (after the plugins' ``on_page_markdown``),
  is the same text;
- what the conversion depends on in the config (the Markdown extensions and their options, the
  URL style, the link validation levels) is the same;
- every link target the conversion looked up (``Files.get_file_from_path``) is, among the site's
  final files, the same file at the same URL, or still missing where it was missing (a page the
  build writes later is looked up as the page it will be: `_Lookups`);
- the conversion logged nothing (a warning is left for MkDocs to give, converting the page itself).

What the conversion sets on the page (``content``, ``toc``, the title it found, its anchors and the
links to other pages' anchors, which MkDocs checks once every page is converted) is restored from
the record; the plugins' later events run on it as on a page MkDocs converted.

The search index is the other half of MkDocs' time on these pages: Material's search plugin reads
each page's final HTML (after the plugins' and hooks' ``on_page_content``) with its HTML parser.
`Preconverter.page` runs those events on its conversion too and keeps what the parser reads of the
result; during the build, a page whose final HTML is that same text is not read again
(`_ReadBefore`). What the parser reads depends on the text alone.

Between builds (issue 48): a page added, renamed or moved changes every page's navigation, which
the theme's template puts around each page's HTML, so MkDocs builds every page; each page's
conversion and what search read of it are kept (`Kept`, in ``.cache``) and used by the same rules,
so only the pages whose own text changed are converted again.
``tests/test_preconvert.py`` builds a site both ways and compares every file.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.metadata
import json
import logging
import os
import pickle
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from mkdocs.structure.files import File, Files, InclusionLevel, get_files
from mkdocs.structure.pages import Page


@dataclass
class _Converted:
    """One page's conversion and what it depended on."""

    markdown: str
    config_key: str
    url: str
    lookups: dict[str, tuple | None]  # target path -> (src_uri, url, excluded) of the file found, or None
    content: str
    toc: object
    title: str | None
    anchors: set[str]
    links_to_anchors: dict[str, dict[str, str]] | None  # target src_uri -> {anchor: link}


def _config_key(cfg) -> str:
    """What a page's conversion reads of MkDocs' config (``Page.render`` and its link processor),
    the same in every process (a function the config names, as the emoji extension's, by its name:
    its ``repr`` holds an address)."""
    links = cfg.validation.links
    return json.dumps([cfg["markdown_extensions"], cfg["mdx_configs"], cfg.use_directory_urls,
                       [links.not_found, links.absolute_links, links.unrecognized_links, links.anchors]],
                      sort_keys=True, default=_named)


def _named(value) -> str:
    name = getattr(value, "__qualname__", None)
    return f"{getattr(value, '__module__', '')}.{name}" if name else repr(value)


class _Lookups(Files):
    """The site's files as the conversion sees them, noting each path it looks up.

    A page not written yet (the home page, the glossary, an explainer whose run goes on) is taken
    to be there, as an included page at the address MkDocs would give it: the conversion is used
    only if the final site has that page at that address (`_same`)."""

    def __init__(self, files: Files, cfg):
        super().__init__(list(files))
        self._cfg = cfg
        self.seen: dict[str, tuple | None] = {}

    def get_file_from_path(self, path: str) -> File | None:
        found = super().get_file_from_path(path)
        if found is None and path.endswith(".md"):
            found = File(path, self._cfg.docs_dir, self._cfg.site_dir, self._cfg.use_directory_urls,
                         inclusion=InclusionLevel.INCLUDED)
        self.seen[path] = _described(found)
        return found


def _described(file: File | None) -> tuple | None:
    return None if file is None else (file.src_uri, file.url, file.inclusion.is_excluded())


class _Logged(logging.Handler):
    """Counts what MkDocs logs from one thread (the conversion's), whatever the level."""

    def __init__(self):
        super().__init__(level=logging.DEBUG + 1)
        self.thread, self.count = threading.get_ident(), 0

    def emit(self, record):
        if record.thread == self.thread:
            self.count += 1


@dataclass
class Preconverter:
    """Converts explainer pages of the staged ``docs_dir`` as they are written (`page`), with the
    config ``load`` gives (the one MkDocs will build with); `reused` then lends them to the build."""

    load: object  # () -> MkDocs' config for this build (``mkdocs_site.site_config``)
    done: dict[str, _Converted] = field(default_factory=dict)
    searched: dict[str, list] = field(default_factory=dict)  # digest of a page's final HTML -> what search read of it
    _cfg: object = None

    def page(self, src_uri: str) -> None:
        """Convert ``src_uri`` (a page under ``docs_dir``, written whole) and keep the result."""
        if self._cfg is None:
            cfg = self.load()
            self._cfg = cfg.plugins.on_config(cfg)  # as MkDocs' build starts: the plugins set up
        cfg = self._cfg
        files = _Lookups(get_files(cfg), cfg)
        file = files.get_file_from_path(src_uri)
        files.seen.clear()
        if file is None or not file.is_documentation_page():
            return
        page = Page(None, file, cfg)
        logged = _Logged()
        log = logging.getLogger("mkdocs")
        log.addHandler(logged)
        try:
            page.read_source(cfg)
            page.markdown = cfg.plugins.on_page_markdown(page.markdown, page=page, config=cfg, files=files)
            page.render(cfg, files)
            final = cfg.plugins.on_page_content(page.content, page=page, config=cfg, files=files)
        finally:
            log.removeHandler(logged)
        if logged.count:
            return  # MkDocs converts it again, and says it
        sections = _search_sections(final)
        if sections is not None:
            self.searched[_digest(final)] = sections
        self.done[src_uri] = _record(page, cfg, dict(files.seen))


def _record(page: Page, cfg, lookups: dict[str, tuple | None]) -> _Converted:
    """What ``page``'s conversion set on it, with what it depended on (``lookups``: the files it
    looked up), copied: MkDocs' later steps may change the page's table of contents."""
    links = None if page.links_to_anchors is None else {
        target.src_uri: dict(anchors) for target, anchors in page.links_to_anchors.items()}
    return _Converted(markdown=page.markdown, config_key=_config_key(cfg), url=page.file.url, lookups=lookups,
                      content=page.content, toc=copy.deepcopy(page.toc), title=page._title_from_render,
                      anchors=set(page.present_anchor_ids), links_to_anchors=links)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@contextlib.contextmanager
def reused(converted: dict[str, _Converted], searched: dict[str, list] | None = None, kept: Kept | None = None):
    """During the block, MkDocs' ``Page.render`` takes a page's conversion from ``converted`` (or,
    failing that, from ``kept``, the earlier builds') when converting it again would give the same
    (see the module's notes), and converts it otherwise; Material's search reads a page's final
    HTML from ``searched`` (by its digest; or ``kept``) when it read that same text before. What
    MkDocs converts and search reads is noted in ``kept`` for the next build. Yields the set of
    pages (``src_uri``) whose conversion it took, filled as MkDocs goes."""
    real = Page.render
    taken: set[str] = set()

    def render(page: Page, config, files: Files) -> None:
        src = page.file.src_uri
        for done in (converted.get(src), kept.done.get(src) if kept is not None else None):
            if done is not None and _same(done, page, config, files):
                taken.add(src)
                _restore(page, done, files)
                if kept is not None:
                    kept.done[src] = done
                return
        if kept is None:
            return real(page, config, files)
        kept.convert(page, config, files, real)

    Page.render = render
    try:
        with _searching(searched or {}, kept):
            yield taken
    finally:
        Page.render = real


@contextlib.contextmanager
def _searching(searched: dict[str, list], kept: Kept | None):
    """During the block, Material's search reads a page's HTML as `_ReadBefore` (when there is
    anything to read it from or to note it in), told which page it reads."""
    search = _search_module()
    if search is None or not (searched or kept is not None):
        yield
        return
    real_parser, real_add = search.Parser, search.SearchIndex.add_entry_from_context
    parser = type("_ReadBefore", (_ReadBefore, real_parser), {"_read": searched, "_kept": kept})

    def add_entry_from_context(index, page):
        parser._page = page.file.src_uri
        try:
            return real_add(index, page)
        finally:
            parser._page = None

    search.Parser, search.SearchIndex.add_entry_from_context = parser, add_entry_from_context
    try:
        yield
    finally:
        search.Parser, search.SearchIndex.add_entry_from_context = real_parser, real_add


def _restore(page: Page, done: _Converted, files: Files) -> None:
    """Set on ``page`` what its conversion ``done`` set (a copy of its table of contents)."""
    page.content, page.toc, page._title_from_render = done.content, copy.deepcopy(done.toc), done.title
    page.present_anchor_ids = set(done.anchors)
    if done.links_to_anchors is not None and logging.getLogger("mkdocs").getEffectiveLevel() > logging.DEBUG:
        page.links_to_anchors = {files.get_file_from_path(src): dict(a) for src, a in done.links_to_anchors.items()}


class Kept:
    """The pages' conversions and what search read of them, kept between builds (issue 48).

    A page added, renamed or moved changes every page's navigation, so MkDocs builds every page;
    but a page's conversion (its Markdown as HTML) and what search reads of its HTML depend on
    its own text, not on the navigation, which the theme's template puts around it. Kept in
    ``.cache/fairsite-converted.pickle`` (MkDocs' and Material's own objects: a table of contents,
    search sections), under the versions of the packages that convert and index (`_kept_key`);
    each is used only where converting the page again would give the same (`_same`, as for the
    pages converted during the runs), so the site is the one a build converting every page writes.
    """

    FILE = Path(".cache") / "fairsite-converted.pickle"

    def __init__(self, root: Path):
        self._path = Path(root) / self.FILE
        self.done: dict[str, _Converted] = {}
        self.searched: dict[str, tuple[str, list]] = {}  # src_uri -> (digest of its final HTML, sections)
        try:
            with open(self._path, "rb") as fh:
                kept = pickle.load(fh)
            if kept.get("key") == _kept_key():
                self.done, self.searched = kept["done"], kept["searched"]
        except Exception:  # noqa: BLE001 - missing, partly written or of another version: start afresh
            pass

    def convert(self, page: Page, config, files: Files, render) -> None:
        """``render(page, config, files)`` (MkDocs' own conversion), noting the files it looks up;
        kept unless it logged something (a warning MkDocs must give again next time)."""
        seen: dict[str, tuple | None] = {}
        look_up = files.get_file_from_path

        def noted(path: str) -> File | None:
            found = look_up(path)
            seen[path] = _described(found)
            return found

        files.get_file_from_path = noted
        logged = _Logged()
        log = logging.getLogger("mkdocs")
        log.addHandler(logged)
        try:
            render(page, config, files)
        finally:
            del files.get_file_from_path
            log.removeHandler(logged)
        if logged.count:
            self.done.pop(page.file.src_uri, None)
        else:
            self.done[page.file.src_uri] = _record(page, config, seen)

    def save(self, pages: set[str]) -> None:
        """Write what is kept of ``pages`` (the site's pages, ``src_uri``), whole or not at all."""
        kept = {"key": _kept_key(), "done": {s: d for s, d in self.done.items() if s in pages},
                "searched": {s: r for s, r in self.searched.items() if s in pages}}
        self._path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self._path.with_suffix(".tmp")
        with open(tmp, "wb") as fh:
            pickle.dump(kept, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self._path)


def _kept_key() -> str:
    """What the kept conversions depend on besides each page's own (`_same`): the Python and the
    packages that convert and index a page."""
    versions = []
    for name in ("mkdocs", "mkdocs-material", "pymdown-extensions", "Markdown", "Pygments"):
        try:
            versions.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} missing")
    return " ".join([_KEPT_FORMAT, sys.version, *versions])


_KEPT_FORMAT = "1"  # raised when what `Kept` holds changes


def _search_module():
    """Material's search plugin module, if installed (its ``Parser`` reads each page for the index)."""
    try:
        from material.plugins.search import plugin
    except ImportError:
        return None
    return plugin if isinstance(getattr(plugin, "Parser", None), type) and hasattr(plugin, "SearchIndex") else None


def _search_sections(html: str) -> list | None:
    """What Material's search parser reads of ``html`` (its sections), or None without it."""
    search = _search_module()
    if search is None:
        return None
    parser = search.Parser()
    parser.feed(html)
    parser.close()
    return parser.data


class _ReadBefore:
    """Material's search ``Parser`` (mixed in before it), for a text it read before (by digest:
    ``_read``, or the page's entry in ``_kept``): the sections are a copy of those (the index fills
    in an untitled section's title on them), not read again. A text read is noted in ``_kept``."""

    _read: dict[str, list] = {}
    _kept: Kept | None = None
    _page: str | None = None  # the page whose HTML is being read (set by `reused`)

    def feed(self, data):
        self._digest = _digest(data)
        known = self._read.get(self._digest)
        entry = self._kept.searched.get(self._page) if self._kept is not None else None
        if known is None and entry is not None and entry[0] == self._digest:
            known = entry[1]
        if known is None:
            return super().feed(data)
        self.data = copy.deepcopy(known)
        self._known = True
        if self._kept is not None and self._page is not None:
            self._kept.searched[self._page] = (self._digest, known)

    def close(self):
        if getattr(self, "_known", False):
            return
        super().close()
        if self._kept is not None and self._page is not None:
            self._kept.searched[self._page] = (self._digest, copy.deepcopy(self.data))


def _same(done: _Converted, page: Page, config, files: Files) -> bool:
    return (page.markdown == done.markdown and page.file.url == done.url and _config_key(config) == done.config_key
            and all(_described(files.get_file_from_path(path)) == found for path, found in done.lookups.items()))


def warm_mkdocs() -> None:
    """Import what MkDocs will use (its build, the theme's plugins, the Markdown extensions) and
    compile the lexers the code blocks need, while the runs go on: the same work MkDocs would do
    first, done beforehand. Anything that fails here is left for MkDocs to meet and report."""
    import importlib

    for name in ("mkdocs.commands.build", "mkdocs.structure.pages", "material.plugins.search.plugin",
                 "material.plugins.tags.plugin", "mkdocs_glightbox.plugin", "material.extensions.emoji",
                 "markdown.extensions.toc", "markdown.extensions.tables", "markdown.extensions.attr_list",
                 "markdown.extensions.def_list", "markdown.extensions.md_in_html", "markdown.extensions.admonition",
                 "pymdownx.superfences", "pymdownx.highlight", "pymdownx.details", "pymdownx.emoji"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - MkDocs meets the same problem and reports it
            pass
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import get_lexer_by_name

        for lang in ("python", "bash", "text"):
            highlight("x = 1  # a\nprint(f'{x}')\n", get_lexer_by_name(lang), HtmlFormatter())
    except Exception:  # noqa: BLE001
        pass
