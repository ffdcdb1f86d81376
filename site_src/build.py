"""The site build, stage by stage: collect -> extract -> execute -> check -> render -> site.

Like ``mkdocs build``, everything is gathered and checked before anything visible is written:
pages and site go to a staging folder and replace ``docs/`` and ``site/`` only at the end, and
``explainers/code/*.py`` is written only then too.

What ``build`` publishes is what ``check`` accepts: a cited number that moved beyond its
tolerance from the accepted one (``explainers/<slug>.numbers.json``, judged by
``snapshot.compare``) fails the build, naming ``fairsite accept SLUG``. An explainer with no
accepted numbers yet (a new one from ``fairsite new``) builds with a note. ``serve`` keeps
serving instead, with a banner at the top of each affected page.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from site_src import build_inputs, filestate, provenance
from site_src.checking.check import Checked, Checker, NumbersMode
from site_src.checking import published, snapshot
from site_src.errors import BuildFailed, ConfigError, ExecutionError, SiteError
from site_src.execution import cache, servers
from site_src.execution._forkserver import _ForkServer
from site_src.execution.execute import OnRunDone, OnRunStart, RunResult, execute
from site_src.publishing import linkcheck
from site_src.publishing.mkdocs_site import (SiteBuild, build_lock, build_site, edited_outputs,
                                             last_shown_facts, outputs_current, record_outputs, site_config, staging,
                                             swap_in, write_manifest)
from site_src.publishing.preconvert import Preconverter, warm_mkdocs
from site_src.rendering.render import PageWriter, render
from site_src.rendering.results_page import warm_results_page
from site_src.rendering.results import ResultsTable
from site_src.sources.collect import Explainer, check_slugs, collect
from site_src.sources.extract import CodeFile, extract, publish, stale_code_files
from site_src.sources.reports import Report, collect_reports, manifest_problems


OnStage = Callable[[str], None]  # given the name of each stage after execute as it starts ("mkdocs")


@dataclass(frozen=True)
class BuildOptions:
    """How a build runs. The defaults are ``fairsite build``'s rules; `check_options` gives
    ``fairsite check``'s.

    ``force_all`` and ``force`` re-run explainers even when their cached run still holds:
    ``fairsite build --force`` (all) and ``--force SLUG ...`` (those named). The callbacks are
    the progress display's.
    """

    root: Path = Path(".")
    jobs: int = 1
    use_cache: bool = True  # False in `check`: every explainer runs fresh, every page is rendered
    force_all: bool = False  # re-run every explainer even if cached
    force: frozenset[str] = frozenset()  # re-run these slugs even if cached
    strict: bool = True  # mkdocs --strict: its warnings fail the build
    verify_generated: bool = False  # `check`: committed explainers/code/*.py must match the sources
    link_check: bool = False  # `check`: no broken link or anchor, nothing loaded from outside the site
    numbers: NumbersMode = NumbersMode.BUILD
    accept: frozenset[str] = frozenset()  # with NumbersMode.ACCEPT: the slugs to accept (empty: all)
    on_run_done: OnRunDone | None = None  # given each RunResult or ExecutionError as it finishes
    on_run_start: OnRunStart | None = None  # given the slug of each run as it starts
    on_stage: OnStage | None = None  # given the name of each later stage as it starts
    keep_fork_server: bool = False  # `serve`: the fork server outlives the build, for the next one
    # A fork server the caller started for this build (`start_server_early`: the command line starts
    # it before importing the build); used if every explainer runs, and closed by the build either way.
    fork_server: _ForkServer | None = None

    def __post_init__(self):
        if not isinstance(self.numbers, NumbersMode):
            raise TypeError(f"BuildOptions.numbers must be a NumbersMode ({', '.join(m.name for m in NumbersMode)}), "
                            f"got {self.numbers!r}")

    @property
    def plain(self) -> bool:
        """A plain ``fairsite build``: the only build whose state the next one may trust unread."""
        return (self.use_cache and self.numbers is NumbersMode.BUILD and not self.force_all and not self.force
                and not self.accept and not self.link_check and not self.verify_generated)


def check_options(root: Path, *, jobs: int = 1, on_run_done: OnRunDone | None = None,
                  on_run_start: OnRunStart | None = None, on_stage: OnStage | None = None) -> BuildOptions:
    """The rules of ``fairsite check`` (and of ``publish``, which publishes only what passed them):
    every explainer fresh, generated code up to date, cited numbers equal to the accepted ones,
    strict MkDocs, no broken link, nothing loaded from outside the site. The callbacks are the
    progress display's (see `BuildOptions`)."""
    return BuildOptions(root=root, jobs=jobs, on_run_done=on_run_done, on_run_start=on_run_start, on_stage=on_stage,
                        use_cache=False, verify_generated=True, numbers=NumbersMode.CHECK, link_check=True)


@dataclass
class BuildReport:
    """What a build did: see `build`."""

    runs: list[RunResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # MkDocs' warnings
    notes: list[str] = field(default_factory=list)  # unaccepted (or, in serve, drifted) numbers
    accepted: list[str] = field(default_factory=list)  # snapshot files written by `accept`
    skipped: bool = False  # nothing changed: docs/ and site/ were already up to date
    facts: provenance.BuildFacts | None = None  # commit, date, digests (site_src.provenance)
    manifest: dict | None = None  # what site/fairsite-manifest.json holds (None when skipped)
    pages_rendered: tuple[str, ...] = ()  # explainer pages rendered; the others came from the page cache
    # The pages MkDocs converted again when it built incrementally (docs/-relative); None: all of them.
    pages_converted: frozenset[str] | None = None
    words: dict[str, int] = field(default_factory=dict)  # each explainer's visible words (the word budget)
    # Sources saved again while the build ran: their pages show what the build read (see `_edited`).
    edited: list[str] = field(default_factory=list)
    # What changed in what every page shows of the build's facts since the last build (commit,
    # uncommitted changes, date...; `provenance.shown_change`), or None: why every page re-rendered.
    shown_change: str | None = None
    # Files of docs/ edited by hand since the last build, which this one replaced (`edited_outputs`).
    docs_edited: list[str] = field(default_factory=list)
    wall_s: float = 0.0


def build(options: BuildOptions) -> BuildReport:
    """Build the site: collect, extract, execute, check, render, site.

    Everything is gathered and checked before anything visible is written, so a failed build
    leaves the repository as it found it.

    Parameters
    ----------
    options : BuildOptions
        The repository root, the job count and the rules of the command (``build``, ``serve``,
        ``accept`` or, through `check_options`, ``check``).

    Returns
    -------
    BuildReport
        Every explainer's run (fresh or from the cache), MkDocs' warnings, notes on cited
        numbers (none accepted yet; drift in ``serve``), the accepted-numbers files written, the
        build's facts (commit, date, digests) and what ``site/fairsite-manifest.json`` holds.
        ``skipped`` is true when nothing the pages are made of changed and ``docs/`` and
        ``site/`` were left as they were.

    Raises
    ------
    BuildFailed
        Listing every problem found (runs that failed, ``checks:`` that failed, bare numbers in
        the prose, cited numbers that drifted, template mistakes, MkDocs errors in strict mode,
        broken links in ``check``); nothing is written.
    ConfigError
        An explainer's front matter is invalid, or ``force``/``accept`` names no explainer.
    SiteError
        Another build holds the lock on the repository.

    Notes
    -----
    What is written where, on success only:

    - ``docs/`` (the Markdown pages) and ``site/`` (the static site, with
      ``fairsite-manifest.json``), each replaced whole from a staging folder;
    - ``explainers/code/<slug>.py``, the runnable code of each explainer (rewritten only if it
      changed);
    - ``explainers/<slug>.numbers.json`` for the explainers accepted (``NumbersMode.ACCEPT``);
    - under ``.cache/``: each run's cache entry and figures (``fairsite/<slug>/``, stored as each
      run succeeds, whether or not the build does), the file digests, the checks that passed,
      the page cache, and the metadata the next ``fairsite build`` compares to say "nothing
      changed" at once (``site_src.filestate``).
    """
    started = time.perf_counter()
    root = Path(options.root).resolve()
    cache_dir = root / ".cache" / "fairsite"
    with build_lock(root), contextlib.ExitStack() as later:
        docs_edited = edited_outputs(root)  # before anything is written: what this build will replace
        filestate.forget(root)  # whatever this build does, the last record may no longer hold
        # A build in which every explainer runs starts its fork server first (its imports overlap
        # collect and extract) and checks and renders each page as its run ends (`_PageStream`).
        every_run = (options.force_all or not options.use_cache) and not options.keep_fork_server
        with servers.early_server(root, cache_dir, every_run=every_run, started=options.fork_server) as early:
            explainers, sources, facts = _collect(root, options, cache_dir)
            code_files, errors = _extract(sources, root / "explainers" / "code", options)
            pages = _Pages(root, options, sources, facts, cache_dir, streamed=every_run, later=later)
            runs, run_errors, published_problems = _execute(sources, code_files, pages, root=root, options=options,
                                                            early_server=early)
        errors += [p for e in run_errors for p in manifest_problems(e)]  # a report's bad manifest: its problems alone
        checked = _check(pages, sources, runs, published_problems, errors)
        errors += checked.errors
        # A serve banner is part of the page: the same inputs without it are another page.
        fingerprint = build_inputs.pages_fingerprint(root, sources, runs, facts,
                                                     banners=sorted(p.text for p in checked.banners.values()))
        filestate.save_digests(cache_dir)
        if not errors and options.use_cache and not options.link_check and outputs_current(root, fingerprint):
            # Nothing the pages are made of changed since the last build, and docs/ and site/ are
            # as it left them: rendering and MkDocs would write the same bytes again.
            accepted, edited = _finish(root, options, sources, code_files, runs, checked, facts)
            return BuildReport(runs=runs, notes=checked.notes, accepted=accepted, skipped=True, facts=facts,
                               edited=edited, wall_s=time.perf_counter() - started)
        pages_rendered = _render(pages, sources, runs, checked, errors)
        site, manifest = _site(root, pages.stage, runs, facts, options, converted=pages.converted)
        shown_before = _publish_outputs(root, pages.stage, fingerprint, site, facts)
        later.close()  # the staging folder (the previous docs/ and site/) goes before the state is recorded
        accepted, edited = _finish(root, options, sources, code_files, runs, checked, facts)
    return BuildReport(runs=runs, warnings=site.warnings, notes=checked.notes, accepted=accepted, facts=facts,
                       manifest=manifest, pages_rendered=pages_rendered, pages_converted=site.rebuilt,
                       words=site.words(), edited=edited, wall_s=time.perf_counter() - started, docs_edited=docs_edited,
                       shown_change=provenance.shown_change(shown_before, facts.shown(), root=root))


@contextlib.contextmanager
def _listed_with(errors: list[SiteError], runs: list[RunResult]) -> Iterator[None]:
    """A stage that stops on a problem (a results file it cannot read) fails the build with every
    problem found before it, not instead of them: a fresh user's summary named a broken results
    file and dropped an explainer that had run out of memory (issue 47)."""
    try:
        yield
    except SiteError as exc:
        if not errors:
            raise
        found = exc.errors if isinstance(exc, BuildFailed) else [exc]
        raise BuildFailed(_cause_first(_after_their_manifest(errors + found)), runs=runs) from None


# Within one explainer's problems, what comes first is what the others follow from: a run that
# failed (nothing after it was computed), then a source the build could not read or render (a
# template naming a value the run did not define), then what was checked against the run (a
# cited number "no longer cited" because of that template typo, a `checks:` entry).
_CAUSE_RANK = {"execution": 0, "config": 1, "template": 1, "check": 2}


# A problem of an audit manifest as faircode names it, "audits/<slug>/audit.yaml:59: groups...".
_MANIFEST_PROBLEM = re.compile(r"audits/[^\s:]+\.ya?ml(?::\d+)?: [^\n]+")


def _after_their_manifest(errors: list[SiteError]) -> list[SiteError]:
    """``errors`` with an audit manifest's problems found beside the runs (the data page loads
    every audit) first, and each run that stopped on the same problem said in one line, without
    its traceback and output: a fresh user read nine explainers' tracebacks of one typo in a
    manifest before the typo itself (issue 26)."""
    causes = {m[0] for e in errors if isinstance(e, ConfigError) and e.explainer is None
              for m in _MANIFEST_PROBLEM.finditer(e.message)}
    if not causes:
        return errors
    first, rest = [], []
    for e in errors:
        found = {m[0] for m in _MANIFEST_PROBLEM.finditer(e.message)} & causes
        if isinstance(e, ExecutionError) and found:
            manifest = sorted(found)[0].split(":")[0]
            rest.append(ExecutionError(f"stopped on the problem of {manifest} above (its code raised ManifestError)",
                                       explainer=e.explainer, line=e.line))
        elif isinstance(e, ConfigError) and e.explainer is None and found:
            first.append(e)
        else:
            rest.append(e)
    return first + rest


def _cause_first(errors: list[SiteError]) -> list[SiteError]:
    """``errors`` with each explainer's problems together, at the place of its first one, cause
    first (`_CAUSE_RANK`): the stages find them in their own order (checks before the page is
    rendered), and a fresh user read "value X is no longer cited" before the template error that
    made it. Problems that name no explainer keep their places; the sort is stable."""
    first: dict[str, int] = {}
    for i, err in enumerate(errors):
        if err.explainer:
            first.setdefault(err.explainer, i)

    def key(item: tuple[int, SiteError]) -> tuple[int, int]:
        i, err = item
        return (first[err.explainer], _CAUSE_RANK.get(err.kind, 1)) if err.explainer else (i, 0)

    return [err for _, err in sorted(enumerate(errors), key=key)]


class _PageStream:
    """Stage 4 and the explainer pages of stage 5 while the runs go on, for a build in which every
    explainer runs (``check``, ``build --force``): with ``--jobs 1`` a core is idle while an
    explainer's code runs, and checking and rendering afterwards held up the site (issue 26).

    A context manager around the runs: entered, a thread of its own sets the pages up
    (`PageWriter`: assets, data page), imports what MkDocs will need (`preconvert.warm_mkdocs`) and writes
    and converts the pages that need no run (`_pages_without_runs`); `on_done`
    (the runs' callback) queues the explainer's check (`Checker.one`) and page as each run ends,
    and MkDocs' conversion of that page (`preconvert.Preconverter`: stage 6 begun, used by MkDocs
    only where converting the page again would give the same).
    `wait` returns the `PageWriter` once all is done, raising what the thread raised; the pages
    and what the checks found are those of the stages run one after the other, in any order of
    runs. Leaving it stops the thread (after its current page) before the staging folder goes.
    """

    def __init__(self, explainers: list[Explainer], results: ResultsTable, docs_dir: Path, checker: Checker, *,
                 root: Path, facts: provenance.BuildFacts, options: BuildOptions):
        self._by_slug = {e.slug: e for e in explainers}
        self._checker, self._user_done = checker, options.on_run_done
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fairsite-pages")
        self._writer = self._pool.submit(PageWriter, explainers, results, docs_dir, root=root, facts=facts,
                                         reuse_pages=options.use_cache)
        self._pool.submit(warm_mkdocs)
        self._done: list = []
        # MkDocs' conversion of each explainer page, done here too, with the config MkDocs will use.
        self._preconverter = Preconverter(lambda: site_config(root, docs_dir, docs_dir.parent / "site",
                                                              strict=options.strict, facts=facts))
        self._done.append(self._pool.submit(self._pages_without_runs))

    def __enter__(self) -> _PageStream:
        return self

    def __exit__(self, *exc) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def on_done(self, outcome: RunResult | ExecutionError) -> None:
        """The runs' ``on_done``: the progress display's callback, then this run's check and page queued."""
        if self._user_done:
            self._user_done(outcome)
        if isinstance(outcome, RunResult) and outcome.slug in self._by_slug:
            self._done.append(self._pool.submit(self._page, self._by_slug[outcome.slug], outcome))

    def _page(self, e: Explainer, run: RunResult) -> None:
        part = self._checker.one(e, run)
        self._writer.result().explainer(e, run, banner=part.banners.get(e.slug))
        self._preconvert(f"explainers/{e.slug}/index.md")

    def _pages_without_runs(self) -> None:
        """The pages that need no run (the data page, written when the writer was made; the
        reader's pages and the results page), written and converted while the runs go on: MkDocs
        then converts only the home page and the tag index after the last run (issue 26)."""
        for src_uri in self._writer.result().pages_without_runs():
            self._preconvert(src_uri)

    def _preconvert(self, src_uri: str) -> None:
        try:
            self._preconverter.page(src_uri)
        except Exception:  # noqa: BLE001 - MkDocs converts the page itself, and reports what it meets
            pass

    @property
    def converted(self) -> Preconverter:
        """The explainer pages converted as their runs ended (`preconvert.Preconverter`), once `wait` has returned."""
        return self._preconverter

    def wait(self) -> PageWriter:
        writer = self._writer.result()
        for future in self._done:
            future.result()
        return writer


def _collect(root: Path, options: BuildOptions,
             cache_dir: Path) -> tuple[list[Explainer], list[Explainer], provenance.BuildFacts]:
    """Stage 1: the explainers, and the explainers with the audit reports (reports/<slug>/: pages whose
    code their manifest generates; from here on each is run, checked and rendered as an explainer
    is); every name `--force` and `accept` give must be one of them. Every audit manifest is
    validated (`_check_audits`), and the build's facts (commit, date, digests) are read."""
    filestate.load_digests(cache_dir)
    explainers = collect(root / "explainers")
    sources = [*explainers, *collect_reports(root, explainers)]
    check_slugs(sources, options.force | options.accept)
    cache_dir.mkdir(parents=True, exist_ok=True)
    _check_audits(root, passed=cache.PassedChecks(cache_dir, enabled=options.use_cache and not options.link_check))
    return explainers, sources, provenance.build_facts(root, [e.path for e in explainers])


def _extract(explainers: list[Explainer], code_dir: Path,
             options: BuildOptions) -> tuple[list[CodeFile], list[SiteError]]:
    """Stage 2: each explainer's code as the file readers run (written only once the build
    succeeds: to ``code_dir``, a report's to its folder); in ``check``, each committed file that
    differs from it is an error (the runs use what the sources say)."""
    stale = [SiteError(p) for p in stale_code_files(explainers, code_dir)] if options.verify_generated else []
    return extract(explainers), stale


def _execute(explainers: list[Explainer], code_files: list[CodeFile], pages: _Pages, *, root: Path,
             options: BuildOptions, early_server=None) -> tuple[list[RunResult], list[ExecutionError], list[SiteError]]:
    """Stage 3: run (or reuse) every explainer's code, with its front matter's limits and inputs.

    What depends on ``results/`` and ``data/`` alone is done beside the runs, in a thread: the
    results page is drawn (on a cold build most of the render stage) and the datasheets' published
    facts are counted (stage 4 reads them: ``published_facts``). Leaving the block waits for both.
    With ``pages.stream``, each run's outcome also goes to its ``on_done`` (its check and page)."""
    stream = pages.stream
    with ThreadPoolExecutor(max_workers=1) as beside:
        if stream is None:  # a stream writes the results page itself while the runs go on
            beside.submit(warm_results_page, [e for e in explainers if not isinstance(e, Report)], pages.results, root)
        published_facts = beside.submit(published.verify, root, use_cache=options.use_cache)
        runs = execute(
            code_files, root=root, cache_dir=root / ".cache" / "fairsite",
            timeouts={e.slug: e.meta.timeout for e in explainers}, memory={e.slug: e.meta.memory for e in explainers},
            inputs={e.slug: e.meta.inputs for e in explainers}, jobs=options.jobs, on_start=options.on_run_start,
            expected_warnings={e.slug: [w.match for w in e.meta.warnings] for e in explainers},
            use_cache=options.use_cache, force_all=options.force_all, force=options.force,
            on_done=stream.on_done if stream is not None else options.on_run_done,
            keep_server=options.keep_fork_server, early_server=early_server,
        )
        return (*runs, published_facts.result())


class _Pages:
    """The pages' side of a build: the results table they show, the checks of stage 4
    (`Checker`), the staging folder they are made in (`stage`, made at its first use: a build
    that writes nothing makes none) and, in a build in which every explainer runs (``streamed``),
    the `_PageStream` that checks and renders each page as its run ends."""

    def __init__(self, root: Path, options: BuildOptions, sources: list[Explainer], facts: provenance.BuildFacts,
                 cache_dir: Path, *, streamed: bool, later: contextlib.ExitStack):
        self._root, self._options, self._facts, self._later = root, options, facts, later
        self._stage: Path | None = None
        self._writer: PageWriter | None = None
        self.results = ResultsTable(root / "results" / "results_fairness.csv")
        self.checker = Checker(cache_dir, numbers=options.numbers, accept=options.accept, use_cache=options.use_cache)
        self.stream = (later.enter_context(_PageStream(sources, self.results, self.stage / "docs", self.checker,
                                                       root=root, facts=facts, options=options))
                       if streamed else None)

    @property
    def stage(self) -> Path:
        """The staging folder (``docs/`` and ``site/`` are made there and swapped in at the end)."""
        if self._stage is None:
            self._stage = self._later.enter_context(staging(self._root))
        return self._stage

    @property
    def converted(self) -> Preconverter | None:
        """The pages MkDocs' conversion was done for as their runs ended (`_PageStream.converted`)."""
        return self.stream.converted if self.stream is not None else None

    def wait(self) -> None:
        """Wait for the stream's checks and pages (raising what its thread raised)."""
        if self.stream is not None:
            self._writer = self.stream.wait()

    def render(self, sources: list[Explainer], runs: list[RunResult],
               banners: dict[str, snapshot.NumbersProblem]) -> tuple[list[SiteError], tuple[str, ...]]:
        """Stage 5: every page into the staging folder's ``docs/`` (the stream's explainer pages
        are written already); the problems found and the explainer pages rendered."""
        by_slug = {r.slug: r for r in runs}
        if self._writer is not None:
            return self._writer.finish(by_slug, banners=banners)
        return render(sources, by_slug, self.results, self.stage / "docs", root=self._root, facts=self._facts,
                      banners=banners, reuse_pages=self._options.use_cache)


def _check(pages: _Pages, sources: list[Explainer], runs: list[RunResult], published_problems: list[SiteError],
           errors: list[SiteError]) -> Checked:
    """Stage 4 (`Checker`), merged in the explainers' order once the stream's pages are done;
    a problem that stops it fails the build with ``errors``, the problems found before it."""
    with _listed_with(errors, runs):
        pages.wait()
        return pages.checker.merge(sources, runs, published_problems)


def _render(pages: _Pages, sources: list[Explainer], runs: list[RunResult], checked: Checked,
            errors: list[SiteError]) -> tuple[str, ...]:
    """Stage 5 (`_Pages.render`); the build fails here, before MkDocs, with every problem found
    so far (``errors``: the runs', the checks', the pages'), each explainer's cause first."""
    with _listed_with(errors, runs):
        problems, pages_rendered = pages.render(sources, runs, checked.banners)
    errors = errors + problems
    if errors:
        raise BuildFailed(_cause_first(_after_their_manifest(errors)), runs=runs)
    return pages_rendered


def _publish_outputs(root: Path, stage: Path, fingerprint: str, site: SiteBuild,
                     facts: provenance.BuildFacts) -> dict | None:
    """The staged ``docs/`` and ``site/`` swapped in whole, and what they were made of recorded for
    the next build; returns the facts the previous pages showed (read before the record is replaced)."""
    swap_in(stage, root)
    shown_before = last_shown_facts(root)
    record_outputs(root, fingerprint, site, facts=facts)
    return shown_before


def _site(root: Path, stage: Path, runs: list[RunResult], facts: provenance.BuildFacts,
          options: BuildOptions, *, converted: Preconverter | None = None) -> tuple[SiteBuild, dict]:
    """Stage 6: MkDocs turns the staged ``docs/`` into ``site/`` (after an edit, only the pages
    that changed: ``publishing.incremental``; the explainer pages ``converted`` as their runs
    ended are not converted again, `_PageStream`); what MkDocs did and the site's manifest. In
    ``check``, every page is built, and a broken link or anchor, or anything fetched from outside
    the site, fails: the site must work opened from a local server with no network."""
    if options.on_stage:
        options.on_stage("mkdocs")
    site = build_site(root, stage / "docs", stage / "site", strict=options.strict, facts=facts,
                      incremental_ok=options.use_cache and not options.force_all and not options.link_check,
                      converted=converted)
    manifest = write_manifest(stage / "site", facts, runs={r.slug: r.run_id for r in runs})
    if options.link_check:
        site_problems = linkcheck.broken_links(stage / "site", site_url=facts.site_url) + [
            f"{p}: loads from outside the site" for p in linkcheck.external_loads(stage / "site")]
        if site_problems:
            raise BuildFailed([SiteError(p) for p in site_problems], runs=runs)
    return site, manifest


def _finish(root: Path, options: BuildOptions, explainers: list[Explainer], code_files: list[CodeFile],
            runs: list[RunResult], checked: Checked, facts: provenance.BuildFacts) -> tuple[list[str], list[str]]:
    """What only a build that succeeded writes: the generated code, the checks that passed (its
    pages were made from what passed), the accepted numbers and the state the next build
    compares (`build_inputs.record_state`, left out when a source was saved again meanwhile: `_edited`).
    Returns the accepted numbers' files and the sources edited while the build ran."""
    publish(code_files, root / "explainers" / "code")  # rewritten only where the text changed (reports' too)
    checked.passed.save()
    accepted = [str(snapshot.save(e, run)) for e, run in checked.to_accept]
    edited = _edited(explainers)
    if not edited:
        build_inputs.record_state(root, plain=options.plain, explainers=explainers, runs=runs, notes=checked.notes,
                                  facts=facts)
    return accepted, edited


def _edited(explainers: list[Explainer]) -> list[str]:
    """The sources whose bytes differ now from those the build read (saved again while it ran).

    Their pages show the version read; the pages and the build's fingerprint are keyed on those
    bytes (`Explainer.digest`), and no record of the files' state is left for this build (a fresh
    user's edit, saved 8 s into a build, was taken as built: the next build said "nothing changed").
    """
    return [e.display_path for e in explainers if filestate.hash_file(e.path) != e.digest]


def _check_audits(root: Path, *, passed: cache.PassedChecks) -> None:
    """Stage 1 also reads every ``audits/*/audit.yaml``: a manifest that does not validate stops the
    build here, named once with all its problems, before every explainer, published fact and page
    that loads the audit fails on it in its own words (a bad label once made 42 problems).

    A pass is remembered under the digest of every manifest, every data file and faircode's code
    (``passed``; never in ``check``): after an edit of prose the build neither validates again nor
    imports pandas to do it."""
    manifests = sorted((root / "audits").glob("*/audit.yaml"))
    data = sorted(p for p in (root / "data").rglob("*") if p.is_file()) if (root / "data").is_dir() else []
    code = sorted(build_inputs.faircode_dir().rglob("*.py"))
    key = filestate.digest_parts(f"{p} {filestate.hash_file(p)}" for p in [*manifests, *data, *code])
    if passed.holds("audits", key):
        return
    from faircode.manifest import ManifestError, load_manifest

    problems: list[SiteError] = []
    for path in manifests:
        try:
            load_manifest(path, root=root)
        except ManifestError as err:  # one problem each: "1 problem(s)" over "2 problems in audit manifest" misread
            problems += [ConfigError(p) for p in err.problems]
        except OSError as err:
            problems.append(ConfigError(str(err)))
    if problems:
        raise BuildFailed(problems)
    passed.add("audits", key)
    passed.save()
