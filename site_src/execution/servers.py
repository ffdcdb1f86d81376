"""The fork server a build's runs are forked from: which one, what it imports, how long it lives.

Every decision about the server is here, so the stages above see one call each:

- `early_server` (the build, around collect, extract and execute): a build that runs every
  explainer starts its server before it reads them, importing what they imported last time
  (`PRELOAD`, written by `remember_preload` after each build's runs); its imports (about 3 s)
  then overlap collecting, hashing and extracting (issue 26). It is closed when the block ends.
- `server_for_runs` (the execute stage): that early server if it is alive, the one ``fairsite
  serve`` keeps between rebuilds (`kept_server`, while `kept_server_fingerprint` holds), or a
  new one importing what the code to run imports (`preload`).
- `close_kept_server` (``serve``, on exit).

The server itself (the process, its socket, a forked run) is ``_forkserver``'s; what a run
imported, which `preload` reads back, is in its cache entry (``cache.recorded_imports``).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from site_src import filestate
from site_src.execution import cache
from site_src.execution._forkserver import _ForkServer
from site_src.sources.extract import CodeFile


@contextlib.contextmanager
def early_server(root: Path, cache_dir: Path, *, every_run: bool,
                 started: _ForkServer | None = None) -> Iterator[_ForkServer | None]:
    """The server for a build in which ``every_run`` explainer runs (``check``, ``build --force``),
    started now (or ``started`` by the command line before it imported the build), for
    `server_for_runs`; None for a build that may run few or none (a server it does not need is
    closed at once). Closed when the block ends (a no-op once the runs have closed it)."""
    server = started
    if server is not None and not every_run:
        server.close()
        server = None
    elif server is None and every_run:
        server = start_server_early(root, cache_dir)
    try:
        yield server
    finally:
        if server is not None:
            server.close()


def server_for_runs(todo: list[CodeFile], *, root: Path, fork: bool, cache_dir: Path,
                    keep: list[CodeFile] | None = None, early: _ForkServer | None = None) -> _ForkServer | None:
    """The server the runs of ``todo`` (slowest first) are forked from, or None (nothing to run, no
    fork server on this system, or ``fork`` off): with ``keep`` (every code file of the site) the
    kept one (`kept_server`); else ``early`` if it is alive; else one started now, in the thread
    that lives for the whole build (the server dies with it). An ``early`` server not used is closed."""
    if not (todo and fork and _ForkServer.available()):
        server = None
    elif keep is not None:
        server = kept_server(root, keep, cache_dir)
    elif early is not None and early.proc.poll() is None:
        server = early  # started while the build collected, hashed and extracted
    else:
        server = _ForkServer(root, preload(todo, cache_dir), first=preload(todo[:1], cache_dir))
    if early is not None and early is not server:
        early.close()
    return server


def is_kept(server: _ForkServer | None) -> bool:
    """Whether ``server`` is the one ``serve`` keeps for its next rebuild (not to be closed after the runs)."""
    return server is not None and server is _KEPT.get("server")


PRELOAD = "preload.json"  # in the run cache: what the explainers imported, for the next build's early server


def start_server_early(root: Path, cache_dir: Path) -> _ForkServer | None:
    """A fork server started before the build reads its explainers, importing what they imported
    last time (`early_server`). A run of an explainer that now imports more imports it itself. None where there is no
    fork server (not Linux) or no record yet (a first build starts its server when it runs).
    Start it in the thread that will run `execute` (its parent-death signal follows that thread).
    """
    if not _ForkServer.available():
        return None
    try:
        record = json.loads((cache_dir / PRELOAD).read_text())
    except (OSError, ValueError):
        return None
    # {"preload": what every explainer imported, "first": what the slowest one did}
    if not (isinstance(record, dict) and isinstance(record.get("preload"), list)
            and isinstance(record.get("first", []), list)):
        return None  # unreadable, or a record of an older build: the build starts its server itself
    return _ForkServer(root, record["preload"], first=record.get("first", []))


def remember_preload(cache_dir: Path, code_files: list[CodeFile]) -> None:
    """Record what every explainer imports (`preload`), and what the one the next build runs
    first does (the slowest, as `execute` orders them), for `start_server_early`, if it changed."""
    first = min(code_files, key=lambda c: -cache.last_run_seconds(cache_dir / c.slug), default=None)
    text = json.dumps({"preload": preload(code_files, cache_dir),
                       "first": preload([first], cache_dir) if first is not None else []})
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


def kept_server(root: Path, code_files: list[CodeFile], cache_dir: Path) -> _ForkServer:
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
        server = _ForkServer(root, preload(code_files, cache_dir))
        _KEPT.update(server=server, fingerprint=fingerprint, root=root)
    return server


def close_kept_server() -> None:
    """End the fork server `execute` kept (``keep_server=True``), if any."""
    server = _KEPT.pop("server", None)
    _KEPT.clear()
    if server is not None:
        server.close()


def preload(code_files: list[CodeFile], cache_dir: Path | None = None) -> list[list]:
    """What the fork server imports once, ``[module, [names imported from it]]``: what the
    explainers import at their top level (the names too: a package may import them lazily), then,
    with ``cache_dir``, what their last runs imported beyond that (``CacheEntry.imported``: a
    plotting backend at the first figure saved, a library's submodules at the first call)."""
    found: dict[str, dict[str, None]] = {}
    for code in code_files:
        for module, names in top_level_imports(code.text):
            found.setdefault(module, {}).update(dict.fromkeys(names))
    if cache_dir is not None:
        for module in sorted({m for code in code_files for m in cache.recorded_imports(cache_dir / code.slug)}):
            found.setdefault(module, {})
    return [[module, list(names)] for module, names in found.items()]


@functools.lru_cache(maxsize=256)
def top_level_imports(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
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
