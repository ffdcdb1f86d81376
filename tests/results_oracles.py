"""Oracles shared by the tests of the results files (tests/test_results_verdicts.py,
tests/test_benchmark_groups.py): computed from the files' own columns with statsmodels and the
rules results/README.md states, never with the benchmark's code."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

FAMILY = ["audit", "strategy", "model", "attribute", "metric"]


def _mc_error(p: float, n: int) -> float:
    return max(math.sqrt(p * (1 - p) / n), 1 / n)


def check_family_q_values(by_group: pd.DataFrame) -> None:
    """Each family q-value is Benjamini-Hochberg's (statsmodels) on the audit's family p-values; where a
    Monte Carlo p-value of the audit is at or above the family's own, it is rounded to the decimal place
    of the leading digit of its Monte Carlo standard error (results/README.md), else kept whole."""
    families = by_group.drop_duplicates(FAMILY)
    for p_column, q_column, method in (("p_value_max_gap", "q_value_max_gap", "method_max_gap"),
                                       ("p_value_omnibus", "q_value_omnibus", "method_omnibus")):
        for audit, rows in families.groupby("audit"):
            p = rows[p_column].to_numpy(dtype=float)
            q = multipletests(p, method="fdr_bh")[1]
            mc = rows[method].to_numpy() == "monte_carlo"
            draws = rows["n_permutations"].to_numpy(dtype=float)
            for written, bh, own in zip(rows[q_column], q, p):
                above = [(s, int(n)) for s, n in zip(p[mc], draws[mc]) if s >= own]
                if not above:
                    assert written == pytest.approx(bh, rel=1e-9), (audit, p_column)
                    continue
                source, n = min(above)
                place = 10.0 ** math.floor(math.log10(bh * _mc_error(source, n) / source))
                assert abs(written - bh) <= place / 2 * (1 + 1e-9), (audit, p_column, written, bh, place)
                assert abs(written / place - round(written / place)) < 1e-6, (written, place)
