"""Is this Python environment the locked one? The installed versions against the lock files.

The README, CI and readers install from ``requirements/site.txt`` (what ``fairsite build``
needs) or ``requirements/test.txt`` (that plus the test tools), both written by
``requirements/refresh`` (uv, with hashes). The committed numbers were accepted in that
environment, so ``fairsite check`` and ``faircode benchmark --check`` first say which installed
package differs from the lock, before any number is compared: a difference there explains a
difference in the numbers.

Every package of ``site.txt`` must be installed at its locked version. A package only in
``test.txt`` (pytest, playwright...) is compared only when it is installed, so an environment
installed from ``site.txt`` alone is not reported. Packages that are installed but in neither
file (pip, uv, a tool you added) are not reported: they cannot change a number the build
computes unless an explainer imports them, and then they belong in ``pyproject.toml``.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from faircode.formatting import at

__all__ = ["LOCK_FILES", "Mismatch", "read_lock", "installed_versions", "lock_mismatches", "describe_mismatches", "lock_warning",
           "print_lock_warning"]

#: The lock files, relative to the repository root: runtime first, then runtime + test tools.
LOCK_FILES = ("requirements/site.txt", "requirements/test.txt")


@dataclass(frozen=True)
class Mismatch:
    """One package whose installed version is not the locked one.

    Attributes
    ----------
    package : str
        Canonical (PEP 503) name, e.g. ``"scikit-learn"``.
    locked : str
        The version the lock pins.
    installed : str or None
        The installed version; None when the package is not installed.
    lock_file : str
        The lock file that pins it, relative to the repository root.
    """

    package: str
    locked: str
    installed: str | None
    lock_file: str


def read_lock(path: str | Path) -> dict[str, str]:
    """The exact pins of a lock file: ``{canonical name: version}``.

    Parameters
    ----------
    path : str or Path
        A requirements file of ``name==version`` lines (as ``uv pip compile`` and
        ``pip-compile`` write them), with optional ``\\``-continued ``--hash`` options,
        environment markers and ``#`` comments.

    Returns
    -------
    dict of str to str
        Only requirements whose marker holds in this interpreter.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If a requirement line cannot be parsed or is not pinned with ``==`` (the message names
        the file and line).
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    pins: dict[str, str] = {}
    for number, line in _logical_lines(text):
        if line.startswith("-"):  # -c, -r, --index-url ...: options, not pins
            continue
        spec = line.split(" --hash", 1)[0].strip()
        try:
            req = Requirement(spec)
        except InvalidRequirement as err:
            raise ValueError(f"{at(path, number)}: not a requirement ({err}): {spec!r}") from None
        pinned = [s.version for s in req.specifier if s.operator in ("==", "===")]
        if len(pinned) != 1 or len(req.specifier) != 1:
            raise ValueError(f"{at(path, number)}: {req.name} is not pinned to one version with '==': {spec!r}")
        if req.marker is None or req.marker.evaluate():
            pins[canonicalize_name(req.name)] = pinned[0]
    return pins


def _logical_lines(text: str):
    # Join backslash continuations; drop comments and blank lines. Yields (first line number, text).
    buffer, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0] if not raw.lstrip().startswith("#") else ""
        if not buffer:
            start = number
        if line.rstrip().endswith("\\"):
            buffer += line.rstrip()[:-1] + " "
            continue
        buffer += line
        if buffer.strip():
            yield start, buffer.strip()
        buffer = ""
    if buffer.strip():
        yield start, buffer.strip()


def installed_versions() -> dict[str, str]:
    """``{canonical name: version}`` of every distribution this interpreter can import."""
    versions: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:  # a broken install can leave metadata without a name
            versions.setdefault(canonicalize_name(name), dist.version)
    return versions


def _same(locked: str, installed: str) -> bool:
    try:
        return Version(locked) == Version(installed)  # "2.0" == "2.0.0", as pip compares them
    except InvalidVersion:
        return locked == installed


def lock_mismatches(root: str | Path, *, installed: Mapping[str, str] | None = None) -> list[Mismatch] | None:
    """The installed packages whose versions differ from the repository's lock files.

    Parameters
    ----------
    root : str or Path
        The repository root, holding ``requirements/site.txt`` and ``requirements/test.txt``.
    installed : mapping of str to str, optional
        ``{name: version}`` to compare instead of this interpreter's packages (for tests).

    Returns
    -------
    list of Mismatch or None
        Sorted by package; empty when the environment is the locked one; None when the
        repository has no lock file (e.g. a project that only uses ``faircode`` as a library).
        A package of ``site.txt`` that is missing is a mismatch (``installed=None``); a package
        only in ``test.txt`` is compared only when installed.

    Raises
    ------
    ValueError
        If a lock file is malformed (see `read_lock`), or the two lock files pin one package
        to different versions.
    """
    root = Path(root)
    have = {canonicalize_name(k): v for k, v in (installed_versions() if installed is None else installed).items()}
    locks = {name: read_lock(root / name) for name in LOCK_FILES if (root / name).is_file()}
    if not locks:
        return None
    expected: dict[str, tuple[str, str, bool]] = {}  # name -> (version, file, required)
    for file, pins in locks.items():
        required = file == LOCK_FILES[0]
        for name, version in pins.items():
            if name in expected and not _same(expected[name][0], version):
                raise ValueError(f"{LOCK_FILES[0]} pins {name}=={expected[name][0]} but {file} pins "
                                 f"{name}=={version}; run requirements/refresh")
            expected.setdefault(name, (version, file, required))
    mismatches = []
    for name, (version, file, required) in sorted(expected.items()):
        now = have.get(name)
        if now is None and not required:
            continue
        if now is None or not _same(version, now):
            mismatches.append(Mismatch(name, version, now, file))
    return mismatches


def describe_mismatches(mismatches: list[Mismatch]) -> str:
    """A plain-text table of `lock_mismatches` and what to do, for a terminal or CI log.

    Parameters
    ----------
    mismatches : list of Mismatch
        Non-empty, as `lock_mismatches` returns them.

    Returns
    -------
    str
        A headline, one line per package (package, locked, installed) and the command that
        installs the locked versions.
    """
    width = max([len("package"), *(len(m.package) for m in mismatches)])
    locked = max([len("locked"), *(len(m.locked) for m in mismatches)])
    lines = [f"{len(mismatches)} package(s) differ from the lock; numbers may differ from the "
             "accepted ones for that reason alone:",
             f"  {'package':<{width}}  {'locked':<{locked}}  installed",
             *(f"  {m.package:<{width}}  {m.locked:<{locked}}  {m.installed or '(not installed)'}"
               for m in mismatches),
             "install the locked versions: .venv/bin/pip install --require-hashes -r requirements/test.txt "
             "(or site.txt), or refresh the lock on purpose (requirements/README.md)"]
    return "\n".join(lines)


def print_lock_warning(root: str | Path, console) -> None:
    """Print `lock_warning` as a yellow warning on a rich ``console``; nothing when it is None.

    What the ``faircode`` and ``fairsite`` commands do first: a package that differs from the
    lock is the likeliest cause of a number that moved.
    """
    warning = lock_warning(root)
    if warning:
        console.print("[yellow]warning:[/yellow] ", end="")
        console.print(warning, markup=False)


def lock_warning(root: str | Path) -> str | None:
    """What ``check`` commands print first: the packages that differ from the lock, or None.

    Parameters
    ----------
    root : str or Path
        The repository root.

    Returns
    -------
    str or None
        `describe_mismatches`'s table; a line saying the lock cannot be read if it is
        malformed (the check itself goes on); None when the environment is the locked one or
        the repository has no lock file.
    """
    try:
        mismatches = lock_mismatches(root)
    except ValueError as err:
        return f"cannot compare the environment with the lock: {err}"
    return describe_mismatches(mismatches) if mismatches else None
