"""load_manifest: the four real manifests load; every kind of broken manifest is reported,
with its file and field, all problems in one error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from faircode.data import project_root, sha256_of
from faircode.manifest import (
    MODEL_NAMES,
    STRATEGY_NAMES,
    AuditManifest,
    ManifestError,
    load_manifest,
    read_manifest_yaml,
)

ROOT = project_root()
FIX = ROOT / "tests" / "fixtures" / "manifests"
AUDITS = ["benefits-denial", "german-credit", "recidivism-risk", "arrest-release"]


def _problems(name: str) -> list[str]:
    with pytest.raises(ManifestError) as info:
        load_manifest(FIX / name)
    return info.value.problems


def _valid() -> dict:
    """The valid fixture's content, to change one field of."""
    return yaml.safe_load((FIX / "valid.yaml").read_text())


def _write(tmp_path, raw) -> Path:
    """``raw`` as ``tmp_path/audit.yaml``, its data file named by absolute path."""
    raw["dataset"]["file"] = str(ROOT / "data" / "arrests.csv")
    path = tmp_path / "audit.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


@pytest.mark.parametrize("slug", AUDITS)
def test_real_manifests_load(slug):
    m = load_manifest(ROOT / "audits" / slug / "audit.yaml")
    assert isinstance(m, AuditManifest)
    assert m.slug == slug
    assert m.test_size == 0.2
    assert set(m.models) == set(MODEL_NAMES) and set(m.strategies) == set(STRATEGY_NAMES)
    assert m.target.meaning and m.protected


# From shared/data/PROVENANCE.md (the published files' hashes), not from our manifests.
PROVENANCE_SHA256 = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "arrests.csv": "b795af23d2704da70cc4b265e1700c69faa03659283091f01e74c3ea1f813c6d",
    "compas-scores-two-years.csv": "f439bd5e8d1742c9ceacd4dec0d67d1b401f633138d2308955c6ae22f9656f47",
    "german.data": "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
    "values_maps.json": "73a48f120cdb8019fb9f0ad84078ef1ba109f1100bbcc6cbcf925d60e6adcd4e",
}


@pytest.mark.parametrize("slug", AUDITS)
def test_real_manifest_sha256_is_the_provenance_hash(slug):
    m = load_manifest(ROOT / "audits" / slug / "audit.yaml")
    files = [m.dataset] + ([m.dataset.decode] if m.dataset.decode else [])
    for spec in files:
        name = Path(spec.file).name
        assert spec.sha256 == PROVENANCE_SHA256[name] == sha256_of(ROOT / spec.file)


def test_valid_fixture_loads():
    m = load_manifest(FIX / "valid.yaml")
    assert m.target.positive == ["No"]
    assert m.root == ROOT


def test_unknown_keys_get_a_did_you_mean():
    problems = _problems("unknown_key.yaml")
    assert ("tests/fixtures/manifests/unknown_key.yaml:8: protected[0].disadvantged: unknown key "
            "'disadvantged' (did you mean 'disadvantaged', 'advantaged' or 'disadvantaged_label'?)") in problems
    assert any(p.endswith("core_feature: unknown key 'core_feature' (did you mean 'core_features'?)")
               for p in problems)



def test_a_misspelled_key_is_named_with_its_line_and_the_close_allowed_keys(tmp_path):
    """Stop 33 (a new user's finding 5): an unknown key named its field path but not its line, and
    at most one close key. The lines expected are where the text below puts each key."""
    text = (FIX / "valid.yaml").read_text(encoding="utf-8")
    text = text.replace("random_state: 0", "randm_state: 0\nrandom_state: 0")  # top level, in block style
    text = text.replace("{sep: \",\", header: true}", "{seperator: \",\", header: true}")  # nothing close
    text = text.replace("disadvantaged_label: Black}", "disadvantaged_label: Black, name_: x}")  # in a flow mapping
    text = text.replace("test_size: 0.2", "test_size: 0.2\ntest_sizes: 0.2")  # close to one key
    path = tmp_path / "audits" / "x" / "audit.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text.replace("data/arrests.csv", str(ROOT / "data" / "arrests.csv")), encoding="utf-8")
    lines = path.read_text(encoding="utf-8").splitlines()

    def line_of(fragment):
        [n] = [i for i, line in enumerate(lines, start=1) if fragment in line]
        return n

    with pytest.raises(ManifestError) as info:
        load_manifest(path, root=ROOT)
    problems = info.value.problems
    shown = str(path)
    assert (f"{shown}:{line_of('randm_state')}: randm_state: unknown key 'randm_state' "
            "(did you mean 'random_state'?)") in problems
    assert (f"{shown}:{line_of('test_sizes')}: test_sizes: unknown key 'test_sizes' "
            "(did you mean 'test_size'?)") in problems
    assert (f"{shown}:{line_of('seperator')}: dataset.parse.seperator: unknown key 'seperator' "
            "(expected one of: sep, header, names, na_values, skipinitialspace, comment, skiprows)") in problems
    [name_] = [p for p in problems if "'name_'" in p]
    assert name_.startswith(f"{shown}:{line_of('name_: x')}: protected[0].name_: unknown key 'name_' (did you mean ")
    # Every close allowed key, as difflib ranks them (an independent call on the schema's own keys).
    import difflib

    from faircode.manifest import ProtectedAttribute
    allowed = [f.alias or n for n, f in ProtectedAttribute.model_fields.items()]
    close = difflib.get_close_matches("name_", allowed, n=3)
    assert len(close) >= 1 and close[0] == "name"
    assert all(repr(c) in name_ for c in close)

def test_missing_target():
    with pytest.raises(ManifestError, match=r"missing_target\.yaml:1: target: required field is missing"):
        load_manifest(FIX / "missing_target.yaml")


def test_unknown_column_is_checked_against_the_data_header():
    with pytest.raises(ManifestError, match=r"unknown_column\.yaml:\d+: " + re.escape(
            "protected[1].column: 'sexx' is not a column of arrests.csv (did you mean 'sex'?)")):
        load_manifest(FIX / "unknown_column.yaml")
    assert any("core_features[1]: 'checkz' is not a column" in p for p in _problems("unknown_column.yaml"))


def test_wrong_sha256_gives_expected_and_actual():
    actual = sha256_of(ROOT / "data" / "arrests.csv")
    with pytest.raises(ManifestError, match=rf"dataset\.sha256: expected a{{64}} but data/arrests\.csv has {actual}"):
        load_manifest(FIX / "wrong_sha256.yaml")


def test_unquoted_numeric_sha256_is_explained(tmp_path):
    raw = _valid()
    raw["dataset"]["sha256"] = 12345
    with pytest.raises(ManifestError, match=r"dataset\.sha256: must be 64 hex digits as text; YAML read 12345"):
        load_manifest(_write(tmp_path, raw))


def test_bad_filters():
    problems = "\n".join(_problems("bad_filters.yaml"))
    assert re.search(r"filters\[0\]: op 'between' needs `value: \[low, high\]`", problems)
    assert re.search(r"filters\[1\]\.op: Input should be 'eq', 'ne'", problems)
    assert re.search(r"filters\[2\]: op 'in' needs `value` to be a non-empty list", problems)
    assert re.search(r"filters\[3\]\.column: 'agee' is not a column of arrests\.csv \(did you mean 'age'\?\)", problems)


def test_a_wrong_op_names_every_op_once_and_nothing_follows_from_it(tmp_path):
    # A derived column's `op` is a comparison or 'map': the message lists them all (not "expected
    # a number, text..."), and the protected attribute that names the column is not a second error.
    raw = _valid()
    raw["derived"] = [{"name": "young", "from": "age", "op": "less", "value": 25}]
    raw["protected"].append({"name": "age", "column": "young", "disadvantaged": [True],
                             "disadvantaged_label": "under 25"})
    path = _write(tmp_path, raw)
    line = path.read_text().split("\n").index("  op: less") + 1
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    ops = ["eq", "ne", "lt", "le", "gt", "ge", "in", "not_in", "between", "map"]  # DerivedColumn's docstring
    assert info.value.problems == [
        f"{path}:{line}: derived[0].op: Input should be {', '.join(map(repr, ops[:-1]))} or 'map', "
        f"got 'less' (did you mean 'le'?)"]
    # A filter's `op` allows the comparisons alone; an op written as its symbol is named.
    raw = _valid()
    raw["filters"] = [{"column": "age", "op": "<", "value": 25}]
    with pytest.raises(ManifestError) as info:
        load_manifest(_write(tmp_path, raw))
    assert [re.sub(r"^.*audit\.yaml:\d+: ", "", p) for p in info.value.problems] == [
        f"filters[0].op: Input should be {', '.join(map(repr, ops[:-2]))} or 'between', got '<' (did you mean 'lt'?)"]


@pytest.mark.parametrize("fixture, messages", [
    pytest.param("bad_derived.yaml", [
        "derived[0]: op 'map' needs a non-empty `mapping`",
        "derived[1].from: 'agee' is not a column of arrests.csv (did you mean 'age'?)",
        "derived[2].name: 'sex' already exists",
        "derived[3]: op 'lt' needs a number as `value`, got 'twenty'",
    ], id="bad derived columns"),
    pytest.param("cross_field.yaml", [
        "protected[0]: values ['Black'] are in both `disadvantaged` and `advantaged`",
        "proxies[0].column: 'colour' is a protected column, not a proxy",
        "core_features[1]: 'citizen' is a declared proxy",
        "core_features[2]: 'colour' is a protected column",
        "core_features[3]: 'year' is excluded",
    ], id="contradicting roles"),
])
def test_every_problem_of_a_broken_manifest_is_reported(fixture, messages):
    problems = "\n".join(_problems(fixture))
    for message in messages:
        assert message in problems


def test_derived_column_can_be_used_by_later_fields(tmp_path):
    raw = _valid()
    raw["derived"] = [{"name": "young", "from": "age", "op": "lt", "value": 25}]
    raw["protected"].append({"name": "age", "column": "young", "disadvantaged": [True],
                             "disadvantaged_label": "Under 25"})
    m = load_manifest(_write(tmp_path, raw), root=ROOT)
    assert m.derived[0].from_ == "age"


def test_test_size_above_one():
    with pytest.raises(ManifestError,
                       match=r"bad_test_size\.yaml:10: test_size: expected more than 0 and less than 1, got 1\.5"):
        load_manifest(FIX / "bad_test_size.yaml")


@pytest.mark.parametrize("value, rule", [(0, "more than 0 and less than 1, got 0"),
                                         (1, "more than 0 and less than 1, got 1"),
                                         (-0.1, "more than 0 and less than 1, got -0.1"),
                                         ("half", "a number more than 0 and less than 1, got 'half'")])
def test_test_size_outside_open_unit_interval(tmp_path, value, rule):
    raw = _valid()
    raw["test_size"] = value
    with pytest.raises(ManifestError, match=rf"audit\.yaml:\d+: test_size: expected {re.escape(rule)}$"):
        load_manifest(_write(tmp_path, raw), root=ROOT)


def test_unknown_model_and_strategy_names():
    problems = _problems("unknown_names.yaml")
    assert any("models[0]: unknown name 'logistic_regresion' (did you mean 'logistic_regression'?); "
               "valid names: logistic_regression, random_forest, gradient_boosting" in p for p in problems)
    assert any("models[1]: unknown name 'svm'" in p for p in problems)
    assert any("strategies[1]: unknown name 'S9'; valid names: S0, S1, S2, S3" in p for p in problems)


def test_headerless_names_must_match_the_field_count():
    with pytest.raises(ManifestError, match=r"dataset\.parse: cannot read data/arrests\.csv with these "
                                            r"options: `names` has 3 entries but rows have 8 fields"):
        load_manifest(FIX / "bad_names.yaml")


def test_yaml_syntax_error_names_file_and_line():
    with pytest.raises(ManifestError, match=r"yaml_syntax\.yaml:4:12: YAML syntax error"):
        load_manifest(FIX / "yaml_syntax.yaml")


def test_one_error_lists_every_problem():
    with pytest.raises(ManifestError, match=r"^5 problems in audit manifest:") as info:
        load_manifest(FIX / "many_problems.yaml")
    problems = info.value.problems
    assert len(problems) == 5
    # "<file>: <field>: ...", or "<file>:N: <field>: ..." with the line where it is known
    assert all(re.match(r"tests/fixtures/manifests/many_problems\.yaml(:\d+)?: ", p) for p in problems), problems
    fields = sorted(p.split(": ", 1)[1].split(": ")[0] for p in problems)
    assert fields == ["colour_note", "dataset.sha256", "models[0]", "target.column", "test_size"]
    # the message carries every problem too, not only the attribute
    assert all(p in str(info.value) for p in problems)


def test_manifest_error_is_caught_as_a_value_error_naming_file_and_field(tmp_path):
    # Callers that handle bad input generically (`except ValueError`, as the faircode command line
    # does) must catch a broken manifest, and still learn which file and which field.
    raw = _valid()
    raw["test_size"] = 1.5
    path = _write(tmp_path, raw)
    try:
        load_manifest(path)
    except ValueError as exc:
        caught = exc
    else:
        pytest.fail("a manifest with test_size 1.5 loaded")
    assert isinstance(caught, ManifestError)
    line = path.read_text().split("\n").index("test_size: 1.5") + 1
    assert f"{path}:{line}: test_size: expected more than 0 and less than 1, got 1.5" in str(caught)
    assert caught.problems == [f"{path}:{line}: test_size: expected more than 0 and less than 1, got 1.5"]


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="nope.yaml"):
        load_manifest(FIX / "nope.yaml")


def test_top_level_must_be_a_mapping(tmp_path):
    path = tmp_path / "audit.yaml"
    path.write_text("- just\n- a list\n")
    with pytest.raises(ManifestError, match=r"\(top level\): expected a mapping of keys, got list"):
        load_manifest(path)


def test_name_lists_agree_with_the_code():
    from faircode.models import MODELS
    from faircode.strategies import STRATEGIES
    assert tuple(MODELS) == MODEL_NAMES
    assert tuple(STRATEGIES) == STRATEGY_NAMES


def test_favourable_outcome_is_required_and_explained(tmp_path):
    raw = _valid()
    del raw["target"]["favourable"]
    with pytest.raises(ManifestError, match=r"target\.favourable: required field is missing; say which class "
                                            r"of the target is the favourable outcome for the person"):
        load_manifest(_write(tmp_path, raw))


def test_favourable_outcome_and_missing_policy_values(tmp_path):
    raw = _valid()
    raw["target"]["favourable"] = "released"
    raw["target"]["missing"] = "impute"
    raw["protected"][0]["missing"] = "skip"
    with pytest.raises(ManifestError) as info:
        load_manifest(_write(tmp_path, raw))
    text = str(info.value)
    assert "target.favourable: Input should be 'positive' or 'negative'" in text
    assert "target.missing: Input should be 'drop' or 'fail'" in text
    assert "protected[0].missing: Input should be 'drop' or 'fail'" in text


@pytest.mark.parametrize("slug", AUDITS)
def test_real_manifests_declare_favourable_and_missing(slug):
    m = load_manifest(ROOT / "audits" / slug / "audit.yaml")
    # Every audit's positive class is the harmful flag, so not being flagged is favourable.
    assert m.target.favourable == "negative"
    assert m.target.missing is not None and all(p.missing is not None for p in m.protected)


# --------------------------------------------------------------------------- one label, one group (issue 25)


def _with_groups(colour_labels: dict, sex_labels: dict | None = None, *, intersect: bool = False) -> dict:
    raw = _valid()
    attributes = [{"name": "colour", "column": "colour", "categories": ["Black", "White"], "reference": "White",
                   "labels": colour_labels}]
    if sex_labels is not None:
        attributes.append({"name": "sex", "column": "sex", "categories": ["Male", "Female"], "reference": "Male",
                           "labels": sex_labels})
    raw["groups"] = {"min_size": 1, "attributes": attributes}
    if intersect:
        raw["groups"]["intersections"] = [{"name": "colour_x_sex", "attributes": ["colour", "sex"],
                                           "reference": ["White", "Male"]}]
    return raw


@pytest.mark.parametrize("labels, named", [
    ({"Black": "People", "White": "People"}, ["'People'", "'Black'", "'White'"]),  # one label for two groups
    ({"Black": "White"}, ["'White'", "'Black'"]),  # a label that is another group's own name
    ({"Black": "White", "White": "Whites"}, ["'White'", "'Black'"]),  # ... even when that group is relabelled
])
def test_two_groups_given_one_label_are_refused_naming_the_label_and_both_groups(tmp_path, labels, named):
    # On main these loaded, and every table then counted both groups as one (854 + 789 rows shown as one).
    with pytest.raises(ManifestError) as info:
        load_manifest(_write(tmp_path, _with_groups(labels)))
    (problem,) = info.value.problems
    assert "groups.attributes[0]" in problem
    for name in named:
        assert name in problem, (name, problem)


def test_intersection_cells_joined_to_one_name_are_refused(tmp_path):
    # ("x & y", "z") and ("x", "y & z") both join to "x & y & z" with the " & " of intersections.
    raw = _with_groups({"Black": "x & y", "White": "x"}, {"Male": "z", "Female": "y & z"}, intersect=True)
    with pytest.raises(ManifestError) as info:
        load_manifest(_write(tmp_path, raw))
    (problem,) = info.value.problems
    assert "groups.intersections[0]" in problem and "'x & y & z'" in problem
    assert "colour='Black' + sex='Male'" in problem and "colour='White' + sex='Female'" in problem


def test_distinct_labels_and_an_unambiguous_ampersand_still_load(tmp_path):
    raw = _with_groups({"Black": "Black people", "White": "White people"}, {"Female": "Women & girls"},
                       intersect=True)
    assert load_manifest(_write(tmp_path, raw)).groups.attributes[1].display_name("Female") == "Women & girls"


def test_a_protected_attribute_with_one_label_for_both_groups_is_refused(tmp_path):
    raw = _valid()
    raw["protected"][0].update(advantaged=["White"], advantaged_label="Black")
    with pytest.raises(ManifestError, match=r"protected\[0\].*the label 'Black' is given to both groups"):
        load_manifest(_write(tmp_path, raw))


def test_yaml_key_line_follows_keys_and_list_items_and_says_none_when_lost():
    from faircode.manifest import yaml_key_line

    text = "name: x\nprotected:\n  - {name: a}\n  - name: b\n    colr: c\n"
    assert yaml_key_line(text, ("protected", 1, "colr")) == 5
    assert yaml_key_line(text, ("protected", 1)) == 4
    assert yaml_key_line(text, ("name",)) == 1
    assert yaml_key_line(text, ("protected", 2, "colr")) is None  # no third item
    assert yaml_key_line(text, ("nme",)) is None
    assert yaml_key_line("name: [unclosed\n", ("name",)) is None


def test_a_key_given_twice_is_named_with_both_lines(tmp_path):
    """Stop 33's new user: a second `test_size:` silently replaced the first (PyYAML keeps the last),
    and the error that followed, if any, was far from its cause. YAML requires unique keys."""
    text = (FIX / "valid.yaml").read_text(encoding="utf-8").replace("test_size: 0.2", "test_size: 0.2\ntest_size: 0.3")
    path = tmp_path / "audits" / "x" / "audit.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text.replace("data/arrests.csv", str(ROOT / "data" / "arrests.csv")), encoding="utf-8")
    lines = path.read_text(encoding="utf-8").splitlines()
    first, second = [i for i, line in enumerate(lines, start=1) if line.startswith("test_size:")]
    for read in (lambda: load_manifest(path, root=ROOT), lambda: read_manifest_yaml(path)):
        with pytest.raises(ManifestError) as info:
            read()
        [problem] = info.value.problems
        assert problem.startswith(f"{path}:{second}:1: ") and "'test_size'" in problem, problem
        assert f"first on line {first}" in problem, problem
    # One key per mapping, the same key in two mappings: still valid.
    assert read_manifest_yaml(FIX / "valid.yaml")["test_size"] == 0.2


# ---------------------------------------------------------------------------------------------
# The practical margin (issue 45): declared, named, never a silent default
# ---------------------------------------------------------------------------------------------


def _margin_problems(tmp_path, margin) -> list[str]:
    text = (FIX / "valid.yaml").read_text(encoding="utf-8")
    head, _, _ = text.partition("\npractical_margin:")
    body = head if margin is None else head + "\n" + yaml.safe_dump({"practical_margin": margin})
    path = tmp_path / "audit.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    return info.value.problems


def test_a_manifest_without_a_practical_margin_is_refused(tmp_path):
    problems = _margin_problems(tmp_path, None)
    assert any(p.endswith("practical_margin: required field is missing") for p in problems), problems


@pytest.mark.parametrize(("margin", "fragment"), [
    ({"points": 5, "ratio": [1.25, 0.8], "reason": "r"}, "0 < low < 1 < high"),
    ({"points": 0, "ratio": [0.8, 1.25], "reason": "r"}, "practical_margin.points"),
    ({"points": 5, "ratio": [0.8, 1.25]}, "practical_margin.reason: required field is missing"),
    ({"points": 5, "ratio": [0.8, 1.25], "reason": "r", "alpha": 0.05}, "unknown key 'alpha'"),
])
def test_a_bad_practical_margin_is_named(tmp_path, margin, fragment):
    problems = _margin_problems(tmp_path, margin)
    assert any(fragment in p for p in problems), problems


def test_the_practical_margin_reads_in_the_units_of_each_gap():
    margin = load_manifest(FIX / "valid.yaml").practical_margin
    assert margin.difference == (-0.05, 0.05) and margin.of("difference") == (-0.05, 0.05)
    assert margin.ratio_band == (0.8, 1.25) == margin.of("ratio")
    one_sided = type(margin)(points=2.5, ratio=[0.8], reason="at least four fifths")
    assert one_sided.ratio_band == (0.8, float("inf")) and one_sided.difference == (-0.025, 0.025)


def _margin_body(tmp_path, margin_yaml: str) -> Path:
    """valid.yaml with its practical margin written as ``margin_yaml`` (YAML text, as an author writes it)."""
    head, _, _ = (FIX / "valid.yaml").read_text(encoding="utf-8").partition("\npractical_margin:")
    path = tmp_path / "audit.yaml"
    path.write_text(f"{head}\npractical_margin: {margin_yaml}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("points", "meant"), [("0.05", "5"), ("0.4", "40"), ("0.001", "0.1")])
def test_points_written_as_a_proportion_are_refused_with_what_was_meant(tmp_path, points, meant):
    """`points: 0.05` was taken silently: a margin of 0.05 percentage points, almost surely a
    proportion where percentage points belong (issue 47)."""
    path = _margin_body(tmp_path, f"{{points: {points}, ratio: [0.8, 1.25], reason: r}}")
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    [problem] = info.value.problems
    assert problem.startswith(f"{path}:") and ": practical_margin.points: " in problem, problem
    assert f"`points` is {points}, a margin of {points} percentage points" in problem
    assert "at least 0.5" in problem and problem.endswith(f"did you mean {meant}?")


def test_half_a_percentage_point_is_the_smallest_margin_taken(tmp_path):
    margin = load_manifest(_margin_body(tmp_path, "{points: 0.5, ratio: [0.8], reason: r}")).practical_margin
    assert margin.difference == (-0.005, 0.005)


@pytest.mark.parametrize(("margin_yaml", "got"), [("5", "got 5 (5 alone: did you mean `points: 5`?)"),
                                                  ("5 percentage points", "got '5 percentage points'"),
                                                  ("", "got nothing"), ("[5, [0.8]]", "got [5, [0.8]]")])
def test_a_practical_margin_that_is_not_a_mapping_names_its_keys_with_an_example(tmp_path, margin_yaml, got):
    """`practical_margin: 5` got pydantic's "Input should be a valid dictionary or instance of
    PracticalMargin" (issue 47): the author is told the keys to write, and shown a margin."""
    path = _margin_body(tmp_path, margin_yaml)
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    [problem] = info.value.problems
    assert ": practical_margin: expected a mapping with the keys `points` " in problem, problem
    assert "`ratio` (" in problem and "`reason` (" in problem and got in problem
    assert "PracticalMargin" not in problem and "dictionary" not in problem
    example = problem.partition("For example: practical_margin: ")[2]
    assert example.startswith("{points: 5, ratio: [0.8, 1.25], reason: ")
    # The example is a margin the manifest takes, as written.
    assert load_manifest(_margin_body(tmp_path, example)).practical_margin.ratio_band == (0.8, 1.25)


def test_contributings_practical_margin_example_loads(tmp_path):
    """CONTRIBUTING.md's "The practical margin" shows a margin an author may copy: it must load."""
    text = (Path(__file__).resolve().parents[1] / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.partition("### The practical margin")[2]
    block = section.partition("```yaml\n")[2].partition("```")[0]
    margin = yaml.safe_load(block)["practical_margin"]
    path = _margin_body(tmp_path, yaml.safe_dump(margin, default_flow_style=True).strip())
    assert load_manifest(path).practical_margin.of("difference") == (-margin["points"] / 100, margin["points"] / 100)
