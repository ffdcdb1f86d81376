"""The Monte Carlo permutation tests' subset sampler (`faircode.significance._subset_sums`), whose
inner steps issue 26 rewrote for speed: each step against an independent oracle, and the sums
against a brute-force draw of the same subsets."""

from __future__ import annotations

import numpy as np
import pytest

from faircode.significance import _subset_sums as subset_sums
from faircode.significance._subset_sums import _first_occurrences, _nth_set_bit, _stable_order, _SubsetSums


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


def test_nth_set_bit_is_the_position_a_scan_of_the_bits_finds():
    # Oracle: list the set bits of each word with Python integers, take the nth.
    rng = np.random.default_rng(11)
    words = rng.integers(0, 2**63, 3000, dtype=np.uint64) << np.uint64(1) | rng.integers(0, 2, 3000, dtype=np.uint64)
    words[:5] = [1, 2**63, 2**64 - 1, 0xFF00, 2**32]  # one bit at either end, every bit, a byte, the halves' seam
    words = np.where(words == 0, np.uint64(1), words)
    bits = [[i for i in range(64) if int(w) >> i & 1] for w in words]
    nth = np.array([rng.integers(0, len(b)) for b in bits])
    nth[2] = 63
    expected = [b[k] for b, k in zip(bits, nth)]
    np.testing.assert_array_equal(_nth_set_bit(words.copy(), nth), expected)


def test_sums_do_not_depend_on_how_the_draws_are_batched():
    # Each relabelling reads its own words, and the sampler's work arrays are reused from one
    # batch to the next: batches of other sizes (larger, then smaller) must give the same sums,
    # and a later batch must not overwrite an earlier batch's result.
    weights = np.random.default_rng(5).normal(size=(700, 2))
    whole = _SubsetSums(weights, 230).draw(np.random.default_rng(8), 400)
    sampler, rng = _SubsetSums(weights, 230), np.random.default_rng(8)
    parts = [sampler.draw(rng, count) for count in (150, 7, 243)]
    kept = parts[0].copy()
    np.testing.assert_array_equal(np.concatenate(parts), whole)
    np.testing.assert_array_equal(parts[0], kept)


def test_half_byte_tables_draw_the_same_rows_as_byte_tables(monkeypatch):
    # Large populations read their sums from half-byte tables. Integer weights make every sum
    # exact, so the two table layouts must agree exactly on the same words.
    rng = np.random.default_rng(2)
    weights = np.column_stack([np.ones(300), rng.integers(-50, 51, 300)]).astype(float)
    byte = _SubsetSums(weights, 97)
    assert byte.chunk == 8
    monkeypatch.setattr(subset_sums, "_TABLE_BYTES", 0)
    half = _SubsetSums(weights, 97)
    assert half.chunk == 4
    np.testing.assert_array_equal(half.draw(np.random.default_rng(4), 500), byte.draw(np.random.default_rng(4), 500))


def test_popcounts_without_numpy_2_give_the_same_sums(monkeypatch):
    # NumPy < 2 has no bitwise_count: the table popcounts must count the same bits.
    weights = np.random.default_rng(6).normal(size=(500, 1))
    expected = _SubsetSums(weights, 180).draw(np.random.default_rng(9), 300)
    if not hasattr(np, "bitwise_count"):
        pytest.skip("NumPy < 2: the fallback is the only path")
    monkeypatch.delattr(np, "bitwise_count")
    np.testing.assert_array_equal(_SubsetSums(weights, 180).draw(np.random.default_rng(9), 300), expected)


@pytest.mark.parametrize(("n", "size"), [(6513, 2171), (60, 20), (10**6, 333_333)])
def test_batches_stay_within_the_memory_bound(n, size):
    sampler = _SubsetSums(np.zeros((n, 1)), size)
    for limit in (1 << 21, 1 << 16, 10):
        rows = sampler.batch_rows(limit)
        assert rows >= 1
        assert rows == 1 or rows * sampler.row_elements() <= limit


@pytest.mark.parametrize("seed", range(10))
def test_stable_order_is_numpys_stable_argsort(seed):
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, rng.integers(1, 10_000), rng.integers(0, 5000))
    np.testing.assert_array_equal(_stable_order(keys), np.argsort(keys, kind="stable"))
    big = keys + 2**61  # too large to pack with the positions: numpy's own stable sort
    np.testing.assert_array_equal(_stable_order(big), np.argsort(big, kind="stable"))


def test_relabellings_beyond_the_budget_are_still_uniform_subsets():
    # A relabelling whose correction runs out of its budget of ranks is completed by
    # Generator.choice; a budget of one rank sends nearly every relabelling there. Oracle: every
    # 5-subset of 12 rows is equally likely (chi-squared over all 792 of them), as above.
    from scipy import stats

    n, size, draws = 12, 5, 20_000
    sampler = _SubsetSums(2.0 ** np.arange(n)[:, None], size)
    sampler.budget = 1
    sums = sampler.draw(np.random.default_rng(13), draws)[:, 0].astype(np.int64)
    bits = (sums[:, None] >> np.arange(n)) & 1
    assert (bits.sum(axis=1) == size).all()
    counts = np.bincount(sums, minlength=2**n)
    subsets = counts[[v for v in range(2**n) if bin(v).count("1") == size]]
    assert subsets.sum() == draws
    assert stats.chisquare(subsets).pvalue > 1e-4
