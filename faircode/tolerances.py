"""How far a re-run may move a committed number before it counts as a change: one rule per kind.

Every comparison of a run with committed values uses these rules: ``faircode benchmark --check``
(the results files), ``fairsite check`` and ``fairsite build`` (each explainer's accepted numbers,
``explainers/<slug>.numbers.json``), and the explainers' own ``checks:`` (through `mc_error`).
A check that fails when nothing changed is as much a defect as one that passes when something
did, so each tolerance is derived from where the quantity's variation comes from, not chosen to
make a run pass.

========================  ============================================  ===========================
kind                      examples                                      a re-run matches when
========================  ============================================  ===========================
``exact``                 counts and group sizes (``n_test``,           the text is identical
                          ``n_disadvantaged``), seeds, resample
                          counts, labels, ``method``, ``reason``,
                          ``significant``, ``small_sample_warning``
``fitted``                quantities computed from a fitted model's     ``|new - old| <= 1e-4``
                          predictions: accuracy, balanced accuracy,     (`FITTED_ATOL`); a ratio
                          ROC AUC, group rates, gaps, score             of two rates: the same
                                                                        bound propagated
``monte_carlo``           a resampled proportion (Monte Carlo           ``|new - old| <=
                          p-value, a simulated rate) from ``n``         4 * sqrt(2) * mc_error``
                          resamples; the q-value of a Monte Carlo       (`MC_K` standard errors
                          p-value (`monte_carlo_q_value`)               of a difference of two
                                                                        estimates); a q-value:
                                                                        its own error, plus its
                                                                        rounding
``p_value``               an exact p-value or its q-value (BH); an      ``|log10 new - log10 old|
                          equivalence (TOST) p-value and its            <= 0.05``
                          adjustment (BH or Holm)                       (`LOG10_P_TOL`), both
                                                                        floored at ``1e-10``
                                                                        (`P_FLOOR`)
``power``                 the exact test's power at the audit's         ``|new - old| <= 0.005``
                          margin (``power_at_margin``)                  (`POWER_ATOL`)
========================  ============================================  ===========================

Why these numbers
-----------------
**Counts are exact.** Group sizes, test-split sizes and positives depend only on the committed
data, the manifest and the seeded split; no solver is involved, so any change is a real one.

**Fitted-model quantities: 1e-4.** The logistic regression stops when L-BFGS's largest
projected gradient component falls below ``tol = 1e-4`` (scikit-learn's default, passed to
SciPy as ``gtol``). Two machines (other BLAS kernels, summation orders, library builds) stop at
different points of that neighbourhood of the optimum, so predicted probabilities differ in about
the fourth decimal at most, usually far less (the 2026 case that prompted this module: a ROC AUC
moved by 9e-6). ROC AUC is the share of (positive, negative) pairs ranked correctly; scores
shifted by at most ``d`` can swap only pairs whose scores are within ``d`` of each other, about a
``d`` share of them for probabilities spread over [0, 1], so it moves by about ``d <= 1e-4``.
Rates of decisions (selection rate, true positive rate, accuracy) move by ``k / n`` when ``k``
of ``n`` rows cross the 0.5 threshold, which needs a score within ``d`` of it; the bound admits
that for groups of 10,000 rows or more and reports it for smaller groups, where one decision
that changed is visible in the published rate and must be accepted on purpose. Trees
(random forest, histogram gradient boosting) involve no iterative solver and run in one thread
(`faircode.models.fit_predict`), so they meet the same bound with room to spare. The ratio of two
rates ``a / b`` (disparate impact) gets the propagated bound
``FITTED_ATOL * (1 / b + a / b**2)``.

**Monte Carlo quantities: four standard errors.** A proportion estimated from ``n`` resamples has
standard error `mc_error` ``(p, n) = sqrt(p (1 - p) / n)`` (floored at ``1 / n``). Two
independent estimates differ by ``sqrt(2)`` times that; a band of `MC_K` = 4 such errors is
exceeded by chance about once in 16,000 comparisons. With fixed seeds and the locked NumPy the
runs are identical; the band is what lets a NumPy upgrade that changes a sampler pass when
nothing else changed.

**The q-value of a Monte Carlo p-value.** A Benjamini-Hochberg q-value is ``m p' / j`` for one
p-value ``p'`` at or above the row's own ``p`` (or 1), so its relative Monte Carlo error is at
most ``p``'s, and its standard error at most ``q mc_error(p, n) / p`` (more than
``mc_error(q, n)``, which would understate it by up to the square root of the family's size). The
benchmark writes such a q-value rounded to the decimal place of the leading digit of that error
(``faircode.benchmark.tables``), which moves it by at most half of it on each side; so two runs
match within ``(MC_K sqrt(2) + 1)`` times that error (`monte_carlo_q_value`).

**Score interval endpoints.** The results file's intervals (Newcombe's for a difference,
MOVER-R for a ratio) are closed-form functions of each group's counts, so they move only when a
decision moves, exactly like the gap they bracket: they get the ``fitted`` bound (propagated for
a ratio).

**p-values on the log scale.** p-values span hundreds of orders of magnitude, so an absolute
tolerance is either meaningless for small ones or too strict for large ones. Our exact
(hypergeometric) p-values are functions of counts, so they move only when a decision moves: a
gap that moves by ``FITTED_ATOL`` moves ``ln p`` by about ``z * FITTED_ATOL / se``, at most about
0.1 (0.043 in log10) for ``|z|`` up to 6.4 (p = 1e-10) and groups of 10,000 rows, the smallest in
which the fitted bound admits a changed decision; `LOG10_P_TOL` = 0.05 covers it. Below
`P_FLOOR` = 1e-10 every p-value means the same (far below any threshold after correcting for
this table's thousands of tests), so values under the floor compare as the floor. q-values
(Benjamini-Hochberg) are monotone in the p-values and get the same rule. ``significant``
(q < 0.05) is a decision: a flip is a change, compared exactly.

**Equivalence p-values: the same band.** The TOST p-value at the audit's margin (exact
unconditional or score, ``equivalence_method``) is a function of the two groups' counts, as
the exact test's is, so it too moves only when a decision moves; its score statistic
``z = (gap - bound) / se`` moves by ``FITTED_ATOL / se`` when the gap moves by `FITTED_ATOL`,
and ``ln p`` by about ``z`` times that, the bound above. Its family adjustment
(Benjamini-Hochberg in the fairness file, Holm in the by-group file) is monotone in the
p-values and gets the same rule. ``verdict`` is a decision, compared exactly, as
``significant`` is; the margin is the manifest's, exact.

**Power at the margin: 0.005.** The exact test's power against a true gap at the margin is a
function of the reference group's rate ``p`` and the group sizes (not of the other group's
rate), so it moves only when a decision of the reference group moves; in groups under 10,000
rows no decision moves within `FITTED_ATOL` and the power is the same number up to
floating-point rounding. Where one can (a reference group of 10,000 rows or more), ``p`` moves by
at most `FITTED_ATOL`; in the normal approximation the power is ``Phi(u - z)`` with
``u = margin / se``, whose slope in ``p`` is ``phi(u - z) u d(ln se)/dp``, at most
``0.87 d(ln se)/dp`` (``u phi(u - 1.96)`` peaks at 0.87), and ``d(ln se)/dp`` is at most
``c / (2 p' (1 - p'))`` over the two rates ``p'`` at the margin (``c`` = 1 for a difference, up
to 1.25 for the ratio band, whose rate at the margin moves ``c`` times as fast). So the power moves
by at most ``0.87 c FITTED_ATOL / (2 p' (1 - p'))``, under `POWER_ATOL` = 0.005 while every rate
at the margin lies in [0.011, 0.989]; rarer rates in such a group are reported and accepted on purpose,
as a fitted rate in a small group is. 0.005 is also half of the last digit a page shows of it
(a whole percent).

References
----------
R. G. Newcombe, "Interval estimation for the difference between independent proportions",
*Statistics in Medicine* 17, 1998. Monte Carlo error: B. Efron,
R. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993, ch. 19.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


__all__ = [
    "FITTED_ATOL",
    "MC_K",
    "LOG10_P_TOL",
    "P_FLOOR",
    "POWER_ATOL",
    "Tolerance",
    "mc_error",
    "exact",
    "fitted",
    "fitted_ratio",
    "monte_carlo",
    "monte_carlo_q_value",
    "p_value",
    "power",
]

#: Absolute tolerance of a quantity computed from a fitted model (rates, gaps, AUC, accuracy):
#: L-BFGS's convergence tolerance (scikit-learn's ``LogisticRegression(tol=1e-4)``).
FITTED_ATOL = 1e-4
#: Standard errors a Monte Carlo quantity may move (of the difference of two estimates).
MC_K = 4.0
#: Largest ``|log10 new - log10 old|`` of two p-values (or q-values) that match.
LOG10_P_TOL = 0.05
#: p-values below this compare as equal to it.
P_FLOOR = 1e-10
#: Absolute tolerance of the exact test's power at the margin (see "Power at the margin" above).
POWER_ATOL = 0.005


def mc_error(p: float, n: int) -> float:
    """Standard error of a Monte Carlo proportion ``p`` estimated from ``n`` resamples.

    Parameters
    ----------
    p : float
        The estimate, in [0, 1].
    n : int
        Number of resamples (permutations, simulations), positive.

    Returns
    -------
    float
        ``sqrt(p (1 - p) / n)``, floored at ``1 / n`` so that a p near 0 or 1 still allows the
        one-resample granularity of the estimate. Use it as ``abs(x - p) <= 4 * mc_error(p, n)``:
        a four-sigma band fails by chance about once in 16,000 builds.

    Raises
    ------
    ValueError
        If ``n`` is not positive.
    """
    if n <= 0:
        raise ValueError(f"mc_error: n must be a positive number of resamples, got {n}")
    return max(math.sqrt(p * (1 - p) / n), 1 / n)


@dataclass(frozen=True)
class Tolerance:
    """A comparison rule for one kind of quantity.

    Attributes
    ----------
    kind : str
        ``"exact"``, ``"fitted"``, ``"monte_carlo"``, ``"p_value"`` or ``"power"``.
    atol : float
        The absolute band on the value's own scale (on ``log10`` for ``p_value``); 0 for exact.
    description : str
        The rule as a diff table shows it, e.g. ``"fitted: |Δ| ≤ 0.0001"``.
    """

    kind: str
    atol: float
    description: str

    def matches(self, old, new) -> bool:
        """Whether ``new`` matches ``old`` under this rule.

        Parameters
        ----------
        old, new : float, int, str or None
            Numbers, or anything else (compared exactly). NaN matches only NaN (an undefined
            value that became defined, or the reverse, is a change).

        Returns
        -------
        bool
        """
        if self.kind == "exact" or not (_is_number(old) and _is_number(new)):
            return old == new or (_is_nan(old) and _is_nan(new))
        if math.isnan(old) or math.isnan(new):
            return math.isnan(old) and math.isnan(new)
        if self.kind == "p_value":
            return abs(_log10_floored(new) - _log10_floored(old)) <= self.atol
        return abs(new - old) <= self.atol

    def excess(self, old, new) -> str:
        """How far ``new`` is from ``old`` on this rule's scale, for a diff table."""
        if not (_is_number(old) and _is_number(new)) or math.isnan(old) or math.isnan(new):
            return ""
        if self.kind == "p_value":
            return f"Δlog10 = {_log10_floored(new) - _log10_floored(old):+.3g}"
        return f"Δ = {new - old:+.3g}"


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_nan(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def _log10_floored(p: float) -> float:
    return math.log10(max(p, P_FLOOR))


def exact() -> Tolerance:
    """Counts, group sizes, seeds, labels, flags: any difference is a change."""
    return Tolerance("exact", 0.0, "exact")


def fitted() -> Tolerance:
    """A quantity from a fitted model's predictions, on the [0, 1] scale: `FITTED_ATOL`."""
    return Tolerance("fitted", FITTED_ATOL, f"fitted model: |Δ| ≤ {FITTED_ATOL:g}")


def fitted_ratio(a: float, b: float) -> Tolerance:
    """The ratio ``a / b`` of two fitted rates: `FITTED_ATOL` propagated, ``atol (1/b + a/b²)``.

    Parameters
    ----------
    a, b : float
        The committed numerator and denominator rates, in [0, 1]; ``b > 0`` (else the ratio is
        undefined and compared exactly).

    Returns
    -------
    Tolerance
    """
    if not (_is_number(a) and _is_number(b)) or math.isnan(a) or math.isnan(b) or b <= 0:
        return exact()
    atol = FITTED_ATOL * (1 / b + a / b**2)
    return Tolerance("fitted", atol, f"fitted ratio: |Δ| ≤ {atol:.2g}")


def monte_carlo(p: float, n: int) -> Tolerance:
    """A proportion estimated from ``n`` resamples: ``MC_K * sqrt(2) * mc_error(p, n)``.

    Parameters
    ----------
    p : float
        The committed estimate (clipped to [0, 1] for the standard error).
    n : int
        Resamples; a non-positive or non-integer ``n`` gives the exact rule.

    Returns
    -------
    Tolerance
    """
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0 or not _is_number(p) or math.isnan(p):
        return exact()
    atol = MC_K * math.sqrt(2) * mc_error(min(max(p, 0.0), 1.0), n)
    return Tolerance("monte_carlo", atol, f"Monte Carlo ({n:,} resamples): |Δ| ≤ {atol:.2g}")


def monte_carlo_q_value(q: float, p: float, n: int) -> Tolerance:
    """A q-value adjusted from a Monte Carlo p-value ``p`` of ``n`` resamples, written rounded to
    its error: ``(MC_K sqrt(2) + 1) q mc_error(p, n) / p`` (see "The q-value of a Monte Carlo
    p-value" above).

    Parameters
    ----------
    q : float
        The committed q-value, in [0, 1].
    p : float
        The committed Monte Carlo p-value it adjusts (the row's own), in (0, 1].
    n : int
        Resamples of ``p``; a non-positive or non-integer ``n``, or a ``p`` that is not positive,
        gives the exact rule.

    Returns
    -------
    Tolerance
    """
    if (isinstance(n, bool) or not isinstance(n, int) or n <= 0 or not (_is_number(p) and _is_number(q))
            or math.isnan(p) or math.isnan(q) or p <= 0):
        return exact()
    atol = (MC_K * math.sqrt(2) + 1) * q * mc_error(min(p, 1.0), n) / p
    return Tolerance("monte_carlo", atol, f"Monte Carlo q-value ({n:,} resamples): |Δ| ≤ {atol:.2g}")


def p_value() -> Tolerance:
    """An exact p-value or a q-value: `LOG10_P_TOL` on the log10 scale, floored at `P_FLOOR`."""
    return Tolerance("p_value", LOG10_P_TOL, f"p-value: |Δlog10| ≤ {LOG10_P_TOL:g} (floor {P_FLOOR:g})")


def power() -> Tolerance:
    """The exact test's power at a margin, in [0, 1]: `POWER_ATOL`."""
    return Tolerance("power", POWER_ATOL, f"power: |Δ| ≤ {POWER_ATOL:g}")
