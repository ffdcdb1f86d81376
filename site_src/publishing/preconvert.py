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
``tests/test_preconvert.py`` builds a site both ways and compares every file.
"""

from __future__ import annotations

import contextlib
import json
import logging
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


def config_key(cfg) -> str:
    """What a page's conversion reads of MkDocs' config (``Page.render`` and its link processor)."""
    links = cfg.validation.links
    return json.dumps([cfg["markdown_extensions"], cfg["mdx_configs"], cfg.use_directory_urls,
                       [links.not_found, links.absolute_links, links.unrecognized_links, links.anchors]],
                      sort_keys=True, default=repr)


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

    load: object  # () -> MkDocs' config for this build (``mkdocs_site._config``)
    done: dict[str, _Converted] = field(default_factory=dict)
    _cfg: object = None

    def page(self, src_uri: str) -> None:
        """Convert ``src_uri`` (a page under ``docs_dir``, written whole) and keep the result."""
        if self._cfg is None:
            self._cfg = self.load()
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
            page.render(cfg, files)
        finally:
            log.removeHandler(logged)
        if logged.count:
            return  # MkDocs converts it again, and says it
        links = None if page.links_to_anchors is None else {
            target.src_uri: dict(anchors) for target, anchors in page.links_to_anchors.items()}
        self.done[src_uri] = _Converted(
            markdown=page.markdown, config_key=config_key(cfg), url=file.url, lookups=dict(files.seen),
            content=page.content, toc=page.toc, title=page._title_from_render, anchors=set(page.present_anchor_ids),
            links_to_anchors=links)


@contextlib.contextmanager
def reused(converted: dict[str, _Converted]):
    """During the block, MkDocs' ``Page.render`` takes a page's conversion from ``converted`` when
    converting it again would give the same (see the module's notes), and converts it otherwise.
    Yields the set of pages (``src_uri``) it took, filled as MkDocs goes."""
    real = Page.render
    taken: set[str] = set()

    def render(page: Page, config, files: Files) -> None:
        done = converted.get(page.file.src_uri)
        if done is None or not _same(done, page, config, files):
            return real(page, config, files)
        taken.add(page.file.src_uri)
        page.content, page.toc, page._title_from_render = done.content, done.toc, done.title
        page.present_anchor_ids = set(done.anchors)
        if done.links_to_anchors is not None and logging.getLogger("mkdocs").getEffectiveLevel() > logging.DEBUG:
            page.links_to_anchors = {files.get_file_from_path(src): dict(a) for src, a in done.links_to_anchors.items()}

    Page.render = render
    try:
        yield taken
    finally:
        Page.render = real


def _same(done: _Converted, page: Page, config, files: Files) -> bool:
    return (page.markdown == done.markdown and page.file.url == done.url and config_key(config) == done.config_key
            and all(_described(files.get_file_from_path(path)) == found for path, found in done.lookups.items()))
