"""Feature strategies of the benchmark, and the one feature encoding every model sees.

===== ================================================== ===============================
name  features                                           then
===== ================================================== ===============================
S0    every candidate feature (``audit.X``)              -
S1    S0 without the protected columns                   -
S2    the manifest's ``core_features`` (no protected     -
      column, no declared proxy; the manifest checks it)
S3    S2                                                 fairlearn ``ThresholdOptimizer``
                                                         for demographic parity
===== ================================================== ===============================

"Protected columns" are each protected attribute's column together with every column it is
derived from or that is derived from it (German Credit's derived ``sex`` brings ``status_sex``,
``age_under_25`` brings ``age``): dropping ``sex`` while keeping the code it was read from would
drop nothing.

Why S3 is threshold post-processing (Hardt, Price & Srebro 2016) and not reweighing: it leaves the
S2 model untouched and changes only the decision rule per group, so the S2-to-S3 difference in a
gap is the mitigation's effect and nothing else; it needs no retraining, works with every model of
the benchmark, and targets the quantity the site leads with (the selection-rate gap, i.e. the
demographic parity difference). Its price is visible and honest: it uses the protected
attribute at decision time, and its decisions can be randomised near the thresholds. It
equalises the first protected attribute of the manifest only, because one optimiser handles one
sensitive feature; gaps on the other attributes are reported as they fall.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from faircode.formatting import did_you_mean
from faircode.manifest import STRATEGY_NAMES, AuditManifest

if TYPE_CHECKING:
    from faircode.audit import Audit

__all__ = ["STRATEGIES", "Strategy", "encode_features", "feature_columns", "protected_columns"]

MISSING_LEVEL = "<missing>"


@dataclass(frozen=True)
class Strategy:
    """A feature strategy: which columns a model sees and whether a mitigation step follows.

    Attributes
    ----------
    name : str
        ``"S0"`` ... ``"S3"``.
    label : str
        Short display label.
    description : str
        One sentence for the results page.
    mitigation : str or None
        The post-processing step, or None.
    """

    name: str
    label: str
    description: str
    mitigation: str | None = None


STRATEGIES: dict[str, Strategy] = {
    "S0": Strategy("S0", "all features", "Every candidate feature, protected columns included."),
    "S1": Strategy("S1", "no protected columns",
                   "Every candidate feature except the protected columns (and the columns they "
                   "are derived from)."),
    "S2": Strategy("S2", "core features",
                   "The manifest's core features: no protected column and no declared proxy."),
    "S3": Strategy("S3", "core + threshold optimizer",
                   "The S2 model, then per-group thresholds (fairlearn ThresholdOptimizer) that "
                   "equalise selection rates on the first protected attribute.",
                   mitigation="ThresholdOptimizer(constraints='demographic_parity')"),
}
assert tuple(STRATEGIES) == STRATEGY_NAMES  # one list of names for manifests and code


def protected_columns(manifest: AuditManifest) -> list[str]:
    """Every column tied to a protected attribute through the manifest's derived columns.

    Parameters
    ----------
    manifest : AuditManifest

    Returns
    -------
    list of str
        The protected attributes' columns plus, transitively, the columns they are derived
        from and the columns derived from them, in the order first met.
    """
    edges: dict[str, set[str]] = {}
    for d in manifest.derived:
        edges.setdefault(d.name, set()).add(d.from_)
        edges.setdefault(d.from_, set()).add(d.name)
    seen: list[str] = []
    stack = [p.column for p in reversed(manifest.protected)]
    while stack:
        col = stack.pop()
        if col in seen:
            continue
        seen.append(col)
        stack.extend(sorted(edges.get(col, ()), reverse=True))
    return seen


def feature_columns(audit: Audit, strategy: str | Strategy) -> list[str]:
    """The raw columns a strategy gives the model, in ``audit.X`` order.

    Parameters
    ----------
    audit : Audit
    strategy : str or Strategy
        ``"S0"``, ``"S1"``, ``"S2"`` or ``"S3"``.

    Returns
    -------
    list of str
        Column names of ``audit.X`` (for S2/S3 in the manifest's ``core_features`` order).

    Raises
    ------
    ValueError
        If ``strategy`` is not one of :data:`STRATEGIES`.

    Example
    -------
    >>> from faircode import load_audit  # doctest: +SKIP
    >>> feature_columns(load_audit("arrest-release"), "S2")  # doctest: +SKIP
    ['year', 'age', 'sex', 'employed', 'checks']
    """
    name = _check_strategy(strategy)
    candidates = list(audit.X.columns)
    if name == "S0":
        return candidates
    if name == "S1":
        drop = set(protected_columns(audit.manifest))
        return [c for c in candidates if c not in drop]
    return list(audit.manifest.core_features)


def encode_features(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Encode raw columns as numbers a scikit-learn model takes.

    Parameters
    ----------
    df : pandas.DataFrame, shape (n, ...)
        Rows to encode. Pass all of an audit's rows (``audit.df`` or ``audit.X``), not one
        split: the categories are read from ``df``, so train and test rows get the same
        columns even when a rare category falls only in one of them. Only the set of category
        names is read from the rows, never the target, so this leaks nothing a model can fit.
    columns : list of str
        Columns to encode, in the order wanted.

    Returns
    -------
    pandas.DataFrame, shape (n, n_encoded), same index as ``df``
        Numeric columns as float64, under their own name. Boolean columns as uint8 0/1 under
        their own name. Any other column one-hot encoded as uint8 columns named
        ``"<column>=<value>"``, one per value in sorted order, plus ``"<column>=<missing>"``
        when the column has missing values. Column order: ``columns`` order, then levels.

    Raises
    ------
    ValueError
        If ``columns`` is empty, repeats a name, names a column not in ``df``, or a numeric
        column has missing values (impute them in the manifest's data, not silently here).

    Notes
    -----
    The float64/uint8 split is what :func:`faircode.models.build_model`'s logistic
    regression uses to pick the columns it standardises: measured numbers are scaled,
    indicators are left as 0/1.

    Example
    -------
    >>> df = pd.DataFrame({"age": [30, 40], "sex": ["Male", "Female"]})
    >>> encode_features(df, ["age", "sex"]).columns.tolist()
    ['age', 'sex=Female', 'sex=Male']
    """
    _check_columns(df, columns)
    parts: list[pd.DataFrame] = []
    for col in columns:
        s = df[col]
        if pd.api.types.is_bool_dtype(s):
            parts.append(s.astype(np.uint8).to_frame(col))
        elif pd.api.types.is_numeric_dtype(s):
            if s.isna().any():
                raise ValueError(f"encode_features: numeric column {col!r} has {int(s.isna().sum())} "
                                 "missing values; a model cannot take them")
            parts.append(s.astype(np.float64).to_frame(col))
        else:
            # One integer code per row (missing: -1) and the levels in sorted order, then one
            # comparison of integer codes per level: a string comparison per level and a Python
            # set of every row's text made this most of a probe's fit on 30,000 rows.
            codes, levels = pd.factorize(s.astype("string"), sort=True)
            onehot = (codes[:, None] == np.arange(len(levels))).astype(np.uint8)
            block = {f"{col}={lv}": onehot[:, i] for i, lv in enumerate(levels)}
            if (codes < 0).any():
                block[f"{col}={MISSING_LEVEL}"] = (codes < 0).astype(np.uint8)
            parts.append(pd.DataFrame(block, index=df.index))
    return pd.concat(parts, axis=1)


def _check_strategy(strategy: str | Strategy) -> str:
    name = strategy.name if isinstance(strategy, Strategy) else strategy
    if name not in STRATEGIES:
        # "s2" is not close to "S2" by difflib's ratio, so a name that differs only in case is
        # suggested as spelt here.
        same_but_case = [s for s in STRATEGIES if s.lower() == str(name).lower()]
        hint = did_you_mean(same_but_case[0] if same_but_case else name, STRATEGIES)
        raise ValueError(f"`strategy` must be one of {', '.join(STRATEGIES)}; got {name!r}{hint}")
    return name


def _check_columns(df: pd.DataFrame, columns: list[str]) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"`df` must be a pandas DataFrame, got {type(df).__name__}")
    if isinstance(columns, str) or not list(columns):
        raise ValueError("`columns` must be a non-empty list of column names")
    dupes = sorted({c for c in columns if list(columns).count(c) > 1})
    if dupes:
        raise ValueError(f"`columns` repeats {dupes}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        hints = [f"{c!r}{did_you_mean(c, df.columns)}" for c in missing]
        raise ValueError(f"`columns` names columns not in `df`: {', '.join(hints)}")
