"""The results explorer's by-group view in a real browser. Expected values come from
results/results_by_group.csv read with the csv module, never from the page under test."""

from __future__ import annotations

import csv


def _rows(site_root):
    with open(site_root / "results" / "results_by_group.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_by_group_view_opens_on_one_comparison_and_filters(site_root, open_page):
    rows = _rows(site_root)
    page = open_page("results/")
    table = page.locator("table[data-fc-groups]")
    # It opens on the first audit, S2, logistic regression, selection rate: one attribute's groups,
    # the only rows the page carries (issue 28: every row loads when a filter changes).
    audit = sorted({r["audit"] for r in rows})[0]
    attribute = sorted({r["attribute"] for r in rows if r["audit"] == audit and r["strategy"] == "S2"
                        and r["model"] == "logistic_regression" and r["metric"] == "selection_rate"})[0]
    first = [r for r in rows if (r["audit"], r["strategy"], r["model"], r["attribute"], r["metric"])
             == (audit, "S2", "logistic_regression", attribute, "selection_rate")]
    visible = table.locator("tbody tr:visible")
    assert visible.count() == len(first)
    assert visible.evaluate_all("rows => rows.map(r => r.cells[5].textContent.split(' ')[0])") == \
        [r["group"].split(" ")[0] for r in first]
    assert table.locator("tbody tr").count() == len(first)
    assert page.locator(".fc-group-count").inner_text() == f"{len(first)} of {len(rows):,} rows"

    page.locator("select[data-group-filter='metric']").select_option("false_positive_rate")
    page.wait_for_function("() => document.querySelector('table[data-fc-groups]').dataset.fcComplete")
    assert table.locator("tbody tr").count() == len(rows)
    fpr = [r for r in rows if (r["audit"], r["strategy"], r["model"], r["attribute"], r["metric"])
           == (audit, "S2", "logistic_regression", attribute, "false_positive_rate")]
    assert visible.count() == len(fpr)
    assert table.locator("tbody tr.fc-small:visible").count() == sum(r["small_cell"] == "True" for r in fpr)
    # The main table's filters are untouched by this view's.
    assert page.locator("select[data-filter='audit']").count() == 1
