"""Suite-wide configuration: how the tests share the cores (pytest-xdist), and the built sites they share.

The README's test command (and .ci/run) runs ``pytest -n auto``: one worker per core, and one more
(``pytest_xdist_auto_num_workers`` below). The scheduler below sends each test file to one worker,
so a fixture built once per module (a built fixture site, a benchmark run) is built once, and no
two workers write a module's folders. The browser tests (tests/e2e) are handed out first, one test
at a time (the other workers start a slow file each while the first builds the real site): they
share nothing but the real site, which the first worker to need it builds and the others wait for
(tests/e2e/conftest.py, ``site_root``), and the browser each worker starts; a check of every page
is split into tests of a part of the pages each (tests/e2e/conftest.py, ``share``), so that it
runs on all workers at once. The slowest files follow, longest first (``_SLOW_FILES``), so that a
run ends with short files on every worker. Without ``-n`` (one process, as when running
a few tests) nothing here changes anything.
"""

from __future__ import annotations

from pathlib import Path

import pytest


# Browser test files whose tests share a module's state (test_faircalc.py: one page with the
# calculator loaded, and the largest errors printed when the module ends): one unit, as other files.
_BROWSER_FILES_KEPT_WHOLE = ("tests/e2e/test_faircalc.py",)

# The test files that take longest, longest first (each a minute or more of one worker in a whole
# run on two cores, --durations, issue 26). They start right after the browser tests, so that what
# is left running at the end of a run is short files, not one of these started last. A file not
# listed keeps its place in xdist's order (files with more tests first); a name here that no longer
# exists changes nothing.
_SLOW_FILES = ("tests/test_cache.py", "tests/test_site_build.py", "tests/test_site_numbers.py",
               "tests/test_publish.py", "tests/test_site_execution.py", "tests/test_site_speed.py",
               "tests/test_site_cli.py", "tests/test_source_edits.py", "tests/test_significance_calibration.py",
               "tests/test_benchmark.py", "tests/test_execution_speed.py", "tests/test_execution_overlap.py",
               "tests/test_incremental.py", "tests/test_site_bad_input.py", "tests/test_audit_reports.py",
               "tests/test_groups.py",
               "tests/test_e2e_ci_rule.py", "tests/test_models.py", "tests/test_significance.py",
               "tests/test_benchmark_dask_cluster.py")


def _group(nodeid: str) -> str:
    """The unit a worker is sent: a test's file; a browser test on its own (see the module's docstring)."""
    file = nodeid.split("::", 1)[0]
    if file.startswith("tests/e2e/") and file not in _BROWSER_FILES_KEPT_WHOLE:
        return nodeid
    return file


def _start_order(unit: str, beside_the_site: frozenset) -> tuple[int, int]:
    """Where a unit starts (smaller first; ties keep xdist's order).

    The browser tests wait for the real site, which the first of them to run builds (about half a
    minute on two jobs: tests/e2e/conftest.py, ``site_root``). So the calculator's file starts
    first (its numeric tests need no site; its page tests build it), with the slow files of
    ``beside_the_site`` (one for each other worker) beside it; then the other browser tests, the
    other slow files longest first, the rest.
    """
    if unit in _BROWSER_FILES_KEPT_WHOLE:
        return (0, 0)
    if unit in beside_the_site:
        return (1, _SLOW_FILES.index(unit))
    if unit.startswith("tests/e2e/"):
        return (2, 0)
    if unit in _SLOW_FILES:
        return (3, _SLOW_FILES.index(unit))
    return (4, 0)


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker per core and one more, unless PYTEST_XDIST_AUTO_NUM_WORKERS says.

    A third of a worker's time on two cores is spent waiting, not computing: on the browser (page
    loads, animations, the search index), on explainers that sleep on purpose, on child processes
    and their time limits. The extra worker runs tests in that time (issue 26).
    """
    import os

    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return len(os.sched_getaffinity(0)) + 1


def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduler, with the scope of a test being its file (a browser test: itself,
    `_group`), started in `_start_order`: the browser tests first, but the other workers start a
    slow file each while the first builds the real site; then the slow files, longest first.

    (``--dist loadgroup`` with ``xdist_group`` marks would say the same, but with the locked
    pytest and pytest-xdist it spread a file's tests over both workers.)
    """
    from xdist.scheduler import LoadScopeScheduling

    class _FileOrBrowserScheduling(LoadScopeScheduling):
        _beside_the_site: frozenset | None = None

        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

        def _assign_work_unit(self, node) -> None:
            if self._beside_the_site is None:  # the first call: every unit is still queued
                present = [f for f in _SLOW_FILES if f in self.workqueue]
                self._beside_the_site = frozenset(present[:len(self.nodes) - 1])
            # (A stable sort: collection order, or xdist's, among equals.)
            for scope in sorted(self.workqueue, key=lambda unit: _start_order(unit, self._beside_the_site)):
                self.workqueue.move_to_end(scope)
            super()._assign_work_unit(node)

    return _FileOrBrowserScheduling(config, log)


@pytest.fixture(scope="session")
def built_tinysite(tmp_path_factory) -> Path:
    """The tiny fixture site (tests/fixtures/tinysite) built once (``fairsite build --jobs 1``), never
    modified: tests copy it (`built_copy`, or tests/built_sites.py's `copy_of_built_tinysite`) instead
    of building their own."""
    import shutil

    from site_src import cli

    root = tmp_path_factory.mktemp("built-tinysite") / "site-root"
    shutil.copytree(Path(__file__).parent / "fixtures" / "tinysite", root)
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 0
    return root


@pytest.fixture
def built_copy(tmp_path, built_tinysite) -> Path:
    """The tiny site as a fresh build leaves it, in ``tmp_path``, for a test that changes it: a copy
    of the session's one build (`copy_of_built_tinysite`), a second instead of the build the test
    would otherwise start from."""
    # Test files import the helper from its own module too: `from conftest import ...` finds
    # tests/e2e/conftest.py whenever the browser tests are collected (both are "conftest").
    from built_sites import copy_of_built_tinysite

    return copy_of_built_tinysite(built_tinysite, tmp_path)


@pytest.fixture
def copied_tinysite(tmp_path, built_tinysite) -> Path:
    """The session's build of the tiny site copied into ``tmp_path`` and not built again: the next
    build is a full one, with every run that nothing changed served from the copied cache (for a
    test whose own first build is the one it checks, usually a failing one)."""
    from built_sites import copy_of_built

    return copy_of_built(built_tinysite, tmp_path)


@pytest.fixture(scope="session")
def accepted_tinysite(tmp_path_factory, built_tinysite) -> Path:
    """`built_tinysite` with its cited numbers accepted (a build by ``accept``'s rule), once; never
    modified: the tests that start from accepted numbers copy it (`accepted_copy`)."""
    from built_sites import copy_of_built
    from site_src.build import BuildOptions, NumbersMode, build

    root = copy_of_built(built_tinysite, tmp_path_factory.mktemp("accepted-tinysite"))
    build(BuildOptions(root=root, numbers=NumbersMode.ACCEPT))
    assert (root / "explainers" / "coin-flips.numbers.json").is_file()
    return root


@pytest.fixture
def accepted_copy(tmp_path, accepted_tinysite) -> Path:
    """The tiny site built with its numbers accepted, in ``tmp_path``, for a test that changes it: a
    copy of the session's `accepted_tinysite` (its next build serves the run from the cache), two
    builds fewer than a `built_copy` and an ``accept`` of its own."""
    from built_sites import copy_of_built

    return copy_of_built(accepted_tinysite, tmp_path)
