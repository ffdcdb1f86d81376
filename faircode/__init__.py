"""faircode: fairness audits on real data, for the Fair Code explainer site.

Public names are re-exported here; the modules are manifest, audit,
strategies, models, metrics, groups, significance and benchmark, with tolerances (how a re-run is
compared with committed numbers) and environment (the installed packages against the lock).
"""

from faircode.audit import Audit, list_audits, load_audit
from faircode.groups import compare_groups, group_labels
from faircode.manifest import AuditManifest, ManifestError, load_manifest
from faircode.models import Predictions, build_model, fit_predict
from faircode.significance import (
    adjust_p_values,
    bootstrap_ci,
    max_gap_test,
    pairwise_tests,
    permutation_test,
    permutation_test_result,
    proportion_difference_ci,
    proportion_ratio_ci,
    significance_report,
    wilson_interval,
)
from faircode.strategies import STRATEGIES, encode_features, feature_columns

__all__ = [
    "STRATEGIES",
    "Audit",
    "AuditManifest",
    "ManifestError",
    "Predictions",
    "adjust_p_values",
    "bootstrap_ci",
    "build_model",
    "compare_groups",
    "encode_features",
    "feature_columns",
    "fit_predict",
    "group_labels",
    "list_audits",
    "load_audit",
    "load_manifest",
    "max_gap_test",
    "pairwise_tests",
    "permutation_test",
    "permutation_test_result",
    "proportion_difference_ci",
    "proportion_ratio_ci",
    "significance_report",
    "wilson_interval",
]

__version__ = "0.1.0"
