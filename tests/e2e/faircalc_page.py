"""What the calculator's browser tests share: a blank page with FairCalc's scripts loaded (no site
build, no server: a request would be aborted and fail the test), calls into it in one round trip,
and the relative error the agreement with the library is measured in."""

from __future__ import annotations

import contextlib
import math
import re

from conftest import REPO, Guard

ASSETS = REPO / "site_src" / "templates" / "assets"
# FairCalc and the modules it carries, in the order the site loads them (assets/pages.js).
SCRIPTS = ("faircalc.js", "faircalc-core.js", "faircalc-exact.js", "faircalc-power.js", "faircalc-groups.js",
           "faircalc-text.js", "faircalc-equivalence.js")
# The interactive figures, as the site loads them: what the page scripts share, FairCalc's exact
# power (faircalc-power.js and what it needs), how numbers are written, the figures.
FIGURE_SCRIPTS = ("helpers.js", "faircalc.js", "faircalc-core.js", "faircalc-exact.js", "faircalc-power.js",
                  "faircalc-text.js", "faircalc-figures.js")


@contextlib.contextmanager
def blank_page(browser, scripts=SCRIPTS, html: str = "", **context_options):
    """A blank page holding ``html`` with ``scripts`` (names in ``ASSETS``) loaded; on leaving,
    asserts that no request left the page and nothing went wrong in the browser."""
    guard = Guard()
    context = browser.new_context(**context_options)
    context.route("**/*", guard.route)
    page = context.new_page()
    page.on("console", guard.console)
    page.on("pageerror", lambda exc: guard.errors.append(f"uncaught: {exc}"))
    page.set_content(f"<!doctype html><html><head><title>FairCalc</title></head><body class='md-typeset'>{html}</body></html>")
    for name in scripts:
        page.add_script_tag(content=(ASSETS / name).read_text(encoding="utf-8"))
    try:
        yield page
    finally:
        context.close()
    assert not guard.outside, f"requests left the page: {guard.outside}"
    assert not guard.errors, f"errors in the browser: {guard.errors}"


def call(page, name: str, cases: list) -> list:
    """``window[module][function](...case)`` for every case, ``name`` "Module.function" (or a
    FairCalc function's name), in one round trip: {"ok": result} or {"error": "Name: message"}."""
    return page.evaluate(
        """([name, cases]) => {
            const [module, fn] = name.includes(".") ? name.split(".") : ["FairCalc", name];
            return cases.map(c => {
                try { return {ok: window[module][fn](...c)}; } catch (e) { return {error: e.name + ": " + e.message}; }
            });
        }""", [name, cases])


def ok(results: list) -> list:
    bad = [r["error"] for r in results if "error" in r]
    assert not bad, f"FairCalc raised on valid input: {bad[:3]}"
    return [r["ok"] for r in results]


def rel(js: float, py: float) -> float:
    """Relative error; 0 when both are the same infinity or both NaN; an absolute floor of 1e-12
    for quantities that are zero up to rounding (an interval bound at a rate of 0)."""
    if math.isnan(py) or math.isnan(js):
        return 0.0 if math.isnan(py) and math.isnan(js) else math.inf
    if math.isinf(py) or math.isinf(js):
        return 0.0 if js == py else math.inf
    return abs(js - py) / max(abs(py), 1e-12)


def library_words(sentence: str) -> str:
    """The library's sentence, as the calculator must write it (word for word, since faircode's
    format_ratio writes a limit of -0.0 as "0.00")."""
    return sentence
