"""Speed of `fairsite build` on the real site, as ratios to a plain `mkdocs build`, from one run.

    python bench/bench_build.py [--runs 5] [--cold-runs 1]

What a person waits for is a whole command: the interpreter, the imports, the hashing. So every
figure is the wall time of the real command line in a fresh process, on a copy of the
repository in a temporary folder (the working tree is untouched): `--runs` timed runs after one
warm-up, median; the plain `mkdocs build` of the same docs/ is timed in the same loop,
alternating with the build it is compared with, so both see the same machine. Cold builds
(every explainer forced to re-run) are timed `--cold-runs` times each.

Rows, each a ratio to the plain `mkdocs build` timed alternately with it, with its target:

- no-change `fairsite build` (every run a cache hit, nothing to write)     <= 0.3x (issue 16)
- `fairsite build` after one word of prose of one explainer is edited      <= 0.7x (issue 26)
- `fairsite build` after one comment of one explainer's code is edited     <= 1.2x (issue 26)
- cold `fairsite build --force --jobs 1`                                    (reported)
- the same minus the explainers' code (the sum of the code's times, as the
  cache records them): where the build spends its time outside the code    <= 3x (issue 16)
  (not the runs' wall times: a run saves its figures while the next run's
  code runs, so their sum exceeds the time they took and the row went below zero)
- cold `fairsite build --force --jobs 2`                                    <= 14x (issue 16)

Issue 26's other rows: the cold build and `fairsite check` against the markdown-exec peer are
`bench/bench_peer.py`'s; the Monte Carlo kernel is `bench/bench_significance.py`'s; the
benchmark's CPU is `bench/bench_benchmark.py --cpu-vs`'s. With `--every-row REV`, this script
runs those three too, each in a fresh process after its own rows (REV: the revision the
benchmark's CPU is compared with), and ends with one table of every row of issue 26 that a
bench measures. The test suite's row (half of the suite's time) is two runs of the whole suite,
before and after: measured by hand, as the closing note says, not here.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
IGNORE = shutil.ignore_patterns(".cache", "site", "docs", ".fairsite*", ".git", ".venv", "__pycache__", "artifacts")


def _time(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return elapsed


def _code_seconds(root: Path) -> float:
    """The time of every explainer's code in the last build (``duration_s``: its cells, with the
    figures saved at ``show()``), as the cache recorded it. At ``--jobs 1`` one code runs at a
    time, so the sum is time the build spent inside the code."""
    return sum(json.loads(p.read_text())["duration_s"] for p in (root / ".cache" / "fairsite").glob("*/entry.json"))


def _prose_edits(text: str):
    """Texts of the explainer with one word of its prose changed, a different word each time."""
    body_at = text.index("\n---", 3) + 4  # after the front matter
    match = re.search(r"\n([A-Z][a-z]+) ", text[body_at:])  # the first word of a prose line
    assert match, "no prose line starting with a capitalised word"
    at = body_at + match.start(1)
    word = match.group(1)
    return lambda i: text[:at] + f"{word}{'s' if i % 2 == 0 else 'es'}" + text[at + len(word):]


def _comment_edits(text: str):
    """Texts of the explainer with one comment of its code changed (nothing else), differently each time."""
    block = text.index("```python explainer")
    match = re.compile(r"\n(\s*# (?!%%)[^\n]*)").search(text, block)
    assert match, "no comment line in the explainer's code"
    at = match.end(1)
    return lambda i: text[:at] + f" (edit {i})" + text[at:]


def _alternate(edits, source: Path, fairsite: list[str], mkdocs: list[str], root: Path, runs: int):
    """An edit, `fairsite build`, the plain `mkdocs build`; ``runs`` times after a warm-up."""
    ours, plain = [], []
    for i in range(runs + 1):  # the first of each is the warm-up
        source.write_text(edits(i))
        t_build, t_plain = _time(fairsite, root), _time(mkdocs, root)
        if i:
            ours.append(t_build)
            plain.append(t_plain)
    return ours, plain


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs after one warm-up (default 5)")
    parser.add_argument("--cold-runs", type=int, default=1, help="timed cold builds of each kind (default 1)")
    parser.add_argument("--every-row", metavar="REV", default=None,
                        help="also run bench_peer, bench_significance and bench_benchmark --cpu-vs REV; one table of every row")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(REPO, root, ignore=IGNORE)
        fairsite = [str(BIN / "fairsite"), "build"]
        mkdocs = [str(BIN / "mkdocs"), "build", "--quiet", "--site-dir", str(Path(tmp) / "plain-site")]
        n = len(list((root / "explainers").glob("*.md")))

        cold1, code1, cold2 = [], [], []
        for _ in range(args.cold_runs):
            cold1.append(_time(fairsite + ["--force", "--jobs", "1"], root))
            code1.append(_code_seconds(root))
        for _ in range(args.cold_runs):
            cold2.append(_time(fairsite + ["--force", "--jobs", "2"], root))

        nochange, plain = [], []
        for i in range(args.runs + 1):  # the first of each is the warm-up
            t_build, t_plain = _time(fairsite, root), _time(mkdocs, root)
            if i:
                nochange.append(t_build)
                plain.append(t_plain)

        source = sorted((root / "explainers").glob("*.md"))[0]
        text = source.read_text()
        prose_edits, comment_edits = _prose_edits(text), _comment_edits(text)
        prose, plain_prose = _alternate(prose_edits, source, fairsite, mkdocs, root, args.runs)
        comment, plain_comment = _alternate(comment_edits, source, fairsite, mkdocs, root, args.runs)
        source.write_text(text)

    med = statistics.median
    m, mp, mc = med(plain), med(plain_prose), med(plain_comment)
    c1, r1, c2 = med(cold1), med(code1), med(cold2)
    rows = [
        ("fairsite build, nothing changed", med(nochange), m, 0.3),
        ("fairsite build, one word of prose edited", med(prose), mp, 0.7),
        ("fairsite build, one code comment edited", med(comment), mc, 1.2),
        ("cold fairsite build --jobs 1", c1, m, None),
        ("cold build minus the explainers' code", c1 - r1, m, 3.0),
        ("cold fairsite build --jobs 2", c2, m, 14.0),
    ]
    print(f"{n} explainers; medians of {args.runs} runs after a warm-up ({args.cold_runs} cold build(s) each); "
          f"plain mkdocs build {m:.2f} s (alternated with the prose edits: {mp:.2f} s, the comment edits: {mc:.2f} s); "
          f"the explainers' code at --jobs 1: {r1:.1f} s")
    print(f"{'what':<42} {'seconds':>8} {'ratio':>8} {'target':>8}  ok")
    failed = 0
    for label, seconds, base, target in rows:
        ratio = seconds / base
        ok = target is None or ratio <= target
        failed += not ok
        shown = f"<= {target:g}x" if target is not None else "-"
        print(f"{label:<42} {seconds:8.2f} {ratio:7.2f}x {shown:>8}  {'yes' if ok else 'NO'}")
    if args.every_row:
        summary = [f"{label:<60} {seconds / base:7.2f}x  {'<= %gx' % target if target else '-':>8}"
                   f"  {'yes' if target is None or seconds / base <= target else 'NO'}"
                   for label, seconds, base, target in rows[1:3]]
        failed += _other_rows(args.every_row, summary)
        print("\nissue 26, every row a bench measures (this run):")
        print("\n".join(summary))
    return 1 if failed else 0


# Each other bench's row lines, as it prints them: (script and arguments, a pattern of its row lines).
_OTHER_BENCHES = (
    (["bench_peer.py"], re.compile(r"^(cold fairsite build|fairsite check) .*(yes|NO)\s*$")),
    (["bench_significance.py"], re.compile(r"^\s*scipy permutation .*target >= 8x")),
    (["bench_benchmark.py", "--cpu-vs", "{rev}"], re.compile(r"^\s*ratio .*target <= 0\.75x")),
)


def _other_rows(rev: str, summary: list[str]) -> int:
    """Run the other benches of issue 26 in fresh processes, show their output, and add their row
    lines to ``summary``; the number of rows that missed their target (or benches that failed)."""
    missed = 0
    for script, pattern in _OTHER_BENCHES:
        cmd = [sys.executable, str(REPO / "bench" / script[0]), *(a.format(rev=rev) for a in script[1:])]
        print(f"\n$ {' '.join(cmd[1:])}", flush=True)
        done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        print(done.stdout, end="")
        lines = [line.strip() for line in done.stdout.splitlines() if pattern.search(line)]
        if done.returncode not in (0, 1) or not lines:
            summary.append(f"{script[0]}: no row (exit {done.returncode}): {done.stderr.strip()[-300:]}")
            missed += 1
            continue
        label = {"bench_significance.py": "Monte Carlo, n = 6,513, 2,000 resamples: ",
                 "bench_benchmark.py": "faircode benchmark --check CPU vs " + rev + ": "}.get(script[0], "")
        summary += [label + line for line in lines]
        missed += sum("NO" in line.split()[-1:] for line in lines)
    return missed


if __name__ == "__main__":
    sys.exit(main())
