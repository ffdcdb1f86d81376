"""Issue 26: figures saved with fewer passes, the same bytes and the same phone check.

The files are compared with what matplotlib's own ``savefig`` writes for the same figure, and the
extents the phone check reads with those of matplotlib's full Agg draw; the passes are counted,
not timed.
"""

from __future__ import annotations

import io
import shutil
import traceback
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from site_src.build import BuildOptions, build  # noqa: E402
from site_src.errors import BuildFailed, ExecutionError  # noqa: E402
from site_src.execution._capture import (_FigureCapture, _pyplot, narrow_text_problems,  # noqa: E402
                                         save_narrow_variant)
from site_src.execution._cells import run_cells  # noqa: E402
from site_src.execution.execute import _check_narrow_figures  # noqa: E402


@pytest.fixture()
def capture(tmp_path, monkeypatch):
    from matplotlib._pylab_helpers import Gcf

    # _FigureCapture hooks pyplot and Figure for the run's whole process: undo it after the test.
    for owner, name in ((Gcf, "destroy"), (Gcf, "destroy_all"), (Figure, "__init__"), (plt, "show"), (Text, "set_text")):
        monkeypatch.setattr(owner, name, owner.__dict__[name] if name in owner.__dict__ else getattr(owner, name))
    with plt.rc_context():
        yield _FigureCapture(_pyplot(), tmp_path)
        monkeypatch.undo()  # then close what is left without saving it (a figure may be bad on purpose)
        plt.close("all")


def _drawn(fig):
    """A figure in the shape of the explainers': two panels, a legend placed by matplotlib, laid out once."""
    axes = fig.subplots(1, 2)
    for k, ax in enumerate(axes):
        ax.plot(range(10), [i * (k + 1) for i in range(10)], label=f"line {k}")
        ax.set_title(f"Panel {k}")
        ax.set_xlabel("x")
        ax.legend(loc="best")
    fig.tight_layout()
    return fig


def _count_draws(monkeypatch) -> list:
    calls = []
    real = Figure.draw

    def draw(self, renderer):
        calls.append(type(renderer).__name__)
        return real(self, renderer)

    monkeypatch.setattr(Figure, "draw", draw)
    return calls


def test_a_figure_laid_out_once_is_saved_in_one_drawing_with_matplotlibs_bytes(capture, tmp_path, monkeypatch):
    ours = _drawn(plt.figure(figsize=(10, 4)))
    theirs = _drawn(plt.figure(figsize=(10, 4)))
    expected = io.BytesIO()
    theirs.savefig(expected, format="svg", metadata={"Date": None})
    draws = _count_draws(monkeypatch)
    capture.capture_open()
    assert (tmp_path / "figure-1.svg").read_bytes() == expected.getvalue()
    # One drawing per saved figure (matplotlib's savefig alone draws such a figure twice).
    assert len(draws) == 2 and len(capture.files) == 2
    assert ours.get_layout_engine() is not None  # the figure is left as the code made it


def test_the_phone_check_reads_the_extents_of_the_svg_a_phone_shows(capture, tmp_path):
    fig = _drawn(plt.figure(figsize=(10, 4)))
    note = fig.text(0.9, 0.5, "a note that runs off the right side")
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    problems = narrow_text_problems(fig)
    # The oracle: matplotlib's own extent of the note in a plain SVG save of the same figure (drawn
    # at 72 dpi), in the figure's pixels; the Agg renderer's hinted text measures narrower.
    dpi, seen = fig.dpi, []
    listening = fig.canvas.mpl_connect("draw_event", lambda event: seen.append(
        (note.get_window_extent(event.renderer).x1 - fig.bbox.width) * dpi / fig.dpi))  # fig.dpi: 72 while saving
    fig.savefig(io.BytesIO(), format="svg")
    fig.canvas.mpl_disconnect(listening)
    fig.canvas.draw()
    agg = note.get_window_extent(fig.canvas.get_renderer()).x1 - fig.bbox.width
    assert seen[-1] > agg + 1  # the two renderers differ here, so the test tells them apart
    assert problems == [f"text 'a note that runs off the right side' runs {seen[-1]:.0f} px past the right edge of the canvas"]


def test_a_figure_without_a_phone_variant_is_checked_in_its_one_layout(capture, tmp_path):
    # No axes: no phone variant; a phone shows the figure scaled, and its text is cut all the same.
    fig = plt.figure(figsize=(4, 2))
    fig.text(0.5, 0.5, "a long text that runs off the right side of it")
    fine = plt.figure(figsize=(4, 2))
    fine.text(0.1, 0.5, "short")
    capture.finish()
    first, second = capture.files
    assert "narrow" not in first and not (tmp_path / "figure-1-narrow.svg").exists()
    assert len(first["narrow_problems"]) == 1 and "past the right edge" in first["narrow_problems"][0]
    assert second["narrow_problems"] == []
    with pytest.raises(ExecutionError) as err:
        _check_narrow_figures(capture.files, source="explainers/x.md")
    assert "figure 1 (figure-1.svg): text 'a long text that runs off the right side of it' runs" in str(err.value)


# Issue 47: a formula matplotlib cannot read (mathtext between two $) in a figure's text raised a
# 50-line traceback from inside matplotlib, with no line of the explainer. matplotlib reads it only
# when it draws the figure; the report names the line that set the text and says what is wrong.
CODE = "explainers/code/formulas.py"  # the file name the cells are compiled under


def _run(capture, code: str):
    return run_cells(code, {}, CODE, 0, figures=capture)


def _lines_of(err) -> list[int]:
    """The lines of the explainer's code a traceback goes through, outermost first."""
    return [f.lineno for f in traceback.extract_tb(err.__traceback__) if f.filename == CODE]


def test_a_formula_matplotlib_cannot_read_is_named_at_the_line_that_set_it(capture):
    code = ("import matplotlib.pyplot as plt\n"
            "fig, ax = plt.subplots()\n"
            "ax.set_xlabel('rate $x^$ here')\n"  # line 3
            "fig.tight_layout()\n")  # line 4: matplotlib reads the formula here
    with pytest.raises(ValueError) as err:
        _run(capture, code)
    # matplotlib's own reading of the formula (the oracle): the fault at the end of "x^", 0-based.
    with pytest.raises(ValueError, match=r"\(at char 2\)"):
        from matplotlib.mathtext import MathTextParser
        MathTextParser("path").parse("$x^$")
    assert str(err.value).startswith("the figure text 'rate $x^$ here' is not a formula matplotlib can draw")
    assert "at character 3 of 'x^'" in str(err.value) and "found end of text" in str(err.value)
    assert _lines_of(err.value) == [3]
    assert not [f for f in traceback.extract_tb(err.value.__traceback__) if "matplotlib" in f.filename]


def test_a_formula_set_in_a_function_names_the_call_and_the_line_in_it(capture):
    code = ("import matplotlib.pyplot as plt\n"
            "def note(ax):\n"
            "    ax.text(0.5, 0.5, r'$\\frac{a$')\n"  # line 3
            "fig, ax = plt.subplots()\n"
            "note(ax)\n")  # line 5; nothing draws the figure before the code ends
    with pytest.raises(ValueError) as err:
        _run(capture, code)
    assert _lines_of(err.value) == [5, 3]
    assert "the figure text '$\\frac{a$'" in str(err.value) and "at character 6 of '\\frac{a'" in str(err.value)


def test_dollars_matplotlib_can_read_are_not_an_error(capture, tmp_path):
    code = r"""import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.set_title('costs $5 and $6')  # two dollars: a formula, "5 and ", that matplotlib draws
ax.set_xlabel(r'one \$ sign')
ax.set_ylabel(r'$\alpha$ and' '\n' r'$\beta$')  # one formula a line, as matplotlib lays them out
plt.show()
"""
    _run(capture, code)
    capture.finish()
    assert (tmp_path / "figure-1.svg").exists()


def test_a_formula_a_tick_formatter_gives_while_the_figure_is_saved_is_named(capture):
    code = ("import matplotlib.pyplot as plt\n"
            "fig, ax = plt.subplots()\n"
            "ax.xaxis.set_major_formatter(lambda v, _: r'$\\bad$')\n")
    _run(capture, code)  # no line of the code sets the labels: matplotlib does, while it saves the figure
    with pytest.raises(ValueError) as err:
        capture.finish()
    assert str(err.value).startswith("the figure text '$\\bad$' is not a formula matplotlib can draw")
    assert "Unknown symbol" in str(err.value) or "unknown symbol" in str(err.value)


def test_the_build_names_the_explainer_line_that_set_a_bad_formula(tmp_path):
    root = tmp_path / "site-root"
    shutil.copytree(Path(__file__).parent / "fixtures" / "tinysite", root)
    path = root / "explainers" / "coin-flips.md"
    source = path.read_text()
    bad = source.replace("ax.hist(flips, bins=2)\n", 'ax.hist(flips, bins=2)\nax.set_title("$\\\\frac{a$")\n')
    assert bad != source
    path.write_text(bad)
    line = bad.split("\n").index('ax.set_title("$\\\\frac{a$")') + 1
    with pytest.raises(BuildFailed) as err:
        build(BuildOptions(root=root))
    message = str(err.value)
    assert (f"explainers/coin-flips.md:{line}: raised ValueError: the figure text '$\\frac{{a$' is not a formula "
            "matplotlib can draw") in message
    assert "at character 6 of '\\frac{a'" in message
    assert "site-packages" not in message and "_capture.py" not in message
    assert f"explainers/coin-flips.md, line {line}" in message  # the traceback: the explainer's line alone
