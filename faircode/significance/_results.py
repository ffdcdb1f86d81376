"""Result types shared by the procedures of :mod:`faircode.significance`.

:class:`ConfidenceInterval` (an interval ``low <= high``), :class:`PermutationTestResult`
(:func:`~faircode.significance.permutation_test_result`), :class:`SignificanceReport`
(:func:`~faircode.significance.significance_report`), the base class every result with a
``p_value`` and a ``p_value_floor`` shares (it prints the p-value with
:func:`faircode.formatting.format_p_value`, never "p = 0", after Phipson and Smyth 2010, cited in
:mod:`faircode.significance._permutation`), the fields every permutation test's result starts with
(``_RelabellingTestResult``: statistic, p-value, method, relabellings, floor, minimum) and the one
home of the Monte Carlo p-value ``(b + 1) / (m + 1)`` (``_phipson_smyth``), the
:class:`DegenerateSampleWarning` of the resampling procedures, and ``SMALL_SAMPLE_THRESHOLD``. The
results of the k-group and stratified tests live with those tests
(:mod:`faircode.significance._groups`, ``_homogeneity``, ``_strata``) and build on these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from faircode.formatting import format_p_value


SMALL_SAMPLE_THRESHOLD = 30
"""Groups with fewer rows than this are flagged by ``small_sample_warning``."""


class DegenerateSampleWarning(UserWarning):
    """A group cannot vary under resampling (constant outcomes, one row or one cluster)."""


class ConfidenceInterval(NamedTuple):
    """An interval ``low <= high`` in the outcome's unit: a bootstrap interval for a gap, or a score
    interval for a rate (:func:`wilson_interval`)."""

    low: float
    high: float


class _PValueResult:
    """What every test result with ``p_value`` and ``p_value_floor`` fields shares."""

    def format_p_value(self, *, digits: int = 2) -> str:
        """The p-value as :func:`format_p_value` prints it (``"p = 1/10,001"`` at the Monte
        Carlo floor of 10,000 permutations)."""
        return format_p_value(self.p_value, floor=self.p_value_floor, digits=digits)


class _MonteCarloP(NamedTuple):
    p_value: float
    p_value_floor: float
    is_monte_carlo_minimum: bool


def _phipson_smyth(b: int, n_permutations: int) -> _MonteCarloP:
    """A Monte Carlo p-value from ``b`` of ``m = n_permutations`` relabellings at least as extreme
    as the data: Phipson and Smyth's ``(b + 1) / (m + 1)``, its floor ``1 / (m + 1)``, and whether
    it sits there (``b == 0``)."""
    return _MonteCarloP((b + 1) / (n_permutations + 1), 1.0 / (n_permutations + 1), b == 0)


def _permutations_note(n_permutations: int | None) -> str:
    """How a result's repr names its relabellings: ``", n_permutations=9,999"``, or nothing when exact."""
    return "" if n_permutations is None else f", n_permutations={n_permutations:,}"


@dataclass(frozen=True, repr=False)
class _RelabellingTestResult(_PValueResult):
    """The fields every permutation test's result starts with, in this order (each result's own
    fields follow; its docstring documents them all).

    ``_exact`` and ``_monte_carlo`` make a result of either kind, so that what an exact p-value's
    fields are, and how a Monte Carlo p-value is counted, is written once.
    """

    statistic: float
    p_value: float
    method: str
    n_permutations: int | None
    p_value_floor: float
    is_monte_carlo_minimum: bool

    @classmethod
    def _exact(cls, statistic: float, p_value: float, *fields, **named):
        """An exact test's result: no relabellings drawn, no floor."""
        return cls(statistic, p_value, "exact", None, 0.0, False, *fields, **named)

    @classmethod
    def _monte_carlo(cls, statistic: float, b: int, n_permutations: int, *fields, method: str = "monte_carlo",
                     **named):
        """A Monte Carlo test's result, ``b`` of its ``n_permutations`` relabellings at least as extreme."""
        p = _phipson_smyth(b, n_permutations)
        return cls(statistic, p.p_value, method, n_permutations, p.p_value_floor, p.is_monte_carlo_minimum,
                   *fields, **named)


@dataclass(frozen=True, repr=False)
class PermutationTestResult(_RelabellingTestResult):
    """Result of :func:`permutation_test_result`.

    Attributes
    ----------
    statistic : float
        Observed gap ``mean(a) - mean(b)``.
    p_value : float
        p-value in (0, 1] for Monte Carlo (Phipson & Smyth's ``(b + 1) / (m + 1)``), in [0, 1]
        for the exact test (0.0 only when the exact value underflows double precision).
    method : str
        ``"exact"``, ``"monte_carlo"`` or ``"grouped_monte_carlo"``.
    n_permutations : int or None
        Relabellings drawn; None for the exact test.
    p_value_floor : float
        Smallest p-value the method can report: ``1 / (n_permutations + 1)``, 0.0 for exact.
    is_monte_carlo_minimum : bool
        True when no drawn relabelling was as extreme as the data, so ``p_value`` equals
        ``p_value_floor``; report it as "p = 1/(n_permutations + 1)" (see
        :func:`format_p_value`).
    alternative : str
        ``"two-sided"``, ``"less"`` or ``"greater"``.
    null_distribution : numpy.ndarray or None
        Read-only gaps of the drawn relabellings, shape ``(n_permutations,)``; None for exact.
    """

    alternative: str = "two-sided"
    null_distribution: np.ndarray | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        return (
            f"PermutationTestResult(statistic={self.statistic:+.4g}, {self.format_p_value()}, "
            f"method={self.method!r}, alternative={self.alternative!r}{_permutations_note(self.n_permutations)})"
        )


@dataclass(frozen=True, repr=False)
class SignificanceReport(_PValueResult):
    """Result of :func:`significance_report`: is the gap between two groups real?

    Attributes
    ----------
    gap : float
        ``mean_a - mean_b`` (disadvantaged minus advantaged), in the outcome's unit.
    ci_low, ci_high : float
        Interval for the gap at ``confidence_level``, by ``ci_method``.
    p_value : float
        Permutation-test p-value (see :class:`PermutationTestResult`).
    significant : bool
        ``p_value < alpha``.
    alpha, confidence_level : float
        The thresholds used.
    n_a, n_b : int
        Rows in the disadvantaged group ``a`` and the advantaged group ``b``.
    mean_a, mean_b : float
        Their means (selection rates for 0/1 outcomes, in [0, 1]).
    small_sample_warning : bool
        True when either group has fewer than ``SMALL_SAMPLE_THRESHOLD`` (30) rows.
    method : str
        Permutation method used: ``"exact"``, ``"monte_carlo"`` or ``"grouped_monte_carlo"``.
    n_permutations : int or None
        Relabellings drawn (None for exact).
    n_resamples : int or None
        Bootstrap resamples; None for the Newcombe interval (no resampling).
    ci_method : str
        The interval used: ``"newcombe"`` (score interval of a difference of two rates),
        ``"percentile"`` or ``"bca"`` (bootstrap).
    p_value_floor : float
        Smallest reportable p-value (0.0 for exact).
    is_monte_carlo_minimum : bool
        True when the p-value sits at its Monte Carlo floor ("p = 1/(m + 1)").
    """

    gap: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool
    alpha: float
    confidence_level: float
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    small_sample_warning: bool
    method: str
    n_permutations: int | None
    n_resamples: int | None
    ci_method: str
    p_value_floor: float
    is_monte_carlo_minimum: bool

    def __repr__(self) -> str:
        resamples = "exact" if self.n_permutations is None else f"{self.n_permutations:,} permutations"
        interval = (f"{self.ci_method} score interval" if self.n_resamples is None
                    else f"{self.ci_method} bootstrap, {self.n_resamples:,} resamples")
        return (
            f"SignificanceReport(gap={self.gap:+.4g}, "
            f"{self.confidence_level:.0%} CI [{self.ci_low:+.4g}, {self.ci_high:+.4g}] "
            f"({interval}), "
            f"{self.format_p_value()} ({self.method}, {resamples}), "
            f"significant={self.significant} at alpha={self.alpha:g}, "
            f"n_a={self.n_a:,} (mean {self.mean_a:.4g}), n_b={self.n_b:,} (mean {self.mean_b:.4g}), "
            f"small_sample_warning={self.small_sample_warning})"
        )
