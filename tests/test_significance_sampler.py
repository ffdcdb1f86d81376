"""The Monte Carlo permutation tests' subset sampler (`faircode.significance._subset_sums`), whose
inner steps issue 26 rewrote for speed: each step against an independent oracle, and the sums
against a brute-force draw of the same subsets."""

from __future__ import annotations

import numpy as np
import pytest

from faircode.significance._subset_sums import _first_occurrences, _SubsetSums


@pytest.mark.parametrize("seed", range(30))
def test_first_occurrences_is_what_np_unique_return_index_marks(seed):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, rng.integers(1, 60), rng.integers(1, 400))
    expected = np.zeros(keys.size, dtype=bool)
    expected[np.unique(keys, return_index=True)[1]] = True
    np.testing.assert_array_equal(_first_occurrences(keys, np.argsort(keys, kind="stable")), expected)


@pytest.mark.parametrize(("n", "size"), [(6513, 2171), (50, 7), (129, 64), (1000, 999), (300, 1)])
def test_members_are_the_rows_whose_uniform_is_below_the_threshold(n, size):
    # Oracle: assemble each row's `bits`-bit uniform from the words (word i holds bit bits-1-i)
    # as a Python integer and compare it with the threshold.
    sampler = _SubsetSums(np.zeros((n, 1)), size)
    raw = np.random.default_rng(n).bit_generator.random_raw(5 * sampler.bits * sampler.words)
    raw = raw.reshape(5, sampler.bits * sampler.words)
    member = sampler._members(raw)
    words = raw.reshape(5, sampler.bits, sampler.words)
    for r in range(5):
        for row in range(n):
            w, j = divmod(row, 64)
            u = sum(((int(words[r, i, w]) >> j) & 1) << (sampler.bits - 1 - i) for i in range(sampler.bits))
            assert bool(int(member[r, w]) >> j & 1) == (u < sampler.threshold)
        if n % 64:
            assert int(member[r, -1]) >> (n % 64) == 0  # padding bits never join


@pytest.mark.parametrize(("n", "size", "k"), [(6513, 2171, 1), (200, 37, 2), (70, 69, 1)])
def test_every_draw_sums_exactly_size_rows(n, size, k):
    # With integer weights the sums are exact: a column of ones counts the rows drawn.
    rng = np.random.default_rng(7)
    weights = np.column_stack([np.ones(n)] + [rng.integers(-5, 6, n).astype(float) for _ in range(k - 1)])
    sums = _SubsetSums(weights, size).draw(np.random.default_rng(1), 3000)
    np.testing.assert_array_equal(sums[:, 0], size)


def test_each_row_joins_with_probability_size_over_n():
    # Uniform subsets: every row is drawn with probability size / n. Weight row i by 2**i
    # (n = 12, so sums are exact) and decode each draw's members from its sum.
    n, size, draws = 12, 5, 20_000
    sums = _SubsetSums(2.0 ** np.arange(n)[:, None], size).draw(np.random.default_rng(3), draws)[:, 0]
    bits = (sums.astype(np.int64)[:, None] >> np.arange(n)) & 1
    assert (bits.sum(axis=1) == size).all()
    freq = bits.mean(axis=0)
    se = np.sqrt(size / n * (1 - size / n) / draws)
    assert np.abs(freq - size / n).max() < 5 * se
    # ... and every 5-subset of 12 is about equally likely (792 subsets): a chi-squared test
    from scipy import stats

    counts = np.bincount(sums.astype(np.int64), minlength=2**n)
    subsets = counts[[v for v in range(2**n) if bin(v).count("1") == size]]
    assert subsets.sum() == draws
    assert stats.chisquare(subsets).pvalue > 1e-4
