"""The report's record (``report.json``, with ``report.csv`` of its rows), and its verification.

:func:`build_record` writes every number of the tables with what they came from: the data's
sha256 and size, the manifest's text whole and its sha256, the project's commit and lock, the
date. :func:`verify_record` recomputes every number from the data and the manifest text the
record holds and lists each one that differs (:class:`Difference`); a data file whose sha256 is
not the recorded one comes first. :func:`record_csv` is the table rows as CSV.

Comparisons: counts, categories, flags and verdicts exactly (:func:`faircode.tolerances.exact`);
every other number (rates, ratios, intervals, p-values, power, the median) to floating-point
rounding, a relative difference of at most 1e-9 (:data:`ROUNDING`): they are deterministic
functions of the counts, written with all 17 significant digits, so a re-run on any machine
differs from the record only by the last bits of its arithmetic (about 1e-15), and any real
change (one more person selected moves a rate of 10 million rows by 1e-7) is far beyond it.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

from faircode import __version__
from faircode.manifest import ManifestError
from faircode.report._data import data_sha256
from faircode.report._load import _load, count_categories
from faircode.report._schema import ReportManifest
from faircode.report._tables import ReportRow, ReportTables, report_tables
from faircode.tolerances import Tolerance, exact

FORMAT = "faircode-report/1"
#: Floating-point rounding: two numbers match when they differ by at most 1e-9 of the larger.
ROUNDING = Tolerance("rounding", 1e-9, "floating-point rounding: relative |Δ| ≤ 1e-9")
#: The fields of a row, in the record's and the CSV's order.
ROW_FIELDS = tuple(f.name for f in fields(ReportRow))
_EXACT_FIELDS = {"table", "category", "n", "n_selected", "excluded", "exclusion_reason", "reference",
                 "below_four_fifths", "power_method", "verdict"}
_PROVENANCE_KEYS = {"commit", "dirty", "lock_sha256", "date"}
_METHODS = {
    "impact_ratio": "the category's rate over the reference's (the most-selected category not excluded)",
    "impact_ratio_ci": "95% MOVER-R interval with Wilson limits (Donner and Zou 2012)",
    "p_value": "exact two-sided permutation test of equal rates against the reference (hypergeometric)",
    "p_adjusted": "Holm's step-down adjustment over the table's tested categories (family-wise error rate; Holm 1979)",
    "equivalence": "two one-sided tests (TOST) that the impact ratio lies within the margin's ratio band "
                   "(Schuirmann 1987; exact unconditional, Chan 1998, where the tables are few, score otherwise); "
                   "Holm-adjusted over the table",
    "power_at_margin": "power of the exact test against a true ratio at the band's edge, at alpha / m for m tested "
                       "categories: exact (power_method 'exact') or its normal approximation ('normal') for large groups",
    "verdict": "faircode.significance.classify_gap on the adjusted p-values, the 95% interval and the ratio band",
}


@dataclass(frozen=True)
class Difference:
    """One number of a record that the recomputation does not match.

    Attributes
    ----------
    table, category : str or None
        Where (None for a number of the whole record: the data's sha256, its rows, the median).
    field : str
        The field (``"p_value"``, ``"data.sha256"``...).
    recorded, recomputed : object
        The two values (None where one side has no such row or value).
    tolerance : str
        The rule they were compared by.
    """

    table: str | None
    category: str | None
    field: str
    recorded: object
    recomputed: object
    tolerance: str

    def __str__(self) -> str:
        where = " / ".join(p for p in (self.table, self.category) if p is not None)
        return (f"{where + ': ' if where else ''}{self.field}: recorded {self.recorded!r}, recomputed "
                f"{self.recomputed!r} ({self.tolerance})")


def build_record(tables: ReportTables, manifest: ReportManifest, *, provenance: Mapping) -> dict:
    """The record of a report: every number, and what it came from.

    Parameters
    ----------
    tables : ReportTables
        :func:`faircode.report.report_tables` of ``manifest``.
    manifest : ReportManifest
        As :func:`faircode.report.load_report_manifest` returns it (its text is kept whole).
    provenance : Mapping
        ``commit`` (str or None), ``dirty`` (bool or None), ``lock_sha256`` (the sha256 of
        ``requirements/site.txt``, or None) and, optionally, ``date`` (the build's UTC date,
        ISO text or ``datetime.date``; default today's in UTC). The library does not read git:
        the caller (the site build) knows where the report was built.

    Returns
    -------
    dict
        JSON-ready (``json.dumps(record, allow_nan=False)`` succeeds): ``format``, ``title``,
        ``slug``, ``audit_date``, ``date``, ``tool``, ``auditor``, ``data`` (``file``,
        ``sha256``, ``rows``, ``source``, ``kind``, ``kind_reason``, ``period``), ``manifest``
        (``sha256``, ``text``), ``project`` (``commit``, ``dirty``, ``lock_sha256``,
        ``faircode``), ``outcome``, ``margin``, ``exclusion``, ``alpha``, ``methods`` and
        ``tables`` (each ``table``, ``n_unknown``, ``reference``, ``absent``, ``n_tested`` and
        ``rows``, each row the fields of :class:`~faircode.report.ReportRow`; a number that
        does not apply is null).

    Raises
    ------
    ValueError
        ``provenance`` with a key other than those above.
    """
    unknown = set(provenance) - _PROVENANCE_KEYS
    if unknown:
        raise ValueError(f"`provenance` keys are {sorted(_PROVENANCE_KEYS)}; got also {sorted(unknown)}")
    date = provenance.get("date") or datetime.datetime.now(datetime.timezone.utc).date()
    outcome = manifest.outcome
    return {
        "format": FORMAT, "title": manifest.title, "slug": manifest.slug, "audit_date": manifest.audit_date.isoformat(),
        "date": date.isoformat() if isinstance(date, datetime.date) else str(date),
        "tool": manifest.tool.model_dump(mode="json"), "auditor": manifest.auditor,
        "data": {"file": manifest.data.file, "sha256": manifest.data.sha256, "rows": tables.n_rows,
                 "source": manifest.data.source, "kind": manifest.data.kind, "kind_reason": manifest.data.kind_reason,
                 "period": manifest.data.period.model_dump(mode="json")},
        "manifest": {"sha256": _text_sha256(manifest.text), "text": manifest.text},
        "project": {"commit": provenance.get("commit"), "dirty": provenance.get("dirty"),
                    "lock_sha256": provenance.get("lock_sha256"), "faircode": __version__},
        "outcome": {"kind": "decision" if outcome.decision else "score", "column": outcome.column,
                    "rate": tables.rate_name, "median": _plain(tables.median),
                    **({"favourable": sorted(outcome.decision.favourable_texts)} if outcome.decision else {})},
        "margin": {**manifest.practical_margin.model_dump(mode="json"), "band": [_plain(v) for v in tables.band]},
        "exclusion": {"on": tables.under_share is not None, "under_share": tables.under_share,
                      "reason": tables.exclusion_reason},
        "alpha": tables.alpha, "methods": dict(_METHODS),
        "tables": [{"table": t.table, "n_unknown": t.n_unknown, "reference": t.reference, "absent": list(t.absent),
                    "n_tested": t.n_tested, "rows": [_row(r) for r in t.rows]} for t in tables.tables],
    }


def _row(row: ReportRow) -> dict:
    return {name: _plain(getattr(row, name)) for name in ROW_FIELDS}


def _plain(value):
    """A value as JSON holds it: NaN and infinities as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def record_csv(record: Mapping) -> str:
    """The record's table rows as CSV text: a header of :data:`ROW_FIELDS`, one line per row
    (null as an empty field), every table in the record's order."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=ROW_FIELDS, lineterminator="\n")
    writer.writeheader()
    for table in record["tables"]:
        writer.writerows({k: ("" if row.get(k) is None else row.get(k)) for k in ROW_FIELDS} for row in table["rows"])
    return out.getvalue()


def verify_record(record: Mapping, data_path: str | Path, *, engine: str = "auto") -> list[Difference]:
    """Recompute every number of a record from the data and the manifest text it holds.

    Parameters
    ----------
    record : Mapping
        A record (``json.load`` of a ``report.json``).
    data_path : str or pathlib.Path
        The data file or folder to recompute from.
    engine : {"auto", "pandas", "dask"}, default "auto"
        As :func:`faircode.report.count_categories`.

    Returns
    -------
    list of Difference
        Empty when every number matches. First a data file whose sha256 is not the recorded one
        (``data.sha256``) and a manifest text whose sha256 is not the recorded one; then every
        differing number (the data's rows, the median, each table's unknowns, reference and
        each row's fields), compared as the module says; a row only one side has is
        one difference (``field="row"``). Data the manifest cannot read (a label it does not
        map) is one difference (``field="manifest"``) naming the problems.

    Raises
    ------
    ValueError
        ``record`` is not a report record of this format.
    FileNotFoundError
        ``data_path`` does not exist.
    """
    if not isinstance(record, Mapping) or record.get("format") != FORMAT:
        raise ValueError(f"not a report record: expected format {FORMAT!r}, got "
                         f"{record.get('format') if isinstance(record, Mapping) else type(record).__name__!r}")
    data_path = Path(data_path)
    differences = []
    digest = data_sha256(data_path)
    if digest != record["data"]["sha256"]:
        differences.append(Difference(None, None, "data.sha256", record["data"]["sha256"], digest, "exact"))
    text = record["manifest"]["text"]
    if _text_sha256(text) != record["manifest"]["sha256"]:
        differences.append(Difference(None, None, "manifest.sha256", record["manifest"]["sha256"],
                                      _text_sha256(text), "exact"))
    try:
        manifest = _load(text, "report.json: manifest.text", None, data_path.resolve().parent, data=data_path,
                         check_sha256=False, check_values=True, engine=engine)
    except ManifestError as err:
        return [*differences, Difference(None, None, "manifest", "the data as the manifest declares it",
                                         "; ".join(err.problems), "exact")]
    fresh = build_record(report_tables(count_categories(manifest, engine=engine), manifest), manifest,
                         provenance={k: record["project"].get(k) for k in ("commit", "dirty", "lock_sha256")})
    return differences + _compare_records(record, fresh)


def _compare_records(old: Mapping, new: Mapping) -> list[Difference]:
    out = []
    for field, (a, b) in {"data.rows": (old["data"]["rows"], new["data"]["rows"]),
                          "outcome.median": (old["outcome"].get("median"), new["outcome"].get("median")),
                          "alpha": (old["alpha"], new["alpha"])}.items():
        out += _differ(None, None, field, a, b, exact() if field == "data.rows" else ROUNDING)
    new_tables = {t["table"]: t for t in new["tables"]}
    old_tables = {t["table"]: t for t in old["tables"]}
    for key in dict.fromkeys([*old_tables, *new_tables]):
        if key not in old_tables or key not in new_tables:
            out.append(Difference(key, None, "table", key in old_tables, key in new_tables, "exact"))
            continue
        out += _compare_tables(old_tables[key], new_tables[key])
    return out


def _compare_tables(old: Mapping, new: Mapping) -> list[Difference]:
    key = old["table"]
    out = []
    for field in ("n_unknown", "reference", "absent", "n_tested"):
        out += _differ(key, None, field, old.get(field), new.get(field), exact())
    old_rows = {r.get("category"): r for r in old["rows"]}
    new_rows = {r["category"]: r for r in new["rows"]}
    for category in dict.fromkeys([*old_rows, *new_rows]):
        if category not in old_rows or category not in new_rows:
            out.append(Difference(key, category, "row", category in old_rows, category in new_rows, "exact"))
            continue
        for field in ROW_FIELDS:
            rule = exact() if field in _EXACT_FIELDS else ROUNDING
            out += _differ(key, category, field, old_rows[category].get(field), new_rows[category][field], rule)
    return out


def _differ(table, category, field: str, recorded, recomputed, rule: Tolerance) -> list[Difference]:
    return [] if _matches(rule, recorded, recomputed) else [
        Difference(table, category, field, recorded, recomputed, rule.description)]


def _matches(rule: Tolerance, old, new) -> bool:
    """``rule`` applied; :data:`ROUNDING` is relative (`Tolerance`'s kinds are absolute or on
    log10), and a number matches only a number (a bool, text or null only its equal)."""
    if rule is not ROUNDING:  # exact: and True is not 1
        return rule.matches(old, new) and isinstance(old, bool) == isinstance(new, bool)
    numbers = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in (old, new)]
    if not all(numbers):
        return old == new and type(old) is type(new)
    return math.isclose(old, new, rel_tol=rule.atol, abs_tol=0.0)
