"""Code cells (`# %%`), the site's figure style and the build facts pages state (issue 13).

Expected values come from the code written here (what each cell prints, what it draws), git run
directly, and mkdocs.yml files written here.
"""

from __future__ import annotations

import io
import subprocess
import textwrap
from contextlib import redirect_stdout

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from site_src._runner import run_cells, save_narrow_variant, split_code_cells  # noqa: E402
from site_src.provenance import build_facts, source_config  # noqa: E402

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
    plt.close("all")
    namespace = {"__name__": "__main__"}
    whole = io.StringIO()
    with redirect_stdout(whole):
        cells = run_cells(HEADER + CODE, namespace, str(tmp_path / "x.py"), HEADER.count("\n"))
    assert [c["stdout"] for c in cells] == ["first says 2\n", "second says 4\n", ""]
    assert whole.getvalue() == "first says 2\nsecond says 4\n"  # the run's output is still whole
    assert [c["figures"] for c in cells] == [[], [1], []]
    assert namespace["y"] == 3  # one namespace across cells
    plt.close("all")


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


def test_build_facts_name_the_commit_and_whether_it_is_dirty(tmp_path):
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], check=True)
    (tmp_path / "a.txt").write_text("one")
    subprocess.run(git + ["add", "a.txt"], check=True)
    subprocess.run(git + ["commit", "-qm", "c"], check=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    facts = build_facts(tmp_path)
    assert (facts["commit"], facts["short_commit"], facts["dirty"]) == (head, head[:12], False)
    (tmp_path / "a.txt").write_text("two")
    assert build_facts(tmp_path)["dirty"] is True


def test_build_facts_outside_git_say_unknown(tmp_path):
    facts = build_facts(tmp_path)
    assert facts["commit"] is None and facts["dirty"] is False and len(facts["date"]) == 10


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
