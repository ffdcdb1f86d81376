"""Sources as a person edits them: saved again while a build runs, in another encoding, with a
key twice, with other limits; and the advice the build gives about them (a fresh user's
findings, issue 26). Each test fails on the code before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_src import cli
from site_src.build import BuildOptions, build
from site_src.errors import ConfigError
from site_src.sources.collect import parse_explainer

SLUG = "coin-flips"


def _said(capsys) -> str:
    """What the command line printed (its report goes to stderr), lines joined, spaces collapsed."""
    captured = capsys.readouterr()
    return " ".join((captured.out + captured.err).split())


def _page(root: Path) -> str:
    return (root / "site" / "explainers" / SLUG / "index.html").read_text(encoding="utf-8")


def test_an_edit_saved_while_the_build_runs_is_built_by_the_next_build(built_copy, capsys):
    root = built_copy
    source = root / "explainers" / f"{SLUG}.md"
    marker = "A sentence saved while the build ran."
    assert marker not in source.read_text(encoding="utf-8")

    def save_an_edit(slug: str) -> None:  # the build has read the sources; its run starts now
        text = source.read_text(encoding="utf-8")
        source.write_text(text.rstrip("\n") + f"\n\n{marker}\n", encoding="utf-8")

    report = build(BuildOptions(root=root, force=frozenset({SLUG}), on_run_start=save_an_edit))
    assert report.edited == [f"explainers/{SLUG}.md"]
    capsys.readouterr()
    assert marker not in _page(root)  # the build shows what it read
    # The next plain build sees the edit: not "nothing changed", and the page is not the one the
    # page cache kept for the bytes read before the edit.
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 0
    assert "nothing changed" not in _said(capsys)
    assert marker in _page(root)
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 0
    assert "nothing changed" in _said(capsys)  # and then it is built


def test_the_cli_says_which_source_was_edited_during_the_build(built_copy, capsys, monkeypatch):
    root = built_copy
    source = root / "explainers" / f"{SLUG}.md"
    import site_src.execution.execute as execute

    real = execute.execute

    def execute_then_edit(*args, **kwargs):
        result = real(*args, **kwargs)
        source.write_text(source.read_text(encoding="utf-8") + "\nMore prose.\n", encoding="utf-8")
        return result

    monkeypatch.setattr("site_src.build.execute", execute_then_edit)
    assert cli.main(["--root", str(root), "build", "--jobs", "1", "--force", SLUG]) == 0
    out = _said(capsys)
    assert f"explainers/{SLUG}.md: the site shows the version the build read; build again" in out


def _with_front_matter_line(source: Path, line: str) -> None:
    lines = source.read_text(encoding="utf-8").split("\n")
    assert lines[0] == "---"
    source.write_text("\n".join([lines[0], line, *lines[1:]]), encoding="utf-8")


def test_a_front_matter_key_given_twice_is_refused_with_both_lines(tmp_path):
    source = tmp_path / "explainers" / f"{SLUG}.md"
    source.parent.mkdir()
    source.write_bytes((Path(__file__).parent / "fixtures" / "tinysite" / "explainers" / f"{SLUG}.md").read_bytes())
    title_line = next(i for i, text in enumerate(source.read_text(encoding="utf-8").split("\n"), 1)
                      if text.startswith("title:"))
    _with_front_matter_line(source, "title: Another title")  # line 2; the first title moves down one
    with pytest.raises(ConfigError) as err:
        parse_explainer(source)
    message = str(err.value)
    assert f"explainers/{SLUG}.md:{title_line + 1}:" in message
    assert "'title' appears twice" in message and "first on line 2" in message
    assert "<unicode string>" not in message  # the parser's own location is not repeated


def test_a_source_that_is_not_utf8_is_named_with_its_line(tmp_path):
    source = tmp_path / "explainers" / f"{SLUG}.md"
    source.parent.mkdir()
    data = (Path(__file__).parent / "fixtures" / "tinysite" / "explainers" / f"{SLUG}.md").read_bytes()
    source.write_bytes(data.rstrip(b"\n") + b"\n\nCaf\xe9 prose.\n")
    bad_line = data.rstrip(b"\n").count(b"\n") + 3
    with pytest.raises(ConfigError) as err:
        parse_explainer(source)
    assert str(err.value) == (f"explainers/{SLUG}.md:{bad_line}:4: not UTF-8 text (byte 0xe9); "
                              "save the file as UTF-8")


def test_a_byte_order_mark_before_the_front_matter_is_read_as_the_file_starting_with_dashes(tmp_path):
    source = tmp_path / "explainers" / f"{SLUG}.md"
    source.parent.mkdir()
    data = (Path(__file__).parent / "fixtures" / "tinysite" / "explainers" / f"{SLUG}.md").read_bytes()
    source.write_bytes(b"\xef\xbb\xbf" + data)
    with_mark, without = parse_explainer(source), None
    source.write_bytes(data)
    without = parse_explainer(source)
    assert (with_mark.meta, with_mark.prose, with_mark.code) == (without.meta, without.prose, without.code)


def test_a_manifest_that_is_not_utf8_is_named_with_its_line(tmp_path):
    from faircode.manifest import ManifestError, read_manifest_yaml

    path = tmp_path / "audit.yaml"
    path.write_bytes(b"slug: x\nname: Caf\xe9 audit\n")
    with pytest.raises(ManifestError) as err:
        read_manifest_yaml(path, label="audits/x/audit.yaml")
    assert "audits/x/audit.yaml:2:10: not UTF-8 text (byte 0xe9)" in str(err.value)


def _runs(root: Path, **options) -> dict:
    return {r.slug: r for r in build(BuildOptions(root=root, **options)).runs}


def test_a_run_cached_under_other_limits_runs_again(built_copy):
    root = built_copy
    source = root / "explainers" / f"{SLUG}.md"
    assert _runs(root)[SLUG].cached
    _with_front_matter_line(source, "timeout: 1")  # lowered: the cached run proves nothing about it
    again = _runs(root)[SLUG]
    assert not again.cached
    assert again.reason.startswith("its limits changed (timeout 600 s, memory "), again.reason  # the part that changed
    from site_src.sources.collect import DEFAULT_MEMORY

    assert again.reason.endswith(f"-> timeout 1 s, memory {DEFAULT_MEMORY // 2**20} MiB)"), again.reason
    assert _runs(root)[SLUG].cached  # then cached under the new limits
    text = source.read_text(encoding="utf-8").replace("timeout: 1\n", "timeout: 1\nmemory: 2GiB\n")
    source.write_text(text, encoding="utf-8")
    again = _runs(root)[SLUG]
    assert not again.cached and again.reason.endswith("-> timeout 1 s, memory 2048 MiB)"), again.reason


def test_a_file_read_outside_the_repository_is_advised_into_it(built_copy, tmp_path):
    root = built_copy
    outside = tmp_path / "outside.txt"
    outside.write_text("x", encoding="utf-8")
    source = root / "explainers" / f"{SLUG}.md"
    text = source.read_text(encoding="utf-8")
    source.write_text(text.replace("```python explainer\n", f"```python explainer\nopen({str(outside)!r}).read()\n"),
                      encoding="utf-8")
    _runs(root)
    again = _runs(root)[SLUG]
    assert not again.cached
    assert again.reason.endswith("which the cache cannot track; copy it into the repository and declare it "
                                 "under `inputs:` to cache it"), again.reason


def test_ctrl_c_lists_only_the_runs_it_stopped(capsys):
    from site_src.cli import _Progress
    from site_src.errors import ExecutionError

    progress = _Progress()
    progress._interrupted.set()  # what Ctrl-C's handler sets before the runs end as errors
    progress.done(ExecutionError("interrupted", explainer="explainers/a.md"))
    progress.done(ExecutionError("interrupted"))  # a run that had not started names no explainer
    said = _said(capsys)
    assert "stopped explainers/a.md" in said and "None" not in said


@pytest.mark.parametrize("stderr", [
    # What runs under a `memory:` limit a little too low printed for a fresh user (300 and 400 MiB):
    # faulthandler's timer thread could not get its stack; OpenBLAS could not get its buffers.
    "Traceback (most recent call last):\n  ...\nRuntimeError: unable to start watchdog thread\n",
    "OpenBLAS error: Memory allocation still failed after 10 retries, giving up.\n",
    "RuntimeError: can't start new thread\n",
])
def test_a_run_out_of_memory_without_a_memory_error_is_named_as_the_memory_limit(tmp_path, stderr):
    from types import SimpleNamespace

    from site_src.execution._process import _died

    code = SimpleNamespace(path=tmp_path / "x.py", source_line=lambda n: n)
    err = _died(code, "explainers/x.md", 1, tmp_path, "", stderr, 300 * 1024**2)
    assert str(err).startswith("explainers/x.md: exceeded its memory limit of 300 MiB (exit code 1); raise `memory:`")


def test_run_from_inside_the_repository_says_where_to_run_and_leaves_nothing_there(built_copy, capsys, monkeypatch):
    inside = built_copy / "explainers"
    before = sorted(p.name for p in inside.iterdir())
    monkeypatch.chdir(inside)
    assert cli.main(["build"]) == 2
    said = _said(capsys)
    assert f"{inside} is not a site's repository" in said and f"did you mean --root {built_copy}?" in said
    assert sorted(p.name for p in inside.iterdir()) == before  # no lock file left there


def test_serve_says_when_a_rebuild_mends_the_failure_it_showed(built_copy, capsys, monkeypatch):
    root = built_copy
    source = root / "explainers" / f"{SLUG}.md"
    good = source.read_text(encoding="utf-8")

    class _Server:  # the live server, driven by hand: the file breaks, then is mended
        url = "http://127.0.0.1:0/"

        def __init__(self, builder, **_):
            self.builder = builder

        def watch(self, path):
            pass

        def serve(self, **_):
            source.write_text(good.replace("{{ n_flips | number }}", "{{ n_flipz | number }}"), encoding="utf-8")
            self.builder()
            source.write_text(good, encoding="utf-8")
            self.builder()
            raise KeyboardInterrupt

        def shutdown(self):
            pass

    monkeypatch.setattr("site_src.publishing.serve.live_server", _Server)
    import socket

    with socket.socket() as probe:  # a free port: serve checks it before building
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert cli.main(["--root", str(root), "serve", "--port", str(port)]) == 0
    said = _said(capsys)
    failed, mended = said.index("build failed; still serving"), said.index("the failure is mended")
    assert failed < mended and said.count("rebuilt ok") == 2  # the first build, then the mending one


def test_check_refuses_what_fairsite_new_wrote_as_stand_ins_until_it_is_written(tmp_path):
    from site_src.checking.lint import scaffold_text
    from site_src.sources.scaffold import new_explainer

    path = new_explainer(tmp_path, "Equalized odds: a first look")
    lines = path.read_text(encoding="utf-8").split("\n")
    found = [(e.line, e.message) for e in scaffold_text(parse_explainer(path))]
    # The takeaway box's points, the decision guide, the sections, the figure's caption (inside
    # its call): each found where it stands in a line, not only as a whole line.
    stand_ins = ["Say the first thing an auditor should do, as an order.", "Say the second thing, as an order.",
                 "Then say why, in one sentence.",
                 "Say when to use this method, and what to use instead when it does not fit.",
                 "Define the method in one sentence a curious reader can follow.",
                 "Say what goes wrong in an audit without it.", "1. First step.", "2. Second step.",
                 "Say what the reader should notice in this figure.",
                 "- What this method cannot tell you.", "- Author, *Title*, Venue (year)."]
    at = {s: [i for i, text in enumerate(lines, 1) if s in text] for s in stand_ins}
    assert all(at.values()) and len(at["Then say why, in one sentence."]) == 2  # after each point
    in_prose = [(line, m) for line, m in found if "front matter" not in m]
    assert [line for line, _ in in_prose] == sorted({i for lines_of in at.values() for i in lines_of})
    said = {line: message for line, message in in_prose}
    assert all(repr(s) in said[i] for s, lines_of in at.items() for i in lines_of)  # each named on its line
    # The subtitle, the summary and the draft tag, each on its own line too (a fresh user, stop 38).
    front = {m.split(":")[1].strip(): line for line, m in found if "front matter" in m}
    assert front == {key: next(i for i, text in enumerate(lines, 1) if text.startswith(start))
                     for key, start in (("subtitle", "subtitle:"), ("summary", "summary:"), ("tags", "- draft"))}
    # Written: nothing left to refuse.
    text = path.read_text(encoding="utf-8")
    for i, s in enumerate(stand_ins):
        text = text.replace(s, f"{s[:2] if s[0] in '-12' else ''}Own sentence number {'abcdefghijk'[i]}.")
    text = (text.replace("What question does this method answer?", "Are error rates equal?")
            .replace("One line that tells a reader what they will learn.", "Equal error rates, tested.")
            .replace("- draft", "- equalized odds"))
    path.write_text(text, encoding="utf-8")
    assert scaffold_text(parse_explainer(path)) == []


def test_fairsite_check_lists_a_stand_in_left_in_a_page_and_build_does_not(built_copy):
    from site_src.build import check_options
    from site_src.errors import BuildFailed

    root = built_copy
    source = root / "explainers" / f"{SLUG}.md"
    source.write_text(source.read_text(encoding="utf-8").replace(
        "## Limitations\n", "## Limitations\n\n- What this method cannot tell you.\n"), encoding="utf-8")
    build(BuildOptions(root=root))  # a draft builds
    with pytest.raises(BuildFailed) as err:
        build(check_options(root))
    assert "still has the text `fairsite new` put there as a stand-in: '- What this method cannot tell you.'" \
        in str(err.value)
