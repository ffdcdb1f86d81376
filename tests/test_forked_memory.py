"""A forked run reuses the memory it frees instead of faulting in fresh pages, and its garbage
collector leaves what the fork server imported alone (issue 26, `site_src.execution._forkserver`:
`_keep_freed_memory`, `gc.freeze` in `serve`)."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Allocate and fill 30 MiB (under the server's 32 MiB threshold, over any threshold glibc's
# defaults reach from a server's imports), free it, and do it again, counting the page faults of
# each fill. Under glibc's defaults the block is mapped on its own and unmapped when freed (the
# threshold then rises to its size, and the heap grows by it afresh), so the second fill faults
# in every page again, as the first did; with freed memory kept, it faults in none. (The count
# of a fill depends on the page size NumPy's allocator asks for: it may ask for huge pages.)
PROBE = '''
import resource as _resource
def _fill_faults():
    import numpy as _np
    faults = []
    for _ in range(2):
        before = _resource.getrusage(_resource.RUSAGE_SELF).ru_minflt
        block = _np.ones(30 * 2**20 // 8)
        faults.append(_resource.getrusage(_resource.RUSAGE_SELF).ru_minflt - before)
        del block
    return faults
print("fill faults: %d then %d" % tuple(_fill_faults()))
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server and mallopt are Linux and glibc's")
def test_a_forked_run_refills_memory_it_freed_without_fresh_page_faults(tmp_path):
    run = _run_with(tmp_path, PROBE)
    first, second = map(int, re.search(r"fill faults: (\d+) then (\d+)", run.stdout).groups())
    assert first >= 15  # the first fill took fresh pages (15 if all were 2 MiB ones): the count sees faults
    assert second <= first // 10, f"refilling 30 MiB the run had freed took {second} page faults; the first fill {first}"


# What the fork server imported is frozen (gc.freeze): a run's full collection walks only the
# objects the run made, not the tens of thousands it inherited.
GC_PROBE = '''
import gc as _gc
print("frozen %d, tracked %d" % (_gc.get_freeze_count(), len(_gc.get_objects())))
'''


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server is Linux's")
def test_a_forked_runs_garbage_collector_does_not_walk_what_the_server_imported(tmp_path):
    run = _run_with(tmp_path, GC_PROBE)
    frozen, tracked = map(int, re.search(r"frozen (\d+), tracked (\d+)", run.stdout).groups())
    # NumPy and matplotlib alone make some 100,000 objects; the run itself, a few thousand.
    assert frozen > 10 * tracked, f"{frozen} objects frozen, {tracked} left for the run's collector"


def _run_with(tmp_path: Path, probe: str):
    """The tiny site's explainer with ``probe`` added to its code, run (not from a cache)."""
    from site_src.build import BuildOptions, build

    root = tmp_path / "site-root"
    shutil.copytree(REPO / "tests" / "fixtures" / "tinysite", root)
    source = root / "explainers" / "coin-flips.md"
    source.write_text(source.read_text().replace("n_flips = 2000\n", "n_flips = 2000\n" + probe))
    run = build(BuildOptions(root=root)).runs[0]
    assert not run.cached
    return run
