"""The benchmark's constants and the results files' layout: names, keys and columns.

Every other module of `faircode.benchmark` reads these; the column lists fix the order in
which `faircode.benchmark.write_results` writes each file.
"""

from __future__ import annotations


#: Significance level for ``significant`` (applied to the q-value) and 1 - confidence level.
ALPHA = 0.05
CONFIDENCE_LEVEL = 0.95
#: The permutation test of a 0/1 outcome is exact (hypergeometric), so this only matters for a
#: Monte Carlo fallback; recorded per row either way.
N_PERMUTATIONS = 9999

FAIRNESS_FILE = "results_fairness.csv"
PERFORMANCE_FILE = "results_performance.csv"

BY_GROUP_FILE = "results_by_group.csv"

FAIRNESS_KEY = ["audit", "strategy", "model", "attribute", "metric"]
BY_GROUP_KEY = ["audit", "strategy", "model", "attribute", "group", "metric"]
#: One family of the by-group file: one comparison of k groups, whose tests (max-gap, omnibus)
#: repeat on each of its group rows; its q-values are adjusted over these, within each audit.
BY_GROUP_FAMILY_KEY = ["audit", "strategy", "model", "attribute", "metric"]
#: What ``omnibus_test`` names: Pearson's chi-squared test of homogeneity of the k x 2 table
#: (`faircode.group_tests.homogeneity_test`; ``method_omnibus`` says exact, asymptotic or Monte Carlo).
OMNIBUS_TEST = "chi2_homogeneity"
PERFORMANCE_KEY = ["audit", "strategy", "model"]

FAIRNESS_COLUMNS = [
    "audit",
    "audit_name",
    "strategy",
    "model",
    "attribute",
    "disadvantaged_group",
    "advantaged_group",
    "metric",
    "kind",
    "value_disadvantaged",
    "value_advantaged",
    "gap",
    "ci_low",
    "ci_high",
    "ci_method",
    "p_value",
    "q_value",
    "same_test_as",
    "significant",
    "margin_low",
    "margin_high",
    "equivalence_p_value",
    "equivalence_q_value",
    "equivalence_method",
    "power_at_margin",
    "verdict",
    "n_disadvantaged",
    "n_advantaged",
    "small_sample_warning",
    "reason",
    "method",
    "n_permutations",
    "random_state",
]

PERFORMANCE_COLUMNS = [
    "audit",
    "audit_name",
    "strategy",
    "model",
    "n_test",
    "n_positive",
    "n_dropped",
    "accuracy",
    "balanced_accuracy",
    "roc_auc",
    "reason",
]

#: One row per audit x strategy x model x group attribute (or intersection) x group x rate.
BY_GROUP_COLUMNS = [
    "audit",
    "audit_name",
    "strategy",
    "model",
    "attribute",
    "attribute_kind",
    "group",
    "reference_group",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "ci_method",
    "n_outcome",
    "n_group",
    "small_cell",
    "min_size",
    "diff_vs_reference",
    "diff_vs_reference_ci_low",
    "diff_vs_reference_ci_high",
    "ratio_vs_reference",
    "p_value_vs_reference",
    "p_value_vs_reference_holm",
    "margin_low",
    "margin_high",
    "equivalence_p_value",
    "equivalence_p_value_holm",
    "equivalence_method",
    "power_at_margin",
    "verdict",
    "max_gap",
    "max_gap_high_group",
    "max_gap_low_group",
    "min_max_ratio",
    "n_groups_compared",
    "p_value_max_gap",
    "method_max_gap",
    "q_value_max_gap",
    "omnibus_test",
    "p_value_omnibus",
    "method_omnibus",
    "q_value_omnibus",
    "n_permutations",
    "reason",
    "random_state",
]

_FLOAT_FORMAT = "%.10g"
