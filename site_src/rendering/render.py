"""Stage 5, render: Jinja templates turn each explainer and its run into MkDocs pages.

Explainer prose is rendered with autoescaping (a value that holds ``<script>`` lands as text) and
``StrictUndefined`` (an undefined name is an error that names the explainer and the line, never an
empty string). The page furniture lives in ``site_src/templates/*.j2``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import NamedTuple

import jinja2
from markupsafe import Markup, escape

from site_src.sources.collect import CODE_PLACEHOLDER, Explainer
from site_src.errors import CheckError, ConfigError, SiteError
from site_src.execution.execute import RunResult
from site_src.sources.extract import generated_text
from site_src.rendering.filters import FILTERS
from site_src.execution._runner import split_code_cells
from site_src.sources.extract import header
from site_src.execution.cache import ENTRY, site_code_digest
from site_src.filestate import hash_file
from site_src.rendering.notebook import page_notebook_json
from site_src.publishing.provenance import BuildFacts, source_config
from site_src.rendering.results import ResultsTable
from site_src.rendering.terminal import terminal_html
from site_src.rendering import results_page
from site_src.rendering.glossary import TERMS, audit_conventions, terms_used
from site_src.checking.snapshot import snapshot_path
from site_src.rendering.results_page import draw_audit_figures, filter_options, label, table_html

# faircode.benchmark.BY_GROUP_FILE, spelt out: importing the benchmark (scikit-learn) on every build
# would cost more than the page (tests pin that the two agree).
BY_GROUP_FILE = "results_by_group.csv"

TEMPLATES = Path(__file__).parent.parent / "templates"
KEY_PACKAGES = ("numpy", "scipy", "pandas", "scikit-learn", "fairlearn", "matplotlib")


class Rendered(NamedTuple):
    """What ``render`` did: the problems it found, and the explainer pages it rendered."""

    problems: list[SiteError]
    pages_rendered: tuple[str, ...]  # slugs; the other explainer pages came from the page cache


def make_environment(explainers: list[Explainer], *, bytecode_dir: Path | None = None) -> jinja2.Environment:
    """The Jinja environment of the pages. With ``bytecode_dir``, compiled templates are kept
    there (Jinja's bytecode cache, keyed by each template's source) and not compiled again."""
    sources = {e.display_path: e.prose for e in explainers}
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
        # Explainer prose is escaped; the site's own .j2 templates assemble trusted Markdown.
        autoescape=lambda name: name is not None and not name.endswith(".j2"),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.filters["text"] = markdown_text  # front-matter text in the site's own templates
    env.globals["titles"] = {e.slug: e.meta.title for e in explainers}  # for links between explainers
    env.globals["tag_anchor"] = _tag_anchor
    return env


# The series' entrance: the page every explainer links back to.
ENTRANCE = "permutation-test-fairness-gaps"
# Reader's pages beside the explainers, each ``<name>.md.j2`` written to ``docs/<name>/index.md``.
READER_PAGES = ("glossary", "checklist", "mistakes")  # the tag index is Material's (tags.md)


def render(
    explainers: list[Explainer],
    runs: dict[str, RunResult],
    results: ResultsTable,
    docs_dir: Path,
    *,
    root: Path,
    facts: BuildFacts,
    banners: dict | None = None,
    reuse_pages: bool = True,
) -> Rendered:
    """Write every page under ``docs_dir`` (a staging folder); return the problems found and
    which explainer pages were rendered (the others were copied from the page cache).

    ``banners`` maps a slug to the ``build.NumbersProblem`` that ``serve`` shows at the top of
    its page (cited numbers that drifted from the accepted ones). With ``reuse_pages`` (not in
    ``check``), an explainer page whose inputs are those of a page the last build rendered is
    copied from ``.cache/fairsite-pages`` instead of rendered again.
    """
    banners = banners or {}
    env = make_environment(explainers, bytecode_dir=Path(root) / ".cache" / "fairsite-jinja")
    errors: list[SiteError] = []
    try:
        # Every page says where its code lives and which commit it was built from.
        env.globals.update(build=facts, source=source_config(root))
    except ValueError as err:
        return Rendered([ConfigError(str(err))], ())
    docs_dir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(TEMPLATES / "assets", docs_dir / "assets", dirs_exist_ok=True)
    shutil.copyfile(TEMPLATES / "docs-README.md", docs_dir / "README.md")  # committed; MkDocs skips it
    pages, rendered = set(), []
    for e in explainers:
        run = runs.get(e.slug)
        if run is None:
            continue  # its run failed; that error is already reported
        try:
            if _explainer_page(env, e, run, results, docs_dir / "explainers" / e.slug, root, facts=facts,
                               banner=banners.get(e.slug), reuse=reuse_pages):
                rendered.append(e.slug)
            pages.add(e.slug)
        except SiteError as err:
            errors.append(err)
    ordered = sorted(explainers, key=lambda e: (e.meta.order, e.meta.title))
    # Each home card shows its explainer's first figure, as sphinx-gallery's gallery does.
    thumbs = {slug: runs[slug].figures[0].name for slug in pages if runs[slug].figures}
    index = env.get_template("index.md.j2").render(explainers=ordered, has_results=results.exists, thumbs=thumbs)
    (docs_dir / "index.md").write_text(index, encoding="utf-8")
    (docs_dir / "tags.md").write_text(env.get_template("tags.md.j2").render(), encoding="utf-8")
    try:
        audits = audit_conventions(root)
    except ValueError as err:  # faircode's ManifestError: a manifest the glossary cannot read
        errors.append(ConfigError(f"glossary: {err}"))
        audits = []
    context = {"terms": TERMS, "audits": audits}
    for name in READER_PAGES:
        (docs_dir / name).mkdir(exist_ok=True)
        text = env.get_template(f"{name}.md.j2").render(**context)
        (docs_dir / name / "index.md").write_text(text, encoding="utf-8")
    try:
        _render_results_page(env, results, docs_dir, root, slugs={e.slug for e in explainers})
    except ValueError as err:  # a results file without the columns the page shows
        errors.append(ConfigError(f"{results.path.parent.name}/{results.path.name}: {err}"))
    return Rendered(errors, tuple(rendered))


def _explainer_page(env, e: Explainer, run: RunResult, results: ResultsTable, out: Path, root: Path, *,
                    facts: BuildFacts, banner=None, reuse: bool = True) -> bool:
    """Write explainer ``e``'s page folder ``out``, or copy it from the last build that had the
    same inputs; True when it was rendered.

    A prose edit changes one page; the other pages' inputs are the same, so they are copied
    from ``.cache/fairsite-pages`` rather than rendered again. The key holds everything a page
    is made of: its source, its run's cache entry (numbers, output, figure digests, times), the
    serve banner, the build facts the page prints, the other pages' titles, the results file
    and the code and templates of ``site_src``.
    """
    key = _page_key(e, run, facts=facts, source=env.globals["source"], titles=env.globals["titles"], banner=banner)
    cached = root / ".cache" / "fairsite-pages" / e.slug
    if reuse and _cached_page_holds(cached, key):
        shutil.copytree(cached / "page", out, dirs_exist_ok=True)
        return False
    _render_explainer(env, e, run, results, out, root, banner=banner)
    shutil.rmtree(cached, ignore_errors=True)
    cached.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=cached.parent))  # renamed into place whole: never half a page
    shutil.copytree(out, tmp / "page")
    files = {p.relative_to(out).as_posix(): hash_file(p) for p in sorted(out.rglob("*")) if p.is_file()}
    (tmp / "record.json").write_text(json.dumps({"key": key, "files": files}, indent=1))
    tmp.rename(cached)
    return True


def _cached_page_holds(cached: Path, key: str) -> bool:
    """True when the cached page was made from these inputs and its files are the ones it wrote
    (as the run cache checks its figures: a file edited in the cache is not published)."""
    try:
        record = json.loads((cached / "record.json").read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(record, dict) or record.get("key") != key or not isinstance(record.get("files"), dict):
        return False
    page = cached / "page"
    found = {p.relative_to(page).as_posix() for p in page.rglob("*") if p.is_file()}
    return found == set(record["files"]) and all(hash_file(page / n) == d for n, d in record["files"].items())


def _page_key(e: Explainer, run: RunResult, *, facts: BuildFacts, source: dict, titles: dict, banner) -> str:
    h = hashlib.sha256()
    shown_facts = (facts.date[:10], facts.commit, facts.dirty, facts.site_url, facts.results)
    for part in (e.display_path, e.path.read_bytes(), (run.out_dir / ENTRY).read_bytes(),
                 json.dumps([shown_facts, source, titles, getattr(banner, "text", None)], sort_keys=True),
                 site_code_digest(), jinja2.__version__):
        h.update(part if isinstance(part, bytes) else part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _render_explainer(env, e: Explainer, run: RunResult, results: ResultsTable, out: Path, root: Path,
                      *, banner=None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    placed: dict[int, str] = {}

    def figure(n: int, alt: str | None = None, caption: str | None = None) -> Markup:
        if not 1 <= n <= len(run.figures):
            raise CheckError(f"figure({n}): the run drew {len(run.figures)} figure(s)", explainer=e.display_path)
        if alt is None or not str(alt).strip():
            raise CheckError(f"figure({n}): alt text must say what the figure shows", explainer=e.display_path)
        if caption is not None and str(caption).strip() == str(alt).strip():
            # A screen reader reads both: the alt text describes the image, the caption says what to notice.
            raise CheckError(f"figure({n}): the caption repeats the alt text; say what to notice instead",
                             explainer=e.display_path)
        if n in placed:
            raise CheckError(f"figure({n}) is placed twice; place each figure once", explainer=e.display_path)
        placed[n] = alt
        return _figure_html(n, run.figures[n - 1], out, alt=str(alt), caption=caption)

    code_cells = split_code_cells(e.code, 0)
    placed_cells: list[int] = []
    folded_cells: set[int] = set()

    def cell(n: int, *, folded: bool = False) -> Markup:
        """Place code cell ``n`` and its output here. Every cell's code starts closed; with
        ``folded=True`` (the technical layer: plotting, agreement checks) its output is inside the
        fold too, so the reading flow shows only the outputs that teach."""
        if not 1 <= n <= len(code_cells):
            raise CheckError(f"cell({n}): the code has {len(code_cells)} cell(s); split it with `# %%` lines",
                             explainer=e.display_path)
        if n in placed_cells:
            raise CheckError(f"cell({n}) is placed twice; place each cell once", explainer=e.display_path)
        if placed_cells and n < placed_cells[-1]:
            # The notebook follows the page, so the page must follow the order the code runs in.
            raise CheckError(f"cell({n}) is placed after cell({placed_cells[-1]}); place cells in the order "
                             "the code runs", explainer=e.display_path)
        placed_cells.append(n)
        if folded:
            folded_cells.add(n)
        return Markup(f"\n\n{_CELL_MARK.format(n)}\n\n")

    def result(**key) -> dict:
        return results.lookup(**key)

    try:
        # Inside the try: a syntax error (an unclosed tag, an unknown filter) is reported with its line too.
        template = env.get_template(e.display_path)
        prose = template.render(**run.values, figure=figure, result=result, cell=cell)
    except SiteError as err:
        # Raised from inside the template (a citation, a figure): add the explainer and its line.
        raise type(err)(err.message, explainer=e.display_path, line=err.line or _template_line(e.display_path)) from None
    except jinja2.UndefinedError as err:
        raise ConfigError(f"template: {err.message} (not a value the run defined)", explainer=e.display_path,
                          line=_template_line(e.display_path)) from None
    except Exception as err:  # noqa: BLE001 - any template failure is reported with its line
        raise ConfigError(f"template: {type(err).__name__}: {err}", explainer=e.display_path,
                          line=getattr(err, "lineno", None) or _template_line(e.display_path)) from None
    missing = [n for n in range(1, len(run.figures) + 1) if n not in placed]
    if missing:
        raise CheckError(f"figure(s) {missing} drawn but not placed; add {{{{ figure(N, alt=\"...\") }}}} "
                         "to the prose where each belongs", explainer=e.display_path)

    code_rel = f"explainers/code/{e.slug}.py"
    # The generated text, not the file: explainers/code/ is written only once the build succeeds.
    (out / f"{e.slug}.py").write_text(generated_text(e), encoding="utf-8")
    cells = _cell_outputs(code_cells, run, header_lines=header(e).count("\n"))
    unplaced = [n for n in range(1, len(cells) + 1) if n not in placed_cells]
    # The blanked-out front matter and code lines kept Jinja's line numbers right; drop them now.
    prose = re.sub(r"\n{3,}", "\n\n", prose)
    (out / f"{e.slug}.ipynb").write_text(_notebook(e, prose, cells, unplaced, code_rel), encoding="utf-8")

    def cell_markdown(n: int, *, placed: bool) -> str:
        c = cells[n - 1]
        where = f"{code_rel}, lines {c['first']}–{c['last']}"
        title = (f"Code, cell {n}: {c['title']}" if c["title"] else f"Code, cell {n}") if len(cells) > 1 else "The code"
        return env.get_template("cell.md.j2").render(
            title=f"{title} ({where})", code=f"{_fence(c['code'])}python\n{c['code']}\n{_fence(c['code'])}",
            stdout=c["stdout"], stdout_html=terminal_html(c["stdout"].rstrip("\n")),
            folded=n in folded_cells,
        )

    for n in placed_cells:
        prose = prose.replace(_CELL_MARK.format(n), cell_markdown(n, placed=True), 1)
    code_section = "\n\n".join(cell_markdown(n, placed=False) for n in unplaced) or (
        "Every cell of the code is shown above, beside the prose it supports, with what it prints.")
    prose = prose.replace(CODE_PLACEHOLDER, code_section, 1)
    facts = _reproducibility(run, root)
    related = [s for s in e.meta.related if s != e.slug]
    if e.slug != ENTRANCE and ENTRANCE in env.globals["titles"] and ENTRANCE not in related:
        related.insert(0, ENTRANCE)  # every page leads back to the entrance of the series
    numbers_rel = f"{e.display_path.rsplit('/', 1)[0]}/{snapshot_path(e).name}"
    page = env.get_template("explainer.md.j2").render(e=e, meta=e.meta, prose=prose, run=run, facts=facts,
                                                      code_rel=code_rel, banner=banner, related=related,
                                                      terms=terms_used(prose), numbers_rel=numbers_rel)
    (out / "index.md").write_text(page, encoding="utf-8")


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


def _render_results_page(env, results: ResultsTable, docs_dir: Path, root: Path, *, slugs: set[str]) -> None:
    """The results explorer (see ``results_page``): table, per-audit figures, the CSV itself.

    Made once per version of the results file and of the code and template that make it, then
    copied from ``.cache/fairsite-results``: drawing the figures and tabulating every row is most
    of a re-render's time, and a prose edit should not pay for it.
    """
    if not results.exists:
        return
    shutil.copytree(_results_page_cache(env, results, root, slugs=slugs), docs_dir / "results", dirs_exist_ok=True)
    # Provenance changes with every commit, so it is added after the cached part, not cached.
    provenance = env.get_template("results-provenance.md.j2").render(
        csv_name=results.path.name, csv_sha256=hash_file(results.path),
        packages=[(k, _installed(k)) for k in KEY_PACKAGES if _installed(k)], data=_audit_data(root),
    )
    with open(docs_dir / "results" / "index.md", "a", encoding="utf-8") as fh:
        fh.write("\n" + provenance)


def warm_results_page(explainers: list[Explainer], results: ResultsTable, root: Path) -> None:
    """Make the results page's cached part now, if it is not made yet (``render`` then copies it).

    The page depends on ``results/`` alone, not on any explainer's run, so the build draws it
    while the explainers run. Problems are left for ``render`` to report: this returns quietly.
    """
    if not results.exists:
        return
    try:
        _results_page_cache(make_environment(explainers), results, root, slugs={e.slug for e in explainers})
    except Exception:  # noqa: BLE001 - render meets the same problem and reports it
        pass


def _results_page_cache(env, results: ResultsTable, root: Path, *, slugs: set[str]) -> Path:
    """The folder in ``.cache/fairsite-results`` holding the page for this version of the results
    files and of the code and templates that make it; drawn first if it is not there."""
    h = hashlib.sha256()
    performance = results.path.with_name("results_performance.csv")
    by_group = results.path.with_name(BY_GROUP_FILE)
    for part in (*(str(hash_file(p)).encode() for p in (results.path, performance, by_group)),
                 (TEMPLATES / "results.md.j2").read_bytes(),
                 Path(results_page.__file__).read_bytes(), Path(__file__).read_bytes(),
                 " ".join(sorted(slugs)).encode(), metadata.version("matplotlib").encode()):
        h.update(part)
        h.update(b"\0")
    cache = root / ".cache" / "fairsite-results" / h.hexdigest()[:20]
    if not cache.is_dir():
        shutil.rmtree(cache.parent, ignore_errors=True)  # older versions are never used again
        cache.parent.mkdir(parents=True)
        tmp = Path(tempfile.mkdtemp(dir=cache.parent))
        _write_results_page(env, results, tmp, slugs)
        tmp.rename(cache)
    return cache


def _installed(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _audit_data(root: Path) -> list[tuple[str, str]]:
    """Each audit's data files with their sha256, as the manifests declare and the benchmark checks."""
    import yaml

    out = []
    for manifest in sorted((root / "audits").glob("*/audit.yaml")):
        # libyaml's loader when it is there: the same result, several times faster (every build reads these).
        spec = yaml.load(manifest.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
        for key, entry in _files(spec):
            out.append((entry["file"], entry["sha256"]))
    return sorted(set(out))


def _files(node, key=""):
    """Every ``{file, sha256}`` mapping anywhere in a manifest."""
    if isinstance(node, dict):
        if isinstance(node.get("file"), str) and isinstance(node.get("sha256"), str):
            yield key, node
        for k, v in node.items():
            yield from _files(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from _files(v, key)


def _write_results_page(env, results: ResultsTable, out: Path, slugs: set[str]) -> None:
    from faircode.benchmark import ALPHA  # the level `significant` uses; imported only on a miss

    shutil.copyfile(results.path, out / results.path.name)
    df = results.df
    groups = _by_group_view(results.path.with_name(BY_GROUP_FILE), out, alpha=ALPHA)
    page = env.get_template("results.md.j2").render(
        csv_name=results.path.name, n_rows=len(df), options=filter_options(df), table=table_html(df), groups=groups,
        figures=draw_audit_figures(df, out), label=label,
        has_kind="kind" in df.columns, has_q="q_value" in df.columns, alpha=ALPHA, slugs=slugs,
        dropped=_dropped_per_audit(results.path.with_name("results_performance.csv")),
    )
    (out / "index.md").write_text(page, encoding="utf-8")


def _dropped_per_audit(performance: Path) -> dict[str, int]:
    """Rows each audit dropped for a missing target or protected value, by audit display name
    (empty when the performance file or its ``n_dropped`` column is absent)."""
    if not performance.exists():
        return {}
    with open(performance, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return {r["audit_name"]: int(r["n_dropped"]) for r in rows if r.get("n_dropped", "") != ""}


def _by_group_view(path: Path, out: Path, *, alpha: float) -> dict | None:
    """The by-group table for the results page (None without ``results_by_group.csv``)."""
    if not path.exists():
        return None
    import pandas as pd

    shutil.copyfile(path, out / path.name)
    df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    return {"csv_name": path.name, "n_rows": len(df), "options": results_page.group_filter_options(df),
            "defaults": results_page.GROUP_DEFAULTS, "table": results_page.groups_table_html(df, alpha=alpha),
            "min_sizes": sorted(df["min_size"].dropna().astype(int).unique().tolist())}


_CELL_MARK = "<!-- fairsite:cell {} -->"
_FIGURE_HTML = re.compile(r'<figure class="fc-figure"[^>]*>.*?<figcaption>(.*?)</figcaption>\s*</figure>', re.S)


def _cell_outputs(code_cells: list[tuple[int, str]], run: RunResult, *, header_lines: int) -> list[dict]:
    """Each cell's code (without its ``# %%`` line), title, lines in the generated file, printed
    output and figures (SVG paths), from the run's per-cell record."""
    recorded = run.cells if len(run.cells) == len(code_cells) else None
    if recorded is not None and "".join(c["stdout"] for c in recorded) != run.stdout:
        # Output written past sys.stdout (C code, the raw buffer, bytes that are not UTF-8) has
        # no cell: show the run's whole output under the last cell rather than lose some of it.
        recorded = None
    out = []
    for k, (line, source) in enumerate(code_cells):
        lines = source.split("\n")
        title = ""
        if lines and lines[0].startswith("# %%"):
            title = lines[0][4:].strip()
            lines = lines[1:]
        code = "\n".join(lines).strip("\n")
        if recorded is not None:
            stdout, figs = recorded[k]["stdout"], recorded[k]["figures"]
        else:  # a run recorded before cells were (one cell: the whole code)
            stdout, figs = (run.stdout, list(range(1, len(run.figures) + 1))) if k == len(code_cells) - 1 else ("", [])
        out.append({"title": title, "code": code, "stdout": stdout, "figures": [run.figures[i - 1] for i in figs],
                    "first": header_lines + line, "last": header_lines + line + source.count("\n")})
    return out


def _notebook(e: Explainer, prose: str, cells: list[dict], unplaced: list[int], code_rel: str) -> str:
    """The page as a notebook: prose as Markdown, each code cell with its outputs where the page shows it."""
    parts: list[tuple] = []
    pieces = re.split(r"(<!-- fairsite:cell \d+ -->|" + re.escape(CODE_PLACEHOLDER) + ")", prose)
    for piece in pieces:
        m = re.fullmatch(r"<!-- fairsite:cell (\d+) -->", piece)
        numbers = [int(m.group(1))] if m else unplaced if piece == CODE_PLACEHOLDER else None
        if numbers is None:
            # A figure is the image output of the cell that draws it; the Markdown keeps its caption.
            text = _FIGURE_HTML.sub(lambda f: "*" + re.sub(r"<[^>]+>", "", f.group(1)).strip() + "*", piece)
            parts.append(("markdown", text))
            continue
        for n in numbers:
            c = cells[n - 1]
            parts.append(("code", c["code"], c["stdout"], c["figures"]))
    return page_notebook_json(parts, title=e.meta.title, subtitle=e.meta.subtitle, code_rel=code_rel)


def _reproducibility(run: RunResult, root: Path) -> dict:
    data = []
    for rel in run.data_files:
        p = root / rel
        if p.exists():
            data.append((rel, hash_file(p)))  # remembered by metadata: not re-read on every page
    return {
        "run_at": run.run_at,
        "duration": f"{run.duration_s:.1f} s",
        "memory": f"{run.peak_memory_mb:.0f} MB",
        "python": run.python,
        "packages": [(k, run.packages[k]) for k in KEY_PACKAGES if k in run.packages],
        "data": data,
        "run_id": run.run_id[:16],
    }


# Characters Markdown, its extensions (attribute lists, emoji shortcodes, tables) or HTML give a
# meaning to; written as character references they are shown as themselves.
_MEANINGFUL = set("&<>\"'\\`*_{}[]()#+-.!|:~^=$%@")


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
