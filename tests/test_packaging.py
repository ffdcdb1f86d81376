"""Packaging (issue 25, points 7 and 15): the library's dependencies apart from the site stack,
`fairsite` without the `site` extra, the build backend inside the lock, license metadata that
the locked setuptools takes without a deprecation warning, and the library example of LIBRARY.md."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from faircode.environment import read_lock
from site_src.extra import SITE_EXTRA

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
# Distribution -> module, where the two names differ (the rest import under their own name).
MODULE_OF = {"scikit-learn": "sklearn", "pyyaml": "yaml"}


def _names(specs) -> set[str]:
    return {canonicalize_name(Requirement(s).name) for s in specs}


def _third_party_imports(folder: Path) -> set[str]:
    """Every top-level module a package's code imports that is neither its own nor the standard
    library's (imports inside functions included: the command line imports lazily)."""
    found = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m not in sys.stdlib_module_names and m != folder.name}


def test_installing_the_library_does_not_pull_the_site_stack():
    # On main every site package (MkDocs, Material, matplotlib, Jinja, statsmodels) was a dependency.
    library = _names(PYPROJECT["project"]["dependencies"])
    site = _names(PYPROJECT["project"]["optional-dependencies"]["site"])
    assert not library & site
    assert site == set(SITE_EXTRA)  # fairsite's check names exactly the extra
    # Each module faircode imports is a declared dependency of the library, or of the `dask` extra
    # (the benchmark's dask backend, a report counting a folder of Parquet files), imported only
    # when asked for.
    modules = {MODULE_OF.get(name, name.replace("-", "_")) for name in library}
    on_request = _names(PYPROJECT["project"]["optional-dependencies"]["dask"])
    assert on_request == {"distributed", "dask", "pyarrow"}
    assert _third_party_imports(REPO / "faircode") - on_request <= modules


def test_the_library_imports_and_runs_without_the_site_stack():
    """With every package of the `site` extra made unimportable, all of faircode imports and the
    faircode command answers."""
    blocked = sorted(SITE_EXTRA.values())
    code = (f"import sys\nfor m in {blocked!r}: sys.modules[m] = None\n"
            "import importlib, pkgutil, faircode\n"
            "for info in pkgutil.walk_packages(faircode.__path__, 'faircode.'):\n"
            "    importlib.import_module(info.name)\n"
            "from faircode.cli import main\n"
            "try:\n    main(['benchmark', '--help'])\nexcept SystemExit as e:\n    sys.exit(e.code)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "--check" in done.stdout


def test_fairsite_without_the_site_extra_says_what_to_install(tmp_path):
    # On main: a ModuleNotFoundError traceback from somewhere inside the build.
    shutil.copytree(REPO / "tests" / "fixtures" / "tinysite", tmp_path / "site-root")
    code = ("import sys\nsys.modules['mkdocs'] = sys.modules['matplotlib'] = None\n"
            "from site_src.cli import main\n"
            f"sys.exit(main(['--root', {str(tmp_path / 'site-root')!r}, 'build']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                          env={"PATH": "/usr/bin:/bin", "COLUMNS": "300"})
    assert done.returncode == 2, done.stderr
    err = " ".join(done.stderr.split())
    assert "Traceback" not in err
    assert "fairsite needs the site extra: matplotlib, mkdocs not installed" in err
    assert "pip install --require-hashes -r requirements/site.txt" in err
    assert not (tmp_path / "site-root" / "site").exists()


def test_the_build_backend_is_locked_with_hashes_in_both_lock_files():
    """pip builds the project with --no-build-isolation, so the backend must come from the lock."""
    build = PYPROJECT["build-system"]["requires"]
    listed = [line for line in (REPO / "requirements" / "build.in").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert listed == build  # requirements/refresh locks what pyproject builds with
    for lock in ("site.txt", "test.txt"):
        pins = read_lock(REPO / "requirements" / lock)
        text = (REPO / "requirements" / lock).read_text()
        for spec in build:
            req = Requirement(spec)
            name = canonicalize_name(req.name)
            assert name in pins and req.specifier.contains(pins[name]), (lock, spec)
            block = re.search(rf"^{re.escape(req.name)}=={re.escape(pins[name])} \\\n((?:    --hash=sha256:\w+.*\n)+)",
                              text, flags=re.MULTILINE)
            assert block, f"{name} has no hashes in {lock}"


def test_license_metadata_is_spdx_and_the_locked_setuptools_does_not_warn(tmp_path):
    # On main: `license = {text = "MIT"}` and a License classifier, which setuptools >= 77 warns
    # about ("`project.license` as a TOML table is deprecated", to stop working after 2027-02-18).
    project = PYPROJECT["project"]
    assert project["license"] == "MIT" and not any(c.startswith("License ::") for c in project["classifiers"])
    assert all((REPO / f).is_file() for f in project["license-files"])
    for name in ("pyproject.toml", "README.md", *project["license-files"]):
        shutil.copy(REPO / name, tmp_path / name)
    for package in ("faircode", "site_src"):
        (tmp_path / package).mkdir()
        shutil.copy(REPO / package / "__init__.py", tmp_path / package)
    (tmp_path / "out").mkdir()
    prepare = "from setuptools import build_meta as b; print(b.prepare_metadata_for_build_editable('out'))"
    done = subprocess.run([sys.executable, "-W", "error", "-c", prepare], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    metadata = next((tmp_path / "out").glob("*.dist-info")).joinpath("METADATA").read_text()
    assert "License-Expression: MIT" in metadata and "License-File: LICENSE" in metadata


def test_the_readme_library_example_runs_and_prints_what_the_readme_says(capsys):
    import pandas as pd
    import pytest

    readme = (REPO / "LIBRARY.md").read_text()
    section = readme.split("## Using the library", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)
    said = [line.removeprefix("# ") for line in block.splitlines() if line.startswith("# ")]
    namespace: dict = {}
    exec(compile(block, "LIBRARY.md (Using the library)", "exec"), namespace)  # noqa: S102 - our own docs
    assert capsys.readouterr().out.splitlines() == said
    # The gap and the exact p-value are those of the benchmark's committed row (its own code path:
    # faircode.benchmark, Newcombe interval, exact test), to the digits the file keeps.
    results = pd.read_csv(REPO / "results" / "results_fairness.csv")
    row = results.query("audit == 'german-credit' and strategy == 'S0' and model == 'logistic_regression' "
                        "and attribute == 'sex' and metric == 'demographic_parity_difference'").iloc[0]
    report = namespace["report"]
    assert report.gap == pytest.approx(row.gap, rel=1e-9) and report.p_value == pytest.approx(row.p_value, rel=1e-9)
    assert (report.n_a, report.n_b) == (row.n_disadvantaged, row.n_advantaged)
    assert report.ci_method == row.ci_method == "newcombe"
    assert (report.ci_low, report.ci_high) == (pytest.approx(row.ci_low, rel=1e-9), pytest.approx(row.ci_high, rel=1e-9))
