"""The benchmark's results table as the build sees it: one-row lookups for explainer prose, and
how the results page reads a cell (a code value as words, an empty cell, a true flag).
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

from faircode.formatting import did_you_mean  # NumPy-free
from faircode.results_csv import ResultsFileError, read_results_csv  # NumPy-free
from site_src.errors import CheckError


class ResultsTable:
    """``results/results_fairness.csv``, read once per build, and only when something needs it.

    ``lookup(**key)`` returns exactly one row (empty cells as None, numbers and booleans typed)
    or raises ``CheckError`` saying how many rows matched and which values the key column holds.
    Read with the standard library: most builds only look rows up, and pandas is slow to import.
    """

    def __init__(self, path: Path):
        self.path = Path(path)

    @property
    def exists(self) -> bool:
        return self.path.exists()

    @functools.cached_property
    def rows(self) -> list[dict]:
        return [{k: _typed(v) for k, v in row.items()} for row in read_checked(self.path).rows]

    @functools.cached_property
    def df(self):
        """The table as a DataFrame (for the results page)."""
        import pandas as pd

        read_checked(self.path)  # a malformed or repeated row: an error naming file and line
        return pd.read_csv(self.path)

    def lookup(self, **key) -> dict:
        if not self.exists:
            raise CheckError(f"result({_fmt(key)}): {self.path} does not exist; run `faircode benchmark`")
        columns = list(self.rows[0]) if self.rows else []
        unknown = [k for k in key if k not in columns]
        if unknown:
            hints = "; ".join(f"'{k}'{did_you_mean(k, columns)}" for k in unknown)
            raise CheckError(f"result({_fmt(key)}): no such column in {self.path.name}: {hints}")
        rows = self.rows
        for col, want in key.items():
            narrowed = [r for r in rows if _text(r[col]) == _text(want)]
            if not narrowed:
                held = sorted({_text(r[col]) for r in rows})
                raise CheckError(
                    f"result({_fmt(key)}): no row with {col} = {want!r}{did_you_mean(_text(want), held)}; "
                    f"among the rows matching so far, {col} is one of {held[:12]}"
                )
            rows = narrowed
        if len(rows) != 1:
            raise CheckError(f"result({_fmt(key)}): {len(rows)} rows match; name more columns so that exactly one does")
        return ResultRow(key, rows[0])


def read_checked(path: Path):
    """A results file read by `faircode.results_csv.read_results_csv`: a row with too many or too
    few cells, a repeated row or bytes that are not UTF-8 raise ``CheckError`` naming the file and
    the line, so the build reports it instead of a parser's traceback (or a doubled row)."""
    try:
        # Named from the repository root (results/<file>), as the build names every file.
        return read_results_csv(path, label=f"{Path(path).parent.name}/{Path(path).name}")
    except ResultsFileError as exc:
        raise CheckError(f"{exc}; fix the file or re-run `faircode benchmark`") from None


def _typed(text: str):
    """A CSV cell as the value it writes: empty -> None, True/False, int, float, or the text."""
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        return None if isinstance(value, float) and math.isnan(value) else value
    return text


def _text(value) -> str:
    return "" if value is None else str(value)


class ResultRow(dict):
    """One results row; a misspelt column is an error that names it, not an empty value."""

    def __init__(self, key: dict, values: dict):
        super().__init__(values)
        self.key = key

    def __missing__(self, column):
        raise CheckError(f"result({_fmt(self.key)}).{column}: no such column{did_you_mean(column, self)}; "
                         f"the columns are {list(self)}")


def _fmt(key: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in key.items())



# --------------------------------------------------------------- reading a cell of the results files

def label(value) -> str:
    """A code value as a reader reads it: ``logistic_regression`` -> ``logistic regression``."""
    return str(value).replace("_", " ")


def is_missing(value) -> bool:
    """An empty cell as pandas reads it: None, NaN or ``pd.NA``."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType"


def is_true(value) -> bool:
    """A boolean cell (``True``, ``"True"``, ``"true"``); anything else, empty included, is false."""
    return str(value).strip().lower() == "true"


def require_columns(df, columns) -> None:
    """Raise ValueError naming the columns of ``columns`` that ``df`` lacks."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"results table: missing column(s) {missing}; see results/README.md for the columns")
