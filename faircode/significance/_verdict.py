"""The three-state verdict on a gap between two groups' rates: shown, shown to be small, or neither.

"Not significant" is not a pass: it can mean the gap is small, or only that the audit was too
small to see it. :func:`gap_verdict` separates the two with the usual test and an equivalence
test at a margin the audit declares (the smallest gap that matters, chosen before looking):

- **a gap shown** (``"gap_shown"``): the exact test rejects equal rates at ``alpha`` and the
  gap's ``1 - alpha`` interval lies wholly beyond the margin (outside ``(low, high)``): a gap is
  there, and it is of practical size, "significant in both statistical and practical terms"
  (Uniform Guidelines, 29 CFR 1607.4(D));
- **no gap of practical size shown** (``"no_practical_gap_shown"``): the equivalence test
  (:func:`~faircode.significance.equivalence_test`) shows the gap lies within the margin;
- **inconclusive**: neither; the verdict then carries the power the audit had at the margin.

The two states that show something cannot both hold: the interval beyond the margin and the
equivalence interval within it would both contain the estimate. :func:`classify_gap` is the rule
alone, for callers that already hold the numbers (the benchmark, which adjusts the p-values for
its family of rows first); :func:`verdict_sentence` writes any verdict in plain words.

References
----------
.. [1] Schuirmann, D. J. (1987). *J. Pharmacokinetics and Biopharmaceutics* 15(6), 657-680.
.. [2] Uniform Guidelines on Employee Selection Procedures (1978), 29 CFR 1607.4(D).
.. [3] Altman, D. G. and Bland, J. M. (1995). Absence of evidence is not evidence of absence.
   *BMJ* 311(7003), 485.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from faircode.formatting import MINUS, format_p_value, format_points, format_ratio
from faircode.formatting import format_p_value as _format_p_value
from faircode.significance._equivalence import (
    COMPARISONS,
    EquivalenceTestResult,
    _as_counts,
    _as_margin,
    equivalence_test_from_counts,
)
from faircode.significance._intervals import _mover_ratio, _newcombe, _z
from faircode.significance._permutation import _exact_count_p_value
from faircode.significance._power import exact_power_is_cheap, permutation_test_power, z_test_power
from faircode.significance._validation import _as_binary_sample, _check_choice, _check_open_unit

#: The three states, in the order a table lists them, with the words every page uses.
VERDICTS = {
    "gap_shown": "a gap shown",
    "no_practical_gap_shown": "no gap of practical size shown",
    "inconclusive": "inconclusive",
}


@dataclass(frozen=True, repr=False)
class GapVerdict:
    """Result of :func:`gap_verdict`.

    Attributes
    ----------
    verdict : str
        ``"gap_shown"``, ``"no_practical_gap_shown"`` or ``"inconclusive"``.
    compare : str
        ``"difference"`` (rates of ``a`` minus ``b``, in [-1, 1]) or ``"ratio"`` (``a`` over ``b``).
    estimate : float
        The observed difference or ratio.
    ci_low, ci_high : float
        Its ``confidence_level`` interval: Newcombe's score interval of a difference, MOVER-R of
        a ratio (:func:`~faircode.significance.proportion_difference_ci`, ``proportion_ratio_ci``).
    confidence_level : float
        ``1 - alpha``.
    p_value : float
        The exact permutation test of equal rates, two-sided (:func:`permutation_test`).
    equivalence : EquivalenceTestResult
        The equivalence test at the margin (its ``p_value``, its ``1 - 2 alpha`` interval).
    margin_low, margin_high : float
        The margin, in the unit of ``compare``.
    power_at_margin : float
        The exact power of the exact test (:func:`permutation_test_power`) against a true gap at
        the margin, the smaller of its two sides (one for a one-sided ratio band), with ``b``'s
        rate at its observed value: how likely the exact test was to call a true gap as large as
        the smallest that matters significant. It is not the chance of a verdict: with the true
        gap exactly at the margin, "a gap shown" comes about ``alpha / 2`` of the time at any size
        (the interval must clear the margin). NaN when no side keeps the rates in [0, 1]. Above
        10,000 against 10,000 rows or so, its normal approximation (``power_method``).
    alpha : float
        Level of the usual test and of each one-sided equivalence test.
    count_a, n_a, count_b, n_b : int
        Ones and rows of each group.
    names : tuple of str
        How the sentence names ``a`` and ``b``.
    outcome : str
        What a 1 means, as a past participle the sentence reads ("flagged", "approved").
    power_method : str
        ``"exact"`` or ``"normal"`` (:func:`power_method`).
    """

    verdict: str
    compare: str
    estimate: float
    ci_low: float
    ci_high: float
    confidence_level: float
    p_value: float
    equivalence: EquivalenceTestResult
    margin_low: float
    margin_high: float
    power_at_margin: float
    alpha: float
    count_a: int
    n_a: int
    count_b: int
    n_b: int
    names: tuple[str, str] = ("group A", "group B")
    outcome: str = "flagged"
    power_method: str = "exact"

    @property
    def label(self) -> str:
        """The state in the words every page uses ("no gap of practical size shown")."""
        return VERDICTS[self.verdict]

    @property
    def sentence(self) -> str:
        """The verdict in plain words a reader can quote (:func:`verdict_sentence`)."""
        return verdict_sentence(
            self.verdict, compare=self.compare, estimate=self.estimate, ci_low=self.ci_low,
            ci_high=self.ci_high, p_value=self.p_value, equivalence_p_value=self.equivalence.p_value,
            equivalence_ci=(self.equivalence.ci_low, self.equivalence.ci_high), margin=(self.margin_low, self.margin_high),
            power_at_margin=self.power_at_margin, alpha=self.alpha, names=self.names, outcome=self.outcome)

    def __repr__(self) -> str:
        return (f"GapVerdict({self.verdict!r}: {self.compare} {self.estimate:+.4g}, margin ({self.margin_low:g}, "
                f"{self.margin_high:g}), {format_p_value(self.p_value)}, equivalence "
                f"{format_p_value(self.equivalence.p_value)}, power at the margin {self.power_at_margin:.2f})")


def classify_gap(*, p_value: float, ci_low: float, ci_high: float, equivalence_p_value: float,
                 margin: tuple[float, float], alpha: float = 0.05) -> str:
    """The three-state rule, from numbers already computed (adjusted or not).

    Parameters
    ----------
    p_value : float
        p-value of the usual test of no gap (equal rates), in [0, 1].
    ci_low, ci_high : float
        The gap's interval (``1 - alpha``), in the unit of ``margin``.
    equivalence_p_value : float
        p-value of the equivalence test at ``margin``, in [0, 1].
    margin : (float, float)
        ``(low, high)``, ``low < high``; ``high`` may be ``inf``.
    alpha : float, default 0.05

    Returns
    -------
    str
        ``"gap_shown"`` when ``p_value < alpha`` and the interval lies wholly outside
        ``(low, high)``; else ``"no_practical_gap_shown"`` when ``equivalence_p_value < alpha``;
        else ``"inconclusive"``.

    Raises
    ------
    ValueError
        A NaN p-value or interval limit (an undefined gap has no verdict), or ``low >= high``.
    """
    low, high = (float(v) for v in margin)
    if not low < high:
        raise ValueError(f"`margin` must be (low, high) with low < high; got {margin!r}")
    values = {"p_value": p_value, "ci_low": ci_low, "ci_high": ci_high, "equivalence_p_value": equivalence_p_value}
    missing = [name for name, value in values.items() if math.isnan(float(value))]
    if missing:
        raise ValueError(f"a gap with no {', '.join(missing)} has no verdict (it is undefined, not inconclusive)")
    if p_value < alpha and (ci_low >= high or ci_high <= low):
        return "gap_shown"
    if equivalence_p_value < alpha:
        return "no_practical_gap_shown"
    return "inconclusive"


def gap_verdict(a, b, *, margin, compare: str = "difference", alpha: float = 0.05, equivalence_method: str = "auto",
                names: tuple[str, str] = ("group A", "group B"), outcome: str | None = None,
                equivalence_interval: bool = True) -> GapVerdict:
    """Is there a gap of practical size between two groups' rates, none, or can the data not tell?

    Parameters
    ----------
    a : array_like of {0, 1}, shape (n_a,)
        Disadvantaged group's 0/1 outcomes; non-empty. For ``compare="ratio"``, 1 is the
        favourable outcome (the rate the four-fifths rule divides).
    b : array_like of {0, 1}, shape (n_b,)
        Advantaged (reference) group's 0/1 outcomes; non-empty.
    margin : float or (float, float)
        The smallest gap that matters, declared before looking; no default. As
        :func:`equivalence_test`: ``0.05`` (5 percentage points either way) for a difference,
        ``(0.8, 1.25)`` or ``(0.8, math.inf)`` for a ratio.
    compare : {"difference", "ratio"}, default "difference"
    alpha : float, default 0.05
        Level of the exact test and of each one-sided equivalence test; the gap's interval is
        ``1 - alpha``, the equivalence interval ``1 - 2 alpha``.
    equivalence_method : {"auto", "exact", "score"}, default "auto"
        As :func:`equivalence_test`'s ``method``.
    names : (str, str), default ("group A", "group B")
        The groups as the sentence names them (plural nouns: "women", "men").
    outcome : str, optional
        What a 1 means, as the sentence reads it after "were" ("flagged", "approved"); by default
        "flagged" for a difference and "given the favourable outcome" for a ratio.
    equivalence_interval : bool, default True
        Compute the equivalence test's ``1 - 2 alpha`` interval (the sentences quote it); the
        exact interval costs about a hundred exact tests, so a caller that needs the state and
        the p-values alone can skip it (the interval is then NaN, and the sentences omit it).

    Returns
    -------
    GapVerdict
        ``verdict``, ``label``, ``sentence`` and every number behind them.

    Raises
    ------
    TypeError, ValueError
        As :func:`equivalence_test`; ``names`` not two non-empty strings, ``outcome`` empty.

    Notes
    -----
    The rule is :func:`classify_gap`. Its first state asks for both a significant exact test
    and an interval beyond the margin, the two conditions of "significant in both statistical
    and practical terms"; the interval alone can exclude the margin while the exact test does
    not reject (the score interval and the exact test are different procedures), and the verdict
    is then inconclusive. Reading "no gap of practical size shown" still leaves a gap smaller
    than the margin possible (Altman and Bland 1995).

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import gap_verdict
    >>> women = np.r_[np.ones(15), np.zeros(49)]    # 15 of 64 rated a bad risk
    >>> men = np.r_[np.ones(35), np.zeros(101)]     # 35 of 136
    >>> gap_verdict(women, men, margin=0.10).verdict
    'inconclusive'
    """
    a = _as_binary_sample(a, "a")
    b = _as_binary_sample(b, "b")
    return gap_verdict_from_counts(int(a.sum()), a.size, int(b.sum()), b.size, margin=margin, compare=compare,
                                   alpha=alpha, equivalence_method=equivalence_method, names=names, outcome=outcome,
                                   equivalence_interval=equivalence_interval)


def gap_verdict_from_counts(count_a, n_a, count_b, n_b, *, margin, compare: str = "difference", alpha: float = 0.05,
                            equivalence_method: str = "auto", names: tuple[str, str] = ("group A", "group B"),
                            outcome: str | None = None, equivalence_interval: bool = True) -> GapVerdict:
    """:func:`gap_verdict` from counts: ``count_a`` ones among ``n_a`` rows, and so on.

    Parameters
    ----------
    count_a, n_a, count_b, n_b : int
        Ones and rows of each group, ``0 <= count <= n``, ``n >= 1``.
    margin, compare, alpha, equivalence_method, names, outcome, equivalence_interval
        As :func:`gap_verdict`.

    Returns
    -------
    GapVerdict
    """
    (x1, n1), (x2, n2) = _as_counts(count_a, n_a, "a"), _as_counts(count_b, n_b, "b")
    compare = _check_choice(compare, "compare", COMPARISONS)
    low, high = _as_margin(margin, compare)
    alpha = _check_open_unit(alpha, "alpha")
    if outcome is None:
        outcome = "flagged" if compare == "difference" else "given the favourable outcome"
    names, outcome = _as_words(names, outcome)
    equivalence = equivalence_test_from_counts(x1, n1, x2, n2, margin=(low, high), compare=compare, alpha=alpha,
                                               method=equivalence_method, interval=equivalence_interval)
    ci_low, ci_high = _interval_of_gap(x1, n1, x2, n2, compare, 1 - alpha)
    p_value = _exact_count_p_value(x1, n1, x2, n2, "two-sided")
    verdict = classify_gap(p_value=p_value, ci_low=ci_low, ci_high=ci_high, equivalence_p_value=equivalence.p_value,
                           margin=(low, high), alpha=alpha) if not math.isnan(ci_low) else "inconclusive"
    return GapVerdict(
        verdict=verdict, compare=compare, estimate=equivalence.estimate, ci_low=ci_low, ci_high=ci_high,
        confidence_level=1 - alpha, p_value=p_value, equivalence=equivalence, margin_low=low, margin_high=high,
        power_at_margin=power_at_margin(x2 / n2, n1, n2, margin=(low, high), compare=compare, alpha=alpha),
        alpha=alpha, count_a=x1, n_a=n1, count_b=x2, n_b=n2, names=names, outcome=outcome,
        power_method=power_method(n1, n2))


def _as_words(names, outcome) -> tuple[tuple[str, str], str]:
    if (not isinstance(names, (tuple, list)) or len(names) != 2
            or not all(isinstance(n, str) and n.strip() for n in names)):
        raise ValueError(f"`names` must be two non-empty words, the groups as a sentence names them; got {names!r}")
    if not isinstance(outcome, str) or not outcome.strip():
        raise ValueError(f"`outcome` must be non-empty words (\"flagged\", \"approved\"); got {outcome!r}")
    return (names[0].strip(), names[1].strip()), outcome.strip()


def _interval_of_gap(x1: int, n1: int, x2: int, n2: int, compare: str, confidence_level: float) -> tuple[float, float]:
    """The results table's interval of the gap: Newcombe (difference) or MOVER-R (ratio)."""
    z = _z(confidence_level)
    if compare == "difference":
        return _newcombe(x1, n1, x2, n2, z)
    if x1 == 0 and x2 == 0:
        return math.nan, math.nan
    return _mover_ratio(x1, n1, x2, n2, z)


def power_at_margin(rate_b: float, n_a: int, n_b: int, *, margin: tuple[float, float], compare: str,
                    alpha: float = 0.05, method: str = "auto") -> float:
    """The exact test's power against a true gap at the margin, the smaller of its sides.

    Parameters
    ----------
    rate_b : float
        The reference group's rate, in [0, 1] (its observed rate, in a verdict).
    n_a, n_b : int
        Rows of each group.
    margin : (float, float)
        ``(low, high)`` in the unit of ``compare``; an infinite or impossible side is skipped.
    compare : {"difference", "ratio"}
    alpha : float, default 0.05
    method : {"auto", "exact", "normal"}, default "auto"
        ``"exact"``: :func:`permutation_test_power`, whose work grows with the rows (seconds at
        100,000 a group, minutes at millions); ``"normal"``: :func:`z_test_power`; ``"auto"``:
        exact while :func:`power_method` says it is cheap, else normal (they then differ by
        under a point).

    Returns
    -------
    float
        ``min`` over the sides ``rate_a = rate_b + low``, ``rate_b + high`` (difference) or
        ``low * rate_b``, ``high * rate_b`` (ratio) that lie in [0, 1] of the power at ``alpha``;
        NaN when no side does.

    Raises
    ------
    ValueError
        An unknown ``method``; as :func:`permutation_test_power`.
    """
    power = permutation_test_power if power_method(n_a, n_b, method) == "exact" else z_test_power
    sides = (rate_b + bound if compare == "difference" else bound * rate_b for bound in margin)
    powers = [power(rate_a, rate_b, n_a, n_b, alpha=alpha)
              for rate_a in sides if math.isfinite(rate_a) and 0.0 <= rate_a <= 1.0 and rate_a != rate_b]
    return min(powers) if powers else math.nan


def power_method(n_a: int, n_b: int, method: str = "auto") -> str:
    """``"exact"`` or ``"normal"``: how :func:`power_at_margin` computes the power at these sizes.

    ``"auto"`` is ``"exact"`` while ``sqrt(min(n_a, n_b)) * (sqrt(n_a) + sqrt(n_b))``, which the
    exact sum's work grows as, is at most ``EXACT_POWER_SIZE`` (20,000: 10,000 against 10,000
    rows, about 0.2 s a side), else ``"normal"``.

    Raises
    ------
    ValueError
        ``method`` not one of "auto", "exact", "normal".
    """
    method = _check_choice(method, "method", ("auto", "exact", "normal"))
    if method != "auto":
        return method
    return "exact" if exact_power_is_cheap(n_a, n_b) else "normal"


# ---------------------------------------------------------------------------------------------
# The sentence
# ---------------------------------------------------------------------------------------------


def verdict_sentence(verdict: str, *, compare: str, estimate: float, ci_low: float, ci_high: float, p_value: float,
                     equivalence_p_value: float, equivalence_ci: tuple[float, float], margin: tuple[float, float],
                     power_at_margin: float, alpha: float = 0.05, names: tuple[str, str] = ("group A", "group B"),
                     outcome: str = "flagged", p_label: str = "p") -> str:
    """A verdict in plain words a reader can quote, with the numbers it rests on.

    Parameters
    ----------
    verdict : {"gap_shown", "no_practical_gap_shown", "inconclusive"}
    compare : {"difference", "ratio"}
    estimate, ci_low, ci_high : float
        The gap (difference of rates, or ratio) and its ``1 - alpha`` interval.
    p_value, equivalence_p_value : float
        The usual test's and the equivalence test's (adjusted ones, if the caller adjusts).
    equivalence_ci : (float, float)
        The ``1 - 2 alpha`` interval of the equivalence test (NaN when not computed).
    margin : (float, float)
    power_at_margin : float
        As :attr:`GapVerdict.power_at_margin` (NaN: not said).
    alpha : float, default 0.05
    names : (str, str)
    outcome : str
    p_label : str, default "p"
        What the sentence calls the tests' values: "q" for Benjamini-Hochberg q-values,
        "Holm-adjusted p" for Holm's (a table that adjusts its family gives those).

    Returns
    -------
    str
        One to three sentences: the state first, then the numbers, then what the state does
        not say (a small gap may remain; where an inconclusive gap was not significant, the
        exact test's power against a true gap at the margin). An inconclusive gap is told in one
        of three ways: significant but with an interval reaching inside the margin; an interval
        beyond the margin but a test that does not reject (with ``p_label`` other than ``"p"``,
        once its family is counted; the table's intervals are not adjusted, and the sentence
        says so); or neither.

    Raises
    ------
    ValueError
        An unknown ``verdict`` or ``compare``.
    """
    _check_choice(verdict, "verdict", tuple(VERDICTS))
    _check_choice(compare, "compare", COMPARISONS)
    words = _Words(compare, estimate, (ci_low, ci_high), margin, alpha, names, outcome)

    def format_p_value(value: float) -> str:  # the project's p-value, under the caller's name for it
        return _format_p_value(value).replace("p ", f"{p_label} ", 1)

    adjusted = p_label != "p"  # a table's family-adjusted values: its intervals are not adjusted
    if verdict == "gap_shown":
        return (f"A gap of practical size is shown: {words.gap()}. The {words.level(1)} interval of "
                f"{words.what()}, {words.interval(ci_low, ci_high)}, lies {words.beyond()} (exact test, "
                f"{format_p_value(p_value)}{'; the interval is not adjusted for the family' if adjusted else ''}).")
    if verdict == "no_practical_gap_shown":
        low, high = equivalence_ci
        where = (f"Its {words.level(2)} interval, {words.interval(low, high)}, lies {words.within()}"
                 if not (math.isnan(low) or math.isnan(high)) else f"It lies {words.within()}")
        if p_value < alpha and compare == "ratio" and math.isinf(margin[1]):  # one-sided: the rates differ
            tail = f"The exact test finds that the rates differ ({format_p_value(p_value)})."
        elif p_value < alpha:  # the usual test rejects too: a gap is shown, and shown small
            tail = (f"The exact test finds a gap ({format_p_value(p_value)}): a gap smaller than "
                    f"{'the margin' if compare == 'difference' else words.margin_name() + ' allows'} is shown.")
        else:
            tail = words.may_remain()
        return (f"{words.no_gap_head()}: {words.gap()}. {where} (equivalence test, "
                f"{format_p_value(equivalence_p_value)}). {tail}")
    low, high = equivalence_ci
    equivalence_interval = ("" if math.isnan(low) or math.isnan(high)
                            else f", its {words.level(2)} interval {words.interval(low, high)}")
    numbers = (f"{words.gap()}; the {words.level(1)} interval of {words.what()} is "
               f"{words.interval(ci_low, ci_high)}; exact test {format_p_value(p_value)}; equivalence test "
               f"{format_p_value(equivalence_p_value)}{equivalence_interval}")
    beyond = ci_low >= margin[1] or ci_high <= margin[0]
    if p_value < alpha:  # so the interval reaches inside the margin (else the gap would be shown)
        return (f"Inconclusive: a gap is statistically significant, but not shown to be of practical size (its "
                f"{words.level(1)} interval reaches inside {words.margin_name()}), nor do the data show that "
                f"{words.inside()} ({numbers}).")
    if beyond:  # the interval clears the margin, but the test (adjusted, or exact) does not reject
        return (f"Inconclusive: the {words.level(1)} interval lies {words.beyond()}, but the exact test is not "
                f"significant{' once the family is counted' if adjusted else ''}, and the data do not show that "
                f"{words.inside()} ({numbers}).")
    head = (f"Inconclusive: the data show neither a gap beyond {words.margin_name()} nor that "
            f"{words.inside()} ({numbers}).")
    if math.isnan(power_at_margin):
        return head
    # The power explains an inconclusive result only where the test did not reject: it is the
    # chance the exact test calls a true gap at the margin significant (not the chance of a verdict).
    chance = f"{power_at_margin:.0%}"
    article = "an" if re.match(r"(8|11%|18%)", chance) else "a"  # "an 80%", "an 11%", "a 9%"
    return head + (f" Against {words.true_gap_at_margin()}, the exact test had {article} {chance} chance of "
                   "calling it significant" + (": this audit was too small to tell." if power_at_margin < 0.8 else "."))


class _Words:
    """The pieces of a verdict's sentence, in the site's conventions (percentage points with a
    true minus sign; enough decimals that a sign, and a crossing of zero or of a line, show)."""

    def __init__(self, compare, estimate, interval, margin, alpha, names, outcome):
        self.compare, self.estimate, self.interval_values = compare, estimate, interval
        self.low, self.high = margin
        self.alpha, (self.a, self.b), self.outcome = alpha, names, outcome

    def level(self, sides: int) -> str:
        return f"{1 - sides * self.alpha:.0%}"

    def ratio(self, value: float) -> str:
        return format_ratio(value, near=(self.low, self.high, 1.0))

    def what(self) -> str:
        if self.compare == "ratio":
            return f"the ratio ({self.a} over {self.b})"
        return f"the gap ({self.a} minus {self.b})"

    def gap(self) -> str:
        if self.compare == "ratio":
            if math.isnan(self.estimate):
                return f"no one among {self.a} or {self.b} was {self.outcome}, so their ratio is undefined"
            if math.isinf(self.estimate):
                return f"no one among {self.b} was {self.outcome}, so the ratio of {self.a}'s rate to theirs is unbounded"
            return f"the rate of {self.a} {self.outcome} is {self.ratio(self.estimate)} times that of {self.b}"
        if self.estimate == 0:
            return f"{self.a} and {self.b} were {self.outcome} at the same rate"
        direction = "more" if self.estimate > 0 else "less"
        return (f"{self.a} were {self.outcome} {format_points(abs(self.estimate), signed=False)} {direction} "
                f"often than {self.b}")

    def interval(self, low: float, high: float) -> str:
        if math.isnan(low) and math.isnan(high):
            return "undefined"
        if self.compare == "ratio":
            return f"{self.ratio(low)} to {self.ratio(high)}"
        return f"{format_points(low, unit=False)} to {format_points(high)}"

    def margin_name(self) -> str:
        if self.compare == "ratio":
            if math.isinf(self.high):
                return "the four-fifths line of 0.8" if self.low == 0.8 else f"a ratio of {self.ratio(self.low)}"
            return f"the band {self.ratio(self.low)} to {self.ratio(self.high)}"
        if -self.low == self.high:
            return f"the margin of \u00b1{_margin_points(self.high)}"
        return (f"the margin of {_margin_points(self.low, signed=True, unit=False)} to "
                f"{_margin_points(self.high, signed=True)}")

    def beyond(self) -> str:
        if self.compare == "ratio":
            side = (f"below {self.ratio(self.low)}" if self.interval_values[1] <= self.low
                    else f"above {self.ratio(self.high)}")
            return f"{side}, beyond {self.margin_name()}"
        return f"beyond {self.margin_name()}"

    def inside(self) -> str:
        if self.compare == "ratio":
            return "the ratio stays above it" if math.isinf(self.high) else "the ratio stays inside it"
        return "the gap stays inside it"

    def no_gap_head(self) -> str:
        # A ratio inside the four-fifths band can sit beside a difference beyond a margin in
        # points (low base rates): the sentence names the yardstick it was shown against.
        if self.compare == "ratio" and math.isinf(self.high):  # one-sided: no adverse impact on `a`
            return f"No gap of practical size against {self.a} is shown by {self.margin_name()}"
        if self.compare == "ratio":
            return f"No gap of practical size is shown by {self.margin_name()}"
        return "No gap of practical size is shown"

    def true_gap_at_margin(self) -> str:
        if self.compare == "ratio":
            if math.isinf(self.high):
                return f"a true ratio at {self.margin_name()}"
            return f"a true ratio at the edge of {self.margin_name()}"
        return f"a true gap at {self.margin_name()}"

    def may_remain(self) -> str:
        if self.compare == "ratio":
            return f"The rates may still differ, by less than {self.margin_name()} allows."
        return "A gap smaller than the margin may remain."

    def within(self) -> str:
        if self.compare == "ratio" and math.isinf(self.high):
            return f"above {self.margin_name()}"
        return f"within {self.margin_name()}"


def _margin_points(value: float, *, signed: bool = False, unit: bool = True) -> str:
    """A margin as the audit declared it, every digit it has: "5 percentage points", "0.05
    percentage points" (not rounded to "0.1"), "1 percentage point"; with ``signed``, a bound of
    an asymmetric margin with its sign ("\u22123", "+5 percentage points")."""
    points = round(100 * value, 10)
    text = f"{abs(points):g}"
    if signed and points != 0:
        text = (MINUS if points < 0 else "+") + text
    return text + ((" percentage point" if abs(points) == 1 else " percentage points") if unit else "")
