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

import difflib
import hashlib
import importlib.util
import os
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from dataclasses import dataclass, field
from pathlib import Path

from site_src import filestate
from site_src.checking import check as check_stage
from site_src.checking import snapshot
from site_src.execution import cache
from site_src.publishing import linkcheck, provenance
from site_src.sources.collect import collect
from site_src.errors import BuildFailed, CheckError, ConfigError, SiteError
from site_src.execution.execute import RunResult, execute
from site_src.sources.extract import extract, publish, stale_code_files
from site_src.publishing.provenance import ENV_VARS
from site_src.rendering.render import render, warm_results_page
from site_src.rendering.results import ResultsTable
from site_src.publishing.mkdocs_site import (LAST_BUILD, build_lock, build_site, outputs_current, record_outputs, staging,
                            swap_in, write_manifest)


@dataclass(frozen=True)
class BuildOptions:
    root: Path = Path(".")
    jobs: int = 1
    use_cache: bool = True  # False in `check`: every explainer runs fresh, every page is rendered
    force: frozenset[str] | None = None  # re-run these slugs (empty: all) even if cached
    strict: bool = True  # mkdocs --strict: its warnings fail the build
    verify_generated: bool = False  # `check`: committed explainers/code/*.py must match the sources
    link_check: bool = False  # `check`: no broken link or anchor, nothing loaded from outside the site
    # Cited numbers against explainers/<slug>.numbers.json: "build" (drift fails; none accepted
    # yet is a note), "serve" (drift is a banner on the page and a note), "fail" (check: both
    # fail) or "accept" (record this run's numbers for the slugs in `accept`; empty: all).
    numbers: str = "build"
    accept: frozenset[str] = frozenset()
    on_run_done: object = None  # progress callback, given each RunResult or ExecutionError
    on_run_start: object = None  # progress callback, given the slug of each run as it starts
    on_stage: object = None  # progress callback, given the name of each later stage as it starts


def check_options(root: Path, *, jobs: int = 1, on_run_done=None, on_run_start=None, on_stage=None) -> BuildOptions:
    """The rules of ``fairsite check`` (and of ``publish``, which publishes only what passed them):
    every explainer fresh, generated code up to date, cited numbers equal to the accepted ones,
    strict MkDocs, no broken link, nothing loaded from outside the site. The callbacks are the
    progress display's (see `BuildOptions`)."""
    return BuildOptions(root=root, jobs=jobs, on_run_done=on_run_done, on_run_start=on_run_start, on_stage=on_stage,
                        use_cache=False, verify_generated=True, numbers="fail", link_check=True)


@dataclass
class BuildReport:
    runs: list[RunResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # MkDocs' warnings
    notes: list[str] = field(default_factory=list)  # unaccepted (or, in serve, drifted) numbers
    accepted: list[str] = field(default_factory=list)  # snapshot files written by `accept`
    skipped: bool = False  # nothing changed: docs/ and site/ were already up to date
    facts: provenance.BuildFacts | None = None  # commit, date, digests (site_src.publishing.provenance)
    manifest: dict | None = None  # what site/fairsite-manifest.json holds (None when skipped)
    pages_rendered: tuple[str, ...] = ()  # explainer pages rendered; the others came from the page cache
    wall_s: float = 0.0


def build(options: BuildOptions) -> BuildReport:
    """Build the site; raise ``BuildFailed`` listing every problem, leaving docs/ and site/ as they were."""
    started = time.perf_counter()
    if options.numbers not in _NUMBER_MODES:
        raise ValueError(f"numbers must be one of {_NUMBER_MODES}, got {options.numbers!r}")
    root = Path(options.root).resolve()
    errors: list[SiteError] = []
    with build_lock(root):
        filestate.forget(root)  # whatever this build does, the last record may no longer hold
        cache.load_digests(root / ".cache" / "fairsite")
        explainers = collect(root / "explainers")
        _check_slugs(explainers, options)
        code_dir = root / "explainers" / "code"
        facts = provenance.build_facts(root, [e.path for e in explainers])
        if options.verify_generated:
            # Reported; the runs below use what the sources say.
            errors += [SiteError(p) for p in stale_code_files(explainers, code_dir)]
        code_files = extract(explainers, code_dir)
        results = ResultsTable(root / "results" / "results_fairness.csv")
        # The results page depends on results/ alone: it is drawn while the explainers run (on a
        # cold build it is most of the render stage), and leaving the block waits for it.
        with ThreadPoolExecutor(max_workers=1) as drawing:
            drawing.submit(warm_results_page, explainers, results, root)
            runs, run_errors = execute(
                code_files, root=root, cache_dir=root / ".cache" / "fairsite",
                timeouts={e.slug: e.meta.timeout for e in explainers}, memory={e.slug: e.meta.memory for e in explainers},
                inputs={e.slug: e.meta.inputs for e in explainers}, jobs=options.jobs, on_start=options.on_run_start,
                use_cache=options.use_cache, force=set(options.force) if options.force is not None else None,
                on_done=options.on_run_done,
            )
        errors += run_errors
        by_slug = {r.slug: r for r in runs}
        notes, accepted, banners = [], [], {}
        passed = cache.PassedChecks(root / ".cache" / "fairsite",
                                    enabled=options.use_cache and options.numbers in ("build", "serve"))
        for e in explainers:
            run = by_slug.get(e.slug)
            if run is None:  # its run failed (reported above); its prose is still checked
                errors += check_stage.bare_numbers(e)
                continue
            key = passed.key(e.path, run.out_dir / cache.ENTRY, snapshot.snapshot_path(e))
            if passed.holds(e.slug, key):
                continue  # the same source, run and accepted numbers passed every check before
            found = check_stage.bare_numbers(e) + check_stage.run_checks(e, run)
            errors += found
            problem = _numbers(e, run, options, accepted)
            if problem is None:
                if not found:
                    passed.add(e.slug, key)
                continue
            # `accept` builds the explainers it does not accept as `build` does.
            if options.numbers == "fail" or (problem.kind != "unaccepted" and options.numbers != "serve"):
                errors.append(CheckError(problem.text, explainer=e.display_path))
            else:
                notes.append(f"{e.display_path}: {problem.text}")
                if problem.kind != "unaccepted":
                    banners[e.slug] = problem
        # A serve banner is part of the page: the same inputs without it are another page.
        fingerprint = _fingerprint(root, explainers, runs, facts, banners=sorted(p.text for p in banners.values()))
        cache.save_digests(root / ".cache" / "fairsite")
        if not errors and options.use_cache and not options.link_check and outputs_current(root, fingerprint):
            # Nothing the pages are made of changed since the last build, and docs/ and site/ are
            # as it left them: rendering and MkDocs would write the same bytes again.
            publish(code_files, code_dir)  # the same text; rewritten only if someone changed a file
            passed.save()
            accepted = [str(snapshot.save(e, run)) for e, run in accepted]
            _record_state(root, options, explainers, runs, notes)
            return BuildReport(runs=runs, notes=notes, accepted=accepted, skipped=True, facts=facts,
                               wall_s=time.perf_counter() - started)
        with staging(root) as stage:
            problems, pages_rendered = render(explainers, by_slug, results, stage / "docs", root=root, facts=facts,
                                              banners=banners, reuse_pages=options.use_cache)
            errors += problems
            if errors:
                raise BuildFailed(errors)
            if options.on_stage:
                options.on_stage("mkdocs")
            warnings = build_site(root, stage / "docs", stage / "site", strict=options.strict, facts=facts)
            manifest = write_manifest(stage / "site", facts, runs={r.slug: r.run_id for r in runs})
            # In `check`, a broken link or anchor, or anything fetched from outside the site, fails:
            # the site must work opened from a local server with no network.
            site_problems = []
            if options.link_check:
                site_problems = linkcheck.broken_links(stage / "site", site_url=facts.site_url) + [
                    f"{p}: loads from outside the site" for p in linkcheck.external_loads(stage / "site")]
            if site_problems:
                raise BuildFailed([SiteError(p) for p in site_problems])
            swap_in(stage, root)
            publish(code_files, code_dir)
            passed.save()  # only a build that succeeded: its pages rendered from what passed
            record_outputs(root, fingerprint)
        accepted = [str(snapshot.save(e, run)) for e, run in accepted]
        _record_state(root, options, explainers, runs, notes)
    return BuildReport(runs=runs, warnings=warnings, notes=notes, accepted=accepted, facts=facts,
                       manifest=manifest, pages_rendered=pages_rendered, wall_s=time.perf_counter() - started)


_NUMBER_MODES = ("build", "serve", "fail", "accept")


def _record_state(root: Path, options: BuildOptions, explainers, runs: list[RunResult], notes: list[str]) -> None:
    """After a plain successful ``build``, record the metadata of everything it consulted, so the
    next one can say "nothing changed" without importing or hashing anything (site_src.filestate)."""
    plain = (options.use_cache and options.numbers == "build" and options.force is None and not options.accept
             and not options.link_check and not options.verify_generated)
    # A run whose reads the cache cannot track re-runs on every build: never answered early.
    if not plain or any(r.untracked and e.meta.inputs is None for e, r in zip(explainers, runs)):
        return
    files: set[Path] = set()
    dirs: set[Path] = set()

    def tree(folder: Path) -> None:
        if folder.is_dir():
            dirs.add(folder)
            for path in folder.rglob("*"):
                (dirs if path.is_dir() else files).add(path)

    cache_dir = root / ".cache" / "fairsite"
    dirs.update({root / "explainers", root / "explainers" / "code", root / "audits", root / "results", cache_dir})
    for e in explainers:
        files.update({e.path, snapshot.snapshot_path(e), root / "explainers" / "code" / f"{e.slug}.py"})
        for pattern, matched in cache.declared_inputs(root, e.meta.inputs).items():
            files.update(root / p for p in matched)
            base = pattern.split("*")[0].split("?")[0].split("[")[0]
            tree(root / (base if base.endswith("/") or not base else os.path.dirname(base) or "."))
    for r in runs:
        tree(cache_dir / r.slug)
        files.update(root / p for p in r.modules + r.data_files)
    faircode_dir = Path(importlib.util.find_spec("faircode").origin).parent
    for folder in (Path(__file__).parent, faircode_dir, root / "docs", root / "site", root / "results"):
        tree(folder)
    files.update({root / "mkdocs.yml", root / provenance.LOCK_FILE, root / LAST_BUILD,
                  *(root / "audits").glob("*/audit.yaml")})
    dirs.update(p.parent for p in (root / "audits").glob("*/audit.yaml"))
    summary = {
        "runs": [{"slug": r.slug, "duration_s": r.duration_s, "peak_memory_mb": r.peak_memory_mb, "run_at": r.run_at,
                  "reason": cache.hit_reason(r.untracked), "warnings": list(r.warnings)} for r in runs],
        "notes": notes,
    }
    filestate.record(root, files={p for p in files if "__pycache__" not in p.parts},
                     dirs={p for p in dirs if "__pycache__" not in p.parts}, summary=summary)


@dataclass(frozen=True)
class NumbersProblem:
    """Why a page's cited numbers are not the accepted ones.

    ``kind`` is "unaccepted" (nothing accepted yet), "drift" (``drifts`` lists the values that
    moved beyond their tolerance) or "unreadable" (the accepted-numbers file is broken).
    """

    kind: str
    text: str
    slug: str
    drifts: tuple[snapshot.Drift, ...] = ()


def _numbers(e, run: RunResult, options: BuildOptions, accepted: list) -> NumbersProblem | None:
    """Compare (or accept) the numbers the prose cites; the problem, or None."""
    if options.numbers == "accept" and (not options.accept or e.slug in options.accept):
        accepted.append((e, run))  # written only once the whole build has succeeded
        return None
    try:
        drifts = snapshot.compare(e, run)
    except CheckError as err:
        return NumbersProblem("unreadable", err.message, e.slug)
    if drifts is None:
        return NumbersProblem("unaccepted", f"no accepted numbers yet ({snapshot.snapshot_path(e).name}); "
                              f"run `fairsite accept {e.slug}`", e.slug)
    if not drifts:
        return None
    width = max(len(d.value) for d in drifts)
    rows = "\n".join(f"    {d.value:<{width}}  accepted: {d.accepted:<24}  now: {d.now}" for d in drifts)
    return NumbersProblem("drift", f"cited numbers changed (run `fairsite accept {e.slug}` if on purpose):\n{rows}",
                          e.slug, tuple(drifts))


def _fingerprint(root: Path, explainers, runs: list[RunResult], facts: provenance.BuildFacts, *,
                 banners: list[str]) -> str:
    """A digest of everything the pages are made of: sources, accepted numbers, the runs (their
    inputs' digest and the facts the footer shows), results, templates, the build's own code,
    the MkDocs config, the versions of the packages that render, and the commit the site's
    manifest names (a new commit or uncommitted changes make a new site, not a skipped build)."""
    h = hashlib.sha256()

    def add(data: bytes | str) -> None:
        h.update(data.encode() if isinstance(data, str) else data)
        h.update(b"\0")

    add(f"{facts.commit} {facts.dirty} {facts.lock}")

    # Files enter by digest, remembered by their metadata (cache.hash_file): unchanged files are
    # not read again. A missing file's digest is None, which differs from any digest.
    for e in explainers:
        add(str(cache.hash_file(e.path)))
        add(str(cache.hash_file(snapshot.snapshot_path(e))))
    for text in banners:
        add(text)
    for r in sorted(runs, key=lambda r: r.slug):
        add(f"{r.slug} {r.run_id} {r.run_at} {r.duration_s} {r.peak_memory_mb}")
    # The build's own code, and faircode's: the render stage formats numbers with it (the
    # `pvalue` filter renders what faircode.significance.format_p_value decides).
    faircode_dir = Path(importlib.util.find_spec("faircode").origin).parent  # found, not imported: no numpy
    for package in (Path(__file__).parent, faircode_dir):
        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                add(str(path.relative_to(package.parent)))
                add(str(cache.hash_file(path)))
    # A fork's addresses given through the environment (mkdocs.yml reads them with !ENV).
    add(" ".join(f"{k}={os.environ.get(k, '')}" for k in ENV_VARS))
    # The manifests too: the glossary's table of what each audit's words mean is read from them.
    for path in (root / "mkdocs.yml", root / "results" / "results_fairness.csv",
                 *sorted((root / "audits").glob("*/audit.yaml"))):
        add(str(path.relative_to(root)))
        add(str(cache.hash_file(path)))
    for dist in ("mkdocs", "mkdocs-material", "jinja2", "markdown", "pymdown-extensions", "matplotlib",
                 "pandas", "mkdocs-glightbox"):
        try:
            add(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            add(dist)
    return h.hexdigest()


def _check_slugs(explainers, options: BuildOptions) -> None:
    """`--force` and `accept` name explainers: each name must be one."""
    slugs = {e.slug for e in explainers}
    named = set(options.force or ()) | set(options.accept)
    unknown = sorted(named - slugs)
    if unknown:
        hints = "; ".join(f"'{s}'{_did_you_mean(s, slugs)}" for s in unknown)
        raise ConfigError(f"no explainer named {hints}; the explainers are {sorted(slugs)}")


def _did_you_mean(word: str, options) -> str:
    close = difflib.get_close_matches(word, sorted(options), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
