"""Explainer pages: each explainer's prose and run rendered into ``docs/explainers/<slug>/``, and
the page cache that copies an unchanged page instead of rendering it again.

A page folder holds ``index.md`` (the page), the figures it places, ``<slug>.py`` (the generated
code, for download) and ``<slug>.ipynb`` (the page as a notebook). The prose places figures with
``figure(N, alt=...)`` and code cells with ``cell(N)``, cites the benchmark with ``result(...)``
and formats the run's values with the filters of ``site_src.filters``.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from faircode.formatting import did_you_mean

from site_src.checking.snapshot import snapshot_path
from site_src.errors import CheckError, SiteError, TemplateError
from site_src.execution._cells import split_code_cells
from site_src.execution.cache import ENTRY, site_code_digest
from site_src.execution.execute import RunResult, missing_name
from site_src.filestate import digest_parts, hash_file
from site_src.provenance import BuildFacts, run_facts
from site_src.rendering.glossary import terms_used
from site_src.rendering.references import BIBLIOGRAPHY, PageCitations
from site_src.rendering.notebook import CELL_MARK, cell_outputs, page_notebook
from site_src.rendering.reads import noting, still_hold
from site_src.rendering.results import ResultsTable
from site_src.terminal import (BoundedOutput, bound_output, download_name, format_size, plain_text,
                                         terminal_html)
from site_src.sources.collect import CODE_PLACEHOLDER, Explainer
from site_src.sources.extract import generated_text, header


# ------------------------------------------------------------------------------------ the page cache

def explainer_page(env: jinja2.Environment, e: Explainer, run: RunResult, results: ResultsTable, out: Path,
                   root: Path, *, facts: BuildFacts, banner=None, reuse: bool = True) -> bool:
    """Write explainer ``e``'s page folder ``out``, or copy it from the last build that had the
    same inputs; True when it was rendered.

    A prose edit changes one page; the other pages' inputs are the same, so they are copied
    from ``.cache/fairsite-pages`` rather than rendered again (not with ``reuse=False``). The
    key holds everything a page is made of: its source, its place in the reading order, its run's
    cache entry (numbers, output, figure digests, times), the serve ``banner``, the build facts
    the page prints, and the code and templates of ``site_src``; and what it read of the other
    pages (their titles, the reading order: `rendering.reads`) must read the same, so adding,
    renaming or moving another page renders only the pages that show it (issue 48). Raises
    ``SiteError`` (naming the explainer and the line) for a problem in the prose.
    """
    key = page_key(e, run, facts=facts, env=env, banner=banner)
    return cached_page(e, out, root, key=key, reuse=reuse, shared=env.globals,
                       render=lambda: _render_explainer(env, e, run, results, out, root, banner=banner))


def page_key(e: Explainer, run: RunResult, *, facts: BuildFacts, env: jinja2.Environment, banner, more=()) -> str:
    """The page cache's key of ``e``'s page (see `explainer_page`), with ``more`` (strings the
    page also shows: a report's lock digest)."""
    part = [e.part.title, e.part.intro] if e.part is not None else None  # its part's pages: read from `parts`
    return _page_key(e, run, facts=facts, source=env.globals["source"],
                     place=[e.meta.order, part, env.globals.get("bibliography_digest", ""), *more], banner=banner)


def cached_page(e: Explainer, out: Path, root: Path, *, key: str, render, reuse: bool, shared: Mapping) -> bool:
    """Copy ``e``'s page folder into ``out`` from the page cache if it was made from ``key`` and
    what it read of ``shared`` (the environment's globals) reads the same (and ``reuse``); else
    ``render()`` it there, noting those reads, and keep it. True when it was rendered."""
    cached = root / ".cache" / "fairsite-pages" / e.slug
    if reuse and _cached_page_holds(cached, key, shared):
        shutil.copytree(cached / "page", out, dirs_exist_ok=True)
        return False
    with noting() as reads:
        render()
    _store_page(out, cached, key, reads.as_json())
    return True


def _page_key(e: Explainer, run: RunResult, *, facts: BuildFacts, source: dict, place: list, banner) -> str:
    return digest_parts([e.display_path, e.digest, (run.out_dir / ENTRY).read_bytes(),
                         json.dumps([facts.shown(), source, place, getattr(banner, "text", None)], sort_keys=True),
                         hash_file(e.path.parent / BIBLIOGRAPHY),  # its citations come from this file
                         site_code_digest(), jinja2.__version__])


def _cached_page_holds(cached: Path, key: str, shared: Mapping) -> bool:
    """True when the cached page was made from these inputs, what it read of ``shared`` reads the
    same, and its files are the ones it wrote (as the run cache checks its figures: a file edited
    in the cache is not published)."""
    try:
        record = json.loads((cached / "record.json").read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(record, dict) or record.get("key") != key or not isinstance(record.get("files"), dict):
        return False
    if not still_hold(record.get("reads"), shared):
        return False
    page = cached / "page"
    found = {p.relative_to(page).as_posix() for p in page.rglob("*") if p.is_file()}
    return found == set(record["files"]) and all(hash_file(page / n) == d for n, d in record["files"].items())


def _store_page(out: Path, cached: Path, key: str, reads: list) -> None:
    """Keep the page folder ``out`` as the cached page for ``key``, with its files' digests and
    what it read of the shared values (`reads.Reads.as_json`)."""
    shutil.rmtree(cached, ignore_errors=True)
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=cached.parent))  # renamed into place whole: never half a page
    shutil.copytree(out, tmp / "page")
    files = {p.relative_to(out).as_posix(): hash_file(p) for p in sorted(out.rglob("*")) if p.is_file()}
    (tmp / "record.json").write_text(json.dumps({"key": key, "files": files, "reads": reads}, indent=1))
    tmp.rename(cached)


# -------------------------------------------------------------------------------- rendering a page

def _render_explainer(env, e: Explainer, run: RunResult, results: ResultsTable, out: Path, root: Path,
                      *, banner=None) -> None:
    """Render ``e``'s page into ``out``: the prose, then the code, the notebook and the page."""
    out.mkdir(parents=True, exist_ok=True)
    code_cells = split_code_cells(e.code, 0)
    placed = _Placement(e, run, out, n_cells=len(code_cells))
    prose = _render_prose(env, e, run, results, placed)
    placed.check_every_figure_placed()
    code_rel = f"explainers/code/{e.slug}.py"
    # The generated text, not the file: explainers/code/ is written only once the build succeeds.
    (out / f"{e.slug}.py").write_text(generated_text(e), encoding="utf-8")
    cells = cell_outputs(code_cells, run, header_lines=header(e).count("\n"))
    _bound_outputs(cells, out, slug=e.slug)
    unplaced = [n for n in range(1, len(cells) + 1) if n not in placed.cells]
    # The blanked-out front matter and code lines kept Jinja's line numbers right; drop them now.
    prose = re.sub(r"\n{3,}", "\n\n", prose)
    notebook = page_notebook(prose, cells, unplaced, title=e.meta.title, subtitle=e.meta.subtitle, code_rel=code_rel)
    (out / f"{e.slug}.ipynb").write_text(notebook, encoding="utf-8")
    prose = _place_cells(env, prose, cells, placed, unplaced, code_rel=code_rel)
    (out / "index.md").write_text(_page(env, e, run, prose, root, code_rel=code_rel, banner=banner), encoding="utf-8")


class _Placement:
    """The ``figure(N, alt=...)`` and ``cell(N)`` the prose calls, and what they placed."""

    def __init__(self, e: Explainer, run: RunResult, out: Path, *, n_cells: int):
        self.e, self.run, self.out, self.n_cells = e, run, out, n_cells
        self.figures: dict[int, str] = {}  # figure number -> alt text
        self.cells: list[int] = []  # in the order placed
        self.folded: set[int] = set()

    def _error(self, message: str) -> CheckError:
        return CheckError(message, explainer=self.e.display_path)

    def figure(self, n: int, alt: str | None = None, caption: str | None = None) -> Markup:
        """Place figure ``n`` of the run here, with its alt text and an optional caption."""
        drawn = len(self.run.figures)
        if not 1 <= n <= drawn:
            raise self._error(f"figure({n}): the run drew {drawn} figure(s)")
        if alt is None or not str(alt).strip():
            raise self._error(f"figure({n}): alt text must say what the figure shows")
        if caption is not None and str(caption).strip() == str(alt).strip():
            # A screen reader reads both: the alt text describes the image, the caption says what to notice.
            raise self._error(f"figure({n}): the caption repeats the alt text; say what to notice instead")
        if n in self.figures:
            raise self._error(f"figure({n}) is placed twice; place each figure once")
        self.figures[n] = alt
        return _figure_html(n, self.run.figures[n - 1], self.out, alt=str(alt), caption=caption)

    def cell(self, n: int, *, folded: bool = False) -> Markup:
        """Place code cell ``n`` and its output here. Every cell's code starts closed; with
        ``folded=True`` (the technical layer: plotting, agreement checks) its output is inside the
        fold too, so the reading flow shows only the outputs that teach."""
        if not 1 <= n <= self.n_cells:
            raise self._error(f"cell({n}): the code has {self.n_cells} cell(s); split it with `# %%` lines")
        if n in self.cells:
            raise self._error(f"cell({n}) is placed twice; place each cell once")
        if self.cells and n < self.cells[-1]:
            # The notebook follows the page, so the page must follow the order the code runs in.
            raise self._error(f"cell({n}) is placed after cell({self.cells[-1]}); place cells in the order "
                              "the code runs")
        self.cells.append(n)
        if folded:
            self.folded.add(n)
        return Markup(f"\n\n{CELL_MARK.format(n)}\n\n")

    def check_every_figure_placed(self) -> None:
        missing = [n for n in range(1, len(self.run.figures) + 1) if n not in self.figures]
        if missing:
            raise self._error(f"figure(s) {missing} drawn but not placed; add {{{{ figure(N, alt=\"...\") }}}} "
                              "to the prose where each belongs")


def _render_prose(env, e: Explainer, run: RunResult, results: ResultsTable, placed: _Placement) -> str:
    """The explainer's prose rendered with the run's values and the page's functions (`PROSE_FUNCTIONS`)."""
    refs = PageCitations(env.globals.get("bibliography", {}), explainer=e.display_path)
    return render_prose(env, e, run, dict(figure=placed.figure, cell=placed.cell,
                                          result=lambda **key: results.lookup(**key), cite=refs.cite,
                                          further_reading=refs.further_reading))


def render_prose(env, e: Explainer, run: RunResult, functions: dict) -> str:
    """A page's prose rendered with the run's values and the page's ``functions`` (an explainer's
    figure, cell, cite...; a report's tables, `rendering.report_page`); any failure names the
    page's source and line."""
    try:
        # Inside the try: a syntax error (an unclosed tag, an unknown filter) is reported with its line too.
        template = env.get_template(e.display_path)
        return template.render(**run.values, **functions)
    except SiteError as err:
        # Raised from inside the template (a citation, a figure): add the explainer and its line.
        raise type(err)(err.message, explainer=e.display_path, line=err.line or _template_line(e.display_path)) from None
    except jinja2.UndefinedError as err:
        name = re.match(r"'(.+)' is undefined", err.message or "")
        # In prose a name may also be a page function (figure, cite...): "'figur' is not a name the
        # code defines" alone was true but sent a fresh user to the code.
        said = missing_name(name.group(1), run) if name else str(err.message)
        if name and name.group(1) not in run.unpassed:
            said += " or a page function"
        raise TemplateError(said
                            + _hint(r"'(.+)' is undefined", err.message, [*run.values, *functions, *env.globals]),
                            explainer=e.display_path,
                            line=_template_line(e.display_path)) from None
    except Exception as err:  # noqa: BLE001 - any template failure is reported with its line
        line = getattr(err, "lineno", None) or _template_line(e.display_path)
        opened = _unclosed_block(env, e.display_path) if "Unexpected end of template" in str(err) else None
        where = ""
        if opened is not None:  # Jinja names the end of the file; the author needs the tag left open
            where, line = f" (the {{% {opened[0]} %}} on line {opened[1]} is never closed)", opened[1]
        hint = _hint(r"No filter named '(.+)'", str(err), env.filters)
        raise TemplateError(f"{type(err).__name__}: {err}{where}{hint}", explainer=e.display_path, line=line) from None


# Jinja's tags that open a block closed by `end<tag>` (`set` only in its block form, left out).
_BLOCK_TAGS = {"if", "for", "macro", "call", "filter", "block", "with", "autoescape", "trans", "raw"}


def _unclosed_block(env, name: str) -> tuple[str, int] | None:
    """The innermost block tag of template ``name`` that is never closed, and its line; None if
    none is (or the source cannot be read or lexed). Jinja reports such a tag at the end of the
    file ("Unexpected end of template"), where it is not (a fresh user's finding, issue 26)."""
    try:
        source = env.loader.get_source(env, name)[0]
        tokens = [t for t in env.lex(source) if t[1] != "whitespace"]
    except Exception:  # noqa: BLE001 - a better line or none; the error itself is reported anyway
        return None
    stack = []
    for (line, kind, _), following in zip(tokens, tokens[1:]):
        if kind != "block_begin" or following[1] != "name":
            continue
        tag = following[2]
        if tag in _BLOCK_TAGS:
            stack.append((tag, line))
        elif tag.startswith("end") and stack and stack[-1][0] == tag[3:]:
            stack.pop()
    return stack[-1] if stack else None


def _hint(pattern: str, message: str, names) -> str:
    """A "did you mean" for the name Jinja's ``message`` complains of (an undefined value, an
    unknown filter), among ``names``; empty when the message is another one or nothing is close."""
    m = re.search(pattern, message or "")
    return did_you_mean(m.group(1), names) if m else ""


def _place_cells(env, prose: str, cells: list[dict], placed: _Placement, unplaced: list[int], *,
                 code_rel: str) -> str:
    """Put each placed cell's code and output where the prose placed it, and the others in the
    page's code section."""
    def cell_markdown(n: int) -> str:
        c = cells[n - 1]
        where = f"{code_rel}, lines {c['first']}–{c['last']}"
        title = (f"Code, cell {n}: {c['title']}" if c["title"] else f"Code, cell {n}") if len(cells) > 1 else "The code"
        return env.get_template("cell.md.j2").render(
            title=f"{title} ({where})", code=f"{_fence(c['code'])}python\n{c['code']}\n{_fence(c['code'])}",
            output_html=_output_html(c["shown"], c.get("download")), folded=n in placed.folded,
        )

    for n in placed.cells:
        prose = prose.replace(CELL_MARK.format(n), cell_markdown(n), 1)
    if not unplaced:
        # Every cell sits beside the prose it supports: the code's own section would be a heading
        # over one sentence saying so (issue 28), so the heading goes with it.
        return _CODE_HEADING.sub("", prose, count=1).replace(CODE_PLACEHOLDER, "", 1)
    return prose.replace(CODE_PLACEHOLDER, "\n\n".join(cell_markdown(n) for n in unplaced), 1)


# The heading right above the code's place, and the HTML comments between them.
_CODE_HEADING = re.compile(r"^#{2,6} [^\n]*\n(?:\s*<!--.*?-->)*\s*(?=" + re.escape(CODE_PLACEHOLDER) + ")",
                           re.M | re.S)


def _bound_outputs(cells: list[dict], out: Path, *, slug: str) -> None:
    """Cut each cell's output to the page's bound (``terminal.bound_output``): ``shown`` is what
    the page shows; a cell cut writes its whole output beside the notebook (``download``) and the
    notebook gets the cut text with a line naming that file (``notebook_streams``)."""
    for n, c in enumerate(cells, start=1):
        c["shown"] = shown = bound_output(c["streams"])
        if not shown.cut:
            continue
        c["download"] = name = download_name(slug, n, len(cells))
        (out / name).write_text(plain_text("".join(text for _, text in c["streams"])), encoding="utf-8")
        note = f"… {_cut_note(shown)}; the whole output is {name}, next to this notebook …\n"
        c["notebook_streams"] = [(("stdout", note) if kind == "cut" else (kind, text)) for kind, text in shown.streams]


def _cut_note(shown: BoundedOutput) -> str:
    """What a cut output says where lines are left out: how much is not shown, of how much."""
    hidden = (f"{shown.hidden_lines:,} lines ({format_size(shown.hidden_chars)}) not shown"
              if shown.hidden_lines else f"{format_size(shown.hidden_chars)} of a long line not shown")
    return f"{hidden} of {shown.total_lines:,} lines ({format_size(shown.total_chars)})"


def _output_html(shown: BoundedOutput, download: str | None) -> str:
    """A cell's output on the page: each stretch of stdout, and of stderr (warnings) styled apart,
    as MyST-NB shows them, in the order written; where lines were cut, how many and a link to
    the whole output. Empty when the cell wrote nothing but white space."""
    if not any(text.strip() for kind, text in shown.streams if kind != "cut"):
        return ""
    parts = []
    for kind, text in shown.streams:
        if kind == "cut":
            parts.append(f'<p class="fc-output-cut">… {escape(_cut_note(shown))}. '
                         f'<a href="{escape(download)}" download>The whole output ({escape(download)})</a></p>')
        elif text.strip():
            label = ' data-stream="stderr" title="Written to stderr: warnings and errors"' if kind == "stderr" else ""
            cls = "fc-output fc-stderr" if kind == "stderr" else "fc-output"
            parts.append(f'<pre class="{cls}"{label}><code>{terminal_html(text.rstrip(chr(10)))}</code></pre>')
    return "\n\n".join(parts)


def _page(env, e: Explainer, run: RunResult, prose: str, root: Path, *, code_rel: str, banner) -> str:
    """The whole page (``explainer.md.j2``): title, prose, reproducibility facts, related pages."""
    related = [s for s in e.meta.related if s != e.slug]
    first = env.globals["reading_order"][0]  # the series' start: the first page of the reading order
    if e.slug != first and first not in related:
        related.insert(0, first)  # every page leads back to the start of the series
    numbers_rel = f"{e.display_path.rsplit('/', 1)[0]}/{snapshot_path(e).name}"
    return env.get_template("explainer.md.j2").render(
        e=e, meta=e.meta, prose=prose, run=run, facts=run_facts(run, root), code_rel=code_rel, banner=banner,
        related=related, terms=terms_used(prose), numbers_rel=numbers_rel)


def _figure_html(n: int, svg: Path, out: Path, *, alt: str, caption: str | None) -> Markup:
    """Figure ``n``: numbered, opening full size in the lightbox, with a narrow variant for phones.

    The runner saves, for a figure whose panels sit side by side, the same panels stacked
    (``figure-N-narrow.svg``); a narrow screen gets that one through ``<picture>``.
    """
    names = [svg.name]
    narrow = svg.with_name(svg.stem + "-narrow.svg")
    if narrow.exists():
        names.append(narrow.name)
    for name in names:
        shutil.copyfile(svg.with_name(name), out / name)
    source = (f'<source media="(max-width: 44.984375em)" srcset="{narrow.name}" type="image/svg+xml">'
              if narrow.exists() else "")
    text = f'<span class="fc-fignum">Figure {n}.</span>' + (f" {escape(caption)}" if caption else "")
    size = _svg_size(svg)  # the box is reserved before the (lazy) image loads: no layout shift
    dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
    # The link is the lightbox's (class glightbox, initialised by the plugin); the image itself is
    # skipped by the plugin (class off-glb) so it is not wrapped a second time.
    return Markup(
        f'<figure class="fc-figure" id="figure-{n}">\n'
        f'<a class="glightbox" href="{svg.name}" data-type="image" aria-label="Figure {n}, full size">'
        f'<picture>{source}<img class="off-glb" src="{svg.name}" alt="{escape(alt)}"{dims} loading="lazy"></picture></a>\n'
        f"<figcaption>{text}</figcaption>\n</figure>"
    )


def _svg_size(svg: Path) -> tuple[int, int] | None:
    """The CSS pixel size of a matplotlib SVG (its ``width``/``height`` are in points)."""
    head = svg.read_text(encoding="utf-8")[:2000]
    m = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"[^>]*\sheight="([\d.]+)pt"', head)
    return (round(float(m.group(1)) * 4 / 3), round(float(m.group(2)) * 4 / 3)) if m else None


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text``."""
    longest, run = 0, 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def _template_line(name: str) -> int | None:
    """The line of the template frame in the exception being handled (Jinja rewrites tracebacks)."""
    tb = sys.exc_info()[2]
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == name:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
