"""Browser tests do not vanish quietly: under CI a skipped test in tests/e2e fails the run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).parent / "e2e" / "conftest.py"
# Each case runs pytest in a child process (one per xdist worker too). Hypothesis's plugin imports
# all of Hypothesis in each (most of a bare pytest's start-up); no test here uses it. The 600 s
# limits only stop a hang: under CI's load (the suite's own workers busy) a child pytest with two
# workers of its own once took over 120 s.
_PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest"]


@pytest.mark.parametrize("ci, outcome", [("true", "1 failed"), ("1", "1 failed"), ("", "1 skipped"),
                                         ("false", "1 skipped")])
def test_a_skipped_browser_test_fails_under_ci(tmp_path, ci, outcome):
    e2e = tmp_path / "tests" / "e2e"
    e2e.mkdir(parents=True)
    shutil.copyfile(CONFTEST, e2e / "conftest.py")
    (e2e / "test_browser.py").write_text(
        "import pytest\n\ndef test_needs_a_browser():\n    pytest.skip('no chromium here')\n\n"
        "def test_other():\n    assert True\n")
    env = {**os.environ, "CI": ci}
    proc = subprocess.run([*_PYTEST, "-q", str(e2e)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert outcome in proc.stdout, proc.stdout
    assert "1 passed" in proc.stdout
    if outcome == "1 failed":
        assert "browser test skipped under CI" in proc.stdout and "no chromium here" in proc.stdout
        assert proc.returncode == 1


def test_a_skipped_browser_test_fails_under_ci_on_xdist_workers(tmp_path):
    # The README's command runs the suite on pytest-xdist workers (issue 26): the rule must hold
    # there too, with the suite's own tests/conftest.py grouping the tests.
    e2e = tmp_path / "tests" / "e2e"
    e2e.mkdir(parents=True)
    shutil.copyfile(CONFTEST, e2e / "conftest.py")
    shutil.copyfile(CONFTEST.parent.parent / "conftest.py", tmp_path / "tests" / "conftest.py")
    (e2e / "test_browser.py").write_text(
        "import pytest\n\ndef test_needs_a_browser():\n    pytest.skip('no chromium here')\n\n"
        "def test_other():\n    assert True\n")
    env = {**os.environ, "CI": "true"}
    proc = subprocess.run([*_PYTEST, "-q", "-n", "2", str(tmp_path / "tests")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert "1 failed" in proc.stdout and "1 passed" in proc.stdout, proc.stdout
    assert "browser test skipped under CI" in proc.stdout and proc.returncode == 1


def test_xdist_keeps_each_file_on_one_worker(tmp_path):
    # tests/conftest.py's scheduler (issue 26): what a file's tests share is built by one worker
    # only (the real site the browser tests read is built once, under a lock: e2e/conftest.py). The
    # browser tests share nothing else and are handed out one at a time, browser tests first; the
    # calculator's browser file, which shares one page between its tests, stays whole. `-n auto`
    # starts one worker per core and one more.
    tests = tmp_path / "tests"
    (tests / "e2e").mkdir(parents=True)
    shutil.copyfile(CONFTEST.parent.parent / "conftest.py", tests / "conftest.py")
    body = "import pytest\n\n@pytest.mark.parametrize('i', range(6))\ndef test_x(i):\n    pass\n"
    files = ("test_a.py", "test_b.py", "e2e/test_c.py", "e2e/test_d.py", "e2e/test_faircalc.py")
    for name in files:
        (tests / name).write_text(body)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_AUTO_NUM_WORKERS"}
    proc = subprocess.run([*_PYTEST, "-v", "-n", "auto", str(tests)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert "30 passed" in proc.stdout, proc.stdout
    workers: dict[str, set[str]] = {}
    order: dict[str, list[str]] = {}  # each worker's tests, in the order it ran them
    for line in proc.stdout.splitlines():
        if " PASSED " in line:
            worker, node = line.split()[0], line.split(" PASSED ")[1].split("::")[0]
            workers.setdefault(node, set()).add(worker)
            order.setdefault(worker, []).append(node)
    assert set(workers) == {f"tests/{name}" for name in files}
    assert len(order) == len(os.sched_getaffinity(0)) + 1, order  # -n auto: a worker per core and one more
    for name in ("test_a.py", "test_b.py", "e2e/test_faircalc.py"):
        assert len(workers[f"tests/{name}"]) == 1, workers  # each file on one worker
    assert len(workers["tests/e2e/test_c.py"] | workers["tests/e2e/test_d.py"]) > 1, workers  # spread
    assert all(run[0].startswith("tests/e2e/") for run in order.values()), order  # browser tests first


def test_slow_files_start_right_after_the_browser_tests(tmp_path):
    # tests/conftest.py's start order (issue 26): the browser tests, then the slow files in the
    # order its list gives (a slow file started last would run alone at the end), then the rest.
    # One worker runs the units in the order they are handed out.
    tests = tmp_path / "tests"
    (tests / "e2e").mkdir(parents=True)
    shutil.copyfile(CONFTEST.parent.parent / "conftest.py", tests / "conftest.py")
    body = "import pytest\n\n@pytest.mark.parametrize('i', range(2))\ndef test_x(i):\n    pass\n"
    files = ("test_a.py", "test_cache.py", "test_site_cli.py", "test_z.py", "e2e/test_c.py", "e2e/test_faircalc.py")
    for name in files:
        (tests / name).write_text(body)
    proc = subprocess.run([*_PYTEST, "-v", "-n", "1", str(tests)],
                          cwd=tmp_path, env=os.environ, capture_output=True, text=True, timeout=600)
    assert "12 passed" in proc.stdout, proc.stdout
    ran = [line.split(" PASSED ")[1].split("::")[0] for line in proc.stdout.splitlines() if " PASSED " in line]
    firsts = list(dict.fromkeys(ran))  # each file where its first test ran
    assert firsts[:4] == ["tests/e2e/test_faircalc.py", "tests/e2e/test_c.py", "tests/test_cache.py",
                          "tests/test_site_cli.py"], firsts
    assert set(firsts[4:]) == {"tests/test_a.py", "tests/test_z.py"}, firsts


def test_while_the_first_worker_builds_the_site_the_others_start_the_slowest_files(tmp_path):
    # tests/conftest.py (issue 26): the browser tests wait for the real site, which the first of
    # them builds, so the calculator's browser file starts on one worker and the slowest files, one
    # each, on the others (test_slow_files_start_right_after_the_browser_tests: the order after).
    tests = tmp_path / "tests"
    (tests / "e2e").mkdir(parents=True)
    shutil.copyfile(CONFTEST.parent.parent / "conftest.py", tests / "conftest.py")
    body = "import pytest\n\n@pytest.mark.parametrize('i', range(2))\ndef test_x(i):\n    pass\n"
    files = ("test_a.py", "test_cache.py", "test_site_build.py", "test_site_numbers.py", "e2e/test_c.py",
             "e2e/test_faircalc.py")
    for name in files:
        (tests / name).write_text(body)
    proc = subprocess.run([*_PYTEST, "-v", "-n", "3", str(tests)],
                          cwd=tmp_path, env=os.environ, capture_output=True, text=True, timeout=600)
    assert "12 passed" in proc.stdout, proc.stdout
    order: dict[str, list[str]] = {}  # each worker's files, in the order it ran them
    for line in proc.stdout.splitlines():
        if " PASSED " in line:
            worker, node = line.split()[0], line.split(" PASSED ")[1].split("::")[0]
            order.setdefault(worker, []).append(node)
    assert {run[0] for run in order.values()} == {"tests/e2e/test_faircalc.py", "tests/test_cache.py",
                                                  "tests/test_site_build.py"}, order
