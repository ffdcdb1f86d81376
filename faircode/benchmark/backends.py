"""Where the tasks run: in this process, on local worker processes, or on a dask cluster."""

from __future__ import annotations

import functools
import multiprocessing
import os
from collections.abc import Iterator

from faircode.benchmark.task import _TaskRows, run_tasks


def _execute(groups, *, n_jobs, backend, scheduler, kwargs) -> Iterator[_TaskRows]:
    """Run each group of tasks that share a fit (`faircode.benchmark.plan.plan_fits`); yield task rows.

    The local worker processes, if any, are started before this returns, so before the caller
    starts a progress bar's thread (a fork copies no thread, and no lock one of them held).
    """
    if backend == "joblib" and n_jobs == 1:
        return (rows for g in groups for rows in run_tasks(g, **kwargs))
    if backend == "joblib" and _can_fork():
        return _forked(groups, n_jobs=n_jobs, kwargs=kwargs)
    return _joblib(groups, n_jobs=n_jobs, backend=backend, scheduler=scheduler, kwargs=kwargs)


def _can_fork() -> bool:
    return ("fork" in multiprocessing.get_all_start_methods()
            and multiprocessing.get_start_method(allow_none=True) in (None, "fork"))


def _forked(groups, *, n_jobs, kwargs) -> Iterator[_TaskRows]:
    """Local workers forked from this process, after it has imported the models and loaded the audits.

    loky's workers (joblib's default) start a fresh interpreter each: every one imported
    scikit-learn, fairlearn and SciPy and read every audit again, a quarter of the benchmark's
    CPU on 2 cores (issue 26). Forked workers inherit both (plan_tasks loaded the audits
    through load_audit's per-process cache). Forking is safe here: this process has fitted
    nothing, so no OpenMP pool exists yet, and the workers limit their own threads
    (faircode.models). Where fork is not the platform's way (macOS, Windows) joblib's loky runs
    the same tasks. The results do not depend on the backend: each row's seed comes from its key.
    """
    import faircode.models  # noqa: F401  (imported once here, inherited by every worker)

    groups = list(groups)
    processes = (os.cpu_count() or 1) if n_jobs == -1 else n_jobs
    pool = multiprocessing.get_context("fork").Pool(max(1, min(processes, len(groups))))
    work = functools.partial(run_tasks, **kwargs)

    def results() -> Iterator[_TaskRows]:
        try:
            for rows in pool.imap_unordered(work, groups):
                yield from rows
            pool.close()
        except BaseException:
            pool.terminate()
            raise
        finally:
            pool.join()

    return results()


def _joblib(groups, *, n_jobs, backend, scheduler, kwargs) -> Iterator[_TaskRows]:
    # One code path for a cluster and loky: joblib's Parallel, on local loky processes or on a
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
            for rows in Parallel(return_as="generator_unordered")(delayed(run_tasks)(g, **kwargs) for g in groups):
                yield from rows
    finally:
        if client is not None and client is not scheduler:
            client.close()
