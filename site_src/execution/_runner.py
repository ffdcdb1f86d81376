"""Run one generated explainer file in this (fresh) process and record what it did.

Invoked by ``site_src.execution.execute`` as ``python -m site_src.execution._runner SPEC.json``
(or forked by the fork server, ``--serve``). Writes ``result.json`` and the figures into the
spec's ``out_dir``. What the code prints goes to this process's stdout and stderr, which the
parent points at files (never pipes: a child the code leaves behind would hold a pipe open).

:func:`main` reads as the run's steps; each job has a module of its own:

- ``_limits``: process control: die with the build (parent-death signal), the memory limit,
  ``os._exit`` noted, and the processes the code left behind killed;
- ``_inputs``: the audit hook recording what the run reads and writes, and the project modules
  and package versions it imported;
- ``_capture``: the figures (saved at ``show()``/``close()`` and at the end, in the site's
  style) and their phone variants;
- ``_cells``: the code cut into ``# %%`` cells and run cell by cell with its output teed;
- ``_forkserver``: the server that imports the heavy packages once and forks a clean child per
  run, which then runs :func:`main`.

The runner imports nothing of ``site_src`` but these modules (and its package's empty
``__init__``), so the run's recorded dependencies are the explainer's own; the runner's own
files are left out of them (``_inputs.RUNNER_FILES``) and out of the tracebacks it reports.

Process control is POSIX and partly Linux-specific: the memory limit is ``RLIMIT_AS``; the run
dies with the build through ``prctl(PR_SET_PDEATHSIG)``; the runner is a child subreaper
(``PR_SET_CHILD_SUBREAPER``) so processes the code detaches are re-parented to it and can be
found and killed; leftover processes are listed from ``/proc``. Elsewhere those steps are skipped.
"""

from __future__ import annotations

import faulthandler
import json
import linecache
import os
import random
import resource
import sys
import time
import traceback
from pathlib import Path

from site_src.execution._inputs import (_InputRecorder, _imported_since, _project_modules, _top_level_modules,
                                       RUNNER_FILES)
from site_src.execution._limits import _bind_to_build, _kill_descendants, _limit_memory, _record_hard_exits
from site_src.execution._cells import run_cells, _source_line
from site_src.execution._capture import _FigureCapture, _pyplot
from site_src.execution._forkserver import serve

# Reached through the runner by the tests; their homes are the modules above.
from site_src.execution._capture import save_narrow_variant  # noqa: F401
from site_src.execution._cells import split_code_cells  # noqa: F401
from site_src.execution._inputs import in_environment  # noqa: F401


SEED = 20240607  # fixed seed for the global RNGs; explainers should still pass their own seeds


def main(spec_path: str, *, parent_pid: int | None = None, code_done_fd: int | None = None) -> int:
    """Run the spec's code and write ``result.json``. ``parent_pid`` is the process this one must
    die with: the build (default, ``spec["parent_pid"]``), or the fork server that forked it.

    ``code_done_fd`` (a run forked by the fork server: its request's connection to the build) is
    told ``{"code_done": true}`` once the code has ended and what it left running is killed: the
    build then starts the next explainer's run while this process saves the figures, each phone
    variant and the rest of ``result.json`` (issue 26), at a lower priority than the next run's
    code (`_yield_to_the_next_run`). That work stays in this process, under its
    limits; the build stores the run's cache entry only once this process has ended, and a
    failure here fails this run (`_finish_error`)."""
    imported_before = frozenset(sys.modules)  # what the fork server had imported (`_imported_since`)
    spec = json.loads(Path(spec_path).read_text())
    root = Path(spec["root"]).resolve()
    code_path = Path(spec["code_path"]).resolve()
    out_dir = Path(spec["out_dir"]).resolve()
    _bind_to_build(spec["parent_pid"] if parent_pid is None else parent_pid)
    _limit_memory(spec["memory_bytes"])
    _record_hard_exits(code_path, out_dir, spec)
    recorder = _InputRecorder(root, out_dir, protected=frozenset(spec.get("protected", ())), code_file=str(code_path))
    figures = _FigureCapture(_pyplot(), out_dir)
    _seed_global_rngs()
    namespace = _main_module(code_path, spec, out_dir).__dict__
    result = _run_code(spec, code_path, root, namespace, recorder=recorder, figures=figures)
    sys.stdout.flush()
    sys.stderr.flush()
    result["leftover"] = _kill_descendants()
    result["changed_unseen"] = recorder.changed_unseen()  # by a child process, now that none is left
    if code_done_fd is not None:
        _tell_code_done(code_done_fd)
        _yield_to_the_next_run()
    try:
        figures.finish()  # the figures still open at the end, then each figure's narrow variant
        result.update(_what_it_made(namespace, root, recorder=recorder, figures=figures, cells=result.get("cells"),
                                    imported_before=imported_before))
    except Exception as exc:  # noqa: BLE001 - any failure here fails the run, named as the figures'
        result = _finish_error(exc, ran=result)
    (out_dir / "result.json").write_text(json.dumps(result, indent=1, sort_keys=True))
    return 0


def _tell_code_done(fd: int) -> None:
    """Tell the build, on ``fd``, that this run's code has ended (see `main`); then close ``fd``,
    so nothing this process does later can write on it."""
    try:
        os.write(fd, b'{"code_done": true}\n')
        os.close(fd)
    except OSError:  # the build is gone (the parent-death signal ends this process), or the code closed fd
        pass


# How much lower a run's priority is once its code has ended (`os.nice`, the increment of the
# niceness: -20 to 19, default 0; at 10 the kernel gives it about a tenth of a contended core).
_AFTER_CODE_NICENESS = 10


def _yield_to_the_next_run() -> None:
    """Lower this process's priority: the build has started the next run, and its code is what
    the build waits on; this process's figures and phone variants take a core only when the
    next run's code does not need it (issue 26: when the machine has no core to spare, they took
    a share of the next run's). Never fails the run."""
    try:
        os.nice(_AFTER_CODE_NICENESS)
    except OSError:
        pass


def _finish_error(exc: Exception, *, ran: dict) -> dict:
    """``result.json`` of a run whose code ended but whose figures (or what it made) could not be
    saved: an error the build reports as the run's, with the runner's traceback (the fault is
    in a figure the code made, or in the runner; either way no page can show this run)."""
    if ran.get("status") == "error":
        return ran  # the code's own error says more
    return {"status": "error", "error": f"{type(exc).__name__}: {exc} (while saving its figures, after its code ran)",
            "traceback": "".join(traceback.format_exception(exc)), "source_line": None,
            "memory_exceeded": isinstance(exc, MemoryError), "duration_s": ran.get("duration_s", 0.0),
            "leftover": ran.get("leftover", [])}


def _main_module(code_path: Path, spec: dict, out_dir: Path):
    """A fresh ``__main__`` module for the code to run in, as ``python explainers/code/<slug>.py``
    gives a script: ``sys.modules["__main__"]`` is the module whose namespace the code defines
    its names in, so pickle finds a function or class the code defines by reference
    (``__main__.f``), as a process pool (``ProcessPoolExecutor``, ``multiprocessing``, joblib)
    sends it to its workers.

    A worker started by "spawn" runs the main module's file again as ``__mp_main__``. The file
    the reader runs is written only once the build succeeds, so it may be stale or missing: such
    a worker is pointed at a copy of the code this run executes (in ``out_dir``)."""
    import builtins
    import types

    module = types.ModuleType("__main__")
    module.__file__ = str(code_path)
    module.__builtins__ = builtins
    sys.modules["__main__"] = module
    code = spec.get("code_text")
    if code is not None and (not code_path.exists() or code_path.read_text(encoding="utf-8") != code):
        copy = out_dir / "main.py"
        copy.write_text(code, encoding="utf-8")
        _spawn_main_from(code_path, copy)
    return module


def _spawn_main_from(code_path: Path, copy: Path) -> None:
    """Make workers multiprocessing spawns run ``copy`` as their main module where they would run
    ``code_path``. (joblib's loky workers do not run the main module: cloudpickle sends the
    functions ``__main__`` defines by value.)"""
    import multiprocessing.spawn as mp_spawn

    real = mp_spawn.get_preparation_data

    def get_preparation_data(name):
        data = real(name)
        if data.get("init_main_from_path") == str(code_path):
            data["init_main_from_path"] = str(copy)
        return data

    mp_spawn.get_preparation_data = get_preparation_data


def _seed_global_rngs() -> None:
    random.seed(SEED)
    try:
        import numpy as np

        np.random.seed(SEED)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass


def _run_code(spec: dict, code_path: Path, root: Path, namespace: dict, *, recorder: _InputRecorder,
              figures: _FigureCapture) -> dict:
    """Run the explainer's code cell by cell in ``namespace``, recording what it reads; the start of
    ``result.json``: ``status``, ``cells`` (or what it raised) and ``duration_s``."""
    # The run stops itself at its timeout, printing where it was, even if the build that started
    # it has died; the build kills it a little later as a backstop.
    faulthandler.dump_traceback_later(spec["timeout"], exit=True)
    faulthandler.enable()  # a crash in C code (segfault, abort) still prints the line it was on
    # The build passes the code itself: a failed build leaves explainers/code/ as it was, so the
    # file on disk may be stale. Compiled under that file's name and registered with linecache,
    # the code runs and reports exactly as the file the reader gets.
    code = spec["code_text"] if "code_text" in spec else code_path.read_text(encoding="utf-8")
    linecache.cache[str(code_path)] = (len(code), None, code.splitlines(True), str(code_path))
    sys.argv = [str(code_path)]
    sys.path.insert(0, str(root))
    sys.addaudithook(recorder)
    result: dict = {"status": "ok"}
    started, cpu_started = time.perf_counter(), _cpu_seconds()
    try:
        result["cells"] = run_cells(code, namespace, str(code_path), spec["header_lines"], figures=figures,
                                    line_of=lambda line: _source_line(spec, line))
    except BaseException as exc:  # noqa: BLE001 - everything the explainer raises is reported
        result = {"status": "error", **_describe_error(exc, code_path, spec)}
        result["memory_exceeded"] = isinstance(exc, MemoryError)
    faulthandler.cancel_dump_traceback_later()
    recorder.active = False  # what the runner does next (figures, the package scan) is not the run's
    result["duration_s"] = time.perf_counter() - started
    result["cpu_s"] = _cpu_seconds() - cpu_started
    # Kept whether the code raised or caught the refusal: the build fails the run on it.
    result["refused"] = {path: line and _source_line(spec, line) for path, line in recorder.refused.items()}
    return result


def _cpu_seconds() -> float:
    """The CPU time of this process and of the children it has waited for (user and system): what
    the code cost, whatever else the machine ran meanwhile (the time budget's measure)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _what_it_made(namespace: dict, root: Path, *, recorder: _InputRecorder, figures: _FigureCapture,
                  cells: list[dict] | None, imported_before: frozenset[str] = frozenset()) -> dict:
    """The rest of ``result.json``: figures (each cell's too), values, what the run read and imported,
    its peak memory and Python version."""
    for k, cell in enumerate(cells or ()):
        cell["figures"] = [i for i, f in enumerate(figures.files, start=1) if f["cell"] == k]
    return {
        "figures": figures.files,
        "figures_s": figures.seconds,
        "values": _values(namespace),
        "unpassed": _unpassed(namespace),
        "modules": _project_modules(root),
        "imported": _imported_since(imported_before),
        "top_level_modules": _top_level_modules(),
        "data_files": sorted(recorder.opened),
        "untracked": list(recorder.untracked),
        "written": list(recorder.written),
        "written_outside": recorder.written_outside(),
        "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "python": sys.version.split()[0],
    }


def _describe_error(exc: BaseException, code_path: Path, spec: dict) -> dict:
    """The traceback without the runner's frames, with the explainer source line of the fault."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).resolve() not in RUNNER_FILES]
    source_line = None
    # explainers/code/ is written only when a build succeeds: the file there may hold other code
    # than what ran. Its line is cited only when it holds exactly the code that ran.
    ran = spec["code_text"] if "code_text" in spec else None
    try:
        current = ran is None or code_path.read_text(encoding="utf-8") == ran
    except (OSError, UnicodeDecodeError):
        current = False
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve() == code_path and exc.lineno:
        # The code never ran: the line is the parser's, not a frame's. CPython took the text it
        # shows from the file on disk, which may be stale: show the line that was compiled, at its
        # place in the explainer's source.
        source_line = _source_line(spec, exc.lineno)
        if ran is not None and 0 < exc.lineno <= len(ran.splitlines()):
            exc.text = ran.splitlines()[exc.lineno - 1] + "\n"
        if exc.end_lineno is not None:
            exc.end_lineno = source_line + (exc.end_lineno - exc.lineno)
        exc.filename, exc.lineno = spec["source"], source_line
    lines = []
    for f in frames:
        if Path(f.filename).resolve() == code_path:
            src = _source_line(spec, f.lineno)
            source_line = src
            generated = f' (generated {spec["code_rel"]}, line {f.lineno})' if current else ""
            lines.append(f'  {spec["source"]}, line {src}{generated}')
        else:
            lines.append(f"  {f.filename}, line {f.lineno}, in {f.name}")
        if f.line:
            lines.append(f"    {f.line}")
    text = "Traceback (most recent call last):\n" + "\n".join(lines) + "\n"
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return {"error": f"{type(exc).__name__}: {exc}", "traceback": text, "source_line": source_line}


def _plain(value, depth=0):
    """The value as JSON-able plain data, or raise TypeError: only what prose can cite."""
    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)  # NaN and inf too: Python's json writes and reads them
    if isinstance(value, str):
        if len(value) > 2000:
            raise TypeError("string too long")
        return value
    if depth < 3 and isinstance(value, (list, tuple)) and len(value) <= 100:
        return [_plain(v, depth + 1) for v in value]
    if depth < 3 and isinstance(value, dict) and len(value) <= 100 and all(isinstance(k, str) for k in value):
        return {k: _plain(v, depth + 1) for k, v in value.items()}
    raise TypeError(type(value).__name__)


def _unpassed(namespace: dict) -> dict:
    """The top-level names the code defined that the run does not pass (a DataFrame, an array, a
    long list), each with its type's name: a page or check citing one is told what it is, not
    that the code never defined it. Modules, functions and classes are not values, and are left out."""
    import inspect

    unpassed = {}
    for name, value in namespace.items():
        if name.startswith("_") or inspect.ismodule(value) or inspect.isroutine(value) or inspect.isclass(value):
            continue
        try:
            _plain(value)
        except TypeError:
            unpassed[name] = type(value).__name__
    return dict(sorted(unpassed.items())[:200])


def _values(namespace: dict) -> dict:
    values = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        try:
            values[name] = _plain(value)
        except TypeError:
            continue
    return values


if __name__ == "__main__":
    if sys.argv[1] == "--serve":  # --serve LISTEN_FD BUILD_PID {"preload": [...], "first": [...]}
        imports = json.loads(sys.argv[4])
        status = serve(int(sys.argv[2]), int(sys.argv[3]), imports["preload"], first=imports["first"], run=main)
        # The build waits for its server to end. Tearing down the interpreter, with the whole stack
        # it preloaded, took 0.7 s at the end of every build that ran code (issue 26); the server
        # holds nothing to save (its children are gone, its log is its stderr, flushed here).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(main(sys.argv[1]))
