"""The "Check a gap" calculator page, the links that open it with a page's own counts, and the
interactive figures that use the same script.

The page itself is ``templates/check-a-gap.md.j2`` (a reader's page, rendered by
``render._reader_pages``); its numbers come from ``templates/assets/faircalc.js`` and the
modules it carries (one per method: faircalc-exact.js, faircalc-power.js, ...) in the reader's
browser. :func:`check_gap` is the template function explainer prose calls to link a
worked example to the calculator with its counts filled in: the page reads them from the URL.
:func:`power_explorer` and :func:`threshold_explorer` place an interactive figure
(``templates/assets/faircalc-figures.js``) with data from the explainer's run.
"""

from __future__ import annotations

import json
import math
import numbers
from urllib.parse import urlencode

from markupsafe import Markup, escape

__all__ = ["CALCULATOR_PAGE", "calculator_query", "check_gap", "check_groups", "check_p_values", "power_explorer",
           "threshold_explorer"]

#: The calculator's folder under ``docs/`` (``docs/check-a-gap/index.md``).
CALCULATOR_PAGE = "check-a-gap"


def _count(value, name: str) -> int:
    # Counts from a run may arrive as NumPy integers or as whole floats (a sum of 0/1 values).
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)) \
            or float(value) != int(float(value)) or float(value) < 0:
        raise ValueError(f"check_gap: `{name}` must be a whole number of people, 0 or more; got {value!r}")
    return int(float(value))


def calculator_query(flagged_a, n_a, flagged_b, n_b, *, a: str = "group A", b: str = "group B",
                     outcome: str = "flagged", favourable: str = "negative") -> str:
    """The query string that opens the calculator on two groups' counts.

    Parameters
    ----------
    flagged_a, n_a : int
        People flagged and people in group A (the group the question is about), ``0 <= flagged_a <= n_a``.
    flagged_b, n_b : int
        The same for the comparison group B.
    a, b : str
        The groups' names as the page's sentences read them, in the plural ("women", "men").
    outcome : str
        What being flagged means, a verb phrase ("flagged", "turned away").
    favourable : {"negative", "positive"}
        ``"negative"``: being flagged is the harm (as an audit manifest's ``target.favourable:
        negative``); ``"positive"``: being flagged is the favourable outcome.

    Returns
    -------
    str
        ``"la=...&na=...&ka=...&lb=...&nb=...&kb=...&out=...[&fav=positive]"``, the parameters
        ``assets/faircalc-ui.js`` reads.

    Raises
    ------
    ValueError
        A count that is not a whole number of people, flagged above people, an empty name, or an
        unknown ``favourable``.
    """
    ka, na = _count(flagged_a, "flagged_a"), _count(n_a, "n_a")
    kb, nb = _count(flagged_b, "flagged_b"), _count(n_b, "n_b")
    for k, n, name in ((ka, na, "flagged_a"), (kb, nb, "flagged_b")):
        if k > n:
            raise ValueError(f"check_gap: `{name}` ({k}) cannot exceed the people in its group ({n})")
    for name, text in (("a", a), ("b", b), ("outcome", outcome)):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"check_gap: `{name}` must be non-empty words; got {text!r}")
    if favourable not in ("negative", "positive"):
        raise ValueError(f"check_gap: `favourable` must be 'negative' (flagged is the harm) or 'positive'; got {favourable!r}")
    params = {"la": a.strip(), "na": na, "ka": ka, "lb": b.strip(), "nb": nb, "kb": kb, "out": outcome.strip()}
    if favourable == "positive":
        params["fav"] = "positive"
    return urlencode(params)


def _flagged_from_rate(rate, n, name: str):
    # A run often keeps a group's rate and size rather than its count: k = rate * n must then be
    # a whole number of people (to rounding), or the rate is not a share of those n people.
    if rate is None:
        return None
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0.0 <= float(rate) <= 1.0:
        raise ValueError(f"check_gap: `rate_{name}` must be a rate in [0, 1]; got {rate!r}")
    n = _count(n, f"n_{name}" if len(name) == 1 else f"{name} people")
    k = round(float(rate) * n)
    if abs(float(rate) * n - k) > 1e-6 * max(1, n):
        raise ValueError(f"check_gap: `rate_{name}` x `n_{name}` ({float(rate) * n:.6g}) is not a whole number "
                         f"of people: is `rate_{name}` a share of the `n_{name}` people?")
    return k


def check_gap(flagged_a=None, n_a=None, flagged_b=None, n_b=None, *, rate_a=None, rate_b=None,
              a: str = "group A", b: str = "group B", outcome: str = "flagged", favourable: str = "negative",
              text: str = "Check these numbers", depth: int = 2) -> Markup:
    """A Markdown link to the calculator with two groups' counts filled in, for explainer prose.

    One line in an explainer: ``{{ check_gap(flagged_w, n_w, flagged_m, n_m, a="women", b="men",
    outcome="turned away") }}``, or with the rates a run keeps, ``{{ check_gap(n_a=n_w, n_b=n_m,
    rate_a=rate_w, rate_b=rate_m, ...) }}`` (each ``rate * n`` must be a whole number of people).
    Parameters as :func:`calculator_query`; ``text`` is the link's words; ``depth`` the page's
    folders below the site root (2 for ``explainers/<slug>/``).

    Returns
    -------
    markupsafe.Markup
        ``[Check these numbers](../../check-a-gap/index.md?la=...)``: MkDocs checks the link and
        keeps its query.
    """
    if rate_a is not None:
        flagged_a = _flagged_from_rate(rate_a, n_a, "a")
    if rate_b is not None:
        flagged_b = _flagged_from_rate(rate_b, n_b, "b")
    if flagged_a is None or flagged_b is None or n_a is None or n_b is None:
        raise ValueError("check_gap: give each group's people (`n_a`, `n_b`) and either its count flagged "
                         "(`flagged_a`, `flagged_b`) or its rate (`rate_a`, `rate_b`)")
    query = calculator_query(flagged_a, n_a, flagged_b, n_b, a=a, b=b, outcome=outcome, favourable=favourable)
    return _link(query, text, depth)


def _rate(value, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{where}: `{name}` must be a rate in [0, 1]; got {value!r}")
    return float(value)


def _words(value, name: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: `{name}` must be non-empty words; got {value!r}")
    return value.strip()


def _figure_box(kind: str, data: dict, label: str, folded: str | None = None) -> Markup:
    # Hidden until assets/faircalc-figures.js draws it: without JavaScript the page's static
    # figure stands alone. The data ride in a data attribute, escaped as HTML. `folded`: the
    # summary line of a closed fold around it (a page near its reading length keeps it folded).
    payload = escape(json.dumps(data, separators=(",", ":"), allow_nan=False))
    box = f'<div class="fc-fig" data-fc-{kind}="{payload}" role="group" aria-label="{escape(label)}" hidden></div>'
    if folded:
        box = f'<details class="fc-fig-fold" hidden><summary>{escape(folded)}</summary>{box}</details>'
    return Markup(box)


def power_explorer(*, rows, share_a, base_rate, gap, a: str = "group A", b: str = "group B",
                   target: float = 0.8, title: str | None = None, folded: str | None = None) -> Markup:
    """An interactive figure: the exact power against the true gap, for an audit size and a gap
    the reader picks with two sliders, with the minimum detectable gap marked.

    Every power is computed in the browser by ``FairCalc.power`` (the library's
    ``permutation_test_power``, held to it by tests/e2e/test_faircalc.py); the run supplies
    the audit it starts from.

    Parameters
    ----------
    rows : int
        The audit's people (the size the slider starts at), ``>= 2``.
    share_a : float
        Group A's share of the people, in (0, 1).
    base_rate : float
        Group B's rate (the comparison group's), in [0, 1].
    gap : float
        The true gap the slider starts at, A minus B, in [-1, 1]; its sign sets the direction drawn.
    a, b : str
        The groups' names (plural).
    target : float, default 0.8
        The power the minimum detectable gap reaches.
    title : str, optional
        The line above the sliders.
    folded : str, optional
        Place the figure in a closed fold with this summary line (for a page near its reading
        length: the words of a closed fold do not count).

    Returns
    -------
    markupsafe.Markup
        ``<div class="fc-fig" data-fc-power="...">`` (in a ``<details>`` if ``folded``), hidden
        until the script draws it.

    Raises
    ------
    ValueError
        A value out of its range, or empty names.
    """
    where = "power_explorer"
    if isinstance(rows, bool) or not isinstance(rows, numbers.Real) or float(rows) != int(float(rows)) or rows < 2:
        raise ValueError(f"{where}: `rows` must be a whole number of people, at least 2; got {rows!r}")
    share = _rate(share_a, "share_a", where)
    if not 0.0 < share < 1.0:
        raise ValueError(f"{where}: `share_a` must lie strictly between 0 and 1; got {share_a!r}")
    if isinstance(gap, bool) or not isinstance(gap, numbers.Real) or not -1.0 <= float(gap) <= 1.0:
        raise ValueError(f"{where}: `gap` must be a difference of rates in [-1, 1]; got {gap!r}")
    a, b = _words(a, "a", where), _words(b, "b", where)
    data = {"rows": int(rows), "share_a": share, "base_rate": _rate(base_rate, "base_rate", where),
            "gap": abs(float(gap)), "direction": -1 if float(gap) < 0 else 1, "a": a, "b": b,
            "target": _rate(target, "target", where),
            "title": title or f"Try it: how often does an audit find a gap? ({b}'s rate held at {100 * float(base_rate):.1f}%)"}
    return _figure_box("power", data, "Interactive figure: power against the true gap", folded)


def threshold_explorer(curves: dict, *, a: str, b: str, start_a: float, start_b: float,
                       title: str | None = None, folded: str | None = None) -> Markup:
    """An interactive figure: a threshold per group, and the selection-rate, true positive rate
    and false positive rate gaps (A minus B) at those thresholds, redrawn as the sliders move.

    Parameters
    ----------
    curves : dict
        From the explainer's run (so the build checks the numbers): ``{"thresholds": [t_1, ...],
        a: {"selection": [...], "tpr": [...], "fpr": [...]}, b: {...}}``: for each threshold of
        the grid (increasing, in [0, 1]), each group's rates in [0, 1] when everyone scoring at
        least the threshold is flagged.
    a, b : str
        The two groups, keys of ``curves`` (group A's gaps are A minus B).
    start_a, start_b : float
        The thresholds the sliders start at (the nearest grid points are used).
    title : str, optional
        The line above the sliders.
    folded : str, optional
        As :func:`power_explorer`.

    Returns
    -------
    markupsafe.Markup
        ``<div class="fc-fig" data-fc-thresholds="...">``, hidden until the script draws it.

    Raises
    ------
    ValueError
        Curves of the wrong shape, a rate outside [0, 1], thresholds not increasing.
    """
    where = "threshold_explorer"
    if not isinstance(curves, dict) or "thresholds" not in curves:
        raise ValueError(f"{where}: `curves` must be a dict with 'thresholds' and one entry per group")
    grid = [float(t) for t in curves["thresholds"]]
    if len(grid) < 2 or any(not 0.0 <= t <= 1.0 for t in grid) or any(s >= t for s, t in zip(grid, grid[1:])):
        raise ValueError(f"{where}: `curves['thresholds']` must be at least two increasing thresholds in [0, 1]")
    groups = {}
    for name in (_words(a, "a", where), _words(b, "b", where)):
        if name not in curves:
            raise ValueError(f"{where}: `curves` has no group {name!r}; it has {sorted(k for k in curves if k != 'thresholds')}")
        groups[name] = {}
        for metric in ("selection", "tpr", "fpr"):
            values = curves[name].get(metric) if isinstance(curves[name], dict) else None
            if values is None or len(values) != len(grid):
                raise ValueError(f"{where}: `curves[{name!r}][{metric!r}]` must hold one rate per threshold ({len(grid)})")
            groups[name][metric] = [_rate(v, f"curves[{name!r}][{metric!r}]", where) for v in values]
    data = {"thresholds": grid, "groups": groups, "a": a.strip(), "b": b.strip(),
            "start_a": _rate(start_a, "start_a", where), "start_b": _rate(start_b, "start_b", where),
            "title": title or f"Try it: move each group's threshold and watch every gap ({a} minus {b})"}
    return _figure_box("thresholds", data, "Interactive figure: thresholds per group and the gaps they give", folded)


def _link(query: str, text: str, depth: int) -> Markup:
    words = str(escape(text)).replace("[", "\\[").replace("]", "\\]")
    return Markup(f"[{words}]({'../' * depth}{CALCULATOR_PAGE}/index.md?{query})")


def check_groups(groups, *, text: str = "Check these numbers", depth: int = 2) -> Markup:
    """A Markdown link to the calculator's "more than two groups" box with a page's groups filled in.

    Parameters
    ----------
    groups : list
        One entry per group, ``(name, people, flagged)`` or a dict with keys ``group`` (or
        ``name``), ``n`` and ``k`` or ``rate`` (as a run's list of rows keeps them; ``rate * n``
        must be a whole number of people); at least two.
    text, depth
        As :func:`check_gap`.

    Raises
    ------
    ValueError
        Fewer than two groups, a count that is not a whole number of people, flagged above people.
    """
    lines = []
    for i, g in enumerate(groups or []):
        if isinstance(g, dict):
            name, n, k = g.get("group", g.get("name")), g.get("n"), g.get("k")
            if k is None and g.get("rate") is not None:  # a run's row keeps the rate: k = rate * n
                k = _flagged_from_rate(g["rate"], n, f"groups[{i}]")
        else:
            name, n, k = g
        n, k = _count(n, f"groups[{i}] people"), _count(k, f"groups[{i}] flagged")
        if k > n:
            raise ValueError(f"check_groups: group {name!r} has {k} flagged of {n} people")
        # The box reads "name, people, flagged" a line: separators cannot be part of a name.
        label = " ".join(str(name).replace(",", " ").replace(";", " ").split()) or f"group {i + 1}"
        lines.append(f"{label},{n},{k}")
    if len(lines) < 2:
        raise ValueError("check_groups: give at least two groups")
    return _link(urlencode({"groups": ";".join(lines)}, safe=",;"), text, depth)


def check_p_values(p_values, *, text: str = "Adjust these p-values", depth: int = 2) -> Markup:
    """A Markdown link to the calculator's adjustment box with ``p_values`` (each in [0, 1]) filled in.

    ``p_values`` is a list of numbers, or a string of them separated by commas: a run keeps lists
    of at most 100 values, so a longer family (an audit's 120 hypotheses) travels as text."""
    if isinstance(p_values, str):
        try:
            p_values = [float(v) for v in p_values.split(",") if v.strip()]
        except ValueError as err:
            raise ValueError(f"check_p_values: expected numbers separated by commas; {err}") from None
    values = []
    for p in p_values or []:
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"check_p_values: each p-value must lie in [0, 1]; got {p!r}")
        values.append(repr(float(p)))
    if not values:
        raise ValueError("check_p_values: give at least one p-value")
    return _link(urlencode({"p": ",".join(values)}, safe=","), text, depth)
