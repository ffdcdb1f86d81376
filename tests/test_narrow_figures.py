"""Figures that survive a phone (issue 28): where the phone variant of a figure is drawn, the build
checks that its text stays on the canvas, no legend covers an axis label, and legends are readable.

The bad figures here are made bad on purpose, each in one way; the extents the check reports are
compared with what matplotlib itself says of the same artists, or with the canvas, not with the
code under test.
"""

from __future__ import annotations

import shutil

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from site_src.build import BuildOptions, build  # noqa: E402
from site_src.errors import BuildFailed, ExecutionError  # noqa: E402
from site_src.execution._capture import (MIN_NARROW_LEGEND_PT, NARROW_WIDTH_IN, apply_site_style,  # noqa: E402
                                         narrow_text_problems, save_narrow_variant)
from site_src.execution.execute import _check_narrow_figures  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "tinysite"


@pytest.fixture(autouse=True)
def _site_style():
    with plt.rc_context():
        apply_site_style(plt.rcParams)
        yield
    plt.close("all")


def _legend_fits(fig) -> bool:
    """Every legend text inside the canvas, by matplotlib's own extents."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for leg in fig.legends for t in leg.get_texts()]
    return all(b.x0 >= -1 and b.x1 <= fig.bbox.width + 1 for b in boxes)


def test_a_clean_phone_figure_has_no_problem(tmp_path):
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([1, 2, 3], [1, 2, 3], label="a line")
    ax.set_xlabel("rows")
    ax.legend(loc="upper left")
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    assert narrow_text_problems(fig) == []


def test_text_past_the_canvas_is_named_with_its_side(tmp_path):
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [0, 1])
    # In figure coordinates: the layout does not move it, so on a phone it runs off the right.
    note = fig.text(0.8, 0.5, "a note that runs off the right side")
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    problems = narrow_text_problems(fig)
    # matplotlib's own extent in an SVG save of the figure (what a phone shows), in figure pixels
    dpi, past = fig.dpi, []
    fig.canvas.mpl_connect("draw_event", lambda event: past.append(
        (note.get_window_extent(event.renderer).x1 - fig.bbox.width) * dpi / fig.dpi))  # fig.dpi: 72 while saving
    fig.savefig(tmp_path / "oracle.svg", format="svg")
    assert past[-1] > 1  # past the canvas
    assert problems == [f"text 'a note that runs off the right side' runs {past[-1]:.0f} px "
                        "past the right edge of the canvas"]


def test_a_legend_over_the_x_axis_label_is_named(tmp_path):
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [0, 1], label="exact power")
    ax.set_xlabel("rows in the audit")
    # Anchored just under the axes, where tight_layout puts the label: the legend covers it.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.05))
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    renderer = fig.canvas.get_renderer()
    assert ax.get_legend().get_window_extent(renderer).overlaps(ax.xaxis.label.get_window_extent(renderer))
    problems = narrow_text_problems(fig)
    assert "the legend (with 'exact power') covers the x-axis label 'rows in the audit'" in problems


def test_a_legend_too_small_for_a_phone_is_named():
    fig, ax = plt.subplots(figsize=(NARROW_WIDTH_IN, 3))
    ax.plot([0, 1], [0, 1], label="largest gap")
    ax.legend(fontsize=MIN_NARROW_LEGEND_PT - 2)
    fig.tight_layout()
    problems = narrow_text_problems(fig)
    assert len(problems) == 1 and problems[0].startswith("the legend (with 'largest gap') is set in 7 pt")


def test_the_power_pages_legend_layout_is_remade_for_a_phone(tmp_path):
    # Issue 28: a figure legend of three columns under two panels, room kept with
    # tight_layout(rect=...): on a phone it ran past both edges and over the x axis.
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharey=True)
    for ax in axes:
        for gap in ("5 pp", "10 pp"):
            ax.plot([100, 1000], [0.2, 0.9], label=f"{gap} gap: exact test, exact power (faircode)")
            ax.plot([100, 1000], [0.1, 0.8], label=f"{gap} gap: normal approximation")
        ax.set_xlabel("rows in the audit, women and men (log scale)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, frameon=False)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    assert narrow_text_problems(fig) == []
    assert _legend_fits(fig)
    assert [t.get_text() for t in fig.legends[0].get_texts()][:2] == [
        "5 pp gap: exact test, exact power (faircode)", "5 pp gap: normal approximation"]  # same entries, one column


def test_the_parent_names_the_figure_and_every_problem():
    figures = [{"svg": "figure-1.svg", "narrow": "figure-1-narrow.svg", "narrow_problems": []},
               {"svg": "figure-2.svg", "narrow": "figure-2-narrow.svg",
                "narrow_problems": ["text 'a note' runs 12 px past the right edge of the canvas"]}]
    with pytest.raises(ExecutionError) as err:
        _check_narrow_figures(figures, source="explainers/x.md")
    assert err.value.explainer == "explainers/x.md"
    assert "figure 2 (figure-2-narrow.svg): text 'a note' runs 12 px past the right edge" in str(err.value)
    _check_narrow_figures(figures[:1], source="explainers/x.md")  # nothing found: no error


def test_the_build_fails_naming_the_explainer_the_figure_and_the_text(tmp_path):
    root = tmp_path / "site-root"
    shutil.copytree(FIXTURE, root)
    source = (root / "explainers" / "coin-flips.md").read_text()
    bad = source.replace('fig, ax = plt.subplots(figsize=(4, 3))\nax.hist(flips, bins=2)',
                         'fig, ax = plt.subplots(figsize=(8, 3))\nax.hist(flips, bins=2)\n'
                         'fig.text(0.8, 0.5, "heads against tails, by far")')
    assert bad != source
    (root / "explainers" / "coin-flips.md").write_text(bad)
    with pytest.raises(BuildFailed) as err:
        build(BuildOptions(root=root))
    message = str(err.value)
    assert "explainers/coin-flips.md" in message
    assert "figure 1 (figure-1-narrow.svg): text 'heads against tails, by far' runs" in message
    assert "past the right edge of the canvas" in message


def test_narrow_problems_do_not_change_a_wide_only_figure(tmp_path):
    # A grid of panels keeps its one layout (no phone variant): nothing is drawn, nothing checked.
    fig, axes = plt.subplots(2, 2, figsize=(8, 6))
    axes[0, 0].text(1.5, 0.5, "off to the side", transform=axes[0, 0].transAxes)
    assert not save_narrow_variant(fig, tmp_path / "n.svg")
    assert not (tmp_path / "n.svg").exists()



def test_a_figure_the_code_closed_is_checked_too(tmp_path):
    # plt.close leaves matplotlib's base canvas, which cannot measure text.
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [0, 1])
    fig.text(0.8, 0.5, "a note that runs off the right side")
    plt.close(fig)
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    problems = narrow_text_problems(fig)
    assert len(problems) == 1 and "past the right edge" in problems[0]


# The build measures a phone variant in the drawing that writes its file (issue 26): each maker
# gives the same figure twice, one measured while saving, one laid out again after its save.
def _clean():
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([1, 2, 3], [1, 2, 3], label="a line")
    ax.set_xlabel("rows")
    ax.legend(loc="upper left")
    return fig


def _text_off_the_right():
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [0, 1])
    fig.text(0.8, 0.5, "a note that runs off the right side")
    fig.text(0.1, 1.02, "a title above the canvas")
    return fig


def _legend_over_the_label():
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [0, 1], label="exact power")
    ax.set_xlabel("rows in the audit")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.05), fontsize=MIN_NARROW_LEGEND_PT - 2)
    return fig


def _two_panels_and_a_figure_legend():
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharey=True)
    for ax in axes:
        ax.plot([100, 1000], [0.2, 0.9], label="exact test")
        ax.set_xlabel("rows in the audit")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=2)
    fig.text(0.9, 0.9, "a note off the edge")
    return fig


def _closed():
    fig = _text_off_the_right()
    plt.close(fig)
    return fig


@pytest.mark.parametrize("make", [_clean, _text_off_the_right, _legend_over_the_label,
                                  _two_panels_and_a_figure_legend, _closed])
def test_problems_measured_while_saving_are_those_of_the_figure_laid_out_again(make, tmp_path):
    plt.rcParams["svg.hashsalt"] = "test"  # as the runner sets it: the same figure, the same bytes
    measured = ["left over from before"]
    assert save_narrow_variant(make(), tmp_path / "measured.svg", problems=measured)
    again = make()
    assert save_narrow_variant(again, tmp_path / "again.svg")
    assert measured == narrow_text_problems(again)
    assert (tmp_path / "measured.svg").read_bytes() == (tmp_path / "again.svg").read_bytes()
    if make is not _clean:
        assert measured  # each bad figure has something to find


def test_measuring_while_saving_draws_the_figure_once_less_and_leaves_no_listener(tmp_path):
    def drawings(fig, measure: bool) -> int:
        count = []
        fig.canvas.mpl_connect("draw_event", lambda event: count.append(1))
        if measure:
            save_narrow_variant(fig, tmp_path / "n.svg", problems=[])
        else:
            save_narrow_variant(fig, tmp_path / "n.svg")
            narrow_text_problems(fig)
        return len(count)

    fig = _two_panels_and_a_figure_legend()
    assert drawings(fig, True) == drawings(_two_panels_and_a_figure_legend(), False) - 1
    listeners = fig.canvas.callbacks.callbacks.get("draw_event", {})
    assert len(listeners) == 1  # the test's own counter; save_narrow_variant's is gone
