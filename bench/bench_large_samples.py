"""Large samples (issue 47 item 6): what 5 million against 5 million rows cost, and where it goes.

Run from the repository root:  python bench/bench_large_samples.py [rows per group, default 5,000,000]

Every figure is a ratio to a reference timed in the same run, the exact test of 0/1 outcomes at
the same sizes (the issue's 1.8 s), in CPU seconds of this process (on a shared machine other
processes' load moves wall time more than CPU time). It prints:

- the Monte Carlo permutation test of continuous outcomes: one relabelling step by step (raw
  random words, membership bits, table sums, size correction: the sampler of
  ``faircode.significance._subset_sums``), and 9,999 of them extrapolated;
- the same test of a rating of 1 to 5 (at most 32 distinct values: relabelled as counts of each
  value), 9,999 relabellings run in full;
- one bootstrap resample of continuous outcomes, 9,999 extrapolated;
- the up-front warning's estimate against the time the test then took (wall clock, as the
  warning's own), on a test just past the warning's bound.

The issue measured about 18 minutes for the continuous permutation test with no word; the test
now says so first (the last line checks how well), and names the faster paths.
"""

from __future__ import annotations

import re
import sys
import time
import warnings

import numpy as np

from faircode.significance import permutation_test_result
from faircode.significance._bootstrap import _GroupResampler
from faircode.significance._permutation import _LONG_WORK
from faircode.significance._subset_sums import _SubsetSums

from bench_significance import STEPS, step_seconds  # run as python bench/bench_large_samples.py

M = 9_999


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def relabelling_steps(pooled: np.ndarray, size: int, draws: int = 3) -> tuple[float, dict[str, float]]:
    """Seconds to build the sampler, and CPU seconds per relabelling of each step (best of ``draws``)."""
    z = (np.sort(pooled) - pooled.mean())[:, None]
    holder = {}
    setup = cpu(lambda: holder.setdefault("sampler", _SubsetSums(z, size)))
    sampler, rng = holder["sampler"], np.random.default_rng(0)
    runs = [step_seconds(sampler, rng, 1) for _ in range(draws)]
    return setup, {key: min(run[i] for run in runs) for i, key in enumerate(STEPS)}


def estimate_against_run() -> tuple[float, float, int, int]:
    """The warning's estimate and the wall time of a test just past its bound (rows, relabellings)."""
    n = 1 << 20
    m = -(-_LONG_WORK // (2 * n))
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=n), rng.normal(size=n)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        permutation_test_result(a, b, n_permutations=m, random_state=0)
        took = time.perf_counter() - start
    said = re.search(r"about ([\d.]+) (seconds|minutes|hours)", str(caught[0].message))
    estimate = float(said.group(1)) * {"seconds": 1, "minutes": 60, "hours": 3600}[said.group(2)]
    return estimate, took, 2 * n, m


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000_000
    rng = np.random.default_rng(47)
    a01, b01 = rng.binomial(1, 0.30, n).astype(float), rng.binomial(1, 0.31, n).astype(float)
    reference = cpu(lambda: permutation_test_result(a01, b01))
    print(f"{n:,} against {n:,} rows; CPU seconds; reference: the exact test of 0/1 outcomes, {reference:.2f} s")

    a, b = rng.normal(size=n), rng.normal(0.001, 1, n)
    setup, steps = relabelling_steps(np.concatenate([a, b]), n)
    per = sum(steps.values())
    total = setup + M * per
    print(f"permutation test, continuous: sampler built in {setup:.2f} s; one relabelling {per * 1e3:.1f} ms ("
          + ", ".join(f"{key} {seconds / per:.0%}" for key, seconds in steps.items())
          + f"); {M:,} of them about {total / 60:.1f} min, {total / reference:,.0f}x the reference")

    ra, rb = rng.integers(1, 6, n).astype(float), rng.integers(1, 6, n).astype(float)
    holder = {}
    rating = cpu(lambda: holder.setdefault("res", permutation_test_result(ra, rb, n_permutations=M, random_state=0)))
    print(f"permutation test, a rating of 1 to 5 (counts of each value): {M:,} relabellings in {rating:.2f} s, "
          f"{rating / reference:.1f}x the reference (p = {holder['res'].p_value:.3g})")

    resampler = _GroupResampler(a, None, np.random.default_rng(1))
    one = min(cpu(lambda: resampler.means(1)) for _ in range(2))
    boot = 2 * M * one
    print(f"bootstrap, continuous: one resample of {n:,} rows {one * 1e3:.0f} ms; {M:,} of both groups about "
          f"{boot / 60:.1f} min, {boot / reference:,.0f}x the reference")

    estimate, took, rows, m = estimate_against_run()
    print(f"up-front warning at {rows:,} rows and {m:,} relabellings: said about {estimate:.0f} s, took "
          f"{took:.0f} s (wall clock), {took / estimate:.2f}x the estimate")


if __name__ == "__main__":
    main()
