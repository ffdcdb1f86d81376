"""The site build, stage by stage: collect -> extract -> execute -> check -> render -> site.

Like ``mkdocs build``, everything is gathered and checked before anything visible is written:
pages and site go to a staging folder and replace ``docs/`` and ``site/`` only at the end.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import time
from importlib import metadata
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from site_src import check as check_stage
from site_src import linkcheck
from site_src import snapshot
from site_src.collect import collect
from site_src.errors import BuildFailed, CheckError, ConfigError, SiteError
from site_src.execute import RunResult, execute
from site_src.extract import extract, stale_code_files
from site_src.provenance import ENV_VARS, build_facts, source_config
from site_src.render import render
from site_src.results import ResultsTable
from site_src.site import build_lock, build_site, outputs_current, record_outputs, staging, swap_in


@dataclass(frozen=True)
class BuildOptions:
    root: Path = Path(".")
    jobs: int = 1
    use_cache: bool = True  # False in `check`: every explainer runs fresh
    force: frozenset[str] | None = None  # re-run these slugs (empty: all) even if cached
    strict: bool = True  # mkdocs --strict: its warnings fail the build
    verify_generated: bool = False  # `check`: committed explainers/code/*.py must match the sources
    link_check: bool = False  # `check`: no broken link or anchor, nothing loaded from outside the site
    # Cited numbers against explainers/<slug>.numbers.json: "warn" (build), "fail" (check) or
    # "accept" (record this run's numbers for the slugs in `accept`; empty: all).
    numbers: str = "warn"
    accept: frozenset[str] = frozenset()
    on_run_done: object = None  # progress callback, given each RunResult or ExecutionError


@dataclass
class BuildReport:
    runs: list[RunResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # MkDocs' warnings
    notes: list[str] = field(default_factory=list)  # drifted or unaccepted numbers (build mode)
    accepted: list[str] = field(default_factory=list)  # snapshot files written by `accept`
    skipped: bool = False  # nothing changed: docs/ and site/ were already up to date
    wall_s: float = 0.0


def build(options: BuildOptions) -> BuildReport:
    """Build the site; raise ``BuildFailed`` listing every problem, leaving docs/ and site/ as they were."""
    started = time.perf_counter()
    root = Path(options.root).resolve()
    errors: list[SiteError] = []
    with build_lock(root):
        explainers = collect(root / "explainers")
        _check_slugs(explainers, options)
        if options.verify_generated:
            # Reported, then regenerated so the runs below use what the sources say.
            errors += [SiteError(p) for p in stale_code_files(explainers, root / "explainers" / "code")]
        code_files = extract(explainers, root / "explainers" / "code")
        runs, run_errors = execute(
            code_files, root=root, cache_dir=root / ".cache" / "fairsite",
            timeouts={e.slug: e.meta.timeout for e in explainers}, jobs=options.jobs,
            use_cache=options.use_cache, force=set(options.force) if options.force is not None else None,
            on_done=options.on_run_done,
        )
        errors += run_errors
        by_slug = {r.slug: r for r in runs}
        notes, accepted = [], []
        for e in explainers:
            errors += check_stage.bare_numbers(e)
            if e.slug in by_slug:
                errors += check_stage.run_checks(e, by_slug[e.slug])
                problem = _numbers(e, by_slug[e.slug], options, accepted)
                if problem and options.numbers == "fail":
                    errors.append(CheckError(problem, explainer=e.display_path))
                elif problem:
                    notes.append(f"{e.display_path}: {problem}")
        fingerprint = _fingerprint(root, explainers, runs)
        if not errors and options.use_cache and not options.link_check and outputs_current(root, fingerprint):
            # Nothing the pages are made of changed since the last build, and docs/ and site/ are
            # as it left them: rendering and MkDocs would write the same bytes again.
            accepted = [str(snapshot.save(e, run)) for e, run in accepted]
            return BuildReport(runs=runs, notes=notes, accepted=accepted, skipped=True,
                               wall_s=time.perf_counter() - started)
        with staging(root) as stage:
            errors += render(explainers, by_slug, ResultsTable(root / "results" / "results_fairness.csv"),
                             stage / "docs", root=root)
            if errors:
                raise BuildFailed(errors)
            warnings = build_site(root, stage / "docs", stage / "site", strict=options.strict)
            # In `check`, a broken link or anchor, or anything fetched from outside the site, fails:
            # the site must work opened from a local server with no network.
            site_problems = []
            if options.link_check:
                base_path = urlsplit(source_config(root)["site_url"]).path or "/"
                site_problems = linkcheck.broken_links(stage / "site", base_path=base_path) + [
                    f"{p}: loads from outside the site" for p in linkcheck.external_loads(stage / "site")]
            if site_problems:
                raise BuildFailed([SiteError(p) for p in site_problems])
            swap_in(stage, root)
            record_outputs(root, fingerprint)
        accepted = [str(snapshot.save(e, run)) for e, run in accepted]
    return BuildReport(runs=runs, warnings=warnings, notes=notes, accepted=accepted,
                       wall_s=time.perf_counter() - started)


def _numbers(e, run: RunResult, options: BuildOptions, accepted: list) -> str | None:
    """Compare (or accept) the numbers the prose cites; the problem as text, or None."""
    if options.numbers == "accept" and (not options.accept or e.slug in options.accept):
        accepted.append((e, run))  # written only once the whole build has succeeded
        return None
    try:
        drifts = snapshot.compare(e, run)
    except CheckError as err:
        return err.message
    if drifts is None:
        return f"no accepted numbers yet ({snapshot.snapshot_path(e).name}); run `fairsite accept {e.slug}`"
    if not drifts:
        return None
    width = max(len(d.value) for d in drifts)
    rows = "\n".join(f"    {d.value:<{width}}  accepted: {d.accepted:<24}  now: {d.now}" for d in drifts)
    return f"cited numbers changed (run `fairsite accept {e.slug}` if on purpose):\n{rows}"


def _fingerprint(root: Path, explainers, runs: list[RunResult]) -> str:
    """A digest of everything the pages are made of: sources, accepted numbers, the runs (their
    inputs' digest and the facts the footer shows), results, templates, the build's own code,
    the MkDocs config, and the versions of the packages that render."""
    h = hashlib.sha256()

    def add(data: bytes | str) -> None:
        h.update(data.encode() if isinstance(data, str) else data)
        h.update(b"\0")

    for e in explainers:
        add(e.path.read_bytes())
        numbers = snapshot.snapshot_path(e)
        add(numbers.read_bytes() if numbers.exists() else b"")
    for r in sorted(runs, key=lambda r: r.slug):
        add(f"{r.slug} {r.run_id} {r.run_at} {r.duration_s} {r.peak_memory_mb}")
    site_src = Path(__file__).parent
    for path in sorted(site_src.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            add(str(path.relative_to(site_src)))
            add(path.read_bytes())
    # The commit and date every page states, and a fork's addresses given through the environment.
    add(json.dumps(build_facts(root), sort_keys=True))
    add(" ".join(f"{k}={os.environ.get(k, '')}" for k in ENV_VARS))
    for path in (root / "mkdocs.yml", root / "results" / "results_fairness.csv"):
        add(path.read_bytes() if path.exists() else b"")
    for dist in ("mkdocs", "mkdocs-material", "jinja2", "markdown", "pymdown-extensions", "matplotlib",
                 "pandas", "jupytext"):
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
