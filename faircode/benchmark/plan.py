"""Planning a run: which (audit, strategy, model) tasks the benchmark fits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from faircode.formatting import did_you_mean


@dataclass(frozen=True)
class Task:
    """One unit of work: fit one model with one strategy on one audit.

    Attributes
    ----------
    audit : str
        Slug or path accepted by ``faircode.audit.load_audit``.
    strategy : str
        A key of ``faircode.strategies.STRATEGIES``.
    model : str
        A key of ``faircode.models.MODELS``.
    """

    audit: str
    strategy: str
    model: str


def _load_audit(spec: str):
    # load_audit caches per process, so loky and dask workers load each audit once.
    from faircode.audit import load_audit

    return load_audit(spec)


def _load_dataset(manifest):
    """The original explainer page's loader: ``(df, y, masks)`` for a manifest.

    Kept, documented and tested for the first page of the project, whose code calls it; new
    code uses :func:`faircode.load_audit`, which this wraps (the benchmark's own loader, so
    the rows, labels and groups are the ones the benchmark scores, missing-value policy
    included).

    Parameters
    ----------
    manifest : faircode.manifest.AuditManifest or str or pathlib.Path
        A loaded manifest (``faircode.manifest.load_manifest(path)``), or anything
        ``load_audit`` accepts.

    Returns
    -------
    df : pandas.DataFrame, shape (n, n_columns)
        Every row after the filters (index 0..n-1), decoded, with the derived columns (a copy).
    y : pandas.Series of int, shape (n,)
        1 where the target is the manifest's positive class, named after the target column.
    masks : dict of str to pandas.Series of int, shape (n,)
        Per protected attribute (manifest order), 1 = the disadvantaged group, 0 otherwise
        (the advantaged group and rows in neither group).

    Raises
    ------
    TypeError
        If ``manifest`` is not a manifest, str or Path.
    ManifestError, FileNotFoundError
        As :func:`faircode.load_audit`.
    """
    from faircode.audit import load_audit
    from faircode.manifest import AuditManifest

    if isinstance(manifest, AuditManifest):
        spec = manifest.path
    elif isinstance(manifest, (str, Path)):
        spec = manifest
    else:
        raise TypeError(f"`manifest` must be an AuditManifest (from load_manifest) or a path; got {type(manifest).__name__}")
    audit = load_audit(spec)
    index = audit.df.index
    y = pd.Series(np.asarray(audit.y, dtype=np.int64), index=index, name=audit.manifest.target.column)
    masks = {name: pd.Series(np.asarray(m, dtype=np.int64), index=index, name=name) for name, m in audit.masks.items()}
    return audit.df.copy(), y, masks


def default_audits() -> list[str]:
    """Slugs of every audit under ``audits/`` (folders holding an ``audit.yaml``), sorted."""
    from faircode.audit import list_audits

    return list_audits()


def _validate_names(requested, known: Iterable[str], name: str) -> list[str] | None:
    if requested is None:
        return None
    if isinstance(requested, str):
        requested = [requested]
    known = list(known)
    unknown = [r for r in requested if r not in known]
    if unknown:
        raise ValueError(
            f"`{name}` has unknown value(s) {', '.join(repr(u) + did_you_mean(u, known) for u in unknown)}; "
            f"known: {', '.join(known)}"
        )
    return list(dict.fromkeys(requested))


def plan_tasks(*, audits=None, strategies=None, models=None) -> list[Task]:
    """List the (audit, strategy, model) tasks of a run.

    Parameters
    ----------
    audits : sequence of str, optional
        Audit slugs or paths; default: every audit under ``audits/``.
    strategies, models : sequence of str, optional
        Restrict to these; default: what each audit's manifest lists. A requested name that an
        audit's manifest does not list is skipped for that audit.

    Returns
    -------
    list of Task
        In a fixed order (audit, strategy, model as listed).

    Raises
    ------
    ValueError
        If a strategy or model name is unknown, or the selection leaves no task.
    """
    # The name lists live in the manifest module, so planning imports no scikit-learn.
    from faircode.manifest import MODEL_NAMES, STRATEGY_NAMES

    audits = list(default_audits() if audits is None else ([audits] if isinstance(audits, str) else audits))
    if not audits:
        raise ValueError("`audits` is empty: no audit folder with an audit.yaml under audits/")
    strategies = _validate_names(strategies, STRATEGY_NAMES, "strategies")
    models = _validate_names(models, MODEL_NAMES, "models")
    tasks = []
    for spec in audits:
        manifest = _load_audit(str(spec)).manifest
        for s in manifest.strategies:
            if strategies is not None and s not in strategies:
                continue
            for m in manifest.models:
                if models is not None and m not in models:
                    continue
                tasks.append(Task(str(spec), s, m))
    if not tasks:
        raise ValueError(
            "no task to run: no audit's manifest lists the requested strategies and models"
        )
    return tasks


def plan_fits(tasks: Iterable[Task]) -> list[tuple[Task, ...]]:
    """Group tasks that share one model fit: same audit, model and feature columns.

    S3 is S2's fitted model plus a post-processing step, so an audit's S2 and S3 tasks for one
    model become one group and `faircode.benchmark.task.run_tasks` fits that model once
    (strategies whose columns coincide share a fit too).

    Parameters
    ----------
    tasks : iterable of Task
        From `plan_tasks`.

    Returns
    -------
    list of tuple of Task
        Every task exactly once, each group in the order its first task was listed, tasks
        within a group in their listed order.
    """
    from faircode.strategies import feature_columns

    groups: dict[tuple, list[Task]] = {}
    for t in tasks:
        columns = tuple(feature_columns(_load_audit(t.audit), t.strategy))
        groups.setdefault((t.audit, t.model, columns), []).append(t)
    return [tuple(g) for g in groups.values()]
