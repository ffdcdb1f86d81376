"""Audit manifests: the declared, validated description of one fairness audit.

An audit is a folder ``audits/<slug>/`` holding ``audit.yaml``. The manifest names the dataset
file and its sha256, how to parse it, the derived columns and row filters (in a small declarative
language, never code), the target and what its positive class means, the protected attributes
and their disadvantaged groups, declared proxies, core features, the split and the models and
strategies of the benchmark.

:func:`load_manifest` validates every field and raises one :class:`ManifestError` that lists
every problem, each prefixed with the file and the field path::

    audits/x/audit.yaml: protected[0].column: 'sexx' is not a column of adult.data (did you mean 'sex'?)

Validation reads the data file's header (to check column names) and hashes the file (to check
the sha256), both with :mod:`faircode.data`; value-level checks that need every row (a positive
label that never occurs, an unmapped code) run in :func:`faircode.load_audit` and raise the same
error type.
"""

from __future__ import annotations

import itertools
import json
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import pandas as pd
import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    model_validator,
)

# Reading and hashing the data files lives in faircode.data; validation uses these three.
from faircode.data import project_root, read_header, sha256_of
from faircode.formatting import INTERSECTION_SEPARATOR, did_you_mean

__all__ = [
    "read_manifest_yaml",
    "MODEL_NAMES",
    "STRATEGY_NAMES",
    "AuditManifest",
    "DatasetSpec",
    "DecodeSpec",
    "DerivedColumn",
    "ExcludedColumn",
    "GroupAttribute",
    "GroupsSpec",
    "Intersection",
    "LeftOutCategories",
    "ManifestError",
    "MissingPolicy",
    "MergedCategories",
    "ParseOptions",
    "ProtectedAttribute",
    "Proxy",
    "RowFilter",
    "TargetSpec",
    "load_manifest",
]

# The canonical name lists live here (not in models.py/strategies.py) so that validating a
# manifest does not import scikit-learn or fairlearn; tests pin that the three lists agree.
MODEL_NAMES: tuple[str, ...] = ("logistic_regression", "random_forest", "gradient_boosting")
STRATEGY_NAMES: tuple[str, ...] = ("S0", "S1", "S2", "S3")

Scalar = Union[bool, int, float, str]
Comparison = Literal["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "between"]
_NUMERIC_OPS = {"lt", "le", "gt", "ge", "between"}
_LIST_OPS = {"in", "not_in"}


class ManifestError(ValueError):
    """A manifest (or the data it points to) breaks the rules.

    Attributes
    ----------
    problems : list of str
        Every problem found, each ``"<file>: <field path>: <what is wrong>"``.
    """

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''} in audit manifest:"
        super().__init__("\n".join([head, *("  - " + p for p in self.problems)]))


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ParseOptions(_Strict):
    """How to read the delimited file (a safe subset of :func:`pandas.read_csv`).

    ``na_values`` are exactly the strings read as missing: pandas' default list is off, so a
    literal ``N/A`` in the COMPAS file stays a value that a row filter can name.
    """

    sep: str = ","
    header: bool = True
    names: list[str] | None = None
    na_values: list[str] = Field(default_factory=lambda: [""])
    skipinitialspace: bool = False
    comment: str | None = Field(default=None, min_length=1, max_length=1)
    skiprows: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _names_when_headerless(self) -> ParseOptions:
        if not self.header and not self.names:
            raise ValueError("a file without a header row (header: false) needs `names`")
        if self.names is not None and len(set(self.names)) != len(self.names):
            dupes = sorted({n for n in self.names if self.names.count(n) > 1})
            raise ValueError(f"`names` repeats {dupes}")
        return self


class DecodeSpec(_Strict):
    """Replace coded values by their meaning from a JSON file ``{column: {code: meaning}}``."""

    file: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    columns: list[str] | None = None  # None: every column the file has a map for


class DatasetSpec(_Strict):
    """The data file, its fingerprint and how to parse and decode it."""

    file: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    datasheet: str | None = None
    parse: ParseOptions = Field(default_factory=ParseOptions)
    decode: DecodeSpec | None = None


class DerivedColumn(_Strict):
    """A new column computed from one existing column.

    ``op`` is a comparison (``eq, ne, lt, le, gt, ge, in, not_in, between``; the result is a
    boolean column) or ``map`` (``mapping`` from each value, matched as text, to a new value;
    ``default`` for values not listed, else an unlisted value is an error).
    """

    name: str = Field(min_length=1)
    from_: str = Field(alias="from", min_length=1)
    op: Comparison | Literal["map"]
    value: Scalar | list[Scalar] | None = None
    mapping: dict[Scalar, Scalar] | None = None
    default: Scalar | None = None
    description: str | None = None

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="after")
    def _op_fits_value(self) -> DerivedColumn:
        if self.op == "map":
            if not self.mapping:
                raise ValueError("op 'map' needs a non-empty `mapping`")
            if self.value is not None:
                raise ValueError("op 'map' takes `mapping`, not `value`")
        else:
            if self.mapping is not None or self.default is not None:
                raise ValueError(f"`mapping`/`default` only go with op 'map', not {self.op!r}")
            _check_op_value(self.op, self.value)
        return self


class RowFilter(_Strict):
    """Keep the rows where ``column op value`` holds.

    Comparisons with a missing value are false, so ``between``, ``lt``... drop rows with a
    missing value and ``ne``/``not_in`` keep them.
    """

    column: str = Field(min_length=1)
    op: Comparison
    value: Scalar | list[Scalar]
    reason: str | None = None

    @model_validator(mode="after")
    def _op_fits_value(self) -> RowFilter:
        _check_op_value(self.op, self.value)
        return self


#: What happens to rows with a missing value in the target or a protected column: ``drop`` them
#: from the audit (counted in ``Audit.dropped``), or ``fail`` (a ManifestError naming the column
#: and the count). Absent means ``fail``, so a missing value never passes unnoticed.
MissingPolicy = Literal["drop", "fail"]


class TargetSpec(_Strict):
    """The outcome column, its positive class, what that means and which class is favourable.

    ``favourable`` says which class of the target is the favourable outcome *for the person*:
    ``negative`` when the positive class is the harmful one (flagged, refused, held), as in every
    audit of this project; ``positive`` when it is the one people want (hired, approved). Metrics
    the literature defines on the favourable outcome (the equal opportunity difference, Hardt,
    Price and Srebro 2016) are computed from it.

    ``missing`` says what happens to rows whose target is empty (see `MissingPolicy`); an empty
    target never becomes class 0.
    """

    column: str = Field(min_length=1)
    positive: list[Scalar] = Field(min_length=1)
    meaning: str = Field(min_length=1)
    favourable: Literal["positive", "negative"]
    missing: MissingPolicy | None = None


class ProtectedAttribute(_Strict):
    """A protected attribute: the column, the disadvantaged group and the reference group.

    Without ``advantaged`` values the reference group is everyone outside the disadvantaged
    group; with them, rows in neither group are left out of the comparison. A row whose value is
    missing is in neither group: ``missing`` (see `MissingPolicy`) says whether such rows are
    dropped from the audit or stop it; they never join "everyone else".
    """

    name: str = Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    column: str = Field(min_length=1)
    disadvantaged: list[Scalar] = Field(min_length=1)
    advantaged: list[Scalar] | None = Field(default=None, min_length=1)
    disadvantaged_label: str = Field(min_length=1)
    advantaged_label: str | None = None
    description: str | None = None
    missing: MissingPolicy | None = None

    @model_validator(mode="after")
    def _groups_disjoint(self) -> ProtectedAttribute:
        if self.advantaged is not None:
            both = {str(v) for v in self.disadvantaged} & {str(v) for v in self.advantaged}
            if both:
                raise ValueError(f"values {sorted(both)} are in both `disadvantaged` and `advantaged`")
        if self.disadvantaged_label == self.reference_label:
            raise ValueError(f"the label {self.disadvantaged_label!r} is given to both groups: the disadvantaged "
                             f"{[str(v) for v in self.disadvantaged]} and the reference ("
                             f"{'everyone else' if self.advantaged is None else [str(v) for v in self.advantaged]}); "
                             f"give `advantaged_label` a name of its own")
        return self

    @property
    def reference_label(self) -> str:
        """Display label of the reference group (``advantaged_label`` or a default)."""
        if self.advantaged_label:
            return self.advantaged_label
        if self.advantaged is None:
            return "everyone else"
        return ", ".join(str(v) for v in self.advantaged)


class ExcludedColumn(_Strict):
    """A column kept out of every feature set, and why (leaks the target, an id, a date...)."""

    column: str = Field(min_length=1)
    reason: str = Field(min_length=1)


class Proxy(_Strict):
    """A column declared to stand in for a protected attribute (kept out of S2's core)."""

    column: str = Field(min_length=1)
    reason: str = Field(min_length=1)


class MergedCategories(_Strict):
    """Categories of a multi-group attribute counted as one group, and why."""

    values: list[Scalar] = Field(min_length=2)
    into: str = Field(min_length=1)
    reason: str = Field(min_length=1)


class LeftOutCategories(_Strict):
    """Categories of a multi-group attribute left out of every comparison, and why."""

    values: list[Scalar] = Field(min_length=1)
    reason: str = Field(min_length=1)


class GroupAttribute(_Strict):
    """A protected attribute compared across all its groups (k >= 2), not as a pair.

    Every value the column takes after the filters must be declared: kept as its own group
    (``categories``), merged with others (``merge``) or left out (``leave_out``), so a new or
    misspelt category is an error, never a silent extra group. ``reference`` is the group the
    others are compared with (a category or a merged group's ``into``). ``labels`` gives
    display names to groups (e.g. ``African-American: Black``). Missing values are never a
    group: ``missing: fail`` (the default) makes them an error, ``leave_out`` drops those rows
    from this attribute's comparisons.
    """

    name: str = Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    column: str = Field(min_length=1)
    categories: list[Scalar] = Field(min_length=1)
    reference: Scalar
    merge: list[MergedCategories] = Field(default_factory=list)
    leave_out: list[LeftOutCategories] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)
    missing: Literal["fail", "leave_out"] = "fail"
    description: str | None = None

    @model_validator(mode="after")
    def _declared_once(self) -> GroupAttribute:
        seen: dict[str, str] = {}
        declared = [(v, "categories") for v in self.categories]
        declared += [(v, f"merge[{i}].values") for i, m in enumerate(self.merge) for v in m.values]
        declared += [(v, f"leave_out[{i}].values") for i, lo in enumerate(self.leave_out) for v in lo.values]
        for value, where in declared:
            if str(value) in seen:
                raise ValueError(f"value {value!r} is declared twice (in `{seen[str(value)]}` and `{where}`)")
            seen[str(value)] = where
        groups = self.group_names
        if len(set(groups)) != len(groups):
            raise ValueError(f"group names repeat: {groups} (a merge's `into` may not reuse a category)")
        if len(groups) < 2:
            raise ValueError(f"needs at least two groups to compare; declares {groups}")
        if str(self.reference) not in groups:
            raise ValueError(f"`reference` {self.reference!r} is not one of the groups {groups}"
                             f"{did_you_mean(str(self.reference), groups)}")
        unknown = [k for k in self.labels if k not in groups]
        if unknown:
            raise ValueError(f"`labels` names {unknown}, which are not groups; the groups are {groups}")
        _check_labels_distinct(self.labels, groups)
        return self

    def display_name(self, group: str) -> str:
        """The name a group is shown by: its ``labels`` entry, else the group itself."""
        return self.labels.get(group, group)

    @property
    def group_names(self) -> list[str]:
        """The groups as text, before display labels: each category, then each merged group."""
        return [str(v) for v in self.categories] + [m.into for m in self.merge]


def _check_labels_distinct(labels: dict[str, str], groups: list[str]) -> None:
    """Refuse a display name that two groups would share, or that names another group.

    Tables key the rows by display name, so two groups shown by one name would be counted as one
    (fairlearn#1679): ``labels: {Male: Men, Female: Men}``, or ``{Female: Male}`` beside the
    category ``Male``. A label equal to another group's own name is refused even when that group
    is relabelled too, since the manifest's ``reference`` and ``merge`` still mean it by that name.
    """
    shown: dict[str, str] = {}
    for group in groups:
        name = labels.get(group, group)
        if name in shown:
            first = shown[name]
            how = " and ".join(f"{g!r}" + (" (through `labels`)" if g in labels else " (its own name)")
                               for g in (first, group))
            raise ValueError(f"two groups would be shown as one: the label {name!r} is given to both {how}; "
                             f"give each group a label of its own")
        shown[name] = group
    for group, name in labels.items():
        if name in groups and name != group:
            raise ValueError(f"the label {name!r} of group {group!r} is the name of another group, {name!r}; "
                             f"give {group!r} a label no other group is called by")


class Intersection(_Strict):
    """Groups formed by crossing several multi-group attributes (e.g. sex x race).

    ``attributes`` names entries of ``groups.attributes``; ``reference`` gives one group of
    each, in the same order (e.g. ``[Male, White]``).
    """

    name: str = Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    attributes: list[str] = Field(min_length=2)
    reference: list[Scalar] = Field(min_length=2)
    description: str | None = None

    @model_validator(mode="after")
    def _one_reference_per_attribute(self) -> Intersection:
        if len(set(self.attributes)) != len(self.attributes):
            raise ValueError(f"`attributes` repeats a name: {self.attributes}")
        if len(self.reference) != len(self.attributes):
            raise ValueError(f"`reference` needs one group per attribute ({len(self.attributes)}); "
                             f"got {len(self.reference)}")
        return self


class GroupsSpec(_Strict):
    """Comparisons across all groups of an attribute and across intersections.

    ``min_size`` is the smallest number of rows a group needs, in the rows a rate is a mean
    over, to enter the between-groups gap and its tests; a smaller group is still reported,
    with its interval and a warning, so a 3-person intersection cannot become the headline.
    """

    min_size: int = Field(ge=1)
    attributes: list[GroupAttribute] = Field(min_length=1)
    intersections: list[Intersection] = Field(default_factory=list)

    def by_name(self) -> dict[str, GroupAttribute | Intersection]:
        """Every attribute and intersection, by name."""
        return {a.name: a for a in [*self.attributes, *self.intersections]}


class AuditManifest(_Strict):
    """The validated content of one ``audit.yaml``.

    Paths (``dataset.file``, ``dataset.decode.file``, ``dataset.datasheet``) are relative to
    the project root (see :func:`project_root`); :attr:`path` and :attr:`root` record where
    the manifest was read from.
    """

    name: str = Field(min_length=1)
    description: str | None = None
    dataset: DatasetSpec
    derived: list[DerivedColumn] = Field(default_factory=list)
    filters: list[RowFilter] = Field(default_factory=list)
    target: TargetSpec
    protected: list[ProtectedAttribute] = Field(min_length=1)
    exclude: list[ExcludedColumn] = Field(default_factory=list)
    proxies: list[Proxy] = Field(default_factory=list)
    core_features: list[str] = Field(min_length=1)
    test_size: float = Field(gt=0, lt=1)
    random_state: int = Field(ge=0, le=2**32 - 1)
    models: list[str] = Field(min_length=1)
    strategies: list[str] = Field(min_length=1)
    groups: GroupsSpec | None = None
    # Set by load_manifest, never read from YAML (private attributes are not YAML keys).
    _path: Path = PrivateAttr(default=Path("audit.yaml"))
    _root: Path = PrivateAttr(default=Path("."))

    @property
    def path(self) -> Path:
        """The ``audit.yaml`` this manifest was read from (absolute)."""
        return self._path

    @property
    def root(self) -> Path:
        """The folder relative paths in the manifest start from."""
        return self._root

    @property
    def slug(self) -> str:
        """The audit's folder name, e.g. ``"benefits-denial"``."""
        return self.path.parent.name

    def resolve(self, relative: str) -> Path:
        """Absolute path of a project-relative path named in the manifest."""
        p = Path(relative)
        return p if p.is_absolute() else self.root / p

    def protected_by_name(self) -> dict[str, ProtectedAttribute]:
        return {p.name: p for p in self.protected}


# --- public entry point ---------------------------------------------------------------------------


def load_manifest(path: str | Path, *, root: str | Path | None = None) -> AuditManifest:
    """Read and validate an ``audit.yaml``.

    Parameters
    ----------
    path : str or pathlib.Path
        The manifest file (``audits/<slug>/audit.yaml``).
    root : str or pathlib.Path, optional
        Folder that relative data paths in the manifest start from. Default: the nearest
        folder above the manifest holding ``pyproject.toml``, else :func:`project_root`
        (which honours the ``FAIRCODE_ROOT`` environment variable).

    Returns
    -------
    AuditManifest
        The validated manifest, with ``path`` and ``root`` set.

    Raises
    ------
    ManifestError
        One error listing every problem, each ``"<file>: <field path>: <message>"``: YAML
        syntax (with the line), unknown keys (with a did-you-mean), missing or mistyped fields,
        columns that are not in the data file's header, a data file whose sha256 differs,
        malformed filters or derived columns, ``test_size`` outside (0, 1), unknown model or
        strategy names.
    FileNotFoundError
        If ``path`` does not exist, or no ``root`` is given or found (see :func:`project_root`).

    Notes
    -----
    Structural checks come from pydantic; the cross-field and data checks then run on every
    section that is structurally sound, so one run reports everything it can.

    Example
    -------
    >>> m = load_manifest("audits/benefits-denial/audit.yaml")  # doctest: +SKIP
    >>> m.target.meaning  # doctest: +SKIP
    'flagged ineligible for the benefit (income above $50K)'
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"manifest {str(path)!r} does not exist")
    root_path = Path(root).resolve() if root is not None else _find_root(path)
    label = _display(path, root_path)
    raw = _read_yaml(path, label)

    problems: list[str] = []
    manifest = None
    try:
        manifest = AuditManifest.model_validate(raw)
    except ValidationError as exc:
        problems.extend(_format_pydantic(exc))
    problems.extend(_semantic_problems(raw, root_path))

    if problems:
        raise ManifestError([f"{label}: {p}" for p in _dedupe(problems)])
    assert manifest is not None
    manifest._path = path.resolve()
    manifest._root = root_path
    return manifest


def read_manifest_yaml(path: str | Path, *, label: str | None = None) -> dict:
    """An ``audit.yaml`` as the mapping its YAML holds, before any validation.

    For readers that need a field or two of every manifest without loading the audits (the site
    build's provenance lists each data file's sha256): a syntax error is the same
    `ManifestError` :func:`load_manifest` raises, naming the file and the line, never a
    ``yaml.YAMLError`` traceback.

    Parameters
    ----------
    path : str or pathlib.Path
        The manifest file.
    label : str, optional
        How the file is named in messages; default the path.

    Returns
    -------
    dict
        The top-level mapping, unvalidated.

    Raises
    ------
    ManifestError
        ``"<file>: line L, column C: YAML syntax error: ..."``, or a top level that is not a mapping.
    FileNotFoundError
        If ``path`` does not exist.
    """
    path = Path(path)
    # libyaml's safe loader when it is there: the same mapping, several times faster (the site
    # build reads every manifest on each build). On a problem, the pure-Python reader says what
    # load_manifest says.
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        raw = None
    if isinstance(raw, dict):
        return raw
    return _read_yaml(path, label or str(path))


def _read_yaml(path: Path, label: str) -> dict:
    """The manifest's YAML as a mapping; a syntax error or another top level is a ManifestError."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "?"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ManifestError([f"{label}: {where}: YAML syntax error: {problem}"]) from None
    if not isinstance(raw, dict):
        raise ManifestError([f"{label}: (top level): expected a mapping of keys, got {type(raw).__name__}"])
    return raw


# --- structural errors ----------------------------------------------------------------------------


def _format_pydantic(exc: ValidationError) -> list[str]:
    out = []
    for err in exc.errors():
        full = tuple(err["loc"])
        # pydantic reports a failed union member by member ("value.bool", "value.list[...]");
        # the member names are noise to a manifest author: report the field once.
        loc = tuple(p for p in full if not (isinstance(p, str) and ("[" in p or p in _SCALAR_TAGS)))
        field = _loc_path(loc)
        if loc != full and err["type"] != "extra_forbidden":
            out.append(f"{field}: {err['input']!r} is not a valid value here (expected a number, "
                       "text, true/false, or a list of those)")
            continue
        if err["type"] == "extra_forbidden":
            key = str(loc[-1])
            known = _known_keys(loc[:-1])
            hint = did_you_mean(key, known)
            out.append(f"{field}: unknown key {key!r}{hint}")
        elif err["type"] == "missing":
            out.append(f"{field}: required field is missing{_REQUIRED_HINTS.get(str(loc[-1]), '')}")
        elif loc and loc[-1] == "sha256" and not isinstance(err["input"], str):
            out.append(f"{field}: must be 64 hex digits as text; YAML read {err['input']!r} as a "
                       "number, so quote it")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            out.append(f"{field}: {msg}")
    return out


# What to write when a required field is absent, for fields whose meaning is easy to get wrong.
_REQUIRED_HINTS = {
    "favourable": ("; say which class of the target is the favourable outcome for the person: "
                   "`favourable: negative` when the positive class is the harmful one (flagged, "
                   "refused), `favourable: positive` when it is the one people want"),
}

_SCALAR_TAGS = {"bool", "int", "float", "str", "list", "dict", "function-after"}


def _loc_path(loc: tuple) -> str:
    parts: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts[-1:] = [f"{parts[-1] if parts else ''}[{p}]"]
        else:
            parts.append(str(p))
    return ".".join(parts) or "(top level)"


def _known_keys(loc: tuple) -> list[str]:
    """Field names (YAML spelling) of the model found by walking ``loc`` from the manifest."""
    tp: Any = AuditManifest
    for p in loc:
        tp = _unwrap(tp)
        if isinstance(p, int):
            args = typing.get_args(tp)
            tp = args[0] if args else Any
        elif isinstance(tp, type) and issubclass(tp, BaseModel):
            field = next((f for n, f in tp.model_fields.items() if (f.alias or n) == p), None)
            tp = field.annotation if field else Any
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [f.alias or n for n, f in tp.model_fields.items()]
    return []


def _unwrap(tp: Any) -> Any:
    """Strip Optional[...] / X | None / Annotated[...] down to the one real type."""
    while True:
        origin = typing.get_origin(tp)
        if origin is Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            if len(args) != 1:
                return tp
            tp = args[0]
        else:
            return tp


def _check_op_value(op: str, value: Any) -> None:
    if op == "between":
        if not (isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value)):
            raise ValueError(f"op 'between' needs `value: [low, high]` (two numbers), got {value!r}")
        if value[0] > value[1]:
            raise ValueError(f"op 'between' needs low <= high, got {value!r}")
    elif op in _LIST_OPS:
        if not isinstance(value, list) or not value:
            raise ValueError(f"op {op!r} needs `value` to be a non-empty list, got {value!r}")
    elif op in _NUMERIC_OPS:
        if not _is_number(value):
            raise ValueError(f"op {op!r} needs a number as `value`, got {value!r}")
    else:  # eq, ne
        if value is None or isinstance(value, list):
            raise ValueError(f"op {op!r} needs one value (use 'in'/'not_in' for a list), got {value!r}")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# --- cross-field and data checks ------------------------------------------------------------------


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
    for i, d in _try_items(DerivedColumn, raw.get("derived")).items():
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
    try:
        header = read_header(path, ds.parse)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
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


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _find_root(path: Path) -> Path:
    for folder in path.resolve().parents:
        if (folder / "pyproject.toml").is_file():
            return folder
    return project_root()


def _display(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)
