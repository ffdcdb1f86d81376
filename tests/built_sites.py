"""Copies of the built tiny site for tests that change it (the session's one build is `built_tinysite`
in tests/conftest.py). A module of its own, not conftest: two conftest.py files (tests/ and
tests/e2e/) share the module name, so `from conftest import ...` reads whichever was loaded last."""

from __future__ import annotations

from pathlib import Path


def copy_of_built_tinysite(built: Path, where: Path) -> Path:
    """A copy of the built tiny site in ``where``, as a fresh build would leave it.

    The record of what the last build consulted names the files where they were built, so it is
    dropped and one build writes the copy's own; every run and page comes from the copied caches
    (a clone moved elsewhere reruns nothing: tests/test_cache.py), so that costs a second, not a build.
    """
    import shutil

    from site_src import cli, filestate

    root = where / "site-root"
    shutil.copytree(built, root, symlinks=True)
    (root / filestate.STATE).unlink()
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 0
    return root
