"""Code cells (`# %%`), the site's figure style and the build facts pages state (issue 13).

Expected values come from the code written here (what each cell prints, what it draws), git run
directly, and mkdocs.yml files written here.
"""

from __future__ import annotations

import io
import textwrap
from contextlib import redirect_stdout

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from site_src.execution._runner import _FigureCapture, run_cells, save_narrow_variant, split_code_cells  # noqa: E402
from site_src.provenance import source_config  # noqa: E402

HEADER = "# generated\n# run me\n"
CODE = textwrap.dedent('''\
    # %% Load
    import matplotlib.pyplot as plt
    x = 2
    print("first says", x)

    # %% Draw
    fig, ax = plt.subplots()
    ax.plot([1, 2], [x, x])
    print("second says", x * 2)

    # %%
    y = x + 1
    ''')


def test_cells_split_at_percent_markers_and_keep_file_lines():
    cells = split_code_cells(HEADER + CODE, HEADER.count("\n"))
    assert len(cells) == 3
    assert "\n".join(src for _, src in cells) == HEADER + CODE  # nothing lost, nothing added
    lines = (HEADER + CODE).split("\n")
    for first, src in cells:
        assert lines[first - 1] == src.split("\n")[0]
    assert cells[1][1].startswith("# %% Draw")
    # Without the header (as the page shows the code), the same cells.
    assert [s.split("\n")[-1] for _, s in split_code_cells(CODE, 0)] == [s.split("\n")[-1] for _, s in cells]


def test_code_without_markers_is_one_cell():
    assert split_code_cells("a = 1\nprint(a)\n", 0) == [(1, "a = 1\nprint(a)\n")]


def test_a_prefix_before_the_first_marker_is_its_own_cell():
    cells = split_code_cells("import os\n# %% Next\nb = 2\n", 0)
    assert [src.split("\n")[0] for _, src in cells] == ["import os", "# %% Next"]


def test_each_cell_records_its_own_output_and_figures(tmp_path):
    from matplotlib._pylab_helpers import Gcf

    plt.close("all")
    real = Gcf.__dict__["destroy"], Gcf.__dict__["destroy_all"], plt.show  # the capture replaces them, as in the run's own process
    try:
        capture = _FigureCapture(plt, tmp_path)
        namespace = {"__name__": "__main__"}
        whole = io.StringIO()
        with redirect_stdout(whole):
            cells = run_cells(HEADER + CODE, namespace, str(tmp_path / "x.py"), HEADER.count("\n"), figures=capture)
        capture.finish()
    finally:
        Gcf.destroy, Gcf.destroy_all, plt.show = real
        plt.close("all")
    assert [c["stdout"] for c in cells] == ["first says 2\n", "second says 4\n", ""]
    assert whole.getvalue() == "first says 2\nsecond says 4\n"  # the run's output is still whole
    assert [f["cell"] for f in capture.files] == [1]  # the one figure is the second cell's (0-based 1)
    assert (tmp_path / capture.files[0]["svg"]).exists() and not list(tmp_path.glob("*.png"))  # SVG only
    assert (tmp_path / capture.files[0]["narrow"]).exists()  # one axes: a phone variant is drawn
    assert namespace["y"] == 3  # one namespace across cells


def test_a_figure_closed_inside_a_cell_is_that_cells_even_if_saved_later(tmp_path):
    from matplotlib._pylab_helpers import Gcf

    plt.close("all")
    real = Gcf.__dict__["destroy"], Gcf.__dict__["destroy_all"], plt.show
    code = "# %% A\nimport matplotlib.pyplot as plt\nf = plt.figure()\n# %% B\nplt.close(f)\ng = plt.figure()\n"
    try:
        capture = _FigureCapture(plt, tmp_path)
        run_cells(code, {}, str(tmp_path / "x.py"), 0, figures=capture)
        capture.finish()
    finally:
        Gcf.destroy, Gcf.destroy_all, plt.show = real
        plt.close("all")
    # f was opened by cell A and saved when cell B closed it; g was opened by B, saved at the end.
    assert [f["cell"] for f in capture.files] == [0, 1]


def test_an_error_points_at_its_line_in_the_file(tmp_path):
    code = HEADER + "# %%\na = 1\n# %%\nb = 1\nraise ValueError('boom')\n"
    with pytest.raises(ValueError) as info:
        run_cells(code, {}, str(tmp_path / "x.py"), 2)
    assert info.traceback[-1].lineno + 1 == code.split("\n").index("raise ValueError('boom')") + 1


def test_side_by_side_panels_are_stacked_for_a_phone(tmp_path):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax in axes:
        ax.plot([0, 1], [0, 1])
    assert save_narrow_variant(fig, tmp_path / "n.svg")
    width, height = fig.get_size_inches()
    assert width < 7 and height > width  # narrower, and the panels one above the other
    (top, bottom) = sorted(axes, key=lambda a: -a.get_position().y0)
    assert top.get_position().y0 > bottom.get_position().y1
    assert all(label.get_visible() for label in axes[1].get_yticklabels())  # labels back on the shared axis
    assert (tmp_path / "n.svg").read_text().lstrip().startswith("<?xml")
    plt.close(fig)


def test_a_grid_of_panels_keeps_its_layout(tmp_path):
    fig, _ = plt.subplots(2, 2)
    assert not save_narrow_variant(fig, tmp_path / "n.svg")
    assert not (tmp_path / "n.svg").exists()
    plt.close(fig)


def test_source_config_reads_mkdocs_yml_and_the_fork_override(tmp_path, monkeypatch):
    (tmp_path / "mkdocs.yml").write_text(
        'repo_url: !ENV [FAIRSITE_REPO_URL, "https://example.org/a/b/"]\nsite_url: https://example.org/b/\n')
    monkeypatch.delenv("FAIRSITE_REPO_URL", raising=False)
    cfg = source_config(tmp_path)
    assert cfg == {"repo_url": "https://example.org/a/b", "repo_name": "b",
                   "clone_url": "https://example.org/a/b.git", "site_url": "https://example.org/b/"}
    monkeypatch.setenv("FAIRSITE_REPO_URL", "https://example.org/fork/b")
    assert source_config(tmp_path)["clone_url"] == "https://example.org/fork/b.git"


def test_source_config_requires_the_repository_and_site_address(tmp_path):
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    with pytest.raises(ValueError, match=r"mkdocs.yml: repo_url and site_url must be set"):
        source_config(tmp_path)


# --- issue 25 ---------------------------------------------------------------------------------

def test_a_marker_inside_a_string_is_text_not_a_cell_break(tmp_path):
    # As blackbricks#33 and spyder#8267: a line reading "# %%" inside a triple-quoted string.
    code = 'note = """\n# %% not a cell\n"""\n# %% Real\nn_lines = len(note.splitlines())\n'
    cells = split_code_cells(code, 0)
    assert [src.split("\n")[0] for _, src in cells] == ['note = """', "# %% Real"]
    namespace = {}
    run_cells(code, namespace, str(tmp_path / "x.py"), 0)
    assert namespace["note"] == "\n# %% not a cell\n" and namespace["n_lines"] == 2
    # An indented comment is not a marker either (only column 0 is), nor a "# %%%" line.
    assert len(split_code_cells("if True:\n    # %% inside\n    x = 1\n# %%% no\n", 0)) == 1


def test_a_figure_made_without_pyplot_is_captured_as_its_cells_output(tmp_path):
    # As sphinx-gallery#206: matplotlib.figure.Figure() drawn and saved, never known to pyplot.
    from matplotlib._pylab_helpers import Gcf
    from matplotlib.figure import Figure

    plt.close("all")
    real = Gcf.__dict__["destroy"], Gcf.__dict__["destroy_all"], plt.show, Figure.__init__
    code = textwrap.dedent('''\
        # %% Pyplot
        import io
        import matplotlib.pyplot as plt
        from matplotlib.figure import Figure
        plt.figure().add_subplot().set_title("by pyplot")
        plt.close()
        # %% Bare
        bare = Figure()
        bare.subplots().set_title("without pyplot")
        bare.savefig(io.BytesIO(), format="png")
        empty = Figure()  # nothing drawn: nothing to show
        ''')
    try:
        capture = _FigureCapture(plt, tmp_path)
        run_cells(code, {}, str(tmp_path / "x.py"), 0, figures=capture)
        capture.finish()
    finally:
        Gcf.destroy, Gcf.destroy_all, plt.show, Figure.__init__ = real
        plt.close("all")
    assert [f["cell"] for f in capture.files] == [0, 1]
    assert "without pyplot" in (tmp_path / capture.files[1]["svg"]).read_text()
