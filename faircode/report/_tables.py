"""The report's tables: sex, race/ethnicity, their intersection, and any extra table.

:func:`report_tables` sums the counts (:class:`~faircode.report.CategoryCounts`) into each
table's categories (labels mapped by the manifest; unknowns counted apart, never in a category),
applies Local Law 144's exclusion when the manifest turns it on, chooses the reference (the
most-selected category not excluded), and compares every other category with it
(:func:`faircode.report._statistics.compare`), with Holm's adjustment over the table's family
of tests and the three-state verdict (:func:`faircode.significance.classify_gap`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from fractions import Fraction

from faircode.formatting import INTERSECTION_SEPARATOR
from faircode.significance import VERDICTS, adjust_p_values, classify_gap, verdict_sentence
from faircode.report._counts import ABOVE, CategoryCounts
from faircode.report._schema import INTERSECTION, RACE_ETHNICITY, SEX, ReportManifest
from faircode.report._statistics import compare

#: The report's level: each test's, the equivalence tests' (one-sided), and 1 - the intervals'
#: confidence (as the benchmark's ``ALPHA``).
ALPHA = 0.05
#: The four-fifths line of the Uniform Guidelines (29 CFR 1607.4(D)): an impact ratio below it
#: is evidence of adverse impact in the guidelines' rule of thumb, whatever the margin declared.
FOUR_FIFTHS = 0.8


@dataclass(frozen=True)
class ReportRow:
    """One category of one table: the record's row.

    Rates are in [0, 1]; a number that does not apply (the reference's test, an excluded
    category's ratio, a ratio over a reference that selected no one) is NaN, and the record
    writes it as null. Field names are the record's (``report.json``, ``report.csv``).
    """

    table: str
    category: str
    n: int
    n_selected: int
    selection_rate: float
    share: float
    excluded: bool
    exclusion_reason: str | None
    reference: bool
    impact_ratio: float
    impact_ratio_ci_low: float
    impact_ratio_ci_high: float
    below_four_fifths: bool | None
    p_value: float
    p_adjusted: float
    equivalence_p_value: float
    equivalence_p_adjusted: float
    power_at_margin: float
    power_method: str | None
    verdict: str | None

    @property
    def tested(self) -> bool:
        """Compared with the reference (neither the reference nor excluded)."""
        return not (self.reference or self.excluded)


@dataclass(frozen=True)
class ReportTable:
    """One table: its rows in label order, its unknowns, its reference and what it left out.

    Attributes
    ----------
    table : str
        ``"sex"``, ``"race/ethnicity"``, ``"intersection"``, or an extra table's name.
    rows : tuple of ReportRow
        The categories with at least one row, in the manifest's label order (the intersection:
        each sex in order, by each race/ethnicity in order).
    n_unknown : int
        Rows whose label (either label, in the intersection) the manifest declares unknown.
    reference : str or None
        The reference category (None when every category is excluded).
    absent : tuple of str
        Categories the manifest names that no row of the data is in.
    n_tested : int
        Categories compared with the reference: the family Holm's adjustment is over.
    """

    table: str
    rows: tuple[ReportRow, ...]
    n_unknown: int
    reference: str | None
    absent: tuple[str, ...]
    n_tested: int

    def row(self, category: str) -> ReportRow:
        """The row of ``category`` (KeyError naming the table's categories otherwise)."""
        for row in self.rows:
            if row.category == category:
                return row
        raise KeyError(f"{category!r} is not a category of the {self.table} table: {[r.category for r in self.rows]}")

    @property
    def excluded(self) -> tuple[ReportRow, ...]:
        return tuple(r for r in self.rows if r.excluded)


@dataclass(frozen=True)
class ReportTables:
    """Every table of a report, with what the report's numbers rest on.

    Attributes
    ----------
    tables : tuple of ReportTable
        Sex, race/ethnicity, intersection, then the extra tables.
    n_rows : int
        Rows in the data.
    rate_name : str
        ``"selection rate"`` or ``"scoring rate"``.
    median : float or None
        The score's median (a scoring rate's), else None.
    alpha : float
    band : (float, float)
        The practical margin's ratio band.
    under_share : float or None
        The exclusion's threshold, None when the rule is off.
    exclusion_reason : str or None
    """

    tables: tuple[ReportTable, ...]
    n_rows: int
    rate_name: str
    median: float | None
    alpha: float
    band: tuple[float, float]
    under_share: float | None
    exclusion_reason: str | None = field(default=None)

    def table(self, key: str) -> ReportTable:
        """The table ``key`` (``"sex"``, ``"race/ethnicity"``, ``"intersection"``, an extra's name)."""
        for t in self.tables:
            if t.table == key:
                return t
        raise KeyError(f"no table {key!r}; the tables are {[t.table for t in self.tables]}")

    def rows(self) -> list[dict]:
        """Every row of every table as the record's rows: dicts of plain values (NaN kept)."""
        return [asdict(row) for t in self.tables for row in t.rows]

    def sentence(self, key: str, category: str, *, names: tuple[str, str] | None = None,
                 outcome: str = "selected") -> str:
        """The verdict on one category in plain words (:func:`faircode.significance.verdict_sentence`).

        ``names``: how the sentence names the category and the reference (default their
        category names); ``outcome``: what being counted means ("selected", "rated low risk").
        """
        t = self.table(key)
        row = t.row(category)
        if row.verdict is None:
            raise ValueError(f"{category!r} has no verdict: it is {'the reference' if row.reference else 'excluded'}")
        return verdict_sentence(
            row.verdict, compare="ratio", estimate=row.impact_ratio, ci_low=row.impact_ratio_ci_low,
            ci_high=row.impact_ratio_ci_high, p_value=row.p_adjusted, equivalence_p_value=row.equivalence_p_adjusted,
            equivalence_ci=(math.nan, math.nan), margin=self.band,
            power_at_margin=row.power_at_margin, alpha=self.alpha, names=names or (category, t.reference),
            outcome=outcome, p_label="Holm-adjusted p")  # the table's values are adjusted over its family


def report_tables(counts: CategoryCounts, manifest: ReportManifest, *, alpha: float = ALPHA) -> ReportTables:
    """The report's tables from the counts.

    Parameters
    ----------
    counts : CategoryCounts
        :func:`faircode.report.count_categories` of ``manifest``.
    manifest : ReportManifest
    alpha : float, default 0.05

    Returns
    -------
    ReportTables

    Raises
    ------
    ValueError
        Counts holding a label or outcome the manifest does not declare (counts of other data).

    Notes
    -----
    - **share** is a category's rows over all rows of the data (unknowns included), the base of
      Local Law 144's "less than 2% of the data". With the exclusion on, a category is excluded
      when its share is *strictly* under ``under_share`` (the rule's "less than"), compared in
      exact fractions: 2 rows of 100 are 2.0% and kept, 19 of 1,000 (1.9%) are excluded. An
      excluded category keeps its count, rate and share, and has no ratio, test or verdict.
    - **reference**: the category with the highest selection rate among those not excluded
      (rates compared exactly; a tie goes to the first in label order). It is chosen after
      looking at the rates, as the law's impact ratio is.
    - **p_adjusted**: Holm's step-down adjustment over the table's tested categories, which
      controls the family-wise error rate: each "a gap shown" in the table is a finding a reader
      may quote on its own, so the chance of any false one is bounded, not only their share (BH's
      false discovery rate). ``equivalence_p_adjusted`` likewise over the equivalence tests.
    - **verdict**: :func:`faircode.significance.classify_gap` on ``p_adjusted``, the 95%
      interval of the ratio, ``equivalence_p_adjusted`` and the manifest's ratio band;
      inconclusive where the ratio is undefined (a reference that selected no one).
    - **power_at_margin**: at ``alpha / m`` for ``m`` tested categories, where Holm rejects at the
      latest: a lower bound of the test's power within the family.
    """
    specs = manifest.categories.specs()
    selected = _selected(manifest)
    band = manifest.practical_margin.ratio_band
    exclusion = manifest.exclusion
    layout = [(SEX, ("sex",)), (RACE_ETHNICITY, ("race_ethnicity",)), (INTERSECTION, ("sex", "race_ethnicity")),
              *((e.name, (e.name,)) for e in manifest.categories.extra)]
    tables = []
    for key, dimensions in layout:
        sums, n_unknown = _sum_cells(counts, dimensions, specs, selected)
        order = _category_order([specs[d].categories for d in dimensions])
        tables.append(_table(key, order, sums, n_unknown, counts.n_rows, exclusion, band, alpha))
    return ReportTables(tables=tuple(tables), n_rows=counts.n_rows, rate_name=manifest.outcome.rate_name,
                        median=counts.median, alpha=alpha, band=band,
                        under_share=exclusion.under_share if exclusion else None,
                        exclusion_reason=exclusion.reason if exclusion else None)


def _selected(manifest: ReportManifest):
    """Whether an outcome (as the counts write it) is counted as selected."""
    if manifest.outcome.score is not None:
        return lambda outcome: outcome == ABOVE
    favourable, declared = manifest.outcome.decision.favourable_texts, manifest.outcome.decision.declared_texts

    def selected(outcome: str) -> bool:
        if outcome not in declared:
            raise ValueError(f"the decision {outcome!r} is not declared in the manifest (counts of other data?)")
        return outcome in favourable

    return selected


def _sum_cells(counts: CategoryCounts, dimensions: tuple[str, ...], specs, selected) -> tuple[dict, int]:
    """``{category: [n, n_selected]}`` of one table (a category of the intersection is the labels
    joined), and its unknown rows."""
    positions = [counts.dimensions.index(d) for d in dimensions]
    sums: dict[str, list[int]] = {}
    n_unknown = 0
    for key, n in counts.counts.items():
        names = [_category(key[p], specs[d], d) for p, d in zip(positions, dimensions)]
        if None in names:
            n_unknown += n
            continue
        cell = sums.setdefault(INTERSECTION_SEPARATOR.join(names), [0, 0])
        cell[0] += n
        cell[1] += n if selected(key[-1]) else 0
    return sums, n_unknown


def _category(text: str, spec, dimension: str) -> str | None:
    if text in spec.mapping:
        return spec.mapping[text]
    if text in spec.unknown_texts:
        return None
    raise ValueError(f"the label {text!r} of {dimension} is neither mapped nor unknown (counts of other data?)")


def _category_order(per_dimension: list[list[str]]) -> list[str]:
    order = [""]
    for names in per_dimension:
        order = [f"{head}{INTERSECTION_SEPARATOR if head else ''}{name}" for head in order for name in names]
    return order


def _table(key: str, order: list[str], sums: dict, n_unknown: int, n_rows: int, exclusion, band, alpha) -> ReportTable:
    present = [c for c in order if sums.get(c, (0, 0))[0] > 0]
    excluded = {c for c in present if exclusion is not None
                and Fraction(sums[c][0], n_rows) < Fraction(str(exclusion.under_share))}
    candidates = [c for c in present if c not in excluded]
    reference = max(candidates, key=lambda c: Fraction(sums[c][1], sums[c][0]), default=None)  # first of equals
    tested = [c for c in candidates if c != reference]
    (n_b, x_b) = sums[reference] if reference is not None else (0, 0)
    results = {c: compare(sums[c][1], sums[c][0], x_b, n_b, band=band, alpha=alpha, power_alpha=alpha / len(tested))
               for c in tested}
    p_adjusted = dict(zip(tested, adjust_p_values([results[c].p_value for c in tested], method="holm").tolist()))
    eq_adjusted = dict(zip(tested, adjust_p_values([_or_one(results[c].equivalence_p_value) for c in tested],
                                                   method="holm").tolist()))
    rows = []
    for c in present:
        n, x = sums[c]
        base = dict(table=key, category=c, n=n, n_selected=x, selection_rate=x / n, share=n / n_rows,
                    excluded=c in excluded, reference=c == reference,
                    exclusion_reason=exclusion.reason if c in excluded else None)
        if c in results:
            rows.append(_tested_row(base, results[c], p_adjusted[c], eq_adjusted[c], band, alpha))
        else:
            rows.append(_untested_row(base))
    return ReportTable(table=key, rows=tuple(rows), n_unknown=n_unknown, reference=reference,
                       absent=tuple(c for c in order if c not in present), n_tested=len(tested))


def _or_one(p: float) -> float:
    """An undefined equivalence p-value (a ratio over no one selected) counts as showing nothing."""
    return 1.0 if math.isnan(p) else p


def _tested_row(base: dict, result, p_adjusted: float, eq_adjusted: float, band, alpha: float) -> ReportRow:
    if math.isnan(result.ci_low):
        verdict = "inconclusive"
    else:
        verdict = classify_gap(p_value=p_adjusted, ci_low=result.ci_low, ci_high=result.ci_high,
                               equivalence_p_value=eq_adjusted, margin=band, alpha=alpha)
    assert verdict in VERDICTS
    ratio = result.impact_ratio
    return ReportRow(**base, impact_ratio=ratio, impact_ratio_ci_low=result.ci_low,
                     impact_ratio_ci_high=result.ci_high,
                     below_four_fifths=None if math.isnan(ratio) else ratio < FOUR_FIFTHS,
                     p_value=result.p_value, p_adjusted=p_adjusted,
                     equivalence_p_value=result.equivalence_p_value,
                     equivalence_p_adjusted=math.nan if math.isnan(result.equivalence_p_value) else eq_adjusted,
                     power_at_margin=result.power_at_margin, power_method=result.power_method, verdict=verdict)


def _untested_row(base: dict) -> ReportRow:
    nan = math.nan
    # The reference's ratio is 1, unless it selected no one (then no ratio is defined).
    reference = base["reference"] and base["n_selected"] > 0
    return ReportRow(**base, impact_ratio=1.0 if reference else nan, impact_ratio_ci_low=nan,
                     impact_ratio_ci_high=nan, below_four_fifths=False if reference else None, p_value=nan,
                     p_adjusted=nan, equivalence_p_value=nan, equivalence_p_adjusted=nan, power_at_margin=nan,
                     power_method=None, verdict=None)
