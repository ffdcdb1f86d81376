"""Process control of an explainer run: what it may use, and what it leaves behind.

The run dies with the build (:func:`_bind_to_build`: a parent-death signal and a child
subreaper on Linux), its address space is capped (:func:`_limit_memory`, ``RLIMIT_AS``), a hard
``os._exit`` is noted with the explainer line that called it (:func:`_record_hard_exits`), and
the processes the code left running are found in ``/proc`` and killed at the end
(:func:`_kill_descendants`; :func:`processes` and :func:`kill` serve the build too). POSIX and
partly Linux-specific; elsewhere the Linux steps are skipped. Part of the runner
(:mod:`site_src.execution._runner`).
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
from pathlib import Path

from site_src.execution._cells import _source_line


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
    # A process the code forks (a multiprocessing worker) stops on SIGTERM at once, as it would
    # outside the build. Inheriting `_die` made SIGTERM wait for the interpreter, and a worker
    # blocked on a semaphore when it came never ran it: Pool.terminate() waited for ever (a CI
    # run hung in tests/test_site_execution.py's leftovers case).
    os.register_at_fork(after_in_child=_default_sigterm)
    libc = _libc()
    if libc is None:
        return
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1)
    if os.getppid() != parent_pid:  # the build died before the line above took effect
        os.killpg(os.getpgid(0), signal.SIGKILL)


def _default_sigterm() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36  # from <linux/prctl.h>


_TOKEN = "FAIRSITE_RUN"  # environment variable naming the run, inherited by all it starts


def _run_environment() -> dict[str, str]:
    """The environment of every run. Same numbers whatever the job count: one BLAS thread per
    run, fixed hashing, no GUI."""
    env = dict(os.environ)
    env.update(PYTHONHASHSEED="0", MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1")
    env.pop(_TOKEN, None)
    return env


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
