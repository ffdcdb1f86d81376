"""Run one generated explainer file in this (fresh) process and record what it did.

Invoked by ``site_src.execute`` as ``python -m site_src._runner SPEC.json``. Writes
``result.json`` and the figures into the spec's ``out_dir``. What the code prints goes to this
process's stdout, which the parent captures. Kept free of site_src imports beyond the standard
library so the run's recorded dependencies are the explainer's own.
"""

from __future__ import annotations

import contextlib
import faulthandler
import io
import json
import os
import random
import re
import resource
import sys
import time
import traceback
from pathlib import Path

SEED = 20240607  # fixed seed for the global RNGs; explainers should still pass their own seeds


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text())
    root = Path(spec["root"]).resolve()
    code_path = Path(spec["code_path"]).resolve()
    out_dir = Path(spec["out_dir"]).resolve()
    opened: set[str] = set()

    def _audit(event, args):
        # Record every file the run opens inside the project: data, manifests, results. They go
        # into the cache key, so a changed data file re-runs the explainer.
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            try:
                p = Path(os.fsdecode(args[0])).resolve()
            except (OSError, ValueError):
                return
            if p.is_relative_to(root) and not p.is_relative_to(out_dir) and p.suffix not in {".py", ".pyc"}:
                rel = p.relative_to(root)
                # Installed packages (a .venv inside the repo), caches and build metadata are not
                # the run's data; their versions are recorded separately.
                if not any(part.startswith((".", "__")) or part.endswith(".egg-info")
                           or part in ("site-packages", "dist-packages") for part in rel.parts):
                    opened.add(str(rel))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Deterministic SVG ids, no dates in files: two builds of the same inputs are byte-identical.
    matplotlib.rcParams["svg.hashsalt"] = "fairsite"
    apply_site_style(matplotlib.rcParams)
    plt.show = lambda *a, **k: None  # figures are collected after the run instead
    random.seed(SEED)
    try:
        import numpy as np

        np.random.seed(SEED)
    except ImportError:  # pragma: no cover - numpy is a dependency
        pass

    # The run stops itself at its timeout, printing where it was, even if the build that started
    # it has died; the build kills it a little later as a backstop.
    faulthandler.dump_traceback_later(spec["timeout"], exit=True)
    code = code_path.read_text(encoding="utf-8")
    namespace = {"__name__": "__main__", "__file__": str(code_path)}
    sys.argv = [str(code_path)]
    sys.path.insert(0, str(root))
    sys.addaudithook(_audit)
    result: dict = {"status": "ok"}
    started = time.perf_counter()
    try:
        result["cells"] = run_cells(code, namespace, str(code_path), spec["header_lines"])
    except BaseException as exc:  # noqa: BLE001 - everything the explainer raises is reported
        result = {"status": "error", **_describe_error(exc, code_path, spec)}
    faulthandler.cancel_dump_traceback_later()
    result["duration_s"] = time.perf_counter() - started
    sys.stdout.flush()

    figures = []
    for i, num in enumerate(plt.get_fignums(), start=1):
        fig = plt.figure(num)
        svg, png = out_dir / f"figure-{i}.svg", out_dir / f"figure-{i}.png"
        fig.savefig(svg, format="svg", metadata={"Date": None})
        fig.savefig(png, format="png", dpi=144, metadata={"Software": None})
        figures.append({"svg": svg.name, "png": png.name})
        save_narrow_variant(fig, out_dir / f"figure-{i}-narrow.svg")  # last: it re-lays the figure out
    result["figures"] = figures
    result["values"] = _values(namespace)
    result["modules"] = _project_modules(root)
    result["packages"] = _packages()
    result["data_files"] = sorted(opened)
    result["peak_memory_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["python"] = sys.version.split()[0]
    (out_dir / "result.json").write_text(json.dumps(result, indent=1, sort_keys=True))
    return 0


# The site's figure style, applied to every explainer run (the reader who runs the file gets
# matplotlib's defaults; the numbers are the same). Sizes are for the page: the content column is
# about 550 px wide on a laptop and the explainers draw at 9-10.5 in (860-1000 px), so a figure
# shows at ~0.57 of its size and 13 pt text reads at ~10 px, near the page's captions (11 px);
# a click opens it full size.
# The background is transparent and the ink dark: the light scheme shows it as drawn, the dark
# scheme inverts it (extra.css). Colours: the theme's indigo and deep orange first, then
# Okabe-Ito colours, which stay distinct with the common colour-vision deficiencies.
SITE_STYLE = {
    "font.size": 13, "axes.titlesize": 13, "axes.labelsize": 13, "xtick.labelsize": 12,
    "ytick.labelsize": 12, "legend.fontsize": 11, "figure.titlesize": 14,
    "figure.facecolor": "none", "axes.facecolor": "none", "savefig.facecolor": "none",
    "savefig.transparent": True,
    # A legend sits on a near-opaque card so data under it cannot run through its text.
    "legend.frameon": True, "legend.facecolor": "white", "legend.framealpha": 0.85, "legend.edgecolor": "none",
    "text.color": "#212121", "axes.labelcolor": "#212121", "axes.edgecolor": "#616161",
    "xtick.color": "#424242", "ytick.color": "#424242",
    "axes.spines.top": False, "axes.spines.right": False, "grid.color": "#9e9e9e", "grid.alpha": 0.4,
    "axes.prop_cycle": ["#3f51b5", "#d84315", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"],
}
NARROW_WIDTH_IN = 6.6  # shown on a 390 px phone (about 364 px of column) at the laptop's scale


def apply_site_style(rc) -> None:
    """Set the site's figure style (``SITE_STYLE``) in matplotlib's ``rcParams`` ``rc``."""
    from cycler import cycler

    for key, value in SITE_STYLE.items():
        rc[key] = cycler(color=value) if key == "axes.prop_cycle" else value


def save_narrow_variant(fig, path: Path) -> bool:
    """Save ``fig`` laid out for a phone: panels side by side stacked, the width ``NARROW_WIDTH_IN``.

    Only for figures whose axes all sit in one row of one grid (``plt.subplots(1, n)``) or that
    have a single axes; anything else (insets, colour bars, grids of panels) keeps its one layout
    and this returns False. Call it after the figure's own files are saved: it changes the figure.
    """
    axes = list(fig.axes)
    specs = [ax.get_subplotspec() for ax in axes]
    if not axes or any(s is None for s in specs):
        return False
    grid = specs[0].get_gridspec()
    if any(s.get_gridspec() is not grid for s in specs) or grid.nrows != 1:
        return False
    width, height = fig.get_size_inches()
    ordered = sorted(axes, key=lambda ax: ax.get_subplotspec().colspan.start)
    if len(ordered) > 1:
        stacked = fig.add_gridspec(len(ordered), 1)
        for row, ax in enumerate(ordered):
            ax.set_subplotspec(stacked[row, 0])
            ax.yaxis.set_tick_params(labelleft=True)  # a shared y axis hid the inner panels' labels
        height = height * len(ordered) * 0.9
    else:
        height = height * max(0.75, NARROW_WIDTH_IN / width)
    fig.set_size_inches(NARROW_WIDTH_IN, height)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "tight layout not applied": keep the wide figure only
        try:
            fig.tight_layout()
        except Exception:  # noqa: BLE001 - any layout failure has the same answer
            return False
    fig.savefig(path, format="svg", metadata={"Date": None})
    return True


CELL_MARKER = re.compile(r"^# %%(?!%)")  # jupytext's "percent" cell marker, as editors know it


def split_code_cells(code: str, header_lines: int) -> list[tuple[int, str]]:
    """``(first line in the file, source)`` of each ``# %%`` cell of the explainer's code.

    ``code`` is the generated file (``header_lines`` of header, then the explainer's block). The
    header and whatever precedes the first marker form cell 0's prefix; code without markers is
    one cell. A cell's source keeps its marker line, so the cells joined are the block.
    """
    lines = code.split("\n")
    starts = [0] + [i for i in range(header_lines, len(lines)) if CELL_MARKER.match(lines[i])]
    starts = sorted(set(starts))
    if len(starts) > 1 and not "\n".join(lines[starts[0]:starts[1]][header_lines:]).strip():
        starts.pop(0)  # nothing but the header before the first marker: it belongs to cell 1
        starts[0] = 0
    bounds = starts + [len(lines)]
    return [(bounds[k] + 1, "\n".join(lines[bounds[k]:bounds[k + 1]])) for k in range(len(starts))]


class _Tee(io.TextIOBase):
    """Writes to the process's stdout (the whole run's output) and keeps a copy (the cell's)."""

    def __init__(self, stream):
        self.stream, self.copy = stream, io.StringIO()

    def write(self, text):
        self.stream.write(text)
        return self.copy.write(text)

    def flush(self):
        self.stream.flush()


def run_cells(code: str, namespace: dict, filename: str, header_lines: int) -> list[dict]:
    """Run the code cell by cell in one namespace; return each cell's printed output and figures.

    Each cell is compiled at its own lines of ``filename``, so tracebacks and the checks' line
    numbers are those of the whole file. A figure belongs to the cell that opened it (figure
    numbers, 1-based, in the order the build saves them). Raises what the code raises.
    """
    import matplotlib.pyplot as plt

    cells = []
    for first_line, source in split_code_cells(code, header_lines):
        before = set(plt.get_fignums())
        tee = _Tee(sys.stdout)
        with contextlib.redirect_stdout(tee):
            exec(compile("\n" * (first_line - 1) + source, filename, "exec"), namespace)
        sys.stdout.flush()
        cells.append({"line": first_line, "stdout": tee.copy.getvalue(),
                      "fignums": sorted(set(plt.get_fignums()) - before)})
    order = {num: i for i, num in enumerate(plt.get_fignums(), start=1)}
    for cell in cells:
        cell["figures"] = [order[n] for n in cell.pop("fignums") if n in order]
    return cells


def _describe_error(exc: BaseException, code_path: Path, spec: dict) -> dict:
    """The traceback without the runner's frames, with the explainer source line of the fault."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    source_line = None
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve() == code_path and exc.lineno:
        # The code never ran: the line is the parser's, not a frame's.
        source_line = exc.lineno - spec["header_lines"] - 1 + spec["code_line"]
    lines = []
    for f in frames:
        if Path(f.filename).resolve() == code_path:
            src = f.lineno - spec["header_lines"] - 1 + spec["code_line"]
            source_line = src
            lines.append(f'  {spec["source"]}, line {src} (generated {spec["code_rel"]}, line {f.lineno})')
        else:
            lines.append(f"  {f.filename}, line {f.lineno}, in {f.name}")
        if f.line:
            lines.append(f"    {f.line}")
    text = "Traceback (most recent call last):\n" + "\n".join(lines) + "\n"
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return {"error": f"{type(exc).__name__}: {exc}", "traceback": text, "source_line": source_line}


def _plain(value, depth=0):
    """The value as JSON-able plain data, or raise TypeError: only what prose can cite."""
    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)  # NaN and inf too: Python's json writes and reads them
    if isinstance(value, str):
        if len(value) > 2000:
            raise TypeError("string too long")
        return value
    if depth < 3 and isinstance(value, (list, tuple)) and len(value) <= 100:
        return [_plain(v, depth + 1) for v in value]
    if depth < 3 and isinstance(value, dict) and len(value) <= 100 and all(isinstance(k, str) for k in value):
        return {k: _plain(v, depth + 1) for k, v in value.items()}
    raise TypeError(type(value).__name__)


def _values(namespace: dict) -> dict:
    values = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        try:
            values[name] = _plain(value)
        except TypeError:
            continue
    return values


def _project_modules(root: Path) -> list[str]:
    files = set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        if not f:
            continue
        p = Path(f).resolve()
        if p.is_relative_to(root) and p != Path(__file__).resolve():
            files.add(str(p.relative_to(root)))
    return sorted(files)


def _packages() -> dict:
    """Versions of the installed distributions whose top-level modules the run imported."""
    from importlib import metadata

    top = {name.split(".")[0] for name in sys.modules}
    dists = metadata.packages_distributions()
    out = {}
    for name in top:
        for dist in dists.get(name, []):
            try:
                out[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                pass
    return dict(sorted(out.items()))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
