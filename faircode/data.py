"""The project's files on disk: where they are, reading a data file, and a file's SHA-256.

:func:`project_root` finds the folder holding ``audits/`` (and the ``data/`` the manifests name);
:func:`read_header` and :func:`read_data` read a delimited data file with a manifest's
``dataset.parse`` options; :func:`sha256_of` is the one file fingerprint of ``faircode`` (the
manifests' ``sha256`` fields). The reader asks only for the fields it reads (:class:`ReadOptions`);
the schema that validates them in a manifest, ``ParseOptions``, is :mod:`faircode.manifest`'s,
which imports this module and not the other way round.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd  # imported where a file is read: the site's build reads manifests without it

__all__ = ["ROOT_ENV", "ReadOptions", "as_memory_error", "enclosing_project", "project_root", "read_data", "read_header",
           "sha256_of"]

#: The environment variable naming the project folder (the one holding ``audits/``), for a
#: ``faircode`` installed apart from it (``pip install .``, a wheel, a container).
ROOT_ENV = "FAIRCODE_ROOT"


def project_root(root: str | Path | None = None) -> Path:
    """The project folder: the one holding ``audits/`` and the data files the manifests name.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The project folder, when the caller knows it.

    Returns
    -------
    pathlib.Path
        Absolute path of the first of these that holds an ``audits/`` folder:

        1. ``root``, when given;
        2. the environment variable ``FAIRCODE_ROOT``, when set (e.g.
           ``FAIRCODE_ROOT=/path/to/fair-code``);
        3. the folder holding the ``faircode`` package: a clone with an editable install
           (``pip install -e .``, what the README installs) or run from the source tree;
        4. the current folder or the nearest folder above it: a clone used with a regular
           (non-editable) install, as readers run explainer code from the clone's root.

    Raises
    ------
    FileNotFoundError
        ``root`` or ``FAIRCODE_ROOT`` names a folder without ``audits/``, or neither is given
        and no folder of 3 or 4 holds one. The message names both ways to say where it is.

    Example
    -------
    >>> project_root() / "audits"  # doctest: +SKIP
    PosixPath('/home/me/fair-code/audits')
    """
    for given, source in ((root, "`root`"), (os.environ.get(ROOT_ENV) or None, ROOT_ENV)):
        if given is not None:
            folder = Path(given).expanduser().resolve()
            if not (folder / "audits").is_dir():
                raise FileNotFoundError(f"{source} is {str(given)!r}, which has no audits/ folder; "
                                        "it must name the project folder holding audits/ and data/")
            return folder
    beside_package = Path(__file__).resolve().parent.parent
    cwd = Path.cwd().resolve()
    found = beside_package if (beside_package / "audits").is_dir() else enclosing_project(cwd)
    if found is not None:
        return found
    raise FileNotFoundError(
        f"cannot find the project folder holding audits/: it is not beside the faircode package "
        f"({beside_package}) nor in the current folder ({cwd}) or above it. Say where it is: pass "
        f"`root` (e.g. load_audit(name, root='/path/to/fair-code')) or set the environment variable "
        f"{ROOT_ENV}=/path/to/fair-code (a clone of the repository, holding audits/ and data/)"
    )


def enclosing_project(folder: str | Path) -> Path | None:
    """The nearest of ``folder`` and the folders above it that holds ``audits/`` (a project folder),
    or None: the project a command started in ``folder`` is in, whichever one `project_root` reads."""
    folder = Path(folder).resolve()
    return next((f for f in (folder, *folder.parents) if (f / "audits").is_dir()), None)


class ReadOptions(Protocol):
    """What :func:`read_header` and :func:`read_data` read of their ``parse`` argument.

    ``faircode.manifest.ParseOptions`` (a manifest's validated ``dataset.parse``) has these
    fields; any object with them will do.
    """

    sep: str
    header: bool
    names: list[str] | None
    na_values: list[str]
    skipinitialspace: bool
    comment: str | None
    skiprows: int


def read_header(path: Path, parse: ReadOptions) -> list[str]:
    """Column names of a data file as :func:`read_data` will name them.

    For a headerless file this checks that ``names`` has one entry per field.

    Raises
    ------
    ValueError
        A headerless file whose first row has a different number of fields than ``names``;
        pandas' errors (``pandas.errors.ParserError``, ``UnicodeDecodeError``) pass through.
    MemoryError
        The reader ran out of memory (pandas' ``C error: out of memory`` too: :func:`as_memory_error`).
    """
    import pandas as pd

    with as_memory_error():
        df = pd.read_csv(path, nrows=1, **_read_csv_kwargs(parse))
    if parse.names is not None:
        # With names given, pandas pads short rows and folds extra fields into the index, so count
        # the fields of the first data row ourselves.
        with as_memory_error():
            first = pd.read_csv(path, nrows=1, header=None, **_read_csv_kwargs(parse, names=False))
        if first.shape[1] != len(parse.names):
            raise ValueError(f"`names` has {len(parse.names)} entries but rows have "
                             f"{first.shape[1]} fields")
    return [str(c) for c in df.columns]


def read_data(path: Path, parse: ReadOptions) -> pd.DataFrame:
    """Read the whole data file with the manifest's parse options.

    Raises
    ------
    MemoryError
        The reader ran out of memory (pandas' ``C error: out of memory`` too: :func:`as_memory_error`);
        pandas' other errors pass through.
    """
    import pandas as pd

    with as_memory_error():
        return pd.read_csv(path, **_read_csv_kwargs(parse))


@contextlib.contextmanager
def as_memory_error() -> Iterator[None]:
    """Raise pandas' report of a failed allocation as the MemoryError it is.

    pandas' C reader says it ran out of memory with a ``ParserError`` (``Error tokenizing data. C
    error: out of memory``), a ValueError, which callers that name a malformed file take for one:
    an explainer past its ``memory:`` limit was told its manifest's ``dataset.parse`` could not
    read the file (issue 47). Wrap each pandas read of a data file in it; a MemoryError raised
    as such passes as it is.
    """
    try:
        yield
    except ValueError as exc:
        from pandas.errors import ParserError  # pandas is loaded: the wrapped code read with it

        if isinstance(exc, ParserError) and "out of memory" in str(exc).lower():
            raise MemoryError(f"pandas ran out of memory reading the data: {exc}") from exc
        raise


def _read_csv_kwargs(parse: ReadOptions, *, names: bool = True) -> dict[str, Any]:
    kw: dict[str, Any] = dict(
        sep=parse.sep,
        na_values=parse.na_values,
        keep_default_na=False,
        skipinitialspace=parse.skipinitialspace,
        comment=parse.comment,
        skiprows=parse.skiprows,
        # Multi-character separators would switch pandas to its python engine with a warning.
        engine="c",
    )
    if names:
        kw["header"] = 0 if parse.header else None
        if parse.names is not None:
            kw["names"] = parse.names
    elif parse.header:
        kw["skiprows"] = parse.skiprows + 1
    return kw


def sha256_of(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (64 lowercase hex digits), read in blocks."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
