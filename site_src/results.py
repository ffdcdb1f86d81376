"""The benchmark's results table as the build sees it: one-row lookups for explainer prose."""

from __future__ import annotations

import difflib
import math
from pathlib import Path

import pandas as pd

from site_src.errors import CheckError


class ResultsTable:
    """``results/results_fairness.csv``, read once per build.

    ``lookup(**key)`` returns exactly one row as a dict (NaN as None) or raises ``CheckError``
    saying how many rows matched and which values the key column does hold.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.df = pd.read_csv(self.path) if self.path.exists() else None

    def lookup(self, **key) -> dict:
        if self.df is None:
            raise CheckError(f"result({_fmt(key)}): {self.path} does not exist; run `faircode benchmark`")
        unknown = [k for k in key if k not in self.df.columns]
        if unknown:
            hints = "; ".join(f"'{k}'{_hint(k, self.df.columns)}" for k in unknown)
            raise CheckError(f"result({_fmt(key)}): no such column in {self.path.name}: {hints}")
        rows = self.df
        for col, want in key.items():
            narrowed = rows[rows[col].astype(str) == str(want)]
            if narrowed.empty:
                held = sorted(rows[col].astype(str).unique())
                raise CheckError(
                    f"result({_fmt(key)}): no row with {col} = {want!r}{_hint(str(want), held)}; "
                    f"among the rows matching so far, {col} is one of {held[:12]}"
                )
            rows = narrowed
        if len(rows) != 1:
            raise CheckError(f"result({_fmt(key)}): {len(rows)} rows match; name more columns so that exactly one does")
        row = rows.iloc[0].to_dict()
        return ResultRow(key, {k: (None if isinstance(v, float) and math.isnan(v) else _plain(v)) for k, v in row.items()})


class ResultRow(dict):
    """One results row; a misspelt column is an error that names it, not an empty value."""

    def __init__(self, key: dict, values: dict):
        super().__init__(values)
        self.key = key

    def __missing__(self, column):
        raise CheckError(f"result({_fmt(self.key)}).{column}: no such column{_hint(str(column), self)}; "
                         f"the columns are {list(self)}")


def _plain(v):
    return v.item() if hasattr(v, "item") else v


def _fmt(key: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in key.items())


def _hint(word: str, options) -> str:
    close = difflib.get_close_matches(word, [str(o) for o in options], n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""
