"""Sums over uniformly random subsets: the sampler behind the Monte Carlo permutation tests.

A relabelling of ``n_a + n_b`` rows (or whole clusters) under the null is a uniformly random
``n_a``-subset; the gap it gives is linear in the sum of the outcomes in that subset.
:class:`_SubsetSums` draws such sums in batches without materialising permutations (bit sets of
the chosen rows, byte-indexed tables of partial sums), and :mod:`._permutation` turns them into
gaps and p-values. Part of the permutation family: :mod:`faircode.significance._permutation`
holds the tests and their references (Good 2005 for the test, Phipson and Smyth 2010 for the Monte
Carlo p-value).
"""

from __future__ import annotations

import math

import numpy as np


_POPCOUNT8 = np.array([bin(v).count("1") for v in range(256)], dtype=np.int32)
# _SELECT8[v, k]: the position of the k-th set bit (from the least significant) of the byte v.
_SELECT8 = np.array([[[b for b in range(8) if v >> b & 1][k] if k < bin(v).count("1") else 0
                      for k in range(8)] for v in range(256)], dtype=np.int64)
# (bits, mask of the low half) of a word's halvings down to its byte holding a chosen rank.
_HALVES = tuple((shift, np.uint64((1 << shift) - 1)) for shift in (32, 16, 8))
_TABLE_BYTES = 1 << 25  # above this a byte-indexed table of partial sums falls back to half-bytes
# Raw words per batch of relabellings. A batch's words and the arrays made from them were 16 MiB
# (the memory bound of the other resamplers), and the test at n = 6,513 waited on memory: batches
# of 0.5 to 3 MiB ran it in two thirds of the time, the same within the noise (issue 26).
_BATCH_WORD_BYTES = 3 << 19
# ... but at least this many relabellings per batch, so that a large population's batches do not
# pay the kernel's few hundred microseconds of per-call overhead for one relabelling each.
_MIN_BATCH_ROWS = 8
# Relabellings whose table sums are gathered at once, within a batch: their codes and gathered
# values (8 bytes a chunk each) stay in cache.
_GATHER_ROWS = 64
# permutation_tests draws a relabelling as counts of each kind of unit up to this many kinds
# (O(kinds) per relabelling, against O(units / 8) and more for the subset sampler).
_MAX_KINDS = 32


class _SubsetSums:
    """Sums of ``weights`` over uniformly random ``size``-subsets of its rows, drawn in batches.

    Drawing the subsets is what a Monte Carlo permutation test spends its time on. A row-by-row
    ``Generator.choice(replace=False)`` costs one bounded random integer per chosen row plus
    Python overhead per relabelling; here a whole batch is drawn from raw 64-bit words:

    1. Each row of the population joins independently with probability ``t / 2**bits``
       (``t / 2**bits`` close to ``size / n``): ``bits`` random words per 64 rows decide 64 rows
       at once through a bitwise comparison of a ``bits``-bit uniform number with ``t``.
    2. The joined set has ``c`` rows, near ``size``. ``|c - size|`` rows are then removed from it
       (or added from the rest), a uniformly random set of them: the first ``|c - size|``
       distinct ranks in a sequence of independent uniform ranks.
    3. The sums over the set are read from a table of partial sums per byte (or half-byte) of
       the membership bits.

    Every step treats the population's rows symmetrically, so the subset's distribution is
    invariant under any permutation of the rows; with exactly ``size`` members it is therefore
    the uniform distribution over all ``size``-subsets (the same argument as for drawing a
    uniform subset by sequential rejection; Devroye 1986, ch. XI.2). A rank is read from a 53-bit
    uniform, so its probabilities are uniform within ``pool / 2**53``, far below any Monte Carlo error.

    Each relabelling consumes a fixed number of raw words of the generator, relabelling after
    relabelling, so the sums do not depend on the batch size. A row whose correction needs more
    random ranks than its fixed budget (rare: beyond six standard deviations) is completed with
    ``Generator.choice`` seeded from two words of its own.

    ``weights`` of shape (tests, n, k) holds one population per test (many tests with populations
    of one size, :func:`permutation_tests`); each drawn row then names its test. A test's sums
    are the ones a sampler of its population alone would give from the same words.
    """

    def __init__(self, weights: np.ndarray, size: int):
        if weights.ndim == 2:
            weights = weights[None]
        tests, n, k = weights.shape
        self.n, self.size, self.k, self.tests = n, size, k, tests
        self.bits = int(min(16, max(4, math.ceil(math.log2(max(n, 2)) / 2) + 1)))
        self.threshold = int(round(size / n * 2**self.bits))
        q = self.threshold / 2**self.bits
        self.words = -(-n // 64)
        sd = math.sqrt(n * q * (1 - q))
        need = abs(size - q * n) + 6 * sd + 8
        self.budget = int(math.ceil(need + need * need / max(1.0, min(size, n - size)) + 8))
        padded = np.zeros((tests, self.words * 64, k))
        padded[:, :n] = weights
        self.chunk = self.chunk_bits(n, k)  # per test: a test's sums do not depend on `tests`
        per = self.chunk
        codes = np.arange(2**per)
        bits = ((codes[:, None] >> np.arange(per)) & 1).astype(np.float64)  # (2^per, per)
        blocks = padded.reshape(tests, -1, per, k)  # (tests, chunks, per, k)
        # table[j, (t * chunks + c) * 2^per + v]: the sum of column j over the rows of test t's
        # chunk c whose bits are set in v (matmul, not einsum: einsum's generic loop made this
        # table most of a small test's time)
        table = np.matmul(bits, blocks)  # (tests, chunks, 2^per, k)
        self.table = np.ascontiguousarray(table.transpose(3, 0, 1, 2)).reshape(k, -1)
        self.test_stride = blocks.shape[1] * 2**per
        self.offsets = (np.arange(blocks.shape[1]) * 2**per)[None, :]
        last = n - (self.words - 1) * 64
        self.last_word = np.uint64((1 << last) - 1) if last < 64 else np.uint64(2**64 - 1)
        self.valid_words = np.full(self.words, np.uint64(2**64 - 1))
        self.valid_words[-1] = self.last_word
        self.valid_counts = _popcount64(self.valid_words)  # rows per word: 64, fewer in the last
        self.weights = weights
        self.row_words = self.bits * self.words + self.budget + 2
        # Work arrays kept from batch to batch (see _scratch).
        self._arrays: dict[str, np.ndarray] = {}

    @staticmethod
    def chunk_bits(n: int, k: int) -> int:
        """Rows per table chunk: a byte, or a half-byte when byte tables would pass _TABLE_BYTES."""
        return 8 if 256 * n * k <= _TABLE_BYTES else 4

    @staticmethod
    def table_bytes(n: int, k: int) -> int:
        """Bytes of one test's table of partial sums."""
        per = _SubsetSums.chunk_bits(n, k)
        return 8 * k * (-(-n // 64) * 64 // per) * 2**per

    def row_elements(self) -> int:
        """Elements one relabelling holds during a draw, at most: its raw words, then its byte codes
        (8 per membership word and column; fewer in fact, as they are made _GATHER_ROWS rows at a time)."""
        return self.row_words + 8 * self.words * self.k

    def batch_rows(self, max_elements: int) -> int:
        """Relabellings per :meth:`draw`: the raw words of a batch in cache, within ``max_elements``.

        The sums do not depend on it (each relabelling reads its own fixed words), only the time.
        """
        cached = max(_MIN_BATCH_ROWS, _BATCH_WORD_BYTES // (8 * self.row_words))
        return max(1, min(cached, max_elements // max(1, self.row_elements())))

    def _scratch(self, name: str, count: int, width: int, dtype) -> np.ndarray:
        """A (count, width) work array of this sampler, the same memory batch after batch.

        A fresh array of a batch's size is a fresh mapping of memory that the kernel zeroes page
        by page on first touch: those page faults were as much CPU as the test itself when each
        batch allocated its own (issue 26).
        """
        held = self._arrays.get(name)
        if held is None or held.shape[0] < count:
            held = self._arrays[name] = np.empty((count, width), dtype=dtype)
        return held[:count]

    def draw(self, rng: np.random.Generator, count: int, test: np.ndarray | None = None) -> np.ndarray:
        """``count`` subset sums, shape (count, k); consumes ``count * row_words`` raw words.

        ``test`` (shape (count,), default all 0) names the test whose population each row draws from.
        """
        test = np.zeros(count, dtype=np.intp) if test is None else test
        raw = rng.bit_generator.random_raw(count * self.row_words).reshape(count, self.row_words)
        member = self._members(raw[:, : self.bits * self.words])
        sums = self._table_sums(member, test)
        self._correct(sums, member, raw, test)
        return sums

    def _members(self, raw: np.ndarray) -> np.ndarray:
        """Bit j of word w: row 64 w + j joins (probability threshold / 2**bits), shape (count, words)."""
        count = raw.shape[0]
        # (count, bits, words) as a view of the rows' first bits * words words: ``raw`` is a slice
        # of wider rows, and a reshape would copy it.
        words = np.lib.stride_tricks.as_strided(raw, shape=(count, self.bits, self.words),
                                                strides=(raw.strides[0], self.words * raw.strides[1], raw.strides[1]),
                                                writeable=False)
        below = self._scratch("member", count, self.words, np.uint64)
        if self.threshold >= 2**self.bits:
            below.fill(np.uint64(2**64 - 1))
        elif self.threshold == 0:
            below.fill(0)
        else:
            # U < t, least significant bit first: at a bit where t has a 1, U is below t if U has
            # a 0 there, else it is below exactly when its lower bits were; where t has a 0, U is
            # below only if U has a 0 too and its lower bits were. That is below |= ~w at a 1 and
            # below &= ~w at a 0; its complement needs no inversion of the words: not_below &= w
            # at a 1, not_below |= w at a 0 (De Morgan), one in-place operation per bit, and one
            # inversion at the end. t's trailing zero bits are skipped (nothing is below yet, so
            # not_below is all ones until t's lowest 1, where it becomes that bit's word). The
            # same function of the same words, so the same subsets (issue 26).
            started = False
            for i in reversed(range(self.bits)):  # word i holds bit (bits - 1 - i) of U
                one = self.threshold >> (self.bits - 1 - i) & 1
                if not started:
                    if one:
                        np.copyto(below, words[:, i, :])
                        started = True
                elif one:
                    np.bitwise_and(below, words[:, i, :], out=below)
                else:
                    np.bitwise_or(below, words[:, i, :], out=below)
            np.invert(below, out=below)
        below[:, -1] &= self.last_word
        return below

    def _table_sums(self, member: np.ndarray, test: np.ndarray) -> np.ndarray:
        as_bytes = _bytes(member)
        count, chunks = as_bytes.shape[0], self.offsets.shape[1]
        sums = np.empty((count, self.k))
        codes_all = self._scratch("codes", min(_GATHER_ROWS, count), chunks, np.intp)
        gathered_all = self._scratch("gathered", min(_GATHER_ROWS, count), chunks, np.float64)
        for lo in range(0, count, _GATHER_ROWS):
            part = as_bytes[lo:lo + _GATHER_ROWS]
            codes, gathered = codes_all[: part.shape[0]], gathered_all[: part.shape[0]]
            if self.chunk == 8:
                np.add(part, self.offsets, out=codes)
            else:  # half-bytes, low first (the rows' order within a byte)
                np.bitwise_and(part, 15, out=codes[:, 0::2])
                np.right_shift(part, 4, out=codes[:, 1::2])
                codes += self.offsets
            if self.tests > 1:
                codes += (test[lo:lo + _GATHER_ROWS] * self.test_stride)[:, None]
            # One contiguous gather per column, summed along each row: each relabelling is summed
            # the same way whatever the batch, so the sums do not depend on the batch size.
            # (mode="clip": every code is in range, and take buffers its output under "raise".)
            for j, column in enumerate(self.table):
                sums[lo:lo + _GATHER_ROWS, j] = np.take(column, codes, out=gathered, mode="clip").sum(axis=1)
        return sums

    def _correct(self, sums: np.ndarray, member: np.ndarray, raw: np.ndarray, test: np.ndarray) -> None:
        """Bring every subset to ``size`` rows by a uniformly random removal (or addition).

        ``raw`` (count, row_words), C-contiguous: the batch's words; the correction reads those
        after the membership bits.
        """
        in_member = _popcount64(member, out=self._scratch("in_member", *member.shape, np.int64))  # (count, words)
        counts = in_member.sum(axis=1)
        surplus = counts - self.size
        rows = np.flatnonzero(surplus)
        if rows.size == 0:
            return
        remove = surplus[rows] > 0
        need = np.abs(surplus[rows])
        # Remove from the members, or add from the others (padding bits never count). Only the
        # pool's counts per word are needed for every word; its bits only for the words a chosen
        # rank falls in (issue 26: building the whole pool was a fifth of the test).
        in_word = in_member[rows]
        np.subtract(self.valid_counts, in_word, out=in_word, where=~remove[:, None])
        pool = np.where(remove, counts[rows], self.n - counts[rows])
        owner, starts, rank = self._ranks(raw, rows, need, pool)
        keys, take, kept, short = _first_distinct(owner, starts, rank, need, self.n)
        chosen_by_key = self._rows_of_ranks(member, rows, remove, in_word, owner[kept], rank[kept], keys[kept])
        # Back to the sequence's order, the order in which each row's sum adds them up.
        chosen = np.empty(keys.size, dtype=np.int64)
        chosen[kept] = chosen_by_key
        chosen = chosen[take]
        who = owner[take]
        sign = np.where(remove, -1.0, 1.0)
        owner_test = test[rows][who]
        for col in range(self.k):
            sums[rows, col] += sign * np.bincount(who, weights=self.weights[owner_test, chosen, col], minlength=rows.size)
        for i in np.flatnonzero(short):  # beyond the budget: complete the row on its own
            row = rows[i]
            pool_words = member[row] if remove[i] else ~member[row] & self.valid_words
            bits = np.unpackbits(_bytes(pool_words[None, :])[0], bitorder="little")[:self.n]
            own = np.random.default_rng(raw[row, -2:].tolist())
            picked = own.choice(np.flatnonzero(bits), need[i], replace=False)
            sums[row] += sign[i] * self.weights[test[row], picked].sum(axis=0)

    def _ranks(self, raw: np.ndarray, rows: np.ndarray, need: np.ndarray,
               pool: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each corrected row's sequence of uniform ranks in its pool, read from its words after the
        membership bits: (``owner``, the position in ``rows`` each rank belongs to; ``starts``, where
        each row's sequence starts; ``rank``), flat, row after row."""
        draws = np.minimum(need + np.ceil(need * need / pool).astype(np.int64) + 4, self.budget)
        owner = np.repeat(np.arange(rows.size), draws)
        starts = np.cumsum(draws) - draws
        step = np.arange(owner.size) - starts[owner]
        # A rank from a 53-bit uniform: floor(U * pool), kept below pool. (In place, and one flat
        # gather: the same numbers as the expression in fewer passes.)
        uniform = np.take(raw.reshape(-1), rows[owner] * self.row_words + (self.bits * self.words) + step)
        uniform >>= np.uint64(11)
        scaled = uniform.astype(np.float64)
        scaled *= 2.0**-53
        pool_of = pool[owner]
        scaled *= pool_of
        rank = scaled.astype(np.int64)
        np.minimum(rank, pool_of - 1, out=rank)
        return owner, starts, rank

    def _rows_of_ranks(self, member: np.ndarray, rows: np.ndarray, remove: np.ndarray, in_word: np.ndarray,
                       who: np.ndarray, q: np.ndarray, wanted: np.ndarray) -> np.ndarray:
        """Rank -> row of the population: the word holding it, then halving the word.

        ``who``, ``q`` and ``wanted`` (ascending) are the kept ranks' owners, ranks and keys;
        ``in_word`` (rows, words): the pool's bits in each word.
        """
        n, words = self.n, self.words
        cumulative = np.cumsum(in_word, axis=1)
        flat = (cumulative + (np.arange(rows.size) * (n + 1))[:, None]).ravel()
        if flat[-1] < 2**31:  # half the bytes to search through: the binary search stays in cache
            flat, wanted = flat.astype(np.int32), wanted.astype(np.int32)
        at = np.searchsorted(flat, wanted, side="right")  # (row, word) of the rank, flattened
        word = at - who * words
        before = cumulative.ravel()
        before -= in_word.ravel()  # pool bits in the row's earlier words
        q = q - before[at]  # the rank among the word's pool bits
        held = member.reshape(-1)[rows[who] * words + word]
        held = np.where(remove[who], held, ~held & self.valid_words[word])
        return 64 * word + _nth_set_bit(held, q)


def _first_distinct(owner: np.ndarray, starts: np.ndarray, rank: np.ndarray, need: np.ndarray,
                    n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The first ``need`` distinct ranks of each row's sequence: a uniformly random set of them.

    Returns ``keys`` (row and rank as one number), ``take`` (True at the ranks kept, in sequence
    order), ``kept`` (their positions, by key) and ``short`` (the rows whose sequence held fewer
    than ``need`` distinct ranks: none of theirs is kept). One stable sort of the (row, rank)
    keys serves twice: it marks first occurrences, and in its order the kept ranks ascend, so the
    binary search of `_SubsetSums._rows_of_ranks` narrows as it goes.
    """
    keys = owner * (n + 1) + rank
    order = _stable_order(keys)
    distinct = _first_occurrences(keys, order)
    seen = np.cumsum(distinct)
    seen -= np.concatenate([[0], seen[starts[1:] - 1]])[owner]
    take = distinct & (seen <= need[owner])
    short = np.bincount(owner[take], minlength=need.size) < need
    take &= ~short[owner]
    kept = order[take[order]]  # the kept entries, by key
    return keys, take, kept, short


def _stable_order(keys: np.ndarray) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for non-negative int64 ``keys``, faster.

    Each key is packed with its position, ``key * 2**b + i``: the packed values are distinct and
    order as (key, position) does, so numpy's unstable sort of them (vectorised) gives the
    stable order, which the low ``b`` bits then read off.
    """
    b = max(1, int(keys.size - 1).bit_length())
    if keys.size == 0 or int(keys.max()) >> (62 - b):  # the packing would overflow
        return np.argsort(keys, kind="stable")
    packed = keys << b
    packed |= np.arange(keys.size)
    packed.sort()
    return packed & ((1 << b) - 1)


def _first_occurrences(keys: np.ndarray, order: np.ndarray) -> np.ndarray:
    """True where ``keys[i]`` did not occur before position i (what ``np.unique``'s ``return_index`` marks).

    ``order`` is a stable argsort of ``keys``: in it each run of equal keys lists their
    positions first to last, so the first of a run is the first occurrence.
    """
    distinct = np.empty(keys.size, dtype=bool)
    if keys.size:
        ordered = keys[order]
        distinct[order[0]] = True
        distinct[order[1:]] = ordered[1:] != ordered[:-1]
    return distinct


def _nth_set_bit(words: np.ndarray, nth: np.ndarray) -> np.ndarray:
    """Position (0 = least significant) of the ``nth[i]``-th set bit of ``words[i]``, counting from 0.

    ``words`` uint64, ``nth`` integers with ``0 <= nth[i] < popcount(words[i])``; ``words`` is
    overwritten. Halving: if the low half of what is left holds at most ``nth`` set bits, skip
    them and move to the high half; after halves of 32, 16 and 8 bits one byte is left, read by
    table. (Shifts by 0 or by the half's bits, not masked operations: numpy's ``where=`` loops
    are slower; and 3 popcounts per entry, not 8 byte counts and their running sums.)
    """
    position, nth = np.zeros(words.shape, dtype=np.int64), nth.astype(np.uint8)
    for shift, mask in _HALVES:
        low = _popcount_small(words & mask)
        high = nth >= low
        nth -= low * high
        step = high.astype(np.uint64) * np.uint64(shift)
        words >>= step
        position += step.view(np.int64)
    return position + _SELECT8[(words & np.uint64(255)).astype(np.intp), nth]


def _bytes(words: np.ndarray) -> np.ndarray:
    """The bytes of 64-bit words, least significant first, shape (..., 8 * words)."""
    little = words if np.little_endian else words.byteswap()
    return little.view(np.uint8)


def _popcount_small(words: np.ndarray) -> np.ndarray:
    """Set bits of each 64-bit word (same shape, uint8: the fewest bytes to compute with)."""
    if hasattr(np, "bitwise_count"):  # NumPy 2: a vector instruction, not a table gather
        return np.bitwise_count(words)
    return _popcount64(words).astype(np.uint8)


def _popcount64(words: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Set bits of each 64-bit word (same shape, int64; into ``out`` if given)."""
    if hasattr(np, "bitwise_count"):  # NumPy 2
        return np.bitwise_count(words).astype(np.int64) if out is None else np.bitwise_count(words, out=out)
    return _POPCOUNT8[_bytes(words)].reshape(*words.shape, 8).sum(axis=-1, out=out)
