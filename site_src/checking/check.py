"""Stage 4, check: the run's values against the explainer's ``checks:``; and the stage as a build runs it (`Checker`).

A check is a Python expression over the values the run defined, e.g.
``abs(p_by_hand - p_library) <= 4 * mc_error(p_library, n_shuffles)``: a hand-written computation
agreeing with ``faircode.significance`` within the Monte Carlo error of its resample count.
The prose is checked too, for numbers typed by hand (``site_src.checking.lint``), and the cited
numbers against the accepted ones (``site_src.checking.snapshot``).
"""

from __future__ import annotations

import ast
import enum
import math
from dataclasses import dataclass, field
from pathlib import Path

from faircode.formatting import did_you_mean
from faircode.tolerances import mc_error  # the checks' Monte Carlo band; its one home
from site_src.checking import lint, snapshot
from site_src.errors import CheckError, SiteError
from site_src.execution import cache
from site_src.execution.execute import RunResult, missing_name
from site_src.sources.collect import Explainer


_CHECK_BUILTINS = {
    "abs": abs, "min": min, "max": max, "round": round, "len": len, "all": all, "any": any, "sum": sum,
    "math": math, "mc_error": mc_error, "True": True, "False": False, "None": None,
}


def run_checks(explainer: Explainer, run: RunResult) -> list[CheckError]:
    """Evaluate each ``checks:`` expression over the run's values; one error per failure, named
    by the source line of the entry's ``assert:`` (where the expression to read or mend is)."""
    errors = []

    def problem(i: int, message: str) -> None:
        # The line is looked up only for a failing check: finding it composes the YAML again. The
        # entry's own line when its expression is not under `assert:` (pydantic takes `expr:` too).
        line = explainer.front_matter_line("checks", i, "assert") or explainer.front_matter_line("checks", i)
        errors.append(CheckError(message, explainer=explainer.display_path, line=line))

    for i, check in enumerate(explainer.meta.checks):
        try:
            tree = ast.parse(check.expr, mode="eval")
        except SyntaxError as err:
            problem(i, f"check '{check.name}': `assert:` is not a Python expression ({err.msg}, "
                       f"column {err.offset}): {check.expr}")
            continue
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        missing = sorted(names - set(run.values) - set(_CHECK_BUILTINS))
        if missing:
            hints = "; ".join(missing_name(m, run) + did_you_mean(m, run.values) for m in missing)
            # A fresh user tried float(): the functions a check may call are few, and named here.
            problem(i, f"check '{check.name}': {hints} (besides the run's values, a check may use "
                       f"{', '.join(sorted(_CHECK_BUILTINS))}; compute anything else in the code)")
            continue
        scope = {"__builtins__": {}, **_CHECK_BUILTINS, **run.values}
        try:
            ok = eval(compile(check.expr, f"<check {check.name}>", "eval"), scope)  # noqa: S307 - repo-authored
        except Exception as exc:  # noqa: BLE001 - reported with the check's name
            problem(i, f"check '{check.name}' could not be evaluated: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(ok, bool):
            problem(i, f"check '{check.name}': `assert:` must be a true/false test, got {type(ok).__name__} {ok!r}")
        elif not ok:
            shown = ", ".join(f"{n} = {run.values[n]!r}" for n in sorted(names & set(run.values)))
            problem(i, f"check '{check.name}' failed: {check.expr}  [{shown}]")
    return errors


def unexpected_warnings(explainer: Explainer, run: RunResult) -> list[CheckError]:
    """One error per warning the run issued that no ``warnings:`` entry of the front matter
    expects (a regular expression searched in ``Category: message``): a new warning fails
    ``fairsite check``, so a page never shows a number NumPy warned about unnoticed."""
    patterns = [w.match for w in explainer.meta.warnings]
    several = len(run.cells) > 1
    errors = []
    for k, cell in enumerate(run.cells, start=1):
        for w in cell.warnings:
            if not w.allowed_by(patterns):
                where = f"cell {k}, {w.where}" if several else w.where
                errors.append(CheckError(
                    f"the code warned ({where}): {w.text()}; fix the cause, or expect it in the front matter "
                    f"(warnings: - match: <regular expression>, reason: <why it is expected>)",
                    explainer=explainer.display_path))
    return errors


class NumbersMode(enum.Enum):
    """What a build does with the numbers the prose cites, against the accepted ones in
    ``explainers/<slug>.numbers.json``: each member is the rule of the command named after it."""

    BUILD = "build"  # drift fails the build; an explainer with none accepted yet builds, with a note
    SERVE = "serve"  # drift is a banner at the top of the page and a note; serving goes on
    CHECK = "check"  # drift and none accepted yet both fail (`fairsite check`, `publish`)
    ACCEPT = "accept"  # record this run's numbers (for `BuildOptions.accept`); the others as BUILD


@dataclass
class Checked:
    """What stage 4 found, and what it leaves for the end of a build that succeeds."""

    passed: cache.PassedChecks  # explainers whose checks all passed, saved only if the build succeeds
    errors: list[SiteError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # unaccepted (or, in serve, drifted) numbers
    banners: dict[str, snapshot.NumbersProblem] = field(default_factory=dict)  # serve: slug -> its page's banner
    to_accept: list[tuple[Explainer, RunResult]] = field(default_factory=list)  # written once the build succeeds


class Checker:
    """Stage 4: the datasheets' published facts (counted beside the runs); each explainer's prose
    for bare numbers, its ``checks:`` over its run's values, and its cited numbers against the
    accepted ones, by the rule of ``numbers`` (``accept``: the slugs `accept` names; empty: all). One explainer at a time (`one`, as its run
    ends when pages stream), then all of it in the explainers' order (`merge`): what it finds
    does not depend on the order of the runs."""

    def __init__(self, cache_dir: Path, *, numbers: NumbersMode, accept: frozenset[str] = frozenset(),
                 use_cache: bool = True):
        self.numbers, self.accept = numbers, accept
        self.passed = cache.PassedChecks(
            cache_dir, enabled=use_cache and numbers in (NumbersMode.BUILD, NumbersMode.SERVE))
        self._parts: dict[str, Checked] = {}

    def one(self, e: Explainer, run: RunResult) -> Checked:
        """Explainer ``e``'s prose for bare numbers, its ``checks:`` over ``run`` and its cited
        numbers against the accepted ones; what was found (kept for `merge`)."""
        part = Checked(self.passed)
        self._parts[e.slug] = part
        key = self.passed.key(e.digest, run.out_dir / cache.ENTRY, snapshot.snapshot_path(e))
        if self.passed.holds(e.slug, key):
            return part  # the same source, run and accepted numbers passed every check before
        found = lint.bare_numbers(e) + run_checks(e, run)
        if self.numbers is NumbersMode.CHECK:  # `build` names them in the run's warnings instead
            found += unexpected_warnings(e, run)
            found += lint.scaffold_text(e)  # a draft builds and serves; it is not published
        part.errors += found
        if self.numbers is NumbersMode.ACCEPT and (not self.accept or e.slug in self.accept):
            part.to_accept.append((e, run))
            return part
        problem = snapshot.numbers_problem(e, run)
        if problem is None:
            if not found:
                self.passed.add(e.slug, key)
        # `accept` builds the explainers it does not accept as `build` does.
        elif self.numbers is NumbersMode.CHECK or (problem.kind != "unaccepted"
                                                      and self.numbers is not NumbersMode.SERVE):
            part.errors.append(CheckError(problem.text, explainer=e.display_path))
        else:
            part.notes.append(f"{e.display_path}: {problem.text}")
            if problem.kind != "unaccepted":
                part.banners[e.slug] = problem
        return part

    def merge(self, explainers: list[Explainer], runs: list[RunResult],
              published_problems: list[SiteError]) -> Checked:
        """The whole stage: the published facts' problems, then each explainer's in the
        explainers' order (`one`, where it has not run yet; a failed run's prose is still read
        for bare numbers)."""
        by_slug = {r.slug: r for r in runs}
        # The datasheets' published facts against the data (counts exact), with their citations.
        checked = Checked(self.passed, errors=list(published_problems))
        for e in explainers:
            run = by_slug.get(e.slug)
            if run is None:  # its run failed (reported above); its prose is still checked
                checked.errors += lint.bare_numbers(e)
                continue
            part = self._parts.get(e.slug)
            if part is None:
                part = self.one(e, run)
            checked.errors += part.errors
            checked.notes += part.notes
            checked.banners.update(part.banners)
            checked.to_accept += part.to_accept
        return checked
