"""Multiple-testing adjustment: :func:`adjust_p_values`.

Holm's step-down adjustment (family-wise error rate) [1]_ and Benjamini-Hochberg's step-up
adjustment (false discovery rate) [2]_. How a p-value is printed, :func:`format_p_value`, lives
in the NumPy-free :mod:`faircode.formatting` and is re-exported by :mod:`faircode.significance`.

References
----------
.. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
   *Scandinavian Journal of Statistics* 6(2), 65-70.
.. [2] Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate: a practical
   and powerful approach to multiple testing. *Journal of the Royal Statistical Society B*
   57(1), 289-300.
"""

from __future__ import annotations

import numpy as np

from faircode.significance._validation import _check_choice


_ADJUST_METHODS = {"holm": "holm", "bh": "bh", "fdr_bh": "bh"}


def adjust_p_values(p_values, *, method: str = "holm") -> np.ndarray:
    """Adjust p-values of many gaps for multiple comparisons.

    Parameters
    ----------
    p_values : array_like of float, any shape
        p-values in [0, 1]; NaN marks an untestable gap.
    method : {"holm", "bh", "fdr_bh"}, default "holm"
        ``"holm"``: Holm's step-down adjustment, controls the family-wise error rate (FWER)
        [1]_. ``"bh"`` (alias ``"fdr_bh"``): Benjamini-Hochberg step-up adjustment, controls
        the false discovery rate (FDR) under independence or positive dependence [2]_.

    Returns
    -------
    numpy.ndarray
        Adjusted p-values (float64, same shape as the input), in [0, 1]; NaN where the input
        was NaN. Compare them with ``alpha`` directly.

    Raises
    ------
    TypeError
        Non-numeric input.
    ValueError
        Unknown ``method``; a value outside [0, 1] or infinite.

    Notes
    -----
    With ``m`` non-NaN p-values sorted ``p_(1) <= ... <= p_(m)``: Holm gives
    ``max_{j <= i} min(1, (m - j + 1) p_(j))``; BH gives ``min_{j >= i} min(1, m p_(j) / j)``.
    NaN entries are not counted in ``m``. Results equal statsmodels' ``multipletests`` with
    ``"holm"`` and ``"fdr_bh"``.

    References
    ----------
    .. [1] Holm, S. (1979). A simple sequentially rejective multiple test procedure.
       *Scandinavian Journal of Statistics* 6(2), 65-70.
    .. [2] Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate.
       *Journal of the Royal Statistical Society B* 57(1), 289-300.

    Examples
    --------
    >>> from faircode.significance import adjust_p_values
    >>> adjust_p_values([0.01, 0.04, float("nan"), 0.03], method="holm").round(3).tolist()
    [0.03, 0.06, nan, 0.06]
    >>> adjust_p_values([0.01, 0.04, 0.03], method="bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    method = _check_choice(method, "method", tuple(_ADJUST_METHODS))
    arr = np.asarray(p_values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`p_values` must be numeric; got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    valid = ~np.isnan(arr)
    values = arr[valid]
    if np.any(~np.isfinite(values)) or np.any((values < 0) | (values > 1)):
        raise ValueError("`p_values` must lie in [0, 1] (NaN allowed for untestable gaps)")
    out = np.full(arr.shape, np.nan)
    m = values.size
    if m == 0:
        return out
    order = np.argsort(values, kind="stable")
    ranked = values[order]
    rank = np.arange(1, m + 1)
    if _ADJUST_METHODS[method] == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * ranked))
    else:
        adjusted = np.minimum.accumulate(np.minimum(1.0, m * ranked / rank)[::-1])[::-1]
    result = np.empty(m)
    result[order] = adjusted
    out[valid] = result
    return out
