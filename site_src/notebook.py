"""The notebook version of an explainer's code, for readers who prefer Jupyter.

The code is written as a jupytext ``py:percent`` script (a Markdown cell with the page's title
and how to run it, then the code split into cells at its commented steps) and converted by
jupytext to ``.ipynb``. Cell ids are numbered, not random, so the same code gives the same bytes
and the build's ``docs/`` stays byte-identical.
"""

from __future__ import annotations

import re


__all__ = ["notebook_json", "split_cells"]

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


def notebook_json(code: str, *, title: str, subtitle: str, summary: str, code_rel: str) -> str:
    """The explainer's code as a Jupyter notebook (nbformat 4 JSON text).

    Parameters
    ----------
    code : str
        The explainer's code.
    title, subtitle, summary : str
        The page's front matter, shown in the first (Markdown) cell.
    code_rel : str
        The generated script's path in the repository (``explainers/code/<slug>.py``), named in
        the first cell so a reader knows the notebook and the script are the same code.

    Returns
    -------
    str
        The notebook as JSON; identical for identical arguments.
    """
    import jupytext  # imported on use: the build caches notebooks, most builds never convert
    intro = [
        f"# {title}", "", f"*{subtitle}*", "", summary, "",
        f"The code of this explainer (the same as `{code_rel}`), one step per cell. Start Jupyter "
        "from the root of a clone of the Fair Code repository after the README's install step: the "
        "code reads the audits and data from there.",
    ]
    parts = ["# %% [markdown]\n" + "\n".join(f"# {line}".rstrip() for line in intro)]
    parts += [f"# %%\n{cell}" for cell in split_cells(code)]
    nb = jupytext.reads("\n\n".join(parts) + "\n", fmt="py:percent")
    for i, cell in enumerate(nb.cells, start=1):
        cell.id = f"cell-{i}"  # random by default; numbered keeps the build reproducible
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    return jupytext.writes(nb, fmt="ipynb")


def _compiles(source: str) -> bool:
    try:
        compile(source, "<cell>", "exec")
    except SyntaxError:
        return False
    return True
