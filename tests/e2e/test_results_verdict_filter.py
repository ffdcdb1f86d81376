"""The results page's verdicts in a real browser (issue 45): the Verdict filter shows only the rows
in the state chosen, in both tables, and a verdict opens to its sentence. Expected values come from
the results files read with the csv module, never from the page under test."""

from __future__ import annotations

import csv

import pytest

# faircode.significance.VERDICTS, spelt out: the words a reader sees.
STATES = {"gap_shown": "a gap shown", "no_practical_gap_shown": "no gap of practical size shown",
          "inconclusive": "inconclusive"}
# How faircode.significance.verdict_sentence opens each state's sentence.
SENTENCE_STARTS = {"gap_shown": "A gap of practical size is shown", "no_practical_gap_shown":
                   "No gap of practical size is shown", "inconclusive": "Inconclusive"}


def _rows(site_root, name):
    with open(site_root / "results" / name, newline="") as fh:
        return list(csv.DictReader(fh))


def _show_all(page, table_class):
    more = page.locator(f"{table_class} .fc-more-btn")
    while more.is_visible():
        more.click()


@pytest.mark.parametrize("state", list(STATES))
def test_the_verdict_filter_shows_only_the_chosen_state(site_root, open_page, state):
    rows = _rows(site_root, "results_fairness.csv")
    audit = sorted({r["audit"] for r in rows})[-1]
    wanted = [r for r in rows if r["audit"] == audit and r["verdict"] == state]
    page = open_page("results/")
    table = page.locator("table[data-fc-results]")
    page.locator("select[data-filter='audit']").select_option(audit)
    page.locator("select[data-filter='verdict']").select_option(state)
    page.wait_for_function("() => document.querySelector('table[data-fc-results]').dataset.fcComplete")
    _show_all(page, ".fc-explorer")
    visible = table.locator("tbody tr:visible")
    assert visible.count() == len(wanted)
    summaries = table.locator("tbody tr:visible td[data-col='verdict'] summary")
    assert set(summaries.all_inner_texts()) <= {STATES[state]}
    assert page.locator(".fc-count").inner_text() == f"{len(wanted):,} of {len(rows):,} rows"
    if wanted:  # a verdict opens to its sentence, which names the state and the adjusted values
        summaries.first.click()
        sentence = table.locator("tbody tr:visible td[data-col='verdict'] details[open] p").first.inner_text()
        assert sentence.startswith(SENTENCE_STARTS[state]), sentence
        assert " q = " in sentence or " q < " in sentence


def test_the_group_verdict_filter_shows_only_the_chosen_state(site_root, open_page):
    rows = _rows(site_root, "results_by_group.csv")
    page = open_page("results/")
    table = page.locator("table[data-fc-groups]")
    for select, value in (("audit", "recidivism-risk"), ("strategy", ""), ("model", ""), ("attribute", "race"),
                          ("metric", ""), ("verdict", "inconclusive")):
        page.locator(f"select[data-group-filter='{select}']").select_option(value)
    page.wait_for_function("() => document.querySelector('table[data-fc-groups]').dataset.fcComplete")
    wanted = [r for r in rows if r["audit"] == "recidivism-risk" and r["attribute"] == "race"
              and r["verdict"] == "inconclusive"]
    _show_all(page, ".fc-groups")
    visible = table.locator("tbody tr:visible")
    assert len(wanted) > 0 and visible.count() == len(wanted)
    assert set(table.locator("tbody tr:visible td[data-col='verdict'] summary").all_inner_texts()) == {"inconclusive"}
