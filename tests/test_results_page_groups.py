"""The results explorer's by-group view (site_src.rendering.results_page.groups_table_html)."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from faircode import benchmark as bm
from site_src.rendering import results_page
from site_src.rendering.results_page import group_defaults, group_filter_options, group_rows, groups_table_html


def _rows():
    base = dict(audit="recidivism-risk", audit_name="Recidivism Risk", strategy="S2", model="logistic_regression",
                attribute="race", attribute_kind="attribute", reference_group="White", metric="selection_rate",
                min_size=30, max_gap=0.258, p_value_max_gap=0.0011)
    return pd.DataFrame([
        {**base, "group": "Black", "value": 0.466, "ci_low": 0.428, "ci_high": 0.505, "n_group": 650,
         "small_cell": False, "diff_vs_reference": 0.258, "p_value_vs_reference_holm": 1.8e-17},
        {**base, "group": "White", "value": 0.208, "ci_low": 0.172, "ci_high": 0.249, "n_group": 423,
         "small_cell": False, "diff_vs_reference": 0.0, "p_value_vs_reference_holm": None},
        {**base, "group": "<Asian>", "value": 0.0, "ci_low": 0.0, "ci_high": 0.561, "n_group": 3,
         "small_cell": True, "diff_vs_reference": -0.208, "p_value_vs_reference_holm": None},
    ])


def test_the_by_group_file_name_is_the_benchmarks():
    assert results_page.BY_GROUP_FILE == bm.BY_GROUP_FILE


def _plain(html: str) -> str:
    """The table without the cells' column names (data-col, data-label), which a phone's cards use."""
    return re.sub(r' data-col="[^"]*" data-label="[^"]*"', "", html)


def test_groups_table_marks_reference_small_cells_and_significance():
    html = _plain(str(groups_table_html(_rows(), alpha=0.05)))
    assert html.count("<tr data-audit") == 3
    assert 'data-attribute="race"' in html and 'data-metric="selection_rate"' in html
    assert "White <span class=\"fc-ref\"" in html
    assert '<tr data-audit="recidivism-risk" data-strategy="S2" data-model="logistic_regression" data-attribute="race" ' \
           'data-metric="selection_rate" class="fc-small"><td>Recidivism Risk' in html
    assert "&lt;Asian&gt; <span class=\"fc-warn\" title=\"fewer than 30 rows" in html  # escaped, warned
    assert "<td>46.6%</td><td>[42.8%, 50.5%]</td><td>+25.8 pp</td><td><strong>1.8 × 10⁻¹⁷</strong></td>" in html
    assert "<td>25.8 pp</td><td><strong>0.0011</strong></td>" in html


def test_groups_table_needs_its_columns():
    with pytest.raises(ValueError, match=r"missing column\(s\) \['max_gap'\]"):
        groups_table_html(_rows().drop(columns="max_gap"), alpha=0.05)


def test_filter_options_keep_the_metric_order_and_show_the_rows_names():
    rows = pd.concat([_rows(), _rows().assign(metric="false_positive_rate")])
    options = group_filter_options(rows)
    assert [v for v, _ in options["metric"]] == ["selection_rate", "false_positive_rate"]
    # Issue 28: the filters showed slugs while the rows showed names; each option's name is now
    # the text the rows show in that column.
    html = str(groups_table_html(rows, alpha=0.05))
    for col in ("audit", "model", "attribute", "metric"):
        for _, name in options[col]:
            assert f'data-col="{col}" data-label="' in html and f'">{name}</td>' in html, (col, name)
    assert options["audit"] == [("recidivism-risk", "Recidivism Risk")]
    assert options["metric"][0] == ("selection_rate", "selection rate")


def test_column_headings_are_distinct_and_each_cell_names_its_column():
    html = str(groups_table_html(_rows(), alpha=0.05))
    headings = re.findall(r"<th [^>]*>([^<]+)</th>", html)
    assert len(headings) == 15 and len(set(headings)) == len(headings), headings  # no two called "Rate"
    first_row = html.split("<tbody>")[1].split("</tr>")[0]
    assert re.findall(r'data-label="([^"]+)"', first_row) == headings  # the card's labels are the headings


def test_the_page_opens_on_one_comparison_and_every_row_is_in_the_rows_file():
    other = _rows().assign(audit="arrest-release", audit_name="Arrest Release", attribute="colour")
    rows = pd.concat([_rows(), other, _rows().assign(strategy="S0")])
    # The first audit (by slug) with the defaults' strategy, model and metric, its first attribute.
    assert group_defaults(rows) == {"audit": "arrest-release", "strategy": "S2", "model": "logistic_regression",
                                    "attribute": "colour", "metric": "selection_rate"}
    lines = group_rows(rows, alpha=0.05)
    assert len(lines) == len(rows) and all(ln.startswith("<tr data-audit=") and ln.endswith("</tr>") for ln in lines)


@pytest.mark.parametrize("method, shuffles, shown", [
    ("monte_carlo", 9999, "1/10,000"),  # at the floor: the Monte Carlo p 1/(m + 1), as the pages write it
    ("exact", None, "1.0 × 10⁻⁴"),       # the same number from an exact test is a value
])
def test_a_monte_carlo_max_gap_p_at_its_floor_reads_as_a_bound(method, shuffles, shown):
    rows = _rows().assign(p_value_max_gap=1 / 10_000, method_max_gap=method, n_permutations=shuffles)
    html = _plain(str(groups_table_html(rows, alpha=0.05)))
    assert f"<td>25.8 pp</td><td><strong>{shown}</strong></td>" in html


def test_the_omnibus_p_sits_beside_the_max_gap_p():
    rows = _rows().assign(p_value_omnibus=0.02, method_omnibus="asymptotic")
    html = _plain(str(groups_table_html(rows, alpha=0.05)))
    assert "p (any group)</th></tr></thead>" in html
    assert "<td>25.8 pp</td><td><strong>0.0011</strong></td><td><strong>0.020</strong></td></tr>" in html
    floor = _rows().assign(p_value_omnibus=1 / 10_000, method_omnibus="monte_carlo", n_permutations=9999)
    assert "<td><strong>1/10,000</strong></td></tr>" in _plain(str(groups_table_html(floor, alpha=0.05)))
