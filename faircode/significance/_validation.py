"""Input validation, shared options and special functions of :mod:`faircode.significance`.

Every public function of the package checks its arguments here before it computes anything, so
that bad input raises the same clear error (naming the argument and what was expected) whichever
procedure family it reaches: samples (:func:`_as_sample`, :func:`_as_binary_sample`,
:func:`_as_binary_outcome`), cluster and group labels (:func:`_as_labels`, :func:`_as_groups`),
choices, levels and random states (:func:`_check_choice`, :func:`_check_open_unit`,
:func:`_as_rng`). It also holds the options every family shares (the alternatives, the tie
tolerance, the batch size of a resampling step) and the special functions: SciPy's ``gammaln``,
``ndtr`` and ``ndtri`` imported on first use, and NumPy versions of ``logsumexp`` and
``log C(n, k)``.

Nothing here is public: :mod:`faircode.significance` is the namespace.
"""

from __future__ import annotations

import math
import numbers
import sys
import time
import warnings

import numpy as np

from faircode.formatting import check_positive_int as _check_positive_int


# SciPy's special functions, imported on first use: importing the package stays cheap for code
# that needs only part of it.
def gammaln(x):
    from scipy.special import gammaln as f

    return f(x)


def ndtr(x):
    from scipy.special import ndtr as f

    return f(x)


def ndtri(x):
    from scipy.special import ndtri as f

    return f(x)


def _logsumexp(x: np.ndarray) -> float:
    """``log(sum(exp(x)))`` of a non-empty 1-D array, shifted by its maximum so nothing overflows.

    Written with NumPy rather than ``scipy.special.logsumexp``, whose array-API dispatch costs
    about 0.25 ms a call: the exact test calls this twice, and a power simulation runs thousands
    of exact tests.
    """
    top = float(x.max())
    return top + math.log(float(np.exp(x - top).sum()))


# Loader's saddle-point expansion of binomial probabilities (the algorithm of R's dbinom and
# dhyper, and of FairCalc's twin): log P as a sum of terms no larger than the result, where a
# difference of log-gammas of 10^6 loses nine digits to cancellation (issue 47).
# _STIRLERR[n] = log(n!) - log(sqrt(2 pi n) (n / e)^n) for n = 1..15 (R's sferr_halves).
_STIRLERR = np.array([0.0, 0.08106146679532726, 0.0413406959554093, 0.02767792568499834, 0.020790672103765093,
                      0.016644691189821193, 0.013876128823070748, 0.01189670994589177, 0.010411265261972096,
                      0.009255462182712733, 0.00833056343336287, 0.007573675487951841, 0.00694284010720953,
                      0.006408994188004207, 0.0059513701127588475, 0.005554733551962801])
_LOG_2PI = math.log(2 * math.pi)


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """``log(n!) - log(sqrt(2 pi n) (n / e)^n)`` for whole numbers ``n >= 1`` (float array)."""
    nn = n * n
    series = (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - 1 / (1188 * nn)) / nn) / nn) / nn) / n
    return np.where(n <= 15, _STIRLERR[np.minimum(n, 15).astype(np.intp)], series)


def _bd0(x: np.ndarray, n: np.ndarray, share: np.ndarray, total: int) -> np.ndarray:
    """``x log(x / m) + m - x`` at ``m = n share / total``, for whole numbers ``x, n >= 1`` (int64 arrays).

    From the exact integers ``D = x total - n share`` and ``S = x total + n share``: ``x - m`` and
    ``v = (x - m) / (x + m)`` then carry one rounding each. Where ``|v| <= 1/2``, Loader's series
    ``(x - m) v + 2 x sum_j v^(2j+1) / (2j + 1)`` (no cancellation); beyond, the formula itself,
    whose two terms then differ by a factor of 2.5 at least.
    """
    diff, span = x * total - n * share, x * total + n * share
    v = diff / span
    x = x.astype(np.float64)
    with np.errstate(divide="ignore"):
        out = x * np.log((x * total) / (n * share)) - diff / total
    near = np.abs(v) <= 0.5
    if near.any():
        vn = v[near]
        v2 = vn * vn
        # sum_j v^(2j) / (2j + 1), j >= 1, by Horner's rule: terms fall by v^2 <= 1/4 each, enough of
        # them for 2^-56 of the first at the largest |v|; all positive, so no digit is lost.
        largest = float(v2.max())
        count = 1 if largest == 0.0 else min(27, math.ceil(-56 * math.log(2) / math.log(largest)))
        tail = np.full(v2.shape, 1.0 / (2 * count + 1))
        for j in range(count - 1, 0, -1):
            tail *= v2
            tail += 1.0 / (2 * j + 1)
        tail *= v2
        out[near] = diff[near] / total * vn + 2 * x[near] * vn * tail
    return out


def _log_binomial_pmf(x: np.ndarray, n: np.ndarray, draws: int, total: int) -> np.ndarray:
    """``log P(Binomial(n, p) = x)`` at ``p = draws / total`` (``0 < draws < total``): int64 arrays of one
    shape, whole numbers ``0 <= x <= n``."""
    rest = total - draws
    inner = (x > 0) & (x < n)
    # Every trial alike: log P = n log q = -bd0(n, n q) - n p (or n log p), accurate when q is near 1.
    zero, full = (x == 0) & (n > 0), (x == n) & (n > 0)
    xi, ni, nz, nf = x[inner], n[inner], n[zero], n[full]
    k = xi.size
    # One bd0 call for all four kinds of term: (x, n p), (n - x, n q), (n, n q) at x = 0, (n, n p) at x = n.
    shares = np.repeat(np.array([draws, rest, rest, draws], dtype=np.int64), [k, k, nz.size, nf.size])
    bd0 = _bd0(np.concatenate([xi, ni - xi, nz, nf]), np.concatenate([ni, ni, nz, nf]), shares, total)
    xf, nfl = xi.astype(np.float64), ni.astype(np.float64)
    stirlerr = _stirlerr(np.concatenate([nfl, xf, nfl - xf])).reshape(3, k)
    out = np.zeros(x.shape)
    out[inner] = (stirlerr[0] - stirlerr[1] - stirlerr[2] - bd0[:k] - bd0[k:2 * k]
                  - 0.5 * (_LOG_2PI + np.log(xf) + np.log1p(-xf / nfl)))
    out[zero] = -bd0[2 * k:2 * k + nz.size] - nz * (draws / total)
    out[full] = -bd0[2 * k + nz.size:] - nf * (rest / total)
    return out


def _log_hypergeom_pmf(x: np.ndarray, ones: int, zeros: int, draws: int) -> np.ndarray:
    """``log P(X = x)``: ``X`` ones among ``draws`` rows drawn without replacement from ``ones + zeros``.

    As three binomial probabilities at ``p = draws / (ones + zeros)`` (Loader 2000; R's dhyper),
    each from exact integers: relative error near 1e-14 at any size, in tails of 1e-50 and beyond.
    """
    total = ones + zeros
    if total >= 3_000_000_000:  # x total and n draws must stay within int64
        raise ValueError(f"the exact test handles up to 3,000,000,000 rows in all; got {total:,}")
    x = np.asarray(x, dtype=np.int64)
    k = x.size
    # One call for the three: P(x of the ones) P(draws - x of the zeros) / P(draws of all).
    counts = np.concatenate([x, draws - x, [draws]])
    sizes = np.repeat(np.array([ones, zeros, total], dtype=np.int64), [k, k, 1])
    log_p = _log_binomial_pmf(counts, sizes, draws, total)
    return log_p[:k] + log_p[k:2 * k] - log_p[-1]


# A term below this share of the running sum ends a sum over a tail: the rest of a log-concave
# tail whose terms fall this far is below 1e-18 of the sum (FairCalc's VANISH).
_VANISH = 1e-20


def _hypergeom_mass(first: int, last: int, mode: int, ones: int, zeros: int, draws: int) -> float:
    """``P(first <= X <= last)`` for ``X`` as in :func:`_log_hypergeom_pmf`, the interval on one side of ``mode``.

    Summed from the end nearest the mode outwards, in chunks that double, until a term falls below
    ``_VANISH`` of the sum: O(standard deviations) terms, not O(support), and each term is a
    probability in its own right (no division by a total).
    """
    if first > last:
        return 0.0
    step = 1 if first > mode else -1
    pos, stop = (first, last) if step > 0 else (last, first)
    total, size = 0.0, 256
    while True:
        end = min(pos + size - 1, stop) if step > 0 else max(pos - size + 1, stop)
        terms = np.exp(_log_hypergeom_pmf(np.arange(pos, end + step, step), ones, zeros, draws))
        total += float(terms.sum())
        if end == stop or terms[-1] <= _VANISH * total:
            return total
        pos, size = end + step, size * 2


# Two gaps closer than this (relative to the largest absolute centred outcome) are a tie. It sits
# far above the rounding error of a sum of 10^6 values (about 1e-10 in the worst case) and far
# below any gap that means anything, so relabellings that tie in exact arithmetic count as
# extreme however the floating-point sums happened to round.
_TIE_RTOL = 1e-9

# Elements (indices or gathered values) per resampling batch: 2**21 * 8 bytes = 16 MiB each, so
# a batch holds at most a few tens of MiB whatever the number of resamples.
_BATCH_ELEMENTS = 1 << 21

_ALTERNATIVES = ("two-sided", "less", "greater")
_TEST_METHODS = ("auto", "exact", "monte_carlo")


# ---------------------------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------------------------


def _is_missing(value) -> bool:
    # pandas.NA is recognised by name so that the package does not import pandas.
    return value is None or type(value).__name__ in {"NAType", "NaTType"}


def _as_sample(x, name: str) -> np.ndarray:
    """Return ``x`` as a finite, non-empty, 1-D float64 array, or raise naming ``name``."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"`{name}` must be a 1-D array of numbers, got a string")
    arr = np.asarray(x)
    if arr.dtype.kind == "O":
        bad = [v for v in arr.ravel() if not (_is_missing(v) or isinstance(v, (numbers.Real, np.bool_)))]
        if bad:
            raise TypeError(
                f"`{name}` must contain numbers (or 0/1 / booleans); found "
                f"{type(bad[0]).__name__} value {bad[0]!r}"
            )
        arr = np.array([np.nan if _is_missing(v) else float(v) for v in arr.ravel()]).reshape(arr.shape)
    elif arr.dtype.kind not in "biuf":
        raise TypeError(
            f"`{name}` must be numeric (numbers, 0/1 or booleans); got dtype {arr.dtype}"
        )
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one outcome per row); got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"`{name}` must contain at least one row; it is empty")
    arr = arr.astype(np.float64, copy=False)
    finite = np.isfinite(arr)
    if not finite.all():
        raise ValueError(f"`{name}` must not contain NaN or infinite values; {_where(~finite)}; drop or impute "
                         "missing outcomes first")
    return arr


# Outcomes larger in magnitude than this, or all smaller than its inverse, are computed with in a
# unit a power of two away (an exact change of unit), so that their sums over 2^40 rows, their
# squares and cubes (the BCa acceleration) neither overflow nor underflow (issue 47: outcomes near
# 1e308 gave a gap of inf, "significant", and a false "cannot vary" warning).
_SAFE_MAGNITUDE = 2.0**256


def _rescaled(samples: tuple, names: str) -> tuple[tuple, float]:
    """``(samples / unit, unit)``: ``unit`` 1.0 for outcomes of ordinary size, else a power of two.

    Dividing by a power of two is exact, and every p-value here is unchanged by a change of unit
    while gaps, means and intervals follow it (times ``unit``), so results are those of exact
    arithmetic in the original unit. ``names`` names the arguments for the error: ValueError when
    the outcomes span more than the largest float (a gap between their means might not fit in one).
    """
    top = max(float(np.abs(x).max()) for x in samples)
    low, high = min(float(x.min()) for x in samples), max(float(x.max()) for x in samples)
    if not math.isfinite(high - low):
        raise ValueError(f"{names}: the outcomes run from {low:.4g} to {high:.4g}, a span beyond the largest float "
                         "(1.8e308), so a gap between their means may not be representable; divide them by a "
                         "constant (a change of unit) first")
    if top == 0.0 or 1.0 / _SAFE_MAGNITUDE <= top <= _SAFE_MAGNITUDE:
        return samples, 1.0
    unit = 2.0 ** (math.frexp(top)[1] - 1)  # top / unit in [1, 2); 2^1024 is past the largest float
    return tuple(x / unit for x in samples), unit


def _seconds(work, repeats: int = 2) -> float:
    """Seconds ``work()`` takes: the mean of ``repeats`` runs after one that pays for allocations.

    A mean, not the least: on a loaded machine the least is a lucky run, and the estimate came out
    at about half the time the work then took.
    """
    work()
    start = time.perf_counter()
    for _ in range(repeats):
        work()
    return (time.perf_counter() - start) / repeats


def _warn_long(what: str, seconds: float, faster: str) -> None:
    """Say, before a long resampling step starts, how long it will take and what would be faster.

    Issue 47: 5 million against 5 million continuous rows ran 18 minutes with no word. Callers warn
    when the work (rows times draws) passes a fixed bound, so whether it warns does not depend on
    the machine; ``seconds`` (a first draw timed, times the draws) says how long on this one. The
    warning points at the first caller outside this package.
    """
    frame, level = sys._getframe(0), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("faircode.significance"):
        frame, level = frame.f_back, level + 1
    if seconds < 90:
        about = f"{seconds:.0f} seconds"
    elif seconds < 5400:
        about = f"{seconds / 60:.0f} minutes"
    else:
        about = f"{seconds / 3600:.1f} hours"
    warnings.warn(f"{what} will take about {about} on this machine (a first draw, timed); faster: {faster}",
                  UserWarning, stacklevel=level)


def _check_choice(value, name: str, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"`{name}` must be one of {options}; got {value!r}")
    return value


def _check_open_unit(value, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a number strictly between 0 and 1; got {value!r}")
    if not 0.0 < float(value) < 1.0:
        raise ValueError(f"`{name}` must be strictly between 0 and 1; got {value}")
    return float(value)


def _as_rng(random_state) -> np.random.Generator:
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(f"`random_state` must be None, an int, a SeedSequence or a Generator; got {random_state!r}")
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            "`random_state` must be None, a non-negative int, a numpy SeedSequence or a "
            f"numpy Generator; got {random_state!r}"
        ) from exc


def _as_labels(labels, name: str, n: int) -> np.ndarray:
    arr = np.asarray(labels)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one cluster label per row); got shape {arr.shape}")
    if arr.size != n:
        raise ValueError(f"`{name}` must have one label per row of its group ({n}); got {arr.size}")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise ValueError(f"`{name}` must not contain NaN cluster labels; {_where(np.isnan(arr))}")
    if arr.dtype.kind == "O":
        missing = np.array([_is_missing(v) or (isinstance(v, float) and math.isnan(v)) for v in arr], dtype=bool)
        if missing.any():
            raise ValueError(f"`{name}` must not contain missing cluster labels (None/NA/NaN); {_where(missing)}")
    return arr


def _where(bad: np.ndarray) -> str:
    """``"found 3 (first at index 7)"``: how many entries of a 1-D boolean mask are set, and the first."""
    at = np.flatnonzero(bad)
    return f"found {at.size} (first at index {at[0]})"


def _kinds(*arrays) -> str:
    """The types of the values of labels that cannot be sorted together, for the message: ``"int and str"``."""
    names = sorted({type(v).__name__ for arr in arrays for v in np.asarray(arr, dtype=object).ravel()})
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0] if names else "none"


def _as_group_labels(groups, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate per-row group labels; return (sorted unique labels, code per row)."""
    labels = _as_labels(groups, "groups", n)
    try:
        uniques, codes = np.unique(labels, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"`groups` labels must be mutually comparable (e.g. all str); found {_kinds(labels)} "
                        "labels") from exc
    if uniques.size < 2:
        raise ValueError(f"`groups` must hold at least two groups to compare; got {uniques.size}")
    return uniques, codes.ravel()


def _cluster_codes(labels: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Return (unique labels, code per row) with codes in order of first appearance."""
    try:
        uniques, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"`{name}` labels must be mutually comparable (e.g. all str or all int); found "
                        f"{_kinds(labels)} labels") from exc
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return uniques[order], rank[inverse.ravel()]


def _as_groups(groups, n_a: int, n_b: int):
    """Validate ``groups=(groups_a, groups_b)``; return per-group cluster codes or None."""
    if groups is None:
        return None
    if not isinstance(groups, (tuple, list)) or len(groups) != 2:
        raise TypeError(
            "`groups` must be a pair (groups_a, groups_b) of cluster labels, one per row of "
            f"`a` and of `b`; got {type(groups).__name__}"
        )
    labels_a = _as_labels(groups[0], "groups[0]", n_a)
    labels_b = _as_labels(groups[1], "groups[1]", n_b)
    uniques_a, codes_a = _cluster_codes(labels_a, "groups[0]")
    uniques_b, codes_b = _cluster_codes(labels_b, "groups[1]")
    try:
        shared = np.intersect1d(uniques_a, uniques_b)
    except TypeError as exc:
        raise TypeError(f"`groups` labels must be mutually comparable across both groups; found {_kinds(uniques_a)} "
                        f"labels in `groups[0]` and {_kinds(uniques_b)} in `groups[1]`") from exc
    if shared.size:
        raise ValueError(
            "`groups`: a cluster must lie wholly in `a` or wholly in `b` (whole clusters are "
            f"relabelled together); {shared.size} label(s) appear in both, e.g. {shared[:3].tolist()}"
        )
    return codes_a, codes_b


def _check_exact_allowed(method: str, grouped: bool, non_binary: str | None) -> None:
    """Refuse ``method="exact"`` with ``groups`` or on outcomes other than 0/1 (``non_binary``:
    None when all are 0/1, else what to say about where the others are)."""
    if method != "exact":
        return
    if grouped:
        raise ValueError("`method='exact'` is not available with `groups`; use 'monte_carlo' or 'auto'")
    if non_binary is not None:
        raise ValueError(f"`method='exact'` needs 0/1 outcomes in both `a` and `b`; {non_binary}use "
                         "'monte_carlo' or 'auto' for other outcomes")


def _check_test_options(n_permutations, alternative, method, batch_size):
    n_permutations = _check_positive_int(n_permutations, "n_permutations")
    alternative = _check_choice(alternative, "alternative", _ALTERNATIVES)
    method = _check_choice(method, "method", _TEST_METHODS)
    if batch_size is not None:
        batch_size = _check_positive_int(batch_size, "batch_size")
    return n_permutations, alternative, method, batch_size


def _is_binary(x: np.ndarray) -> bool:
    return bool(np.all((x == 0.0) | (x == 1.0)))


def _batch_rows(batch_size: int | None, row_elements: int) -> int:
    if batch_size is not None:
        return batch_size
    return max(1, _BATCH_ELEMENTS // max(1, row_elements))


def _as_zero_one(x, name: str, expected: str) -> np.ndarray:
    """``x`` as a sample (:func:`_as_sample`) of 0s and 1s; else a ValueError naming ``name``, what
    it must hold (``expected``) and the first other value and its index."""
    arr = _as_sample(x, name)
    if not _is_binary(arr):
        other = (arr != 0.0) & (arr != 1.0)
        raise ValueError(f"`{name}` must hold {expected}; found {arr[other][0]:g} at index {np.flatnonzero(other)[0]}")
    return arr


def _as_binary_sample(x, name: str) -> np.ndarray:
    return _as_zero_one(x, name, "only 0 and 1 (a score interval is for proportions)")


def _as_binary_outcome(outcome, name: str = "outcome") -> np.ndarray:
    return _as_zero_one(outcome, name, "0/1 outcomes (or booleans)")


def _log_choose(n: int, k: np.ndarray) -> np.ndarray:
    k = np.asarray(k, dtype=np.float64)
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
