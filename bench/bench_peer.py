"""Cold `fairsite build` against an in-process peer on the same code, as a ratio from one run.

    python bench/bench_peer.py [--runs 3]

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
  plain peer's pages show none; fairsite's show each, and save a phone's SVG too).

It prints the medians and the ratio fairsite / peer; the target (issue 16) is at most 1.0x.
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


def make_peer_site(root: Path, folder: Path, *, figures: bool = False) -> int:
    """Write the peer's MkDocs project into ``folder`` from ``root/explainers/code``; the page count.

    With ``figures``, each page also saves the figures its code drew, as SVG (see ``_SAVE_FIGURES``).
    """
    docs = folder / "docs"
    docs.mkdir(parents=True)
    (folder / "mkdocs.yml").write_text(PEER_CONFIG, encoding="utf-8")
    codes = sorted((root / "explainers" / "code").glob("*.py"))
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


def _run_parts(root: Path) -> tuple[float, float, float]:
    """The explainer runs of the last build, as the cache recorded them: code time (of which
    figures were saved at show() and close()), time saving figures, whole process time."""
    entries = [json.loads(p.read_text()) for p in (root / ".cache" / "fairsite").glob("*/entry.json")]
    return (sum(e["duration_s"] for e in entries), sum(e.get("figures_s", 0.0) for e in entries),
            sum(e["wall_s"] for e in entries))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="alternated runs of each build (default 3)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(REPO, root, ignore=IGNORE)
        peer, peer_figures = Path(tmp) / "peer", Path(tmp) / "peer-figures"
        pages = make_peer_site(root, peer)
        make_peer_site(root, peer_figures, figures=True)
        # The peer runs the code in the MkDocs process: same single-threaded BLAS and no GUI as
        # fairsite gives its runs, and the repository root as the working directory.
        env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
        ours, theirs, theirs_figures, parts = [], [], [], []
        for _ in range(args.runs):
            ours.append(_time([str(BIN / "fairsite"), "build", "--force", "--jobs", "1"], root))
            parts.append(_run_parts(root))
            theirs.append(_time([str(BIN / "mkdocs"), "build", "--quiet", "-f", str(peer / "mkdocs.yml")], root, env))
            theirs_figures.append(_time([str(BIN / "mkdocs"), "build", "--quiet", "-f",
                                         str(peer_figures / "mkdocs.yml")], root, env))
    med = statistics.median
    ratio = med(ours) / med(theirs)
    code, figures, wall = (med(p[k] for p in parts) for k in range(3))
    print(f"{pages} code files; medians of {args.runs} alternated runs")
    print(f"cold fairsite build --force --jobs 1:      {med(ours):7.2f} s  {[round(t, 1) for t in ours]}")
    print(f"markdown-exec peer (mkdocs build):         {med(theirs):7.2f} s  {[round(t, 1) for t in theirs]}")
    print(f"the peer saving each figure as one SVG:    {med(theirs_figures):7.2f} s  "
          f"{[round(t, 1) for t in theirs_figures]}")
    print(f"  fairsite's explainer processes: {wall:.1f} s, of which the code {code:.1f} s and saving figures "
          f"{figures:.1f} s (SVG and, for most, the phone's SVG; the peer's pages show no figures)")
    print(f"ratio fairsite / peer: {ratio:.2f}x (target <= 1.0x)  {'yes' if ratio <= 1.0 else 'NO'}")
    print(f"ratio fairsite / the peer saving its figures: {med(ours) / med(theirs_figures):.2f}x (for comparison)")
    return 0 if ratio <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
