"""The run cache cannot serve a stale number, and what `build` publishes is what `check` accepts.

Each case builds a copy of the tiny fixture site (tests/fixtures/tinysite) with a tiny explainer
of its own, changes an input the way a user would, builds again and reads the page.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

from site_src.execution import _runner, cache
from site_src.build import BuildOptions, NumbersMode, build
from site_src.cli import main as fairsite
from site_src.errors import BuildFailed

from built_sites import copy_of_built, copy_of_built_tinysite

FIXTURE = Path(__file__).parent / "fixtures" / "tinysite"


def _site(tmp: Path, *, keep_fixture_explainer: bool = False) -> Path:
    root = tmp / "site-root"
    shutil.copytree(FIXTURE, root)
    if not keep_fixture_explainer:
        (root / "explainers" / "coin-flips.md").unlink()  # one run fewer: these tests bring their own
    return root


def _explainer(root: Path, slug: str, code: str, *, prose: str, inputs: list[str] | None = None) -> None:
    front = f"inputs: {json.dumps(inputs)}\n" if inputs is not None else ""
    text = (f"---\ntitle: {slug.title()}\nsubtitle: A test?\nsummary: A test explainer.\n{front}"
            f"checks:\n  - name: ran\n    assert: \"True\"\n---\n{prose}\n\n```python explainer\n"
            f"{textwrap.dedent(code).strip()}\n```\n")
    (root / "explainers" / f"{slug}.md").write_text(text)


def _runs(root: Path, **options) -> dict:
    return {r.slug: r for r in build(BuildOptions(root=root, **options)).runs}


def _page(root: Path, slug: str) -> str:
    return (root / "docs" / "explainers" / slug / "index.md").read_text()


def _sqlite_rows(path: Path, n: int) -> None:
    with sqlite3.connect(path) as db:
        db.execute("create table if not exists t (x integer)")
        db.executemany("insert into t values (?)", [(i,) for i in range(n)])
    db.close()


_SQLITE = """
    import sqlite3
    con = sqlite3.connect("data/x.db")
    n_rows = con.execute("select count(*) from t").fetchone()[0]
    con.close()
    """


def test_sqlite_rows_added_rerun_and_the_page_shows_the_new_count(tmp_path):
    root = _site(tmp_path)
    (root / "data").mkdir()
    _sqlite_rows(root / "data" / "x.db", 3)
    _explainer(root, "sqlite-rows", _SQLITE, prose="The table has {{ n_rows | number }} rows.")
    _runs(root)
    assert "The table has 3 rows." in _page(root, "sqlite-rows")
    again = _runs(root)["sqlite-rows"]
    assert not again.cached
    assert again.reason == ("it connected to data/x.db (sqlite3), which the cache cannot track; "
                            "declare it under `inputs:` to cache it")
    _sqlite_rows(root / "data" / "x.db", 2)
    assert not _runs(root)["sqlite-rows"].cached
    assert "The table has 5 rows." in _page(root, "sqlite-rows")


def test_declared_sqlite_input_is_cached_until_the_file_changes(tmp_path):
    root = _site(tmp_path)
    (root / "data").mkdir()
    _sqlite_rows(root / "data" / "x.db", 3)
    _explainer(root, "sqlite-rows", _SQLITE, prose="The table has {{ n_rows | number }} rows.",
               inputs=["data/x.db"])
    _runs(root)
    hit = _runs(root)["sqlite-rows"]
    assert hit.cached and "declared `inputs:`" in hit.reason
    _sqlite_rows(root / "data" / "x.db", 4)
    rerun = _runs(root)["sqlite-rows"]
    assert not rerun.cached and rerun.reason == "declared input data/x.db changed"
    assert "The table has 7 rows." in _page(root, "sqlite-rows")


def test_a_file_read_by_a_child_process_reruns(tmp_path, capsys):
    root = _site(tmp_path)
    (root / "data.txt").write_text("a\nb\nc\n")
    _explainer(root, "child-reads", """
        import subprocess
        out = subprocess.run(["wc", "-l", "data.txt"], capture_output=True, text=True, check=True).stdout
        n_lines = int(out.split()[0])
        """, prose="The file has {{ n_lines | number }} lines.")
    _runs(root)
    assert "The file has 3 lines." in _page(root, "child-reads")
    (root / "data.txt").write_text("a\nb\nc\nd\n")
    capsys.readouterr()
    # The CLI's --explain says which case applied.
    assert fairsite(["--root", str(root), "build", "--explain", "--jobs", "1"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "re-ran: it ran a child process `wc -l data.txt` (subprocess), which the cache cannot track" in err
    assert "The file has 4 lines." in _page(root, "child-reads")


@pytest.mark.parametrize("listing", ['len(list(Path("data").glob("x*")))',
                                     'len([f for f in os.listdir("data") if f.startswith("x")])'])
def test_a_directory_listing_gaining_a_file_reruns(tmp_path, listing):
    root = _site(tmp_path)
    (root / "data").mkdir()
    (root / "data" / "x1.txt").write_text("1")
    _explainer(root, "lists-data", f"""
        import os
        from pathlib import Path
        n_files = {listing}
        """, prose="There are {{ n_files | number }} files.")
    _runs(root)
    assert "There are 1 files." in _page(root, "lists-data")
    (root / "data" / "x2.txt").write_text("2")
    rerun = _runs(root)["lists-data"]
    assert not rerun.cached and "listed data" in rerun.reason and "cannot track" in rerun.reason
    assert "There are 2 files." in _page(root, "lists-data")


def test_a_declared_glob_joins_the_key_with_its_list_of_matches(tmp_path):
    root = _site(tmp_path)
    (root / "data").mkdir()
    for name in ("a.csv", "b.csv"):
        (root / "data" / name).write_text("x\n1\n")
    _explainer(root, "globbed", """
        import glob
        import subprocess
        files = sorted(glob.glob("data/*.csv"))
        n_files = len(files)
        n_lines = sum(int(subprocess.run(["wc", "-l", f], capture_output=True, text=True).stdout.split()[0])
                      for f in files)
        """, prose="{{ n_files | number }} files, {{ n_lines | number }} lines.", inputs=["data/*.csv"])
    _runs(root)
    assert _runs(root)["globbed"].cached  # untracked reads, but declared
    (root / "data" / "c.csv").write_text("x\n1\n2\n")
    rerun = _runs(root)["globbed"]
    assert not rerun.cached and rerun.reason == "declared input data/*.csv now matches other files"
    assert "3 files, 7 lines." in _page(root, "globbed")
    (root / "data" / "a.csv").write_text("x\n")
    rerun = _runs(root)["globbed"]
    assert not rerun.cached and rerun.reason == "declared input data/a.csv changed"
    assert "3 files, 6 lines." in _page(root, "globbed")


# --- the cache trusts nothing it stored --------------------------------------------------------

@pytest.fixture(scope="module")
def coin_site(tmp_path_factory, built_tinysite):
    """The built tiny site, copied from the session's one build (issue 26); each case corrupts it further."""
    return copy_of_built_tinysite(built_tinysite, tmp_path_factory.mktemp("corrupt"))


def _entry(root: Path) -> Path:
    return root / ".cache" / "fairsite" / "coin-flips" / "entry.json"


def _garbage_svg(root: Path) -> None:
    (root / ".cache" / "fairsite" / "coin-flips" / "figure-1.svg").write_text("garbage")


def _delete_narrow(root: Path) -> None:
    (root / ".cache" / "fairsite" / "coin-flips" / "figure-1-narrow.svg").unlink()


def _binary_entry(root: Path) -> None:
    _entry(root).write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe")


def _old_format(root: Path) -> None:
    _entry(root).write_text('{"format": 1}')


def _bad_json(root: Path) -> None:
    _entry(root).write_text(f'{{"format": {cache.FORMAT}, "stdout": ')


def _missing_key(root: Path) -> None:
    data = json.loads(_entry(root).read_text())
    del data["values"]
    _entry(root).write_text(json.dumps(data))


def _wrong_type(root: Path) -> None:
    data = json.loads(_entry(root).read_text())
    data["figures"] = "figure-1.svg"
    _entry(root).write_text(json.dumps(data))


def _figure_without_digest(root: Path) -> None:
    data = json.loads(_entry(root).read_text())
    data["artefacts"] = {}
    _entry(root).write_text(json.dumps(data))


def _not_an_object(root: Path) -> None:
    _entry(root).write_text("[1, 2]")


@pytest.mark.parametrize("corrupt, reason", [
    (_garbage_svg, "cached figure-1.svg is not the one the run wrote"),
    (_delete_narrow, "cached figure-1-narrow.svg is missing"),
    (_binary_entry, "cache entry is not UTF-8 text"),
    (_old_format, f"cache entry has format 1; this build writes format {cache.FORMAT}"),
    (_bad_json, "cache entry is not valid JSON"),
    (_missing_key, "cache entry is malformed (values: Field required)"),
    (_wrong_type, "cache entry is malformed (figures: Input should be a valid list)"),
    (_not_an_object, "cache entry is a JSON list, not an object"),
    (_figure_without_digest, "cache entry is malformed (figures: figure-1.svg has no recorded digest)"),
])
def test_a_corrupt_cache_entry_is_a_rerun_with_a_reason(coin_site, corrupt, reason):
    corrupt(coin_site)
    # Also a prose edit: the page must be rendered again from the repaired entry, never skipped.
    source = coin_site / "explainers" / "coin-flips.md"
    source.write_text(source.read_text() + "\n")
    run = _runs(coin_site)["coin-flips"]
    assert not run.cached
    assert run.reason.startswith(reason)
    svg = (coin_site / "site" / "explainers" / "coin-flips" / "figure-1.svg").read_text()
    assert svg.startswith("<?xml") and "garbage" not in svg
    assert (coin_site / "site" / "explainers" / "coin-flips" / "figure-1-narrow.svg").read_text().startswith("<?xml")
    assert _runs(coin_site)["coin-flips"].cached  # repaired


# --- the key does not depend on where the clone or the environment lives -----------------------

def test_a_clone_moved_elsewhere_with_its_cache_reruns_nothing(tmp_path):
    root = _site(tmp_path / "a", keep_fixture_explainer=True)
    (root / "data.txt").write_text("3\n")
    _explainer(root, "reads-data", 'value = int(open("data.txt").read())', prose="Value {{ value | number }}.")
    first = _runs(root)
    assert "data.txt" in first["reads-data"].data_files
    moved = tmp_path / "b" / "elsewhere"
    moved.parent.mkdir()
    shutil.move(root, moved)
    runs = _runs(moved)
    assert all(r.cached for r in runs.values()), {s: r.reason for s, r in runs.items()}
    assert {s: r.run_id for s, r in runs.items()} == {s: r.run_id for s, r in first.items()}


def test_files_of_the_python_environment_are_never_inputs(tmp_path):
    # A package installed in an environment inside the clone (as `.venv` or `venv`): its files
    # are covered by package versions, and its place differs from one machine to the next.
    root = _site(tmp_path)
    pkg = root / "venv" / "lib" / "python3.11" / "site-packages"
    pkg.mkdir(parents=True)
    (pkg / "fakepkg.py").write_text("VALUE = 2\n")
    (pkg / "fakepkg.txt").write_text("3\n")
    _explainer(root, "uses-env", """
        import sys
        sys.path.insert(0, "venv/lib/python3.11/site-packages")
        import fakepkg
        value = fakepkg.VALUE + int(open("venv/lib/python3.11/site-packages/fakepkg.txt").read())
        """, prose="Value {{ value | number }}.")
    run = _runs(root)["uses-env"]
    assert not any("venv" in p for p in run.modules + run.data_files), (run.modules, run.data_files)
    assert _runner.in_environment(Path(sys.prefix) / "lib" / "anything.py")
    assert not _runner.in_environment(root / "data.txt")


# --- what build publishes is what check accepts ------------------------------------------------

def test_build_fails_on_a_drifted_number_naming_accept(accepted_copy):
    root = accepted_copy
    before = hashlib.sha256((root / "site" / "explainers" / "coin-flips" / "index.html").read_bytes()).digest()
    source = root / "explainers" / "coin-flips.md"
    source.write_text(source.read_text().replace("default_rng(7)", "default_rng(8)"))
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root))
    msg = str(info.value)
    assert "cited numbers changed (run `fairsite accept coin-flips` if on purpose)" in msg
    assert "share_numpy" in msg
    after = hashlib.sha256((root / "site" / "explainers" / "coin-flips" / "index.html").read_bytes()).digest()
    assert after == before  # the drifted number was not published

    # `serve` keeps serving, with a banner at the top of the page.
    report = build(BuildOptions(root=root, numbers=NumbersMode.SERVE))
    assert any("cited numbers changed" in n for n in report.notes)
    html = (root / "site" / "explainers" / "coin-flips" / "index.html").read_text()
    assert 'class="admonition danger"' in html
    assert html.index("admonition danger") < html.index("<th>Accepted</th>") < html.index("We flipped the coin")
    assert "<code>share_numpy</code>" in html and "fairsite accept coin-flips" in html

    build(BuildOptions(root=root, numbers=NumbersMode.ACCEPT))
    build(BuildOptions(root=root))  # accepted on purpose: builds again, without the banner
    assert "admonition danger" not in (root / "site" / "explainers" / "coin-flips" / "index.html").read_text()


def test_a_page_with_no_accepted_numbers_builds_with_a_note(tmp_path):
    root = _site(tmp_path, keep_fixture_explainer=True)
    report = build(BuildOptions(root=root))
    assert report.notes == ["explainers/coin-flips.md: no accepted numbers yet (coin-flips.numbers.json); "
                            "run `fairsite accept coin-flips`"]
    (root / "explainers" / "coin-flips.numbers.json").write_text("not json")
    with pytest.raises(BuildFailed, match="coin-flips.numbers.json is not an accepted-numbers file"):
        build(BuildOptions(root=root))


def test_a_failed_build_leaves_the_generated_code_as_it_found_it(built_copy):
    root = built_copy
    build(BuildOptions(root=root))
    code_dir = root / "explainers" / "code"
    before = {p.name: p.read_bytes() for p in code_dir.iterdir()}
    source = root / "explainers" / "coin-flips.md"
    good = source.read_text()
    source.write_text(good.replace("n_flips = 2000", "n_flips = 2000\nraise SystemExit('broken')"))
    _explainer(root, "also-broken", "x = 1 / 0", prose="Nothing.")
    with pytest.raises(BuildFailed, match="ZeroDivisionError"):
        build(BuildOptions(root=root))
    assert {p.name: p.read_bytes() for p in code_dir.iterdir()} == before
    (root / "explainers" / "also-broken.md").unlink()
    source.write_text(good.replace("None worth a number.", "Still none."))
    build(BuildOptions(root=root))
    assert {p.name: p.read_bytes() for p in code_dir.iterdir()} == before  # same code, same file


def test_the_recorder_names_each_read_it_cannot_track(tmp_path):
    # The audit events as CPython raises them (https://docs.python.org/3/library/audit_events.html),
    # fed to the hook directly: the runs above cover the real ones end to end.
    root, out = tmp_path / "repo", tmp_path / "repo" / ".cache" / "run"
    (root / "data").mkdir(parents=True)
    out.mkdir(parents=True)
    (root / "data" / "x.txt").write_text("1\n")
    (root / "data" / "x.db").write_bytes(b"")
    rec = _runner._InputRecorder(root.resolve(), out.resolve())
    with open(root / "data" / "x.txt") as fh:
        rec("open", (fh.fileno(), "r", 0))  # open(fd): the file behind the descriptor is tracked
    rec("open", (str(out / "figure-1.svg"), "w", 0))  # the run's own output is not an input
    rec("open", (str(Path(sys.prefix) / "lib" / "x.txt"), "r", 0))  # nor the environment
    rec("os.system", (b"cat data/x.txt",))
    rec("os.exec", ("/bin/cat", ["cat", "data/x.txt"], {}))
    rec("os.posix_spawn", ("/bin/ls", ["ls", "data"], {}))
    rec("os.fork", ())
    rec("sqlite3.connect", (str(root / "data" / "x.db"),))
    rec("sqlite3.connect", (":memory:",))  # nothing to read
    rec("sqlite3.connect", (str(root / "data" / "new.db"),))  # created by the run: it may grow run to run
    rec("os.scandir", (str(root / "data"),))
    rec("os.listdir", ("/usr",))  # outside the project
    rec("glob.glob", (str(root / "data" / "*.txt"), False))
    rec("glob.glob/2", ("*.txt", False, str(root / "data"), None))  # the same call: one sentence
    rec("socket.connect", (None, ("198.51.100.7", 443)))
    assert rec.opened == {"data/x.txt"}
    assert list(rec.untracked) == [
        "ran a child process `cat data/x.txt` (os.system)",
        "ran a child process `cat data/x.txt` (os.exec)",
        "ran a child process `ls data` (os.posix_spawn)",
        "forked a child process (os.fork)",
        "connected to data/x.db (sqlite3)",
        "connected to data/new.db (sqlite3)",
        "listed data (os.scandir)",
        "listed data/*.txt (glob.glob)",
        "connected to ('198.51.100.7', 443) (network)",
    ]
    rec.active = False
    rec("os.fork", ())
    assert len(rec.untracked) == 9


# --- issue 25: what the run creates, reads outside the repository, or writes ---------------------

_GROWS = """
    import sqlite3
    con = sqlite3.connect("data/made.db")  # created by the first run, one row more each run
    con.execute("create table if not exists t (x integer)")
    con.execute("insert into t values (1)")
    con.commit()
    n_rows = con.execute("select count(*) from t").fetchone()[0]
    con.close()
    """


def test_a_database_the_run_creates_is_not_cached_forever(tmp_path):
    root = _site(tmp_path)
    (root / "data").mkdir()
    _explainer(root, "grows", _GROWS, prose="The table has {{ n_rows | number }} rows.")
    _runs(root)
    assert "The table has 1 rows." in _page(root, "grows")
    again = _runs(root)["grows"]
    assert not again.cached and again.reason == ("it connected to data/made.db (sqlite3), which the cache cannot "
                                                 "track; declare it under `inputs:` to cache it")
    assert "The table has 2 rows." in _page(root, "grows")


def test_inputs_may_name_a_file_the_run_creates_and_a_typo_is_still_caught(tmp_path):
    root = _site(tmp_path)
    (root / "data").mkdir()
    _explainer(root, "grows", _GROWS, prose="The table has {{ n_rows | number }} rows.", inputs=["data/made.db"])
    _runs(root)  # the file does not exist before the first run
    assert "The table has 1 rows." in _page(root, "grows")
    rerun = _runs(root)["grows"]  # the run left the database changed: its next run reads that
    assert not rerun.cached and rerun.reason == "declared input data/made.db changed"
    assert "The table has 2 rows." in _page(root, "grows")
    # Nor does the command's quick "nothing changed" answer hold.
    assert fairsite(["--root", str(root), "build", "--jobs", "1"]) == 0
    assert "The table has 3 rows." in _page(root, "grows")
    _explainer(root, "typo", "x = 1", prose="Nothing.", inputs=["data/mdae.db"])
    with pytest.raises(BuildFailed, match=r"inputs: 'data/mdae\.db' does not exist, and the run did not create it"):
        build(BuildOptions(root=root))


def test_reads_outside_the_repository_rerun_and_writes_are_named(tmp_path):
    import subprocess

    root = _site(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "in.txt").write_text("a\nb\n")
    (root / "data").mkdir()
    (root / "data" / "tracked.csv").write_text("x\n1\n")
    for cmd in (["init", "-q"], ["add", "data/tracked.csv"],
                ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "data"]):
        subprocess.run(["git", *cmd], cwd=root, check=True)
    _explainer(root, "outside", f"""
        from pathlib import Path
        n_lines = len(Path({str(outside / 'in.txt')!r}).read_text().splitlines())
        Path({str(outside / 'out.txt')!r}).write_text("made by the run")
        Path("data/untracked.csv").write_text("y\\n")  # the run's own output: fine
        """, prose="The file has {{ n_lines | number }} lines.")
    run = _runs(root)["outside"]
    assert "The file has 2 lines." in _page(root, "outside")
    assert run.untracked == [f"read {outside / 'in.txt'} (outside the repository)"]
    assert (f"explainers/outside.md: the code wrote {outside / 'out.txt'}, outside the repository: a run served "
            "from the cache does not write it again") in run.warnings
    assert not any("untracked.csv" in w for w in run.warnings)
    (outside / "in.txt").write_text("a\nb\nc\n")
    again = _runs(root)["outside"]
    assert not again.cached and again.reason.startswith(f"it read {outside / 'in.txt'} (outside the repository)")
    assert "The file has 3 lines." in _page(root, "outside")


def test_the_recorder_sorts_outside_reads_listings_and_writes(tmp_path):
    import os

    root, out = tmp_path / "repo", tmp_path / "repo" / ".cache" / "run"
    out.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "in.csv").write_text("1\n")
    rec = _runner._InputRecorder(root.resolve(), out.resolve())
    rec("open", (str(elsewhere / "in.csv"), "r", os.O_RDONLY))
    rec("open", ("/etc/hostname", "r", os.O_RDONLY))  # the system's own: not an input
    rec("os.listdir", (str(elsewhere),))
    rec("open", (str(elsewhere / "made.csv"), None, os.O_WRONLY | os.O_CREAT))  # os.open: flags only
    (elsewhere / "made.csv").write_text("2\n")
    rec("open", (str(elsewhere / "made.csv"), "r", os.O_RDONLY))  # read back: its own output
    rec("open", (str(elsewhere / "gone.tmp"), "w", 0))  # a temporary file it removed again
    rec("open", (str(root / "data.csv"), "a", 0))
    assert list(rec.untracked) == [f"read {elsewhere / 'in.csv'} (outside the repository)",
                                   f"listed {elsewhere} (os.listdir, outside the repository)"]
    assert rec.written_outside() == [str(elsewhere / "made.csv")]
    assert list(rec.written) == ["data.csv"] and "data.csv" in rec.opened


def test_the_recorder_refuses_every_change_to_a_protected_file_and_keeps_the_line(tmp_path):
    """Opening for writing, removing, renaming onto, truncating or removing the folder of a file of
    the repository is refused before it happens, with the code's line; reading it, and writing
    any other file, is not (issue 47, item 1)."""
    import os

    root, out = tmp_path / "repo", tmp_path / "repo" / ".cache" / "run"
    (root / "results").mkdir(parents=True)
    out.mkdir(parents=True)
    rec = _runner._InputRecorder(root.resolve(), out.resolve(), protected=frozenset({"results/r.csv", "mkdocs.yml"}),
                                 code_file=__file__)
    folder = os.open(root / "results", os.O_RDONLY)
    refused = [("open", (str(root / "mkdocs.yml"), "w", 0)), ("open", (str(root / "mkdocs.yml"), "r+", 0)),
               ("open", (str(root / "results" / "r.csv"), None, os.O_WRONLY | os.O_TRUNC)),
               ("os.remove", ("r.csv", folder)), ("os.rename", (str(root / "new.csv"), str(root / "mkdocs.yml"), -1, -1)),
               ("os.truncate", (str(root / "mkdocs.yml"), 0)), ("shutil.rmtree", (str(root / "results"), None))]
    try:
        for event, args in refused:
            with pytest.raises(PermissionError, match="is a file of the repository: a run may not change it"):
                rec(event, args)
        for event, args in [("open", (str(root / "mkdocs.yml"), "r", 0)), ("open", (str(root / "new.csv"), "w", 0)),
                            ("os.remove", (str(root / "new.csv"), -1)), ("shutil.rmtree", (str(root / "data"), None))]:
            rec(event, args)
    finally:
        os.close(folder)
    line = next(i for i, text in enumerate(Path(__file__).read_text().splitlines(), start=1) if "rec(event, args)" in text)
    assert rec.refused == {"mkdocs.yml": line, "results/r.csv": line}


def test_outside_git_the_files_the_build_reads_are_the_ones_a_run_may_not_change(tmp_path):
    from site_src.filestate import repository_files

    for rel in ("mkdocs.yml", "results/results_fairness.csv", "explainers/a.md", "explainers/a.numbers.json",
                "audits/x/audit.yaml", "data/made.db", "explainers/code/a.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert repository_files(tmp_path) == ("audits/x/audit.yaml", "explainers/a.md", "explainers/a.numbers.json",
                                          "mkdocs.yml", "results/results_fairness.csv")


_COMMENTED = """
    import numpy as np  # the generator
    # %% Draw
    rng = np.random.default_rng(1)
    # how many draws
    n = int(rng.integers(10, 20))
    if n > 0:
        total = n + 1
    print(total)
    """


@pytest.fixture(scope="module")
def commented_site(tmp_path_factory) -> Path:
    """The tiny site with only the `_COMMENTED` explainer, built once (its run is not from a cache);
    each edit below is made in a copy (`copy_of_built`), a build fewer per case."""
    root = _site(tmp_path_factory.mktemp("commented"))
    _explainer(root, "commented", textwrap.dedent(_COMMENTED).strip(), prose="Total {{ total | number }}.")
    assert not _runs(root)["commented"].cached
    return root


@pytest.mark.parametrize(("edit", "reruns"), [
    (lambda c: c.replace("# how many draws", "# how many draws we take, reworded"), False),
    (lambda c: c.replace("  # the generator", ""), False),  # a trailing comment removed
    (lambda c: c.replace("n + 1", "n  +  1").replace("        total", "      total"), False),  # spaces, indentation
    (lambda c: c.replace("# how many draws\n", "# how many draws\n# a new line of comment\n"), True),  # lines shift
    (lambda c: c.replace("# %% Draw", "# %% Drawing"), True),  # a cell marker is output structure
    (lambda c: c.replace("n + 1", "n + 2"), True),
    (lambda c: c.replace("default_rng(1)", "default_rng(1)  # seed"), False),
])
def test_a_comment_or_spacing_edit_keeps_the_cached_run(commented_site, tmp_path, edit, reruns):
    # Issue 26: the run's key is the code's tokens with their line numbers, so a comment or
    # spaces within lines do not re-run it; the page shows the edited code all the same.
    root = copy_of_built(commented_site, tmp_path)
    code = textwrap.dedent(_COMMENTED).strip()
    edited = edit(code)
    assert edited != code
    _explainer(root, "commented", edited, prose="Total {{ total | number }}.")
    again = _runs(root)["commented"]
    assert again.cached is not reruns, again.reason
    if reruns:
        moved = "# a new line of comment" in edited
        assert again.reason == ("its code's lines moved (a comment or blank line added or removed): the lines its "
                                "output and tracebacks cite move with them" if moved else "its code changed")
    generated = (root / "explainers" / "code" / "commented.py").read_text()
    assert edited.splitlines()[-1] in generated and edited.splitlines()[3] in generated  # the code as edited


def test_a_lookup_of_code_whose_text_is_unchanged_does_not_tokenize_it_again(commented_site, tmp_path, monkeypatch):
    # Every build looks every explainer up: the cached entry's digest of the tokens stands for
    # the same text (issue 26: tokenizing all of them was 0.1 s of a prose edit's 1.6 s).
    root = copy_of_built(commented_site, tmp_path)
    source = root / "explainers" / "commented.md"
    source.write_text(source.read_text().replace("Total {{", "In all, {{"))  # a prose edit

    def tokenized(text):
        raise AssertionError("the unchanged code was tokenized again")

    monkeypatch.setattr(cache, "code_key", tokenized)
    assert _runs(root)["commented"].cached


def test_code_key_keeps_tokens_and_their_lines_only():
    # Oracle: Python's own compiler. Codes with equal keys compile to the same bytecode with the
    # same line table; codes with different keys here do not.
    def compiled(code):
        c = compile(code, "x.py", "exec")
        return c.co_code, list(c.co_lines()), c.co_consts

    base = "x = 1  # one\nif x:\n    y = [x,\n         2]\n"
    same = ["x = 1\nif x:\n    y = [x,\n         2]\n", "x  =  1 # 1\nif x :\n  y = [ x ,\n 2 ]\n"]
    different = ["\nx = 1\nif x:\n    y = [x,\n         2]\n", "x = 1\nif x:\n    y = [x, 2]\n", "x = 2\nif x:\n    y = [x,\n         2]\n"]
    for code in same:
        assert cache.code_key(code) == cache.code_key(base)
        assert compiled(code) == compiled(base)
    for code in different:
        assert cache.code_key(code) != cache.code_key(base)
        assert compiled(code) != compiled(base)
    assert cache.code_key("s = '''\n# inside a string\n'''\n") != cache.code_key("s = '''\n# inside a string!\n'''\n")
    assert cache.code_key("x = (\n") == "x = (\n"  # does not tokenize: keyed by its text


@pytest.mark.parametrize(("before", "now", "said"), [
    ({"code": "a", "python": "3.11.9 (main)", "limits": "[600, 100]"},
     {"code": "b", "python": "3.11.9 (main)", "limits": "[600, 100]"}, "its code changed"),
    ({"code": "a", "python": "3.11.9 (main)"}, {"code": "a", "python": "3.11.10 (main)"}, "Python 3.11.9 -> 3.11.10"),
    ({"inputs": "null"}, {"inputs": '["data/x.csv"]'}, "its declared `inputs:` changed (none -> data/x.csv)"),
    ({"limits": f"[600, {2**30}]"}, {"limits": f"[30, {2**30}]"},
     "its limits changed (timeout 600 s, memory 1024 MiB -> timeout 30 s, memory 1024 MiB)"),
    ({"code": "a", "runner": "r"}, {"code": "b", "runner": "s"}, "its code changed; the runner's code (site_src/execution) changed"),
    ({"code": "a", "code_tokens": "t"}, {"code": "b", "code_tokens": "t"},
     "its code's lines moved (a comment or blank line added or removed): the lines its output and tracebacks cite "
     "move with them"),
])
def test_a_miss_on_the_static_key_names_the_part_that_changed(before, now, said):
    # `fairsite build --explain` (a fresh user, stop 36): the reason named every part the key
    # could hold ("code, declared inputs, limits or Python changed"), not the one that changed.
    assert cache.describe_static_change(before, now) == said

