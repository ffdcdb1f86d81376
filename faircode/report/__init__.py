"""Bias-audit reports from a user's own decisions: the library half of ``fairsite audit``.

A report manifest (``reports/<slug>/report.yaml``) names a data file (CSV, Parquet, or a folder
of Parquet files) and its sha256, the tool's decisions or scores, people's categories (sex,
race/ethnicity, any other) with each label mapped to the category the report names, the unknown
labels, the data's source, kind and period, Local Law 144's exclusion rule and the practical
margin. From it:

- :func:`load_report_manifest` validates the manifest and its data and raises one
  :class:`~faircode.manifest.ManifestError` listing every problem at its line;
  :func:`scaffold_report_manifest` writes a manifest to complete from a data file;
- :func:`count_categories` counts the data in one pass (pandas, or Dask DataFrame for data
  larger than memory);
- :func:`report_tables` computes the tables Local Law 144 asks for (sex, race/ethnicity and
  their intersections: counts, selection or scoring rates, impact ratios, unknowns, the 2%
  exclusion) with what the law leaves out: the impact ratio's 95% interval, the exact test
  against the reference with Holm's adjustment over each table, the equivalence test at the
  practical margin, the power at the margin and the three-state verdict;
- :func:`build_record` writes the machine-readable record (``report.json``, with
  :func:`record_csv` its table rows) and :func:`verify_record` recomputes every number of one.

Modules: ``_schema`` (the manifest's pydantic models), ``_load`` (loading; counting for the
report), ``_checks`` (the checks against the data), ``_data`` (reading CSV and Parquet, a
folder's digest), ``_counts`` (the one pass; the exact median), ``_statistics`` (one category
against the reference), ``_tables`` (the tables), ``_record`` (the record and its
verification), ``_scaffold`` (a new manifest from a data file).
"""

from faircode.report._counts import ABOVE, NOT_ABOVE, CategoryCounts
from faircode.report._data import data_sha256
from faircode.report._load import count_categories, load_report_manifest
from faircode.report._record import FORMAT, ROUNDING, ROW_FIELDS, Difference, build_record, record_csv, verify_record
from faircode.report._scaffold import scaffold_report_manifest
from faircode.report._schema import (
    INTERSECTION,
    RACE_ETHNICITY,
    SEX,
    CategoriesSpec,
    CategorySpec,
    DataSpec,
    DecisionSpec,
    ExclusionRule,
    ExtraCategory,
    OutcomeSpec,
    Period,
    ReportManifest,
    ScoreSpec,
    ToolSpec,
)
from faircode.report._tables import ALPHA, FOUR_FIFTHS, ReportRow, ReportTable, ReportTables, report_tables

__all__ = [
    "ABOVE",
    "ALPHA",
    "FOUR_FIFTHS",
    "INTERSECTION",
    "NOT_ABOVE",
    "RACE_ETHNICITY",
    "SEX",
    "FORMAT",
    "ROUNDING",
    "ROW_FIELDS",
    "CategoriesSpec",
    "CategoryCounts",
    "CategorySpec",
    "DataSpec",
    "DecisionSpec",
    "Difference",
    "ExclusionRule",
    "ExtraCategory",
    "OutcomeSpec",
    "Period",
    "ReportManifest",
    "ReportRow",
    "ReportTable",
    "ReportTables",
    "ScoreSpec",
    "ToolSpec",
    "build_record",
    "count_categories",
    "data_sha256",
    "load_report_manifest",
    "record_csv",
    "report_tables",
    "scaffold_report_manifest",
    "verify_record",
]
