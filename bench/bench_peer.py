"""Cold `fairsite build` and `fairsite check` against an in-process peer on the same code, as ratios from one run.

    python bench/bench_peer.py [--runs 5] [--jobs 2]

The peer is markdown-exec (https://pawamoy.github.io/markdown-exec/), which runs every code block
inside the one MkDocs process, with no cache and no isolation between pages. Two peers run the
explainers' generated code (`explainers/code/<slug>.py`) that way, from the repository root
like `fairsite build`:

- the bare peer (`make_peer_site`): one bare page per code file, the file as one
  `python exec="on"` block (its printed output shown as text), under a minimal mkdocs.yml
  (Material, search, markdown-exec). It builds a much smaller site than fairsite does: no home
  page, glossary, references, results tables or data pages, none of our plugins, hooks or
  Markdown extensions, and a search index of code output, not of prose.
- the same-site peer (`make_same_site_peer`): the site fairsite builds, page for page, with our
  mkdocs.yml (plugins, hooks, theme overrides, extensions; markdown-exec added, nothing dropped:
  the hooks run under a plain `mkdocs build`), where each explainer page's code is run by
  markdown-exec during the MkDocs build instead of by fairsite: its `docs/` is that of a finished
  `fairsite build` (made untimed, on a second copy, before any timing) with one `python exec="on"`
  block of the explainer's code at the end of each explainer page. It is the apples-to-apples
  reference: the same code, the same pages and the same MkDocs work, so a ratio to it is what
  fairsite's own way of running code costs (processes, isolation, checks, rendering, caching).
  It still favours the peer: its prose numbers, printed output and figures are fairsite's, as
  rendered (markdown-exec cannot put computed numbers into prose, so the peer neither checks
  nor renders them), and its figures are saved once as SVG where fairsite saves a phone's too.

Each peer is also built saving figures: each page gets one more block in the same session that
saves the figures the code drew as SVG (`_SAVE_FIGURES`; the plain peers' pages show none of
their own). Everything is built on a copy of the repository in a temporary folder, in rounds of
one run of each command, as whole commands in fresh processes: `--warmup` rounds first, not
timed (the copy's first runs write its bytecode caches, which every later run of either side
reads), then `--runs` timed rounds (5 by default: with 3, the same code's `check` row moved
between 1.22x and 1.39x from one sitting to the next on this 2-core machine, closing notes of
issue 26):

- cold `fairsite build --force --jobs 1`: every explainer re-runs, each in its own clean process;
- `mkdocs build` of each peer, without and with figures saved (every block runs; nothing is cached);
- `fairsite check` (what CI runs: every explainer fresh, at `--jobs` runs at once, the default
  being the cores) against each figure-saving peer at the same jobs: its explainer pages split
  into `--jobs` MkDocs projects (round robin in name order; the same-site peer's other pages in
  the first), built side by side, timed until the last ends.

It prints the medians and issue 26's rows, once against each peer (bare, then same-site): each
row's ratio is the median of its rounds' ratios (ours over the peer's of the same round, run
minutes apart, so a machine that slows down or speeds up between rounds moves both), with the
ratio of the medians beside it. It exits 1 if any of the six misses its target:

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


# The same-site peer's changes to the repository's mkdocs.yml: each (old, new) must match once.
# Paths become absolute (the peer's mkdocs.yml lives in its own folder); markdown-exec is added
# as its documentation says (the plugin, and superfences' `python` fence through its formatter).
# Nothing is dropped: the hooks run under a plain `mkdocs build` (they read the build's commit and
# date from the tree when `fairsite` gives none, and the results page's fragments from docs/).
def _peer_config(root: Path, folder: Path) -> str:
    text = (root / "mkdocs.yml").read_text(encoding="utf-8")
    edits = [
        ("\ndocs_dir: docs\n", f"\ndocs_dir: {folder / 'docs'}\n"),
        ("\nsite_dir: site\n", f"\nsite_dir: {folder / 'site'}\n"),
        ("custom_dir: site_src/templates/overrides", f"custom_dir: {root / 'site_src/templates/overrides'}"),
        ("\n  - site_src/publishing/mkdocs_hooks.py", f"\n  - {root / 'site_src/publishing/mkdocs_hooks.py'}"),
        ("\nplugins:\n", "\nplugins:\n  - markdown-exec\n"),
        ("\n  - pymdownx.superfences\n", "\n  - pymdownx.superfences:\n      custom_fences:\n        - name: python\n"
         "          class: python\n          validator: !!python/name:markdown_exec.validator\n"
         "          format: !!python/name:markdown_exec.formatter\n"),
    ]
    for old, new in edits:
        if text.count(old) != 1:
            sys.exit(f"bench_peer: mkdocs.yml no longer has {old.strip()!r} once; update _peer_config")
        text = text.replace(old, new)
    return text


def make_same_site_peer(root: Path, docs: Path, folder: Path, *, figures: bool = False,
                        share: tuple[int, int] = (0, 1)) -> int:
    """Write the same-site peer's MkDocs project into ``folder``: the site ``fairsite`` built
    (``docs``, a finished build's docs/), where markdown-exec runs each explainer's code; the page count.

    Every page of ``docs`` is kept as ``fairsite`` rendered it (its prose numbers, printed output
    and figures included) and each explainer page (``explainers/<slug>/index.md``) ends with one
    ``python exec="on"`` block holding ``root/explainers/code/<slug>.py``, its printed output
    shown as text; with ``figures``, a second block in the same session saves the figures the
    code drew, as SVG (``_SAVE_FIGURES``). The configuration is the repository's mkdocs.yml with
    markdown-exec added (`_peer_config`). ``share=(i, n)`` keeps every n-th explainer page from
    the i-th (name order), and only share 0 keeps the pages that are not explainers: one of n
    side-by-side builds that together make the site once.
    """
    shutil.copytree(docs, folder / "docs")
    (folder / "mkdocs.yml").write_text(_peer_config(root, folder), encoding="utf-8")
    pages = sorted((folder / "docs" / "explainers").glob("*/index.md"))
    if share[0] != 0:  # the other pages are built once, by share 0
        for path in (folder / "docs").iterdir():
            if path.name not in ("explainers", "assets"):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
    kept = pages[share[0]::share[1]]
    for page in pages:
        if page not in kept:
            shutil.rmtree(page.parent)
    for page in kept:
        slug = page.parent.name
        code = (root / "explainers" / "code" / f"{slug}.py").read_text(encoding="utf-8")
        fence = "````" if "```" in code else "```"
        block = f"\n\n{fence}python exec=\"on\" result=\"text\" session=\"{slug}\"\n{code}\n{fence}\n"
        if figures:
            (folder / "figures").mkdir(exist_ok=True)
            save = _SAVE_FIGURES.format(folder=folder / "figures", stem=slug)
            block += f"\n```python exec=\"on\" session=\"{slug}\"\n{save}```\n"
        page.write_text(page.read_text(encoding="utf-8").rstrip("\n") + block, encoding="utf-8")
    return len(kept)


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


def paired_ratio(ours: list[float], peer: list[float]) -> float:
    """The median of the rounds' ratios ``ours[i] / peer[i]`` (the times of one round each)."""
    return statistics.median(a / b for a, b in zip(ours, peer, strict=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed rounds, a run of each build in each (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="rounds run first, not timed (default 1)")
    parser.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                        help="runs at once for `fairsite check` and the peer it is compared with (default: the cores)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(REPO, root, ignore=IGNORE)
        # The site fairsite renders, for the same-site peer: built untimed on a second copy, so the
        # timed builds on `root` start from the same state as without the same-site peer.
        prebuilt = Path(tmp) / "prebuilt"
        shutil.copytree(REPO, prebuilt, ignore=IGNORE)
        subprocess.run([str(BIN / "fairsite"), "build", "--jobs", str(args.jobs)], cwd=prebuilt, check=True,
                       capture_output=True)
        bare = {"plain": Path(tmp) / "peer", "figures": Path(tmp) / "peer-figures"}
        same = {"plain": Path(tmp) / "same", "figures": Path(tmp) / "same-figures"}
        pages = make_peer_site(root, bare["plain"])
        make_peer_site(root, bare["figures"], figures=True)
        make_same_site_peer(root, prebuilt / "docs", same["plain"])
        make_same_site_peer(root, prebuilt / "docs", same["figures"], figures=True)
        shares = {"bare": [Path(tmp) / f"peer-figures-{i}" for i in range(args.jobs)],
                  "same": [Path(tmp) / f"same-figures-{i}" for i in range(args.jobs)]}
        for i in range(args.jobs):
            make_peer_site(root, shares["bare"][i], figures=True, share=(i, args.jobs))
            make_same_site_peer(root, prebuilt / "docs", shares["same"][i], figures=True, share=(i, args.jobs))
        # The peer runs the code in the MkDocs process: same single-threaded BLAS and no GUI as
        # fairsite gives its runs, and the repository root as the working directory.
        env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   MKL_NUM_THREADS="1", PYTHONHASHSEED="0", NO_MKDOCS_2_WARNING="1")

        def mkdocs(folder: Path) -> list[str]:
            return [str(BIN / "mkdocs"), "build", "--quiet", "-f", str(folder / "mkdocs.yml")]

        t: dict[str, list[float]] = {k: [] for k in ("ours", "check", "bare", "bare_figures", "bare_jobs",
                                                      "same", "same_figures", "same_jobs")}
        parts = []
        for round_ in range(args.warmup + args.runs):
            if round_ == args.warmup:  # the warm-up rounds' times are dropped
                t = {k: [] for k in t}
                parts = []
            t["ours"].append(_time([str(BIN / "fairsite"), "build", "--force", "--jobs", "1"], root))
            parts.append(_run_parts(root))
            t["bare"].append(_time(mkdocs(bare["plain"]), root, env))
            t["same"].append(_time(mkdocs(same["plain"]), root, env))
            t["bare_figures"].append(_time(mkdocs(bare["figures"]), root, env))
            t["same_figures"].append(_time(mkdocs(same["figures"]), root, env))
            t["check"].append(_time([str(BIN / "fairsite"), "check", "--jobs", str(args.jobs)], root))
            t["bare_jobs"].append(_time_together([mkdocs(f) for f in shares["bare"]], root, env))
            t["same_jobs"].append(_time_together([mkdocs(f) for f in shares["same"]], root, env))
    med = statistics.median
    m = {k: med(v) for k, v in t.items()}
    rows = []
    for peer, name in (("bare", "bare peer"), ("same", "same-site peer")):
        rows += [
            (f"cold fairsite build --jobs 1 / {name} saving the same figures", "ours", f"{peer}_figures", 1.0),
            (f"cold fairsite build --jobs 1 / {name} saving no figures", "ours", peer, 1.2),
            (f"fairsite check / figure-saving {name} at --jobs {args.jobs}", "check", f"{peer}_jobs", 1.3),
        ]
    rows = [rows[0], rows[3], rows[1], rows[4], rows[2], rows[5]]  # each issue row: bare, then same-site
    code, figures, wall = (med(p[k] for p in parts) for k in range(3))

    def show(label: str, key: str) -> None:
        print(f"{label:<52} {m[key]:7.2f} s  {[round(s, 1) for s in t[key]]}")

    print(f"{pages} code files; medians of {args.runs} rounds after {args.warmup} not timed")
    show("cold fairsite build --force --jobs 1:", "ours")
    show("bare peer (one bare page per code file):", "bare")
    show("same-site peer (fairsite's site, code by markdown-exec):", "same")
    show("bare peer saving each figure as one SVG:", "bare_figures")
    show("same-site peer saving each figure as one SVG:", "same_figures")
    print(f"  fairsite's explainer processes: {wall:.1f} s summed, of which the code {code:.1f} s and saving figures "
          f"{figures:.1f} s (SVG and, for most, the phone's SVG; the plain peers' pages show none); a run saves "
          "its figures while the next run's code runs, so the sum exceeds the time they took")
    show(f"fairsite check --jobs {args.jobs}:", "check")
    show(f"bare peer saving figures, {args.jobs} builds at once:", "bare_jobs")
    show(f"same-site peer saving figures, {args.jobs} builds at once:", "same_jobs")
    print(f"{'row (issue 26)':<72} {'ours':>7} {'peer':>7} {'ratio':>7} {'of medians':>11} {'target':>8}  ok")
    failed = 0
    for label, ours, peer, target in rows:
        ratio = paired_ratio(t[ours], t[peer])
        failed += ratio > target
        print(f"{label:<72} {m[ours]:7.1f} {m[peer]:7.1f} {ratio:6.2f}x {m[ours] / m[peer]:10.2f}x "
              f"{'<= ' + format(target, 'g') + 'x':>8}  {'yes' if ratio <= target else 'NO'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
