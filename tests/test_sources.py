"""The sources stage: front matter (``collect.split_front_matter``), ``fairsite new``
(``scaffold``) and the generated code files (``extract``). That a scaffolded explainer builds is
``test_site_numbers.test_new_scaffolds_an_explainer_that_builds_at_once``."""

from __future__ import annotations

import os
import re
import textwrap

import pytest

from site_src.errors import ConfigError
from site_src.sources.collect import parse_explainer, split_front_matter
from site_src.sources.extract import extract, publish, stale_code_files
from site_src.sources.scaffold import new_explainer, slugify

_SOURCE = textwrap.dedent('''\
    ---
    title: Two Lines
    subtitle: A question?
    summary: One line.
    checks:
      - name: x is one
        assert: x == 1
    ---

    Prose {{ x | number }}.

    ```python explainer
    x = 1
    print(x)
    ```
    ''')


def _explainer(root, slug="two-lines", text=_SOURCE):
    path = root / "explainers" / f"{slug}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return parse_explainer(path)


# ------------------------------------------------------------------------------- front matter

def test_front_matter_is_the_yaml_between_the_first_two_rule_lines():
    value, end = split_front_matter(["---", "title: 'A: B'", "order: 3", "---", "body", "---"], shown="x.md")
    assert value == {"title": "A: B", "order": 3} and end == 3
    assert split_front_matter(["---", "---", "body"], shown="x.md") == ({}, 1)  # empty: no fields


@pytest.mark.parametrize(("lines", "message"), [
    (["title: x", "---"], r"x\.md:1: expected front matter starting with '---'"),
    (["---", "title: x"], r"x\.md:1: front matter opened with '---' is never closed"),
    (["---", "title: x", "tags: [a", "---"], r"x\.md:3:\d+: front matter is not valid YAML"),  # the broken line, counted in the file
    # PyYAML's line and column, counted in the file, in the file:line:column form of every message
    (["---", "title: x", "order: 3", "bad: : :", "---"], r"x\.md:4:6: front matter is not valid YAML"),
])
def test_front_matter_problems_name_the_file_and_line(lines, message):
    with pytest.raises(ConfigError, match=message):
        split_front_matter(lines, shown="x.md")


# ---------------------------------------------------------------------------------- fairsite new

@pytest.mark.parametrize(("title", "slug"), [("Bias: A Primer", "bias-a-primer"), ("Über Straße", "uber-strasse"),
                                             ("  Top 10   Mistakes ", "top-10-mistakes")])
def test_new_names_the_file_after_the_title(tmp_path, title, slug):
    path = new_explainer(tmp_path, title)
    assert path == tmp_path / "explainers" / f"{slug}.md"
    assert parse_explainer(path).meta.title == " ".join(title.split())


@pytest.mark.parametrize(("title", "message"), [
    ("", "the title must not be empty"),
    ("   \n\t", r"the title must not be empty, got '   \\n\\t'"),  # what was typed, not what is left
    ("!!! ???", r"cannot make a file name from the title '!!! \?\?\?'; use letters or digits"),
])
def test_new_refuses_a_title_it_cannot_name_a_file_after(tmp_path, title, message):
    with pytest.raises(ConfigError, match=message):
        new_explainer(tmp_path, title)
    assert not (tmp_path / "explainers").exists() or not any((tmp_path / "explainers").iterdir())


@pytest.mark.parametrize("title", ["Ισότητα", "公平性", "Ισότητα 2"])
def test_a_title_in_another_script_asks_for_slug_and_slug_names_the_file(tmp_path, capsys, title):
    # Issue 26, a fresh user: a Greek or Chinese title has no letter with an ASCII form; the
    # error said "use letters or digits" (they had), and there was no way to name the file. What
    # is left of "Ισότητα 2" would be "2.md", a name that says nothing: that is refused too.
    from site_src.cli import main as fairsite

    (tmp_path / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")
    assert fairsite(["--root", str(tmp_path), "new", title]) == 1
    said = " ".join("".join(capsys.readouterr()).split())
    assert "no letter of the Latin alphabet" in said and f'fairsite new "{title}" --slug' in said
    assert not (tmp_path / "explainers").exists() or not any((tmp_path / "explainers").iterdir())
    assert fairsite(["--root", str(tmp_path), "new", title, "--slug", "equality-2"]) == 0
    out, err = capsys.readouterr()
    # What to do next is the command's output, not a diagnostic on stderr.
    assert out.startswith("wrote explainers/equality-2.md; ") and "fairsite build" in out and not err
    path = tmp_path / "explainers" / "equality-2.md"
    assert parse_explainer(path).meta.title == title  # the title as given, the file as asked


@pytest.mark.parametrize("slug", ["Equality", "equality_2", "-equality", "ισότητα", ""])
def test_a_slug_that_cannot_name_a_page_is_refused(tmp_path, slug):
    with pytest.raises(ConfigError, match=rf"--slug must be lowercase words of a-z and 0-9 joined by '-'.*got {slug!r}"):
        new_explainer(tmp_path, "Ισότητα", slug=slug)
    assert not (tmp_path / "explainers").exists()


def test_a_long_title_gets_a_shortened_file_name_and_the_command_says_so(tmp_path, capsys):
    """A 400-character title raised a raw `OSError: File name too long` (issue 47, item 4)."""
    from site_src.cli import main as fairsite

    (tmp_path / "mkdocs.yml").write_text("site_name: x\n", encoding="utf-8")
    title = " ".join(f"word{k}" for k in range(70))  # 419 characters
    assert fairsite(["--root", str(tmp_path), "new", title]) == 0
    out = " ".join(capsys.readouterr().out.split())
    (path,) = (tmp_path / "explainers").glob("*.md")
    assert len(path.stem) <= 64 and f"{slugify(title)}-".startswith(f"{path.stem}-")  # cut between words
    assert out.startswith(f"wrote explainers/{path.name} (a file name cut from the title's {len(slugify(title))} "
                          "characters to")
    assert "--slug" in out
    assert parse_explainer(path).meta.title == title  # the title is kept whole


def test_a_slug_too_long_for_a_file_name_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"--slug must be at most 64 characters \(the file's name and the page's "
                                          r"address\), got 299; e\.g\. 'ab-ab"):
        new_explainer(tmp_path, "A title", slug="-".join(["ab"] * 100))
    assert not (tmp_path / "explainers").exists()


def test_accented_latin_letters_keep_their_base_form():
    assert slugify("Équité: ça compte") == "equite-ca-compte"


def test_new_never_overwrites_an_explainer(tmp_path):
    path = new_explainer(tmp_path, "Bias: A Primer")
    path.write_text("the author's work", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bias-a-primer\.md already exists; choose another title"):
        new_explainer(tmp_path, "Bias A Primer")  # another title, the same file name
    assert path.read_text(encoding="utf-8") == "the author's work"
    assert slugify("Bias A Primer") == "bias-a-primer"


def test_new_refuses_the_title_of_an_existing_explainer_naming_its_file(tmp_path):
    """Issue 25.15b: a file named otherwise holds the title; a second page with it is refused."""
    existing = new_explainer(tmp_path, "Bias: A Primer").rename(tmp_path / "explainers" / "primer.md")
    # The title quoted as the file has it (a fresh user was shown neither the file's nor the one typed).
    with pytest.raises(ConfigError, match=r"explainers/primer\.md already has the title 'Bias: A Primer', the same to "
                                          r"a reader as 'bias: a PRIMER'; choose another"):
        new_explainer(tmp_path, "bias:  a PRIMER")  # the same title to a reader: case and spaces aside
    assert sorted(p.name for p in (tmp_path / "explainers").iterdir()) == ["primer.md"]
    assert existing.exists()


def test_collect_refuses_two_explainers_with_one_title(tmp_path):
    """Issue 25.15b: two pages titled alike could not be told apart in the navigation and search."""
    from site_src.sources.collect import collect

    first = new_explainer(tmp_path, "Bias: A Primer")
    second = tmp_path / "explainers" / "primer-again.md"
    second.write_text(first.read_text(encoding="utf-8").replace("title: 'Bias: A Primer'", "title: 'BIAS:  a primer'"),
                      encoding="utf-8")
    assert "BIAS:  a primer" in second.read_text(encoding="utf-8")
    with pytest.raises(ConfigError, match=r"explainers/primer-again\.md: title: 'BIAS:  a primer' is already the title "
                                          r"of explainers/bias-a-primer\.md"):
        collect(tmp_path / "explainers")



def test_two_explainers_with_one_title_name_the_newer_file_first(tmp_path):
    """Stop 33 (a new user's finding 4): a page added with the title of an older one is the one to
    fix; the error named the untouched file first (the slugs' order), here the older one."""
    from site_src.sources.collect import collect

    old = new_explainer(tmp_path, "Bias: A Primer").rename(tmp_path / "explainers" / "zz-primer.md")
    added = tmp_path / "explainers" / "aa-primer.md"  # sorts first, yet it is the one just written
    added.write_text(old.read_text(encoding="utf-8"), encoding="utf-8")
    os.utime(old, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    os.utime(added, ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))
    with pytest.raises(ConfigError) as info:
        collect(tmp_path / "explainers")
    assert str(info.value) == ("explainers/aa-primer.md: title: 'Bias: A Primer' is already the title of "
                               "explainers/zz-primer.md (the older file); give each explainer its own title")
    # Edited later, the old page is the one named first.
    os.utime(old, ns=(3_000_000_000_000_000_000, 3_000_000_000_000_000_000))
    with pytest.raises(ConfigError, match=r"^explainers/zz-primer\.md: title: 'Bias: A Primer' is already the title of "
                                          r"explainers/aa-primer\.md \(the older file\)"):
        collect(tmp_path / "explainers")


def test_an_unknown_front_matter_field_is_named_with_its_line(tmp_path):
    """Stop 33's new user (as finding 5 for manifests): a misspelled front matter key was named without the
    line it is on, at the top level or inside a check."""
    path = new_explainer(tmp_path, "Bias: A Primer")
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[2].startswith("subtitle:")
    lines[2] = lines[2].replace("subtitle:", "subtitel:", 1)
    [check] = [i for i, line in enumerate(lines) if line.lstrip().startswith("assert:")]
    lines[check] = lines[check].replace("assert:", "asert:", 1)
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        parse_explainer(path)
    problems = str(info.value).split("\n")
    assert "explainers/bias-a-primer.md:3: front matter: subtitel: unknown field (did you mean 'subtitle'?)" in problems
    assert (f"explainers/bias-a-primer.md:{check + 1}: front matter: checks.0.asert: unknown field "
            "(did you mean 'assert'?)") in problems

def test_tags_written_as_one_line_of_text_are_shown_as_the_list_they_were_meant_to_be(tmp_path):
    path = new_explainer(tmp_path, "Bias: A Primer")
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    line = next(i for i, x in enumerate(lines) if x.startswith("tags:"))
    ends = next(i for i in range(line + 1, len(lines)) if not lines[i].startswith(("-", " ")))  # its items
    lines[line:ends] = ["tags: permutation test, small samples"]
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        parse_explainer(path)
    line += 1
    assert (f"explainers/bias-a-primer.md:{line}: front matter: tags: expected a list, got the text "
            "'permutation test, small samples'; write it as a YAML list: `tags: [permutation test, small samples]`"
            ) in str(info.value).split("\n")


# ---------------------------------------------------------------------------------- extract

def test_the_generated_file_says_where_it_comes_from_and_maps_lines_back(tmp_path):
    e = _explainer(tmp_path)
    [code] = extract([e])
    assert code.path == tmp_path / "explainers" / "code" / "two-lines.py"
    assert code.text == ("# Generated from explainers/two-lines.md by `fairsite build`; edit the explainer, not this file.\n"
                         "# Run it from the repository root:  python explainers/code/two-lines.py\n"
                         "x = 1\nprint(x)\n")
    source_lines = _SOURCE.split("\n")
    assert code.source_line(1) is None and code.source_line(2) is None  # the header is not code
    assert source_lines[code.source_line(3) - 1] == "x = 1"
    assert source_lines[code.source_line(4) - 1] == "print(x)"
    assert not code.path.exists()  # extract describes; publish writes, once the build succeeded


def test_publish_writes_changed_files_and_removes_orphans(tmp_path):
    code_dir = tmp_path / "explainers" / "code"
    e = _explainer(tmp_path)
    code_files = extract([e])
    code_dir.mkdir(parents=True)
    (code_dir / "deleted-explainer.py").write_text("# its explainer is gone\n")
    (code_dir / "notes.txt").write_text("not a generated file")
    publish(code_files, code_dir)
    assert sorted(p.name for p in code_dir.iterdir()) == ["notes.txt", "two-lines.py"]
    assert (code_dir / "two-lines.py").read_text() == code_files[0].text
    # Unchanged: not rewritten (serve's watchers and mtimes stay quiet).
    os.utime(code_dir / "two-lines.py", ns=(1, 1))
    publish(code_files, code_dir)
    assert (code_dir / "two-lines.py").stat().st_mtime_ns == 1
    assert stale_code_files([e], code_dir) == []


def test_stale_code_files_name_what_differs_is_missing_or_has_no_source(tmp_path):
    code_dir = tmp_path / "explainers" / "code"
    e, other = _explainer(tmp_path), _explainer(tmp_path, "other")
    publish(extract([e]), code_dir)
    (code_dir / "two-lines.py").write_text("edited by hand\n")
    (code_dir / "gone.py").write_text("")
    assert stale_code_files([e, other], code_dir) == [
        "explainers/code/two-lines.py: differs from its explainer source; run `fairsite build`",
        "explainers/code/other.py: missing; run `fairsite build` to generate it",
        "explainers/code/gone.py: no explainer source generates it; delete it",
    ]


def test_a_fence_left_open_is_named_at_its_line_in_the_file_line_form(tmp_path):
    # It read "explainers/x.md:line 12: fenced block is never closed": every message names a place
    # as file:line (a fresh user met three forms: file:58:, file: line 79:, file, line 58:).
    text = _SOURCE[:_SOURCE.rindex("```")]  # the closing fence gone
    opened = text.split("\n").index("```python explainer") + 1
    with pytest.raises(ConfigError) as err:
        _explainer(tmp_path, text=text)
    assert f"explainers/two-lines.md:{opened}: fenced block is never closed" in str(err.value)


# ------------------------------------------------------------- a fresh user's front-matter values

def test_an_unquoted_title_holding_a_colon_is_named_with_the_quoted_form_that_parses():
    lines = ["---", "title: Equalized odds: checking both error rates", "order: 3", "---"]
    with pytest.raises(ConfigError) as err:
        split_front_matter(lines, shown="x.md")
    message = str(err.value)
    assert re.match(r"x\.md:2:\d+: front matter is not valid YAML", message), message
    fixed = message.split("must be in quotes: ", 1)[1]
    assert fixed == 'title: "Equalized odds: checking both error rates"'
    assert split_front_matter(["---", fixed, "---"], shown="x.md")[0] == {"title": "Equalized odds: checking both error rates"}


@pytest.mark.parametrize(("value", "said"), [
    # What to write, in YAML's words (true, not True), not pydantic's "Input should be a valid integer"
    ("true", "expected a whole number of seconds more than 0 and at most 86400, got true"),  # not 1 second
    # a larger one overflowed the socket's timeout
    ("10000000000", "expected more than 0 and at most 86400 seconds, got 10000000000"),
    ("'600'", "expected a whole number of seconds more than 0 and at most 86400, got '600'"),
    ("10s", "expected a whole number of seconds more than 0 and at most 86400, got '10s'"),
    ("0", "expected more than 0 and at most 86400 seconds, got 0"),
])
def test_a_timeout_that_is_not_a_whole_number_of_seconds_up_to_a_day_is_refused(tmp_path, value, said):
    with pytest.raises(ConfigError, match=f"two-lines.md:2: front matter: timeout: {re.escape(said)}$"):
        _explainer(tmp_path, text=_SOURCE.replace("---\n", f"---\ntimeout: {value}\n", 1))
    assert _explainer(tmp_path, text=_SOURCE.replace("---\n", "---\ntimeout: 86400\n", 1)).meta.timeout == 86400
