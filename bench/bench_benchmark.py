"""How long the benchmark takes, and how it grows with rows.

Run from the repository root::

    python bench/bench_benchmark.py            # full table with 2 jobs, then Adult scaling
    python bench/bench_benchmark.py --no-full  # scaling only
    python bench/bench_benchmark.py --cpu-vs main [--runs 5]  # CPU against another revision, only

Prints (1) the wall time of the whole table with ``n_jobs`` jobs (target: under 5 minutes on
2 cores) and (2) for Benefits Denial (Adult) subsampled to 25%, 50% and 100% of its rows, the
time of every strategy x model task run one after another, split into model fitting ("fit")
and the fairness rows ("rows": rates, exact permutation tests, bootstrap intervals), each also
as a ratio to the 25% run.

With ``--cpu-vs REV`` it prints instead issue 26's row: the CPU time (user + sys of the command and
of every process it started: the workers) of ``faircode benchmark --check --jobs 2`` on this
working tree against the same command on git revision REV (exported to a temporary folder and
imported from there through PYTHONPATH), each in a fresh process, ``--runs`` times alternated
(each side first in every other pair), medians; target <= 0.75x. Five runs by default: CPU
seconds on this shared 2-core machine move with its load, and with three the same code read
0.64x to 0.83x from one sitting to the next (closing notes of issue 26).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from faircode.audit import load_audit
from faircode.benchmark import evaluate, run_benchmark
from faircode.models import fit_predict

FRACTIONS = (0.25, 0.5, 1.0)


def _subsample(audit, fraction: float, seed: int = 0):
    # Train and test positions are thinned alike, so fit and evaluation both scale.
    rng = np.random.default_rng(seed)
    keep = lambda pos: np.sort(rng.permutation(pos)[: max(1, round(fraction * len(pos)))])  # noqa: E731
    return dataclasses.replace(audit, train=keep(audit.train), test=keep(audit.test))


def _scaling(slug: str) -> None:
    audit = load_audit(slug)
    tasks = [(s, m) for s in audit.manifest.strategies for m in audit.manifest.models]
    print(f"\nScaling on {audit.name} ({len(tasks)} strategy x model tasks, run serially)")
    print(f"{'rows':>6} {'n_train':>8} {'n_test':>7} {'fit s':>8} {'rows s':>8} {'x fit':>6} {'x rows':>7}")
    base = None
    for fraction in FRACTIONS:
        sub = _subsample(audit, fraction)
        fit = rows = 0.0
        for s, m in tasks:
            t0 = time.perf_counter()
            pred = fit_predict(sub, strategy=s, model=m)
            t1 = time.perf_counter()
            evaluate(sub, strategy=s, model=m, predictions=pred)
            fit, rows = fit + t1 - t0, rows + time.perf_counter() - t1
        base = base or (fit, rows)
        print(
            f"{fraction:>6.0%} {len(sub.train):>8} {len(sub.test):>7} {fit:>8.1f} {rows:>8.2f} "
            f"{fit / base[0]:>6.2f} {rows / base[1]:>7.2f}"
        )


REPO = Path(__file__).resolve().parents[1]


def _cpu_seconds(tree: Path) -> float:
    """User + sys seconds of ``faircode benchmark --check --jobs 2`` run from ``tree`` (its own code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([str(Path(sys.executable).parent / "faircode"), "benchmark", "--check", "--jobs", "2",
                           "--no-progress"], cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree)),
                          capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"faircode benchmark --check failed in {tree}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _cpu_vs(rev: str, runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ref = Path(tmp) / "ref"
        ref.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(ref)], input=archive, check=True)
        ours, theirs = [], []
        for i in range(runs):
            # Each side goes first in every other pair: neither always runs on the machine the
            # other has just warmed (or just loaded).
            if i % 2 == 0:
                ours.append(_cpu_seconds(REPO))
                theirs.append(_cpu_seconds(ref))
            else:
                theirs.append(_cpu_seconds(ref))
                ours.append(_cpu_seconds(REPO))
    med = statistics.median
    ratio = med(ours) / med(theirs)
    print(f"faircode benchmark --check --jobs 2, CPU seconds (user + sys, workers included), {runs} alternated runs")
    print(f"  this tree:   median {med(ours):6.1f} s  {[round(t, 1) for t in ours]}")
    print(f"  {rev}: median {med(theirs):6.1f} s  {[round(t, 1) for t in theirs]}")
    print(f"  ratio {ratio:.2f}x (target <= 0.75x)  {'yes' if ratio <= 0.75 else 'NO'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-full", action="store_true", help="skip the full-table run")
    parser.add_argument("--audit", default="benefits-denial", help="audit for the scaling run")
    parser.add_argument("--cpu-vs", metavar="REV", help="only the CPU of the whole benchmark against revision REV")
    parser.add_argument("--runs", type=int, default=5, help="alternated runs with --cpu-vs (default 5)")
    args = parser.parse_args()
    if args.cpu_vs:
        _cpu_vs(args.cpu_vs, args.runs)
        return
    print(f"cores: {os.cpu_count()}")
    if not args.no_full:
        t0 = time.perf_counter()
        fairness, performance = run_benchmark(n_jobs=args.jobs, progress=False)
        elapsed = time.perf_counter() - t0
        print(
            f"full table: {len(fairness)} fairness rows, {len(performance)} fits, "
            f"{elapsed:.1f} s with {args.jobs} jobs ({elapsed / 300:.2f} of the 5-minute target)"
        )
    _scaling(args.audit)


if __name__ == "__main__":
    main()
