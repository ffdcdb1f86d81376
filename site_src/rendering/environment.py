"""The Jinja environment every page is rendered in: loaders, autoescaping, filters and globals.

Explainer prose is rendered with autoescaping (a value that holds ``<script>`` lands as text) and
``StrictUndefined`` (an undefined name is an error that names the explainer and the line, never an
empty string). The site's own templates live in ``site_src/templates/``: ``*.md.j2`` assemble
trusted Markdown (not escaped), ``*.html.j2`` write HTML from data (escaped).
"""

from __future__ import annotations

from pathlib import Path

import jinja2
from markupsafe import Markup

from site_src.filters import FILTERS
from site_src.rendering.reads import shared_mapping, shared_sequence
from site_src.sources.collect import Explainer

TEMPLATES = Path(__file__).parent.parent / "templates"


def make_environment(explainers: list[Explainer], *, reports: list[Explainer] = (),
                     bytecode_dir: Path | None = None) -> jinja2.Environment:
    """The Jinja environment the pages are rendered in.

    Parameters
    ----------
    explainers : list of Explainer
        The collected explainers (``site_src.sources.collect``). Each one's prose is a template
        named by its ``display_path`` (``"explainers/<slug>.md"``), so Jinja's errors and
        traceback frames name the explainer; their titles become the global ``titles``
        (``{slug: title}``), which pages use to link to each other, their order the globals
        ``reading_order`` (slugs) and ``parts`` (`sources.collect.Part`): read-only views that
        note what a page reads of them (`rendering.reads`).
    reports : list of Explainer, optional
        The collected reports (``site_src.sources.reports``): their prose is a template too,
        named by its ``display_path`` (``"reports/<slug>/report.md"``); they are not in the
        explainers' titles and reading order.
    bytecode_dir : Path, optional
        A folder for Jinja's bytecode cache (keyed by each template's source), created if
        missing: a template compiled once is not compiled again by the next build. None: no cache.

    Returns
    -------
    jinja2.Environment
        Loads explainer prose first, then ``site_src/templates/``. Autoescaping is on for
        explainer prose and ``*.html.j2`` templates and off for ``*.md.j2`` templates (trusted
        Markdown assembled from escaped parts) and string templates; undefined names raise
        ``jinja2.UndefinedError``. The number filters of ``site_src.filters`` are
        installed, with ``text`` (:func:`markdown_text`) for front-matter text, ``yaml``
        (:func:`yaml_scalar`) for a value written into a page's own front matter, and the global
        ``tag_anchor`` (a tag's anchor on the tag index).

    Raises
    ------
    OSError
        ``bytecode_dir`` cannot be created.
    """
    sources = {e.display_path: e.prose for e in [*explainers, *reports]}
    cache = None
    if bytecode_dir is not None:
        bytecode_dir.mkdir(parents=True, exist_ok=True)
        cache = jinja2.FileSystemBytecodeCache(str(bytecode_dir))
    env = jinja2.Environment(
        bytecode_cache=cache,
        loader=jinja2.ChoiceLoader([
            # (source, filename, uptodate): the filename makes Jinja's traceback frames name the explainer.
            jinja2.FunctionLoader(lambda name: (sources[name], name, lambda: True) if name in sources else None),
            jinja2.FileSystemLoader(TEMPLATES),
        ]),
        autoescape=_autoescape,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.filters["text"] = markdown_text  # front-matter text in the site's own templates
    env.filters["yaml"] = yaml_scalar  # a value in the front matter of a page the build writes
    # What every page may show of the others, as views that note what a page reads of them
    # (`reads`): a cached page is reused while those reads still hold.
    titles = {e.slug: e.meta.title for e in explainers}  # for links between explainers
    env.globals["titles"] = shared_mapping("titles", titles)
    # The one reading order (explainers/reading-order.yaml, read by `collect`): the home page's
    # path, the checklist, the common mistakes and each page's "start here" link follow it.
    ordered = sorted(explainers, key=lambda e: (e.meta.order, e.slug))
    env.globals["reading_order"] = shared_sequence("reading_order", [e.slug for e in ordered])
    env.globals["parts"] = shared_sequence("parts", list(dict.fromkeys(e.part for e in ordered if e.part is not None)))
    env.globals["tag_anchor"] = _tag_anchor
    return env


def _autoescape(name: str | None) -> bool:
    # Explainer prose and HTML written from data are escaped; the .md.j2 templates assemble
    # trusted Markdown from parts that were escaped where they were made.
    return name is not None and (name.endswith(".html.j2") or not name.endswith(".j2"))


# Characters Markdown, its extensions (attribute lists, emoji shortcodes, tables) or HTML give a
# meaning to; written as character references they are shown as themselves.
_MEANINGFUL = set("&<>\"'\\`*_{}[]()#+-.!|:~^=$%@")


def yaml_scalar(value) -> Markup:
    """``value`` as one double-quoted YAML scalar that reads back as the same text, for the front
    matter of a page the build writes (MkDocs reads it with PyYAML).

    JSON is not YAML here: ``tojson`` writes an emoji as two ``\\u`` surrogate escapes, which YAML
    reads as two lone surrogates, and the page's title, sidebar entry and search title became
    "Index" (issue 47). The YAML library escapes what YAML cannot carry as it is (``\\U0001F3AF``,
    a line separator, a control character) and nothing else."""
    import yaml

    text = yaml.safe_dump(str(value), allow_unicode=True, default_style='"', width=float("inf"))
    return Markup(text.removesuffix("\n...\n").rstrip("\n"))


def markdown_text(value) -> Markup:
    """Any text shown as itself in a Markdown page: HTML and Markdown syntax neutralised.

    A front-matter title such as ``X <img src=x onerror=alert(1)>`` or ``*Not* [a link](x)`` lands
    in the page as those characters, not as markup. Line breaks become spaces and control
    characters are dropped, so the text cannot end a heading or a table cell early.
    """
    out = []
    for ch in " ".join(str(value).split()):
        if ch in _MEANINGFUL:
            out.append(f"&#{ord(ch)};")
        elif ch.isprintable():
            out.append(ch)
    return Markup("".join(out))


def _tag_anchor(tag: str) -> str:
    """The anchor of ``tag`` on the tag index, as Material's tags plugin makes it (its defaults)."""
    from pymdownx.slugs import slugify

    return "tag:" + slugify(case="lower")(tag, "-")
