"""faircode: fairness audits on real data, for the Fair Code explainer site.

Public names are re-exported here; the modules are manifest (the schema of ``audit.yaml``), data
(where the project's files are, reading a data file, a file's SHA-256), audit, strategies, models,
metrics, groups, significance and benchmark, report (bias-audit reports of a user's own decisions:
``from faircode.report import load_report_manifest, report_tables``), with formatting (p-values and error hints),
tolerances (how a re-run is compared with committed numbers) and environment (the installed
packages against the lock).
"""

import importlib

# The one place the version is written: pyproject.toml reads it ([tool.setuptools.dynamic]), so
# importlib.metadata.version("faircode") agrees with it in every kind of install.
__version__ = "0.1.0"

# Where each public name lives. They are imported on first use (PEP 562), so that importing one
# light module (faircode.tolerances, faircode.significance) does not import scikit-learn and
# pandas through this package: the site build formats numbers with them on every build.
_HOME = {
    "Audit": "audit", "list_audits": "audit", "load_audit": "audit",
    "compare_groups": "groups", "group_labels": "groups",
    "AuditManifest": "manifest", "ManifestError": "manifest", "load_manifest": "manifest",
    "Predictions": "models", "build_model": "models", "fit_predict": "models",
    "adjust_p_values": "significance", "bootstrap_ci": "significance", "max_gap_test": "significance",
    "pairwise_tests": "significance", "permutation_test": "significance",
    "permutation_test_result": "significance", "proportion_difference_ci": "significance",
    "proportion_ratio_ci": "significance", "significance_report": "significance",
    "wilson_interval": "significance",
    "STRATEGIES": "strategies", "encode_features": "strategies", "feature_columns": "strategies",
}


def __getattr__(name: str):
    if name in _HOME:
        value = getattr(importlib.import_module(f"faircode.{_HOME[name]}"), name)
        globals()[name] = value  # found once; later lookups do not come here
        return value
    raise AttributeError(f"module 'faircode' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))


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
