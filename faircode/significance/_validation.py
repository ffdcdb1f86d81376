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
        bad_at = np.flatnonzero(~finite)
        raise ValueError(
            f"`{name}` must not contain NaN or infinite values; found {bad_at.size} "
            f"(first at index {bad_at[0]}); drop or impute missing outcomes first"
        )
    return arr


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
        raise ValueError(f"`{name}` must not contain NaN cluster labels")
    if arr.dtype.kind == "O" and any(_is_missing(v) or (isinstance(v, float) and math.isnan(v)) for v in arr):
        raise ValueError(f"`{name}` must not contain missing cluster labels (None/NA/NaN)")
    return arr


def _as_group_labels(groups, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Validate per-row group labels; return (sorted unique labels, code per row)."""
    labels = _as_labels(groups, "groups", n)
    try:
        uniques, codes = np.unique(labels, return_inverse=True)
    except TypeError as exc:
        raise TypeError("`groups` labels must be mutually comparable (e.g. all str)") from exc
    if uniques.size < 2:
        raise ValueError(f"`groups` must hold at least two groups to compare; got {uniques.size}")
    return uniques, codes.ravel()


def _cluster_codes(labels: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Return (unique labels, code per row) with codes in order of first appearance."""
    try:
        uniques, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"`{name}` labels must be mutually comparable (e.g. all str or all int)") from exc
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
        raise TypeError("`groups` labels must be mutually comparable across both groups") from exc
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


def _as_binary_sample(x, name: str) -> np.ndarray:
    arr = _as_sample(x, name)
    if not _is_binary(arr):
        bad = arr[(arr != 0.0) & (arr != 1.0)][0]
        raise ValueError(f"`{name}` must hold only 0 and 1 (a score interval is for proportions); found {bad!r}")
    return arr


def _as_binary_outcome(outcome, name: str = "outcome") -> np.ndarray:
    x = _as_sample(outcome, name)
    if not _is_binary(x):
        bad = x[(x != 0.0) & (x != 1.0)][0]
        raise ValueError(f"`{name}` must hold 0/1 outcomes (or booleans); found {bad:g}")
    return x


def _log_choose(n: int, k: np.ndarray) -> np.ndarray:
    k = np.asarray(k, dtype=np.float64)
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
