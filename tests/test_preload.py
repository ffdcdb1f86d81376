"""The fork server imports what the runs imported lazily last time (issue 26), and forgets it
once the code that needed it changes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# A standard-library module nothing else in a run imports, imported the way a library imports a
# submodule at its first call (not at the code's top level, where the server already looks).
LAZY = "wave"
PROBE = f'print("{LAZY} preloaded:", "{LAZY}" in __import__("sys").modules)\n__import__("importlib").import_module("{LAZY}")\n'


def _site(tmp_path: Path) -> Path:
    root = tmp_path / "site-root"
    shutil.copytree(REPO / "tests" / "fixtures" / "tinysite", root)
    source = root / "explainers" / "coin-flips.md"
    source.write_text(source.read_text().replace("n_flips = 2000\n", "n_flips = 2000\n" + PROBE))
    return root


def _recorded(root: Path) -> tuple[list[str], list[str]]:
    from site_src.execution import cache, servers

    cache_dir = root / ".cache" / "fairsite"
    entry = json.loads((cache_dir / "coin-flips" / cache.ENTRY).read_text())
    preload = [module for module, _ in json.loads((cache_dir / servers.PRELOAD).read_text())["preload"]]
    return entry["imported"], preload


def test_a_module_a_run_imported_lazily_is_preloaded_by_the_next_server_until_the_code_changes(tmp_path):
    from site_src.build import BuildOptions, build

    root = _site(tmp_path)
    first = build(BuildOptions(root=root))
    assert f"{LAZY} preloaded: False" in first.runs[0].stdout  # no record yet: the run imported it itself
    imported, preload = _recorded(root)
    assert LAZY in imported and LAZY in preload
    assert "numpy" in preload and "numpy" not in imported  # the code's top-level imports were preloaded already

    # Every explainer runs: the server started early imports what the record names. The run no
    # longer imports it itself, and the record keeps it (the code is the same), so a third build
    # preloads it as well: no build forgets it and the next imports it again.
    for _ in range(2):
        forced = build(BuildOptions(root=root, force_all=True))
        assert not forced.runs[0].cached
        assert f"{LAZY} preloaded: True" in forced.runs[0].stdout
        imported, preload = _recorded(root)
        assert LAZY in imported and LAZY in preload

    # The code no longer imports it: its next run records what it imports now, and the server
    # after it does not import the module any more.
    source = root / "explainers" / "coin-flips.md"
    source.write_text(source.read_text().replace(PROBE, f'print("{LAZY} preloaded:", "{LAZY}" in __import__("sys").modules)\n'))
    changed = build(BuildOptions(root=root))
    assert not changed.runs[0].cached
    imported, preload = _recorded(root)
    assert LAZY not in imported and LAZY not in preload
    again = build(BuildOptions(root=root, force_all=True))
    assert f"{LAZY} preloaded: False" in again.runs[0].stdout
