"""Stage 5, render: Jinja templates turn each explainer and its run into MkDocs pages.

``render`` writes the whole ``docs/`` folder: the explainer pages (``pages``), the home page and
the tag index, the reader's pages (glossary, checklist, common mistakes, the "Check a gap"
calculator), the data page (``data_page``: the audits and their datasets) and the results page
(``results_page``). The environment they share is ``environment.make_environment``; the page
furniture lives in ``site_src/templates/``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import NamedTuple

import jinja2

from site_src.errors import ConfigError, SiteError
from site_src.execution.execute import RunResult
from site_src.provenance import BuildFacts, source_config
from site_src.rendering.calculator import (CALCULATOR_PAGE, check_gap, check_groups, check_p_values, power_explorer,
                                           threshold_explorer)
from site_src.rendering.environment import TEMPLATES, make_environment
from site_src.rendering.data_page import PAGE as DATA_PAGE, render_data_page
from site_src.rendering.glossary import TERMS, audit_conventions
from site_src.rendering.pages import explainer_page
from site_src.rendering.report_page import PAGE_ORDER, report_page
from site_src.rendering.references import BIBLIOGRAPHY, bibliography_digest, load_bibliography, reference_link
from site_src.rendering.results import ResultsTable
from site_src.rendering.results_page import render_results_page
from site_src.sources.collect import Explainer
from site_src.sources.reports import REPORTS, Report

__all__ = ["READER_PAGES", "PageWriter", "Rendered", "render"]

# Reader's pages beside the explainers, each ``<name>.md.j2`` written to ``docs/<name>/index.md``.
READER_PAGES = ("glossary", "checklist", "mistakes", CALCULATOR_PAGE)  # the tag index is Material's (tags.md)


class Rendered(NamedTuple):
    """What ``render`` did: the problems it found, and the explainer pages it rendered."""

    problems: list[SiteError]
    pages_rendered: tuple[str, ...]  # slugs; the other explainer pages came from the page cache


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
    """Write every page of the site under ``docs_dir``, a staging folder MkDocs then builds.

    Parameters
    ----------
    explainers : list of Explainer
        Every collected explainer (``site_src.sources.collect``) and report
        (``site_src.sources.reports.Report``, written to ``reports/<slug>/`` by
        ``rendering.report_page``, and listed on ``reports/index.md``), in any order; the home
        page lists the explainers by their ``order`` and title.
    runs : dict
        ``{slug: RunResult}`` of the runs that succeeded (``site_src.execution``). An explainer
        without a run gets no page (its failure is already reported), but still its card.
    results : ResultsTable
        ``results/results_fairness.csv``, cited by ``result(...)`` in prose and shown on the
        results page (no results page when the file does not exist).
    docs_dir : Path
        The folder to write, created if missing: ``explainers/<slug>/`` per page, ``index.md``,
        ``tags.md``, ``glossary/``, ``checklist/``, ``mistakes/``, ``data/``, ``results/`` and ``assets/``.
    root : Path
        The repository root: ``mkdocs.yml`` (where the code lives), ``audits/`` (the glossary's
        conventions, the results page's data files) and ``.cache/`` (pages, results page, Jinja).
    facts : BuildFacts
        The build's commit and date (``site_src.provenance``), which every page prints.
    banners : dict, optional
        ``{slug: NumbersProblem}``: the banner ``serve`` shows at the top of a page whose cited
        numbers drifted from the accepted ones.
    reuse_pages : bool, default True
        Copy an explainer page from ``.cache/fairsite-pages`` when its inputs are those of a page
        the last build rendered (``pages.explainer_page``); False in ``check``.

    Returns
    -------
    Rendered
        ``problems``: every problem found, each a ``SiteError`` naming the explainer (and line),
        or the file, at fault; the build fails if there is any. ``pages_rendered``: the slugs of
        the explainer pages rendered, not copied from the cache.

    Raises
    ------
    OSError
        ``docs_dir`` or the cache cannot be written. Problems of the sources are returned, not raised.
    """
    writer = PageWriter(explainers, results, docs_dir, root=root, facts=facts, reuse_pages=reuse_pages)
    banners = banners or {}
    for e in explainers:
        if e.slug in runs:
            writer.explainer(e, runs[e.slug], banner=banners.get(e.slug))
    return writer.finish(runs)


class PageWriter:
    """`render` in steps, for a build that renders each explainer's page as its run ends.

    Made (in the thread that will call the rest), it sets up the pages' environment and writes
    what needs no run: the assets and the data page (which gives the worked examples their
    ``scenario(slug)`` sentence, so it comes first). `explainer` writes one explainer's page;
    `pages_without_runs` the reader's pages and the results page, which need no run either (a
    build that runs every explainer writes them while the runs go on); `finish` writes the home
    page and the tag index (and those two, if not written yet), and returns what `render` returns. The pages are the same bytes in any order of `explainer`
    calls: a page depends only on its explainer, its run and what is set up here, and `finish`
    lists the problems in the explainers' order.

    Parameters
    ----------
    explainers, results, docs_dir, root, facts, reuse_pages
        As for `render`.
    """

    def __init__(self, explainers: list[Explainer], results: ResultsTable, docs_dir: Path, *, root: Path,
                 facts: BuildFacts, reuse_pages: bool = True):
        # An explainer's page and a report's are each written as its run ends; the home page, the
        # reading order and the results page are the explainers'; the reports' index is theirs.
        self.sources, self.results, self.docs_dir = explainers, results, docs_dir
        self.explainers = [e for e in explainers if not isinstance(e, Report)]
        self.reports = [e for e in explainers if isinstance(e, Report)]
        self.root, self.facts, self.reuse = Path(root), facts, reuse_pages
        self.env: jinja2.Environment | None = None
        self._failed: Rendered | None = None  # set up failed: nothing else is written
        self._problems: list[SiteError] = []
        self._pages: dict[str, tuple[list[SiteError], bool | None]] = {}  # slug -> problems, rendered (None: no page)
        self._without_runs: list[SiteError] | None = None  # problems of `pages_without_runs`, once written
        env = make_environment(self.explainers, reports=self.reports, bytecode_dir=self.root / ".cache" / "fairsite-jinja")
        try:
            # Every page says where its code lives and which commit it was built from; explainer
            # prose links a worked example to the calculator with check_gap(...) (check_groups,
            # check_p_values for the other boxes) and places the
            # interactive figures with power_explorer(...) and threshold_explorer(...).
            env.globals.update(build=facts, source=source_config(root), check_gap=check_gap,
                               check_groups=check_groups, check_p_values=check_p_values,
                               power_explorer=power_explorer, threshold_explorer=threshold_explorer)
        except ValueError as err:
            self._failed = Rendered([ConfigError(str(err))], ())
            return
        # The one bibliography the prose cites by key (cite(...), further_reading(...)).
        bib_path = self.root / "explainers" / BIBLIOGRAPHY
        try:
            bibliography = load_bibliography(bib_path)
            env.globals.update(bibliography=bibliography, bibliography_digest=bibliography_digest(bib_path),
                               reference=lambda key: reference_link(bibliography, key))
        except ConfigError as err:
            self._failed = Rendered([err], ())
            return
        docs_dir.mkdir(parents=True, exist_ok=True)
        shutil.copytree(TEMPLATES / "assets", docs_dir / "assets", dirs_exist_ok=True)
        shutil.copyfile(TEMPLATES / "docs-README.md", docs_dir / "README.md")  # committed; MkDocs skips it
        # The data page first: it gives the worked examples their `scenario(slug)` sentence.
        self._problems = render_data_page(env, docs_dir, root)
        self.env = env

    def explainer(self, e: Explainer, run: RunResult, *, banner=None) -> None:
        """Write ``e``'s page from its ``run`` (or copy it from the page cache; see `render`),
        with the serve ``banner`` if any; a problem in its prose is kept for `finish`."""
        if self.env is None:
            return
        try:
            if isinstance(e, Report):
                rendered = report_page(self.env, e, run, self.docs_dir / REPORTS / e.slug, self.root, facts=self.facts,
                                       banner=banner, reuse=self.reuse)
            else:
                rendered = explainer_page(self.env, e, run, self.results, self.docs_dir / "explainers" / e.slug,
                                          self.root, facts=self.facts, banner=banner, reuse=self.reuse)
            self._pages[e.slug] = ([], rendered)
        except SiteError as err:
            self._pages[e.slug] = ([err], None)

    def finish(self, runs: dict[str, RunResult], *, banners: dict | None = None) -> Rendered:
        """Write the pages made from every explainer (home, tag index), the reader's pages and the
        results page; what `render` returns. An explainer of ``runs`` whose page `explainer`
        has not written yet is written first (with its ``banners`` entry)."""
        if self._failed is not None:
            return self._failed
        problems, written, rendered = list(self._problems), [], []
        for e in self.sources:
            if e.slug not in runs:
                continue  # its run failed; that error is already reported
            if e.slug not in self._pages:
                self.explainer(e, runs[e.slug], banner=(banners or {}).get(e.slug))
            found, was_rendered = self._pages[e.slug]
            problems += found
            if was_rendered is not None:
                written.append(e.slug)
                if was_rendered:
                    rendered.append(e.slug)
        _home_and_tags(self.env, self.explainers, {slug: runs[slug] for slug in written}, self.results, self.docs_dir,
                       reports=self.reports)
        if self._without_runs is None:
            self.pages_without_runs()
        return Rendered(problems + self._without_runs, tuple(rendered))

    def pages_without_runs(self) -> list[str]:
        """Write the reader's pages and the results page (their problems are kept for `finish`);
        return every page that needs no run, as paths under ``docs_dir``: those and the data page,
        written when the writer was made."""
        if self.env is None:
            return []
        env, docs_dir = self.env, self.docs_dir
        problems = _reader_pages(env, docs_dir, self.root)
        written = [f"{DATA_PAGE}/index.md", *(f"{name}/index.md" for name in READER_PAGES)]
        try:
            render_results_page(env, self.results, docs_dir, self.root, slugs={e.slug for e in self.explainers})
            written.append("results/index.md")
        except ValueError as err:  # a results file without the columns the page shows
            problems.append(ConfigError(f"{self.results.path.parent.name}/{self.results.path.name}: {err}"))
        self._without_runs = problems
        return written


def _home_and_tags(env: jinja2.Environment, explainers, paged_runs: dict, results, docs_dir: Path, *,
                   reports: list[Report] = ()) -> None:
    """The home page (a card per explainer, in reading order), the tag index and, when there are
    reports, their index (``reports/index.md``, first in their section of the navigation);
    ``paged_runs`` holds the runs of the explainers that have a page."""
    ordered = sorted(explainers, key=lambda e: (e.meta.order, e.meta.title))
    # Each home card shows its explainer's first figure, as sphinx-gallery's gallery does.
    thumbs = {slug: run.figures[0].name for slug, run in paged_runs.items() if run.figures}
    index = env.get_template("index.md.j2").render(explainers=ordered, has_results=results.exists, thumbs=thumbs,
                                                   has_reports=bool(reports))
    (docs_dir / "index.md").write_text(index, encoding="utf-8")
    if reports:
        (docs_dir / REPORTS).mkdir(exist_ok=True)
        text = env.get_template("reports.md.j2").render(reports=sorted(reports, key=lambda r: (r.meta.title, r.slug)),
                                                        order=PAGE_ORDER - 1)
        (docs_dir / REPORTS / "index.md").write_text(text, encoding="utf-8")
    (docs_dir / "tags.md").write_text(env.get_template("tags.md.j2").render(), encoding="utf-8")


def _reader_pages(env: jinja2.Environment, docs_dir: Path, root: Path) -> list[SiteError]:
    """The glossary, the checklist and the common mistakes; the problem of a manifest they cannot read."""
    problems = []
    try:
        audits = audit_conventions(root)
    except ValueError as err:  # faircode's ManifestError: a manifest the glossary cannot read
        problems.append(ConfigError(f"glossary: {err}"))
        audits = []
    for name in READER_PAGES:
        (docs_dir / name).mkdir(exist_ok=True)
        text = env.get_template(f"{name}.md.j2").render(terms=TERMS, audits=audits)
        (docs_dir / name / "index.md").write_text(text, encoding="utf-8")
    return problems
