"""faircode.environment: the installed packages against the lock files, and the check commands
saying so before anything else."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from faircode.environment import lock_mismatches, lock_warning, read_lock

REPO = Path(__file__).resolve().parent.parent
HASH = "    --hash=sha256:" + "0" * 64


def _lock(root: Path, site: str, test: str = "") -> Path:
    (root / "requirements").mkdir(parents=True, exist_ok=True)
    (root / "requirements" / "site.txt").write_text(site)
    (root / "requirements" / "test.txt").write_text(test or site)
    return root


def test_a_wrong_locked_version_is_named_with_locked_and_installed(tmp_path):
    numpy = importlib.metadata.version("numpy")
    site = f"# a comment\nnumpy==0.0.1 \\\n{HASH}\n    # via pandas\nPyYAML=={importlib.metadata.version('pyyaml')}\n"
    mismatches = lock_mismatches(_lock(tmp_path, site))
    assert [(m.package, m.locked, m.installed) for m in mismatches] == [("numpy", "0.0.1", numpy)]
    text = lock_warning(tmp_path)
    assert "numpy" in text and "0.0.1" in text and numpy in text and "--require-hashes" in text


def test_missing_runtime_package_is_named_but_a_missing_test_tool_is_not(tmp_path):
    site = "surely-not-installed-pkg==1.0\n"
    test = site + "another-missing-test-tool==2.0\n"
    mismatches = lock_mismatches(_lock(tmp_path, site, test))
    assert [(m.package, m.installed) for m in mismatches] == [("surely-not-installed-pkg", None)]


def test_versions_compare_as_versions_and_names_canonically(tmp_path):
    root = _lock(tmp_path, "Scikit_Learn==1.4.0\n")
    assert lock_mismatches(root, installed={"scikit-learn": "1.4"}) == []
    assert [m.installed for m in lock_mismatches(root, installed={"scikit-learn": "1.4.1"})] == ["1.4.1"]


def test_a_marker_that_does_not_hold_is_skipped(tmp_path):
    root = _lock(tmp_path, 'pywin32==306 ; sys_platform == "win32"\n')
    assert lock_mismatches(root, installed={}) == []


def test_no_lock_file_means_nothing_to_say(tmp_path):
    assert lock_mismatches(tmp_path) is None and lock_warning(tmp_path) is None


@pytest.mark.parametrize("line, match", [("numpy>=1.0", "not pinned"), ("numpy==1 ==2 ??", "not a requirement")])
def test_a_malformed_lock_names_file_and_line(tmp_path, line, match):
    _lock(tmp_path, f"# header\n{line}\n")
    with pytest.raises(ValueError, match=rf"site.txt:2: .*{match}"):
        read_lock(tmp_path / "requirements" / "site.txt")
    assert "cannot compare the environment with the lock" in lock_warning(tmp_path)


def test_the_two_lock_files_pinning_one_package_differently_is_an_error(tmp_path):
    _lock(tmp_path, "numpy==2.0.0\n", "numpy==2.1.0\n")
    with pytest.raises(ValueError, match="site.txt pins numpy==2.0.0 but requirements/test.txt pins numpy==2.1.0"):
        lock_mismatches(tmp_path, installed={})


def test_the_committed_lock_covers_pyproject_and_agrees_with_itself():
    """Every dependency pyproject declares is pinned, within its range; shared pins are equal."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    site, test = read_lock(REPO / "requirements" / "site.txt"), read_lock(REPO / "requirements" / "test.txt")
    extras = project["optional-dependencies"]
    for spec, lock in [*((s, site) for s in [*project["dependencies"], *extras["site"]]),
                       *((s, test) for s in extras["test"])]:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        assert name in lock, f"{name} is declared in pyproject.toml but not locked; run requirements/refresh"
        assert req.specifier.contains(lock[name], prereleases=True), f"{name}=={lock[name]} outside {req.specifier}"
    assert {k: test[k] for k in site} == site


def test_fairsite_check_names_the_mismatch_before_anything_else(tmp_path, capsys):
    import shutil

    from site_src.cli import main as fairsite

    root = tmp_path / "site-root"
    shutil.copytree(REPO / "tests" / "fixtures" / "tinysite", root)
    _lock(root, "numpy==0.0.1\n")
    fairsite(["--root", str(root), "accept", "--jobs", "1"])
    err = capsys.readouterr().err
    assert "numpy" in err and "0.0.1" in err
    assert err.index("differ from the lock") < err.index("coin-flips")


def test_faircode_benchmark_check_names_the_mismatch_first(tmp_path, capsys, monkeypatch):
    import faircode.audit  # noqa: F401 - imported before the patch: it finds the audits at the real root
    import faircode.data
    from faircode.cli import main

    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setattr(faircode.data, "project_root", lambda root=None: _lock(tmp_path, "numpy==0.0.1\n"))
    monkeypatch.chdir(tmp_path)  # in no project: not in another than the one it reads (the command refuses that)
    argv = ["benchmark", "--audit", "german-credit", "--strategy", "S0", "--model", "logistic_regression",
            "--output", str(tmp_path / "results"), "--no-progress", "--check"]
    assert main(argv) == 1  # no committed results there: the run fails after the warning
    out = capsys.readouterr().out
    assert "numpy" in out and "0.0.1" in out
    assert out.index("differ from the lock") < out.index("does not exist")


def test_readme_commands_install_from_the_lock_and_ci_runs_them_verbatim():
    import re

    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    commands = re.findall(r"^python3\.11 -m venv .*$", readme, flags=re.MULTILINE)
    assert len(commands) == 2
    for command, lock in zip(commands, ("site.txt", "test.txt")):
        # The project itself built by the locked setuptools (no build isolation: nothing unhashed).
        assert f"--require-hashes -r requirements/{lock}" in command
        assert "--no-deps --no-build-isolation -e ." in command
        assert command in ci.splitlines()
