"""A report's page (``docs/reports/<slug>/``): its prose with the parts the build makes, and its record.

The prose (``reports/<slug>/report.md``) places the parts with template calls
(`sources.reports.REPORT_FUNCTIONS`): ``{{ report_summary() }}`` (the fields Local Law 144 names),
``{{ report_table("sex") }}`` and each other table, ``{{ report_excluded() }}``,
``{{ report_methods() }}``, ``{{ report_limitations() }}`` and ``{{ report_downloads() }}``;
each is written by a macro of ``templates/report-parts.md.j2`` from the record the run printed
(`report_record`) and the run's values, and every part is placed once (`_Parts.check_placed`).
The page is ``report.md.j2``. Beside it: ``report.json`` (the record, with where the build was
made: commit, uncommitted changes, the lock's sha256, the build's UTC date), ``report.csv`` (its
rows, ``faircode.report.record_csv``) and ``report.py`` (the generated code).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from markupsafe import Markup

from site_src.checking.snapshot import snapshot_path
from site_src.errors import CheckError
from site_src.execution.execute import RunResult
from site_src.provenance import BuildFacts, run_facts
from site_src.rendering.pages import cached_page, page_key, render_prose
from site_src.rendering.references import PageCitations
from site_src.sources.collect import CODE_PLACEHOLDER
from site_src.sources.extract import generated_text
from site_src.sources.reports import CODE, Report

RECORD_JSON = "report.json"
RECORD_CSV = "report.csv"
PAGE_ORDER = 120  # the reports' section comes after the explainers' in the navigation (`mkdocs_hooks.on_nav`)


def report_page(env, r: Report, run: RunResult, out: Path, root: Path, *, facts: BuildFacts, banner=None,
                reuse: bool = True) -> bool:
    """Write report ``r``'s page folder ``out`` from its ``run``, or copy it from the page cache;
    True when it was rendered.

    The cache's key is an explainer page's (`pages.page_key`: the source, the run, the facts the
    page shows...) and the lock's digest, which the record holds.

    Raises
    ------
    SiteError
        Naming ``reports/<slug>/report.md`` (and the line): a problem in the prose, a part
        placed twice or not at all, a run that printed no record.
    """
    key = page_key(r, run, facts=facts, env=env, banner=banner, more=[facts.lock or ""])
    return cached_page(r, out, root, key=key, reuse=reuse, shared=env.globals,
                       render=lambda: _render_report(env, r, run, out, root, facts=facts, banner=banner))


def _render_report(env, r: Report, run: RunResult, out: Path, root: Path, *, facts: BuildFacts, banner) -> None:
    from faircode.report import record_csv  # the record's one CSV writer; faircode.report only when a page renders

    out.mkdir(parents=True, exist_ok=True)
    record = report_record(r, run, facts)
    refs = PageCitations(env.globals.get("bibliography", {}), explainer=r.display_path)
    parts = _Parts(env, r, record, run.values, refs)
    prose = render_prose(env, r, run, {**parts.functions(), "cite": refs.cite})
    parts.check_placed()
    # The blanked-out front matter kept Jinja's line numbers right; drop it and the code's place now.
    prose = re.sub(r"\n{3,}", "\n\n", prose.replace(CODE_PLACEHOLDER, "")).strip()
    (out / RECORD_JSON).write_text(json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n",
                                   encoding="utf-8")
    (out / RECORD_CSV).write_text(record_csv(record), encoding="utf-8")
    (out / CODE).write_text(generated_text(r), encoding="utf-8")
    numbers_rel = f"{r.display_path.rsplit('/', 1)[0]}/{snapshot_path(r).name}"
    page = env.get_template("report.md.j2").render(
        r=r, meta=r.meta, prose=prose, record=record, banner=banner, facts=run_facts(run, root), order=PAGE_ORDER,
        references=refs.further_reading(), numbers_rel=numbers_rel, code_rel=f"reports/{r.slug}/{CODE}")
    (out / "index.md").write_text(page, encoding="utf-8")


def report_record(r: Report, run: RunResult, facts: BuildFacts) -> dict:
    """The record the report's run printed (its last line: ``faircode.report.build_record``'s
    JSON), with where this build was made: the commit, whether the tree had uncommitted changes,
    the sha256 of ``requirements/site.txt`` and the build's UTC date.

    Raises
    ------
    CheckError
        The run's last line is not a report record (the generated code was changed by hand?).
    """
    lines = run.stdout.strip().splitlines()
    try:
        record = json.loads(lines[-1])
        record["project"].update(commit=facts.commit, dirty=facts.dirty, lock_sha256=facts.lock)
    except (IndexError, ValueError, KeyError, TypeError, AttributeError):
        raise CheckError(f"its code ({r.slug}/{CODE}) did not print the report's record as its last line; the code is "
                         "generated from the manifest: run `fairsite build` again, and do not edit it",
                         explainer=r.display_path) from None
    record["date"] = facts.date[:10]
    return record


class _Parts:
    """The parts of a report the prose places (`sources.reports.REPORT_FUNCTIONS`), each written once from the
    record and the run's values by a macro of ``report-parts.md.j2``."""

    def __init__(self, env, r: Report, record: dict, values: dict, refs: PageCitations):
        self.r, self.record, self.values, self.refs = r, record, values, refs
        self.macros = env.get_template("report-parts.md.j2").module
        self.placed: list[str] = []

    def _once(self, name: str) -> None:
        if name in self.placed:
            raise CheckError(f"{name} is placed twice; place each part of the report once", explainer=self.r.display_path)
        self.placed.append(name)

    def functions(self) -> dict:
        def part(name: str, macro):
            def place(*args, **kwargs) -> Markup:
                self._once(f"{name}({', '.join(repr(a) for a in args)})")
                return Markup(macro(*args, **kwargs))
            return place

        from faircode.report import FOUR_FIFTHS  # the line the library marks rows against
        from faircode.significance import VERDICTS  # each verdict's words

        m, record, values, cite = self.macros, self.record, self.values, self.refs.cite
        outcome = self.r.meta.outcome or ("selected" if record["outcome"]["kind"] == "decision"
                                          else "scored above the median")
        return {"report_summary": part("report_summary", lambda: m.summary(record, outcome)),
                "report_table": part("report_table", lambda key: m.table(self._table(key), record, values, VERDICTS,
                                                                          FOUR_FIFTHS)),
                "report_excluded": part("report_excluded", lambda: m.excluded(record)),
                "report_methods": part("report_methods", lambda: m.methods(record, cite)),
                "report_limitations": part("report_limitations", lambda: m.limitations(record, values, cite)),
                "report_downloads": part("report_downloads", lambda: m.downloads(record, self.r.slug))}

    def _table(self, key) -> dict:
        for table in self.record["tables"]:
            if table["table"] == key:
                return table
        from faircode.formatting import did_you_mean

        names = [t["table"] for t in self.record["tables"]]
        raise CheckError(f"report_table({key!r}): no such table{did_you_mean(str(key), names)}; the tables are "
                         f"{', '.join(repr(n) for n in names)}", explainer=self.r.display_path)

    def wanted(self) -> list[str]:
        """Every call a complete report makes: the summary, each table, the excluded categories
        when any is, the methods, the limitations and the downloads (the law's tables and what a
        reader needs to check them)."""
        tables = [f"report_table({t['table']!r})" for t in self.record["tables"]]
        excluded = ["report_excluded()"] if any(row["excluded"] for t in self.record["tables"] for row in t["rows"]) else []
        return ["report_summary()", *tables, *excluded, "report_methods()", "report_limitations()", "report_downloads()"]

    def check_placed(self) -> None:
        missing = [call for call in self.wanted() if call not in self.placed]
        if missing:
            raise CheckError(f"the report does not place {', '.join(missing)}; add {{{{ {missing[0]} }}}} to the prose "
                             "where it belongs (a report shows every table and says how they were made)",
                             explainer=self.r.display_path)

