"""Stage 2, extract: each explainer's code block as ``explainers/code/<slug>.py``.

The generated file is what a reader downloads and runs from the repository root, and its text is
what the build executes, so the page's numbers come from exactly the file a reader gets. The
files are written (``publish``) only when the whole build succeeds: a failed build leaves
``explainers/code/`` as it found it.
"""

from __future__ import annotations

import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

from site_src.errors import BuildFailed, ExecutionError
from site_src.sources.collect import Explainer
from site_src.sources.reports import Report, report_header


@dataclass(frozen=True)
class CodeFile:
    """A generated code file and how its lines map back to the explainer source."""

    slug: str
    path: Path
    source: Path  # the explainer source it came from
    text: str
    header_lines: int
    code_line: int  # source line of the code's first line
    # False for a report's: its page shows no output (its run prints the record), nor warns of its length.
    output_shown: bool = True

    def source_line(self, generated_line: int) -> int | None:
        """Map a line of the generated file to the line of the explainer source, if it is code."""
        if generated_line <= self.header_lines:
            return None
        return generated_line - self.header_lines - 1 + self.code_line


def header(explainer: Explainer) -> str:
    """The lines the generated file starts with: where it comes from and how to run it (a
    report's: the manifest it is generated from, `sources.reports.report_header`)."""
    if isinstance(explainer, Report):
        return report_header(explainer.slug)
    src = explainer.display_path
    return (
        f"# Generated from {src} by `fairsite build`; edit the explainer, not this file.\n"
        f"# Run it from the repository root:  python explainers/code/{explainer.slug}.py\n"
    )


def generated_text(explainer: Explainer) -> str:
    """The whole generated file: :func:`header`, then the explainer's code block."""
    return header(explainer) + explainer.code


def extract(explainers: list[Explainer]) -> list[CodeFile]:
    """Describe each explainer's generated code file (``explainers/code/<slug>.py``; a report's,
    ``reports/<slug>/report.py``: `Explainer.code_path`) without writing it.

    The runs are given the code itself; the files are written by :func:`publish` only once the
    whole build has succeeded, so a failed build leaves ``explainers/code/`` as it found it.

    Raises
    ------
    BuildFailed
        When any explainer's code does not compile: one `ExecutionError` per such explainer
        (`syntax_errors`), raised before any run starts.
    """
    code_files = [
        CodeFile(slug=e.slug, path=e.code_path, source=e.code_source, text=generated_text(e),
                 header_lines=header(e).count("\n"), code_line=e.code_line, output_shown=not isinstance(e, Report))
        for e in explainers
    ]
    # A typo used to surface only when its run's turn came, after every other explainer had run
    # (about 20 s into a cold build). As pytest stops at a module that does not import ("error
    # during collection") and runs no test, the build stops here and runs nothing: a build with
    # code that does not compile cannot publish, the other runs would report nothing about the
    # typo, and the fix is the one thing the author needs to hear now. Every explainer is
    # compiled first, so all the typos are named at once.
    if problems := syntax_errors(code_files, explainers):
        raise BuildFailed(problems)
    return code_files


def syntax_errors(code_files: list[CodeFile], explainers: list[Explainer]) -> list[ExecutionError]:
    """Compile each generated file whole, as ``python explainers/code/<slug>.py`` would (those
    the last successful build wrote as they are compiled then, and are not compiled again).

    Parameters
    ----------
    code_files : list of CodeFile
        What `extract` describes, in the explainers' order.
    explainers : list of Explainer
        Their sources, in the same order (for the path the error names).

    Returns
    -------
    list of ExecutionError
        One per file that does not compile, naming ``explainers/<slug>.md`` and the line of the
        explainer source (not of the generated file), with the line and Python's caret; empty
        when everything compiles.
    """
    problems = []
    for code, e in zip(code_files, explainers):
        if _published(code):
            # explainers/code/ is written only by a build in which every run succeeded: this
            # text compiled then (compiling all of them is ~30 ms of CPU a build; a prose edit's
            # build need not pay it). Were it not so, its run still reports the error.
            continue
        try:
            # The whole file, as a reader's `python` compiles it: the run compiles it cell by cell
            # (`# %%`), so a typo in a late cell would otherwise wait for the earlier cells to run.
            # A warning of the compiler (an invalid escape such as "\d") is the run's to show,
            # where it is noted with the cell: here, made an error by a warnings filter, it
            # would be a SyntaxError the code does not have.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(code.text, str(code.path), "exec", dont_inherit=True)
        except SyntaxError as err:
            problems.append(_syntax_problem(code, e, err))
    return problems


def _published(code: CodeFile) -> bool:
    """Whether ``code.path`` holds exactly ``code.text`` (the last successful build wrote it)."""
    try:
        return code.path.stat().st_size == len(code.text.encode("utf-8")) and \
            code.path.read_text(encoding="utf-8") == code.text
    except (OSError, UnicodeDecodeError):
        return False


def _syntax_problem(code: CodeFile, e: Explainer, err: SyntaxError) -> ExecutionError:
    """``err`` at its place in the explainer source, worded as a run's error ("raised ..."), with
    Python's own display of it (file, line, the code and the caret) below."""
    line = code.source_line(err.lineno) if err.lineno else None
    detail = ""
    if line is not None:
        # CPython takes the line it shows from the file of that name on disk, which a failed build
        # has not rewritten: show the line that was compiled.
        lines = code.text.splitlines()
        text = lines[err.lineno - 1] + "\n" if err.lineno <= len(lines) else err.text
        shown = SyntaxError(err.msg, (e.display_path, line, err.offset, text,
                                      None if err.end_lineno is None else line + err.end_lineno - err.lineno,
                                      err.end_offset))
        # The last line of format_exception_only repeats the message the first line gives.
        detail = "\n" + "".join(traceback.format_exception_only(SyntaxError, shown)[:-1]).rstrip("\n")
    return ExecutionError(f"raised SyntaxError: {err.msg} (its code does not compile; no explainer's code was run)"
                          + detail, explainer=e.display_path, line=line)


def publish(code_files: list[CodeFile], code_dir: Path) -> None:
    """Write each generated file that changed, and remove those whose explainer is gone.

    Only changed files are rewritten, so mtimes (and the watchers of ``serve``) stay quiet.
    """
    code_dir = Path(code_dir)
    code_dir.mkdir(parents=True, exist_ok=True)
    # The folder is the build's: a file whose explainer is gone is removed with it. (A report's
    # code is in its own folder, which goes with the report.)
    wanted = {Path(c.path).resolve() for c in code_files}
    for orphan in code_dir.glob("*.py"):
        if orphan.resolve() not in wanted:
            orphan.unlink()
    for c in code_files:
        if not c.path.exists() or c.path.read_text(encoding="utf-8") != c.text:
            tmp = c.path.with_name(f".{c.path.name}.tmp")
            tmp.write_text(c.text, encoding="utf-8")
            tmp.replace(c.path)  # whole or not at all


def stale_code_files(explainers: list[Explainer], code_dir: Path) -> list[str]:
    """Generated files that differ from what their sources generate, or have no source (in
    ``code_dir``, the explainers' folder of code)."""
    code_dir = Path(code_dir)
    problems = []
    wanted = {e.code_path.resolve(): (e, generated_text(e)) for e in explainers}
    for path, (e, text) in wanted.items():
        shown = _shown(e.code_path, e.root)
        if not path.exists():
            problems.append(f"{shown}: missing; run `fairsite build` to generate it")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{shown}: differs from its {'manifest' if isinstance(e, Report) else 'explainer source'}; "
                            "run `fairsite build`")
    for path in sorted(code_dir.glob("*.py")) if code_dir.exists() else []:
        if path.resolve() not in wanted:
            problems.append(f"{code_dir.parent.name}/{code_dir.name}/{path.name}: no explainer source generates it; "
                            "delete it")
    return problems


def _shown(path: Path, root: Path) -> str:
    """``path`` as the repository names it ("explainers/code/x.py"), whatever the working directory."""
    return Path(path).resolve().relative_to(root).as_posix()
