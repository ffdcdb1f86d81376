"""Significance of a gap between groups: the public namespace of the statistics.

Every p-value and interval that the Fair Code Project publishes comes from this package. Import
from here (``from faircode.significance import permutation_test``); each procedure family lives
in a private module of its own, which this namespace gathers, the layout of
``scipy.stats`` (``_resampling``, ``_hypotests``, ``_multicomp`` behind one namespace):

- ``_permutation``: :func:`permutation_test` / :func:`permutation_test_result`, the permutation
  test for a gap in means (exact for 0/1 outcomes, vectorised Monte Carlo otherwise,
  cluster-preserving on request); :func:`permutation_tests`, many such tests in one call (a
  simulation study). ``_subset_sums``: the sampler of random subset sums their Monte Carlo
  null distributions are drawn with.
- ``_power``: :func:`permutation_test_power`, the exact power of the exact test, with no
  simulation.
- ``_bootstrap``: :func:`bootstrap_ci`, a stratified bootstrap interval for the gap (percentile
  or BCa); :func:`binary_bootstrap_ci`, the same for many 0/1 audits at once, from their counts;
  :func:`bootstrap_ratio_ci`, the percentile bootstrap of a ratio.
- ``_intervals``: :func:`proportion_difference_ci` / :func:`proportion_ratio_ci`, score
  intervals for a difference (Newcombe, Agresti-Caffo) and a ratio (MOVER-R with Wilson limits,
  Koopman) of two proportions, the intervals of the results table; :func:`wilson_interval`, a
  score interval per group.
- ``_report``: :func:`significance_report`, gap, interval, p-value and group sizes in one
  frozen result.
- ``_multiplicity``: :func:`adjust_p_values`, Holm (FWER) and Benjamini-Hochberg (FDR)
  adjustments. :func:`format_p_value`, the one way a p-value is printed (never "p = 0"), is
  re-exported from its NumPy-free home :mod:`faircode.formatting`.
- More than two groups. ``_groups``: :func:`max_gap_test` (the between-groups gap tested against
  the null distribution of the largest gap) and :func:`pairwise_tests` (pairs with a
  family-wise correction). ``_homogeneity``: :func:`homogeneity_test` (Pearson's chi-squared
  test of one shared rate) and :func:`max_t_test` (Westfall and Young's maxT). ``_strata``:
  within strata, :func:`cmh_test`, :func:`breslow_day_test` and
  :func:`stratified_permutation_test`. These last five are also importable from
  :mod:`faircode.group_tests`, their former home.
- Absence of evidence. ``_equivalence``: :func:`equivalence_test` (two one-sided tests, TOST,
  that a difference of rates lies within a margin or a ratio within a band such as the
  four-fifths band; exact unconditional where the tables are few, score otherwise).
  ``_verdict``: :func:`gap_verdict`, the three-state verdict every page, table and report uses
  (a gap shown; no gap of practical size shown; inconclusive), with :func:`classify_gap` (the
  rule) and :func:`verdict_sentence` (the words).
- ``_results``: the result types the families share (:class:`ConfidenceInterval`,
  :class:`PermutationTestResult`, :class:`SignificanceReport`, :class:`DegenerateSampleWarning`,
  ``SMALL_SAMPLE_THRESHOLD``); ``_validation``: the input checks, shared options and special
  functions every family uses.

Each module's docstring cites the sources of its family (Good 2005 and Phipson and Smyth 2010
for the permutation tests, Efron 1987 and Efron and Tibshirani 1993 for the bootstrap, Holm
1979 and Benjamini and Hochberg 1995 for the adjustments), and each function's docstring those
of its method.

Vocabulary, the same in every function and result here and in :mod:`faircode.metrics`: ``a``
holds the disadvantaged group's outcomes and ``b`` the advantaged (reference) group's, and
every ``_a``/``_b`` name follows (``n_a``, ``mean_a``, ``p_a``, ``flagged_a``); the gap is
``mean(a) - mean(b)``, disadvantaged minus advantaged, in the outcome's unit (for 0/1 outcomes a
difference of rates, in [-1, 1]). The data are positional, as in SciPy's two-sample tests
(``scipy.stats.ttest_ind(a, b)``); :mod:`faircode.metrics` selects the two groups with the
keywords ``disadvantaged=`` and ``advantaged=`` and hands their outcomes over as
``GroupOutcomes.a`` and ``.b``. With k groups (:func:`pairwise_tests`) ``a`` is the group
compared and ``b`` the one it is compared with (the reference, when there is one).
"""

from faircode.formatting import format_p_value
from faircode.significance._bootstrap import binary_bootstrap_ci, bootstrap_ci, bootstrap_ratio_ci
from faircode.significance._equivalence import (
    EXACT_MAX_TABLES,
    EquivalenceTestResult,
    equivalence_test,
    equivalence_test_from_counts,
)
from faircode.significance._groups import MaxGapTestResult, PairwiseComparison, max_gap_test, pairwise_tests
from faircode.significance._homogeneity import (
    MAX_EXACT_TABLES,
    HomogeneityTestResult,
    MaxTTestResult,
    homogeneity_test,
    max_t_test,
)
from faircode.significance._intervals import proportion_difference_ci, proportion_ratio_ci, wilson_interval
from faircode.significance._multiplicity import adjust_p_values
from faircode.significance._permutation import permutation_test, permutation_test_result, permutation_tests
from faircode.significance._power import EXACT_POWER_SIZE, permutation_test_power, z_test_power
from faircode.significance._report import significance_report
from faircode.significance._results import (
    SMALL_SAMPLE_THRESHOLD,
    ConfidenceInterval,
    DegenerateSampleWarning,
    PermutationTestResult,
    SignificanceReport,
)
from faircode.significance._verdict import (
    VERDICTS,
    GapVerdict,
    classify_gap,
    gap_verdict,
    gap_verdict_from_counts,
    power_at_margin,
    power_method,
    verdict_sentence,
)
from faircode.significance._strata import (
    BreslowDayResult,
    CMHTestResult,
    StratifiedTestResult,
    breslow_day_test,
    cmh_test,
    stratified_permutation_test,
)

# Private names that tests and benchmarks reach for (the bootstrap's steps, the subset-sum
# sampler), kept importable from here as they were when this package was one module.
from faircode.significance._bootstrap import (
    _bca_levels,
    _bootstrap_gaps,
    _bootstrap_setup,
    _interval_from_gaps,
)
from faircode.significance._subset_sums import _SubsetSums
from faircode.significance._validation import _as_groups

__all__ = [
    "EXACT_MAX_TABLES",
    "MAX_EXACT_TABLES",
    "SMALL_SAMPLE_THRESHOLD",
    "BreslowDayResult",
    "CMHTestResult",
    "ConfidenceInterval",
    "DegenerateSampleWarning",
    "EquivalenceTestResult",
    "GapVerdict",
    "HomogeneityTestResult",
    "MaxGapTestResult",
    "MaxTTestResult",
    "PairwiseComparison",
    "PermutationTestResult",
    "SignificanceReport",
    "StratifiedTestResult",
    "adjust_p_values",
    "binary_bootstrap_ci",
    "bootstrap_ci",
    "bootstrap_ratio_ci",
    "breslow_day_test",
    "classify_gap",
    "cmh_test",
    "equivalence_test",
    "equivalence_test_from_counts",
    "format_p_value",
    "gap_verdict",
    "gap_verdict_from_counts",
    "homogeneity_test",
    "max_gap_test",
    "max_t_test",
    "pairwise_tests",
    "permutation_test",
    "permutation_test_power",
    "permutation_test_result",
    "permutation_tests",
    "power_at_margin",
    "power_method",
    "proportion_difference_ci",
    "proportion_ratio_ci",
    "significance_report",
    "stratified_permutation_test",
    "verdict_sentence",
    "wilson_interval",
    "z_test_power",
    "EXACT_POWER_SIZE",
    "VERDICTS",
]
