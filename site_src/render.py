"""Stage 5, render: Jinja templates turn each explainer and its run into MkDocs pages.

Explainer prose is rendered with autoescaping (a value that holds ``<script>`` lands as text) and
``StrictUndefined`` (an undefined name is an error that names the explainer and the line, never an
empty string). The page furniture lives in ``site_src/templates/*.j2``.
"""

from __future__ import annotations

import csv
import hashlib
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import jinja2
import jinja2.meta
from markupsafe import Markup, escape

from site_src.collect import CODE_PLACEHOLDER, Explainer
from site_src.errors import CheckError, ConfigError, SiteError
from site_src.execute import RunResult
from site_src.extract import generated_text
from site_src.filters import FILTERS
from site_src.notebook import notebook_json
from site_src.results import ResultsTable
from site_src.terminal import terminal_html
from site_src import notebook, results_page
from site_src.glossary import TERMS, audit_conventions, terms_used
from site_src.results_page import draw_audit_figures, filter_options, label, table_html

# faircode.benchmark.BY_GROUP_FILE, spelt out: importing the benchmark (scikit-learn) on every build
# would cost more than the page (tests pin that the two agree).
BY_GROUP_FILE = "results_by_group.csv"

TEMPLATES = Path(__file__).parent / "templates"
KEY_PACKAGES = ("numpy", "scipy", "pandas", "scikit-learn", "fairlearn", "matplotlib")


@dataclass(frozen=True)
class Page:
    """A rendered explainer page and what it cited."""

    slug: str
    markdown: str
    cited: tuple[str, ...]  # run values the prose used


def make_environment(explainers: list[Explainer]) -> jinja2.Environment:
    sources = {e.display_path: e.prose for e in explainers}
    env = jinja2.Environment(
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
    env.filters["tag_id"] = tag_id
    env.globals["titles"] = {e.slug: e.meta.title for e in explainers}  # for links between explainers
    return env


# The series' entrance: the page every explainer links back to.
ENTRANCE = "permutation-test-fairness-gaps"
# Reader's pages beside the explainers, each ``<name>.md.j2`` written to ``docs/<name>/index.md``.
READER_PAGES = ("glossary", "checklist", "mistakes", "tags")


def tag_id(tag) -> str:
    """The anchor of a tag on the tag index: ``"FWER"`` -> ``"fwer"``, ``"four-fifths rule"`` -> ``"four-fifths-rule"``."""
    return re.sub(r"[^a-z0-9]+", "-", str(tag).lower()).strip("-") or "tag"


def _tags(explainers: list[Explainer]) -> list[tuple[str, list[Explainer]]]:
    """Each tag (case-insensitively merged, first spelling kept) with its explainers, tags sorted."""
    by_id: dict[str, tuple[str, list[Explainer]]] = {}
    for e in sorted(explainers, key=lambda e: (e.meta.order, e.meta.title)):
        for t in e.meta.tags:
            by_id.setdefault(tag_id(t), (t, []))[1].append(e)
    return sorted(by_id.values(), key=lambda item: item[0].lower())


def render(
    explainers: list[Explainer],
    runs: dict[str, RunResult],
    results: ResultsTable,
    docs_dir: Path,
    *,
    root: Path,
    banners: dict | None = None,
) -> list[SiteError]:
    """Write every page under ``docs_dir`` (a staging folder); return the problems found.

    ``banners`` maps a slug to the ``build.NumbersProblem`` that ``serve`` shows at the top of
    its page (cited numbers that drifted from the accepted ones).
    """
    banners = banners or {}
    env = make_environment(explainers)
    errors: list[SiteError] = []
    docs_dir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(TEMPLATES / "assets", docs_dir / "assets", dirs_exist_ok=True)
    shutil.copyfile(TEMPLATES / "docs-README.md", docs_dir / "README.md")  # committed; MkDocs skips it
    pages = {}
    for e in explainers:
        run = runs.get(e.slug)
        if run is None:
            continue  # its run failed; that error is already reported
        try:
            pages[e.slug] = _render_explainer(env, e, run, results, docs_dir / "explainers" / e.slug, root,
                                              banner=banners.get(e.slug))
        except SiteError as err:
            errors.append(err)
    ordered = sorted(explainers, key=lambda e: (e.meta.order, e.meta.title))
    index = env.get_template("index.md.j2").render(explainers=ordered, has_results=results.exists)
    (docs_dir / "index.md").write_text(index, encoding="utf-8")
    try:
        audits = audit_conventions(root)
    except ValueError as err:  # faircode's ManifestError: a manifest the glossary cannot read
        errors.append(ConfigError(f"glossary: {err}"))
        audits = []
    context = {"terms": TERMS, "audits": audits, "tags": _tags(explainers)}
    for name in READER_PAGES:
        (docs_dir / name).mkdir(exist_ok=True)
        text = env.get_template(f"{name}.md.j2").render(**context)
        (docs_dir / name / "index.md").write_text(text, encoding="utf-8")
    try:
        _render_results_page(env, results, docs_dir, root, slugs={e.slug for e in explainers})
    except ValueError as err:  # a results file without the columns the page shows
        errors.append(ConfigError(f"{results.path.parent.name}/{results.path.name}: {err}"))
    return errors


def _render_explainer(env, e: Explainer, run: RunResult, results: ResultsTable, out: Path, root: Path,
                      *, banner=None) -> Page:
    out.mkdir(parents=True, exist_ok=True)
    placed: dict[int, str] = {}

    def figure(n: int, alt: str | None = None) -> Markup:
        if not 1 <= n <= len(run.figures):
            raise CheckError(f"figure({n}): the run drew {len(run.figures)} figure(s)", explainer=e.display_path)
        if alt is None or not str(alt).strip():
            raise CheckError(f"figure({n}): alt text must say what the figure shows", explainer=e.display_path)
        if n in placed:
            raise CheckError(f"figure({n}) is placed twice; place each figure once", explainer=e.display_path)
        placed[n] = alt
        svg, png = run.figures[n - 1], run.pngs[n - 1]
        shutil.copyfile(svg, out / svg.name)
        shutil.copyfile(png, out / png.name)
        return Markup(
            '<figure class="fc-figure">\n<picture>'
            f'<source srcset="{svg.name}" type="image/svg+xml">'
            f'<img src="{png.name}" alt="{escape(alt)}" loading="lazy"></picture>\n'
            f"<figcaption>{escape(alt)}</figcaption>\n</figure>"
        )

    def result(**key) -> dict:
        return results.lookup(**key)

    template = env.get_template(e.display_path)
    try:
        prose = template.render(**run.values, figure=figure, result=result)
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
    (out / f"{e.slug}.ipynb").write_text(_notebook(e, code_rel, root), encoding="utf-8")
    code_section = env.get_template("code.md.j2").render(
        code=e.code, code_rel=code_rel, stdout=run.stdout, fence=_fence(e.code),
        stdout_html=terminal_html(run.stdout.rstrip("\n")),
    )
    # The blanked-out front matter and code lines kept Jinja's line numbers right; drop them now.
    prose = re.sub(r"\n{3,}", "\n\n", prose).replace(CODE_PLACEHOLDER, code_section, 1)
    facts = _reproducibility(run, root)
    related = [s for s in e.meta.related if s != e.slug]
    if e.slug != ENTRANCE and ENTRANCE in env.globals["titles"] and ENTRANCE not in related:
        related.insert(0, ENTRANCE)  # every page leads back to the entrance of the series
    page = env.get_template("explainer.md.j2").render(e=e, meta=e.meta, prose=prose, run=run, facts=facts,
                                                      code_rel=code_rel, banner=banner, related=related,
                                                      terms=terms_used(prose))
    (out / "index.md").write_text(page, encoding="utf-8")
    return Page(slug=e.slug, markdown=page, cited=tuple(sorted(jinja2.meta.find_undeclared_variables(
        env.parse(e.prose)) & set(run.values))))


def _render_results_page(env, results: ResultsTable, docs_dir: Path, root: Path, *, slugs: set[str]) -> None:
    """The results explorer (see ``results_page``): table, per-audit figures, the CSV itself.

    Made once per version of the results file and of the code and template that make it, then
    copied from ``.cache/fairsite-results``: drawing the figures and tabulating every row is most
    of a re-render's time, and a prose edit should not pay for it.
    """
    if not results.exists:
        return
    h = hashlib.sha256()
    performance = results.path.with_name("results_performance.csv")
    by_group = results.path.with_name(BY_GROUP_FILE)
    for part in (results.path.read_bytes(), performance.read_bytes() if performance.exists() else b"",
                 by_group.read_bytes() if by_group.exists() else b"",
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
    shutil.copytree(cache, docs_dir / "results", dirs_exist_ok=True)


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


def _notebook(e: Explainer, code_rel: str, root: Path) -> str:
    """The explainer's notebook, converted once per version of its code and header (jupytext is
    slow to import and run; a prose edit should not pay for it)."""
    parts = (e.code, e.meta.title, e.meta.subtitle, e.meta.summary, code_rel,
             Path(notebook.__file__).read_text(), metadata.version("jupytext"))
    key = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]
    cached = root / ".cache" / "fairsite-notebooks" / f"{e.slug}-{key}.ipynb"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        for old in cached.parent.glob(f"{e.slug}-*.ipynb"):
            old.unlink()
        text = notebook_json(e.code, title=e.meta.title, subtitle=e.meta.subtitle, summary=e.meta.summary,
                             code_rel=code_rel)
        tmp = cached.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.rename(cached)
    return cached.read_text(encoding="utf-8")


def _reproducibility(run: RunResult, root: Path) -> dict:
    data = []
    for rel in run.data_files:
        p = root / rel
        if p.exists():
            data.append((rel, hashlib.sha256(p.read_bytes()).hexdigest()))
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
