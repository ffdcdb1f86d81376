"""The ``faircode`` command line.

``faircode benchmark`` runs the benchmark and writes ``results/``; with ``--check`` it re-runs
and reports each cell that differs from the committed files beyond the tolerance of its kind
(``faircode.tolerances``; exit code 1 if any). Both first say which installed packages differ
from the lock files (``faircode.environment``). More
subcommands hang off the same parser (see `_build_parser`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

__all__ = ["main"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="faircode", description="Fair Code Project: fairness audits on real data."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    bench = sub.add_parser(
        "benchmark",
        help="run every audit x strategy x model x attribute x metric and write results/",
        description=(
            "Run the fairness benchmark and write results_fairness.csv, "
            "results_performance.csv and results_by_group.csv (byte-identical on rerun). A subset (--audit, "
            "--strategy, --model) is merged into the committed files: its rows are replaced, the others kept "
            "(q-values recomputed within each audit); --check compares a subset with its committed rows."
        ),
    )
    bench.add_argument("--audit", action="append", metavar="NAME", help="audit slug or path (repeatable; default: all)")
    bench.add_argument("--strategy", action="append", metavar="S", help="strategy, e.g. S2 (repeatable; default: the manifest's)")
    bench.add_argument("--model", action="append", metavar="M", help="model, e.g. logistic_regression (repeatable; default: the manifest's)")
    bench.add_argument("--jobs", type=int, default=1, metavar="N", help="parallel tasks with joblib; -1 = all cores (default 1)")
    bench.add_argument("--backend", choices=("joblib", "dask"), default="joblib", help="where tasks run (default joblib)")
    bench.add_argument("--scheduler", metavar="ADDRESS", help="dask scheduler address, e.g. tcp://127.0.0.1:8786 (with --backend dask)")
    bench.add_argument("--check", action="store_true", help="re-run and compare with the committed files instead of writing; exit 1 on any difference")
    bench.add_argument("--output", metavar="DIR", help="results directory (default: the project's results/, "
                       "wherever the command starts)")
    bench.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    bench.set_defaults(handler=_benchmark)
    return parser


def _benchmark(args: argparse.Namespace) -> int:
    from rich.console import Console

    # Wide when not on a terminal, so a CI log keeps the difference table readable.
    console = Console(width=None if sys.stdout.isatty() else 200)
    if args.backend == "dask" and not args.scheduler:
        _error(console, "--backend dask needs --scheduler ADDRESS")
        return 2
    try:
        root = _project(console)
        args.output = args.output or str(root / "results")
        start = time.perf_counter()
        fairness, performance, by_group = _run(args)
    except (ValueError, FileNotFoundError) as exc:  # bad names, unknown audit, broken manifest, no audits/
        # Name the flag the user typed, not the library's argument.
        message = str(exc)
        for arg, flag in (("`audits`", "--audit"), ("`strategies`", "--strategy"), ("`models`", "--model"),
                          ("`n_jobs`", "--jobs")):
            message = message.replace(arg, flag)
        _error(console, message)
        return 2
    elapsed = time.perf_counter() - start
    if args.check:
        return _check(args, console, fairness, performance, by_group, elapsed)
    return _write(args, console, fairness, performance, by_group, elapsed)


def _run(args: argparse.Namespace):
    from faircode.benchmark import run_benchmark

    return run_benchmark(
        audits=args.audit,
        strategies=args.strategy,
        models=args.model,
        n_jobs=args.jobs,
        backend=args.backend,
        scheduler=args.scheduler,
        progress=not args.no_progress,
        return_by_group=True,
    )


def _write(args, console, fairness, performance, by_group, elapsed: float) -> int:
    """Write the results files (a partial run merged into the committed ones); exit code 0, or 1
    when a committed file cannot be merged or a file cannot be written (the error names it)."""
    from faircode.benchmark import merge_by_group, merge_results, write_results

    ran = len(fairness)
    if _partial(args):
        # A partial run updates its own rows of the committed tables, never truncates them.
        try:
            fairness, performance = merge_results(fairness, performance, args.output)
            by_group = merge_by_group(by_group, args.output)
        except ValueError as exc:  # a malformed or repeated committed row, named by file and line
            _error(console, f"{exc}; nothing was written")
            return 1
    try:
        paths = write_results(fairness, performance, args.output, by_group=by_group)
    except OSError as exc:  # a full disk, a read-only folder: the message names the file
        _error(console, exc.strerror if exc.filename is None and exc.strerror else str(exc))
        return 1
    console.print(
        f"ran {ran} fairness rows; wrote {len(fairness)} fairness rows, {len(performance)} "
        f"performance rows and {len(by_group)} by-group rows to {paths[0].parent} in {elapsed:.1f} s"
    )
    return 0


def _check(args, console, fairness, performance, by_group, elapsed: float) -> int:
    """Compare with the committed files; exit code 1 on a cell beyond its tolerance."""
    from faircode.benchmark import compare_results
    from faircode.benchmark.compare import unchecked_rows

    partial = _partial(args)
    try:
        diffs = compare_results(fairness, performance, args.output, by_group=by_group, include_within=True,
                                complete=not partial)
    except (FileNotFoundError, ValueError) as exc:  # no committed file; a malformed row (file and line)
        _error(console, str(exc))
        return 1
    within = diffs[diffs["within_tolerance"]]
    beyond = diffs[~diffs["within_tolerance"]]
    noise = (f"; {len(within)} cells differ within their tolerance (e.g. "
             f"{_example(within)})" if len(within) else "")
    if partial:
        # Say what a partial check left alone: its "reproduce" covers the selected tasks only.
        skipped = {name: n for name, n in unchecked_rows(performance, args.output).items() if n}
        chosen = " ".join(f"{flag} {' '.join(values)}" for flag, values in
                          (("--audit", args.audit), ("--strategy", args.strategy), ("--model", args.model)) if values)
        left = ", ".join(f"{n} rows of {name}" for name, n in skipped.items()) or "no other rows"
        console.print(f"partial check ({chosen}): only the tasks selected were compared; not checked: {left} "
                      f"(run without --audit, --strategy and --model to check every row)", markup=False)
    if beyond.empty:
        console.print(f"results reproduce: {len(fairness)} fairness rows and {len(by_group)} by-group rows "
                      f"match the committed ones{noise} "
                      f"({elapsed:.1f} s)", markup=False)
        return 0
    console.print(_difference_table(beyond, args.output))
    if noise:
        console.print(noise.removeprefix("; "), markup=False)
    console.print("tolerances: faircode/tolerances.py (results/README.md); if the change is intended, "
                  "re-run `faircode benchmark` and commit results/", markup=False)
    return 1


def _partial(args: argparse.Namespace) -> bool:
    return bool(args.audit or args.strategy or args.model)


def _difference_table(beyond, output: str):
    """The cells beyond tolerance, one row each, named by their key columns."""
    from rich.table import Table

    rows = int((beyond["column"] == "(row)").sum())
    what = ", ".join(part for part in (f"{len(beyond) - rows} cells differ" if len(beyond) > rows else "",
                                       f"{rows} rows cannot be accounted for" if rows else "") if part)
    table = Table(title=f"{what}: the committed results in {output} against the run (beyond tolerance)")
    for col in ("file", "row", "column", "committed", "current", "difference", "tolerance"):
        table.add_column(col, overflow="fold")
    key = ["audit", "strategy", "model", "attribute", "group", "metric"]
    for row in beyond.to_dict("records"):
        ident = " ".join(str(row[k]) for k in key if row[k])
        table.add_row(row["file"], ident, row["column"], str(row["committed"]), str(row["current"]),
                      row["difference"], row["tolerance"])
    return table


def _error(console, message: str) -> None:
    console.print("[red]error:[/red] ", end="")
    console.print(message, markup=False)


def _example(within) -> str:
    row = within.iloc[0]
    return f"{row['column']} of {row['audit']}/{row['strategy']}/{row['model']}: {row['difference']}, {row['tolerance']}"


def _project(console):
    """The one project folder the benchmark reads ``audits/`` and ``data/`` from and writes
    ``results/`` to: `faircode.data.project_root`'s (``FAIRCODE_ROOT``, else the clone faircode
    is installed from, else the current folder's), after the lock warning.

    Raises FileNotFoundError (the command says it and stops, exit code 2) when the current folder
    lies in another project than that one: from a second clone sharing a virtual environment, the
    benchmark read the first clone's manifests and compared them with this clone's results, so a
    broken ``audit.yaml`` passed ``--check`` (issue 47)."""
    from faircode.data import ROOT_ENV, enclosing_project, project_root
    from faircode.environment import print_lock_warning

    root = project_root()
    here = enclosing_project(".")
    if here is not None and here != root and not os.environ.get(ROOT_ENV):  # the variable is a choice made
        raise FileNotFoundError(
            f"the current folder is in the project {here}, but faircode reads audits/, data/ and results/ from "
            f"{root} (the clone it is installed from): run it there, install this clone into the environment "
            f"(`pip install --no-deps --no-build-isolation -e {here}`), or name this one with {ROOT_ENV}={here}")
    print_lock_warning(root, console)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``faircode`` console script.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit code: 0 on success, 1 when ``--check`` finds a difference or a row it cannot
        account for, or a results file is malformed or cannot be written; 2 on a usage error.
    """
    args = _build_parser().parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
