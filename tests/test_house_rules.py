"""Issue 48's size rules hold on the tree, and the counter behind them counts what it says."""

from __future__ import annotations

import textwrap
from pathlib import Path

import house_rules


def test_no_module_over_700_lines_and_no_function_body_over_60():
    problems = house_rules.violations()
    assert not problems, "over the house's sizes (python tests/house_rules.py lists them):\n" + "\n".join(problems)


def test_the_library_keeps_the_sizes():
    # faircode/ on its own (issue 48's library part), so that it stays within them whatever site_src/ holds.
    problems = [p for p in house_rules.violations() if p.startswith("faircode/")]
    assert not problems, "faircode/ over the house's sizes:\n" + "\n".join(problems)


def test_a_python_body_is_counted_from_its_first_statement_after_the_docstring(tmp_path: Path):
    body = "\n".join(f"    x{i} = {i}" for i in range(61))
    source = f'def long():\n    """Doc\n    string."""\n{body}\n\n\ndef short():\n    return 1\n'
    (tmp_path / "m.py").write_text(source)
    assert list(house_rules.python_bodies(tmp_path / "m.py")) == [("long", 1, 61), ("short", 67, 1)]


def test_a_javascript_body_skips_braces_in_strings_comments_and_regexes(tmp_path: Path):
    source = textwrap.dedent("""\
        (function wrapper(root) {
          function a(x) {
            var s = "}"; // }
            var r = /[}]/g; /* { */
            return `${x}}` + s;
          }
          var b = function () {
            return x / 2 / 3;
          };
          var c = (y) => {
            return y;
          };
        })(this);
        """)
    (tmp_path / "m.js").write_text(source)
    assert list(house_rules.javascript_bodies(tmp_path / "m.js")) == [("a", 2, 3), ("(anonymous)", 7, 1), ("(anonymous)", 10, 1)]


def test_a_module_over_the_limit_is_named(tmp_path: Path):
    for folder in house_rules.FOLDERS:
        (tmp_path / folder).mkdir()
    (tmp_path / "site_src" / "big.js").write_text("var a;\n" * 701)
    assert house_rules.violations(tmp_path) == ["site_src/big.js: 701 lines (a module holds at most 700)"]
