"""The notebook version of an explainer page, for readers who prefer Jupyter.

The page's prose becomes Markdown cells and each code cell carries the output of the build's run
(what it printed, the figures it drew), in the order the page shows them, so the notebook reads
like the page. The JSON is written directly, in nbformat 4.5's schema, as sphinx-gallery writes its
notebooks (the nbformat package costs a tenth of a second to import, on every page render; the
tests validate each notebook with it). Cell ids are numbered, not random, so the same page gives
the same bytes and the build's ``docs/`` stays byte-identical.
"""

from __future__ import annotations

import json
import re

from site_src.execution._cells import cell_title
from site_src.rendering.environment import markdown_text
from site_src.sources.collect import CODE_PLACEHOLDER

__all__ = ["CELL_MARK", "cell_outputs", "page_notebook", "page_notebook_json", "split_cells"]

# Where the page places code cell N (``cell(N)`` in the prose), until the cell's Markdown replaces it.
CELL_MARK = "<!-- fairsite:cell {} -->"
_CELL_MARK_RE = re.compile(r"<!-- fairsite:cell (\d+) -->")
_FIGURE_HTML = re.compile(r'<figure class="fc-figure"[^>]*>.*?<figcaption>(.*?)</figcaption>\s*</figure>', re.S)

# A new cell starts at a blank line followed by a top-level comment: the code's own step headings.
_STEP = re.compile(r"^#(?!!)")


def split_cells(code: str) -> list[str]:
    """Split explainer code into notebook cells at its commented steps.

    Parameters
    ----------
    code : str
        Python source, as the explainer's code block holds it.

    Returns
    -------
    list of str
        Consecutive chunks whose concatenation (joined by blank lines) is ``code`` with trailing
        whitespace removed. A chunk ends before a blank line that precedes a top-level ``#``
        comment, but only where both the chunk so far and the rest are complete Python (so a
        comment inside a string, a bracket or before an ``else`` never splits a statement).

    Example
    -------
    >>> split_cells("x = 1\\n\\n# then\\ny = x\\n")
    ['x = 1', '# then\\ny = x']
    """
    lines = code.rstrip().splitlines()
    cells: list[list[str]] = [[]]
    for i, line in enumerate(lines):
        current = cells[-1]
        starts_step = (_STEP.match(line) and i > 0 and not lines[i - 1].strip() and current
                       and _compiles("\n".join(current)) and _compiles("\n".join(lines[i:])))
        if starts_step:
            cells.append([line])
        else:
            current.append(line)
    return ["\n".join(c).strip("\n") for c in cells if "\n".join(c).strip()]


def _compiles(source: str) -> bool:
    try:
        compile(source, "<cell>", "exec")
    except SyntaxError:
        return False
    return True


def page_notebook_json(parts: list[tuple], *, title: str, subtitle: str, code_rel: str) -> str:
    """The explainer page as a notebook: its prose as Markdown cells, its code cells with the outputs
    of the build's run, in the order the page shows them.

    Parameters
    ----------
    parts : list of tuple
        In page order, ``("markdown", text)`` or ``("code", source, streams, figures)``, where
        ``streams`` are ``(name, text)`` in the order written ("stdout" or "stderr": its stream
        outputs) and ``figures`` the paths of the SVG figures the cell drew (its image outputs). A code part
        without ``# %%`` cells is split further at its commented steps (``split_cells``), with the
        outputs on its last piece.
    title, subtitle : str
        The page's title and subtitle, the first Markdown cell: plain text, escaped there so
        that Markdown or HTML in them is shown as typed.
    code_rel : str
        The generated script's path in the repository, named in the first cell.

    Returns
    -------
    str
        nbformat 4 JSON; identical for identical arguments (numbered cell ids, no dates).
    """
    # The title and subtitle are text, shown as themselves, as the page shows them (``markdown_text``).
    intro = (f"# {markdown_text(title)}\n\n*{markdown_text(subtitle)}*\n\nThis notebook is the explainer page: its text, and its code "
             f"(the same as `{code_rel}`) with the outputs of the build that made the page. Start Jupyter "
             "from the root of a clone of the Fair Code repository after the README's install step: the "
             "code reads the audits and data from there. Running it again should print the same.")
    cells = [_cell("markdown", intro)]
    for part in parts:
        if part[0] == "markdown":
            if part[1].strip():
                cells.append(_cell("markdown", part[1].strip()))
            continue
        _, source, streams, figures = part
        pieces = split_cells(source) or [source]
        for piece in pieces[:-1]:
            cells.append(_cell("code", piece))
        outputs = [{"output_type": "stream", "name": name, "text": _lines(text)} for name, text in streams if text]
        for svg in figures:
            outputs.append({"output_type": "display_data", "metadata": {},
                            "data": {"image/svg+xml": _lines(svg.read_text(encoding="utf-8")),
                                     "text/plain": ["<Figure>"]}})
        cells.append(_cell("code", pieces[-1], outputs=outputs))
    for i, cell in enumerate(cells, start=1):
        cell["id"] = f"cell-{i}"  # numbered, not random: the same page gives the same bytes
    notebook = {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,  # the minor version that has cell ids
    }
    return json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _cell(kind: str, source: str, *, outputs: list | None = None) -> dict:
    """A notebook cell of nbformat 4.5 (``"markdown"`` or ``"code"``), as the schema spells it."""
    cell = {"cell_type": kind, "metadata": {}, "source": _lines(source)}
    if kind == "code":
        cell.update(execution_count=None, outputs=outputs or [])
    return cell


def _lines(text: str) -> list[str]:
    """Text as the list of lines (each with its newline) that notebooks store, as Jupyter writes it."""
    return text.splitlines(keepends=True)


def cell_outputs(code_cells: list[tuple[int, str]], run, *, header_lines: int) -> list[dict]:
    """Each cell's code (without its ``# %%`` line), title, lines in the generated file, printed
    output (``stdout``; ``streams``: stdout and stderr as ``(name, text)`` in the order written)
    and figures (SVG paths), from the run's per-cell record (``run`` is a ``RunResult``)."""
    recorded = run.cells if len(run.cells) == len(code_cells) else None
    if recorded is not None and "".join(c.stdout for c in recorded) != run.stdout:
        # Output written past sys.stdout (C code, the raw buffer, bytes that are not UTF-8) has
        # no cell: show the run's whole output under the last cell rather than lose some of it.
        recorded = None
    streams = [[(s.name, s.text) for s in c.streams] for c in recorded] if recorded is not None else None
    if streams is not None:
        cells_stderr = "".join(c.stderr for c in recorded)
        if cells_stderr != run.stderr:
            # Written to stderr past sys.stderr (C code, a worker, an exit handler): after the
            # cells' own if it follows them, else the run's whole stderr under the last cell.
            if not run.stderr.startswith(cells_stderr):
                streams = [[s for s in cell if s[0] != "stderr"] for cell in streams]
                cells_stderr = ""
            streams[-1].append(("stderr", run.stderr[len(cells_stderr):]))
    out = []
    for k, (line, source) in enumerate(code_cells):
        lines = source.split("\n")
        title = cell_title(source)
        if title is not None:  # the marker line is the cell's title, not its code
            lines = lines[1:]
        code = "\n".join(lines).strip("\n")
        if recorded is not None:
            stdout, figs, written = recorded[k].stdout, recorded[k].figures, streams[k]
        elif k == len(code_cells) - 1:  # output no cell can claim: all of it under the last cell
            stdout, figs = run.stdout, list(range(1, len(run.figures) + 1))
            written = [("stdout", run.stdout), ("stderr", run.stderr)]
        else:
            stdout, figs, written = "", [], []
        out.append({"title": title or "", "code": code, "stdout": stdout, "figures": [run.figures[i - 1] for i in figs],
                    "streams": [(name, text) for name, text in written if text],
                    "first": header_lines + line, "last": header_lines + line + source.count("\n")})
    return out


def page_notebook(prose: str, cells: list[dict], unplaced: list[int], *, title: str, subtitle: str,
                  code_rel: str) -> str:
    """The page as a notebook: ``prose`` (rendered, with its cell marks and the code placeholder)
    as Markdown, each code cell of ``cells`` (:func:`cell_outputs`) with its outputs where the page
    shows it, the ``unplaced`` ones where the page's code section is."""
    parts: list[tuple] = []
    for piece in re.split(r"(<!-- fairsite:cell \d+ -->|" + re.escape(CODE_PLACEHOLDER) + ")", prose):
        m = _CELL_MARK_RE.fullmatch(piece)
        numbers = [int(m.group(1))] if m else unplaced if piece == CODE_PLACEHOLDER else None
        if numbers is None:
            # A figure is the image output of the cell that draws it; the Markdown keeps its caption.
            text = _FIGURE_HTML.sub(lambda f: "*" + re.sub(r"<[^>]+>", "", f.group(1)).strip() + "*", piece)
            parts.append(("markdown", text))
            continue
        for n in numbers:
            c = cells[n - 1]
            parts.append(("code", c["code"], c.get("notebook_streams", c["streams"]), c["figures"]))
    return page_notebook_json(parts, title=title, subtitle=subtitle, code_rel=code_rel)
