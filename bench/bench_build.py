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
- `fairsite build` after a one-line explainer is added to the reading order <= 1.3x (issue 48)
  (a new slug each time, in the middle of the reading order, so its code runs as a new page's
  does; each addition is removed again before the next, and that build is a row too)
- `fairsite build` after a page is renamed (its title: every page's navigation) <= 1.3x (issue 48)
- `fairsite build` after two pages are swapped in the reading order         <= 1.3x (issue 48)

`--rows nav` times only issue 48's rows (after one untimed build that fills the caches), for a
quicker before-and-after of that work.

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
    return _alternate_changes(lambda i: source.write_text(edits(i)), fairsite, mkdocs, root, runs)


def _alternate_changes(change, fairsite: list[str], mkdocs: list[str], root: Path, runs: int):
    """``change(i)`` (any change to the sources), `fairsite build`, the plain `mkdocs build` of the
    docs/ it wrote; ``runs`` times after a warm-up."""
    ours, plain = [], []
    for i in range(runs + 1):  # the first of each is the warm-up
        change(i)
        t_build, t_plain = _time(fairsite, root), _time(mkdocs, root)
        if i:
            ours.append(t_build)
            plain.append(t_plain)
    return ours, plain


# A one-line explainer, as small as the build accepts (front matter, one line of prose, a code
# block): what a writer has just after listing a new page in the reading order (issue 48).
_NEW_PAGE = """---
title: A page added, number {i}
subtitle: One line, to time adding a page.
summary: A page the benchmark adds to the reading order and removes again.
checks:
  - name: its code ran
    assert: done
---
One line of prose.

```python explainer
done = {i} >= 0
```
"""


def _middle_of_reading_order(root: Path) -> str:
    """A line of ``reading-order.yaml`` listing an explainer near the middle of the order."""
    lines = [ln for ln in (root / "explainers" / "reading-order.yaml").read_text().splitlines(keepends=True)
             if re.match(r"^\s+- [a-z0-9-]+\n$", ln)]
    return lines[len(lines) // 2]


def _add_and_remove(root: Path, fairsite: list[str], mkdocs: list[str], runs: int):
    """Add a one-line explainer after the middle of the reading order, build; remove it, build;
    ``runs`` times after a warm-up, each with a new slug (its code runs, as a new page's does).
    Returns the builds' times after each addition and each removal, and the plain builds'."""
    order = root / "explainers" / "reading-order.yaml"
    text, after = order.read_text(), _middle_of_reading_order(root)
    indent = after[:after.index("-")]
    added, removed, plain = [], [], []
    for i in range(runs + 1):  # the first of each is the warm-up
        slug = f"added-page-{i}"
        page = root / "explainers" / f"{slug}.md"
        page.write_text(_NEW_PAGE.format(i=i))
        order.write_text(text.replace(after, f"{after}{indent}- {slug}\n", 1))
        t_add, t_plain_add = _time(fairsite, root), _time(mkdocs, root)
        page.unlink()
        order.write_text(text)
        t_remove, t_plain_remove = _time(fairsite, root), _time(mkdocs, root)
        if i:
            added.append(t_add)
            removed.append(t_remove)
            plain += [t_plain_add, t_plain_remove]
    return added, removed, plain


def _renames(root: Path):
    """A change that gives the explainer in the middle of the reading order another title and back."""
    source = root / "explainers" / f"{_middle_of_reading_order(root).split('- ')[1].strip()}.md"
    text = source.read_text()
    title = re.search(r"^title: (.+)$", text, flags=re.M)
    assert title, f"no title line in {source.name}"
    # Inside the quotes of a quoted title.
    at = title.end(1) - (title.group(1)[0] in "'\"" and title.group(1)[-1] == title.group(1)[0])
    renamed = text[:at] + ", renamed" + text[at:]
    return lambda i: source.write_text(renamed if i % 2 == 0 else text), lambda: source.write_text(text)


def _swaps(root: Path):
    """A change that swaps two neighbouring explainers of the reading order, and back."""
    order = root / "explainers" / "reading-order.yaml"
    text, first = order.read_text(), _middle_of_reading_order(root)
    second = text[text.index(first) + len(first):].splitlines(keepends=True)[0]
    assert re.match(r"^\s+- [a-z0-9-]+\n$", second), "the middle explainer is the last of its part"
    swapped = text.replace(first + second, second + first, 1)
    return lambda i: order.write_text(swapped if i % 2 == 0 else text), lambda: order.write_text(text)


def _navigation_rows(root: Path, fairsite: list[str], mkdocs: list[str], runs: int) -> list[tuple]:
    """Issue 48's rows: a page added (and removed), renamed, and two pages swapped, each against
    the plain `mkdocs build` timed alternately with it."""
    med = statistics.median
    added, removed, plain_added = _add_and_remove(root, fairsite, mkdocs, runs)
    rows = [("fairsite build, a one-line page added", med(added), med(plain_added), 1.3),
            ("fairsite build, that page removed", med(removed), med(plain_added), None)]
    for label, (change, restore) in (("fairsite build, a page renamed (its title)", _renames(root)),
                                     ("fairsite build, two pages swapped in order", _swaps(root))):
        ours, plain = _alternate_changes(change, fairsite, mkdocs, root, runs)
        restore()
        rows.append((label, med(ours), med(plain), 1.3))
    return rows


def _print_rows(rows: list[tuple]) -> int:
    """The table of ``rows`` (label, seconds, the plain build's seconds, target); the rows missed."""
    print(f"{'what':<42} {'seconds':>8} {'ratio':>8} {'target':>8}  ok")
    failed = 0
    for label, seconds, base, target in rows:
        ratio = seconds / base
        ok = target is None or ratio <= target
        failed += not ok
        shown = f"<= {target:g}x" if target is not None else "-"
        print(f"{label:<42} {seconds:8.2f} {ratio:7.2f}x {shown:>8}  {'yes' if ok else 'NO'}")
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs after one warm-up (default 5)")
    parser.add_argument("--cold-runs", type=int, default=1, help="timed cold builds of each kind (default 1)")
    parser.add_argument("--rows", choices=("all", "nav"), default="all",
                        help="every row, or only issue 48's (a page added, renamed, two swapped)")
    parser.add_argument("--every-row", metavar="REV", default=None,
                        help="also run bench_peer, bench_significance and bench_benchmark --cpu-vs REV; one table of every row")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(REPO, root, ignore=IGNORE)
        fairsite = [str(BIN / "fairsite"), "build"]
        mkdocs = [str(BIN / "mkdocs"), "build", "--quiet", "--site-dir", str(Path(tmp) / "plain-site")]
        n = len(list((root / "explainers").glob("*.md")))
        if args.rows == "nav":
            _time(fairsite, root)  # untimed: fills the caches
            rows, said = [], ""
        else:
            rows, said = _edit_rows(root, fairsite, mkdocs, args)
        rows += _navigation_rows(root, fairsite, mkdocs, args.runs)
    print(f"{n} explainers; medians of {args.runs} runs after a warm-up{said}")
    failed = _print_rows(rows)
    if args.every_row:
        summary = [f"{label:<60} {seconds / base:7.2f}x  {'<= %gx' % target if target else '-':>8}"
                   f"  {'yes' if target is None or seconds / base <= target else 'NO'}"
                   for label, seconds, base, target in rows[1:3]]
        failed += _other_rows(args.every_row, summary)
        print("\nissue 26, every row a bench measures (this run):")
        print("\n".join(summary))
    return 1 if failed else 0


def _edit_rows(root: Path, fairsite: list[str], mkdocs: list[str], args) -> tuple[list[tuple], str]:
    """Issues 16 and 26's rows: the cold builds, nothing changed, a word of prose and a code
    comment edited; and what the table's first line says of them."""
    cold1, code1, cold2 = [], [], []
    for _ in range(args.cold_runs):
        cold1.append(_time(fairsite + ["--force", "--jobs", "1"], root))
        code1.append(_code_seconds(root))
    for _ in range(args.cold_runs):
        cold2.append(_time(fairsite + ["--force", "--jobs", "2"], root))

    nochange, plain = _alternate_changes(lambda i: None, fairsite, mkdocs, root, args.runs)
    source = sorted((root / "explainers").glob("*.md"))[0]
    text = source.read_text()
    prose, plain_prose = _alternate(_prose_edits(text), source, fairsite, mkdocs, root, args.runs)
    comment, plain_comment = _alternate(_comment_edits(text), source, fairsite, mkdocs, root, args.runs)
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
    said = (f" ({args.cold_runs} cold build(s) each); plain mkdocs build {m:.2f} s (alternated with the prose "
            f"edits: {mp:.2f} s, the comment edits: {mc:.2f} s); the explainers' code at --jobs 1: {r1:.1f} s")
    return rows, said


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
