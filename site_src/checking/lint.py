"""Stage 4, check: the prose for numbers typed by hand where a run value belongs.

Every number on a page must come from the run (a Jinja variable with a filter) or the results
file (``result(...)``); a number typed into the prose goes stale the day the data or the code
changes. ``bare_numbers`` lists each one with its line, and says what is allowed instead.
"""

from __future__ import annotations

import re

import jinja2
from jinja2 import nodes

from site_src.errors import CheckError
from site_src.sources.collect import CODE_PLACEHOLDER, Explainer, prose_syntax_tree

# A number typed into prose: digits with optional thousands separators, decimals (".05" too),
# an exponent, a percent sign.
_NUMBER = re.compile(r"(?<![\w.])[-−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?%?(?!\w)")
_YEAR = re.compile(r"^(1[5-9]|20)\d\d$")
_SKIP = [
    re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S),  # Jinja: values come from the run
    re.compile(r"`[^`\n]*`"),  # inline code
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"<[^>\n]+>"),  # HTML tags and their attributes
    re.compile(r"^\s*\d+\.\s", re.M),  # ordered-list markers
]
# "In 2016 ProPublica reported", "data from 1994": a year in prose is a fact, not a result. "We
# ran 2000 shuffles" is not a year.
_YEAR_CONTEXT = re.compile(r"\b(in|from|since|until|during|before|after|around|circa|year)\s+$", re.I)
_CITATION_SECTION = re.compile(r"^#+ .*(reading|reference|source|bibliograph)", re.I)
# A number that names a law or a rule is part of its name, not a result: "Local Law 144", "29 CFR
# 1607.4", "6 RCNY 5-301", "Annex IV", "Article 10" (an audit report cites the law it answers).
_LAW_BEFORE = re.compile(r"\b(Local Law|Public Law|CFR|RCNY|U\.S\.C\.|Article|Annex|Section|§)\s*[\d.\-]*$")
_LAW_AFTER = re.compile(r"^\s*(CFR|RCNY|U\.S\.C\.)\b")


def scaffold_text(explainer: Explainer) -> list[CheckError]:
    """What ``fairsite new`` wrote as stand-ins and is still there: its placeholder sentences (each
    with its line, found anywhere in the line: the takeaway box, the decision guide, the figure's
    caption, the sections), subtitle and summary, and the ``draft`` tag. `fairsite check` refuses a page
    that has any: a fresh user's scaffolded page passed ``check`` unchanged (issue 26)."""
    from site_src.sources.reports import REPORT_STAND_INS, Report
    from site_src.sources.scaffold import DRAFT_TAG, PLACEHOLDERS, SUBTITLE, SUMMARY

    # Anywhere in a line, not only a whole line: the figure's caption stand-in is inside a call, the
    # takeaway box's points are two (the bold order, then why). One problem per line. A report's
    # page has those of `fairsite audit new`.
    report = isinstance(explainer, Report)
    command = "fairsite audit new" if report else "fairsite new"
    stand_ins = REPORT_STAND_INS[2:] if report else PLACEHOLDERS
    found = []
    for i, line in enumerate(explainer.prose.split("\n"), 1):
        left = [repr(stand_in) for stand_in in stand_ins if stand_in in line]
        if left:
            found.append(CheckError(f"still has the text `{command}` put there as a stand-in: {', '.join(left)}; "
                                    "write the page's own", explainer=explainer.display_path, line=i))
    meta = explainer.meta
    for name, stand_in in (("subtitle", SUBTITLE), ("summary", SUMMARY), ("subtitle", REPORT_STAND_INS[0]),
                           ("summary", REPORT_STAND_INS[1])):
        if getattr(meta, name, None) == stand_in:
            found.append(CheckError(f"front matter: {name}: still the stand-in {stand_in!r} of `{command}`",
                                    explainer=explainer.display_path, line=explainer.front_matter_line(name)))
    if DRAFT_TAG in (meta.tags or []):
        at = explainer.front_matter_line("tags", meta.tags.index(DRAFT_TAG)) or explainer.front_matter_line("tags")
        found.append(CheckError(f"front matter: tags: still tagged {DRAFT_TAG!r}; tag the page by its methods",
                                explainer=explainer.display_path, line=at))
    return found


def bare_numbers(explainer: Explainer) -> list[CheckError]:
    """Numbers typed into the prose (or the title, subtitle, summary) where a run value belongs.

    Allowed: single digits ("two steps", "step 3"), whole numbers in the title ("Top 10 Mistakes":
    the page's name, not a result; decimals and percentages are still refused there), ordered-list markers, inline code, link
    targets, Jinja expressions, the numbers of a law or rule ("Local Law 144", "29 CFR 1607.4"), and years: in parentheses, after a word such as "in" or "from", or
    anywhere under a "Further reading" or "References" heading. Any other number must come from
    the run.
    """
    errors = []
    for field in ("title", "subtitle", "summary"):
        for token in _bare_tokens(getattr(explainer.meta, field), years_ok=False):
            if field == "title" and token.isdigit():
                continue  # a count in the page's name ("Top 10 Mistakes") is not a result
            errors.append(CheckError(f"bare number '{token}' in the front matter's {field}; it cannot cite the "
                                     "run, so say it without the number", explainer=explainer.display_path))
    errors += _numbers_in_template_literals(explainer)
    lines = explainer.prose.split("\n")
    masked = explainer.prose
    for pattern in _SKIP:
        masked = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), masked)
    in_citations = False
    for i, line in enumerate(masked.split("\n"), start=1):
        if lines[i - 1].strip() == CODE_PLACEHOLDER:
            continue
        heading = line.lstrip().startswith("#")
        if heading:
            in_citations = bool(_CITATION_SECTION.match(line.strip()))
        for token in _bare_tokens(line, years_ok=in_citations):
            errors.append(CheckError(f"bare number '{token}' {_advice(token, heading=heading)}",
                                     explainer=explainer.display_path, line=i))
    return errors


def _advice(token: str, *, heading: bool) -> str:
    """What to do about a bare number in the prose: for what looks like a year, the ways a year
    may be written; in a heading, how to cite the run there and keep the heading's anchor; else
    cite the run's value."""
    if _YEAR.match(token):
        # A year is a fact about a source or the data, not a result: it is allowed where it reads
        # as one (issue 26: a fresh user was told to cite the run's value for "ProPublica's 2016").
        return ("looks like a year; write it in parentheses (\"ProPublica's analysis (2016)\"), right after a "
                "word such as \"in\" or \"from\" (\"in 2016\", not \"in early 2016\"), or cite the source with {{ cite(\"key\") }}, "
                "which prints its author and year; a year a run computed comes from the run, {{ name }}")
    if heading:
        # A heading's words make its anchor, which other pages link to: a number the run gives
        # there would move the anchor whenever the data move.
        return ("in a heading; cite the run's value there, e.g. {{ name | number }}, and give the heading a fixed "
                "anchor with { #some-id } at its end so links to it do not move with the number, or keep the number "
                "for the text under the heading (numbers in prose must come from the run or the results file)")
    return ("in the prose; cite the run's value instead, e.g. {{ name | number }} for a count, {{ name | percent }} "
            "for a share (numbers in prose must come from the run or the results file)")


def _numbers_in_template_literals(explainer: Explainer) -> list[CheckError]:
    """Numbers typed inside Jinja: ``{{ 2000 }}``, ``{{ 0.05 | percent }}``, or in a string such
    as a figure's alt text. Arguments of filters and calls (``number(1)``, ``figure(2, ...)``),
    unit conversions (``100 * gap``) and positions (``rows[0]``) are not results, and are allowed."""
    try:
        tree = prose_syntax_tree(explainer.prose)
    except jinja2.TemplateSyntaxError:
        return []  # the render stage reports it, with its line
    allowed: set[int] = set()
    for node in tree.find_all((nodes.Filter, nodes.Call)):
        allowed.update(id(a) for a in node.args)
    for node in tree.find_all((nodes.Mul, nodes.Div)):  # unit conversions: `100 * gap`
        allowed.update(id(side) for side in (node.left, node.right))
    for node in tree.find_all(nodes.Getitem):  # positions: `rows[0]`
        allowed.add(id(node.arg))
    errors = []
    for const in tree.find_all(nodes.Const):
        value = const.value
        if isinstance(value, str):
            tokens = _bare_tokens(value, years_ok=False)
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and id(const) not in allowed:
            tokens = [] if (isinstance(value, int) and abs(value) <= 9) else [repr(value)]
        else:
            tokens = []
        for token in tokens:
            errors.append(CheckError(f"bare number '{token}' typed into a template expression; "
                                     "cite the run's value instead", explainer=explainer.display_path, line=const.lineno))
    return errors


def _bare_tokens(text: str, *, years_ok: bool) -> list[str]:
    found = []
    for m in _NUMBER.finditer(text):
        token = m.group(0)
        digits = token.lstrip("-−").rstrip("%").replace(",", "")
        if re.fullmatch(r"\d", digits):
            continue
        if _LAW_BEFORE.search(text[:m.start()]) or _LAW_AFTER.match(text[m.end():]):
            continue
        if _YEAR.match(digits) and (years_ok or _in_parentheses(text, m.start(), m.end())
                                    or _YEAR_CONTEXT.search(text[:m.start()])):
            continue
        found.append(token)
    return found


def _in_parentheses(text: str, start: int, end: int) -> bool:
    """"(2010)", "(Fisher, 1935)", "(1935, chapter 2)": the year sits inside a parenthesis."""
    opened = text.rfind("(", 0, start)
    return opened != -1 and text.rfind(")", opened, start) == -1 and text.find(")", end) != -1
