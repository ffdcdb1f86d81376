"""The prose rules of the check stage and the filters that format cited numbers."""

from __future__ import annotations

import pytest

from site_src.checking.lint import _bare_tokens
from site_src.filters import gap, interval, mc_percent, number, percent


@pytest.mark.parametrize("text, bare", [
    ("We used 100 rows", ["100"]),
    ("p = .05 is common", [".05"]),
    ("a gap of 9.9e-2", ["9.9e-2"]),
    ("We ran 2000 shuffles", ["2000"]),
    ("a gap of 1/10 of the rate", ["10"]),
    ("### Women were flagged 9.9 points less", ["9.9"]),
    ("flagged 12% of women and 1,000 men", ["12%", "1,000"]),
    ("a gap of −9.9 points", ["−9.9"]),
    ("In 2016 ProPublica reported", []),
    ("census data from 1994", []),
    ("Fisher (1935) and Good (2005, chapter 3)", []),
    ("step 3 of two", []),
    ('the site writes "p < 1/n"', []),
    ("strategy S2 and model M1", []),
])
def test_bare_numbers_in_a_line(text, bare):
    assert _bare_tokens(text, years_ok=False) == bare


def test_years_are_fine_in_a_reading_list():
    assert _bare_tokens("Phipson and Smyth, SAGMB, 2010.", years_ok=True) == []
    assert _bare_tokens("Phipson and Smyth, SAGMB, 2010.", years_ok=False) == ["2010"]


def test_filters_format_rates_gaps_and_intervals():
    assert percent(0.243) == "24.3%"
    assert gap(-0.1963) == "\u221219.6 percentage points"
    assert gap(0.0004) == "0.0 percentage points"  # no sign on a rounded zero
    assert interval((-0.22, 0.011)) == "[\u221222.0, +1.1] percentage points"
    assert number(6513) == "6,513"


@pytest.mark.parametrize("shown, expected", [
    (lambda: percent(-0.00001), "0.0%"),
    (lambda: percent(-0.0), "0.0%"),
    (lambda: percent(-0.0004, 0), "0%"),
    (lambda: number(-0.04, 1), "0.0"),
    (lambda: number(-0.4), "0"),
    (lambda: number(-0.0), "0"),
    (lambda: gap(-0.0000001), "0.0 percentage points"),
    (lambda: interval((-0.00001, 0.5), unit="percent"), "[0.0%, 50.0%]"),
    (lambda: interval((-0.001, 0.5), unit="ratio"), "[0.0, 0.5]"),
    (lambda: mc_percent(-0.0, 100, 1), "0.0% ± 1.0"),
    # a value that does not round to zero keeps its true minus sign
    (lambda: percent(-0.0005), "−0.1%"),
    (lambda: number(-0.06, 1), "−0.1"),
])
def test_a_value_that_rounds_to_zero_is_never_a_negative_zero(shown, expected):
    """Issue 25.15d: "−0.0%" tells a reader nothing the rounding did not hide."""
    assert shown() == expected


@pytest.mark.parametrize("bad", [float("inf"), float("-inf")])
@pytest.mark.parametrize("filter_name, source", [
    ("percent", "{{ ratio | percent }}"),
    ("number", "{{ ratio | number(2) }}"),
    ("gap", "{{ ratio | gap }}"),
    ("signed", "{{ ratio | signed }}"),
    ("interval", "{{ (0.1, ratio) | interval }}"),
])
def test_an_infinite_value_is_refused_naming_the_filter_and_the_variable(bad, filter_name, source):
    """Issue 25.15d: inf reached the prose as "inf%"; a filter refuses it, naming itself and the
    variable (the build adds the explainer and the line: test_site_build)."""
    import jinja2

    from site_src.filters import FILTERS

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, loader=jinja2.DictLoader({"explainers/x.md": source}))
    env.filters.update(FILTERS)
    with pytest.raises(ValueError, match=rf"{filter_name} filter got -?inf.* in explainers/x\.md: .*infinite") as err:
        env.get_template("explainers/x.md").render(ratio=bad)
    if filter_name != "interval":  # the pair is made in the template: no variable holds it
        assert "for `ratio`" in str(err.value)


def test_filters_name_what_they_expected():
    with pytest.raises(TypeError, match="percent filter expects a number"):
        percent("high")


def _explainer(tmp_path, prose: str):
    from site_src.sources.collect import parse_explainer

    path = tmp_path / "explainers" / "probe.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\ntitle: Probe\nsubtitle: Probe?\nsummary: A probe.\nchecks:\n  - name: t\n    assert: x == 1\n"
                    "---\n" + prose + "\n\n```python explainer\nx = 1\n```\n")
    return parse_explainer(path)


def test_numbers_typed_inside_template_expressions_are_bare(tmp_path):
    from site_src.checking.lint import bare_numbers

    e = _explainer(tmp_path, 'We ran {{ 2000 }} shuffles at {{ 0.05 | percent }}.\n'
                             '{{ figure(1, alt="the 95% interval") }}\n'
                             'Allowed: {{ (100 * x) | number(1) }}, {{ rows[0] }}, {{ x | percent(0) }}.')
    found = sorted(str(err).split("bare number ")[1].split(" ")[0] for err in bare_numbers(e))
    assert found == ["'0.05'", "'2000'", "'95%'"]


def test_a_failing_check_names_the_source_and_the_line_of_its_assert(tmp_path):
    # Each way a `checks:` entry can fail names the file and the line of that entry's `assert:`
    # (issue 26: a fresh user could not tell which of twenty entries had failed, nor where).
    from types import SimpleNamespace

    from site_src.checking.check import run_checks
    from site_src.sources.collect import parse_explainer

    source = tmp_path / "explainers" / "lines.md"
    source.parent.mkdir()
    source.write_text("\n".join([
        "---",                                   # 1
        "title: Lines",                          # 2
        "subtitle: Where?",                      # 3
        "summary: Each check by its line.",      # 4
        "checks:",                               # 5
        "  - name: holds",                       # 6
        "    assert: x == 1",                    # 7
        "  - name: fails",                       # 8
        "    assert: x == 2",                    # 9
        "  - assert: y > 0",                     # 10: assert written first
        "    name: undefined",                   # 11
        "  - name: not python",                  # 12
        "    assert: x ==",                      # 13
        "  - name: not true or false",           # 14
        "    assert: x + 1",                     # 15
        "  - name: raises",                      # 16
        "    assert: x / 0 > 1",                 # 17
        "---",
        "",
        "```python explainer",
        "x = 1",
        "```",
        ""]), encoding="utf-8")
    errors = run_checks(parse_explainer(source), SimpleNamespace(values={"x": 1}, unpassed={}))
    assert [str(e).split(" check ")[0] for e in errors] == [
        f"explainers/lines.md:{n}:" for n in (9, 10, 13, 15, 17)]
    assert [e.message.split("'")[1] for e in errors] == ["fails", "undefined", "not python", "not true or false",
                                                         "raises"]


def test_a_check_calling_a_function_it_may_not_use_is_told_which_it_may(tmp_path):
    # A fresh user wrote `float('nan')` in an `assert:` and read only "not a value the run defined".
    from types import SimpleNamespace

    from site_src.checking.check import _CHECK_BUILTINS, run_checks
    from site_src.sources.collect import parse_explainer

    source = tmp_path / "explainers" / "calls.md"
    source.parent.mkdir()
    source.write_text("\n".join([
        "---", "title: Calls", "subtitle: Which?", "summary: Calls.", "checks:",
        "  - name: uses float", "    assert: float(x) == 1.0", "  - name: uses abs", "    assert: abs(x) == 1",
        "---", "", "```python explainer", "x = 1", "```", ""]), encoding="utf-8")
    errors = run_checks(parse_explainer(source), SimpleNamespace(values={"x": 1}, unpassed={}))
    assert len(errors) == 1 and "'float' is not a name the code defines" in errors[0].message
    listed = errors[0].message.split("a check may use ", 1)[1]
    assert all(name in listed for name in ("abs", "min", "max", "round", "math")) and "float" not in listed
    assert set(_CHECK_BUILTINS) >= {"abs", "min", "max", "round", "math"}  # the ones the message names exist


def test_a_check_citing_a_table_the_code_defined_is_told_the_run_does_not_pass_it(tmp_path):
    # A fresh user's check on a DataFrame the code defined was told it was "not a value the run
    # defined": false. The run records what it does not pass (`_runner._unpassed`).
    from types import SimpleNamespace

    import pandas as pd

    from site_src.checking.check import run_checks
    from site_src.execution._runner import _unpassed
    from site_src.sources.collect import parse_explainer

    source = tmp_path / "explainers" / "table.md"
    source.parent.mkdir()
    source.write_text("\n".join([
        "---", "title: Table", "subtitle: Which?", "summary: A table.", "checks:",
        "  - name: the table has rows", "    assert: len(table) > 0",
        "---", "", "```python explainer", "table = None", "```", ""]), encoding="utf-8")
    namespace = {"table": pd.DataFrame({"a": [1]}), "pd": pd, "n": 3, "_private": pd.DataFrame()}
    unpassed = _unpassed(namespace)
    assert unpassed == {"table": "DataFrame"}  # not the module, not the number, not a private name
    errors = run_checks(parse_explainer(source), SimpleNamespace(values={"n": 3}, unpassed=unpassed))
    assert len(errors) == 1
    assert ("'table' is a value the code defined (of type DataFrame) that the run does not pass: the run passes "
            "only its numbers") in errors[0].message


def test_a_bare_year_or_a_number_in_a_heading_gets_advice_of_its_own(tmp_path):
    # Issue 26, a fresh user: "ProPublica's 2016 analysis" and a number in a heading were told to
    # "cite the run's value, e.g. {{ name | percent }}", which is no help for a year, and in a
    # heading says nothing of its anchor.
    from site_src.checking.lint import bare_numbers
    from site_src.sources.collect import parse_explainer

    source = tmp_path / "explainers" / "advice.md"
    source.parent.mkdir()
    source.write_text("\n".join([
        "---", "title: Advice", "subtitle: Which?", "summary: Advice.", "checks:", "  - name: x", "    assert: x == 1",
        "---",
        "",
        "ProPublica's 2016 analysis of COMPAS.",       # 10: a year where it cannot stand
        "",
        "Flagged 12% of women.",                       # 12: a result
        "",
        "## Women were flagged 9.9 points less",       # 14: a result in a heading
        "",
        "```python explainer", "x = 1", "```", ""]), encoding="utf-8")
    said = {e.line: e.message for e in bare_numbers(parse_explainer(source))}
    assert sorted(said) == [10, 12, 14]
    assert "looks like a year" in said[10] and "(2016)" in said[10] and 'cite("key")' in said[10]
    assert "{{ name | percent }}" not in said[10]
    assert "in a heading" in said[14] and "{ #" in said[14] and "anchor" in said[14]
    assert "in the prose; cite the run's value instead, e.g. {{ name | number }} for a count" in said[12]
    # The advice is right: the year in parentheses, and the heading citing the run with its own
    # anchor, pass.
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("ProPublica's 2016 analysis", "ProPublica's analysis (2016)")
                      .replace("9.9 points less", "{{ x | number }} points less { #flagged-less }")
                      .replace("Flagged 12% of women.", "Flagged {{ x | percent }} of women."), encoding="utf-8")
    assert bare_numbers(parse_explainer(source)) == []
