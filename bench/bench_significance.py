"""Benchmark faircode.significance against SciPy and a plain Python shuffle loop (issue 3).

Run from the repository root:  python bench/bench_significance.py

Prints, from one run, for n = 6,513 rows (about a third in the disadvantaged group) and 2,000
resamples, the best-of-repeats time of each implementation and the ratios the issue targets (the
Monte Carlo rows as medians of ``PAIRS`` alternated pairs of CPU times, this process's own: on a
shared machine a best-of wall time follows the other processes more than the code):

- exact test on 0/1 outcomes vs scipy.stats.permutation_test: target >= 100x faster;
- Monte Carlo test on continuous scores vs scipy.stats.permutation_test: target >= 8x faster
  (issue 26; 5x in issue 16), and how close it is to the cost of drawing the random subsets:
  against drawing them one by one with ``Generator.choice(replace=False)`` (what the test did
  before), and against generating the raw random words its own draw consumes (the floor of any
  draw that reads those words: the test cannot cost less than making them), and the sampler's
  CPU step by step (raw words, membership bits, table sums, size correction);
- both vs a plain Python shuffle loop (random.shuffle + sum);
- peak traced memory (tracemalloc) at n = 10^6: target < 200 MB.
"""

from __future__ import annotations

import random
import time
import tracemalloc

import numpy as np
from scipy import stats

from faircode.significance import _SubsetSums, bootstrap_ci, permutation_test_result
from faircode.significance._validation import _BATCH_ELEMENTS

N_ROWS = 6_513
N_A = N_ROWS // 3
N_RESAMPLES = 2_000
REPEATS = 3
PAIRS = 15


def alternated(fa, fb, pairs: int = PAIRS) -> tuple[float, float, float]:
    """Medians of ``fa``'s and ``fb``'s CPU seconds over alternated calls, and the median of fb / fa pair by pair."""
    ta, tb = [], []
    for _ in range(pairs):
        for f, out in ((fa, ta), (fb, tb)):
            start = time.process_time()
            f()
            out.append(time.process_time() - start)
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    return med(ta), med(tb), med([b / a for a, b in zip(ta, tb)])


def kernel_steps(pooled: np.ndarray, size: int, resamples: int, between, runs: int = PAIRS) -> dict[str, float]:
    """Median CPU seconds of each step of the sampler over ``resamples`` draws, batched as the test batches them.

    ``between()`` runs (untimed) before each run: the reference the test alternates with, so that
    the steps are timed in the test's conditions (caches and allocator as the reference left them).
    """
    z = (np.sort(pooled) - pooled.mean())[:, None]
    steps: dict[str, list[float]] = {key: [] for key in STEPS}
    for _ in range(runs):
        between()
        sampler, rng = _SubsetSums(z, size), np.random.default_rng(0)
        spent = dict.fromkeys(steps, 0.0)
        rows = sampler.batch_rows(_BATCH_ELEMENTS)
        for start in range(0, resamples, rows):
            for key, seconds in zip(steps, step_seconds(sampler, rng, min(rows, resamples - start))):
                spent[key] += seconds
        for key in steps:
            steps[key].append(spent[key])
    return {key: sorted(v)[len(v) // 2] for key, v in steps.items()}


STEPS = ("raw words", "membership bits", "table sums", "size correction")


def step_seconds(sampler: _SubsetSums, rng: np.random.Generator, count: int) -> tuple[float, ...]:
    """CPU seconds of each of the ``STEPS`` of ``sampler.draw(rng, count)``, step by step."""
    test = np.zeros(count, dtype=np.intp)
    t0 = time.process_time()
    raw = rng.bit_generator.random_raw(count * sampler.row_words).reshape(count, sampler.row_words)
    t1 = time.process_time()
    member = sampler._members(raw[:, : sampler.bits * sampler.words])
    t2 = time.process_time()
    sums = sampler._table_sums(member, test)
    t3 = time.process_time()
    sampler._correct(sums, member, raw, test)
    t4 = time.process_time()
    return t1 - t0, t2 - t1, t3 - t2, t4 - t3


def best_time(fn, repeats: int = REPEATS) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def abs_mean_gap(x, y, axis=-1):
    return np.abs(np.mean(x, axis=axis) - np.mean(y, axis=axis))


def scipy_test(a, b):
    # |gap| with alternative="greater" is the two-sided test faircode computes.
    return stats.permutation_test(
        (a, b), abs_mean_gap, n_resamples=N_RESAMPLES, alternative="greater", vectorized=True, rng=0
    ).pvalue


def python_shuffle_loop(a, b):
    pooled = list(a) + list(b)
    n_a, n_b = len(a), len(b)
    observed = abs(sum(a) / n_a - sum(b) / n_b)
    rng = random.Random(0)
    hits = 0
    for _ in range(N_RESAMPLES):
        rng.shuffle(pooled)
        hits += abs(sum(pooled[:n_a]) / n_a - sum(pooled[n_a:]) / n_b) >= observed
    return (hits + 1) / (N_RESAMPLES + 1)


def peak_mib(fn) -> tuple[float, float]:
    tracemalloc.start()
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20, elapsed


def main() -> None:
    rng = np.random.default_rng(2024)
    a01 = rng.binomial(1, 0.30, N_A).astype(float)
    b01 = rng.binomial(1, 0.36, N_ROWS - N_A).astype(float)
    a_cont = rng.beta(2.0, 5.0, N_A)
    b_cont = rng.beta(2.2, 5.0, N_ROWS - N_A)

    print(f"n = {N_ROWS:,} rows (n_a = {N_A:,}, n_b = {N_ROWS - N_A:,}), {N_RESAMPLES:,} resamples, best of {REPEATS}")

    def ours_exact():
        return permutation_test_result(a01, b01, n_permutations=N_RESAMPLES)

    def ours_mc():
        return permutation_test_result(a_cont, b_cont, n_permutations=N_RESAMPLES, random_state=0)

    assert ours_exact().method == "exact" and ours_mc().method == "monte_carlo"
    t_exact = best_time(ours_exact)
    t_scipy01 = best_time(lambda: scipy_test(a01, b01))
    t_loop01 = best_time(lambda: python_shuffle_loop(a01.tolist(), b01.tolist()), repeats=1)
    t_loop_cont = best_time(lambda: python_shuffle_loop(a_cont.tolist(), b_cont.tolist()), repeats=1)

    print(f"  p-values: exact {ours_exact().p_value:.4g} vs scipy {scipy_test(a01, b01):.4g}; "
          f"Monte Carlo {ours_mc().p_value:.4g} vs scipy {scipy_test(a_cont, b_cont):.4g}")
    print("0/1 outcomes (faircode exact):")
    print(f"  faircode exact     {t_exact * 1e3:9.3f} ms")
    print(f"  scipy permutation  {t_scipy01 * 1e3:9.3f} ms   ratio scipy/faircode = {t_scipy01 / t_exact:8.1f}x (target >= 100x)")
    print(f"  python shuffle     {t_loop01 * 1e3:9.3f} ms   ratio loop/faircode  = {t_loop01 / t_exact:8.1f}x")
    print(f"continuous scores (faircode Monte Carlo; CPU medians of {PAIRS} alternated pairs):")
    t_mc, t_scipy_cont, r_scipy = alternated(ours_mc, lambda: scipy_test(a_cont, b_cont))
    print(f"  faircode MC        {t_mc * 1e3:9.3f} ms")
    print(f"  scipy permutation  {t_scipy_cont * 1e3:9.3f} ms   ratio scipy/faircode = {r_scipy:8.1f}x (target >= 8x)")
    m = min(N_A, N_ROWS - N_A)
    draw_rng = np.random.default_rng(0)
    t_choice = best_time(lambda: [draw_rng.choice(N_ROWS, m, replace=False, shuffle=False) for _ in range(N_RESAMPLES)])
    words = _SubsetSums(np.zeros((N_ROWS, 1)), m).row_words * N_RESAMPLES
    _, t_words, r_words = alternated(ours_mc, lambda: draw_rng.bit_generator.random_raw(words))
    print(f"  drawing the {N_RESAMPLES:,} subsets of {m:,} rows one by one (Generator.choice): {t_choice * 1e3:9.3f} ms"
          f"   faircode MC / this = {t_mc / t_choice:5.2f}x")
    print(f"  generating the {words:,} raw random words faircode's draw uses: {t_words * 1e3:9.3f} ms"
          f"   faircode MC / this = {1 / r_words:5.2f}x (the floor of any draw: how close the test is to it)")
    steps = kernel_steps(np.concatenate([a_cont, b_cont]), m, N_RESAMPLES, lambda: scipy_test(a_cont, b_cont))
    drawn = sum(steps.values())
    print("  the sampler step by step (CPU medians, runs alternated with SciPy's): "
          + ", ".join(f"{key} {t * 1e3:.2f} ms" for key, t in steps.items())
          + f"; {drawn * 1e3:.2f} ms in all, {drawn / steps['raw words']:.2f}x its raw words")
    print(f"  python shuffle     {t_loop_cont * 1e3:9.3f} ms   ratio loop/faircode  = {t_loop_cont / t_mc:8.1f}x")

    n_big = 1_000_000
    big_a = rng.binomial(1, 0.30, n_big // 3).astype(float)
    big_b = rng.binomial(1, 0.31, n_big - n_big // 3).astype(float)
    cont_a, cont_b = rng.beta(2.0, 5.0, n_big // 3), rng.beta(2.0, 5.0, n_big - n_big // 3)
    data_mib = (big_a.nbytes + big_b.nbytes) / 2**20
    print(f"peak traced memory at n = {n_big:,} (input arrays, {data_mib:.1f} MiB each pair, not counted; target < 200 MB):")
    for label, fn in [
        ("exact test, 0/1", lambda: permutation_test_result(big_a, big_b)),
        # Memory is per batch, so 200 relabellings show the same peak as 2,000 in a tenth of the time.
        ("Monte Carlo, continuous, 200 perms", lambda: permutation_test_result(cont_a, cont_b, n_permutations=200, random_state=0)),
        ("bootstrap percentile, 0/1, 9,999 resamples", lambda: bootstrap_ci(big_a, big_b, random_state=0)),
        ("bootstrap BCa, continuous, 200 resamples", lambda: bootstrap_ci(cont_a, cont_b, n_resamples=200, method="bca", random_state=0)),
    ]:
        mib, secs = peak_mib(fn)
        print(f"  {label:<45} {mib:8.1f} MiB ({mib * 2**20 / 1e6:6.1f} MB)  in {secs:6.2f} s")


if __name__ == "__main__":
    main()
