"""The reader-facing parts of the site build: notebook download, results explorer, link checker.

Expected values come from the inputs (the code given, the table given, the HTML written here),
not from the functions under test.
"""

from __future__ import annotations

import hashlib
import json
import re
import textwrap

import nbformat
import pandas as pd
import pytest

from site_src.publishing.linkcheck import broken_links, external_loads
from site_src.rendering.notebook import page_notebook_json, split_cells
from site_src.rendering.figures import draw_audit_figures
from site_src.rendering.results_page import filter_options, row_sentence, table_html, table_rows

CODE = textwrap.dedent('''
    """Doc."""
    import math

    # Step one: a value.
    x = 1
    text = """
    # not a step: inside a string
    """

    # Step two: a branch.
    if x:
        y = 2

    # a comment before else must stay with its if
    else:
        y = 3
    print(math.pi, y)
    ''').lstrip()


def _nonblank(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.strip()]


def test_cells_split_at_step_comments_only_between_statements():
    cells = split_cells(CODE)
    assert [c.splitlines()[0] for c in cells] == ['"""Doc."""', "# Step one: a value.", "# Step two: a branch."]
    assert _nonblank("\n".join(cells)) == _nonblank(CODE)
    for cell in cells:
        compile(cell, "<cell>", "exec")


def test_page_notebook_holds_prose_code_and_outputs_in_page_order(tmp_path):
    svg = tmp_path / "figure-1.svg"
    svg.write_text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10pt" height="10pt"></svg>\n')
    parts = [("markdown", "Some *prose* first."), ("code", CODE, [("stdout", "3.14 2\n")], [svg]), ("markdown", "Then more.")]
    args = dict(title="T <b>", subtitle="Why?", code_rel="explainers/code/t.py")
    text = page_notebook_json(parts, **args)
    assert text == page_notebook_json(parts, **args)  # byte-identical: no random cell ids
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# T &#60;b&#62;")
    assert nb.cells[1].source == "Some *prose* first." and nb.cells[-1].source == "Then more."
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert _nonblank("\n".join(c.source for c in code)) == _nonblank(CODE)
    assert all(not c.outputs for c in code[:-1])  # the outputs sit under the code's last piece
    stream, image = code[-1].outputs
    assert stream.output_type == "stream" and stream.text == "3.14 2\n"
    assert image.output_type == "display_data" and image.data["image/svg+xml"] == svg.read_text()
    assert [c.id for c in nb.cells] == [f"cell-{i}" for i in range(1, len(nb.cells) + 1)]
    assert json.loads(text)["metadata"]["kernelspec"]["name"] == "python3"


@pytest.fixture
def table() -> pd.DataFrame:
    rows = []
    for audit, name in [("a-audit", "A <Audit>"), ("b-audit", "B Audit")]:
        for s in ("S0", "S1"):
            for metric, kind in [("demographic_parity_difference", "difference"),
                                 ("equal_opportunity_difference", "difference"), ("disparate_impact_ratio", "ratio")]:
                gap = -0.25 if (audit, s, metric) == ("a-audit", "S1", "demographic_parity_difference") else 0.05
                if kind == "ratio":
                    gap = 0.7
                rows.append(dict(audit=audit, audit_name=name, strategy=s, model="logistic_regression",
                                 attribute="sex", disadvantaged_group="<f>", advantaged_group="m", metric=metric,
                                 kind=kind, value_disadvantaged=0.3, value_advantaged=0.3 - gap, gap=gap,
                                 ci_low=gap - 0.1, ci_high=gap + 0.1, p_value=0.0004 if s == "S1" else 0.3,
                                 q_value=0.001 if s == "S1" else 0.5, significant=s == "S1",
                                 small_sample_warning=False, reason=""))
    rows[-1].update(gap=float("nan"), ci_low=float("nan"), ci_high=float("nan"), p_value=float("nan"),
                    significant=float("nan"), reason="advantaged selection rate is 0")
    return pd.DataFrame(rows)


def test_table_has_a_row_per_result_marks_significant_rows_and_escapes(table):
    html = str(table_html(table))
    assert html.count("<tr data-audit=") == len(table)
    assert html.count('class="fc-significant"') == int((table["significant"] == True).sum())  # noqa: E712
    assert "<f>" not in html and "&lt;f&gt;" in html
    assert 'data-value="-0.25">−25.0 pp</td>' in html  # a difference of rates, in percentage points
    assert ">0.70</td>" in html  # a ratio stays a ratio
    assert 'title="advantaged selection rate is 0"' in html  # an undefined cell says why
    # the filters offer the names the table shows, for the values the rows carry
    assert filter_options(table)["audit"] == [("a-audit", "A <Audit>"), ("b-audit", "B Audit")]
    for _, name in filter_options(table)["metric"]:
        assert f">{name}</td>" in html  # each metric's filter name is the one its cells show


def test_rows_name_their_groups_and_ratios_have_their_own_column(table):
    """Issue 28: a row names both groups with their rates; the gap column holds percentage points
    only and a ratio sits in the ratio column."""
    html = str(table_html(table))
    # a-audit S1 selection rate: 30.0% for <f> against 0.3 - (-0.25) = 55.0% for m
    assert ">&lt;f&gt;: 30.0% vs m: 55.0%</summary>" in html
    rows = html.split("<tbody>")[1].split("</tr>")[:-1]
    for row, (_, r) in zip(rows, table.iterrows()):
        gap = re.search(r'<td data-col="gap"[^>]*>([^<]*)</td>', row).group(1)
        ratio = re.search(r'<td data-col="ratio"[^>]*>([^<]*)</td>', row).group(1)
        if r["kind"] == "ratio":
            assert gap == "" and ratio in ("0.70", "—"), row
        else:
            assert gap.endswith(" pp") and ratio == "", row
    headings = re.findall(r'<button type="button" class="fc-sort">([^<]+)</button>|<th [^>]*>([^<]+)</th>', html)
    names = [a or b for a, b in headings]
    assert "Gap (pp)" in names and "Ratio" in names and len(set(names)) == len(names)


def test_each_row_opens_to_one_plain_sentence(table):
    sentences = {r["metric"] + r["strategy"] + r["audit"]: row_sentence(r, small_sample=30)
                 for r in table.to_dict("records")}
    dp = sentences["demographic_parity_differenceS1a-audit"]
    # Issue 47: q is the smallest FDR at which the row is a discovery, not the chance that it is chance.
    assert dp == ("In A <Audit> (S1, logistic regression), the model flagged 30.0% of the <f> group and 55.0% of the "
                  "m group: a gap of −25.0 percentage points; counted with this audit's other tests it is among "
                  "findings of which at most about 5% are expected to be false (q = 0.0010).")
    not_sig = sentences["demographic_parity_differenceS0a-audit"]
    assert ("it is not a finding at a false discovery rate of 5% (q = 0.50), which does not mean the groups are "
            "treated alike.") in not_sig
    assert not any("chance" in text for text in sentences.values())
    ratio = sentences["disparate_impact_ratioS0a-audit"]
    assert ": a ratio of 0.70, under the four-fifths rule's 0.8;" in ratio
    undefined = sentences["disparate_impact_ratioS1b-audit"]
    assert undefined.endswith("; the gap is undefined (advantaged selection rate is 0).")
    for text in sentences.values():  # one sentence: a single full stop, at the end
        assert text.count(". ") == 0 and text.endswith("."), text
    html = str(table_html(table))
    assert html.count('<details class="fc-row-sentence">') == len(table)
    assert "<p>In A &lt;Audit&gt; (S1, logistic regression), the model flagged 30.0% of the &lt;f&gt; group" in html


def test_the_page_carries_the_first_rows_and_the_rows_file_every_row(table):
    first = str(table_html(table, first=3))
    assert first.count("<tr data-audit=") == 3
    lines = table_rows(table)
    assert len(lines) == len(table) and all(ln.startswith("<tr data-audit=") and ln.endswith("</tr>") for ln in lines)
    assert "".join(lines) == "".join(str(table_html(table)).split("<tbody>\n")[1].split("</tbody>")[0].splitlines())


def test_figures_are_deterministic_and_described(table, tmp_path):
    first = draw_audit_figures(table, tmp_path / "one")
    second = draw_audit_figures(table, tmp_path / "two")
    assert [f.name for f in first] == ["gaps-a-audit", "gaps-b-audit"]
    for f in first:
        for ext in ("svg", "narrow.svg"):  # the phone version too (issue 28)
            a, b = (tmp_path / d / (f"{f.name}.svg" if ext == "svg" else f"{f.name}-narrow.svg") for d in ("one", "two"))
            assert hashlib.sha256(a.read_bytes()).digest() == hashlib.sha256(b.read_bytes()).digest()
        svg = (tmp_path / "one" / f"{f.name}.svg").read_text()
        assert "<dc:date>" not in svg
    # The largest selection-rate gap of audit A, found by hand from the table above.
    assert "Largest demographic parity difference: −25.0 percentage points (sex, S1, logistic regression)" in first[0].alt
    assert first[0].title == "A <Audit>" and first[0].caption in first[0].alt


def test_each_results_figure_has_a_phone_version_drawn_at_a_phones_width(table, tmp_path):
    """Issue 28: the wide charts shrank to 4-5 px labels on a 390 px phone. The phone version is
    about as wide as the phone (so its 10-point labels stay near 12 px) and stacks the panels."""
    def size_pt(path):
        m = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"[^>]*\sheight="([\d.]+)pt"', path.read_text()[:2000])
        return float(m.group(1)), float(m.group(2))

    for f in draw_audit_figures(table, tmp_path):
        wide, narrow = size_pt(tmp_path / f"{f.name}.svg"), size_pt(tmp_path / f"{f.name}-narrow.svg")
        width_px = narrow[0] * 4 / 3  # 1 pt = 4/3 CSS px
        shown_px = 390 - 2 * 16  # the page's width on a 390 px phone, less its margins
        assert width_px <= 1.15 * shown_px  # 10 pt text shows at 13.3 px x shown/width >= 11.6 px
        assert narrow[1] > wide[1] and narrow[0] < wide[0] / 2


def test_no_figure_without_the_metrics_it_draws(table, tmp_path):
    assert draw_audit_figures(table[table["metric"] == "disparate_impact_ratio"], tmp_path) == []


def test_link_checker_finds_missing_files_anchors_and_outside_loads(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "index.html").write_text(
        '<h2 id="top">x</h2><a href="a/">ok</a><a href="a/#there">ok</a><a href="#top">ok</a>'
        '<a href="a/#nowhere">bad anchor</a><a href="b/">bad file</a><a href="https://example.org/">external link</a>'
        '<link rel="canonical" href="https://example.org/"><script src="https://cdn.example.org/x.js"></script>'
        '<img src="//cdn.example.org/i.png"><link rel="stylesheet" href="style.css">')
    (tmp_path / "a" / "index.html").write_text('<p id="there">y</p><a href="../index.html#top">back</a>')
    (tmp_path / "style.css").write_text('@import url("https://fonts.example.org/f.css"); p { color: red }')
    assert broken_links(tmp_path) == [
        "index.html: a/#nowhere: a/index.html has no element with id 'nowhere'",
        "index.html: b/: no such file b/index.html",
    ]
    assert external_loads(tmp_path) == [
        "index.html: https://cdn.example.org/x.js", "index.html: //cdn.example.org/i.png",
        "style.css: https://fonts.example.org/f.css",
    ]


def test_results_page_lists_rows_dropped_per_audit(tmp_path):
    """Issue 12: the dropped counts come from results_performance.csv's n_dropped column."""
    from site_src.rendering.results_page import _dropped_per_audit

    perf = tmp_path / "results_performance.csv"
    perf.write_text("audit,audit_name,strategy,model,n_dropped\n"
                    "a,Audit A,S0,m,0\na,Audit A,S1,m,0\nb,Audit B,S0,m,12\n")
    assert _dropped_per_audit(perf) == {"Audit A": 0, "Audit B": 12}
    assert _dropped_per_audit(tmp_path / "absent.csv") == {}
    perf.write_text("audit,audit_name,strategy,model\na,Audit A,S0,m\n")  # an older file
    assert _dropped_per_audit(perf) == {}


def test_the_glossary_states_the_level_the_results_page_uses():
    # The glossary writes the level out (see its comment); if ALPHA moves, the text must too.
    from faircode.benchmark import ALPHA
    from site_src.rendering.glossary import TERMS

    significant = next(t for t in TERMS if t.anchor == "significant")
    assert f"q-value is below {ALPHA:g}" in significant.definition
    assert f"p below {ALPHA:g}" in significant.definition


def test_markup_in_a_title_is_shown_as_typed_in_the_notebook_as_on_the_page():
    """Issue 25.8: the notebook's first cell, rendered as Jupyter renders Markdown (CommonMark with
    HTML), shows the title and subtitle as typed, with no element made from them."""
    from html.parser import HTMLParser

    from markdown_it import MarkdownIt

    title = "X <img src=x onerror=alert(1)> & *Not* [a link](x) `c` <b>bold</b>"
    subtitle = "Is a < b **or** _not_?"
    nb = json.loads(page_notebook_json([], title=title, subtitle=subtitle, code_rel="explainers/code/t.py"))
    first = "".join(nb["cells"][0]["source"]).split("\n\nThis notebook")[0]

    class _Read(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.tags, self.text = [], {}
            self._open = []

        def handle_starttag(self, tag, attrs):
            self.tags.append(tag)
            self._open.append(tag)

        def handle_endtag(self, tag):
            self._open.pop()

        def handle_data(self, data):
            if not self._open:  # the line break between the blocks
                return
            self.text[self._open[0]] = self.text.get(self._open[0], "") + data

    read = _Read()
    read.feed(MarkdownIt("commonmark").render(first))
    assert read.tags == ["h1", "p", "em"]
    assert read.text["h1"] == title and read.text["p"] == subtitle


def test_the_rows_file_is_a_script_holding_every_row(table, tmp_path):
    """The rows results.js loads on demand: a script (it loads from a site opened from disk, where
    fetch() cannot), every row, without the labels the script gives back from the headings."""
    from site_src.rendering.results_page import _write_rows

    _write_rows(tmp_path / "rows.js", "results", table_rows(table))
    text = (tmp_path / "rows.js").read_text(encoding="utf-8")
    prefix = '(window.fcRows = window.fcRows || {})["results"] = '
    assert text.startswith(prefix) and text.endswith(";\n")
    html = json.loads(text[len(prefix):-2])
    assert html.count("<tr data-audit=") == len(table) and "data-label" not in html
    assert "</" not in text  # nothing in it can end the script early
    assert re.sub(r' data-label="[^"]*"', "", "\n".join(table_rows(table))) == html
