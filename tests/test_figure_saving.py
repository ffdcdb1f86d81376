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
from matplotlib.backends.backend_agg import RendererAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from site_src.execution._capture import (_FigureCapture, _pyplot, narrow_text_problems,  # noqa: E402
                                         save_narrow_variant)


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


def test_the_phone_check_lays_out_without_painting_and_reads_a_full_draws_extents(capture, tmp_path, monkeypatch):
    fig = _drawn(plt.figure(figsize=(10, 4)))
    fig.text(0.9, 0.5, "a note that runs off the right side")
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    painted = []
    real = RendererAgg.draw_path
    monkeypatch.setattr(RendererAgg, "draw_path", lambda self, *a, **k: painted.append(1) or real(self, *a, **k))
    problems = narrow_text_problems(fig)
    assert painted == []
    renderer = fig.canvas.get_renderer()
    ours = [t.get_window_extent(renderer).bounds for t in fig.findobj(Text)]
    fig.canvas.draw()  # the oracle: matplotlib's full draw
    assert painted  # (it does paint)
    renderer = fig.canvas.get_renderer()
    assert ours == [t.get_window_extent(renderer).bounds for t in fig.findobj(Text)]
    assert len(problems) == 1 and "'a note that runs off the right side' runs" in problems[0]
