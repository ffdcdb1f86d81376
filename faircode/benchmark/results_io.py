"""The results files: written byte-for-byte reproducibly, and a partial run merged into them."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pandas as pd

from faircode.benchmark.columns import (
    _FLOAT_FORMAT,
    BY_GROUP_COLUMNS,
    BY_GROUP_FILE,
    FAIRNESS_COLUMNS,
    FAIRNESS_FILE,
    PERFORMANCE_COLUMNS,
    PERFORMANCE_FILE,
    PERFORMANCE_KEY,
)
from faircode.benchmark.tables import _add_q_values, _sorted_by_group, _sorted_fairness, _sorted_performance
from faircode.results_csv import read_results_csv


def _csv_text(df: pd.DataFrame) -> str:
    return df.to_csv(index=False, float_format=_FLOAT_FORMAT, lineterminator="\n")


def write_results(fairness: pd.DataFrame, performance: pd.DataFrame, output_dir="results", *,
                  by_group: pd.DataFrame | None = None) -> tuple[Path, ...]:
    """Write the results files, byte-for-byte reproducibly.

    Parameters
    ----------
    fairness, performance : DataFrame
        As returned by `run_benchmark`.
    output_dir : str or Path, default "results"
        Created if missing.
    by_group : DataFrame, optional
        The by-group table (``run_benchmark(return_by_group=True)``), written to
        ``results_by_group.csv`` when given.

    Returns
    -------
    tuple of Path
        Paths of ``results_fairness.csv`` and ``results_performance.csv`` (and
        ``results_by_group.csv`` when written).

    Raises
    ------
    OSError
        If a file cannot be written (e.g. the disk is full): the message names the file and
        says why; every results file is then left as it was (all are written beside the old ones
        first, then renamed into place).

    Notes
    -----
    Fixed column order, rows as sorted by `run_benchmark`, floats as ``%.10g``, ``\\n`` line
    ends, empty cells for NaN/NA.
    """
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    texts = {out / FAIRNESS_FILE: _csv_text(fairness[FAIRNESS_COLUMNS]),
             out / PERFORMANCE_FILE: _csv_text(performance[PERFORMANCE_COLUMNS])}
    if by_group is not None:
        texts[out / BY_GROUP_FILE] = _csv_text(by_group[BY_GROUP_COLUMNS])
    _write_all(texts)
    return tuple(texts)


def _write_all(texts: dict[Path, str]) -> None:
    """Write every file whole, or leave them all as they were: each goes to a sibling file first,
    and only when all are written are they renamed into place, so a full disk or an interrupted
    run never leaves a results file cut short or the files out of step. An OSError names the file."""
    written: list[Path] = []
    try:
        for path, text in texts.items():
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            written.append(tmp)
            try:
                tmp.write_text(text, encoding="utf-8")
            except OSError as exc:
                why = ("the disk is full (no space left on the device); free some space and run again"
                       if exc.errno == errno.ENOSPC else exc.strerror or str(exc))
                raise OSError(exc.errno, f"cannot write {path}: {why}; the results files are as they were") from None
        for path, tmp in zip(texts, written):
            os.replace(tmp, path)
    finally:
        for tmp in written:
            tmp.unlink(missing_ok=True)


def merge_results(fairness: pd.DataFrame, performance: pd.DataFrame,
                  output_dir="results") -> tuple[pd.DataFrame, pd.DataFrame]:
    """A partial run merged into the committed tables.

    The run's (audit, strategy, model) tasks replace the committed rows of the same tasks; every
    other committed row stays; q-values are recomputed within each audit of the merged table
    (BH depends on every p-value of the audit). Without committed files, the run is returned as it is.

    Parameters
    ----------
    fairness, performance : DataFrame
        A (partial) run, as returned by `run_benchmark`.
    output_dir : str or Path, default "results"
        Where the committed files are.

    Returns
    -------
    (DataFrame, DataFrame)
        The merged fairness and performance tables, ready for `write_results`.

    Raises
    ------
    faircode.results_csv.ResultsFileError
        If a committed file is malformed or repeats a row (the message names file and line).
    """
    out = Path(output_dir)
    paths = (out / FAIRNESS_FILE, out / PERFORMANCE_FILE)
    if not all(p.exists() for p in paths):
        return fairness, performance
    task = ["audit", "strategy", "model"]

    def replace(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
        ran = pd.MultiIndex.from_frame(new[task].astype(str))
        keep = ~pd.MultiIndex.from_frame(old[task].astype(str)).isin(ran)
        return pd.concat([old[keep], new], ignore_index=True)

    for path in paths:  # a malformed or repeated row is named by file and line, not merged
        read_results_csv(path)
    merged = replace(pd.read_csv(paths[0]), fairness)
    fairness = _add_q_values(_sorted_fairness(merged.to_dict("records")))
    performance = _sorted_performance(replace(pd.read_csv(paths[1]), performance))
    return fairness, performance


def _read_as_text(text_or_path) -> pd.DataFrame:
    return pd.read_csv(text_or_path, dtype=str, keep_default_na=False)


def merge_by_group(by_group: pd.DataFrame, output_dir="results") -> pd.DataFrame:
    """A partial run's by-group rows merged into the committed ``results_by_group.csv``.

    The run's (audit, strategy, model) tasks replace the committed rows of the same tasks;
    every other committed row stays. Without a committed file, the run is returned as it is.

    Parameters
    ----------
    by_group : DataFrame
        A (partial) run, as returned by ``run_benchmark(return_by_group=True)``.
    output_dir : str or Path, default "results"
        Where the committed file is.

    Returns
    -------
    DataFrame
        The merged table, ready for ``write_results(..., by_group=...)``.

    Raises
    ------
    faircode.results_csv.ResultsFileError
        If the committed file is malformed or repeats a row (the message names file and line).
    """
    path = Path(output_dir) / BY_GROUP_FILE
    if not path.exists():
        return by_group
    read_results_csv(path)  # a malformed or repeated row is named by file and line, not merged
    old = pd.read_csv(path, keep_default_na=False, na_values=[""])
    ran = pd.MultiIndex.from_frame(by_group[PERFORMANCE_KEY].astype(str))
    keep = ~pd.MultiIndex.from_frame(old[PERFORMANCE_KEY].astype(str)).isin(ran)
    return _sorted_by_group(pd.concat([old[keep], by_group], ignore_index=True).to_dict("records"))
