"""The explainer's code as ``# %%`` cells, run one by one with what each writes teed.

:func:`split_code_cells` is the one home of the splitter (the run, the page and the notebook
all cut the code here) and :func:`cell_title` reads a marker's title. :func:`run_cells` runs the
cells in one namespace, each compiled at its own lines of the file, while ``sys.stdout`` and
``sys.stderr`` are teed (:class:`_Tee`) into the process's streams and the cell's record, and
the warnings Python shows are noted where the explainer's line raised them. Part of the runner
(:mod:`site_src.execution._runner`).
"""

from __future__ import annotations

import contextlib
import io
import linecache
import os
import re
import sys
from pathlib import Path

from site_src.execution._inputs import _ENVIRONMENT


def _source_line(spec: dict, generated_line: int) -> int:
    return generated_line - spec["header_lines"] - 1 + spec["code_line"]


CELL_MARKER = re.compile(r"^# %%(?!%)")  # jupytext's "percent" cell marker, as editors know it


def split_code_cells(code: str, header_lines: int) -> list[tuple[int, str]]:
    """``(first line in the file, source)`` of each ``# %%`` cell of the explainer's code.

    ``code`` is the generated file (``header_lines`` of header, then the explainer's block). The
    header and whatever precedes the first marker form cell 0's prefix; code without markers is
    one cell. A cell's source keeps its marker line, so the cells joined are the block.

    A marker is a comment token (``tokenize``) at the start of its line: a line reading ``# %%``
    inside a triple-quoted string is the string's text, not a cell break. Code that does not
    tokenize (a syntax error) is one cell, so compiling it reports the error at its line. The one
    home of the splitter: the run, the page and the notebook all cut the code here.
    """
    lines = code.split("\n")
    starts = [0] + [i for i in _marker_lines(code) if i >= header_lines]
    starts = sorted(set(starts))
    if len(starts) > 1 and not "\n".join(lines[starts[0]:starts[1]][header_lines:]).strip():
        starts.pop(0)  # nothing but the header before the first marker: it belongs to cell 1
        starts[0] = 0
    bounds = starts + [len(lines)]
    return [(bounds[k] + 1, "\n".join(lines[bounds[k]:bounds[k + 1]])) for k in range(len(starts))]


def cell_title(source: str) -> str | None:
    """The title of a cell's ``# %% Title`` marker line (``""`` if untitled); None if ``source``
    (a cell of :func:`split_code_cells`) does not start with a marker."""
    first = source.split("\n", 1)[0]
    return first[4:].strip() if CELL_MARKER.match(first) else None


def _marker_lines(code: str) -> list[int]:
    """0-based indices of the lines holding a ``# %%`` comment token at column 0."""
    import tokenize

    found = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT and tok.start[1] == 0 and CELL_MARKER.match(tok.string):
                found.append(tok.start[0] - 1)
    except (tokenize.TokenError, SyntaxError):  # unterminated string or bracket, bad indentation
        return []
    return found


class _CellOutput:
    """What one cell wrote, in order: ``streams`` is a list of ``[name, text]`` ("stdout" or
    "stderr"), consecutive writes to one stream merged, as Jupyter merges stream outputs; and the
    warnings it issued (``warnings.warn``, NumPy's RuntimeWarnings), each as Python shows it."""

    def __init__(self):
        self._parts: list[tuple[str, list[str]]] = []  # joined once at the end: a flood of prints stays linear
        self.warnings: list[dict] = []

    def add(self, name: str, text: str) -> None:
        if not text:
            return
        if self._parts and self._parts[-1][0] == name:
            self._parts[-1][1].append(text)
        else:
            self._parts.append((name, [text]))

    @property
    def streams(self) -> list[list[str]]:
        return [[name, "".join(parts)] for name, parts in self._parts]

    def text(self, name: str) -> str:
        return "".join(t for n, parts in self._parts if n == name for t in parts)


class _Tee:
    """Stands in for ``sys.stdout`` (or ``sys.stderr``) while a cell runs: text goes to the
    process's stream (the whole run's output) and into the cell's record under ``name``, and so
    do bytes written to ``buffer``; any other attribute is the real stream's."""

    def __init__(self, stream, record: _CellOutput, name: str):
        self.stream, self.record, self.name = stream, record, name

    def write(self, text):
        self.stream.write(text)
        self.record.add(self.name, text)
        return len(text)

    def flush(self):
        self.stream.flush()

    @property
    def buffer(self):
        """Bytes written to ``sys.stdout.buffer`` go to the file as they are; the cell's copy
        shows them decoded, as the page will (bytes that are not UTF-8 as \ufffd)."""
        return _TeeBytes(self)

    @property
    def encoding(self):
        return getattr(self.stream, "encoding", "utf-8")

    def isatty(self):
        return False

    def fileno(self):
        return self.stream.fileno()

    def __getattr__(self, name):
        return getattr(self.stream, name)


class _TeeBytes(io.RawIOBase):
    def __init__(self, tee: _Tee):
        self._tee = tee

    def writable(self):
        return True

    def write(self, data):
        self._tee.stream.flush()
        self._tee.stream.buffer.write(data)
        self._tee.stream.buffer.flush()
        self._tee.record.add(self._tee.name, bytes(data).decode("utf-8", errors="replace"))
        return len(data)


@contextlib.contextmanager
def _recording_warnings(record: _CellOutput, filename: str, line_of):
    """Note each warning Python shows while the block runs (category, message, the file's line),
    then show it as Python would (on ``sys.stderr``, so into the cell's stderr, in order). A
    warning the code itself catches (``catch_warnings``) is not shown and not noted, as in a script."""
    import warnings

    shown = warnings.showwarning

    def showwarning(message, category, file_name, lineno, file=None, line=None):
        record.warnings.append({
            "category": category.__name__, "message": str(message),
            # The explainer's line for a warning its own code raised; else the library's file and line.
            "where": (f"line {line_of(lineno)}" if file_name == filename else f"{_shown_path(file_name)}:{lineno}"),
        })
        if line is None:  # read it here: linecache would look for the shortened name
            line = linecache.getline(file_name, lineno)
        shown(message, category, _shown_path(file_name), lineno, file, line)

    warnings.showwarning = showwarning
    try:
        yield
    finally:
        if warnings.showwarning is showwarning:
            warnings.showwarning = shown


def _shown_path(file_name: str) -> str:
    """A file as a warning names it on the page: relative to the working directory (the
    repository root) inside it, from site-packages for an installed library, so no page shows
    where this clone or its environment lives."""
    p = os.path.abspath(file_name)
    parts = Path(p).parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[len(parts) - parts[::-1].index(marker):])
    if p.startswith(os.getcwd() + os.sep):
        return os.path.relpath(p)
    for d in _ENVIRONMENT:  # the standard library
        if Path(p).is_relative_to(d):
            return str(Path(p).relative_to(d))
    return file_name


def run_cells(code: str, namespace: dict, filename: str, header_lines: int, *, figures=None,
              line_of=lambda line: line) -> list[dict]:
    """Run the code cell by cell in one namespace; return each cell's first line, what it wrote
    (``stdout``, ``stderr``, and ``streams``: both in the order written) and its ``warnings``.

    Each cell is compiled at its own lines of ``filename``, so tracebacks and the checks' line
    numbers are those of the whole file; ``line_of`` turns such a line into the one a warning is
    reported at (the explainer source's). ``figures`` (a ``_FigureCapture``) learns which cell
    opened each figure and which is running when one is saved: a figure is its opener's output.
    Raises what the code raises; a figure's text that matplotlib cannot draw as a formula, raised
    while the code draws or found when it ends, as one sentence at the line that set the text
    (``_FigureCapture.raise_readable``).
    """
    if figures is not None:
        figures.code_file = filename
    cells = []
    for k, (first_line, source) in enumerate(split_code_cells(code, header_lines)):
        if figures is not None:
            figures.cell = k
            before = figures.open_figures()
        record = _CellOutput()
        out, err = _Tee(sys.stdout, record, "stdout"), _Tee(sys.stderr, record, "stderr")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                    _recording_warnings(record, filename, line_of):
                exec(compile("\n" * (first_line - 1) + source, filename, "exec"), namespace)
        except ValueError as raised:
            if figures is not None:
                figures.raise_readable(raised)
            raise
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        if figures is not None:
            figures.opened_by(figures.open_figures() - before, k)
        cells.append({"line": first_line, "stdout": record.text("stdout"), "stderr": record.text("stderr"),
                      "streams": record.streams, "warnings": record.warnings})
    if figures is not None and (unreadable := figures.unreadable_formula()) is not None:
        raise unreadable
    return cells
