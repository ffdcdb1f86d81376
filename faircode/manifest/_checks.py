"""The checks of a manifest across its fields and against its data file.

What one field's type cannot say: the columns a manifest names exist in the data file (its
header, read with :func:`faircode.data.read_header`) or are derived before they are used, the
target and the protected and feature columns do not overlap, group labels are distinct (also
when joined into an intersection's cells), and the data file and its decode map have the
declared sha256 (:func:`faircode.data.sha256_of`). Each section is validated on its own
(:func:`_try`, :func:`_try_items`), so that one bad item does not hide the others' problems.
Called by :func:`faircode.manifest.load_manifest`.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from faircode.data import read_header, sha256_of
from faircode.formatting import did_you_mean, INTERSECTION_SEPARATOR
from faircode.manifest._schema import (
    DatasetSpec,
    DecodeSpec,
    DerivedColumn,
    ExcludedColumn,
    GroupAttribute,
    Intersection,
    MODEL_NAMES,
    ProtectedAttribute,
    Proxy,
    RowFilter,
    STRATEGY_NAMES,
    TargetSpec,
)


def _semantic_problems(raw: dict, root: Path) -> list[str]:
    """Checks that need more than one field or the data file; run on every sound section.

    In the order a manifest's author meets them: the data file, the model and strategy names,
    then each column a field names (in the file, or derived before it is used) and the role it
    plays (target, protected, excluded, proxy, core feature, group attribute).
    """
    problems: list[str] = []
    dataset = _try(DatasetSpec, raw.get("dataset"))
    header = _check_dataset(dataset, root, problems) if dataset is not None else None
    problems.extend(_name_problems(raw))
    if header is None:
        return problems  # column checks need the header; dataset problems already listed
    columns = _Columns(list(header), Path(dataset.file).name, problems)
    _check_derived_and_filters(raw, columns)
    target_col = _check_roles(raw, columns)
    _check_group_columns(raw, columns, target_col)
    return problems


@dataclass
class _Columns:
    """The columns a field may name: the data file's, then each derived column once declared.

    ``need`` records a problem (with a did-you-mean) for a name that is not one of them.
    """

    available: list[str]
    data_name: str
    problems: list[str]

    def need(self, col: str, field: str) -> bool:
        if col in self.available:
            return True
        self.problems.append(f"{field}: {col!r} is not a column of {self.data_name}"
                             f"{did_you_mean(col, self.available)}")
        return False


def _name_problems(raw: dict) -> list[str]:
    """Unknown or repeated names in ``models`` and ``strategies``."""
    problems = []
    for field, names, valid in (("models", raw.get("models"), MODEL_NAMES),
                                ("strategies", raw.get("strategies"), STRATEGY_NAMES)):
        for i, n in enumerate(names if isinstance(names, list) else []):
            if isinstance(n, str) and n not in valid:
                problems.append(f"{field}[{i}]: unknown name {n!r}{did_you_mean(n, valid)}; "
                                f"valid names: {', '.join(valid)}")
            if isinstance(n, str) and names.count(n) > 1 and names.index(n) == i:
                problems.append(f"{field}[{i}]: {n!r} is listed more than once")
    return problems


def _check_derived_and_filters(raw: dict, columns: _Columns) -> None:
    """Each derived column comes from a known column and is new; each filter names a column."""
    valid = _try_items(DerivedColumn, raw.get("derived"))
    for i, item in enumerate(raw.get("derived") if isinstance(raw.get("derived"), list) else []):
        d = valid.get(i)
        if d is None:
            # Its own error is listed already (a wrong `op:`...); its name still declares the
            # column, so a field that names it is not a second, follow-on error.
            name = item.get("name") if isinstance(item, dict) else None
            if isinstance(name, str) and name and name not in columns.available:
                columns.available.append(name)
            continue
        columns.need(d.from_, f"derived[{i}].from")
        if d.name in columns.available:
            columns.problems.append(f"derived[{i}].name: {d.name!r} already exists; pick a new column name")
        else:
            columns.available.append(d.name)
    for i, f in _try_items(RowFilter, raw.get("filters")).items():
        columns.need(f.column, f"filters[{i}].column")


def _check_roles(raw: dict, columns: _Columns) -> str | None:
    """Target, protected, excluded, proxy and core columns exist and play one role each.

    Returns the target column (None when the target section is not sound).
    """
    problems = columns.problems
    target = _try(TargetSpec, raw.get("target"))
    if target is not None:
        columns.need(target.column, "target.column")
    target_col = target.column if target is not None else None

    # Role sets come from the raw items too, so an item with an unrelated structural problem
    # still takes part in the cross-field checks.
    protected_cols = _raw_columns(raw.get("protected"), "column")
    excluded = _raw_columns(raw.get("exclude"), "column")
    proxy_cols = _raw_columns(raw.get("proxies"), "column")
    seen_names: set[str] = set()
    for i, p in _try_items(ProtectedAttribute, raw.get("protected")).items():
        columns.need(p.column, f"protected[{i}].column")
        if p.name in seen_names:
            problems.append(f"protected[{i}].name: {p.name!r} is used by another protected attribute")
        seen_names.add(p.name)
        if p.column == target_col:
            problems.append(f"protected[{i}].column: {p.column!r} is the target column")

    for i, e in _try_items(ExcludedColumn, raw.get("exclude")).items():
        if columns.need(e.column, f"exclude[{i}].column") and e.column == target_col:
            problems.append(f"exclude[{i}].column: the target {e.column!r} is never a feature; "
                            "do not list it")
    for i, x in _try_items(Proxy, raw.get("proxies")).items():
        if columns.need(x.column, f"proxies[{i}].column"):
            for other, why in ((protected_cols, "a protected column"), (excluded, "excluded"),
                               ({target_col}, "the target")):
                if x.column in other:
                    problems.append(f"proxies[{i}].column: {x.column!r} is {why}, not a proxy")
    for i, c in enumerate(_try(list[str], raw.get("core_features")) or []):
        if columns.need(c, f"core_features[{i}]"):
            for other, why in ((protected_cols, "a protected column"), (proxy_cols, "a declared proxy"),
                               (excluded, "excluded"), ({target_col}, "the target")):
                if c in other:
                    problems.append(f"core_features[{i}]: {c!r} is {why}; core features must not be")
    return target_col


def _check_group_columns(raw: dict, columns: _Columns, target_col: str | None) -> None:
    """Each ``groups`` attribute names a column other than the target; names and references hold."""
    groups = raw.get("groups") if isinstance(raw.get("groups"), dict) else {}
    attributes = _try_items(GroupAttribute, groups.get("attributes"))
    for i, g in attributes.items():
        if columns.need(g.column, f"groups.attributes[{i}].column") and g.column == target_col:
            columns.problems.append(f"groups.attributes[{i}].column: {g.column!r} is the target column")
    columns.problems.extend(_group_name_problems(attributes, _try_items(Intersection, groups.get("intersections"))))


def _group_name_problems(attributes: dict[int, GroupAttribute], intersections: dict[int, Intersection]) -> list[str]:
    """Names unique across ``groups``; each intersection names known attributes and groups."""
    problems = []
    by_name: dict[str, GroupAttribute] = {}
    for i, a in attributes.items():
        if a.name in by_name:
            problems.append(f"groups.attributes[{i}].name: {a.name!r} is used by another attribute")
        by_name.setdefault(a.name, a)
    taken = set(by_name)
    for i, x in intersections.items():
        field = f"groups.intersections[{i}]"
        if x.name in taken:
            problems.append(f"{field}.name: {x.name!r} is already an attribute or intersection name")
        taken.add(x.name)
        for j, (attr, ref) in enumerate(zip(x.attributes, x.reference)):
            if attr not in by_name:
                problems.append(f"{field}.attributes[{j}]: {attr!r} is not one of groups.attributes "
                                f"{sorted(by_name)}{did_you_mean(attr, by_name)}")
            elif str(ref) not in by_name[attr].group_names:
                names = by_name[attr].group_names
                problems.append(f"{field}.reference[{j}]: {ref!r} is not a group of {attr!r} {names}"
                                f"{did_you_mean(str(ref), names)}")
        if all(a in by_name for a in x.attributes):
            problems.extend(_joined_name_problems(field, [by_name[a] for a in x.attributes]))
    return problems


def _joined_name_problems(field: str, parts: list[GroupAttribute]) -> list[str]:
    """Two cells of an intersection whose joined display names are equal (``a & b`` + ``c`` is
    ``a`` + ``b & c``) would be counted as one group, as two groups given one label would."""
    seen: dict[str, tuple[str, ...]] = {}
    problems = []
    for cell in itertools.product(*(p.group_names for p in parts)):
        shown = INTERSECTION_SEPARATOR.join(p.display_name(g) for p, g in zip(parts, cell))
        if shown in seen:
            first, second = (" + ".join(f"{p.name}={g!r}" for p, g in zip(parts, c)) for c in (seen[shown], cell))
            problems.append(f"{field}: the cells {first} and {second} would both be shown as {shown!r} "
                            f"(the groups' names are joined with {INTERSECTION_SEPARATOR!r}); "
                            f"give the groups labels without {INTERSECTION_SEPARATOR.strip()!r}")
        else:
            seen[shown] = cell
    return problems


def _check_dataset(ds: DatasetSpec, root: Path, problems: list[str]) -> list[str] | None:
    """Check the file's sha256 and read its header; return the column names or None."""
    path = Path(ds.file) if Path(ds.file).is_absolute() else root / ds.file
    if not path.is_file():
        problems.append(f"dataset.file: {ds.file!r} does not exist (looked in {path.parent})")
        return None
    actual = sha256_of(path)
    if actual != ds.sha256:
        problems.append(f"dataset.sha256: expected {ds.sha256} but {ds.file} has {actual} "
                        "(the file changed, or the manifest is stale)")
    if ds.datasheet is not None and not (root / ds.datasheet).is_file():
        problems.append(f"dataset.datasheet: {ds.datasheet!r} does not exist")
    from pandas.errors import ParserError  # with the file's reading (faircode.data): not on import

    try:
        header = read_header(path, ds.parse)
    except (ValueError, ParserError, UnicodeDecodeError) as exc:
        problems.append(f"dataset.parse: cannot read {ds.file} with these options: {exc}")
        return None
    if ds.decode is not None:
        _check_decode(ds.decode, root, header, problems)
    return header


def _check_decode(dec: DecodeSpec, root: Path, header: list[str], problems: list[str]) -> None:
    path = Path(dec.file) if Path(dec.file).is_absolute() else root / dec.file
    if not path.is_file():
        problems.append(f"dataset.decode.file: {dec.file!r} does not exist")
        return
    actual = sha256_of(path)
    if actual != dec.sha256:
        problems.append(f"dataset.decode.sha256: expected {dec.sha256} but {dec.file} has {actual}")
    try:
        maps = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        problems.append(f"dataset.decode.file: {dec.file} is not valid JSON: {exc}")
        return
    for i, col in enumerate(dec.columns or []):
        if col not in header:
            problems.append(f"dataset.decode.columns[{i}]: {col!r} is not a column of the data"
                            f"{did_you_mean(col, header)}")
        elif col not in maps:
            problems.append(f"dataset.decode.columns[{i}]: {dec.file} has no map for {col!r}")


def _try(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    try:
        return TypeAdapter(tp).validate_python(value)
    except ValidationError:
        return None


def _try_items(tp: Any, value: Any) -> dict[int, Any]:
    """Validate list items one by one, so one bad item does not hide the others' problems."""
    if not isinstance(value, list):
        return {}
    out = {}
    for i, item in enumerate(value):
        ok = _try(tp, item)
        if ok is not None:
            out[i] = ok
    return out


def _raw_columns(items: Any, key: str) -> set[str]:
    if not isinstance(items, list):
        return set()
    return {it[key] for it in items if isinstance(it, dict) and isinstance(it.get(key), str)}
