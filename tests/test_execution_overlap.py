"""Issue 26: a run saves its figures while the next explainer's code runs, each in its own process.

With ``--jobs 1`` one explainer's code runs at a time; once it has ended, its process tells the
build so and goes on saving its figures (and their phone variants) while the build starts the next
run. The build stores a run's cache entry only once its process has ended, and a failure while
saving figures fails that run by name. Nothing here is timed: the order of events is read from
files the runs write.
"""

from __future__ import annotations

import shutil
import socket
import textwrap
from pathlib import Path

import pytest

from site_src.build import BuildOptions, build
from site_src.errors import BuildFailed
from site_src.execution import _forkserver

FIXTURE = Path(__file__).parent / "fixtures" / "tinysite"

pytestmark = pytest.mark.skipif(not _forkserver._ForkServer.available(), reason="the fork server is Linux's")


def _site(tmp_path: Path, explainers: dict[str, str]) -> Path:
    root = tmp_path / "site-root"
    shutil.copytree(FIXTURE, root)
    for slug, code in explainers.items():
        (root / "explainers" / f"{slug}.md").write_text(
            f"---\ntitle: Case {slug}\nsubtitle: What happens?\nsummary: A case of the overlapped runs.\n"
            f"checks:\n  - name: ran\n    assert: 'True'\n---\nProse.\n\n{{{{ figure(1, alt='A figure') }}}}\n\n"
            f"```python explainer\n{textwrap.dedent(code).strip()}\n```\n")
    return root


# A figure whose drawing waits for a file the next explainer's code writes: it can come only if that
# code runs while this run is saving its figures. Not for a time: a wait of 20 s ran out on a loaded
# machine (issue 47, item 8); a build that does not overlap the runs fails this run at its timeout.
_WAITS_FOR_THE_NEXT = """
    import os, time
    import matplotlib.pyplot as plt
    from matplotlib.artist import Artist

    class WaitsForTheNext(Artist):
        def draw(self, renderer):
            while not os.path.exists({mark!r}):
                time.sleep(0.02)
            with open({seen!r}, "a") as f:
                f.write("came\\n")

    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [0, 1])
    fig.add_artist(WaitsForTheNext())
    """

_WRITES_THE_MARK = """
    import matplotlib.pyplot as plt
    open({mark!r}, "w").close()
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [1, 0])
    """


def test_with_one_job_the_next_code_runs_while_a_run_saves_its_figures(tmp_path):
    mark, seen = tmp_path / "next-code-ran", tmp_path / "seen.txt"
    root = _site(tmp_path, {
        "a-saves-slowly": _WAITS_FOR_THE_NEXT.format(mark=str(mark), seen=str(seen)),
        "b-writes-the-mark": _WRITES_THE_MARK.format(mark=str(mark)),
    })
    report = build(BuildOptions(root=root, jobs=1))
    # The first drawing of the figure (its wide SVG) waited for the next run's code, and it came.
    assert seen.read_text().splitlines()[0] == "came"
    first = next(r for r in report.runs if r.slug == "a-saves-slowly")
    # Its entry was stored once its figures were saved: the wide one and the phone's.
    assert [p.name for p in first.figures] == ["figure-1.svg"]
    assert (first.out_dir / "figure-1.svg").is_file() and (first.out_dir / "figure-1-narrow.svg").is_file()
    entry = (root / ".cache" / "fairsite" / "a-saves-slowly" / "entry.json").read_text()
    assert '"figure-1-narrow.svg"' in entry


_LOGS_ITS_CODE = """
    import os, time
    import matplotlib.pyplot as plt
    def log(line):
        fd = os.open({log!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, (line + "\\n").encode())
        os.close(fd)
    log("start {slug}")
    time.sleep(0.3)
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [0, 1])
    log("end {slug}")
    """


@pytest.mark.parametrize("jobs", [1, 2])
def test_no_more_codes_run_at_once_than_jobs(tmp_path, jobs):
    # Each code writes when it starts and ends; with figures saved behind, still at most `jobs` at once.
    log = tmp_path / "log.txt"
    slugs = ["a-one", "b-two", "c-three", "d-four"]
    root = _site(tmp_path, {s: _LOGS_ITS_CODE.format(log=str(log), slug=s) for s in slugs})
    build(BuildOptions(root=root, jobs=jobs))
    running, most = set(), 0
    for line in log.read_text().splitlines():
        what, slug = line.split()
        if what == "start":
            running.add(slug)
            most = max(most, len(running))
        else:
            running.remove(slug)
    assert sorted(line.split()[1] for line in log.read_text().splitlines() if line.startswith("end")) == slugs
    assert most <= jobs


_FAILS_SAVING = """
    import matplotlib.pyplot as plt
    from matplotlib.artist import Artist

    class Broken(Artist):
        def draw(self, renderer):
            raise RuntimeError("this artist cannot be drawn")

    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [0, 1])
    fig.add_artist(Broken())
    done = 1
    """


def test_a_failure_while_saving_figures_fails_that_run_by_name_and_not_the_next(tmp_path):
    root = _site(tmp_path, {"a-broken-figure": _FAILS_SAVING,
                            "b-fine": _WRITES_THE_MARK.format(mark=str(tmp_path / "mark"))})
    with pytest.raises(BuildFailed) as err:
        build(BuildOptions(root=root, jobs=1))
    message = str(err.value)
    assert "explainers/a-broken-figure.md" in message
    assert "RuntimeError: this artist cannot be drawn (while saving its figures, after its code ran)" in message
    assert "b-fine" not in message
    assert not (root / ".cache" / "fairsite" / "a-broken-figure").exists()  # nothing cached for it
    assert (root / ".cache" / "fairsite" / "b-fine" / "entry.json").is_file()


def test_the_build_reads_each_message_of_a_run_however_they_arrive():
    # The server's pid and return code and the run's code_done share one connection; two may
    # arrive in one read, and the run's may come before the server's pid.
    ours, theirs = socket.socketpair()
    try:
        theirs.sendall(b'{"code_done": true}\n{"pid": 4242}\n')
        forked = _forkserver._Forked(ours)
        assert forked.pid == 4242
        forked.wait_code_done(timeout=5)
        assert forked.code_done and forked.returncode is None
        theirs.sendall(b'{"returncode": 3}\n')
        assert forked.wait(timeout=5) == 3
    finally:
        theirs.close()
        ours.close()


# A run forked before the server has resolved the folders of what it preloaded (it does so only
# once no request waits): whether they were resolved at fork time depends on the timing, so the
# run forgets whatever the server had, as a run forked first would find it.
_FORGETS_THE_SERVERS_FOLDERS = """
    import sys
    inputs = sys.modules["site_src.execution._inputs"]  # the runner's, as the fork server left it
    inputs._FOLDERS.clear()
    import numpy as np
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot(np.arange(3))
    """


def test_a_run_forked_before_the_server_resolves_its_folders_records_the_same(tmp_path):
    # The run resolves them itself then, with the same answers; the packages it imported are
    # looked up by the build (oracle: importlib.metadata).
    from importlib import metadata

    root = _site(tmp_path, {"a-first": _FORGETS_THE_SERVERS_FOLDERS})
    report = build(BuildOptions(root=root, jobs=1))
    run = next(r for r in report.runs if r.slug == "a-first")
    assert run.packages["numpy"] == metadata.version("numpy")
    assert run.packages["matplotlib"] == metadata.version("matplotlib")


def test_the_packages_a_run_imported_are_the_installed_distributions_of_its_top_level_modules():
    from importlib import metadata

    from site_src.execution import cache

    found = cache.imported_packages(["json", "numpy", "yaml", "no_such_module_here"])
    # The standard library's json and an unknown name have no distribution; yaml is PyYAML's.
    assert found == {"PyYAML": metadata.version("PyYAML"), "numpy": metadata.version("numpy")}


# The niceness of the run's process while its code runs, then at each drawing of a figure left
# open, which is saved (wide, then the phone's variant) after the code has ended.
_NOTES_ITS_NICENESS = """
    import os
    import matplotlib.pyplot as plt
    from matplotlib.artist import Artist

    with open({notes!r}, "a") as f:
        f.write(f"code {{os.nice(0)}}\\n")

    class NotesTheNiceness(Artist):
        def draw(self, renderer):
            with open({notes!r}, "a") as f:
                f.write(f"figure {{os.nice(0)}}\\n")

    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [0, 1])
    fig.add_artist(NotesTheNiceness())
    """


def test_once_its_code_has_ended_a_run_saves_its_figures_at_a_lower_priority(tmp_path):
    # The next run's code is what the build waits on: the figures saved behind it yield the core
    # (os.nice; the runner's _AFTER_CODE_NICENESS). The code itself runs at the build's priority.
    from site_src.execution import _runner

    notes = tmp_path / "niceness.txt"
    root = _site(tmp_path, {"a-notes": _NOTES_ITS_NICENESS.format(notes=str(notes))})
    build(BuildOptions(root=root, jobs=1))
    seen = [line.split() for line in notes.read_text().splitlines()]
    code = [int(n) for what, n in seen if what == "code"]
    figures = [int(n) for what, n in seen if what == "figure"]
    if code[0] >= 19:
        pytest.skip("the tests run at the lowest priority already: no lower one to see")
    assert len(code) == 1 and len(figures) >= 2  # the wide figure and the phone's
    assert set(figures) == {min(19, code[0] + _runner._AFTER_CODE_NICENESS)}
