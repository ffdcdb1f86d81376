"""Per-group rates and fairness gaps, named with the field's terms.

Rates (each a mean of a 0/1 outcome over a subset of rows, in [0, 1]):

==========================  =====================  ==========================
rate                        0/1 outcome            rows it is a mean over
==========================  =====================  ==========================
``selection_rate``          ``y_pred``             all rows
``non_selection_rate``      ``1 - y_pred``         all rows
``true_positive_rate``      ``y_pred``             rows with ``y_true == 1``
``false_positive_rate``     ``y_pred``             rows with ``y_true == 0``
``true_negative_rate``      ``1 - y_pred``         rows with ``y_true == 0``
``precision``               ``y_true``             rows with ``y_pred == 1``
``accuracy``                ``y_pred == y_true``   all rows
==========================  =====================  ==========================

Gaps compare a disadvantaged group with an advantaged (reference) group and are always
**disadvantaged minus advantaged** (signed), except the disparate impact ratio, which is
disadvantaged divided by advantaged:

==================================  ===========================================  ==========
gap                                 rate                                         kind
==================================  ===========================================  ==========
``demographic_parity_difference``   selection rate                               difference
``equal_opportunity_difference``    favourable-outcome rate among the deserving  difference
``true_positive_rate_difference``   true positive rate                           difference
``false_positive_rate_difference``  false positive rate                          difference
``precision_difference``            precision (PPV)                              difference
``accuracy_difference``             accuracy                                     difference
``disparate_impact_ratio``          favourable-outcome rate                      ratio
==================================  ===========================================  ==========

The rates are rates of the *positive class* (``y_true == 1``, ``y_pred == 1``), which is whatever
the audit's target calls positive; in the four audits of this project it is the harmful flag
(flagged ineligible, bad credit risk, not released, likely to reoffend). Equal opportunity
(Hardt, Price and Srebro 2016) is defined on the *favourable* outcome instead: people who merit
the favourable outcome should receive it at equal rates. So ``equal_opportunity_difference``
takes ``favourable`` (the manifest's ``target.favourable``) and compares

- ``favourable="positive"``: the true positive rate, ``P(y_pred = 1 | y_true = 1)``;
- ``favourable="negative"``: the true negative rate, ``P(y_pred = 0 | y_true = 0)``, which is
  ``1 -`` the false positive rate of the flag, so the gap is minus the false positive rate gap.

Either way a negative equal opportunity difference means the disadvantaged group's deserving
members receive the favourable outcome less often, and the name means the same in every audit.

The disparate impact ratio is also about the favourable outcome: the "four-fifths rule" of the
EEOC's Uniform Guidelines (29 CFR 1607.4(D), 1978) reads the ratio of *selection rates* for the
favourable decision (hired, approved), disadvantaged over advantaged, against 0.8. So
``disparate_impact_ratio`` takes ``favourable`` too and divides

- ``favourable="positive"``: selection rates, ``P(y_pred = 1)``;
- ``favourable="negative"``: non-selection rates, ``P(y_pred = 0)`` (the share *not* flagged).

A ratio below 1 means the disadvantaged group receives the favourable outcome less often. The
ratio of the harmful outcome's rates is a different number that the 0.8 threshold does not
apply to (a flag rate ratio of 1.25 is not a favourable ratio of 0.8).
``true_positive_rate_difference`` and ``false_positive_rate_difference`` stay as descriptive
gaps of the positive class, whatever it means.

fairlearn's own ``demographic_parity_difference`` is ``max - min`` over groups (unsigned);
ours keeps the sign so a reader sees which group is selected more often.

A rate whose denominator is empty (e.g. a true positive rate for a group with no positives)
is undefined: its value is NaN and ``reason`` says why; it is never reported as 0. A ratio
whose denominator is 0 is likewise undefined with a reason, never 0, 1 or a cap.

`rate_outcomes` and `group_outcomes` are the key to significance testing: they return the
exact 0/1 vectors a rate is a mean over, so the permutation test and the bootstrap interval
of a gap run on the rows the rate is defined on.

Vocabulary: the groups are chosen by keyword, ``disadvantaged=`` and ``advantaged=`` (0/1
masks), and every gap is disadvantaged minus advantaged (divided by, for the ratio).
`group_outcomes` hands the two groups' outcomes to :mod:`faircode.significance` as
``GroupOutcomes.a`` (disadvantaged) and ``.b`` (advantaged), the positional ``a, b`` of its
tests and intervals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "RATE_METRICS",
    "FAVOURABLE",
    "EQUAL_OPPORTUNITY_RATE",
    "FAVOURABLE_OUTCOME_RATE",
    "GAP_METRICS",
    "GAP_RATE",
    "GAP_KIND",
    "Rate",
    "Gap",
    "RateOutcomes",
    "GroupOutcomes",
    "rate",
    "selection_rate",
    "non_selection_rate",
    "true_positive_rate",
    "false_positive_rate",
    "precision",
    "accuracy",
    "rate_outcomes",
    "group_outcomes",
    "gap",
    "gap_rate",
    "true_negative_rate",
    "demographic_parity_difference",
    "equal_opportunity_difference",
    "true_positive_rate_difference",
    "false_positive_rate_difference",
    "precision_difference",
    "accuracy_difference",
    "disparate_impact_ratio",
]

RATE_METRICS: tuple[str, ...] = (
    "selection_rate",
    "non_selection_rate",
    "true_positive_rate",
    "false_positive_rate",
    "true_negative_rate",
    "precision",
    "accuracy",
)

#: The values of ``favourable``: which class of the target is the favourable outcome for the person.
FAVOURABLE: tuple[str, ...] = ("positive", "negative")

#: The rate the equal opportunity difference compares, by favourable class: the rate at which
#: people who merit the favourable outcome (``y_true`` is the favourable class) receive it.
EQUAL_OPPORTUNITY_RATE: dict[str, str] = {
    "positive": "true_positive_rate",
    "negative": "true_negative_rate",
}

#: The rate the disparate impact ratio divides, by favourable class: the share of all rows that
#: receive the favourable decision (EEOC Uniform Guidelines, 29 CFR 1607.4(D)).
FAVOURABLE_OUTCOME_RATE: dict[str, str] = {
    "positive": "selection_rate",
    "negative": "non_selection_rate",
}

#: Each gap metric and the rate it compares (``None``: the rate depends on the favourable class,
#: `EQUAL_OPPORTUNITY_RATE` or `FAVOURABLE_OUTCOME_RATE`; see `gap_rate`).
GAP_RATE: dict[str, str | None] = {
    "demographic_parity_difference": "selection_rate",
    "equal_opportunity_difference": None,
    "true_positive_rate_difference": "true_positive_rate",
    "false_positive_rate_difference": "false_positive_rate",
    "precision_difference": "precision",
    "accuracy_difference": "accuracy",
    "disparate_impact_ratio": None,
}

#: Whether a gap metric is a difference (disadvantaged - advantaged) or a ratio (disadvantaged / advantaged).
GAP_KIND: dict[str, str] = {
    name: ("ratio" if name == "disparate_impact_ratio" else "difference") for name in GAP_RATE
}

GAP_METRICS: tuple[str, ...] = tuple(GAP_RATE)

# Why a rate's denominator can be empty, in words a reader of the results table understands.
_EMPTY_REASON: dict[str, str] = {
    "selection_rate": "no rows",
    "non_selection_rate": "no rows",
    "true_positive_rate": "no actual positives (y_true == 1)",
    "false_positive_rate": "no actual negatives (y_true == 0)",
    "true_negative_rate": "no actual negatives (y_true == 0)",
    "precision": "no predicted positives (y_pred == 1)",
    "accuracy": "no rows",
}


@dataclass(frozen=True)
class Rate:
    """A rate of one group: ``numerator / denominator``, or NaN with a reason.

    Attributes
    ----------
    metric : str
        One of `RATE_METRICS`.
    value : float
        The rate in [0, 1]; NaN when undefined.
    numerator : int
        Rows in the denominator subset whose outcome is 1.
    denominator : int
        Rows the rate is a mean over (e.g. actual positives for the true positive rate).
    reason : str
        Empty when defined; otherwise why the rate is undefined.
    """

    metric: str
    value: float
    numerator: int
    denominator: int
    reason: str = ""

    @property
    def defined(self) -> bool:
        """True when the rate has a non-empty denominator."""
        return not self.reason

    def __repr__(self) -> str:
        if not self.defined:
            return f"Rate({self.metric}: undefined, {self.reason})"
        return f"Rate({self.metric}={self.value:.4f}, {self.numerator}/{self.denominator})"


@dataclass(frozen=True)
class Gap:
    """A fairness gap between the disadvantaged and the advantaged group.

    Attributes
    ----------
    metric : str
        One of `GAP_METRICS`.
    kind : {"difference", "ratio"}
        ``difference`` = disadvantaged minus advantaged; ``ratio`` = disadvantaged / advantaged.
    value : float
        The gap (a difference in [-1, 1] or a ratio in [0, inf)); NaN when undefined.
    disadvantaged, advantaged : Rate
        The rate of each group.
    reason : str
        Empty when defined; otherwise why the gap is undefined.
    """

    metric: str
    kind: str
    value: float
    disadvantaged: Rate
    advantaged: Rate
    reason: str = ""

    @property
    def defined(self) -> bool:
        """True when both rates (and, for a ratio, a non-zero denominator) exist."""
        return not self.reason

    def __repr__(self) -> str:
        shown = f"{self.value:+.4f}" if self.kind == "difference" else f"{self.value:.4f}"
        body = f"undefined, {self.reason}" if not self.defined else shown
        return (
            f"Gap({self.metric}: {body}; disadvantaged {self.disadvantaged.value:.4f} "
            f"(n={self.disadvantaged.denominator}), advantaged {self.advantaged.value:.4f} "
            f"(n={self.advantaged.denominator}))"
        )


@dataclass(frozen=True, repr=False)
class RateOutcomes:
    """The 0/1 outcome vector a rate is a mean over, and the rows it is defined on.

    Attributes
    ----------
    metric : str
        One of `RATE_METRICS`.
    outcome : ndarray of int8, shape (n,)
        The 0/1 outcome of every row (meaningful only where `rows` is True).
    rows : ndarray of bool, shape (n,)
        The rows in the rate's denominator.
    """

    metric: str
    outcome: np.ndarray
    rows: np.ndarray

    def __repr__(self) -> str:
        return f"RateOutcomes({self.metric}: {int(self.rows.sum())} of {self.rows.size} rows)"


@dataclass(frozen=True, repr=False)
class GroupOutcomes:
    """The 0/1 outcomes of each group over the rows a rate is defined on.

    ``a`` is the disadvantaged group, ``b`` the advantaged one, and ``a.mean() - b.mean()`` is
    the gap; pass ``a, b`` to ``faircode.significance.significance_report``.

    Attributes
    ----------
    metric : str
        One of `RATE_METRICS`.
    a : ndarray of int8, shape (n_a,)
        Disadvantaged group's outcomes.
    b : ndarray of int8, shape (n_b,)
        Advantaged group's outcomes.
    """

    metric: str
    a: np.ndarray
    b: np.ndarray

    def __repr__(self) -> str:
        return f"GroupOutcomes({self.metric}: n_a={self.a.size}, n_b={self.b.size})"


# --------------------------------------------------------------------------- validation


def _as_binary(values, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if not np.issubdtype(arr.dtype, np.number):
        raise ValueError(f"`{name}` must hold 0/1 numbers, got dtype {arr.dtype}")
    if arr.size and not np.isin(arr, (0, 1)).all():
        bad = arr[~np.isin(arr, (0, 1))][0]
        raise ValueError(f"`{name}` must hold only 0 and 1 (1 = positive class), found {bad!r}")
    return arr.astype(np.int8)


def _validate_labels(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    y_true = _as_binary(y_true, "y_true")
    y_pred = _as_binary(y_pred, "y_pred")
    if y_true.size != y_pred.size:
        raise ValueError(
            f"`y_true` and `y_pred` must have the same length, got {y_true.size} and {y_pred.size}"
        )
    return y_true, y_pred


def _validate_metric(metric: str, allowed: tuple[str, ...], name: str) -> str:
    if metric not in allowed:
        raise ValueError(f"`{name}` must be one of {', '.join(allowed)}; got {metric!r}")
    return metric


def _validate_groups(n: int, disadvantaged, advantaged) -> tuple[np.ndarray, np.ndarray]:
    dis = _as_binary(disadvantaged, "disadvantaged").astype(bool)
    if dis.size != n:
        raise ValueError(f"`disadvantaged` must have one entry per row ({n}), got {dis.size}")
    if advantaged is None:
        return dis, ~dis
    adv = _as_binary(advantaged, "advantaged").astype(bool)
    if adv.size != n:
        raise ValueError(f"`advantaged` must have one entry per row ({n}), got {adv.size}")
    if (dis & adv).any():
        raise ValueError("`disadvantaged` and `advantaged` must not overlap (a row is in both)")
    return dis, adv


# --------------------------------------------------------------------------- rates


def rate_outcomes(metric: str, y_true, y_pred) -> RateOutcomes:
    """Return the 0/1 outcome vector a rate is a mean over, and its rows.

    Parameters
    ----------
    metric : str
        One of ``selection_rate``, ``non_selection_rate``, ``true_positive_rate``, ``false_positive_rate``,
        ``true_negative_rate``, ``precision``, ``accuracy``.
    y_true, y_pred : array_like of {0, 1}, shape (n,)
        True and predicted labels, 1 = positive class.

    Returns
    -------
    RateOutcomes
        ``outcome[rows].mean()`` is the rate.

    Raises
    ------
    ValueError
        If `metric` is unknown, or the labels are not 1-D 0/1 arrays of equal length.

    Notes
    -----
    selection rate: ``y_pred`` over all rows; non-selection rate: ``1 - y_pred`` over all
    rows; true positive rate: ``y_pred`` over
    ``y_true == 1``; false positive rate: ``y_pred`` over ``y_true == 0``; true negative rate:
    ``1 - y_pred`` over ``y_true == 0``; precision:
    ``y_true`` over ``y_pred == 1``; accuracy: ``y_pred == y_true`` over all rows.

    Example
    -------
    >>> o = rate_outcomes("true_positive_rate", [1, 1, 0], [1, 0, 1])
    >>> o.outcome[o.rows].tolist()
    [1, 0]
    """
    metric = _validate_metric(metric, RATE_METRICS, "metric")
    y_true, y_pred = _validate_labels(y_true, y_pred)
    everything = np.ones(y_true.size, dtype=bool)
    if metric == "selection_rate":
        outcome, rows = y_pred, everything
    elif metric == "non_selection_rate":
        outcome, rows = 1 - y_pred, everything
    elif metric == "true_positive_rate":
        outcome, rows = y_pred, y_true == 1
    elif metric == "false_positive_rate":
        outcome, rows = y_pred, y_true == 0
    elif metric == "true_negative_rate":
        outcome, rows = 1 - y_pred, y_true == 0
    elif metric == "precision":
        outcome, rows = y_true, y_pred == 1
    else:
        outcome, rows = (y_pred == y_true).astype(np.int8), everything
    return RateOutcomes(metric=metric, outcome=outcome.astype(np.int8), rows=rows)


def _rate_from_outcomes(metric: str, outcome: np.ndarray) -> Rate:
    n = int(outcome.size)
    k = int(outcome.sum())
    if n == 0:
        return Rate(metric, float("nan"), 0, 0, reason=_EMPTY_REASON[metric])
    return Rate(metric, k / n, k, n)


def rate(metric: str, y_true, y_pred) -> Rate:
    """Compute one rate (by name) over all rows given.

    Parameters
    ----------
    metric : str
        One of `RATE_METRICS`.
    y_true, y_pred : array_like of {0, 1}, shape (n,)
        True and predicted labels, 1 = positive class.

    Returns
    -------
    Rate
        Value in [0, 1], or NaN with a reason when the denominator is empty.

    Raises
    ------
    ValueError
        If `metric` is unknown or the labels are invalid.

    Example
    -------
    >>> rate("selection_rate", [0, 1, 1, 0], [1, 1, 0, 0]).value
    0.5
    """
    o = rate_outcomes(metric, y_true, y_pred)
    return _rate_from_outcomes(o.metric, o.outcome[o.rows])


def selection_rate(y_true, y_pred) -> Rate:
    """Selection rate: share of rows predicted positive, ``mean(y_pred)``.

    Parameters
    ----------
    y_true, y_pred : array_like of {0, 1}, shape (n,)
        True and predicted labels (``y_true`` is only validated).

    Returns
    -------
    Rate
        In [0, 1]; NaN with a reason for zero rows.

    Example
    -------
    >>> selection_rate([0, 0, 1, 1], [1, 0, 0, 0]).value
    0.25
    """
    return rate("selection_rate", y_true, y_pred)


def non_selection_rate(y_true, y_pred) -> Rate:
    """Non-selection rate: share of rows predicted negative, ``mean(1 - y_pred)``.

    The rate of the favourable decision when the positive class is the harmful one (flagged,
    refused); the disparate impact ratio divides it when ``favourable="negative"``.

    Parameters
    ----------
    y_true, y_pred : array_like of {0, 1}, shape (n,)
        True and predicted labels (``y_true`` is only validated).

    Returns
    -------
    Rate
        In [0, 1]; NaN with a reason for zero rows.

    Example
    -------
    >>> non_selection_rate([0, 0, 1, 1], [1, 0, 0, 0]).value
    0.75
    """
    return rate("non_selection_rate", y_true, y_pred)


def true_positive_rate(y_true, y_pred) -> Rate:
    """True positive rate (recall): ``P(y_pred = 1 | y_true = 1)``.

    Parameters
    ----------
    y_true, y_pred : array_like of {0, 1}, shape (n,)

    Returns
    -------
    Rate
        In [0, 1]; NaN with reason "no actual positives" when ``y_true`` has no 1.

    Example
    -------
    >>> true_positive_rate([1, 1, 0], [1, 0, 0]).value
    0.5
    """
    return rate("true_positive_rate", y_true, y_pred)


def false_positive_rate(y_true, y_pred) -> Rate:
    """False positive rate: ``P(y_pred = 1 | y_true = 0)``.

    Parameters
    ----------
    y_true, y_pred : array_like of {0, 1}, shape (n,)

    Returns
    -------
    Rate
        In [0, 1]; NaN with reason "no actual negatives" when ``y_true`` has no 0.

    Example
    -------
    >>> false_positive_rate([0, 0, 1], [1, 0, 1]).value
    0.5
    """
    return rate("false_positive_rate", y_true, y_pred)


def true_negative_rate(y_true, y_pred) -> Rate:
    """True negative rate (specificity): ``P(y_pred = 0 | y_true = 0)``, ``1 -`` the false positive rate.

    Parameters
    ----------
    y_true, y_pred : array_like of {0, 1}, shape (n,)

    Returns
    -------
    Rate
        In [0, 1]; NaN with reason "no actual negatives" when ``y_true`` has no 0.

    Example
    -------
    >>> true_negative_rate([0, 0, 1], [1, 0, 1]).value
    0.5
    """
    return rate("true_negative_rate", y_true, y_pred)


def precision(y_true, y_pred) -> Rate:
    """Precision (positive predictive value): ``P(y_true = 1 | y_pred = 1)``.

    Parameters
    ----------
    y_true, y_pred : array_like of {0, 1}, shape (n,)

    Returns
    -------
    Rate
        In [0, 1]; NaN with reason "no predicted positives" when ``y_pred`` has no 1.

    Example
    -------
    >>> precision([1, 0, 0], [1, 1, 0]).value
    0.5
    """
    return rate("precision", y_true, y_pred)


def accuracy(y_true, y_pred) -> Rate:
    """Accuracy: share of rows with ``y_pred == y_true``.

    Parameters
    ----------
    y_true, y_pred : array_like of {0, 1}, shape (n,)

    Returns
    -------
    Rate
        In [0, 1]; NaN with a reason for zero rows.

    Example
    -------
    >>> accuracy([1, 0, 0, 1], [1, 1, 0, 1]).value
    0.75
    """
    return rate("accuracy", y_true, y_pred)


# --------------------------------------------------------------------------- gaps


def group_outcomes(metric: str, y_true, y_pred, *, disadvantaged, advantaged=None) -> GroupOutcomes:
    """Split a rate's 0/1 outcomes into the disadvantaged and the advantaged group.

    Parameters
    ----------
    metric : str
        One of `RATE_METRICS`.
    y_true, y_pred : array_like of {0, 1}, shape (n,)
        True and predicted labels, 1 = positive class.
    disadvantaged : array_like of {0, 1} or bool, shape (n,)
        1 = row belongs to the disadvantaged group.
    advantaged : array_like of {0, 1} or bool, shape (n,), optional
        1 = row belongs to the advantaged (reference) group. Rows in neither group are left
        out. Default: every row not in `disadvantaged`.

    Returns
    -------
    GroupOutcomes
        ``a`` and ``b``: each group's outcomes over the rows the rate is defined on.

    Raises
    ------
    ValueError
        If `metric` is unknown, the arrays are invalid, or the groups overlap.

    Example
    -------
    >>> g = group_outcomes("selection_rate", [0, 1, 0, 1], [1, 1, 0, 0], disadvantaged=[1, 1, 0, 0])
    >>> g.a.tolist(), g.b.tolist()
    ([1, 1], [0, 0])
    """
    o = rate_outcomes(metric, y_true, y_pred)
    dis, adv = _validate_groups(o.outcome.size, disadvantaged, advantaged)
    return GroupOutcomes(metric=metric, a=o.outcome[o.rows & dis], b=o.outcome[o.rows & adv])


def _validate_favourable(favourable) -> str:
    if favourable not in FAVOURABLE:
        raise ValueError(
            "`favourable` must be 'positive' or 'negative' (which class of y_true is the favourable "
            f"outcome for the person; an audit's manifest declares it as target.favourable); got {favourable!r}"
        )
    return favourable


def gap_rate(metric: str, *, favourable: str | None = None) -> str:
    """The rate a gap metric compares.

    Parameters
    ----------
    metric : str
        One of `GAP_METRICS`.
    favourable : {"positive", "negative"}, optional
        Which class of ``y_true`` is the favourable outcome for the person; required for
        ``equal_opportunity_difference`` and ``disparate_impact_ratio`` (see the module docstring).

    Returns
    -------
    str
        One of `RATE_METRICS`.

    Raises
    ------
    ValueError
        If `metric` is unknown, or `favourable` is missing or invalid for the equal
        opportunity difference or the disparate impact ratio.

    Example
    -------
    >>> gap_rate("equal_opportunity_difference", favourable="negative")
    'true_negative_rate'
    >>> gap_rate("disparate_impact_ratio", favourable="negative")
    'non_selection_rate'
    """
    metric = _validate_metric(metric, GAP_METRICS, "metric")
    if favourable is not None:
        favourable = _validate_favourable(favourable)
    if GAP_RATE[metric] is not None:
        return GAP_RATE[metric]
    if favourable is None:
        raise ValueError(
            f"`favourable` is required for {metric}: 'positive' or 'negative', the class of y_true "
            "that is the favourable outcome for the person (an audit's manifest declares it as "
            "target.favourable)"
        )
    if metric == "disparate_impact_ratio":
        return FAVOURABLE_OUTCOME_RATE[favourable]
    return EQUAL_OPPORTUNITY_RATE[favourable]


def gap(metric: str, y_true, y_pred, *, disadvantaged, advantaged=None, favourable: str | None = None) -> Gap:
    """Compute a fairness gap (by name) between the disadvantaged and the advantaged group.

    Parameters
    ----------
    metric : str
        One of `GAP_METRICS`.
    y_true, y_pred : array_like of {0, 1}, shape (n,)
        True and predicted labels, 1 = positive class.
    disadvantaged : array_like of {0, 1} or bool, shape (n,)
        1 = row belongs to the disadvantaged group.
    advantaged : array_like of {0, 1} or bool, shape (n,), optional
        1 = row belongs to the advantaged (reference) group; default: all other rows.
    favourable : {"positive", "negative"}, optional
        Which class of ``y_true`` is the favourable outcome for the person (the manifest's
        ``target.favourable``). Required for ``equal_opportunity_difference``, which compares
        the rate at which people who merit the favourable outcome receive it (Hardt, Price and
        Srebro 2016): the true positive rate if ``"positive"``, the true negative rate if
        ``"negative"``. Required for ``disparate_impact_ratio`` too, which divides the rates
        of the favourable decision (EEOC Uniform Guidelines): selection rates if
        ``"positive"``, non-selection rates if ``"negative"``. Ignored by the other metrics.

    Returns
    -------
    Gap
        ``value`` = rate(disadvantaged) - rate(advantaged) for a difference,
        rate(disadvantaged) / rate(advantaged) of the favourable decision for the disparate
        impact ratio; NaN with a
        reason when either rate is undefined or the ratio's denominator is 0.

    Raises
    ------
    ValueError
        If `metric` is unknown, the arrays are invalid, the groups overlap, or `favourable` is
        missing (equal opportunity difference) or not "positive"/"negative".

    References
    ----------
    .. [1] Hardt, M., Price, E. and Srebro, N. (2016). Equality of opportunity in supervised
       learning. *Advances in Neural Information Processing Systems* 29.
    .. [2] Equal Employment Opportunity Commission et al. (1978). Uniform Guidelines on Employee
       Selection Procedures, 29 CFR 1607.4(D) (the "four-fifths rule").

    Example
    -------
    >>> gap("demographic_parity_difference", [0, 0, 0, 0], [1, 0, 1, 1],
    ...     disadvantaged=[1, 1, 0, 0]).value
    -0.5
    """
    rate_name = gap_rate(metric, favourable=favourable)
    g = group_outcomes(rate_name, y_true, y_pred, disadvantaged=disadvantaged, advantaged=advantaged)
    r_dis = _rate_from_outcomes(rate_name, g.a)
    r_adv = _rate_from_outcomes(rate_name, g.b)
    kind = GAP_KIND[metric]
    reasons = [f"{side} group: {r.reason}" for side, r in (("disadvantaged", r_dis), ("advantaged", r_adv)) if r.reason]
    if reasons:
        return Gap(metric, kind, float("nan"), r_dis, r_adv, reason="; ".join(reasons))
    if kind == "difference":
        return Gap(metric, kind, r_dis.value - r_adv.value, r_dis, r_adv)
    if r_adv.numerator == 0:
        return Gap(
            metric, kind, float("nan"), r_dis, r_adv,
            reason=f"ratio undefined: advantaged group's {rate_name.replace('_', ' ')} is 0",
        )
    return Gap(metric, kind, r_dis.value / r_adv.value, r_dis, r_adv)


_FAVOURABLE_DOC = {
    "equal_opportunity_difference": 'required: the true positive rate is compared if "positive", the true negative rate if "negative"',
    "disparate_impact_ratio": 'required: selection rates are divided if "positive", non-selection rates if "negative"',
}


def _gap_doc(metric: str) -> str:
    rate_name = (GAP_RATE[metric] or ("favourable-outcome rate" if metric == "disparate_impact_ratio"
                                      else "favourable-outcome rate among the deserving")).replace("_", " ")
    op = "divided by" if GAP_KIND[metric] == "ratio" else "minus"
    return f"""{metric.replace('_', ' ').capitalize()}: {rate_name} of the disadvantaged group {op} the advantaged group's.

    Parameters
    ----------
    y_true, y_pred : array_like of {{0, 1}}, shape (n,)
        True and predicted labels, 1 = positive class.
    disadvantaged : array_like of {{0, 1}} or bool, shape (n,)
        1 = row belongs to the disadvantaged group.
    advantaged : array_like of {{0, 1}} or bool, shape (n,), optional
        1 = row belongs to the advantaged (reference) group; default: all other rows.
    favourable : {{"positive", "negative"}}, optional
        Which class of ``y_true`` is favourable for the person; {_FAVOURABLE_DOC.get(metric, 'ignored (only the equal opportunity difference and the disparate impact ratio need it)')}.

    Returns
    -------
    Gap
        NaN with a reason when a group's {rate_name} is undefined{' or the advantaged rate is 0' if GAP_KIND[metric] == 'ratio' else ''}.

    Raises
    ------
    ValueError
        If the arrays are invalid or the groups overlap.

    See Also
    --------
    gap : the same computation, metric chosen by name.
    """


def _make_gap(metric: str):
    def fn(y_true, y_pred, *, disadvantaged, advantaged=None, favourable=None) -> Gap:
        return gap(metric, y_true, y_pred, disadvantaged=disadvantaged, advantaged=advantaged,
                   favourable=favourable)

    fn.__name__ = fn.__qualname__ = metric
    fn.__doc__ = _gap_doc(metric)
    return fn


demographic_parity_difference = _make_gap("demographic_parity_difference")
equal_opportunity_difference = _make_gap("equal_opportunity_difference")
true_positive_rate_difference = _make_gap("true_positive_rate_difference")
false_positive_rate_difference = _make_gap("false_positive_rate_difference")
precision_difference = _make_gap("precision_difference")
accuracy_difference = _make_gap("accuracy_difference")
disparate_impact_ratio = _make_gap("disparate_impact_ratio")
