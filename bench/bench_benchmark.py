"""How long the benchmark takes, and how it grows with rows.

Run from the repository root::

    python bench/bench_benchmark.py            # full table with 2 jobs, then Adult scaling
    python bench/bench_benchmark.py --no-full  # scaling only

Prints (1) the wall time of the whole table with ``n_jobs`` jobs (target: under 5 minutes on
2 cores) and (2) for Benefits Denial (Adult) subsampled to 25%, 50% and 100% of its rows, the
time of every strategy x model task run one after another, split into model fitting ("fit")
and the fairness rows ("rows": rates, exact permutation tests, bootstrap intervals), each also
as a ratio to the 25% run.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-full", action="store_true", help="skip the full-table run")
    parser.add_argument("--audit", default="benefits-denial", help="audit for the scaling run")
    args = parser.parse_args()
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
