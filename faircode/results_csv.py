"""Reading the benchmark's results files (``results/*.csv``) with the standard library, checked.

One reader for every consumer: ``faircode benchmark --check`` (`faircode.benchmark.compare`), its
partial-run merge, and the site build (``site_src/rendering/results.py``), which must not import
pandas or scikit-learn to look a row up. A file a person edited by hand can be malformed: a row
with too many or too few cells, a header that is not the one the benchmark writes, a row that
repeats another's key, bytes that are not UTF-8. Each is an error naming the file, the line and
what is wrong, never a traceback from the CSV parser or a row silently dropped or doubled.

NumPy-free on purpose (like `faircode.formatting`): the site imports it on every build.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from faircode.formatting import at

__all__ = ["RESULTS_KEYS", "ResultsFile", "ResultsFileError", "read_results_csv"]

#: The columns that name a row of each results file (one row per key). The same lists as
#: ``faircode.benchmark.columns`` (a test holds them equal); spelt out here because importing
#: ``faircode.benchmark`` imports scikit-learn, which the site build avoids.
RESULTS_KEYS: dict[str, tuple[str, ...]] = {
    "results_fairness.csv": ("audit", "strategy", "model", "attribute", "metric"),
    "results_performance.csv": ("audit", "strategy", "model"),
    "results_by_group.csv": ("audit", "strategy", "model", "attribute", "group", "metric"),
}


#: The columns of each results file that hold a number (or nothing) and those that hold True or
#: False (or nothing); the others hold text. A cell of another kind (a hand edit, a merge) is named
#: by file, line and column, where it would otherwise surface as a parser's "could not convert
#: string to float" or a false ``checks:`` entry (a fresh user's findings). Spelt out here as
#: `RESULTS_KEYS` is; a test holds them to the committed files as pandas reads them.
RESULTS_NUMBERS: dict[str, frozenset[str]] = {
    "results_fairness.csv": frozenset([
        "value_disadvantaged", "value_advantaged", "gap", "ci_low", "ci_high", "p_value", "q_value",
        "margin_low", "margin_high", "equivalence_p_value", "equivalence_q_value", "power_at_margin",
        "n_disadvantaged", "n_advantaged", "n_permutations", "random_state"]),
    "results_performance.csv": frozenset([
        "n_test", "n_positive", "n_dropped", "accuracy", "balanced_accuracy", "roc_auc"]),
    "results_by_group.csv": frozenset([
        "value", "ci_low", "ci_high", "n_outcome", "n_group", "min_size", "diff_vs_reference",
        "diff_vs_reference_ci_low", "diff_vs_reference_ci_high", "ratio_vs_reference", "p_value_vs_reference",
        "p_value_vs_reference_holm", "margin_low", "margin_high", "equivalence_p_value", "equivalence_p_value_holm",
        "power_at_margin", "max_gap", "min_max_ratio", "n_groups_compared",
        "p_value_max_gap", "q_value_max_gap", "p_value_omnibus", "q_value_omnibus", "n_permutations",
        "random_state"]),
}
RESULTS_BOOLEANS: dict[str, frozenset[str]] = {
    "results_fairness.csv": frozenset(["significant", "small_sample_warning"]),
    "results_performance.csv": frozenset(),
    "results_by_group.csv": frozenset(["small_cell"]),
}


class ResultsFileError(ValueError):
    """A results file that cannot be read as the benchmark writes it; the message names the
    file, the line (1 = the header) and what is wrong."""


@dataclass(frozen=True)
class ResultsFile:
    """A results file as text, each row with the line it is on.

    Attributes
    ----------
    path : Path
    columns : tuple of str
        The header.
    rows : tuple of dict of str to str
        Every row, cells as the file holds them (an empty cell is ``""``).
    lines : tuple of int
        ``lines[i]`` is the file line of ``rows[i]`` (the header is line 1).
    duplicates : tuple of (tuple of str, tuple of int)
        Each key held by more than one row, with the lines that hold it (empty unless the
        reader was asked to keep them: ``duplicates="keep"``).
    """

    path: Path
    columns: tuple[str, ...]
    rows: tuple[dict[str, str], ...]
    lines: tuple[int, ...]
    duplicates: tuple[tuple[tuple[str, ...], tuple[int, ...]], ...] = ()


def read_results_csv(path: str | Path, *, columns: Sequence[str] | None = None, key: Sequence[str] | None = None,
                     duplicates: str = "raise", label: str | None = None) -> ResultsFile:
    """Read one results file, checking its shape row by row.

    Parameters
    ----------
    path : str or Path
        A results file, e.g. ``results/results_fairness.csv``.
    columns : sequence of str, optional
        The header the file must have, in order (e.g. ``faircode.benchmark.FAIRNESS_COLUMNS``);
        when None, any header without an empty or repeated name.
    key : sequence of str, optional
        The columns that name a row; default `RESULTS_KEYS` for the file's name (no key check
        for another name).
    duplicates : {"raise", "keep"}, default "raise"
        A key held by two rows: an error (``"raise"``), or rows kept and the lines listed in
        ``ResultsFile.duplicates`` (``"keep"``, for ``--check``, which lists them with the rest).
    label : str, optional
        How messages name the file (``"results/results_fairness.csv"``, as the build names every
        file, from the repository root); default ``path`` as given.

    Returns
    -------
    ResultsFile

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ResultsFileError
        If the file is empty or not UTF-8, its header is not ``columns``, a row has more or fewer
        cells than the header, a key cell is empty, a cell of a column of numbers or of true/false
        holds something else (`RESULTS_NUMBERS`, `RESULTS_BOOLEANS`, by the file's name), or
        (``duplicates="raise"``) two rows share a key. The message names the file and the line (the first problem found; the header is
        line 1).
    """
    if duplicates not in ("raise", "keep"):
        raise ValueError(f"`duplicates` must be 'raise' or 'keep'; got {duplicates!r}")
    path = Path(path)
    shown = label if label is not None else path
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ResultsFileError(f"{at(shown, line)}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    # Lines split as the csv module splits them (newline=""): line_num counts physical lines, so a
    # row's first line is one past the count before it is read.
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # strict: an unclosed quote is an error
    try:
        header = next(reader)
    except StopIteration:
        raise ResultsFileError(f"{at(shown, 1)}: the file is empty; expected a header row") from None
    except csv.Error as exc:
        raise ResultsFileError(f"{at(shown, 1)}: not CSV ({exc})") from None
    _check_header(shown, header, columns)
    key = tuple(key) if key is not None else RESULTS_KEYS.get(path.name, ())
    missing_key = [k for k in key if k not in header]
    if missing_key:
        raise ResultsFileError(f"{at(shown, 1)}: the header lacks the key column(s) {missing_key}")
    numbers = [c for c in header if c in RESULTS_NUMBERS.get(path.name, ())]
    booleans = [c for c in header if c in RESULTS_BOOLEANS.get(path.name, ())]
    rows, lines, seen = [], [], {}
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise ResultsFileError(f"{at(shown, start)}: not CSV ({exc})") from None
        if not cells:  # a blank line (the writer never writes one; harmless)
            continue
        if len(cells) != len(header):
            raise ResultsFileError(
                f"{at(shown, start)}: {len(cells)} cells where the header has {len(header)} "
                f"({'more' if len(cells) > len(header) else 'fewer'} than the columns: a comma too many or "
                f"too few, or a row cut short); the row begins {','.join(cells[:4])[:80]!r}")
        row = dict(zip(header, cells))
        empty = [k for k in key if row[k] == ""]
        if empty:
            raise ResultsFileError(f"{at(shown, start)}: the key column(s) {empty} are empty; "
                                   f"every row is named by {list(key)}")
        _check_kinds(shown, start, row, numbers, booleans)
        ident = tuple(row[k] for k in key)
        if key and ident in seen and duplicates == "raise":
            raise ResultsFileError(f"{at(shown, start)}: the same row as line {seen[ident][0]} "
                                   f"({', '.join(f'{k}={v}' for k, v in zip(key, ident))}); each row may appear once")
        seen.setdefault(ident, []).append(start)
        rows.append(row)
        lines.append(start)
    repeated = tuple((ident, tuple(where)) for ident, where in seen.items() if key and len(where) > 1)
    return ResultsFile(path, tuple(header), tuple(rows), tuple(lines), repeated)


def _check_kinds(path: str | Path, line: int, row: dict[str, str], numbers: list[str], booleans: list[str]) -> None:
    """A `ResultsFileError` at the first cell of ``row`` that is not of its column's kind."""
    for column in numbers:
        cell = row[column]
        if cell:
            try:
                float(cell)
            except ValueError:
                raise ResultsFileError(f"{at(path, line)}: column '{column}' holds {cell!r}; expected a number "
                                       "(or nothing)") from None
    for column in booleans:
        if row[column] not in ("", "True", "False"):
            raise ResultsFileError(f"{at(path, line)}: column '{column}' holds {row[column]!r}; expected True or "
                                   "False (or nothing)")


def _check_header(path: str | Path, header: list[str], columns: Sequence[str] | None) -> None:
    if columns is not None and list(header) != list(columns):
        missing = [c for c in columns if c not in header]
        extra = [c for c in header if c not in columns]
        what = "; ".join(part for part in (f"missing {missing}" if missing else "",
                                            f"unknown {extra}" if extra else "") if part)
        raise ResultsFileError(f"{at(path, 1)}: the header is not the benchmark's columns "
                               f"({what or 'same columns, another order'}); see results/README.md")
    blank = [i + 1 for i, name in enumerate(header) if name == ""]
    if blank:
        raise ResultsFileError(f"{at(path, 1)}: column(s) {blank} of the header have no name")
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise ResultsFileError(f"{at(path, 1)}: the header repeats {repeated}")
