"""The ``report.yaml`` schema: one frozen pydantic model per section of a report manifest.

:class:`ReportManifest` and its parts (:class:`ToolSpec`, :class:`DataSpec` with its
:class:`Period`, :class:`OutcomeSpec` with :class:`DecisionSpec` or :class:`ScoreSpec`,
:class:`CategoriesSpec` with one :class:`CategorySpec` per table, :class:`ExclusionRule`), each
refusing unknown keys, with the checks one section's values allow. The parse options and the
practical margin are an ``audit.yaml``'s (:class:`faircode.manifest.ParseOptions`,
:class:`faircode.manifest.PracticalMargin`). The checks against the data file are in
:mod:`faircode.report._checks`; reading a file and reporting every problem, in
:mod:`faircode.report._load`.

Labels are compared as text: ``1`` in the YAML matches the text ``1`` in a CSV file, and an
empty field (read as missing) is the label ``""``.
"""

from __future__ import annotations

import datetime
import math
from pathlib import Path
from typing import Literal, Union

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from faircode.formatting import INTERSECTION_SEPARATOR
from faircode.manifest import ParseOptions, PracticalMargin
from faircode.manifest._schema import _FromFile

Label = Union[bool, int, float, str]

#: The key of each table in the record (``table`` field), in the order the report lists them.
SEX, RACE_ETHNICITY, INTERSECTION = "sex", "race/ethnicity", "intersection"


def label_text(value) -> str:
    """A label as the text it is matched by: a whole float as an integer (``1.0`` -> ``"1"``),
    a missing value as ``""``, anything else ``str(value)``.

    Parameters
    ----------
    value : object
        A label from the manifest (YAML) or from the data (a CSV field's text, a Parquet value).

    Returns
    -------
    str
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolSpec(_Strict):
    """The automated employment decision tool (Local Law 144's "AEDT") the report audits.

    ``distribution_date`` (the date the tool was first distributed or used, which the law's
    summary names) is required but may be ``null``: an auditor of public data may not know it,
    and says so rather than guess.
    """

    name: str = Field(min_length=1)
    version: str | None = None
    distribution_date: datetime.date | None
    vendor: str | None = None


class Period(_Strict):
    """The period the data cover, ``start`` to ``end`` inclusive."""

    start: datetime.date
    end: datetime.date

    @model_validator(mode="after")
    def _in_order(self) -> Period:
        if self.end < self.start:
            raise ValueError(f"the period ends ({self.end}) before it starts ({self.start})")
        return self


class DataSpec(_Strict):
    """The data: a CSV file, a Parquet file or a folder of Parquet files, and what they are.

    ``sha256`` is the file's digest; a folder's is the digest of its sorted ``"name sha256"``
    lines (:func:`faircode.report.data_sha256`). ``parse`` applies to a CSV file only. ``kind``:
    ``historical`` (the tool's real decisions) or ``test`` (data made to test it; Local Law 144
    allows it only when historical data are too few, so ``kind_reason`` says why).
    """

    file: str = Field(min_length=1)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    parse: ParseOptions | None = None
    source: str = Field(min_length=1)
    kind: Literal["historical", "test"]
    kind_reason: str = Field(min_length=1)
    period: Period


class DecisionSpec(_Strict):
    """A column of decisions: every value it holds is declared ``favourable`` or ``other``."""

    column: str = Field(min_length=1)
    favourable: list[Label] = Field(min_length=1)
    other: list[Label] = Field(min_length=1)

    @model_validator(mode="after")
    def _disjoint(self) -> DecisionSpec:
        both = sorted({label_text(v) for v in self.favourable} & {label_text(v) for v in self.other})
        if both:
            raise ValueError(f"the values {both} are both favourable and other; each value is one or the other")
        return self

    @property
    def favourable_texts(self) -> frozenset[str]:
        return frozenset(label_text(v) for v in self.favourable)

    @property
    def declared_texts(self) -> frozenset[str]:
        return self.favourable_texts | {label_text(v) for v in self.other}


class ScoreSpec(_Strict):
    """A column of scores: a person is counted as selected (scored) when strictly above the
    whole sample's median, the "scoring rate" of Local Law 144 (6 RCNY 5-300)."""

    column: str = Field(min_length=1)


class OutcomeSpec(_Strict):
    """What the tool decided: exactly one of ``decision`` and ``score``."""

    decision: DecisionSpec | None = None
    score: ScoreSpec | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> OutcomeSpec:
        if (self.decision is None) == (self.score is None):
            raise ValueError("give exactly one of `decision` (a column of decisions and which values are "
                             "favourable) and `score` (a column of scores, rated by the share above the median)")
        return self

    @property
    def column(self) -> str:
        return self.decision.column if self.decision is not None else self.score.column

    @property
    def rate_name(self) -> str:
        """``"selection rate"`` of decisions, ``"scoring rate"`` of scores."""
        return "selection rate" if self.decision is not None else "scoring rate"


class CategorySpec(_Strict):
    """A column of people's categories: each label in the data is mapped to the category the
    report names (``labels``; several labels may name one category) or declared ``unknown``."""

    column: str = Field(min_length=1)
    labels: dict[Label, str] = Field(min_length=1)
    unknown: list[Label] = Field(default_factory=list)

    @model_validator(mode="after")
    def _labels_sound(self) -> CategorySpec:
        texts = [label_text(k) for k in self.labels]
        twice = sorted({t for t in texts if texts.count(t) > 1})
        if twice:
            raise ValueError(f"the labels {twice} are mapped twice (as text they are the same label)")
        both = sorted(set(texts) & {label_text(v) for v in self.unknown})
        if both:
            raise ValueError(f"the labels {both} are both mapped (`labels`) and `unknown`; keep each in one")
        empty = [k for k, v in self.labels.items() if not v.strip()]
        if empty:
            raise ValueError(f"the labels {empty} are mapped to an empty category name")
        return self

    @property
    def mapping(self) -> dict[str, str]:
        """Each label, as text, to its category."""
        return {label_text(k): v for k, v in self.labels.items()}

    @property
    def unknown_texts(self) -> frozenset[str]:
        return frozenset(label_text(v) for v in self.unknown)

    @property
    def categories(self) -> list[str]:
        """The reported categories, in the order ``labels`` first names them (the label order
        that breaks a tie for the reference)."""
        return list(dict.fromkeys(self.labels.values()))


class ExtraCategory(CategorySpec):
    """A further table of one more column (age band, disability...), named ``name``."""

    name: str = Field(min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


class CategoriesSpec(_Strict):
    """The tables Local Law 144 asks for (sex, race/ethnicity and their intersection), and more."""

    sex: CategorySpec
    race_ethnicity: CategorySpec
    extra: list[ExtraCategory] = Field(default_factory=list)

    @model_validator(mode="after")
    def _tables_sound(self) -> CategoriesSpec:
        names = [e.name for e in self.extra]
        reserved = {"sex", "race_ethnicity", "intersection"}
        clash = sorted({n for n in names if names.count(n) > 1 or n in reserved})
        if clash:
            raise ValueError(f"the extra tables' names {clash} repeat, or are taken by the three tables of the law")
        cells = [INTERSECTION_SEPARATOR.join((s, r)) for s in self.sex.categories
                 for r in self.race_ethnicity.categories]
        if len(set(cells)) != len(cells):
            raise ValueError(f"two intersections would be written alike (the categories are joined with "
                             f"{INTERSECTION_SEPARATOR!r}); give the categories names without "
                             f"{INTERSECTION_SEPARATOR.strip()!r}")
        return self

    def specs(self) -> dict[str, CategorySpec]:
        """Each column's spec by its dimension: ``sex``, ``race_ethnicity``, then each extra's name."""
        return {"sex": self.sex, "race_ethnicity": self.race_ethnicity, **{e.name: e for e in self.extra}}


class ExclusionRule(_Strict):
    """Local Law 144's exclusion: a category under ``under_share`` of the rows (2% in the rules,
    6 RCNY 5-301) may be left out of the impact ratios, its count and rate still reported."""

    under_share: float = Field(default=0.02, gt=0, lt=1)
    reason: str = Field(min_length=1)


class ReportManifest(_FromFile):
    """The validated content of one ``report.yaml``.

    :attr:`path`, :attr:`root` and :attr:`text` record where and what was read; relative data
    paths start from :attr:`root` (:meth:`data_path`).
    """

    title: str = Field(min_length=1)
    tool: ToolSpec
    auditor: str | None = None
    audit_date: datetime.date
    data: DataSpec
    outcome: OutcomeSpec
    categories: CategoriesSpec
    exclusion: ExclusionRule | None = None
    practical_margin: PracticalMargin
    # Set by load_report_manifest, never read from YAML.
    _text: str = PrivateAttr(default="")
    _data_path: Path | None = PrivateAttr(default=None)
    _counts: object = PrivateAttr(default=None)

    @property
    def text(self) -> str:
        """The manifest's text, whole, as read (the record keeps it)."""
        return self._text

    def data_path(self) -> Path:
        """The data file or folder: the one given to the loader (``data=``), else ``data.file``
        from :attr:`root`."""
        return self._data_path if self._data_path is not None else self.resolve(self.data.file)
