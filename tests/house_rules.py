"""The house's size rules (issue 48), counted the same way by the test and by a person.

    python tests/house_rules.py        # every function body over 60 lines, every module over 700

- A module is a ``.py`` or ``.js`` file under ``faircode/`` or ``site_src/``; its size is its line count.
- A Python function's body runs from its first statement after the docstring to its last line
  (comments and blank lines inside count: they are what a reader scrolls through).
- A JavaScript function's body is the lines between its opening and closing brace. The one
  wrapper that makes a browser file a module (a function expression at the top level of the file:
  ``(function name(root) { ... })(this)`` or ``FairCalc.carry("Name", function name(root) { ... })``)
  is not counted as a function: it is the file.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("faircode", "site_src")
MAX_BODY = 60
MAX_MODULE = 700


def modules(root: Path = ROOT):
    """Every Python and JavaScript file the rules cover, sorted."""
    return sorted(p for folder in FOLDERS for p in (root / folder).rglob("*") if p.suffix in (".py", ".js") and "__pycache__" not in p.parts)


def python_bodies(path: Path):
    """(name, first line, body lines) of every function and method in a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            first = body[1] if len(body) > 1 and _is_docstring(body[0]) else body[0]
            yield node.name, node.lineno, node.end_lineno - first.lineno + 1


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)


_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^")
_FUNCTION = re.compile(r"\bfunction\b\s*\*?\s*([A-Za-z_$][\w$]*)?\s*\(|=>\s*\{")


def javascript_bodies(path: Path):
    """(name, first line, body lines) of every function in a JavaScript file (a brace counter that
    skips strings, template literals, comments and regular expressions; enough for this house's
    plain ES5/ES2017 files, not a parser)."""
    code = _blank_literals(path.read_text(encoding="utf-8"))
    opened: list[tuple[str, int, int, bool]] = []  # (name, line of "{", depth, is the file's wrapper)
    pending: list[tuple[str, bool]] = []
    depth = 0
    line = 1
    i = 0
    while i < len(code):
        match = _FUNCTION.match(code, i)
        if match and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] in "_$")):
            name = match.group(1) or "(anonymous)"
            wrapper = depth == 0 and code[:i].rstrip()[-1:] in ("(", ",") and match.group(0).startswith("function")
            pending.append((name, wrapper))
            if match.group(0).endswith("{"):  # an arrow's brace is part of the match
                opened.append((pending.pop()[0], line, depth, False))
                depth += 1
            line += match.group(0).count("\n")
            i = match.end()
            continue
        char = code[i]
        if char == "\n":
            line += 1
        elif char == "{":
            if pending and _only_params_between(code, i):
                name, wrapper = pending.pop()
                opened.append((name, line, depth, wrapper))
            depth += 1
        elif char == "}":
            depth -= 1
            if opened and opened[-1][2] == depth:
                name, start, _, wrapper = opened.pop()
                if not wrapper:
                    yield name, start, line - start - 1
        i += 1


def _only_params_between(code: str, brace: int) -> bool:
    """True when the "{" at ``brace`` closes a parameter list (``) {``), i.e. opens a function body."""
    return code[:brace].rstrip().endswith(")")


def _blank_literals(text: str) -> str:
    """The text with the inside of every string, template literal, comment and regular expression
    replaced by spaces (newlines kept), so braces and the word "function" in them do not count."""
    out = []
    i = 0
    last = ""  # the last significant character outside literals, to tell a regex from a division
    while i < len(text):
        char = text[i]
        two = text[i:i + 2]
        if two == "//":
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            out.append(" " * (end - i))
            i = end
            continue
        if two == "/*":
            end = text.find("*/", i + 2) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
            continue
        if char in "'\"`" or (char == "/" and (last in _REGEX_AFTER or last == "")):
            j = i + 1
            in_class = False
            while j < len(text):
                c = text[j]
                if c == "\\":
                    j += 2
                    continue
                if char == "/" and c == "[":
                    in_class = True
                elif char == "/" and c == "]":
                    in_class = False
                elif c == char and not in_class:
                    break
                elif c == "\n" and char != "`":
                    break
                j += 1
            out.append(char + re.sub(r"[^\n]", " ", text[i + 1:j]) + (text[j] if j < len(text) else ""))
            last = char
            i = j + 1
            continue
        out.append(char)
        if not char.isspace():
            last = char
            if char.isalnum() or char in "_$)]":
                word = re.search(r"[\w$]+$", "".join(out[-12:]))
                last = "(" if word and word.group(0) in ("return", "typeof", "case") else char
        i += 1
    return "".join(out)


def violations(root: Path = ROOT) -> list[str]:
    """One line per module over MAX_MODULE lines and per function body over MAX_BODY lines."""
    found = []
    for path in modules(root):
        rel = path.relative_to(root)
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE:
            found.append(f"{rel}: {lines} lines (a module holds at most {MAX_MODULE})")
        bodies = python_bodies(path) if path.suffix == ".py" else javascript_bodies(path)
        for name, start, length in bodies:
            if length > MAX_BODY:
                found.append(f"{rel}:{start} {name}: a body of {length} lines (at most {MAX_BODY})")
    return found


if __name__ == "__main__":
    problems = violations()
    print("\n".join(problems) or "every module and function body within the house's sizes")
    sys.exit(1 if problems else 0)
