"""MkDocs hooks (``hooks:`` in mkdocs.yml): the navigation a reader sees.

Each explainer lives in its own folder (``explainers/<slug>/index.md``, beside its figures and
downloads), which MkDocs would show as a one-page section named after the slug. This puts the
page itself in the "Explainers" section instead, under its title, in the explainers' ``order``.
It also gives the theme the build's commit and date, which the footer of every page shows,
hands Material's search each page's own HTML (see ``on_page_content``), and keeps the theme from
escaping a title twice (``on_page_markdown``).
"""

from __future__ import annotations

import re
from pathlib import Path

from markupsafe import Markup
from mkdocs.structure.nav import Section

from site_src.errors import ConfigError
from site_src.publishing import provenance
from site_src.sources.collect import split_front_matter


def on_config(config):
    """Give the theme the build's facts (``extra.build``: commit and date, shown in every footer).

    ``fairsite build`` puts in the facts it also writes to ``fairsite-manifest.json``; a plain
    ``mkdocs build`` or ``mkdocs serve`` reads them from the tree (``provenance.tree_facts``).
    """
    if "build" not in config.extra:
        config.extra["build"] = provenance.tree_facts(Path(config.config_file_path).parent)
    return config


# mkdocs-glightbox (0.5.x) hands back each page's HTML serialised as a whole document. Browsers drop
# the wrapper inside the article, but Material's search parser opens an empty section at <html>:
# every page's page-level search entry came out blank, and a hit on a page showed no preview.
_DOCUMENT_WRAPPER = re.compile(r"\A\s*<html><head></head><body>(.*)</body></html>\s*\Z", re.S)


def on_page_content(html, page, config, files):
    """MkDocs' ``on_page_content`` event: a page's HTML without the document wrapper glightbox adds.

    Returns ``html`` unchanged when it has no wrapper. Hooks run after the configured plugins, so
    this sees glightbox's output; search indexes the result afterwards (``on_page_context``).
    """
    m = _DOCUMENT_WRAPPER.match(html)
    return m.group(1) if m else html


def on_page_markdown(markdown, page, config, files):
    """MkDocs' ``on_page_markdown`` event: mark the page's front-matter ``title`` as HTML.

    The build writes every title into the front matter as HTML text (an explainer's title is
    escaped there: ``A &amp; B``), which the theme prints as it is in the page, the navigation and
    ``<title>``. Material's previous/next links escape it again for their ``aria-label``
    (``| e``), which read ``A &amp;amp; B`` to a screen reader; marked as HTML (``Markup``),
    Jinja's escape leaves it as it is. Returns ``markdown`` unchanged.
    """
    title = page.meta.get("title") if isinstance(getattr(page, "meta", None), dict) else None
    if isinstance(title, str):
        page.meta["title"] = Markup(title)
    return markdown


def on_nav(nav, config, files):
    """The navigation a reader sees: each explainer under its title in the "Explainers" section,
    the one-page folders as pages, everything in the ``order`` its front matter gives.

    MkDocs makes a folder a section named after the folder: ``explainers/<slug>/index.md`` would
    be a one-page section called "<Slug>", and ``glossary/index.md`` a section "Glossary". This
    lifts each such page into its parent, sorts by the pages' ``order`` (then title), and links
    previous and next pages in the new order.

    Why a hook rather than a ``nav:`` the build writes into the config: the order lives in one
    place, each page's front matter (the explainer's ``order:``, the reader pages' templates),
    and the hook reads it where MkDocs reads the pages, so a plain ``mkdocs serve`` or
    ``mkdocs build`` on ``docs/`` shows the same navigation as ``fairsite build``; a written
    ``nav:`` would be a second list of every page to keep in step with the templates.

    Parameters
    ----------
    nav : mkdocs.structure.nav.Navigation
        MkDocs' navigation, from the folder layout of ``docs/``.
    config, files
        MkDocs' config and files (unused; the hook's signature).

    Returns
    -------
    mkdocs.structure.nav.Navigation
        ``nav``, changed in place: its items, pages and previous/next links.
    """
    for section in [item for item in nav.items if isinstance(item, Section)]:
        flat = []
        for child in section.children:
            if isinstance(child, Section) and len(child.children) == 1 and not isinstance(child.children[0], Section):
                page = child.children[0]
                page.parent = section
                flat.append(page)
            else:
                flat.append(child)
        flat.sort(key=lambda item: (_order(item), str(getattr(item, "title", ""))))
        section.children = flat
    # Top level: a one-page folder (glossary/, checklist/, results/, ...) is that page, not a
    # section; the reader's pages and the results sit around the explainers by their `order`.
    top = []
    for item in nav.items:
        if isinstance(item, Section) and len(item.children) == 1 and not isinstance(item.children[0], Section):
            item.children[0].parent = None
            top.append(item.children[0])
        else:
            top.append(item)
    top.sort(key=lambda item: 0 if getattr(item, "is_homepage", False) else _order(item))
    nav.items = top
    nav.pages = [p for p in _walk(nav.items)]
    for prev, page, nxt in zip([None] + nav.pages[:-1], nav.pages, nav.pages[1:] + [None]):
        page.previous_page, page.next_page = prev, nxt
    return nav


def _order(item) -> int:
    """A page's ``order`` from its front matter; 100 (after the ordered ones) without one."""
    file = getattr(item, "file", None)
    if file is None or not file.abs_src_path:
        return 100
    with open(file.abs_src_path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    try:
        meta, _ = split_front_matter(lines, shown=file.src_uri)
    except ConfigError:
        return 100  # no front matter (or a broken one, which MkDocs reports itself)
    return int(meta.get("order", 100)) if isinstance(meta, dict) else 100


def _walk(items):
    for item in items:
        if isinstance(item, Section):
            yield from _walk(item.children)
        elif getattr(item, "is_page", False):
            yield item
