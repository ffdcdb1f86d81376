"""Issue 26: figures saved with fewer passes, the same bytes and the same phone check.

The files are compared with what matplotlib's own ``savefig`` writes for the same figure, and the
extents the phone check reads with those of matplotlib's full Agg draw; the passes are counted,
not timed.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from site_src.errors import ExecutionError  # noqa: E402
from site_src.execution._capture import (_FigureCapture, _pyplot, narrow_text_problems,  # noqa: E402
                                         save_narrow_variant)
from site_src.execution.execute import _check_narrow_figures  # noqa: E402


@pytest.fixture()
def capture(tmp_path, monkeypatch):
    from matplotlib._pylab_helpers import Gcf

    # _FigureCapture hooks pyplot and Figure for the run's whole process: undo it after the test.
    for owner, name in ((Gcf, "destroy"), (Gcf, "destroy_all"), (Figure, "__init__"), (plt, "show")):
        monkeypatch.setattr(owner, name, owner.__dict__[name] if name in owner.__dict__ else getattr(owner, name))
    with plt.rc_context():
        yield _FigureCapture(_pyplot(), tmp_path)
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
