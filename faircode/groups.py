"""Every group of a protected attribute, and intersections of attributes.

The two-group gaps of :mod:`faircode.metrics` compare one disadvantaged group with one
reference. Here an attribute has k >= 2 groups (all of COMPAS's race categories) or is the
intersection of several (sex x race), as the manifest's ``groups:`` section declares them:

- :func:`group_labels`: each row's group for a declared attribute or intersection (merged
  categories as one group; left-out categories and, on request, missing values as no group);
- :func:`metric_by_group`: one rate per group, the way fairlearn's ``MetricFrame.by_group``
  reports it;
- :func:`compare_groups`: the rates with a Wilson interval each, the summaries an auditor reads
  (largest minus smallest, fairlearn's ``between_groups`` difference; the min/max ratio; each
  group against the reference) and their tests: the omnibus chi-squared test of homogeneity
  (the one to quote for "is any group treated differently?"), the studentised maxT test with
  the pairs it names, the range (max-gap) permutation test of the largest raw gap quoted, and
  pairwise tests with Holm's correction. Groups with
  fewer rows than the manifest's ``min_size`` are reported with a warning and left out of the
  largest gap and of every test, so a three-person cell cannot become the headline.

Rates (each in [0, 1], a mean of a 0/1 outcome over some rows of a group) follow the
project's convention: the positive class is what the manifest's ``target.positive`` names (in
these audits, the harmful flag), so the selection rate is the flag rate ``P(y_pred = 1)`` and
the true and false positive rates, precision and accuracy are those of the flag.
``true_favourable_rate`` is the rate the literature defines relative to the favourable outcome:
the share given the favourable outcome among those whose true outcome is favourable
(``P(y_pred = f | y_true = f)`` with ``f`` the manifest's ``target.favourable`` class), the rate
equal opportunity asks to be equal across groups (Hardt, Price and Srebro 2016). With
``favourable: negative`` it is the flag's true negative rate, ``1 - false_positive_rate``
(`faircode.metrics.EQUAL_OPPORTUNITY_RATE` says which rate it is).

Vocabulary: with k groups no one group is "the disadvantaged one"; a comparison is a group
against the ``reference`` (``diff_vs_reference`` = group minus reference), the role the
advantaged group has in :mod:`faircode.metrics`, or between two groups ``group_a`` and
``group_b`` (``gap = mean_a - mean_b``), as in :mod:`faircode.significance`.

References
----------
.. [1] Buolamwini, J. and Gebru, T. (2018). Gender Shades: intersectional accuracy disparities
   in commercial gender classification. *Proceedings of FAT* 2018*, PMLR 81, 77-91.
.. [2] Kearns, M., Neel, S., Roth, A. and Wu, Z. S. (2018). Preventing fairness gerrymandering:
   auditing and learning for subgroup fairness. *ICML 2018*, PMLR 80, 2564-2572.
.. [3] Hardt, M., Price, E. and Srebro, N. (2016). Equality of opportunity in supervised
   learning. *NeurIPS 2016*.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from faircode.formatting import INTERSECTION_SEPARATOR, did_you_mean
from faircode.metrics import (
    EQUAL_OPPORTUNITY_RATE,
    RATE_METRICS,
    RateOutcomes,
    _validate_favourable,
    rate_outcomes,
)
from faircode.significance import (
    SMALL_SAMPLE_THRESHOLD,
    HomogeneityTestResult,
    MaxGapTestResult,
    MaxTTestResult,
    PairwiseComparison,
    homogeneity_test,
    max_gap_test,
    max_t_test,
    pairwise_tests,
    wilson_interval,
)

if TYPE_CHECKING:
    from faircode.audit import Audit

__all__ = [
    "GROUP_METRICS",
    "GroupComparison",
    "GroupLabels",
    "compare_groups",
    "group_labels",
    "group_rate_outcomes",
    "metric_by_group",
]

#: The rates reported for every group: the rates of the flag and the favourable-outcome rate
#: (not ``non_selection_rate``: it is one minus the selection rate, with the same test).
GROUP_METRICS: tuple[str, ...] = (*(m for m in RATE_METRICS if m != "non_selection_rate"), "true_favourable_rate")

#: Why a group's rate can be undefined, in words a reader of the results file understands.
_EMPTY_REASON = {
    "selection_rate": "no rows",
    "true_positive_rate": "no actual positives (y_true == 1)",
    "false_positive_rate": "no actual negatives (y_true == 0)",
    "true_negative_rate": "no actual negatives (y_true == 0)",
    "precision": "no predicted positives (y_pred == 1)",
    "accuracy": "no rows",
    "true_favourable_rate": "no rows whose true outcome is the favourable one",
}


@dataclass(frozen=True, repr=False)
class GroupLabels:
    """Each row's group for one declared attribute or intersection.

    Attributes
    ----------
    name : str
        The attribute's or intersection's name in the manifest.
    kind : {"attribute", "intersection"}
    labels : numpy.ndarray of object, shape (n,)
        Per row of ``audit.df``, the group's display label, or None for a row in no group (a
        left-out category, a missing value with ``missing: leave_out``, or, for an
        intersection, a row left out of any of its attributes).
    groups : tuple of str
        Every group, in declared order (for an intersection, every combination, first attribute
        slowest); a group may have no rows.
    reference : str
        The reference group's display label.
    notes : tuple of str
        What was merged or left out, and why (from the manifest).
    """

    name: str
    kind: str
    labels: np.ndarray
    groups: tuple[str, ...]
    reference: str
    notes: tuple[str, ...]

    def __repr__(self) -> str:
        counts = pd.Series(self.labels).value_counts()
        shown = ", ".join(f"{g}: {int(counts.get(g, 0))}" for g in self.groups)
        return (f"GroupLabels({self.name!r}, {self.kind}, reference={self.reference!r}; {shown}; "
                f"in no group: {int(pd.isna(self.labels).sum())})")


@functools.lru_cache(maxsize=64)
def group_labels(audit: Audit, name: str) -> GroupLabels:
    """Each row's group for an attribute or intersection declared in the manifest's ``groups:``.

    Parameters
    ----------
    audit : faircode.audit.Audit
        From :func:`faircode.load_audit` (which has already checked that every value of the
        column is declared and every declared value occurs).
    name : str
        A name from ``groups.attributes`` or ``groups.intersections``.

    Returns
    -------
    GroupLabels
        ``labels[audit.test]`` are the test rows' groups. Cached per (audit, name): the same
        read-only object on every call.

    Raises
    ------
    ValueError
        If the manifest declares no ``groups:`` or ``name`` is not one of its names (the message
        lists them, with a did-you-mean).

    Example
    -------
    >>> g = group_labels(load_audit("recidivism-risk"), "race")  # doctest: +SKIP
    >>> g.reference  # doctest: +SKIP
    'White'
    """
    spec = audit.manifest.groups
    declared = spec.by_name() if spec is not None else {}
    if name not in declared:
        known = ", ".join(declared) or f"none: {audit.slug}'s manifest has no `groups:` section"
        raise ValueError(f"`name` must be a group attribute or intersection of {audit.slug}; "
                         f"got {name!r}{did_you_mean(name, declared)}; declared: {known}")
    item = declared[name]
    if hasattr(item, "column"):
        return _attribute_labels(audit, item)
    parts = [_attribute_labels(audit, declared[a]) for a in item.attributes]
    labels = np.full(len(audit.df), None, dtype=object)
    present = np.all([pd.notna(p.labels) for p in parts], axis=0)
    joined = [INTERSECTION_SEPARATOR.join(map(str, combo)) for combo in zip(*(p.labels[present] for p in parts))]
    labels[present] = joined
    labels.setflags(write=False)
    groups = tuple(INTERSECTION_SEPARATOR.join(c) for c in itertools.product(*(p.groups for p in parts)))
    reference = INTERSECTION_SEPARATOR.join(
        _display(declared[a], str(r)) for a, r in zip(item.attributes, item.reference)
    )
    notes = tuple(n for p in parts for n in p.notes)
    return GroupLabels(name, "intersection", labels, groups, reference, notes)


def _display(attr, group: str) -> str:
    return attr.labels.get(group, group)


def _attribute_labels(audit: Audit, attr) -> GroupLabels:
    from faircode.audit import _isin  # the loader's value matching (text, numbers, booleans)

    col = audit.df[attr.column]
    labels = np.full(len(col), None, dtype=object)
    for value in attr.categories:
        labels[_isin(col, [value])] = _display(attr, str(value))
    notes = []
    for m in attr.merge:
        labels[_isin(col, m.values)] = _display(attr, m.into)
        notes.append(f"{attr.name}: {', '.join(map(str, m.values))} counted as one group "
                     f"({_display(attr, m.into)}): {m.reason}")
    for lo in attr.leave_out:
        notes.append(f"{attr.name}: {', '.join(map(str, lo.values))} left out: {lo.reason}")
    missing = int(col.isna().sum())
    if missing:
        notes.append(f"{attr.name}: {missing} row(s) with a missing {attr.column!r} left out")
    labels.setflags(write=False)
    groups = tuple(_display(attr, g) for g in attr.group_names)
    return GroupLabels(attr.name, "attribute", labels, groups, _display(attr, str(attr.reference)), tuple(notes))


# --------------------------------------------------------------------------- rates by group


def group_rate_outcomes(metric: str, y_true, y_pred, *, favourable: str) -> RateOutcomes:
    """The 0/1 outcome a group rate is a mean over, and the rows it is defined on.

    Parameters
    ----------
    metric : str
        One of `GROUP_METRICS`.
    y_true, y_pred : array_like of {0, 1}, shape (n,)
        True and predicted labels, 1 = the manifest's positive class.
    favourable : {"negative", "positive"}
        Which class is the favourable outcome for the person (the manifest's
        ``target.favourable``); used by ``true_favourable_rate`` only.

    Returns
    -------
    RateOutcomes
        ``outcome[rows].mean()`` is the rate.

    Raises
    ------
    ValueError
        Unknown ``metric`` or ``favourable``; labels that are not 1-D 0/1 arrays of one length.

    Example
    -------
    >>> o = group_rate_outcomes("true_favourable_rate", [0, 0, 1], [0, 1, 1], favourable="negative")
    >>> o.outcome[o.rows].tolist()   # among y_true == 0: predicted 0, predicted 1
    [1, 0]
    """
    _check_metric(metric)
    favourable = _validate_favourable(favourable)
    if metric != "true_favourable_rate":
        return rate_outcomes(metric, y_true, y_pred)
    # The favourable class's own true positive rate is equal opportunity's rate: the true
    # positive or the true negative rate (`faircode.metrics.EQUAL_OPPORTUNITY_RATE`).
    o = rate_outcomes(EQUAL_OPPORTUNITY_RATE[favourable], y_true, y_pred)
    return dataclasses.replace(o, metric=metric)


def metric_by_group(metric: str, y_true, y_pred, groups, *, favourable: str) -> pd.DataFrame:
    """One rate per group, as fairlearn's ``MetricFrame(...).by_group`` reports it.

    Parameters
    ----------
    metric : str
        One of `GROUP_METRICS`.
    y_true, y_pred : array_like of {0, 1}, shape (n,)
        True and predicted labels, 1 = the positive class.
    groups : array_like, shape (n,)
        Each row's group; None (or NaN) puts a row in no group.
    favourable : {"negative", "positive"}
        The favourable class (see :func:`group_rate_outcomes`).

    Returns
    -------
    pandas.DataFrame
        Index: the groups present (sorted); columns ``value`` (the rate, NaN when its
        denominator is empty), ``n_outcome`` (rows with outcome 1), ``n_group`` (rows the rate
        is a mean over) and ``reason`` (why a rate is undefined, else empty).

    Raises
    ------
    ValueError
        As :func:`group_rate_outcomes`; ``groups`` of another length.

    Example
    -------
    >>> metric_by_group("selection_rate", [0, 1, 0, 1], [1, 1, 0, 0], ["a", "a", "b", "b"],
    ...                 favourable="negative")["value"].tolist()
    [1.0, 0.0]
    """
    o = group_rate_outcomes(metric, y_true, y_pred, favourable=favourable)
    codes, names = _group_codes(groups, o.outcome.size)
    return _rates_table(metric, o, codes, names)


def _rates_table(metric: str, o: RateOutcomes, codes: np.ndarray, names: np.ndarray) -> pd.DataFrame:
    used = o.rows & (codes >= 0)
    n_outcome = np.bincount(codes[used], weights=o.outcome[used], minlength=names.size).round().astype(int)
    n_group = np.bincount(codes[used], minlength=names.size)
    n_rows = np.bincount(codes[codes >= 0], minlength=names.size)  # a declared group may have none
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(n_group > 0, n_outcome / n_group, np.nan)
    out = pd.DataFrame({"value": value, "n_outcome": n_outcome, "n_group": n_group},
                       index=pd.Index(names, name="group"))
    out["reason"] = np.where(n_group > 0, "", np.where(n_rows > 0, _EMPTY_REASON[metric], "no rows"))
    return out


# --------------------------------------------------------------------------- comparisons


@dataclass(frozen=True, repr=False)
class GroupComparison:
    """One rate across all groups: per-group values and intervals, summaries and tests.

    Attributes
    ----------
    metric : str
        One of `GROUP_METRICS`.
    by_group : pandas.DataFrame
        Index: the groups (in the order given, else sorted). Columns: ``value``, ``n_outcome``,
        ``n_group`` (see :func:`metric_by_group`); ``ci_low``, ``ci_high`` (Wilson score
        interval of the rate); ``small_cell`` (``n_group < min_size``: reported, but left out
        of the largest gap and the tests); ``diff_vs_reference`` (rate minus the reference
        group's rate), ``ratio_vs_reference`` (rate divided by it); ``p_value_vs_reference``
        (two-sided permutation test of the group against the reference, exact for 0/1
        outcomes) and ``p_value_vs_reference_holm`` (Holm-adjusted over the groups compared
        with the reference); ``reason``.
    reference : str or None
        The reference group.
    min_size : int
        The minimum rows (in the rate's denominator) a group needs to be compared.
    compared : tuple of str
        The groups in the largest gap and the tests: defined rate, at least ``min_size`` rows.
    difference : float
        Largest minus smallest rate among ``compared`` (fairlearn's ``between_groups``
        difference), in [0, 1]; NaN with a ``reason`` when fewer than two groups qualify.
    ratio : float
        Smallest divided by largest rate among ``compared``, in [0, 1]; NaN when the largest is
        0 or fewer than two groups qualify.
    high_group, low_group : str or None
        The groups with the largest and the smallest rate among ``compared``.
    max_gap_test : MaxGapTestResult or None
        The range test, :func:`faircode.significance.max_gap_test` over ``compared``: how
        surprising is the largest raw gap quoted (``difference``)? Not the test to quote for
        whether any group differs (see ``omnibus_test``).
    omnibus_test : HomogeneityTestResult or None
        :func:`faircode.group_tests.homogeneity_test` over ``compared`` (chi-squared test that
        every compared group has the same rate; exact when the table is small): the test to
        quote for "is any group treated differently?".
    max_t_test : MaxTTestResult or None
        :func:`faircode.group_tests.max_t_test` over ``compared`` (studentised largest pairwise
        gap, with each pair's family-wise adjusted p-value); None with ``all_pairs=False``.
    pairwise : tuple of PairwiseComparison
        Every pair of ``compared``, Holm-adjusted over the pairs (empty with
        ``all_pairs=False``).
    reason : str
        Why a summary or the tests against the reference are undefined; empty otherwise
        (the groups left out as small are `small_groups`).
    """

    metric: str
    by_group: pd.DataFrame
    reference: str | None
    min_size: int
    compared: tuple[str, ...]
    difference: float
    ratio: float
    high_group: str | None
    low_group: str | None
    max_gap_test: MaxGapTestResult | None
    pairwise: tuple[PairwiseComparison, ...]
    reason: str
    omnibus_test: HomogeneityTestResult | None = None
    max_t_test: MaxTTestResult | None = None

    @property
    def small_groups(self) -> tuple[str, ...]:
        """Groups reported but left out of the comparison (fewer than ``min_size`` rows)."""
        return tuple(self.by_group.index[self.by_group["small_cell"]])

    def __repr__(self) -> str:
        tests = ""
        if self.omnibus_test is not None:
            tests += f"; omnibus ({self.omnibus_test.method} chi-squared) {self.omnibus_test.format_p_value()}"
        if self.max_gap_test is not None:
            tests += f"; largest gap (range test) {self.max_gap_test.format_p_value()}"
        return (f"GroupComparison({self.metric}: {len(self.by_group)} groups, {len(self.compared)} compared "
                f"(min_size={self.min_size}); difference={self.difference:.4f} "
                f"({self.high_group} - {self.low_group}), ratio={self.ratio:.4f}{tests})")


def compare_groups(
    metric: str,
    y_true,
    y_pred,
    groups,
    *,
    favourable: str,
    reference=None,
    order=None,
    min_size: int = SMALL_SAMPLE_THRESHOLD,
    confidence_level: float = 0.95,
    n_permutations: int = 9999,
    random_state=None,
    all_pairs: bool = True,
) -> GroupComparison:
    """Compare one rate across every group: values, intervals, summaries and tests.

    Parameters
    ----------
    metric : str
        One of `GROUP_METRICS`.
    y_true, y_pred : array_like of {0, 1}, shape (n,)
        True and predicted labels, 1 = the positive class.
    groups : array_like, shape (n,)
        Each row's group; None (or NaN) puts a row in no group.
    favourable : {"negative", "positive"}
        The favourable class (see :func:`group_rate_outcomes`).
    reference : optional
        The group every other is compared with (``diff_vs_reference`` = group minus
        reference): a label as it appears in ``groups`` (``0`` when the labels are numbers) or
        its text (``"0"``); None: no comparison with a reference.
    order : sequence of str, optional
        The groups to report, in this order (e.g. :attr:`GroupLabels.groups`, so a declared
        group without rows is reported as undefined); default: the groups present, sorted.
    min_size : int, default `faircode.significance.SMALL_SAMPLE_THRESHOLD` (30)
        A group with fewer rows in the rate's denominator is reported with a warning
        (``small_cell``) and left out of the largest gap, the ratio and every test.
    confidence_level : float, default 0.95
        Of the per-group Wilson intervals.
    n_permutations : int, default 9999
        Relabellings of the Monte Carlo tests (the max-gap test; the omnibus and maxT tests
        when their table is too large to enumerate).
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed of the Monte Carlo tests, given to each in turn (max-gap, omnibus, maxT); the
        pairwise tests of 0/1 outcomes are exact.
    all_pairs : bool, default True
        Test every pair of compared groups (``pairwise`` and ``max_t_test``); False leaves
        ``pairwise`` empty and ``max_t_test`` None (the benchmark reports only the omnibus test
        and the comparisons with the reference).

    Returns
    -------
    GroupComparison

    Raises
    ------
    ValueError
        As :func:`metric_by_group`; ``min_size`` not a positive integer; a ``reference`` that is
        not a group or an ``order`` that misses a group present in ``groups``; two labels of
        ``groups`` with the same text (``1`` and ``"1"``: they would be two rows both named
        "1", so they are refused).

    Notes
    -----
    **Which test to quote.** "Is any group treated differently?" is answered by
    ``omnibus_test``, Pearson's chi-squared test of homogeneity of the k x 2 table (exact
    permutation version for small tables) [2]_. It weighs each group's departure from the
    pooled rate by its standard error, and of the common tests of this null it is the one with
    good power against differences spread over the groups. ``max_t_test``, Westfall and
    Young's studentised maximum over pairs [3]_, has power of the same order against one
    differing group and also names the pairs that differ with family-wise error control.

    **What the range test is for.** With k groups there are k(k - 1)/2 gaps and the reported
    one is the largest; even when every group has the same true rate, the largest observed gap
    is positive and grows with k and with the noise of the smallest groups.
    :func:`faircode.significance.max_gap_test` compares the observed largest raw gap with the
    largest gaps random relabelling produces, so it says how surprising the gap quoted
    (``difference``) is. It is a valid test that no group differs, but a weak one when the
    group sizes are unequal: the raw range is dominated by the smallest, noisiest group, so a
    real difference in a large group barely moves it. Quote it with the gap, and the omnibus
    test for the verdict.

    **Small cells.** The smallest groups have the noisiest rates and so the most extreme ones;
    left in, they would make the headline gap. Below ``min_size`` rows a group keeps its rate
    and its (wide) interval in ``by_group`` but takes no part in the summaries and tests.

    **Pairs.** ``pairwise`` and the reference comparisons are two-group permutation tests
    adjusted with Holm's method [1]_ over their family; with ``max_t_test.pairs_adjusted`` they
    say which groups differ once the omnibus test says that some do.

    **Labels.** Group names are text: the labels of ``groups`` as ``str`` makes them. Two
    different labels with the same text (``1`` and ``"1"``) are refused rather than merged or
    shown as two rows with one name.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
       *Scandinavian Journal of Statistics* 6(2), 65-70.
    .. [2] Agresti, A. (2013). *Categorical Data Analysis*, 3rd ed. Wiley, sec. 3.2 and 3.5.
    .. [3] Westfall, P. H. and Young, S. S. (1993). *Resampling-Based Multiple Testing*.
       Wiley, sec. 2.6.

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> g = np.repeat(["a", "b", "c"], [300, 200, 12])
    >>> y_pred = rng.binomial(1, 0.3, g.size)
    >>> c = compare_groups("selection_rate", np.zeros(g.size, int), y_pred, g,
    ...                    favourable="negative", reference="a", random_state=0)
    >>> c.compared, c.small_groups
    (('a', 'b'), ('c',))
    """
    if isinstance(min_size, (bool, np.bool_)) or not isinstance(min_size, (int, np.integer)) or min_size < 1:
        raise ValueError(f"`min_size` must be a positive integer; got {min_size!r}")
    o = group_rate_outcomes(metric, y_true, y_pred, favourable=favourable)
    codes, names, labels = _group_codes(groups, o.outcome.size, with_labels=True)
    if reference is not None:
        reference = _reference_name(reference, names, labels)
    if order is not None:
        codes, names = _in_order(codes, names, order)
    table = _rates_table(metric, o, codes, names)
    if reference is not None and reference not in table.index:
        raise ValueError(f"`reference` must be one of the groups {list(table.index)}; got {reference!r}")
    _add_intervals_and_reference(table, reference, min_size=min_size, confidence_level=confidence_level)
    eligible = ~table["small_cell"].to_numpy()
    compared = tuple(names[eligible])
    summary = _largest_gap(table, compared, min_size=min_size)
    test = omnibus = max_t = None
    pairs: tuple[PairwiseComparison, ...] = ()
    notes = list(summary.notes)
    if len(compared) >= 2:
        # The tests see integer codes (fast to sort) of the compared groups' rows only.
        keep = o.rows & (codes >= 0)
        keep[keep] = eligible[codes[keep]]
        outcome, kept = o.outcome[keep], codes[keep]
        test = max_gap_test(outcome, kept, n_permutations=n_permutations, random_state=random_state)
        test = dataclasses.replace(test, groups=tuple(names[list(test.groups)]),
                                   high_group=names[test.high_group], low_group=names[test.low_group])
        omnibus = homogeneity_test(outcome, kept, n_permutations=n_permutations, random_state=random_state)
        omnibus = dataclasses.replace(omnibus, groups=tuple(names[list(omnibus.groups)]))
        if all_pairs:
            pairs = tuple(dataclasses.replace(c, group_a=names[c.group_a], group_b=names[c.group_b])
                          for c in pairwise_tests(outcome, kept))
            max_t = max_t_test(outcome, kept, n_permutations=n_permutations, random_state=random_state)
            max_t = dataclasses.replace(
                max_t, groups=tuple(names[list(max_t.groups)]), pair=tuple(names[list(max_t.pair)]),
                pairs_adjusted=tuple((names[a], names[b], t, p) for a, b, t, p in max_t.pairs_adjusted))
        # Tests against the reference are only run when the reference itself is large enough.
        if reference is not None and reference in compared:
            _add_reference_tests(table, outcome, kept, names, reference)
        elif reference is not None:
            notes.append(f"the reference group {reference} has fewer than {min_size} rows: no test against it")
    return GroupComparison(
        metric=metric, by_group=table, reference=reference, min_size=int(min_size), compared=compared,
        difference=summary.difference, ratio=summary.ratio, high_group=summary.high_group,
        low_group=summary.low_group, max_gap_test=test, pairwise=pairs, reason="; ".join(notes),
        omnibus_test=omnibus, max_t_test=max_t,
    )


def _in_order(codes: np.ndarray, names: np.ndarray, order) -> tuple[np.ndarray, np.ndarray]:
    """Recode so that code i is ``order[i]``; declared groups without rows get no code."""
    order = [str(g) for g in order]
    missing = [g for g in names if g not in order]
    if missing:
        raise ValueError(f"`order` must list every group present; it misses {missing}")
    position = {g: i for i, g in enumerate(order)}
    remap = np.array([position[g] for g in names], dtype=np.int64)
    codes = np.where(codes >= 0, remap[np.maximum(codes, 0)], -1)
    return codes, np.array(order, dtype=object)


def _add_intervals_and_reference(table: pd.DataFrame, reference, *, min_size: int, confidence_level: float) -> None:
    """Add each group's Wilson interval, ``small_cell`` and its descriptive comparison with the reference.

    The descriptive comparisons hold for every group with a rate; the p-value columns are
    filled in by `_add_reference_tests` when the reference is large enough to be tested.
    """
    low, high = wilson_interval(table["n_outcome"].to_numpy(), table["n_group"].to_numpy(),
                                confidence_level=confidence_level)
    table["ci_low"], table["ci_high"] = low, high
    table["small_cell"] = table["n_group"] < min_size
    ref_value = table.at[reference, "value"] if reference is not None else np.nan
    table["diff_vs_reference"] = table["value"] - ref_value
    with np.errstate(invalid="ignore", divide="ignore"):
        table["ratio_vs_reference"] = table["value"] / ref_value if ref_value else np.nan
    table["p_value_vs_reference"] = np.nan
    table["p_value_vs_reference_holm"] = np.nan


@dataclass(frozen=True)
class _LargestGap:
    difference: float
    ratio: float
    high_group: str | None
    low_group: str | None
    notes: tuple[str, ...]


def _largest_gap(table: pd.DataFrame, compared: tuple[str, ...], *, min_size: int) -> _LargestGap:
    """Largest minus smallest rate among ``compared``, and smallest over largest."""
    if len(compared) < 2:
        return _LargestGap(np.nan, np.nan, None, None,
                           (f"fewer than two groups with at least {min_size} rows: no between-groups gap",))
    values = table.loc[list(compared), "value"]
    difference = float(values.max() - values.min())
    if values.max() > 0:
        ratio, notes = float(values.min() / values.max()), ()
    else:
        ratio, notes = np.nan, ("ratio undefined: every compared group's rate is 0",)
    return _LargestGap(difference, ratio, str(values.idxmax()), str(values.idxmin()), notes)


def _add_reference_tests(table: pd.DataFrame, outcome: np.ndarray, codes: np.ndarray, names: np.ndarray,
                         reference: str) -> None:
    """Fill the p-value columns: each compared group against the reference, Holm-adjusted."""
    ref_code = int(np.flatnonzero(names == reference)[0])
    for c in pairwise_tests(outcome, codes, reference=ref_code):
        table.at[names[c.group_a], "p_value_vs_reference"] = c.p_value
        table.at[names[c.group_a], "p_value_vs_reference_holm"] = c.p_value_adjusted


# --------------------------------------------------------------------------- validation


def _check_metric(metric: str) -> None:
    if metric not in GROUP_METRICS:
        raise ValueError(f"`metric` must be one of {', '.join(GROUP_METRICS)}; "
                         f"got {metric!r}{did_you_mean(metric, GROUP_METRICS)}")


def _group_codes(groups, n: int, *, with_labels: bool = False):
    """(code per row, -1 for no group; the group names as text, sorted[; the labels they came from]).

    Two labels with one text (``1`` and ``"1"``) are refused: as names they would be two groups
    that no reader could tell apart, and merging them could hide a data error.
    """
    labels = np.asarray(groups, dtype=object)
    if labels.ndim != 1 or labels.size != n:
        raise ValueError(f"`groups` must hold one label per row ({n}); got shape {labels.shape}")
    codes, uniques = pd.factorize(labels, sort=True, use_na_sentinel=True)
    names = np.asarray([str(g) for g in uniques], dtype=object)
    seen: dict[str, object] = {}
    for label, name in zip(uniques, names):
        if name in seen:
            raise ValueError(f"`groups` has two labels written {name!r}: {seen[name]!r} "
                             f"({type(seen[name]).__name__}) and {label!r} ({type(label).__name__}); "
                             "use one type for the labels (e.g. all text)")
        seen[name] = label
    if with_labels:
        return codes.astype(np.int64), names, np.asarray(uniques, dtype=object)
    return codes.astype(np.int64), names


def _reference_name(reference, names: np.ndarray, labels: np.ndarray) -> str:
    """The group name of ``reference``, given as a label of ``groups`` (``0``) or as its text."""
    for label, name in zip(labels, names):
        if reference is label or (type(reference) is type(label) and reference == label):
            return name
    if isinstance(reference, (int, float, np.integer, np.floating)) and not isinstance(reference, (bool, np.bool_)):
        matches = [name for label, name in zip(labels, names)
                   if isinstance(label, (numbers.Real, np.number)) and not isinstance(label, (bool, np.bool_))
                   and label == reference]
        if len(matches) == 1:
            return matches[0]
    return str(reference)
