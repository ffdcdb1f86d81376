"""Put a checked site online, and tell whether what is online is what the working tree would build.

``fairsite publish`` builds with ``fairsite check``'s rules (every explainer fresh, every number
against its accepted value, strict MkDocs, no broken link) and publishes that very site only if
the check passed: to a folder (``--to DIR``, for any static host) or to a branch of a git
repository (``--to-git REPO --branch gh-pages``, as ``mkdocs gh-deploy`` does, with plain git and
without touching the working repository's branches). The site carries its manifest
(``fairsite-manifest.json``: the commit, the date, the lock and accepted-numbers digests, every
page's digest), so ``fairsite check --against URL_OR_DIR`` can later say which pages online are
out of date.

A command, not a stage: it runs the whole pipeline (:func:`site_src.build.build`), so it lives
beside the command line (:mod:`site_src.cli`) and the stage folders never import upward; what it
writes into the site (the manifest, the facts of a build) is :mod:`site_src.provenance`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from site_src.filestate import hash_file
from site_src import provenance
from site_src.build import BuildReport, build, check_options
from site_src.errors import SiteError
from site_src.provenance import MANIFEST, MANIFEST_FORMAT, BuildFacts

__all__ = ["PublishReport", "PageStatus", "OnlineReport", "publish", "online_status"]

_FETCH_TIMEOUT_S = 30


@dataclass(frozen=True)
class PublishReport:
    """What ``publish`` put where."""

    destination: str  # the folder, or "REPO (branch BRANCH)"
    build: BuildReport
    git_commit: str | None = None  # the commit made on the publishing branch (git only)

    @property
    def facts(self) -> BuildFacts:
        return self.build.facts


def publish(
    root: Path,
    *,
    to_dir: Path | None = None,
    to_git: str | None = None,
    branch: str = "gh-pages",
    allow_dirty: bool = False,
    jobs: int = 1,
    on_run_done=None,
) -> PublishReport:
    """Build ``root``'s site with ``check``'s rules and, only if it passed, publish it.

    Parameters
    ----------
    root : Path
        The repository root.
    to_dir : Path, optional
        Publish into this folder: its contents are replaced by the site. It must be empty, absent,
        or hold a site published before (it has a ``fairsite-manifest.json``).
    to_git : str, optional
        Publish as a new commit on ``branch`` of this git repository (a path, a URL, or the name
        of one of the working repository's remotes, such as ``origin``), on top of
        the branch's history; the branch is created if it does not exist. Exactly one of
        ``to_dir`` and ``to_git``.
    branch : str
        The branch for ``to_git`` (default ``gh-pages``).
    allow_dirty : bool
        Publish even when the working tree has uncommitted changes (the manifest then says so).
    jobs : int
        Explainers run at once.
    on_run_done : callable, optional
        Progress callback, given each RunResult or ExecutionError.

    Returns
    -------
    PublishReport

    Raises
    ------
    BuildFailed
        The check failed: nothing was published, the destination is as it was.
    SiteError
        Bad destination, no commit to name, a dirty tree without ``allow_dirty``, or git failing.
    """
    root = Path(root).resolve()
    if (to_dir is None) == (to_git is None):
        raise SiteError("publish needs exactly one destination: a folder (--to DIR) or a git repository "
                        "(--to-git REPO)")
    if to_dir is not None:
        to_dir = _check_folder(Path(to_dir).resolve(), root)
    else:
        to_git = _git_target(to_git, root)
        _git_ok(["check-ref-format", "--branch", branch], cwd=root, what=f"--branch {branch!r} is not a branch name")
    commit, dirty = provenance.git_state(root)
    if commit is None:
        raise SiteError(f"{root} is not a git repository with a commit: a published site names the commit it was "
                        "built from (commit first)")
    if dirty and not allow_dirty:
        changed = _git(["status", "--porcelain", "--untracked-files=normal"], cwd=root).splitlines()
        listed = "\n".join(f"    {line}" for line in changed[:10]) + ("\n    ..." if len(changed) > 10 else "")
        raise SiteError(f"the working tree has uncommitted changes, so no commit holds what would be published:\n"
                        f"{listed}\ncommit them, or pass --allow-dirty (the manifest will say so)")

    report = build(check_options(root, jobs=jobs, on_run_done=on_run_done))  # BuildFailed: nothing published
    if report.facts.dirty and not allow_dirty:
        raise SiteError("the working tree changed while the check ran, so no commit holds what was built; "
                        "nothing was published")
    site_dir = root / "site"
    _same_as_built(site_dir, report.manifest)
    if to_dir is not None:
        _publish_to_folder(site_dir, to_dir)
        return PublishReport(destination=str(to_dir), build=report)
    made = _publish_to_git(site_dir, to_git, branch, root=root, facts=report.facts)
    return PublishReport(destination=f"{to_git} (branch {branch})", build=report, git_commit=made)


def _check_folder(to_dir: Path, root: Path) -> Path:
    """Refuse a destination whose contents are not ours to replace; checked before the long build."""
    for owned in (root, root / "site", root / "docs"):
        inside = owned != root and owned in to_dir.parents  # a folder inside the repository is fine
        if to_dir == owned or inside:
            raise SiteError(f"--to {to_dir}: cannot publish into {owned.relative_to(root.parent)}; choose a folder "
                            "outside site/ and docs/, other than the repository")
    if to_dir.exists() and not to_dir.is_dir():
        raise SiteError(f"--to {to_dir}: exists and is not a folder")
    if to_dir.is_dir() and any(to_dir.iterdir()) and not (to_dir / MANIFEST).is_file():
        raise SiteError(f"--to {to_dir}: the folder is not empty and holds no published site ({MANIFEST}); "
                        "refusing to replace its contents")
    return to_dir


def _same_as_built(site_dir: Path, manifest: dict | None) -> None:
    """The site about to be published is byte for byte the one the check just built."""
    try:
        on_disk = json.loads((site_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        on_disk = None
    if manifest is None or on_disk != manifest:
        raise SiteError(f"{site_dir / MANIFEST} is not the manifest of the check that just ran; was another build "
                        "running? Nothing was published")
    changed = [page for page, digest in manifest["pages"].items()
               if hash_file(site_dir / page) != digest]
    if changed:
        raise SiteError(f"site/ changed after the check ({', '.join(changed[:5])}); nothing was published")


def _publish_to_folder(site_dir: Path, to_dir: Path) -> None:
    """Copy next to the destination first, then swap by renames: readers never see half a site."""
    to_dir.parent.mkdir(parents=True, exist_ok=True)
    new = to_dir.with_name(f".{to_dir.name}.fairsite-new")
    old = to_dir.with_name(f".{to_dir.name}.fairsite-old")
    for leftover in (new, old):
        shutil.rmtree(leftover, ignore_errors=True)
    shutil.copytree(site_dir, new)
    if to_dir.exists():
        to_dir.rename(old)
    new.rename(to_dir)
    shutil.rmtree(old, ignore_errors=True)


def _git_target(repo: str, root: Path) -> str:
    """Where to push, as the temporary repository will see it: a path that exists made absolute,
    a remote of the working repository (``origin``) as its URL, anything else as given (a URL)."""
    path = Path(repo).expanduser()
    if path.exists():
        return str(path.resolve())
    remote = subprocess.run(["git", "remote", "get-url", repo], cwd=root, capture_output=True, text=True)
    return remote.stdout.strip() if remote.returncode == 0 and remote.stdout.strip() else repo


def _publish_to_git(site_dir: Path, repo: str, branch: str, *, root: Path, facts: BuildFacts) -> str:
    """Commit ``site_dir`` on top of ``repo``'s ``branch`` and push it; return the new commit.

    The commit is assembled in a temporary repository with ``site_dir`` as its work tree, so
    neither the working repository nor ``site/`` is touched; the push is a fast-forward (no
    force), so a branch someone else moved in the meantime makes it fail rather than lose theirs.
    """
    with tempfile.TemporaryDirectory(prefix="fairsite-publish-") as tmp:
        env = {**os.environ, **_identity(root)}
        _git(["init", "--quiet", str(Path(tmp) / "repo")], cwd=tmp, env=env)
        env.update(GIT_DIR=str(Path(tmp) / "repo" / ".git"), GIT_WORK_TREE=str(site_dir))
        ref = f"refs/heads/{branch}"
        parent = []
        if _git(["ls-remote", "--heads", repo, ref], cwd=tmp, env=env).strip():
            _git(["fetch", "--quiet", "--depth=1", repo, ref], cwd=tmp, env=env)
            parent = ["-p", _git(["rev-parse", "FETCH_HEAD"], cwd=tmp, env=env).strip()]
        _git(["add", "--all", "--force", "."], cwd=site_dir, env=env)
        # GitHub Pages would run Jekyll on a branch without it, which hides folders starting with "_".
        blob = _git(["hash-object", "-w", "--stdin"], cwd=tmp, env=env, stdin="").strip()
        _git(["update-index", "--add", "--cacheinfo", f"100644,{blob},.nojekyll"], cwd=tmp, env=env)
        tree = _git(["write-tree"], cwd=tmp, env=env).strip()
        message = (f"Publish the site built from {facts.commit} ({facts.date})\n\n"
                   f"Built and checked by `fairsite publish`; {MANIFEST} holds the build's facts.\n")
        made = _git(["commit-tree", tree, *parent, "-m", message], cwd=tmp, env=env).strip()
        _git(["push", "--quiet", repo, f"{made}:{ref}"], cwd=tmp, env=env)
    return made


def _identity(root: Path) -> dict[str, str]:
    """The committer of the publish commit: the repository's git identity, else fairsite's own."""
    name = subprocess.run(["git", "config", "user.name"], cwd=root, capture_output=True, text=True).stdout.strip()
    email = subprocess.run(["git", "config", "user.email"], cwd=root, capture_output=True, text=True).stdout.strip()
    name, email = name or "fairsite publish", email or "fairsite@localhost"
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email}


def _git(args: list[str], *, cwd, env=None, stdin: str | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True)
    if done.returncode != 0:
        raise SiteError(f"git {' '.join(args)} failed: {done.stderr.strip() or done.stdout.strip()}")
    return done.stdout


def _git_ok(args: list[str], *, cwd, what: str) -> None:
    if subprocess.run(["git", *args], cwd=cwd, capture_output=True).returncode != 0:
        raise SiteError(what)


# --- what is online ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PageStatus:
    """One page of the site online, and why it is out of date (empty: up to date)."""

    page: str  # its path in the site, e.g. "explainers/<slug>/index.html"
    reasons: tuple[str, ...]

    @property
    def up_to_date(self) -> bool:
        return not self.reasons


@dataclass(frozen=True)
class OnlineReport:
    """The comparison of a published site's manifest with the working tree."""

    source: str  # the URL or folder read
    online: BuildFacts
    here: BuildFacts
    pages: list[PageStatus] = field(default_factory=list)

    @property
    def up_to_date(self) -> bool:
        return all(p.up_to_date for p in self.pages)


def online_status(source: str, root: Path) -> OnlineReport:
    """Read the site at ``source`` (a URL or a folder) and say which of its pages are out of date.

    Parameters
    ----------
    source : str
        ``https://host/fair-code/`` (the site's root, a sub-path is fine), the manifest's own URL,
        or a folder holding a downloaded or published site.
    root : Path
        The repository whose working tree is compared.

    Returns
    -------
    OnlineReport
        One ``PageStatus`` per page online or that the working tree would add. A page is out of
        date when the commit, the lock or the results file differ, its explainer's source or
        accepted numbers changed, it is missing, or its bytes are not those its manifest lists.

    Raises
    ------
    SiteError
        The manifest cannot be read, is not JSON, or is not a fairsite manifest of this format.
    """
    read, where = _reader(source)
    raw = read(MANIFEST)
    if raw is None:
        raise SiteError(f"no {MANIFEST} at {where}: not a site published by fairsite (or not its root)")
    try:
        manifest = json.loads(raw)
        if manifest.get("format") != MANIFEST_FORMAT:
            raise ValueError(f"format {manifest.get('format')!r}, expected {MANIFEST_FORMAT}")
        online = provenance.from_json(manifest["build"])
        pages = dict(manifest["pages"])
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise SiteError(f"{where}{MANIFEST} is not a fairsite manifest ({type(err).__name__}: {err})") from None
    here = provenance.tree_facts(root)
    return OnlineReport(source=where, online=online, here=here, pages=_compare(online, here, pages, read))


def _reader(source: str):
    """``(read(relative path) -> bytes | None, where)`` for a URL or a folder."""
    if urlsplit(source).scheme in ("http", "https"):
        base = source if source.endswith("/") else source + "/"
        if source.endswith(".json"):
            base = urljoin(source, ".")

        def read_url(rel: str) -> bytes | None:
            try:
                with urllib.request.urlopen(urljoin(base, rel), timeout=_FETCH_TIMEOUT_S) as response:
                    return response.read()
            except urllib.error.HTTPError as err:
                if err.code == 404:
                    return None
                raise SiteError(f"{urljoin(base, rel)}: HTTP {err.code} {err.reason}") from None
            except (urllib.error.URLError, OSError) as err:
                raise SiteError(f"{urljoin(base, rel)}: cannot fetch ({getattr(err, 'reason', err)})") from None

        return read_url, base
    folder = Path(source).expanduser().resolve()
    if folder.is_file():
        folder = folder.parent
    if not folder.is_dir():
        raise SiteError(f"--against {source}: no such folder (give a built site's folder, or an http(s) URL of a "
                        "published one)")

    def read_file(rel: str) -> bytes | None:
        try:
            return (folder / rel).read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            return None

    return read_file, f"{folder}/"


def _compare(online: BuildFacts, here: BuildFacts, pages: dict[str, str], read) -> list[PageStatus]:
    site_wide = []
    if online.commit != here.commit:
        site_wide.append(f"commit differs ({_short(online.commit)} online)")
    if online.dirty:
        site_wide.append("built with uncommitted changes")
    if online.lock != here.lock:
        site_wide.append(f"lock file changed ({provenance.LOCK_FILE})")
    page_of = {f"explainers/{slug}/index.html": slug for slug in set(online.explainers) | set(here.explainers)}
    explainers_changed = False
    per_page: dict[str, list[str]] = {}
    for page, slug in page_of.items():
        before, now = online.explainers.get(slug), here.explainers.get(slug)
        why = []
        if before is None:
            why.append("new here, not online")
        elif now is None:
            why.append("explainer removed here")
        else:
            if before.source != now.source:
                why.append("explainer source changed")
            if before.numbers != now.numbers:
                why.append("accepted numbers changed")
        # The index shows each explainer's title and summary, not its numbers.
        explainers_changed |= any(w != "accepted numbers changed" for w in why)
        per_page[page] = why
    statuses = []
    for page in sorted(set(pages) | set(page_of)):
        why = list(per_page.get(page, []))
        if page == "index.html" and explainers_changed:
            why.append("an explainer it lists changed")
        if page == "results/index.html" and online.results != here.results:
            why.append(f"results changed ({provenance.RESULTS_FILE})")
        if page in pages:
            body = read(page)
            if body is None:
                why.append("missing online")
            elif hashlib.sha256(body).hexdigest() != pages[page]:
                why.append("not the page that was built (its bytes differ from the manifest)")
        statuses.append(PageStatus(page=page, reasons=tuple(site_wide + why)))
    return statuses


def _short(commit: str | None) -> str:
    return commit[:7] if commit else "no commit"
