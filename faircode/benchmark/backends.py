"""Where the tasks run: in this process, on local loky processes, or on a dask cluster."""

from __future__ import annotations

from collections.abc import Iterator

from faircode.benchmark.task import _TaskRows, run_task


def _execute(tasks, *, n_jobs, backend, scheduler, kwargs) -> Iterator[_TaskRows]:
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
