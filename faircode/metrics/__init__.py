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

Import from here; the package keeps three private modules: ``_definitions`` (the metrics' names,
``RATE_METRICS`` and ``GAP_METRICS``, and the result types), ``_rates`` (:func:`rate`, one function
per rate, :func:`rate_outcomes`, and the input checks) and ``_gaps`` (:func:`gap`, one function per
gap, :func:`group_outcomes`, :func:`gap_rate`).
"""

from faircode.metrics._definitions import (
    EQUAL_OPPORTUNITY_RATE,
    FAVOURABLE,
    FAVOURABLE_OUTCOME_RATE,
    GAP_KIND,
    GAP_METRICS,
    GAP_RATE,
    RATE_METRICS,
    Gap,
    GroupOutcomes,
    Rate,
    RateOutcomes,
)
from faircode.metrics._gaps import (
    _validate_favourable,  # faircode.groups checks its `favourable` with it
    accuracy_difference,
    demographic_parity_difference,
    disparate_impact_ratio,
    equal_opportunity_difference,
    false_positive_rate_difference,
    gap,
    gap_rate,
    group_outcomes,
    precision_difference,
    true_positive_rate_difference,
)
from faircode.metrics._rates import (
    accuracy,
    false_positive_rate,
    non_selection_rate,
    precision,
    rate,
    rate_outcomes,
    selection_rate,
    true_negative_rate,
    true_positive_rate,
)

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
