"""Load an audit: its manifest, its data (decoded, derived, filtered), labels, groups and split.

The pipeline a manifest declares runs in this order, and only in this order:

1. read the file with ``dataset.parse`` (after checking its sha256);
2. decode coded values with ``dataset.decode`` (German Credit's ``A92`` -> its meaning);
3. add ``derived`` columns, each from one existing column, in the order listed;
4. keep the rows that pass every ``filters`` entry, then number them 0..n-1;
5. rows with a missing target or protected value: dropped where the manifest says
   ``missing: drop`` (counted in ``Audit.dropped``), else a ManifestError;
6. ``y`` from ``target``, one mask pair per ``protected`` attribute, the stratified split
   (made when first used: reading the rows alone needs no scikit-learn).
"""

from __future__ import annotations

import functools
import json
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from faircode.data import project_root, read_data
from faircode.formatting import did_you_mean
from faircode.manifest import AuditManifest, DerivedColumn, ManifestError, RowFilter, load_manifest
from faircode.manifest._load import located

__all__ = ["Audit", "list_audits", "load_audit"]


@dataclass(frozen=True, eq=False, repr=False)
class Audit:
    """One loaded audit: the rows, the features, the labels, the groups and the split.

    Attributes
    ----------
    manifest : AuditManifest
        The validated manifest.
    slug : str
        The audit's folder name, e.g. ``"benefits-denial"``.
    name : str
        Its display name, e.g. ``"Benefits Denial"``.
    df : pandas.DataFrame, shape (n, n_columns)
        Every row that passes the filters (index 0..n-1), every column of the file plus the
        derived ones, values decoded. Excluded columns stay here for explainers that need them.
    X : pandas.DataFrame, shape (n, n_candidates)
        The candidate feature columns, raw (not encoded): ``df`` without the target and the
        manifest's excluded columns. Strategies choose among these.
    y : numpy.ndarray of int8, shape (n,)
        1 where the target is one of the manifest's positive labels.
    masks : dict of str to numpy.ndarray of int8, shape (n,)
        Per protected attribute (manifest order), 1 = the disadvantaged group.
    reference_masks : dict of str to numpy.ndarray of int8, shape (n,)
        Per protected attribute, 1 = the advantaged (reference) group: the manifest's
        ``advantaged`` values, or everyone outside the disadvantaged group when it names none.
        Rows in neither group (e.g. Asian respondents in a Black-vs-White comparison) are 0 in
        both masks.
    group_labels : dict of str to tuple of (str, str)
        Per protected attribute, the display labels (disadvantaged, advantaged).
    train, test : numpy.ndarray of int64
        Sorted row positions of the split (stratified by ``y``, manifest ``test_size`` and
        ``random_state``). Together they are 0..n-1, each row once.
    dropped : mapping of str to int
        Per target and protected column (manifest order, each column once), the rows after the
        filters whose value was missing. Non-zero only where the manifest says ``missing: drop``
        (otherwise a missing value stops the load); those rows are not in ``df``.
    n_dropped : int
        Rows dropped for a missing target or protected value (a row missing in two columns
        counts once). See :meth:`missing_summary`.

    Notes
    -----
    Arrays are read-only because :func:`load_audit` hands the same object to every caller in
    a process; ``df`` and ``X`` are shared too, so copy before changing them.
    """

    manifest: AuditManifest
    slug: str
    name: str
    df: pd.DataFrame
    X: pd.DataFrame
    y: np.ndarray
    masks: dict[str, np.ndarray]
    reference_masks: dict[str, np.ndarray]
    group_labels: dict[str, tuple[str, str]]
    dropped: Mapping[str, int] = field(default_factory=lambda: types.MappingProxyType({}))
    n_dropped: int = 0

    def missing_summary(self) -> str:
        """One line on rows dropped for missing values, for explainers and reports.

        Example
        -------
        >>> load_audit("german-credit").missing_summary()  # doctest: +SKIP
        'German Credit: 0 rows dropped for a missing value (credit: 0, sex: 0, age_under_25: 0)'
        """
        per_column = ", ".join(f"{c}: {n:,}" for c, n in self.dropped.items())
        return (f"{self.name}: {self.n_dropped:,} row{'s' if self.n_dropped != 1 else ''} dropped "
                f"for a missing value ({per_column})")

    @property
    def train(self) -> np.ndarray:
        """Sorted row positions of the training rows (see the class docstring)."""
        return self._split[0]

    @property
    def test(self) -> np.ndarray:
        """Sorted row positions of the test rows (see the class docstring)."""
        return self._split[1]

    @functools.cached_property
    def _split(self) -> tuple[np.ndarray, np.ndarray]:
        # Made at its first use, and scikit-learn imported then: what reads an audit's rows only
        # (the site's data page, a datasheet's published facts) does without it (issue 26: 0.8 s
        # of CPU in every `fairsite check`).
        from sklearn.model_selection import train_test_split

        train, test = train_test_split(
            np.arange(len(self.df)), test_size=self.manifest.test_size,
            random_state=self.manifest.random_state, stratify=self.y,
        )
        return _frozen(np.sort(train).astype(np.int64)), _frozen(np.sort(test).astype(np.int64))

    @property
    def attributes(self) -> list[str]:
        """Protected attribute names, in manifest order (the first is S3's)."""
        return list(self.masks)

    def __repr__(self) -> str:
        return (f"Audit(slug={self.slug!r}, name={self.name!r}, rows={len(self.df)}, "
                f"candidate_features={self.X.shape[1]}, positive_rate={self.y.mean():.3f}, "
                f"attributes={self.attributes}, train={len(self.train)}, test={len(self.test)}, "
                f"dropped={self.n_dropped})")


def list_audits(*, root: str | Path | None = None) -> list[str]:
    """Slugs of the audits under the project's ``audits/`` folder, sorted.

    Parameters
    ----------
    root : str or pathlib.Path, optional
        The project folder holding ``audits/``; default :func:`faircode.data.project_root`
        (the ``FAIRCODE_ROOT`` environment variable, else the clone beside the package, else
        the current folder or one above it).

    Raises
    ------
    FileNotFoundError
        No project folder is given or found (the message says how to name one).
    """
    base = project_root(root) / "audits"
    return sorted(p.parent.name for p in base.glob("*/audit.yaml"))


def load_audit(name_or_path: str | Path, *, root: str | Path | None = None) -> Audit:
    """Load an audit by slug, display name, folder or ``audit.yaml`` path.

    Parameters
    ----------
    name_or_path : str or pathlib.Path
        A slug under the project's ``audits/`` (``"benefits-denial"``; a display name such as
        ``"Benefits Denial"`` works too), or a path to an audit folder or its ``audit.yaml``.
        Anything holding a path separator or ending in ``.yaml`` is taken as a path.
    root : str or pathlib.Path, optional
        The project folder holding ``audits/`` and the data files; default
        :func:`faircode.data.project_root` (the ``FAIRCODE_ROOT`` environment variable, else
        the clone beside the package, else the current folder or one above it). Needed, or the
        variable, when ``faircode`` is installed apart from the repository (``pip install .``)
        and run outside it.

    Returns
    -------
    Audit
        The loaded audit. Cached per process by resolved path (and ``root``): calling again is
        free and returns the same object.

    Raises
    ------
    FileNotFoundError
        No such audit (the message lists the available slugs), or no project folder is given
        or found (the message says how to name one).
    ManifestError
        The manifest is invalid (see :func:`faircode.manifest.load_manifest`), or the data
        disagrees with it: an unmapped code, a positive label or group value that never occurs,
        a numeric comparison on a text column, filters that leave no rows, a target with a
        single class, or a missing target or protected value where the manifest does not say
        ``missing: drop`` (the message names the field, the column and the count).

    Example
    -------
    >>> audit = load_audit("benefits-denial")  # doctest: +SKIP
    >>> audit.y.shape, audit.masks["sex"].sum()  # doctest: +SKIP
    ((32561,), 10771)
    """
    root_path = None if root is None else project_root(root)
    return _load_cached(_resolve(name_or_path, root_path), root_path)


def _resolve(name_or_path: str | Path, root: Path | None) -> Path:
    if not isinstance(name_or_path, (str, Path)):
        raise TypeError(f"`name_or_path` must be a str or Path, got {type(name_or_path).__name__}")
    text = str(name_or_path)
    is_path = isinstance(name_or_path, Path) or "/" in text or "\\" in text or text.endswith((".yaml", ".yml"))
    if is_path:
        p = Path(name_or_path)
        if p.is_dir():
            p = p / "audit.yaml"
        if not p.is_file():
            raise FileNotFoundError(f"no audit manifest at {str(p)!r}")
        return p.resolve()
    slug = "-".join(text.strip().lower().split())
    base = project_root(root)
    p = base / "audits" / slug / "audit.yaml"
    if not p.is_file():
        known = list_audits(root=base)
        raise FileNotFoundError(f"no audit {text!r} under {p.parent.parent}{did_you_mean(slug, known)}; "
                                f"available: {', '.join(known) or 'none'}")
    return p.resolve()


@functools.lru_cache(maxsize=None)
def _load_cached(path: Path, root: Path | None) -> Audit:
    """The pipeline of the module docstring, one named step each; every step lists its problems
    and the load stops after a step that found any, so later steps see sound data."""
    manifest = load_manifest(path, root=root)
    label = _label(manifest)
    problems: list[str] = []
    df = _read_rows(manifest, problems)
    _stop_on(problems, label, path)
    df, dropped, n_dropped = _apply_missing_policy(df, manifest, problems)
    _stop_on(problems, label, path)
    y = _labels(df, manifest, problems)
    masks, reference, labels = _group_masks(df, manifest, problems)
    _check_group_values(manifest, df, problems)
    _stop_on(problems, label, path)

    excluded = {e.column for e in manifest.exclude} | {manifest.target.column}
    X = df[[c for c in df.columns if c not in excluded]]
    return Audit(
        manifest=manifest, slug=manifest.slug, name=manifest.name, df=df, X=X,
        y=_frozen(y), masks=masks, reference_masks=reference, group_labels=labels,
        dropped=types.MappingProxyType(dropped), n_dropped=n_dropped,
    )


# --- the declarative steps ------------------------------------------------------------------------


def _read_rows(manifest: AuditManifest, problems: list[str]) -> pd.DataFrame:
    """Steps 1-4: read, decode, derive, filter; the kept rows numbered 0..n-1."""
    df = read_data(manifest.resolve(manifest.dataset.file), manifest.dataset.parse)
    if manifest.dataset.decode is not None:
        df = _decode(df, manifest, problems)
    for i, spec in enumerate(manifest.derived):
        df[spec.name] = _derive(df[spec.from_], spec, f"derived[{i}]", problems)
    keep = np.ones(len(df), dtype=bool)
    for i, flt in enumerate(manifest.filters):
        keep &= _condition(df[flt.column], flt, f"filters[{i}]", problems)
    df = df.loc[keep].reset_index(drop=True)
    if len(df) == 0 and not problems:
        problems.append("filters: no row passes every filter")
    return df


def _labels(df: pd.DataFrame, manifest: AuditManifest, problems: list[str]) -> np.ndarray:
    """``y`` (int8, 1 = a positive label); every positive label occurs and both classes do."""
    target = manifest.target
    _check_values(df[target.column], target.positive, "target.positive", problems)
    y = _isin(df[target.column], target.positive).astype(np.int8)
    if not problems and y.min() == y.max():
        problems.append(f"target.positive: every row is in the same class ({int(y[0])}); "
                        "a model needs both")
    return y


def _group_masks(df: pd.DataFrame, manifest: AuditManifest, problems: list[str]
                 ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, tuple[str, str]]]:
    """Per protected attribute: the disadvantaged mask, the reference (advantaged) mask and
    the two display labels (see :class:`Audit`); every value the manifest lists occurs."""
    masks: dict[str, np.ndarray] = {}
    reference: dict[str, np.ndarray] = {}
    labels: dict[str, tuple[str, str]] = {}
    for i, attr in enumerate(manifest.protected):
        col = df[attr.column]
        _check_values(col, attr.disadvantaged, f"protected[{i}].disadvantaged", problems)
        disadvantaged = _isin(col, attr.disadvantaged).astype(np.int8)
        if attr.advantaged is None:
            advantaged = (1 - disadvantaged).astype(np.int8)
        else:
            _check_values(col, attr.advantaged, f"protected[{i}].advantaged", problems)
            advantaged = _isin(col, attr.advantaged).astype(np.int8)
        masks[attr.name] = _frozen(disadvantaged)
        reference[attr.name] = _frozen(advantaged)
        labels[attr.name] = (attr.disadvantaged_label, attr.reference_label)
    return masks, reference, labels


def _apply_missing_policy(df: pd.DataFrame, manifest: AuditManifest,
                          problems: list[str]) -> tuple[pd.DataFrame, dict[str, int], int]:
    """Drop or refuse rows with a missing target or protected value, as the manifest says.

    Returns the frame (renumbered 0..n-1 when rows were dropped), the count of missing values per
    target/protected column (each column once, in manifest order; these rows are all dropped
    when the load succeeds) and the number of rows dropped (a row missing in two columns counts
    once). Without ``missing: drop`` a missing value is a problem naming the field, the column
    and the count: it must never join a group or become class 0 unnoticed.
    """
    fields = [("target", manifest.target.column, manifest.target.missing)]
    fields += [(f"protected[{i}]", a.column, a.missing) for i, a in enumerate(manifest.protected)]
    counts: dict[str, int] = {}
    drop = np.zeros(len(df), dtype=bool)
    for where, column, policy in fields:
        missing = df[column].isna().to_numpy()
        n = int(missing.sum())
        counts.setdefault(column, n)
        if n == 0:
            continue
        if policy == "drop":
            drop |= missing
            continue
        stated = "says `missing: fail`" if policy == "fail" else "does not say what to do with them"
        problems.append(
            f"{where}.missing: column {column!r} has {n:,} missing value{'s' if n != 1 else ''} "
            f"after the filters and the manifest {stated}; add `missing: drop` to {where} to drop "
            "those rows (the count is reported), or fix the data"
        )
    if problems or not drop.any():
        return df, counts, 0
    return df.loc[~drop].reset_index(drop=True), counts, int(drop.sum())



def _decode(df: pd.DataFrame, manifest: AuditManifest, problems: list[str]) -> pd.DataFrame:
    spec = manifest.dataset.decode
    assert spec is not None  # guarded by the caller
    maps: dict[str, dict[str, Any]] = json.loads(manifest.resolve(spec.file).read_text(encoding="utf-8"))
    columns = spec.columns if spec.columns is not None else [c for c in df.columns if c in maps]
    for col in columns:
        mapping = {str(k): v for k, v in maps[col].items()}
        text = df[col].astype("string")
        unmapped = sorted(set(text[text.notna() & ~text.isin(list(mapping))]))
        if unmapped:
            problems.append(f"dataset.decode: {col!r} has values {unmapped[:5]} with no entry in "
                            f"{Path(spec.file).name}")
            continue
        df[col] = _infer(text.map(mapping))
    return df


def _derive(col: pd.Series, spec: DerivedColumn, field: str, problems: list[str]) -> pd.Series:
    if spec.op != "map":
        out = pd.Series(_condition(col, spec, field, problems), index=col.index)
        if col.isna().any():
            # A comparison with a missing value is false, but a derived column must stay missing
            # where its source is (age unknown is not "25 and over"), so the missing-value policy
            # of a protected attribute built on it sees the row.
            out = out.astype("boolean").mask(col.isna())
        return out
    assert spec.mapping is not None  # the manifest model requires it for op 'map'
    mapping = {str(k): v for k, v in spec.mapping.items()}
    text = col.astype("string")
    unknown = text.notna() & ~text.isin(list(mapping))
    if unknown.any():
        if spec.default is None:
            values = sorted(set(text[unknown]))
            problems.append(f"{field}.mapping: values {values[:5]} of {spec.from_!r} are not mapped "
                            "(map them or give a `default`)")
            return pd.Series(np.nan, index=col.index)
        return _infer(text.map(mapping).where(~unknown, spec.default))
    return _infer(text.map(mapping))


def _condition(col: pd.Series, spec: RowFilter | DerivedColumn, field: str,
               problems: list[str]) -> np.ndarray:
    """Boolean array of ``col op value``; a missing value never satisfies a comparison."""
    op, value = spec.op, spec.value
    if op in {"lt", "le", "gt", "ge", "between"}:
        if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            problems.append(f"{field}.op: {op!r} needs a numeric column, but "
                            f"{col.name!r} holds {col.dtype} values")
            return np.zeros(len(col), dtype=bool)
        if op == "between":
            out = col.between(value[0], value[1], inclusive="both")
        else:
            out = {"lt": col.lt, "le": col.le, "gt": col.gt, "ge": col.ge}[op](value)
        return out.fillna(False).to_numpy(dtype=bool)
    values = value if isinstance(value, list) else [value]
    hit = _isin(col, values)
    return hit if op in {"eq", "in"} else ~hit


def _isin(col: pd.Series, values: list[Any]) -> np.ndarray:
    """Rows whose value is one of ``values``, compared by type: booleans with a boolean
    column, numbers with a numeric column, and as text otherwise (so ``A92`` or ``>50K``)."""
    if pd.api.types.is_bool_dtype(col):
        vals: list[Any] = [v for v in values if isinstance(v, bool)]
    elif pd.api.types.is_numeric_dtype(col):
        vals = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    else:
        vals = [str(v) for v in values if not isinstance(v, bool)]
        col = col.astype("string")
    return col.isin(vals).fillna(False).to_numpy(dtype=bool)


def _check_values(col: pd.Series, values: list[Any], field: str, problems: list[str]) -> None:
    """Every listed value must occur in the column, else the group or class is a typo."""
    present = col.dropna().unique()
    for j, v in enumerate(values):
        if _isin(col, [v]).any():
            continue
        shown = sorted(map(str, present))
        sample = ", ".join(repr(s) for s in shown[:8]) + (", ..." if len(shown) > 8 else "")
        hint = ""
        if isinstance(v, bool) and not pd.api.types.is_bool_dtype(col):
            hint = " (YAML reads bare yes/no/true/false as booleans: quote the word)"
        elif isinstance(v, str) and pd.api.types.is_numeric_dtype(col):
            hint = f" (the column holds numbers: write {v} without quotes)"
        else:
            hint = did_you_mean(v, shown)
        problems.append(f"{field}[{j}]: {v!r} never occurs in {col.name!r} after the filters{hint}; "
                        f"values: {sample}")


def _check_group_values(manifest: AuditManifest, df: pd.DataFrame, problems: list[str]) -> None:
    """Every value of a multi-group column is declared once, and every declared value occurs.

    An undeclared value would otherwise become a group of its own unnoticed (or vanish), and a
    declared one that never occurs is a typo.
    """
    if manifest.groups is None:
        return
    for i, attr in enumerate(manifest.groups.attributes):
        field = f"groups.attributes[{i}]"
        col = df[attr.column]
        _check_values(col, attr.categories, f"{field}.categories", problems)
        for j, m in enumerate(attr.merge):
            _check_values(col, m.values, f"{field}.merge[{j}].values", problems)
        for j, lo in enumerate(attr.leave_out):
            _check_values(col, lo.values, f"{field}.leave_out[{j}].values", problems)
        declared = [*attr.categories, *(v for m in attr.merge for v in m.values),
                    *(v for lo in attr.leave_out for v in lo.values)]
        undeclared = sorted(map(str, col[col.notna() & ~_isin(col, declared)].unique()))
        if undeclared:
            problems.append(f"{field}: values {undeclared[:8]} of {attr.column!r} are not declared; "
                            "list each in `categories`, `merge` or `leave_out` (with a reason)")
        n_missing = int(col.isna().sum())
        if n_missing and attr.missing == "fail":
            problems.append(f"{field}.missing: {attr.column!r} is missing in {n_missing} row(s) after the "
                            "filters; set `missing: leave_out` to leave those rows out of this attribute's "
                            "comparisons")


def _infer(s: pd.Series) -> pd.Series:
    # Decoded or mapped values arrive as objects; let pandas pick bool/number/str again.
    return s.astype(object).infer_objects()


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a`` read-only (contiguous; copied only if it was not), for arrays shared by every caller."""
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _stop_on(problems: list[str], label: str, path: Path) -> None:
    if problems:
        raise ManifestError(located(path, label, problems))


def _label(manifest: AuditManifest) -> str:
    try:
        return str(manifest.path.relative_to(manifest.root))
    except ValueError:
        return str(manifest.path)
