"""The benchmark's by-group table: its rows, its columns, byte-identical reruns, --check."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import MetricFrame, selection_rate
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from faircode import benchmark as bm
from faircode.cli import main
from faircode.groups import GROUP_METRICS

SUBSET = dict(audits=["recidivism-risk"], strategies=["S2"], models=["logistic_regression"])
FAST = dict(n_permutations=999, progress=False)


@pytest.fixture(scope="module")
def run():
    return bm.run_benchmark(**SUBSET, **FAST, return_by_group=True)


def test_by_group_rows_cover_every_group_and_rate(run):
    from faircode.audit import load_audit
    from faircode.groups import group_labels
    from faircode.models import fit_predict

    fairness, performance, by_group = run
    assert list(by_group.columns) == bm.BY_GROUP_COLUMNS
    groups = group_labels(load_audit("recidivism-risk"), "race")
    assert len(by_group) == len(groups.groups) * len(GROUP_METRICS)
    assert list(by_group["group"][: len(groups.groups)]) == list(groups.groups)
    assert set(by_group["metric"]) == set(GROUP_METRICS)
    assert (by_group["reference_group"] == "White").all()
    # The flag rates by group, against fairlearn on the same predictions.
    audit = load_audit("recidivism-risk")
    pred = fit_predict(audit, strategy="S2", model="logistic_regression")
    frame = MetricFrame(metrics=selection_rate, y_true=pred.y_true, y_pred=pred.y_pred,
                        sensitive_features=groups.labels[pred.rows])
    sel = by_group[by_group["metric"] == "selection_rate"].set_index("group")
    np.testing.assert_allclose(sel["value"], frame.by_group.reindex(sel.index), atol=1e-12)
    big = sel[~sel["small_cell"]]
    assert sel["max_gap"].iloc[0] == pytest.approx(big["value"].max() - big["value"].min(), abs=1e-12)
    assert sel["min_max_ratio"].iloc[0] == pytest.approx(big["value"].min() / big["value"].max(), abs=1e-12)
    assert sel["n_groups_compared"].iloc[0] == len(big)
    assert sel.loc["Black", "diff_vs_reference"] == pytest.approx(sel.loc["Black", "value"] - sel.loc["White", "value"])
    low, high = proportion_confint(sel["n_outcome"], sel["n_group"], method="wilson")
    np.testing.assert_allclose(sel["ci_low"], low, atol=1e-12)
    np.testing.assert_allclose(sel["ci_high"], high, atol=1e-12)
    tested = big.drop(index="White")
    np.testing.assert_allclose(tested["p_value_vs_reference_holm"],
                               multipletests(tested["p_value_vs_reference"], method="holm")[1], rtol=1e-12)
    small = sel[sel["small_cell"]]
    assert small["p_value_vs_reference"].isna().all()
    assert small["reason"].str.contains("fewer than 30 rows: reported, left out of the largest gap").all()
    assert (sel["method_max_gap"] == "monte_carlo").all() and (sel["n_permutations"] == 999).all()
    assert fairness["attribute"].nunique() == 3 and len(performance) == 1  # the other tables are unchanged


def test_two_runs_write_identical_by_group_files(run, tmp_path):
    bm.write_results(*run[:2], tmp_path / "one", by_group=run[2])
    again = bm.run_benchmark(**SUBSET, **FAST, return_by_group=True, n_jobs=2)
    bm.write_results(*again[:2], tmp_path / "two", by_group=again[2])
    assert (tmp_path / "one" / bm.BY_GROUP_FILE).read_bytes() == (tmp_path / "two" / bm.BY_GROUP_FILE).read_bytes()
    assert bm.compare_results(*again[:2], tmp_path / "one", by_group=again[2]).empty


def test_check_reports_a_changed_by_group_cell_with_its_group(run, tmp_path):
    bm.write_results(*run[:2], tmp_path, by_group=run[2])
    path = tmp_path / bm.BY_GROUP_FILE
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    row = table.index[(table["group"] == "Hispanic") & (table["metric"] == "precision")][0]
    table.loc[row, "n_group"] = "1"
    table.to_csv(path, index=False)
    diffs = bm.compare_results(*run[:2], tmp_path, by_group=run[2])
    assert diffs[["file", "group", "metric", "column", "committed"]].to_dict("records") == [
        {"file": bm.BY_GROUP_FILE, "group": "Hispanic", "metric": "precision", "column": "n_group", "committed": "1"}
    ]
    path.unlink()
    with pytest.raises(FileNotFoundError, match="results_by_group.csv does not exist"):
        bm.compare_results(*run[:2], tmp_path, by_group=run[2])


def test_a_partial_run_replaces_only_its_own_by_group_rows(run, tmp_path):
    committed = run[2].copy()
    other = committed.assign(strategy="S0")  # stands in for another task's committed rows
    bm.write_results(*run[:2], tmp_path, by_group=pd.concat([other, committed], ignore_index=True))
    changed = committed.assign(value=0.5)
    merged = bm.merge_by_group(changed, tmp_path)
    assert len(merged) == 2 * len(committed)
    assert (merged.loc[merged["strategy"] == "S2", "value"] == 0.5).all()
    assert (merged.loc[merged["strategy"] == "S0", "value"].to_numpy() == committed["value"].to_numpy()).all() or \
        merged.loc[merged["strategy"] == "S0", "value"].isna().equals(committed["value"].isna())


def test_the_command_writes_and_checks_the_by_group_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # rich would fold the long column names of the diff table
    args = ["benchmark", "--audit", "recidivism-risk", "--strategy", "S2", "--model", "logistic_regression",
            "--output", str(tmp_path), "--no-progress"]
    assert main(args) == 0
    assert (tmp_path / bm.BY_GROUP_FILE).is_file()
    assert "42 by-group rows" in " ".join(capsys.readouterr().out.split())  # 6 groups x 7 rates
    assert main([*args, "--check"]) == 0
    table = pd.read_csv(tmp_path / bm.BY_GROUP_FILE, dtype=str, keep_default_na=False)
    table.loc[0, "p_value_max_gap"] = "0.5"
    table.to_csv(tmp_path / bm.BY_GROUP_FILE, index=False)
    assert main([*args, "--check"]) == 1
    out = "".join(capsys.readouterr().out.split())  # rich folds long cells
    assert "p_value_max_gap" in out and "raceBlack" in out


def test_omnibus_columns_are_the_chi_squared_test_of_the_compared_groups(run):
    from scipy.stats import chi2_contingency

    by_group = run[2]
    assert (by_group["omnibus_test"] == "chi2_homogeneity").all()
    for metric, rows in by_group.groupby("metric"):
        big = rows[~rows["small_cell"]]
        table = np.column_stack([big["n_outcome"], big["n_group"] - big["n_outcome"]]).astype(float)
        stat, p, dof, expected = chi2_contingency(table, correction=False)
        assert rows["p_value_omnibus"].nunique() == 1  # one test per family, repeated on its rows
        if rows["method_omnibus"].iloc[0] == "asymptotic":
            assert rows["p_value_omnibus"].iloc[0] == pytest.approx(p, rel=1e-9), metric
        else:
            assert rows["method_omnibus"].iloc[0] in ("exact", "monte_carlo")


def test_family_q_values_adjust_one_p_per_family_within_each_audit(run):
    from results_oracles import check_family_q_values

    by_group = run[2]
    # BH over one p-value per family, with the digits a Monte Carlo error supports (issue 47)
    check_family_q_values(by_group.assign(**{c: [float("%.10g" % v) for v in by_group[c]]
                                             for c in ("p_value_max_gap", "p_value_omnibus")}))
    for q_column in ("q_value_max_gap", "q_value_omnibus"):
        # every row of a family carries the family's q-value
        assert (by_group.groupby("metric")[q_column].nunique() == 1).all()


def test_a_partial_check_adjusts_q_values_within_the_committed_audit(run, tmp_path):
    committed = run[2].copy()
    other = committed.assign(strategy="S0", p_value_max_gap=0.001, p_value_omnibus=0.9)
    whole = bm.tables._sorted_by_group(pd.concat([other, committed], ignore_index=True).to_dict("records"))
    bm.write_results(*run[:2], tmp_path, by_group=whole)
    # 14 families in the audit now: the run's 7 are adjusted with the 7 others, not alone.
    mine = whole[whole["strategy"] == "S2"]
    assert not np.allclose(mine["q_value_omnibus"].to_numpy(), run[2]["q_value_omnibus"].to_numpy())
    assert bm.compare_results(*run[:2], tmp_path, by_group=run[2]).empty
