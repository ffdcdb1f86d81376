"""The run cache: when an explainer's cached run may be reused, and the entry that records it.

A cached run is reused only if every input it had still hashes the same. The key is two-part,
like a compiler's dependency file:

- a static part known before the run: the generated code, the Python version, the runner, the
  seed, this cache's format, and the ``inputs:`` patterns the front matter declares;
- the dependencies the run itself recorded: every project module it imported and every project
  file it opened (by sha256), the files the declared ``inputs:`` matched (a glob's list of
  matches is part of it, so a new file re-runs), and the versions of the packages it imported.

Some reads cannot be tracked by digest: a SQLite connection, a child process, a directory
listing, a network connection, a fork (see ``site_src.execution._runner``). The run records them as
``untracked``; such a run is never served from the cache unless the explainer declares
``inputs:``, in which case the declared files are taken to be everything it reads that way.

Entries are also checked against themselves: every artefact (figure SVG) is stored with its
digest and re-hashed on use, and an entry that is not valid JSON, not UTF-8, from another format
or with missing or mistyped fields is a miss with a reason, never a traceback.

Nothing in the key depends on where the clone lives: paths are relative to the repository root,
and files of the Python environment (``sys.prefix``, site-packages, wherever the virtual
environment is) are never recorded; package versions cover them.
"""

from __future__ import annotations

import functools
import glob as globlib
import io
import json
import os
import re
import shutil
import sys
import threading
import tokenize
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from site_src import filestate
from site_src.filestate import hash_file
from site_src.execution import _cells, _inputs, _runner

FORMAT = 5  # 3: per-cell output and narrow figure variants; 4: per-cell stderr and warnings, in order;
#  5: the static key's parts, so a miss names the part that changed
ENTRY = "entry.json"


class StreamText(BaseModel):
    """A stretch of what a cell wrote to one stream (consecutive writes to it merged)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    name: Literal["stdout", "stderr"]
    text: str


class WarningRecord(BaseModel):
    """A warning a cell issued (and did not catch), as Python showed it on stderr."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    category: str  # "RuntimeWarning", "UserWarning", ...
    message: str
    where: str  # "line N" of the explainer source, or the library file and line that warned

    def text(self) -> str:
        """``Category: message``: what the front matter's ``warnings:`` patterns are matched against."""
        return f"{self.category}: {self.message}"

    def allowed_by(self, patterns) -> bool:
        """True when one of the ``warnings:`` patterns (regular expressions) is found in :meth:`text`."""
        return any(re.search(p, self.text()) for p in patterns)


class CellRecord(BaseModel):
    """One ``# %%`` cell of a run (the whole code is one cell without markers)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    line: int  # its first line in the generated file
    streams: list[StreamText]  # what it wrote to stdout and to stderr (warnings included), in order
    warnings: list[WarningRecord]
    figures: list[int]  # the figures it opened, 1-based, in the order the run saved them

    @property
    def stdout(self) -> str:
        """What it printed."""
        return "".join(s.text for s in self.streams if s.name == "stdout")

    @property
    def stderr(self) -> str:
        """What it wrote to stderr, warnings included."""
        return "".join(s.text for s in self.streams if s.name == "stderr")


class CacheEntry(BaseModel):
    """One cached run: its key, what it produced, and the digests to check both against."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    format: Literal[5]
    static_key: str
    static_parts: dict[str, str]  # what the static key is made of, by part (`static_parts`)
    deps: dict[str, str | None]  # project file (relative path) -> sha256 when the run read it
    inputs: dict[str, dict[str, str | None]]  # declared pattern -> {matched path: sha256}
    untracked: list[str]  # reads the cache cannot track, as sentences ("connected to x.db (sqlite3)")
    packages: dict[str, str]
    artefacts: dict[str, str]  # file in the entry folder -> sha256
    stdout: str
    stderr: str
    values: dict
    # The top-level names the code defined that the run does not pass, by name -> type name
    # ("table": "DataFrame"): what a page citing one is told (`execute.PASSED_VALUES`).
    unpassed: dict[str, str] = Field(default_factory=dict)
    figures: list[str]  # SVG names
    narrow: dict[str, str]  # SVG name -> its variant laid out for a phone, when it has one
    cells: list[CellRecord]
    duration_s: float
    # The code's CPU time (its waited-for children's included): what the time budget counts. None
    # in an entry stored before it was recorded.
    cpu_s: float | None = None
    wall_s: float
    # Of wall_s, saving the figures' files (SVG and the phone's SVG): at show()/close(), so
    # partly inside duration_s, and at the end. What a page's figures cost on top of its code.
    figures_s: float = 0.0
    peak_memory_mb: float
    modules: list[str]
    data_files: list[str]
    python: str
    run_at: str
    warnings: list[str] = Field(default_factory=list)  # output that was not UTF-8, processes left running
    # Modules of the Python environment the code imports lazily (a plotting backend at the first
    # figure saved, a library's submodules at the first call), by name: what its runs imported
    # beyond their fork server's, kept while the code is the same (a run of code unchanged cannot
    # tell whether it still needs what the server had imported for it). Not an input of the run:
    # the next fork server imports them once for every run (`servers.preload`).
    imported: list[str] = Field(default_factory=list)

    def run_id(self) -> str:
        """A digest of every input of the run: same id, same numbers.

        A run with untracked reads and no declared ``inputs:`` has inputs no digest covers: its
        id covers what it produced too, so different numbers never share an id.
        """
        produced = [json.dumps([self.values, self.stdout], sort_keys=True)] if self.untracked and not self.inputs else []
        return filestate.digest_parts([self.static_key, json.dumps([self.deps, self.inputs, self.packages], sort_keys=True),
                                       *produced])


def _runner_source() -> str:
    """The text of every module of the runner, in a fixed order: a change to any runs every explainer again."""
    return "".join(path.read_text() for path in sorted(_inputs.RUNNER_FILES))


def static_parts(code_text: str, declared: list[str] | None, limits: tuple[int, int], *,
                 tokens: bool = False, known: dict[str, str] | None = None) -> dict[str, str]:
    """What the key known before the run is made of, by part: the code as `code_key` reads it (a
    digest), the Python version, the runner's code (a digest), the seed, this cache's format, the
    declared inputs and the run's limits ``(timeout in s, memory in bytes)``. Kept in the entry
    by part so that a miss names the part that changed (`describe_static_change`). A run cached
    under other limits runs again: lowered, it might no longer pass, and `fairsite check` (which
    runs every explainer) would be the first to say so.

    Two parts are not in the key (`key_of_parts`; ``code`` holds both): ``code_text``, the
    digest of the code's text, and, with ``tokens``, ``code_tokens``, its tokens without their
    line numbers (a digest), which tells a change from lines that moved. Given the parts of the
    cached entry (``known``) whose ``code_text`` is this text's, the code is not tokenized
    again: every build looks every explainer up, and tokenizing them all was 0.1 s of a prose
    edit's 1.6 s (issue 26)."""
    text_digest = filestate.digest_parts([code_text])
    same_text = known is not None and known.get("code_text") == text_digest and "code" in known
    keyed = None if same_text else code_key(code_text)
    parts = {"code": known["code"] if keyed is None else filestate.digest_parts([keyed]), "python": sys.version,
             "runner": filestate.digest_parts([_runner_source()]), "seed": str(_runner.SEED), "format": str(FORMAT),
             "inputs": json.dumps(declared), "limits": json.dumps(list(limits)), "code_text": text_digest}
    if tokens:
        parts["code_tokens"] = filestate.digest_parts([_without_lines(code_key(code_text) if keyed is None else keyed)])
    return parts


_NOT_IN_KEY = ("code_text", "code_tokens")  # parts `code` holds


def key_of_parts(parts: dict[str, str]) -> str:
    """The part of a run's key known before it runs: one digest of its `static_parts` (but
    those in ``_NOT_IN_KEY``)."""
    return filestate.digest_parts(f"{name} {value}" for name, value in parts.items() if name not in _NOT_IN_KEY)


def describe_static_change(before: dict[str, str], now: dict[str, str]) -> str:
    """What changed between two `static_parts`, in words (``--explain``'s reason to re-run): each
    part that differs, in the order of `static_parts`."""
    said = []
    for name, value in now.items():
        old = before.get(name)
        if old == value:
            continue
        if name == "code":
            if "code_tokens" in now and before.get("code_tokens") == now["code_tokens"]:
                said.append("its code's lines moved (a comment or blank line added or removed): the lines its "
                            "output and tracebacks cite move with them")
            else:
                said.append("its code changed")
        elif name in _NOT_IN_KEY:
            continue  # said with "code"
        elif name == "python":
            said.append(f"Python {(old or '?').split()[0]} -> {value.split()[0]}")
        elif name == "runner":
            said.append("the runner's code (site_src/execution) changed")
        elif name == "inputs":
            said.append(f"its declared `inputs:` changed ({_shown_json(old)} -> {_shown_json(value)})")
        elif name == "limits":
            said.append(f"its limits changed ({_shown_limits(old)} -> {_shown_limits(value)})")
        else:
            said.append(f"the {name} changed ({old} -> {value})")
    return "; ".join(said) or "its key changed"


def _without_lines(keyed: str) -> str:
    """`code_key`'s text without the line each token starts on: equal when only lines moved."""
    try:
        return json.dumps([token[1:] for token in json.loads(keyed)], separators=(",", ":"))
    except (ValueError, TypeError, KeyError):  # code that does not tokenize is keyed by its text
        return keyed


def _shown_json(text: str | None) -> str:
    try:
        value = json.loads(text) if text is not None else None
    except ValueError:
        return "?"
    return "none" if value is None else ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def _shown_limits(text: str | None) -> str:
    try:
        timeout, memory = json.loads(text)
        return f"timeout {timeout} s, memory {memory / 2**20:g} MiB"
    except (TypeError, ValueError):
        return "?"


def code_key(code_text: str) -> str:
    """What of an explainer's code its run's key covers: every token, with the line it starts on.

    (A change to what it keeps must change ``FORMAT``: a lookup reuses the cached entry's digest
    of it for the same text, `static_parts`.)

    Python runs tokens, so an edit of a comment's words or of the spaces between tokens (not of
    the lines they sit on) runs the same program: the cached run stands and the page shows the
    edited code with the same output (issue 26). Line numbers stay in the key, so every line a
    traceback, a warning or a cell's position cites is still the code's. Kept as they are: ``# %%``
    cell markers (they split the output) and anything in a string. Indentation is kept as its
    structure (INDENT and DEDENT tokens), not its width. Code that does not tokenize is keyed by
    its text: the run reports the error.

    Parameters
    ----------
    code_text : str
        The generated code file's text.

    Returns
    -------
    str
        A canonical text of its tokens: equal for two codes that differ only in comments (not
        cell markers) or in spaces within lines.
    """
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code_text).readline))
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return code_text
    kept = []
    for tok in tokens:
        if tok.type == tokenize.NL or (tok.type == tokenize.COMMENT and not (
                tok.start[1] == 0 and _cells.CELL_MARKER.match(tok.string))):
            continue
        # INDENT's text is its width, NEWLINE's "\n" or "\r\n", DEDENT and ENDMARKER are empty.
        text = "" if tok.type in (tokenize.INDENT, tokenize.NEWLINE) else tok.string
        kept.append([tok.start[0], tok.type, text])
    return json.dumps(kept, separators=(",", ":"))


def declared_inputs(root: Path, patterns: list[str] | None) -> dict[str, dict[str, str | None]]:
    """Each declared pattern's matched files (relative to ``root``) and their digests.

    A plain path names a file, or a folder whose files all count; a glob (``*``, ``?``, ``[``,
    ``**``) is matched from ``root``. Files of the Python environment never count.
    """
    out: dict[str, dict[str, str | None]] = {}
    for pattern in patterns or ():
        if globlib.has_magic(pattern):
            matches = [Path(p) for p in globlib.glob(pattern, root_dir=root, recursive=True)]
        else:
            matches = [Path(pattern)]
        files: set[Path] = set()
        for rel in matches:
            full = root / rel
            if full.is_dir():
                files.update(p.relative_to(root) for p in full.rglob("*") if p.is_file())
            else:
                files.add(rel)
        out[pattern] = {str(rel): hash_file(root / rel) for rel in sorted(files)
                        if not _inputs.in_environment(root / rel)}
    return out


def lookup(entry_dir: Path, *, code_text: str, declared: list[str] | None, limits: tuple[int, int], root: Path
           ) -> tuple[CacheEntry | None, str]:
    """The cached entry if every input and artefact is unchanged, else None and the reason to re-run."""
    try:
        raw = (entry_dir / ENTRY).read_bytes()
    except FileNotFoundError:
        return None, "no cached run"
    except OSError as err:
        return None, f"cache entry unreadable ({err.strerror})"
    entry, problem = _parse(raw)
    if entry is None:
        return None, problem
    if entry.static_key != key_of_parts(static_parts(code_text, declared, limits, known=entry.static_parts)):
        return None, describe_static_change(entry.static_parts, static_parts(code_text, declared, limits, tokens=True))
    if entry.untracked and declared is None:
        more = f" (and {len(entry.untracked) - 1} more)" if len(entry.untracked) > 1 else ""
        # A file outside the repository cannot be declared (inputs are repository paths).
        fix = ("copy it into the repository and declare it under `inputs:` to cache it"
               if "outside the repository" in entry.untracked[0] else "declare it under `inputs:` to cache it")
        return None, f"it {entry.untracked[0]}{more}, which the cache cannot track; {fix}"
    for path, digest in entry.deps.items():
        if hash_file(root / path) != digest:
            return None, f"{path} changed" if digest else f"{path} appeared"
    now = declared_inputs(root, declared)
    for pattern, files in entry.inputs.items():
        if now.get(pattern, {}).keys() != files.keys():
            return None, f"declared input {pattern} now matches other files"
        for path, digest in files.items():
            if now[pattern][path] != digest:
                return None, f"declared input {path} changed"
    for dist, version in entry.packages.items():
        current = _installed_version(dist)
        if current != version:
            return None, f"package {dist} {version} -> {current}"
    for name, digest in entry.artefacts.items():
        found = hash_file(entry_dir / name)
        if found != digest:
            return None, f"cached {name} is {'missing' if found is None else 'not the one the run wrote'}"
    return entry, hit_reason(entry.untracked)


def new_entry(code_text: str, data: dict, work: Path, *, stdout: str, stderr: str, warnings: list[str], root: Path,
              declared: list[str] | None, limits: tuple[int, int], declared_before: dict[str, dict[str, str | None]],
              wall: float, previous: Path) -> CacheEntry:
    """The cache entry of a finished run: its key (the code, its declared inputs and limits:
    `static_parts`; what it read, the packages it imported), what it produced (``data``, the
    run's ``result.json``; its output and warnings) and the digests of its figures in ``work``.
    ``previous`` is the run's cache folder, whose last entry's lazy imports are kept if the code
    is the same (``CacheEntry.imported``)."""
    parts = static_parts(code_text, declared, limits, tokens=True)
    static_key = key_of_parts(parts)
    return CacheEntry(
        format=FORMAT,
        static_key=static_key,
        static_parts=parts,
        deps={p: filestate.hash_file(root / p) for p in data["modules"] + data["data_files"]},
        inputs=declared_before,
        untracked=data["untracked"],
        packages=imported_packages(data["top_level_modules"]),
        artefacts=artefact_digests(work, [f[kind] for f in data["figures"] for kind in ("svg", "narrow") if kind in f]),
        stdout=stdout,
        stderr=stderr,
        values=data["values"],
        unpassed=data.get("unpassed", {}),
        figures=[f["svg"] for f in data["figures"]],
        narrow={f["svg"]: f["narrow"] for f in data["figures"] if "narrow" in f},
        cells=[CellRecord(line=c["line"], streams=[StreamText(name=n, text=t) for n, t in c["streams"]],
                          warnings=[WarningRecord(**w) for w in c["warnings"]], figures=c["figures"])
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
        warnings=warnings,
        imported=sorted({*data.get("imported", []), *recorded_imports(previous, static_key=static_key)}),
    )


def hit_reason(untracked: list[str]) -> str:
    """What ``--explain`` says of a cache hit."""
    return "unchanged (its untracked reads are covered by its declared `inputs:`)" if untracked else "unchanged"


def last_run_seconds(entry_dir: Path) -> float:
    """How long the last recorded run took (wall time, seconds); infinity when none is recorded,
    so a run never seen is scheduled first."""
    try:
        return float(json.loads((entry_dir / ENTRY).read_bytes())["wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return float("inf")


def recorded_imports(entry_dir: Path, *, static_key: str | None = None) -> list[str]:
    """The modules the last recorded run imported beyond its fork server's (``CacheEntry.imported``);
    none when no entry is recorded or it cannot be read, and, with ``static_key``, when the entry
    was recorded under another (its code, declared inputs or limits changed)."""
    try:
        data = json.loads((entry_dir / ENTRY).read_bytes())
        imported = data.get("imported", [])
    except (OSError, ValueError, AttributeError):
        return []
    if static_key is not None and data.get("static_key") != static_key:
        return []
    return [m for m in imported if isinstance(m, str)] if isinstance(imported, list) else []


def _parse(raw: bytes) -> tuple[CacheEntry | None, str]:
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, "cache entry is not UTF-8 text"
    except ValueError as err:
        return None, f"cache entry is not valid JSON ({err})"
    if not isinstance(data, dict):
        return None, f"cache entry is a JSON {type(data).__name__}, not an object"
    if data.get("format") != FORMAT:
        return None, f"cache entry has format {data.get('format')!r}; this build writes format {FORMAT}"
    try:
        entry = CacheEntry.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return None, f"cache entry is malformed ({where}: {first['msg']})"
    # Every file the page will copy must be one whose digest is checked.
    unchecked = [n for svg in entry.figures
                 for n in (svg, *([entry.narrow[svg]] if svg in entry.narrow else []))
                 if n not in entry.artefacts or Path(n).name != n]
    if unchecked:
        return None, f"cache entry is malformed (figures: {unchecked[0]} has no recorded digest)"
    return entry, ""


def store(work: Path, final: Path, entry: CacheEntry) -> None:
    """Write ``entry`` into the finished run folder ``work`` and swap it in as ``final`` whole."""
    (work / ENTRY).write_text(entry.model_dump_json(indent=1), encoding="utf-8")
    # An interrupted run never leaves a half entry behind: the folder is renamed in at once.
    old = final.with_name(f".old-{final.name}-{os.getpid()}")
    if final.exists():
        final.rename(old)
    work.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def artefact_digests(folder: Path, names: list[str]) -> dict[str, str]:
    """sha256 of each named file in ``folder``, to check the cached copies on every later use."""
    return {name: hash_file(folder / name) for name in names}


def prune(cache_dir: Path, slugs: set[str]) -> None:
    """Remove the entries of explainers that no longer exist."""
    for child in cache_dir.iterdir():
        if child.is_dir() and child.name not in slugs:
            shutil.rmtree(child, ignore_errors=True)


@functools.lru_cache(maxsize=None)
def _installed_version(dist: str) -> str | None:
    # Every explainer imports much the same packages: look each version up once per process.
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def imported_packages(top_level_modules: list[str]) -> dict[str, str]:
    """The installed distributions that provide the top-level modules a run imported, with their
    versions (``{distribution: version}``, sorted): part of its cache key.

    The run reports only the names (`_inputs._top_level_modules`); the build reads which
    distribution provides each module once for all runs (`read_package_index`), where the runs
    forked before their server had read it each read it themselves (about a quarter of a second of
    CPU each, while every core was busy; issue 26).
    Modules no installed distribution provides (the standard library's, the project's own when
    not installed) have no entry.
    """
    providers = read_package_index()
    out = {}
    for name in top_level_modules:
        for dist in providers.get(name, ()):
            version = _installed_version(dist)
            if version is not None:
                out[dist] = version
    return dict(sorted(out.items()))


_INDEX_LOCK = threading.Lock()


def read_package_index() -> dict[str, list[str]]:
    """``importlib.metadata.packages_distributions()`` (top-level module -> the distributions that
    provide it), read once per process; the build starts it in a thread when it has runs to do, so
    the first run's result finds it read."""
    with _INDEX_LOCK:
        if not _PACKAGE_INDEX:
            _PACKAGE_INDEX.update(metadata.packages_distributions())
        return _PACKAGE_INDEX


_PACKAGE_INDEX: dict[str, list[str]] = {}


@functools.cache
def site_code_digest() -> str:
    """One digest of site_src's code and templates, and of the faircode modules its filters and
    checks call (how p-values are written, error hints, tolerances): a change to any renders
    every page and runs every check again."""
    import importlib.util

    here = Path(__file__).parent.parent  # site_src/
    files = {str(p.relative_to(here)): p for p in sorted(here.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}
    for m in ("faircode.formatting", "faircode.significance", "faircode.tolerances"):
        origin = Path(importlib.util.find_spec(m).origin)
        if origin.name == "__init__.py":  # a package (significance): every module of it
            files.update({f"{m}/{p.name}": p for p in sorted(origin.parent.glob("*.py"))})
        else:
            files[m] = origin
    return filestate.digest_parts(part for name, path in files.items() for part in (name, path.read_bytes()))


class PassedChecks:
    """The explainers whose checks all passed, each under the digest of everything the checks read.

    A prose edit changes one explainer; the others have the same source, run and accepted
    numbers as when their ``checks:``, bare-number lint and number comparison last passed, so
    ``build`` does not run those again (``check`` and ``accept`` always do). Only a pass is
    remembered, and only by a build that succeeded: a failure is found again every time. Kept in
    ``checks-passed.json`` in the cache folder.
    """

    FILE = "checks-passed.json"

    def __init__(self, cache_dir: Path, *, enabled: bool):
        self._path = Path(cache_dir) / self.FILE
        self._enabled = enabled
        self._passed: dict[str, str] = {}
        if enabled:
            try:
                data = json.loads(self._path.read_text())
                self._passed = {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}
            except (OSError, ValueError):
                pass

    @staticmethod
    def key(source_digest: str, entry: Path, accepted: Path) -> str:
        """The digest of an explainer's source (the digest of the bytes the build read and
        checked, `Explainer.digest`), its run's cache entry, its accepted numbers and the site's code."""
        return filestate.digest_parts([source_digest, hash_file(entry), hash_file(accepted), site_code_digest()])

    def holds(self, slug: str, key: str) -> bool:
        return self._enabled and self._passed.get(slug) == key

    def add(self, slug: str, key: str) -> None:
        self._passed[slug] = key

    def save(self) -> None:
        if self._enabled:
            tmp = self._path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._passed, indent=1, sort_keys=True))
            tmp.replace(self._path)

