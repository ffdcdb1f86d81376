"""How faircode writes things for people: p-values, and the hints and checks of its error messages.

One convention for a p-value on the console, in the explainers and in the results table (the
site's ``pvalue`` filter calls :func:`format_p_value`); one "did you mean" hint for every error
that names a wrong choice (:func:`did_you_mean`), in faircode and in the site build alike; one
way to write an intersection's group label (``INTERSECTION_SEPARATOR``), which the manifest
checks and :mod:`faircode.groups` writes.

Kept apart from :mod:`faircode.significance` (which re-exports the p-value format) so that
formatting does not import NumPy: the site build formats p-values on every page it renders.
"""

from __future__ import annotations

import difflib
import math
import re
import numbers
from collections.abc import Iterable

__all__ = [
    "INTERSECTION_SEPARATOR", "format_p_value", "check_positive_int", "did_you_mean", "closest", "yaml_list_hint",
    "yaml_value_problem", "yaml_syntax_hint", "at", "format_points", "format_ratio", "MINUS",
]

#: The true minus sign every number written for people carries (never a hyphen).
MINUS = "\u2212"

#: Joins the parts of an intersection's group label ("Female & Black"). Here, not in
#: :mod:`faircode.groups`, because the manifest checks that no two cells would be written alike,
#: and the manifest is read before (and without) the groups.
INTERSECTION_SEPARATOR = " & "


def at(path: str, line: int | None = None, column: int | None = None) -> str:
    """Where in a file a problem is, as compilers and linters write it: ``"path:line:column"``
    (``"path:line"``, ``"path"``), which editors and terminals open at the line. The one form of
    every message that names a place in a file: manifests, explainers, results files, the lock,
    links (three forms before: ``file:58:``, ``file: line 79:``, ``file, line 58:``).

    Parameters
    ----------
    path : str
        The file as the message names it (relative to the repository root where it is inside it).
    line, column : int, optional
        1-based; a column without a line is not written.

    Examples
    --------
    >>> at("audits/adult/audit.yaml", 79)
    'audits/adult/audit.yaml:79'
    >>> at("explainers/x.md", 3, 7)
    'explainers/x.md:3:7'
    """
    if line is None:
        return str(path)
    return f"{path}:{line}" + (f":{column}" if column is not None else "")


def yaml_syntax_hint(text: str, err) -> str:
    """What to do about a YAML syntax error made by hand, to follow the parser's words: where an
    unclosed ``[``, ``{`` or quote opened (PyYAML names the line where it noticed, the one after),
    a value holding ``": "`` that must be quoted (a title such as "Equalized odds: both error
    rates" reads as a second key), a tab where YAML indents with spaces. "" when none applies.
    The one home for audit manifests and explainers' front matter (fresh users' findings).

    Parameters
    ----------
    text : str
        The YAML document that failed to parse.
    err : yaml.YAMLError
        PyYAML's error; its ``problem_mark``, ``context`` and ``context_mark`` are read when present.

    Examples
    --------
    >>> import yaml
    >>> try:
    ...     yaml.safe_load("title: Odds: both rates")
    ... except yaml.YAMLError as err:
    ...     print(yaml_syntax_hint("title: Odds: both rates", err))
    ; a value holding ': ' must be in quotes: title: "Odds: both rates"
    """
    hints = []
    context, start = getattr(err, "context", None), getattr(err, "context_mark", None)
    mark = getattr(err, "problem_mark", None)
    if context and start is not None and (mark is None or mark.line != start.line):
        # "while parsing a flow sequence", "while scanning a quoted scalar": what was left open.
        thing = re.sub(r"^while (parsing|scanning) (an? )?", "", context)
        what = {"flow sequence": "the '['", "flow mapping": "the '{'", "quoted scalar": "the quote"}.get(thing, f"the {thing}")
        hints.append(f" ({what} opened on line {start.line + 1})")
    if mark is not None:
        rows = text.split("\n")
        line = rows[mark.line] if mark.line < len(rows) else ""
        key, sep, value = line.partition(": ")
        if sep and ": " in value and not value.lstrip().startswith(("'", '"')):
            hints.append(f"; a value holding ': ' must be in quotes: {key.strip()}: "
                         f"\"{value.strip().replace(chr(34), chr(92) + chr(34))}\"")
        if "\t" in line[: len(line) - len(line.lstrip())]:
            hints.append("; YAML indents with spaces, not tabs")
    return "".join(hints)


def did_you_mean(word, choices: Iterable) -> str:
    """The hint an error message ends with when ``word`` is close to one of ``choices``.

    Parameters
    ----------
    word : object
        What the user wrote (compared as ``str(word)``).
    choices : iterable
        The valid names (each compared as ``str``).

    Returns
    -------
    str
        ``" (did you mean 'sex'?)"`` for the closest choice by :func:`difflib.get_close_matches`
        (ratio at least 0.6), or ``""`` when none is close. The leading space lets a caller
        append it to any message.

    Examples
    --------
    >>> did_you_mean("sexx", ["sex", "race"])
    " (did you mean 'sex'?)"
    >>> did_you_mean("zzz", ["sex", "race"])
    ''
    """
    close = closest(word, choices)
    return f" (did you mean {close!r}?)" if close is not None else ""


def yaml_list_hint(key: str, value: str) -> str:
    """The hint for a YAML field that must be a list but was written as one line of text.

    ``tags: a, b`` is the text ``"a, b"`` to YAML, not a list: the hint shows the line as the
    flow-style list it was meant to be, one item per comma.

    Parameters
    ----------
    key : str
        The field's key, as written (``"tags"``).
    value : str
        The text YAML read for it.

    Returns
    -------
    str
        ``"expected a list, got the text 'a, b'; write it as a YAML list: `tags: [a, b]`"``.

    Examples
    --------
    >>> yaml_list_hint("models", "logistic_regression, gbm")
    "expected a list, got the text 'logistic_regression, gbm'; write it as a YAML list: `models: [logistic_regression, gbm]`"
    """
    items = [item.strip() for item in value.split(",") if item.strip()]
    return f"expected a list, got the text {value!r}; write it as a YAML list: `{key}: [{', '.join(items)}]`"


def yaml_value_problem(err: dict, *, unit: str = "", bounds: Iterable = ()) -> str | None:
    """One of pydantic's type or bound errors worded for the author of a YAML file, or None.

    pydantic says "Input should be a valid integer" or "Input should be greater than 0"; the
    author of ``timeout: 10s`` wrote YAML, not Python, and is told what to write instead, with the
    value as YAML read it (``true``, not ``True``).

    Parameters
    ----------
    err : dict
        One item of ``pydantic.ValidationError.errors()`` (its ``type``, ``input`` and ``ctx``).
    unit : str, optional
        What the number counts, as the message should say it (``"seconds"``).
    bounds : iterable, optional
        The field's constraints (a pydantic field's ``metadata``: objects with ``gt``, ``ge``,
        ``lt`` or ``le``): a value of the wrong type is told the range too, and one out of range
        the whole range, not only the bound it broke.

    Returns
    -------
    str or None
        ``"expected a whole number of seconds, got '10s'"``, ``"expected at most 86400 seconds,
        got 100000"``, ``"expected less than 1, got 1.5"``...; None for an error of another kind
        (the caller keeps its own wording).

    Examples
    --------
    >>> yaml_value_problem({"type": "int_parsing", "input": "10s"}, unit="seconds")
    "expected a whole number of seconds, got '10s'"
    >>> yaml_value_problem({"type": "greater_than", "input": 0, "ctx": {"gt": 0.0}})
    'expected more than 0, got 0'
    >>> class Gt: gt = 0.0
    >>> class Lt: lt = 1.0
    >>> yaml_value_problem({"type": "float_parsing", "input": "half"}, bounds=[Gt(), Lt()])
    "expected a number more than 0 and less than 1, got 'half'"
    """
    of = f" of {unit}" if unit else ""
    kind, ctx = err.get("type", ""), err.get("ctx") or {}
    words = {"gt": "more than", "ge": "at least", "lt": "less than", "le": "at most"}
    limits = [f"{words[key]} {_bound(getattr(b, key))}" for b in bounds for key in words
              if getattr(b, key, None) is not None]
    within = " " + " and ".join(limits) if limits else ""
    bounds = {"greater_than": "gt", "greater_than_equal": "ge", "less_than": "lt", "less_than_equal": "le"}
    if kind in ("int_type", "int_parsing", "int_from_float"):
        expected = f"a whole number{of}{within}"
    elif kind in ("float_type", "float_parsing"):
        expected = f"a number{of}{within}"
    elif kind in ("bool_type", "bool_parsing"):
        expected = "true or false"
    elif kind == "string_type":
        expected = "text (quote it: YAML read a number, true/false or nothing)"
    elif kind in bounds and bounds[kind] in ctx:
        expected = (within.strip() if limits else f"{words[bounds[kind]]} {_bound(ctx[bounds[kind]])}") + (
            f" {unit}" if unit else "")
    else:
        return None
    return f"expected {expected}, got {_as_yaml(err.get('input'))}"


def _bound(value) -> str:
    """A bound as its author would write it: 1.0 as 1."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _as_yaml(value) -> str:
    """A value as its author wrote it in YAML: ``true``, nothing, ``'10s'``, ``2.5``."""
    if isinstance(value, bool):
        return str(value).lower()
    if value is None:
        return "nothing (an empty value)"
    return repr(value)


def closest(word, choices: Iterable) -> str | None:
    """The one of ``choices`` closest to ``word`` (as ``str``), or None when none is close.

    The matching behind :func:`did_you_mean`, for a message that words its hint otherwise:
    :func:`difflib.get_close_matches` with its default cutoff (ratio at least 0.6).

    Examples
    --------
    >>> closest("null_lowe", ["null_low", "n"])
    'null_low'
    >>> closest("zzz", ["null_low"]) is None
    True
    """
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return close[0] if close else None


def check_positive_int(value, name: str) -> int:
    """``value`` as an ``int`` if it is a whole number ``>= 1``.

    Raises
    ------
    TypeError
        ``value`` is not an integer (a bool, NumPy's included, is not).
    ValueError
        ``value`` is below 1. Both messages name the argument ``name``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):  # numpy.bool_ is not Integral
        raise TypeError(f"`{name}` must be a positive integer; got {value!r}")
    if value < 1:
        raise ValueError(f"`{name}` must be a positive integer (>= 1); got {value}")
    return int(value)


def format_p_value(p, *, floor: float | None = None, digits: int = 2) -> str:
    """Format a p-value for prose and tables; the one convention of the project, never "p = 0".

    The site's ``pvalue`` filter and the results page call this function, so a p-value reads the
    same in a console, an explainer and the results table.

    Parameters
    ----------
    p : float
        p-value in [0, 1], or NaN (an untestable gap).
    floor : float, optional
        The method's smallest attainable p-value, ``PermutationTestResult.p_value_floor``:
        ``1 / (m + 1)`` for ``m`` Monte Carlo relabellings under the ``(b + 1) / (m + 1)``
        convention; 0 or None for exact tests.
    digits : int, default 2
        Significant digits, ``>= 1``.

    Returns
    -------
    str
        Convention:

        - Monte Carlo minimum (``floor`` given and ``p <= floor``): ``"p = 1/10,000"`` for
          ``floor = 1/10,000`` (9,999 relabellings, none as extreme as the data), written as a
          fraction so that it reads as what it is: the Monte Carlo test's p-value
          (b + 1) / (m + 1) at b = 0, the observed data ranked first among themselves and m
          relabellings. It is a valid p-value (under the null, P(p ≤ α) ≤ α; Phipson and Smyth
          2010), not the exact permutation p-value and not a bound on it: the exact p may be
          smaller or somewhat larger (with none of m as extreme, about 3/m is its 95% upper
          limit);
        - ``p == 0`` (an exact p-value that underflowed double precision): ``"p < 10⁻³⁰⁰"``;
        - ``p >= 0.001``: ``digits`` significant digits in fixed notation: ``"p = 0.032"``,
          ``"p = 0.50"``, ``"p = 0.0012"``, ``"p = 1.0"``;
        - ``p < 0.001``: scientific notation with a true minus sign and superscripts,
          ``"p = 3.2 × 10⁻⁷"``;
        - NaN: ``"p = n/a"``.

    Raises
    ------
    TypeError
        ``p`` or ``floor`` not a number; ``digits`` not an integer.
    ValueError
        ``p`` or ``floor`` outside [0, 1]; ``digits < 1``.

    Notes
    -----
    A Monte Carlo p-value from ``m`` relabellings, ``b`` of them at least as extreme as the data,
    is ``(b + 1) / (m + 1)`` (``faircode.significance.permutation_test_result``); its smallest
    value, reached when ``b = 0``, is ``1 / (m + 1)``, so 9,999 relabellings give "p = 1/10,000"
    (not "1/9,999"; and neither "<" nor "≤", which would read as a bound on the exact p-value). Two significant digits
    everywhere, trailing zeros kept ("0.50"), so every p-value on a page carries the same
    precision.

    Powers of ten are written with Unicode superscripts ("10⁻⁷"), not "1e-07", in the console too:
    one text for the page, the notebook and the printed output, which the pages show side by
    side. The project runs on Python 3.11 on Linux, where standard output is UTF-8 (a C or POSIX
    locale is coerced to UTF-8, PEP 538 and PEP 540), and the text already needs Unicode for
    "×" and "⁻"; an ASCII fallback would be a second convention.

    References
    ----------
    Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero: calculating
    exact p-values when permutations are randomly drawn. *Statistical Applications in Genetics
    and Molecular Biology* 9(1), article 39.

    Examples
    --------
    >>> from faircode.significance import format_p_value
    >>> format_p_value(1 / 10_000, floor=1 / 10_000)
    'p = 1/10,000'
    >>> format_p_value(0.0321)
    'p = 0.032'
    >>> format_p_value(3.2e-7)
    'p = 3.2 × 10⁻⁷'
    """
    digits = check_positive_int(digits, "digits")
    p = _check_probability(p, "p")
    if floor is not None:
        floor = _check_probability(floor, "floor")
    if math.isnan(p):
        return "p = n/a"
    if floor and p <= floor * (1 + 1e-9):
        reciprocal = 1.0 / floor
        if abs(reciprocal - round(reciprocal)) < 1e-6 * reciprocal:
            return f"p = 1/{round(reciprocal):,}"
        return f"p = {_p_digits(floor, digits)}"
    if p == 0.0:
        return "p < 10\u207b\u00b3\u2070\u2070"  # smaller than any positive double
    return f"p = {_p_digits(p, digits)}"


def format_points(gap: float, *, signed: bool = True, unit: bool = True) -> str:
    """A gap between two rates in percentage points, with the digits that matter.

    ``gap`` is a difference of rates in [-1, 1] (``-0.123`` -> ``"−12.3 percentage points"``).
    One decimal, or more (up to four) when one decimal would round a gap that is not zero to
    zero: ``-0.0004`` -> ``"−0.04 percentage points"``, so the sign of an interval's limit, and
    whether the interval holds zero, can be read. ``signed``: a ``+`` or true minus sign
    (``signed=False`` writes the size alone); ``unit``: the words "percentage points".
    """
    points = 100 * float(gap)
    if math.isnan(points):
        return "n/a"
    decimals = 1
    while decimals < 4 and points != 0 and round(abs(points), decimals) == 0:
        decimals += 1
    text = f"{abs(points):,.{decimals}f}"
    if signed and float(text.replace(",", "")) != 0:
        text = ("+" if points > 0 else MINUS) + text
    return f"{text} percentage points" if unit else text


def format_ratio(ratio: float, *, near: Iterable = ()) -> str:
    """A ratio of two rates to two decimals (``0.7312`` -> ``"0.73"``; ``inf`` -> ``"∞"``).

    ``near``: lines the ratio is read against (0.8, 1.25); a ratio that two decimals would round
    onto a line it is not on gets a third (``0.797`` -> ``"0.797"``, not ``"0.80"``).
    """
    ratio = float(ratio) + 0.0  # a limit of -0.0 (MOVER-R at a count of 0) is written "0.00"
    if math.isnan(ratio):
        return "n/a"
    if math.isinf(ratio):
        return "\u221e"
    text = f"{ratio:.2f}"
    if any(float(text) == line != ratio for line in near):
        text = f"{ratio:.3f}"
    return text


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def _p_digits(p: float, digits: int) -> str:
    """``digits`` significant digits; fixed notation from 0.001 up, ``m.m × 10⁻ᵉ`` below."""
    if p >= 0.001:
        return f"{p:#.{digits}g}".rstrip(".")  # "#" keeps the trailing zero of "0.50"
    mantissa, exponent = f"{p:.{digits - 1}e}".split("e")
    return f"{mantissa} \u00d7 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _check_probability(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a number in [0, 1]; got {value!r}")
    value = float(value)
    if not (math.isnan(value) or 0.0 <= value <= 1.0):
        raise ValueError(f"`{name}` must lie in [0, 1]; got {value}")
    if name == "floor" and math.isnan(value):
        raise ValueError("`floor` must lie in [0, 1]; got nan")
    return value
