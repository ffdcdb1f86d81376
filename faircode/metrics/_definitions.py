"""The metrics' names and result types: what :mod:`faircode.metrics` computes, and what it returns.

``RATE_METRICS`` and ``GAP_METRICS`` (with each gap's rate, ``GAP_RATE``, and kind, ``GAP_KIND``;
the favourable-outcome rates, ``EQUAL_OPPORTUNITY_RATE`` and ``FAVOURABLE_OUTCOME_RATE``), and
the frozen results: :class:`Rate` (a value in [0, 1], or NaN with a reason), :class:`Gap`
(disadvantaged minus advantaged, or divided by for the ratio), :class:`RateOutcomes` and
:class:`GroupOutcomes` (the 0/1 vectors a rate is a mean over, which the significance tests
take). The rates are computed in :mod:`faircode.metrics._rates`, the gaps in
:mod:`faircode.metrics._gaps`; the definitions and their sources are in :mod:`faircode.metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
