"""Jinja filters that format a run's numbers in explainer prose.

Each filter takes the raw value the run computed; the prose never holds the number itself. Rates
are proportions in [0, 1]; gaps are differences of rates (disadvantaged minus advantaged) and are
shown in percentage points.
"""

from __future__ import annotations

import math
from numbers import Real

from jinja2 import Undefined

MINUS = "\u2212"


def _num(value, name: str) -> float:
    if isinstance(value, Undefined):
        value._fail_with_undefined_error()  # a name the run never defined: say which
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} filter expects a number, got {type(value).__name__} {value!r}")
    if math.isnan(value):
        raise ValueError(f"{name} filter got NaN: the run computed an undefined value (an empty group?)")
    return float(value)


def _signed(x: float, digits: int) -> str:
    text = f"{abs(x):,.{digits}f}"
    if float(text.replace(",", "")) == 0:
        return text
    return ("+" if x > 0 else MINUS) + text


def number(value, digits: int = 0) -> str:
    """``6513`` -> ``6,513``; ``0.1234, 2`` -> ``0.12``. Negative numbers get a true minus sign."""
    x = _num(value, "number")
    return f"{x:,.{digits}f}".replace("-", MINUS)


def percent(value, digits: int = 1) -> str:
    """A rate in [0, 1] as a percentage: ``0.243`` -> ``24.3%``."""
    x = _num(value, "percent")
    return f"{100 * x:.{digits}f}%".replace("-", MINUS)


def gap(value, digits: int = 1) -> str:
    """A gap between two rates in percentage points, signed: ``-0.196`` -> ``−19.6 percentage points``."""
    x = _num(value, "gap")
    return f"{_signed(100 * x, digits)} percentage points"


def signed(value, digits: int = 2) -> str:
    """A signed number: ``0.031`` -> ``+0.03``."""
    return _signed(_num(value, "signed"), digits)


def interval(value, digits: int = 1, unit: str = "pp") -> str:
    """An interval ``(low, high)``: gaps in percentage points by default (``unit="pp"``), or
    ``unit="ratio"`` for a ratio, ``unit="percent"`` for rates."""
    try:
        low, high = value
    except (TypeError, ValueError):
        raise TypeError(f"interval filter expects a (low, high) pair, got {value!r}") from None
    low, high = _num(low, "interval"), _num(high, "interval")
    if unit == "pp":
        return f"[{_signed(100 * low, digits)}, {_signed(100 * high, digits)}] percentage points"
    if unit == "percent":
        return f"[{percent(low, digits)}, {percent(high, digits)}]"
    if unit == "ratio":
        return f"[{number(low, digits)}, {number(high, digits)}]"
    raise ValueError(f"interval filter: unit must be 'pp', 'percent' or 'ratio', got {unit!r}")


def pvalue(value, n_resamples: int | None = None) -> str:
    """A p-value as readers should see it; never ``p = 0``.

    With ``n_resamples`` (a Monte Carlo p-value under the (b + 1) / (m + 1) convention), a p at
    its floor 1 / (m + 1) means no resample was as extreme, shown as ``p < 1/m``. Otherwise
    ``p = 0.034``, ``p = 0.0012`` or, below 0.001, scientific notation ``p = 2.1 × 10⁻⁹``.
    """
    p = _num(value, "pvalue")
    if not 0 <= p <= 1 or math.isnan(p):
        raise ValueError(f"pvalue filter expects a p-value in [0, 1], got {p!r}")
    if n_resamples is not None:
        m = int(n_resamples)
        if p <= 1 / (m + 1) * (1 + 1e-9):
            return f"p < 1/{m:,}"
    if p == 0:
        return "p < 10⁻³⁰⁰"  # an exact p that underflowed: smaller than any double
    if p == 1:
        return "p = 1"
    if p >= 0.01:
        return f"p = {p:.3f}"
    if p >= 0.001:
        return f"p = {p:.2g}"
    exponent = math.floor(math.log10(p))
    mantissa = p / 10**exponent
    sup = str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"p = {mantissa:.1f} × 10{sup}"


FILTERS = {"number": number, "percent": percent, "gap": gap, "signed": signed, "interval": interval, "pvalue": pvalue}
