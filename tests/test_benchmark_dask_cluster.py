"""The benchmark on a real dask cluster: a `dask scheduler` and two `dask worker` processes on
127.0.0.1, started as a user would start them, give the local run's results within the declared
tolerances (faircode.tolerances, through compare_results)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faircode import benchmark as bm
from faircode.data import project_root

ROOT = project_root()
DASK = Path(sys.executable).with_name("dask")
# Four tasks (one per strategy), so the scheduler has work for both workers.
SUBSET = dict(audits=["german-credit"], strategies=["S0", "S1", "S2", "S3"], models=["logistic_regression"])
FAST = dict(n_permutations=999, progress=False)


def _start(args: list[str], log: Path) -> subprocess.Popen:
    # As a user would start them: from a clone of the repository (workers import faircode and
    # read audits/ and data/ from it), one BLAS thread each, in a process group of their own.
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with open(log, "wb") as out:
        return subprocess.Popen([str(DASK), *args], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in reversed(procs):  # workers first, then the scheduler
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture
def cluster(tmp_path):
    """The address of a scheduler with two single-threaded workers, all separate processes."""
    from distributed import Client

    assert DASK.exists(), f"the dask command line is not installed next to {sys.executable}"
    scheduler_file = tmp_path / "scheduler.json"
    procs = [_start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                     "--scheduler-file", str(scheduler_file)], tmp_path / "scheduler.log")]
    try:
        # Each wait is for the processes to say they are up, however long a loaded machine takes
        # (issue 47, item 8), and ends if one of them has ended instead.
        while not scheduler_file.exists():
            assert procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.2)
        for i in range(2):
            procs.append(_start(["worker", "--scheduler-file", str(scheduler_file), "--host", "127.0.0.1",
                                 "--nworkers", "1", "--nthreads", "1", "--no-dashboard", "--name", f"worker-{i}",
                                 "--local-directory", str(tmp_path / f"worker-{i}")], tmp_path / f"worker-{i}.log"))
        with Client(scheduler_file=str(scheduler_file), timeout="60s") as client:
            while len(client.scheduler_info()["workers"]) < 2:
                for proc, name in zip(procs, ["scheduler", "worker-0", "worker-1"]):
                    assert proc.poll() is None, (tmp_path / f"{name}.log").read_text()
                time.sleep(0.2)
            address = client.scheduler.address
            yield address, client
    finally:
        _stop(procs)


def test_two_worker_processes_give_the_local_results_within_tolerance(cluster, tmp_path):
    address, client = cluster
    assert address.startswith("tcp://127.0.0.1:")
    workers = client.scheduler_info()["workers"]
    assert len(workers) == 2 and all(w["nthreads"] == 1 for w in workers.values())
    from distributed import get_task_stream

    # The command line's path: an address, the client made and closed inside run_benchmark.
    with get_task_stream(client) as stream:
        remote = bm.run_benchmark(**SUBSET, **FAST, backend="dask", scheduler=address, return_by_group=True)
    ran_on = {task["worker"] for task in stream.data}
    assert ran_on and ran_on <= set(workers), ran_on  # the tasks ran on the worker processes
    local = bm.run_benchmark(**SUBSET, **FAST, return_by_group=True)
    bm.write_results(local[0], local[1], tmp_path / "local", by_group=local[2])
    differences = bm.compare_results(remote[0], remote[1], tmp_path / "local", by_group=remote[2])
    assert differences.empty, differences.to_string()
    assert len(remote[0]) == len(local[0]) > 0
