"""The site build, stage by stage: collect -> extract -> execute -> check -> render -> site.

Like ``mkdocs build``, everything is gathered and checked before anything visible is written:
pages and site go to a staging folder and replace ``docs/`` and ``site/`` only at the end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from site_src import check as check_stage
from site_src.collect import collect
from site_src.errors import BuildFailed, SiteError
from site_src.execute import RunResult, execute
from site_src.extract import extract, stale_code_files
from site_src.render import render
from site_src.results import ResultsTable
from site_src.site import build_lock, build_site, staging, swap_in


@dataclass(frozen=True)
class BuildOptions:
    root: Path = Path(".")
    jobs: int = 1
    use_cache: bool = True  # False in `check`: every explainer runs fresh
    force: frozenset[str] | None = None  # re-run these slugs (empty: all) even if cached
    strict: bool = True  # mkdocs --strict: its warnings fail the build
    verify_generated: bool = False  # `check`: committed explainers/code/*.py must match the sources
    on_run_done: object = None  # progress callback, given each RunResult or ExecutionError


@dataclass
class BuildReport:
    runs: list[RunResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    wall_s: float = 0.0


def build(options: BuildOptions) -> BuildReport:
    """Build the site; raise ``BuildFailed`` listing every problem, leaving docs/ and site/ as they were."""
    started = time.perf_counter()
    root = Path(options.root).resolve()
    errors: list[SiteError] = []
    with build_lock(root):
        explainers = collect(root / "explainers")
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
        for e in explainers:
            errors += check_stage.bare_numbers(e)
            if e.slug in by_slug:
                errors += check_stage.run_checks(e, by_slug[e.slug])
        with staging(root) as stage:
            errors += render(explainers, by_slug, ResultsTable(root / "results" / "results_fairness.csv"),
                             stage / "docs", root=root)
            if errors:
                raise BuildFailed(errors)
            warnings = build_site(root, stage / "docs", stage / "site", strict=options.strict)
            swap_in(stage, root)
    return BuildReport(runs=runs, warnings=warnings, wall_s=time.perf_counter() - started)
