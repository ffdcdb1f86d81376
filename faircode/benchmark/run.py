"""`run_benchmark`: plan the tasks, run them on a backend, assemble the tables."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import pandas as pd

from faircode.benchmark.backends import _execute
from faircode.benchmark.columns import N_PERMUTATIONS
from faircode.benchmark.plan import plan_fits, plan_tasks
from faircode.benchmark.tables import _add_q_values, _sorted_by_group, _sorted_fairness, _sorted_performance
from faircode.benchmark.task import _TaskRows


def _validate_run(n_jobs, backend, scheduler, n_permutations):
    if backend not in ("joblib", "dask"):
        raise ValueError(f"`backend` must be 'joblib' or 'dask', got {backend!r}")
    if backend == "dask" and scheduler is None:
        raise ValueError("`scheduler` (an address or a distributed.Client) is required with backend='dask'")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"`n_jobs` must be a positive integer or -1 (all cores), got {n_jobs!r}")
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, int) or n_permutations < 1:
        raise ValueError(f"`n_permutations` must be a positive integer, got {n_permutations!r}")


def _with_progress_bar(results: Iterable[_TaskRows], *, total: int) -> Iterator[_TaskRows]:
    # The bar goes to stderr so that a piped stdout stays the command's own output.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True)) as bar:
        job = bar.add_task("benchmark (audit x strategy x model)", total=total)
        for rows in results:
            yield rows
            bar.advance(job)


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
        Parallel worker processes (forked from this one on Linux, joblib's loky elsewhere); -1 = all cores. Ignored with dask.
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
    q-value of the row it repeats. ``significant`` is ``q_value < ALPHA``, empty where the gap
    is undefined.

    Example
    -------
    >>> fairness, performance = run_benchmark(audits=["german-credit"], strategies=["S0"],
    ...     models=["logistic_regression"], progress=False)  # doctest: +SKIP
    """
    _validate_run(n_jobs, backend, scheduler, n_permutations)
    tasks = plan_tasks(audits=audits, strategies=strategies, models=models)
    # S2 and S3 of one model share a fit (S3 is S2's fitted model, post-processed): one unit of work.
    results = _execute(plan_fits(tasks), n_jobs=n_jobs, backend=backend, scheduler=scheduler,
                       kwargs={"n_permutations": n_permutations})
    if progress:
        results = _with_progress_bar(results, total=len(tasks))
    fairness_rows: list[dict] = []
    performance_rows: list[dict] = []
    by_group_rows: list[dict] = []
    for fair, perf, groups in results:
        fairness_rows.extend(fair)
        performance_rows.append(perf)
        by_group_rows.extend(groups)
    fairness = _add_q_values(_sorted_fairness(fairness_rows))
    performance = _sorted_performance(performance_rows)
    if return_by_group:
        return fairness, performance, _sorted_by_group(by_group_rows)
    return fairness, performance
