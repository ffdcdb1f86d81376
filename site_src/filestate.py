"""Answer "nothing changed" from file metadata, before importing the build.

``fairsite build`` with nothing changed must cost less than a plain ``mkdocs build``: the time a
person waits includes the interpreter, the imports and the hashing. So, like make, ninja and
git, a successful build records the metadata (size, modification and change times, inode) of
every file it consulted (sources, accepted numbers, generated code, the library, the build's
own code and templates, the cache entries and their artefacts, what each run read, the
results, the outputs in ``docs/`` and ``site/``), the listings of the folders whose new files
would matter, the folders packages are installed in (an install or upgrade changes them), the
git commit and whether the tree is dirty, and the Python and environment the build ran with.

The next ``fairsite build`` compares only that metadata (no hashing, no heavy imports). If all
of it is as recorded, nothing the site is made of can have changed and it says so at once. If
anything moved, the full build runs, and there the bytes are the truth: a file whose metadata
moved is re-hashed and, if its digest is the one recorded, still counts as unchanged
(:func:`hash_file`).

Standard library only: this module is imported on every build, before anything else.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

STATE = Path(".cache") / "fairsite-state.json"
FORMAT = 2  # 2: paths relative to the repository, and the repository's identity
# The environment variables mkdocs.yml reads (`!ENV`), so a fork builds with its own addresses.
ENV_VARS = ("FAIRSITE_REPO_URL", "FAIRSITE_REPO_NAME", "FAIRSITE_SITE_URL")


def _meta(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _environment() -> dict:
    """What is not a file: the interpreter, the variables the pages read, where packages live."""
    # Where packages are installed (not sys.path, which differs between a console script, pytest
    # and `python -c`): installing, upgrading or removing one changes these folders.
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    package_dirs = sorted({p for p in (paths["purelib"], paths["platlib"], *site.getsitepackages()) if os.path.isdir(p)})
    return {
        "python": sys.version,
        "executable": sys.executable,
        "env": {k: os.environ.get(k) for k in (*ENV_VARS, "SOURCE_DATE_EPOCH")},
        "package_dirs": {p: _meta(p) for p in package_dirs},
    }


def git_state(root: Path, *, strict: bool = False, exclude: Iterable[str] = ()) -> tuple[str | None, bool]:
    """``(commit of HEAD or None, dirty)`` from one ``git status``: the one reader of git's state.

    ``(None, False)`` when ``root`` is not in a git repository or there is no ``git`` (a build
    from an unpacked archive). A repository with no commit yet is dirty: everything in it is
    uncommitted. With ``strict``, a ``git status`` that fails inside a repository raises
    ``RuntimeError`` with git's message (the build's facts must not be guessed); without it (the
    no-change check) such a failure reads as ``(None, False)`` and the full build runs.
    ``exclude`` names files (relative to ``root``) whose changes do not count: the generated
    files the build is about to remove.
    """
    commit, changes = _git_status(root, strict=strict, exclude=exclude)
    # Inside a repository with no commit yet, everything is uncommitted.
    return commit, (commit is None and changes is not None) or bool(changes)


def git_changes(root: Path, *, exclude: Iterable[str] = ()) -> list[str]:
    """The uncommitted changes ``git_state`` counts, one phrase each, in git's order:
    ``"notes.txt untracked"``, ``"faircode/audit.py modified"``; empty outside git."""
    return _git_status(root, exclude=exclude)[1] or []


# git status --porcelain=v2's one-letter states (the worktree's, else the index's), in words.
_GIT_STATES = {"M": "modified", "T": "modified", "A": "added", "D": "deleted", "R": "renamed", "C": "copied",
               "U": "unmerged"}


def _git_status(root: Path, *, strict: bool = False,
                exclude: Iterable[str] = ()) -> tuple[str | None, list[str] | None]:
    """``(commit of HEAD or None, the changes as phrases)`` from one ``git status``; ``(None,
    None)`` outside a repository or without git (see `git_state` for ``strict``)."""
    args = ["git", "status", "--porcelain=v2", "--branch", "--untracked-files=normal"]
    if exclude:  # the whole repository, as without a pathspec, less these files
        args += ["--", ":/", *(f":(exclude,literal){p}" for p in exclude)]
    try:
        out = subprocess.run(args, cwd=root, capture_output=True, text=True)
    except FileNotFoundError:
        return None, None
    if out.returncode != 0:
        inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], cwd=root, capture_output=True)
        if strict and inside.returncode == 0:
            raise RuntimeError(f"git status failed in {root}: {out.stderr.strip()}")
        return None, None
    commit, changes = None, []
    for line in out.stdout.splitlines():
        if line.startswith("# branch.oid "):
            oid = line.split()[2]
            commit = None if oid == "(initial)" else oid
        elif line.startswith("? "):
            changes.append(f"{line[2:]} untracked")
        elif line.startswith(("1 ", "2 ", "u ")):
            fields = line.split(" ")
            # Ordinary (1: 8 fields before the path), renamed or copied (2: 9, then "path<TAB>orig"), unmerged (u: 10).
            path = " ".join(fields[{"1": 8, "2": 9, "u": 10}[fields[0]]:]).split("\t")[0]
            xy = fields[1]
            state = xy[1] if xy[1] != "." else xy[0]
            changes.append(f"{path} {_GIT_STATES.get(state, 'changed')}")
        elif not line.startswith("#"):
            changes.append(line)
    return commit, changes


# Outside a git repository (a downloaded archive), the files the build itself reads are the ones
# a run may not change.
_BUILD_READS = ("mkdocs.yml", "results/*", "explainers/*.md", "explainers/*.json", "explainers/*.yaml",
                "audits/*/audit.yaml", "reports/*/report.*")


def repository_files(root: Path) -> tuple[str, ...]:
    """The files of the repository at ``root`` (relative paths) that an explainer's run may not
    change: those git tracks; outside a git repository, those the build reads (`_BUILD_READS`).
    A run that overwrote ``results/results_fairness.csv`` destroyed it, and the build blamed the
    file (issue 47): the runner refuses such a write (`execution._inputs._InputRecorder`)."""
    try:
        done = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is not None and done.returncode == 0:
        return tuple(sorted(p for p in os.fsdecode(done.stdout).split("\0") if p))
    return tuple(sorted(str(p.relative_to(root)) for pattern in _BUILD_READS for p in root.glob(pattern) if p.is_file()))


def committed_bytes(root: Path, path: str) -> bytes | None:
    """The bytes of ``path`` (relative to ``root``) as ``HEAD`` has it; None if it has not, or
    outside git. What a file changed from, when a message names the change (`snapshot.changed_since`)."""
    try:
        out = subprocess.run(["git", "show", f"HEAD:./{path}"], cwd=root, capture_output=True)
    except FileNotFoundError:
        return None
    return out.stdout if out.returncode == 0 else None


def _identity(root: Path) -> list | None:
    """Which repository this is: its path, and the device and inode of its folder.

    A copy of a built repository (the original left in place) or a moved one is another
    repository: its record, copied with it, describes the original's build, not its own.
    """
    try:
        st = os.stat(root)
    except OSError:
        return None
    return [os.fspath(root), st.st_dev, st.st_ino]


def shown_path(path: Path, root: Path) -> str:
    """``path`` as a message names it: relative to ``root`` (resolved) when inside it, else as given."""
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return str(path)


def _key(path: Path, root: Path) -> str:
    """How the record names ``path``: relative to ``root`` when inside it (POSIX form), else absolute."""
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return os.fspath(path)


def record(root: Path, *, files: set[Path], dirs: set[Path], summary: dict,
           git: tuple[str | None, bool] | None = None) -> None:
    """Record the metadata of ``files`` and ``dirs`` (absolute paths) after a successful build,
    with ``summary`` (what the build's report says about its runs), for :func:`unchanged`.

    Paths inside ``root`` (an absolute, resolved path) are recorded relative to it, beside the
    repository's identity (its path, device and inode): a copy or a move of the repository is
    never taken for the repository that was built. ``git`` is the ``(commit, dirty)`` the pages
    show (the build's facts, read before the build ran); the next build compares the tree's git
    state with it, so a build that itself changed what git sees (an orphaned generated file
    removed) is followed by one whose pages say so. Default: the state now.
    """
    root = Path(root)
    state = {
        "format": FORMAT,
        "root": _identity(root.resolve()),
        "environment": _environment(),
        "git": list(git) if git is not None else list(git_state(root)),
        "files": {_key(p, root): _meta(str(p)) for p in sorted(files)},
        "dirs": {_key(p, root): _meta(str(p)) for p in sorted(dirs)},
        "summary": summary,
    }
    path = root / STATE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(state), encoding="utf-8")
    tmp.replace(path)


def forget(root: Path) -> None:
    """Drop the record: the build about to run may change what it describes."""
    try:
        (Path(root) / STATE).unlink()
    except OSError:
        pass


def unchanged(root: Path) -> dict | None:
    """The recorded summary if this is the repository that was built (not a copy, not moved) and
    no recorded file, folder, environment or git state moved, else None."""
    root = Path(root).resolve()
    try:
        state = json.loads((root / STATE).read_bytes())
    except (OSError, ValueError):
        return None
    try:
        if state["format"] != FORMAT or state["root"] != _identity(Path(root)) or state["environment"] != _environment():
            return None
        for group in ("files", "dirs"):
            for path, meta in state[group].items():
                if _meta(os.path.join(root, path)) != meta:  # an absolute path stays itself
                    return None
        if state["git"] != list(git_state(root)):
            return None
        return state["summary"]
    except (KeyError, TypeError, AttributeError):
        return None


def digest_parts(parts: Iterable[bytes | str | None]) -> str:
    """sha256 (hex) of a sequence of parts, each ended by a NUL byte: the one way a cache key is made.

    A ``str`` is encoded as UTF-8 and ``None`` (a missing file's digest) as ``"None"``; the NUL
    after each part keeps ``("ab", "c")`` and ``("a", "bc")`` apart.
    """
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def hash_file(path: Path) -> str | None:
    """sha256 of a file, or None if it is missing (which differs from any recorded digest).

    The bytes are the truth; their digest is remembered by the file's metadata (size,
    modification and change times, inode), as make, ninja and git do, and re-hashed only when
    the metadata moved. A file modified within ``_RACY_S`` of the moment it was hashed is not
    remembered (git's "racily clean" rule: a second write in the same clock tick could keep
    its times).
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = os.fspath(path)
    meta = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    known = _DIGESTS.get(key)
    if known is not None and known[:4] == meta:
        return known[4]
    try:
        with open(path, "rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError:
        return None
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _RACY_S * 1e9:
        _DIGESTS[key] = [*meta, digest]
    return digest


_DIGESTS: dict[str, list] = {}  # path -> [size, mtime_ns, ctime_ns, inode, sha256]
_RACY_S = 2
DIGESTS = "digests.json"  # in the cache folder: the remembered digests, across builds


def load_digests(cache_dir: Path) -> None:
    """Remember the digests a previous build recorded in ``cache_dir`` (a broken file: none)."""
    try:
        data = json.loads((Path(cache_dir) / DIGESTS).read_bytes())
    except (OSError, ValueError):
        return
    if isinstance(data, dict):
        _DIGESTS.update({k: v for k, v in data.items() if isinstance(v, list) and len(v) == 5})


def save_digests(cache_dir: Path) -> None:
    """Record the remembered digests of files that still exist, for the next build (atomically)."""
    # A snapshot first: the results page is drawn in a thread that hashes files (hash_file adds to
    # _DIGESTS) while the runs end, and iterating the live dict across os.path.exists calls raised
    # "dictionary changed size during iteration". list() copies it without running Python code.
    keep = {k: v for k, v in list(_DIGESTS.items()) if os.path.exists(k)}
    path = Path(cache_dir) / DIGESTS
    tmp = path.with_name(f".{DIGESTS}.{os.getpid()}")
    try:
        tmp.write_text(json.dumps(keep), encoding="utf-8")
        tmp.replace(path)
    except OSError:
        tmp.unlink(missing_ok=True)
