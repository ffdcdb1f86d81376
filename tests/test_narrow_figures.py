"""Figures that survive a phone (issue 28): where the phone variant of a figure is drawn, the build
checks that its text stays on the canvas, no legend covers an axis label, and legends are readable.

The bad figures here are made bad on purpose, each in one way; the extents the check reports are
compared with what matplotlib itself says of the same artists, or with the canvas, not with the
code under test.
"""

from __future__ import annotations

import re
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


# Issue 47: text measured at the size a phone shows it. The phone's content column is 358 CSS px
# wide on a 390 px screen (Material's 16 px margins; Chromium measured the built page's figures
# there at 358 px), and a matplotlib SVG's width is in points, 4/3 CSS px each: a text of s points
# shows at s * 4/3 * 358 / (the SVG's width in CSS px), or at s * 4/3 in a figure narrower than 358.
PHONE_PX = 358


def _svg_width_pt(path: Path) -> float:
    return float(re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', path.read_text()).group(1))


def _pairs_figure(size: float):
    """The shape of "More than two groups"' Figure 2: bars, three-line tick labels, ``size`` points."""
    fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.bar(range(3), [9, 15, 18], width=0.6)
    ax.set_xticks(range(3), ["Black\nWhite\n(n=572)", "Black\nHispanic\n(n=364)", "Other\nWhite\n(n=307)"],
                  fontsize=size)
    ax.set_ylabel("gap (pp)")
    fig.tight_layout()
    return fig


def test_text_a_phone_shows_smaller_than_the_minimum_is_named_with_the_figure(tmp_path):
    problems = ["left over from before"]
    assert save_narrow_variant(_pairs_figure(8), tmp_path / "figure-2-narrow.svg", problems=problems)
    width = _svg_width_pt(tmp_path / "figure-2-narrow.svg")
    shown = 8 * 4 / 3 * PHONE_PX / (width * 4 / 3)
    assert 5.5 < shown < 6.5  # what the reader measured on the page: 5-6 CSS px
    assert problems == [f"the x-axis tick labels ('Black White (n=572)', 'Black Hispanic (n=364)', ...) are set in "
                        f"8 pt: {shown:.1f} px on a phone, which shows the figure {PHONE_PX} px wide; use at least 9 pt "
                        f"(the smallest text a phone shows readably is {9 * PHONE_PX / width:.1f} px)"]
    with pytest.raises(ExecutionError) as err:
        _check_narrow_figures([{"svg": "figure-1.svg", "narrow": "figure-1-narrow.svg", "narrow_problems": []},
                               {"svg": "figure-2.svg", "narrow": "figure-2-narrow.svg", "narrow_problems": problems}],
                              source="explainers/more-than-two-groups.md")
    assert "figure 2 (figure-2-narrow.svg): the x-axis tick labels ('Black White (n=572)'" in str(err.value)
    # At the minimum, 9 pt in the phone variant, nothing is found.
    assert save_narrow_variant(_pairs_figure(9), tmp_path / "n.svg", problems=problems)
    assert problems == []


def test_a_figure_with_one_layout_is_measured_at_the_width_a_phone_shows_it(tmp_path):
    # A grid of panels keeps its one layout; a phone shows its 10 in (960 px) scaled to 358 px.
    fig, axes = plt.subplots(2, 2, figsize=(10, 6))
    fig.tight_layout()
    fig.savefig(tmp_path / "grid.svg")
    width = _svg_width_pt(tmp_path / "grid.svg")
    tick_pt = plt.rcParams["xtick.labelsize"]  # the site's 12 pt
    problems = wide_text_problems(fig)
    assert any(p.startswith(f"the x-axis tick labels ('0.0', '0.2', ...) are set in {tick_pt:g} pt: "
                            f"{tick_pt * PHONE_PX / width:.1f} px on a phone") for p in problems)
    # A figure narrower than the phone's column is shown at its own size: 8 pt is 10.7 px there.
    small, small_axes = plt.subplots(2, 2, figsize=(3.5, 3))
    for ax in small_axes.flat:
        ax.tick_params(labelsize=8)
    small.tight_layout()
    assert not [p for p in wide_text_problems(small) if "px on a phone" in p]


def test_the_tick_labels_of_an_axis_not_drawn_are_not_measured():
    # ax.axis("off") and a twin's hidden x axis keep tick labels matplotlib never draws.
    fig, axes = plt.subplots(1, 2, figsize=(NARROW_WIDTH_IN, 3))
    axes[0].tick_params(labelsize=5)
    axes[0].axis("off")
    twin = axes[1].twinx()
    twin.tick_params(axis="x", labelsize=5)
    fig.tight_layout()
    assert narrow_text_problems(fig) == []
    axes[1].tick_params(axis="x", labelsize=5)  # the twin's panel draws its x axis: that one counts
    assert [p.split(" are set")[0] for p in narrow_text_problems(fig)] == ["the x-axis tick labels ('0.0', '0.2', ...)"]


def test_a_phone_legend_made_again_draws_each_entry_as_its_artist(tmp_path):
    # The power page's legend (issue 47): made again in one column from the legend's own handles,
    # an error bar's entry lost its marker and showed as a line.
    from matplotlib.lines import Line2D

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6))
    for ax in axes:
        ax.plot([100, 1000], [0.2, 0.9], marker="o", label="exact power")
    axes[0].errorbar([200], [0.3], yerr=0.05, fmt="D", label="simulated audits")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=2)
    fig.tight_layout(rect=(0, 0.15, 1, 1))
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    (legend,) = fig.legends
    assert legend._ncols == 1
    assert [t.get_text() for t in legend.get_texts()] == ["exact power", "simulated audits"]
    assert {line.get_marker() for line in legend.findobj(Line2D)} >= {"o", "D"}  # each entry's marker drawn


ROOT = Path(__file__).resolve().parents[1]


def test_more_than_two_groups_numbers_its_figures_in_the_order_a_reader_meets_them():
    # Issue 47: Figure 2 came before Figure 1, and "Figure 1 (left)" meant nothing on a phone.
    source = (ROOT / "explainers" / "more-than-two-groups.md").read_text()
    prose = source.split("\n---\n", 1)[1].split("```python explainer")[0]  # after the front matter
    placed = [int(n) for n in re.findall(r"\{\{ figure\((\d+),", prose)]
    assert placed == sorted(placed) == list(range(1, len(placed) + 1))
    mentioned = [int(n) for n in re.findall(r"Figure (\d+)", re.sub(r"\{\{ figure\(.*?\}\}", "", prose, flags=re.S))]
    assert [n for k, n in enumerate(mentioned) if n not in mentioned[:k]] == sorted(set(mentioned))
    assert not re.search(r"Figure \d+ \((left|right)\)|\b(left|right) panel", prose)


def test_more_than_two_groups_figures_pass_the_phone_check(tmp_path):
    # The real page's code, run as the build runs it (no cache): its Figure 2 set its tick labels
    # in 8 pt, 6.0 px on a phone; the build now fails a run whose figures do that.
    from site_src.execution.execute import execute
    from site_src.sources.collect import parse_explainer
    from site_src.sources.extract import extract

    code = extract([parse_explainer(ROOT / "explainers" / "more-than-two-groups.md")])
    runs, errors = execute(code, root=ROOT, cache_dir=tmp_path, timeouts={"more-than-two-groups": 300},
                           use_cache=False)
    assert errors == []
    (run,) = runs
    assert len(run.figures) == 3
    for figure in run.figures:
        narrow = figure.with_name(figure.stem + "-narrow.svg")
        assert narrow.exists() and _svg_width_pt(narrow) * 4 / 3 > PHONE_PX  # shown scaled down: measured so
