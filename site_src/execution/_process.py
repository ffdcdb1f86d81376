"""A run's process: started (forked from the server, or a fresh interpreter), waited for, killed
with whatever it left running, and its ending read as an error where it did not end well.

The execute stage (``execute._run``) calls `_spawn` and, for a run that ended without reporting,
`_died`; `_INTERRUPTED` and `_RUNNING` let Ctrl-C take every child down (``execute._run_all``);
`_Places` and `_CodeSlot` bound how many explainers' code runs at once.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from site_src.errors import ExecutionError
from site_src.execution import _limits
from site_src.execution._forkserver import _Forked, _ForkServer
from site_src.execution._limits import _TOKEN, _run_environment
from site_src.sources.extract import CodeFile


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


_GRACE_S = 10  # the run stops itself at its timeout; the build kills it this much later


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


def format_bytes(n: int) -> str:
    """``4294967296`` -> ``"4 GiB"``: the memory limit as the front matter would write it."""
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"


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
