"""Significance of a gap between two groups.

Every p-value and interval that the Fair Code Project publishes comes from this module:

- :func:`permutation_test` / :func:`permutation_test_result`: the permutation test for a gap in
  means (exact for 0/1 outcomes, vectorised Monte Carlo otherwise, cluster-preserving on request);
  :func:`permutation_tests`: many such tests in one call (a simulation study);
  :func:`permutation_test_power`: the exact power of the exact test, with no simulation;
- :func:`bootstrap_ci`: a stratified bootstrap interval for the gap (percentile or BCa);
  :func:`binary_bootstrap_ci`: the same for many 0/1 audits at once, from their counts;
- :func:`proportion_difference_ci` / :func:`proportion_ratio_ci`: score intervals for a
  difference (Newcombe, Agresti-Caffo) and a ratio (MOVER-R with Wilson limits, Koopman) of two proportions, the intervals
  of the results table; :func:`bootstrap_ratio_ci`: the percentile bootstrap of a ratio;
- :func:`significance_report`: gap, interval, p-value and group sizes in one frozen result;
- :func:`adjust_p_values`: Holm (FWER) and Benjamini-Hochberg (FDR) adjustments;
- :func:`format_p_value`: the one way a p-value is printed (never "p = 0"), re-exported from its
  NumPy-free home :mod:`faircode.formatting`;
- :func:`max_gap_test`, :func:`pairwise_tests`, :func:`wilson_interval`: more than two groups
  (the between-groups gap tested against the null distribution of the largest gap, pairs with a
  family-wise correction, a score interval per group).

Vocabulary, the same in every function and result here and in :mod:`faircode.metrics`: ``a``
holds the disadvantaged group's outcomes and ``b`` the advantaged (reference) group's, and
every ``_a``/``_b`` name follows (``n_a``, ``mean_a``, ``p_a``, ``flagged_a``); the gap is
``mean(a) - mean(b)``, disadvantaged minus advantaged, in the outcome's unit (for 0/1 outcomes a
difference of rates, in [-1, 1]). The data are positional, as in SciPy's two-sample tests
(``scipy.stats.ttest_ind(a, b)``); :mod:`faircode.metrics` selects the two groups with the
keywords ``disadvantaged=`` and ``advantaged=`` and hands their outcomes over as
``GroupOutcomes.a`` and ``.b``. With k groups (:func:`pairwise_tests`) ``a`` is the group
compared and ``b`` the one it is compared with (the reference, when there is one).

References
----------
.. [1] Good, P. I. (2005). *Permutation, Parametric, and Bootstrap Tests of Hypotheses*,
   3rd ed. Springer.
.. [2] Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero:
   calculating exact p-values when permutations are randomly drawn. *Statistical Applications
   in Genetics and Molecular Biology* 9(1), Article 39.
.. [3] Efron, B. (1987). Better bootstrap confidence intervals. *Journal of the American
   Statistical Association* 82(397), 171-185.
.. [4] Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman &
   Hall, ch. 14.
.. [5] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
   *Scandinavian Journal of Statistics* 6(2), 65-70.
.. [6] Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate: a practical
   and powerful approach to multiple testing. *Journal of the Royal Statistical Society B*
   57(1), 289-300.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from faircode.formatting import check_positive_int as _check_positive_int
from faircode.formatting import format_p_value


# SciPy's special functions, imported on first use: importing this module stays cheap for code
# that needs only part of it.
def gammaln(x):
    from scipy.special import gammaln as f

    return f(x)


def ndtr(x):
    from scipy.special import ndtr as f

    return f(x)


def ndtri(x):
    from scipy.special import ndtri as f

    return f(x)


def _logsumexp(x: np.ndarray) -> float:
    """``log(sum(exp(x)))`` of a non-empty 1-D array, shifted by its maximum so nothing overflows.

    Written with NumPy rather than ``scipy.special.logsumexp``, whose array-API dispatch costs
    about 0.25 ms a call: the exact test calls this twice, and a power simulation runs thousands
    of exact tests.
    """
    top = float(x.max())
    return top + math.log(float(np.exp(x - top).sum()))


__all__ = [
    "SMALL_SAMPLE_THRESHOLD",
    "ConfidenceInterval",
    "DegenerateSampleWarning",
    "MaxGapTestResult",
    "PairwiseComparison",
    "PermutationTestResult",
    "SignificanceReport",
    "adjust_p_values",
    "binary_bootstrap_ci",
    "bootstrap_ci",
    "bootstrap_ratio_ci",
    "format_p_value",
    "max_gap_test",
    "pairwise_tests",
    "permutation_test",
    "permutation_test_power",
    "permutation_test_result",
    "permutation_tests",
    "proportion_difference_ci",
    "proportion_ratio_ci",
    "significance_report",
    "wilson_interval",
]

SMALL_SAMPLE_THRESHOLD = 30
"""Groups with fewer rows than this are flagged by ``small_sample_warning``."""

# Two gaps closer than this (relative to the largest absolute centred outcome) are a tie. It sits
# far above the rounding error of a sum of 10^6 values (about 1e-10 in the worst case) and far
# below any gap that means anything, so relabellings that tie in exact arithmetic count as
# extreme however the floating-point sums happened to round.
_TIE_RTOL = 1e-9

# Elements (indices or gathered values) per resampling batch: 2**21 * 8 bytes = 16 MiB each, so
# a batch holds at most a few tens of MiB whatever the number of resamples.
_BATCH_ELEMENTS = 1 << 21

# A group with at most this many distinct values is bootstrapped through multinomial counts of
# its values (the same distribution as resampling rows, at O(levels) per resample, not O(n)).
_MAX_MULTINOMIAL_LEVELS = 16

_ALTERNATIVES = ("two-sided", "less", "greater")
_TEST_METHODS = ("auto", "exact", "monte_carlo")
_CI_METHODS = ("percentile", "bca")
_REPORT_CI_METHODS = ("auto", "newcombe", "percentile", "bca")
_ADJUST_METHODS = {"holm": "holm", "bh": "bh", "fdr_bh": "bh"}


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
        """The p-value as :func:`format_p_value` prints it (``"p ≤ 1/10,001"`` at the Monte
        Carlo floor of 10,000 permutations)."""
        return format_p_value(self.p_value, floor=self.p_value_floor, digits=digits)


@dataclass(frozen=True, repr=False)
class PermutationTestResult(_PValueResult):
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
        ``p_value_floor``; report it as "p ≤ 1/(n_permutations + 1)" (see
        :func:`format_p_value`).
    alternative : str
        ``"two-sided"``, ``"less"`` or ``"greater"``.
    null_distribution : numpy.ndarray or None
        Read-only gaps of the drawn relabellings, shape ``(n_permutations,)``; None for exact.
    """

    statistic: float
    p_value: float
    method: str
    n_permutations: int | None
    p_value_floor: float
    is_monte_carlo_minimum: bool
    alternative: str = "two-sided"
    null_distribution: np.ndarray | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        resamples = "" if self.n_permutations is None else f", n_permutations={self.n_permutations:,}"
        return (
            f"PermutationTestResult(statistic={self.statistic:+.4g}, {self.format_p_value()}, "
            f"method={self.method!r}, alternative={self.alternative!r}{resamples})"
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
        True when the p-value sits at its Monte Carlo floor ("p ≤ 1/(m + 1)").
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


# ---------------------------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------------------------


def _is_missing(value) -> bool:
    # pandas.NA is recognised by name so that this module does not import pandas.
    return value is None or type(value).__name__ in {"NAType", "NaTType"}


def _as_sample(x, name: str) -> np.ndarray:
    """Return ``x`` as a finite, non-empty, 1-D float64 array, or raise naming ``name``."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"`{name}` must be a 1-D array of numbers, got a string")
    arr = np.asarray(x)
    if arr.dtype.kind == "O":
        bad = [v for v in arr.ravel() if not (_is_missing(v) or isinstance(v, (numbers.Real, np.bool_)))]
        if bad:
            raise TypeError(
                f"`{name}` must contain numbers (or 0/1 / booleans); found "
                f"{type(bad[0]).__name__} value {bad[0]!r}"
            )
        arr = np.array([np.nan if _is_missing(v) else float(v) for v in arr.ravel()]).reshape(arr.shape)
    elif arr.dtype.kind not in "biuf":
        raise TypeError(
            f"`{name}` must be numeric (numbers, 0/1 or booleans); got dtype {arr.dtype}"
        )
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one outcome per row); got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"`{name}` must contain at least one row; it is empty")
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr)
    if not finite.all():
        bad_at = np.flatnonzero(~finite)
        raise ValueError(
            f"`{name}` must not contain NaN or infinite values; found {bad_at.size} "
            f"(first at index {bad_at[0]}); drop or impute missing outcomes first"
        )
    return arr


def _check_choice(value, name: str, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"`{name}` must be one of {options}; got {value!r}")
    return value


def _check_open_unit(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a number strictly between 0 and 1; got {value!r}")
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"`{name}` must be strictly between 0 and 1; got {value}")
    return float(value)


def _as_rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(f"`random_state` must be None, an int, a SeedSequence or a Generator; got {random_state!r}")
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            "`random_state` must be None, a non-negative int, a numpy SeedSequence or a "
            f"numpy Generator; got {random_state!r}"
        ) from exc


def _as_labels(labels, name: str, n: int) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one cluster label per row); got shape {arr.shape}")
    if arr.size != n:
        raise ValueError(f"`{name}` must have one label per row of its group ({n}); got {arr.size}")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"`{name}` must not contain NaN cluster labels")
    if arr.dtype.kind == "O" and any(_is_missing(v) or (isinstance(v, float) and math.isnan(v)) for v in arr):
        raise ValueError(f"`{name}` must not contain missing cluster labels (None/NA/NaN)")
    return arr


def _cluster_codes(labels: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Return (unique labels, code per row) with codes in order of first appearance."""
    try:
        uniques, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"`{name}` labels must be mutually comparable (e.g. all str or all int)") from exc
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return uniques[order], rank[inverse.ravel()]


def _as_groups(groups, n_a: int, n_b: int):
    """Validate ``groups=(groups_a, groups_b)``; return per-group cluster codes or None."""
    if groups is None:
        return None
    if not isinstance(groups, (tuple, list)) or len(groups) != 2:
        raise TypeError(
            "`groups` must be a pair (groups_a, groups_b) of cluster labels, one per row of "
            f"`a` and of `b`; got {type(groups).__name__}"
        )
    labels_a = _as_labels(groups[0], "groups[0]", n_a)
    labels_b = _as_labels(groups[1], "groups[1]", n_b)
    uniques_a, codes_a = _cluster_codes(labels_a, "groups[0]")
    uniques_b, codes_b = _cluster_codes(labels_b, "groups[1]")
    try:
        shared = np.intersect1d(uniques_a, uniques_b)
    except TypeError as exc:
        raise TypeError("`groups` labels must be mutually comparable across both groups") from exc
    if shared.size:
        raise ValueError(
            "`groups`: a cluster must lie wholly in `a` or wholly in `b` (whole clusters are "
            f"relabelled together); {shared.size} label(s) appear in both, e.g. {shared[:3].tolist()}"
        )
    return codes_a, codes_b


def _check_exact_allowed(method: str, grouped: bool, non_binary: str | None) -> None:
    """Refuse ``method="exact"`` with ``groups`` or on outcomes other than 0/1 (``non_binary``:
    None when all are 0/1, else what to say about where the others are)."""
    if method != "exact":
        return
    if grouped:
        raise ValueError("`method='exact'` is not available with `groups`; use 'monte_carlo' or 'auto'")
    if non_binary is not None:
        raise ValueError(f"`method='exact'` needs 0/1 outcomes in both `a` and `b`; {non_binary}use "
                         "'monte_carlo' or 'auto' for other outcomes")


def _check_test_options(n_permutations, alternative, method, batch_size):
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    alternative = _check_choice(alternative, "alternative", _ALTERNATIVES)
    method = _check_choice(method, "method", _TEST_METHODS)
    if batch_size is not None:
        batch_size = _check_positive_int(batch_size, "batch_size")
    return n_permutations, alternative, method, batch_size


# ---------------------------------------------------------------------------------------------
# Permutation test
# ---------------------------------------------------------------------------------------------


def _is_binary(x: np.ndarray) -> bool:
    return bool(np.all((x == 0.0) | (x == 1.0)))


def _exact_binary_p_value(a: np.ndarray, b: np.ndarray, alternative: str) -> float:
    """Exact permutation p-value for 0/1 outcomes from the hypergeometric distribution.

    Under random relabelling the count X of positives landing in ``a`` is hypergeometric
    (population N, K positives, n_a draws), and the gap is linear and increasing in X:
    ``gap(X) = N / (n_a n_b) * (X - K n_a / N)``. So ``|gap(x)| >= |gap(x_obs)|`` is
    ``|x N - K n_a| >= |x_obs N - K n_a|``, decided in exact integer arithmetic (ties are exact).
    """
    n_a, n_b = a.size, b.size
    n = n_a + n_b
    x_obs = int(round(float(a.sum())))
    k = x_obs + int(round(float(b.sum())))
    # Support of X: O(min(n_a, n_b, K, N - K)) terms.
    x = np.arange(max(0, n_a - (n - k)), min(n_a, k) + 1, dtype=np.int64)
    # log pmf up to a constant (log C(N, n_a) and the K!, (N-K)!, ... terms cancel when the
    # tail mass is divided by the total mass, which also absorbs gammaln's rounding).
    log_w = -(gammaln(x + 1.0) + gammaln(k - x + 1.0) + gammaln(n_a - x + 1.0) + gammaln(n - k - n_a + x + 1.0))
    if alternative == "greater":
        extreme = x >= x_obs
    elif alternative == "less":
        extreme = x <= x_obs
    else:
        extreme = np.abs(x * n - k * n_a) >= abs(x_obs * n - k * n_a)
    p = math.exp(_logsumexp(log_w[extreme]) - _logsumexp(log_w))
    return min(1.0, p)


def _batch_rows(batch_size: int | None, row_elements: int) -> int:
    if batch_size is not None:
        return batch_size
    return max(1, _BATCH_ELEMENTS // max(1, row_elements))


_POPCOUNT8 = np.array([bin(v).count("1") for v in range(256)], dtype=np.int32)
# _SELECT8[v, k]: the position of the k-th set bit (from the least significant) of the byte v.
_SELECT8 = np.array([[[b for b in range(8) if v >> b & 1][k] if k < bin(v).count("1") else 0
                      for k in range(8)] for v in range(256)], dtype=np.int64)
_TABLE_BYTES = 1 << 25  # above this a byte-indexed table of partial sums falls back to half-bytes
# permutation_tests draws a relabelling as counts of each kind of unit up to this many kinds
# (O(kinds) per relabelling, against O(units / 8) and more for the subset sampler).
_MAX_KINDS = 32


class _SubsetSums:
    """Sums of ``weights`` over uniformly random ``size``-subsets of its rows, drawn in batches.

    Drawing the subsets is what a Monte Carlo permutation test spends its time on. A row-by-row
    ``Generator.choice(replace=False)`` costs one bounded random integer per chosen row plus
    Python overhead per relabelling; here a whole batch is drawn from raw 64-bit words:

    1. Each row of the population joins independently with probability ``t / 2**bits``
       (``t / 2**bits`` close to ``size / n``): ``bits`` random words per 64 rows decide 64 rows
       at once through a bitwise comparison of a ``bits``-bit uniform number with ``t``.
    2. The joined set has ``c`` rows, near ``size``. ``|c - size|`` rows are then removed from it
       (or added from the rest), a uniformly random set of them: the first ``|c - size|``
       distinct ranks in a sequence of independent uniform ranks.
    3. The sums over the set are read from a table of partial sums per byte (or half-byte) of
       the membership bits.

    Every step treats the population's rows symmetrically, so the subset's distribution is
    invariant under any permutation of the rows; with exactly ``size`` members it is therefore
    the uniform distribution over all ``size``-subsets (the same argument as for drawing a
    uniform subset by sequential rejection; Devroye 1986, ch. XI.2). A rank is read from a 53-bit
    uniform, so its probabilities are uniform within ``pool / 2**53``, far below any Monte Carlo error.

    Each relabelling consumes a fixed number of raw words of the generator, relabelling after
    relabelling, so the sums do not depend on the batch size. A row whose correction needs more
    random ranks than its fixed budget (rare: beyond six standard deviations) is completed with
    ``Generator.choice`` seeded from two words of its own.

    ``weights`` of shape (tests, n, k) holds one population per test (many tests with populations
    of one size, :func:`permutation_tests`); each drawn row then names its test. A test's sums
    are the ones a sampler of its population alone would give from the same words.
    """

    def __init__(self, weights: np.ndarray, size: int):
        if weights.ndim == 2:
            weights = weights[None]
        tests, n, k = weights.shape
        self.n, self.size, self.k, self.tests = n, size, k, tests
        self.bits = int(min(16, max(4, math.ceil(math.log2(max(n, 2)) / 2) + 1)))
        self.threshold = int(round(size / n * 2**self.bits))
        q = self.threshold / 2**self.bits
        self.words = -(-n // 64)
        sd = math.sqrt(n * q * (1 - q))
        need = abs(size - q * n) + 6 * sd + 8
        self.budget = int(math.ceil(need + need * need / max(1.0, min(size, n - size)) + 8))
        padded = np.zeros((tests, self.words * 64, k))
        padded[:, :n] = weights
        self.chunk = self.chunk_bits(n, k)  # per test: a test's sums do not depend on `tests`
        per = self.chunk
        codes = np.arange(2**per)
        bits = ((codes[:, None] >> np.arange(per)) & 1).astype(np.float64)  # (2^per, per)
        blocks = padded.reshape(tests, -1, per, k)  # (tests, chunks, per, k)
        # table[j, (t * chunks + c) * 2^per + v]: the sum of column j over the rows of test t's
        # chunk c whose bits are set in v (matmul, not einsum: einsum's generic loop made this
        # table most of a small test's time)
        table = np.matmul(bits, blocks)  # (tests, chunks, 2^per, k)
        self.table = np.ascontiguousarray(table.transpose(3, 0, 1, 2)).reshape(k, -1)
        self.test_stride = blocks.shape[1] * 2**per
        self.offsets = (np.arange(blocks.shape[1]) * 2**per)[None, :]
        last = n - (self.words - 1) * 64
        self.last_word = np.uint64((1 << last) - 1) if last < 64 else np.uint64(2**64 - 1)
        self.valid_words = np.full(self.words, np.uint64(2**64 - 1))
        self.valid_words[-1] = self.last_word
        self.weights = weights
        self.row_words = self.bits * self.words + self.budget + 2

    @staticmethod
    def chunk_bits(n: int, k: int) -> int:
        """Rows per table chunk: a byte, or a half-byte when byte tables would pass _TABLE_BYTES."""
        return 8 if 256 * n * k <= _TABLE_BYTES else 4

    @staticmethod
    def table_bytes(n: int, k: int) -> int:
        """Bytes of one test's table of partial sums."""
        per = _SubsetSums.chunk_bits(n, k)
        return 8 * k * (-(-n // 64) * 64 // per) * 2**per

    def row_elements(self) -> int:
        return self.row_words + 8 * self.words * self.k

    def draw(self, rng: np.random.Generator, count: int, test: np.ndarray | None = None) -> np.ndarray:
        """``count`` subset sums, shape (count, k); consumes ``count * row_words`` raw words.

        ``test`` (shape (count,), default all 0) names the test whose population each row draws from.
        """
        test = np.zeros(count, dtype=np.intp) if test is None else test
        raw = rng.bit_generator.random_raw(count * self.row_words).reshape(count, self.row_words)
        member = self._members(raw[:, : self.bits * self.words])
        sums = self._table_sums(member, test)
        self._correct(sums, member, raw[:, self.bits * self.words:], test)
        return sums

    def _members(self, raw: np.ndarray) -> np.ndarray:
        """Bit j of word w: row 64 w + j joins (probability threshold / 2**bits), shape (count, words)."""
        count = raw.shape[0]
        words = raw.reshape(count, self.bits, self.words)
        ones = np.uint64(2**64 - 1)
        if self.threshold >= 2**self.bits:
            below = np.full((count, self.words), ones)
        else:
            below = np.zeros((count, self.words), dtype=np.uint64)
            equal = np.full((count, self.words), ones)
            for i in range(self.bits):  # most significant bit first: U < t at the first differing bit
                w = words[:, i, :]
                if self.threshold >> (self.bits - 1 - i) & 1:
                    below |= equal & ~w
                    equal &= w
                else:
                    equal &= ~w
        below[:, -1] &= self.last_word
        return below

    def _table_sums(self, member: np.ndarray, test: np.ndarray) -> np.ndarray:
        as_bytes = _bytes(member)
        if self.chunk == 8:
            codes = as_bytes.astype(np.intp)
        else:  # half-bytes, low first (the rows' order within a byte)
            codes = np.empty((as_bytes.shape[0], as_bytes.shape[1] * 2), dtype=np.intp)
            codes[:, 0::2] = as_bytes & 15
            codes[:, 1::2] = as_bytes >> 4
        codes += self.offsets
        if self.tests > 1:
            codes += (test * self.test_stride)[:, None]
        # One contiguous (count, chunks) gather per column: each row is summed the same way
        # whatever the batch, so the sums do not depend on the batch size.
        return np.stack([np.take(column, codes).sum(axis=1) for column in self.table], axis=1)  # (count, k)

    def _correct(self, sums: np.ndarray, member: np.ndarray, extra: np.ndarray, test: np.ndarray) -> None:
        """Bring every subset to ``size`` rows by a uniformly random removal (or addition)."""
        n, words = self.n, self.words
        counts = _popcount64(member).sum(axis=1)
        surplus = counts - self.size
        rows = np.flatnonzero(surplus)
        if rows.size == 0:
            return
        remove = surplus[rows] > 0
        need = np.abs(surplus[rows])
        # Remove from the members, or add from the others (padding bits never count).
        pool_words = np.where(remove[:, None], member[rows], ~member[rows] & self.valid_words)
        pool = np.where(remove, counts[rows], n - counts[rows])
        draws = np.minimum(need + np.ceil(need * need / pool).astype(np.int64) + 4, self.budget)
        owner = np.repeat(np.arange(rows.size), draws)
        starts = np.cumsum(draws) - draws
        step = np.arange(owner.size) - starts[owner]
        uniform = (extra[rows[owner], step] >> np.uint64(11)).astype(np.float64) * 2.0**-53
        rank = np.minimum(uniform * pool[owner], pool[owner] - 1).astype(np.int64)
        # The first `need` distinct ranks of each row's sequence: a uniformly random set of them.
        _, first = np.unique(owner * (n + 1) + rank, return_index=True)
        distinct = np.zeros(owner.size, dtype=bool)
        distinct[first] = True
        seen = np.cumsum(distinct)
        seen -= np.concatenate([[0], seen[starts[1:] - 1]])[owner]
        take = distinct & (seen <= need[owner])
        short = np.bincount(owner[take], minlength=rows.size) < need
        take &= ~short[owner]
        who, q = owner[take], rank[take]
        # Rank -> row of the population: the word holding it, the byte within it, the bit within that.
        in_word = _popcount64(pool_words)
        cumulative = np.cumsum(in_word, axis=1)
        flat = (cumulative + (np.arange(rows.size) * (n + 1))[:, None]).ravel()
        word = np.searchsorted(flat, who * (n + 1) + q, side="right") - who * words
        q = q - (cumulative[who, word] - in_word[who, word])
        held = _bytes(pool_words[who, word][:, None])  # (entries, 8)
        in_byte = _POPCOUNT8[held]
        before = np.cumsum(in_byte, axis=1)
        byte = np.count_nonzero(before <= q[:, None], axis=1)
        entry = np.arange(who.size)
        q = q - (before[entry, byte] - in_byte[entry, byte])
        chosen = 64 * word + 8 * byte + _SELECT8[held[entry, byte], q]
        sign = np.where(remove, -1.0, 1.0)
        owner_test = test[rows][who]
        for col in range(self.k):
            sums[rows, col] += sign * np.bincount(who, weights=self.weights[owner_test, chosen, col], minlength=rows.size)
        for i in np.flatnonzero(short):  # beyond the budget: complete the row on its own
            bits = np.unpackbits(_bytes(pool_words[i][None, :])[0], bitorder="little")[:n]
            own = np.random.default_rng(extra[rows[i], -2:].tolist())
            picked = own.choice(np.flatnonzero(bits), need[i], replace=False)
            sums[rows[i]] += sign[i] * self.weights[test[rows[i]], picked].sum(axis=0)


def _bytes(words: np.ndarray) -> np.ndarray:
    """The bytes of 64-bit words, least significant first, shape (..., 8 * words)."""
    little = words if np.little_endian else words.byteswap()
    return little.view(np.uint8)


def _popcount64(words: np.ndarray) -> np.ndarray:
    """Set bits of each 64-bit word (same shape)."""
    if hasattr(np, "bitwise_count"):  # NumPy 2
        return np.bitwise_count(words).astype(np.int64)
    return _POPCOUNT8[_bytes(words)].reshape(*words.shape, 8).sum(axis=-1)


class _NullSetup(NamedTuple):
    """What a Monte Carlo permutation test draws from, and how its draws become gaps."""

    weights: np.ndarray  # (units, k): the units (rows or clusters) a relabelling moves
    size: int  # units drawn into the smaller group
    observed: float  # the observed gap
    scale: float  # outcome scale for the tie tolerance
    to_gaps: object  # callable: subset sums (count, k) -> relabelled gaps (count,)


def _row_null_setup(a: np.ndarray, b: np.ndarray) -> _NullSetup:
    """Row-level relabelling: the smaller group's rows are a uniform subset of the pooled rows."""
    n_a, n_b = a.size, b.size
    n = n_a + n_b
    # Sorting makes the pool independent of which rows came from which group, so a swap of
    # `a` and `b` (or a reordering of rows) replays exactly the same relabellings.
    pooled = np.sort(np.concatenate([a, b]))
    center = pooled.mean()
    z = pooled - center  # centring keeps sums small, so rounding stays far below _TIE_RTOL
    # Only the smaller group is drawn: its centred sum T fixes the gap, gap = sign * T * N/(n_a n_b).
    select_a = n_a <= n_b
    scale = (1.0 if select_a else -1.0) * n / (n_a * n_b)
    observed = scale * float(((a if select_a else b) - center).sum())
    return _NullSetup(z[:, None], n_a if select_a else n_b, observed, float(np.abs(z).max()),
                      lambda sums: scale * sums[:, 0])


def _cluster_totals(x: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.bincount(codes).astype(np.float64)
    sums = np.bincount(codes, weights=x, minlength=sizes.size)
    return sums, sizes


def _grouped_null_setup(a: np.ndarray, b: np.ndarray, codes_a: np.ndarray, codes_b: np.ndarray) -> _NullSetup:
    """Cluster-level relabelling: whole clusters move between the groups."""
    n_a, n_b = a.size, b.size
    center = np.concatenate([a, b]).mean()
    sums_a, sizes_a = _cluster_totals(a - center, codes_a)
    sums_b, sizes_b = _cluster_totals(b - center, codes_b)
    sums = np.concatenate([sums_a, sums_b])
    sizes = np.concatenate([sizes_a, sizes_b])
    # Canonical cluster order (by centred sum, then size), for the same reason as the row sort.
    order = np.lexsort((sizes, sums))
    sums, sizes = sums[order], sizes[order]
    total_sum, total_size = float(sums.sum()), float(n_a + n_b)
    select_a = sums_a.size <= sums_b.size
    observed = float(sums_a.sum() / n_a - sums_b.sum() / n_b)

    def to_gaps(drawn: np.ndarray) -> np.ndarray:
        sel_sum, sel_size = drawn.T
        sel_mean = sel_sum / sel_size
        rest_mean = (total_sum - sel_sum) / (total_size - sel_size)
        return sel_mean - rest_mean if select_a else rest_mean - sel_mean

    scale = max(float(np.abs(a - center).max()), float(np.abs(b - center).max()))
    return _NullSetup(np.column_stack([sums, sizes]), min(sums_a.size, sums_b.size), observed, scale, to_gaps)


def _draw_null(setup: _NullSetup, n_permutations, rng, batch_size):
    """Observed gap, the gaps of ``n_permutations`` random relabellings, and the outcome scale."""
    gaps = np.empty(n_permutations)
    sampler = _SubsetSums(setup.weights, setup.size)
    rows = _batch_rows(batch_size, sampler.row_elements())
    for start in range(0, n_permutations, rows):
        stop = min(start + rows, n_permutations)
        gaps[start:stop] = setup.to_gaps(sampler.draw(rng, stop - start))
    return setup.observed, gaps, setup.scale


def _monte_carlo_p_value(observed: float, gaps: np.ndarray, alternative: str, scale: float):
    """Phipson & Smyth's (b + 1) / (m + 1), with ties (within _TIE_RTOL) counted as extreme."""
    tol = _TIE_RTOL * scale
    if alternative == "greater":
        extreme = gaps >= observed - tol
    elif alternative == "less":
        extreme = gaps <= observed + tol
    else:
        extreme = np.abs(gaps) >= abs(observed) - tol
    b = int(np.count_nonzero(extreme))
    return (b + 1) / (gaps.size + 1), b == 0


def permutation_test_result(
    a,
    b,
    *,
    n_permutations: int = 9999,
    alternative: str = "two-sided",
    method: str = "auto",
    groups=None,
    random_state=None,
    batch_size: int | None = None,
) -> PermutationTestResult:
    """Permutation test for a gap in means, with everything needed to report it.

    Tests whether ``mean(a) - mean(b)`` is larger in magnitude than random relabelling of rows
    (or of whole clusters) between the two groups would produce [1]_.

    Parameters
    ----------
    a : array_like, shape (n_a,)
        Outcomes of the disadvantaged group: numbers, 0/1 or booleans; finite, non-empty.
    b : array_like, shape (n_b,)
        Outcomes of the advantaged group, same rules.
    n_permutations : int, default 9999
        Random relabellings drawn by the Monte Carlo methods (ignored by the exact test);
        ``>= 1``. With ``m`` relabellings the smallest reportable p-value is ``1 / (m + 1)``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        ``"two-sided"``: share of relabellings with ``|gap| >= |observed gap|``;
        ``"greater"``: with ``gap >= observed`` (alternative: ``mean(a) > mean(b)``);
        ``"less"``: with ``gap <= observed``. Ties count as extreme.
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        ``"exact"``: hypergeometric sum, only for 0/1 outcomes without ``groups``.
        ``"monte_carlo"``: random relabellings (grouped when ``groups`` is given).
        ``"auto"``: exact when both samples are 0/1 and ``groups`` is None, else Monte Carlo.
    groups : tuple (groups_a, groups_b), optional
        Cluster labels, ``groups_a`` of shape (n_a,) and ``groups_b`` of shape (n_b,) (any
        comparable, non-missing labels: household id, person id, week...). Rows with one label
        move between the groups together, so the test stays valid when rows within a cluster
        are not exchangeable. A label may not appear in both groups (a cluster that straddles
        the groups cannot be moved whole). The number of clusters in each group is held fixed;
        the number of rows may change from one relabelling to the next.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the Monte Carlo draws (unused by the exact test).
    batch_size : int, optional
        Relabellings evaluated per vectorised batch; memory is O(batch_size x min group size).
        Default: as many as fit in about 16 MiB of indices. The result does not depend on it.

    Returns
    -------
    PermutationTestResult
        ``statistic`` (observed gap), ``p_value``, ``method`` (``"exact"``, ``"monte_carlo"``,
        ``"grouped_monte_carlo"``), ``n_permutations``, ``p_value_floor``,
        ``is_monte_carlo_minimum`` and ``null_distribution``.

    Raises
    ------
    TypeError
        Non-numeric ``a``/``b``, non-integer ``n_permutations``/``batch_size``, malformed
        ``groups`` or ``random_state``.
    ValueError
        Empty, non-1-D or non-finite samples; ``n_permutations < 1``; unknown ``alternative``
        or ``method``; ``method="exact"`` on non-0/1 data or with ``groups``; labels of a
        cluster in both groups.

    Notes
    -----
    **Exact test (0/1 outcomes).** With ``N = n_a + n_b`` rows of which ``K`` are positive, the
    number ``X`` of positives a random relabelling puts in ``a`` is hypergeometric, and the gap
    is ``N / (n_a n_b) * (X - K n_a / N)``, increasing in ``X``. The two-sided p-value is
    ``P(|X N - K n_a| >= |x_obs N - K n_a|)``, decided in integers (exact ties) and summed over
    the support (``O(min(n_a, n_b, K, N - K))`` terms) in log space with ``gammaln``, so groups
    of 10^6 rows are fine. It equals the share of all ``C(N, n_a)`` relabellings that are as
    extreme, with no Monte Carlo error.

    **Monte Carlo test.** Each relabelling draws the smaller group's rows without replacement
    from the pooled outcomes; a batch of relabelled gaps is one gather-and-sum over a
    ``(batch_size, min(n_a, n_b))`` index array. With ``b`` of ``m`` relabellings at least as
    extreme as the data (ties within a relative 1e-9 of the outcome scale count as extreme),
    the p-value is ``(b + 1) / (m + 1)`` [2]_: a valid p-value that is never 0. When ``b = 0``
    the result has ``is_monte_carlo_minimum=True`` and should be read and printed as
    "p ≤ 1/(m + 1)" (:func:`format_p_value`). Relabellings are drawn independently (the same one
    can recur), so ``(b + 1) / (m + 1)`` is conservative; markedly so when there are few distinct
    relabellings (few clusters), where exact enumeration is better [2]_.

    **Grouped test.** Whole clusters are relabelled: the groups keep their number of clusters
    and the statistic is still the row-level ``mean(a) - mean(b)``. This is valid when clusters
    (not rows) are exchangeable under the null [1]_. With few clusters there are few distinct
    relabellings and small p-values are impossible (2 + 2 clusters allow only 6).

    References
    ----------
    .. [1] Good, P. I. (2005). *Permutation, Parametric, and Bootstrap Tests of Hypotheses*,
       3rd ed. Springer.
    .. [2] Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero.
       *Statistical Applications in Genetics and Molecular Biology* 9(1), Article 39.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import permutation_test_result
    >>> a = np.r_[np.ones(30), np.zeros(70)]     # selection rate 0.30
    >>> b = np.r_[np.ones(45), np.zeros(55)]     # selection rate 0.45
    >>> res = permutation_test_result(a, b)      # 0/1 outcomes: exact
    >>> res.method, round(res.statistic, 2), round(res.p_value, 4)
    ('exact', -0.15, 0.0405)
    >>> rng = np.random.default_rng(0)
    >>> res = permutation_test_result(rng.normal(0.5, 1, 80), rng.normal(0, 1, 90),
    ...                               n_permutations=2000, random_state=0)
    >>> res.method, res.n_permutations, res.p_value_floor == 1 / 2001
    ('monte_carlo', 2000, True)
    """
    a = _as_sample(a, "a")
    b = _as_sample(b, "b")
    n_permutations, alternative, method, batch_size = _check_test_options(
        n_permutations, alternative, method, batch_size
    )
    codes = _as_groups(groups, a.size, b.size)
    binary = _is_binary(a) and _is_binary(b)
    _check_exact_allowed(method, codes is not None, None if binary else "")
    statistic = float(a.mean() - b.mean())

    if method != "monte_carlo" and codes is None and binary:
        p = _exact_binary_p_value(a, b, alternative)
        return PermutationTestResult(statistic, p, "exact", None, 0.0, False, alternative, None)

    rng = _as_rng(random_state)
    kind = "monte_carlo" if codes is None else "grouped_monte_carlo"
    floor = 1.0 / (n_permutations + 1)
    if np.ptp(np.concatenate([a, b])) == 0.0:
        # All outcomes equal: every relabelling gives the observed gap (zero); p = 1 exactly.
        null = np.zeros(n_permutations)
        null.setflags(write=False)
        return PermutationTestResult(0.0, 1.0, kind, n_permutations, floor, False, alternative, null)
    if codes is None:
        setup = _row_null_setup(a, b)
    else:
        setup = _grouped_null_setup(a, b, *codes)
    observed, null, scale = _draw_null(setup, n_permutations, rng, batch_size)
    p, at_floor = _monte_carlo_p_value(observed, null, alternative, scale)
    null.setflags(write=False)
    return PermutationTestResult(statistic, p, kind, n_permutations, floor, at_floor, alternative, null)


def permutation_test(
    a,
    b,
    *,
    n_permutations: int = 9999,
    alternative: str = "two-sided",
    method: str = "auto",
    groups=None,
    random_state=None,
    batch_size: int | None = None,
) -> float:
    """p-value of the permutation test for ``mean(a) - mean(b)``, as a plain float.

    Same parameters, conventions, errors and references as :func:`permutation_test_result`;
    use that function when the report needs to say "p ≤ 1/(m + 1)" for a Monte Carlo minimum.

    Parameters
    ----------
    a : array_like, shape (n_a,)
        Disadvantaged group's outcomes (numbers, 0/1 or booleans).
    b : array_like, shape (n_b,)
        Advantaged group's outcomes.
    n_permutations, alternative, method, groups, random_state, batch_size
        See :func:`permutation_test_result`.

    Returns
    -------
    float
        The p-value: exact for 0/1 outcomes (``method="auto"``), else Phipson & Smyth's
        ``(b + 1) / (m + 1)`` over ``m = n_permutations`` relabellings, in (0, 1].

    Raises
    ------
    TypeError, ValueError
        See :func:`permutation_test_result`.

    Notes
    -----
    Two-sided p is the share of relabellings with ``|gap|`` at least the observed ``|gap|``
    (not twice the smaller tail). See :func:`permutation_test_result`.

    References
    ----------
    .. [1] Good (2005); Phipson and Smyth (2010): see the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import permutation_test
    >>> rng = np.random.default_rng(1)
    >>> p = permutation_test(rng.normal(size=50), rng.normal(size=60), n_permutations=2000,
    ...                      random_state=1)
    >>> 0 < p <= 1
    True
    """
    return float(
        permutation_test_result(
            a,
            b,
            n_permutations=n_permutations,
            alternative=alternative,
            method=method,
            groups=groups,
            random_state=random_state,
            batch_size=batch_size,
        ).p_value
    )


def permutation_tests(
    a,
    b,
    *,
    n_permutations: int = 9999,
    alternative: str = "two-sided",
    method: str = "auto",
    groups=None,
    random_state=None,
) -> np.ndarray:
    """p-values of many permutation tests at once, one per row: a simulation study in one call.

    Row ``i`` is the test of ``mean(a[i]) - mean(b[i])`` that :func:`permutation_test` runs on
    ``a[i]`` and ``b[i]`` (with ``groups=(groups_a[i], groups_b[i])`` when given): the same
    statistic, null distribution and p-value convention. A study of thousands of small audits
    draws many tests' relabellings together, avoiding most of the per-call overhead (see Notes).

    Parameters
    ----------
    a : array_like, shape (n_tests, n_a)
        Row ``i``: the disadvantaged group's outcomes in test ``i`` (numbers, 0/1 or booleans;
        finite). Every test has ``n_a >= 1`` rows in ``a`` and ``n_b >= 1`` in ``b``.
    b : array_like, shape (n_tests, n_b)
        Row ``i``: the advantaged group's outcomes in test ``i``.
    n_permutations : int, default 9999
        Random relabellings per Monte Carlo test, ``>= 1``; the smallest p-value is ``1 / (m + 1)``.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        As in :func:`permutation_test_result`, for every test.
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        As in :func:`permutation_test_result`, test by test: ``"auto"`` is exact for a test whose
        outcomes are all 0/1 when ``groups`` is None, Monte Carlo otherwise.
    groups : tuple (groups_a, groups_b), optional
        Cluster labels, ``groups_a`` of shape (n_tests, n_a) and ``groups_b`` of shape
        (n_tests, n_b): row ``i`` labels test ``i``'s rows. Whole clusters are relabelled, as in
        :func:`permutation_test_result`; a label may not appear in both groups of a test.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator of the Monte Carlo draws.

    Returns
    -------
    numpy.ndarray of float, shape (n_tests,)
        The p-values, in (0, 1]: exact (the same numbers as :func:`permutation_test`) for 0/1
        outcomes without ``groups``, else Phipson & Smyth's ``(b + 1) / (m + 1)``.

    Raises
    ------
    TypeError
        Non-numeric outcomes, a non-integer ``n_permutations``, malformed ``groups`` or
        ``random_state``.
    ValueError
        ``a`` or ``b`` not 2-D, empty or non-finite; different numbers of tests; ``groups`` of
        the wrong shape or with a cluster in both groups; ``n_permutations < 1``; an unknown
        ``alternative`` or ``method``; ``method="exact"`` with ``groups`` or non-0/1 outcomes.
        Errors about one test name its row.

    See Also
    --------
    permutation_test : one test, with ``batch_size``; permutation_test_power : the exact power
        of the exact test, with no simulation.

    Notes
    -----
    A Monte Carlo relabelling moves units (rows, or whole clusters) and its gap depends only on
    the sums of the units it moves. When a test's units are of at most 32 kinds (distinct
    ``(centred sum, rows)`` pairs: 0/1 rows, or households of one size, whose flagged totals are
    whole numbers), a uniformly random relabelling draws a multivariate hypergeometric number of
    units of each kind, and that count is drawn directly, at O(kinds) per relabelling
    (``Generator.multivariate_hypergeometric``). Other tests use :func:`permutation_test`'s
    sampler of random subsets, one population table per test, drawn for many tests of one size
    at once and test after test. When no test in the call has units of few kinds, their p-values
    with one generator are the numbers :func:`permutation_test` called once per row would give;
    otherwise each test has the same null distribution but different draws.

    References
    ----------
    .. [1] Good (2005); Phipson and Smyth (2010): see the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import permutation_tests
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(0.3, 1, (500, 40)), rng.normal(0, 1, (500, 60))  # 500 simulated audits
    >>> p = permutation_tests(a, b, n_permutations=199, random_state=1)
    >>> p.shape, bool(0.2 < np.mean(p < 0.05) < 0.5)
    ((500,), True)
    """
    n_permutations, alternative, method, _ = _check_test_options(n_permutations, alternative, method, None)
    a, b = _as_sample_rows(a, "a"), _as_sample_rows(b, "b")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"`a` and `b` must hold one row per test each; got {a.shape[0]} and {b.shape[0]} rows")
    n_tests, n_a = a.shape
    n_b = b.shape[1]
    codes = _as_group_rows(groups, n_tests, n_a, n_b)
    binary = np.all((a == 0.0) | (a == 1.0), axis=1) & np.all((b == 0.0) | (b == 1.0), axis=1)
    _check_exact_allowed(method, codes is not None,
                         None if binary.all() else f"row {int(np.flatnonzero(~binary)[0])} has others; ")
    p = np.ones(n_tests)
    exact = binary & (method != "monte_carlo") & (codes is None)
    for i in np.flatnonzero(exact):
        p[i] = _exact_binary_p_value(a[i], b[i], alternative)
    # Monte Carlo tests; a test whose outcomes are all equal has p = 1 and draws nothing.
    drawn = [i for i in np.flatnonzero(~exact) if np.ptp(a[i]) > 0 or np.ptp(b[i]) > 0 or a[i, 0] != b[i, 0]]
    if not drawn:
        return p
    rng = _as_rng(random_state)
    setups = [_row_null_setup(a[i], b[i]) if codes is None else _grouped_null_setup(a[i], b[i], *codes[i])
              for i in drawn]
    left = _p_values_by_kind(p, drawn, setups, n_permutations, alternative, rng)
    _p_values_by_subsets(p, [drawn[j] for j in left], [setups[j] for j in left], n_permutations, alternative, rng)
    return p


def _p_values_by_kind(p: np.ndarray, drawn: list, setups: list, n_permutations: int, alternative: str,
                      rng) -> list[int]:
    """Fill ``p[drawn[j]]`` for the tests whose units are of few kinds; return the other ``j``.

    Units of few kinds (0/1 rows; households of one size, whose totals are whole numbers): a
    relabelling's sums depend only on how many units of each kind it draws, a multivariate
    hypergeometric count, drawn directly at O(kinds) per relabelling.
    """
    left = []
    for j, (i, setup) in enumerate(zip(drawn, setups)):
        # (A complex key sorts by sum, then rows: far cheaper than np.unique(axis=0)'s row sort.)
        key = setup.weights[:, 0] + 1j * (setup.weights[:, 1] if setup.weights.shape[1] > 1 else 0.0)
        kinds, per_kind = np.unique(key, return_counts=True)
        if kinds.size > _MAX_KINDS:
            left.append(j)
            continue
        kinds = np.column_stack([kinds.real, kinds.imag])[:, : setup.weights.shape[1]]
        counts = rng.multivariate_hypergeometric(per_kind, setup.size, size=n_permutations, method="marginals")
        gaps = setup.to_gaps(counts @ kinds)
        p[i] = _monte_carlo_p_value(setup.observed, gaps, alternative, setup.scale)[0]
    return left


def _p_values_by_subsets(p: np.ndarray, drawn: list, setups: list, n_permutations: int, alternative: str,
                         rng) -> None:
    """Fill ``p[drawn[j]]`` by drawing random subsets, many tests of one population size at once."""
    start = 0
    while start < len(drawn):  # runs of consecutive tests with one population size share a sampler
        shape = (setups[start].weights.shape, setups[start].size)
        most = max(1, _TABLE_BYTES // _SubsetSums.table_bytes(*shape[0]))  # tests whose tables fit together
        stop = start + 1
        while (stop < len(drawn) and stop - start < most
               and (setups[stop].weights.shape, setups[stop].size) == shape):
            stop += 1
        run = setups[start:stop]
        sampler = _SubsetSums(np.stack([setup.weights for setup in run]), shape[1])
        test = np.repeat(np.arange(len(run)), n_permutations)
        sums = np.empty((test.size, sampler.k))
        rows = _batch_rows(None, sampler.row_elements())
        for first in range(0, test.size, rows):
            last = min(first + rows, test.size)
            sums[first:last] = sampler.draw(rng, last - first, test[first:last])
        for j, setup in enumerate(run):
            gaps = setup.to_gaps(sums[j * n_permutations:(j + 1) * n_permutations])
            p[drawn[start + j]] = _monte_carlo_p_value(setup.observed, gaps, alternative, setup.scale)[0]
        start = stop


def _as_sample_rows(x, name: str) -> np.ndarray:
    """Return ``x`` as a 2-D float64 array whose rows pass :func:`_as_sample`, or raise naming the row."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"`{name}` must be a 2-D array of numbers (one row per test), got a string")
    try:
        arr = np.asarray(x)
    except ValueError:  # NumPy refuses ragged nested lists
        raise ValueError(f"`{name}` must be 2-D with rows of one length (every test of the call has the same "
                         "group sizes); got rows of different lengths: call once per size") from None
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D (one row per test, one column per row of its group); "
                         f"got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"`{name}` must hold at least one test; it has no rows")
    if arr.dtype.kind in "biuf" and arr.shape[1] > 0 and np.isfinite(arr).all():
        return arr.astype(np.float64, copy=False)
    # Something is wrong (or unusual, e.g. objects): let the one-test check name it, row by row.
    return np.stack([_as_sample(row, f"{name}[{i}]") for i, row in enumerate(arr)])


def _as_group_rows(groups, n_tests: int, n_a: int, n_b: int):
    """Validate ``groups`` for :func:`permutation_tests`: per test, its (codes_a, codes_b); or None."""
    if groups is None:
        return None
    if not isinstance(groups, (tuple, list)) or len(groups) != 2:
        raise TypeError("`groups` must be a pair (groups_a, groups_b) of label arrays, shapes "
                        f"(n_tests, n_a) and (n_tests, n_b); got {type(groups).__name__}")
    labels = [np.asarray(g) for g in groups]
    for i, (arr, n) in enumerate(zip(labels, (n_a, n_b))):
        if arr.shape != (n_tests, n):
            raise ValueError(f"`groups[{i}]` must have shape ({n_tests}, {n}), one label per row of "
                             f"{'`a`' if i == 0 else '`b`'}; got {arr.shape}")
    out = []
    for i in range(n_tests):
        try:
            out.append(_as_groups((labels[0][i], labels[1][i]), n_a, n_b))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"test {i}: {exc}") from None
    return out


# ---------------------------------------------------------------------------------------------
# Bootstrap interval
# ---------------------------------------------------------------------------------------------


class _GroupResampler:
    """Bootstrap means of one group: rows (or whole clusters) drawn with replacement.

    Draws are consumed resample after resample from the group's own generator, so the
    bootstrap distribution does not depend on the batch size.
    """

    def __init__(self, x: np.ndarray, codes: np.ndarray | None, rng: np.random.Generator):
        self.rng = rng
        self.n = x.size
        if codes is not None:
            self.kind = "clusters"
            self.sums, self.sizes = _cluster_totals(x, codes)
            self.units = self.sums.size
            self.unit_means = self.sums / self.sizes
            return
        self.unit_means = x
        self.units = x.size
        levels, counts = np.unique(x, return_counts=True)
        if levels.size <= _MAX_MULTINOMIAL_LEVELS:
            # A resample of rows is a multinomial draw of counts over the distinct values.
            self.kind = "levels"
            self.levels, self.probs = levels, counts / x.size
        else:
            self.kind = "rows"
            self.x = x

    @property
    def row_elements(self) -> int:
        return {"clusters": self.units, "levels": 1, "rows": self.n}[self.kind]

    def means(self, count: int) -> np.ndarray:
        if self.kind == "levels":
            return (self.rng.multinomial(self.n, self.probs, size=count) @ self.levels) / self.n
        if self.kind == "rows":
            idx = self.rng.integers(0, self.n, size=(count, self.n))  # (count, n)
            return self.x[idx].mean(axis=1)
        idx = self.rng.integers(0, self.units, size=(count, self.units))  # (count, clusters)
        return self.sums[idx].sum(axis=1) / self.sizes[idx].sum(axis=1)

    def jackknife_u(self) -> np.ndarray:
        """Efron & Tibshirani's (n - 1)(mean of leave-one-out means - leave-one-out mean)."""
        if self.units < 2:
            return np.zeros(1)
        if self.kind == "clusters":
            total, size = self.sums.sum(), self.sizes.sum()
            loo = (total - self.sums) / (size - self.sizes)
            return (self.units - 1) * (loo.mean() - loo)
        # For the mean of rows the leave-one-out identity gives u_i = x_i - mean(x).
        return self.unit_means - self.unit_means.mean()


def _is_degenerate(resampler: _GroupResampler, scale: float) -> bool:
    return resampler.units < 2 or np.ptp(resampler.unit_means) <= _TIE_RTOL * scale


def _bootstrap_setup(a, b, codes, random_state):
    rng = _as_rng(random_state)
    rng_a, rng_b = rng.spawn(2)
    codes_a, codes_b = (None, None) if codes is None else codes
    return _GroupResampler(a, codes_a, rng_a), _GroupResampler(b, codes_b, rng_b)


def _bootstrap_gaps(sampler_a, sampler_b, n_resamples: int, batch_size: int | None) -> np.ndarray:
    gaps = np.empty(n_resamples)
    rows = _batch_rows(batch_size, max(sampler_a.row_elements, sampler_b.row_elements))
    for start in range(0, n_resamples, rows):
        stop = min(start + rows, n_resamples)
        gaps[start:stop] = sampler_a.means(stop - start) - sampler_b.means(stop - start)
    return gaps


def _bca_levels(gaps, observed, u_a, u_b, n_units_a, n_units_b, alpha, tol):
    """BCa quantile levels (Efron 1987; Efron & Tibshirani 1993, eqs. 14.9-14.15, 15.36).

    Returns None when the correction is undefined (observed gap outside the bootstrap
    distribution, or 1 - a (z0 + z) <= 0).
    """
    share_below = (np.count_nonzero(gaps < observed - tol) + np.count_nonzero(gaps <= observed + tol)) / (
        2 * gaps.size
    )
    z0 = ndtri(share_below)
    if not np.isfinite(z0):
        return None
    # The b-group enters the gap with a minus sign, so its third moment flips sign.
    num = np.sum(u_a**3) / n_units_a**3 - np.sum(u_b**3) / n_units_b**3
    den = np.sum(u_a**2) / n_units_a**2 + np.sum(u_b**2) / n_units_b**2
    accel = num / (6.0 * den**1.5) if den > 0 else 0.0
    levels = []
    for z in (ndtri(alpha / 2), ndtri(1 - alpha / 2)):
        shifted = z0 + z
        denom = 1.0 - accel * shifted
        if denom <= 0:
            return None
        levels.append(float(ndtr(z0 + shifted / denom)))
    return levels


def _interval_from_gaps(gaps, observed, sampler_a, sampler_b, confidence_level, method, scale):
    alpha = 1.0 - confidence_level
    levels = [alpha / 2, 1 - alpha / 2]
    if method == "bca":
        bca = _bca_levels(
            gaps,
            observed,
            sampler_a.jackknife_u(),
            sampler_b.jackknife_u(),
            sampler_a.units,
            sampler_b.units,
            alpha,
            _TIE_RTOL * scale,
        )
        if bca is None:
            warnings.warn(
                "BCa correction is undefined here (the observed gap lies outside the bootstrap "
                "distribution, usually a tiny or very skewed sample); returning the percentile "
                "interval instead",
                DegenerateSampleWarning,
                stacklevel=3,
            )
        else:
            levels = bca
    low, high = np.quantile(gaps, levels)
    return ConfidenceInterval(float(low), float(high))


def _warn_degenerate(sampler_a, sampler_b, scale, stacklevel=3) -> bool:
    """Warn about groups that cannot vary under resampling; True when both cannot."""
    flat = [name for name, s in (("a", sampler_a), ("b", sampler_b)) if _is_degenerate(s, scale)]
    if not flat:
        return False
    if len(flat) == 2:
        warnings.warn(
            "neither `a` nor `b` can vary under resampling (constant outcomes, one row or one "
            "cluster each); the bootstrap interval has zero width at the observed gap and "
            "does not measure sampling uncertainty",
            DegenerateSampleWarning,
            stacklevel=stacklevel,
        )
        return True
    warnings.warn(
        f"group `{flat[0]}` cannot vary under resampling (constant outcomes, one row or one "
        "cluster), so the interval reflects only the other group's sampling variability",
        DegenerateSampleWarning,
        stacklevel=stacklevel,
    )
    return False


def bootstrap_ci(
    a,
    b,
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 9999,
    method: str = "percentile",
    random_state=None,
    groups=None,
    batch_size: int | None = None,
) -> ConfidenceInterval:
    """Stratified bootstrap confidence interval for the gap ``mean(a) - mean(b)``.

    Each group is resampled with replacement within itself (its size held fixed), and the
    interval is read off the distribution of resampled gaps [1]_.

    Parameters
    ----------
    a : array_like, shape (n_a,)
        Disadvantaged group's outcomes (numbers, 0/1 or booleans); finite, non-empty.
    b : array_like, shape (n_b,)
        Advantaged group's outcomes, same rules.
    confidence_level : float, default 0.95
        Coverage of the interval, strictly between 0 and 1.
    n_resamples : int, default 9999
        Bootstrap resamples, ``>= 1``.
    method : {"percentile", "bca"}, default "percentile"
        ``"percentile"``: the ``alpha/2`` and ``1 - alpha/2`` quantiles of the resampled gaps.
        ``"bca"``: bias-corrected and accelerated levels [2]_ [3]_.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator; each group draws from its own child stream (``Generator.spawn``).
    groups : tuple (groups_a, groups_b), optional
        Cluster labels as in :func:`permutation_test_result`: whole clusters are resampled
        (a cluster bootstrap within each group), and the jackknife for BCa leaves out one
        cluster at a time.
    batch_size : int, optional
        Resamples per vectorised batch (memory bound); the interval does not depend on it.

    Returns
    -------
    ConfidenceInterval
        ``(low, high)`` in the outcome's unit (for 0/1 outcomes, a difference of rates in
        [-1, 1]). A named tuple: ``low, high = bootstrap_ci(a, b)`` works.

    Raises
    ------
    TypeError
        Non-numeric samples or malformed options.
    ValueError
        Empty, non-1-D or non-finite samples; ``confidence_level`` outside (0, 1);
        ``n_resamples < 1``; unknown ``method``; a cluster label in both groups.

    Warns
    -----
    DegenerateSampleWarning
        When a group cannot vary under resampling (constant outcomes, e.g. all zeros; one row;
        one cluster). Its mean is then fixed at its observed value and the interval reflects
        the other group only; if neither group can vary the interval is ``(gap, gap)``, zero
        width. Also when the BCa correction is undefined (the observed gap lies outside the
        bootstrap distribution), in which case the percentile interval is returned.

    Notes
    -----
    Quantiles use linear interpolation (``numpy.quantile``'s default). For BCa the bias
    correction is ``z0 = Phi^-1(share of resampled gaps below the observed, ties counted
    half)`` and the acceleration comes from the per-group jackknife,
    ``a = sum_g sum_i s_g u_gi^3 / n_g^3 / (6 (sum_g sum_i u_gi^2 / n_g^2)^(3/2))`` with
    ``u_gi = x_gi - mean(x_g)`` (row level; one cluster left out at a time when grouped) and
    ``s_a = +1, s_b = -1`` [3]_; this matches ``scipy.stats.bootstrap(..., paired=False,
    method="BCa")``. A group with at most 16 distinct values is resampled through multinomial
    counts of its values: the same distribution as resampling rows, much faster for 0/1 data.

    References
    ----------
    .. [1] Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*.
       Chapman & Hall.
    .. [2] Efron, B. (1987). Better bootstrap confidence intervals. *JASA* 82(397), 171-185.
    .. [3] Efron and Tibshirani (1993), eqs. 14.9-14.15 and 15.36.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import bootstrap_ci
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.binomial(1, 0.3, 400), rng.binomial(1, 0.4, 800)
    >>> low, high = bootstrap_ci(a, b, n_resamples=2000, random_state=0)
    >>> bool(low < a.mean() - b.mean() < high)
    True
    """
    a = _as_sample(a, "a")
    b = _as_sample(b, "b")
    confidence_level = _check_open_unit(confidence_level, "confidence_level")
    n_resamples = _check_positive_int(n_resamples, "n_resamples")
    method = _check_choice(method, "method", _CI_METHODS)
    if batch_size is not None:
        batch_size = _check_positive_int(batch_size, "batch_size")
    codes = _as_groups(groups, a.size, b.size)
    return _bootstrap_ci(a, b, codes, confidence_level, n_resamples, method, random_state, batch_size)


def _bootstrap_ci(a, b, codes, confidence_level, n_resamples, method, random_state, batch_size, stacklevel=4):
    observed = float(a.mean() - b.mean())
    sampler_a, sampler_b = _bootstrap_setup(a, b, codes, random_state)
    scale = max(float(np.abs(a - a.mean()).max()), float(np.abs(b - b.mean()).max()), abs(observed))
    if _warn_degenerate(sampler_a, sampler_b, scale, stacklevel=stacklevel):
        return ConfidenceInterval(observed, observed)
    gaps = _bootstrap_gaps(sampler_a, sampler_b, n_resamples, batch_size)
    return _interval_from_gaps(gaps, observed, sampler_a, sampler_b, confidence_level, method, scale)


# ---------------------------------------------------------------------------------------------
# Score intervals for 0/1 outcomes (the results table's intervals) and the ratio bootstrap
# ---------------------------------------------------------------------------------------------


def _as_binary_sample(x, name: str) -> np.ndarray:
    arr = _as_sample(x, name)
    if not _is_binary(arr):
        bad = arr[(arr != 0.0) & (arr != 1.0)][0]
        raise ValueError(f"`{name}` must hold only 0 and 1 (a score interval is for proportions); found {bad!r}")
    return arr


def _z(confidence_level: float) -> float:
    return float(ndtri(0.5 + confidence_level / 2))


def _wilson(k: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's score interval for a proportion k/n, n > 0 (no continuity correction)."""
    low, high = _wilson_limits(np.float64(k), np.float64(n), z)
    return float(low), float(high)


def _wilson_limits(k, n, z: float) -> tuple[np.ndarray, np.ndarray]:
    """The formula of :func:`wilson_interval`: float arrays ``k``, ``n`` (``n > 0``) of one shape."""
    p = k / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At a rate of 0 (or 1) the bound is exactly 0 (or 1); the formula leaves rounding noise.
    return (np.where(k == 0, 0.0, np.clip(center - half, 0.0, 1.0)),
            np.where(k == n, 1.0, np.clip(center + half, 0.0, 1.0)))


def _newcombe(k1, n1, k2, n2, z) -> tuple[float, float]:
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = _wilson(k1, n1, z)
    l2, u2 = _wilson(k2, n2, z)
    d = p1 - p2
    return d - math.hypot(p1 - l1, u2 - p2), d + math.hypot(u1 - p1, p2 - l2)


def _agresti_caffo(k1, n1, k2, n2, z) -> tuple[float, float]:
    q1, q2 = (k1 + 1) / (n1 + 2), (k2 + 1) / (n2 + 2)
    half = z * math.sqrt(q1 * (1 - q1) / (n1 + 2) + q2 * (1 - q2) / (n2 + 2))
    return max(-1.0, q1 - q2 - half), min(1.0, q1 - q2 + half)


_DIFFERENCE_METHODS = {"newcombe": _newcombe, "agresti_caffo": _agresti_caffo}


def proportion_difference_ci(a, b, *, confidence_level: float = 0.95, method: str = "newcombe") -> ConfidenceInterval:
    """Score-based interval for the difference of two proportions, ``mean(a) - mean(b)``.

    The interval the results table gives every gap of two rates: unlike the percentile
    bootstrap, it keeps close to its nominal coverage on small groups (at 10 against 10 rows
    the bootstrap of a difference of rates covers about 65% of the time for a nominal 95%) and
    it never has zero width (0/63 against 0/116 gives an interval around 0, not "[0, 0]").

    Parameters
    ----------
    a : array_like of {0, 1}, shape (n_a,)
        Disadvantaged group's 0/1 outcomes (numbers or booleans); non-empty.
    b : array_like of {0, 1}, shape (n_b,)
        Advantaged group's 0/1 outcomes; non-empty.
    confidence_level : float, default 0.95
        Nominal coverage, strictly between 0 and 1.
    method : {"newcombe", "agresti_caffo"}, default "newcombe"
        ``"newcombe"``: Newcombe's hybrid score interval (his method 10), built from the Wilson
        score interval of each rate [1]_. ``"agresti_caffo"``: the Wald interval after adding
        one success and one failure to each group [2]_, clipped to [-1, 1].

    Returns
    -------
    ConfidenceInterval
        ``(low, high)``, a difference of rates in [-1, 1], ``low < high``.

    Raises
    ------
    TypeError
        Non-numeric samples.
    ValueError
        Empty, non-1-D or non-0/1 samples; ``confidence_level`` outside (0, 1); unknown
        ``method``.

    Notes
    -----
    With ``p_i = k_i / n_i`` and Wilson limits ``(l_i, u_i)`` at ``z = Phi^-1((1 + level) / 2)``,
    Newcombe's interval is ``p_1 - p_2 - sqrt((p_1 - l_1)^2 + (u_2 - p_2)^2)`` to
    ``p_1 - p_2 + sqrt((u_1 - p_1)^2 + (p_2 - l_2)^2)``. Both methods equal statsmodels'
    ``confint_proportions_2indep(..., compare="diff")`` with ``method="newcomb"`` and
    ``"agresti-caffo"`` (the tests check this). Deterministic: no resampling.

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Interval estimation for the difference between independent
       proportions: comparison of eleven methods. *Statistics in Medicine* 17(8), 873-890.
    .. [2] Agresti, A. and Caffo, B. (2000). Simple and effective confidence intervals for
       proportions and differences of proportions result from adding two successes and two
       failures. *The American Statistician* 54(4), 280-288.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import proportion_difference_ci
    >>> low, high = proportion_difference_ci(np.zeros(63), np.zeros(116))
    >>> round(low, 3), round(high, 3)
    (-0.032, 0.057)
    """
    a = _as_binary_sample(a, "a")
    b = _as_binary_sample(b, "b")
    confidence_level = _check_open_unit(confidence_level, "confidence_level")
    method = _check_choice(method, "method", tuple(_DIFFERENCE_METHODS))
    low, high = _DIFFERENCE_METHODS[method](float(a.sum()), a.size, float(b.sum()), b.size, _z(confidence_level))
    return ConfidenceInterval(float(low), float(high))


def _ratio_score(theta: float, k1: float, n1: float, k2: float, n2: float) -> float:
    """Score (Pearson) statistic of ``p1 = theta * p2`` at its restricted MLE (Koopman 1984)."""
    # Restricted MLE of p2 under p1 = theta p2: the smaller root of
    # theta N p^2 - (theta n1 + k1 + n2 + k2 theta) p + (k1 + k2) = 0 (Miettinen and Nurminen 1985).
    n = n1 + n2
    qa = theta * n
    qb = -(theta * n1 + k1 + n2 + k2 * theta)
    qc = k1 + k2
    disc = max(qb * qb - 4 * qa * qc, 0.0)
    # The smaller root, written to avoid cancellation: 2c / (-b + sqrt(disc)).
    p2 = 2 * qc / (-qb + math.sqrt(disc))
    p1 = theta * p2
    var = p1 * (1 - p1) / n1 + theta * theta * p2 * (1 - p2) / n2
    diff = k1 / n1 - theta * k2 / n2
    if var <= 0.0:
        return math.inf if diff != 0.0 else 0.0
    return diff * diff / var


def _koopman(k1, n1, k2, n2, z) -> tuple[float, float]:
    from scipy.optimize import brentq

    crit = z * z
    estimate = (k1 / n1) / (k2 / n2) if k2 > 0 else math.inf

    def excess(log_theta: float) -> float:
        return _ratio_score(math.exp(log_theta), k1, n1, k2, n2) - crit

    def root(start: float, step: float) -> float:
        # Walk away from the estimate (where the statistic is 0) until the statistic passes
        # the critical value, then solve on that bracket in log(theta).
        inner, outer = start, start + step
        while excess(outer) < 0:
            inner, outer, step = outer, outer + step, step * 2
        return math.exp(brentq(excess, min(inner, outer), max(inner, outer), xtol=1e-14, rtol=1e-14))

    # k1 = 0: the estimate is 0 and so is the lower limit; k2 = 0: the upper limit is infinite.
    log_estimate = math.log(estimate) if 0 < estimate < math.inf else None
    if k1 == 0:
        low = 0.0
    else:
        low = root(log_estimate if log_estimate is not None else math.log((k1 / n1) * n2), -0.5)
    if k2 == 0:
        high = math.inf
    else:
        high = root(log_estimate if log_estimate is not None else math.log(n1 / (k2 + 0.5)) - 10, 0.5)
    return low, high


def _mover_ratio(k1, n1, k2, n2, z) -> tuple[float, float]:
    """MOVER-R with Wilson limits for ``p1 / p2`` (Donner and Zou 2012, eq. 9)."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = _wilson(k1, n1, z)
    l2, u2 = _wilson(k2, n2, z)
    a = p1 * p2
    # Each limit recovers the variance of p1 - theta p2 from the Wilson limits of its parts.
    low_den = u2 * (2 * p2 - u2)
    low = (a - math.sqrt(max(a * a - l1 * u2 * (2 * p1 - l1) * (2 * p2 - u2), 0.0))) / low_den
    high_den = l2 * (2 * p2 - l2)
    high = ((a + math.sqrt(max(a * a - u1 * l2 * (2 * p1 - u1) * (2 * p2 - l2), 0.0))) / high_den
            if high_den > 0 else math.inf)
    return max(low, 0.0), high


def proportion_ratio_ci(a, b, *, confidence_level: float = 0.95, method: str = "mover") -> ConfidenceInterval:
    """A score-based interval for the ratio of two proportions, ``mean(a) / mean(b)``.

    The interval the results table gives the disparate impact ratio, with no resampling (so no
    resample can have a zero denominator). ``method="mover"`` (the default) is Donner and Zou's
    MOVER-R built from each group's Wilson score interval, the ratio analogue of Newcombe's hybrid
    score interval for a difference; ``method="koopman"`` inverts the score test of
    ``p_a = theta * p_b`` (Koopman 1984; Miettinen and Nurminen's statistic without their
    ``N / (N - 1)`` factor). MOVER-R is the default because it holds its coverage on small groups
    better: at 10 against 10 rows, over the rate grid {0.05, 0.1, 0.2, 0.3, 0.5} for each group,
    its exact coverage is at least 0.938 where Koopman's dips to 0.928, counting every pair of
    counts (an infinite upper limit when ``b`` has no 1s, ``(0, inf)`` for 0/0, both covering).
    The results table prints no interval when ``b`` has no 1s; among the intervals it does print,
    MOVER-R's exact coverage falls to 0.847 (rates 0.5 for ``a`` against 0.05 for ``b``; Koopman's
    to 0.820, at 0.2 against 0.05): a small ``b`` rate is printed only when ``b`` happened to hold
    a 1, which biases the ratio down. Each figure is exact: binomial probabilities summed over
    all 11 x 11 pairs of counts, the second divided by the probability that ``b`` holds a 1.

    Parameters
    ----------
    a : array_like of {0, 1}, shape (n_a,)
        Disadvantaged group's 0/1 outcomes; non-empty.
    b : array_like of {0, 1}, shape (n_b,)
        Advantaged group's 0/1 outcomes; non-empty.
    confidence_level : float, default 0.95
        Nominal coverage, strictly between 0 and 1.
    method : {"mover", "koopman"}, default "mover"

    Returns
    -------
    ConfidenceInterval
        ``(low, high)`` with ``0 <= low < high <= inf``. When ``a`` has no 1s the ratio is 0 and
        ``low`` is 0; when ``b`` has no 1s the ratio is infinite and so is ``high`` (the results
        table reports such a ratio as undefined instead, with no interval); when neither has a
        1, every ratio fits the data and the result is ``(nan, nan)``.

    Raises
    ------
    TypeError, ValueError
        As :func:`proportion_difference_ci`; ``ValueError`` for an unknown ``method``.

    Notes
    -----
    MOVER-R: with Wilson limits ``(l_a, u_a)``, ``(l_b, u_b)`` and ``a = p_a p_b``, ``low = (a -
    sqrt(a^2 - l_a u_b (2 p_a - l_a)(2 p_b - u_b))) / (u_b (2 p_b - u_b))`` and ``high = (a +
    sqrt(a^2 - u_a l_b (2 p_a - u_a)(2 p_b - l_b))) / (l_b (2 p_b - l_b))`` (infinite when
    ``l_b = 0``). Koopman: the interval is ``{theta : S(theta) <= z^2}`` with ``S(theta) = (p_a - theta p_b)^2 /
    (p~_a (1 - p~_a) / n_a + theta^2 p~_b (1 - p~_b) / n_b)``, where ``p~`` are the maximum
    likelihood estimates under ``p_a = theta p_b`` (closed form, a quadratic); each limit is
    found by Brent's method on ``log(theta)``. It equals statsmodels'
    ``confint_proportions_2indep(..., compare="ratio", method="score", correction=False)``
    wherever that one is well defined (the tests check this).

    References
    ----------
    .. [1] Koopman, P. A. R. (1984). Confidence intervals for the ratio of two binomial
       proportions. *Biometrics* 40(2), 513-517.
    .. [2] Miettinen, O. and Nurminen, M. (1985). Comparative analysis of two rates.
       *Statistics in Medicine* 4(2), 213-226.
    .. [3] Donner, A. and Zou, G. Y. (2012). Closed-form confidence intervals for functions of
       the normal mean and standard deviation. *Statistical Methods in Medical Research* 21(4),
       347-359 (MOVER-R, eq. 9); Newcombe, R. G. (2013). *Confidence Intervals for Proportions
       and Related Measures of Effect Size*, ch. 10.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import proportion_ratio_ci
    >>> a = np.r_[np.ones(30), np.zeros(70)]   # selection rate 0.30
    >>> b = np.r_[np.ones(40), np.zeros(60)]   # selection rate 0.40
    >>> low, high = proportion_ratio_ci(a, b)
    >>> bool(low < 0.75 < high)
    True
    """
    a = _as_binary_sample(a, "a")
    b = _as_binary_sample(b, "b")
    confidence_level = _check_open_unit(confidence_level, "confidence_level")
    if method not in _RATIO_METHODS:
        raise ValueError(f"`method` must be one of {', '.join(map(repr, _RATIO_METHODS))}; got {method!r}")
    k1, k2 = float(a.sum()), float(b.sum())
    if k1 == 0 and k2 == 0:
        return ConfidenceInterval(math.nan, math.nan)
    low, high = _RATIO_METHODS[method](k1, a.size, k2, b.size, _z(confidence_level))
    return ConfidenceInterval(float(low), float(high))


_RATIO_METHODS = {"mover": _mover_ratio, "koopman": _koopman}


def bootstrap_ratio_ci(a, b, *, confidence_level: float = 0.95, n_resamples: int = 9999,
                       random_state=None) -> ConfidenceInterval:
    """Percentile bootstrap interval of ``mean(a) / mean(b)`` for 0/1 samples.

    Kept to teach the bootstrap of a ratio and where it fails; the results table uses
    :func:`proportion_ratio_ci`.

    Parameters
    ----------
    a, b : array_like of {0, 1}, shape (n_a,) and (n_b,)
        Disadvantaged and advantaged group's 0/1 outcomes; non-empty.
    confidence_level : float, default 0.95
        Strictly between 0 and 1.
    n_resamples : int, default 9999
        Bootstrap resamples, ``>= 1``.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional

    Returns
    -------
    ConfidenceInterval
        The ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles (linear interpolation) of the
        resampled ratios, or ``(nan, nan)`` when a quantile falls on a zero denominator (see
        Warns).

    Warns
    -----
    DegenerateSampleWarning
        When the interval is undefined; the message counts the resamples whose advantaged
        selection rate was 0.

    Notes
    -----
    Resampling n rows with replacement from a 0/1 sample with k ones gives a count of ones
    distributed Binomial(n, k / n), so the counts are drawn directly (the nonparametric
    bootstrap itself, not an approximation). **Zero denominators:** a resample whose advantaged
    selection rate is 0 has no finite ratio; it is ranked above every finite ratio (as
    ``+inf``). The interval is reported when both quantiles it is read from (and the order
    statistics they interpolate between) are finite, so a few such resamples in the upper tail
    beyond the upper quantile do not remove it; it is ``(nan, nan)`` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import bootstrap_ratio_ci
    >>> a = np.r_[np.ones(30), np.zeros(70)]
    >>> b = np.r_[np.ones(40), np.zeros(60)]
    >>> low, high = bootstrap_ratio_ci(a, b, n_resamples=2000, random_state=0)
    >>> bool(low < 0.75 < high)
    True
    """
    a = _as_binary_sample(a, "a")
    b = _as_binary_sample(b, "b")
    confidence_level = _check_open_unit(confidence_level, "confidence_level")
    n_resamples = _check_positive_int(n_resamples, "n_resamples")
    rng = _as_rng(random_state)
    ka = rng.binomial(a.size, a.mean(), size=n_resamples)
    kb = rng.binomial(b.size, b.mean(), size=n_resamples)
    zero = kb == 0
    ratios = np.full(n_resamples, np.inf)
    ratios[~zero] = (ka[~zero] / a.size) / (kb[~zero] / b.size)
    tail = (1 - confidence_level) / 2
    # Linear interpolation next to an infinite order statistic gives inf or nan (inf - inf).
    with np.errstate(invalid="ignore"):
        low, high = np.quantile(ratios, [tail, 1 - tail])
    if not (np.isfinite(low) and np.isfinite(high)):
        warnings.warn(
            f"ratio interval undefined: the advantaged selection rate is 0 in {int(zero.sum())} of "
            f"{n_resamples} bootstrap resamples, and a quantile falls on them",
            DegenerateSampleWarning, stacklevel=2,
        )
        return ConfidenceInterval(math.nan, math.nan)
    return ConfidenceInterval(float(low), float(high))


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def significance_report(
    a,
    b,
    *,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    n_permutations: int = 9999,
    n_resamples: int = 9999,
    ci_method: str = "auto",
    method: str = "auto",
    groups=None,
    random_state=None,
) -> SignificanceReport:
    """Gap, its interval and permutation p-value for two groups, in one frozen result.

    Parameters
    ----------
    a : array_like, shape (n_a,)
        Disadvantaged group's outcomes (numbers, 0/1 or booleans).
    b : array_like, shape (n_b,)
        Advantaged group's outcomes.
    alpha : float, default 0.05
        Significance level, strictly between 0 and 1: ``significant = p_value < alpha``.
    confidence_level : float, default 0.95
        Nominal coverage of the interval, strictly between 0 and 1.
    n_permutations : int, default 9999
        Relabellings for a Monte Carlo permutation test (see :func:`permutation_test_result`).
    n_resamples : int, default 9999
        Bootstrap resamples (see :func:`bootstrap_ci`); unused by the Newcombe interval.
    ci_method : {"auto", "newcombe", "percentile", "bca"}, default "auto"
        The interval for the gap. ``"newcombe"``: Newcombe's score interval for a difference
        of two rates (:func:`proportion_difference_ci`), for 0/1 outcomes without ``groups``;
        ``"percentile"`` and ``"bca"``: the bootstrap (:func:`bootstrap_ci`, a cluster
        bootstrap with ``groups``). ``"auto"``: Newcombe for two 0/1 samples without
        ``groups``, else the percentile bootstrap. The report's ``ci_method`` says which.
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        Permutation method (see :func:`permutation_test_result`).
    groups : tuple (groups_a, groups_b), optional
        Cluster labels; used by both the permutation test and the (cluster) bootstrap.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        One generator is made from it and used by the permutation test first, so
        ``report.p_value == permutation_test(a, b, random_state=seed, ...)`` for an int seed;
        the bootstrap then draws from child streams of the same generator.

    Returns
    -------
    SignificanceReport
        Frozen: ``gap, ci_low, ci_high, p_value, significant, alpha, confidence_level, n_a,
        n_b, mean_a, mean_b, small_sample_warning, method, n_permutations, n_resamples,
        ci_method, p_value_floor, is_monte_carlo_minimum``.

    Raises
    ------
    TypeError, ValueError
        As :func:`permutation_test_result` and :func:`bootstrap_ci`; also ``alpha`` outside
        (0, 1); ``ci_method="newcombe"`` on outcomes other than 0/1 or with ``groups``.

    Warns
    -----
    DegenerateSampleWarning
        From the bootstrap, for a group that cannot vary under resampling.

    Notes
    -----
    **Which interval.** For two rates the percentile bootstrap undercovers in small groups
    (about 87% for a nominal 95% at 10 against 10 rows with rates 5% and 20%) and collapses to
    a single point when both groups are all 0; Newcombe's score interval keeps close to its
    nominal coverage there [2]_, and it is the interval of the benchmark's results table. So it
    is the default for 0/1 outcomes; the bootstrap remains for other outcomes and for
    clustered rows, where a score interval that treats rows as independent would be too narrow.

    ``small_sample_warning`` is True when a group has fewer than ``SMALL_SAMPLE_THRESHOLD``
    (30) rows: the test and the score interval stay valid, but they are imprecise and the power
    is poor. Print the p-value with ``report.format_p_value()`` so a Monte Carlo minimum reads
    "p ≤ 1/(m + 1)", never "p = 0".

    References
    ----------
    .. [1] Good (2005); Phipson and Smyth (2010); Efron (1987): see the module docstring.
    .. [2] Newcombe, R. G. (1998). Interval estimation for the difference between independent
       proportions: comparison of eleven methods. *Statistics in Medicine* 17(8), 873-890.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import significance_report
    >>> a = np.r_[np.ones(120), np.zeros(280)]   # selection rate 0.30
    >>> b = np.r_[np.ones(400), np.zeros(600)]   # selection rate 0.40
    >>> rep = significance_report(a, b, n_resamples=2000, random_state=0)
    >>> rep.method, round(rep.gap, 2), rep.significant, rep.small_sample_warning, rep.ci_method
    ('exact', -0.1, True, False, 'newcombe')
    """
    a = _as_sample(a, "a")
    b = _as_sample(b, "b")
    alpha = _check_open_unit(alpha, "alpha")
    confidence_level = _check_open_unit(confidence_level, "confidence_level")
    n_resamples = _check_positive_int(n_resamples, "n_resamples")
    ci_method = _check_choice(ci_method, "ci_method", _REPORT_CI_METHODS)
    binary = _is_binary(a) and _is_binary(b)
    if ci_method == "newcombe" and not binary:
        raise ValueError("`ci_method='newcombe'` needs 0/1 outcomes in both `a` and `b`; use 'auto', "
                         "'percentile' or 'bca' for other outcomes")
    if ci_method == "newcombe" and groups is not None:
        raise ValueError("`ci_method='newcombe'` treats rows as independent and is not available with "
                         "`groups`; use 'auto', 'percentile' or 'bca' (a cluster bootstrap)")
    if ci_method == "auto":
        ci_method = "newcombe" if binary and groups is None else "percentile"
    rng = _as_rng(random_state)
    test = permutation_test_result(
        a, b, n_permutations=n_permutations, method=method, groups=groups, random_state=rng
    )
    codes = _as_groups(groups, a.size, b.size)
    if ci_method == "newcombe":
        low, high = _newcombe(float(a.sum()), a.size, float(b.sum()), b.size, _z(confidence_level))
        low, high, n_resamples = float(low), float(high), None
    else:
        low, high = _bootstrap_ci(a, b, codes, confidence_level, n_resamples, ci_method, rng, None)
    return SignificanceReport(
        gap=test.statistic,
        ci_low=low,
        ci_high=high,
        p_value=test.p_value,
        significant=bool(test.p_value < alpha),
        alpha=alpha,
        confidence_level=confidence_level,
        n_a=int(a.size),
        n_b=int(b.size),
        mean_a=float(a.mean()),
        mean_b=float(b.mean()),
        small_sample_warning=bool(min(a.size, b.size) < SMALL_SAMPLE_THRESHOLD),
        method=test.method,
        n_permutations=test.n_permutations,
        n_resamples=n_resamples,
        ci_method=ci_method,
        p_value_floor=test.p_value_floor,
        is_monte_carlo_minimum=test.is_monte_carlo_minimum,
    )


# ---------------------------------------------------------------------------------------------
# Multiple comparisons and formatting
# ---------------------------------------------------------------------------------------------


def adjust_p_values(p_values, *, method: str = "holm") -> np.ndarray:
    """Adjust p-values of many gaps for multiple comparisons.

    Parameters
    ----------
    p_values : array_like of float, any shape
        p-values in [0, 1]; NaN marks an untestable gap.
    method : {"holm", "bh", "fdr_bh"}, default "holm"
        ``"holm"``: Holm's step-down adjustment, controls the family-wise error rate (FWER)
        [1]_. ``"bh"`` (alias ``"fdr_bh"``): Benjamini-Hochberg step-up adjustment, controls
        the false discovery rate (FDR) under independence or positive dependence [2]_.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values (float64, same shape as the input), in [0, 1]; NaN where the input
        was NaN. Compare them with ``alpha`` directly.

    Raises
    ------
    TypeError
        Non-numeric input.
    ValueError
        Unknown ``method``; a value outside [0, 1] or infinite.

    Notes
    -----
    With ``m`` non-NaN p-values sorted ``p_(1) <= ... <= p_(m)``: Holm gives
    ``max_{j <= i} min(1, (m - j + 1) p_(j))``; BH gives ``min_{j >= i} min(1, m p_(j) / j)``.
    NaN entries are not counted in ``m``. Results equal statsmodels' ``multipletests`` with
    ``"holm"`` and ``"fdr_bh"``.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
       *Scandinavian Journal of Statistics* 6(2), 65-70.
    .. [2] Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate.
       *Journal of the Royal Statistical Society B* 57(1), 289-300.

    Examples
    --------
    >>> from faircode.significance import adjust_p_values
    >>> adjust_p_values([0.01, 0.04, float("nan"), 0.03], method="holm").round(3).tolist()
    [0.03, 0.06, nan, 0.06]
    >>> adjust_p_values([0.01, 0.04, 0.03], method="bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    method = _check_choice(method, "method", tuple(_ADJUST_METHODS))
    arr = np.asarray(p_values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`p_values` must be numeric; got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    valid = ~np.isnan(arr)
    values = arr[valid]
    if np.any(~np.isfinite(values)) or np.any((values < 0) | (values > 1)):
        raise ValueError("`p_values` must lie in [0, 1] (NaN allowed for untestable gaps)")
    out = np.full(arr.shape, np.nan)
    m = values.size
    if m == 0:
        return out
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    rank = np.arange(1, m + 1)
    if _ADJUST_METHODS[method] == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * ranked))
    else:
        adjusted = np.minimum.accumulate(np.minimum(1.0, m * ranked / rank)[::-1])[::-1]
    result = np.empty(m)
    result[order] = adjusted
    out[valid] = result
    return out


# ---------------------------------------------------------------------------------------------
# Power of the exact test, and the bootstrap of many 0/1 audits at once
# ---------------------------------------------------------------------------------------------


def _check_rate(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a rate in [0, 1]; got {value!r}")
    if not 0.0 <= float(value) <= 1.0:  # also refuses NaN
        raise ValueError(f"`{name}` must be a rate in [0, 1]; got {value}")
    return float(value)


def permutation_test_power(p_a, p_b, n_a, n_b, *, alpha: float = 0.05, alternative: str = "two-sided") -> float:
    """Exact power of the exact permutation test for a gap in selection rates.

    The probability that :func:`permutation_test` on 0/1 outcomes (its exact, hypergeometric
    method) returns ``p < alpha`` when group ``a`` has ``n_a`` rows flagged independently with
    probability ``p_a`` and group ``b`` has ``n_b`` rows flagged with probability ``p_b``.
    Computed with no simulation, by summing the probability of every outcome the test rejects.

    Parameters
    ----------
    p_a, p_b : float
        True selection rates of the disadvantaged group ``a`` and the advantaged group ``b``,
        in [0, 1]. ``p_a = p_b`` gives the false-alarm rate at that common rate (at most
        ``alpha``: the test is exact).
    n_a, n_b : int
        Rows in each group, ``>= 1``.
    alpha : float, default 0.05
        Significance level, strictly between 0 and 1; an outcome is a rejection when its p-value
        is below it (``p < alpha``, SciPy's ``scipy.stats.power`` convention).
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        The test's alternative, as in :func:`permutation_test` (``"greater"``: ``p_a > p_b``).

    Returns
    -------
    float
        The power, in [0, 1].

    Raises
    ------
    TypeError
        A rate that is not a number; a size that is not of an integer type (``50.0`` included:
        counts read as floats must be converted, so a fractional size cannot slip through).
    ValueError
        A rate outside [0, 1], a size below 1, ``alpha`` not strictly between 0 and 1, an
        unknown ``alternative``.

    Notes
    -----
    Given ``K`` flagged rows in all, the exact test's p-value for ``x`` of them in ``a`` is a
    tail of the hypergeometric distribution of ``X`` (``N = n_a + n_b`` rows, ``K`` flagged,
    ``n_a`` drawn): two-sided by distance from the null mean,
    ``P(|X N - K n_a| >= |x N - K n_a|)``, decided in integers as the test decides it. This is
    not the probability ordering of ``scipy.stats.fisher_exact`` or R's ``fisher.test``, whose
    power can differ by a point or so. The test conditions on ``K``; the power does not: it is
    the unconditional power of the conditional test, ``sum over K, over rejected x, of
    Binom(x; n_a, p_a) Binom(K - x; n_b, p_b)`` with the group sizes fixed [1]_ [2]_. Every ``K``
    of non-negligible probability is visited, vectorised over ``x``; the work is restricted to
    the outcomes whose probability is not negligible: the flagged counts within all but 2.5e-18
    of each group's binomial distribution, and for each ``K`` the values of ``X`` within
    ``12 s + 50`` of its null mean, with ``s^2 = n_a (K/N)(1 - K/N)`` (beyond, the
    hypergeometric probabilities sum to less than 1e-29, by Bernstein's inequality, which holds
    for sampling without replacement [3]_). So the work grows like the number of rows (well
    under a second for 15,000 rows) and the result has no Monte Carlo error: it is accurate to
    floating-point rounding of the sums (about 1e-15); the outcomes left out carry less than
    1e-17 in all. Rounding of the tail sums could matter only for an outcome whose p-value lies
    within 1e-12 of ``alpha``.

    References
    ----------
    .. [1] Fisher, R. A. (1935). *The Design of Experiments*. Oliver & Boyd (the conditional
       test of a 2x2 table).
    .. [2] Mehta, C. R. and Hilton, J. F. (1993). Exact power of conditional and unconditional
       tests: going beyond the 2x2 contingency table. *The American Statistician* 47(2), 91-98.
    .. [3] Hoeffding, W. (1963). Probability inequalities for sums of bounded random variables.
       *Journal of the American Statistical Association* 58(301), 13-30 (section 6).

    Examples
    --------
    >>> from faircode.significance import permutation_test_power
    >>> round(permutation_test_power(0.3, 0.3, 50, 50), 4) <= 0.05   # false alarms: at most alpha
    True
    >>> round(permutation_test_power(0.2, 0.4, 100, 100), 3)
    0.844
    """
    p_a, p_b = _check_rate(p_a, "p_a"), _check_rate(p_b, "p_b")
    n_a, n_b = _check_positive_int(n_a, "n_a"), _check_positive_int(n_b, "n_b")
    alpha = _check_open_unit(alpha, "alpha")
    alternative = _check_choice(alternative, "alternative", _ALTERNATIVES)
    if n_a > n_b:  # the work is O(N min(n_a, n_b)): let `a` be the smaller group
        p_a, p_b, n_a, n_b = p_b, p_a, n_b, n_a
        alternative = {"greater": "less", "less": "greater"}.get(alternative, alternative)
    from scipy.stats import binom

    n = n_a + n_b
    log_factorial = gammaln(np.arange(n + 1) + 1.0)
    flagged_a = binom.pmf(np.arange(n_a + 1), n_a, p_a)
    flagged_b = binom.pmf(np.arange(n_b + 1), n_b, p_b)
    # Outcomes outside these ranges have probability below 1e-17 in all: they are skipped.
    x_first, x_last = _central(flagged_a)
    y_first, y_last = _central(flagged_b)
    power = 0.0
    k_all = np.arange(x_first + y_first, x_last + y_last + 1, dtype=np.int64)
    # Under the null, X given K is hypergeometric with mean K n_a / N. By Bernstein's inequality,
    # which holds for sampling without replacement with the with-replacement variance
    # s^2 = n_a (K/N)(1 - K/N) (Hoeffding 1963, sec. 6), P(|X - mean| >= t) <= 2 exp(-t^2 / (2 (s^2
    # + t/3))), below 1e-29 for t = 12 s + 50: those values are left out of the tails.
    mean = k_all * n_a / n
    spread = np.sqrt(n_a * (k_all / n) * (1 - k_all / n))
    reach = 12 * spread + 50
    lo_all = np.maximum(np.maximum(0, k_all - n_b), np.floor(mean - reach)).astype(np.int64)
    hi_all = np.minimum(np.minimum(n_a, k_all), np.ceil(mean + reach)).astype(np.int64)
    first = 0
    while first < k_all.size:
        width = int(max(hi_all[first], x_last) - min(lo_all[first], x_first)) + 1
        stop = min(k_all.size, first + max(1, (1 << 20) // width))
        k = k_all[first:stop, None]  # (chunk, 1)
        c0 = int(min(lo_all[first:stop].min(), x_first))
        c1 = int(max(hi_all[first:stop].max(), x_last))
        x = np.arange(c0, c1 + 1, dtype=np.int64)[None, :]
        y = k - x  # flagged rows in b
        valid = (y >= 0) & (y <= n_b)
        yc = np.clip(y, 0, n_b)
        log_w = -(log_factorial[x] + log_factorial[yc] + log_factorial[n_a - x] + log_factorial[n_b - yc])
        log_w = np.where(valid, log_w, -np.inf)
        w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)  # the hypergeometric pmf of X given K, over x
        p = _conditional_p_values(w, x, k, n, n_a, alternative)
        reject = valid & (p < alpha) & (x >= x_first) & (x <= x_last)
        power += float(np.sum(np.where(reject, flagged_a[np.clip(x, 0, n_a)] * flagged_b[yc], 0.0)))
        first = stop
    return min(1.0, power)


def _conditional_p_values(w: np.ndarray, x: np.ndarray, k: np.ndarray, n: int, n_a: int,
                          alternative: str) -> np.ndarray:
    """The exact test's p-value of every outcome (K, x), from the pmf ``w`` of X given K.

    ``w``: shape (chunk, width), row r the hypergeometric pmf of X (flagged rows in ``a``) given
    K = ``k[r, 0]`` flagged rows in all, over ``x[0]`` = c0..c1 (consecutive integers); ``n``
    rows in all, ``n_a`` in ``a``. Returns an array of ``w``'s shape.
    """
    below = np.cumsum(w, axis=1)  # P(X <= x)
    above = np.cumsum(w[:, ::-1], axis=1)[:, ::-1]  # P(X >= x)
    if alternative == "greater":
        return above
    if alternative == "less":
        return below
    c0, last = int(x[0, 0]), w.shape[1] - 1
    d = x * n - k * n_a  # signed distance from the expectation, times N: integers
    # The other tail starts where the distance is at least as large on the other side.
    hi = -((d - k * n_a) // n) - c0  # ceil((K n_a - d) / N), for x at or below the expectation
    lo = (k * n_a - d) // n - c0  # floor((K n_a - d) / N), for x above it
    hi_tail = np.where(hi <= last, np.take_along_axis(above, np.clip(hi, 0, last), axis=1), 0.0)
    lo_tail = np.where(lo >= 0, np.take_along_axis(below, np.clip(lo, 0, last), axis=1), 0.0)
    return np.where(d <= 0, below + hi_tail, above + lo_tail)


def _central(pmf: np.ndarray) -> tuple[int, int]:
    """The smallest index range holding all of ``pmf`` but at most 2.5e-18 on each side."""
    cdf = np.cumsum(pmf)
    sf = np.cumsum(pmf[::-1])[::-1]
    return int(np.searchsorted(cdf, 2.5e-18, side="right")), int(np.flatnonzero(sf > 2.5e-18)[-1])


def binary_bootstrap_ci(flagged_a, n_a, flagged_b, n_b, *, confidence_level: float = 0.95, n_resamples: int = 9999,
                        method: str = "percentile", random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap intervals for the gap in selection rates of many 0/1 audits at once.

    Audit ``i`` has ``flagged_a[i]`` of ``n_a[i]`` rows flagged in group ``a`` and
    ``flagged_b[i]`` of ``n_b[i]`` in group ``b``. Resampling the rows of a 0/1 group with
    replacement draws its flagged count from ``Binomial(n, flagged / n)``, so every audit's
    bootstrap distribution is drawn in one vectorised step: a coverage study of thousands of
    audits costs one call instead of one :func:`bootstrap_ci` call per audit. The intervals are
    those :func:`bootstrap_ci` defines (stratified: each group resampled on its own), from other
    random draws.

    Parameters
    ----------
    flagged_a, n_a, flagged_b, n_b : array_like of int, shape (n_audits,)
        Flagged rows and rows in the disadvantaged group ``a`` and the advantaged group ``b``
        (scalars broadcast; four scalars are one audit); ``0 <= flagged <= n``, ``n >= 1``.
    confidence_level : float, default 0.95
        Strictly between 0 and 1.
    n_resamples : int, default 9999
        Bootstrap resamples per audit, ``>= 1``.
    method : {"percentile", "bca"}, default "percentile"
        As in :func:`bootstrap_ci`. For BCa the jackknife acceleration has a closed form for
        0/1 rows; an audit whose correction is undefined (the observed gap outside its
        bootstrap distribution, or ``1 - a (z0 + z) <= 0`` for the acceleration ``a``, the
        bias correction ``z0`` and a normal quantile ``z`` of the interval's ends) gets the
        percentile interval, as :func:`bootstrap_ci` does, and a group with none or all
        flagged contributes no variability, both without a warning per audit.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator of the resamples.

    Returns
    -------
    (low, high) : tuple of numpy.ndarray of float, shape (n_audits,)
        Interval ends for ``rate_a - rate_b`` (rates in [0, 1], the gap in [-1, 1]).

    Raises
    ------
    TypeError
        Counts not of an integer type (``12.0`` included: convert counts read as floats); a
        malformed ``random_state``.
    ValueError
        Counts of different lengths, a size below 1, a flagged count outside [0, n], an empty
        input, an unknown ``method``, ``confidence_level`` not strictly between 0 and 1.

    References
    ----------
    .. [1] Efron, B. and Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*. Chapman &
       Hall, ch. 13 (percentile) and 14 (BCa, eqs. 14.9-14.15).
    .. [2] Davison, A. C. and Hinkley, D. V. (1997). *Bootstrap Methods and their Application*.
       Cambridge University Press, sec. 3.2 (stratified resampling).

    Examples
    --------
    >>> from faircode.significance import binary_bootstrap_ci
    >>> low, high = binary_bootstrap_ci([12, 30], [40, 100], [20, 45], [40, 100], random_state=0)
    >>> bool(low[0] < 12 / 40 - 20 / 40 < high[0]), low.shape
    (True, (2,))
    """
    counts = []
    for value, name in ((flagged_a, "flagged_a"), (n_a, "n_a"), (flagged_b, "flagged_b"), (n_b, "n_b")):
        arr = np.atleast_1d(value)  # one audit may be given as four scalars
        if arr.size == 0:
            raise ValueError(f"`{name}` is empty: give at least one audit")
        if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"`{name}` must hold whole numbers of rows; got dtype {arr.dtype}")
        counts.append(arr.astype(np.int64))
    try:
        k_a, n_a, k_b, n_b = np.broadcast_arrays(*counts)
    except ValueError:
        raise ValueError("`flagged_a`, `n_a`, `flagged_b` and `n_b` must have one length (one entry per audit)") from None
    if k_a.ndim != 1 or k_a.size == 0:
        raise ValueError("the counts must be 1-D with at least one audit")
    for k, size, name in ((k_a, n_a, "a"), (k_b, n_b, "b")):
        if np.any(size < 1):
            i = int(np.flatnonzero(size < 1)[0])
            raise ValueError(f"`n_{name}` must be >= 1 for every audit; audit {i} has {size[i]}")
        if np.any((k < 0) | (k > size)):
            i = int(np.flatnonzero((k < 0) | (k > size))[0])
            raise ValueError(f"`flagged_{name}` must lie in [0, n_{name}] for every audit; audit {i} has "
                             f"{k[i]} flagged of {size[i]}")
    confidence_level = _check_open_unit(confidence_level, "confidence_level")
    n_resamples = _check_positive_int(n_resamples, "n_resamples")
    method = _check_choice(method, "method", _CI_METHODS)
    rng = _as_rng(random_state)
    rate_a, rate_b = k_a / n_a, k_b / n_b
    observed = rate_a - rate_b
    alpha = 1.0 - confidence_level
    low, high = np.empty(k_a.size), np.empty(k_a.size)
    rows = max(1, _BATCH_ELEMENTS // n_resamples)
    for start in range(0, k_a.size, rows):
        s = slice(start, min(start + rows, k_a.size))
        gaps = (_resampled_counts(n_a[s], k_a[s], n_resamples, rng) / n_a[s, None]
                - _resampled_counts(n_b[s], k_b[s], n_resamples, rng) / n_b[s, None])
        levels = np.tile([alpha / 2, 1 - alpha / 2], (s.stop - s.start, 1))
        if method == "bca":
            levels = _binary_bca_levels(gaps, observed[s], k_a[s], n_a[s], k_b[s], n_b[s], alpha, levels)
        gaps.sort(axis=1)
        # numpy's default ("linear") quantile, row by row with each row's own levels.
        pos = levels * (n_resamples - 1)
        below = np.floor(pos).astype(np.int64)
        above = np.minimum(below + 1, n_resamples - 1)
        frac = pos - below
        lo_v = np.take_along_axis(gaps, below, axis=1)
        hi_v = np.take_along_axis(gaps, above, axis=1)
        ends = lo_v + (hi_v - lo_v) * frac
        low[s], high[s] = ends[:, 0], ends[:, 1]
    return low, high


def _resampled_counts(n: np.ndarray, k: np.ndarray, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Flagged counts of ``n_resamples`` resamples of each 0/1 group, shape (groups, n_resamples).

    Resampling group ``i``'s ``n[i]`` rows with replacement draws its flagged count from
    ``Binomial(n[i], k[i] / n[i])``. Drawn by inverting that distribution function ``F``, computed
    once per distinct ``(n, k)`` (a coverage study repeats them: 2,000 audits of 200 rows hold a
    few hundred): the count for a uniform ``u`` is the smallest ``x`` with ``F(x) >= u``. ``F`` is
    tabulated only within ``12 s + 50`` of the mean ``n p`` (``s`` the standard deviation), where
    all but 1e-29 of the probability lies (Bernstein's inequality, as in
    :func:`permutation_test_power`). A pair with many draws finds ``x`` by indexed search (a guide
    table of ``4`` buckets per tabulated value gives a start at or below ``x``, then a step up
    while ``F(x) < u``; Chen and Asau 1974, Devroye 1986 sec. III.2.4), one with few by binary
    search. This is 3 to 10 times as fast as ``Generator.binomial``, whose inversion algorithm
    costs ``O(n p)`` per draw when ``n p < 30``.
    """
    from scipy.special import bdtr  # the binomial distribution function P(X <= x), a ufunc

    out = np.empty((n.size, n_resamples), dtype=np.int64)
    pairs, inverse = np.unique(np.column_stack([n, k]), axis=0, return_inverse=True)
    order = np.argsort(inverse.ravel(), kind="stable")
    bounds = np.searchsorted(inverse.ravel()[order], np.arange(len(pairs) + 1))
    for (size, flagged), start, stop in zip(pairs, bounds[:-1], bounds[1:]):
        rows = order[start:stop]
        if flagged in (0, size):  # a constant group resamples to itself
            out[rows] = flagged
            continue
        rate = flagged / size
        reach = 12 * math.sqrt(size * rate * (1 - rate)) + 50
        lo = max(0, math.floor(size * rate - reach))
        hi = min(size, math.ceil(size * rate + reach))
        cdf = np.append(bdtr(np.arange(lo, hi), size, rate), 1.0)  # F(x), x = lo .. hi (F(hi) taken as 1)
        u = rng.random(rows.size * n_resamples)
        if u.size < 16 * cdf.size:  # few draws: a guide table would cost more than it saves
            x = np.searchsorted(cdf, u, side="left")
        else:
            buckets = 4 * cdf.size
            guide = np.searchsorted(cdf, np.arange(buckets) / buckets, side="left")  # smallest x, F(x) >= j/m
            x = guide[(u * buckets).astype(np.intp)]
            todo = np.flatnonzero(cdf[x] < u)
            while todo.size:  # F(hi) = 1 > u stops every draw by x = hi
                x[todo] += 1
                todo = todo[cdf[x[todo]] < u[todo]]
        out[rows] = (lo + x).reshape(rows.size, n_resamples)
    return out


def _binary_bca_levels(gaps, observed, k_a, n_a, k_b, n_b, alpha, percentile):
    """BCa levels per audit (rows of ``gaps``); the percentile levels where BCa is undefined."""
    tol = _TIE_RTOL
    share_below = (np.count_nonzero(gaps < observed[:, None] - tol, axis=1)
                   + np.count_nonzero(gaps <= observed[:, None] + tol, axis=1)) / (2 * gaps.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        z0 = ndtri(share_below)
        # Jackknife of a mean of 0/1 rows: u_i = x_i - mean, so its moments are closed forms.
        moments = []
        for k, n in ((k_a, n_a), (k_b, n_b)):
            p = k / n
            moments.append((k * (1 - p) ** 3 - (n - k) * p**3, k * (1 - p) ** 2 + (n - k) * p**2, n))
        (m3a, m2a, na), (m3b, m2b, nb) = moments
        num = m3a / na**3 - m3b / nb**3
        den = m2a / na**2 + m2b / nb**2
        accel = np.where(den > 0, num / (6.0 * den**1.5), 0.0)
        out = []
        ok = np.isfinite(z0)
        for z in (ndtri(alpha / 2), ndtri(1 - alpha / 2)):
            shifted = z0 + z
            denom = 1.0 - accel * shifted
            ok &= denom > 0
            out.append(ndtr(z0 + shifted / denom))
    bca = np.column_stack(out)
    return np.where(ok[:, None], bca, percentile)


# ---------------------------------------------------------------------------------------------
# More than two groups: the max-gap permutation test, pairwise comparisons, per-group intervals
# ---------------------------------------------------------------------------------------------
#
# fairlearn's MetricFrame.difference() and Aequitas report the largest of k group gaps as it is.
# The largest of many noisy gaps is biased upward (it is a maximum), so its significance must be
# judged against the null distribution of the maximum itself, not of one pre-chosen gap.

_BINARY_METHODS = ("auto", "exact", "monte_carlo")


@dataclass(frozen=True, repr=False)
class MaxGapTestResult(_PValueResult):
    """Result of :func:`max_gap_test`: is the spread of k group means more than chance?

    Attributes
    ----------
    statistic : float
        The observed between-groups gap: largest group mean minus smallest, ``>= 0``.
    p_value : float
        For Monte Carlo, Phipson & Smyth's ``(b + 1) / (m + 1)`` with ``b`` of ``m`` relabellings
        at least as large as the observed gap: the observed labelling counted as one more, a
        valid p-value (not the share ``b / m``, and not a bound on the exact p); exact
        (hypergeometric) for two 0/1 groups.
    method : str
        ``"exact"`` or ``"monte_carlo"``.
    n_permutations : int or None
        Relabellings drawn; None for the exact test.
    p_value_floor : float
        ``1 / (n_permutations + 1)``, 0.0 for the exact test.
    is_monte_carlo_minimum : bool
        True when no relabelling was as extreme (read as "p < 1/(m + 1)").
    groups : tuple
        The group labels, sorted.
    means : tuple of float
        Each group's mean, in the order of ``groups`` (rates in [0, 1] for 0/1 outcomes).
    sizes : tuple of int
        Rows per group, in the order of ``groups``.
    high_group, low_group
        The groups with the largest and the smallest mean (the first in ``groups`` on a tie).
    null_distribution : numpy.ndarray or None
        Read-only gaps (max minus min) of the drawn relabellings, shape ``(n_permutations,)``;
        None for the exact test.
    """

    statistic: float
    p_value: float
    method: str
    n_permutations: int | None
    p_value_floor: float
    is_monte_carlo_minimum: bool
    groups: tuple
    means: tuple
    sizes: tuple
    high_group: object
    low_group: object
    null_distribution: np.ndarray | None = field(default=None, compare=False)

    def __repr__(self) -> str:
        resamples = "" if self.n_permutations is None else f", n_permutations={self.n_permutations:,}"
        return (
            f"MaxGapTestResult(statistic={self.statistic:.4g} ({self.high_group!r} - {self.low_group!r}), "
            f"{self.format_p_value()}, method={self.method!r}, k={len(self.groups)}{resamples})"
        )


@dataclass(frozen=True)
class PairwiseComparison:
    """One pair of groups in :func:`pairwise_tests`.

    Attributes
    ----------
    group_a, group_b
        The two groups: ``group_b`` is the reference when there is one (see
        :func:`pairwise_tests`); ``gap = mean_a - mean_b``.
    gap : float
        Difference of the group means, in the outcome's unit.
    mean_a, mean_b : float
        Group means.
    n_a, n_b : int
        Rows per group.
    p_value : float
        Two-sided permutation test of the pair alone (exact for 0/1 outcomes).
    p_value_adjusted : float
        ``p_value`` adjusted over every pair of the family (Holm: family-wise error rate).
    """

    group_a: object
    group_b: object
    gap: float
    mean_a: float
    mean_b: float
    n_a: int
    n_b: int
    p_value: float
    p_value_adjusted: float


def _as_group_labels(groups, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate per-row group labels; return (sorted unique labels, code per row)."""
    labels = _as_labels(groups, "groups", n)
    try:
        uniques, codes = np.unique(labels, return_inverse=True)
    except TypeError as exc:
        raise TypeError("`groups` labels must be mutually comparable (e.g. all str)") from exc
    if uniques.size < 2:
        raise ValueError(f"`groups` must hold at least two groups to compare; got {uniques.size}")
    return uniques, codes.ravel()


def _max_gap_null_binary(x: np.ndarray, sorted_sizes: np.ndarray, n_permutations: int, rng,
                         batch_size) -> tuple[np.ndarray, float]:
    """Largest minus smallest group rate of each relabelling of 0/1 outcomes ``x``, and the scale (1).

    A relabelling's flagged count per group is multivariate hypergeometric: drawn directly.
    """
    ones = int(round(float(x.sum())))
    k = sorted_sizes.size
    null = np.empty(n_permutations)
    rows = _batch_rows(batch_size, k)
    for start in range(0, n_permutations, rows):
        stop = min(start + rows, n_permutations)
        counts = rng.multivariate_hypergeometric(sorted_sizes, ones, size=stop - start, method="marginals")
        null[start:stop] = _range_of_means(counts.astype(np.float64), sorted_sizes)  # counts: (batch, k)
    return null, 1.0


def _max_gap_null(x: np.ndarray, sorted_sizes: np.ndarray, n_permutations: int, rng,
                  batch_size) -> tuple[np.ndarray, float]:
    """Largest minus smallest group mean of each random permutation of ``x``, and the outcome scale."""
    # Sorting makes the pool independent of which rows came from which group.
    pooled = np.sort(x)
    z = pooled - pooled.mean()
    starts = np.concatenate([[0], np.cumsum(sorted_sizes)[:-1]])
    null = np.empty(n_permutations)
    rows = _batch_rows(batch_size, x.size)
    for start in range(0, n_permutations, rows):
        stop = min(start + rows, n_permutations)
        shuffled = rng.permuted(np.broadcast_to(z, (stop - start, z.size)), axis=1)  # (batch, n)
        null[start:stop] = _range_of_means(np.add.reduceat(shuffled, starts, axis=1), sorted_sizes)
    return null, float(np.abs(z).max()) or 1.0


def _range_of_means(sums: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    means = sums / sizes  # (..., k)
    return means.max(axis=-1) - means.min(axis=-1)


def max_gap_test(
    outcome,
    groups,
    *,
    n_permutations: int = 9999,
    method: str = "auto",
    random_state=None,
    batch_size: int | None = None,
) -> MaxGapTestResult:
    """Permutation test of the between-groups gap (largest minus smallest group mean).

    With k groups the largest of the k(k-1)/2 pairwise gaps is chosen after looking at the
    data, so testing it as if it were one pre-chosen pair overstates its significance. This
    test compares the observed maximum gap with the maximum gaps that random relabelling of
    the rows among the groups produces, so its p-value accounts for the choice of the largest.

    Parameters
    ----------
    outcome : array_like, shape (n,)
        One outcome per row: numbers, 0/1 or booleans; finite.
    groups : array_like, shape (n,)
        The group of each row (any mutually comparable, non-missing labels); at least two
        groups. Every group given takes part: leave small groups out before calling (see
        ``faircode.groups.compare_groups``, which applies the manifest's minimum size).
    n_permutations : int, default 9999
        Monte Carlo relabellings, ``>= 1``; the smallest reportable p-value is ``1 / (m + 1)``.
    method : {"auto", "exact", "monte_carlo"}, default "auto"
        ``"exact"`` is available for two groups of 0/1 outcomes (the gap is then the absolute
        two-group gap and the test is the exact two-sided permutation test of
        :func:`permutation_test_result`). ``"auto"`` uses it there and Monte Carlo otherwise.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the Monte Carlo draws.
    batch_size : int, optional
        Relabellings per vectorised batch for non-0/1 outcomes (memory O(batch_size x n));
        default about 16 MiB per batch. The result does not depend on it.

    Returns
    -------
    MaxGapTestResult
        The observed gap, its p-value, the groups' means and sizes, and the null distribution.

    Raises
    ------
    TypeError
        Non-numeric ``outcome``; labels that cannot be compared; bad ``n_permutations``,
        ``batch_size`` or ``random_state``.
    ValueError
        Empty, non-1-D or non-finite ``outcome``; ``groups`` of another length, with missing
        labels or with fewer than two groups; unknown ``method``; ``method="exact"`` with more
        than two groups or non-0/1 outcomes.

    Notes
    -----
    The statistic is ``T = max_g mean_g - min_g mean_g`` (fairlearn's ``between_groups``
    difference). Under the null hypothesis that the outcome does not depend on the group, every
    assignment of the rows to groups of the observed sizes is equally likely [1]_.

    **0/1 outcomes.** A relabelling changes ``T`` only through the number of ones each group
    receives, and that vector of counts is multivariate hypergeometric (the ``K`` ones of ``N``
    rows drawn into groups of sizes ``n_1 .. n_k``). Each relabelling is therefore one draw
    of ``numpy.random.Generator.multivariate_hypergeometric``: O(k) work, exactly the
    distribution of a random relabelling of rows, with no Monte Carlo error beyond the number
    of draws. Exhaustive enumeration of the count vectors is possible in principle but its size
    grows as ``n^(k-1)``; we enumerate only for two groups (the hypergeometric sum).

    **Other outcomes.** Each relabelling is a random permutation of the pooled outcomes cut into
    groups of the observed sizes, in vectorised batches.

    The p-value is ``(b + 1) / (m + 1)`` with ``b`` of ``m`` relabellings at least as large as
    the observed gap (ties within a relative 1e-9 count as extreme) [2]_. Groups enter in order
    of size and the pooled outcomes are sorted, so renaming the groups or reordering the rows
    does not change the draws. For two 0/1 groups the Monte Carlo p-value estimates the exact
    two-sided p-value of :func:`permutation_test_result`.

    References
    ----------
    .. [1] Good, P. I. (2005). *Permutation, Parametric, and Bootstrap Tests of Hypotheses*,
       3rd ed. Springer, ch. 3 (k-sample comparisons) and 5.
    .. [2] Phipson, B. and Smyth, G. K. (2010). Permutation p-values should never be zero.
       *Statistical Applications in Genetics and Molecular Biology* 9(1), Article 39.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import max_gap_test
    >>> rng = np.random.default_rng(0)
    >>> groups = np.repeat(["a", "b", "c", "d"], [200, 150, 40, 10])
    >>> flagged = rng.binomial(1, 0.3, size=groups.size)   # no group effect at all
    >>> res = max_gap_test(flagged, groups, random_state=1)
    >>> res.method, res.n_permutations, res.p_value > 0.05
    ('monte_carlo', 9999, True)
    """
    x = _as_sample(outcome, "outcome")
    uniques, codes = _as_group_labels(groups, x.size)
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    method = _check_choice(method, "method", _BINARY_METHODS)
    if batch_size is not None:
        batch_size = _check_positive_int(batch_size, "batch_size")
    binary = _is_binary(x)
    k = uniques.size
    if method == "exact" and (k != 2 or not binary):
        raise ValueError(
            "`method='exact'` is available for two groups of 0/1 outcomes only; got "
            f"{k} groups{'' if binary else ' and non-0/1 outcomes'}; use 'auto' or 'monte_carlo'"
        )
    sizes = np.bincount(codes, minlength=k)
    sums = np.bincount(codes, weights=x, minlength=k)
    means = sums / sizes
    statistic = float(means.max() - means.min())
    describe = dict(
        groups=tuple(uniques.tolist()),
        means=tuple(float(m) for m in means),
        sizes=tuple(int(s) for s in sizes),
        high_group=uniques.tolist()[int(np.argmax(means))],  # tolist: plain Python labels, also from object arrays
        low_group=uniques.tolist()[int(np.argmin(means))],
    )
    if method != "monte_carlo" and k == 2 and binary:
        p = _exact_binary_p_value(x[codes == 0], x[codes == 1], "two-sided")
        return MaxGapTestResult(statistic, p, "exact", None, 0.0, False, **describe)

    rng = _as_rng(random_state)
    floor = 1.0 / (n_permutations + 1)
    # Groups in order of size: equal-sized groups are exchangeable under the null, so the draws
    # (and the p-value) do not depend on the groups' names.
    sorted_sizes = sizes[np.argsort(sizes, kind="stable")].astype(np.int64)
    draw = _max_gap_null_binary if binary else _max_gap_null
    null, scale = draw(x, sorted_sizes, n_permutations, rng, batch_size)
    b = int(np.count_nonzero(null >= statistic - _TIE_RTOL * scale))
    null.setflags(write=False)
    return MaxGapTestResult(statistic, (b + 1) / (n_permutations + 1), "monte_carlo", n_permutations, floor,
                            b == 0, null_distribution=null, **describe)


def pairwise_tests(
    outcome,
    groups,
    *,
    reference=None,
    adjust: str = "holm",
    n_permutations: int = 9999,
    random_state=None,
) -> tuple[PairwiseComparison, ...]:
    """Two-group permutation tests between groups, adjusted for the family of comparisons.

    Parameters
    ----------
    outcome : array_like, shape (n,)
        One outcome per row: numbers, 0/1 or booleans; finite.
    groups : array_like, shape (n,)
        The group of each row (mutually comparable, non-missing labels); at least two groups.
    reference : optional
        A group label. Given: each other group against it (k - 1 comparisons, ``gap = group -
        reference``, as Aequitas reports disparities against a reference group). None: every
        pair (k(k - 1)/2 comparisons, ``gap = earlier - later`` in sorted label order).
    adjust : {"holm", "bh"}, default "holm"
        The multiple-comparison adjustment over the family (see :func:`adjust_p_values`):
        Holm controls the family-wise error rate, which is what a claim about any one pair needs.
    n_permutations : int, default 9999
        Relabellings for non-0/1 outcomes (0/1 outcomes get the exact test).
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed for the Monte Carlo tests; each pair draws from its own child stream.

    Returns
    -------
    tuple of PairwiseComparison
        In sorted label order of the groups (pairs ``(i, j)`` with ``i < j``, or each
        non-reference group in order).

    Raises
    ------
    TypeError, ValueError
        As :func:`max_gap_test` for ``outcome`` and ``groups``; a ``reference`` that is not one
        of the groups; an unknown ``adjust``.

    Notes
    -----
    Each p-value is the two-sided permutation test of :func:`permutation_test_result` on the
    pair's rows alone; the adjusted p-values are compared with alpha directly. The max-gap test
    (:func:`max_gap_test`) answers "do the groups differ at all?"; these answer "which pairs?".

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
       *Scandinavian Journal of Statistics* 6(2), 65-70.
    .. [2] Saleiro, P. et al. (2018). Aequitas: A Bias and Fairness Audit Toolkit.
       arXiv:1811.05577.

    Examples
    --------
    >>> import numpy as np
    >>> from faircode.significance import pairwise_tests
    >>> groups = np.repeat(["a", "b", "c"], 100)
    >>> flagged = np.r_[np.ones(30), np.zeros(70), np.ones(50), np.zeros(50), np.ones(31), np.zeros(69)]
    >>> [(c.group_a, c.group_b, round(c.gap, 2)) for c in pairwise_tests(flagged, groups, reference="a")]
    [('b', 'a', 0.2), ('c', 'a', 0.01)]
    """
    x = _as_sample(outcome, "outcome")
    uniques, codes = _as_group_labels(groups, x.size)
    adjust = _check_choice(adjust, "adjust", ("holm", "bh"))
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    if reference is None:
        pairs = [(i, j) for i in range(uniques.size) for j in range(i + 1, uniques.size)]
    else:
        hits = np.flatnonzero(uniques == reference)
        if hits.size != 1:
            raise ValueError(
                f"`reference` must be one of the groups {uniques.tolist()}; got {reference!r}"
            )
        ref = int(hits[0])
        pairs = [(i, ref) for i in range(uniques.size) if i != ref]
    streams = _as_rng(random_state).spawn(len(pairs))
    tests = []
    for (i, j), rng in zip(pairs, streams):
        a, b = x[codes == i], x[codes == j]
        tests.append((a, b, permutation_test_result(a, b, n_permutations=n_permutations, random_state=rng)))
    adjusted = adjust_p_values(np.array([t.p_value for _, _, t in tests]), method=adjust)
    names = uniques.tolist()  # plain Python labels, also from object arrays
    return tuple(
        PairwiseComparison(
            group_a=names[i], group_b=names[j], gap=t.statistic,
            mean_a=float(a.mean()), mean_b=float(b.mean()), n_a=int(a.size), n_b=int(b.size),
            p_value=float(t.p_value), p_value_adjusted=float(q),
        )
        for (i, j), (a, b, t), q in zip(pairs, tests, adjusted)
    )


def wilson_interval(count, nobs, *, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for a proportion (a group's rate).

    Parameters
    ----------
    count : int or array_like of int
        Rows with outcome 1, ``0 <= count <= nobs``.
    nobs : int or array_like of int
        Rows the rate is a mean over (broadcast against ``count``); 0 gives NaN (no rate).
    confidence_level : float, default 0.95
        Strictly between 0 and 1.

    Returns
    -------
    ConfidenceInterval
        ``(low, high)`` in [0, 1]: floats for scalar input, arrays of the broadcast shape
        otherwise; NaN where ``nobs == 0``.

    Raises
    ------
    TypeError
        Non-integer counts, or a non-numeric ``confidence_level``.
    ValueError
        Negative counts, ``count > nobs``, or ``confidence_level`` outside (0, 1).

    Notes
    -----
    With ``p = count / nobs`` and ``z`` the two-sided normal quantile, the interval is the set of
    proportions that a score test does not reject [1]_:

    ``(p + z^2 / (2n) ± z sqrt(p (1 - p) / n + z^2 / (4 n^2))) / (1 + z^2 / n)``.

    Unlike the Wald interval ``p ± z sqrt(p (1 - p) / n)`` it never has zero width at a rate of
    0 or 1 and keeps close to its nominal coverage on small groups [2]_; it equals statsmodels'
    ``proportion_confint(count, nobs, method="wilson")``.

    References
    ----------
    .. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
       inference. *Journal of the American Statistical Association* 22(158), 209-212.
    .. [2] Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval estimation for a binomial
       proportion. *Statistical Science* 16(2), 101-133.

    Examples
    --------
    >>> from faircode.significance import wilson_interval
    >>> low, high = wilson_interval(0, 12)
    >>> round(low, 4), round(high, 4)
    (0.0, 0.2425)
    """
    level = _check_open_unit(confidence_level, "confidence_level")
    k_arr, n_arr = np.asarray(count), np.asarray(nobs)
    for name, arr in (("count", k_arr), ("nobs", n_arr)):
        if arr.dtype.kind not in "iu":
            raise TypeError(f"`{name}` must be integer counts; got dtype {arr.dtype}")
        if np.any(arr < 0):
            raise ValueError(f"`{name}` must be >= 0")
    if np.any(k_arr > n_arr):
        raise ValueError("`count` must not exceed `nobs`")
    k, n = np.broadcast_arrays(k_arr.astype(np.float64), n_arr.astype(np.float64))
    z = _z(level)
    with np.errstate(invalid="ignore", divide="ignore"):
        low, high = _wilson_limits(k, n, z)
    low, high = np.where(n > 0, low, np.nan), np.where(n > 0, high, np.nan)
    if low.ndim == 0:
        return ConfidenceInterval(float(low), float(high))
    return ConfidenceInterval(low, high)
