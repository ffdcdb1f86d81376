"""The `fairsite` command line: progress while explainers run, summary labels, `serve`'s busy port
(the URL it prints is checked in test_site_numbers' serve test)."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

import pytest

from site_src import cli
from test_site_build import _add, _copy_fixture

_SLEEPY = """
    ---
    title: Sleepy
    subtitle: What does a long run look like?
    summary: Sleeps a little.
    checks:
      - name: ran
        assert: done
    ---
    Prose.

    ```python explainer
    import time
    time.sleep(3)
    done = True
    ```
    """


def test_progress_names_running_explainers_then_mkdocs_and_labels_cached_times(tmp_path, capsys, monkeypatch):
    root = _copy_fixture(tmp_path)
    _add(root, "sleepy", _SLEEPY)
    monkeypatch.setattr(cli._Progress, "_EVERY_S", 1)  # a log line every second instead of every 15
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    # A line a second while sleepy's 3 s run; another run (saving its figures) may share a line.
    running = [line for line in err.splitlines()
               if line.strip().startswith("still running (each since it started, start-up and figures included): ")]
    counted = [int(n) for line in running for n in re.findall(r"\bsleepy \((\d+) s\)", line)]
    assert counted and max(counted) >= 1 and counted == sorted(counted), err
    # The line a run ends with names both of its times (issue 26: the running line counted the
    # whole run, the end line gave the code's time alone, unnamed): the code's own (it sleeps 3 s)
    # and the whole run's, which the running line's count never passes.
    code, in_all = map(float, re.search(r"ok sleepy \(its code ran in (\d+\.\d) s; (\d+\.\d) s in all, with "
                                        r"start-up and figures\)", err).groups())
    assert 3.0 <= code <= in_all and max(counted) <= in_all + 0.5
    assert err.index("ok sleepy (its code ran in") < err.index("building the site with MkDocs") < err.index("build ok")
    # Second build: cache hits; the time shown is the original run's, and says so.
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"ok sleepy \(cached; its run took [3-9]\.\d s\)", err), err
    assert re.search(r"sleepy .*cache hit.*[3-9]\.\d s \(original run, \d{4}-\d\d-\d\d\)", err), err
    assert "still running" not in err


def test_serve_on_a_busy_port_fails_in_one_line_before_building(tmp_path, capsys, monkeypatch):
    from site_src import build as build_module

    root = _copy_fixture(tmp_path)
    # What did not happen, not how long it took (issue 47, item 8: no test may time the machine).
    monkeypatch.setattr(build_module, "build", lambda *a, **k: pytest.fail("serve built on a busy port"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert cli.main(["--root", str(root), "serve", "--port", str(port)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"serve failed: port {port} on 127.0.0.1 is already in use; stop what serves there or "
                   "choose another with --port")
    assert not (root / "site").exists() and not (root / ".cache").exists()  # nothing was built


def test_check_through_the_command_line_passes_the_progress_callbacks(tmp_path, capsys):
    """Regression: `fairsite check` raised TypeError (check_options took no progress callbacks)."""
    root = _copy_fixture(tmp_path)
    code = cli.main(["--root", str(root), "check", "--jobs", "1"])
    err = capsys.readouterr().err
    assert "building the site with MkDocs" in err or "check failed" in err, err
    assert code in (0, 1)


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_serve_refuses_a_port_outside_the_tcp_range_naming_the_flag(tmp_path, capsys, port):
    """Regression: --port 99999 built the site, then raised OverflowError; -1 blamed --host."""
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--root", str(tmp_path), "serve", "--port", port])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--port" in err and "from 1 to 65535" in err and "Traceback" not in err


def _how_each_ran(err: str, slugs: list[str]) -> dict[str, str]:
    """The summary table's "run" column for each explainer (``--explain``)."""
    rows = [[cell.strip() for cell in line.split("│")] for line in err.splitlines() if line.count("│") >= 4]
    return {row[1]: row[2] for row in rows if len(row) > 2 and row[1] in slugs}


def test_force_reruns_the_explainers_named_or_all_when_none_are(tmp_path, capsys):
    root = _copy_fixture(tmp_path)
    _add(root, "quick", _SLEEPY.replace("time.sleep(3)", "time.sleep(0)"))
    slugs = ["coin-flips", "quick"]
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 0
    capsys.readouterr()
    assert cli.main(["--root", str(root), "build", "--jobs", "1", "--explain", "--force", "quick"]) == 0
    assert _how_each_ran(capsys.readouterr().err, slugs) == {"coin-flips": "cache hit", "quick": "ran: forced"}
    assert cli.main(["--root", str(root), "build", "--jobs", "1", "--explain", "--force"]) == 0
    assert _how_each_ran(capsys.readouterr().err, slugs) == {"coin-flips": "ran: forced", "quick": "ran: forced"}
    assert cli.main(["--root", str(root), "build", "--jobs", "1", "--explain"]) == 0
    assert _how_each_ran(capsys.readouterr().err, slugs) == {"coin-flips": "cache hit", "quick": "cache hit"}


def test_serve_shows_a_failed_rebuild_in_the_browser_until_a_good_one(tmp_path):
    """Issue 25.15f: the terminal said the rebuild failed; the browser kept showing the old page
    with no sign of it. Now every served page carries a banner naming the explainer and the error,
    and the next good rebuild clears it."""
    from serving import Served

    root = _copy_fixture(tmp_path)
    served = Served(root, "--jobs", "1")
    page, home = "explainers/coin-flips/", ""
    source = root / "explainers" / "coin-flips.md"
    good = source.read_text()
    try:
        body = served.page_when(page, lambda b: "We flipped the coin" in b)
        assert "fc-serve-failed" not in body
        source.write_text(good.replace("share_numpy = float(flips.mean())",
                                       "share_numpy = float(flips.mean())\nraise RuntimeError('<b>broken</b> on purpose')"))
        for url in (page, home):  # every page says so, not only the explainer's
            body = served.page_when(url, lambda b: "fc-serve-failed" in b)
            assert "The last rebuild failed" in body
            assert "<code>explainers/coin-flips.md</code>" in body
            assert "RuntimeError: &lt;b&gt;broken&lt;/b&gt; on purpose" in body  # the error, escaped
        assert "We flipped the coin" in served.page(page)  # still the previous page
        source.write_text(good.replace("We flipped the coin", "We tossed the coin"))
        body = served.page_when(page, lambda b: "We tossed the coin" in b)
        assert "fc-serve-failed" not in body and "fc-serve-failed" not in served.page(home)
    finally:
        served.stop()


@pytest.mark.parametrize(("argv", "said"), [
    (["build", "--forse"], "fairsite build: error: unrecognized arguments: --forse (did you mean '--force'?)"),
    (["build", "-j", "2", "--explian"],
     "fairsite build: error: unrecognized arguments: --explian (did you mean '--explain'?)"),
    (["check", "--force"],
     "fairsite check: error: unrecognized arguments: --force (an option of fairsite build, not of check: check runs "
     "every explainer fresh)"),
    (["build", "--root", "."],
     "fairsite build: error: unrecognized arguments: --root . (an option of fairsite itself: put it before the command, "
     "fairsite --root . build)"),
    (["serve", "--hots", "0.0.0.0"], "fairsite serve: error: unrecognized arguments: --hots 0.0.0.0 (did you mean "
                                     "'--host'?)"),
    (["publish", "--to", "out", "--explain"], "fairsite publish: error: unrecognized arguments: --explain (an option "
                                              "of fairsite build, not of publish)"),
    # Options are compared without their dashes, which every one has: a fresh user's `--bogus`
    # was once "close" to `--jobs`.
    (["build", "--bogus"], "fairsite build: error: unrecognized arguments: --bogus"),
    (["build", "--jbos", "2"], "fairsite build: error: unrecognized arguments: --jbos 2 (did you mean '--jobs'?)"),
])
def test_an_option_the_command_lacks_is_named_with_the_command_s_usage_and_what_was_meant(capsys, argv, said):
    # argparse alone (Python 3.11) shows the top-level usage and no hint: "fairsite: error: unrecognized arguments".
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"usage: fairsite {argv[0]} " in err
    assert err.rstrip().endswith(said), err


@pytest.mark.parametrize("argv", [["bild"], ["--root", ".", "biuld", "--force"]])
def test_a_mistyped_command_is_answered_with_the_one_meant(capsys, argv):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said == (f"fairsite: error: no command {argv[-2] if len(argv) > 1 else argv[0]!r} (did you mean 'build'?); "
                    "the commands: build, check, publish, accept, serve, new, audit")


def test_a_build_that_rerenders_every_page_for_the_footer_says_what_in_it_changed(tmp_path, capsys):
    # A fresh user edited one word and saw every page rendered again: every page's footer shows
    # the commit and whether the tree has uncommitted changes, and the first edit after a commit
    # changes that. The build now says so, with what changed.
    import shutil
    import subprocess

    root = _copy_fixture(tmp_path)
    shutil.copyfile(Path(__file__).resolve().parents[1] / ".gitignore", root / ".gitignore")

    def git(*args):
        return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-q", "-m", "tiny site")
    first = git("rev-parse", "HEAD")
    assert cli.main(["--root", str(root), "build"]) == 0
    assert "which changed" not in capsys.readouterr().err  # no build before it: nothing to compare
    (root / "notes.txt").write_text("an untracked file: the tree has uncommitted changes\n")
    assert cli.main(["--root", str(root), "build"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "pages: 1 rendered" in err
    # git's changes named, the file the user added among them (the first build's outputs, never
    # committed here, are the others).
    changed = re.search(r"every page shows the build's commit and date in its footer, which changed: "
                        r"uncommitted changes \(([^)]*)\)", err)
    named, _, advice = changed[1].partition(": ") if changed else ("", "", "")
    assert "notes.txt untracked" in named.split(", ") and advice == "commit, remove or .gitignore them for a clean footer", err
    git("add", "-A")
    git("-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-q", "-m", "notes")
    assert cli.main(["--root", str(root), "build"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert f"which changed: commit {first[:7]} -> {git('rev-parse', 'HEAD')[:7]}, no uncommitted changes" in err


@pytest.mark.parametrize("command", ["build", "check", "publish", "accept", "serve", "new"])
def test_each_command_s_help_says_what_it_does(capsys, command):
    # A fresh user: `fairsite serve -h` listed its options but not what the command does.
    listed = next(a for a in cli._parser()._subparsers._group_actions[0]._choices_actions if a.dest == command)
    with pytest.raises(SystemExit):
        cli.main([command, "-h"])
    assert listed.help in " ".join(capsys.readouterr().out.split())


def test_a_failed_build_with_explain_says_why_each_explainer_ran(tmp_path, capsys, built_tinysite):
    # A fresh user's build failed after a manifest edit, and `--explain` printed nothing of why
    # each explainer had re-run: the runs table is printed only after a build that succeeds.
    from built_sites import copy_of_built

    root = copy_of_built(built_tinysite, tmp_path)
    source = root / "explainers" / "coin-flips.md"
    # The code changes so that its check fails.
    source.write_text(source.read_text().replace("share_numpy = float(flips.mean())",
                                                 "share_numpy = float(flips.mean()) + 0.25"))
    assert cli.main(["--root", str(root), "build", "--explain"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "build failed:" in err
    table, failure = err.split("build failed:")
    assert "explainer runs (1 ran, 0 from the cache)" in table and "coin-flips" in table
    assert "re-ran: its code changed" in table
    assert "hand-written share agrees with numpy" in failure

    # Without --explain, as before: the failure alone.
    source.write_text(source.read_text().replace("+ 0.25", "+ 0.5"))
    assert cli.main(["--root", str(root), "build"]) == 1
    assert "explainer runs" not in capsys.readouterr().err


def test_publish_takes_the_budget_check_takes(capsys):
    # A fresh user: `check -h` listed --budget, `publish -h` (which runs the same check) did not.
    with pytest.raises(SystemExit):
        cli.main(["publish", "-h"])
    assert "--budget SECONDS" in capsys.readouterr().out


def test_an_edit_to_docs_is_named_when_the_build_replaces_it(tmp_path, capsys, built_tinysite):
    # A fresh user appended a line to a page under docs/ and built: "build ok", the line gone,
    # nothing said. docs/ is the build's output; the build now names the file it replaced.
    from built_sites import copy_of_built

    root = copy_of_built(built_tinysite, tmp_path)
    page = root / "docs" / "explainers" / "coin-flips" / "index.md"
    before = page.read_text()
    page.write_text(before + "\nA line added by hand.\n")
    assert cli.main(["--root", str(root), "build"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert ("replaced: docs/explainers/coin-flips/index.md was edited by hand since the last build, and this build wrote "
            "it again: the edit is gone (docs/ is made by the build; edit explainers/coin-flips.md)") in err, err
    assert "A line added by hand." not in page.read_text()
    # The next build, nothing edited: nothing to say.
    source = root / "explainers" / "coin-flips.md"
    source.write_text(source.read_text().replace("None worth a number.", "None worth a number here."))
    assert cli.main(["--root", str(root), "build"]) == 0
    assert "replaced:" not in capsys.readouterr().err


# --- The command's end (issue 26): `entry`, the console script, skips the interpreter's teardown ----

def _end_of(code: str, *argv: str, tmp_path: Path):
    """Run ``code`` then ``site_src.cli.entry()`` with ``argv`` in a fresh interpreter, as the
    ``fairsite`` script does; its exit status and what it printed (stdout and stderr, through pipes)."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(code) + f"\nimport sys\nsys.argv = ['fairsite', *{list(argv)!r}]\nfrom site_src.cli import entry\nentry()\n"
    return subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=600)


def test_the_command_ends_without_the_teardown_but_after_the_atexit_handlers_and_flushed(tmp_path):
    # An object alive at the end has its __del__ run by the teardown only; an atexit handler runs
    # either way; the last line printed reaches the pipe.
    done = _end_of("""
        import atexit, sys
        class Kept:
            def __del__(self):
                sys.stdout.write("torn down\\n")
        kept = Kept()
        atexit.register(lambda: sys.stdout.write("atexit ran\\n"))
        """, "--root", str(tmp_path / "nowhere"), "build", tmp_path=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "no repository at" in done.stderr and "--root must be a folder" in done.stderr
    assert done.stdout == "atexit ran\n"  # no "torn down": the interpreter was not torn down


def test_the_command_waits_for_a_thread_still_running_and_for_systemexit(tmp_path):
    # A non-daemon thread alive at the end (a thread pool not shut down) is joined by the normal exit.
    done = _end_of("""
        import sys, threading, time
        def late():
            time.sleep(0.5)
            sys.stdout.write("the thread finished\\n")
        threading.Thread(target=late).start()
        """, "--root", str(tmp_path / "nowhere"), "build", tmp_path=tmp_path)
    assert (done.returncode, done.stdout) == (2, "the thread finished\n"), done.stderr
    # argparse's exits (a mistyped command, --help) keep their status and output.
    mistyped = _end_of("", "bild", tmp_path=tmp_path)
    assert mistyped.returncode == 2 and "did you mean 'build'" in mistyped.stderr
    helped = _end_of("", "--help", tmp_path=tmp_path)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: fairsite")


def test_the_installed_fairsite_script_is_entry():
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "fairsite"]
    assert script.value == "site_src.cli:entry"


def test_the_script_writes_what_a_build_in_this_process_writes(tmp_path):
    # Nothing a build writes is left to the interpreter's teardown: the same site, pages and records,
    # file for file, from the `fairsite` script as from `main` in this process (which tears nothing down).
    import json
    import os
    import subprocess
    import sys

    from site_src.filestate import DIGESTS
    from test_site_build import _tree_digest

    by_script, here = _copy_fixture(tmp_path / "script"), _copy_fixture(tmp_path / "here")
    # Sources saved a minute ago in both: a file saved within the last moments is not trusted by its
    # time (filestate), and the second build would otherwise record what the first could not.
    for path in [*by_script.rglob("*"), *here.rglob("*")]:
        os.utime(path, (time.time() - 60, time.time() - 60))
    script = Path(sys.executable).parent / "fairsite"
    done = subprocess.run([str(script), "--root", str(by_script), "build", "--jobs", "1"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "build ok" in done.stderr, done.stderr
    assert cli.main(["--root", str(here), "build", "--jobs", "1"]) == 0
    for folder in ("site", "docs", ".cache"):
        ours, theirs = _tree_digest(by_script / folder), _tree_digest(here / folder)
        assert sorted(ours) == sorted(theirs), folder
        for name in (n for n in ours if ours[n] != theirs[n]):
            # Records of when, where and how long (the run's seconds and memory on its page, the
            # build's folder and time in the records) differ; a file cut short would not.
            a, b = ((root / folder / name).read_bytes().replace(str(root).encode(), b"<root>") for root in (by_script, here))
            if name.endswith(DIGESTS):
                # The digests remembered by the process: this one's include other tests' files, and a
                # file saved moments before is not remembered by its time. Whole, and agreeing.
                a, b = json.loads(a), json.loads(b)
                assert all(a[k][-1] == b[k][-1] for k in a.keys() & b.keys() if k.startswith("<root>")), name
                continue
            assert re.sub(rb"\d+", b"0", a) == re.sub(rb"\d+", b"0", b) or (
                name.endswith(".json") and json.loads(a).keys() == json.loads(b).keys()), f"{folder}/{name} differs"
