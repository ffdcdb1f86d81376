"""Stage 2, extract: write each explainer's code block to ``explainers/code/<slug>.py``.

The generated file is what a reader downloads and runs from the repository root, and what the
build executes, so the page's numbers come from exactly the file a reader gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from site_src.collect import Explainer


@dataclass(frozen=True)
class CodeFile:
    """A generated code file and how its lines map back to the explainer source."""

    slug: str
    path: Path
    source: Path  # the explainer source it came from
    text: str
    header_lines: int
    code_line: int  # source line of the code's first line

    def source_line(self, generated_line: int) -> int | None:
        """Map a line of the generated file to the line of the explainer source, if it is code."""
        if generated_line <= self.header_lines:
            return None
        return generated_line - self.header_lines - 1 + self.code_line


def header(explainer: Explainer) -> str:
    src = explainer.display_path
    return (
        f"# Generated from {src} by `fairsite build`; edit the explainer, not this file.\n"
        f"# Run it from the repository root:  python explainers/code/{explainer.slug}.py\n"
    )


def generated_text(explainer: Explainer) -> str:
    return header(explainer) + explainer.code


def extract(explainers: list[Explainer], code_dir: Path, *, write: bool = True) -> list[CodeFile]:
    """Write (when changed) and describe each explainer's generated code file.

    With ``write=False`` nothing is written: ``check`` uses that to compare the committed files
    with what the sources generate.
    """
    code_dir = Path(code_dir)
    if write and code_dir.is_dir():
        # The folder is the build's: a file whose explainer is gone is removed with it.
        wanted = {f"{e.slug}.py" for e in explainers}
        for orphan in code_dir.glob("*.py"):
            if orphan.name not in wanted:
                orphan.unlink()
    files = []
    for e in explainers:
        text = generated_text(e)
        path = code_dir / f"{e.slug}.py"
        if write:
            code_dir.mkdir(parents=True, exist_ok=True)
            # Only rewrite on change, so mtimes (and watchers in `serve`) stay quiet.
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
        files.append(
            CodeFile(
                slug=e.slug,
                path=path,
                source=e.path,
                text=text,
                header_lines=header(e).count("\n"),
                code_line=e.code_line,
            )
        )
    return files


def stale_code_files(explainers: list[Explainer], code_dir: Path) -> list[str]:
    """Generated files that differ from what their sources generate, or have no source."""
    code_dir = Path(code_dir)
    shown = f"{code_dir.parent.name}/{code_dir.name}"  # "explainers/code", whatever the cwd
    problems = []
    wanted = {f"{e.slug}.py": generated_text(e) for e in explainers}
    for name, text in wanted.items():
        path = code_dir / name
        if not path.exists():
            problems.append(f"{shown}/{name}: missing; run `fairsite build` to generate it")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{shown}/{name}: differs from its explainer source; run `fairsite build`")
    for path in sorted(code_dir.glob("*.py")) if code_dir.exists() else []:
        if path.name not in wanted:
            problems.append(f"{shown}/{path.name}: no explainer source generates it; delete it")
    return problems
