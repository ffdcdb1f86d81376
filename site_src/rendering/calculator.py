"""The "Check a gap" calculator page and the links that open it with a page's own counts.

The page itself is ``templates/check-a-gap.md.j2`` (a reader's page, rendered by
``render._reader_pages``); its numbers come from ``templates/assets/faircalc.js`` in the
reader's browser. :func:`check_gap` is the template function explainer prose calls to link a
worked example to the calculator with its counts filled in: the page reads them from the URL.
"""

from __future__ import annotations

import math
import numbers
from urllib.parse import urlencode

from markupsafe import Markup, escape

__all__ = ["CALCULATOR_PAGE", "calculator_query", "check_gap"]

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


def check_gap(flagged_a, n_a, flagged_b, n_b, *, a: str = "group A", b: str = "group B",
              outcome: str = "flagged", favourable: str = "negative", text: str = "Check these numbers",
              depth: int = 2) -> Markup:
    """A Markdown link to the calculator with two groups' counts filled in, for explainer prose.

    One line in an explainer: ``{{ check_gap(flagged_w, n_w, flagged_m, n_m, a="women", b="men",
    outcome="turned away") }}``. Parameters as :func:`calculator_query`; ``text`` is the link's
    words; ``depth`` the page's folders below the site root (2 for ``explainers/<slug>/``).

    Returns
    -------
    markupsafe.Markup
        ``[Check these numbers](../../check-a-gap/index.md?la=...)``: MkDocs checks the link and
        keeps its query.
    """
    query = calculator_query(flagged_a, n_a, flagged_b, n_b, a=a, b=b, outcome=outcome, favourable=favourable)
    words = str(escape(text)).replace("[", "\\[").replace("]", "\\]")
    return Markup(f"[{words}]({'../' * depth}{CALCULATOR_PAGE}/index.md?{query})")
