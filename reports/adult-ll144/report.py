# Generated from reports/adult-ll144/report.yaml by `fairsite build`; do not edit (edit the manifest, or
# the verdicts' words in reports/adult-ll144/report.md). Run it from the repository root:
#   python reports/adult-ll144/report.py > report.json
# It prints the report's record, report.json without where it was built (commit, lock, date).
import json
from dataclasses import asdict

from faircode.report import (FOUR_FIFTHS, ExclusionRule, build_record, count_categories, load_report_manifest,
                             report_tables)
from faircode.significance import VERDICTS

# Its paths (the manifest's, the data file's) are from the repository's root, where it runs.
manifest = load_report_manifest("reports/adult-ll144/report.yaml", root=".")
report = report_tables(count_categories(manifest), manifest)
# How the verdicts in words name the favourable outcome (report.md's front matter: outcome).
OUTCOME = 'reported an income above $50K'


def applicable(row):
    """A row's fields that apply to it: a reference has no test, an excluded category no ratio."""
    return {k: v for k, v in asdict(row).items() if k not in ("table", "category") and v is not None and v == v}


# The values the page cites (its prose may cite them too): each table's rows by category and
# field, e.g. tables["race/ethnicity"]["Hispanic"]["impact_ratio"]; each table's reference,
# unknowns, excluded categories, categories by verdict, and each verdict in a sentence.
n_rows = report.n_rows
rate_name = report.rate_name
alpha = report.alpha  # each test's level; the intervals' confidence is 1 - alpha
four_fifths = FOUR_FIFTHS
under_share = manifest.exclusion.under_share if manifest.exclusion is not None else 0.0  # 0: the rule is off
law_share = ExclusionRule.model_fields["under_share"].default  # the law's threshold of a small category
tables = {t.table: {r.category: applicable(r) for r in t.rows} for t in report.tables}
reference = {t.table: t.reference or "" for t in report.tables}
n_unknown = {t.table: t.n_unknown for t in report.tables}
excluded = {t.table: [r.category for r in t.excluded] for t in report.tables}
verdicts = {t.table: {v: [r.category for r in t.rows if r.verdict == v] for v in VERDICTS} for t in report.tables}
sentences = {t.table: {r.category: report.sentence(t.table, r.category, outcome=OUTCOME) for r in t.rows if r.tested}
             for t in report.tables}

# What the exclusion rule changed: each table's reference without it ("" when the rule is off).
without_exclusion = {t.table: "" for t in report.tables}
if manifest.exclusion is not None:
    unexcluded = report_tables(count_categories(manifest), manifest.model_copy(update={"exclusion": None}))
    without_exclusion = {t.table: t.reference or "" for t in unexcluded.tables}

# The record (report.json): every number, with the data's and the manifest's sha256. The build
# adds where it was built (commit, lock, date); `fairsite audit verify` recomputes it.
record = build_record(report, manifest, provenance={"commit": None, "dirty": None, "lock_sha256": None})
print(json.dumps(record, ensure_ascii=False, allow_nan=False))
