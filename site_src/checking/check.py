"""Stage 4, check: the run's values against the explainer's ``checks:``.

A check is a Python expression over the values the run defined, e.g.
``abs(p_by_hand - p_library) <= 4 * mc_error(p_library, n_shuffles)``: a hand-written computation
agreeing with ``faircode.significance`` within the Monte Carlo error of its resample count.
The prose is checked too, for numbers typed by hand (``site_src.checking.lint``), and the cited
numbers against the accepted ones (``site_src.checking.snapshot``).
"""

from __future__ import annotations

import ast
import math

from faircode.formatting import did_you_mean
from faircode.tolerances import mc_error  # the checks' Monte Carlo band; its one home
from site_src.sources.collect import Explainer
from site_src.errors import CheckError
from site_src.execution.execute import RunResult, missing_name


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
