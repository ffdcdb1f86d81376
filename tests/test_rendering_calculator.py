"""site_src.rendering.calculator: the calculator links and the interactive figures' data (issue 29)."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest

from site_src.rendering.calculator import calculator_query, check_gap, power_explorer, threshold_explorer


def test_check_gap_links_the_calculator_with_the_counts_in_its_query():
    link = str(check_gap(np.int64(12), 140, 31.0, 210, a="women", b="men", outcome="turned away"))
    m = re.fullmatch(r"\[Check these numbers\]\((.+)\)", link)
    url = urlsplit(m.group(1))
    assert url.path == "../../check-a-gap/index.md"  # MkDocs checks the page exists and keeps the query
    assert parse_qs(url.query) == {"la": ["women"], "na": ["140"], "ka": ["12"], "lb": ["men"], "nb": ["210"],
                                   "kb": ["31"], "out": ["turned away"]}
    assert "fav=positive" in calculator_query(1, 2, 1, 2, favourable="positive")
    # From the rates a run keeps: 12/140 as a float gives back 12 people.
    assert str(check_gap(n_a=140, n_b=210, rate_a=12 / 140, rate_b=31 / 210, a="women", b="men", outcome="turned away")) == link


def test_check_gap_refuses_a_rate_that_is_not_a_share_of_its_group():
    with pytest.raises(ValueError, match="is not a whole number of people"):
        check_gap(n_a=140, n_b=210, rate_a=0.1234, rate_b=31 / 210)


@pytest.mark.parametrize("args, kwargs, message", [
    ((12.5, 140, 31, 210), {}, "`flagged_a` must be a whole number"),
    ((-1, 140, 31, 210), {}, "`flagged_a` must be a whole number of people, 0 or more"),
    ((141, 140, 31, 210), {}, r"`flagged_a` \(141\) cannot exceed"),
    ((1, 2, 1, 2), {"a": " "}, "`a` must be non-empty words"),
    ((1, 2, 1, 2), {"favourable": "bad"}, "`favourable` must be 'negative'"),
])
def test_check_gap_refuses_what_is_not_a_count(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        check_gap(*args, **kwargs)


def _data(markup, kind):
    return json.loads(unescape(re.search(rf'data-fc-{kind}="([^"]*)"', str(markup)).group(1)))


def test_power_explorer_carries_the_runs_audit_and_starts_hidden():
    box = power_explorer(rows=200, share_a=0.32, base_rate=0.3, gap=-0.1, a="women", b="men")
    assert " hidden>" in str(box)
    assert _data(box, "power") | {"title": None} == {"rows": 200, "share_a": 0.32, "base_rate": 0.3, "gap": 0.1,
                                                     "direction": -1, "a": "women", "b": "men", "target": 0.8,
                                                     "title": None}
    with pytest.raises(ValueError, match="`share_a` must lie strictly between 0 and 1"):
        power_explorer(rows=200, share_a=1.0, base_rate=0.3, gap=0.1)


def test_threshold_explorer_checks_the_curves_shape():
    curves = {"thresholds": [0.2, 0.5], "w": {"selection": [0.5, 0.2], "tpr": [0.9, 0.5], "fpr": [0.3, 0.1]},
              "m": {"selection": [0.6, 0.3], "tpr": [0.95, 0.6], "fpr": [0.4, 0.2]}}
    assert _data(threshold_explorer(curves, a="w", b="m", start_a=0.5, start_b=0.2), "thresholds")["groups"]["m"] == curves["m"]
    with pytest.raises(ValueError, match="has no group 'x'"):
        threshold_explorer(curves, a="x", b="m", start_a=0.5, start_b=0.5)
    with pytest.raises(ValueError, match="one rate per threshold"):
        threshold_explorer(curves | {"w": {"selection": [0.5], "tpr": [0.9, 0.5], "fpr": [0.3, 0.1]}},
                           a="w", b="m", start_a=0.5, start_b=0.5)


def test_check_groups_and_check_p_values_fill_the_other_boxes():
    from site_src.rendering.calculator import check_groups, check_p_values

    link = str(check_groups([{"group": "Asian, Pacific", "n": 10, "k": 1}, ("b", 12, np.int64(6))]))
    assert link == "[Check these numbers](../../check-a-gap/index.md?groups=Asian+Pacific,10,1;b,12,6)"
    assert str(check_p_values([0.01, np.float64(0.5)])).endswith("index.md?p=0.01,0.5)")
    rows = [{"group": "Black", "n": 650, "rate": 303 / 650}, {"group": "White", "n": 423, "rate": 88 / 423}]
    assert str(check_groups(rows)).endswith("?groups=Black,650,303;White,423,88)")
    with pytest.raises(ValueError, match="at least two groups"):
        check_groups([("a", 1, 0)])
    with pytest.raises(ValueError, match="has 3 flagged of 2 people"):
        check_groups([("a", 2, 3), ("b", 2, 0)])
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        check_p_values([1.5])
    # A family longer than a run keeps as a list travels as text: the same link.
    assert str(check_p_values("0.01, 0.5")) == str(check_p_values([0.01, 0.5]))
    with pytest.raises(ValueError, match="separated by commas"):
        check_p_values("0.01;0.5")


def test_a_folded_figure_sits_in_a_closed_fold_hidden_until_drawn():
    box = str(power_explorer(rows=200, share_a=0.32, base_rate=0.3, gap=0.1, folded="Try it"))
    assert box.startswith('<details class="fc-fig-fold" hidden><summary>Try it</summary><div class="fc-fig"')


ASSETS = Path(__file__).resolve().parents[1] / "site_src" / "templates" / "assets"


def test_the_calculators_chi_squared_rule_is_the_librarys_and_not_called_cochrans():
    """Issue 47 item 18, in FairCalc: "every expected count at least 5" is the project's rule,
    stricter than Cochran's (1954), which allows up to 20% of the counts below 5 and none below 1.
    The script and the page say so, and the script's threshold is the library's."""
    from faircode.significance._homogeneity import _MIN_EXPECTED

    script = (ASSETS / "faircalc-groups.js").read_text(encoding="utf-8")
    m = re.search(r"((?:  //[^\n]*\n)+)  var MIN_EXPECTED = (\d+);", script)
    assert m and float(m.group(2)) == _MIN_EXPECTED
    comment = " ".join(line.strip().lstrip("/ ") for line in m.group(1).splitlines())
    assert "(Cochran 1954)" not in script.split("var MIN_EXPECTED")[0].splitlines()[-1]  # no bare attribution on the line
    for words in ("stricter than Cochran's rule", "Cochran 1954", "20% of the expected counts below 5", "none below 1"):
        assert words.lower() in comment.lower(), (words, comment)
    page = " ".join((ASSETS.parent / "check-a-gap.md.j2").read_text(encoding="utf-8").split())
    assert "at least 5 (Cochran 1954)" not in page
    assert "at least 5 (stricter than Cochran's rule, which allows up to 20% of them below 5 and none below 1" in page


def test_no_calculator_script_is_over_700_lines():
    """STYLE: no module over 700 lines. faircalc.js held every method of the calculator (1,082
    lines); issue 48 split it by method, as faircode.significance is (tests/house_rules.py counts
    the same for every module)."""
    lines = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in ASSETS.glob("*.js")}
    assert {name: n for name, n in lines.items() if n > 700} == {}
