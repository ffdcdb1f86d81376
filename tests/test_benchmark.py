"""faircode.benchmark and the `faircode benchmark` command on a small subset."""

import shutil

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from faircode import benchmark as bm
from faircode.cli import main
from faircode.metrics import GAP_METRICS

SUBSET = dict(audits=["german-credit"], strategies=["S0"], models=["logistic_regression"])
# Small resample counts keep the tests fast; determinism does not depend on them.
FAST = dict(n_permutations=999, progress=False)


@pytest.fixture(scope="module")
def subset_run():
    return bm.run_benchmark(**SUBSET, **FAST)


@pytest.fixture(scope="module")
def written(subset_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    bm.write_results(*subset_run, out)
    return out


def _bytes(out):
    return [(out / name).read_bytes() for name in (bm.FAIRNESS_FILE, bm.PERFORMANCE_FILE)]


def test_one_row_per_attribute_and_metric_with_the_columns(subset_run):
    from faircode.audit import load_audit

    fairness, performance = subset_run
    audit = load_audit("german-credit")
    assert list(fairness.columns) == bm.FAIRNESS_COLUMNS
    assert list(performance.columns) == bm.PERFORMANCE_COLUMNS
    assert len(fairness) == len(audit.masks) * len(GAP_METRICS)
    expected_keys = {
        ("german-credit", "S0", "logistic_regression", attr, metric)
        for attr in audit.masks
        for metric in GAP_METRICS
    }
    assert set(fairness[bm.FAIRNESS_KEY].apply(tuple, axis=1)) == expected_keys
    assert len(performance) == 1
    assert (fairness["audit_name"] == audit.name).all()


def test_gap_and_group_values_match_the_predictions(subset_run):
    """Recompute the selection rates directly from the fitted predictions (a closed form)."""
    from faircode.audit import load_audit
    from faircode.models import fit_predict

    fairness, _ = subset_run
    audit = load_audit("german-credit")
    pred = fit_predict(audit, strategy="S0", model="logistic_regression")
    for attr in audit.masks:
        dis = audit.masks[attr][pred.rows] == 1
        adv = audit.reference_masks[attr][pred.rows] == 1
        sr_dis, sr_adv = pred.y_pred[dis].mean(), pred.y_pred[adv].mean()
        row = fairness[(fairness.attribute == attr) & (fairness.metric == "demographic_parity_difference")].iloc[0]
        assert row.gap == pytest.approx(sr_dis - sr_adv)
        assert (row.n_disadvantaged, row.n_advantaged) == (dis.sum(), adv.sum())
        di = fairness[(fairness.attribute == attr) & (fairness.metric == "disparate_impact_ratio")].iloc[0]
        # The four-fifths rule's ratio: rates of the favourable decision (not flagged), not of the flag.
        assert audit.manifest.target.favourable == "negative"
        assert di.kind == "ratio" and di.gap == pytest.approx((1 - sr_dis) / (1 - sr_adv))
        assert (di.value_disadvantaged, di.value_advantaged) == pytest.approx((1 - sr_dis, 1 - sr_adv))
        assert di.ci_low <= di.gap <= di.ci_high
        # Same null hypothesis (equal selection rates, so equal non-selection rates), same test.
        assert di.p_value == row.p_value


def test_q_value_is_statsmodels_fdr_bh_within_the_audit_without_repeated_tests(subset_run):
    fairness, _ = subset_run
    p = fairness["p_value"].to_numpy(dtype=float)
    q = fairness["q_value"].to_numpy(dtype=float)
    repeats = (fairness["same_test_as"] != "").to_numpy()
    # The ratio repeats the selection-rate test; equal opportunity (favourable negative) the FPR test.
    assert set(fairness.loc[repeats, "metric"]) == {"disparate_impact_ratio", "equal_opportunity_difference"}
    family = ~np.isnan(p) & ~repeats
    assert family.sum() >= 2
    expected = multipletests(p[family], method="fdr_bh")[1]
    np.testing.assert_allclose(q[family], expected, rtol=1e-12)
    assert np.isnan(q[np.isnan(p)]).all()
    for _, row in fairness[repeats].iterrows():
        twin = fairness[(fairness.attribute == row.attribute) & (fairness.metric == row.same_test_as)].iloc[0]
        assert row.p_value == twin.p_value and (row.q_value == twin.q_value or np.isnan(twin.q_value))
    sig = fairness["significant"]
    ok = ~np.isnan(q)
    assert (sig[ok].astype(bool).to_numpy() == (q[ok] < 0.05)).all()


def test_q_values_are_computed_within_each_audit():
    """Two audits' rows adjusted together equal each audit's rows adjusted alone."""
    rows = []
    for audit, ps in (("x", [0.001, 0.02, 0.04]), ("y", [0.03, 0.5])):
        for i, p in enumerate(ps):
            rows.append(dict(audit=audit, strategy="S0", model="m", attribute="a", metric=f"m{i}",
                             p_value=p, same_test_as=""))
    rows.append(dict(audit="x", strategy="S0", model="m", attribute="a", metric="ratio", p_value=0.02,
                     same_test_as="m1"))
    q = bm._family_q_values(pd.DataFrame(rows))
    np.testing.assert_allclose(q[:3], multipletests([0.001, 0.02, 0.04], method="fdr_bh")[1])
    np.testing.assert_allclose(q[3:5], multipletests([0.03, 0.5], method="fdr_bh")[1])
    assert q[5] == q[1]


def test_intervals_are_score_intervals_matching_statsmodels(subset_run):
    from statsmodels.stats.proportion import confint_proportions_2indep
    from test_significance import _mover_r_by_hand  # one written-out MOVER-R oracle for the tests

    fairness, _ = subset_run
    defined = fairness[fairness["gap"].notna()]
    assert set(defined["ci_method"]) == {"newcombe", "mover"}
    assert (fairness.loc[fairness["gap"].isna(), "ci_method"] == "").all()
    for _, row in defined.iterrows():
        k1 = round(row.value_disadvantaged * row.n_disadvantaged)
        k2 = round(row.value_advantaged * row.n_advantaged)
        if row.kind == "difference":
            low, high = confint_proportions_2indep(k1, row.n_disadvantaged, k2, row.n_advantaged, method="newcomb")
        else:  # MOVER-R over statsmodels' Wilson intervals, written out (Donner and Zou 2012)
            low, high = _mover_r_by_hand(k1, row.n_disadvantaged, k2, row.n_advantaged)
        assert (row.ci_low, row.ci_high) == pytest.approx((low, high), rel=1e-6, abs=1e-9)
        assert row.ci_low < row.ci_high  # never a zero-width interval


def test_undefined_rows_are_empty_with_a_reason(subset_run):
    fairness, _ = subset_run
    undefined = fairness[fairness["gap"].isna()]
    assert (undefined["reason"] != "").all()
    assert undefined["p_value"].isna().all() and undefined["significant"].isna().all()
    defined = fairness[fairness["gap"].notna() & (fairness["kind"] == "difference")]
    assert (defined["reason"] == "").all()


def test_performance_matches_sklearn(subset_run):
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    from faircode.audit import load_audit
    from faircode.models import fit_predict

    _, performance = subset_run
    pred = fit_predict(load_audit("german-credit"), strategy="S0", model="logistic_regression")
    row = performance.iloc[0]
    assert row.balanced_accuracy == pytest.approx(balanced_accuracy_score(pred.y_true, pred.y_pred))
    assert row.roc_auc == pytest.approx(roc_auc_score(pred.y_true, pred.y_score))
    assert row.n_test == len(pred.rows)


def test_rerun_is_byte_identical(written, tmp_path):
    bm.write_results(*bm.run_benchmark(**SUBSET, **FAST), tmp_path)
    assert _bytes(tmp_path) == _bytes(written)


def test_n_jobs_2_is_byte_identical_to_n_jobs_1(tmp_path):
    subset = dict(audits=["german-credit"], strategies=["S0", "S1"], models=["logistic_regression"])
    bm.write_results(*bm.run_benchmark(**subset, **FAST, n_jobs=1), tmp_path / "one")
    bm.write_results(*bm.run_benchmark(**subset, **FAST, n_jobs=2), tmp_path / "two")
    assert _bytes(tmp_path / "one") == _bytes(tmp_path / "two")


def test_row_seed_is_stable_crc32():
    import zlib

    assert bm._row_seed(7, "a", "b") == zlib.crc32(b"7|a|b")
    assert bm._row_seed(7, "a", "b") != bm._row_seed(8, "a", "b")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(backend="spark"), r"`backend` must be 'joblib' or 'dask'"),
        (dict(backend="dask"), r"`scheduler` .* is required"),
        (dict(n_jobs=0), r"`n_jobs` must be a positive integer or -1"),
        (dict(n_permutations=0), r"`n_permutations` must be a positive integer"),
        (dict(strategies=["S9"]), r"`strategies` has unknown value\(s\) 'S9'"),
        (dict(models=["svm"]), r"`models` has unknown value\(s\) 'svm'; known"),
        (dict(models=["logistic_regresion"]),
         r"'logistic_regresion' \(did you mean 'logistic_regression'\?\); known"),
    ],
)
def test_validation_messages(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bm.run_benchmark(**{**SUBSET, "progress": False, **kwargs})


@pytest.mark.parametrize(("argv", "said"), [
    (["--jobs", "0"], "--jobs must be a positive integer or -1 (all cores), got 0"),
    (["--strategy", "S9"], "--strategy has unknown value(s) 'S9'"),
])
def test_the_command_line_names_the_flag_not_the_argument(capsys, argv, said):
    # A fresh user typed --jobs 0 and read "`n_jobs` must be...", a name the command line lacks.
    assert main(["benchmark", "--audit", "german-credit", "--no-progress", *argv]) == 2
    out = " ".join(capsys.readouterr().out.split())
    assert said in out and "n_jobs" not in out, out


def test_the_help_says_a_subset_is_merged_into_the_committed_files(capsys):
    # It said "Writing a subset replaces the files with that subset"; the run merges it in.
    with pytest.raises(SystemExit):
        main(["benchmark", "-h"])
    assert "is merged into the committed files: its rows are replaced, the others kept" in " ".join(
        capsys.readouterr().out.split())


def test_compare_results_is_empty_for_the_same_run(subset_run, written):
    assert bm.compare_results(*subset_run, written).empty


def test_cli_check_passes_then_detects_a_tampered_row(written, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # rich wraps the diff table to the terminal width
    out = tmp_path / "results"
    shutil.copytree(written, out)
    argv = ["benchmark", "--audit", "german-credit", "--strategy", "S0", "--model", "logistic_regression",
            "--output", str(out), "--no-progress"]
    # The CLI runs the committed resample counts; write them first with the CLI itself.
    assert main(argv) == 0
    assert main([*argv, "--check"]) == 0
    capsys.readouterr()

    df = pd.read_csv(out / bm.FAIRNESS_FILE, dtype=str, keep_default_na=False)
    df.loc[3, "gap"] = "0.123456"
    df.to_csv(out / bm.FAIRNESS_FILE, index=False, lineterminator="\n")
    assert main([*argv, "--check"]) == 1
    report = capsys.readouterr().out
    assert "0.123456" in report and df.loc[3, "metric"] in report


def test_check_of_a_subset_uses_the_whole_committed_table_for_q(written, tmp_path):
    """A subset run's q-values are recomputed within the committed table, so --check passes."""
    two = dict(audits=["german-credit"], strategies=["S0", "S1"], models=["logistic_regression"])
    bm.write_results(*bm.run_benchmark(**two, **FAST), tmp_path)
    part = bm.run_benchmark(**SUBSET, **FAST)
    assert bm.compare_results(*part, tmp_path).empty


def test_cli_needs_a_subcommand(capsys):
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2


def test_dask_local_cluster_gives_the_same_csv_as_joblib(written, tmp_path):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            result = bm.run_benchmark(**SUBSET, **FAST, backend="dask", scheduler=client)
        bm.write_results(*result, tmp_path / "client")
        # The command line's path: a scheduler address, the client made (and closed) inside.
        argv = ["benchmark", "--audit", "german-credit", "--strategy", "S0", "--model", "logistic_regression",
                "--no-progress"]
        assert main([*argv, "--backend", "dask", "--scheduler", cluster.scheduler_address,
                     "--output", str(tmp_path / "address")]) == 0
    assert main([*argv, "--output", str(tmp_path / "joblib")]) == 0
    assert _bytes(tmp_path / "client") == _bytes(written)
    assert _bytes(tmp_path / "address") == _bytes(tmp_path / "joblib")


def test_cli_dask_without_scheduler_is_a_usage_error(capsys):
    assert main(["benchmark", "--backend", "dask", "--no-progress"]) == 2
    assert "--scheduler" in capsys.readouterr().out


def test_cli_unknown_audit_is_a_usage_error(capsys):
    assert main(["benchmark", "--audit", "no-such-audit", "--no-progress"]) == 2
    assert "no audit 'no-such-audit'" in capsys.readouterr().out


def test_a_partial_run_updates_its_rows_and_keeps_the_rest(tmp_path):
    # Regression: `faircode benchmark --audit A` used to overwrite the whole committed table with
    # the subset. Re-running a subset of the committed benchmark must leave both files byte for byte.
    import shutil
    from pathlib import Path

    from faircode.cli import main

    committed = Path(__file__).resolve().parents[1] / "results"
    for name in ("results_fairness.csv", "results_performance.csv"):
        shutil.copyfile(committed / name, tmp_path / name)
    code = main(["benchmark", "--audit", "german-credit", "--model", "logistic_regression",
                 "--output", str(tmp_path), "--no-progress"])
    assert code == 0
    for name in ("results_fairness.csv", "results_performance.csv"):
        assert (tmp_path / name).read_bytes() == (committed / name).read_bytes()


# --------------------------------------------------------------------------- tolerances of --check


def test_every_results_column_has_a_declared_kind():
    assert set(bm.FAIRNESS_COLUMNS) | set(bm.PERFORMANCE_COLUMNS) | set(bm.BY_GROUP_COLUMNS) <= set(bm.COLUMN_KINDS)


def _tampered(written, tmp_path, file, edit):
    out = tmp_path / "committed"
    shutil.copytree(written, out)
    df = pd.read_csv(out / file, dtype=str, keep_default_na=False)
    edit(df)
    df.to_csv(out / file, index=False, lineterminator="\n")
    return out


def _moved(value: str, delta: float) -> str:
    return "%.10g" % (float(value) + delta)


def _first(df, **where):
    mask = np.ones(len(df), dtype=bool)
    for col, value in where.items():
        mask &= (df[col] == value).to_numpy()
    return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize("factor, fails", [(0.99, False), (1.01, True)])
@pytest.mark.parametrize("column", ["roc_auc", "accuracy", "balanced_accuracy"])
def test_check_fitted_performance_just_inside_and_outside(subset_run, written, tmp_path, column, factor, fails):
    from faircode.tolerances import FITTED_ATOL

    def edit(df):
        df.loc[0, column] = _moved(df.loc[0, column], factor * FITTED_ATOL)

    diffs = bm.compare_results(*subset_run, _tampered(written, tmp_path, bm.PERFORMANCE_FILE, edit))
    assert (not diffs.empty) == fails
    if fails:
        assert list(diffs["column"]) == [column] and "fitted model" in diffs.loc[0, "tolerance"]


@pytest.mark.parametrize("column", ["n_test", "n_positive"])
def test_check_counts_are_exact(subset_run, written, tmp_path, column):
    def edit(df):
        df.loc[0, column] = str(int(df.loc[0, column]) + 1)

    diffs = bm.compare_results(*subset_run, _tampered(written, tmp_path, bm.PERFORMANCE_FILE, edit))
    assert list(diffs["column"]) == [column] and diffs.loc[0, "tolerance"] == "exact"


@pytest.mark.parametrize("column", ["n_disadvantaged", "significant", "method"])
def test_check_fairness_counts_flags_and_labels_are_exact(subset_run, written, tmp_path, column):
    changed = {"n_disadvantaged": lambda v: str(int(v) + 1), "significant": lambda v: str(v != "True"),
               "method": lambda v: v + "x"}[column]

    def edit(df):
        row = _first(df, metric="demographic_parity_difference")
        df.loc[row, column] = changed(df.loc[row, column])

    diffs = bm.compare_results(*subset_run, _tampered(written, tmp_path, bm.FAIRNESS_FILE, edit))
    assert list(diffs["column"]) == [column]


@pytest.mark.parametrize("factor, fails", [(0.99, False), (1.01, True)])
@pytest.mark.parametrize("metric", ["demographic_parity_difference", "disparate_impact_ratio"])
def test_check_gap_just_inside_and_outside(subset_run, written, tmp_path, metric, factor, fails):
    from faircode.tolerances import FITTED_ATOL

    def edit(df):
        row = _first(df, metric=metric)
        a, b = float(df.loc[row, "value_disadvantaged"]), float(df.loc[row, "value_advantaged"])
        # Difference: the rate bound; ratio a / b: its first-order propagation, by hand.
        band = FITTED_ATOL * (1 / b + a / b**2) if metric == "disparate_impact_ratio" else FITTED_ATOL
        df.loc[row, "gap"] = _moved(df.loc[row, "gap"], factor * band)

    diffs = bm.compare_results(*subset_run, _tampered(written, tmp_path, bm.FAIRNESS_FILE, edit))
    assert (not diffs.empty) == fails
    if fails:
        assert list(diffs["column"]) == ["gap"]


@pytest.mark.parametrize("factor, fails", [(0.99, False), (1.01, True)])
@pytest.mark.parametrize("column, band, rule", [("ci_low", "FITTED_ATOL", "fitted model"),
                                                ("power_at_margin", "POWER_ATOL", "power: |Δ| ≤ 0.005")])
def test_check_score_interval_endpoint_and_power_just_inside_and_outside(subset_run, written, tmp_path, column,
                                                                         band, rule, factor, fails):
    """Score intervals are closed-form in the counts and rates: an endpoint gets the fitted band. The
    power at the margin (issue 45) has its own band (faircode/tolerances.py says why)."""
    from faircode import tolerances

    def edit(df):
        row = _first(df, metric="demographic_parity_difference")
        df.loc[row, column] = _moved(df.loc[row, column], factor * getattr(tolerances, band))

    diffs = bm.compare_results(*subset_run, _tampered(written, tmp_path, bm.FAIRNESS_FILE, edit))
    assert (not diffs.empty) == fails
    if fails:
        assert list(diffs["column"]) == [column] and rule in diffs.loc[0, "tolerance"]


@pytest.mark.parametrize("log10_move, fails", [(0.049, False), (0.051, True)])
@pytest.mark.parametrize("column, metric", [("p_value", "accuracy_difference"),
                                            # Issue 45: an equivalence p-value is a function of the counts,
                                            # like the exact test's: the same band, and its adjustment's.
                                            ("equivalence_p_value", "true_positive_rate_difference"),
                                            ("equivalence_q_value", "true_positive_rate_difference")])
def test_check_p_value_on_the_log_scale(subset_run, written, tmp_path, column, metric, log10_move, fails):
    def edit(df):
        row = _first(df, metric=metric)
        df.loc[row, column] = "%.10g" % (float(df.loc[row, column]) * 10**log10_move)

    # The committed q-values stay as written, so only the edited cell can differ.
    diffs = bm.compare_results(*subset_run, _tampered(written, tmp_path, bm.FAIRNESS_FILE, edit))
    assert (not diffs.empty) == fails
    if fails:
        assert list(diffs["column"]) == [column] and "log10" in diffs.loc[0, "tolerance"]


@pytest.mark.parametrize("column, changed", [("verdict", "gap_shown"), ("margin_high", "0.06"),
                                             ("equivalence_method", "score")])
def test_check_verdicts_margins_and_methods_are_exact(subset_run, written, tmp_path, column, changed):
    def edit(df):
        row = _first(df, metric="precision_difference")
        assert df.loc[row, column] != changed  # german-credit's groups are small: inconclusive, exact tests
        df.loc[row, column] = changed

    diffs = bm.compare_results(*subset_run, _tampered(written, tmp_path, bm.FAIRNESS_FILE, edit))
    assert list(diffs["column"]) == [column] and diffs.loc[0, "tolerance"] == "exact"


def test_check_lists_differences_within_tolerance_on_request(subset_run, written, tmp_path):
    def edit(df):
        df.loc[0, "roc_auc"] = _moved(df.loc[0, "roc_auc"], 9e-6)  # the size of the 2026 BLAS move

    out = _tampered(written, tmp_path, bm.PERFORMANCE_FILE, edit)
    assert bm.compare_results(*subset_run, out).empty
    within = bm.compare_results(*subset_run, out, include_within=True)
    assert list(within["column"]) == ["roc_auc"] and within["within_tolerance"].all()


def test_cli_check_prints_the_exceeded_tolerance(written, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    out = tmp_path / "results"
    argv = ["benchmark", "--audit", "german-credit", "--strategy", "S0", "--model", "logistic_regression",
            "--output", str(out), "--no-progress"]
    assert main(argv) == 0
    df = pd.read_csv(out / bm.PERFORMANCE_FILE, dtype=str, keep_default_na=False)
    df.loc[0, "roc_auc"] = _moved(df.loc[0, "roc_auc"], 2e-4)
    df.to_csv(out / bm.PERFORMANCE_FILE, index=False, lineterminator="\n")
    capsys.readouterr()
    assert main([*argv, "--check"]) == 1
    # The table's title wraps with the length of the temporary folder's path (longer under xdist).
    report = " ".join(capsys.readouterr().out.split())
    assert "beyond tolerance" in report and "roc_auc" in report and "|Δ| ≤ 0.0001" in report


def test_models_fit_with_one_blas_openmp_thread(monkeypatch):
    """Every thread pool (BLAS, OpenMP) is limited to one thread while a model fits."""
    from threadpoolctl import threadpool_info

    import faircode.models as models
    from faircode.audit import load_audit

    seen = []
    real = models.build_model

    def recording(name, random_state):
        est = real(name, random_state)
        fit = est.fit

        def fit_and_record(*args, **kwargs):
            seen.extend(pool["num_threads"] for pool in threadpool_info())
            return fit(*args, **kwargs)

        est.fit = fit_and_record
        return est

    monkeypatch.setattr(models, "build_model", recording)
    for model in ("logistic_regression", "gradient_boosting"):
        models.fit_predict(load_audit("german-credit"), strategy="S0", model=model)
    assert seen and set(seen) == {1}


def test_n_jobs_never_changes_a_number_with_threaded_models(tmp_path):
    subset = dict(audits=["german-credit"], strategies=["S1"], models=["gradient_boosting", "random_forest"])
    bm.write_results(*bm.run_benchmark(**subset, **FAST, n_jobs=1), tmp_path / "one")
    bm.write_results(*bm.run_benchmark(**subset, **FAST, n_jobs=2), tmp_path / "two")
    assert _bytes(tmp_path / "one") == _bytes(tmp_path / "two")


# Every name `faircode.benchmark` offered when it was one module (before issue 18 made it a
# package): callers in faircode, site_src, explainers, bench and tests import them from there.
_NAMES_BEFORE_THE_PACKAGE = [
    "ALPHA", "CONFIDENCE_LEVEL", "N_PERMUTATIONS", "FAIRNESS_FILE", "PERFORMANCE_FILE", "BY_GROUP_FILE",
    "FAIRNESS_KEY", "BY_GROUP_KEY", "PERFORMANCE_KEY", "FAIRNESS_COLUMNS", "PERFORMANCE_COLUMNS",
    "BY_GROUP_COLUMNS", "COLUMN_KINDS", "Task", "default_audits", "plan_tasks", "run_task", "evaluate",
    "run_benchmark", "write_results", "merge_results", "merge_by_group", "compare_results",
    "column_tolerance", "_load_dataset", "_row_seed", "_family_q_values",
]


@pytest.mark.parametrize("name", _NAMES_BEFORE_THE_PACKAGE)
def test_package_keeps_every_name_importable(name):
    assert getattr(bm, name) is not None  # AttributeError when a re-export is dropped


def test_plan_fits_puts_s2_and_s3_of_one_model_in_one_fit():
    tasks = bm.plan_tasks(audits=["german-credit"], models=["logistic_regression", "random_forest"])
    groups = bm.plan_fits(tasks)
    assert sorted(map(repr, (t for g in groups for t in g))) == sorted(map(repr, tasks))  # each task once
    assert [[t.strategy for t in g] for g in groups] == [["S0"], ["S0"], ["S1"], ["S1"], ["S2", "S3"], ["S2", "S3"]]
    assert all(len({(t.audit, t.model) for t in g}) == 1 for g in groups)


def test_shared_fits_on_forked_workers_give_the_per_task_rows(tmp_path, monkeypatch):
    # Issue 26: tasks grouped by fit, run on forked workers (or loky where fork is not
    # available), give byte for byte the rows of one run_task per task in this process.
    from faircode.benchmark import backends

    subset = dict(audits=["german-credit"], strategies=["S2", "S3"], models=["gradient_boosting"])  # threaded: OpenMP after a fork
    bm.write_results(*bm.run_benchmark(**subset, **FAST, n_jobs=2), tmp_path / "forked")
    monkeypatch.setattr(backends, "_can_fork", lambda: False)
    bm.write_results(*bm.run_benchmark(**subset, **FAST, n_jobs=2), tmp_path / "loky")
    monkeypatch.setattr(backends, "run_tasks", lambda g, **kw: [bm.run_task(t, **kw) for t in g])
    bm.write_results(*bm.run_benchmark(**subset, **FAST, n_jobs=1), tmp_path / "per-task")
    assert _bytes(tmp_path / "forked") == _bytes(tmp_path / "per-task") == _bytes(tmp_path / "loky")


def test_run_tasks_refuses_mixed_audits_or_models():
    with pytest.raises(ValueError, match="one audit's tasks for one model"):
        bm.run_tasks([bm.Task("german-credit", "S2", "logistic_regression"),
                      bm.Task("german-credit", "S3", "random_forest")])
    with pytest.raises(ValueError, match="one audit's tasks for one model"):
        bm.run_tasks([])
