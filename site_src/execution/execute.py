"""Stage 3, execute: run each generated file in its own process, in parallel, with a cache.

A run is skipped when a cached run's inputs are unchanged; ``site_src.execution.cache`` says when that is
(the key, what the run recorded, declared ``inputs:``, reads it cannot track) and checks the
entry and its files on every use.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from glob import has_magic as globlib_has_magic
from pathlib import Path

from site_src import filestate
from site_src.errors import ExecutionError
from site_src.execution import cache, servers
from site_src.execution._forkserver import _ForkServer
from site_src.execution._process import (_INTERRUPTED, _RUNNING, _CodeSlot, _died, _kill, _Places, _read_output, _spawn,
                                         _timed_out, format_bytes)
from site_src.sources.collect import DEFAULT_MEMORY
from site_src.sources.extract import CodeFile
from site_src.terminal import OUTPUT_MAX_CHARS, OUTPUT_MAX_LINES, bound_output, download_name, format_size


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
        servers.top_level_imports(code.text)
    outcomes.update(_run_all(todo, run, root=root, jobs=jobs, fork=fork, cache_dir=cache_dir,
                             keep=[c for c in code_files] if keep_server else None, early=early_server))
    # With no run, every code is as its entry recorded it and so is what it imports (an explainer
    # removed leaves its modules in the record until a run: the next server imports one too many).
    if todo or not (cache_dir / servers.PRELOAD).exists():
        servers.remember_preload(cache_dir, code_files)  # with what these runs imported, for the next early server
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
                   source=filestate.shown_path(code.source, root), output_shown=code.output_shown), reason


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
    (`servers.kept_server`).

    A forked run gives its place back when its code has ended and goes on saving its figures in
    its own process: the next explainer's code starts meanwhile (issue 26). Twice ``jobs``
    threads let each of the ``jobs`` places have one run saving figures behind it."""
    _INTERRUPTED.clear()
    server = servers.server_for_runs([c for c, _ in todo], root=root, fork=fork, cache_dir=cache_dir, keep=keep,
                                     early=early)
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
        if server is not None and not servers.is_kept(server):
            server.close()
    pool.shutdown()
    return outcomes


def _run(code: CodeFile, *, root: Path, cache_dir: Path, timeout: int, memory: int, reason: str,
         declared: list[str] | None, on_start: OnRunStart | None = None,
         server: _ForkServer | None = None, expected: list[str] = (), slot: _CodeSlot | None = None,
         protected: tuple[str, ...] = ()) -> RunResult:
    """Run one explainer in a clean process of its own and cache what it produced: spawn the
    process and wait for it, collect what it reported, store the entry. A run that fails (or is
    interrupted) raises and leaves nothing in the cache folder. ``slot``: its place among the
    runs whose code may run at once, taken before it starts, given back when its code ends.
    ``protected``: the repository's files (`filestate.repository_files`), which the run may not change."""
    source = filestate.shown_path(code.source, root)
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
        "code_rel": filestate.shown_path(code.path, root),
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
    """The cache entry of a finished run (`cache.new_entry`), the run's own files removed from ``work``."""
    for name in ("spec.json", "result.json", "stdout.bin", "stderr.bin", "main.py"):
        (work / name).unlink(missing_ok=True)  # main.py: only when the file on disk was stale
    return cache.new_entry(code.text, reported.result, work, stdout=reported.stdout, stderr=reported.stderr,
                           warnings=reported.warnings, root=root, declared=declared, limits=limits,
                           declared_before=declared_before, wall=wall, previous=previous)


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

