"""A report's data on disk: a CSV file, a Parquet file or a folder of Parquet files.

:func:`data_sha256` (a file's digest, :func:`faircode.data.sha256_of`; a folder's, of its sorted
``"name sha256"`` lines), :func:`data_columns` (the column names, without reading the rows),
:func:`read_columns` (the columns a report needs, as pandas reads them: categories as
categorical, a score as numbers) and :func:`read_columns_dask` (the same as a Dask DataFrame),
and :func:`first_rows` (where a label first occurs, for an error message). CSV files are read
with the manifest's parse options (:class:`faircode.manifest.ParseOptions`) through the reader
of :mod:`faircode.data`; Parquet through pyarrow (pandas' and Dask's own readers).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from faircode.data import _read_csv_kwargs, as_memory_error, read_header, sha256_of
from faircode.manifest import ParseOptions
from faircode.report._schema import label_text

if TYPE_CHECKING:
    import pandas as pd

_PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
#: Rows a CSV file is scanned in when a label's first row is looked for (an error's message).
_SCAN_ROWS = 1_000_000


def resolve_data(file: str, root: Path, data: Path | None = None) -> Path:
    """The data a manifest names: ``data`` when given (a copy to read instead), else ``file``,
    absolute or from ``root``."""
    if data is not None:
        return data
    return Path(file) if Path(file).is_absolute() else root / file


def data_kind(path: Path) -> str:
    """``"parquet_folder"`` (a folder), ``"parquet"`` (a ``.parquet`` file) or ``"csv"`` (any
    other file: delimited text, read with the manifest's ``parse`` options)."""
    if path.is_dir():
        return "parquet_folder"
    return "parquet" if path.suffix.lower() in _PARQUET_SUFFIXES else "csv"


def parquet_files(folder: Path) -> list[Path]:
    """The Parquet files of a folder and its subfolders, sorted by their path in it (as Dask and
    pyarrow read a dataset; files whose name starts with ``_`` or ``.`` are metadata, left out)."""
    files = [p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in _PARQUET_SUFFIXES
             and not any(part.startswith(("_", ".")) for part in p.relative_to(folder).parts)]
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def data_sha256(path: str | Path) -> str:
    """The digest a report manifest's ``data.sha256`` declares.

    Parameters
    ----------
    path : str or pathlib.Path
        A data file, or a folder of Parquet files.

    Returns
    -------
    str
        A file's SHA-256 (:func:`faircode.data.sha256_of`); a folder's: the SHA-256 of the UTF-8
        text of one line ``"<name> <sha256>\\n"`` per Parquet file (:func:`parquet_files`),
        ``name`` its path in the folder with ``/`` separators, in sorted order. So a file added,
        removed, renamed or changed changes it, and the folder's own path does not.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{str(path)!r} does not exist")
    if not path.is_dir():
        return sha256_of(path)
    lines = "".join(f"{p.relative_to(path).as_posix()} {sha256_of(p)}\n" for p in parquet_files(path))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def data_columns(path: Path, parse: ParseOptions | None) -> list[str]:
    """The data's column names, as :func:`read_columns` names them (a CSV file's header or
    ``parse.names``; a Parquet file's schema; a folder's first file's schema).

    Raises
    ------
    ValueError
        A folder with no Parquet file; ``parse`` given for Parquet data; pandas' and pyarrow's
        errors of an unreadable file pass through.
    """
    kind = data_kind(path)
    if kind == "csv":
        return read_header(path, parse or ParseOptions())
    if parse is not None:
        raise ValueError("`parse` options apply to a CSV file only; a Parquet file carries its own schema")
    files = parquet_files(path) if kind == "parquet_folder" else [path]
    if not files:
        raise ValueError(f"the folder {path} holds no Parquet file (*.parquet)")
    import pyarrow.parquet as pq

    return list(pq.read_schema(files[0]).names)


def read_columns(path: Path, parse: ParseOptions | None, *, labels: list[str], scores: list[str] = ()) -> pd.DataFrame:
    """The columns a report needs, in memory: ``labels`` as categorical, ``scores`` as float64.

    A CSV file's label columns are read as text straight into categories (pandas parses each
    field once and keeps one copy of each label), so ``1`` in the file is the label ``"1"``;
    missing values are those of ``parse.na_values`` (an empty field by default). Only the named
    columns are parsed (``usecols``). Parquet's are read by pyarrow, labels dictionary-encoded
    (``read_dictionary``: categoricals too; a score keeps its stored type).

    Raises
    ------
    ValueError
        A score column holding text that is not a number (pandas' message).
    MemoryError
        The reader ran out of memory (:func:`faircode.data.as_memory_error`).
    """
    import pandas as pd

    columns = list(dict.fromkeys([*labels, *scores]))
    if data_kind(path) != "csv":
        import pyarrow.parquet as pq

        # Labels dictionary-encoded as they are read: pandas gets categoricals, not one string each.
        return pq.read_table(path, columns=columns, read_dictionary=list(labels)).to_pandas()
    dtypes = {**{c: "category" for c in labels}, **{c: "float64" for c in scores}}
    with as_memory_error():
        return pd.read_csv(path, usecols=columns, dtype=dtypes, **_read_csv_kwargs(parse or ParseOptions()))


def read_columns_dask(path: Path, parse: ParseOptions | None, *, labels: list[str], scores: list[str] = ()):
    """:func:`read_columns` as a Dask DataFrame: one partition per Parquet file (or row group),
    or per 64 MB block of a CSV file; labels are text (each partition makes its own codes)."""
    import dask.dataframe as dd

    columns = list(dict.fromkeys([*labels, *scores]))
    if data_kind(path) != "csv":
        return dd.read_parquet(str(path), columns=columns)
    dtypes = {**{c: "string" for c in labels}, **{c: "float64" for c in scores}}
    kwargs = _read_csv_kwargs(parse or ParseOptions())
    return dd.read_csv(str(path), usecols=columns, dtype=dtypes, blocksize="64MB", **kwargs)


def first_rows(path: Path, parse: ParseOptions | None, column: str, texts: set[str]) -> dict[str, str]:
    """Where each of ``texts`` first occurs in ``column``, in words for a message.

    Parameters
    ----------
    path : pathlib.Path
        The data file or folder.
    parse : ParseOptions or None
    column : str
    texts : set of str
        Labels as text (:func:`faircode.report._schema.label_text`; ``""`` for a missing value).

    Returns
    -------
    dict
        ``{text: "line 12"}`` for a CSV file (the file's line, counting the header and
        ``skiprows``: exact for a file with one line per row and no comment lines), ``{text:
        "row 5 of part-1.parquet"}`` for Parquet (rows counted from 1). A text not found is left
        out.
    """
    if data_kind(path) == "csv":
        return _first_csv_lines(path, parse or ParseOptions(), column, texts)
    import pyarrow.parquet as pq

    found: dict[str, str] = {}
    files = parquet_files(path) if path.is_dir() else [path]
    for file in files:
        values = pq.read_table(file, columns=[column]).column(0).to_pandas()
        _first_in(values, texts - set(found), lambda i, f=file: f"row {i + 1} of {f.name}", found)
        if len(found) == len(texts):
            break
    return found


def _first_csv_lines(path: Path, parse: ParseOptions, column: str, texts: set[str]) -> dict[str, str]:
    import pandas as pd

    found: dict[str, str] = {}
    first_line = parse.skiprows + (1 if parse.header else 0) + 1
    start = 0
    with as_memory_error(), pd.read_csv(path, usecols=[column], dtype=str, chunksize=_SCAN_ROWS,
                                        **_read_csv_kwargs(parse)) as chunks:
        for chunk in chunks:
            _first_in(chunk[column], texts - set(found), lambda i, s=start: f"line {first_line + s + i}", found)
            if len(found) == len(texts):
                break
            start += len(chunk)
    return found


def _first_in(values, texts: set[str], where, found: dict[str, str]) -> None:
    """Record in ``found`` where (``where(index)``) each of ``texts`` first occurs in ``values``
    (a pandas Series; text columns compared as they are, others through `label_text`)."""
    import numpy as np

    if values.dtype.kind in "OSU" or str(values.dtype) in ("str", "string"):
        as_text = values.fillna("").to_numpy(dtype=object)
    else:
        as_text = values.map(label_text).to_numpy(dtype=object)
    for i in np.flatnonzero(np.isin(as_text, sorted(texts))):
        found.setdefault(as_text[i], where(int(i)))
        if texts <= found.keys():
            return
