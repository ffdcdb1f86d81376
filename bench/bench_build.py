"""Speed of the site build on the real site, as ratios measured in one run.

    python bench/bench_build.py

Copies the repository to a temporary folder (so the working tree is untouched), then times, as
whole commands (best of three where repeated):

- a no-change rebuild (`fairsite build`, every run a cache hit) against a plain `mkdocs build` of
  the same docs/                                            target: at most 1.3x
- a prose-only edit of one explainer (re-render, no re-run) against the same mkdocs build
                                                            target: at most 1.5x
- a cold build with --jobs 2 against --jobs 1 (every explainer forced to re-run)
                                                            target: at most 0.65x with two or
                                                            more explainers of similar cost
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _time(cmd: list[str], cwd: Path, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(".cache", "site", ".fairsite*", ".git", ".venv",
                                                                  "__pycache__", "artifacts"))
        fairsite = [str(BIN / "fairsite"), "build"]
        n = len(list((root / "explainers").glob("*.md")))
        cold1 = _time(fairsite + ["--jobs", "1", "--force"], root)
        cold2 = _time(fairsite + ["--jobs", "2", "--force"], root)
        nochange = _time(fairsite, root, repeat=3)
        mkdocs = _time([str(BIN / "mkdocs"), "build", "--quiet", "--site-dir", str(Path(tmp) / "plain-site")], root, repeat=3)
        source = sorted((root / "explainers").glob("*.md"))[0]
        text = source.read_text()

        def prose_edit() -> float:
            source.write_text(source.read_text() + "\nAn added sentence of prose.\n")
            return _time(fairsite, root)

        prose = min(prose_edit() for _ in range(3))
        source.write_text(text)
    print(f"explainers: {n}")
    print(f"cold build, --jobs 1:            {cold1:7.2f} s")
    print(f"cold build, --jobs 2:            {cold2:7.2f} s   ratio {cold2 / cold1:.2f}x  (target <= 0.65x)")
    print(f"plain mkdocs build of docs/:     {mkdocs:7.2f} s")
    print(f"no-change rebuild:               {nochange:7.2f} s   ratio {nochange / mkdocs:.2f}x  (target <= 1.3x)")
    print(f"prose-only edit rebuild:         {prose:7.2f} s   ratio {prose / mkdocs:.2f}x  (target <= 1.5x)")


if __name__ == "__main__":
    main()
