"""What an explainer run read: the audit hook, and the modules and packages it imported.

:class:`_InputRecorder` is the run's audit hook (PEP 578): the project files it opens (their
digests join the run cache's key), what cannot be keyed by a file's digest (a directory listing,
a child process, SQLite, the network, a file outside the repository) and what it writes.
:func:`_project_modules` and :func:`_top_level_modules` list, once the code has run, the project
modules and the top-level modules it imported (the build maps those to package versions).
:func:`in_environment` says which files belong to the Python environment (covered by package
versions, not digests). Part of the runner
(:mod:`site_src.execution._runner`); its files, ``RUNNER_FILES``, are never the run's inputs.
"""

from __future__ import annotations

import errno
import os
import shlex
import sys
import sysconfig
from pathlib import Path


def _environment_dirs() -> tuple[Path, ...]:
    dirs = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    dirs.update(p for p in sysconfig.get_paths().values() if p)
    return tuple(sorted({Path(d).resolve() for d in dirs}))


_ENVIRONMENT = _environment_dirs()


# The runner's own modules: what runs the explainer, so neither among the project modules the
# run imported nor frames of the traceback it reports.
RUNNER_FILES = frozenset(Path(__file__).resolve().with_name(f"{name}.py") for name in (
    "_runner", "_inputs", "_limits", "_cells", "_capture", "_forkserver"))


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

    ``protected`` (paths relative to ``root``: the files git tracks) may not be changed: opening
    one for writing, removing, renaming, replacing or truncating it raises ``PermissionError``
    before anything is written, and the attempt is kept in ``refused`` (path -> the line of
    ``code_file`` it came from) even if the code catches the error, so the build fails the run
    naming the file and the line (issue 47: a run that overwrote ``results/results_fairness.csv``
    had the build blame the file). What a child process writes raises no audit event: after a run
    that started one, `changed_unseen` names the protected files whose size, time or inode moved.
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

    # Events that change an existing file without opening it for writing: event -> a pair per path
    # argument (its index, the index of its dir_fd argument or None).
    _CHANGES = {"os.remove": ((0, 1),), "os.rename": ((0, 2), (1, 3)), "os.truncate": ((0, None),),
                "shutil.rmtree": ((0, 1),)}

    def __init__(self, root: Path, out_dir: Path, *, protected: frozenset[str] = frozenset(),
                 code_file: str | None = None):
        self.root, self.out_dir = root, out_dir
        self.protected, self._code_file = protected, code_file
        self.refused: dict[str, int | None] = {}  # protected files the code tried to change -> its line
        self._before = {p: self._signature(p) for p in protected}  # for `changed_unseen`
        self._child = False  # the run started a process the hook does not watch
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
        refused = self._refused(event, args)
        if refused is not None:
            raise PermissionError(errno.EACCES, f"{refused} is a file of the repository: a run may not change it "
                                  "(the build refused; write what the code makes to a file git does not track)",
                                  refused)
        try:
            if event == "open" and args:
                self._open(*args[:3])
            elif event in self._LISTING:
                self._listing(event, args)
            elif event in self._CHILD:
                self._child = True
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

    def _refused(self, event: str, args: tuple) -> str | None:
        """The protected file (relative to the root) that ``event`` would change, recorded with the
        code's line; None if it changes none."""
        if not self.protected:
            return None
        try:
            if event == "open" and args:
                mode, flags = (args[1:3] + (None, 0))[:2]
                targets = [self._inside(args[0])] if self._writes(mode, flags) else []
            elif event in self._CHANGES:
                targets = [self._inside(args[i], args[fd] if fd is not None and fd < len(args) else None)
                           for i, fd in self._CHANGES[event] if i < len(args)]
                if event == "shutil.rmtree":  # a folder: every protected file under it
                    targets = [p for t in targets if t is not None for p in sorted(self.protected)
                               if t == "." or p.startswith(t.rstrip("/") + "/")]
            else:
                return None
            hit = next((t for t in targets if t in self.protected), None)
            if hit is not None:
                self.refused.setdefault(hit, self._code_line())
            return hit
        except Exception:  # noqa: BLE001 - a path it cannot read is not one it could protect
            return None

    def changed_unseen(self) -> list[str]:
        """The protected files that changed since the run started, if it started a child process
        (which the audit hook does not watch); none otherwise."""
        return [p for p, before in self._before.items() if self._child and self._signature(p) != before]

    def _signature(self, rel: str) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.root / rel)
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns, st.st_ino

    def _inside(self, raw, dir_fd=None) -> str | None:
        """``raw`` (a path, relative to ``dir_fd`` if given) relative to the root, or None."""
        if isinstance(dir_fd, int) and dir_fd >= 0 and not isinstance(raw, int) and not os.path.isabs(os.fsdecode(raw)):
            raw = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), os.fsdecode(raw))
        p = self._path(raw)
        if p is None:
            return None
        p = p.resolve()
        return str(p.relative_to(self.root)) if p.is_relative_to(self.root) else None

    def _code_line(self) -> int | None:
        """The line of the code's file the current event comes from (its innermost frame there)."""
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename == self._code_file:
                return frame.f_lineno
            frame = frame.f_back
        return None

    @classmethod
    def _writes(cls, mode, flags) -> bool:
        """An ``open`` event's mode (a string, for ``open``) or flags (``os.open``) that may write."""
        return (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            not isinstance(mode, str) and isinstance(flags, int) and bool(flags & cls._WRITE_FLAGS))

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
        writes = self._writes(mode, flags)
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


def _imported_since(before: frozenset[str]) -> list[str]:
    """The modules of the Python environment imported since ``before`` (``sys.modules``' names then):
    what the run imported that its fork server had not, for the next server to import once
    (``CacheEntry.imported``). A run forked from a server that preloads only what the code imports
    at its top level imported a plotting backend and a dataframe layer itself, in every run:
    0.16 s of CPU a run, 16% of the code's own time (issue 26)."""
    found = []
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if name not in before and isinstance(f, str) and f and in_environment(Path(f)):
            found.append(name)
    return sorted(found)


def _project_modules(root: Path) -> list[str]:
    """The project files (relative to ``root``) of the modules this process has imported.

    A module's file is resolved through its folder (`_folder_in_project`, remembered per folder):
    the fork server resolves the folders of everything it preloaded (`_remember_module_folders`)
    and every run it forks inherits them, so a run resolves only the folders of what it imported
    beyond them. Resolving every module's path in every run was 6.1 s of a 44.7 s cold serial
    build (issue 26). A module file that is itself a symbolic link is resolved on its own.
    """
    main_file = Path(getattr(sys.modules.get("__main__"), "__file__", None) or "/").resolve()
    root = Path(root)
    files = set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if not f or not isinstance(f, str):
            continue
        folder_name, name = os.path.split(f)
        if os.path.islink(f):
            p = Path(f).resolve()
            if not p.is_relative_to(root) or in_environment(p):
                continue
        else:
            folder = _folder_in_project(folder_name, root)
            if folder is None:
                continue
            p = folder / name
        # The code's own file is __main__'s (the code's text is in the key already).
        if p not in RUNNER_FILES and p != main_file:
            files.add(str(p.relative_to(root)))
    return sorted(files)


_FOLDERS: dict[tuple[str, Path], Path | None] = {}  # (module folder as named, root) -> resolved, if a project folder


def _folder_in_project(folder: str, root: Path) -> Path | None:
    """``folder`` resolved, if it lies inside ``root`` and outside the Python environment; else None."""
    key = (folder, root)
    if key not in _FOLDERS:
        resolved = Path(folder or ".").resolve()
        inside = resolved.is_relative_to(root) and not in_environment(resolved / "__init__.py")
        _FOLDERS[key] = resolved if inside else None
    return _FOLDERS[key]


def _remember_module_folders(root: Path) -> None:
    """Resolve the folders of every module imported so far (the fork server, once it has preloaded)."""
    _project_modules(Path(root))


def _top_level_modules() -> list[str]:
    """The top-level names of every module this process has imported: the build maps them to
    the installed distributions that provide them and their versions (`cache.imported_packages`),
    once for all runs, where each run read the whole package index itself (issue 26)."""
    return sorted({name.split(".")[0] for name in list(sys.modules)})
