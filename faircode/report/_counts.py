"""Counting a report's data in one pass: rows by every combination of labels and outcome.

:func:`count_rows` reads only the columns a report needs and counts the rows of each
combination of the category columns' labels and the outcome (a decision's value, or whether a
score is above the whole sample's median): with pandas for a file (the columns in memory as
categoricals, one ``numpy.bincount`` over their combined codes), with Dask DataFrame for a folder
of Parquet files or on request (the same count on each partition, the partitions' tables summed
in a tree), so both give the same integers. Every table of the report is a sum over these counts
(:mod:`faircode.report._tables`).

The median of a score is exact with both engines: pandas' selects the two middle order
statistics with ``numpy.partition``; Dask, which has no exact median (its ``median_approximate``
is approximate), finds them by a radix selection over partitions (:func:`_dask_middle`): each
score becomes a 64-bit key that sorts as the numbers do, and four passes over the data count the
keys by successive 16-bit digits, each pass fixing one digit of the two middle ranks' keys, so
the result is the exact order statistic whatever the data's size or ties. The median of an even
number of scores is the mean of the two middle ones, as in NumPy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import numpy as np

from faircode.data import as_memory_error
from faircode.report._data import data_kind, read_columns, read_columns_dask
from faircode.manifest import ParseOptions
from faircode.report._schema import CategoriesSpec, OutcomeSpec, label_text

#: A score's outcome, as the counts name it (a missing score is ``""``, as a missing label).
ABOVE, NOT_ABOVE = "above the median", "at or below the median"
ENGINES = ("auto", "pandas", "dask")
# Cells of the combined codes counted with one bincount; more (many extra tables with many
# labels) are counted by sorting the combined keys instead.
_BINCOUNT_MAX = 1 << 24
_DIGIT_BITS = 16
_SIGN = np.uint64(1 << 63)


@dataclass(frozen=True)
class CategoryCounts:
    """Rows of a report's data by every combination of labels and outcome.

    Attributes
    ----------
    dimensions : tuple of str
        The category columns counted, by dimension: ``"sex"``, ``"race_ethnicity"``, then each
        extra table's name.
    counts : Mapping[tuple of str, int]
        Rows for each ``(label of each dimension..., outcome)`` that occurs, labels and outcome
        as text (``""`` for a missing value). The outcome is a decision's value, or
        :data:`ABOVE` / :data:`NOT_ABOVE` for a score.
    n_rows : int
        Rows in the data.
    median : float or None
        The score's median over the rows with a score (None for decisions).
    engine : str
        ``"pandas"`` or ``"dask"``: what counted.
    """

    dimensions: tuple[str, ...]
    counts: Mapping[tuple[str, ...], int]
    n_rows: int
    median: float | None
    engine: str

    def labels(self, dimension: str) -> dict[str, int]:
        """Rows by each label of one dimension (``""``: missing)."""
        return self._totals(self.dimensions.index(dimension))

    def outcomes(self) -> dict[str, int]:
        """Rows by each outcome value."""
        return self._totals(len(self.dimensions))

    def _totals(self, position: int) -> dict[str, int]:
        out: dict[str, int] = {}
        for key, n in self.counts.items():
            out[key[position]] = out.get(key[position], 0) + n
        return out


def count_rows(path: Path, parse: ParseOptions | None, outcome: OutcomeSpec, categories: CategoriesSpec, *,
               engine: str = "auto") -> CategoryCounts:
    """Count a report's data: rows by labels and outcome, in one pass (a score: see below).

    Parameters
    ----------
    path : pathlib.Path
        The data file, or folder of Parquet files.
    parse : ParseOptions or None
        A CSV file's parse options.
    outcome : OutcomeSpec
        The decision or score column.
    categories : CategoriesSpec
        The category columns.
    engine : {"auto", "pandas", "dask"}, default "auto"
        ``"auto"``: Dask for a folder of Parquet files, pandas for a file.

    Returns
    -------
    CategoryCounts

    Notes
    -----
    A score takes the median first: pandas reads the columns once and computes it in memory;
    Dask passes over the score column four times for the exact median, then counts. Labels and
    outcomes that the manifest does not declare are counted like any other: the checks that
    name them are :func:`faircode.report._checks.value_problems`.
    """
    if engine not in ENGINES:
        raise ValueError(f"`engine` must be one of {', '.join(map(repr, ENGINES))}; got {engine!r}")
    if engine == "auto":
        engine = "dask" if data_kind(path) == "parquet_folder" else "pandas"
    specs = categories.specs()
    label_columns = [spec.column for spec in specs.values()]
    decision, score = outcome.decision, outcome.score
    read = dict(labels=label_columns + ([decision.column] if decision else []), scores=[score.column] if score else [])
    if engine == "pandas":
        frame = read_columns(path, parse, **read)
        median = _median(frame[score.column].to_numpy(dtype=np.float64)) if score else None
        counts = _count_frame(frame, label_columns, outcome.column, median)
        n_rows = len(frame)
    else:
        with as_memory_error():  # Dask's blocks are read with pandas as they are computed
            parts = read_columns_dask(path, parse, **read).to_delayed()
            median = _dask_middle(parts, score.column) if score else None
            counts = _tree_sum([_delayed(_count_frame)(p, label_columns, outcome.column, median) for p in parts],
                               _add_counts)
        n_rows = sum(counts.values())
    return CategoryCounts(dimensions=tuple(specs), counts=MappingProxyType(counts), n_rows=n_rows,
                          median=median, engine=engine)


def _count_frame(frame, label_columns: list[str], outcome_column: str, median: float | None) -> dict[tuple, int]:
    """Rows of one frame by ``(labels..., outcome)``, as text; with ``median``, the outcome is
    whether the score (``outcome_column``) is strictly above it."""
    codes, names = [], []
    for column in label_columns:
        column_codes, texts = _codes(frame[column])
        codes.append(column_codes)
        names.append(texts)
    if median is None:
        column_codes, texts = _codes(frame[outcome_column])
    else:
        score = frame[outcome_column].to_numpy(dtype=np.float64)
        column_codes = np.where(np.isnan(score), 0, np.where(score > median, 2, 1))
        texts = ["", NOT_ABOVE, ABOVE]
    codes.append(column_codes)
    names.append(texts)
    return _tally(codes, names)


def _codes(series) -> tuple[np.ndarray, list[str]]:
    """``series`` as codes from 0 (0: missing) and the text of each code."""
    import pandas as pd

    if isinstance(series.dtype, pd.CategoricalDtype):
        codes, uniques = series.cat.codes.to_numpy(), series.cat.categories
    else:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    return codes.astype(np.int64) + 1, ["", *(label_text(u) for u in uniques)]


def _tally(codes: list[np.ndarray], names: list[list[str]]) -> dict[tuple, int]:
    """Rows by each combination of codes, keyed by their texts (two values with one text, such
    as ``1`` and ``1.0``, add up)."""
    sizes = [len(n) for n in names]
    if not codes[0].size:
        return {}
    if math.prod(sizes) <= _BINCOUNT_MAX:
        tally = np.bincount(np.ravel_multi_index(codes, sizes), minlength=math.prod(sizes))
        keys = np.flatnonzero(tally)
        rows = tally[keys]
    else:
        keys, rows = np.unique(np.ravel_multi_index(codes, sizes), return_counts=True)
    out: dict[tuple, int] = {}
    for cell, n in zip(zip(*np.unravel_index(keys, sizes)), rows.tolist()):
        key = tuple(names[d][c] for d, c in enumerate(cell))
        out[key] = out.get(key, 0) + n
    return out


def _add_counts(*tables: dict[tuple, int]) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for table in tables:
        for key, n in table.items():
            out[key] = out.get(key, 0) + n
    return out


def _median(score: np.ndarray) -> float:
    """The exact median of the scores that are not missing (NaN if none): the middle order
    statistic, or the mean of the two middle ones."""
    values = score[~np.isnan(score)]
    if not values.size:
        return math.nan
    low, high = _middle_ranks(values.size)
    middle = np.partition(values, [low, high])
    return _midpoint(float(middle[low]), float(middle[high]))


def _middle_ranks(n: int) -> tuple[int, int]:
    """0-based ranks of the middle order statistics of ``n`` values (equal when ``n`` is odd)."""
    return (n - 1) // 2, n // 2


def _midpoint(low: float, high: float) -> float:
    return low if low == high else (low + high) / 2


# ---------------------------------------------------------------------------------------------
# Dask: a tree sum over partitions, and the exact median by radix selection
# ---------------------------------------------------------------------------------------------


def _delayed(function: Callable) -> Callable:
    import dask

    return dask.delayed(function, pure=True)


def _tree_sum(items: list, add: Callable, *, split_every: int = 16):
    """The sum (``add``) of delayed partition results, added ``split_every`` at a time in a tree
    (as Dask's own reductions: no one task holds every partition's result), computed."""
    if not items:
        return add()
    while len(items) > 1:
        items = [_delayed(add)(*items[i:i + split_every]) for i in range(0, len(items), split_every)]
    return items[0].compute()


def _float_keys(values: np.ndarray) -> np.ndarray:
    """64-bit unsigned keys that sort as the float64 ``values`` do (no NaN): the sign bit set on
    positive numbers, every bit flipped on negative ones."""
    bits = np.ascontiguousarray(values, dtype=np.float64).view(np.uint64)
    return np.where(bits & _SIGN, ~bits, bits | _SIGN)


def _key_float(key: int) -> float:
    """The float64 whose key (:func:`_float_keys`) is ``key``."""
    bits = key & ~(1 << 63) if key >> 63 else ~key & ((1 << 64) - 1)
    return float(np.array([bits], dtype=np.uint64).view(np.float64)[0])


def _digit_counts(frame, column: str, level: int, prefixes: tuple[int, ...]) -> np.ndarray:
    """For each key prefix (the digits above ``level`` already fixed), the scores of ``frame``
    counted by the key's digit at ``level``: shape (len(prefixes), 2**16). Level 0 counts every
    score (its prefixes are ``(0,)``)."""
    score = frame[column].to_numpy(dtype=np.float64)
    keys = _float_keys(score[~np.isnan(score)])
    shift = np.uint64(64 - _DIGIT_BITS * (level + 1))
    digits = ((keys >> shift) & np.uint64((1 << _DIGIT_BITS) - 1)).astype(np.int64)
    out = np.zeros((len(prefixes), 1 << _DIGIT_BITS), dtype=np.int64)
    for i, prefix in enumerate(prefixes):
        chosen = digits if level == 0 else digits[(keys >> (shift + np.uint64(_DIGIT_BITS))) == np.uint64(prefix)]
        out[i] = np.bincount(chosen, minlength=1 << _DIGIT_BITS)
    return out


def _add_arrays(*arrays: np.ndarray) -> np.ndarray:
    return np.sum(arrays, axis=0) if arrays else np.zeros(0, dtype=np.int64)


def _dask_middle(parts: list, column: str) -> float:
    """The exact median of a score column over Dask partitions (radix selection, 4 passes)."""
    histogram = _tree_sum([_delayed(_digit_counts)(p, column, 0, (0,)) for p in parts], _add_arrays)[0]
    n = int(histogram.sum())
    if n == 0:
        return math.nan
    ranks = _middle_ranks(n)
    state = {rank: (0, rank) for rank in ranks}  # rank -> (key prefix so far, rank within it)
    for level in range(64 // _DIGIT_BITS):
        prefixes = tuple(sorted({prefix for prefix, _ in state.values()}))
        if level:
            tables = _tree_sum([_delayed(_digit_counts)(p, column, level, prefixes) for p in parts], _add_arrays)
        else:
            tables = histogram[None, :]
        for rank, (prefix, within) in state.items():
            cumulative = np.cumsum(tables[prefixes.index(prefix)])
            digit = int(np.searchsorted(cumulative, within, side="right"))
            state[rank] = ((prefix << _DIGIT_BITS) | digit, within - (int(cumulative[digit - 1]) if digit else 0))
    low, high = (_key_float(state[rank][0]) for rank in ranks)
    return _midpoint(low, high)

