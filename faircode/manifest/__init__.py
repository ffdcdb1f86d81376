"""Audit manifests: the declared, validated description of one fairness audit.

An audit is a folder ``audits/<slug>/`` holding ``audit.yaml``. The manifest names the dataset
file and its sha256, how to parse it, the derived columns and row filters (in a small declarative
language, never code), the target and what its positive class means, the protected attributes
and their disadvantaged groups, declared proxies, core features, the split and the models and
strategies of the benchmark.

:func:`load_manifest` validates every field and raises one :class:`ManifestError` that lists
every problem, each prefixed with the file and the field path::

    audits/x/audit.yaml: protected[0].column: 'sexx' is not a column of adult.data (did you mean 'sex'?)

Validation reads the data file's header (to check column names) and hashes the file (to check
the sha256), both with :mod:`faircode.data`; value-level checks that need every row (a positive
label that never occurs, an unmapped code) run in :func:`faircode.load_audit` and raise the same
error type.

Import from here; the package keeps three private modules: ``_schema`` (the pydantic models,
``ManifestError``, ``MODEL_NAMES`` and ``STRATEGY_NAMES``), ``_checks`` (the checks across
fields and against the data file) and ``_load`` (:func:`load_manifest`, :func:`read_manifest_yaml`,
:func:`load_yaml`, :func:`utf8_text`, :func:`yaml_key_line` and the wording of pydantic's errors,
with :func:`field_at`, the field an error names).
"""

from faircode.manifest._load import (NotUTF8Error, field_at, load_manifest, load_yaml, read_manifest_yaml, utf8_text,
                                     yaml_key_line)
from faircode.manifest._schema import (
    MODEL_NAMES,
    STRATEGY_NAMES,
    AuditManifest,
    Comparison,
    DatasetSpec,
    DecodeSpec,
    DerivedColumn,
    ExcludedColumn,
    GroupAttribute,
    GroupsSpec,
    Intersection,
    LeftOutCategories,
    ManifestError,
    MergedCategories,
    MissingPolicy,
    ParseOptions,
    PracticalMargin,
    ProtectedAttribute,
    Proxy,
    RowFilter,
    Scalar,
    TargetSpec,
)

__all__ = [
    "read_manifest_yaml",
    "field_at",
    "load_yaml",
    "utf8_text",
    "NotUTF8Error",
    "MODEL_NAMES",
    "STRATEGY_NAMES",
    "AuditManifest",
    "PracticalMargin",
    "DatasetSpec",
    "DecodeSpec",
    "DerivedColumn",
    "ExcludedColumn",
    "GroupAttribute",
    "GroupsSpec",
    "Intersection",
    "LeftOutCategories",
    "ManifestError",
    "MissingPolicy",
    "MergedCategories",
    "ParseOptions",
    "ProtectedAttribute",
    "Proxy",
    "RowFilter",
    "TargetSpec",
    "load_manifest",
    "yaml_key_line",
]
