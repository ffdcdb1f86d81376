"""Jinja filters that format a run's numbers in explainer prose.

Each filter takes the raw value the run computed; the prose never holds the number itself. Rates
are proportions in [0, 1]; gaps are differences of rates (disadvantaged minus advantaged) and are
shown in percentage points.
"""

from __future__ import annotations

import math
import re
import sys
from numbers import Integral, Real

from jinja2 import Undefined
from jinja2.runtime import Context

from faircode.formatting import format_p_value  # NumPy-free: every page render formats p-values

MINUS = "\u2212"


def _real_arg(value, name: str) -> float:
    """The value a filter was given, as a float: an undefined name, a non-number, NaN or an
    infinity is an error naming the filter ``name`` and, in a template, the variable and the
    template (the explainer) it came from."""
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()  # a name the run never defined: say which
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} filter expects a number, got {type(value).__name__} {value!r}{_where(value)}")
    if math.isnan(value):
        raise ValueError(f"{name} filter got NaN{_where(value)}: the run computed an undefined value (an empty group?)")
    if math.isinf(value):
        raise ValueError(f"{name} filter got {float(value)!r}{_where(value)}: the run computed an infinite value "
                         "(a division by zero?); a page cannot print it as a number")
    return float(value)


def _where(value) -> str:
    """`` for `name` in explainers/x.md``: the template variable that holds ``value`` and the
    template rendering it, found on the stack; empty outside a template (a direct call).

    Only on the error path. Jinja's compiled code holds the template's ``context`` (its name is
    the explainer's ``display_path``, its variables the run's values) and loop variables as
    locals ``l_<depth>_<name>``; the value is looked for by identity, so only the names that
    hold this very object are given (a value inside a pair, for ``interval``, names the pair).
    """
    frame = sys._getframe(1)
    held: list[tuple[str, object]] = []  # (name, what it holds), nearest first
    while frame is not None:
        local = frame.f_locals
        held += [(m.group(1), v) for k, v in local.items() if (m := _JINJA_LOCAL.fullmatch(k))]
        context = local.get("context")
        if isinstance(context, Context):
            held += list(context.get_all().items())
            exact = [n for n, v in held if v is value]
            inside = [n for n, v in held if isinstance(v, (list, tuple)) and len(v) <= 100 and any(x is value for x in v)]
            names = " or ".join(f"`{n}`" for n in dict.fromkeys(exact or inside)) or "a value computed in the template"
            return f" for {names}" + (f" in {context.name}" if context.name else "")
        frame = frame.f_back
    return ""


_JINJA_LOCAL = re.compile(r"l_\d+_(\w+)")


def _no_negative_zero(text: str) -> str:
    """``-0.0%`` -> ``0.0%``: a value that rounds to zero is written without a sign, whichever
    side of zero it was on (no reader can tell what "−0.0" means)."""
    if text.startswith("-") and not any(c in "123456789" for c in text):
        return text[1:]
    return text


def _signed(x: float, digits: int) -> str:
    text = f"{abs(x):,.{digits}f}"
    if float(text.replace(",", "")) == 0:
        return text
    return ("+" if x > 0 else MINUS) + text


def number(value, digits: int = 0) -> str:
    """``6513`` -> ``6,513``; ``0.1234, 2`` -> ``0.12``. Negative numbers get a true minus sign;
    one that rounds to zero is written ``0`` (never ``−0``)."""
    x = _real_arg(value, "number")
    return _no_negative_zero(f"{x:,.{digits}f}").replace("-", MINUS)


def percent(value, digits: int = 1) -> str:
    """A rate in [0, 1] as a percentage: ``0.243`` -> ``24.3%``; one that rounds to zero is
    ``0.0%`` (never ``−0.0%``)."""
    x = _real_arg(value, "percent")
    return _no_negative_zero(f"{100 * x:.{digits}f}%").replace("-", MINUS)


def gap(value, digits: int = 1) -> str:
    """A gap between two rates in percentage points, signed: ``-0.196`` -> ``−19.6 percentage points``."""
    x = _real_arg(value, "gap")
    return f"{_signed(100 * x, digits)} percentage points"


def signed(value, digits: int = 2) -> str:
    """A signed number: ``0.031`` -> ``+0.03``."""
    return _signed(_real_arg(value, "signed"), digits)


def interval(value, digits: int = 1, unit: str = "pp") -> str:
    """An interval ``(low, high)``: gaps in percentage points by default (``unit="pp"``), or
    ``unit="ratio"`` for a ratio, ``unit="percent"`` for rates."""
    try:
        low, high = value
    except (TypeError, ValueError):
        raise TypeError(f"interval filter expects a (low, high) pair, got {value!r}") from None
    low, high = _real_arg(low, "interval"), _real_arg(high, "interval")
    if unit == "pp":
        return f"[{_signed(100 * low, digits)}, {_signed(100 * high, digits)}] percentage points"
    if unit == "percent":
        return f"[{percent(low, digits)}, {percent(high, digits)}]"
    if unit == "ratio":
        return f"[{number(low, digits)}, {number(high, digits)}]"
    raise ValueError(f"interval filter: unit must be 'pp', 'percent' or 'ratio', got {unit!r}")


def pvalue(value, n_resamples: int | None = None) -> str:
    """A p-value as :func:`faircode.formatting.format_p_value` decides; never ``p = 0``.

    ``n_resamples`` is the number ``m`` of Monte Carlo relabellings behind the p-value, whose
    smallest value under the ``(b + 1) / (m + 1)`` convention is ``1 / (m + 1)``: a p at that
    floor (no relabelling as extreme) reads ``p = 1/(m + 1)``, e.g. ``p = 1/2,001`` for 2,000
    shuffles. Without it the p-value is exact: ``p = 0.034``, ``p = 0.0012``, ``p = 2.1 × 10⁻⁹``.
    """
    p = _real_arg(value, "pvalue")
    if not 0 <= p <= 1:
        raise ValueError(f"pvalue filter expects a p-value in [0, 1], got {p!r}")
    floor = None
    if n_resamples is not None:
        if isinstance(n_resamples, bool) or not isinstance(n_resamples, Integral) or n_resamples < 1:
            raise ValueError(f"pvalue filter: n_resamples must be a positive whole number of resamples, "
                             f"got {n_resamples!r}")
        floor = 1 / (int(n_resamples) + 1)
    return format_p_value(p, floor=floor)


def mc_percent(value, n: int, digits: int | None = None) -> str:
    """A Monte Carlo proportion (a share of ``n`` simulated audits or resamples) with its standard error.

    The standard error is ``sqrt(x (1 - x) / n)`` (at least ``1 / n``, the resolution of a count
    out of ``n``); the share is shown to the decimal place of the standard error's leading digit,
    so no digit is printed that the simulation cannot support: ``0.414`` from 500 subsamples ->
    ``41% ± 2``, ``0.049`` from 2,000 -> ``4.9% ± 0.5``. ``digits`` overrides the decimals.

    A share of exactly 0 or 1 has no spread to show ("100.0% ± 0.1" would claim more than 100% is
    possible): it is shown as what was counted and a 95% bound on the true share,
    ``100% (all 2,000; above 99.8% with 95% confidence)`` / ``0% (none of 2,000; below 0.2% with
    95% confidence)``, by the rule of three (the one-sided 95% bound of a count of zero out of
    ``n`` is about ``3 / n``; Hanley and Lippman-Hand 1983), rounded outwards.
    """
    x = _real_arg(value, "mc_percent")
    if not 0 <= x <= 1:
        raise ValueError(f"mc_percent filter expects a share in [0, 1], got {x!r}")
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 1:
        raise ValueError(f"mc_percent filter: n must be a positive whole number of simulations, got {n!r}")
    if x in (0, 1) and digits is None:
        bound = 300 / n  # percentage points
        d = max(0, -math.floor(math.log10(bound)))
        if x == 0:
            return f"0% (none of {n:,}; below {math.ceil(bound * 10 ** d) / 10 ** d:.{d}f}% with 95% confidence)"
        return f"100% (all {n:,}; above {math.floor((100 - bound) * 10 ** d) / 10 ** d:.{d}f}% with 95% confidence)"
    se = 100 * max(math.sqrt(x * (1 - x) / n), 1 / n)  # percentage points
    if digits is None:  # the decimal place of the standard error rounded to one significant digit
        digits = max(0, -math.floor(math.log10(float(f"{se:.1g}"))))
    return f"{_no_negative_zero(f'{100 * x:.{digits}f}')}% ± {se:.{digits}f}".replace("-", MINUS)


def per_100(value, who: str, than: str, outcome: str) -> str:
    """A gap of rates in people: ``-0.098, "women", "men", "are turned away"`` ->
    ``per 100 women, about 10 fewer are turned away than per 100 men``.

    ``value`` is a gap, disadvantaged minus advantaged, as a difference of rates in [-1, 1];
    ``who`` and ``than`` name the disadvantaged and the advantaged group (plural, as the sentence
    reads them), ``outcome`` what the rate counts, as a verb phrase in the plural ("are flagged
    ineligible", "are approved"). The direction word comes from the sign; the count is rounded to
    a whole person, or to a tenth below one person in 100.
    """
    x = _real_arg(value, "per_100")
    if not -1 <= x <= 1:
        raise ValueError(f"per_100 filter expects a gap of rates in [-1, 1], got {x!r}")
    for name, text in (("who", who), ("than", than), ("outcome", outcome)):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"per_100 filter: {name} must be non-empty words, got {text!r}")
    people = abs(100 * x)
    count = f"{people:.0f}" if people >= 0.95 else f"{people:.1f}"
    if float(count) == 0:
        return f"per 100 {who} and per 100 {than}, the same number {outcome}, to within a twentieth of a person"
    more = "more" if x > 0 else "fewer"
    return f"per 100 {who}, about {count} {more} {outcome} than per 100 {than}"


FILTERS = {"per_100": per_100, "number": number, "percent": percent, "gap": gap, "signed": signed, "interval": interval, "pvalue": pvalue,
           "mc_percent": mc_percent}
