"""The ``audit.yaml`` schema: one frozen pydantic model per section of a manifest.

:class:`AuditManifest` and its parts (:class:`DatasetSpec` with its :class:`ParseOptions` and
:class:`DecodeSpec`, :class:`DerivedColumn`, :class:`RowFilter`, :class:`TargetSpec`,
:class:`ProtectedAttribute`, :class:`GroupsSpec` with its :class:`GroupAttribute` and
:class:`Intersection`, proxies and excluded columns, :class:`PracticalMargin`), each refusing unknown keys, with the checks
that need one field's value only; :class:`ManifestError`, the one error type of a bad manifest;
``MODEL_NAMES`` and ``STRATEGY_NAMES``. The checks across fields and against the data are in
:mod:`faircode.manifest._checks`; reading a file and reporting every problem, in
:mod:`faircode.manifest._load`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator, PrivateAttr

from faircode.formatting import _as_yaml, did_you_mean


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
        Every problem found, each ``"<file>: <field path>: <what is wrong>"``, or with the line
        the problem is on ``"<file>:L: <field path>: ..."`` (an unknown key, a value of the wrong
        type); a YAML syntax error ``"<file>:L:C: YAML syntax error: ..."``.
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


#: The smallest ``practical_margin.points`` taken: below it, a proportion written for percentage
#: points is far likelier than a margin of a fraction of a percentage point (issue 47).
MIN_MARGIN_POINTS = 0.5
_MARGIN_EXAMPLE = ('practical_margin: {points: 5, ratio: [0.8, 1.25], reason: "5 percentage points, and the '
                   'four-fifths band of the Uniform Guidelines read both ways"}')


class PracticalMargin(_Strict):
    """The smallest gap that matters, declared before looking at the results (issue 45).

    Every verdict on a gap reads it: a gap is *shown* when its interval lies beyond it, *no gap
    of practical size* is shown when an equivalence test puts the gap within it, and the verdict
    is *inconclusive* otherwise (:func:`faircode.significance.gap_verdict`). ``points``: a
    difference of rates within ``±points`` percentage points is too small to matter (5 means
    ``|gap| < 0.05``). ``ratio``: the band a ratio of rates must stay inside, ``[0.8, 1.25]`` (the
    four-fifths band of the Uniform Guidelines, 29 CFR 1607.4(D), read both ways) or ``[0.8]``
    alone for "at least 0.8". ``reason``: why these values, in words a reader can check.

    ``points`` below :data:`MIN_MARGIN_POINTS` (0.5) is refused: ``0.05`` is a margin of 0.05
    percentage points, a proportion written where percentage points belong (issue 47), and the
    message asks whether ``points * 100`` was meant. A scalar (``practical_margin: 5``) is
    refused with the keys it needs and an example.
    """

    points: float = Field(gt=0, lt=100)
    ratio: list[float] = Field(min_length=1, max_length=2)
    reason: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _a_mapping(cls, data: Any) -> Any:
        # pydantic's "Input should be a valid dictionary or instance of PracticalMargin" names a
        # Python class to the author of a YAML file: say which keys to write, and how (issue 47).
        if isinstance(data, (dict, cls)):
            return data
        got = _as_yaml(data)  # as YAML wrote it: true, nothing, 5
        hint = (f" ({data:g} alone: did you mean `points: {data:g}`?)"
                if isinstance(data, (int, float)) and not isinstance(data, bool) else "")
        raise ValueError(f"expected a mapping with the keys `points` (the smallest difference of rates that matters, "
                         f"in percentage points), `ratio` (the band a ratio of rates must stay inside: [low, high], "
                         f"or [low] alone for 'at least low') and `reason` (why these values); got {got}{hint}. "
                         f"For example: {_MARGIN_EXAMPLE}")

    @field_validator("points")
    @classmethod
    def _percentage_points(cls, points: float) -> float:
        if points < MIN_MARGIN_POINTS:
            raise ValueError(f"`points` is {points:g}, a margin of {points:g} percentage points (±{points / 100:g} "
                             f"as a difference of rates); `points` counts percentage points (5 means ±0.05) and must "
                             f"be at least {MIN_MARGIN_POINTS:g}: did you mean {points * 100:g}?")
        return points

    @model_validator(mode="after")
    def _band_around_one(self) -> PracticalMargin:
        low = self.ratio[0]
        high = self.ratio[1] if len(self.ratio) == 2 else float("inf")
        if not 0 < low < 1 < high:
            raise ValueError(f"`ratio` must be [low, high] with 0 < low < 1 < high (e.g. [0.8, 1.25], the "
                             f"four-fifths band), or [low] alone; got {self.ratio}")
        return self

    @property
    def difference(self) -> tuple[float, float]:
        """The margin of a difference of rates, ``(-points / 100, points / 100)``."""
        return -self.points / 100, self.points / 100

    @property
    def ratio_band(self) -> tuple[float, float]:
        """The band of a ratio, ``(low, high)``; ``high`` is ``inf`` when only ``low`` is given."""
        return self.ratio[0], (self.ratio[1] if len(self.ratio) == 2 else float("inf"))

    def of(self, kind: str) -> tuple[float, float]:
        """The margin for a gap of ``kind`` ``"difference"`` or ``"ratio"``."""
        return self.ratio_band if kind == "ratio" else self.difference


class _FromFile(_Strict):
    """A manifest read from a file (an ``audit.yaml``; a report's ``report.yaml``,
    :class:`faircode.report.ReportManifest`): where it was read from and the folder its relative
    paths start from, set by its loader, never read from YAML (private attributes are not keys)."""

    _path: Path = PrivateAttr(default=Path("audit.yaml"))
    _root: Path = PrivateAttr(default=Path("."))

    @property
    def path(self) -> Path:
        """The file this manifest was read from (absolute)."""
        return self._path

    @property
    def root(self) -> Path:
        """The folder relative paths in the manifest start from."""
        return self._root

    @property
    def slug(self) -> str:
        """The manifest's folder name, e.g. ``"benefits-denial"``."""
        return self.path.parent.name

    def resolve(self, relative: str) -> Path:
        """Absolute path of a project-relative path named in the manifest."""
        p = Path(relative)
        return p if p.is_absolute() else self.root / p


class AuditManifest(_FromFile):
    """The validated content of one ``audit.yaml``.

    Paths (``dataset.file``, ``dataset.decode.file``, ``dataset.datasheet``) are relative to
    the project root (see :func:`project_root`); :attr:`path` and :attr:`root` record where
    the manifest was read from (set by :func:`load_manifest`).
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
    practical_margin: PracticalMargin

    def protected_by_name(self) -> dict[str, ProtectedAttribute]:
        return {p.name: p for p in self.protected}


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
