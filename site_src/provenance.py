"""Where a build came from: the one home of the facts a built site carries about itself.

The facts are the commit the tree was at, whether the tree had uncommitted changes, the build
date, the digest of the runtime lock file, and for each explainer the digests of its source and of
its accepted numbers (``explainers/<slug>.numbers.json``). The build writes them, with a digest of
every page, to ``fairsite-manifest.json`` at the site's root; the footer shows the commit and the
date from the same object; ``fairsite check --against`` compares a published manifest with the
facts of the working tree to say which pages online are out of date.
"""

from __future__ import annotations

import functools
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from site_src.errors import ConfigError, SiteError
from site_src import filestate
from site_src.filestate import hash_file

MANIFEST = "fairsite-manifest.json"  # at the site's root, next to index.html
MANIFEST_FORMAT = 1
LOCK_FILE = "requirements/site.txt"  # the runtime lock the site is built from
RESULTS_FILE = "results/results_fairness.csv"  # what the results page shows


@dataclass(frozen=True)
class ExplainerFacts:
    """One explainer as the build saw it; digests are sha256 hex, ``None`` for a missing file."""

    source: str  # explainers/<slug>.md
    numbers: str | None  # explainers/<slug>.numbers.json (the accepted numbers)
    page: str  # the page's folder in the site, e.g. "explainers/<slug>/"


@dataclass(frozen=True)
class BuildFacts:
    """The facts of one build (or of the working tree, for a comparison).

    ``commit`` is the full hash of ``HEAD``, ``None`` outside a git repository; ``dirty`` is True
    when tracked files differ from it or untracked files (not ignored) exist, so the site may hold
    something no commit has (generated files whose explainer is gone do not count: the build
    removes them). ``date`` is the build time in UTC (ISO 8601), or the
    ``SOURCE_DATE_EPOCH`` time when that is set (the reproducible-builds convention).
    """

    commit: str | None
    dirty: bool
    date: str
    site_url: str | None
    lock: str | None  # sha256 of requirements/site.txt, None if the tree has no lock
    results: str | None  # sha256 of results/results_fairness.csv
    explainers: dict[str, ExplainerFacts] = field(default_factory=dict)

    @property
    def short_commit(self) -> str:
        """``abc1234`` (``abc1234+dirty`` with uncommitted changes; ``unknown`` outside git)."""
        if self.commit is None:
            return "unknown"
        return self.commit[:7] + ("+dirty" if self.dirty else "")

    def as_json(self) -> dict:
        return asdict(self)

    def shown(self) -> dict:
        """What every page shows of these facts (its footer: the day, the commit and whether the
        tree had uncommitted changes; the site's address and the results file it links): when
        any changes, every page is rendered again."""
        return {"date": self.date[:10], "commit": self.commit, "dirty": self.dirty, "site_url": self.site_url,
                "results": self.results}


def shown_change(before: dict | None, after: dict, *, root: Path | None = None) -> str | None:
    """What changed between two builds' `BuildFacts.shown`, in words, or None (nothing, or no record).

    ``"commit 21188b1 -> 62dc538, uncommitted changes (notes.txt untracked)"``: said after a build
    that rendered every page again only because the footer they all show changed (a fresh user's
    question, issue 26). With ``root``, uncommitted changes that appeared are named (git's, up to three).
    """
    if not isinstance(before, dict) or before == after:
        return None
    words = []
    if before.get("commit") != after["commit"]:
        words.append(f"commit {(before.get('commit') or 'none')[:7]} -> {(after['commit'] or 'none')[:7]}")
    if before.get("dirty") != after["dirty"]:
        # An untracked file the build never reads still counts (the site may hold what no commit
        # has); a fresh user was told "uncommitted changes" and had to find notes.txt alone.
        changes = filestate.git_changes(root) if after["dirty"] and root is not None else []
        named = ", ".join(changes[:3]) + (f" and {len(changes) - 3} more" if len(changes) > 3 else "")
        words.append(("uncommitted changes" + (f" ({named}: commit, remove or .gitignore them for a clean footer)"
                                               if named else "")) if after["dirty"] else "no uncommitted changes")
    if before.get("date") != after["date"]:
        words.append(f"date {before.get('date')} -> {after['date']}")
    if before.get("site_url") != after["site_url"]:
        words.append("the site's address")
    if before.get("results") != after["results"]:
        words.append("the results file")
    return ", ".join(words) or None


def build_facts(root: Path, explainer_paths: list[Path], *, now: datetime | None = None) -> BuildFacts:
    """The facts of a build of ``root`` from the given explainer sources (``explainers/<slug>.md``).

    Parameters
    ----------
    root : Path
        The repository root (holds ``mkdocs.yml``).
    explainer_paths : list of Path
        The explainer sources the build collected.
    now : datetime, optional
        The build time; default the current time (or ``SOURCE_DATE_EPOCH``).

    Raises
    ------
    SiteError
        When git exists but cannot read the repository (a corrupt ``.git``).
    """
    root = Path(root)
    # A generated file whose explainer is gone is removed by the build that succeeds: the site it
    # makes comes from the tree without it (an explainer drafted and deleted leaves it untracked).
    code_dir = root / "explainers" / "code"
    slugs = {Path(p).stem for p in explainer_paths}
    orphans = [f"explainers/code/{p.name}" for p in sorted(code_dir.glob("*.py")) if p.stem not in slugs]
    commit, dirty = git_state(root, exclude=orphans)
    explainers = {}
    for path in sorted(explainer_paths):
        slug = path.stem
        explainers[slug] = ExplainerFacts(source=hash_file(path), numbers=hash_file(path.with_name(slug + ".numbers.json")),
                                          page=f"explainers/{slug}/")
    return BuildFacts(commit=commit, dirty=dirty, date=_date(now), site_url=_site_url(root),
                      lock=hash_file(root / LOCK_FILE), results=hash_file(root / RESULTS_FILE), explainers=explainers)


def tree_facts(root: Path) -> BuildFacts:
    """The facts a build of the working tree would have now (no build, no run)."""
    root = Path(root)
    return build_facts(root, sorted((root / "explainers").glob("*.md")))


def from_json(data: dict) -> BuildFacts:
    """The inverse of ``BuildFacts.as_json`` (a manifest's ``build`` entry); KeyError/TypeError if malformed."""
    explainers = {slug: ExplainerFacts(**e) for slug, e in data["explainers"].items()}
    return BuildFacts(**{**data, "explainers": explainers})


def git_state(root: Path, *, exclude: list[str] = ()) -> tuple[str | None, bool]:
    """``(commit of HEAD, dirty)``; ``(None, False)`` when ``root`` is not in a git repository.
    Changes to the files ``exclude`` names (relative to ``root``) do not count.

    Raises
    ------
    SiteError
        ``git status`` failed inside a repository (its message is given).
    """
    try:
        return filestate.git_state(root, strict=True, exclude=exclude)
    except RuntimeError as err:
        raise SiteError(str(err)) from None


def _date(now: datetime | None) -> str:
    if now is None:
        epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
        now = datetime.fromtimestamp(int(epoch), timezone.utc) if epoch.isdigit() else datetime.now(timezone.utc)
    return now.astimezone(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _site_url(root: Path) -> str | None:
    try:
        return str(_mkdocs_config(root).get("site_url") or "") or None
    except OSError:
        return None  # no mkdocs.yml: the manifest says it does not know


def _mkdocs_config(root: Path) -> dict:
    path = root / "mkdocs.yml"
    return _read_mkdocs_config(path, path.stat().st_mtime_ns, tuple(sorted(os.environ.items())))


@functools.lru_cache(maxsize=4)
def _read_mkdocs_config(path: Path, mtime_ns: int, environ: tuple) -> dict:
    """``mkdocs.yml`` read once per version of the file and the environment (its ``!ENV`` tags)."""
    from mkdocs.utils.yaml import yaml_load  # resolves the !ENV tags as MkDocs does

    with open(path, encoding="utf-8") as fh:
        return yaml_load(fh) or {}


def source_config(root: Path) -> dict:
    """Where the code lives and where the site is published, as ``mkdocs.yml`` says.

    Parameters
    ----------
    root : Path
        The repository root.

    Returns
    -------
    dict
        ``repo_url`` (no trailing slash), ``repo_name``, ``clone_url`` (``repo_url`` + ``.git``)
        and ``site_url``. ``mkdocs.yml`` reads each from an environment variable first
        (``filestate.ENV_VARS``), with the project's own address as the default.

    Raises
    ------
    ValueError
        When ``mkdocs.yml`` has no ``repo_url`` or ``site_url``: every page links the repository.
    """
    cfg = _mkdocs_config(root)
    missing = [k for k in ("repo_url", "site_url") if not cfg.get(k)]
    if missing:
        raise ValueError(f"mkdocs.yml: {' and '.join(missing)} must be set (the repository and the site's address)")
    repo_url = str(cfg["repo_url"]).rstrip("/")
    return {
        "repo_url": repo_url,
        "repo_name": str(cfg.get("repo_name") or repo_url.rsplit("/", 1)[-1]),
        "clone_url": repo_url if repo_url.endswith(".git") else repo_url + ".git",
        "site_url": str(cfg["site_url"]),
    }


# ----------------------------------------------------------------- what a page says it was made from

# The packages whose versions a page prints beside its numbers (the ones that compute them).
KEY_PACKAGES = ("numpy", "scipy", "pandas", "scikit-learn", "fairlearn", "matplotlib")


def run_facts(run, root: Path) -> dict:
    """The reproducibility facts an explainer page prints about its run (``run`` is a
    ``RunResult``): when it ran, how long, its peak memory, Python and the key packages, and
    the data files it read with their sha256."""
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


def results_facts(results_file: Path, root: Path) -> dict:
    """What the results page prints about where its table came from: the file's name and
    sha256, the installed versions of the key packages, and every audit's data files with the
    sha256 its manifest declares (and the benchmark checks)."""
    from importlib import metadata

    packages = []
    for dist in KEY_PACKAGES:
        try:
            packages.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            pass
    return {"csv_name": results_file.name, "csv_sha256": hash_file(results_file), "packages": packages,
            "data": _audit_data(root)}


def _audit_data(root: Path) -> list[tuple[str, str]]:
    """Each audit's data files with their sha256, as the manifests declare them."""
    from faircode.manifest import ManifestError, read_manifest_yaml  # pydantic and pandas: only when drawn

    out = []
    for manifest in sorted((root / "audits").glob("*/audit.yaml")):
        try:  # a YAML syntax error named by file and line, as the benchmark names it (issue 25)
            spec = read_manifest_yaml(manifest, label=str(manifest.relative_to(root)))
        except ManifestError as exc:
            raise ConfigError(str(exc)) from None
        out += [(entry["file"], entry["sha256"]) for entry in _file_entries(spec)]
    return sorted(set(out))


def _file_entries(node):
    """Every ``{file, sha256}`` mapping anywhere in a manifest."""
    if isinstance(node, dict):
        if isinstance(node.get("file"), str) and isinstance(node.get("sha256"), str):
            yield node
        for v in node.values():
            yield from _file_entries(v)
    elif isinstance(node, list):
        for v in node:
            yield from _file_entries(v)
