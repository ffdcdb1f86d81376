"""What a build's outputs are made of, for the build that comes after it.

- `pages_fingerprint` (of `page_inputs`): a digest of everything the pages are made of; a build
  whose fingerprint is the last one's, with ``docs/`` and ``site/`` as that build left them,
  writes nothing (``publishing.mkdocs_site.outputs_current``).
- `record_state`: after a plain build that succeeded, the files and folders it consulted, so the
  next ``fairsite build`` can say "nothing changed" from their metadata alone (``site_src.filestate``).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

from site_src import filestate, provenance
from site_src.checking import snapshot
from site_src.execution import cache
from site_src.execution.execute import RunResult
from site_src.filestate import ENV_VARS
from site_src.publishing.mkdocs_site import LAST_BUILD
from site_src.rendering.references import BIBLIOGRAPHY
from site_src.sources.collect import READING_ORDER, Explainer
from site_src.sources.reports import REPORTS


def record_state(root: Path, *, plain: bool, explainers: list[Explainer], runs: list[RunResult],
                  notes: list[str], facts: provenance.BuildFacts) -> None:
    """After a plain successful ``build`` (``plain``: `BuildOptions.plain`), record the metadata of
    everything it consulted, so the next one can say "nothing changed" without importing or
    hashing anything (site_src.filestate).

    The git state recorded is the one the pages show (``facts``, read before the build), not the
    one after it: removing an orphaned generated file can make a dirty tree clean (or a clean one
    dirty), and the next build must then run to say so in the pages."""
    # A run whose reads the cache cannot track re-runs on every build: never answered early.
    if not plain or any((r.untracked and e.meta.inputs is None) or r.changed_its_inputs
                        for e, r in zip(explainers, runs)):
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
    tree(root / REPORTS)  # a report's page, manifest, accepted numbers and code, and a new report
    # The reading order and the bibliography every page reads (issue 28).
    files.update({root / "explainers" / READING_ORDER, root / "explainers" / BIBLIOGRAPHY})
    for e in explainers:
        files.update({e.path, snapshot.snapshot_path(e), e.code_path})
        for pattern, matched in cache.declared_inputs(root, e.meta.inputs).items():
            files.update(root / p for p in matched)
            base = pattern.split("*")[0].split("?")[0].split("[")[0]
            tree(root / (base if base.endswith("/") or not base else os.path.dirname(base) or "."))
    for r in runs:
        tree(cache_dir / r.slug)
        files.update(root / p for p in r.modules + r.data_files)
    for folder in (Path(__file__).parent, faircode_dir(), root / "docs", root / "site", root / "results"):
        tree(folder)
    files.update({root / "mkdocs.yml", root / provenance.LOCK_FILE, root / LAST_BUILD,
                  *(root / "audits").glob("*/audit.yaml"), *(root / "data").glob("*.md")})
    dirs.update(p.parent for p in (root / "audits").glob("*/audit.yaml"))
    summary = {
        "runs": [{"slug": r.slug, "duration_s": r.duration_s, "peak_memory_mb": r.peak_memory_mb, "run_at": r.run_at,
                  "reason": cache.hit_reason(r.untracked), "warnings": list(r.warnings)} for r in runs],
        "notes": notes,
    }
    filestate.record(root, files={p for p in files if "__pycache__" not in p.parts},
                     dirs={p for p in dirs if "__pycache__" not in p.parts}, summary=summary,
                     git=(facts.commit, facts.dirty))


def pages_fingerprint(root: Path, explainers: list[Explainer], runs: list[RunResult], facts: provenance.BuildFacts, *,
                 banners: list[str]) -> str:
    """A digest of everything the pages are made of (see `page_inputs`)."""
    return filestate.digest_parts(page_inputs(root, explainers, runs, facts, banners=banners))


def page_inputs(root: Path, explainers: list[Explainer], runs: list[RunResult], facts: provenance.BuildFacts, *,
                 banners: list[str]) -> Iterator[str | None]:
    """Everything the pages are made of: sources, accepted numbers, the runs (their inputs' digest
    and the facts the footer shows), results, templates, the build's own code, the MkDocs config,
    the versions of the packages that render, and the commit the site's manifest names (a new
    commit or uncommitted changes make a new site, not a skipped build)."""
    yield f"{facts.commit} {facts.dirty} {facts.lock}"
    # Files enter by digest, remembered by their metadata (filestate.hash_file): unchanged files are
    # not read again. A missing file's digest is None, which differs from any digest.
    for e in explainers:
        yield e.digest  # the bytes this build read, not the file now (an edit during the build is a change)
        yield filestate.hash_file(snapshot.snapshot_path(e))
    yield from banners
    for r in sorted(runs, key=lambda r: r.slug):
        yield f"{r.slug} {r.run_id} {r.run_at} {r.duration_s} {r.peak_memory_mb}"
    # The build's own code, and faircode's: the render stage formats numbers with it (the
    # `pvalue` filter renders what faircode.formatting.format_p_value decides).
    for package in (Path(__file__).parent, faircode_dir()):
        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                yield str(path.relative_to(package.parent))
                yield filestate.hash_file(path)
    # A fork's addresses given through the environment (mkdocs.yml reads them with !ENV).
    yield " ".join(f"{k}={os.environ.get(k, '')}" for k in ENV_VARS)
    # The manifests too: the glossary's table of what each audit's words mean is read from them;
    # and the datasheets, which the data page is made of.
    # The reading order (its parts' titles and introductions are on the home, checklist and mistakes
    # pages) and the bibliography (every citation): files of their own beside the explainers.
    for path in (root / "mkdocs.yml", root / "results" / "results_fairness.csv",
                 root / "explainers" / READING_ORDER, root / "explainers" / BIBLIOGRAPHY,
                 *sorted((root / "audits").glob("*/audit.yaml")), *sorted((root / "data").glob("*.md"))):
        yield str(path.relative_to(root))
        yield filestate.hash_file(path)
    for dist in ("mkdocs", "mkdocs-material", "jinja2", "markdown", "pymdown-extensions", "matplotlib",
                 "pandas", "mkdocs-glightbox"):
        try:
            yield f"{dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            yield dist


def faircode_dir() -> Path:
    return Path(importlib.util.find_spec("faircode").origin).parent  # found, not imported: no numpy
