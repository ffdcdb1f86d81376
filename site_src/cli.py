"""``fairsite``: build, check, serve and scaffold the explainer site.

    fairsite build [--jobs N] [--force [SLUG ...]] [--explain]
    fairsite check [--jobs N]      # CI: everything fresh, strict, generated code verified
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from site_src.build import BuildOptions, build
from site_src.errors import SiteError

console = Console(stderr=True, highlight=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fairsite", description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=Path("."), help="repository root (default: .)")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build docs/ and site/ (incremental: unchanged runs come from the cache)")
    b.add_argument("--jobs", "-j", type=int, default=min(2, os.cpu_count() or 1), help="explainers run at once")
    b.add_argument("--force", nargs="*", metavar="SLUG", help="re-run these explainers (all if none named)")
    b.add_argument("--explain", action="store_true", help="say for each explainer whether it re-ran and why")
    c = sub.add_parser("check", help="CI: run everything fresh, check every number, mkdocs --strict")
    c.add_argument("--jobs", "-j", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be a positive integer, got {args.jobs}")

    if args.command == "build":
        options = BuildOptions(root=args.root, jobs=args.jobs,
                               force=frozenset(args.force) if args.force is not None else None,
                               on_run_done=_progress)
    else:
        options = BuildOptions(root=args.root, jobs=args.jobs, use_cache=False, verify_generated=True,
                               on_run_done=_progress)
    try:
        report = build(options)
    except SiteError as err:
        console.print(f"[bold red]{args.command} failed:[/]")
        console.print(str(err), markup=False)
        return 1
    except KeyboardInterrupt:
        console.print("[yellow]interrupted; docs/ and site/ are as they were[/]")
        return 130
    _summary(report, explain=args.command == "check" or getattr(args, "explain", False))
    console.print(f"[green]{args.command} ok[/]: site/ written in {report.wall_s:.1f} s")
    return 0


def _progress(outcome) -> None:
    if isinstance(outcome, SiteError):
        console.print(f"  [red]failed[/] {outcome.explainer}")
    else:
        how = "cached" if outcome.cached else f"ran in {outcome.duration_s:.1f} s"
        console.print(f"  [green]ok[/] {outcome.slug} ({how})")


def _summary(report, *, explain: bool) -> None:
    table = Table(title="explainer runs", show_lines=False)
    for col in ("explainer", "run", "time", "peak memory"):
        table.add_column(col)
    for r in report.runs:
        table.add_row(r.slug, "cache hit" if r.cached else f"ran: {r.reason}" if explain else "ran",
                      f"{r.duration_s:.1f} s", f"{r.peak_memory_mb:.0f} MB")
    console.print(table)
    for w in report.warnings:
        console.print(f"[yellow]mkdocs warning:[/] {w}", markup=True)


if __name__ == "__main__":
    sys.exit(main())
