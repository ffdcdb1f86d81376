"""A manifest's problems are named by file and line (issue 26, stop 35: a fresh user's fault 4).

A misspelled key already had its line; a missing required field and a value of the wrong type
were named by their field alone, so the user searched the file for them. Now a wrong value is
named by the line of its key, and a missing field by the line of the mapping that lacks it.
The expected lines are found here by reading the text, not from the loader.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from faircode.data import project_root
from faircode.manifest import ManifestError, load_manifest

ROOT = project_root()
VALID = (ROOT / "tests" / "fixtures" / "manifests" / "valid.yaml").read_text(encoding="utf-8")


def _problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "audits" / "fixture" / "audit.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ManifestError) as info:
        load_manifest(path, root=tmp_path)
    return info.value.problems


def _line_of(text: str, start: str) -> int:
    """The 1-based line of ``text`` that starts with ``start`` (after its indentation); exactly one."""
    [line] = [i for i, s in enumerate(text.split("\n"), start=1) if s.lstrip().startswith(start)]
    return line


def _with_data(text: str) -> str:
    # The data file by absolute path: the manifest lives in tmp_path.
    return text.replace("file: data/arrests.csv", f"file: {ROOT / 'data' / 'arrests.csv'}")


@pytest.mark.parametrize("old, new, key, message", [
    ("random_state: 0", "random_state: zero", "random_state:",
     "random_state: expected a whole number at least 0 and at most 4294967295, got 'zero'"),
    ("test_size: 0.2", "test_size: ten", "test_size:",
     "test_size: expected a number more than 0 and less than 1, got 'ten'"),
    ("models: [logistic_regression]", "models: logistic_regression, dummy", "models:",
     "models: expected a list, got the text 'logistic_regression, dummy'; write it as a YAML list: "
     "`models: [logistic_regression, dummy]`"),
], ids=["int", "float", "list"])
def test_a_wrongly_typed_value_is_named_by_the_file_and_the_line_of_its_key(tmp_path, old, new, key, message):
    text = _with_data(VALID.replace(old, new))
    assert _problems(tmp_path, text) == [f"audits/fixture/audit.yaml:{_line_of(text, key)}: {message}"]


@pytest.mark.parametrize("old, new, mapping, field", [
    # A nested mapping lacks it: the line of its key.
    ("{column: released, positive", "{positive", "target:", "target.column"),
    # An item of a list lacks it: the item's line.
    ("disadvantaged: [Black], disadvantaged_label", "disadvantaged_label", "- {name: colour", "protected[0].disadvantaged"),
    # The top level lacks it: its first key's line (the comment above it is not the mapping).
    ("name: Fixture\n", "", "dataset:", "name"),
], ids=["nested", "list-item", "top-level"])
def test_a_missing_field_is_named_by_the_line_of_the_mapping_that_lacks_it(tmp_path, old, new, mapping, field):
    text = _with_data(VALID.replace(old, new))
    assert old in VALID
    assert _problems(tmp_path, text) == [
        f"audits/fixture/audit.yaml:{_line_of(text, mapping)}: {field}: required field is missing"]


def test_the_site_build_names_the_manifest_and_the_line(tmp_path):
    """`fairsite build` stops at a manifest that does not validate (stage 1): its message is the
    loader's, so the file and the line reach the user."""
    from site_src.build import _check_audits
    from site_src.errors import BuildFailed
    from site_src.execution import cache

    (tmp_path / "data").mkdir()
    text = _with_data(VALID.replace("random_state: 0", "random_state: zero"))
    path = tmp_path / "audits" / "fixture" / "audit.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BuildFailed) as info:
        _check_audits(tmp_path, passed=cache.PassedChecks(tmp_path / "cache", enabled=False))
    assert f"audits/fixture/audit.yaml:{_line_of(text, 'random_state:')}: random_state: " in str(info.value)


@pytest.mark.parametrize("old, new, key, message", [
    ("models: [logistic_regression]", "models: [logistic_regresion]", "models:",
     "models[0]: unknown name 'logistic_regresion' (did you mean 'logistic_regression'?)"),
    ("name: colour, column: colour,", "name: colour, column: colur,", "- {name: colour",
     "protected[0].column: 'colur' is not a column of"),
], ids=["model", "column"])
def test_a_problem_the_data_or_the_registry_finds_is_named_by_its_line_too(tmp_path, old, new, key, message):
    # A fresh user (stop 40): the schema's problems had their line, the checks that need the data
    # or the model registry did not (`audit.yaml: models[0]: unknown name ...`).
    text = _with_data(VALID).replace(old, new)
    assert new in text
    [problem] = _problems(tmp_path, text)
    assert problem.startswith(f"audits/fixture/audit.yaml:{_line_of(text, key)}: {message}"), problem


@pytest.mark.parametrize("old, new, hint", [
    # PyYAML stops on the line after the bracket left open: the message says where it opened.
    ("models: [logistic_regression]", "models: [logistic_regression", "(the '[' opened on line {line})"),
    # The writer's mistake the front matter already explained: a value holding ': '.
    ("models: [logistic_regression]", "models: a: b", "; a value holding ': ' must be in quotes: models: \"a: b\""),
], ids=["bracket", "colon"])
def test_a_yaml_syntax_error_says_what_to_do_as_front_matter_does(tmp_path, old, new, hint):
    text = VALID.replace(old, new)
    [problem] = _problems(tmp_path, text)
    assert "YAML syntax error" in problem
    assert problem.endswith(hint.format(line=_line_of(text, "models:"))), problem


def test_a_tab_in_the_indentation_is_named_as_such(tmp_path):
    lines = VALID.split("\n")
    i = next(i for i, s in enumerate(lines) if s.startswith("  ") and s.strip())
    lines[i] = "\t" + lines[i].lstrip()
    [problem] = _problems(tmp_path, "\n".join(lines))
    assert problem.startswith(f"audits/fixture/audit.yaml:{i + 1}:1: YAML syntax error")
    assert problem.endswith("; YAML indents with spaces, not tabs"), problem
