"""The benchmark: every audit x strategy x model x protected attribute x fairness metric.

`run_benchmark` fits each (audit, strategy, model) once (the task unit), computes every gap
of `faircode.metrics.GAP_METRICS` for every protected attribute on the test split, attaches
the exact permutation test and a score interval of `faircode.significance` (Newcombe's hybrid
score interval for a difference of rates, MOVER-R with Wilson limits for the disparate impact ratio; the method
is recorded per row in ``ci_method``), and adjusts the p-values for the false discovery rate
(Benjamini-Hochberg) within each audit, counting a repeated test once (``same_test_as``). `write_results` writes
``results/results_fairness.csv`` and ``results/results_performance.csv`` byte-for-byte
reproducibly; `compare_results` lists every cell that differs from the committed files beyond
the tolerance `faircode.tolerances` declares for its kind of quantity (`COLUMN_KINDS`).

For audits whose manifest has a ``groups:`` section, the same fit also gives every group's
rates (`faircode.groups.compare_groups`: each group of a multi-group attribute or an
intersection, with its interval, its comparison with the reference group and the max-gap
test), written beside the two-group table as ``results/results_by_group.csv``.

Determinism: each row's random state is derived from the manifest's ``random_state`` and the
row's key with ``zlib.crc32`` (not Python's salted ``hash``), so results do not depend on task
order, ``n_jobs`` or the backend, and models fit with one BLAS/OpenMP thread
(`faircode.models.fit_predict`), so the job count never changes a number. Rows are sorted, columns fixed and floats written with
``%.10g``.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, balanced_accuracy_score, roc_auc_score

from faircode import tolerances
from faircode.metrics import GAP_KIND, GAP_METRICS, gap, gap_rate, group_outcomes

__all__ = [
    "ALPHA",
    "CONFIDENCE_LEVEL",
    "N_PERMUTATIONS",
    "FAIRNESS_COLUMNS",
    "PERFORMANCE_COLUMNS",
    "FAIRNESS_FILE",
    "PERFORMANCE_FILE",
    "Task",
    "default_audits",
    "plan_tasks",
    "run_task",
    "evaluate",
    "run_benchmark",
    "write_results",
    "merge_results",
    "compare_results",
    "COLUMN_KINDS",
    "column_tolerance",
    "BY_GROUP_COLUMNS",
    "BY_GROUP_FILE",
    "merge_by_group",
]

#: Significance level for ``significant`` (applied to the q-value) and 1 - confidence level.
ALPHA = 0.05
CONFIDENCE_LEVEL = 0.95
#: The permutation test of a 0/1 outcome is exact (hypergeometric), so this only matters for a
#: Monte Carlo fallback; recorded per row either way.
N_PERMUTATIONS = 9999
#: Below this many rows in a group the report flags ``small_sample_warning``.
SMALL_SAMPLE = 30

FAIRNESS_FILE = "results_fairness.csv"
PERFORMANCE_FILE = "results_performance.csv"

BY_GROUP_FILE = "results_by_group.csv"

FAIRNESS_KEY = ["audit", "strategy", "model", "attribute", "metric"]
BY_GROUP_KEY = ["audit", "strategy", "model", "attribute", "group", "metric"]
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
    "ratio_vs_reference",
    "p_value_vs_reference",
    "p_value_vs_reference_holm",
    "max_gap",
    "max_gap_high_group",
    "max_gap_low_group",
    "min_max_ratio",
    "n_groups_compared",
    "p_value_max_gap",
    "method_max_gap",
    "n_permutations",
    "reason",
    "random_state",
]

_FLOAT_FORMAT = "%.10g"


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


# --------------------------------------------------------------------------- planning


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
            f"`{name}` has unknown value(s) {', '.join(map(repr, unknown))}; "
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


def _row_seed(random_state: int, *key: str) -> int:
    # crc32 of the key: stable across processes and Python versions, unlike hash().
    return zlib.crc32("|".join([str(random_state), *key]).encode("utf-8"))


# --------------------------------------------------------------------------- one task


# A rate whose permutation test is another rate's: 1 - y has the same two-sided test as y.
_TEST_RATE = {"non_selection_rate": "selection_rate"}


def _same_test_as(metric: str, favourable: str) -> str:
    """The metric whose permutation test this metric's row repeats, or "" if none.

    The disparate impact ratio's null hypothesis (equal rates of the favourable decision, i.e.
    equal selection rates) is the demographic parity difference's; the equal opportunity difference compares the true positive rate
    (favourable positive) or the true negative rate, ``1 -`` the false positive rate
    (favourable negative), whose tests are those of the descriptive rows. A repeated test is
    one hypothesis, so it is counted once in the q-value family.
    """
    if metric == "disparate_impact_ratio":
        return "demographic_parity_difference"
    if metric == "equal_opportunity_difference":
        return "true_positive_rate_difference" if favourable == "positive" else "false_positive_rate_difference"
    return ""


def _performance_row(audit, pred) -> dict:
    y_true = np.asarray(pred.y_true)
    y_score = np.asarray(pred.y_score, dtype=float)
    row = {
        "audit": audit.slug,
        "audit_name": audit.name,
        "strategy": pred.strategy,
        "model": pred.model,
        "n_test": int(y_true.size),
        "n_positive": int(y_true.sum()),
        # Rows dropped for a missing target or protected value before the split (manifest
        # `missing: drop`); the same in every row of an audit.
        "n_dropped": int(audit.n_dropped),
        "accuracy": float(accuracy_score(y_true, pred.y_pred)),
        "balanced_accuracy": float("nan"),
        "roc_auc": float("nan"),
        "reason": "",
    }
    if np.unique(y_true).size < 2:
        row["reason"] = "balanced accuracy and ROC AUC undefined: the test split has one class"
        return row
    row["balanced_accuracy"] = float(balanced_accuracy_score(y_true, pred.y_pred))
    if not np.isfinite(y_score).all():
        row["reason"] = "ROC AUC undefined: the model gave non-finite scores"
    else:
        row["roc_auc"] = float(roc_auc_score(y_true, y_score))
    return row


def run_task(task: Task, *, n_permutations: int = N_PERMUTATIONS) -> tuple[list[dict], dict, list[dict]]:
    """Fit one (audit, strategy, model) and compute its fairness, performance and by-group rows.

    Parameters
    ----------
    task : Task
    n_permutations : int
        Relabellings for a Monte Carlo permutation test (0/1 outcomes are tested exactly).

    Returns
    -------
    fairness_rows : list of dict
        One per protected attribute x gap metric, keys `FAIRNESS_COLUMNS` (``q_value`` and
        ``significant`` are filled in by `run_benchmark`, within each audit).
    performance_row : dict
        Keys `PERFORMANCE_COLUMNS`.
    by_group_rows : list of dict
        One per group attribute or intersection x group x rate, keys `BY_GROUP_COLUMNS`
        (empty when the manifest has no ``groups:`` section).
    """
    return evaluate(
        _load_audit(task.audit),
        strategy=task.strategy,
        model=task.model,
        n_permutations=n_permutations,
    )


def evaluate(
    audit,
    *,
    strategy: str,
    model: str,
    predictions=None,
    n_permutations: int = N_PERMUTATIONS,
) -> tuple[list[dict], dict, list[dict]]:
    """Like `run_task`, on an already loaded ``Audit`` (e.g. a subsample in a bench script).

    Parameters
    ----------
    audit : faircode.audit.Audit
    strategy, model : str
    predictions : faircode.models.Predictions, optional
        This audit's predictions for (strategy, model), if already fitted; else fitted here.
    n_permutations : int

    Returns
    -------
    fairness_rows : list of dict
    performance_row : dict
    by_group_rows : list of dict
    """
    from faircode.models import fit_predict

    pred = predictions if predictions is not None else fit_predict(audit, strategy=strategy, model=model)
    fairness = [row for attribute in sorted(audit.masks)
                for row in _attribute_rows(audit, pred, attribute, n_permutations=n_permutations)]
    return fairness, _performance_row(audit, pred), _by_group_rows(audit, pred, n_permutations=n_permutations)


def _attribute_rows(audit, pred, attribute: str, *, n_permutations: int) -> list[dict]:
    """The fairness rows of one protected attribute, one per gap metric."""
    from faircode.significance import permutation_test_result, proportion_difference_ci, proportion_ratio_ci

    y_true, y_pred = np.asarray(pred.y_true), np.asarray(pred.y_pred)
    dis = np.asarray(audit.masks[attribute])[pred.rows]
    adv = np.asarray(audit.reference_masks[attribute])[pred.rows]
    dis_label, adv_label = audit.group_labels[attribute]
    favourable = audit.manifest.target.favourable
    key = (audit.slug, pred.strategy, pred.model, attribute)
    random_state = int(audit.manifest.random_state)
    tests: dict = {}  # one test per hypothesis: DP and DI share the selection-rate test
    rows = []
    for metric in GAP_METRICS:
        rate_name = gap_rate(metric, favourable=favourable)
        g = gap(metric, y_true, y_pred, disadvantaged=dis, advantaged=adv, favourable=favourable)
        n_a, n_b = g.disadvantaged.denominator, g.advantaged.denominator
        row = {
            "audit": audit.slug,
            "audit_name": audit.name,
            "strategy": pred.strategy,
            "model": pred.model,
            "attribute": attribute,
            "disadvantaged_group": str(dis_label),
            "advantaged_group": str(adv_label),
            "metric": metric,
            "kind": GAP_KIND[metric],
            "value_disadvantaged": g.disadvantaged.value,
            "value_advantaged": g.advantaged.value,
            "gap": g.value,
            "ci_low": float("nan"),
            "ci_high": float("nan"),
            "ci_method": "",
            "p_value": float("nan"),
            "q_value": float("nan"),
            "same_test_as": _same_test_as(metric, favourable),
            "significant": pd.NA,
            "n_disadvantaged": n_a,
            "n_advantaged": n_b,
            "small_sample_warning": min(n_a, n_b) < SMALL_SAMPLE,
            "reason": g.reason,
            "method": "",
            "n_permutations": pd.NA,
            "random_state": _row_seed(random_state, *key, metric),
        }
        rows.append(row)
        if not g.defined:
            continue
        outcomes = group_outcomes(rate_name, y_true, y_pred, disadvantaged=dis, advantaged=adv)
        # Equal non-selection rates is equal selection rates: one hypothesis, one test (and one
        # seed), whichever of the two rates the row divides.
        test_rate = _TEST_RATE.get(rate_name, rate_name)
        if test_rate not in tests:
            tested = group_outcomes(test_rate, y_true, y_pred, disadvantaged=dis, advantaged=adv)
            seed = _row_seed(random_state, *key, test_rate)
            tests[test_rate] = permutation_test_result(tested.a, tested.b, n_permutations=n_permutations,
                                                       random_state=seed)
        test = tests[test_rate]
        # Score intervals: they hold their coverage on small groups and never have zero width.
        if GAP_KIND[metric] == "ratio":
            # The ratio is defined here, so the advantaged selection rate is not 0 and the upper
            # limit is finite; no resampling, so no resample with a zero denominator.
            interval, ci_method = proportion_ratio_ci(outcomes.a, outcomes.b, confidence_level=CONFIDENCE_LEVEL), "mover"
        else:
            interval, ci_method = proportion_difference_ci(outcomes.a, outcomes.b, confidence_level=CONFIDENCE_LEVEL), "newcombe"
        row.update(
            p_value=float(test.p_value),
            method=str(test.method),
            # None for an exact test: no relabelling was drawn.
            n_permutations=pd.NA if test.n_permutations is None else int(test.n_permutations),
            ci_low=float(interval.low),
            ci_high=float(interval.high),
            ci_method=ci_method,
        )
    return rows


def _by_group_rows(audit, pred, *, n_permutations: int) -> list[dict]:
    """The by-group rows of one fit: every declared group attribute and intersection x rate."""
    from faircode.groups import GROUP_METRICS, compare_groups, group_labels

    spec = audit.manifest.groups
    if spec is None:
        return []
    random_state = int(audit.manifest.random_state)
    rows = []
    for name in spec.by_name():
        labels = group_labels(audit, name)
        for metric in GROUP_METRICS:
            seed = _row_seed(random_state, audit.slug, pred.strategy, pred.model, "by_group", name, metric)
            c = compare_groups(
                metric, pred.y_true, pred.y_pred, labels.labels[pred.rows],
                favourable=audit.manifest.target.favourable, reference=labels.reference, order=labels.groups,
                min_size=spec.min_size, confidence_level=CONFIDENCE_LEVEL, n_permutations=n_permutations,
                random_state=seed, all_pairs=False,
            )
            test = c.max_gap_test
            for group, g in c.by_group.iterrows():
                small = f"fewer than {c.min_size} rows: reported, left out of the largest gap and the tests"
                rows.append({
                    "audit": audit.slug,
                    "audit_name": audit.name,
                    "strategy": pred.strategy,
                    "model": pred.model,
                    "attribute": name,
                    "attribute_kind": labels.kind,
                    "group": group,
                    "reference_group": labels.reference,
                    "metric": metric,
                    "value": g["value"],
                    "ci_low": g["ci_low"],
                    "ci_high": g["ci_high"],
                    "ci_method": "" if pd.isna(g["value"]) else "wilson",
                    "n_outcome": int(g["n_outcome"]),
                    "n_group": int(g["n_group"]),
                    "small_cell": bool(g["small_cell"]),
                    "min_size": c.min_size,
                    "diff_vs_reference": g["diff_vs_reference"],
                    "ratio_vs_reference": g["ratio_vs_reference"],
                    "p_value_vs_reference": g["p_value_vs_reference"],
                    "p_value_vs_reference_holm": g["p_value_vs_reference_holm"],
                    "max_gap": c.difference,
                    "max_gap_high_group": c.high_group or "",
                    "max_gap_low_group": c.low_group or "",
                    "min_max_ratio": c.ratio,
                    "n_groups_compared": len(c.compared),
                    "p_value_max_gap": float("nan") if test is None else test.p_value,
                    "method_max_gap": "" if test is None else test.method,
                    "n_permutations": pd.NA if test is None or test.n_permutations is None else test.n_permutations,
                    "reason": "; ".join(filter(None, (g["reason"], small if g["small_cell"] else "", c.reason))),
                    "random_state": seed,
                })
    return rows


# --------------------------------------------------------------------------- execution


def _execute(tasks, *, n_jobs, backend, scheduler, kwargs) -> Iterator[tuple[list[dict], dict, list[dict]]]:
    if backend == "joblib" and n_jobs == 1:
        for t in tasks:
            yield run_task(t, **kwargs)
        return
    # One code path for both backends: joblib's Parallel, on loky processes here or on a
    # dask.distributed cluster (joblib's dask backend sends the same tasks to its workers).
    from joblib import Parallel, delayed, parallel_config

    client = None
    if backend == "dask":
        from distributed import Client

        client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
        config = parallel_config(backend="dask", n_jobs=-1, client=client, wait_for_workers_timeout=120)
    else:
        config = parallel_config(backend="loky", n_jobs=n_jobs)
    try:
        with config:
            yield from Parallel(return_as="generator_unordered")(delayed(run_task)(t, **kwargs) for t in tasks)
    finally:
        if client is not None and client is not scheduler:
            client.close()


def _validate_run(n_jobs, backend, scheduler, n_permutations):
    if backend not in ("joblib", "dask"):
        raise ValueError(f"`backend` must be 'joblib' or 'dask', got {backend!r}")
    if backend == "dask" and scheduler is None:
        raise ValueError("`scheduler` (an address or a distributed.Client) is required with backend='dask'")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"`n_jobs` must be a positive integer or -1 (all cores), got {n_jobs!r}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, int) or n_permutations < 1:
        raise ValueError(f"`n_permutations` must be a positive integer, got {n_permutations!r}")


def _sorted_fairness(rows: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=FAIRNESS_COLUMNS)
    order = {m: i for i, m in enumerate(GAP_METRICS)}
    df["_metric_order"] = df["metric"].map(order)
    df = df.sort_values(["audit", "strategy", "model", "attribute", "_metric_order"], kind="stable")
    return df.drop(columns="_metric_order").reset_index(drop=True)


def _as_written(values: np.ndarray) -> np.ndarray:
    # The p-values exactly as the CSV holds them, so that the q-values can be recomputed from
    # the file alone (and a partial --check recomputes them bit for bit).
    return np.array([float(_FLOAT_FORMAT % v) for v in values], dtype=float)


def _significant(q: np.ndarray) -> pd.arrays.BooleanArray:
    # The decision after FDR correction; empty (NA), not False, where the gap is undefined.
    flags = pd.array(q < ALPHA, dtype="boolean")
    flags[np.isnan(q)] = pd.NA
    return flags


def _family_q_values(df: pd.DataFrame) -> np.ndarray:
    """Benjamini-Hochberg q-values within each audit, one per distinct hypothesis.

    The family is one audit's rows (the family an auditor of one system faces), not the whole
    table. A row whose ``same_test_as`` names another metric repeats that row's permutation
    test (the disparate impact ratio repeats the selection-rate test, the equal opportunity
    difference the false or true positive rate test); it is left out of the family and takes
    the q-value of the row it repeats, so one hypothesis is never counted twice.

    Parameters
    ----------
    df : DataFrame
        Columns ``audit, strategy, model, attribute, metric, p_value, same_test_as``; p-values
        as written in the CSV.

    Returns
    -------
    numpy.ndarray of float, shape (len(df),)
        q-values in [0, 1]; NaN where the p-value is NaN.
    """
    from faircode.significance import adjust_p_values

    p = pd.to_numeric(df["p_value"], errors="coerce").to_numpy(dtype=float)
    repeats = df["same_test_as"].fillna("").astype(str).to_numpy() != ""
    q = np.full(len(df), np.nan)
    for _, idx in df.groupby("audit", sort=False).indices.items():
        own = idx[~repeats[idx]]
        q[own] = adjust_p_values(p[own], method="bh")
    if repeats.any():
        attr_key = ["audit", "strategy", "model", "attribute"]
        primary = pd.Series(q, index=pd.MultiIndex.from_frame(df[attr_key + ["metric"]].astype(str)))
        wanted = pd.MultiIndex.from_frame(
            df.loc[repeats, attr_key].astype(str).assign(metric=df.loc[repeats, "same_test_as"].astype(str)))
        q[repeats] = primary.reindex(wanted).to_numpy()
    return q


def _add_q_values(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    df["p_value"] = _as_written(df["p_value"].to_numpy(dtype=float))
    q = _family_q_values(df)
    df["q_value"] = q
    df["significant"] = _significant(q)
    df["small_sample_warning"] = df["small_sample_warning"].astype(bool)
    for col in ("n_disadvantaged", "n_advantaged", "n_permutations", "random_state"):
        df[col] = df[col].astype("Int64")
    return df


def run_benchmark(
    *,
    audits: Sequence[str] | None = None,
    strategies: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    n_jobs: int = 1,
    backend: str = "joblib",
    scheduler=None,
    progress: bool = True,
    n_permutations: int = N_PERMUTATIONS,
    return_by_group: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame] | tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Run every audit x strategy x model x protected attribute x fairness metric.

    Parameters
    ----------
    audits : sequence of str, optional
        Audit slugs or paths; default: every audit under ``audits/``.
    strategies, models : sequence of str, optional
        Restrict the run; default: what each manifest lists.
    n_jobs : int, default 1
        Parallel tasks with joblib (loky processes); -1 = all cores. Ignored with dask.
    backend : {"joblib", "dask"}, default "joblib"
        ``"dask"`` sends the same tasks to a dask.distributed cluster.
    scheduler : str or distributed.Client, optional
        The scheduler address (e.g. ``"tcp://10.0.0.1:8786"``) or a client; required with dask.
    progress : bool, default True
        Show a rich progress bar on stderr.
    n_permutations : int
        Relabellings for a Monte Carlo permutation test (0/1 outcomes are tested exactly).
    return_by_group : bool, default False
        Also return the by-group table (a third item).

    Returns
    -------
    fairness : DataFrame
        One row per audit x strategy x model x attribute x metric, columns
        `FAIRNESS_COLUMNS`, sorted by that key (metrics in `GAP_METRICS` order).
    performance : DataFrame
        One row per audit x strategy x model, columns `PERFORMANCE_COLUMNS`.
    by_group : DataFrame, only with ``return_by_group=True``
        One row per audit x strategy x model x group attribute (or intersection) x rate x
        group, columns `BY_GROUP_COLUMNS`, sorted by audit, strategy and model, then in
        manifest order (attributes, rates in ``faircode.groups.GROUP_METRICS`` order, groups
        as declared).

    Raises
    ------
    ValueError
        For an unknown backend, strategy or model, a missing scheduler, or a bad ``n_jobs``.

    Notes
    -----
    ``gap`` is disadvantaged minus advantaged, except for ``disparate_impact_ratio`` (kind
    ``ratio``), where it is disadvantaged / advantaged of the favourable decision's rate (the
    four-fifths rule's ratio: non-selection rates when ``target.favourable`` is negative).
    Intervals are score intervals (``ci_method``: ``newcombe`` for differences, ``mover`` for the ratio: MOVER-R with Wilson limits), which hold their
    coverage on small groups and never have zero width. The ratio row carries the selection-rate
    permutation test (equal selection rates is one null hypothesis for the difference and the
    ratio) and the equal opportunity difference row that of the true or false positive rate
    (``same_test_as``). ``q_value`` is the Benjamini-Hochberg adjustment within each audit over
    its distinct hypotheses (rows with an empty ``same_test_as``); a repeating row takes the
    q-value of the row it repeats. ``significant`` is ``q_value < 0.05``, empty where the gap
    is undefined.

    Example
    -------
    >>> fairness, performance = run_benchmark(audits=["german-credit"], strategies=["S0"],
    ...     models=["logistic_regression"], progress=False)  # doctest: +SKIP
    """
    _validate_run(n_jobs, backend, scheduler, n_permutations)
    tasks = plan_tasks(audits=audits, strategies=strategies, models=models)
    kwargs = {"n_permutations": n_permutations}
    fairness_rows: list[dict] = []
    performance_rows: list[dict] = []
    by_group_rows: list[dict] = []
    results = _execute(tasks, n_jobs=n_jobs, backend=backend, scheduler=scheduler, kwargs=kwargs)
    if progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True)) as bar:
            job = bar.add_task("benchmark (audit x strategy x model)", total=len(tasks))
            for fair, perf, groups in results:
                fairness_rows.extend(fair)
                performance_rows.append(perf)
                by_group_rows.extend(groups)
                bar.advance(job)
    else:
        for fair, perf, groups in results:
            fairness_rows.extend(fair)
            performance_rows.append(perf)
            by_group_rows.extend(groups)
    fairness = _add_q_values(_sorted_fairness(fairness_rows))
    performance = (
        pd.DataFrame(performance_rows, columns=PERFORMANCE_COLUMNS)
        .sort_values(PERFORMANCE_KEY, kind="stable")
        .reset_index(drop=True)
    )
    if return_by_group:
        return fairness, performance, _sorted_by_group(by_group_rows)
    return fairness, performance


# --------------------------------------------------------------------------- files


def _csv_text(df: pd.DataFrame) -> str:
    return df.to_csv(index=False, float_format=_FLOAT_FORMAT, lineterminator="\n")


def write_results(fairness: pd.DataFrame, performance: pd.DataFrame, output_dir="results", *,
                  by_group: pd.DataFrame | None = None) -> tuple[Path, ...]:
    """Write the results files, byte-for-byte reproducibly.

    Parameters
    ----------
    fairness, performance : DataFrame
        As returned by `run_benchmark`.
    output_dir : str or Path, default "results"
        Created if missing.
    by_group : DataFrame, optional
        The by-group table (``run_benchmark(return_by_group=True)``), written to
        ``results_by_group.csv`` when given.

    Returns
    -------
    tuple of Path
        Paths of ``results_fairness.csv`` and ``results_performance.csv`` (and
        ``results_by_group.csv`` when written).

    Notes
    -----
    Fixed column order, rows as sorted by `run_benchmark`, floats as ``%.10g``, ``\\n`` line
    ends, empty cells for NaN/NA.
    """
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = (out / FAIRNESS_FILE, out / PERFORMANCE_FILE)
    for path, df, columns in ((paths[0], fairness, FAIRNESS_COLUMNS), (paths[1], performance, PERFORMANCE_COLUMNS)):
        path.write_text(_csv_text(df[columns]), encoding="utf-8")
    if by_group is not None:
        paths = (*paths, out / BY_GROUP_FILE)
        paths[2].write_text(_csv_text(by_group[BY_GROUP_COLUMNS]), encoding="utf-8")
    return paths


def merge_results(fairness: pd.DataFrame, performance: pd.DataFrame,
                  output_dir="results") -> tuple[pd.DataFrame, pd.DataFrame]:
    """A partial run merged into the committed tables.

    The run's (audit, strategy, model) tasks replace the committed rows of the same tasks; every
    other committed row stays; q-values are recomputed within each audit of the merged table
    (BH depends on every p-value of the audit). Without committed files, the run is returned as it is.

    Parameters
    ----------
    fairness, performance : DataFrame
        A (partial) run, as returned by `run_benchmark`.
    output_dir : str or Path, default "results"
        Where the committed files are.

    Returns
    -------
    (DataFrame, DataFrame)
        The merged fairness and performance tables, ready for `write_results`.
    """
    out = Path(output_dir)
    paths = (out / FAIRNESS_FILE, out / PERFORMANCE_FILE)
    if not all(p.exists() for p in paths):
        return fairness, performance
    task = ["audit", "strategy", "model"]

    def replace(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
        ran = pd.MultiIndex.from_frame(new[task].astype(str))
        keep = ~pd.MultiIndex.from_frame(old[task].astype(str)).isin(ran)
        return pd.concat([old[keep], new], ignore_index=True)

    merged = replace(pd.read_csv(paths[0]), fairness)
    fairness = _add_q_values(_sorted_fairness(merged.to_dict("records")))
    performance = (replace(pd.read_csv(paths[1]), performance)[PERFORMANCE_COLUMNS]
                   .sort_values(PERFORMANCE_KEY, kind="stable").reset_index(drop=True))
    return fairness, performance


def _read_as_text(text_or_path) -> pd.DataFrame:
    return pd.read_csv(text_or_path, dtype=str, keep_default_na=False)


#: How each results column is compared with its committed value (see `faircode.tolerances`):
#: every column of both files is classified; a column not listed is compared exactly.
COLUMN_KINDS: dict[str, str] = {
    **dict.fromkeys(["audit", "audit_name", "strategy", "model", "attribute", "disadvantaged_group",
                     "advantaged_group", "metric", "kind", "significant", "n_disadvantaged", "n_advantaged",
                     "small_sample_warning", "reason", "method", "n_permutations", "ci_method",
                     "same_test_as", "random_state", "n_test", "n_positive", "n_dropped"], "exact"),
    **dict.fromkeys(["value_disadvantaged", "value_advantaged", "accuracy", "balanced_accuracy", "roc_auc"],
                    "fitted"),
    "gap": "gap",  # fitted; for a ratio, the fitted bound propagated through a / b
    # Score-based intervals (Newcombe, MOVER-R) are closed-form in the group counts and rates: fitted,
    # like the gap they bracket.
    "ci_low": "gap",
    "ci_high": "gap",
    "p_value": "p_value",  # log scale, or Monte Carlo when n_permutations is set
    "q_value": "p_value",
    # results_by_group.csv: labels and counts exact; rates, intervals and the summaries built
    # from them fitted; the reference tests exact p-values; the max-gap test Monte Carlo.
    **dict.fromkeys(["attribute_kind", "group", "reference_group", "n_outcome", "n_group", "small_cell",
                     "min_size", "max_gap_high_group", "max_gap_low_group", "n_groups_compared",
                     "method_max_gap"], "exact"),
    **dict.fromkeys(["value", "diff_vs_reference", "ratio_vs_reference", "max_gap", "min_max_ratio"], "fitted"),
    "p_value_vs_reference": "p_value",
    "p_value_vs_reference_holm": "p_value",
    "p_value_max_gap": "p_value",  # Monte Carlo: n_permutations relabellings
}


def _cell(text: str):
    # A CSV cell as a number where it is one: "" is NaN (undefined), text stays text.
    if text == "":
        return float("nan")
    try:
        return float(text)
    except ValueError:
        return text


def _count(text: str) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def column_tolerance(column: str, committed_row) -> tolerances.Tolerance:
    """The rule a results cell is compared by, given the committed row it belongs to.

    Parameters
    ----------
    column : str
        A column of `FAIRNESS_COLUMNS` or `PERFORMANCE_COLUMNS` (see `COLUMN_KINDS`).
    committed_row : mapping of str to str
        The committed row, as the CSV holds it (the row's rates, interval and resample counts
        size the band).

    Returns
    -------
    faircode.tolerances.Tolerance
    """
    kind = COLUMN_KINDS.get(column, "exact")
    get = committed_row.get
    if kind == "fitted":
        return tolerances.fitted()
    rates = (_cell(get("value_disadvantaged", "")), _cell(get("value_advantaged", "")))
    is_ratio = get("kind") == "ratio"
    if kind == "gap":
        return tolerances.fitted_ratio(*rates) if is_ratio else tolerances.fitted()
    if kind == "p_value":
        n = _count(get("n_permutations"))
        if column in ("p_value", "p_value_max_gap") and n is not None:
            return tolerances.monte_carlo(_cell(get(column, "")), n)
        return tolerances.p_value()
    return tolerances.exact()


def _diff_table(committed: pd.DataFrame, current: pd.DataFrame, key: list[str], file: str) -> list[dict]:
    committed = committed.set_index(key)
    current = current.set_index(key)
    diffs = []
    for idx in committed.index.union(current.index, sort=True):
        ident = dict(zip(key, idx if isinstance(idx, tuple) else (idx,)))
        base = {"file": file, **{k: ident.get(k, "") for k in [*FAIRNESS_KEY, "group"]}}
        row = {"tolerance": "exact", "difference": "", "within_tolerance": False}
        if idx not in current.index:
            diffs.append({**base, "column": "(row)", "committed": "present", "current": "missing", **row})
        elif idx not in committed.index:
            diffs.append({**base, "column": "(row)", "committed": "missing", "current": "present", **row})
        else:
            old, new = committed.loc[idx], current.loc[idx]
            for col in current.columns.union(committed.columns, sort=False):
                o, n = old.get(col, "(no column)"), new.get(col, "(no column)")
                if o == n:
                    continue
                rule = column_tolerance(col, old)
                diffs.append({**base, "column": col, "committed": o, "current": n, "tolerance": rule.description,
                              "difference": rule.excess(_cell(o), _cell(n)),
                              "within_tolerance": rule.matches(_cell(o), _cell(n))})
    return diffs


def _q_values_within(fairness: pd.DataFrame, committed: pd.DataFrame) -> pd.DataFrame:
    """Recompute a partial run's q-values as if it were part of the committed table.

    BH depends on every p-value of the audit, so the q-values of a subset run differ from
    the committed ones even when nothing changed; here the subset's p-values replace their
    rows in the committed table before adjusting within each audit.
    """
    key = pd.MultiIndex.from_frame(committed[FAIRNESS_KEY])
    current = _as_written(fairness["p_value"].to_numpy(dtype=float))
    ran = pd.MultiIndex.from_frame(fairness[FAIRNESS_KEY].astype(str))
    columns = [*FAIRNESS_KEY, "p_value", "same_test_as"]
    kept = committed.loc[~key.isin(ran)].reindex(columns=columns).replace("", np.nan)
    merged = pd.concat([kept, fairness[columns].assign(p_value=current)], ignore_index=True)
    q = pd.Series(_family_q_values(merged), index=pd.MultiIndex.from_frame(merged[FAIRNESS_KEY].astype(str)))
    fairness = fairness.copy()
    fairness["q_value"] = q.loc[ran].to_numpy()
    fairness["significant"] = _significant(fairness["q_value"].to_numpy())
    return fairness


def compare_results(fairness: pd.DataFrame, performance: pd.DataFrame, output_dir="results", *,
                    include_within: bool = False, by_group: pd.DataFrame | None = None) -> pd.DataFrame:
    """List every cell where a fresh run differs from the committed results files beyond tolerance.

    Only rows whose (audit, strategy, model) the fresh run covers are compared, so a check of
    a subset ignores the rest of the committed table.

    Parameters
    ----------
    fairness, performance : DataFrame
        A fresh run, as returned by `run_benchmark`.
    output_dir : str or Path, default "results"
        Where the committed files are.
    include_within : bool, default False
        Also list the cells whose text differs but whose value is within its tolerance.
    by_group : DataFrame, optional
        A fresh by-group table (``run_benchmark(return_by_group=True)``), compared with the
        committed ``results_by_group.csv`` the same way.

    Returns
    -------
    DataFrame
        Columns file, audit, strategy, model, attribute, metric, group (empty outside the by-group
        file), column, committed, current,
        tolerance (the rule, e.g. ``"fitted model: |Δ| ≤ 0.0001"``), difference (on the rule's
        scale) and within_tolerance; empty when every cell matches. Cells are compared as the
        CSV holds them: identical text matches; otherwise by the rule of `column_tolerance`
        (``faircode.tolerances``: counts and labels exact, fitted-model quantities, Monte Carlo
        quantities, bootstrap endpoints and p-values each within their own tolerance). A
        missing or extra row is always listed.

    Raises
    ------
    FileNotFoundError
        If a committed results file is missing.
    """
    from io import StringIO

    out = Path(output_dir)
    diffs: list[dict] = []
    if (out / FAIRNESS_FILE).is_file():
        fairness = _q_values_within(fairness, _read_as_text(out / FAIRNESS_FILE))
    covered = set(map(tuple, performance[PERFORMANCE_KEY].astype(str).to_numpy().tolist()))
    files = [
        (FAIRNESS_FILE, fairness, FAIRNESS_COLUMNS, FAIRNESS_KEY),
        (PERFORMANCE_FILE, performance, PERFORMANCE_COLUMNS, PERFORMANCE_KEY),
    ]
    if by_group is not None:
        files.append((BY_GROUP_FILE, by_group, BY_GROUP_COLUMNS, BY_GROUP_KEY))
    for name, df, columns, key in files:
        path = out / name
        if not path.is_file():
            raise FileNotFoundError(f"committed results file {path} does not exist; run `faircode benchmark` first")
        committed = _read_as_text(path)
        in_run = committed[PERFORMANCE_KEY].apply(tuple, axis=1).isin(covered) if len(committed) else []
        committed = committed[in_run] if len(committed) else committed
        current = _read_as_text(StringIO(_csv_text(df[columns])))
        diffs.extend(_diff_table(committed, current, key, name))
    table = pd.DataFrame(diffs, columns=["file", *FAIRNESS_KEY, "group", "column", "committed", "current",
                                         "tolerance", "difference", "within_tolerance"])
    table["within_tolerance"] = table["within_tolerance"].astype(bool)
    return table if include_within else table[~table["within_tolerance"]].reset_index(drop=True)


def _sorted_by_group(rows: list[dict]) -> pd.DataFrame:
    # Tasks finish in any order; within a task the rows are already in manifest order.
    df = pd.DataFrame(rows, columns=BY_GROUP_COLUMNS)
    df = df.sort_values(PERFORMANCE_KEY, kind="stable").reset_index(drop=True)
    for col in ("n_outcome", "n_group", "min_size", "n_groups_compared", "n_permutations", "random_state"):
        df[col] = df[col].astype("Int64")
    df["small_cell"] = df["small_cell"].astype(bool)
    return df


def merge_by_group(by_group: pd.DataFrame, output_dir="results") -> pd.DataFrame:
    """A partial run's by-group rows merged into the committed ``results_by_group.csv``.

    The run's (audit, strategy, model) tasks replace the committed rows of the same tasks;
    every other committed row stays. Without a committed file, the run is returned as it is.

    Parameters
    ----------
    by_group : DataFrame
        A (partial) run, as returned by ``run_benchmark(return_by_group=True)``.
    output_dir : str or Path, default "results"
        Where the committed file is.

    Returns
    -------
    DataFrame
        The merged table, ready for ``write_results(..., by_group=...)``.
    """
    path = Path(output_dir) / BY_GROUP_FILE
    if not path.exists():
        return by_group
    old = pd.read_csv(path, keep_default_na=False, na_values=[""])
    ran = pd.MultiIndex.from_frame(by_group[PERFORMANCE_KEY].astype(str))
    keep = ~pd.MultiIndex.from_frame(old[PERFORMANCE_KEY].astype(str)).isin(ran)
    return _sorted_by_group(pd.concat([old[keep], by_group], ignore_index=True).to_dict("records"))
