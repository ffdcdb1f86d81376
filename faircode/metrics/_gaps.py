"""Gaps between two groups: :func:`gap` and one function per gap, and the outcomes they compare.

Every gap is disadvantaged minus advantaged (the disparate impact ratio: divided by), of a rate
of :mod:`faircode.metrics._rates`, the favourable outcome's where the metric needs it
(:func:`gap_rate`); :func:`group_outcomes` hands the two groups' 0/1 outcomes to
:mod:`faircode.significance`. The table of gaps, their definitions and sources (Hardt, Price and
Srebro 2016; 29 CFR 1607.4(D)) is in :mod:`faircode.metrics`.
"""

from __future__ import annotations

from faircode.metrics._definitions import (
    EQUAL_OPPORTUNITY_RATE,
    FAVOURABLE,
    FAVOURABLE_OUTCOME_RATE,
    Gap,
    GAP_KIND,
    GAP_METRICS,
    GAP_RATE,
    GroupOutcomes,
)
from faircode.metrics._rates import _rate_from_outcomes, rate_outcomes, _validate_groups, _validate_metric


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
