"""Copies of the built tiny site for tests that change it (the session's one build is `built_tinysite`
in tests/conftest.py). A module of its own, not conftest: two conftest.py files (tests/ and
tests/e2e/) share the module name, so `from conftest import ...` reads whichever was loaded last."""

from __future__ import annotations

from pathlib import Path


def copy_of_built(built: Path, where: Path) -> Path:
    """A copy of a built site (``built``, a module's or session's build) as ``where``/site-root,
    for a test that changes it: its next build serves every run from the copied cache (a clone
    moved elsewhere reruns nothing: tests/test_cache.py).

    The record of what the last build consulted names the files where they were built, so it is
    dropped (only a plain build writes one): the copy's next build is a full one (runs from the
    cache), never "nothing changed".
    """
    import shutil

    from site_src import filestate

    root = where / "site-root"
    shutil.copytree(built, root, symlinks=True)
    (root / filestate.STATE).unlink(missing_ok=True)
    return root


def copy_of_built_tinysite(built: Path, where: Path) -> Path:
    """A copy of the built tiny site in ``where``, as a fresh build would leave it: `copy_of_built`,
    then one build writes the copy's own record; every run and page comes from the copied caches,
    so that costs a second, not a build.
    """
    from site_src import cli

    root = copy_of_built(built, where)
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 0
    return root
