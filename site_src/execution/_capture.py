"""The figures of an explainer run, in the site's style, and their phone variants.

:func:`_pyplot` sets matplotlib up (Agg, reproducible SVG, ``SITE_STYLE``);
:class:`_FigureCapture` saves each figure in drawing order (at ``plt.show()``, when it is closed,
and those still open or never shown at the end), as the output of the cell that opened it;
:func:`save_narrow_variant` lays a figure of one row of panels out again for a phone
(``NARROW_WIDTH_IN``). Part of the runner (:mod:`site_src.execution._runner`).
"""

from __future__ import annotations

import functools
import time
from pathlib import Path


def _pyplot():
    """``matplotlib.pyplot`` on the Agg backend, in the site's style, writing reproducible SVG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # Deterministic SVG ids, no dates in files: two builds of the same inputs are byte-identical.
    matplotlib.rcParams["svg.hashsalt"] = "fairsite"
    apply_site_style(matplotlib.rcParams)
    return plt


class _FigureCapture:
    """Figures saved in drawing order: at ``plt.show()``, when a figure is closed (``plt.close``
    with a figure, a number, a label or ``'all'``), and those still open at the end. A figure is
    saved again only if it changed since it was last saved (matplotlib marks it stale).

    Figures made without pyplot (``matplotlib.figure.Figure()``, drawn and saved by the code) are
    not pyplot's to show or close: every Figure the run creates is noted (a hook on
    ``Figure.__init__``), and one that was never saved and holds something is saved at the end,
    after pyplot's, in the order they were created, as the output of the cell that created it."""

    def __init__(self, plt, out_dir: Path):
        from matplotlib._pylab_helpers import Gcf

        self.files: list[dict] = []
        self._out = out_dir
        self._saved: set[int] = set()
        real_destroy, real_destroy_all = Gcf.destroy.__func__, Gcf.destroy_all.__func__

        def destroy(cls, num):
            manager = num if hasattr(num, "canvas") else cls.figs.get(num)
            if manager is not None:
                self._save(manager.canvas.figure)
                self._created.pop(id(manager.canvas.figure), None)  # saved; let it be freed
            real_destroy(cls, num)

        def destroy_all(cls):
            for manager in sorted(cls.figs.values(), key=lambda m: m.num):
                self._save(manager.canvas.figure)
                self._created.pop(id(manager.canvas.figure), None)
            real_destroy_all(cls)

        Gcf.destroy, Gcf.destroy_all = classmethod(destroy), classmethod(destroy_all)
        self._gcf = Gcf
        self._created: dict = {}  # id -> every Figure the run created and pyplot has not closed, in order
        from matplotlib.figure import Figure

        real_init = Figure.__init__

        def init(fig, *args, **kwargs):
            real_init(fig, *args, **kwargs)
            if self.tracking:
                self._created[id(fig)] = fig
                self._owner.setdefault(id(fig), self.cell)

        Figure.__init__ = init
        self.code_file: str | None = None  # the explainer's code as run (run_cells names it)
        _note_where_formulas_are_set(lambda: self.code_file if self.tracking else None)
        self.tracking = True  # off once the run ends: the runner's own figures are not the run's
        self.cell = 0  # the cell running now; a figure saved while it runs is its output
        self._owner: dict[int, int] = {}  # id(figure) -> the cell that opened it
        self._figs: list = []  # the figure of each file, for its narrow variant at the end
        self.seconds = 0.0  # spent saving files: a cost of the page, not of the code
        plt.show = lambda *a, **k: self.capture_open()

    def capture_open(self) -> None:
        for manager in sorted(self._gcf.get_all_fig_managers(), key=lambda m: m.num):
            self._save(manager.canvas.figure)

    def open_figures(self) -> set[int]:
        return {id(m.canvas.figure) for m in self._gcf.get_all_fig_managers()}

    def opened_by(self, figure_ids: set[int], cell: int) -> None:
        for fid in figure_ids:
            self._owner.setdefault(fid, cell)

    def raise_readable(self, raised: ValueError) -> None:
        """If ``raised``, an error drawing a figure raised, comes from a text of it that is a formula
        matplotlib cannot read (mathtext), raise instead one sentence naming the text and what is
        wrong, at the explainer's lines that set the text (:func:`_formula_error`); else return."""
        text = _text_drawn_when(raised)
        readable = None if text is None else _formula_error(text)
        if readable is None:
            return
        if readable.__traceback__ is None:  # set by no line of the code: name the line that drew it
            frames, tb = [], raised.__traceback__
            while tb is not None:
                if tb.tb_frame.f_code.co_filename == self.code_file:
                    frames.insert(0, (tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
                tb = tb.tb_next
            readable.with_traceback(_traceback_of(frames))
        raise readable from None  # matplotlib's 50 lines from inside its parser say no more

    def unreadable_formula(self) -> ValueError | None:
        """:func:`_formula_error` of the first text of a figure still open that matplotlib cannot
        read as a formula, or None: found when the code ends, so the error names the line that set
        the text, before the figure is saved (where the explainer's lines are no longer running)."""
        from matplotlib.text import Text

        for fig in list(self._created.values()):
            for text in fig.findobj(Text):
                if "$" in text.get_text() and text.get_visible() and (text.axes is None or text.axes.get_visible()):
                    if (error := _formula_error(text)) is not None:
                        return error
        return None

    def finish(self) -> None:
        """Save the figures still open, then the narrow (phone) variant of each figure's last
        file: it re-lays the figure out, so it is drawn only once the code can no longer change it.
        A formula matplotlib cannot read in a text set while drawing (a tick formatter's) is
        reported as :meth:`raise_readable` says."""
        try:
            self._finish()
        except ValueError as raised:
            self.raise_readable(raised)
            raise

    def _finish(self) -> None:
        self.capture_open()
        self.tracking = False
        for fig in list(self._created.values()):
            if id(fig) not in self._saved and (fig.axes or fig.artists or fig.lines or fig.patches
                                               or fig.texts or fig.images or fig.legends):
                self._save(fig)
        started = time.perf_counter()
        last = {id(fig): i for i, fig in enumerate(self._figs)}
        for i, fig in enumerate(self._figs):
            if last[id(fig)] != i:
                continue  # drawn again later (the code changed it): the later file has the variant
            # What a phone would cut or cover, the parent fails the build with: in the phone
            # variant, or in the one layout of a figure that has none (a phone shows it scaled).
            if _panels_in_one_row(fig) is None:
                self.files[i]["narrow_problems"] = wide_text_problems(fig)
                continue
            narrow = self._out / f"figure-{i + 1}-narrow.svg"
            problems: list[str] = []
            if save_narrow_variant(fig, narrow, problems=problems):
                self.files[i]["narrow"] = narrow.name
                self.files[i]["narrow_problems"] = problems
        self.seconds += time.perf_counter() - started

    def _save(self, fig) -> None:
        if id(fig) in self._saved and not fig.stale:
            return
        started = time.perf_counter()
        i = len(self.files) + 1
        # SVG only: the page, the lightbox, the home card and the notebook all show the SVG.
        svg = self._out / f"figure-{i}.svg"
        _save_svg(fig, svg)
        fig.stale = False  # saving drew it; a later change marks it stale again
        self._saved.add(id(fig))
        self.files.append({"svg": svg.name, "cell": self._owner.get(id(fig), self.cell)})
        self._figs.append(fig)
        self.seconds += time.perf_counter() - started


def _note_where_formulas_are_set(code_file) -> None:
    """Have each text that may hold a formula (a ``$`` in it) remember the frames of the
    explainer's code that set it, innermost first (``code_file()``: the file the code runs as, or
    None when nothing is to be noted): matplotlib reads the formula only when it draws the figure,
    often after the code has ended, and the line to name is the one that set the text (issue 47)."""
    import sys

    from matplotlib.text import Text

    real_set_text = Text.set_text

    def set_text(text, s):
        before = text.get_text()
        real_set_text(text, s)
        name = code_file()
        # Set again to the same (a tick label at each drawing): the line that first set it stays.
        if name is not None and "$" in text.get_text() and text.get_text() != before:
            frame, frames = sys._getframe(1), []
            while frame is not None:
                if frame.f_code.co_filename == name:
                    frames.append((frame, frame.f_lasti, frame.f_lineno))  # where it is now, not later
                frame = frame.f_back
            text._fairsite_set_at = frames

    Text.set_text = set_text


def _text_drawn_when(raised: BaseException):
    """The text matplotlib was laying out or drawing when it raised ``raised``, if any: the innermost
    frame of its traceback that is a method of a ``Text``."""
    from matplotlib.text import Text

    found, tb = None, raised.__traceback__
    while tb is not None:
        if isinstance(tb.tb_frame.f_locals.get("self"), Text):
            found = tb.tb_frame.f_locals["self"]
        tb = tb.tb_next
    return found


def _formula_error(text) -> ValueError | None:
    """A ``ValueError`` saying in one sentence why matplotlib cannot draw ``text``'s formula
    (mathtext: what stands between two ``$``), or None if it can. Its traceback is the frames of the
    explainer's code that set the text (:func:`_note_where_formulas_are_set`), so the build's
    report names that line of the explainer's source, as it names the line of any error the code
    raises; a text set by no line of the code (a tick formatter's) has none."""
    import re

    from matplotlib import cbook

    if text.get_usetex() or not text.get_parse_math():
        return None  # LaTeX's own errors, or no formula at all
    for line in text.get_text().split("\n"):  # matplotlib lays each line out on its own
        if not cbook.is_math_text(line):
            continue
        try:
            _mathtext_parser().parse(line, 72, text.get_fontproperties())
        except ValueError as err:
            # pyparsing's report: the formula, a caret under the fault, then "SomeException: what,
            # found what (at char N), (line:1, col:N+1)".
            formula, *_, said = str(err).strip("\n").split("\n")
            m = re.match(r"(?:\w+: )?(.*?)\s*\(at char (\d+)\), \(line:\d+, col:\d+\)$", said)
            what, at = (m.group(1), int(m.group(2)) + 1) if m else (said, None)
            if len(what) > 100 and ", found " in what:  # a list of every construct the grammar allows
                what = "expected more" + what[what.rindex(", found "):]
            # Quoted as written in the figure, not repr'd: a formula's backslashes are single there.
            where = f"at character {at} of '{formula}'" if at else f"in '{formula}'"
            shown = " ".join(text.get_text().split())
            error = ValueError(f"the figure text '{shown}' is not a formula matplotlib can draw (between two $ signs "
                               f"it reads mathtext): {where}, {what[:1].lower()}{what[1:]}; correct the formula, or "
                               "write a literal dollar sign as \\$")
            return error.with_traceback(_traceback_of(getattr(text, "_fairsite_set_at", [])))
    return None


def _traceback_of(frames: list):
    """A traceback through ``frames`` (``(frame, lasti, lineno)``, innermost first), or None."""
    import types

    tb = None
    for frame, lasti, lineno in frames:
        tb = types.TracebackType(tb, frame, lasti, lineno)
    return tb


@functools.cache
def _mathtext_parser():
    """The mathtext parser matplotlib's SVG backend uses (one: it caches what it parsed)."""
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")


# The site's figure style, applied to every explainer run (the reader who runs the file gets
# matplotlib's defaults; the numbers are the same). Sizes are for the page: the content column is
# about 550 px wide on a laptop and the explainers draw at 9-10.5 in (860-1000 px), so a figure
# shows at ~0.57 of its size and 13 pt text reads at ~10 px, near the page's captions (11 px);
# a click opens it full size.
# The background is transparent and the ink dark: the light scheme shows it as drawn, the dark
# scheme inverts it (extra.css). Colours: the theme's indigo and deep orange first, then
# Okabe-Ito colours, which stay distinct with the common colour-vision deficiencies.
SITE_STYLE = {
    "font.size": 13, "axes.titlesize": 13, "axes.labelsize": 13, "xtick.labelsize": 12,
    "ytick.labelsize": 12, "legend.fontsize": 11, "figure.titlesize": 14,
    "figure.facecolor": "none", "axes.facecolor": "none", "savefig.facecolor": "none",
    "savefig.transparent": True,
    # A legend sits on a near-opaque card so data under it cannot run through its text.
    "legend.frameon": True, "legend.facecolor": "white", "legend.framealpha": 0.85, "legend.edgecolor": "none",
    "text.color": "#212121", "axes.labelcolor": "#212121", "axes.edgecolor": "#616161",
    "xtick.color": "#424242", "ytick.color": "#424242",
    "axes.spines.top": False, "axes.spines.right": False, "grid.color": "#9e9e9e", "grid.alpha": 0.4,
    "axes.prop_cycle": ["#3f51b5", "#d84315", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"],
}


NARROW_WIDTH_IN = 6.6  # shown on a 390 px phone (about 364 px of column) at the laptop's scale


def apply_site_style(rc) -> None:
    """Set the site's figure style (``SITE_STYLE``) in matplotlib's ``rcParams`` ``rc``."""
    from cycler import cycler

    for key, value in SITE_STYLE.items():
        rc[key] = cycler(color=value) if key == "axes.prop_cycle" else value


def save_narrow_variant(fig, path: Path, *, problems: list[str] | None = None) -> bool:
    """Save ``fig`` laid out for a phone: panels side by side stacked, the width ``NARROW_WIDTH_IN``.

    Only for figures whose axes all sit in one row of one grid (``plt.subplots(1, n)``, twin axes
    kept with their panel) or that have a single axes; anything else (insets, colour bars, grids
    of panels, no axes) keeps its one layout and this returns False. A figure under constrained
    layout keeps it (the engine lays the stacked panels out as they are drawn); any other is laid
    out again with ``tight_layout``. Call it after the figure's own files are saved: it changes
    the figure.

    ``problems``, if a list, receives what a phone reader would lose in the saved file
    (:func:`narrow_text_problems`), measured in the drawing that wrote it: the file's own text
    geometry, without laying the figure out once more (a fifth of the variant's cost, issue 26).
    """
    panels = _panels_in_one_row(fig)
    if panels is None:
        return False
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    width, height = fig.get_size_inches()
    if len(panels) > 1:
        stacked = fig.add_gridspec(len(panels), 1)
        for row, panel in enumerate(panels):
            for ax in panel:  # a panel and its twins (twinx, twiny) share its place
                ax.set_subplotspec(stacked[row, 0])
            panel[0].yaxis.set_tick_params(labelleft=True)  # a shared y axis hid the inner panels' labels
        height = height * len(panels) * 0.9
    else:
        height = height * max(0.75, NARROW_WIDTH_IN / width)
    fig.set_size_inches(NARROW_WIDTH_IN, height)
    if not isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine):
        rect = _room_for_figure_legends(fig, height)
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "tight layout not applied": keep the wide figure only
            try:
                fig.tight_layout(rect=rect)
            except Exception:  # noqa: BLE001 - any layout failure has the same answer
                return False
    if problems is None:
        _save_svg(fig, path)
    else:
        problems[:] = _save_measured(fig, path)
    return True


def _panels_in_one_row(fig) -> list[list] | None:
    """The figure's panels left to right, each its axes (the first, then its twins), when they all
    sit in one row of one grid and none holds an inset; else None (the figure keeps one layout)."""
    axes = list(fig.axes)
    specs = [ax.get_subplotspec() for ax in axes]
    if not axes or any(s is None for s in specs) or any(ax.child_axes for ax in axes):
        return None
    grid = specs[0].get_gridspec()
    if any(s.get_gridspec() is not grid for s in specs) or grid.nrows != 1:
        return None
    panels: dict[tuple[int, int], list] = {}
    for ax, spec in zip(axes, specs):
        panels.setdefault((spec.colspan.start, spec.colspan.stop), []).append(ax)
    return [panels[cell] for cell in sorted(panels)]


def _save_measured(fig, path) -> list[str]:
    """Save ``fig`` as SVG to ``path``; return its text problems (:func:`_text_problems`) as
    measured in the drawing."""
    figure_dpi = fig.dpi  # the problems' pixels are the figure's; the SVG is drawn at 72 dpi
    found: list[list[str]] = []
    _save_svg(fig, path, drawn=lambda renderer: found.append(
        _text_problems(fig, renderer, figure_dpi / fig.dpi)))
    return found[-1]  # the last drawing is the one written


def _save_svg(fig, path, drawn=None) -> None:
    """Save ``fig`` as SVG to ``path`` (a path or a binary file) in one drawing, without a date:
    the same figure gives the same bytes.

    A figure laid out once with ``tight_layout()`` keeps a placeholder layout engine, which lays
    nothing out; matplotlib's ``savefig`` still draws such a figure once without output before
    drawing it into the file, to run the engine: a third of the save's time, for nothing
    (issue 26). Without the placeholder for the save, the file is byte for byte the same.

    ``drawn``, if given, is called with the renderer at the end of each drawing of the save
    (matplotlib's ``draw_event``), while the figure is laid out as the file shows it."""
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    engine = fig.get_layout_engine()
    if isinstance(engine, PlaceHolderLayoutEngine):
        fig.set_layout_engine(None)
        if fig.get_layout_engine() is not None:  # rcParams name an engine (figure.autolayout): keep the figure's
            fig.set_layout_engine(engine)
            engine = None
    else:
        engine = None
    listening = None if drawn is None else fig.canvas.mpl_connect("draw_event", lambda event: drawn(event.renderer))
    try:
        fig.savefig(path, format="svg", metadata={"Date": None})
    finally:
        if listening is not None:
            fig.canvas.mpl_disconnect(listening)
        if engine is not None:
            fig.set_layout_engine(engine)


def _drawable(fig) -> None:
    """Give ``fig`` a canvas that draws and measures: a figure the code closed (``plt.close``)
    keeps only matplotlib's base canvas, which has no renderer (``savefig`` lends one itself)."""
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)


def _laid_out(fig):
    """Lay ``fig`` out as a draw would (ticks, their labels, where a legend goes) without painting
    a pixel, and return the renderer to measure its texts with: what a full Agg draw found, at a
    fraction of its cost (issue 26)."""
    _drawable(fig)
    fig.draw_without_rendering()
    return fig.canvas.get_renderer()


# Legend locations (matplotlib's codes) at the figure's bottom and at its top.
_LOWER_LOCS, _UPPER_LOCS = {3, 4, 8}, {1, 2, 9}


def _room_for_figure_legends(fig, height: float) -> tuple[float, float, float, float]:
    """The ``tight_layout`` rectangle that leaves room for the figure's own legends (``fig.legend``)
    on a phone: each set in one column (a row of entries is wider than a phone), the figure made
    taller by their height so the panels keep theirs, and the panels kept clear of them.

    A legend the code placed at the bottom of a wide figure with ``tight_layout(rect=...)`` would
    otherwise sit over the stacked panels' x axis, its columns past both edges (issue 28).
    """
    if not any(leg.get_visible() for leg in fig.legends):
        return (0, 0, 1, 1)
    for k, leg in enumerate(fig.legends):
        if leg.get_visible() and leg._ncols > 1:
            # A legend lays its columns out when it is made: make it again, in one column.
            texts, title = leg.get_texts(), leg.get_title()
            # Made from the artists it stands for where an axes has one of that label (the first
            # panel's, where panels share labels): a legend's own handle is only a part of some
            # (an error bar's: its bars, not its marker; issue 47, the power page on a phone).
            drawn = {label: handle for ax in reversed(fig.axes) for handle, label in zip(*ax.get_legend_handles_labels())}
            handles = [drawn.get(t.get_text(), handle) for handle, t in zip(leg.legend_handles, texts)]
            again = fig.legend(handles, [t.get_text() for t in texts], loc=leg._loc, ncols=1,
                               frameon=leg.get_frame_on(), fontsize=texts[0].get_fontsize() if texts else None,
                               **({"title": title.get_text(), "title_fontsize": title.get_fontsize()}
                                  if title.get_visible() and title.get_text() else {}))
            fig.legends.remove(again)
            leg.remove()
            fig.legends.insert(k, again)
    legends = [leg for leg in fig.legends if leg.get_visible()]
    renderer = _laid_out(fig)
    heights = {id(leg): leg.get_window_extent(renderer).height / fig.dpi for leg in legends}  # inches
    fig.set_size_inches(NARROW_WIDTH_IN, height + sum(heights.values()) + 0.1)
    total = fig.get_size_inches()[1]
    bottom = sum(heights[id(leg)] for leg in legends if leg._loc in _LOWER_LOCS) / total
    top = sum(heights[id(leg)] for leg in legends if leg._loc in _UPPER_LOCS) / total
    return (0, bottom + (0.01 if bottom else 0), 1, 1 - top - (0.01 if top else 0))


# The width a phone shows a figure at, in CSS px: on the reviews' phone, 390 px wide (issue 47),
# Material's content column keeps 16 px a side (its `.md-content__inner { margin: 0 .8rem }` at the
# phone's root font size, `html { font-size: 125% }`, 20 px), and extra.css shows a figure at most
# that wide (`.fc-figure img { max-width: 100% }`); a narrower figure keeps its own size. Chromium
# measures the figures of the built page at 390 px: 358 px.
PHONE_CONTENT_PX = 390 - 2 * 16


def _phone_px_per_pt(width_in: float) -> float:
    """The CSS px a phone shows a point of text as, in a figure ``width_in`` inches wide: its SVG is
    ``width_in * 96`` CSS px wide (72 pt an inch, 4/3 px a point), shown at most ``PHONE_CONTENT_PX``."""
    return min(PHONE_CONTENT_PX, width_in * 96) / (width_in * 72)


# The smallest text a phone shows readably: 9 pt in the narrow variant (``NARROW_WIDTH_IN``), which
# a phone shows 358 px wide, 6.8 CSS px. Every text a phone shows is held to that size in px, in the
# narrow variant and in a figure that keeps one layout, which a phone shows scaled (issue 47: a
# phone showed 8 pt tick labels at 6.0 px, and 12 pt ones in a 10 in figure at 6.0 px too).
MIN_NARROW_LEGEND_PT = 9.0
MIN_PHONE_TEXT_PX = MIN_NARROW_LEGEND_PT * _phone_px_per_pt(NARROW_WIDTH_IN)

# A text may touch the canvas's edge by this much (pixels at the figure's dpi): anti-aliasing and
# rounding, not a cut letter.
_EDGE_TOLERANCE_PX = 1.0


def narrow_text_problems(fig) -> list[str]:
    """What a phone reader would lose in ``fig`` as laid out now (its narrow variant): each text
    that runs past the canvas's edge, each legend that covers an axis label or a tick label, and
    each text a phone shows smaller than ``MIN_PHONE_TEXT_PX`` (:func:`_phone_px_per_pt`).

    Read from matplotlib's own extents (``artist.get_window_extent(renderer)``) in a drawing of
    the figure as SVG, the file a phone shows (its text drawn as paths, which measure about 3%
    wider than the Agg renderer's hinted text), in pixels at the figure's dpi. Texts clipped to
    their axes cannot leave the canvas, empty texts and the tick labels of ticks outside the
    axis's view are not drawn, so they are not checked. Returns one sentence per problem, naming
    the text (``[]`` when every text fits). The build measures the same in the drawing that writes
    the variant (:func:`save_narrow_variant`'s ``problems``).
    """
    import io

    return _save_measured(fig, io.BytesIO())


def wide_text_problems(fig) -> list[str]:
    """What any reader loses in a figure that keeps one layout (no phone variant: insets, colour
    bars, grids of panels, no axes): each text past the canvas's edge and each legend over an axis
    label or tick label, measured as :func:`narrow_text_problems` measures them, and each text a
    phone, which shows the figure scaled to its width, shows smaller than ``MIN_PHONE_TEXT_PX``."""
    import io

    return _save_measured(fig, io.BytesIO())


def _text_problems(fig, renderer, scale: float) -> list[str]:
    """:func:`narrow_text_problems` of ``fig`` as ``renderer`` has just drawn it; ``scale`` turns the
    drawing's pixels into the figure's (its dpi over the drawing's: an SVG is drawn at 72)."""
    from matplotlib.text import Text

    width, height = fig.bbox.width, fig.bbox.height
    axes = _all_axes(fig)
    ticks = {id(t) for ax in axes for axis in (ax.xaxis, ax.yaxis) for t in _drawn_tick_labels(axis)}
    texts = _drawn_texts(fig, Text)
    problems = _small_text_problems(fig, texts)
    for text in texts:
        if text.get_clip_on() and text.get_clip_box() is not None and id(text) not in ticks:
            continue  # cut to its axes: it cannot reach past the canvas
        box = text.get_window_extent(renderer)
        over = {"left": -box.x0, "right": box.x1 - width, "bottom": -box.y0, "top": box.y1 - height}
        sides = [f"{px * scale:.0f} px past the {side} edge" for side, px in over.items()
                 if px * scale > _EDGE_TOLERANCE_PX]
        if sides:
            problems.append(f"text {_quoted(text)} runs {' and '.join(sides)} of the canvas")
    for legend in _legends(fig, axes):
        box = legend.get_window_extent(renderer)
        for ax in axes:
            for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
                label = axis.label
                if label.get_visible() and label.get_text().strip() and box.overlaps(label.get_window_extent(renderer)):
                    problems.append(f"the legend ({_legend_name(legend)}) covers the {name}-axis label {_quoted(label)}")
                for tick in _drawn_tick_labels(axis):
                    if box.overlaps(tick.get_window_extent(renderer)):
                        problems.append(f"the legend ({_legend_name(legend)}) covers the {name}-axis tick label "
                                        f"{_quoted(tick)}")
                        break  # one tick label says it; the others would repeat it
    return problems


def _small_text_problems(fig, texts: list) -> list[str]:
    """Each of ``texts`` (drawn in ``fig``) that a phone shows smaller than ``MIN_PHONE_TEXT_PX``, a
    legend's texts named as the legend and an axis's tick labels as that axis's: one sentence each,
    with the size that would do. Read from the font sizes, in points, and the figure's width: a
    text's size on the page does not depend on where it is drawn."""
    import math

    per_pt = _phone_px_per_pt(fig.get_size_inches()[0])
    names: dict[int, str] = {}  # id(text) -> what a sentence calls it, with its verb
    for legend in _legends(fig, _all_axes(fig)):
        names.update({id(t): f"the legend ({_legend_name(legend)}) is" for t in [*legend.get_texts(), legend.get_title()]})
    for ax in _all_axes(fig):
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = _drawn_tick_labels(axis)
            shown = ", ".join(_quoted(t) for t in labels[:2]) + (", ..." if len(labels) > 2 else "")
            names.update({id(t): f"the {name}-axis tick labels ({shown}) are" for t in labels})
    small: dict[str, float] = {}  # what is too small -> its smallest size in points
    for text in texts:
        if text.get_fontsize() * per_pt < MIN_PHONE_TEXT_PX - 1e-9:
            name = names.get(id(text), f"text {_quoted(text)} is")
            small[name] = min(small.get(name, math.inf), text.get_fontsize())
    need = math.ceil(MIN_PHONE_TEXT_PX / per_pt * 10 - 1e-6) / 10  # points, rounded up to a tenth
    shown_px = fig.get_size_inches()[0] * 72 * per_pt
    return [f"{name} set in {pt:g} pt: {pt * per_pt:.1f} px on a phone, which shows the figure {shown_px:.0f} px "
            f"wide; use at least {need:g} pt (the smallest text a phone shows readably is {MIN_PHONE_TEXT_PX:.1f} px)"
            for name, pt in small.items()]


def _legends(fig, axes: list) -> list:
    """The figure's visible legends: its own (``fig.legend``), then its axes'."""
    return [leg for leg in [*fig.legends, *(ax.get_legend() for ax in axes)] if leg is not None and leg.get_visible()]


def _drawn_texts(fig, text_type) -> list:
    """The texts a draw of ``fig`` shows: visible, not empty, tick labels only within the axis's view."""
    axes = _all_axes(fig)
    ticks = {id(t) for ax in axes for axis in (ax.xaxis, ax.yaxis)
             for t in [*axis.get_majorticklabels(), *axis.get_minorticklabels()]}
    shown_ticks = {id(t) for ax in axes for axis in (ax.xaxis, ax.yaxis) for t in _drawn_tick_labels(axis)}
    return [text for text in fig.findobj(text_type)
            if text.get_visible() and text.get_text().strip() and text.figure is not None
            and (id(text) not in ticks or id(text) in shown_ticks)]


def _all_axes(fig) -> list:
    """The figure's axes and, after each, its insets (``ax.inset_axes``: not in ``fig.axes``)."""
    out = []
    for ax in fig.axes:
        pending = [ax]
        while pending:
            here = pending.pop()
            out.append(here)
            pending += reversed(here.child_axes)
    return out


def _drawn_tick_labels(axis) -> list:
    """The labels of the ticks matplotlib draws: those within the axis's view interval, on an axis
    that is drawn (a twin's hidden axis, ``ax.axis("off")``: none)."""
    if not (axis.get_visible() and axis.axes.axison and axis.axes.get_visible()):
        return []
    low, high = sorted(axis.get_view_interval())
    span = (high - low) * 1e-9
    out = []
    for tick in axis.get_major_ticks():
        if low - span <= tick.get_loc() <= high + span:
            out += [label for label in (tick.label1, tick.label2)
                    if label.get_visible() and label.get_text().strip()]
    return out


def _quoted(text) -> str:
    shown = " ".join(text.get_text().split())
    return repr(shown if len(shown) <= 60 else shown[:57] + "...")


def _legend_name(legend) -> str:
    entries = [t.get_text() for t in legend.get_texts()][:2]
    return "with " + ", ".join(repr(e) for e in entries) + (", ..." if len(legend.get_texts()) > 2 else "")
