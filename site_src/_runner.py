"""Run one generated explainer file in this (fresh) process and record what it did.

Invoked by ``site_src.execute`` as ``python -m site_src._runner SPEC.json``. Writes
``result.json`` and the figures into the spec's ``out_dir``. What the code prints goes to this
process's stdout, which the parent captures. Kept free of site_src imports beyond the standard
library so the run's recorded dependencies are the explainer's own.
"""

from __future__ import annotations

import faulthandler
import json
import os
import random
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
        exec(compile(code, str(code_path), "exec"), namespace)
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
    result["figures"] = figures
    result["values"] = _values(namespace)
    result["modules"] = _project_modules(root)
    result["packages"] = _packages()
    result["data_files"] = sorted(opened)
    result["peak_memory_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["python"] = sys.version.split()[0]
    (out_dir / "result.json").write_text(json.dumps(result, indent=1, sort_keys=True))
    return 0


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
