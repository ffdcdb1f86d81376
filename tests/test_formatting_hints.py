"""faircode.formatting.did_you_mean: the one "did you mean" hint of every error message."""

from __future__ import annotations

import pytest

from faircode.formatting import did_you_mean


def test_a_close_word_gets_the_closest_choice():
    assert did_you_mean("sexx", ["race", "sex", "age"]) == " (did you mean 'sex'?)"
    # Two candidates: 'german-credit' shares 12 of 13 characters with the typo, 'german' only 6.
    assert did_you_mean("german-credt", ["german", "german-credit"]) == " (did you mean 'german-credit'?)"


def test_a_far_word_gets_no_hint():
    assert did_you_mean("zzz", ["race", "sex", "age"]) == ""
    assert did_you_mean("sex", []) == ""


@pytest.mark.parametrize("word, choice, hinted", [
    # difflib's ratio is 2M/T (M matching characters, T both lengths together); the cut-off is 0.6.
    ("abx", "abc", True),     # 2*2/6 = 0.67
    ("abxyz", "abc", False),  # 2*2/8 = 0.50
])
def test_the_cutoff_is_a_ratio_of_0_6(word, choice, hinted):
    assert (did_you_mean(word, [choice]) != "") is hinted


def test_words_and_choices_are_compared_as_text():
    assert did_you_mean(2017, [2016, 1990]) == " (did you mean '2016'?)"
