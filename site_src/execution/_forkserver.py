"""The fork server: import the heavy packages once, then fork one clean child per explainer run.

A fresh interpreter per explainer pays for importing NumPy, pandas, SciPy, scikit-learn,
fairlearn, matplotlib and faircode every time (about 1.3 s each here). The build starts this
server once (``python -m site_src.execution._runner --serve``); it imports what the explainers
import, then forks a child per run, as multiprocessing's "forkserver" and pytest-xdist do. The
child is a process of its own (own session and process group, its own stdout/stderr files, stdin
from /dev/null, the run's token in its environment) that has run no explainer code: it then does
exactly what
:func:`site_src.execution._runner.main` does in a fresh interpreter (memory limit, parent-death
signal, audit hook, seeds, figure capture), which :func:`serve` is handed as ``run`` (so that
this module need not import the runner, which runs as ``__main__``). The server is
single-threaded, so forking is safe.

Both ends live here: the server's (`serve`) and the build's (`_ForkServer` starts a server and
asks it for runs, `_Forked` is a run it forked, `start_server_early` starts one from the record
of what the runs imported). The module imports only the standard library and the runner's light
helpers, so ``fairsite`` can start the server before it imports the build (issue 26).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from site_src.errors import ExecutionError
from site_src.execution._inputs import _remember_module_folders
from site_src.execution._limits import _libc, _PR_SET_PDEATHSIG, _run_environment


_REAL_EXIT = os._exit  # before _record_hard_exits wraps it in a run


def serve(listen_fd: int, build_pid: int, preload: list, *, run, first: list = ()) -> int:
    """Serve fork requests on the listening Unix socket ``listen_fd`` until stdin closes.

    ``preload`` (``[module, [names imported from it]]``) is imported before any run is forked;
    with ``first``, only that is (what the first run imported last time), the first run is forked
    on it, and the rest of ``preload`` is imported before the next (`_Preload`).

    Each request is one JSON line ``{"spec", "stdout", "stderr", "cwd", "env"}`` on its own
    connection; ``run(spec_path, parent_pid=..., code_done_fd=...)`` (the runner's ``main``) runs
    each in a forked child. The replies are JSON lines: ``{"pid": ...}`` at once, from the server;
    ``{"code_done": true}`` from the child when its code has ended (it then saves its figures);
    ``{"returncode": ...}`` (negative: killed by that signal, as ``subprocess`` reports it) from
    the server when the child has ended. A child that dies early sends no ``code_done``.
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
    _claim_and_sweep(listener.getsockname(), build_pid)
    _keep_freed_memory(libc)
    imports = _Preload(list(first), preload)
    imports.next_phase()
    # Resolving the preloaded modules' folders only saves each run work when it records what it
    # imported: done while no request waits, so the first run starts as soon as the imports are
    # done (issue 26). A run forked before does its share itself, with the same answers.
    later = _indexing_steps()
    server_pid = os.getpid()
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(0, selectors.EVENT_READ)  # the build closes our stdin when it is done
    children: dict[int, socket.socket] = {}  # pid -> the connection its request came on
    try:
        while True:
            events = selector.select(timeout=0 if later else 0.005 if children else None)
            if not events and later:
                later.pop(0)()
            for key, _ in events:
                if key.fileobj == 0:
                    if not os.read(0, 4096):
                        return 0
                    continue
                conn, _ = listener.accept()
                request = json.loads(_read_line(conn))
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    _forked_run(request, server_pid, [listener, *children.values()], run, report=conn)
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
                children[pid] = conn
                imports.next_phase()  # the first run has what it needs: the rest before the next run
            _reap(children)
    finally:
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass


# The socket folders (``<tmp>/fairsite-*``, made by the build's ``_ForkServer``): a build killed
# outright (SIGKILL, a CI job cancelled hard, a test's timeout) leaves its folder behind, since
# the server dies with it (parent-death signal SIGKILL) and nothing runs to remove it. Each new
# server removes the folders whose build is gone.
_OWNER = "owner"  # in a socket folder: "<build pid> <its start time> <pid namespace>"
_SERVER_FILES = {"fork.sock", "server.log", _OWNER}  # all a socket folder may hold
_OWNERLESS_AGE_S = 600  # a folder without an owner file (an older build's) is judged after this


def _claim_and_sweep(address, build_pid: int) -> None:
    """Write the owner file into this server's socket folder (the folder of ``address``), then
    remove the stale folders beside it (`_stale`). Never fails the server: a folder that cannot
    be read or removed is left."""
    if not isinstance(address, str) or not address:
        return
    folder = Path(address).parent
    try:
        (folder / _OWNER).write_text(f"{build_pid} {_start_time(build_pid)} {_pid_namespace()}\n")
        siblings = list(folder.parent.glob("fairsite-*"))
    except OSError:
        return
    bound = _bound_socket_paths()
    for other in siblings:
        if other != folder and _stale(other, bound):
            import shutil

            shutil.rmtree(other, ignore_errors=True)


def _stale(folder: Path, bound: set[str] | None) -> bool:
    """Whether ``folder`` is a socket folder no build uses any more.

    Only a folder of this user holding nothing but a server's files is considered. With an owner
    file, it is stale when its build's process is gone (or the pid now names a process started
    at another time); a build in another pid namespace is never judged. Without one (made by an
    older build, or by a build whose server is starting), only when no process listens on its
    socket (``/proc/net/unix``) and it is older than `_OWNERLESS_AGE_S`: two builds at once never
    lose each other's folder."""
    import time

    try:
        info = folder.lstat()
        names = {p.name for p in folder.iterdir()}
        # Only a server's files, and at least one of them (`fairsite publish` has folders of its own there).
        if (not folder.is_dir() or folder.is_symlink() or info.st_uid != os.getuid() or not names <= _SERVER_FILES
                or not names & {"fork.sock", "server.log"}):
            return False
        if _OWNER in names:
            pid, started, namespace = ((folder / _OWNER).read_text().split() + ["", "", ""])[:3]
            if namespace != _pid_namespace():
                return False
            return not pid.isdigit() or _start_time(int(pid)) != started
    except OSError:
        return False
    if bound is None:  # cannot tell whether a server listens there
        return False
    return str(folder / "fork.sock") not in bound and time.time() - info.st_mtime > _OWNERLESS_AGE_S


def _start_time(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, ``/proc/<pid>/stat``), or "gone"."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return "gone"


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return "?"


def _bound_socket_paths() -> set[str] | None:
    """The paths of the Unix sockets some process has bound (``/proc/net/unix``), or None."""
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as fh:
            next(fh, None)  # the header
            return {parts[7] for parts in (line.rstrip("\n").split(maxsplit=7) for line in fh) if len(parts) == 8}
    except OSError:
        return None


# glibc's mallopt parameters (<malloc.h>) and the values the server sets.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD = 32 * 1024**2  # the ceiling glibc's own dynamic threshold may reach on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX)
_TRIM_THRESHOLD = 1024**3


def _keep_freed_memory(libc) -> None:
    """Let every run reuse the memory it frees instead of faulting in fresh pages (issue 26).

    A forked run starts without the freed memory a long-lived process keeps for reuse, and
    glibc's defaults have it fetch fresh pages over and over: an allocation of 128 KiB or more
    (an array of 16,384 floats) gets a mapping of its own, unmapped when freed (the threshold
    rises only as such blocks are freed, and a block the size of the last one freed is mapped
    again), and freed heap past that is given back to the system. Each fresh page costs a page
    fault: the site's 14 runs, forked, took about 590,000 against 300,000 for the same code run
    in one process, and 10-12% more CPU. With blocks up to 32 MiB kept on the heap and the heap
    never trimmed, forked runs take about 300,000 (measured with ``ru_minflt``; see
    ``tests/test_forked_memory.py``). Set before the server's imports, so its children inherit
    it. What a run allocates is unchanged, only where it lies, and what it frees stays in its
    own process, which ends with the run. Nothing is done where the C library has no
    ``mallopt`` (not glibc). Reference: mallopt(3).
    """
    mallopt = getattr(libc, "mallopt", None) if libc is not None else None
    if mallopt is None:
        return
    mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
    mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)


class _Preload:
    """What the server imports, in up to two phases: what the first run needs, then the rest.

    The first run (the slowest last time, `execute`) waited for every module any explainer
    imports (2.2 s here) although its own took 1.7 s: forked once its own are in, it starts
    0.4-0.5 s sooner, and the server imports the rest on the other core while it runs; the runs
    after it find everything imported, as before (issue 26). Without ``first`` there is one phase.
    """

    def __init__(self, first: list, preload: list):
        self._phases = [first, preload] if first else [preload]

    def next_phase(self) -> None:
        """Import the next phase, if any is left, and freeze what was imported: it lives as long
        as every run, and the runs' garbage collector need not walk it (a full collection would,
        and would write each object's header, copying the page it sits on into the run;
        gc.freeze, whose documentation gives this use)."""
        if self._phases:
            _import_modules(self._phases.pop(0))
            gc.freeze()


def _import_ahead(preload: list) -> None:
    """Import what the explainers import (``[module, [names imported from it]]``) and resolve the
    folders of what was imported, once, for every forked child to inherit."""
    _import_modules(preload)
    for step in _indexing_steps():
        step()


def _import_modules(preload: list) -> None:
    """Import what the explainers import (``[module, [names imported from it]]``): every run
    forked after this finds them imported, whether or not its code imports them."""
    import importlib

    for module, names in preload:
        # A failure is left for the run itself to meet and report.
        with contextlib.suppress(Exception):
            imported = importlib.import_module(module)
            for name in names:  # a package's lazily imported names, or submodules
                with contextlib.suppress(Exception):
                    if not hasattr(imported, name):
                        importlib.import_module(f"{module}.{name}")


def _indexing_steps() -> list:
    """What saves each forked run work as it records what it imported: the folders of the
    preloaded project modules, resolved once here and not in every run (issue 26). (Which
    package each module comes from, and its version, the build reads once for all runs:
    `cache.imported_packages`.)"""
    root = Path.cwd().resolve()
    return [lambda: _remember_module_folders(root)]


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


def _forked_run(request: dict, server_pid: int, inherited: list, run, *, report) -> None:
    """In the forked child: become the run's own process, ``run`` the spec (``main``), exit. Never returns.

    ``report`` is the connection the build's request came on: the child keeps it to tell the
    build when its code has ended (``main``'s ``code_done_fd``), before it saves its figures;
    the server itself writes the pid and the return code on it."""
    status = 1
    try:
        os.setsid()  # its own session and process group, as the build's Popen(start_new_session) gave
        for sock in inherited:
            sock.close()
        # The bare descriptor (close-on-exec, as accept made it): main closes it once it has told.
        report_fd = report.detach()
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
        status = run(request["spec"], parent_pid=server_pid, code_done_fd=report_fd)
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


# --- the build's side: starting the server, asking it for runs -------------------------------------


class _ForkServer:
    """The build's fork server (``site_src.execution._forkserver.serve``): one process that has imported what
    the explainers import and forks a clean child per run. Requests go over a Unix socket the
    build creates and hands over (no start-up race); closing its stdin stops it, and it dies
    with the build (parent-death signal)."""

    @staticmethod
    def available() -> bool:
        return sys.platform.startswith("linux") and hasattr(os, "fork")

    def __init__(self, root: Path, preload: list, *, first: list = ()):
        self._dir = tempfile.mkdtemp(prefix="fairsite-")
        self.address = os.path.join(self._dir, "fork.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.address)
        listener.listen(64)
        self._log = open(os.path.join(self._dir, "server.log"), "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "site_src.execution._runner", "--serve", str(listener.fileno()), str(os.getpid()),
             json.dumps({"preload": preload, "first": list(first)})],
            cwd=root, env=_run_environment(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._log,
            pass_fds=(listener.fileno(),), start_new_session=True,
        )
        listener.close()

    def start(self, spec: Path, *, stdout: Path, stderr: Path, cwd: Path, env: dict) -> _Forked:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(self.address)
            conn.sendall(json.dumps({"spec": str(spec), "stdout": str(stdout), "stderr": str(stderr),
                                     "cwd": str(cwd), "env": env}).encode() + b"\n")
            forked = _Forked(conn)
        except (OSError, ValueError, KeyError, ConnectionError) as err:
            conn.close()
            raise ExecutionError(f"the fork server stopped ({err}); its log: {self.log_tail()}") from None
        return forked

    def log_tail(self) -> str:
        try:
            return Path(self._log.name).read_text(errors="replace")[-2000:] or "(empty)"
        except OSError:
            return "(unreadable)"

    def close(self) -> None:
        if self._log.closed:  # closed already (a build closes a server it started early in any case)
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self._log.close()
        shutil.rmtree(self._dir, ignore_errors=True)


class _Forked:
    """A run forked by the server: ``pid`` (its process group too), ``wait``, ``returncode``
    (negative: killed by that signal), like ``subprocess.Popen``; and ``wait_code_done``.

    Read from the request's connection, a JSON line at a time, in whatever order they come
    (`_forkserver.serve`): the server's ``pid`` and ``returncode``, the run's ``code_done``."""

    def __init__(self, conn: socket.socket):
        self._conn, self._buffer, self.returncode, self.code_done = conn, b"", None, False
        self.pid = None
        while self.pid is None:
            self._read(None)

    def _read(self, timeout: float | None) -> None:
        """Take in the next message; TimeoutExpired past ``timeout`` seconds."""
        while b"\n" not in self._buffer:
            self._conn.settimeout(timeout)
            try:
                chunk = self._conn.recv(4096)
            except TimeoutError:
                raise subprocess.TimeoutExpired("explainer run", timeout) from None
            if not chunk:
                raise ConnectionError("the fork server closed the connection")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        message = json.loads(line)
        if "pid" in message:
            self.pid = message["pid"]
        self.code_done = self.code_done or bool(message.get("code_done"))
        if "returncode" in message:
            self.returncode = message["returncode"]

    def _read_until(self, done: Callable[[], bool], timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not done():
                self._read(None if deadline is None else max(0.001, deadline - time.monotonic()))
        except (OSError, ConnectionError):  # the server died: so did the run (parent-death signal)
            self.returncode = -signal.SIGKILL
        if self.returncode is not None:
            self._conn.close()

    def wait_code_done(self, timeout: float | None = None) -> None:
        """Wait until the run's code has ended (it then saves its figures) or the run has."""
        self._read_until(lambda: self.code_done or self.returncode is not None, timeout)

    def wait(self, timeout: float | None = None) -> int:
        self._read_until(lambda: self.returncode is not None, timeout)
        return self.returncode
