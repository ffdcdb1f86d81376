"""Cold `fairsite build` and `fairsite check` against an in-process peer on the same code, as ratios from one run.

    python bench/bench_peer.py [--runs 3] [--jobs 2]

The peer is markdown-exec (https://pawamoy.github.io/markdown-exec/), which runs every code block
inside the one MkDocs process, with no cache and no isolation between pages. This script makes
the peer's site from the explainers' generated code (`explainers/code/*.py`): one page per file
with the file as one `python exec="on"` block (its printed output shown as text), MkDocs with the
Material theme, run from the repository root like `fairsite build`. Both sites are built on a copy
of the repository in a temporary folder, `--runs` times, alternating, as whole commands in fresh
processes:

- cold `fairsite build --force --jobs 1`: every explainer re-runs, each in its own clean process;
- `mkdocs build` of the peer site (every block runs; there is nothing to cache);
- the same peer with one more block per page that saves the figures the code drew as SVG (the
  plain peer's pages show none; fairsite's show each, and save a phone's SVG too);
- `fairsite check` (what CI runs: every explainer fresh, at `--jobs` runs at once, the default
  being the cores) against the figure-saving peer at the same jobs: its pages split into `--jobs`
  MkDocs projects (round robin in name order), built side by side, timed until the last ends.

It prints the medians and issue 26's rows, each a ratio of medians with its target:

- cold `fairsite build --force --jobs 1` / the peer saving the same figures   <= 1.0x
- cold `fairsite build --force --jobs 1` / the peer saving no figures         <= 1.2x
- `fairsite check` / the figure-saving peer at the same jobs                  <= 1.3x
"""

from __future__ import annotations

import argparse
import json
import os
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

PEER_CONFIG = """\
site_name: markdown-exec peer
docs_dir: docs
site_dir: site
theme:
  name: material
plugins:
  - search
  - markdown-exec
markdown_extensions:
  - pymdownx.superfences:
      custom_fences:
        - name: python
          class: python
          validator: !!python/name:markdown_exec.validator
          format: !!python/name:markdown_exec.formatter
"""


# With --figures, each peer page ends with this block in the same session: it saves the figures
# the code left open as one SVG each, the way a markdown-exec user shows matplotlib figures
# (fairsite saves each as SVG and, laid out for a phone, a second SVG).
_SAVE_FIGURES = """\
import matplotlib.pyplot as plt
for n in plt.get_fignums():
    plt.figure(n).savefig("{folder}/{stem}-figure-" + str(n) + ".svg", format="svg")
plt.close("all")
"""


def make_peer_site(root: Path, folder: Path, *, figures: bool = False, share: tuple[int, int] = (0, 1)) -> int:
    """Write the peer's MkDocs project into ``folder`` from ``root/explainers/code``; the page count.

    With ``figures``, each page also saves the figures its code drew, as SVG (see ``_SAVE_FIGURES``).
    ``share=(i, n)`` keeps every n-th code file from the i-th (name order): one of n side-by-side builds.
    """
    docs = folder / "docs"
    docs.mkdir(parents=True)
    (folder / "mkdocs.yml").write_text(PEER_CONFIG, encoding="utf-8")
    codes = sorted((root / "explainers" / "code").glob("*.py"))[share[0]::share[1]]
    index = ["# Explainers (markdown-exec peer)", ""]
    for code in codes:
        text = code.read_text(encoding="utf-8")
        fence = "````" if "```" in text else "```"
        page = f"# {code.stem}\n\n{fence}python exec=\"on\" result=\"text\" session=\"{code.stem}\"\n{text}\n{fence}\n"
        if figures:
            (folder / "figures").mkdir(exist_ok=True)
            save = _SAVE_FIGURES.format(folder=folder / "figures", stem=code.stem)
            page += f"\n```python exec=\"on\" session=\"{code.stem}\"\n{save}```\n"
        (docs / f"{code.stem}.md").write_text(page, encoding="utf-8")
        index.append(f"- [{code.stem}]({code.stem}.md)")
    (docs / "index.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    return len(codes)


def _time(cmd: list[str], cwd: Path, env: dict | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return elapsed


def _time_together(cmds: list[list[str]], cwd: Path, env: dict | None = None) -> float:
    """Wall time of the commands started together, until the last one ends."""
    start = time.perf_counter()
    procs = [subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for cmd in cmds]
    outs = [proc.communicate()[0] for proc in procs]
    elapsed = time.perf_counter() - start
    for cmd, proc, out in zip(cmds, procs, outs):
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{out[-3000:]}")
    return elapsed


def _run_parts(root: Path) -> tuple[float, float, float]:
    """The explainer runs of the last build, as the cache recorded them: code time (of which
    figures were saved at show() and close()), time saving figures, whole process time. Summed
    over the runs: a run's process saves its figures while the next run's code runs (issue 26),
    so the processes' times overlap."""
    entries = [json.loads(p.read_text()) for p in (root / ".cache" / "fairsite").glob("*/entry.json")]
    return (sum(e["duration_s"] for e in entries), sum(e.get("figures_s", 0.0) for e in entries),
            sum(e["wall_s"] for e in entries))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="alternated runs of each build (default 3)")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="runs at once for `fairsite check` and the peer it is compared with (default: the cores)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(REPO, root, ignore=IGNORE)
        peer, peer_figures = Path(tmp) / "peer", Path(tmp) / "peer-figures"
        pages = make_peer_site(root, peer)
        make_peer_site(root, peer_figures, figures=True)
        shares = [Path(tmp) / f"peer-figures-{i}" for i in range(args.jobs)]
        for i, folder in enumerate(shares):
            make_peer_site(root, folder, figures=True, share=(i, args.jobs))
        # The peer runs the code in the MkDocs process: same single-threaded BLAS and no GUI as
        # fairsite gives its runs, and the repository root as the working directory.
        env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
        ours, theirs, theirs_figures, parts, check, theirs_jobs = [], [], [], [], [], []
        for _ in range(args.runs):
            ours.append(_time([str(BIN / "fairsite"), "build", "--force", "--jobs", "1"], root))
            parts.append(_run_parts(root))
            theirs.append(_time([str(BIN / "mkdocs"), "build", "--quiet", "-f", str(peer / "mkdocs.yml")], root, env))
            theirs_figures.append(_time([str(BIN / "mkdocs"), "build", "--quiet", "-f",
                                         str(peer_figures / "mkdocs.yml")], root, env))
            check.append(_time([str(BIN / "fairsite"), "check", "--jobs", str(args.jobs)], root))
            theirs_jobs.append(_time_together([[str(BIN / "mkdocs"), "build", "--quiet", "-f", str(f / "mkdocs.yml")]
                                               for f in shares], root, env))
    med = statistics.median
    rows = [
        ("cold fairsite build --jobs 1 / the peer saving the same figures", med(ours), med(theirs_figures), 1.0),
        ("cold fairsite build --jobs 1 / the peer saving no figures", med(ours), med(theirs), 1.2),
        (f"fairsite check / the figure-saving peer at --jobs {args.jobs}", med(check), med(theirs_jobs), 1.3),
    ]
    code, figures, wall = (med(p[k] for p in parts) for k in range(3))
    print(f"{pages} code files; medians of {args.runs} alternated runs")
    print(f"cold fairsite build --force --jobs 1:      {med(ours):7.2f} s  {[round(t, 1) for t in ours]}")
    print(f"markdown-exec peer (mkdocs build):         {med(theirs):7.2f} s  {[round(t, 1) for t in theirs]}")
    print(f"the peer saving each figure as one SVG:    {med(theirs_figures):7.2f} s  "
          f"{[round(t, 1) for t in theirs_figures]}")
    print(f"  fairsite's explainer processes: {wall:.1f} s summed, of which the code {code:.1f} s and saving figures "
          f"{figures:.1f} s (SVG and, for most, the phone's SVG; the plain peer's pages show none); a run saves "
          "its figures while the next run's code runs, so the sum exceeds the time they took")
    print(f"fairsite check --jobs {args.jobs}:              {med(check):7.2f} s  {[round(t, 1) for t in check]}")
    print(f"the figure-saving peer in {args.jobs} builds at once: {med(theirs_jobs):7.2f} s  "
          f"{[round(t, 1) for t in theirs_jobs]}")
    print(f"{'row (issue 26)':<68} {'ours':>7} {'peer':>7} {'ratio':>7} {'target':>8}  ok")
    failed = 0
    for label, ours_s, peer_s, target in rows:
        ratio = ours_s / peer_s
        failed += ratio > target
        print(f"{label:<68} {ours_s:7.1f} {peer_s:7.1f} {ratio:6.2f}x {'<= ' + format(target, 'g') + 'x':>8}  "
              f"{'yes' if ratio <= target else 'NO'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
