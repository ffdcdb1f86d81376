"""MkDocs hooks (``hooks:`` in mkdocs.yml): the navigation a reader sees.

Each explainer lives in its own folder (``explainers/<slug>/index.md``, beside its figures and
downloads), which MkDocs would show as a one-page section named after the slug. This puts the
page itself in the "Explainers" section instead, under its title, in the explainers' ``order``.
It also gives the theme the build's commit and date, which the footer of every page shows,
hands Material's search each page's own HTML (see ``on_page_content``), and keeps the theme from
escaping a title twice (``on_page_markdown``). After Markdown is
converted it puts in what Markdown must not parse (the results page's tables, `insert_fragments`),
the glossary's definition on every link to a glossary term (`define_terms`), the reading time of
each explainer and of its card on the home page (`add_reading_time`, issue 28), and keeps the
headings' permalinks out of the keyboard's way; the 404 page is made to work at any address
(`on_post_build`).
"""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import jinja2
from markupsafe import Markup
from mkdocs.exceptions import PluginError
from mkdocs.structure.nav import Section

from site_src.checking.words import WORDS_PER_MINUTE, WordCount, count_words, reading_time
from site_src.errors import ConfigError
from site_src import provenance
from site_src.rendering.glossary import TERMS, definition_text
from site_src.sources.collect import split_front_matter


def on_config(config):
    """Give the theme the build's facts (``extra.build``: commit and date, shown in every footer).

    ``fairsite build`` puts in the facts it also writes to ``fairsite-manifest.json``; a plain
    ``mkdocs build`` or ``mkdocs serve`` reads them from the tree (``provenance.tree_facts``).
    """
    if "build" not in config.extra:
        config.extra["build"] = provenance.tree_facts(Path(config.config_file_path).parent)
    _WORDS.clear()  # `fairsite serve` builds again in the same process
    return config


# mkdocs-glightbox (0.5.x) hands back each page's HTML serialised as a whole document. Browsers drop
# the wrapper inside the article, but Material's search parser opens an empty section at <html>:
# every page's page-level search entry came out blank, and a hit on a page showed no preview.
_DOCUMENT_WRAPPER = re.compile(r"\A\s*<html><head></head><body>(.*)</body></html>\s*\Z", re.S)


def on_page_content(html, page, config, files):
    """MkDocs' ``on_page_content`` event: a page's HTML as readers get it.

    Without the document wrapper glightbox adds; with its fragments inserted, its glossary terms
    defined, its reading time (an explainer) and its permalinks out of the tab order. Hooks run
    after the configured plugins, so this sees glightbox's output; search indexes the result
    afterwards (``on_page_context``), and skips the fragments (``data-search-exclude``).
    """
    m = _DOCUMENT_WRAPPER.match(html)
    html = m.group(1) if m else html
    file = getattr(page, "file", None)
    src = file.src_uri if file is not None else ""
    html = insert_fragments(html, Path(file.abs_src_path).parent if file is not None and file.abs_src_path else None)
    html = define_terms(html, glossary_page=src == "glossary/index.md")
    if src.startswith("explainers/"):
        html = add_reading_time(html, page)
    # Permalinks (the ¶ after each heading) are for the mouse: left in the tab order, a keyboard
    # reader meets one before each section's content (issue 28). The table of contents, after
    # the content in the tab order (overrides/main.html), reaches every heading.
    return html.replace('class="headerlink" href=', 'class="headerlink" tabindex="-1" href=')


# ------------------------------------------------------------------------------------- fragments

# Where a page asks for a fragment: `<!-- fairsite:fragment NAME -->` on a line of its own.
_FRAGMENT = re.compile(r"<!-- fairsite:fragment ([\w-]+) -->")
FRAGMENTS_DIR = ".fragments"  # beside the page; MkDocs leaves dot-folders out of the site


def insert_fragments(html: str, page_dir: Path | None) -> str:
    """``html`` with each ``<!-- fairsite:fragment NAME -->`` replaced by the HTML of
    ``page_dir/.fragments/NAME.html``: HTML that Markdown must not parse (the results page's
    tables: 1.7 MB that Markdown and search took half of every rebuild to read, issue 28).

    Raises ``PluginError`` naming the missing file when a page asks for a fragment that is not there.
    """
    def fragment(m):
        path = (page_dir or Path(".")) / FRAGMENTS_DIR / f"{m.group(1)}.html"
        try:
            return path.read_text(encoding="utf-8")
        except OSError:
            raise PluginError(f"the page asks for fragment {m.group(1)!r}, but {path} does not exist") from None
    # Markdown leaves a comment on a line of its own as it is, or wraps it in a paragraph.
    return _FRAGMENT.sub(fragment, re.sub(r"<p>(<!-- fairsite:fragment [\w-]+ -->)</p>", r"\1", html))


# ---------------------------------------------------------------------------------- glossary terms

_TERMS = {t.anchor: t for t in TERMS}
# A link to a glossary term, as MkDocs writes it from `glossary/index.md#anchor`.
_TERM_LINK = re.compile(r'<a href="((?:\.\./)*glossary/#([\w-]+))"')


def define_terms(html: str, *, glossary_page: bool = False) -> str:
    """Give every link to a glossary term the term's definition, so it travels with the term.

    Each link gets ``data-fc-term``, a ``title`` (hover, without JavaScript) and
    ``aria-describedby`` pointing at the definition, written once per page in a hidden section
    at its end (screen readers read it as the link's description; search skips it).
    ``assets/terms.js`` shows it as a tooltip on hover, on keyboard focus and on a first tap.
    The definitions come from the glossary's single source, ``rendering.glossary.TERMS``; links
    to anything else on the glossary page (the audits' conventions) are left as they are, and so
    is the glossary page itself.
    """
    if glossary_page:
        return html
    used: dict[str, str] = {}

    def link(m):
        term = _TERMS.get(m.group(2))
        if term is None:
            return m.group(0)
        used[term.anchor] = definition_text(term)
        text = html_lib.escape(f"{term.name}: {used[term.anchor]}")
        return (f'<a href="{m.group(1)}" data-fc-term="{term.anchor}" aria-describedby="fc-def-{term.anchor}" '
                f'title="{text}"')

    html = _TERM_LINK.sub(link, html)
    if not used:
        return html
    # A <section>: Material's search ends an exclusion at the first closing tag of its name.
    defs = "".join(f'<span id="fc-def-{a}">{html_lib.escape(text)}</span>' for a, text in used.items())
    return html + f'\n<section class="fc-defs" hidden data-search-exclude>{defs}</section>'


# ------------------------------------------------------------------------------------ reading time

# Each explainer's words (folds closed, and open), by the page's URL: its reading time, its card's
# on the home page, and the word budget `fairsite` warns about (site_src.checking.words, the folds
# closed). Emptied at each build's start.
_WORDS: dict[str, WordCount] = {}


def add_reading_time(html: str, page) -> str:
    """An explainer's HTML with its reading time under the subtitle: its words
    (``checking.words.count_words``: code and references left out) at ``WORDS_PER_MINUTE``, with
    the folds closed and, where that is longer, open ("5 min read, 12 with the details").
    Remembered for the home page's card (``on_post_page``)."""
    _WORDS[page.url] = count_words(html)
    line = (f'<p class="fc-reading-time">{_reading_time_text(_WORDS[page.url])}</p>')
    subtitle = re.search(r'<p class="fc-subtitle">.*?</p>', html, flags=re.S)
    if subtitle:
        return html[:subtitle.end()] + "\n" + line + html[subtitle.end():]
    h1 = html.find("</h1>")
    return html[:h1 + 5] + "\n" + line + html[h1 + 5:] if h1 >= 0 else line + html


def _reading_time_text(words: WordCount) -> str:
    # The rate is in the line's title (hover), not in its words: the line is not prose to count.
    return (f'<span class="fc-reading-time__minutes" title="at {WORDS_PER_MINUTE} words a minute: the page with its '
            f'folds closed, then with them open">{reading_time(words)}</span>')


# A card's title link on the home page (the thumbnail's link has tabindex="-1" and is skipped).
_CARD_LINK = re.compile(r'(<a href="(explainers/[\w-]+/)">.*?</a>(?:</strong>)?)', re.S)


def on_post_page(output, page, config):
    """MkDocs' ``on_post_page`` event: the home page's cards get their explainers' reading times.

    Every page's content is converted (``on_page_content``) before any page is written, so the
    times are known here. Each explainer's card gets its time after its title link, once.
    """
    if not getattr(page, "is_homepage", False) or not _WORDS:
        return output
    start = output.find("fc-cards")
    if start < 0:
        return output
    done: set[str] = set()

    def card(m):
        url = m.group(2)
        if url in done or url not in _WORDS:
            return m.group(1)
        done.add(url)
        return m.group(1) + f' <span class="fc-card-time">· {_reading_time_text(_WORDS[url])}</span>'

    return output[:start] + _CARD_LINK.sub(card, output[start:])


# ----------------------------------------------------------------------------------- the 404 page

# Finds the site's root from wherever the 404 page is served: the address it was built for, or
# else the nearest folder above the missing address that holds the site's manifest
# (fairsite-manifest.json, written at the root). Synchronous on purpose: the <base> it writes
# must exist before the stylesheets are read. The page also carries a <base> for the address it
# was built for, after this script: the browser's preloader reads that one, so at the usual
# address nothing is fetched twice; elsewhere the script's <base> comes first and wins.
_FIND_ROOT = """<script>(function () {
  var built = %s, path = location.pathname, root = null;
  if (path.indexOf(built) === 0) { window.fcSiteRoot = built; return; }
  var parts = path.replace(/[^/]*$/, "").split("/");
  for (var i = parts.length - 1; root === null && i > 0; i--) {
    var candidate = parts.slice(0, i).join("/") + "/";
    try {
      var xhr = new XMLHttpRequest();
      xhr.open("HEAD", candidate + "fairsite-manifest.json", false);
      xhr.send();
      if (xhr.status === 200) root = candidate;
    } catch (e) { /* not served here */ }
  }
  root = root || "/";
  document.write('<base href="' + root.replace(/["<>]/g, "") + '">');
  window.fcSiteRoot = root;
})();</script>"""
# Once the theme's configuration is parsed, its base is the root found above (Material's search
# and instant navigation read it before anything else runs).
_FIX_CONFIG = """<script>(function () {
  var el = document.getElementById("__config"), root = window.fcSiteRoot;
  if (!root) return;
  el.textContent = el.textContent.split('"' + %s).join('"' + root);  // base, the search worker
})();</script>"""


def on_post_build(config):
    """MkDocs' ``on_post_build`` event: make ``404.html`` work at any address.

    MkDocs writes the 404 page with every link and asset under ``site_url``'s path (it may be
    served for a missing page at any depth), so served anywhere else it came out unstyled and
    its links led nowhere (issue 28). Here every such URL is made relative to a ``<base>`` that a
    script at the top of the page sets to the site's root, found from the address it is served at.
    """
    path = Path(config.site_dir) / "404.html"
    if not path.exists():
        return
    prefix = urlsplit(config.site_url or "/").path or "/"
    prefix = prefix if prefix.endswith("/") else prefix + "/"
    text = path.read_text(encoding="utf-8")
    # href="/fair-code/x" -> href="./x" (not "//host": a protocol-relative URL is not the site's)
    text = re.sub(r'((?:href|src|srcset)=")' + re.escape(prefix) + r"(?!/)", r"\1./", text)
    head = re.search(r"<head>\s*", text)
    text = (text[:head.end()] + _FIND_ROOT % json.dumps(prefix) + f'\n<base href="{html_lib.escape(prefix)}">\n'
            + text[head.end():])
    config_end = re.search(r'<script id="__config"[^>]*>.*?</script>', text, flags=re.S)
    if config_end:
        text = text[:config_end.end()] + _FIX_CONFIG % json.dumps(prefix) + text[config_end.end():]
    path.write_text(text, encoding="utf-8")


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
    _restore_unconverted(config, files)
    return nav


def _order(item) -> int:
    """A page's ``order`` from its front matter; 100 (after the ordered ones) without one. A
    section's is 100 too (the explainers' section after the glossary, the checklist...), or its
    first page's when that is later: the reports' section (``reports/``, its pages ordered after
    100) comes after the explainers' section and before the results."""
    if isinstance(item, Section):
        return max(100, min((_order(child) for child in item.children), default=100))
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


# ----------------------------------------------------------------------------- incremental builds

# What `site_src.publishing.incremental` hands an incremental build: each page's record from the
# last build (``{src_uri: {"anchors": [...], "words": n, "words_unfolded": n}}``), as an attribute of MkDocs' config.
PREVIOUS_PAGES = "fairsite_previous_pages"
# What every build hands back on the same config: the record of each page, for the next build.
PAGES = "fairsite_pages"


def _restore_unconverted(config, files) -> None:
    """In an incremental build, give the pages MkDocs' dirty build does not convert again what
    the converted ones read of them: their front matter (their titles in every page's navigation
    and previous/next links, their tags in the tags index), their anchors (links into them are still checked against the
    anchors they have) and their words (their cards' reading times on the home page).

    A full build (no ``PREVIOUS_PAGES`` on the config, as in a plain ``mkdocs build``) is left as it is.
    """
    previous = getattr(config, PREVIOUS_PAGES, None)
    if previous is None:
        return
    for file in files.documentation_pages():
        page = file.page
        if page is None or file.is_modified():
            continue
        page.read_source(config)
        # Every plugin's, as a full build runs it: the tags plugin maps each page's tags here, and
        # the tags index and every tag link read that map.
        page.markdown = config.plugins.on_page_markdown(page.markdown, page=page, config=config, files=files)
        page.content = ""  # never written (MkDocs skips it); the tags plugin fills a listing's page in on_env
        record = previous.get(file.src_uri, {})
        page.present_anchor_ids = set(record.get("anchors", ()))
        if "words" in record:
            _WORDS[page.url] = WordCount(record["words"], record.get("words_unfolded", record["words"]))


# Where `fairsite` keeps the theme's compiled templates between builds (an attribute of MkDocs'
# config it sets; a plain `mkdocs build` compiles them each time, as it always has).
BYTECODE_DIR = "fairsite_bytecode_dir"


def on_env(env, config, files):
    """MkDocs' ``on_env`` event, once every page is converted: record each page's anchors and
    (an explainer) its visible words on the config (``PAGES``), for `fairsite` to keep for the
    next build and for its word budget; under `fairsite`, keep the theme's compiled templates
    (``BYTECODE_DIR``). Returns ``env``."""
    pages = {}
    for file in files.documentation_pages():
        page = file.page
        if page is None:
            continue
        record = {"url": page.url, "anchors": sorted(page.present_anchor_ids or ())}
        if page.url in _WORDS:
            record["words"], record["words_unfolded"] = _WORDS[page.url].visible, _WORDS[page.url].unfolded
        pages[file.src_uri] = record
    setattr(config, PAGES, pages)
    folder = getattr(config, BYTECODE_DIR, None)
    if folder is not None:
        # The theme's templates are compiled once, not in every build (Jinja's own cache, keyed by
        # each template's source): the pages are written after this event.
        Path(folder).mkdir(parents=True, exist_ok=True)
        env.bytecode_cache = jinja2.FileSystemBytecodeCache(str(folder))
    return env
