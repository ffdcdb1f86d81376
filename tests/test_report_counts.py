"""count_categories: one pass over the data, the same integers from pandas and from Dask (on a
real distributed.LocalCluster for a folder of Parquet files), and a score's exact median with
"above the median" strictly above it.

Dask DataFrame imports pyarrow, and Parquet needs it: the tests of Dask and Parquet are skipped
where pyarrow is not installed (the lock does not hold it yet)."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from faircode.data import project_root
from faircode.manifest import ManifestError
from faircode.report import ABOVE, NOT_ABOVE, count_categories, data_sha256, load_report_manifest, report_tables

from report_data import frame, manifest, write, write_manifest

ROOT = project_root()
SCORE = {"score": {"column": "score"}}


def _dask():
    pytest.importorskip("pyarrow", reason="Dask DataFrame and Parquet need pyarrow, which the lock does not hold yet")
    return pytest.importorskip("dask.dataframe")


def _above_by_hand(data: pd.DataFrame, median: float) -> pd.Series:
    """People strictly above ``median``, by sex, counted with pandas."""
    known = data[data["sex"].isin(["F", "M"])]
    return (known["score"] > median).groupby(known["sex"].map({"F": "Female", "M": "Male"})).sum()


@pytest.mark.parametrize("scores, median", [([1, 2, 2, 2, 3, 2], 2.0), ([1, 2, 3, 4], 2.5), ([5, 5, 5], 5.0)])
def test_above_the_median_is_strictly_above_it(tmp_path, scores, median):
    # Ties at the median are not above it: of 1, 2, 2, 2, 2, 3 only the 3 is scored.
    data = pd.DataFrame({"sex": ["F", "M"] * len(scores), "race": "W", "score": np.repeat(scores, 2).astype(float)})
    m = load_report_manifest(write(tmp_path, data, outcome=SCORE))
    counts = count_categories(m)
    assert counts.median == median == np.median(data["score"])
    assert counts.outcomes().get(ABOVE, 0) == int((data["score"] > median).sum())
    sex = report_tables(counts, m).table("sex")
    assert sex.row("Female").n_selected == _above_by_hand(data, median)["Female"]


def test_the_scoring_rate_counts_every_person_against_the_whole_samples_median(tmp_path):
    data = frame(seed=20, n=1001)
    m = load_report_manifest(write(tmp_path, data, outcome=SCORE))
    counts = count_categories(m)
    # The median of all 1,001 people, unknown categories included (6 RCNY 5-300: the full sample).
    assert counts.median == float(np.median(data["score"]))
    tables = report_tables(counts, m)
    assert tables.rate_name == "scoring rate" and tables.median == counts.median
    by_hand = _above_by_hand(data, counts.median)
    for category in ("Female", "Male"):
        assert tables.table("sex").row(category).n_selected == by_hand[category]
    assert counts.outcomes()[NOT_ABOVE] + counts.outcomes()[ABOVE] == 1001


def test_a_missing_score_is_a_problem_naming_its_first_line(tmp_path):
    data = frame(seed=21, n=50)
    data.loc[9, "score"] = np.nan
    path = write(tmp_path, data, outcome=SCORE)
    with pytest.raises(ManifestError) as info:
        load_report_manifest(path)
    [problem] = info.value.problems
    assert "outcome.score.column: 1 row of" in problem and "no score in 'score' (first on line 11)" in problem


def test_a_score_column_holding_text_is_named(tmp_path):
    data = frame(seed=22, n=50).astype({"score": object})
    data.loc[3, "score"] = "high"
    with pytest.raises(ManifestError, match=r"outcome.score.column: cannot read 'score'"):
        load_report_manifest(write(tmp_path, data, outcome=SCORE))


def test_the_exact_median_by_radix_selection_equals_numpys():
    dd = _dask()
    from faircode.report._counts import _dask_middle

    rng = np.random.default_rng(23)
    cases = [rng.normal(size=2001) * 1e-3, rng.integers(-3, 4, size=1000).astype(float), -rng.exponential(size=7),
             np.r_[np.zeros(50), -np.zeros(50), 1e-310, -1e-310], rng.choice([0.1, 0.2, 0.3], size=999), np.r_[4.0]]
    for i, values in enumerate(cases):
        with_nan = np.r_[values, np.nan, np.nan]
        parts = dd.from_pandas(pd.DataFrame({"s": with_nan}), npartitions=min(5, with_nan.size)).to_delayed()
        assert _dask_middle(parts, "s") == np.median(values), i


@pytest.mark.parametrize("outcome", [None, SCORE])
def test_pandas_and_dask_give_identical_counts(tmp_path, outcome):
    _dask()
    changes = {"outcome": outcome} if outcome else {}
    m = load_report_manifest(write(tmp_path, frame(seed=24, n=5000), **changes))
    pandas_counts, dask_counts = count_categories(m, engine="pandas"), count_categories(m, engine="dask")
    assert (pandas_counts.engine, dask_counts.engine) == ("pandas", "dask")
    assert dict(dask_counts.counts) == dict(pandas_counts.counts)
    assert dask_counts.n_rows == pandas_counts.n_rows == 5000
    assert dask_counts.median == pandas_counts.median


def test_pandas_and_dask_give_identical_counts_of_compas():
    _dask()
    m = load_report_manifest(ROOT / "reports" / "compas-ll144" / "report.yaml")
    assert dict(count_categories(m, engine="dask").counts) == dict(count_categories(m, engine="pandas").counts)


def _parquet_folder(folder, data: pd.DataFrame, parts: int = 3):
    folder.mkdir()
    for i, chunk in enumerate(np.array_split(np.arange(len(data)), parts)):
        data.iloc[chunk].to_parquet(folder / f"part-{i}.parquet", index=False)
    (folder / "_SUCCESS").write_text("")  # a marker file: not data
    return folder


def test_a_folders_digest_is_that_of_its_sorted_name_digest_lines(tmp_path):
    pytest.importorskip("pyarrow", reason="Parquet needs pyarrow, which the lock does not hold yet")
    folder = _parquet_folder(tmp_path / "data", frame(seed=25, n=300))
    lines = "".join(f"part-{i}.parquet {hashlib.sha256((folder / f'part-{i}.parquet').read_bytes()).hexdigest()}\n"
                    for i in range(3))
    assert data_sha256(folder) == hashlib.sha256(lines.encode()).hexdigest()
    before = data_sha256(folder)
    (folder / "part-2.parquet").rename(folder / "part-3.parquet")
    assert data_sha256(folder) != before


def test_a_folder_of_parquet_files_is_counted_on_a_local_cluster(tmp_path):
    _dask()
    from distributed import Client, LocalCluster, get_task_stream

    data = frame(seed=26, n=6000)
    folder = _parquet_folder(tmp_path / "data", data, parts=4)
    raw = manifest(folder, outcome=SCORE)
    path = write_manifest(tmp_path, raw)
    (tmp_path / "whole").mkdir()
    expected = count_categories(load_report_manifest(write(tmp_path / "whole", data, outcome=SCORE)), engine="pandas")
    # Two worker processes, each importing pandas, pyarrow and Dask: on a loaded 2-core machine
    # starting them can outlast distributed's 30 s default, so the startup gets the deadline
    # tests/test_benchmark_dask_cluster.py gives its cluster.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      timeout="180s") as cluster, \
            Client(cluster, timeout="180s") as client, get_task_stream(client) as stream:
        m = load_report_manifest(path)  # a folder: counted with Dask, on the cluster
        counts = count_categories(m)
    assert counts.engine == "dask" and dict(counts.counts) == dict(expected.counts)
    assert counts.median == expected.median == float(np.median(data["score"]))
    assert {task["worker"] for task in stream.data} and len(stream.data) >= 4
