"""The facts of a build that every page states: the commit it was built from, and when.

Readers use them to check a page against the code (the "Source and verify" block, the footer).
Read from git when the project is a git checkout; a build outside one (an unpacked archive) says
it does not know rather than guessing.
"""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["build_facts", "source_config", "ENV_VARS"]

# The environment variables mkdocs.yml reads (`!ENV`), so a fork builds with its own addresses.
ENV_VARS = ("FAIRSITE_REPO_URL", "FAIRSITE_REPO_NAME", "FAIRSITE_SITE_URL")


def build_facts(root: Path) -> dict:
    """The commit and date of the build of the project at ``root``.

    Parameters
    ----------
    root : Path
        The repository root (the folder holding ``mkdocs.yml``).

    Returns
    -------
    dict
        ``commit`` (40 hex digits, or None outside a git checkout), ``short_commit`` (12 digits or
        None), ``dirty`` (True when tracked files differ from the commit, so the pages may not
        match it; False outside git) and ``date`` (the build's UTC date, ``YYYY-MM-DD``).
    """
    commit = _git(root, "rev-parse", "HEAD")
    dirty = False
    if commit is not None:
        status = _git(root, "status", "--porcelain", "--untracked-files=no")
        dirty = bool(status)
    return {
        "commit": commit,
        "short_commit": commit[:12] if commit else None,
        "dirty": dirty,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    }


def _git(root: Path, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None  # no git, or not a checkout: the facts say "unknown"
    return out.stdout.strip()


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
        (``ENV_VARS``), with the project's own address as the default.

    Raises
    ------
    ValueError
        When ``mkdocs.yml`` has no ``repo_url`` or ``site_url``: every page links the repository.
    """
    from mkdocs.utils.yaml import yaml_load  # resolves the !ENV tags as MkDocs does

    with open(root / "mkdocs.yml", encoding="utf-8") as fh:
        cfg = yaml_load(fh) or {}
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
