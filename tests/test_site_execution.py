"""Whatever an explainer's code does, the build stays in charge (issue 11): any bytes or control
sequences it prints, any way it shows or closes a figure, any process it leaves behind, its memory,
a hard exit, the build being killed, and any text in its front matter. Each case is a tiny
explainer in a copy of the fixture site; a failure names the explainer and line and leaves the
previous site whole."""

from __future__ import annotations

import functools
import html
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import markdown
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from site_src.build import BuildOptions, build
from site_src.sources.collect import parse_explainer
from site_src.errors import BuildFailed, ConfigError
from site_src.execution._process import _read_output
from site_src.rendering.environment import markdown_text
from site_src.terminal import terminal_html
from test_site_build import _add, _assert_fails_and_keeps_previous_site, _copy_fixture


def _explainer(code: str, *, prose: str = "Prose.", front: str = "", check: str = "True") -> str:
    """A tiny explainer source around ``code`` (dedented)."""
    return (f"---\ntitle: Case\nsubtitle: What happens?\nsummary: A case of issue eleven.\n{front}"
            f"checks:\n  - name: ran\n    assert: '{check}'\n---\n{prose}\n\n```python explainer\n"
            f"{textwrap.dedent(code).strip()}\n```\n")


def _write(root: Path, slug: str, source: str) -> None:
    # Each its own title: two explainers with one title are refused (issue 25.15b).
    (root / "explainers" / f"{slug}.md").write_text(source.replace("title: Case\n", f"title: Case {slug}\n", 1))


def _line_of(source: str, needle: str) -> int:
    return next(i for i, line in enumerate(source.split("\n"), start=1) if needle in line)


def _gone(pid: int) -> bool:
    """The process ended (or is a zombie waiting for a parent that is not ours to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def _wait_gone(pids, seconds=10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if all(_gone(p) for p in pids):
            return True
        time.sleep(0.1)
    return False


# --- one build for the cases that succeed -------------------------------------------------------

_BYTES = """
    import sys
    sys.stdout.write("before ")
    sys.stdout.flush()
    sys.stdout.buffer.write(b"\\xff\\xfe after\\n")
    sys.stdout.buffer.flush()
    sys.stderr.buffer.write("caf\\xe9 in Latin-1\\n".encode("latin-1"))
    """

_CONTROLS = """
    print("\\x1b[31mred\\x1b[0m and \\x1b[1;32mbold green\\x1b[0m")
    print("progress 10%\\rprogress 100%")
    print("typo\\b\\b\\bfixed, a bell\\x07, a title\\x1b]0;window title\\x07, a cursor move\\x1b[2J.")
    print("<b>tags stay text</b> & so do ampersands")
    """

# Every way of showing or closing a figure, each figure titled with the way it left.
_FIGURES = """
    import matplotlib.pyplot as plt

    def draw(name):
        fig, ax = plt.subplots(num=name)
        ax.set_title(name)
        ax.plot([0, 1])
        return fig

    shown = draw("shown")
    plt.show()
    plt.close(shown)
    plt.show()
    closed = draw("closed-by-figure")
    plt.close(closed)
    numbered = draw("closed-by-number")
    plt.close(numbered.number)
    draw("closed-by-label")
    plt.close("closed-by-label")
    draw("closed-current")
    plt.close()
    draw("closed-all")
    plt.close("all")
    changed = draw("shown-then-changed")
    plt.show()
    changed.axes[0].set_title("changed-after-show")
    draw("open-at-end")
    """
_FIGURE_ORDER = ["shown", "closed-by-figure", "closed-by-number", "closed-by-label", "closed-current",
                 "closed-all", "shown-then-changed", "changed-after-show", "open-at-end"]

# Every kind of process left behind: a plain child (holding the output file), one writing to
# /dev/null, one in a session of its own, one orphaned by a shell, one detached with an empty
# environment.
_LEFTOVERS = """
    import subprocess, time
    kids = [
        subprocess.Popen(["sleep", "600"]),
        subprocess.Popen(["sleep", "601"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen(["sleep", "602"], start_new_session=True),
        subprocess.Popen(["setsid", "sleep", "603"], env={}, stdout=subprocess.DEVNULL),
    ]
    shell = subprocess.Popen(["sh", "-c", "sleep 604 & echo $!"], stdout=subprocess.PIPE, text=True)
    pids = [k.pid for k in kids] + [int(shell.stdout.readline())]
    shell.wait()
    for pid in pids:  # until setsid and the shell's child have each become `sleep` (not timed: it happens)
        while not open(f"/proc/{pid}/cmdline", "rb").read().startswith(b"sleep\\0"):
            time.sleep(0.01)

    import multiprocessing
    with multiprocessing.get_context("fork").Pool(2) as pool:  # leaving stops its workers with SIGTERM
        absolute = pool.map(abs, [-1, -2])
    """


# A process the code forks: SIGTERM must stop it at once, as outside the build (multiprocessing's
# Pool.terminate() relies on it). A Python-level handler inherited from the runner ran only when
# the interpreter did, and a worker blocked on a semaphore never did: a CI run hung on _LEFTOVERS.
_FORKED = """
    import os, signal
    pid = os.fork()
    if pid == 0:
        os._exit(0 if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL else 3)
    _, status = os.waitpid(pid, 0)
    child_exit = os.waitstatus_to_exitcode(status)
    """


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    root = _copy_fixture(tmp_path_factory.mktemp("cases"))
    _write(root, "prints-bytes", _explainer(_BYTES))
    _write(root, "prints-controls", _explainer(_CONTROLS))
    places = '{% for i in range(1, 10) %}{{ figure(i, alt="Figure " ~ i ~ " of the run") }}\n{% endfor %}'
    _write(root, "figures", _explainer(_FIGURES, prose=places))
    _write(root, "leftovers", _explainer(_LEFTOVERS))
    _write(root, "forks", _explainer(_FORKED))
    return root, build(BuildOptions(root=root, jobs=2))


def _run(report, slug):
    return next(r for r in report.runs if r.slug == slug)


def test_bytes_that_are_not_utf8_are_replaced_and_named(cases):
    root, report = cases
    run = _run(report, "prints-bytes")
    assert run.stdout == "before \ufffd\ufffd after\n"
    assert run.stderr == "caf\ufffd in Latin-1\n"
    assert any(w.startswith("explainers/prints-bytes.md: printed bytes that are not UTF-8 on stdout")
               for w in run.warnings)
    assert any("on stderr" in w for w in run.warnings)
    assert "before \ufffd\ufffd after" in (root / "site" / "explainers" / "prints-bytes" / "index.html").read_text()


def test_terminal_colours_are_spans_and_no_control_byte_reaches_the_page(cases):
    root, _ = cases
    page = (root / "site" / "explainers" / "prints-controls" / "index.html").read_text()
    output = page[page.index('<pre class="fc-output">'):]
    output = output[:output.index("</pre>")]
    assert re.search(r'<span style="color: #800000[^"]*">red</span>', output)
    assert re.search(r'<span style="[^"]*color: #008000[^"]*font-weight: bold[^"]*">bold green</span>', output)
    text = html.unescape(re.sub(r"<[^>]+>", "", output))
    assert "progress 100%" in text and "progress 10%" not in text  # the carriage return overwrote it
    assert "tfixed," in text and "typo" not in text  # three backspaces erased "ypo"
    assert "window title" not in text  # an OSC sequence sets the title; it is not text
    assert "&lt;b&gt;tags stay text&lt;/b&gt; &amp; so do ampersands" in output
    for name in ("prints-controls", "prints-bytes"):
        data = (root / "site" / "explainers" / name / "index.html").read_bytes()
        assert not re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", data), name


def test_figures_are_captured_when_shown_or_closed_in_drawing_order(cases):
    root, report = cases
    run = _run(report, "figures")
    titles = []
    for svg in run.figures:
        # Matplotlib writes text as glyph paths; the title's text is kept in an SVG comment.
        found = re.findall(r"<!-- ([a-z-]+) -->", svg.read_text())
        titles.append(next(t for t in found if t in _FIGURE_ORDER))
    assert titles == _FIGURE_ORDER
    assert (root / "site" / "explainers" / "figures" / "figure-9.svg").exists()


def test_a_process_the_code_forks_stops_at_once_on_sigterm(cases):
    _, report = cases
    assert _run(report, "forks").values["child_exit"] == 0  # 3: it inherited the runner's handler


def test_leftover_processes_are_killed_and_named_and_the_build_does_not_wait(cases):
    # The build did not wait for them: the run ended and succeeded (with pipes, it waited for the
    # leftovers to end, until its ten-minute timeout failed it). Not timed (issue 47, item 8).
    _, report = cases
    run = _run(report, "leftovers")
    pids = run.values["pids"]
    assert len(pids) == 5
    assert run.values["absolute"] == [1, 2]  # a pool's workers stopped with SIGTERM did not stop the run
    assert _wait_gone(pids, 5), [p for p in pids if not _gone(p)]
    warning = next(w for w in run.warnings if "process(es) running" in w)
    assert warning.startswith("explainers/leftovers.md: the code left 5 process(es) running after it ended")
    for n in range(600, 605):
        assert f"sleep {n}" in warning


# --- failures: named, with the line, and the previous site whole --------------------------------

def test_os_exit_reports_what_it_printed_and_the_line(built_copy):
    root = built_copy
    source = _explainer("""
        import os, subprocess
        child = subprocess.Popen(["sleep", "605"], start_new_session=True)
        print("got this far", child.pid)
        os._exit(3)
        """)
    err = _assert_fails_and_keeps_previous_site(root, r"os\._exit\(3\) on this line", "exits", source)
    text = str(err)
    assert f"explainers/exits.md:{_line_of(source, 'os._exit(3)')}: the run ended (os._exit(3) on this line)" in text
    assert "got this far" in text
    pid = int(re.search(r"got this far (\d+)", text).group(1))
    assert _wait_gone([pid], 5)  # its detached child did not outlive it


def test_a_run_past_its_memory_limit_is_a_named_error(built_copy):
    root = built_copy
    source = _explainer("""
        x = 1
        big = bytearray(20 * 1024**3)
        """)
    err = _assert_fails_and_keeps_previous_site(root, "exceeded its memory limit of 4 GiB", "greedy", source)
    assert f"explainers/greedy.md:{_line_of(source, 'bytearray')}: exceeded its memory limit of 4 GiB" in str(err)
    assert "raise `memory:`" in str(err)


def test_memory_in_the_front_matter_sets_the_limit(copied_tinysite):
    root = copied_tinysite
    source = _explainer("""
        import numpy as np
        small = np.ones(50 * 1024**2 // 8)  # 50 MiB
        big = np.ones(1024**3 // 8)  # 1 GiB
        """, front="memory: 768MiB\n")
    with pytest.raises(BuildFailed, match="exceeded its memory limit of 768 MiB") as info:
        _write(root, "limited", source)
        build(BuildOptions(root=root))
    assert f"limited.md:{_line_of(source, 'big = ')}:" in str(info.value)


def test_pandas_out_of_memory_reading_an_audit_is_the_memory_limit_not_the_manifest(copied_tinysite):
    """A fresh user's explainer with `memory: 512MiB` ran out while pandas read an audit's data:
    the build said `raised ManifestError: ... dataset.parse: cannot read data/german.data with these
    options: Error tokenizing data. C error: out of memory` (issue 47). pandas' reader is made to
    fail as it does when an allocation fails (a real one depends on what else the process holds)."""
    root = copied_tinysite
    source = _explainer("""
        import pandas as pd
        from pandas.errors import ParserError
        def read_csv(*args, **kwargs):
            raise ParserError("Error tokenizing data. C error: out of memory")
        pd.read_csv = read_csv
        from faircode import load_audit
        audit = load_audit("german-credit")
        """, front="memory: 512MiB\n")
    _write(root, "oom", source)
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root))
    text = str(info.value)
    assert (f"explainers/oom.md:{_line_of(source, 'load_audit(')}: exceeded its memory limit of 512 MiB "
            "(MemoryError); raise `memory:`") in text
    assert "ManifestError" not in text and "cannot read" not in text


@pytest.mark.parametrize("value, ok", [("6GiB", 6 * 2**30), ("512 MiB", 512 * 2**20), ("8GB", 8 * 10**9),
                                       (2048, 2048 * 2**20), ("lots", None), ("12", None), ("1MiB", None),
                                       (True, None), ("-4GiB", None)])
def test_memory_field_is_validated(tmp_path, value, ok):
    path = tmp_path / "explainers" / "m.md"
    path.parent.mkdir()
    shown = value if isinstance(value, (int, bool)) else f'"{value}"'
    path.write_text(_explainer("x = 1", front=f"memory: {str(shown).lower() if isinstance(value, bool) else shown}\n"))
    if ok is None:
        with pytest.raises(ConfigError, match=r"explainers/m.md:\d+: front matter: memory: .*(6GiB or 512MiB|at least 256MiB)") as info:
            parse_explainer(path)
        if value == "lots":  # the decimal units it takes are said too (a fresh user, stop 38: `4GB` was a surprise)
            assert "kB, MB, GB and TB are decimal: 8GB is 7629.4MiB" in str(info.value)
    else:
        assert parse_explainer(path).meta.memory == ok


def _commit_all(root: Path) -> None:
    """Make ``root`` a git repository with every file of it committed (the files a run may not change)."""
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "all"]):
        subprocess.run(["git", *cmd], cwd=root, check=True, stdout=subprocess.DEVNULL)


_CLOBBERS = {  # each way a run may try to destroy a file of the repository, and the file it names
    "writes": ('Path("results/results_fairness.csv").write_text("oops\\n")', "results/results_fairness.csv"),
    "swallows": ('try:\n    open("mkdocs.yml", "w").close()\nexcept OSError:\n    pass', "mkdocs.yml"),
    "removes": ('os.remove("mkdocs.yml")', "mkdocs.yml"),
    "replaces": ('Path("made.txt").write_text("x")\nos.replace("made.txt", "results/results_fairness.csv")',
                 "results/results_fairness.csv"),
    "pandas": ('import pandas as pd\npd.DataFrame({"a": [1]}).to_csv("results/results_fairness.csv")',
               "results/results_fairness.csv"),
}


def test_a_run_cannot_change_a_tracked_file_and_is_named_with_it_beside_every_other_failure(copied_tinysite):
    """A fresh user's explainer overwrote results/results_fairness.csv: the build then blamed the file
    ("fix the file or re-run faircode benchmark"), and another explainer's memory failure was dropped
    from the summary (issue 47, item 1). The file is never written; the explainer, its line and the
    file are named; every failure is listed."""
    root = copied_tinysite
    _commit_all(root)
    tracked = {p: (root / p).read_bytes() for p in ("results/results_fairness.csv", "mkdocs.yml")}
    sources = {}
    for slug, (code, _) in _CLOBBERS.items():
        sources[slug] = _explainer(f"import os\nfrom pathlib import Path\n{code}\nx = 1\n")
        _write(root, slug, sources[slug])
    _write(root, "greedy", _explainer("big = bytearray(2 * 1024**3)", front="memory: 512MiB\n"))
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root, jobs=2))
    text = str(info.value)
    assert {p: (root / p).read_bytes() for p in tracked} == tracked
    for slug, (code, path) in _CLOBBERS.items():
        line = _line_of(sources[slug], code.split("\n")[-1] if slug != "swallows" else "open(")
        assert f"explainers/{slug}.md:{line}" in text, slug  # several that fail the same way are one entry
        assert f"its code tried to change {path}, a file of the repository; refused: the file was left as it was" in text
    assert "explainers/greedy.md" in text and "exceeded its memory limit of 512 MiB" in text
    assert "fix the file" not in text


def test_a_file_of_the_repository_a_child_process_changed_is_named(copied_tinysite):
    """A child process is not watched by the audit hook: what it changed is named after the run."""
    root = copied_tinysite
    _commit_all(root)
    _write(root, "shell", _explainer('import subprocess\nsubprocess.run("echo > mkdocs.yml", shell=True)\nx = 1'))
    with pytest.raises(BuildFailed, match=r"explainers/shell\.md: mkdocs\.yml changed while its code ran a child "
                                          r"process, which the build cannot watch"):
        build(BuildOptions(root=root))


def test_a_results_file_broken_by_hand_is_listed_with_the_failed_runs(copied_tinysite):
    """Reading a broken results file at the render stage raised past the failures gathered before
    it: the summary named the file alone (issue 47, item 1)."""
    root = copied_tinysite
    (root / "results" / "results_fairness.csv").write_text("oops\n")
    _write(root, "greedy", _explainer("big = bytearray(2 * 1024**3)", front="memory: 512MiB\n"))
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root))
    text = str(info.value)
    assert "explainers/greedy.md" in text and "exceeded its memory limit of 512 MiB" in text
    assert "results/results_fairness.csv:1: the header lacks the key column(s)" in text


def test_a_build_killed_with_sigkill_takes_its_runs_with_it(copied_tinysite):
    root = copied_tinysite
    _write(root, "sleeps", _explainer("""
        import os, subprocess, time
        from pathlib import Path
        child = subprocess.Popen(["sleep", "606"])
        Path("pids.txt").write_text(f"{os.getpid()} {child.pid}")
        time.sleep(600)
        """))
    build_proc = subprocess.Popen([sys.executable, "-m", "site_src.cli", "--root", str(root), "build", "--jobs", "1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pids_file = root / "pids.txt"
    while not pids_file.exists() or len(pids_file.read_text().split()) < 2:  # however long the build takes to get there
        assert build_proc.poll() is None
        time.sleep(0.2)
    pids = [int(p) for p in pids_file.read_text().split()]
    os.kill(build_proc.pid, signal.SIGKILL)
    build_proc.wait()
    assert _wait_gone(pids, 10), [p for p in pids if not _gone(p)]


# --- front matter: any text, shown as itself everywhere ------------------------------------------

_EVIL = "X <img src=x onerror=alert(1)>"


def test_html_in_the_title_is_escaped_everywhere(copied_tinysite):
    root = copied_tinysite
    page = (root / "explainers" / "coin-flips.md").read_text()
    page = page.replace("title: Coin Flips", f'title: "{_EVIL}"')
    page = page.replace("subtitle: Is this coin fair?", 'subtitle: "*Not* [a link](x) :smile: </p><script>1</script>"')
    page = page.replace("tags: [fixture]", 'tags: ["<b>tag</b>", "a | b"]')
    (root / "explainers" / "coin-flips.md").write_text(page)
    _add(root, "other", """
        ---
        title: Other
        subtitle: Which page links to the evil one?
        summary: Links to it.
        related: [coin-flips]
        checks:
          - name: ran
            assert: x == 1
        ---
        Prose.

        ```python explainer
        x = 1
        ```
        """)
    build(BuildOptions(root=root))
    escaped = html.escape(_EVIL, quote=False)
    for path in (root / "site").rglob("*.html"):
        text = path.read_text()
        assert "<img src=x" not in text and "<script>1" not in text and "<b>tag" not in text, path
    pages = {name: (root / "site" / name).read_text()
             for name in ("index.html", "explainers/coin-flips/index.html", "explainers/other/index.html")}
    assert f"<title>{escaped} - " in pages["explainers/coin-flips/index.html"]
    heading = re.search(r"<h1[^>]*>(.*?)<a class=\"headerlink\"", pages["explainers/coin-flips/index.html"]).group(1)
    assert html.unescape(heading) == _EVIL
    for name, text in pages.items():  # home card, navigation, related links
        plain = html.unescape(re.sub(r"<[^>]+>", " ", text))
        assert _EVIL in plain, name
    assert "*Not* [a link](x) :smile: </p><script>1</script>" in html.unescape(
        re.sub(r"<[^>]+>", "", pages["explainers/coin-flips/index.html"]))
    index = (root / "site" / "search" / "search_index.json").read_text()
    assert "<img src=x" not in index


def test_a_title_outside_the_basic_multilingual_plane_is_the_pages_title_nav_entry_and_search_title(copied_tinysite):
    """An emoji in a title made the page's <title>, its sidebar entry and its search title "Index":
    the page's front matter was written with JSON's surrogate escapes, which YAML reads as two lone
    surrogates (issue 47, item 2). Tags and the description go the same way."""
    import json

    root = copied_tinysite
    title, tag, summary = "Coin Flips 🎯: 𝔸 \"quoted\"", "fair 🪙", "Flips 🎲 of a coin."
    page = (root / "explainers" / "coin-flips.md").read_text()
    page = page.replace("title: Coin Flips", f"title: '{title}'").replace("tags: [fixture]", f"tags: [{tag}]")
    page = re.sub(r"(?m)^summary: .*$", f"summary: {summary}", page)
    (root / "explainers" / "coin-flips.md").write_text(page)
    build(BuildOptions(root=root))
    page = (root / "site" / "explainers" / "coin-flips" / "index.html").read_text()
    assert html.unescape(re.search(r"<title>(.*?) - ", page, re.S).group(1)) == title
    assert html.unescape(re.search(r'<meta name="description" content="([^"]*)"', page).group(1)) == summary
    home = (root / "site" / "index.html").read_text()
    entry = re.search(r'href="explainers/coin-flips/" class="md-nav__link">.*?<span class="md-ellipsis">(.*?)</span>',
                      home, re.S).group(1)
    assert html.unescape(entry.strip()) == title
    docs = json.loads((root / "site" / "search" / "search_index.json").read_text())["docs"]
    assert [html.unescape(d["title"]) for d in docs if d["location"] == "explainers/coin-flips/"] == [title]
    assert tag in html.unescape((root / "site" / "tags" / "index.html").read_text())


_SITE_EXTENSIONS = ["attr_list", "def_list", "md_in_html", "tables", "toc", "pymdownx.superfences",
                    "pymdownx.emoji", "admonition"]


@functools.cache
def _site_markdown() -> markdown.Markdown:
    """One converter with the site's extensions, reset before each text: what `markdown.markdown`
    does, without loading the extensions (the emoji index) again for each of 900 conversions."""
    return markdown.Markdown(extensions=_SITE_EXTENSIONS)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(min_size=1))
def test_any_front_matter_text_renders_as_itself(text):
    shown = "".join(c for c in " ".join(text.split()) if c.isprintable())
    for source in (f"# {markdown_text(text)}", f'<p class="x">{markdown_text(text)}</p>',
                   f"- **[{markdown_text(text)}](x.md)**\n\n    <span>{markdown_text(text)}</span>"):
        out = _site_markdown().reset().convert(source)
        assert "<" not in re.sub(r"</?(h1|p|ul|li|strong|a|span)( [^>]*)?>", "", out), (source, out)
        visible = html.unescape(re.sub(r"<[^>]+>", "", out)).strip()
        assert " ".join(visible.split()) in (" ".join(shown.split()), " ".join((shown + " " + shown).split()))


# --- output: any bytes, any control sequence -----------------------------------------------------

@settings(deadline=None)  # no test may depend on the machine's load (issue 47): 372 ms under CI's load
@given(st.binary())
def test_any_bytes_decode_and_are_flagged_exactly_when_not_utf8(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("bytes") / "out.bin"
    path.write_bytes(data)
    text, bad = _read_output(path)
    try:
        assert (text, bad) == (data.decode("utf-8"), False)
    except UnicodeDecodeError:
        assert bad and text == data.decode("utf-8", errors="replace")


_PIECES = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x10ffff), max_size=5),
    st.sampled_from(["\x1b[31m", "\x1b[0m", "\x1b[1;38;5;200m", "\x1b[38;2;1;2;3m", "\x1b[2J", "\x1b[10;20H",
                     "\x1b]0;title\x07", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\x1bP1$r\x1b\\", "\x9b31m",
                     "\x1b(B", "\x1bc", "\x1b", "\r", "\b", "\x07", "\x00", "\r\n", "\n", "\t", "<", "&", ">"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_any_control_sequence_is_rendered_or_dropped_never_left_raw(text):
    out = terminal_html(text)
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out)
    # Only colour spans are markup; everything else the code printed is escaped text.
    assert "<" not in re.sub(r'<span style="[^"<>]*">|</span>', "", out)


@settings(deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=["Cc", "Cs"]), max_size=200))
def test_text_without_controls_is_shown_unchanged(text):
    out = terminal_html(text)
    assert html.unescape(re.sub(r"<[^>]+>", "", out)) == text


# --- issue 25: nothing hidden, nothing raw -------------------------------------------------------
# One build of a copy of the fixture site with a tiny explainer per fault; on the code before
# issue 25 the build itself fails (a cell cut inside a string, a figure drawn but not placed, a
# PicklingError), so every test below fails there.

_WARNS = """
    # %% Divide
    import sys
    import warnings
    import numpy as np
    print("before")
    rates = np.array([0, 1]) / np.array([0, 2])
    print("rates:", rates)
    warnings.warn("a custom warning")
    print("a note on stderr", file=sys.stderr)
    print("after")

    # %% Quiet
    print("no warning here")
    """

_MARKER_IN_STRING = '''
    note = """
    # %% not a cell
    """
    # %% Count
    n_lines = len(note.splitlines())
    '''

_BARE_FIGURE = """
    import io
    from matplotlib.figure import Figure
    fig = Figure()
    ax = fig.subplots()
    ax.plot([0, 1], [1, 0])
    ax.set_title("made-without-pyplot")
    fig.savefig(io.BytesIO(), format="png")
    """

_N_FLOOD = 200_000
_FLOOD = f"""
    for i in range({_N_FLOOD}):
        print("line", i)
    """

_POOLS = """
    # %% Pools
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    from joblib import Parallel, delayed


    def square(x):
        return x * x


    if __name__ == "__main__":  # a spawned worker runs the main module again, as for any script
        with ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as pool:
            by_fork = list(pool.map(square, [1, 2, 3]))
        with ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as pool:
            by_spawn = list(pool.map(square, [1, 2, 3]))
        by_joblib = Parallel(n_jobs=2)(delayed(square)(i) for i in [1, 2, 3])
        print(by_fork, by_spawn, by_joblib)
    """


@pytest.fixture(scope="module")
def round3(tmp_path_factory):
    root = _copy_fixture(tmp_path_factory.mktemp("round3"))
    sources = {
        "warns": _explainer(_WARNS, prose="{{ cell(1) }}\n\n{{ cell(2) }}"),
        "marker-in-string": _explainer(_MARKER_IN_STRING),
        "bare-figure": _explainer(_BARE_FIGURE, prose='{{ figure(1, alt="A falling line") }}'),
        "floods": _explainer(_FLOOD),
        "pools": _explainer(_POOLS),
    }
    for slug, source in sources.items():
        _write(root, slug, source)
    report = build(BuildOptions(root=root, jobs=2))
    return root, report, sources


def _html(root: Path, slug: str) -> str:
    return (root / "site" / "explainers" / slug / "index.html").read_text()


def _notebook_outputs(root: Path, slug: str) -> list[list[tuple[str, str]]]:
    import json

    nb = json.loads((root / "site" / "explainers" / slug / f"{slug}.ipynb").read_text())
    return [[(o.get("name"), "".join(o.get("text", []))) for o in c["outputs"]]
            for c in nb["cells"] if c["cell_type"] == "code"]


def test_warnings_and_stderr_are_kept_in_their_cell_in_order(round3):
    root, report, sources = round3
    run = _run(report, "warns")
    first = run.cells[0]
    # NumPy warns while dividing, before the result is printed; the custom warning and the note
    # follow "rates", "after" follows them.
    assert [s.name for s in first.streams] == ["stdout", "stderr", "stdout", "stderr", "stdout"]
    assert [first.streams[i].text for i in (0, 2, 4)] == ["before\n", "rates: [nan 0.5]\n", "after\n"]
    assert "RuntimeWarning: invalid value encountered in divide" in first.streams[1].text
    assert "UserWarning: a custom warning" in first.streams[3].text
    assert first.streams[3].text.endswith("a note on stderr\n")
    line = _line_of(sources["warns"], "np.array([0, 1]) / np.array([0, 2])")
    assert [(w.category, w.message, w.where) for w in first.warnings] == [
        ("RuntimeWarning", "invalid value encountered in divide", f"line {line}"),
        ("UserWarning", "a custom warning", f"line {_line_of(sources['warns'], 'warnings.warn(')}")]
    assert run.cells[1].stderr == "" and run.cells[1].warnings == []
    # The build names the explainer that warned, where, and that no `warnings:` expects it.
    assert (f"explainers/warns.md: warned in cell 1 (line {line}): RuntimeWarning: invalid value encountered in "
            "divide (not expected by its `warnings:`: `fairsite check` fails on it)") in run.warnings


def test_warnings_show_on_the_page_in_their_cell_styled_apart_and_in_the_notebook(round3):
    root, _, _ = round3
    page = _html(root, "warns")
    blocks = re.findall(r'<pre class="fc-output( fc-stderr)?"[^>]*><code>(.*?)</code></pre>', page, re.S)
    # Python names the file the reader runs, by its path in the repository, and its line there.
    generated = (root / "explainers" / "code" / "warns.py").read_text()
    divide, warn = _line_of(generated, "np.array([0, 1]) /"), _line_of(generated, "warnings.warn(")
    assert [(bool(err), text.split("\n")[0]) for err, text in blocks] == [
        (False, "before"),
        (True, f"explainers/code/warns.py:{divide}: RuntimeWarning: invalid value encountered in divide"),
        (False, "rates: [nan 0.5]"), (True, f"explainers/code/warns.py:{warn}: UserWarning: a custom warning"),
        (False, "after"), (False, "no warning here")]  # the quiet cell has no stderr block
    assert blocks[3][1].endswith("a note on stderr")
    assert str(root) not in page  # no path of this machine
    outputs = _notebook_outputs(root, "warns")
    assert [name for name, _ in outputs[0]] == ["stdout", "stderr", "stdout", "stderr", "stdout"]
    assert "RuntimeWarning: invalid value encountered in divide" in outputs[0][1][1]
    assert outputs[1] == [("stdout", "no warning here\n")]
    css = (root / "site" / "assets" / "extra.css").read_text() if (root / "site" / "assets" / "extra.css").exists() \
        else next((root / "site").rglob("extra.css")).read_text()
    assert "pre.fc-stderr" in css


def test_a_cell_marker_inside_a_string_does_not_split_the_cell(round3):
    root, report, _ = round3
    run = _run(report, "marker-in-string")
    assert run.values["n_lines"] == 2 and run.values["note"] == "\n# %% not a cell\n"
    assert len(run.cells) == 2
    page = _html(root, "marker-in-string")
    assert "Code, cell 2: Count" in page and "Code, cell 3" not in page


def test_a_figure_made_without_pyplot_reaches_the_page(round3):
    root, report, _ = round3
    run = _run(report, "bare-figure")
    assert len(run.figures) == 1 and "made-without-pyplot" in run.figures[0].read_text()
    assert 'src="figure-1.svg" alt="A falling line"' in _html(root, "bare-figure")
    assert (root / "site" / "explainers" / "bare-figure" / "figure-1.svg").exists()


def test_a_flood_of_output_is_cut_on_the_page_in_the_index_and_the_notebook(round3):
    root, report, _ = round3
    folder = root / "site" / "explainers" / "floods"
    page = _html(root, "floods")
    # The first and last hundred lines, and a line saying how many of the 200,000 are not shown.
    assert "line 0\nline 1\n" in page and f"line {_N_FLOOD - 1}</code>" in page
    assert "line 99</code>" in page and "line 100\n" not in page and f"line {_N_FLOOD - 101}\n" not in page
    assert f"{_N_FLOOD - 200:,} lines" in page and f"not shown of {_N_FLOOD:,} lines" in page
    assert 'href="floods-output.txt"' in page
    assert len(page) < 200_000  # a few pages' worth, not the 8.4 MB of the whole output
    whole = (folder / "floods-output.txt").read_text().splitlines()
    assert whole == [f"line {i}" for i in range(_N_FLOOD)]
    index = (root / "site" / "search" / "search_index.json").read_text()
    assert len(index) < 500_000 and f"line {_N_FLOOD // 2}" not in index
    [[*streams]] = _notebook_outputs(root, "floods")
    text = "".join(t for _, t in streams)
    assert len(text.splitlines()) == 201 and "floods-output.txt" in text
    run = _run(report, "floods")
    assert any(w.startswith(f"explainers/floods.md: its code printed {_N_FLOOD:,} lines") and "floods-output.txt" in w
               for w in run.warnings)


def test_a_process_pool_over_a_function_the_code_defines_works_as_in_a_script(round3):
    root, report, _ = round3
    run = _run(report, "pools")
    assert run.values["by_fork"] == run.values["by_spawn"] == run.values["by_joblib"] == [1, 4, 9]
    # The module the code runs in is not recorded as a project module (its text is in the key).
    assert "explainers/code/pools.py" not in run.modules
    # The reader's way gives the same: python explainers/code/pools.py from the root.
    done = subprocess.run([sys.executable, "explainers/code/pools.py"], cwd=root, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "[1, 4, 9] [1, 4, 9] [1, 4, 9]"


_WARNS_ONCE = """
    import numpy as np
    rates = np.array([0, 1]) / np.array([0, 2])
    share = float(rates[1])
    """


def test_an_unexpected_warning_fails_check_and_an_expected_one_does_not(copied_tinysite):
    from site_src.build import NumbersMode

    root = copied_tinysite
    source = _explainer(_WARNS_ONCE, prose="Half: {{ share | percent }}.")
    _write(root, "warns-once", source)
    report = build(BuildOptions(root=root, numbers=NumbersMode.ACCEPT))  # `build` and `accept` report it only
    line = _line_of(source, "np.array([0, 1]) /")
    assert any(w.startswith(f"explainers/warns-once.md: warned in its code (line {line}): RuntimeWarning")
               for w in _run(report, "warns-once").warnings)
    # `fairsite check`'s rule for the numbers (and the warnings); the runs come from the cache.
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root, numbers=NumbersMode.CHECK))
    assert (f"explainers/warns-once.md: the code warned (line {line}): RuntimeWarning: invalid value encountered "
            "in divide") in str(info.value)
    expected = ('warnings:\n  - match: "RuntimeWarning: invalid value encountered in divide"\n'
                '    reason: the first group has no rows on purpose\n')
    _write(root, "warns-once", _explainer(_WARNS_ONCE, prose="Half: {{ share | percent }}.", front=expected))
    report = build(BuildOptions(root=root, numbers=NumbersMode.CHECK))
    assert any("(expected by its `warnings:`)" in w for w in _run(report, "warns-once").warnings)


@pytest.mark.parametrize("entry, problem", [
    ('[{match: "Runtime(", reason: why}]', "not a regular expression"),
    ('[{match: "RuntimeWarning"}]', "reason"),
    ('["RuntimeWarning"]', "warnings"),
])
def test_the_warnings_field_is_validated(tmp_path, entry, problem):
    root = _copy_fixture(tmp_path)
    _write(root, "bad-warnings", _explainer("x = 1", front=f"warnings: {entry}\n"))
    with pytest.raises(ConfigError, match=problem):
        parse_explainer(root / "explainers" / "bad-warnings.md")


def test_the_output_bound_cuts_lines_and_a_single_long_line_and_keeps_what_fits():
    from site_src.terminal import OUTPUT_MAX_CHARS, OUTPUT_MAX_LINES, bound_output

    fits = [("stdout", "a\n" * (OUTPUT_MAX_LINES // 2)), ("stderr", "w\n" * (OUTPUT_MAX_LINES // 2))]
    assert bound_output(fits).streams == fits and not bound_output(fits).cut
    one_line = "x" * (5 * OUTPUT_MAX_CHARS) + "\n"
    shown = bound_output([("stdout", one_line)])
    kept = "".join(text for name, text in shown.streams if name != "cut")
    assert shown.cut and shown.hidden_lines == 0 and len(kept) <= OUTPUT_MAX_CHARS // 2 + 3
    assert kept.endswith(" …\n") and shown.hidden_chars == len(one_line) - len(kept)
    # Both streams are counted together and keep their order around the cut.
    mixed = [("stdout", "".join(f"o{i}\n" for i in range(300))), ("stderr", "".join(f"e{i}\n" for i in range(300)))]
    cut = bound_output(mixed)
    assert [name for name, _ in cut.streams] == ["stdout", "cut", "stderr"]
    assert cut.hidden_lines == 600 - OUTPUT_MAX_LINES and cut.streams[2][1].endswith("e299\n")


def test_a_failed_run_cites_the_generated_file_only_when_it_holds_the_code_that_ran(built_copy, capsys):
    """Stop 33's new user (finding 3): a failed build does not rewrite explainers/code/<slug>.py,
    yet the traceback cited its line for code the file did not hold. The explainer's line is cited
    always; the generated file's only when its text is the code that ran."""
    from site_src import cli

    root = built_copy
    source_path = root / "explainers" / "coin-flips.md"
    code_path = root / "explainers" / "code" / "coin-flips.py"
    source = source_path.read_text(encoding="utf-8")
    # Lines added above the raise: the stale generated file's line numbers no longer match.
    edited = source.replace("import numpy as np\n", "import numpy as np\n\n# moved down\nx_extra = 1\n", 1).replace(
        "share_numpy = float(flips.mean())\n", "share_numpy = float(flips.mean())\nraise ValueError('boom')\n", 1)
    source_path.write_text(edited, encoding="utf-8")
    stale = code_path.read_text(encoding="utf-8")
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    line = edited.split("\n").index("raise ValueError('boom')") + 1
    assert f"explainers/coin-flips.md, line {line} raise ValueError('boom')" in err
    assert "explainers/code/coin-flips.py" not in err  # it holds other code: no line of it is true
    assert code_path.read_text(encoding="utf-8") == stale  # a failed build leaves it as it was

    # The same failure with the generated file current (the code ran before, its input changed):
    # its line is cited, and it is the line that raised.
    flag = root / "flag.txt"
    flag.write_text("ok", encoding="utf-8")
    source_path.write_text(source.replace(
        "share_numpy = float(flips.mean())\n",
        "share_numpy = float(flips.mean())\nif open('flag.txt').read() == 'boom': raise ValueError('boom')\n", 1),
        encoding="utf-8")
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    flag.write_text("boom", encoding="utf-8")
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 1
    err = " ".join(capsys.readouterr().err.split())
    import re
    cited = re.search(r"\(generated explainers/code/coin-flips\.py, line (\d+)\)", err)
    assert cited is not None, err
    assert "raise ValueError('boom')" in code_path.read_text(encoding="utf-8").split("\n")[int(cited[1]) - 1]


def test_a_syntax_error_shows_the_line_that_was_compiled_not_the_stale_generated_file(built_copy, capsys):
    """Stop 33's new user (finding 3): CPython takes a SyntaxError's text from the file on disk, which a failed
    build has not rewritten: the error showed another line of code than the one at fault."""
    from site_src import cli

    root = built_copy
    source_path = root / "explainers" / "coin-flips.md"
    edited = source_path.read_text(encoding="utf-8").replace(
        "import numpy as np\n", "import numpy as np\n\n# moved down\nx_extra = 1\n", 1).replace(
        "share_numpy = float(flips.mean())\n", "share_numpy = float(flips.mean())\ndef broken(:\n", 1)
    source_path.write_text(edited, encoding="utf-8")
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 1
    err = capsys.readouterr().err
    line = edited.split("\n").index("def broken(:") + 1
    # (the problem list indents the lines under its entry: issue 26, stop 35)
    assert re.search(rf'File "explainers/coin-flips\.md", line {line}\n +def broken\(:', err), err
    assert "explainers/code/coin-flips.py" not in err and "plt.subplots" not in err
