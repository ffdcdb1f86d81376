"""Visible words, reading time and the word budget (site_src.checking.words, issue 28).

Expected counts are counted by hand from the HTML written here.
"""

from __future__ import annotations

import pytest

from site_src.checking.words import (WORD_BUDGET, WordCount, count_words, over_word_budget, reading_minutes,
                                     reading_time, visible_words)


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


# An explainer page as MkDocs writes it (issue 47): prose, a code cell's fold (code does not count,
# open or closed), a note folded closed with prose and a table in it, an open fold, a hidden figure
# fold, a fold inside the closed one, and a reference section.
FOLDED_PAGE = (
    '<h1 id="t">A title</h1><p class="fc-subtitle">Is it a question?</p>'                     # 2 + 4
    '<p>One two three four five.</p>'                                                          # 5
    '<details class="fc-cell"><summary>Code and output</summary>'                             # 3
    '<pre><code>x = 1 + 2</code></pre><pre class="fc-output"><code>3</code></pre></details>'   # code: none
    '<details class="note"><summary>How each number is computed</summary>'                   # 5
    '<p>Six words inside the closed fold.</p>'                                                 # 6 when open
    '<table><tr><th>Group</th><th>Rate</th></tr><tr><td>women</td><td>8.6%</td></tr></table>'  # 4 when open
    '<details><summary>A fold within</summary><p>three more words</p></details>'              # 3 + 3 when open
    '</details>'
    '<details open><summary>Open</summary><p>shown because it is open</p></details>'           # 1 + 5
    '<details class="fc-fig-fold" hidden><summary>Try it</summary><p>a figure</p></details>'  # hidden: none
    '<h2 id="further-reading">Further reading</h2><details><summary>Refs</summary><p>x y</p></details>'
)


def test_a_page_with_folds_counts_its_words_closed_and_open():
    words = count_words(FOLDED_PAGE)
    closed = 2 + 4 + 5 + 3 + 5 + 1 + 5
    assert words == WordCount(visible=closed, unfolded=closed + 6 + 4 + 3 + 3)
    assert visible_words(FOLDED_PAGE) == closed


@pytest.mark.parametrize("visible, unfolded, line", [
    (1150, 1150, "5 min read"),                        # no fold
    (1100, 1140, "5 min read"),                        # folds that add no minute: one time
    (1150, 2760, "5 min read, 12 with the details"),   # the example
    (0, 0, "1 min read"),
])
def test_the_reading_time_gives_the_time_with_the_details_where_it_is_longer(visible, unfolded, line):
    assert reading_time(WordCount(visible, unfolded)) == line


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
