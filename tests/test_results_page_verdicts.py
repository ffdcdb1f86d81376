"""The results page's three-state verdicts (issue 45) and its words for p and q (issue 47, item 18).

Expected values come from the committed results files and manifests, counted here, and from
``faircode.significance``'s words and sentence (the verdict's one home), not from the page's code.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from faircode import benchmark as bm
from faircode.manifest import read_manifest_yaml
from faircode.significance import VERDICTS, verdict_sentence
from site_src.rendering.environment import make_environment
from site_src.rendering.results_page import (
    _HEADER_TITLES,
    filter_options,
    group_filter_options,
    group_rows,
    groups_table_html,
    table_html,
    table_rows,
)
from site_src.rendering.results_verdicts import _OUTCOMES, audit_margins, verdict_counts

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def fairness() -> pd.DataFrame:
    return pd.read_csv(REPO / "results" / bm.FAIRNESS_FILE)


@pytest.fixture(scope="module")
def by_group() -> pd.DataFrame:
    return pd.read_csv(REPO / "results" / bm.BY_GROUP_FILE, keep_default_na=False, na_values=[""])


def _verdict_cells(html: str) -> list[tuple[str, str]]:
    """(state's words, sentence) of every verdict cell of a table's HTML, unescaped of &#39;."""
    found = re.findall(r'<td data-col="verdict" data-label="Verdict">(?:<details class="fc-row-sentence '
                       r'fc-verdict"><summary>([^<]*)</summary><p>([^<]*)</p></details>)?</td>', html)
    return [(w, s.replace("&#39;", "'")) for w, s in found]


def test_each_row_shows_its_verdict_in_the_words_of_verdicts_with_its_sentence(fairness):
    rows = fairness.iloc[:40]
    cells = _verdict_cells("".join(table_rows(rows, alpha=bm.ALPHA)))
    assert len(cells) == len(rows)
    for (words, sentence), row in zip(cells, rows.to_dict("records")):
        assert words == VERDICTS[row["verdict"]]
        expected = verdict_sentence(
            row["verdict"], compare=row["kind"], estimate=row["gap"], ci_low=row["ci_low"], ci_high=row["ci_high"],
            p_value=row["q_value"], equivalence_p_value=row["equivalence_q_value"],
            equivalence_ci=(math.nan, math.nan), margin=(row["margin_low"], row["margin_high"]),
            power_at_margin=row["power_at_margin"], alpha=bm.ALPHA,
            names=(f"the {row['disadvantaged_group']} group", f"the {row['advantaged_group']} group"),
            outcome=_OUTCOMES[row["metric"]], p_label="q")  # the page's words for each rate (what a 1 means)
        assert sentence == expected, sentence
        # The sentence reads the adjusted values: it calls them q, never p.
        assert not re.search(r"\bp [=<]", sentence) and re.search(r"\bq [=<]", sentence)


def test_the_verdict_filter_offers_the_three_states_in_order_and_each_row_carries_its_own(fairness):
    assert filter_options(fairness)["verdict"] == list(VERDICTS.items())
    html = str(table_html(fairness, first=60, alpha=bm.ALPHA))
    states = re.findall(r'<tr data-audit="[^"]*"[^>]* data-verdict="([^"]*)"', html)
    assert states == fairness["verdict"].iloc[:60].tolist()
    assert '<select data-filter="verdict">' not in html  # the filters are the explorer's, not the table's


def test_a_row_without_a_verdict_has_an_empty_cell_and_state(fairness):
    row = fairness.iloc[:1].assign(verdict=float("nan"), gap=float("nan"))
    html = "".join(table_rows(row, alpha=bm.ALPHA))
    assert 'data-verdict=""' in html and _verdict_cells(html) == [("", "")]


def test_the_group_verdicts_read_the_holm_adjusted_values(by_group):
    family = by_group[(by_group["audit"] == "recidivism-risk") & (by_group["strategy"] == "S2")
                      & (by_group["model"] == "logistic_regression") & (by_group["attribute"] == "race")
                      & (by_group["metric"] == "selection_rate")]
    lines = group_rows(family, alpha=bm.ALPHA)
    cells = _verdict_cells("".join(lines))
    assert len(cells) == len(family)
    for (words, sentence), row in zip(cells, family.to_dict("records")):
        if pd.isna(row["verdict"]):
            assert (words, sentence) == ("", "")  # the reference, and groups too small to test
            continue
        assert words == VERDICTS[row["verdict"]] and "Holm-adjusted p" in sentence
        assert f"the {row['group']} group" in sentence and f"the {row['reference_group']} group" in sentence
    assert group_filter_options(by_group)["verdict"] == list(VERDICTS.items())
    html = str(groups_table_html(family, alpha=bm.ALPHA))
    assert "<th scope='col' title=\"against the reference group: a gap shown" in html
    # The difference with the reference shows the interval the verdict reads.
    black = family[family["group"] == "Black"].iloc[0]
    assert f"{100 * black['diff_vs_reference_ci_low']:+.1f} pp".replace("-", "−") in html


def test_the_counts_per_state_and_audit_are_the_files(fairness, by_group):
    counts = verdict_counts(fairness)
    assert counts["states"] == list(VERDICTS.items())
    for audit in counts["audits"]:
        mine = fairness[fairness["audit_name"] == audit["name"]]
        assert audit["counts"] == {k: int((mine["verdict"] == k).sum()) for k in VERDICTS}
        assert audit["rows"] == len(mine) and audit["none"] == int(mine["verdict"].isna().sum())
    assert counts["all"]["counts"] == {k: Counter(fairness["verdict"].dropna())[k] for k in VERDICTS}
    assert sum(a["counts"]["inconclusive"] for a in counts["audits"]) == counts["all"]["counts"]["inconclusive"]


def test_each_audits_margin_and_reason_come_from_its_manifest(fairness):
    margins = audit_margins(fairness, REPO)
    assert [m["name"] for m in margins] == sorted(fairness["audit_name"].unique())
    for m, slug in zip(margins, sorted(fairness["audit"].unique())):
        declared = read_manifest_yaml(REPO / "audits" / slug / "audit.yaml")["practical_margin"]
        assert m["reason"] == " ".join(declared["reason"].split())
        assert m["margin"].startswith(f"±{declared['points']:g} percentage points")


def test_a_margin_the_manifest_no_longer_declares_is_refused(fairness):
    stale = fairness.assign(margin_low=lambda d: d["margin_low"].where(d["kind"] == "ratio", -0.03),
                            margin_high=lambda d: d["margin_high"].where(d["kind"] == "ratio", 0.03))
    with pytest.raises(ValueError, match=r"difference rows of audit \S+ hold the margin.*re-run `faircode benchmark`"):
        audit_margins(stale, REPO)


def test_the_page_names_margins_reasons_and_how_many_rows_are_inconclusive(fairness, by_group):
    counts = verdict_counts(fairness)
    groups = {"csv_name": bm.BY_GROUP_FILE, "n_rows": len(by_group), "min_sizes": [30],
              "verdicts": verdict_counts(by_group[by_group["group"] != by_group["reference_group"]])}
    page = make_environment([]).get_template("results.md.j2").render(
        csv_name=bm.FAIRNESS_FILE, n_rows=len(fairness), figures=[], groups=groups, label=str, has_kind=True,
        has_q=True, alpha=0.05, slugs=set(), small_sample=30, dropped={},
        verdicts={"counts": counts, "margins": audit_margins(fairness, REPO), "disagreements": 16})
    assert "In 16\ncomparisons one shows a gap and the other no gap of practical size" in page
    inconclusive = int((fairness["verdict"] == "inconclusive").sum())
    assert f"Of the {len(fairness):,} rows, {inconclusive:,} are\ninconclusive" in page
    for audit in counts["audits"]:
        c = audit["counts"]
        assert f"| {audit['name']} | {c['gap_shown']:,} | {c['no_practical_gap_shown']:,} | {c['inconclusive']:,} |\n" \
            in page
    total = counts["all"]["counts"]
    assert f"| **All audits** | {total['gap_shown']:,} | {total['no_practical_gap_shown']:,} | " in page
    for m in audit_margins(fairness, REPO):
        assert f"{m['name']}\n:   ±5 percentage points for a difference of rates; 0.8 to 1.25 for the disparate " \
               f"impact ratio. {m['reason']}" in page
    group_inconclusive = int((by_group["verdict"] == "inconclusive").sum())
    assert f"{group_inconclusive:,} are inconclusive" in page


def test_the_page_reads_q_as_a_false_discovery_rate_not_as_the_chance_of_chance():
    """Issue 47: the page defined q as p and read q < 0.05 as "unlikely to be chance"."""
    template = (REPO / "site_src" / "templates" / "results.md.j2").read_text(encoding="utf-8")
    q = template.split("\nq\n:   ")[1].split("\n\n")[0]
    assert "smallest false discovery rate" in q and "at most about" in q
    assert "unlikely to be chance alone" not in template
    assert "smallest false discovery rate at which this row" in _HEADER_TITLES["q_value"]
    assert "How often chance alone" not in _HEADER_TITLES["p_value"]


def test_the_page_counts_comparisons_whose_difference_and_ratio_verdicts_part(fairness):
    """Review of issue 45: the points margin and the four-fifths band can give opposite verdicts
    on one comparison; the page counts them (recounted here from the file, row by row)."""
    from site_src.rendering.results_verdicts import yardstick_disagreements

    keys = ["audit", "strategy", "model", "attribute", "disadvantaged_group", "advantaged_group"]
    dp = fairness[fairness["metric"] == "demographic_parity_difference"].set_index(keys)["verdict"]
    di = fairness[fairness["metric"] == "disparate_impact_ratio"].set_index(keys)["verdict"]
    expected = sum(1 for key in dp.index if {dp[key], di.get(key)} == {"gap_shown", "no_practical_gap_shown"})
    assert expected > 0  # the committed results hold such comparisons (Arrest Release's low rates)
    assert yardstick_disagreements(fairness) == expected
    assert yardstick_disagreements(fairness[fairness["metric"] != "disparate_impact_ratio"]) == 0
