"""Reading a ``report.yaml``: :func:`load_report_manifest` and :func:`count_categories`.

The manifest is validated against its schema (:mod:`faircode.report._schema`), then its data
(:mod:`faircode.report._checks`): the file and its sha256, the columns, and, counting the data
once (:func:`faircode.report._counts.count_rows`), every label, decision and score. Every
problem is reported at once in one :class:`~faircode.manifest.ManifestError`, each at the line of
its field, worded as an ``audit.yaml``'s are (the machinery of :mod:`faircode.manifest._load`).
The counts made while checking are kept with the manifest, so the report's tables
(:func:`count_categories`) need no second pass over the data.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from faircode.manifest import ManifestError
from faircode.manifest._load import _dedupe, _display, _find_root, _format_pydantic, _read_yaml, _text, located
from faircode.report._checks import column_problems, data_problems, fill_ins, sections, value_problems
from faircode.report._counts import CategoryCounts, count_rows
from faircode.report._data import first_rows, resolve_data
from faircode.report._schema import ReportManifest


def load_report_manifest(path: str | Path, *, root: str | Path | None = None, data: str | Path | None = None,
                         check_values: bool = True, engine: str = "auto") -> ReportManifest:
    """Read and validate a ``report.yaml``, and its data.

    Parameters
    ----------
    path : str or pathlib.Path
        The manifest (``reports/<slug>/report.yaml``).
    root : str or pathlib.Path, optional
        Folder that a relative ``data.file`` starts from. Default: the nearest folder above the
        manifest holding ``pyproject.toml``, else :func:`faircode.data.project_root`.
    data : str or pathlib.Path, optional
        Read this data file (or folder) instead of ``data.file``: its sha256 must still be the
        declared one.
    check_values : bool, default True
        Count the data and check every label, decision and score (one pass over the data, kept
        for :func:`count_categories`). False checks the file, its digest and its columns only.
    engine : {"auto", "pandas", "dask"}, default "auto"
        What counts the data (:func:`count_categories`).

    Returns
    -------
    ReportManifest
        With ``path``, ``root`` and ``text`` set.

    Raises
    ------
    ManifestError
        One error listing every problem, each ``"<file>:<line>: <field path>: <what is wrong>"``
        with the fix: YAML syntax, unknown keys (with the allowed keys close to them), missing or
        mistyped fields, a value still reading ``FILL IN`` (the scaffold's placeholders: "fill
        this in" and what), a data file that does not exist or whose sha256 is not the declared
        one (both digests), a column not in the data (with "did you mean"), a column given two
        roles, a label in the data neither mapped nor unknown, a decision not declared, a
        missing score (each with its rows and the first line it is on).
    FileNotFoundError
        ``path`` does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"report manifest {str(path)!r} does not exist")
    root_path = Path(root).resolve() if root is not None else _find_root(path)
    label = _display(path, root_path)
    return _load(_text(path, label), label, path, root_path, data=Path(data) if data is not None else None,
                 check_sha256=True, check_values=check_values, engine=engine)


def _load(text: str, label: str, path: Path | None, root: Path, *, data: Path | None, check_sha256: bool,
          check_values: bool, engine: str) -> ReportManifest:
    """The loader's steps, from the manifest's text (a file's, or the one a record holds)."""
    raw = _read_yaml(path, label, text=text)
    filled = fill_ins(raw)
    problems: list[str] = []
    manifest = None
    try:
        manifest = ReportManifest.model_validate(raw)
    except ValidationError as exc:
        problems += _schema_problems(exc, label, text, filled)
    found = [f"{_field(loc)}: fill this in: {what}" for loc, what in filled.items()]
    readable, data_found = _data_section_problems(raw, root, data, check_sha256)
    # The values are checked whenever the columns are there, even when a date or a digest is not
    # yet right: a new manifest's author sees every unmapped label at once.
    to_fill = any(loc[0] in ("outcome", "categories") or loc[:2] in (("data", "file"), ("data", "parse"))
                  for loc in filled)
    counts, more = _counted(raw, root, data, engine) if check_values and readable and not to_fill else (None, [])
    problems += located(path, label, found + data_found + more, text=text)
    if problems:
        raise ManifestError(_dedupe(problems))
    assert manifest is not None
    manifest._path = path.resolve() if path is not None else root / "report.yaml"
    manifest._root, manifest._text, manifest._data_path, manifest._counts = root, text, data, counts
    return manifest


def _schema_problems(exc: ValidationError, label: str, text: str, filled: dict[tuple, str]) -> list[str]:
    """pydantic's problems, worded as an ``audit.yaml``'s, except at a value still to fill in
    (its one problem is "fill this in")."""
    errors = exc.errors()
    worded = _format_pydantic(exc, label=label, text=text, model=ReportManifest)
    if len(worded) != len(errors):  # one line per error, in order: else keep them all
        return worded
    return [line for err, line in zip(errors, worded)
            if not any(tuple(err["loc"][:len(loc)]) == loc for loc in filled)]


def _data_section_problems(raw: dict, root: Path, data: Path | None, check_sha256: bool) -> tuple[bool, list[str]]:
    """The data's and the columns' problems, and whether every column the manifest names can be read."""
    problems, columns = data_problems(raw, root, data, check_sha256=check_sha256)
    if columns is None:
        return False, problems
    named = column_problems(raw, columns, _data_name(raw, data), fill_ins(raw))
    return not named, problems + named


def _counted(raw: dict, root: Path, data: Path | None, engine: str) -> tuple[CategoryCounts | None, list[str]]:
    """The data counted and its values checked, when the sections that say how are sound."""
    outcome, categories = sections(raw)
    if outcome is None or categories is None:
        return None, []
    spec = raw["data"]
    path, parse = resolve_data(spec["file"], root, data), _parse(spec)
    try:
        counts = count_rows(path, parse, outcome, categories, engine=engine)
    except ValueError as exc:  # a score column holding text
        column = outcome.column
        return None, [f"outcome.{'score' if outcome.score else 'decision'}.column: cannot read {column!r} of "
                      f"{_data_name(raw, data)} as the manifest says: {exc}"]
    where = lambda column, texts: first_rows(path, parse, column, texts)  # noqa: E731
    return counts, value_problems(counts, outcome, categories, _data_name(raw, data), where)


def _parse(spec: dict):
    from faircode.manifest import ParseOptions

    return ParseOptions.model_validate(spec["parse"]) if spec.get("parse") is not None else None


def _data_name(raw: dict, data: Path | None) -> str:
    return str(data) if data is not None else str(raw["data"]["file"])


def _field(loc: tuple) -> str:
    """``("categories", "extra", 0, "column")`` as ``"categories.extra[0].column"``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def count_categories(manifest: ReportManifest, *, engine: str = "auto") -> CategoryCounts:
    """Rows of the manifest's data by every combination of labels and outcome, in one pass.

    Parameters
    ----------
    manifest : ReportManifest
        As :func:`load_report_manifest` returns it.
    engine : {"auto", "pandas", "dask"}, default "auto"
        pandas (a file, read into memory: only the columns the report needs, labels as
        categoricals) or Dask DataFrame (a folder of Parquet files larger than memory, or on
        request; a ``distributed.Client`` in use runs it on its cluster). ``"auto"``: Dask for a
        folder, pandas for a file. Both give the same integers.

    Returns
    -------
    CategoryCounts
        The counts :func:`load_report_manifest` made as it checked the values, when it did with
        this ``engine``; else counted now.

    Raises
    ------
    ManifestError
        A label, decision or score the manifest does not declare (the data changed since the
        manifest was loaded with ``check_values=False``).

    Notes
    -----
    A score's "above the median" is strictly above the exact median of the whole sample
    (:mod:`faircode.report._counts` says how Dask finds it exactly).
    """
    cached = manifest._counts
    if isinstance(cached, CategoryCounts) and engine in ("auto", cached.engine):
        return cached
    path, parse = manifest.data_path(), manifest.data.parse
    counts = count_rows(path, parse, manifest.outcome, manifest.categories, engine=engine)
    problems = value_problems(counts, manifest.outcome, manifest.categories, manifest.data.file,
                              lambda column, texts: first_rows(path, parse, column, texts))
    if problems:
        label = _display(manifest.path, manifest.root)
        raise ManifestError(located(manifest.path, label, problems, text=manifest.text or None))
    return counts
