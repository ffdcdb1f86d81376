"""Do two groups differ within strata? Within deciles of a score, within departments: the
comparison Simpson's paradox warns about.

:func:`cmh_test` (Cochran-Mantel-Haenszel, with the Mantel-Haenszel common odds ratio and its Robins-Breslow-Greenland interval),
:func:`breslow_day_test` (is that odds ratio the same in every stratum?) and
:func:`stratified_permutation_test` (relabelling within strata; exact for 0/1 outcomes).

Every p-value follows the conventions of :mod:`faircode.significance`: Monte Carlo p-values
are Phipson and Smyth's ``(b + 1) / (m + 1)`` with ``p_value_floor = 1 / (m + 1)``; exact and
asymptotic ones have floor 0; results print them with ``format_p_value()``.

References
----------
.. [1] Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed. Wiley: sec. 3.2 (chi-squared
   tests of independence), 3.5 (exact tests), 6.4 (Cochran-Mantel-Haenszel, Breslow-Day).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from faircode.formatting import check_positive_int as _check_positive_int
from faircode.significance._validation import (
    _ALTERNATIVES,
    _as_binary_outcome,
    _as_rng,
    _as_sample,
    _batch_rows,
    _check_choice,
    _check_open_unit,
    _is_binary,
    _is_missing,
    _log_choose,
    _rescaled,
    _TEST_METHODS,
    _TIE_RTOL,
)
from faircode.significance._results import _permutations_note, _PValueResult, _RelabellingTestResult


@dataclass(frozen=True, repr=False)
class CMHTestResult(_PValueResult):
    """Result of :func:`cmh_test`.

    Attributes
    ----------
    statistic : float
        The Cochran-Mantel-Haenszel chi-squared statistic (1 degree of freedom).
    p_value : float
        Its chi-squared(1) upper tail.
    odds_ratio : float
        Mantel-Haenszel common odds ratio: odds of outcome 1 in group 1 over group 0 (0 or inf
        when no stratum has a discordant product on one side).
    ci_low, ci_high : float
        Robins-Breslow-Greenland interval of the odds ratio at ``confidence_level`` (NaN when
        the odds ratio is 0 or infinite).
    confidence_level : float
    risk_difference : float
        Mantel-Haenszel weighted gap ``sum_s w_s (rate_1s - rate_0s) / sum_s w_s`` with
        ``w_s = n_1s n_0s / n_s``: group 1 minus group 0, in [-1, 1].
    n_strata : int
        Strata used (both groups present).
    n_strata_dropped : int
        Strata left out because one group is absent (they carry no within-stratum comparison).
    correction : bool
        Whether the continuity correction was applied.
    """

    statistic: float
    p_value: float
    odds_ratio: float
    ci_low: float
    ci_high: float
    confidence_level: float
    risk_difference: float
    n_strata: int
    n_strata_dropped: int
    correction: bool

    p_value_floor = 0.0  # an asymptotic p-value has no Monte Carlo floor

    def __repr__(self) -> str:
        return (f"CMHTestResult(statistic={self.statistic:.4g}, {self.format_p_value()}, "
                f"odds_ratio={self.odds_ratio:.4g} {self.confidence_level:.0%} CI [{self.ci_low:.4g}, "
                f"{self.ci_high:.4g}], risk_difference={self.risk_difference:+.4g}, n_strata={self.n_strata}"
                f"{f', dropped={self.n_strata_dropped}' if self.n_strata_dropped else ''})")


@dataclass(frozen=True, repr=False)
class BreslowDayResult(_PValueResult):
    """Result of :func:`breslow_day_test`.

    Attributes
    ----------
    statistic : float
        Breslow-Day chi-squared statistic (with Tarone's correction when ``tarone``).
    dof : int
        ``n_strata - 1``.
    p_value : float
        Chi-squared(dof) upper tail.
    tarone : bool
    n_strata : int
        Strata used: both groups and both outcomes present.
    n_strata_dropped : int
        Strata left out: one group absent, or (``n_strata_constant`` of them) one outcome only.
    n_strata_constant : int
        Strata with both groups whose outcome is constant (all 0 or all 1), left out: their odds
        ratio is undefined and they carry no information on it.
    """

    statistic: float
    dof: int
    p_value: float
    tarone: bool
    n_strata: int
    n_strata_dropped: int
    n_strata_constant: int = 0

    p_value_floor = 0.0

    def __repr__(self) -> str:
        constant = f" ({self.n_strata_constant} with one outcome only)" if self.n_strata_constant else ""
        dropped = f", dropped={self.n_strata_dropped}{constant}" if self.n_strata_dropped else ""
        return (f"BreslowDayResult(statistic={self.statistic:.4g}, dof={self.dof}, {self.format_p_value()}, "
                f"tarone={self.tarone}, n_strata={self.n_strata}{dropped})")


@dataclass(frozen=True, repr=False)
class StratifiedTestResult(_RelabellingTestResult):
    """Result of :func:`stratified_permutation_test`.

    Attributes
    ----------
    statistic : float
        Within-strata gap ``sum_s w_s (mean_1s - mean_0s) / sum_s w_s``, ``w_s = n_1s n_0s /
        n_s``: group 1 minus group 0, in the outcome's unit.
    p_value : float
        Exact (0/1 outcomes) or ``(b + 1) / (m + 1)``.
    method : str
        ``"exact"`` or ``"monte_carlo"``.
    n_permutations : int or None
    p_value_floor : float
    is_monte_carlo_minimum : bool
    alternative : str
    n_strata, n_strata_dropped : int
        As :class:`CMHTestResult`.
    """

    alternative: str
    n_strata: int
    n_strata_dropped: int

    def __repr__(self) -> str:
        return (f"StratifiedTestResult(statistic={self.statistic:+.4g}, {self.format_p_value()}, "
                f"method={self.method!r}, alternative={self.alternative!r}, n_strata={self.n_strata}"
                f"{_permutations_note(self.n_permutations)})")


# --------------------------------------------------------------------------- strata


@dataclass(frozen=True)
class _Strata:
    """Per stratum with both groups present: rows of group 1 (``n1``) and 0 (``n0``), ones in
    group 1 (``a``) and in all (``m1``); and the rows of ``x``/``g`` kept, with stratum codes."""

    n1: np.ndarray
    n0: np.ndarray
    a: np.ndarray
    m1: np.ndarray
    n_dropped: int
    x: np.ndarray
    g: np.ndarray
    codes: np.ndarray
    unit: float  # x is in this unit (see _rescaled): 1.0 but for outcomes past 2^256 or below 2^-256


def _as_strata(outcome, group, strata, *, binary_outcome: bool) -> _Strata:
    x = _as_binary_outcome(outcome) if binary_outcome else _as_sample(outcome, "outcome")
    # Outcomes near 1e308 in a unit that cannot overflow: the p-values do not depend on it.
    (x,), unit = _rescaled((x,), "`outcome`")
    g = _as_sample(group, "group")
    if g.size != x.size:
        raise ValueError(f"`group` must have one value per row of `outcome` ({x.size}); got {g.size}")
    if not _is_binary(g):
        bad = g[(g != 0.0) & (g != 1.0)][0]
        raise ValueError(f"`group` must be 0/1 (1 = the group of interest) or boolean; found {bad:g}")
    labels = np.asarray(strata)
    if labels.ndim != 1 or labels.size != x.size:
        raise ValueError(f"`strata` must hold one label per row of `outcome` ({x.size}); got shape {labels.shape}")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError("`strata` must not contain NaN labels")
    if labels.dtype.kind == "O" and any(_is_missing(v) or (isinstance(v, float) and math.isnan(v)) for v in labels):
        raise ValueError("`strata` must not contain missing labels (None/NA/NaN)")
    try:
        _, codes = np.unique(labels, return_inverse=True)
    except TypeError as exc:
        raise TypeError("`strata` labels must be mutually comparable (e.g. all str or all int)") from exc
    codes = codes.ravel()
    s = int(codes.max()) + 1
    n1 = np.bincount(codes, weights=g, minlength=s).round()
    n_all = np.bincount(codes, minlength=s).astype(np.float64)
    n0 = n_all - n1
    keep = (n1 > 0) & (n0 > 0)
    if not keep.any():
        raise ValueError("`group` must have both 0 and 1 in at least one stratum of `strata`; no stratum "
                         "compares the two groups")
    rows = keep[codes]
    remap = np.cumsum(keep) - 1
    x, g, codes = x[rows], g[rows], remap[codes[rows]]
    s_kept = int(keep.sum())
    a = np.bincount(codes, weights=x * g, minlength=s_kept)
    m1 = np.bincount(codes, weights=x, minlength=s_kept)
    return _Strata(n1[keep], n0[keep], a, m1, int((~keep).sum()), x, g, codes, unit)


def cmh_test(outcome, group, strata, *, confidence_level: float = 0.95, correction: bool = False) -> CMHTestResult:
    """Cochran-Mantel-Haenszel test of no association between group and outcome within strata.

    Parameters
    ----------
    outcome : array_like of {0, 1}, shape (n,)
        One 0/1 outcome per row.
    group : array_like of {0, 1}, shape (n,)
        1 for the group of interest (e.g. the disadvantaged group), 0 for the other.
    strata : array_like, shape (n,)
        Each row's stratum (mutually comparable, non-missing labels): score deciles,
        departments. Strata with only one of the groups carry no comparison and are dropped
        (counted in ``n_strata_dropped``).
    confidence_level : float, default 0.95
        Of the odds ratio's interval.
    correction : bool, default False
        Continuity correction: subtract 1/2 from ``|sum_s (a_s - E a_s)|`` before squaring, but no
        more than it (below 1/2 the statistic is 0 and p is 1; see Notes).

    Returns
    -------
    CMHTestResult

    Raises
    ------
    TypeError
        Non-numeric ``outcome`` or ``group``; incomparable ``strata`` labels.
    ValueError
        ``outcome`` or ``group`` not 0/1; lengths that differ; missing stratum labels; no
        stratum with both groups; ``confidence_level`` outside (0, 1).

    Notes
    -----
    In stratum ``s``, with ``a_s`` ones among the ``n_1s`` rows of group 1, ``m_1s`` ones
    among all ``n_s`` rows, the statistic is ``(sum_s a_s - E)^2 / V`` with ``E = sum_s n_1s
    m_1s / n_s`` and ``V = sum_s n_1s n_0s m_1s m_0s / (n_s^2 (n_s - 1))``, chi-squared with
    1 dof under the null [1]_ [2]_. It has power against a common direction of association
    across strata, so it can find a small consistent difference that no single stratum shows
    [2]_. The Mantel-Haenszel odds ratio is ``sum_s a_s d_s / n_s / sum_s b_s c_s / n_s``
    [1]_; its interval uses the Robins-Breslow-Greenland variance of the log odds ratio,
    valid both for many sparse strata and for few large ones [3]_. ``risk_difference`` is the
    Mantel-Haenszel weighted difference of rates (the statistic of
    :func:`stratified_permutation_test`). Whether the odds ratio is the same in every stratum is
    :func:`breslow_day_test`.

    **Continuity correction.** With ``correction=True`` the statistic is ``max(|sum_s a_s - E| -
    1/2, 0)^2 / V``, the clamp of Yates' correction in SciPy's ``chi2_contingency`` and R's
    ``chisq.test``. When ``|sum_s a_s - E| < 1/2`` the observed total is the attainable value
    nearest its expectation, so the exact conditional test (:func:`stratified_permutation_test`)
    gives p = 1, and so does this. The usual implementations part there: R's ``mantelhaen.test``
    drops the correction (``(sum_s a_s - E)^2 / V``: p = 0.33 for one stratum of 1 + 28 rows with 15
    ones, the one row of group 1 among them), statsmodels' ``test_null_odds(correction=True)``
    subtracts 1/2 anyway (``(1/2 - |sum_s a_s - E|)^2 / V``, which grows as the table nears its
    expectation: p = 0.011 for 1 + 28 rows whose one 1 fell in group 0, as expected). At
    ``|sum_s a_s - E| >= 1/2`` all three agree.

    References
    ----------
    .. [1] Mantel, N. and Haenszel, W. (1959). Statistical aspects of the analysis of data from
       retrospective studies of disease. *JNCI* 22, 719-748.
    .. [2] Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed. Wiley, sec. 6.4.
    .. [3] Robins, J., Breslow, N. and Greenland, S. (1986). Estimators of the Mantel-Haenszel
       variance consistent in both sparse data and large-strata limiting models. *Biometrics*
       42, 311-323.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import cmh_test
    >>> strata = np.repeat([0, 1], 100)
    >>> group = np.tile(np.repeat([1, 0], 50), 2)
    >>> y = np.r_[np.ones(30), np.zeros(20), np.ones(25), np.zeros(25), np.ones(10), np.zeros(40), np.ones(6), np.zeros(44)]
    >>> res = cmh_test(y, group, strata)
    >>> res.n_strata, round(res.odds_ratio, 2)
    (2, 1.61)
    """
    st = _as_strata(outcome, group, strata, binary_outcome=True)
    confidence_level = _check_open_unit(confidence_level, "confidence_level")
    if not isinstance(correction, (bool, np.bool_)):
        raise TypeError(f"`correction` must be True or False; got {correction!r}")
    from scipy.stats import chi2, norm

    n1, n0, a, m1 = st.n1, st.n0, st.a, st.m1
    n = n1 + n0
    b, c = n1 - a, m1 - a
    d = n0 - c
    m0 = n - m1
    expected = n1 * m1 / n
    with np.errstate(invalid="ignore", divide="ignore"):
        variance = float(np.sum(np.where(n > 1, n1 * n0 * m1 * m0 / (n**2 * (n - 1)), 0.0)))
        deviation = abs(float(np.sum(a - expected)))
        if correction:
            deviation = max(deviation - 0.5, 0.0)
        statistic = deviation**2 / variance if variance > 0 else 0.0
        p_value = float(chi2.sf(statistic, 1)) if variance > 0 else 1.0
        r, s = float(np.sum(a * d / n)), float(np.sum(b * c / n))
        odds_ratio = r / s if s > 0 else (math.inf if r > 0 else math.nan)
        pp, qq = (a + d) / n, (b + c) / n
        var_log = (np.sum(pp * a * d / n) / (2 * r**2) + np.sum(pp * b * c / n + qq * a * d / n) / (2 * r * s)
                   + np.sum(qq * b * c / n) / (2 * s**2))
    if r > 0 and s > 0:
        half = float(norm.ppf(0.5 + confidence_level / 2)) * math.sqrt(float(var_log))
        ci_low, ci_high = math.exp(math.log(odds_ratio) - half), math.exp(math.log(odds_ratio) + half)
    else:
        ci_low = ci_high = math.nan
    w = n1 * n0 / n
    risk_difference = float(np.sum(w * (a / n1 - c / n0)) / np.sum(w))
    return CMHTestResult(statistic, p_value, odds_ratio, ci_low, ci_high, confidence_level, risk_difference,
                         int(n.size), st.n_dropped, bool(correction))


def breslow_day_test(outcome, group, strata, *, tarone: bool = True) -> BreslowDayResult:
    """Breslow-Day test that the odds ratio is the same in every stratum.

    Parameters
    ----------
    outcome, group, strata
        As :func:`cmh_test`.
    tarone : bool, default True
        Subtract Tarone's correction, which makes the statistic chi-squared when the
        Mantel-Haenszel estimate is used (the uncorrected statistic is not).

    Returns
    -------
    BreslowDayResult

    Raises
    ------
    TypeError, ValueError
        As :func:`cmh_test`; also ``ValueError`` when fewer than two strata hold both groups and
        both outcomes (there is no second odds ratio to compare the first with), or when the
        Mantel-Haenszel odds ratio is 0 or infinite.

    Notes
    -----
    Only strata with both groups and both outcomes enter: a stratum whose outcome is constant
    (all 0 or all 1) has no odds ratio, adds nothing to the Mantel-Haenszel estimate, and its
    term would be 0/0 (it used to make the statistic NaN, or count a degree of freedom too many);
    it is left out and counted in ``n_strata_dropped`` and ``n_strata_constant``. The result then
    equals statsmodels' ``StratifiedTable(tables).test_equal_odds()`` on the strata that remain.

    Under a common odds ratio ``psi`` (the Mantel-Haenszel estimate), each stratum's expected
    count ``A_s`` of ones in group 1 solves ``A (n_0s - m_1s + A) = psi (n_1s - A)(m_1s - A)``
    within the table's bounds, with variance ``1 / (1/A + 1/(n_1s - A) + 1/(m_1s - A) +
    1/(n_0s - m_1s + A))``. The statistic is ``sum_s (a_s - A_s)^2 / var_s`` [1]_, minus
    ``(sum_s a_s - sum_s A_s)^2 / sum_s var_s`` with Tarone's correction [2]_, on ``S - 1`` dof
    (statsmodels' ``StratifiedTable.test_equal_odds``). It needs large strata; a small p says
    the strata's odds ratios differ and one common odds ratio summarises them poorly.

    References
    ----------
    .. [1] Breslow, N. E. and Day, N. E. (1980). *Statistical Methods in Cancer Research, Vol. 1:
       The Analysis of Case-Control Studies*. IARC, sec. 4.4.
    .. [2] Tarone, R. E. (1985). On heterogeneity tests based on efficient scores.
       *Biometrika* 72, 91-95.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import breslow_day_test
    >>> strata = np.repeat([0, 1], 100)
    >>> group = np.tile(np.repeat([1, 0], 50), 2)
    >>> y = np.r_[np.ones(30), np.zeros(20), np.ones(25), np.zeros(25), np.ones(10), np.zeros(40), np.ones(6), np.zeros(44)]
    >>> res = breslow_day_test(y, group, strata)
    >>> res.dof, round(res.p_value, 2)
    (1, 0.77)
    """
    st = _as_strata(outcome, group, strata, binary_outcome=True)
    if not isinstance(tarone, (bool, np.bool_)):
        raise TypeError(f"`tarone` must be True or False; got {tarone!r}")
    from scipy.stats import chi2

    both = (st.m1 > 0) & (st.m1 < st.n1 + st.n0)  # both outcomes in the stratum
    n_constant = int((~both).sum())
    if both.sum() < 2:
        raise ValueError(f"`strata`: Breslow-Day compares the odds ratios of strata and needs at least two with both "
                         f"groups and both outcomes; {int(both.sum())} of {both.size + st.n_dropped} have them "
                         f"({st.n_dropped} hold one group only, {n_constant} one outcome only)")
    n1, n0, a, m1 = st.n1[both], st.n0[both], st.a[both], st.m1[both]
    n = n1 + n0
    c = m1 - a
    r, s = float(np.sum(a * (n0 - c) / n)), float(np.sum((n1 - a) * c / n))
    if not (r > 0 and s > 0):
        raise ValueError("`outcome`: the Mantel-Haenszel odds ratio is 0 or infinite (no discordant pairs on "
                         "one side), so the Breslow-Day test is undefined")
    psi = r / s
    quad = 1.0 - psi
    lin = psi * (n1 + m1) + (n0 - m1)
    const = -psi * n1 * m1
    with np.errstate(invalid="ignore", divide="ignore"):
        # The root of quad x^2 + lin x + const = 0 in the stratum's range. Where lin > 0 (always
        # near psi = 1, where lin is about n), the form -2 const / (lin + sqrt(...)) has no
        # cancellation and holds at quad = 0 too; (-lin + sqrt(...)) / (2 quad) lost four digits
        # with psi within 1e-11 of 1.
        root = np.sqrt(lin**2 - 4 * quad * const)
        fitted = np.where(lin > 0, -2 * const / (lin + root), (-lin + root) / (2 * quad))
        var = 1.0 / (1.0 / fitted + 1.0 / (n1 - fitted) + 1.0 / (m1 - fitted) + 1.0 / (n0 - m1 + fitted))
    statistic = float(np.sum((a - fitted) ** 2 / var))
    if tarone:
        statistic -= float(np.sum(a - fitted)) ** 2 / float(np.sum(var))
    dof = int(n.size) - 1
    p_value = float(chi2.sf(statistic, dof))
    return BreslowDayResult(statistic, dof, p_value, bool(tarone), int(n.size), st.n_dropped + n_constant, n_constant)


def _hypergeometric_pmf(n1: int, n0: int, m1: int) -> tuple[int, np.ndarray]:
    """(lowest value, pmf over the support) of the ones among ``n1`` rows drawn from ``n1 + n0``
    rows with ``m1`` ones."""
    low, high = max(0, m1 - n0), min(n1, m1)
    k = np.arange(low, high + 1, dtype=np.float64)
    log_p = _log_choose(m1, k) + _log_choose(n1 + n0 - m1, n1 - k) - _log_choose(n1 + n0, np.array([n1]))[0]
    return low, np.exp(log_p)


def stratified_permutation_test(
    outcome,
    group,
    strata,
    *,
    method: str = "auto",
    n_permutations: int = 9999,
    alternative: str = "two-sided",
    random_state=None,
) -> StratifiedTestResult:
    """Permutation test of a gap between two groups within strata (group relabelled within each stratum).

    Parameters
    ----------
    outcome : array_like, shape (n,)
        One outcome per row: numbers, 0/1 or booleans; finite.
    group : array_like of {0, 1}, shape (n,)
        1 for the group of interest, 0 for the other.
    strata : array_like, shape (n,)
        Each row's stratum; strata with one group only are dropped (``n_strata_dropped``).
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        ``"exact"`` (0/1 outcomes only): the exact null distribution, a convolution of one
        hypergeometric distribution per stratum (Mantel's exact conditional test); its cost is
        about the product of the total support and the largest stratum's, small for any real
        audit. ``"auto"``: exact for 0/1 outcomes, Monte Carlo otherwise.
    n_permutations : int, default 9999
        Monte Carlo relabellings.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"greater"``: group 1's outcome is higher within strata.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed for the Monte Carlo draws.

    Returns
    -------
    StratifiedTestResult

    Raises
    ------
    TypeError, ValueError
        As :func:`cmh_test` (``outcome`` may be any finite numbers here); unknown ``method`` or
        ``alternative``; ``method="exact"`` with non-0/1 outcomes; bad ``n_permutations`` or
        ``random_state``.

    Notes
    -----
    The statistic is the Mantel-Haenszel weighted gap ``sum_s w_s (mean_1s - mean_0s) / sum_s
    w_s`` with ``w_s = n_1s n_0s / n_s``. Because ``w_s (mean_1s - mean_0s) = S_1s - n_1s T_s /
    n_s`` (``S_1s`` the sum of group 1's outcomes, ``T_s`` the stratum's total), it is an
    increasing function of ``sum_s S_1s``, the statistic of Mantel's test [1]_ [2]_. Each
    stratum keeps its group sizes and its outcomes; under the null, which rows of a stratum
    are group 1 is a uniformly random choice, independently across strata. For 0/1 outcomes
    ``S_1s`` is hypergeometric, so ``sum_s S_1s`` has the convolution of those laws, computed
    exactly (with ``alternative="two-sided"`` the tables whose ``|sum_s S_1s - E|`` is at
    least the observed). Otherwise the rows of each stratum are shuffled and the p-value is
    ``(b + 1) / (m + 1)``. For 0/1 outcomes the two-sided exact test is the exact version of
    :func:`cmh_test`.

    References
    ----------
    .. [1] Mantel, N. and Haenszel, W. (1959). Statistical aspects of the analysis of data from
       retrospective studies of disease. *JNCI* 22, 719-748.
    .. [2] Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed. Wiley, sec. 7.3.5 (exact
       conditional test for 2 x 2 x K tables).
    .. [3] Good, P. I. (2005). *Permutation, Parametric, and Bootstrap Tests of Hypotheses*,
       3rd ed. Springer, sec. 3.6 (stratified permutation tests).

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import stratified_permutation_test
    >>> strata = np.repeat([0, 1], 100)
    >>> group = np.tile(np.repeat([1, 0], 50), 2)
    >>> y = np.r_[np.ones(30), np.zeros(20), np.ones(25), np.zeros(25), np.ones(10), np.zeros(40), np.ones(6), np.zeros(44)]
    >>> res = stratified_permutation_test(y, group, strata)
    >>> res.method, round(res.statistic, 3), round(res.p_value, 2)
    ('exact', 0.09, 0.2)
    """
    st = _as_strata(outcome, group, strata, binary_outcome=False)
    method = _check_choice(method, "method", _TEST_METHODS)
    alternative = _check_choice(alternative, "alternative", _ALTERNATIVES)
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    rng = _as_rng(random_state)
    binary = _is_binary(st.x)
    if method == "exact" and not binary:
        raise ValueError("`method='exact'` needs 0/1 `outcome`; use 'auto' or 'monte_carlo' for other outcomes")
    n1, n0 = st.n1, st.n0
    n = n1 + n0
    totals = np.bincount(st.codes, weights=st.x, minlength=n.size)
    sums1 = np.bincount(st.codes, weights=st.x * st.g, minlength=n.size)
    centre = float(np.sum(n1 * totals / n))  # E[sum_s S_1s] under the null
    weight = float(np.sum(n1 * n0 / n))
    observed = float(sums1.sum())
    statistic = st.unit * (observed - centre) / weight
    scale = max(float(np.abs(st.x).max()), 1.0)
    tol = _TIE_RTOL * scale * max(abs(observed), 1.0)

    def extreme(values: np.ndarray) -> np.ndarray:
        if alternative == "greater":
            return values >= observed - tol
        if alternative == "less":
            return values <= observed + tol
        return np.abs(values - centre) >= abs(observed - centre) - tol

    common = dict(alternative=alternative, n_strata=int(n.size), n_strata_dropped=st.n_dropped)
    if binary and method != "monte_carlo":
        low, pmf = 0, np.ones(1)
        for n1s, n0s, m1s in zip(n1.astype(int), n0.astype(int), totals.round().astype(int)):
            lo, p_s = _hypergeometric_pmf(n1s, n0s, m1s)
            low, pmf = low + lo, np.convolve(pmf, p_s)
        support = np.arange(low, low + pmf.size, dtype=np.float64)
        p = float(min(1.0, pmf[extreme(support)].sum() / pmf.sum()))
        return StratifiedTestResult._exact(statistic, p, **common)
    null = np.zeros(n_permutations)
    if binary:
        for n1s, n0s, m1s in zip(n1.astype(np.int64), n0.astype(np.int64), totals.round().astype(np.int64)):
            null += rng.hypergeometric(m1s, n1s + n0s - m1s, n1s, size=n_permutations)
    else:
        order = np.argsort(st.codes, kind="stable")
        values = st.x[order]
        starts = np.concatenate([[0], np.cumsum(n.astype(np.int64))[:-1]])
        for s, (start, size, take) in enumerate(zip(starts, n.astype(np.int64), n1.astype(np.int64))):
            pool = np.sort(values[start:start + size])
            rows = _batch_rows(None, int(size))
            for b0 in range(0, n_permutations, rows):
                b1 = min(b0 + rows, n_permutations)
                shuffled = rng.permuted(np.broadcast_to(pool, (b1 - b0, pool.size)), axis=1)
                null[b0:b1] += shuffled[:, :take].sum(axis=1)
    b = int(np.count_nonzero(extreme(null)))
    return StratifiedTestResult._monte_carlo(statistic, b, n_permutations, **common)
