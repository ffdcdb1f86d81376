"""Stages 1 and 2 for audit reports: collect ``reports/<slug>/``, and generate each report's code.

A report is a page the build runs and checks like an explainer (issue 46), made of two files the
user writes: ``reports/<slug>/report.yaml``, the report manifest (``faircode.report``: the data,
the outcome, the categories, the exclusion rule, the margin), and ``reports/<slug>/report.md``,
front matter and prose, Markdown that is also a Jinja template, with no code block. The code is
generated from the manifest (`report_code`): a short script that calls ``faircode.report``,
binds the values the page cites, and prints the report's record (``report.json``); the extract
stage writes it to ``reports/<slug>/report.py`` with a header saying it is generated. From there
the report is an `Explainer` to the stages after this one (`Report`): its code runs in isolation
through the execute stage, its cache keys on the manifest and the data file (declared as its
``inputs``), its cited numbers are accepted in ``reports/<slug>/report.numbers.json``, and its
prose is linted for numbers typed by hand; the render stage gives it a template of its own
(``rendering.report_page``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from faircode.formatting import did_you_mean
from site_src.errors import ConfigError, SiteError
from site_src.sources.collect import (CODE_MARKER, CODE_PLACEHOLDER, SLUG, Check, Explainer, FrontMatter, NonEmpty,
                                      _fenced_blocks, _same_titles, read_source)

REPORTS = "reports"  # beside explainers/, at the repository root
MANIFEST = "report.yaml"
PAGE = "report.md"
CODE = "report.py"
# What a report's prose calls to place the parts the build makes (`rendering.report_page`), beside
# an explainer's `PROSE_FUNCTIONS` (cite...): the summary, each table, the excluded categories,
# the methods, the limitations and the record's downloads.
# What `fairsite audit new` writes for the author to replace: the subtitle, the summary, the
# context's and the findings' stand-ins (`fairsite check` refuses a page that still has one:
# `checking.lint.scaffold_text`).
REPORT_STAND_INS = ("Write the question this report answers, in one line.",
                    "Write what the report finds, in two sentences a reader can quote.",
                    "Say what the tool is, who it decided on and for what, where the data come from, and why they are "
                    "the right data to audit it with.",
                    "Say what the tables show and what they do not, citing the run's values; make each sentence that "
                    "depends on the data conditional on it.")
REPORT_FUNCTIONS = ("report_summary", "report_table", "report_excluded", "report_methods", "report_limitations",
                    "report_downloads")


class ReportFrontMatter(FrontMatter):
    """The front matter of a report's page: an explainer's, with ``checks:`` optional (the numbers
    come from ``faircode.report``, itself tested against independent oracles) and ``outcome``, the
    words the verdicts use for the favourable outcome ("rated low risk"; default "selected" for a
    decision, "scored above the median" for a score)."""

    checks: list[Check] = Field(default_factory=list)
    outcome: NonEmpty | None = None


@dataclass(frozen=True)
class Report(Explainer):
    """A report's page (``reports/<slug>/report.md``) with the code its manifest generates.

    ``manifest`` is ``reports/<slug>/report.yaml``. The page's ``meta.inputs`` declare the manifest
    and the data file the manifest names (when it is inside the repository), so the run cache keys
    on both, whatever reads them (pyarrow reads Parquet where Python's audit hook does not see it).
    """

    manifest: Path = Path(MANIFEST)
    # The values every report's page shows through its template, compared with the accepted ones.
    cited_always: ClassVar[tuple[str, ...]] = ("n_rows", "tables", "reference", "n_unknown", "excluded", "verdicts")

    @property
    def display_path(self) -> str:
        return f"{REPORTS}/{self.slug}/{PAGE}"

    @property
    def manifest_path(self) -> str:
        """``reports/<slug>/report.yaml``, as the repository names it."""
        return f"{REPORTS}/{self.slug}/{MANIFEST}"

    @property
    def root(self) -> Path:
        return self.path.resolve().parents[2]

    @property
    def code_path(self) -> Path:
        return self.path.with_name(CODE)

    @property
    def code_source(self) -> Path:
        return self.code_path


def collect_reports(root: Path, explainers: list[Explainer]) -> list[Report]:
    """Every report of ``root/reports/``: each folder holding a ``report.md`` or a ``report.yaml``.

    Parameters
    ----------
    root : Path
        The repository root; no ``reports/`` folder means no report.
    explainers : list of Explainer
        The collected explainers: a report may not take an explainer's name (the runs, caches and
        ``fairsite accept NAME`` would not tell them apart) nor its title.

    Returns
    -------
    list of Report
        In the order of their names.

    Raises
    ------
    ConfigError
        One error listing every problem of every report: a folder whose name is not a slug, a page
        without its manifest or a manifest without its page, a code block in the page (the code is
        generated), an explainer's name or title taken, a front matter field that does not validate.
    """
    folder = Path(root) / REPORTS
    if not folder.is_dir():
        return []
    names = {e.slug: e.display_path for e in explainers}
    problems: list[str] = []
    reports: list[Report] = []
    for where in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        page, manifest = where / PAGE, where / MANIFEST
        shown = f"{REPORTS}/{where.name}"
        if not page.exists() and not manifest.exists():
            continue  # not a report (yet): nothing to build
        found = _folder_problems(where, names, shown=shown)
        try:
            report = parse_report(page) if not found else None
        except ConfigError as err:
            found.append(str(err))
            report = None
        problems += found
        if report is not None:
            reports.append(report)
    problems += [p for p in _same_titles([*explainers, *reports]) if p.startswith(f"{REPORTS}/")]
    if problems:
        raise ConfigError("\n".join(problems))
    return reports


def _folder_problems(where: Path, names: dict[str, str], *, shown: str) -> list[str]:
    """What keeps a report folder from being a report: its name, a missing file, a name taken."""
    slug = where.name
    problems = []
    if not SLUG.match(slug):
        problems.append(f"{shown}: a report's folder name must be a slug (lowercase words of a-z and 0-9 joined by "
                        f"'-': the page's address), got {slug!r}")
    if not (where / MANIFEST).exists():
        problems.append(f"{shown}/{PAGE}: no {MANIFEST} beside it (the report's manifest: its data, outcome and "
                        f"categories); `fairsite audit new {slug} --data FILE` writes one to complete")
    if not (where / PAGE).exists():
        problems.append(f"{shown}/{MANIFEST}: no {PAGE} beside it (the report's page: its title, context and "
                        f"findings around the tables); `fairsite audit new` writes both, or copy "
                        f"{REPORTS}/compas-ll144/{PAGE}")
    if slug in names:
        problems.append(f"{shown}: an explainer has this name ({names[slug]}); a report needs a name of its own "
                        f"(the runs, the caches and `fairsite accept {slug}` name one page each)")
    return problems


def parse_report(path: Path) -> Report:
    """Read one report's page (``reports/<slug>/report.md``) and generate its code.

    Raises
    ------
    ConfigError
        Listing every problem of the page (its front matter, a code block in it).
    """
    slug = path.parent.name
    shown = f"{REPORTS}/{slug}/{PAGE}"
    data, lines, end, meta, problems = read_source(path, ReportFrontMatter, shown=shown)
    blocks = [b for b in _fenced_blocks(lines, start=end + 1, shown=shown) if b[2] == CODE_MARKER]
    if blocks:
        problems.append(f"{shown}:{blocks[0][0] + 1}: a report has no ```{CODE_MARKER} block: its code is generated "
                        f"from {MANIFEST}; remove the block (the prose cites the run's values, e.g. "
                        "{{ n_rows | number }})")
    if meta is not None and meta.related:
        problems += _related_problems(meta.related, path.parents[2], shown=shown)
    if problems:
        raise ConfigError("\n".join(problems))
    manifest = path.with_name(MANIFEST)
    inputs = [f"{REPORTS}/{slug}/{MANIFEST}", *_data_inputs(manifest, path.parents[2]), *(meta.inputs or [])]
    meta = meta.model_copy(update={"inputs": list(dict.fromkeys(inputs))})
    # The front matter is blanked line for line, so Jinja's line numbers are the file's; the
    # code's place is at the end of the page (the page's template shows no code).
    prose = "\n".join([""] * (end + 1) + lines[end + 1:] + [CODE_PLACEHOLDER])
    code = report_code(slug, meta.outcome)
    # Its errors are named by the generated file's own lines (`code_source`): it has no source lines.
    return Report(slug=slug, path=path, meta=meta, prose=prose, code=code, code_line=report_header(slug).count("\n") + 1,
                  digest=hashlib.sha256(data).hexdigest(), front_matter="\n" + "\n".join(lines[1:end]),
                  manifest=manifest)


def _related_problems(related: list[str], root: Path, *, shown: str) -> list[str]:
    explainers = {p.stem for p in (root / "explainers").glob("*.md")}
    return [f"{shown}: related: no explainer '{r}'{did_you_mean(r, explainers)}" for r in related
            if r not in explainers]


def _data_inputs(manifest: Path, root: Path) -> list[str]:
    """The data file (or folder) the manifest names, relative to the repository, for the cache's
    key; none when the manifest cannot be read yet or names data outside the repository (its run
    then reads a file the cache cannot key, and runs every build; the run reports a bad manifest)."""
    from faircode.manifest import load_yaml

    try:
        raw = load_yaml(manifest.read_text(encoding="utf-8"))
        file = Path(str(raw["data"]["file"]))
    except Exception:  # noqa: BLE001 - the run loads the manifest and names each of its problems
        return []
    full = (file if file.is_absolute() else root / file).resolve()
    try:
        return [full.relative_to(root.resolve()).as_posix()]
    except ValueError:
        return []


# The generated code: what a reader runs, and what the build runs. Its top-level values are the
# page's (`Report.cited_always`, and any the prose cites); it prints the record as one line of JSON.
_CODE = '''\
import json
from dataclasses import asdict

from faircode.report import (FOUR_FIFTHS, ExclusionRule, build_record, count_categories, load_report_manifest,
                             report_tables)
from faircode.significance import VERDICTS

# Its paths (the manifest's, the data file's) are from the repository's root, where it runs.
manifest = load_report_manifest("{manifest}", root=".")
report = report_tables(count_categories(manifest), manifest)
# How the verdicts in words name the favourable outcome ({page}'s front matter: outcome).
OUTCOME = {outcome}


def applicable(row):
    """A row's fields that apply to it: a reference has no test, an excluded category no ratio."""
    return {{k: v for k, v in asdict(row).items() if k not in ("table", "category") and v is not None and v == v}}


# The values the page cites (its prose may cite them too): each table's rows by category and
# field, e.g. tables["race/ethnicity"]["Hispanic"]["impact_ratio"]; each table's reference,
# unknowns, excluded categories, categories by verdict, and each verdict in a sentence.
n_rows = report.n_rows
rate_name = report.rate_name
alpha = report.alpha  # each test's level; the intervals' confidence is 1 - alpha
four_fifths = FOUR_FIFTHS
under_share = manifest.exclusion.under_share if manifest.exclusion is not None else 0.0  # 0: the rule is off
law_share = ExclusionRule.model_fields["under_share"].default  # the law's threshold of a small category
tables = {{t.table: {{r.category: applicable(r) for r in t.rows}} for t in report.tables}}
reference = {{t.table: t.reference or "" for t in report.tables}}
n_unknown = {{t.table: t.n_unknown for t in report.tables}}
excluded = {{t.table: [r.category for r in t.excluded] for t in report.tables}}
verdicts = {{t.table: {{v: [r.category for r in t.rows if r.verdict == v] for v in VERDICTS}} for t in report.tables}}
sentences = {{t.table: {{r.category: report.sentence(t.table, r.category, outcome=OUTCOME) for r in t.rows if r.tested}}
             for t in report.tables}}

# What the exclusion rule changed: each table's reference without it ("" when the rule is off).
without_exclusion = {{t.table: "" for t in report.tables}}
if manifest.exclusion is not None:
    unexcluded = report_tables(count_categories(manifest), manifest.model_copy(update={{"exclusion": None}}))
    without_exclusion = {{t.table: t.reference or "" for t in unexcluded.tables}}

# The record (report.json): every number, with the data's and the manifest's sha256. The build
# adds where it was built (commit, lock, date); `fairsite audit verify` recomputes it.
record = build_record(report, manifest, provenance={{"commit": None, "dirty": None, "lock_sha256": None}})
print(json.dumps(record, ensure_ascii=False, allow_nan=False))
'''


def report_code(slug: str, outcome: str | None) -> str:
    """The code a report's manifest generates (without its header, `report_header`): it loads
    ``reports/<slug>/report.yaml``, computes the tables with ``faircode.report``, binds the
    values the page cites and prints the record (``report.json`` without the build's provenance)
    as its last line."""
    said = repr(outcome) if outcome else '"selected" if manifest.outcome.decision is not None else "scored above the median"'
    return _CODE.format(manifest=f"{REPORTS}/{slug}/{MANIFEST}", page=PAGE, outcome=said)


def report_header(slug: str) -> str:
    """The lines a report's generated file starts with: what it is generated from, and how to run it."""
    return (f"# Generated from {REPORTS}/{slug}/{MANIFEST} by `fairsite build`; do not edit (edit the manifest, or\n"
            f"# the verdicts' words in {REPORTS}/{slug}/{PAGE}). Run it from the repository root:\n"
            f"#   python {REPORTS}/{slug}/{CODE} > report.json\n"
            "# It prints the report's record, report.json without where it was built (commit, lock, date).\n")


def manifest_problems(error: SiteError) -> list[SiteError]:
    """A report's run that stopped on its manifest (``faircode.report`` raised ManifestError, every
    problem named ``reports/<slug>/report.yaml:LINE: field: ...`` with the fix) as the manifest's
    problems, one each, without the run's traceback, which would say each a second time; any other
    error as it is."""
    message = error.message
    if error.kind != "execution" or not str(error.explainer or "").startswith(f"{REPORTS}/") or \
            not message.startswith("raised ManifestError"):
        return [error]
    head = message.split("\nTraceback (most recent call last):", 1)[0]
    problems = [line.strip()[2:] for line in head.splitlines()[1:] if line.strip().startswith("- ")]
    return [ConfigError(p) for p in problems] or [error]
