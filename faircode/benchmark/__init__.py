"""The benchmark: every audit x strategy x model x protected attribute x fairness metric.

`run_benchmark` fits each (audit, model, feature set) once (S3 is S2's fitted model plus a
post-processing step, so the two share one fit), computes every gap
of `faircode.metrics.GAP_METRICS` for every protected attribute on the test split, attaches
the exact permutation test and a score interval of `faircode.significance` (Newcombe's hybrid
score interval for a difference of rates, MOVER-R with Wilson limits for the disparate impact ratio; the method
is recorded per row in ``ci_method``), and adjusts the p-values for the false discovery rate
(Benjamini-Hochberg) within each audit, counting a repeated test once (``same_test_as``). Each row also
gets the equivalence test (TOST) at the margin its audit's manifest declares, the power at that
margin, the equivalence p-values adjusted as the usual ones are, and the three-state verdict
(``verdict``: a gap shown, no gap of practical size shown, inconclusive). `write_results` writes
``results/results_fairness.csv`` and ``results/results_performance.csv`` byte-for-byte
reproducibly; `compare_results` lists every cell that differs from the committed files beyond
the tolerance `faircode.tolerances` declares for its kind of quantity (`COLUMN_KINDS`).

For audits whose manifest has a ``groups:`` section, the same fit also gives every group's
rates (`faircode.groups.compare_groups`: each group of a multi-group attribute or an
intersection, with its interval, its comparison with the reference group and the max-gap
test), written beside the two-group table as ``results/results_by_group.csv``.

Determinism: each row's random state is derived from the manifest's ``random_state`` and the
row's key with ``zlib.crc32`` (not Python's salted ``hash``), so results do not depend on task
order, ``n_jobs`` or the backend, and models fit with one BLAS/OpenMP thread
(`faircode.models.fit_predict`), so the job count never changes a number. Rows are sorted, columns fixed and floats written with
``%.10g``.

Layout (every name is importable from ``faircode.benchmark`` itself):

- ``columns``: the constants (``ALPHA``, ``CONFIDENCE_LEVEL``, ``N_PERMUTATIONS``) and the
  results files' names, keys and columns;
- ``plan``: `Task` and `plan_tasks`, which tasks a run fits; `plan_fits`, which of them share a fit;
- ``task``: `run_task` / `run_tasks` / `evaluate`, one fit's fairness, performance and by-group rows;
- ``backends``: where the tasks run (this process, forked local processes, a dask cluster);
- ``verdicts``: each row's equivalence test and power at the audit's margin (in the workers), their
  family adjustment and the three-state verdict (`faircode.significance.classify_gap`, issue 45);
- ``tables``: the rows as sorted, typed tables, with q-values and verdicts within each audit;
- ``run``: `run_benchmark`, plan -> backends -> tables;
- ``results_io``: `write_results`, `merge_results`, `merge_by_group`;
- ``compare``: `compare_results` and the tolerance of each column (`COLUMN_KINDS`).
"""

from __future__ import annotations

from faircode.benchmark.columns import (
    _FLOAT_FORMAT,
    ALPHA,
    BY_GROUP_COLUMNS,
    BY_GROUP_FILE,
    BY_GROUP_KEY,
    CONFIDENCE_LEVEL,
    FAIRNESS_COLUMNS,
    FAIRNESS_FILE,
    FAIRNESS_KEY,
    N_PERMUTATIONS,
    PERFORMANCE_COLUMNS,
    PERFORMANCE_FILE,
    PERFORMANCE_KEY,
)
from faircode.benchmark.compare import COLUMN_KINDS, column_tolerance, compare_results
from faircode.benchmark.plan import Task, _load_dataset, default_audits, plan_fits, plan_tasks
from faircode.benchmark.results_io import merge_by_group, merge_results, write_results
from faircode.benchmark.run import run_benchmark
from faircode.benchmark.tables import _family_q_values
from faircode.benchmark.task import _row_seed, evaluate, run_task, run_tasks

__all__ = [
    "ALPHA",
    "CONFIDENCE_LEVEL",
    "N_PERMUTATIONS",
    "FAIRNESS_COLUMNS",
    "PERFORMANCE_COLUMNS",
    "FAIRNESS_FILE",
    "PERFORMANCE_FILE",
    "Task",
    "default_audits",
    "plan_tasks",
    "plan_fits",
    "run_task",
    "run_tasks",
    "evaluate",
    "run_benchmark",
    "write_results",
    "merge_results",
    "compare_results",
    "COLUMN_KINDS",
    "column_tolerance",
    "BY_GROUP_COLUMNS",
    "BY_GROUP_FILE",
    "merge_by_group",
]
