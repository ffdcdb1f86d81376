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
                                         narrow_text_problems, save_narrow_variant, wide_text_problems)
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


def test_an_inset_keeps_its_one_layout_and_its_unused_tick_labels_are_not_texts(tmp_path):
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.plot([0, 1], [0, 1])
    inset = ax.inset_axes([0.6, 0.1, 0.35, 0.35])
    inset.plot([1, 2, 3], [1, 3, 2])
    fig.tight_layout()
    fig.canvas.draw()
    low, high = sorted(inset.xaxis.get_view_interval())
    # matplotlib keeps tick labels outside the inset's view (not drawn): the trap this test guards
    assert any(not low <= t.get_loc() <= high and t.label1.get_text() for t in inset.xaxis.get_major_ticks())
    assert not save_narrow_variant(fig, tmp_path / "n.svg")  # insets keep the one layout
    assert wide_text_problems(fig) == []
    fig.text(0.9, 0.5, "a note off the edge")
    assert [p.split(" runs")[0] for p in wide_text_problems(fig)] == ["text 'a note off the edge'"]


def test_twin_axes_stay_with_their_panel_on_a_phone(tmp_path):
    fig, axes = plt.subplots(1, 2, figsize=(9, 3))
    axes[0].plot([0, 1], [2, 1])
    twin = axes[0].twinx()
    twin.plot([0, 1], [5, 4])
    twin.set_ylabel("the right scale")
    axes[1].plot([0, 1], [0, 1])
    fig.tight_layout()
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    rows = {id(ax): ax.get_subplotspec().rowspan.start for ax in fig.axes}
    assert rows[id(twin)] == rows[id(axes[0])] != rows[id(axes[1])]  # two rows, the twin in its panel's
    fig.canvas.draw()
    # the twin's scale stays on the right: none of its labels is drawn on the left, over the panel's
    assert not any(t.label1.get_visible() for t in twin.yaxis.get_major_ticks())
    assert any(t.label2.get_visible() for t in twin.yaxis.get_major_ticks())
    assert narrow_text_problems(fig) == []


def test_constrained_layout_keeps_its_engine_and_its_text_is_checked(tmp_path):
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    fig, axes = plt.subplots(1, 2, figsize=(9, 3), layout="constrained")
    title = fig.suptitle("a long title that explains everything about these two small panels in words")
    problems = []
    assert save_narrow_variant(fig, tmp_path / "n.svg", problems=problems)
    assert isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
    assert fig.get_size_inches()[0] == pytest.approx(NARROW_WIDTH_IN)
    fig.canvas.draw()
    box = title.get_window_extent(fig.canvas.get_renderer())
    assert box.x0 < 0 and box.x1 > fig.bbox.width  # matplotlib's own extent: past both edges
    assert len(problems) == 1 and "past the left edge and" in problems[0] and "past the right edge" in problems[0]


def test_a_figure_legends_title_is_kept_when_it_is_set_in_one_column(tmp_path):
    fig, axes = plt.subplots(1, 2, figsize=(9, 3))
    for ax, label in zip(axes, ("women", "men")):
        ax.plot([0, 1], [0, 1], label=label)
    fig.legend(loc="lower center", ncols=2, title="Group shown")
    fig.tight_layout(rect=(0, 0.2, 1, 1))
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    (legend,) = fig.legends
    assert legend._ncols == 1 and legend.get_title().get_text() == "Group shown"
    assert [t.get_text() for t in legend.get_texts()] == ["women", "men"]
