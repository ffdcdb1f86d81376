"""One task: fit one (audit, strategy, model) and compute its fairness, performance and by-group rows."""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, balanced_accuracy_score, roc_auc_score

from faircode.benchmark.columns import CONFIDENCE_LEVEL, N_PERMUTATIONS, OMNIBUS_TEST
from faircode.benchmark.plan import Task, _load_audit
from faircode.benchmark.verdicts import EMPTY_EQUIVALENCE, equivalence_columns, group_comparison_columns
from faircode.metrics import GAP_KIND, GAP_METRICS, gap, gap_rate, group_outcomes
from faircode.significance import (
    SMALL_SAMPLE_THRESHOLD,
    permutation_test_result,
    proportion_difference_ci,
    proportion_ratio_ci,
)


#: What one task returns: its fairness rows, its performance row and its by-group rows.
_TaskRows = tuple[list[dict], dict, list[dict]]


def _row_seed(random_state: int, *key: str) -> int:
    # crc32 of the key: stable across processes and Python versions, unlike hash().
    return zlib.crc32("|".join([str(random_state), *key]).encode("utf-8"))


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


def run_task(task: Task, *, n_permutations: int = N_PERMUTATIONS) -> _TaskRows:
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
    return run_tasks((task,), n_permutations=n_permutations)[0]


def run_tasks(tasks, *, n_permutations: int = N_PERMUTATIONS) -> list[_TaskRows]:
    """`run_task` for tasks of one audit and one model, fitting each feature set once.

    Parameters
    ----------
    tasks : sequence of Task
        Same ``audit`` and ``model`` (`faircode.benchmark.plan.plan_fits` groups them so).
    n_permutations : int

    Returns
    -------
    list of (fairness_rows, performance_row, by_group_rows)
        One per task, in order; each what `run_task` returns for it.

    Raises
    ------
    ValueError
        If ``tasks`` is empty or mixes audits or models.
    """
    from faircode.models import fit_predict_strategies

    tasks = list(tasks)
    if not tasks or len({(t.audit, t.model) for t in tasks}) != 1:
        raise ValueError(f"`tasks` must be a non-empty list of one audit's tasks for one model; got {tasks!r}")
    audit = _load_audit(tasks[0].audit)
    predictions = fit_predict_strategies(audit, strategies=[t.strategy for t in tasks], model=tasks[0].model)
    return [evaluate(audit, strategy=t.strategy, model=t.model, predictions=predictions[t.strategy],
                     n_permutations=n_permutations) for t in tasks]


def evaluate(
    audit,
    *,
    strategy: str,
    model: str,
    predictions=None,
    n_permutations: int = N_PERMUTATIONS,
) -> _TaskRows:
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
    y_true, y_pred = np.asarray(pred.y_true), np.asarray(pred.y_pred)
    dis = np.asarray(audit.masks[attribute])[pred.rows]
    adv = np.asarray(audit.reference_masks[attribute])[pred.rows]
    favourable = audit.manifest.target.favourable
    key = (audit.slug, pred.strategy, pred.model, attribute)
    random_state = int(audit.manifest.random_state)
    tests: dict = {}  # one test per hypothesis: DP and DI share the selection-rate test
    rows = []
    for metric in GAP_METRICS:
        g = gap(metric, y_true, y_pred, disadvantaged=dis, advantaged=adv, favourable=favourable)
        row = _gap_row(audit, pred, attribute, metric, g, random_state=_row_seed(random_state, *key, metric))
        rows.append(row)
        if not g.defined:
            continue
        rate_name = gap_rate(metric, favourable=favourable)
        # Equal non-selection rates is equal selection rates: one hypothesis, one test (and one
        # seed), whichever of the two rates the row divides.
        test_rate = _TEST_RATE.get(rate_name, rate_name)
        if test_rate not in tests:
            tested = group_outcomes(test_rate, y_true, y_pred, disadvantaged=dis, advantaged=adv)
            tests[test_rate] = permutation_test_result(tested.a, tested.b, n_permutations=n_permutations,
                                                       random_state=_row_seed(random_state, *key, test_rate))
        outcomes = group_outcomes(rate_name, y_true, y_pred, disadvantaged=dis, advantaged=adv)
        row.update(_test_columns(tests[test_rate]), **_interval_columns(metric, outcomes))
        row.update(equivalence_columns(int(outcomes.a.sum()), outcomes.a.size, int(outcomes.b.sum()),
                                       outcomes.b.size, margin=(row["margin_low"], row["margin_high"]),
                                       compare=GAP_KIND[metric]))
    return rows


def _gap_row(audit, pred, attribute: str, metric: str, g, *, random_state: int) -> dict:
    """One fairness row before its test: the groups' rates, the gap, sizes; the rest empty."""
    dis_label, adv_label = audit.group_labels[attribute]
    n_dis, n_adv = g.disadvantaged.denominator, g.advantaged.denominator
    margin_low, margin_high = audit.manifest.practical_margin.of(GAP_KIND[metric])
    return {
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
        "same_test_as": _same_test_as(metric, audit.manifest.target.favourable),
        "significant": pd.NA,
        "margin_low": margin_low,
        "margin_high": margin_high,
        **EMPTY_EQUIVALENCE,
        "equivalence_q_value": float("nan"),  # within each audit, once every row is in (tables)
        "verdict": "",
        "n_disadvantaged": n_dis,
        "n_advantaged": n_adv,
        "small_sample_warning": min(n_dis, n_adv) < SMALL_SAMPLE_THRESHOLD,
        "reason": g.reason,
        "method": "",
        "n_permutations": pd.NA,
        "random_state": random_state,
    }


def _test_columns(test) -> dict:
    """A row's permutation-test columns from a `faircode.significance.PermutationTestResult`."""
    return {
        "p_value": float(test.p_value),
        "method": str(test.method),
        # None for an exact test: no relabelling was drawn.
        "n_permutations": pd.NA if test.n_permutations is None else int(test.n_permutations),
    }


def _interval_columns(metric: str, outcomes) -> dict:
    """A row's interval columns: a score interval for the gap of ``outcomes`` (two 0/1 arrays).

    Score intervals hold their coverage on small groups and never have zero width.
    """
    if GAP_KIND[metric] == "ratio":
        # The ratio is defined here, so the advantaged selection rate is not 0 and the upper
        # limit is finite; no resampling, so no resample with a zero denominator.
        interval = proportion_ratio_ci(outcomes.a, outcomes.b, confidence_level=CONFIDENCE_LEVEL)
        method = "mover"
    else:
        interval = proportion_difference_ci(outcomes.a, outcomes.b, confidence_level=CONFIDENCE_LEVEL)
        method = "newcombe"
    return {"ci_low": float(interval.low), "ci_high": float(interval.high), "ci_method": method}


def _by_group_rows(audit, pred, *, n_permutations: int) -> list[dict]:
    """The by-group rows of one fit: every declared group attribute and intersection x rate."""
    from faircode.groups import GROUP_METRICS, compare_groups, group_labels

    spec = audit.manifest.groups
    if spec is None:
        return []
    random_state = int(audit.manifest.random_state)
    margin = audit.manifest.practical_margin.difference
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
            # Records, not iterrows: the same Python values per cell without a Series per group.
            records = dict(zip(c.by_group.index, c.by_group.to_dict("records")))
            reference = records.get(c.reference)
            for group, g in records.items():
                row = _group_row(audit, pred, labels, c, group, g, random_state=seed)
                if reference is not None and group != c.reference:
                    row.update(group_comparison_columns(g, reference, margin=margin))
                rows.append(row)
    return rows


def _group_row(audit, pred, labels, c, group: str, g, *, random_state: int) -> dict:
    """One by-group row: group ``group`` (its line ``g`` of ``c.by_group``) of comparison ``c``.

    ``labels`` is the attribute's `faircode.groups.GroupLabels`, ``c`` its
    `faircode.groups.GroupComparison` for one rate, ``g`` the group's line as a dict of its
    columns; the max-gap columns repeat on every group.
    """
    test, omnibus = c.max_gap_test, c.omnibus_test
    small = f"fewer than {c.min_size} rows: reported, left out of the largest gap and the tests"
    return {
        "audit": audit.slug,
        "audit_name": audit.name,
        "strategy": pred.strategy,
        "model": pred.model,
        "attribute": labels.name,
        "attribute_kind": labels.kind,
        "group": group,
        "reference_group": labels.reference,
        "metric": c.metric,
        "value": g["value"],
        "ci_low": g["ci_low"],
        "ci_high": g["ci_high"],
        "ci_method": "" if pd.isna(g["value"]) else "wilson",
        "n_outcome": int(g["n_outcome"]),
        "n_group": int(g["n_group"]),
        "small_cell": bool(g["small_cell"]),
        "min_size": c.min_size,
        "diff_vs_reference": g["diff_vs_reference"],
        # The comparison with the reference at the audit's margin (verdicts.group_comparison_columns);
        # empty on the reference's own row. Adjusted and judged once every row is in (tables).
        "diff_vs_reference_ci_low": float("nan"),
        "diff_vs_reference_ci_high": float("nan"),
        "ratio_vs_reference": g["ratio_vs_reference"],
        "p_value_vs_reference": g["p_value_vs_reference"],
        "p_value_vs_reference_holm": g["p_value_vs_reference_holm"],
        "margin_low": float("nan"),
        "margin_high": float("nan"),
        **EMPTY_EQUIVALENCE,
        "equivalence_p_value_holm": float("nan"),
        "verdict": "",
        "max_gap": c.difference,
        "max_gap_high_group": c.high_group or "",
        "max_gap_low_group": c.low_group or "",
        "min_max_ratio": c.ratio,
        "n_groups_compared": len(c.compared),
        "p_value_max_gap": float("nan") if test is None else test.p_value,
        "method_max_gap": "" if test is None else test.method,
        "q_value_max_gap": float("nan"),  # within each audit, once every row is in (tables._by_group_q_values)
        "omnibus_test": "" if omnibus is None else OMNIBUS_TEST,
        "p_value_omnibus": float("nan") if omnibus is None else omnibus.p_value,
        "method_omnibus": "" if omnibus is None else omnibus.method,
        "q_value_omnibus": float("nan"),
        # The Monte Carlo draws of the max-gap test and, when it is Monte Carlo, of the omnibus
        # test (both use N_PERMUTATIONS; a Monte Carlo omnibus only arises with k >= 3 groups,
        # where the max-gap test is Monte Carlo too).
        "n_permutations": pd.NA if test is None or test.n_permutations is None else test.n_permutations,
        "reason": "; ".join(filter(None, (g["reason"], small if g["small_cell"] else "", c.reason))),
        "random_state": random_state,
    }
