"""Stage 3, execute: run each generated file in its own process, in parallel, with a cache.

A run is skipped when a cached run's inputs are unchanged; ``site_src.execution.cache`` says when that is
(the key, what the run recorded, declared ``inputs:``, reads it cannot track) and checks the
entry and its files on every use.
"""

from __future__ import annotations

import ast
import functools
import json
from glob import has_magic as globlib_has_magic
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path


from site_src import filestate
from site_src.execution import _limits, cache
from site_src.execution._forkserver import PRELOAD, _Forked, _ForkServer, start_server_early
from site_src.execution._limits import _TOKEN, _run_environment
from site_src.sources.collect import DEFAULT_MEMORY
from site_src.errors import ExecutionError
from site_src.rendering.terminal import (OUTPUT_MAX_CHARS, OUTPUT_MAX_LINES, bound_output, download_name,
                                         format_size)
from site_src.sources.extract import CodeFile


# What of a run's top-level names reaches the prose and the checks (the runner's `_plain`): said
# where a name is missing, since a table the code did define is not passed (a fresh user read
# "'table' is undefined" of a DataFrame on line 225 of the code).
PASSED_VALUES = ("the run passes only its numbers, true/false, text, and short lists or dicts of them; compute the "
                 "number to cite in the code")


def missing_name(name: str, run: RunResult) -> str:
    """Why ``name``, cited by a page or a check, is not among ``run.values``: a value the code
    defined that the run does not pass (its type named), or a name the code does not define."""
    if name in run.unpassed:
        return (f"'{name}' is a value the code defined (of type {run.unpassed[name]}) that the run does not pass: "
                f"{PASSED_VALUES}")
    return f"'{name}' is not a name the code defines"


@dataclass(frozen=True)
class RunResult:
    """What one explainer's run produced."""

    slug: str
    stdout: str
    stderr: str
    values: dict  # the top-level names the code defined that prose can cite (`PASSED_VALUES`)
    figures: list[Path]  # SVG paths (a phone's variant, `-narrow.svg`, next to some)
    duration_s: float
    peak_memory_mb: float
    modules: list[str]
    data_files: list[str]
    untracked: list[str]  # reads the cache cannot track (see site_src.execution.cache)
    packages: dict[str, str]  # distribution -> version, of those the run imported
    python: str
    run_at: str  # ISO date of the run (UTC)
    cached: bool
    reason: str  # why it ran (or "unchanged" for a cache hit)
    run_id: str  # digest of every input of the run (the cache key): same id, same numbers
    out_dir: Path = field(repr=False)
    warnings: tuple[str, ...] = ()  # output that was not UTF-8, processes left running (killed)
    unpassed: dict = field(default_factory=dict)  # names the code defined that are not passed -> their type's name
    # Each project file the run read (its modules and data; root-relative) -> its sha256 then (None:
    # it was missing): what the accepted numbers record they came from (`snapshot.changed_since`).
    deps: dict = field(default_factory=dict, repr=False)
    # One per `# %%` cell of the code (the whole code is one cell without markers): its first
    # line in the generated file, what it printed and the (1-based) figures it opened.
    cells: list[cache.CellRecord] = field(default_factory=list, repr=False)
    # The run changed a file its `inputs:` declare (a database it adds to): the next build runs it again.
    changed_its_inputs: bool = False
    cpu_s: float | None = None  # the code's CPU time (None: a cached run stored before it was recorded)

    @property
    def busy_s(self) -> float:
        """The code's time as the time budget counts it: its CPU time, at most its time on the clock
        (``duration_s``; a pool of processes may use more CPU than that). Time spent waiting for a
        core on a busy machine is not the code's cost: on a loaded 2-core machine a first build
        named 8 of the project's own explainers slow (issue 47)."""
        return self.duration_s if self.cpu_s is None else min(self.cpu_s, self.duration_s)


OnRunStart = Callable[[str], None]  # given the slug of a run as it starts (not for a cache hit)
OnRunDone = Callable[[RunResult | ExecutionError], None]  # given each outcome as it finishes


def execute(
    code_files: list[CodeFile],
    *,
    root: Path,
    cache_dir: Path,
    timeouts: dict[str, int],
    inputs: dict[str, list[str] | None] | None = None,
    memory: dict[str, int] | None = None,
    expected_warnings: dict[str, list[str]] | None = None,
    jobs: int = 1,
    use_cache: bool = True,
    force_all: bool = False,
    force: Collection[str] = frozenset(),
    on_done: OnRunDone | None = None,
    on_start: OnRunStart | None = None,
    fork: bool = True,
    keep_server: bool = False,
    early_server: _ForkServer | None = None,
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
    inputs : dict, optional
        Each slug's declared ``inputs:`` (paths or globs relative to ``root``), or None where
        the explainer declares none.
    memory : dict, optional
        Bytes of address space per slug (``RLIMIT_AS``); ``DEFAULT_MEMORY`` for a slug not named.
    expected_warnings : dict, optional
        Each slug's ``warnings:`` patterns (regular expressions over ``Category: message``): a
        warning the run issued that none matches is named as unexpected in its ``warnings``.
    jobs : int
        How many runs at once (each in its own process).
    use_cache : bool
        False for ``check``: everything runs fresh and nothing is read from the cache.
    force_all : bool
        Re-run every explainer even if cached (``fairsite build --force``).
    force : collection of str
        Slugs to re-run even if cached (``fairsite build --force SLUG ...``).
    on_done : callable, optional
        Called with each RunResult or ExecutionError as it finishes (progress display).
    on_start : callable, optional
        Called with the slug when a run starts (not for a cache hit).
    fork : bool
        Fork each run from a server that has imported what the explainers import (Linux; the
        default), instead of starting a fresh interpreter per run. Both give every run a clean
        process of its own with the same limits (see ``site_src.execution._runner``).
    keep_server : bool
        Keep the fork server for the next call (``fairsite serve``: a code edit's rebuild does not
        pay for its imports again) as long as the library, the build's code and the installed
        packages are the ones it imported (`kept_server_fingerprint`); `close_kept_server` ends it.
    early_server : _ForkServer, optional
        A server the build started before reading its explainers (`start_server_early`), used
        for the runs instead of starting one now, and closed once they are done.

    Returns
    -------
    tuple of (list of RunResult, list of ExecutionError)
        The runs that succeeded (fresh or from the cache) and the ones that failed, each in the
        order of ``code_files``.
    """
    root, cache_dir = Path(root).resolve(), Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    cache.prune(cache_dir, {c.slug for c in code_files})
    filestate.load_digests(cache_dir)
    inputs = inputs or {}
    expected = expected_warnings or {}

    def _limits_of(slug: str) -> tuple[int, int]:
        """The run's timeout (s) and memory limit (bytes): part of its cache key."""
        return timeouts.get(slug, 600), (memory or {}).get(slug, DEFAULT_MEMORY)

    protected = functools.cache(lambda: filestate.repository_files(root))  # asked once, if anything runs

    def run(code: CodeFile, reason: str, server: _ForkServer | None,
            places: _Places | None = None) -> RunResult | ExecutionError:
        try:
            timeout, memory_bytes = _limits_of(code.slug)
            outcome = _run(code, root=root, cache_dir=cache_dir, timeout=timeout, memory=memory_bytes, reason=reason,
                           declared=inputs.get(code.slug), on_start=on_start, server=server, protected=protected(),
                           expected=expected.get(code.slug, []), slot=_CodeSlot(places, code.slug))
        except ExecutionError as err:
            outcome = err
        finally:
            if places is not None:
                places.passed(code.slug)  # its turn is over, whether or not its code ran
        if on_done:
            on_done(outcome)
        return outcome

    outcomes: dict[str, RunResult | ExecutionError] = {}
    todo: list[tuple[CodeFile, str]] = []
    for code in code_files:
        try:
            hit, reason = _lookup(code, root=root, cache_dir=cache_dir, declared=inputs.get(code.slug),
                                  limits=_limits_of(code.slug), expected=expected.get(code.slug, []),
                                  use_cache=use_cache, forced=force_all or code.slug in force)
        except ExecutionError as err:
            hit, reason = err, ""
        if hit is None:
            todo.append((code, reason))
            continue
        outcomes[code.slug] = hit
        if on_done:
            on_done(hit)
    # Longest first (by the last recorded run; never run: first), so that the slowest run
    # does not start last and leave the other workers idle at the end.
    todo.sort(key=lambda item: -cache.last_run_seconds(cache_dir / item[0].slug))
    for code in code_files if todo else ():  # parsed now, while the first run waits for the server's imports
        _top_level_imports(code.text)
    outcomes.update(_run_all(todo, run, root=root, jobs=jobs, fork=fork, cache_dir=cache_dir,
                             keep=[c for c in code_files] if keep_server else None, early=early_server))
    # With no run, every code is as its entry recorded it and so is what it imports (an explainer
    # removed leaves its modules in the record until a run: the next server imports one too many).
    if todo or not (cache_dir / PRELOAD).exists():
        _remember_preload(cache_dir, code_files)  # with what these runs imported, for the next early server
    filestate.save_digests(cache_dir)
    in_order = [outcomes[c.slug] for c in code_files]
    return ([o for o in in_order if isinstance(o, RunResult)],
            [o for o in in_order if isinstance(o, ExecutionError)])


def _lookup(code: CodeFile, *, root: Path, cache_dir: Path, declared: list[str] | None, limits: tuple[int, int],
            use_cache: bool, forced: bool, expected: list[str] = ()) -> tuple[RunResult | None, str]:
    """A cache hit as a RunResult, or None and the reason to run."""
    if not use_cache:
        return None, "cache disabled (check)"
    if forced:
        return None, "forced"
    entry, reason = cache.lookup(cache_dir / code.slug, code_text=code.text, declared=declared, limits=limits, root=root)
    if entry is None:
        return None, reason
    return _result(code.slug, cache_dir / code.slug, entry, cached=True, reason=reason, expected=expected,
                   source=_rel(code.source, root), output_shown=code.output_shown), reason


def _run_all(todo: list[tuple[CodeFile, str]],
             run: Callable[[CodeFile, str, _ForkServer | None, _Places], RunResult | ExecutionError], *,
             root: Path, jobs: int, fork: bool, cache_dir: Path,
             keep: list[CodeFile] | None = None,
             early: _ForkServer | None = None) -> dict[str, RunResult | ExecutionError]:
    """Each ``run(code, reason, server, places)`` of ``todo``, at most ``jobs`` explainers' code at
    once, started in the order of ``todo`` (``places``, `_Places`, each run holds one while its code
    runs, `_CodeSlot`), on a pool of
    threads each waiting on its own process; on Ctrl-C, every process is killed before the
    interrupt goes on. With ``keep`` (every code file of the site), the server is the kept one
    (`_kept_server`).

    A forked run gives its place back when its code has ended and goes on saving its figures in
    its own process: the next explainer's code starts meanwhile (issue 26). Twice ``jobs``
    threads let each of the ``jobs`` places have one run saving figures behind it."""
    _INTERRUPTED.clear()
    if not (todo and fork and _ForkServer.available()):
        server = None
    elif keep is not None:
        server = _kept_server(root, keep, cache_dir)
    elif early is not None and early.proc.poll() is None:
        server = early  # started while the build collected, hashed and extracted
    else:
        # Started here, in the thread that lives for the whole build: the server dies with it.
        server = _ForkServer(root, _preload([c for c, _ in todo], cache_dir), first=_preload([todo[0][0]], cache_dir))
    if early is not None and early is not server:
        early.close()
    if todo:  # each run's packages are looked up in it when the run ends (`_entry`)
        threading.Thread(target=cache.read_package_index, name="fairsite-package-index", daemon=True).start()
    jobs = max(1, jobs)
    places = _Places(jobs, [c.slug for c, _ in todo])
    pool = ThreadPoolExecutor(max_workers=max(1, min(2 * jobs if server is not None else jobs, len(todo) or 1)))
    outcomes = {}
    try:
        for (code, _), outcome in zip(todo, pool.map(lambda item: run(*item, server, places), todo)):
            outcomes[code.slug] = outcome
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
    finally:
        if server is not None and server is not _KEPT.get("server"):
            server.close()
    pool.shutdown()
    return outcomes


def _remember_preload(cache_dir: Path, code_files: list[CodeFile]) -> None:
    """Record what every explainer imports (`_preload`), and what the one the next build runs
    first does (the slowest, as `execute` orders them), for `start_server_early`, if it changed."""
    first = min(code_files, key=lambda c: -cache.last_run_seconds(cache_dir / c.slug), default=None)
    text = json.dumps({"preload": _preload(code_files, cache_dir),
                       "first": _preload([first], cache_dir) if first is not None else []})
    path = cache_dir / PRELOAD
    try:
        if path.read_text() == text:
            return
    except OSError:
        pass
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


# fairsite serve's fork server, kept between rebuilds: {"server", "fingerprint", "root"}.
_KEPT: dict = {}


def kept_server_fingerprint(root: Path) -> str:
    """What a kept fork server's imports depend on: the project's Python files (the library the
    explainers import, the runner) by size and time, and where and which packages are installed.
    A change to any of them starts a new server, so no run executes code older than the tree's."""
    parts = [sys.executable, json.dumps(filestate._environment(), sort_keys=True)]
    for package in ("faircode", "site_src"):
        for path in sorted((root / package).rglob("*.py")):
            st = path.stat()
            parts.append(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}")
    return filestate.digest_parts(parts)


def _kept_server(root: Path, code_files: list[CodeFile], cache_dir: Path) -> _ForkServer:
    """The kept server if it is alive and its fingerprint holds, else a new one (kept in its place).

    It preloads what every explainer imports, not only the ones this build runs: the next
    rebuild may run another. A server that died (the thread that started it ended, taking its
    parent-death signal with it) is replaced."""
    fingerprint = kept_server_fingerprint(root)
    server = _KEPT.get("server")
    if server is not None and (_KEPT["fingerprint"] != fingerprint or _KEPT["root"] != root
                               or server.proc.poll() is not None):
        close_kept_server()
        server = None
    if server is None:
        server = _ForkServer(root, _preload(code_files, cache_dir))
        _KEPT.update(server=server, fingerprint=fingerprint, root=root)
    return server


def close_kept_server() -> None:
    """End the fork server `execute` kept (``keep_server=True``), if any."""
    server = _KEPT.pop("server", None)
    _KEPT.clear()
    if server is not None:
        server.close()


def _run(code: CodeFile, *, root: Path, cache_dir: Path, timeout: int, memory: int, reason: str,
         declared: list[str] | None, on_start: OnRunStart | None = None,
         server: _ForkServer | None = None, expected: list[str] = (), slot: _CodeSlot | None = None,
         protected: tuple[str, ...] = ()) -> RunResult:
    """Run one explainer in a clean process of its own and cache what it produced: spawn the
    process and wait for it, collect what it reported, store the entry. A run that fails (or is
    interrupted) raises and leaves nothing in the cache folder. ``slot``: its place among the
    runs whose code may run at once, taken before it starts, given back when its code ends.
    ``protected``: the repository's files (`filestate.repository_files`), which the run may not change."""
    source = _rel(code.source, root)
    slot = slot or _CodeSlot(None)
    work = Path(tempfile.mkdtemp(prefix=f"{code.slug}-", dir=cache_dir))
    try:
        spec = _write_spec(code, work, root=root, source=source, timeout=timeout, memory=memory, protected=protected)
        slot.take()
        declared_before = cache.declared_inputs(root, declared)  # as the run found them
        if on_start:
            on_start(code.slug)
        started = time.perf_counter()
        returncode, leftover = _spawn(code, spec, root=root, source=source, timeout=timeout, server=server, slot=slot)
        reported = _collect(code, work, returncode, leftover, source=source, timeout=timeout, memory=memory)
        wall = time.perf_counter() - started
        _check_declared_exist(declared, root=root, source=source)
        reported.warnings.extend(_written_outside(reported.result, source=source))
        # A run that changed a file it declares (a database it adds to) read something other than
        # what is there now: its next build runs it again, and may not say "nothing changed".
        changed_its_inputs = cache.declared_inputs(root, declared) != declared_before
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    finally:
        slot.give_back()  # a run that failed before its code ended
    final = cache_dir / code.slug
    entry = _entry(code, work, reported, root=root, declared=declared, limits=(timeout, memory),
                   declared_before=declared_before, wall=wall, previous=final)
    cache.store(work, final, entry)
    return _result(code.slug, final, entry, cached=False, reason=reason, expected=expected,
                   source=source, changed_its_inputs=changed_its_inputs, output_shown=code.output_shown)


def _write_spec(code: CodeFile, work: Path, *, root: Path, source: str, timeout: int, memory: int,
                protected: tuple[str, ...] = ()) -> Path:
    """What ``_runner.main`` is to run, and how, as ``work/spec.json``."""
    spec = {
        "root": str(root),
        "code_path": str(Path(code.path).resolve()),
        "code_text": code.text,  # explainers/code/ is written only once the build succeeds
        "code_rel": _rel(code.path, root),
        "out_dir": str(work),
        "source": source,
        "header_lines": code.header_lines,
        "code_line": code.code_line,
        "timeout": timeout,
        "memory_bytes": memory,
        "parent_pid": os.getpid(),
        "protected": list(protected),
    }
    path = work / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def _spawn(code: CodeFile, spec: Path, *, root: Path, source: str, timeout: int,
           server: _ForkServer | None, slot: _CodeSlot) -> tuple[int, list[str]]:
    """Start the run's process (forked by ``server``, or a fresh interpreter), wait for it to end
    and kill whatever it left running; its return code and the command lines of those killed.
    ``slot`` is given back once its code has ended (a forked run says so; a fresh interpreter's
    code ends with it). Past its timeout it is killed and a timeout error raised."""
    work = spec.parent
    token = work.name  # unique to this run: marks every process it starts (see _kill_leftovers)
    # Output goes to files, not pipes: the run ends when its process ends, even if a child it
    # left behind still holds the other end of a pipe.
    if server is not None:
        proc = server.start(spec, stdout=work / "stdout.bin", stderr=work / "stderr.bin",
                            cwd=root, env={_TOKEN: token})
    else:
        with open(work / "stdout.bin", "wb") as out, open(work / "stderr.bin", "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "site_src.execution._runner", str(spec)],
                cwd=root, env={**_run_environment(), _TOKEN: token}, stdin=subprocess.DEVNULL, stdout=out,
                stderr=err, start_new_session=True,  # its own process group, so its children die with it
            )
    _RUNNING.add(proc)
    if _INTERRUPTED.is_set():
        _kill(proc)
    deadline = time.monotonic() + timeout + _GRACE_S
    try:
        if isinstance(proc, _Forked):
            proc.wait_code_done(timeout=deadline - time.monotonic())
            slot.give_back()  # the next run's code may start while this process saves its figures
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.wait()
        _kill_leftovers(proc.pid, token)
        stderr, _ = _read_output(work / "stderr.bin")
        raise _timed_out(code, source, timeout, stderr) from None
    except BaseException:
        # Ctrl-C: take the child down with us (the caller removes what it half-wrote).
        _kill(proc)
        _kill_leftovers(proc.pid, token)
        raise
    finally:
        _RUNNING.discard(proc)
    return proc.returncode, _kill_leftovers(proc.pid, token)


@dataclass(frozen=True)
class _Reported:
    """What a run that ended without error printed and reported."""

    stdout: str
    stderr: str
    result: dict  # its result.json, as ``_runner.main`` writes it
    warnings: list[str]  # output that was not UTF-8, processes left running (killed)


def _collect(code: CodeFile, work: Path, returncode: int, leftover: list[str], *, source: str, timeout: int,
             memory: int) -> _Reported:
    """Read what the ended run printed and reported; an ExecutionError if it timed out, died or
    raised, naming the explainer's line where it can."""
    stdout, out_bad = _read_output(work / "stdout.bin")
    stderr, err_bad = _read_output(work / "stderr.bin")
    warnings = [f"{source}: printed bytes that are not UTF-8 on {name}; they are shown as \ufffd"
                for name, bad in (("stdout", out_bad), ("stderr", err_bad)) if bad]
    result_file = work / "result.json"
    if not result_file.exists() and stderr.lstrip().startswith("Timeout ("):  # faulthandler's own stop
        raise _timed_out(code, source, timeout, stderr)
    if not result_file.exists():
        raise _died(code, source, returncode, work, stdout, stderr, memory)
    data = json.loads(result_file.read_text())
    leftover = data["leftover"] + leftover
    if leftover:
        shown = "; ".join(cmd[:200] for cmd in leftover[:5]) + (" ..." if len(leftover) > 5 else "")
        warnings.append(f"{source}: the code left {len(leftover)} process(es) running after it ended; "
                        f"they were killed: {shown}")
    if data.get("refused"):
        raise _refused(data, source=source)
    if data.get("changed_unseen"):
        files = ", ".join(data["changed_unseen"])
        raise ExecutionError(f"{files} changed while its code ran a child process, which the build cannot watch: a "
                             f"run must not change the repository's files; restore them (`git checkout -- {files}`, "
                             "unless you changed them yourself during the build)", explainer=source)
    if data["status"] == "error":
        out = f"\n--- what it printed ---\n{stdout.strip()[-2000:]}" if stdout.strip() else ""
        if data.get("memory_exceeded"):
            raise ExecutionError(f"exceeded its memory limit of {format_bytes(memory)} (MemoryError); raise "
                                 "`memory:` in the front matter if it needs more" + out,
                                 explainer=source, line=data["source_line"])
        raise ExecutionError(f"raised {data['error']}\n{data['traceback']}{out}", explainer=source, line=data["source_line"])
    _check_narrow_figures(data["figures"], source=source)
    return _Reported(stdout=stdout, stderr=stderr, result=data, warnings=warnings)


def _refused(data: dict, *, source: str) -> ExecutionError:
    """The error of a run that tried to change a file of the repository (``data["refused"]``: each
    file and the explainer line that tried), whether its code stopped on the refusal or caught it;
    what else it raised is shown after (unless it is the refusal itself)."""
    (first, line), *more = data["refused"].items()
    also = "".join(f"; and {path}" + (f" (line {n})" if n else "") for path, n in more)
    text = (f"its code tried to change {first}, a file of the repository; refused: the file was left "
            f"as it was{also}. A run must not change the repository's files: write what it makes to a file git does "
            "not track")
    if data["status"] == "error" and not data["error"].startswith("PermissionError"):
        text += f"\nthen it raised {data['error']}\n{data['traceback']}"
    return ExecutionError(text, explainer=source, line=line)


def _check_narrow_figures(figures: list[dict], *, source: str) -> None:
    """Fail the run when a figure a phone shows (its phone variant, or its one layout where it has
    none) cuts a text at the canvas's edge, lays a legend over an axis label, or sets a phone
    variant's legend too small (what ``_capture`` found where the figure was drawn)."""
    found = [f"figure {n} ({f.get('narrow', f['svg'])}): {problem}"
             for n, f in enumerate(figures, start=1) for problem in f.get("narrow_problems", [])]
    if found:
        raise ExecutionError("a figure would cut, cover or shrink its text out of reading: where a line names a "
                             "phone variant (-narrow.svg), on a phone; where it names the figure itself (one layout "
                             "for every screen, which a phone shows scaled down), text cut or covered is so on every "
                             "screen and text too small is so on a phone; give the text room or size (a legend above "
                             "or beside the axes, fewer columns, shorter labels, larger fonts), or do what the line "
                             "says:\n  "
                             + "\n  ".join(found), explainer=source)


def _check_declared_exist(declared: list[str] | None, *, root: Path, source: str) -> None:
    """A declared input may be a file the run creates; one that names no file even after the run
    is a typo (a glob may match nothing)."""
    missing = [p for p in declared or () if not globlib_has_magic(p) and not (root / p).exists()]
    if missing:
        raise ExecutionError("; ".join(f"front matter: inputs: {p!r} does not exist, and the run did not create it "
                                       "(paths are relative to the repository root)" for p in missing),
                             explainer=source)


def _written_outside(result: dict, *, source: str) -> list[str]:
    """Warnings for the files outside the repository the run wrote and left behind (a run served
    from the cache does not write them again)."""
    return [f"{source}: the code wrote {p}, outside the repository: a run served from the cache does not write it "
            "again" for p in result.get("written_outside", [])]


def _entry(code: CodeFile, work: Path, reported: _Reported, *, root: Path, declared: list[str] | None,
           limits: tuple[int, int], declared_before: dict[str, dict[str, str | None]], wall: float,
           previous: Path) -> cache.CacheEntry:
    """The cache entry of a finished run: its key (the code, what it read, the packages it
    imported), what it produced and the digests of its figures; the run's own files removed.
    ``previous`` is the run's cache folder, whose last entry's lazy imports are kept if the code
    is the same (``CacheEntry.imported``)."""
    for name in ("spec.json", "result.json", "stdout.bin", "stderr.bin", "main.py"):
        (work / name).unlink(missing_ok=True)  # main.py: only when the file on disk was stale
    data = reported.result
    parts = cache.static_parts(code.text, declared, limits, tokens=True)
    static_key = cache.key_of_parts(parts)
    return cache.CacheEntry(
        format=cache.FORMAT,
        static_key=static_key,
        static_parts=parts,
        deps={p: filestate.hash_file(root / p) for p in data["modules"] + data["data_files"]},
        inputs=declared_before,
        untracked=data["untracked"],
        packages=cache.imported_packages(data["top_level_modules"]),
        artefacts=cache.artefact_digests(work, [f[kind] for f in data["figures"] for kind in ("svg", "narrow")
                                                if kind in f]),
        stdout=reported.stdout,
        stderr=reported.stderr,
        values=data["values"],
        unpassed=data.get("unpassed", {}),
        figures=[f["svg"] for f in data["figures"]],
        narrow={f["svg"]: f["narrow"] for f in data["figures"] if "narrow" in f},
        cells=[cache.CellRecord(line=c["line"], streams=[cache.StreamText(name=n, text=t) for n, t in c["streams"]],
                                warnings=[cache.WarningRecord(**w) for w in c["warnings"]], figures=c["figures"])
               for c in data.get("cells", [])],
        duration_s=round(data["duration_s"], 3),
        cpu_s=round(data["cpu_s"], 3),
        wall_s=round(wall, 3),
        figures_s=round(data.get("figures_s", 0.0), 3),
        peak_memory_mb=round(float(data["peak_memory_mb"]), 1),
        modules=data["modules"],
        data_files=data["data_files"],
        python=data["python"],
        run_at=datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        warnings=reported.warnings,
        imported=sorted({*data.get("imported", []), *cache.recorded_imports(previous, static_key=static_key)}),
    )


_GRACE_S = 10  # the run stops itself at its timeout; the build kills it this much later


def _preload(code_files: list[CodeFile], cache_dir: Path | None = None) -> list[list]:
    """What the fork server imports once, ``[module, [names imported from it]]``: what the
    explainers import at their top level (the names too: a package may import them lazily), then,
    with ``cache_dir``, what their last runs imported beyond that (``CacheEntry.imported``: a
    plotting backend at the first figure saved, a library's submodules at the first call)."""
    found: dict[str, dict[str, None]] = {}
    for code in code_files:
        for module, names in _top_level_imports(code.text):
            found.setdefault(module, {}).update(dict.fromkeys(names))
    if cache_dir is not None:
        for module in sorted({m for code in code_files for m in cache.recorded_imports(cache_dir / code.slug)}):
            found.setdefault(module, {})
    return [[module, list(names)] for module, names in found.items()]


@functools.lru_cache(maxsize=256)
def _top_level_imports(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The modules a code's top level imports, each with the names imported from it; none for
    code that does not parse (its run reports it). Kept by text: parsing the site's 14 code files
    takes 50-80 ms, and `execute` asks before the runs (while the first waits for the server's
    imports) and again after them, when the build waits on it (issue 26)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ()
    found = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            found += [(alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, tuple(a.name for a in node.names if a.name != "*")))
    return tuple(found)


class _Places:
    """The ``jobs`` places for explainers' code, given in the order of the runs (``order``: the
    slowest last time first): a run takes one only after every run before it has taken its place
    or ended without one (`passed`). With a bare semaphore, the pool's threads raced for the
    first places, so a build did not start its slowest explainers first when the machine was busy."""

    def __init__(self, jobs: int, order: list[str]):
        self._free, self._order, self._next = jobs, order, 0
        self._over: set[str] = set()
        self._cond = threading.Condition()

    def _advance(self) -> None:
        while self._next < len(self._order) and self._order[self._next] in self._over:
            self._next += 1

    def acquire(self, slug: str) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._free > 0 and (
                self._next >= len(self._order) or self._order[self._next] == slug or slug not in self._order))
            self._free -= 1
            self._over.add(slug)
            self._advance()
            self._cond.notify_all()

    def release(self) -> None:
        with self._cond:
            self._free += 1
            self._cond.notify_all()

    def passed(self, slug: str) -> None:
        """``slug``'s turn is over (its place taken, or the run ended without one)."""
        with self._cond:
            self._over.add(slug)
            self._advance()
            self._cond.notify_all()


class _CodeSlot:
    """A run's place among the ``jobs`` explainers whose code may run at once (``places``;
    None: no bound): `take` before the run starts, `give_back` when its code has ended,
    once, however the run ends."""

    def __init__(self, places: _Places | None, slug: str = ""):
        self._places, self._slug, self._held = places, slug, False

    def take(self) -> None:
        if self._places is not None and not self._held:
            self._places.acquire(self._slug)
            self._held = True

    def give_back(self) -> None:
        if self._held:
            self._held = False
            self._places.release()


def _read_output(path: Path) -> tuple[str, bool]:
    """The run's output as text, and whether it held bytes that are not UTF-8 (replaced)."""
    data = path.read_bytes() if path.exists() else b""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), True


def _kill_leftovers(pgid: int, token: str) -> list[str]:
    """Kill what the run left behind once its own process has ended: its process group, and any
    process carrying its token in the environment (one that started a session of its own). The
    command lines of those killed. Linux (/proc); elsewhere only the process group is killed."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
        return []
    marker = f"{_TOKEN}={token}".encode()
    killed: list[str] = []
    for _ in range(3):  # again, in case one forked while it was being killed
        table = _limits.processes()
        pids = [pid for pid, (_, group, _) in table.items()
                if pid != os.getpid() and (group == pgid or marker in _environ(pid))]
        if not pids:
            break
        killed += _limits.kill(pids, table)
    return killed


def _environ(pid: int) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def format_bytes(n: int) -> str:
    """``4294967296`` -> ``"4 GiB"``: the memory limit as the front matter would write it."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"


# How running out of the address-space limit shows when no MemoryError is raised: a thread that
# cannot get its stack (Python's "can't start new thread", the runner's own watchdog), OpenBLAS'
# buffers, C++ and C allocators.
_OUT_OF_MEMORY = re.compile(r"MemoryError|std::bad_alloc|Cannot allocate memory|out of memory|"
                            r"can't start new thread|unable to start \w+ thread|Memory allocation still failed")


def _died(code: CodeFile, source: str, returncode: int, work: Path, stdout: str, stderr: str,
          memory: int) -> ExecutionError:
    """The run ended without reporting: ``os._exit``, a crash, a kill. Say where and what it printed."""
    line, how = None, f"exit code {returncode}" if returncode >= 0 else f"killed by {_signal_name(-returncode)}"
    exit_file = work / "exit.json"
    if exit_file.exists():
        line = json.loads(exit_file.read_text())["source_line"]
        how = f"os._exit({returncode})" + (" on this line" if line else "")
    else:
        for m in re.finditer(r'File "([^"]+)", line (\d+)', stderr):  # faulthandler's crash dump
            if Path(m.group(1)).resolve() == Path(code.path).resolve():
                line = code.source_line(int(m.group(2)))
                break
    if re.search(_OUT_OF_MEMORY, stderr):
        return ExecutionError(f"exceeded its memory limit of {format_bytes(memory)} ({how}); raise `memory:` in "
                              f"the front matter if it needs more (the limit counts address space: libraries and "
                              f"thread stacks too, more than the peak memory the runs table shows)"
                              f"\n{stderr.strip()[-2000:]}", explainer=source, line=line)
    parts = [f"the run ended ({how}) before reporting its values"]
    if stdout.strip():
        parts.append(f"--- what it printed ---\n{stdout.strip()[-2000:]}")
    if stderr.strip():
        parts.append(f"--- stderr ---\n{stderr.strip()[-2000:]}")
    return ExecutionError("\n".join(parts), explainer=source, line=line)


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


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


def _kill(proc: subprocess.Popen | _Forked) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: the run's own children too
    except ProcessLookupError:
        # A run forked an instant ago may not lead its own group yet (it calls setsid first
        # thing, before it can start anything): the process itself is all there is to kill.
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _result(slug: str, out_dir: Path, entry: cache.CacheEntry, *, cached: bool, reason: str,
            expected: list[str] = (), source: str = "", changed_its_inputs: bool = False,
            output_shown: bool = True) -> RunResult:
    return RunResult(
        slug=slug, stdout=entry.stdout, stderr=entry.stderr, values=entry.values, unpassed=entry.unpassed,
        figures=[out_dir / f for f in entry.figures], duration_s=entry.duration_s, cpu_s=entry.cpu_s,
        peak_memory_mb=entry.peak_memory_mb, modules=entry.modules, data_files=entry.data_files, deps=entry.deps,
        untracked=entry.untracked, packages=entry.packages, python=entry.python, run_at=entry.run_at,
        cached=cached, reason=reason, out_dir=out_dir, run_id=entry.run_id(),
        changed_its_inputs=changed_its_inputs,
        warnings=tuple(entry.warnings) + tuple(f"{source}: {w}" for w in _what_it_warned(entry, expected, slug,
                                                                                          output_shown)),
        cells=list(entry.cells),
    )


def _what_it_warned(entry: cache.CacheEntry, expected: list[str], slug: str, output_shown: bool = True) -> list[str]:
    """One line per warning the run issued, and per cell that wrote to stderr without warning, so
    the build names every explainer whose page shows a warning; each warning no ``warnings:``
    pattern expects is said to be unexpected; and an output longer than a page shows, where the
    page shows it (``output_shown``: not a report's, whose run prints its record)."""
    lines = []
    several = len(entry.cells) > 1
    for k, cell in enumerate(entry.cells, start=1):
        where = f"cell {k}" if several else "its code"
        for w in cell.warnings:
            verdict = ("expected by its `warnings:`" if w.allowed_by(expected)
                       else "not expected by its `warnings:`: `fairsite check` fails on it")
            lines.append(f"warned in {where} ({w.where}): {w.text()} ({verdict})")
        if cell.stderr.strip() and not cell.warnings:
            n = cell.stderr.rstrip("\n").count("\n") + 1
            lines.append(f"wrote {n} line(s) to stderr in {where} (shown on the page)")
        shown = bound_output([(s.name, s.text) for s in cell.streams])
        if shown.cut and output_shown:
            lines.append(f"{where} printed {shown.total_lines:,} lines ({format_size(shown.total_chars)}), more than "
                         f"a page shows ({OUTPUT_MAX_LINES} lines, {format_size(OUTPUT_MAX_CHARS)}): its page and "
                         f"notebook show the first and last lines; the whole output is "
                         f"{download_name(slug, k, len(entry.cells))}, beside the notebook")
    return lines


def _rel(path: Path, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root))
    except ValueError:
        return str(path)
