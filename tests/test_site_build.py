"""The site build on a tiny fixture site (tests/fixtures/tinysite): what succeeds, and each failure
named and leaving the previous site whole."""

from __future__ import annotations

import hashlib
import json
import shutil
import textwrap
import time
from pathlib import Path

import pytest

from site_src.build import BuildOptions, NumbersMode, build
from site_src.sources.collect import collect
from site_src.errors import BuildFailed, CheckError, ConfigError

FIXTURE = Path(__file__).parent / "fixtures" / "tinysite"


def _copy_fixture(tmp: Path) -> Path:
    root = tmp / "site-root"
    shutil.copytree(FIXTURE, root)
    return root


def _tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _add(root: Path, slug: str, text: str) -> None:
    (root / "explainers" / f"{slug}.md").write_text(textwrap.dedent(text).lstrip())


def test_build_writes_site_page_figure_and_code(built_tinysite):
    root = built_tinysite  # the session's build, read only
    assert (root / "site" / "index.html").exists()
    page = (root / "site" / "explainers" / "coin-flips" / "index.html").read_text()
    # The prose's number is the run's: recompute it independently from the same seeded draw.
    import numpy as np
    share = np.random.default_rng(7).integers(0, 2, size=2000).mean()
    assert f"{100 * share:.1f}%" in page
    assert "2,000 times" in page
    assert (root / "site" / "explainers" / "coin-flips" / "figure-1.svg").read_text().startswith("<?xml")
    assert 'alt="Histogram of the flips' in page
    code = (root / "explainers" / "code" / "coin-flips.py").read_text()
    assert code.startswith("# Generated from explainers/coin-flips.md")
    assert "rng = np.random.default_rng(7)" in (root / "docs" / "explainers" / "coin-flips" / "index.md").read_text()


def test_results_citation_resolves_to_the_one_row(built_tinysite):
    root = built_tinysite
    page = (root / "docs" / "explainers" / "coin-flips" / "index.md").read_text()
    assert "the gap is \u221210.0 percentage points" in page


def test_printed_html_is_escaped(built_tinysite):
    root = built_tinysite
    page = (root / "site" / "explainers" / "coin-flips" / "index.html").read_text()
    assert "<script>alert(" not in page
    assert "&lt;script&gt;alert(" in page


def test_generated_file_runs_from_the_root_as_a_reader_would(built_tinysite):
    import subprocess
    import sys
    root = built_tinysite
    out = subprocess.run([sys.executable, "explainers/code/coin-flips.py"], cwd=root, capture_output=True,
                         text=True, env={"MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"}, check=True)
    assert out.stdout.startswith("heads: ")


def test_rebuild_is_a_cache_hit_and_byte_identical(built_copy):
    root = built_copy
    before = _tree_digest(root / "docs")
    # Forget the last build, so this one renders and runs MkDocs again (from the cached run)
    # instead of seeing that nothing changed: the pages must come out byte for byte the same.
    (root / ".cache" / "fairsite-last-build.json").unlink()
    report = build(BuildOptions(root=root))
    assert [r.cached for r in report.runs] == [True] and not report.skipped
    assert _tree_digest(root / "docs") == before


def test_a_changed_input_file_reruns_the_explainer(tmp_path):
    root = _copy_fixture(tmp_path)
    (root / "data.txt").write_text("3\n")
    _add(root, "reads-data", """
        ---
        title: Reads Data
        subtitle: Does a data change re-run me?
        summary: Reads a file.
        checks:
          - name: read a number
            assert: value >= 0
        ---
        Value {{ value | number }}.

        ```python explainer
        value = int(open("data.txt").read())
        ```
        """)
    first = {r.slug: r for r in build(BuildOptions(root=root)).runs}
    assert "data.txt" in first["reads-data"].data_files
    second = {r.slug: r for r in build(BuildOptions(root=root)).runs}
    assert second["reads-data"].cached
    (root / "data.txt").write_text("4\n")
    third = {r.slug: r for r in build(BuildOptions(root=root)).runs}
    assert not third["reads-data"].cached and third["reads-data"].reason == "data.txt changed"
    assert third["coin-flips"].cached  # it did not read the file
    assert "Value 4." in (root / "docs" / "explainers" / "reads-data" / "index.md").read_text()


def _assert_fails_and_keeps_previous_site(root: Path, match: str, slug: str, source: str) -> BuildFailed:
    build(BuildOptions(root=root))
    _add(root, slug, source)
    before = _tree_digest(root / "site"), _tree_digest(root / "docs")
    with pytest.raises(BuildFailed, match=match) as info:
        build(BuildOptions(root=root))
    assert (_tree_digest(root / "site"), _tree_digest(root / "docs")) == before
    assert not (root / ".fairsite-stage").exists()
    return info.value


_RAISES = """
    ---
    title: Raises
    subtitle: What if the code fails?
    summary: Raises on purpose.
    checks:
      - name: never reached
        assert: x == 1
    ---
    Some prose.

    ```python explainer
    x = 1
    y = {"a": 1}
    z = y["missing"]
    ```
    """


def test_an_explainer_that_raises_fails_the_build_naming_the_source_line(built_copy):
    root = built_copy
    err = _assert_fails_and_keeps_previous_site(root, "KeyError", "raises", _RAISES)
    msg = str(err)
    # The code block opens on line 11 of the source; `z = ...` is its third line.
    assert "explainers/raises.md:14: raised KeyError: 'missing'" in msg
    assert "_runner" not in msg  # the builder's own frames are stripped


def test_a_failing_check_fails_the_build_with_the_values(built_copy):
    root = built_copy
    source = """
        ---
        title: Bad Check
        subtitle: What if a check fails?
        summary: Its check fails.
        checks:
          - name: hand-written mean equals the library mean
            assert: abs(mean_by_hand - mean_library) <= 4 * mc_error(0.5, n)
        ---
        Prose.

        ```python explainer
        n = 100
        mean_by_hand = 0.9
        mean_library = 0.5
        ```
        """
    err = _assert_fails_and_keeps_previous_site(root, "hand-written mean equals the library mean", "bad-check", source)
    assert "mean_by_hand = 0.9" in str(err) and "explainers/bad-check.md" in str(err)


def test_a_bare_number_in_prose_is_pointed_out(copied_tinysite):
    root = copied_tinysite
    _add(root, "typed-number", """
        ---
        title: Typed Number
        subtitle: Can I type a number?
        summary: No.
        checks:
          - name: trivially true from the run
            assert: n == 100
        ---
        We used 100 rows and {{ n | number }} rows, in 2016 (a year is fine), step 3 is fine.

        ```python explainer
        n = 100
        ```
        """)
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root))
    msg = str(info.value)
    assert "explainers/typed-number.md:9: bare number '100'" in msg
    assert "'2016'" not in msg and "'3'" not in msg


@pytest.mark.parametrize(("cited", "code", "said"), [
    ("{{ gap_valeu | gap }}", "gap_value = 0.1",
     r"'gap_valeu' is not a name the code defines or a page function \(did you mean 'gap_value'\?\)"),
    # A page function mistyped: the prose's names are the code's and the page's (a fresh user).
    ("{{ figur(1, alt='A chart.') }}", "gap_value = 0.1",
     r"'figur' is not a name the code defines or a page function \(did you mean 'figure'\?\)"),
    # A fresh user cited a DataFrame the code defined and read "not a value the run defined":
    # false. Only plain values are passed to the prose; the message says so.
    ("{{ rows | number }}", "import numpy as np; rows = np.arange(500)",
     r"'rows' is a value the code defined \(of type ndarray\) that the run does not pass: the run passes only its "
     r"numbers, true/false, text, and short lists or dicts of them; compute the number to cite in the code"),
])
def test_a_name_the_run_did_not_pass_is_an_error_with_its_line(copied_tinysite, cited, code, said):
    root = copied_tinysite
    _add(root, "undefined", f"""
        ---
        title: Undefined
        subtitle: What if I cite a value the run never made?
        summary: Cites a missing value.
        checks:
          - name: n exists
            assert: n > 0
        ---
        Fine line.

        The value was {cited}.

        ```python explainer
        n = 1
        {code}
        ```
        """)
    with pytest.raises(BuildFailed, match=r"\[template\] explainers/undefined.md:11: " + said):
        build(BuildOptions(root=root))


def test_a_citation_that_matches_no_row_or_many_rows_fails(copied_tinysite):
    root = copied_tinysite
    page = (root / "explainers" / "coin-flips.md").read_text()
    (root / "explainers" / "coin-flips.md").write_text(
        page.replace('result(audit="toy", metric="selection_rate")', 'result(audit="toy", strategy="S2")'))
    with pytest.raises(BuildFailed, match="2 rows match; name more columns"):
        build(BuildOptions(root=root))
    (root / "explainers" / "coin-flips.md").write_text(
        page.replace('result(audit="toy", metric="selection_rate")', 'result(audit="toy", metric="selection_rat")'))
    with pytest.raises(BuildFailed, match="no row with metric = 'selection_rat' \\(did you mean 'selection_rate'\\?\\)"):
        build(BuildOptions(root=root))


def test_a_hanging_explainer_is_killed_at_its_timeout(tmp_path):
    root = _copy_fixture(tmp_path)
    _add(root, "hangs", """
        ---
        title: Hangs
        subtitle: What if the code never ends?
        summary: Sleeps.
        timeout: 2
        checks:
          - name: never reached
            assert: done
        ---
        Prose.

        ```python explainer
        import time
        time.sleep(60)
        done = True
        ```
        """)
    with pytest.raises(BuildFailed, match=r"explainers/hangs.md:14: timed out after 2 s on this line and was stopped"):
        build(BuildOptions(root=root))


_BROKEN_META = """
    ---
    title: Broken
    subtitel: Typo in a key
    summary: ""
    checks: []
    related: [coin-flip]
    ---
    Prose without code.
    """


def _with_inputs(inputs: str) -> str:
    return f"""
    ---
    title: Inputs
    subtitle: A test?
    summary: A test explainer.
    inputs: {inputs}
    checks:
      - name: ran
        assert: "True"
    ---
    x

    ```python explainer
    x = 1
    ```
    """


@pytest.mark.parametrize("sources, listed, not_listed", [
    ({"broken-meta": _BROKEN_META},
     ["subtitel: unknown field (did you mean 'subtitle'?)", "subtitle: required field is missing",
      "checks: List should have at least 1 item", "expected exactly one ```python explainer block"], []),
    ({"bad-inputs": _with_inputs('["../outside.db", "/etc/passwd", "data/*.db", ""]'),
      "missing-input": _with_inputs('["data/none.db", "data/*.none"]')},
     ["inputs.0: must stay inside the repository (no '..')", "inputs.1: must be relative to the repository root",
      "inputs.3: String should have at least 1 character"],
     # A glob may match nothing yet, and a path may name a file the run creates (issue 25): one
     # still missing after the run is an error then (test_cache.py).
     ["inputs.2", "none'", "data/none.db"]),
], ids=["fields", "inputs"])
def test_front_matter_problems_are_listed_together_each_with_its_field(tmp_path, sources, listed, not_listed):
    root = _copy_fixture(tmp_path)
    for slug, text in sources.items():
        _add(root, slug, text)
    with pytest.raises(ConfigError) as info:
        collect(root / "explainers")
    msg = str(info.value)
    assert [line for line in listed if line not in msg] == []
    assert [text for text in not_listed if text in msg] == []


def test_related_must_name_an_explainer(tmp_path):
    root = _copy_fixture(tmp_path)
    page = (root / "explainers" / "coin-flips.md").read_text()
    (root / "explainers" / "coin-flips.md").write_text(page.replace("tags: [fixture]", "tags: [fixture]\nrelated: [coin-flip]"))
    with pytest.raises(ConfigError, match="related: no explainer 'coin-flip' \\(did you mean 'coin-flips'\\?\\)"):
        collect(root / "explainers")


def test_check_mode_reports_stale_generated_code(built_copy):
    root = built_copy
    build(BuildOptions(root=root))
    (root / "explainers" / "code" / "coin-flips.py").write_text("print('edited by hand')\n")
    with pytest.raises(BuildFailed, match="coin-flips.py: differs from its explainer source"):
        build(BuildOptions(root=root, use_cache=False, verify_generated=True))


def test_the_numbers_rule_is_a_numbers_mode_not_a_string():
    with pytest.raises(TypeError, match=r"BuildOptions.numbers must be a NumbersMode \(BUILD, SERVE, CHECK, ACCEPT\), "
                                        r"got 'accept'"):
        BuildOptions(numbers="accept")


def test_unknown_explainer_names_are_refused(tmp_path):
    root = _copy_fixture(tmp_path)
    with pytest.raises(ConfigError, match=r"no explainer named 'coin-flip' \(did you mean 'coin-flips'\?\)"):
        build(BuildOptions(root=root, numbers=NumbersMode.ACCEPT, accept=frozenset({"coin-flip"})))


def test_an_explainer_name_that_begins_a_slug_is_answered_with_that_slug(tmp_path):
    # "coin" is too short beside "coin-flips" for a spelling match (ratio 0.57); it is its first word.
    root = _copy_fixture(tmp_path)
    with pytest.raises(ConfigError, match=r"no explainer named 'coin' \(did you mean 'coin-flips'\?\)"):
        build(BuildOptions(root=root, force=frozenset({"coin"})))


_ALT = "Histogram of the flips: about as many heads as tails."  # the fixture's figure's alt text


@pytest.mark.parametrize("old, new, error", [
    ("assert: abs(share_by_hand - share_numpy)", "assert: abs(share_by_hand - share_numpy",
     r"check 'hand-written share agrees with numpy': `assert:` is not a Python expression"),
    # The code block opens on line 20; `n_flips = ...` is its fifth line.
    ("n_flips = 2000", "n_flips = (2000", r"explainers/coin-flips.md:2\d: raised SyntaxError"),
    ("share_numpy = float(flips.mean())", "share_numpy = float(flips[:0].mean()) if False else float('nan')",
     r"percent filter got NaN"),
    ('metric="selection_rate").gap', 'metric="selection_rate").gapp',
     r"coin-flips.md:16: result\(.*\)\.gapp: no such column \(did you mean 'gap'\?\)"),
    (f'figure(1, alt="{_ALT}")', "figure(1)", r"coin-flips.md:18: figure\(1\): alt text must say what the figure shows"),
    (f'alt="{_ALT}")', f'alt="{_ALT}", caption="{_ALT}")', r"figure\(1\): the caption repeats the alt text"),
], ids=["check-not-python", "syntax-error", "nan-cited", "results-column-misspelt", "figure-without-alt",
        "caption-repeats-alt"])
def test_a_mistake_in_the_source_is_named(copied_tinysite, old, new, error):
    root = copied_tinysite
    page = root / "explainers" / "coin-flips.md"
    page.write_text(page.read_text().replace(old, new))
    with pytest.raises(BuildFailed, match=error):
        build(BuildOptions(root=root))


def test_the_same_failure_in_many_explainers_is_reported_once(copied_tinysite):
    root = copied_tinysite
    (root / "broken.yaml").write_text("key: [unclosed\n")
    for slug in ("one", "two"):
        _add(root, slug, """
            ---
            title: Reads A Manifest (SLUG)
            subtitle: Does a broken shared input show once?
            summary: Loads a broken file.
            checks:
              - name: never reached
                assert: ok
            ---
            Prose.

            ```python explainer
            import yaml
            ok = yaml.safe_load(open("broken.yaml"))
            ```
            """.replace("SLUG", slug))  # two titles: one title for two pages is refused (issue 25.15b)
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root))
    msg = str(info.value)
    assert "2 explainers failed the same way (explainers/one.md:13, explainers/two.md:13): raised" in msg
    assert msg.count("raised ") == 1


def _with_cells(source: str) -> str:
    """The fixture explainer with its code in two `# %%` cells and the first placed in the prose."""
    source = source.replace("```python explainer\n", "```python explainer\n# %% Flip\n")
    source = source.replace("fig, ax = plt.subplots", "# %% Draw\nfig, ax = plt.subplots")
    return source.replace("of the time.\n", "of the time.\n\n{{ cell(1) }}\n")


def test_cells_are_placed_in_the_prose_each_with_its_own_output(tmp_path):
    root = _copy_fixture(tmp_path)
    page = root / "explainers" / "coin-flips.md"
    source = _with_cells(page.read_text())
    page.write_text(source)
    build(BuildOptions(root=root))
    md = (root / "docs" / "explainers" / "coin-flips" / "index.md").read_text()
    first, second = md.index('"Code, cell 1: Flip'), md.index('"Code, cell 2: Draw')
    assert first < md.index("The benchmark says") < second  # cell 1 where the prose put it
    assert first < md.index("heads: 0.") < second  # its output under it, not under cell 2
    html = (root / "site" / "explainers" / "coin-flips" / "index.html").read_text()
    assert html.count('<details class="example fc-cell">') == 2  # every cell's code starts folded
    assert '</details>\n<div class="fc-cell-output">' in html  # a teaching cell's output shows under it
    # The technical layer: the output goes inside the fold with the code.
    page.write_text(source.replace("{{ cell(1) }}", "{{ cell(1, folded=True) }}"))
    build(BuildOptions(root=root))
    html = (root / "site" / "explainers" / "coin-flips" / "index.html").read_text()
    folded = html[html.index('<details class="example fc-cell">'):]
    assert folded.index("heads: 0.") < folded.index("</details>")
    assert '</details>\n<div class="fc-cell-output">' not in html


def test_cell_placement_mistakes_are_named(tmp_path):
    root = _copy_fixture(tmp_path)
    page = root / "explainers" / "coin-flips.md"
    source = _with_cells(page.read_text())
    page.write_text(source.replace("{{ cell(1) }}", "{{ cell(3) }}"))
    with pytest.raises(BuildFailed, match=r"cell\(3\): the code has 2 cell\(s\); split it with `# %%` lines"):
        build(BuildOptions(root=root))
    page.write_text(source.replace("{{ cell(1) }}", "{{ cell(2) }}\n\n{{ cell(1) }}"))
    with pytest.raises(BuildFailed, match=r"cell\(1\) is placed after cell\(2\); place cells in the order the code runs"):
        build(BuildOptions(root=root))


def test_a_block_left_open_is_named_at_the_line_that_opens_it(accepted_copy):
    # Jinja reports an unclosed {% if %} at the end of the file; the author needs its own line.
    root = accepted_copy
    page = root / "explainers" / "coin-flips.md"
    lines = page.read_text().split("\n")
    at = lines.index("## Limitations") + 1  # 0-based index of the line after the heading
    lines[at:at] = ["{% if n_flips %}", "{% for i in [1] %}{{ i }}{% endfor %}", "Closed loop, open if."]
    page.write_text("\n".join(lines))
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root))
    assert (f"[template] explainers/coin-flips.md:{at + 1}: TemplateSyntaxError: Unexpected end of template"
            in str(info.value))
    assert f"(the {{% if %}} on line {at + 1} is never closed)" in str(info.value)


@pytest.mark.parametrize("mistake, expected", [
    ("{% if n_flips %}", "TemplateSyntaxError: .*(end of template|endif)"),  # a tag left open
    # an unknown filter
    ("{{ n_flips | nmber }}", "TemplateAssertionError: No filter named 'nmber'.* \\(did you mean 'number'\\?\\)"),
])
def test_a_template_that_does_not_parse_names_the_explainer_not_a_traceback(accepted_copy, mistake, expected):
    """With accepted numbers to compare against, the prose is read by the number comparison too:
    a template that does not parse is reported once, by the render stage, with the file."""
    root = accepted_copy
    page = root / "explainers" / "coin-flips.md"
    page.write_text(page.read_text() + f"\nA sentence with a mistake: {mistake}\n")
    with pytest.raises(BuildFailed, match=r"\[template\] explainers/coin-flips.md:\d+: " + expected):
        build(BuildOptions(root=root))


@pytest.mark.parametrize("values", [[], {"n_flips": 5}, {"n_flips": {"value": 2000}}, {"n_flips": {"value": 1, "shown": "1"}}])
def test_a_malformed_accepted_numbers_file_is_named(accepted_copy, values):
    root = accepted_copy
    (root / "explainers" / "coin-flips.numbers.json").write_text(json.dumps({"values": values}))
    with pytest.raises(BuildFailed, match=r"coin-flips.numbers.json is not an accepted-numbers file"):
        build(BuildOptions(root=root))


def test_a_typo_in_a_cited_name_says_so_beside_the_value_no_longer_cited(accepted_copy):
    root = accepted_copy
    page = root / "explainers" / "coin-flips.md"
    page.write_text(page.read_text().replace("{{ n_flips", "{{ n_flipz"))
    with pytest.raises(BuildFailed) as failed:
        build(BuildOptions(root=root))
    assert "(no longer cited: the prose reads 'n_flipz', which the run did not define)" in str(failed.value)


def test_no_longer_cited_blames_no_name_the_page_itself_provides(tmp_path):
    # `cell` (close to the accepted `n_cells`), `figure`, `result` and a loop's own names are not typos.
    root = _copy_fixture(tmp_path)
    page = root / "explainers" / "coin-flips.md"
    page.write_text(page.read_text().replace("```python explainer\n", "```python explainer\nn_cells = 1\n", 1)
                    .replace("{{ n_flips | number }}", "{{ n_flips | number }} ({{ n_cells }} cell) {{ cell(1) }}"))
    build(BuildOptions(root=root, numbers=NumbersMode.ACCEPT))
    page.write_text(page.read_text().replace(" ({{ n_cells }} cell)", "")
                    + "\n{% for c in [1] %}{{ loop.index }}{% endfor %}\n")
    with pytest.raises(BuildFailed) as failed:
        build(BuildOptions(root=root))
    assert "n_cells" in str(failed.value) and "(no longer cited)" in str(failed.value)
    assert "the prose reads" not in str(failed.value)


@pytest.mark.parametrize("failing", ["site/ moved aside", "new site/ moved in"])
def test_a_swap_that_fails_for_site_leaves_the_previous_docs_and_site_both_whole(built_copy, monkeypatch, failing):
    """Issue 25.13: docs/ is never the new build while site/ is the old one (or missing)."""
    import os

    from site_src.errors import SiteError
    from site_src.publishing.mkdocs_site import STAGE

    root = built_copy.resolve()
    build(BuildOptions(root=root))
    before = {name: _tree_digest(root / name) for name in ("docs", "site")}
    source = root / "explainers" / "coin-flips.md"
    source.write_text(source.read_text() + "\nA new sentence, so the next build writes new pages.\n")
    refused = root / "site" if failing == "site/ moved aside" else root / STAGE / "site"
    real_rename = os.rename

    def rename(src, dst, *args, **kwargs):
        if os.fspath(src) == os.fspath(refused):
            raise PermissionError(13, "Permission denied", os.fspath(src), os.fspath(dst))
        return real_rename(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(SiteError, match=r"cannot replace site/.*Permission denied") as err:
        build(BuildOptions(root=root))
    assert "docs/ and site/ are both the previous build's" in str(err.value)
    assert {name: _tree_digest(root / name) for name in ("docs", "site")} == before
    monkeypatch.undo()
    build(BuildOptions(root=root))  # and the next build, able to rename, writes both
    assert "A new sentence" in (root / "docs" / "explainers" / "coin-flips" / "index.md").read_text()
    assert "A new sentence" in (root / "site" / "explainers" / "coin-flips" / "index.html").read_text()


def test_previous_and_next_links_show_and_read_a_title_as_typed(tmp_path):
    """Issue 25.15e: a title with "&" and "<" in the previous/next links of its neighbours, as the
    reader sees it and as a screen reader reads it (aria-label), escaped once, not twice."""
    from html.parser import HTMLParser

    root = _copy_fixture(tmp_path)
    hooks = Path(__file__).resolve().parents[1] / "site_src" / "publishing" / "mkdocs_hooks.py"
    with open(root / "mkdocs.yml", "a") as fh:
        fh.write(f"hooks:\n  - {hooks}\n")
    title = 'Ranks & <Ties> "quoted"'
    source = (root / "explainers" / "coin-flips.md").read_text()
    _add(root, "ranks", source.replace("title: Coin Flips", "title: 'Ranks & <Ties> \"quoted\"'"))
    build(BuildOptions(root=root))

    class _Footer(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.links, self._in, self._text = {}, None, []

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if tag == "a" and "md-footer__link" in (a.get("class") or ""):
                self._in, self._text = a, []

        def handle_endtag(self, tag):
            if tag == "a" and self._in is not None:
                kind = "prev" if "md-footer__link--prev" in self._in["class"] else "next"
                self.links[kind] = (self._in["aria-label"], " ".join("".join(self._text).split()))
                self._in = None

        def handle_data(self, data):
            if self._in is not None:
                self._text.append(data)

    seen = []
    for page in (root / "site").rglob("index.html"):
        footer = _Footer()
        footer.feed(page.read_text())
        seen += [link for link in footer.links.values() if "Ranks" in link[0]]
    assert seen, "no page links to the new explainer"
    for label, text in seen:
        assert label in (f"Previous: {title}", f"Next: {title}")
        assert text.endswith(title)


def test_an_infinite_value_in_the_prose_fails_naming_the_explainer_line_variable_and_filter(built_copy):
    """Issue 25.15d: a division by zero in the run printed "inf%" in the prose."""
    root = built_copy
    err = _assert_fails_and_keeps_previous_site(root, "infinite", "odds", """
        ---
        title: Odds
        subtitle: What are the odds when nobody is in the group?
        summary: Divides by zero on purpose.
        checks:
          - name: ran
            assert: flagged == 3
        ---
        Some prose.

        The odds are {{ odds | percent }}.

        ```python explainer
        import numpy as np
        flagged, others = 3, 0
        odds = float(np.float64(flagged) / others)
        ```
        """)
    assert "explainers/odds.md:11:" in str(err)  # the line of the sentence
    assert "percent filter got inf for `odds`" in str(err)


_SECOND = """
    ---
    title: Second Page
    subtitle: Is my page written while the other explainer runs?
    summary: A second explainer for the streaming tests.
    checks:
      - name: the count
        assert: count == 3
    ---
    Counted {{ count | number }}.

    ```python explainer
    count = len("abc")
    ```
    """


def test_a_forced_build_checks_and_renders_each_page_while_the_next_run_goes_on(tmp_path):
    # Issue 26: with every explainer running, a page is checked and rendered as its run ends,
    # not after the last run. The second run waits (at its start) until the first run's page is
    # in the staging folder; a build that renders only after every run never writes it there.
    from site_src.publishing.mkdocs_site import STAGE

    root = _copy_fixture(tmp_path)
    _add(root, "second", _SECOND)
    build(BuildOptions(root=root, jobs=1))
    started: list[str] = []
    seen_during_runs: list[bool] = []

    def on_start(slug: str) -> None:
        started.append(slug)
        if len(started) == 2:
            pages = root / STAGE / "docs" / "explainers"
            deadline = time.monotonic() + 60
            while not list(pages.glob("*/index.md")) and time.monotonic() < deadline:
                time.sleep(0.05)
            seen_during_runs.append(bool(list(pages.glob("*/index.md"))))

    report = build(BuildOptions(root=root, jobs=1, force_all=True, on_run_start=on_start))
    assert sorted(started) == ["coin-flips", "second"] and not any(r.cached for r in report.runs)
    assert seen_during_runs == [True]
    assert "Counted 3." in (root / "docs" / "explainers" / "second" / "index.md").read_text()


def test_pages_rendered_as_runs_end_are_those_rendered_after_all_runs(tmp_path):
    # The streamed pages (a forced build) against `render` of the same runs, in one go and in the
    # explainers' order, into another folder: every file byte for byte the same.
    from site_src.rendering.render import render
    from site_src.rendering.results import ResultsTable

    root = _copy_fixture(tmp_path)
    _add(root, "second", _SECOND)
    report = build(BuildOptions(root=root, jobs=1, force_all=True))
    explainers = collect(root / "explainers")
    assert len(explainers) == 2
    again = tmp_path / "docs-again"
    problems, rendered = render(explainers, {r.slug: r for r in report.runs},
                                ResultsTable(root / "results" / "results_fairness.csv"), again, root=root,
                                facts=report.facts, reuse_pages=False)
    assert problems == [] and sorted(rendered) == ["coin-flips", "second"]
    assert _tree_digest(root / "docs") == _tree_digest(again)


def test_a_forced_build_lists_the_failed_checks_in_the_explainers_order(tmp_path):
    # The checks run as the runs end (longest first), but what they find is listed by explainer.
    root = _copy_fixture(tmp_path)
    for slug in ("b-second", "a-first"):
        _add(root, slug, _SECOND.replace("count == 3", "count == 4").replace("Second Page", slug))
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root, jobs=1, force_all=True))
    text = str(info.value)
    assert "a-first" in text and "b-second" in text
    assert text.index("a-first") < text.index("b-second")
    assert not (root / ".fairsite-stage").exists()


def test_a_manifest_problem_comes_before_the_runs_that_stopped_on_it():
    # A fresh user's typo in a manifest's `categories`: nine explainers' tracebacks and outputs came
    # first, the data page's naming of the typo last. The cause now leads; each run that stopped
    # on it says so in a line; a run that failed otherwise keeps its message.
    from site_src.build import _after_their_manifest, _cause_first
    from site_src.errors import BuildFailed, ConfigError, ExecutionError

    typo = "audits/a/audit.yaml:59: groups.attributes[1].categories[1]: 'Blak' never occurs in 'race'"
    stopped = [ExecutionError(f"raised ManifestError: 1 problem in audit manifest:\n  - {typo}\nTraceback (most recent "
                              f"call last):\n  ...\n--- what it printed ---\nrows: 3", explainer=f"explainers/{s}.md", line=9)
               for s in ("one", "two")]
    other = ExecutionError("raised ZeroDivisionError: division by zero", explainer="explainers/three.md", line=4)
    cause = ConfigError(f"data page: 1 problem in audit manifest:\n  - {typo}")
    errors = _cause_first(_after_their_manifest([*stopped, other, cause]))
    assert errors[0] is cause and errors[-1] is other
    assert [e.message for e in errors[1:3]] == [
        "stopped on the problem of audits/a/audit.yaml above (its code raised ManifestError)"] * 2
    assert [e.explainer for e in errors[1:3]] == ["explainers/one.md", "explainers/two.md"]
    shown = str(BuildFailed(errors))
    assert "Traceback" not in shown and "what it printed" not in shown
    assert shown.index("'Blak' never occurs") < shown.index("2 explainers failed the same way")
    # No manifest problem beside them: the runs' failures as they were.
    assert _after_their_manifest([*stopped, other]) == [*stopped, other]


def test_one_problem_found_twice_at_one_place_is_listed_once_and_places_are_not_explainers():
    # A fresh user's finding (issue 26): a number typed twice on one line of one explainer read
    # "2 explainers failed the same way (explainers/x.md:226, explainers/x.md:226)".
    twice = [CheckError("bare number '10' typed into a template expression", explainer="explainers/x.md", line=226)
             for _ in range(2)]
    msg = str(BuildFailed(twice))
    assert msg.startswith("1 problem(s);") and msg.count("bare number '10'") == 1
    assert "failed the same way" not in msg and "explainers/x.md:226" in msg
    two_lines = [CheckError("bare number '10' typed into a template expression", explainer="explainers/x.md", line=n)
                 for n in (226, 230)]
    msg = str(BuildFailed(two_lines))
    assert "2 places failed the same way (explainers/x.md:226, explainers/x.md:230)" in msg
