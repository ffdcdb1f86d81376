"""Tests across many groups and within strata: the former home of these names, kept as an alias.

The tests live in :mod:`faircode.significance` with the rest of the statistics
(``faircode/significance/_homogeneity.py``: :func:`homogeneity_test`, :func:`max_t_test`;
``faircode/significance/_strata.py``: :func:`cmh_test`, :func:`breslow_day_test`,
:func:`stratified_permutation_test`), where their docstrings and references are. This module
re-exports them, so ``from faircode.group_tests import homogeneity_test`` keeps working in the
explainers' code and in readers' notebooks; new code imports from :mod:`faircode.significance`.
"""

from faircode.significance import (
    MAX_EXACT_TABLES,
    BreslowDayResult,
    CMHTestResult,
    HomogeneityTestResult,
    MaxTTestResult,
    StratifiedTestResult,
    breslow_day_test,
    cmh_test,
    homogeneity_test,
    max_t_test,
    stratified_permutation_test,
)

__all__ = [
    "BreslowDayResult",
    "CMHTestResult",
    "HomogeneityTestResult",
    "MaxTTestResult",
    "StratifiedTestResult",
    "breslow_day_test",
    "cmh_test",
    "homogeneity_test",
    "max_t_test",
    "stratified_permutation_test",
]
