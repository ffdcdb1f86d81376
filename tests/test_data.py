"""faircode.data.project_root: the project folder from `root`, FAIRCODE_ROOT or the clone, and a
regular (non-editable) install, which finds the audits only when told where they are."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from faircode import list_audits, load_audit
from faircode.data import ROOT_ENV, project_root

ROOT = Path(__file__).resolve().parents[1]


def _project(folder: Path, slugs: tuple[str, ...] = ()) -> Path:
    (folder / "audits").mkdir(parents=True)
    for slug in slugs:
        (folder / "audits" / slug).mkdir()
        (folder / "audits" / slug / "audit.yaml").write_text("name: x\n")
    return folder


def test_the_clone_beside_the_package_is_the_default(monkeypatch):
    monkeypatch.delenv(ROOT_ENV, raising=False)
    assert project_root() == ROOT


def test_root_argument_then_environment_variable(tmp_path, monkeypatch):
    given, from_env = _project(tmp_path / "given"), _project(tmp_path / "env")
    monkeypatch.setenv(ROOT_ENV, str(from_env))
    assert project_root() == from_env.resolve()
    assert project_root(given) == given.resolve()
    assert project_root(str(given)) == given.resolve()


def test_a_root_without_audits_names_the_way_it_was_given(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match=r"`root` is '.*nowhere', which has no audits/ folder"):
        project_root(tmp_path / "nowhere")
    monkeypatch.setenv(ROOT_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError, match=rf"{ROOT_ENV} is .{re.escape(str(tmp_path))}., which has no audits/ folder"):
        project_root()


def test_list_and_load_audit_take_the_root(tmp_path):
    other = _project(tmp_path, ("alpha", "beta"))
    assert list_audits(root=other) == ["alpha", "beta"]
    with pytest.raises(FileNotFoundError, match=r"no audit 'german-credit' under .*available: alpha, beta"):
        load_audit("german-credit", root=other)
    assert load_audit("german-credit", root=ROOT).manifest.root == ROOT


def _installed_copy(tmp_path: Path) -> Path:
    """The packages as a regular install lays them out, away from the clone's audits/.

    setuptools' build_py writes exactly the files the wheel carries (packages and package data
    from pyproject.toml). It runs on a copy of the sources, so the clone is not touched. (The
    locked environment has no `wheel` package, which setuptools 65 needs to build a wheel
    offline; build_py is the step of that build that lays out the files.)
    """
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for package in ("faircode", "site_src"):
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns("__pycache__"))
    lib = tmp_path / "site-packages"
    subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py",
                    "--build-lib", str(lib)], cwd=src, check=True, capture_output=True, timeout=600)
    return lib


def test_a_regular_install_needs_to_be_told_where_the_audits_are(tmp_path):
    lib = _installed_copy(tmp_path)
    away = tmp_path / "elsewhere"  # the current folder: not the clone, nothing above it has audits/
    away.mkdir()
    env = {k: v for k, v in os.environ.items() if k != ROOT_ENV} | {"PYTHONPATH": str(lib)}
    probe = ("import faircode; from faircode.audit import list_audits, load_audit; print(faircode.__file__); "
             "print(list_audits()); print(len(load_audit('german-credit').df))")

    lost = subprocess.run([sys.executable, "-c", probe], cwd=away, env=env, capture_output=True, text=True,
                          timeout=600)
    assert lost.returncode != 0
    error = lost.stderr.strip().splitlines()[-1]
    assert error.startswith("FileNotFoundError: cannot find the project folder holding audits/")
    assert "`root`" in error and f"{ROOT_ENV}=" in error

    found = subprocess.run([sys.executable, "-c", probe], cwd=away, env=env | {ROOT_ENV: str(ROOT)},
                           capture_output=True, text=True, timeout=600)
    assert found.returncode == 0, found.stderr
    package, slugs, rows = found.stdout.strip().splitlines()
    assert Path(package).is_relative_to(lib)  # the installed copy, not the editable clone
    assert slugs == str(list_audits())
    assert rows == str(len(load_audit("german-credit").df))
