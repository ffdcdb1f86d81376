"""Run one generated explainer file in this (fresh) process and record what it did.

Invoked by ``site_src.execution.execute`` as ``python -m site_src.execution._runner SPEC.json``. Writes
``result.json`` and the figures into the spec's ``out_dir``. What the code prints goes to this
process's stdout and stderr, which the parent points at files (never pipes: a child the code
leaves behind would hold a pipe open). Kept free of site_src imports beyond the standard
library so the run's recorded dependencies are the explainer's own.

Process control is POSIX and partly Linux-specific: the memory limit is ``RLIMIT_AS``; the run
dies with the build through ``prctl(PR_SET_PDEATHSIG)``; the runner is a child subreaper
(``PR_SET_CHILD_SUBREAPER``) so processes the code detaches are re-parented to it and can be
found and killed; leftover processes are listed from ``/proc``. Elsewhere those steps are skipped.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import io
import json
import linecache
import os
import random
import re
import resource
import shlex
import signal
import sys
import sysconfig
import time
import traceback
from pathlib import Path

SEED = 20240607  # fixed seed for the global RNGs; explainers should still pass their own seeds


def main(spec_path: str, *, parent_pid: int | None = None) -> int:
    """Run the spec's code and write ``result.json``. ``parent_pid`` is the process this one must
    die with: the build (default, ``spec["parent_pid"]``), or the fork server that forked it."""
    spec = json.loads(Path(spec_path).read_text())
    root = Path(spec["root"]).resolve()
    code_path = Path(spec["code_path"]).resolve()
    out_dir = Path(spec["out_dir"]).resolve()
    _bind_to_build(spec["parent_pid"] if parent_pid is None else parent_pid)
    _limit_memory(spec["memory_bytes"])
    _record_hard_exits(code_path, out_dir, spec)
    recorder = _InputRecorder(root, out_dir)
    figures = _FigureCapture(_pyplot(), out_dir)
    _seed_global_rngs()
    namespace = _main_module(code_path, spec, out_dir).__dict__
    result = _run_code(spec, code_path, root, namespace, recorder=recorder, figures=figures)
    sys.stdout.flush()
    sys.stderr.flush()
    result["leftover"] = _kill_descendants()
    figures.finish()  # the figures still open at the end, then each figure's narrow variant
    result.update(_what_it_made(namespace, root, recorder=recorder, figures=figures, cells=result.get("cells")))
    (out_dir / "result.json").write_text(json.dumps(result, indent=1, sort_keys=True))
    return 0


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


def _pyplot():
    """``matplotlib.pyplot`` on the Agg backend, in the site's style, writing reproducible SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Deterministic SVG ids, no dates in files: two builds of the same inputs are byte-identical.
    matplotlib.rcParams["svg.hashsalt"] = "fairsite"
    apply_site_style(matplotlib.rcParams)
    return plt


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
    started = time.perf_counter()
    try:
        result["cells"] = run_cells(code, namespace, str(code_path), spec["header_lines"], figures=figures,
                                    line_of=lambda line: _source_line(spec, line))
    except BaseException as exc:  # noqa: BLE001 - everything the explainer raises is reported
        result = {"status": "error", **_describe_error(exc, code_path, spec)}
        result["memory_exceeded"] = isinstance(exc, MemoryError)
    faulthandler.cancel_dump_traceback_later()
    recorder.active = False  # what the runner does next (figures, the package scan) is not the run's
    result["duration_s"] = time.perf_counter() - started
    return result


def _what_it_made(namespace: dict, root: Path, *, recorder: _InputRecorder, figures: _FigureCapture,
                  cells: list[dict] | None) -> dict:
    """The rest of ``result.json``: figures (each cell's too), values, what the run read and imported,
    its peak memory and Python version."""
    for k, cell in enumerate(cells or ()):
        cell["figures"] = [i for i, f in enumerate(figures.files, start=1) if f["cell"] == k]
    return {
        "figures": figures.files,
        "figures_s": figures.seconds,
        "values": _values(namespace),
        "modules": _project_modules(root),
        "packages": _packages(),
        "data_files": sorted(recorder.opened),
        "untracked": list(recorder.untracked),
        "written": list(recorder.written),
        "written_outside": recorder.written_outside(),
        "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "python": sys.version.split()[0],
    }


def _environment_dirs() -> tuple[Path, ...]:
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    dirs.update(p for p in sysconfig.get_paths().values() if p)
    return tuple(sorted({Path(d).resolve() for d in dirs}))


_ENVIRONMENT = _environment_dirs()


def in_environment(path: Path) -> bool:
    """True for files of the Python environment: the virtual environment wherever it lives
    (inside the clone or not), the base installation, any site-packages. Package versions
    cover them, and their place differs from one machine to the next."""
    p = Path(path).resolve()
    return (any(p.is_relative_to(d) for d in _ENVIRONMENT)
            or any(part in ("site-packages", "dist-packages") for part in p.parts))


class _InputRecorder:
    """An audit hook (PEP 578) recording what the run reads and writes.

    Files opened through Python (``open``, ``os.open``, ``io.open``, and C code that calls them,
    such as pandas or NumPy) are recorded by path, so their digests join the cache key; an
    ``open`` of a bare file descriptor is resolved through ``/proc/self/fd``. What cannot be
    keyed by a file's digest is recorded as a sentence in ``untracked``: SQLite connections
    (a database the run creates too: it may grow from one run to the next), child processes
    (``subprocess``, ``os.system``, ``os.exec*``, ``os.posix_spawn``, ``os.spawn*``,
    ``os.fork``), directory listings (``os.listdir``, ``os.scandir`` and so ``os.walk``,
    ``glob``, ``pathlib`` globbing), files read outside the repository (``/tmp/...``), project
    libraries loaded with ``ctypes`` and network connections. Not the run's inputs: the Python
    environment, the system's own files (``/proc``, ``/sys``, ``/dev``, ``/etc``, ``/usr``, ...),
    matplotlib's configuration and cache, the import system's listings, and files the run wrote
    itself. Files opened for writing are recorded in ``written`` (inside the repository) and
    ``written_outside`` (outside it, if still there when the run ends), for the build to warn
    of. Reads by C code that calls the C library directly raise no audit event and cannot be
    seen; explainers that use such code declare ``inputs:``.
    See https://docs.python.org/3/library/audit_events.html.
    """

    _CHILD = {"subprocess.Popen": "subprocess", "os.system": "os.system", "os.exec": "os.exec",
              "os.posix_spawn": "os.posix_spawn", "os.spawn": "os.spawn", "os.startfile": "os.startfile"}
    _LISTING = {"os.listdir", "os.scandir", "glob.glob", "glob.glob/2", "pathlib.Path.glob",
                "pathlib.Path.rglob"}
    _WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    # The system's own files: read by libraries for what the machine is (CPU count, time zone,
    # fonts, locale), not data the explainer's numbers come from.
    _SYSTEM = tuple(Path(p) for p in ("/proc", "/sys", "/dev", "/etc", "/usr", "/lib", "/lib32", "/lib64",
                                      "/bin", "/sbin", "/run", "/var/lib", "/var/cache", "/opt"))

    def __init__(self, root: Path, out_dir: Path):
        self.root, self.out_dir = root, out_dir
        self.opened: set[str] = set()
        self.untracked: dict[str, None] = {}  # an ordered set of sentences
        self.written: dict[str, None] = {}  # project files opened for writing, in order
        self._written_outside: dict[str, None] = {}
        self._wrote: set[Path] = set()  # every file the run opened for writing (absolute)
        self._private = tuple(_matplotlib_dirs())
        self.active = True

    def __call__(self, event: str, args: tuple) -> None:
        if not self.active:
            return
        try:
            if event == "open" and args:
                self._open(*args[:3])
            elif event in self._LISTING:
                self._listing(event, args)
            elif event in self._CHILD:
                self._note(f"ran a child process {self._command(event, args)} ({self._CHILD[event]})")
            elif event in ("os.fork", "os.forkpty"):
                self._note(f"forked a child process ({event})")
            elif event == "sqlite3.connect" and args:
                self._sqlite(args[0])
            elif event == "ctypes.dlopen" and args and args[0]:
                rel = self._project_path(args[0])
                if rel is not None:
                    self._note(f"loaded the library {rel} (ctypes)")
            elif event == "socket.connect" and len(args) > 1:
                self._note(f"connected to {args[1]!r} (network)")
        except Exception:  # noqa: BLE001 - recording must never break the run it watches
            pass

    def written_outside(self) -> list[str]:
        """Files outside the repository the run wrote and left behind (absolute paths)."""
        return [p for p in self._written_outside if os.path.exists(p)]

    def _note(self, sentence: str) -> None:
        self.untracked.setdefault(sentence, None)

    @staticmethod
    def _path(raw) -> Path | None:
        """``raw`` (a path, or a file descriptor) as an absolute path; None for a pipe or socket."""
        if isinstance(raw, int):  # a file descriptor: its file, unless it is a pipe or socket
            raw = os.readlink(f"/proc/self/fd/{raw}")
            if not raw.startswith("/"):
                return None
        if not isinstance(raw, (str, bytes, os.PathLike)):
            return None
        return Path(os.path.abspath(os.fsdecode(raw)))

    def _project_path(self, raw) -> str | None:
        """``raw`` relative to the project root if it is a project file (not the environment,
        not the run's own output, not a hidden or generated folder), else None."""
        p = self._path(raw)
        if p is None:
            return None
        p = p.resolve()
        if not p.is_relative_to(self.root) or p.is_relative_to(self.out_dir) or in_environment(p):
            return None
        rel = p.relative_to(self.root)
        # Caches and build metadata are not the run's data.
        if any(part.startswith((".", "__")) or part.endswith(".egg-info") for part in rel.parts):
            return None
        return str(rel)

    def _outside_path(self, raw) -> Path | None:
        """``raw`` as an absolute path if it is outside the repository and none of the system's,
        the environment's, matplotlib's or the run's own output; else None."""
        p = self._path(raw)
        if p is None:
            return None
        p = p.resolve()
        if (p.is_relative_to(self.root) or p.is_relative_to(self.out_dir) or in_environment(p)
                or any(p.is_relative_to(d) for d in self._SYSTEM + self._private)):
            return None
        return p

    def _open(self, raw, mode=None, flags=0) -> None:
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            not isinstance(mode, str) and isinstance(flags, int) and bool(flags & self._WRITE_FLAGS))
        rel = self._project_path(raw)
        if rel is not None:
            if Path(rel).suffix not in {".py", ".pyc"} and not (self.root / rel).is_dir():
                self.opened.add(rel)
                if writes:
                    self.written.setdefault(rel, None)
            return
        outside = self._outside_path(raw)
        if outside is None or outside.is_dir():
            return
        if writes:
            self._wrote.add(outside)
            self._written_outside.setdefault(str(outside), None)
        elif outside not in self._wrote:  # a file the run wrote itself is its own output
            self._note(f"read {outside} (outside the repository)")

    def _listing(self, event: str, args: tuple) -> None:
        if _called_by_import_system():
            return
        if event.startswith("pathlib."):  # (path, pattern)
            target = os.path.join(os.fsdecode(os.fspath(args[0])), os.fsdecode(args[1]))
        elif event.startswith("glob."):  # (pattern, recursive[, root_dir, dir_fd])
            base = os.fsdecode(args[2]) if len(args) > 2 and args[2] else ""
            target = os.path.join(base, os.fsdecode(args[0]))
        else:  # (path,), or a file descriptor
            target = args[0] if args and args[0] is not None else "."
            if isinstance(target, int):
                target = os.readlink(f"/proc/self/fd/{target}")
            target = os.fsdecode(target)
        # A glob pattern is not a path: it is the folder it starts from that is listed.
        folder = os.path.abspath(target.split("*")[0].split("?")[0].split("[")[0] or ".")
        name = event.removesuffix("/2")  # glob raises glob.glob and glob.glob/2
        if Path(folder).resolve() == self.root or self._project_path(folder) is not None:
            self._note(f"listed {os.path.relpath(os.path.abspath(target), self.root)} ({name})")
        elif self._outside_path(folder) is not None:
            self._note(f"listed {os.path.abspath(target)} ({name}, outside the repository)")

    def _sqlite(self, database) -> None:
        if not isinstance(database, (str, bytes, os.PathLike)):
            return
        name = os.fsdecode(database)
        if name in ("", ":memory:") or name.startswith("file::memory:") or "mode=memory" in name:
            return
        path = os.path.abspath(name[5:].split("?")[0] if name.startswith("file:") else name)
        # Recorded whether or not the file exists yet: a database the run creates may be one it
        # adds to on every run, and its next run reads what this one left.
        inside = Path(path).resolve().is_relative_to(self.root)
        shown = os.path.relpath(path, self.root) if inside else f"{path}, outside the repository"
        self._note(f"connected to {shown} (sqlite3)")

    @staticmethod
    def _command(event: str, args: tuple) -> str:
        if event == "os.system":
            cmd = os.fsdecode(args[0])
        elif event == "subprocess.Popen":  # (executable, args, cwd, env)
            argv = args[1]
            cmd = os.fsdecode(argv) if isinstance(argv, (str, bytes)) else shlex.join(os.fsdecode(a) for a in argv)
        else:  # os.exec / os.posix_spawn / os.spawn: (path, argv, env)
            argv = args[1] if len(args) > 1 and args[1] else [args[0]]
            cmd = shlex.join(os.fsdecode(a) for a in argv)
        return f"`{cmd if len(cmd) <= 80 else cmd[:77] + '...'}`"


def _matplotlib_dirs() -> list[Path]:
    """matplotlib's configuration and cache folders (its font list, style files): the library's
    own state, not the run's data."""
    try:
        import matplotlib

        return [Path(matplotlib.get_configdir()).resolve(), Path(matplotlib.get_cachedir()).resolve()]
    except Exception:  # noqa: BLE001 - without matplotlib there is nothing of it to ignore
        return []


def _called_by_import_system() -> bool:
    """True when the event comes from importlib (its finders list the sys.path folders)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False
def _bind_to_build(parent_pid: int) -> None:
    """Die with the build: on Linux the kernel signals this process when the build dies (even by
    ``kill -9``), and the handler kills the run's whole process group, its children included.
    (The signal follows the build thread that started the run; those threads outlive the runs.)"""
    runner = os.getpid()

    def _die(signum, frame):
        if os.getpid() != runner:  # a forked worker (multiprocessing) being stopped: only itself
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        os.killpg(os.getpgid(0), signal.SIGKILL)

    signal.signal(signal.SIGTERM, _die)
    libc = _libc()
    if libc is None:
        return
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != parent_pid:  # the build died before the line above took effect
        os.killpg(os.getpgid(0), signal.SIGKILL)


_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36  # from <linux/prctl.h>


def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return None


def _limit_memory(limit: int) -> None:
    """Cap the run's address space: an allocation past it raises MemoryError instead of taking
    the machine's memory. Children the code starts inherit the cap."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _record_hard_exits(code_path: Path, out_dir: Path, spec: dict) -> None:
    """``os._exit`` skips every handler: note the explainer line that called it first, so the
    build can say where the run stopped (what it printed is already in the output files)."""
    real_exit, pid = os._exit, os.getpid()

    def _exit(status):
        if os.getpid() == pid:  # not a forked child (multiprocessing ends its workers this way)
            line = None
            frame = sys._getframe(1)
            while frame is not None:
                if Path(frame.f_code.co_filename).resolve() == code_path:
                    line = _source_line(spec, frame.f_lineno)
                    break
                frame = frame.f_back
            try:
                (out_dir / "exit.json").write_text(json.dumps({"status": status, "source_line": line}))
                sys.stdout.flush()
                sys.stderr.flush()
            except BaseException:  # noqa: BLE001 - exiting regardless
                pass
        real_exit(status)

    os._exit = _exit
    try:
        import posix

        posix._exit = _exit
    except ImportError:  # pragma: no cover - not POSIX
        pass


def _source_line(spec: dict, generated_line: int) -> int:
    return generated_line - spec["header_lines"] - 1 + spec["code_line"]


class _FigureCapture:
    """Figures saved in drawing order: at ``plt.show()``, when a figure is closed (``plt.close``
    with a figure, a number, a label or ``'all'``), and those still open at the end. A figure is
    saved again only if it changed since it was last saved (matplotlib marks it stale).

    Figures made without pyplot (``matplotlib.figure.Figure()``, drawn and saved by the code) are
    not pyplot's to show or close: every Figure the run creates is noted (a hook on
    ``Figure.__init__``), and one that was never saved and holds something is saved at the end,
    after pyplot's, in the order they were created, as the output of the cell that created it."""

    def __init__(self, plt, out_dir: Path):
        from matplotlib._pylab_helpers import Gcf

        self.files: list[dict] = []
        self._out = out_dir
        self._saved: set[int] = set()
        real_destroy, real_destroy_all = Gcf.destroy.__func__, Gcf.destroy_all.__func__

        def destroy(cls, num):
            manager = num if hasattr(num, "canvas") else cls.figs.get(num)
            if manager is not None:
                self._save(manager.canvas.figure)
                self._created.pop(id(manager.canvas.figure), None)  # saved; let it be freed
            real_destroy(cls, num)

        def destroy_all(cls):
            for manager in sorted(cls.figs.values(), key=lambda m: m.num):
                self._save(manager.canvas.figure)
                self._created.pop(id(manager.canvas.figure), None)
            real_destroy_all(cls)

        Gcf.destroy, Gcf.destroy_all = classmethod(destroy), classmethod(destroy_all)
        self._gcf = Gcf
        self._created: dict = {}  # id -> every Figure the run created and pyplot has not closed, in order
        from matplotlib.figure import Figure

        real_init = Figure.__init__

        def init(fig, *args, **kwargs):
            real_init(fig, *args, **kwargs)
            if self.tracking:
                self._created[id(fig)] = fig
                self._owner.setdefault(id(fig), self.cell)

        Figure.__init__ = init
        self.tracking = True  # off once the run ends: the runner's own figures are not the run's
        self.cell = 0  # the cell running now; a figure saved while it runs is its output
        self._owner: dict[int, int] = {}  # id(figure) -> the cell that opened it
        self._figs: list = []  # the figure of each file, for its narrow variant at the end
        self.seconds = 0.0  # spent saving files: a cost of the page, not of the code
        plt.show = lambda *a, **k: self.capture_open()

    def capture_open(self) -> None:
        for manager in sorted(self._gcf.get_all_fig_managers(), key=lambda m: m.num):
            self._save(manager.canvas.figure)

    def open_figures(self) -> set[int]:
        return {id(m.canvas.figure) for m in self._gcf.get_all_fig_managers()}

    def opened_by(self, figure_ids: set[int], cell: int) -> None:
        for fid in figure_ids:
            self._owner.setdefault(fid, cell)

    def finish(self) -> None:
        """Save the figures still open, then the narrow (phone) variant of each figure's last
        file: it re-lays the figure out, so it is drawn only once the code can no longer change it."""
        self.capture_open()
        self.tracking = False
        for fig in list(self._created.values()):
            if id(fig) not in self._saved and (fig.axes or fig.artists or fig.lines or fig.patches
                                               or fig.texts or fig.images or fig.legends):
                self._save(fig)
        started = time.perf_counter()
        last = {id(fig): i for i, fig in enumerate(self._figs)}
        for i, fig in enumerate(self._figs):
            if last[id(fig)] != i:
                continue  # drawn again later (the code changed it): the later file has the variant
            narrow = self._out / f"figure-{i + 1}-narrow.svg"
            if save_narrow_variant(fig, narrow):
                self.files[i]["narrow"] = narrow.name
        self.seconds += time.perf_counter() - started

    def _save(self, fig) -> None:
        if id(fig) in self._saved and not fig.stale:
            return
        started = time.perf_counter()
        i = len(self.files) + 1
        # SVG only: the page, the lightbox, the home card and the notebook all show the SVG.
        svg = self._out / f"figure-{i}.svg"
        fig.savefig(svg, format="svg", metadata={"Date": None})
        fig.stale = False  # saving drew it; a later change marks it stale again
        self._saved.add(id(fig))
        self.files.append({"svg": svg.name, "cell": self._owner.get(id(fig), self.cell)})
        self._figs.append(fig)
        self.seconds += time.perf_counter() - started


def _kill_descendants() -> list[str]:
    """Kill the processes the code left running (children, and orphans re-parented to this
    subreaper); return their command lines for the build's summary."""
    me = os.getpid()
    table = processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = [], list(children.get(me, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return kill(found, table)


def processes() -> dict[int, tuple[int, int, str]]:
    """Every visible process as ``pid -> (parent pid, process group, command line)`` (Linux /proc)."""
    table = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue  # ended meanwhile, or not ours to read
        fields = stat[stat.rfind(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces
        table[int(entry)] = (int(fields[1]), int(fields[2]), cmd or stat[stat.find("(") + 1:stat.rfind(")")])
    return table


def kill(pids: list[int], table: dict) -> list[str]:
    """SIGKILL each process; the command lines of those that were still running."""
    killed = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue
        killed.append(table[pid][2] if pid in table else str(pid))
    for pid in pids:
        try:
            os.waitpid(pid, 0)  # ours (a child or re-parented orphan): reap it
        except OSError:
            pass
    return killed


# The site's figure style, applied to every explainer run (the reader who runs the file gets
# matplotlib's defaults; the numbers are the same). Sizes are for the page: the content column is
# about 550 px wide on a laptop and the explainers draw at 9-10.5 in (860-1000 px), so a figure
# shows at ~0.57 of its size and 13 pt text reads at ~10 px, near the page's captions (11 px);
# a click opens it full size.
# The background is transparent and the ink dark: the light scheme shows it as drawn, the dark
# scheme inverts it (extra.css). Colours: the theme's indigo and deep orange first, then
# Okabe-Ito colours, which stay distinct with the common colour-vision deficiencies.
SITE_STYLE = {
    "font.size": 13, "axes.titlesize": 13, "axes.labelsize": 13, "xtick.labelsize": 12,
    "ytick.labelsize": 12, "legend.fontsize": 11, "figure.titlesize": 14,
    "figure.facecolor": "none", "axes.facecolor": "none", "savefig.facecolor": "none",
    "savefig.transparent": True,
    # A legend sits on a near-opaque card so data under it cannot run through its text.
    "legend.frameon": True, "legend.facecolor": "white", "legend.framealpha": 0.85, "legend.edgecolor": "none",
    "text.color": "#212121", "axes.labelcolor": "#212121", "axes.edgecolor": "#616161",
    "xtick.color": "#424242", "ytick.color": "#424242",
    "axes.spines.top": False, "axes.spines.right": False, "grid.color": "#9e9e9e", "grid.alpha": 0.4,
    "axes.prop_cycle": ["#3f51b5", "#d84315", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"],
}
NARROW_WIDTH_IN = 6.6  # shown on a 390 px phone (about 364 px of column) at the laptop's scale


def apply_site_style(rc) -> None:
    """Set the site's figure style (``SITE_STYLE``) in matplotlib's ``rcParams`` ``rc``."""
    from cycler import cycler

    for key, value in SITE_STYLE.items():
        rc[key] = cycler(color=value) if key == "axes.prop_cycle" else value


def save_narrow_variant(fig, path: Path) -> bool:
    """Save ``fig`` laid out for a phone: panels side by side stacked, the width ``NARROW_WIDTH_IN``.

    Only for figures whose axes all sit in one row of one grid (``plt.subplots(1, n)``) or that
    have a single axes; anything else (insets, colour bars, grids of panels) keeps its one layout
    and this returns False. Call it after the figure's own files are saved: it changes the figure.
    """
    axes = list(fig.axes)
    specs = [ax.get_subplotspec() for ax in axes]
    if not axes or any(s is None for s in specs):
        return False
    grid = specs[0].get_gridspec()
    if any(s.get_gridspec() is not grid for s in specs) or grid.nrows != 1:
        return False
    width, height = fig.get_size_inches()
    ordered = sorted(axes, key=lambda ax: ax.get_subplotspec().colspan.start)
    if len(ordered) > 1:
        stacked = fig.add_gridspec(len(ordered), 1)
        for row, ax in enumerate(ordered):
            ax.set_subplotspec(stacked[row, 0])
            ax.yaxis.set_tick_params(labelleft=True)  # a shared y axis hid the inner panels' labels
        height = height * len(ordered) * 0.9
    else:
        height = height * max(0.75, NARROW_WIDTH_IN / width)
    fig.set_size_inches(NARROW_WIDTH_IN, height)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "tight layout not applied": keep the wide figure only
        try:
            fig.tight_layout()
        except Exception:  # noqa: BLE001 - any layout failure has the same answer
            return False
    fig.savefig(path, format="svg", metadata={"Date": None})
    return True


CELL_MARKER = re.compile(r"^# %%(?!%)")  # jupytext's "percent" cell marker, as editors know it


def split_code_cells(code: str, header_lines: int) -> list[tuple[int, str]]:
    """``(first line in the file, source)`` of each ``# %%`` cell of the explainer's code.

    ``code`` is the generated file (``header_lines`` of header, then the explainer's block). The
    header and whatever precedes the first marker form cell 0's prefix; code without markers is
    one cell. A cell's source keeps its marker line, so the cells joined are the block.

    A marker is a comment token (``tokenize``) at the start of its line: a line reading ``# %%``
    inside a triple-quoted string is the string's text, not a cell break. Code that does not
    tokenize (a syntax error) is one cell, so compiling it reports the error at its line. The one
    home of the splitter: the run, the page and the notebook all cut the code here.
    """
    lines = code.split("\n")
    starts = [0] + [i for i in _marker_lines(code) if i >= header_lines]
    starts = sorted(set(starts))
    if len(starts) > 1 and not "\n".join(lines[starts[0]:starts[1]][header_lines:]).strip():
        starts.pop(0)  # nothing but the header before the first marker: it belongs to cell 1
        starts[0] = 0
    bounds = starts + [len(lines)]
    return [(bounds[k] + 1, "\n".join(lines[bounds[k]:bounds[k + 1]])) for k in range(len(starts))]


def cell_title(source: str) -> str | None:
    """The title of a cell's ``# %% Title`` marker line (``""`` if untitled); None if ``source``
    (a cell of :func:`split_code_cells`) does not start with a marker."""
    first = source.split("\n", 1)[0]
    return first[4:].strip() if CELL_MARKER.match(first) else None


def _marker_lines(code: str) -> list[int]:
    """0-based indices of the lines holding a ``# %%`` comment token at column 0."""
    import tokenize

    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT and tok.start[1] == 0 and CELL_MARKER.match(tok.string):
                found.append(tok.start[0] - 1)
    except (tokenize.TokenError, SyntaxError):  # unterminated string or bracket, bad indentation
        return []
    return found


class _CellOutput:
    """What one cell wrote, in order: ``streams`` is a list of ``[name, text]`` ("stdout" or
    "stderr"), consecutive writes to one stream merged, as Jupyter merges stream outputs; and the
    warnings it issued (``warnings.warn``, NumPy's RuntimeWarnings), each as Python shows it."""

    def __init__(self):
        self._parts: list[tuple[str, list[str]]] = []  # joined once at the end: a flood of prints stays linear
        self.warnings: list[dict] = []

    def add(self, name: str, text: str) -> None:
        if not text:
            return
        if self._parts and self._parts[-1][0] == name:
            self._parts[-1][1].append(text)
        else:
            self._parts.append((name, [text]))

    @property
    def streams(self) -> list[list[str]]:
        return [[name, "".join(parts)] for name, parts in self._parts]

    def text(self, name: str) -> str:
        return "".join(t for n, parts in self._parts if n == name for t in parts)


class _Tee:
    """Stands in for ``sys.stdout`` (or ``sys.stderr``) while a cell runs: text goes to the
    process's stream (the whole run's output) and into the cell's record under ``name``, and so
    do bytes written to ``buffer``; any other attribute is the real stream's."""

    def __init__(self, stream, record: _CellOutput, name: str):
        self.stream, self.record, self.name = stream, record, name

    def write(self, text):
        self.stream.write(text)
        self.record.add(self.name, text)
        return len(text)

    def flush(self):
        self.stream.flush()

    @property
    def buffer(self):
        """Bytes written to ``sys.stdout.buffer`` go to the file as they are; the cell's copy
        shows them decoded, as the page will (bytes that are not UTF-8 as \ufffd)."""
        return _TeeBytes(self)

    @property
    def encoding(self):
        return getattr(self.stream, "encoding", "utf-8")

    def isatty(self):
        return False

    def fileno(self):
        return self.stream.fileno()

    def __getattr__(self, name):
        return getattr(self.stream, name)


class _TeeBytes(io.RawIOBase):
    def __init__(self, tee: _Tee):
        self._tee = tee

    def writable(self):
        return True

    def write(self, data):
        self._tee.stream.flush()
        self._tee.stream.buffer.write(data)
        self._tee.stream.buffer.flush()
        self._tee.record.add(self._tee.name, bytes(data).decode("utf-8", errors="replace"))
        return len(data)


@contextlib.contextmanager
def _recording_warnings(record: _CellOutput, filename: str, line_of):
    """Note each warning Python shows while the block runs (category, message, the file's line),
    then show it as Python would (on ``sys.stderr``, so into the cell's stderr, in order). A
    warning the code itself catches (``catch_warnings``) is not shown and not noted, as in a script."""
    import warnings

    shown = warnings.showwarning

    def showwarning(message, category, file_name, lineno, file=None, line=None):
        record.warnings.append({
            "category": category.__name__, "message": str(message),
            # The explainer's line for a warning its own code raised; else the library's file and line.
            "where": (f"line {line_of(lineno)}" if file_name == filename else f"{_shown_path(file_name)}:{lineno}"),
        })
        if line is None:  # read it here: linecache would look for the shortened name
            line = linecache.getline(file_name, lineno)
        shown(message, category, _shown_path(file_name), lineno, file, line)

    warnings.showwarning = showwarning
    try:
        yield
    finally:
        if warnings.showwarning is showwarning:
            warnings.showwarning = shown


def _shown_path(file_name: str) -> str:
    """A file as a warning names it on the page: relative to the working directory (the
    repository root) inside it, from site-packages for an installed library, so no page shows
    where this clone or its environment lives."""
    p = os.path.abspath(file_name)
    parts = Path(p).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[len(parts) - parts[::-1].index(marker):])
    if p.startswith(os.getcwd() + os.sep):
        return os.path.relpath(p)
    for d in _ENVIRONMENT:  # the standard library
        if Path(p).is_relative_to(d):
            return str(Path(p).relative_to(d))
    return file_name


def run_cells(code: str, namespace: dict, filename: str, header_lines: int, *, figures=None,
              line_of=lambda line: line) -> list[dict]:
    """Run the code cell by cell in one namespace; return each cell's first line, what it wrote
    (``stdout``, ``stderr``, and ``streams``: both in the order written) and its ``warnings``.

    Each cell is compiled at its own lines of ``filename``, so tracebacks and the checks' line
    numbers are those of the whole file; ``line_of`` turns such a line into the one a warning is
    reported at (the explainer source's). ``figures`` (a ``_FigureCapture``) learns which cell
    opened each figure and which is running when one is saved: a figure is its opener's output.
    Raises what the code raises.
    """
    cells = []
    for k, (first_line, source) in enumerate(split_code_cells(code, header_lines)):
        if figures is not None:
            figures.cell = k
            before = figures.open_figures()
        record = _CellOutput()
        out, err = _Tee(sys.stdout, record, "stdout"), _Tee(sys.stderr, record, "stderr")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                    _recording_warnings(record, filename, line_of):
                exec(compile("\n" * (first_line - 1) + source, filename, "exec"), namespace)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        if figures is not None:
            figures.opened_by(figures.open_figures() - before, k)
        cells.append({"line": first_line, "stdout": record.text("stdout"), "stderr": record.text("stderr"),
                      "streams": record.streams, "warnings": record.warnings})
    return cells


def _describe_error(exc: BaseException, code_path: Path, spec: dict) -> dict:
    """The traceback without the runner's frames, with the explainer source line of the fault."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    source_line = None
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve() == code_path and exc.lineno:
        # The code never ran: the line is the parser's, not a frame's.
        source_line = _source_line(spec, exc.lineno)
    lines = []
    for f in frames:
        if Path(f.filename).resolve() == code_path:
            src = _source_line(spec, f.lineno)
            source_line = src
            lines.append(f'  {spec["source"]}, line {src} (generated {spec["code_rel"]}, line {f.lineno})')
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


def _project_modules(root: Path) -> list[str]:
    main_file = Path(getattr(sys.modules.get("__main__"), "__file__", None) or "/").resolve()
    files = set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if not f:
            continue
        p = Path(f).resolve()
        # The code's own file is __main__'s (the code's text is in the key already).
        if p.is_relative_to(root) and p not in (Path(__file__).resolve(), main_file) and not in_environment(p):
            files.add(str(p.relative_to(root)))
    return sorted(files)


def _packages() -> dict:
    """Versions of the installed distributions whose top-level modules the run imported."""
    _package_index()
    out = {}
    for name in {name.split(".")[0] for name in sys.modules}:
        for dist in _PROVIDERS.get(name, []):
            if _version(dist) is not None:
                out[dist] = _version(dist)
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------------------------------
# Fork server: import the heavy packages once, then fork one clean child per explainer run
# ---------------------------------------------------------------------------------------------
#
# A fresh interpreter per explainer pays for importing NumPy, pandas, SciPy, scikit-learn,
# fairlearn, matplotlib and faircode every time (about 1.3 s each here). The build starts this
# server once; it imports what the explainers import, reads the installed packages' versions,
# and then forks a child per run, as multiprocessing's "forkserver" and pytest-xdist do. The
# child is a process of its own (own session and process group, its own stdout/stderr files,
# stdin from /dev/null, the run's token in its environment) that has run no explainer code:
# it then does exactly what ``main`` does in a fresh interpreter (memory limit, parent-death
# signal, audit hook, seeds, figure capture). The server is single-threaded, so forking is safe.

_REAL_EXIT = os._exit  # before _record_hard_exits wraps it in a run


def serve(listen_fd: int, build_pid: int, preload: list) -> int:
    """Serve fork requests on the listening Unix socket ``listen_fd`` until stdin closes.

    Each request is one JSON line ``{"spec", "stdout", "stderr", "cwd", "env"}`` on its own
    connection; the reply is ``{"pid": ...}`` at once and ``{"returncode": ...}`` (negative:
    killed by that signal, as ``subprocess`` reports it) when the child has ended.
    """
    import selectors
    import socket

    libc = _libc()
    if libc is not None:  # the build died: so does the server (and its children, through theirs)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != build_pid:
        return 1
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle
    listener = socket.socket(fileno=listen_fd)
    _import_ahead(preload)
    server_pid = os.getpid()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(0, selectors.EVENT_READ)  # the build closes our stdin when it is done
    children: dict[int, socket.socket] = {}  # pid -> the connection its request came on
    try:
        while True:
            for key, _ in selector.select(timeout=0.005 if children else None):
                if key.fileobj == 0:
                    if not os.read(0, 4096):
                        return 0
                    continue
                conn, _ = listener.accept()
                request = json.loads(_read_line(conn))
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    _forked_run(request, server_pid, [listener, conn, *children.values()])
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
                children[pid] = conn
            _reap(children)
    finally:
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass


def _import_ahead(preload: list) -> None:
    """Import what the explainers import (``[module, [names imported from it]]``) and read the
    installed packages' versions, once, for every forked child to inherit."""
    import importlib

    for module, names in preload:
        # A failure is left for the run itself to meet and report.
        with contextlib.suppress(Exception):
            imported = importlib.import_module(module)
            for name in names:  # a package's lazily imported names, or submodules
                with contextlib.suppress(Exception):
                    if not hasattr(imported, name):
                        importlib.import_module(f"{module}.{name}")
    _package_index(every_version=True)


def _reap(children: dict) -> None:
    """Tell the build the return code of each child that has ended, on its request's connection."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        conn = children.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
            except OSError:
                pass
            conn.close()


def _read_line(conn) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            raise ConnectionError("the connection closed before a whole line arrived")
        data += chunk
    return data


def _forked_run(request: dict, server_pid: int, inherited: list) -> None:
    """In the forked child: become the run's own process, run ``main``, exit. Never returns."""
    status = 1
    try:
        os.setsid()  # its own session and process group, as the build's Popen(start_new_session) gave
        for sock in inherited:
            sock.close()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        for fd, name in ((1, "stdout"), (2, "stderr")):
            out = os.open(request[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(out, fd)
            os.close(out)
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        status = main(request["spec"], parent_pid=server_pid)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - a runner fault: say it on the run's stderr
        traceback.print_exc()
    finally:
        try:
            import atexit

            atexit._run_exitfuncs()  # what a normal interpreter exit runs (joblib, logging, ...)
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            _REAL_EXIT(status)


_PROVIDERS: dict | None = None  # top-level module -> the distributions that provide it
_VERSIONS: dict[str, str | None] = {}  # distribution -> version (None: not found)


def _package_index(*, every_version: bool = False) -> None:
    """Read which distributions provide each top-level module once per process; with
    ``every_version`` (the fork server, once per build) read every version too."""
    global _PROVIDERS
    from importlib import metadata

    if _PROVIDERS is None:
        _PROVIDERS = metadata.packages_distributions()
    if every_version:
        for names in _PROVIDERS.values():
            for dist in names:
                _version(dist)


def _version(dist: str) -> str | None:
    if dist not in _VERSIONS:
        from importlib import metadata

        try:
            _VERSIONS[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            _VERSIONS[dist] = None
    return _VERSIONS[dist]


if __name__ == "__main__":
    if sys.argv[1] == "--serve":  # --serve LISTEN_FD BUILD_PID PRELOAD_JSON
        sys.exit(serve(int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])))
    sys.exit(main(sys.argv[1]))
