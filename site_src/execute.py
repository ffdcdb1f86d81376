"""Stage 3, execute: run each generated file in its own process, in parallel, with a cache.

A run is skipped when a cached run's inputs are unchanged. The cache key is two-part, like a
compiler's dependency file: a static part known before the run (the code, the Python version, the
runner) and the dependencies the run itself recorded (every project module it imported, every
project file it opened, the versions of the packages it imported). A cached run is reused only if
all of those still hash the same, so an edit to the library or the data re-runs the explainers
that read it, and only those.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from site_src import _runner
from site_src.errors import ExecutionError
from site_src.extract import CodeFile

CACHE_FORMAT = 1


@dataclass(frozen=True)
class RunResult:
    """What one explainer's run produced."""

    slug: str
    stdout: str
    stderr: str
    values: dict
    figures: list[Path]  # SVG paths; each has a PNG twin next to it
    duration_s: float
    peak_memory_mb: float
    modules: list[str]
    data_files: list[str]
    packages: dict
    python: str
    run_at: str  # ISO date of the run (UTC)
    cached: bool
    reason: str  # why it ran (or "unchanged" for a cache hit)
    run_id: str  # digest of every input of the run (the cache key): same id, same numbers
    out_dir: Path = field(repr=False)
    # One per `# %%` cell of the code (the whole code is one cell without markers): its first
    # line in the generated file, what it printed and the (1-based) figures it opened.
    cells: list = field(default_factory=list, repr=False)

    @property
    def pngs(self) -> list[Path]:
        return [p.with_suffix(".png") for p in self.figures]


def execute(
    code_files: list[CodeFile],
    *,
    root: Path,
    cache_dir: Path,
    timeouts: dict[str, int],
    jobs: int = 1,
    use_cache: bool = True,
    force: set[str] | None = None,
    on_done=None,
) -> tuple[list[RunResult], list[ExecutionError]]:
    """Run (or reuse) every code file; return the results and the failures.

    Parameters
    ----------
    code_files : list of CodeFile
    root : Path
        The repository root: the working directory of each run.
    cache_dir : Path
        Where runs are cached (``.cache/fairsite``); entries of removed explainers are pruned.
    timeouts : dict
        Seconds per slug before the run is killed.
    jobs : int
        How many runs at once (each in its own process).
    use_cache : bool
        False for ``check``: everything runs fresh and nothing is read from the cache.
    force : set of str, optional
        Slugs to re-run even if cached (an empty set means all).
    on_done : callable, optional
        Called with each RunResult or ExecutionError as it finishes (progress display).
    """
    root, cache_dir = Path(root).resolve(), Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    _prune(cache_dir, {c.slug for c in code_files})

    def one(code: CodeFile):
        try:
            reason = "cache disabled (check)" if not use_cache else None
            if force is not None and (not force or code.slug in force):
                reason = "forced"
            if reason is None:
                hit, reason = _lookup(cache_dir / code.slug, code, root)
                if hit is not None:
                    outcome = hit
                    if on_done:
                        on_done(outcome)
                    return outcome
            outcome = _run(code, root=root, cache_dir=cache_dir, timeout=timeouts.get(code.slug, 600), reason=reason)
        except ExecutionError as err:
            outcome = err
        if on_done:
            on_done(outcome)
        return outcome

    _INTERRUPTED.clear()
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        outcomes = list(pool.map(one, code_files))
    except BaseException:
        # Ctrl-C lands in this thread while workers wait on their children: kill the children so
        # the workers return at once, and start nothing new. A worker that starts its child just
        # after this sees the flag and kills it itself.
        _INTERRUPTED.set()
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in list(_RUNNING):
            _kill(proc)
        pool.shutdown(wait=True)
        raise
    pool.shutdown()
    results = [o for o in outcomes if isinstance(o, RunResult)]
    errors = [o for o in outcomes if isinstance(o, ExecutionError)]
    return results, errors


def _run(code: CodeFile, *, root: Path, cache_dir: Path, timeout: int, reason: str) -> RunResult:
    source = _rel(code.source, root)
    work = Path(tempfile.mkdtemp(prefix=f"{code.slug}-", dir=cache_dir))
    spec = {
        "root": str(root),
        "code_path": str(Path(code.path).resolve()),
        "code_rel": _rel(code.path, root),
        "out_dir": str(work),
        "source": source,
        "header_lines": code.header_lines,
        "code_line": code.code_line,
        "timeout": timeout,
    }
    (work / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ)
    # Same numbers whatever the job count: one BLAS thread per run, fixed hashing, no GUI.
    env.update(PYTHONHASHSEED="0", MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "site_src._runner", str(work / "spec.json")],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group, so a timeout kills its children too
    )
    _RUNNING.add(proc)
    if _INTERRUPTED.is_set():
        _kill(proc)
    try:
        stdout, stderr = proc.communicate(timeout=timeout + _GRACE_S)
    except subprocess.TimeoutExpired:
        _kill(proc)
        _, stderr = proc.communicate()
        shutil.rmtree(work, ignore_errors=True)
        raise _timed_out(code, source, timeout, stderr) from None
    except BaseException:
        # Ctrl-C: take the child down with us and leave nothing half-written behind.
        _kill(proc)
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        _RUNNING.discard(proc)
    result_file = work / "result.json"
    if not result_file.exists() and stderr.lstrip().startswith("Timeout ("):  # faulthandler's own stop
        shutil.rmtree(work, ignore_errors=True)
        raise _timed_out(code, source, timeout, stderr)
    if not result_file.exists():
        shutil.rmtree(work, ignore_errors=True)
        raise ExecutionError(
            f"the run died (exit code {proc.returncode}) before reporting:\n{stderr.strip()[-3000:]}",
            explainer=source,
        )
    data = json.loads(result_file.read_text())
    if data["status"] == "error":
        shutil.rmtree(work, ignore_errors=True)
        out = f"\n--- what it printed ---\n{stdout.strip()[-2000:]}" if stdout.strip() else ""
        raise ExecutionError(f"raised {data['error']}\n{data['traceback']}{out}", explainer=source, line=data["source_line"])
    wall = time.perf_counter() - started
    entry = {
        "format": CACHE_FORMAT,
        "static_key": _static_key(code, root),
        "deps": {p: _hash_file(root / p) for p in data["modules"] + data["data_files"]},
        "packages": data["packages"],
        "stdout": stdout,
        "stderr": stderr,
        "values": data["values"],
        "figures": [f["svg"] for f in data["figures"]],
        "cells": data.get("cells", []),
        "duration_s": round(data["duration_s"], 3),
        "wall_s": round(wall, 3),
        "peak_memory_mb": round(data["peak_memory_mb"], 1),
        "modules": data["modules"],
        "data_files": data["data_files"],
        "python": data["python"],
        "run_at": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
    }
    (work / "entry.json").write_text(json.dumps(entry, indent=1, sort_keys=True))
    for name in ("spec.json", "result.json"):
        (work / name).unlink()
    # Swap the finished run in whole: an interrupted run never leaves a half entry behind.
    final = cache_dir / code.slug
    old = cache_dir / f".old-{code.slug}-{os.getpid()}"
    if final.exists():
        final.rename(old)
    work.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return _result(code.slug, final, entry, cached=False, reason=reason)


_GRACE_S = 10  # the run stops itself at its timeout; the build kills it this much later


def _timed_out(code: CodeFile, source: str, timeout: int, stderr: str) -> ExecutionError:
    """A timeout error naming the explainer line the run was on (from faulthandler's dump)."""
    line = None
    for m in re.finditer(r'File "([^"]+)", line (\d+)', stderr):
        if Path(m.group(1)).resolve() == Path(code.path).resolve():
            line = code.source_line(int(m.group(2)))
            break  # faulthandler lists the innermost frame first
    where = " on this line" if line else ""
    return ExecutionError(f"timed out after {timeout} s{where} and was stopped "
                          "(raise `timeout:` in the front matter if it needs longer)", explainer=source, line=line)


_RUNNING: set[subprocess.Popen] = set()  # children of this build, killed on interrupt
_INTERRUPTED = threading.Event()


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: the run's own children too
    except ProcessLookupError:
        pass


def _lookup(entry_dir: Path, code: CodeFile, root: Path) -> tuple[RunResult | None, str]:
    """The cached run if every input is unchanged, else None and the reason to re-run."""
    entry_file = entry_dir / "entry.json"
    if not entry_file.exists():
        return None, "no cached run"
    try:
        entry = json.loads(entry_file.read_text())
    except json.JSONDecodeError:
        return None, "cache entry unreadable"
    if entry.get("format") != CACHE_FORMAT:
        return None, "cache format changed"
    if entry["static_key"] != _static_key(code, root):
        return None, "code or Python changed"
    for path, digest in entry["deps"].items():
        if _hash_file(root / path) != digest:
            return None, f"{path} changed"
    for dist, version in entry["packages"].items():
        now = _installed_version(dist)
        if now != version:
            return None, f"package {dist} {version} -> {now}"
    return _result(code.slug, entry_dir, entry, cached=True, reason="unchanged"), "unchanged"


@functools.lru_cache(maxsize=None)
def _installed_version(dist: str) -> str | None:
    # Every explainer imports much the same packages: look each version up once per process.
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _result(slug: str, out_dir: Path, entry: dict, *, cached: bool, reason: str) -> RunResult:
    return RunResult(
        slug=slug, stdout=entry["stdout"], stderr=entry["stderr"], values=entry["values"],
        figures=[out_dir / f for f in entry["figures"]], duration_s=entry["duration_s"],
        peak_memory_mb=entry["peak_memory_mb"], modules=entry["modules"], data_files=entry["data_files"],
        packages=entry["packages"], python=entry["python"], run_at=entry["run_at"], cached=cached,
        reason=reason, out_dir=out_dir, run_id=_run_id(entry), cells=entry.get("cells", []),
    )


def _run_id(entry: dict) -> str:
    h = hashlib.sha256(entry["static_key"].encode())
    h.update(json.dumps([entry["deps"], entry["packages"]], sort_keys=True).encode())
    return h.hexdigest()


def _static_key(code: CodeFile, root: Path) -> str:
    h = hashlib.sha256()
    for part in (code.text, sys.version, Path(_runner.__file__).read_text(), str(_runner.SEED), str(CACHE_FORMAT)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _hash_file(path: Path) -> str | None:
    try:
        st = Path(path).stat()
    except OSError:
        return None  # a dependency that disappeared: differs from any recorded digest
    return _hash_bytes(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=1024)
def _hash_bytes(path: str, mtime_ns: int, size: int) -> str | None:
    # Several explainers read the same data file: hash it once per version of the file.
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _prune(cache_dir: Path, slugs: set[str]) -> None:
    for child in cache_dir.iterdir():
        if child.is_dir() and child.name not in slugs:
            shutil.rmtree(child, ignore_errors=True)


def _rel(path: Path, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return str(path)
