"""The checks of a report manifest past its schema: the data file, its columns, its values.

Each returns problems as ``"<field path>: <what is wrong and the fix>"``, which
:func:`faircode.report.load_report_manifest` places at the field's line
(:func:`faircode.manifest._load.located`):

- :func:`data_problems`: the data file or folder exists, its sha256 is the declared one (both
  digests named), and its columns can be read with the ``parse`` options;
- :func:`column_problems`: every column the manifest names is in the data (with a "did you
  mean"), and no column plays two roles;
- :func:`value_problems`: from the counts, every label in a category column is mapped or declared
  unknown, every decision is declared, every person has a score; each problem names the column,
  the label, how many rows hold it and the first line (or Parquet row) it is on.

Each section is validated on its own (`faircode.manifest._checks._try`), so that a problem in one
(a date not yet filled in) does not hide the data's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from faircode.formatting import did_you_mean
from faircode.manifest import ParseOptions
from faircode.manifest._checks import _try
from faircode.report._counts import CategoryCounts
from faircode.report._data import data_columns, data_kind, data_sha256, resolve_data
from faircode.report._schema import CategoriesSpec, CategorySpec, OutcomeSpec

#: What a manifest's author writes where the scaffold could not know the answer.
FILL_IN = "FILL IN"


class _DataLocation(BaseModel):
    """The fields of ``data:`` that locate and read it (the rest is checked by the schema)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    file: str = Field(min_length=1)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    parse: ParseOptions | None = None


def fill_ins(raw, loc: tuple = ()) -> dict[tuple, str]:
    """Every value still reading ``FILL IN: ...`` (the scaffold's placeholders), by location."""
    if isinstance(raw, str) and raw.startswith(FILL_IN):
        return {loc: raw[len(FILL_IN):].lstrip(" :") or "this field"}
    items = raw.items() if isinstance(raw, dict) else enumerate(raw) if isinstance(raw, list) else ()
    out: dict[tuple, str] = {}
    for key, value in items:
        out.update(fill_ins(value, (*loc, key)))
    return out


def data_problems(raw: dict, root: Path, data: Path | None, *, check_sha256: bool) -> tuple[list[str], list[str] | None]:
    """The data's problems and, when it can be read, its columns.

    ``data``: a file to read instead of ``data.file`` (a record verified against another copy).
    """
    spec = _try(_DataLocation, raw.get("data"))
    if spec is None:
        return [], None  # the schema names what is wrong with `data:`
    path = resolve_data(spec.file, root, data)
    if not path.exists():
        return [f"data.file: {spec.file!r} does not exist (looked in {path.parent})"], None
    problems = []
    if check_sha256:
        actual = data_sha256(path)
        if actual != spec.sha256:
            problems.append(f"data.sha256: expected {spec.sha256} but {spec.file} has {actual} (the data changed, "
                            f"or the manifest is stale); if this is the data to audit, write sha256: {actual}")
    if spec.parse is not None and data_kind(path) != "csv":
        problems.append("data.parse: parse options apply to a CSV file only; a Parquet file carries its own schema: "
                        "remove `parse`")
        return problems, None
    try:
        return problems, data_columns(path, spec.parse)
    except (ValueError, OSError, UnicodeDecodeError) as exc:  # pandas' ParserError is a ValueError
        return [*problems, f"data.parse: cannot read {spec.file} with these options: {exc}"], None


def column_problems(raw: dict, columns: list[str], data_name: str, filled: dict[tuple, str]) -> list[str]:
    """Each column the outcome and the categories name is in the data, and plays one role."""
    named: list[tuple[str, str]] = []  # (field path, column)
    outcome = raw.get("outcome") if isinstance(raw.get("outcome"), dict) else {}
    for kind in ("decision", "score"):
        if isinstance(outcome.get(kind), dict):
            named.append((f"outcome.{kind}.column", outcome[kind].get("column")))
    categories = raw.get("categories") if isinstance(raw.get("categories"), dict) else {}
    for key in ("sex", "race_ethnicity"):
        if isinstance(categories.get(key), dict):
            named.append((f"categories.{key}.column", categories[key].get("column")))
    extra = categories.get("extra") if isinstance(categories.get("extra"), list) else []
    for i, item in enumerate(extra):
        if isinstance(item, dict):
            named.append((f"categories.extra[{i}].column", item.get("column")))
    problems, seen = [], {}
    for field, column in named:
        if not isinstance(column, str) or tuple(_loc(field)) in filled:
            continue  # the schema, or the fill-in, names it
        if column not in columns:
            problems.append(f"{field}: {column!r} is not a column of {data_name}{did_you_mean(column, columns)}")
        elif column in seen:
            problems.append(f"{field}: {column!r} is already {seen[column]}'s column; each column plays one role")
        seen.setdefault(column, field.rsplit(".", 1)[0])
    return problems


def _loc(field: str) -> list:
    """``"categories.extra[0].column"`` as ``["categories", "extra", 0, "column"]``."""
    out: list = []
    for part in field.split("."):
        name, _, index = part.partition("[")
        out.append(name)
        if index:
            out.append(int(index.rstrip("]")))
    return out


def sections(raw: dict) -> tuple[OutcomeSpec | None, CategoriesSpec | None]:
    """The outcome and categories sections, each when it is sound on its own."""
    return _try(OutcomeSpec, raw.get("outcome")), _try(CategoriesSpec, raw.get("categories"))


def value_problems(counts: CategoryCounts, outcome: OutcomeSpec, categories: CategoriesSpec, data_name: str,
                   where: Callable[[str, set[str]], dict[str, str]]) -> list[str]:
    """Labels, decisions and scores in the data that the manifest does not declare.

    ``where(column, texts)``: where each text first occurs in the column (``{text: "line 12"}``).
    """
    problems = []
    specs = categories.specs()
    fields = {"sex": "categories.sex", "race_ethnicity": "categories.race_ethnicity",
              **{e.name: f"categories.extra[{i}]" for i, e in enumerate(categories.extra)}}
    for dimension, spec in specs.items():
        problems += _label_problems(counts.labels(dimension), spec, fields[dimension], data_name, where)
    outcomes = counts.outcomes()
    if outcome.decision is not None:
        problems += _decision_problems(outcomes, outcome, data_name, where)
    elif outcomes.get("", 0):
        column = outcome.score.column
        found = where(column, {""})
        problems.append(f"outcome.score.column: {_rows(outcomes[''])} of {data_name} have no score in {column!r}"
                        f"{_first(found, '')}; the scoring rate compares each person with the whole sample's median, "
                        f"so every row needs a score: fill them in or remove those rows from the data")
    if counts.n_rows == 0:
        problems.append(f"data.file: {data_name} has no rows")
    return problems


def _label_problems(labels: dict[str, int], spec: CategorySpec, field: str, data_name: str, where) -> list[str]:
    mapping, unknown = spec.mapping, spec.unknown_texts
    stray = {text: n for text, n in labels.items() if text not in mapping and text not in unknown}
    problems = []
    if labels and not stray and all(text in unknown for text in labels):
        problems.append(f"{field}.labels: every row's label in {spec.column!r} is declared unknown, so the table "
                        f"would have no category; map the labels to the categories the report names")
    if not stray:
        return problems
    found = where(spec.column, set(stray))
    quoted = " (YAML reads yes, no, on, off, true and false unquoted as true/false: quote such labels)" if any(
        isinstance(v, bool) for v in [*spec.labels, *spec.unknown]) else ""
    for text, n in sorted(stray.items(), key=lambda item: -item[1]):
        if text == "":
            problems.append(f"{field}.unknown: {_rows(n)} of {data_name} have no value in {spec.column!r}"
                            f"{_first(found, text)}; a missing value never joins a category: add \"\" to "
                            f"{field}.unknown")
            continue
        guess = did_you_mean(text, mapping)
        problems.append(f"{field}.labels: the label {text!r} of column {spec.column!r} ({_rows(n)} of {data_name}"
                        f"{_first(found, text, ', ')}) is neither mapped nor unknown{guess}; add it to {field}.labels "
                        f"(`{text}: <category>`) or to {field}.unknown{quoted}")
    return problems


def _decision_problems(outcomes: dict[str, int], outcome: OutcomeSpec, data_name: str, where) -> list[str]:
    decision = outcome.decision
    stray = {text: n for text, n in outcomes.items() if text not in decision.declared_texts}
    found = where(decision.column, set(stray)) if stray else {}
    problems = []
    for text, n in sorted(stray.items(), key=lambda item: -item[1]):
        what = "no decision" if text == "" else f"the value {text!r}"
        written = '""' if text == "" else text
        problems.append(f"outcome.decision: {what} in column {decision.column!r} ({_rows(n)} of {data_name}"
                        f"{_first(found, text, ', ')}) is not declared{did_you_mean(text, decision.declared_texts)}; "
                        f"add {written} to outcome.decision.favourable or outcome.decision.other")
    return problems


def _rows(n: int) -> str:
    return f"{n:,} row{'s' if n != 1 else ''}"


def _first(found: dict[str, str], text: str, lead: str = "") -> str:
    if text not in found:
        return ""
    return f"{lead}first on {found[text]}" if lead else f" (first on {found[text]})"

