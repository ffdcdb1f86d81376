"""faircode: fairness audits on real data, for the Fair Code explainer site.

Public names are re-exported here; see ``shared/DESIGN.md`` for the contract.
"""

from faircode.audit import Audit, list_audits, load_audit
from faircode.manifest import AuditManifest, ManifestError, load_manifest
from faircode.models import Predictions, build_model, fit_predict
from faircode.strategies import STRATEGIES, encode_features, feature_columns

__all__ = [
    "STRATEGIES",
    "Audit",
    "AuditManifest",
    "ManifestError",
    "Predictions",
    "build_model",
    "encode_features",
    "feature_columns",
    "fit_predict",
    "list_audits",
    "load_audit",
    "load_manifest",
]

__version__ = "0.1.0"
