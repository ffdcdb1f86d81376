"""`fairsite build` on ordinary bad input names the file and the line, never a raw traceback
(issue 25, point 12): a YAML syntax error in an audit.yaml, a malformed or repeated row in a
results file."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_src import cli
from site_src.errors import CheckError
from site_src.rendering.results import ResultsTable
from test_site_build import _copy_fixture


def _build(root, capsys) -> tuple[int, str]:
    code = cli.main(["--root", str(root), "build", "--jobs", "1"])
    return code, capsys.readouterr().err


def test_each_problem_of_a_manifest_is_counted_as_one(tmp_path, capsys):
    # A fresh user read "1 problem(s)" over "2 problems in audit manifest": the build counted the
    # manifest, the manifest its problems. Each is now one problem of the build.
    root = _copy_fixture(tmp_path)
    valid = (Path(__file__).parent / "fixtures" / "manifests" / "valid.yaml").read_text()
    data = Path(__file__).resolve().parents[1] / "data" / "arrests.csv"
    text = (valid.replace("test_size: 0.2", "test_size: 2").replace("random_state: 0", "random_state: zero")
            .replace("file: data/arrests.csv", f"file: {data}"))
    manifest = root / "audits" / "two-problems" / "audit.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(text)
    code, err = _build(root, capsys)
    err = " ".join(err.split())
    assert code == 1 and "2 problem(s); the previous site was left as it was:" in err, err
    assert "problems in audit manifest" not in err
    assert "audits/two-problems/audit.yaml:" in err and "test_size: expected" in err and "random_state: expected" in err


def test_a_yaml_syntax_error_in_an_audit_manifest_is_named_with_its_line(tmp_path, capsys):
    # On main the results page's provenance read every audit.yaml with yaml.load and the build
    # ended in yaml's ParserError traceback.
    root = _copy_fixture(tmp_path)
    manifest = root / "audits" / "broken" / "audit.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("name: Broken\ndataset:\n  file: data/x.csv\n  sha256: [unclosed\n")
    code, err = _build(root, capsys)
    assert code == 1 and "Traceback" not in err
    assert "audits/broken/audit.yaml:5:1: YAML syntax error" in err


@pytest.mark.parametrize("extra, named", [
    ("toy,S2,logistic_regression", "4: 3 cells where the header has 13"),
    # A cell of the wrong kind: the site said "could not convert string to float", or a `checks:`
    # entry reading `significant` failed and the explainer was blamed (a fresh user, stop 40).
    ("toy,S2,logistic_regression,sex,selection_rate,0.2,0.3,abc,-0.15,-0.05,0.001,True,False",
     "4: column 'gap' holds 'abc'; expected a number (or nothing)"),
    ("toy,S2,logistic_regression,sex,selection_rate,0.2,0.3,-0.1,-0.15,-0.05,0.001,yes,False",
     "4: column 'significant' holds 'yes'; expected True or False (or nothing)"),
    ("toy,S2,logistic_regression,sex,selection_rate,0.2,0.3,-0.1,-0.15,-0.05,0.001,True,False",
     "4: the same row as line 2 (audit=toy, strategy=S2, model=logistic_regression, attribute=sex, "
     "metric=selection_rate)"),
])
def test_a_malformed_or_repeated_results_row_is_named_with_its_line(tmp_path, capsys, extra, named):
    # On main: a TypeError from the template (a short row's cells read as None), or "2 rows match".
    root = _copy_fixture(tmp_path)
    results = root / "results" / "results_fairness.csv"
    assert results.read_text().splitlines()[1].startswith(extra.split(",0.2")[0])  # the fixture's first row
    with open(results, "a") as fh:
        fh.write(extra + "\n")
    code, err = _build(root, capsys)
    assert code == 1 and "Traceback" not in err and "TypeError" not in err
    # Named from the repository root, as every file is; the console wraps long lines at a space:
    # compared with runs of white space as one.
    assert " ".join(f"results/results_fairness.csv:{named}".split()) in " ".join(err.split())


def test_a_results_lookup_on_a_repeated_row_names_both_lines(tmp_path):
    path = tmp_path / "results_fairness.csv"
    path.write_text("audit,strategy,model,attribute,metric,gap\n"
                    "a,S0,m,sex,selection_rate,0.1\n"
                    "a,S0,m,sex,selection_rate,0.2\n")
    with pytest.raises(CheckError, match=r"results_fairness.csv:3: the same row as line 2"):
        ResultsTable(path).lookup(audit="a", attribute="sex")


def test_a_short_row_in_the_performance_file_is_named_with_its_line(tmp_path, capsys):
    # On main: the results page read it with csv.DictReader and int(None) raised a TypeError.
    root = _copy_fixture(tmp_path)
    performance = root / "results" / "results_performance.csv"
    performance.write_text("audit,audit_name,strategy,model,n_dropped\ntoy,Toy,S2,logistic_regression,0\n"
                           "toy,Toy,S2\n")
    code, err = _build(root, capsys)
    assert code == 1 and "Traceback" not in err and "TypeError" not in err
    assert "results/results_performance.csv:3: 3 cells where the header has 5" in " ".join(err.split())


def test_a_manifest_that_does_not_validate_is_one_problem_named_once(tmp_path, capsys):
    # A new user's find: two categories given one label in a real audit made `fairsite build`
    # report 42 problems (every explainer, published fact and scenario link that loads the audit,
    # some of them "no audit 'german-credit'"). Stage 1 now validates every manifest and stops there.
    import shutil
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    root = _copy_fixture(tmp_path)
    (root / "audits").mkdir()
    shutil.copytree(repo / "audits" / "recidivism-risk", root / "audits" / "recidivism-risk")
    (root / "data").mkdir(exist_ok=True)
    shutil.copy(repo / "data" / "compas-scores-two-years.csv", root / "data")
    manifest = root / "audits" / "recidivism-risk" / "audit.yaml"
    text = manifest.read_text()
    assert "{African-American: Black, Caucasian: White}" in text
    manifest.write_text(text.replace("{African-American: Black, Caucasian: White}",
                                     "{African-American: Black, Caucasian: Black}"))
    code, err = _build(root, capsys)
    assert code == 1 and "Traceback" not in err
    # The label's problem once, beside the one other problem of this copy (no datasheet copied):
    # each problem of a manifest is one of the build's (a fresh user read "1 problem(s)" over "2").
    assert "2 problem(s)" in err and "'data/compas.md' does not exist" in err
    assert err.count("'African-American'") == 1 and "'Caucasian'" in err
    assert "scenario(" not in err and "published fact" not in err


# ------------------------------------------------------------------ links between pages (a new user's finding)

def _readme_link_example() -> str:
    """The example link of CONTRIBUTING.md's "Writing an explainer" (its one ```markdown block)."""
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = readme.split("## Writing an explainer", 1)[1]
    return section.split("```markdown\n", 1)[1].split("\n```", 1)[0]


def test_the_readme_example_of_links_builds_and_a_wrong_slug_is_named_in_the_source(built_copy, capsys):
    """Stop 33 (a new user's findings 1 and 2): README did not say how one explainer links another
    or the glossary; a broken link was named by its page in the generated docs/
    (explainers/<slug>/index.md), with no line and nothing about what exists."""
    import re

    root = built_copy
    example = _readme_link_example()
    [(slug, anchor)] = re.findall(r"\]\(\.\./([a-z0-9-]+)/index\.md#([a-z0-9-]+)\)", example)
    assert "](../../glossary/index.md#gap)" in example
    # The page the example links: the fixture's explainer under the example's slug (it has the
    # heading "## Limitations"), and a page with the example in its prose, on line 11.
    coin = (root / "explainers" / "coin-flips.md").read_text(encoding="utf-8")
    assert f"## {anchor.capitalize()}\n" in coin
    (root / "explainers" / f"{slug}.md").write_text(coin.replace("title: Coin Flips", "title: Coin Flips Again"),
                                                    encoding="utf-8")
    source = ("---\ntitle: Linking\nsubtitle: Links to another page.\nsummary: Links.\ntags: [fixture]\n"
              "checks:\n  - name: trivial\n    assert: n == n\n---\n\n"
              f"{example}\n\n```python explainer\nn = 1\n```\n")
    linker = root / "explainers" / "linking.md"
    linker.write_text(source, encoding="utf-8")
    first_line = source.split("\n").index(example.split("\n")[0]) + 1
    assert cli.main(["--root", str(root), "build", "--jobs", "1"]) == 0, capsys.readouterr().err
    html = (root / "site" / "explainers" / "linking" / "index.html").read_text(encoding="utf-8")
    assert f'href="../{slug}/#{anchor}"' in html and 'href="../../glossary/#gap"' in html
    site_before = (root / "site" / "explainers" / "linking" / "index.html").read_bytes()

    wrong = slug[:-1]  # one letter short
    linker.write_text(source.replace(f"../{slug}/", f"../{wrong}/"), encoding="utf-8")
    code, err = _build(root, capsys)
    assert code == 1 and "Traceback" not in err
    assert (f"explainers/linking.md:{first_line}: the link '../{wrong}/index.md#{anchor}' leads to no page "
            f"(explainers/{wrong}/index.md does not exist); did you mean '../{slug}/index.md#{anchor}'?") in " ".join(
                err.split())
    assert "explainers/linking/index.md" not in err  # the generated page is not what the writer edits
    assert (root / "site" / "explainers" / "linking" / "index.html").read_bytes() == site_before

    # A wrong anchor, and a link to the source file's name rather than the page.
    linker.write_text(source.replace(f"#{anchor})", "#limitation)").replace("#gap)", "#gapp)"), encoding="utf-8")
    code, err = _build(root, capsys)
    flat = " ".join(err.split())
    assert code == 1
    assert (f"explainers/linking.md:{first_line}: the link '../{slug}/index.md#limitation' leads to the "
            f"page of explainers/{slug}.md, which does not contain an anchor '#limitation'; did you mean "
            f"'#{anchor}'?") in flat
    assert ("the link '../../glossary/index.md#gapp' leads to the page glossary/index.md, which does not contain "
            "an anchor '#gapp'; did you mean '#gap'?") in flat
    linker.write_text(source.replace(f"../{slug}/index.md#{anchor}", f"{slug}.md"), encoding="utf-8")
    code, err = _build(root, capsys)
    assert code == 1
    assert (f"explainers/linking.md:{first_line}: the link '{slug}.md' leads to no page "
            f"(explainers/linking/{slug}.md does not exist); did you mean '../{slug}/index.md'?") in " ".join(err.split())


def test_link_warnings_name_the_source_or_the_page_the_build_made(tmp_path):
    """Stop 33's new user (finding 1), the other forms of MkDocs' link warnings (1.6's wording; the build test
    above holds `in_sources` to the MkDocs installed): a link to an anchor of its own page, an
    absolute link, a link made by a template (no line to give), a page the build wrote itself."""
    from site_src.publishing.linkcheck import in_sources

    root, docs, site = tmp_path, tmp_path / "stage" / "docs", tmp_path / "stage" / "site"
    (root / "explainers").mkdir()
    (root / "explainers" / "alpha.md").write_text(
        "---\ntitle: A\n---\n\nSee [below](#the-code).\n\nAnd [a page](/explainers/beta/).\n", encoding="utf-8")
    for page in ("explainers/alpha/index.md", "explainers/beta/index.md", "glossary/index.md", "index.md"):
        (docs / page).parent.mkdir(parents=True, exist_ok=True)
        (docs / page).write_text("# x\n", encoding="utf-8")
    (site / "explainers" / "alpha").mkdir(parents=True)
    (site / "explainers" / "alpha" / "index.html").write_text(
        '<h1 id="alpha">A</h1><h2 id="the-cod">The code</h2><div id="__search"></div>', encoding="utf-8")
    warnings = [
        "Doc file 'explainers/alpha/index.md' contains a link '#the-code', but there is no such anchor on this page.",
        "Doc file 'explainers/alpha/index.md' contains an absolute link '/explainers/beta/', it was left as is.",
        "Doc file 'explainers/alpha/index.md' contains a link '../gamma/index.md', but the target "
        "'explainers/gamma/index.md' is not found among documentation files.",
        "Doc file 'glossary/index.md' contains a link '../explainers/betta/index.md', but the target "
        "'explainers/betta/index.md' is not found among documentation files.",
        "Something else entirely.",
    ]
    assert in_sources(warnings, root=root, docs_dir=docs, site_dir=site) == [
        "explainers/alpha.md:5: the link '#the-code' leads to the page of explainers/alpha.md, which does "
        "not contain an anchor '#the-code'; did you mean '#the-cod'?",
        "explainers/alpha.md:7: the link '/explainers/beta/' is absolute, which breaks when the site is "
        "served under a path; did you mean '../beta/index.md'?",
        "explainers/alpha.md (the link is not written in it: a template or a value made it): the link "
        "'../gamma/index.md' leads to no page (explainers/gamma/index.md does not exist); link another explainer "
        "as '../<slug>/index.md#<anchor>', the glossary as '../../glossary/index.md#<term>' (also results/, data/)",
        "docs/glossary/index.md (made by the build): the link '../explainers/betta/index.md' leads to no page "
        "(explainers/betta/index.md does not exist); did you mean '../explainers/beta/index.md'?",
        "Something else entirely.",
    ]


def test_link_warnings_are_listed_by_source_file_and_line(tmp_path):
    """Issue 26, a fresh user: MkDocs warns page by page in its navigation's order, and about
    anchors only after every page is converted, so the list jumped between files and lines. It
    goes by file and line, the pages the build made after, other warnings last."""
    import posixpath

    from site_src.publishing.linkcheck import in_sources

    root, docs, site = tmp_path, tmp_path / "stage" / "docs", tmp_path / "stage" / "site"
    (root / "explainers").mkdir()
    (root / "explainers" / "alpha.md").write_text(
        "---\ntitle: A\n---\n\n[one](../nowhere/index.md)\n\n[two](#gone)\n\n[three](../nothing/index.md)\n",
        encoding="utf-8")
    (root / "explainers" / "beta.md").write_text("---\ntitle: B\n---\n\n[four](../none/index.md)\n", encoding="utf-8")
    for page in ("explainers/alpha/index.md", "explainers/beta/index.md", "glossary/index.md"):
        (docs / page).parent.mkdir(parents=True, exist_ok=True)
        (docs / page).write_text("# x\n", encoding="utf-8")

    def missing(page, url):
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page), url))
        return (f"Doc file '{page}' contains a link '{url}', but the target '{target}' is not found among "
                "documentation files.")

    warnings = [  # beta before alpha in the navigation; the anchor's warning after every page's
        missing("explainers/beta/index.md", "../none/index.md"),
        "Something else entirely.",
        missing("glossary/index.md", "../explainers/betta/index.md"),
        missing("explainers/alpha/index.md", "../nothing/index.md"),
        missing("explainers/alpha/index.md", "../nowhere/index.md"),
        "Doc file 'explainers/alpha/index.md' contains a link '#gone', but there is no such anchor on this page.",
    ]
    found = in_sources(warnings, root=root, docs_dir=docs, site_dir=site)
    assert [m.split(": the link")[0] for m in found] == [
        "explainers/alpha.md:5", "explainers/alpha.md:7", "explainers/alpha.md:9",
        "explainers/beta.md:5", "docs/glossary/index.md (made by the build)", "Something else entirely."]


# ------------------------------------------------------------------ a fresh user's faults (issue 26, stop 35)

def _typo_explainer(root) -> int:
    """An explainer whose second `# %%` cell does not compile; the line of the typo in its source."""
    coin = (root / "explainers" / "coin-flips.md").read_text(encoding="utf-8")
    source = (coin.replace("title: Coin Flips", "title: Typo")
              .replace("```python explainer\n", "```python explainer\n# %% Flip\n")
              .replace("fig, ax = plt.subplots(figsize=(4, 3))", "# %% Draw\nfig, ax = plt.subplots(figsize=(4, 3)")
              )
    (root / "explainers" / "typo.md").write_text(source, encoding="utf-8")
    return source.split("\n").index("fig, ax = plt.subplots(figsize=(4, 3)") + 1


def test_a_syntax_error_is_reported_before_any_explainer_runs(tmp_path):
    """A typo in one explainer's code was reported only once every other explainer had run (about
    20 s into a cold build), and its own earlier cells ran first. The code is compiled when it is
    extracted: the build stops before any run starts, naming the explainer source and the line."""
    from site_src.build import BuildOptions, build
    from site_src.errors import BuildFailed

    root = _copy_fixture(tmp_path)
    line = _typo_explainer(root)
    started = []
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root, jobs=1, on_run_start=started.append))
    assert started == []  # neither coin-flips nor the typo's first cell ran
    [problem] = info.value.errors
    assert (problem.kind, problem.explainer, problem.line) == ("execution", "explainers/typo.md", line)
    assert str(problem).startswith(f"explainers/typo.md:{line}: raised SyntaxError: '(' was never closed")
    # Python's display: the source file and line, the line as written, the caret below it.
    assert f'File "explainers/typo.md", line {line}\n    fig, ax = plt.subplots(figsize=(4, 3)\n' in str(problem)
    assert "Traceback" not in str(problem) and "explainers/code/" not in str(problem)
    assert not (root / "explainers" / "code").exists()  # nothing written


def test_each_explainers_problems_are_listed_cause_first(built_copy):
    """A fresh user's fault 2: a template typo ({{ n_flip }}) was listed after what follows from it,
    the accepted value n_flips "no longer cited" (the check stage runs before pages are rendered).
    Each explainer's problems are listed together, the one that causes the others first."""
    from site_src.build import BuildOptions, NumbersMode, build
    from site_src.errors import BuildFailed

    root = built_copy
    build(BuildOptions(root=root, numbers=NumbersMode.ACCEPT))  # n_flips is an accepted, cited number
    page = root / "explainers" / "coin-flips.md"
    page.write_text(page.read_text(encoding="utf-8").replace("{{ n_flips | number }}", "{{ n_flip | number }}"),
                    encoding="utf-8")
    with pytest.raises(BuildFailed) as info:
        build(BuildOptions(root=root))
    kinds = [(e.explainer, e.kind) for e in info.value.errors]
    assert kinds == [("explainers/coin-flips.md", "template"), ("explainers/coin-flips.md", "check")]
    cause, consequence = info.value.errors
    assert "'n_flip' is not a name the code defines" in cause.message and "no longer cited" in consequence.message
    shown = str(info.value)
    assert shown.index("'n_flip' is not a name the code defines") < shown.index("no longer cited")


def test_a_multi_line_problem_is_indented_under_its_entry(tmp_path, capsys):
    """A fresh user's fault 3: a failed run's traceback (and the drifted values, and what the code
    printed) started at the margin, so its lines read as problems of their own. Every line of the
    list is now an entry ("  [kind] ...") or indented under one."""
    root = _copy_fixture(tmp_path)
    coin = (root / "explainers" / "coin-flips.md").read_text(encoding="utf-8")
    for slug, fault in (("fails-one", "undefined_name"), ("fails-two", "1 / 0")):
        (root / "explainers" / f"{slug}.md").write_text(
            coin.replace("title: Coin Flips", f"title: {slug}").replace("fig, ax =", f"{fault}\nfig, ax ="),
            encoding="utf-8")
    code, err = _build(root, capsys)
    assert code == 1
    listing = err[err.index("2 problem(s)"):].split("\n")[1:]
    entries = [line for line in listing if line.startswith("  [")]
    assert [e.split(": raised ")[1].split(":")[0] for e in entries] == ["NameError", "ZeroDivisionError"]
    # A traceback and "what it printed" belong to each entry: nothing else at the margin.
    assert "Traceback (most recent call last):" in err and "--- what it printed ---" in err
    strays = [line for line in listing if line.strip() and not line.startswith(("  [", "    "))]
    assert strays == []


def test_a_front_matter_value_of_the_wrong_type_or_a_missing_field_is_named_by_its_line(tmp_path):
    """A fresh user's fault 4, in an explainer's front matter: `timeout: ten` and a missing field were
    named by the field alone (a misspelled key already had its line). The value by its key's line;
    a missing field by the line of the mapping that lacks it (the front matter's first line, or
    the list item)."""
    from site_src.errors import ConfigError
    from site_src.sources.collect import collect

    root = _copy_fixture(tmp_path)
    page = root / "explainers" / "coin-flips.md"
    text = (page.read_text(encoding="utf-8").replace("tags: [fixture]", "tags: [fixture]\ntimeout: ten")
            .replace("subtitle: Is this coin fair?\n", "").replace("  - name: hand-written share agrees with numpy\n"
                                                                     "    assert:", "  - assert:"))
    page.write_text(text, encoding="utf-8")
    lines = text.split("\n")
    with pytest.raises(ConfigError) as info:
        collect(root / "explainers")
    problems = str(info.value).split("\n")
    assert f"explainers/coin-flips.md:{lines.index('timeout: ten') + 1}: front matter: timeout: " \
           "expected a whole number of seconds more than 0 and at most 86400, got 'ten'" in problems
    assert f"explainers/coin-flips.md:{lines.index('title: Coin Flips') + 1}: front matter: subtitle: " \
           "required field is missing" in problems
    item = next(i for i, s in enumerate(lines, start=1) if s.startswith("  - assert:"))
    assert f"explainers/coin-flips.md:{item}: front matter: checks.0.name: required field is missing" in problems


def test_a_compiler_warning_is_not_taken_for_a_syntax_error(tmp_path):
    """The early compile ignores the compiler's warnings (an invalid escape sequence): under
    `filterwarnings = error` (this suite's, or a user's -W error) one was raised as a SyntaxError
    the code does not have. The run reports the warning as before."""
    import warnings

    from site_src.sources.collect import collect
    from site_src.sources.extract import extract

    root = _copy_fixture(tmp_path)
    page = root / "explainers" / "coin-flips.md"
    page.write_text(page.read_text(encoding="utf-8").replace("n_flips = 2000", "n_flips = 2000\npattern = '\\d+'"),
                    encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [code] = extract(collect(root / "explainers"))
    assert "pattern = '\\d+'" in code.text
