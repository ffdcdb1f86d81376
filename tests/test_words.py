"""Visible words, reading time and the word budget (site_src.checking.words, issue 28).

Expected counts are counted by hand from the HTML written here.
"""

from __future__ import annotations

import pytest

from site_src.checking.words import WORD_BUDGET, over_word_budget, reading_minutes, visible_words


def test_only_what_a_reader_sees_with_folds_closed_counts():
    html = ('<h1 id="t">Two words<a class="headerlink" href="#t">¶</a></h1>'
            '<p>Three more words — and · 2 numbers 3.</p>'  # "—" and "·" are not words: 7
            '<details class="fc-cell"><summary>Code and output</summary><pre><code>x = 1</code></pre>'
            '<p>inside a closed fold</p></details>'  # the summary's 3 words only
            '<details open><summary>Open</summary><p>open fold counts</p></details>'  # 1 + 3
            '<p hidden>hidden words</p><span class="fc-search-preview" hidden>preview</span>'
            '<p>inline <code>code</code> is code</p><br><img alt="alt text">'  # 3
            '<h2 id="further-reading">Further reading</h2><p>a citation</p>'
            '<h2 id="next">Next part</h2><p>counts again</p>')  # 2 + 2 after the reference section
    assert visible_words(html) == 2 + 7 + 3 + 4 + 3 + 4


@pytest.mark.parametrize("words, minutes", [(0, 1), (1, 1), (230, 1), (231, 2), (1200, 6), (1913, 9)])
def test_reading_minutes_round_up_at_230_words_a_minute(words, minutes):
    assert reading_minutes(words) == minutes


def test_reading_minutes_refuse_a_negative_count():
    with pytest.raises(ValueError, match=r"`words` must be a count of words \(0 or more\), got -1"):
        reading_minutes(-1)


def test_pages_over_the_budget_are_named_with_their_count():
    lines = over_word_budget({"short": WORD_BUDGET, "long": WORD_BUDGET + 1, "longer": 1913})
    assert lines == [
        "longer: 1,913 visible words with folds closed, over the budget of about 1,200 (9 min at 230 words a minute)",
        "long: 1,201 visible words with folds closed, over the budget of about 1,200 (6 min at 230 words a minute)",
    ]
    assert over_word_budget({}) == []
