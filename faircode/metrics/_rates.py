"""Rates of one group: :func:`rate` and one function per rate, and the outcomes they are means of.

Each rate is the mean of a 0/1 outcome over a subset of rows (:func:`rate_outcomes` returns
that outcome), in [0, 1]; a rate over no rows is NaN with a reason, never 0. The inputs are
checked first (0/1 labels, group masks that do not overlap). The table of rates and their
definitions is in :mod:`faircode.metrics`.
"""

from __future__ import annotations

import numpy as np

from faircode.metrics._definitions import _EMPTY_REASON, Rate, RATE_METRICS, RateOutcomes


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
