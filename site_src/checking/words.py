"""How long an explainer is to read: its visible words, the reading time, and the word budget.

Issue 28 ("Read in one sitting") asks for a reading time on each explainer and its home-page card,
and for a budget of about `WORD_BUDGET` visible words per page that ``fairsite check`` reports as a
warning, naming each page over it with its count. One definition of "visible words" serves both:
what a reader sees of the article without opening anything. Closed folds (``<details>`` without
``open``) count by their summary line only; code, hidden elements, SVG, scripts and the headings'
permalinks do not count; neither do the reference sections every explainer ends with
(`REFERENCE_SECTIONS`: citations, where the code lives, links onward), which are looked up, not
read through. The MkDocs hook (``publishing.mkdocs_hooks``) writes the reading time into each
page from its converted HTML and keeps each page's count; ``fairsite check`` and ``build`` warn
from those counts (`over_word_budget`), so the page is parsed once.

A reader who opens the folds reads more (issue 47: "5 min read" was true only with every fold
closed), so the same pass also counts the words with every fold open (`WordCount.unfolded`), and
the reading time gives both where they differ: "5 min read, 12 with the details" (`reading_time`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser

__all__ = ["REFERENCE_SECTIONS", "WORDS_PER_MINUTE", "WORD_BUDGET", "WordCount", "count_words", "over_word_budget",
           "reading_minutes", "reading_time", "visible_words"]

WORD_BUDGET = 1200  # issue 28: about 1,200 visible words with folds closed
WORDS_PER_MINUTE = 230  # an adult's silent reading of non-fiction (Brysbaert 2019, doi:10.1016/j.jml.2019.104047)
REFERENCE_SECTIONS = ("further-reading", "source-and-verify", "related")

# Elements whose text a reader does not read as prose, wherever they are.
_UNSEEN = {"pre", "code", "svg", "script", "style", "template", "noscript"}
# A word has a letter or a digit ("—" and "·" alone are not words), as tests/e2e counts in the browser.
_WORD = re.compile(r"[^\W_]", re.UNICODE)


@dataclass(frozen=True)
class WordCount:
    """The words of a page a reader reads: ``visible`` with every fold closed (what shows without
    opening anything), ``unfolded`` with every fold open (``visible`` plus the folds' contents)."""

    visible: int
    unfolded: int


def _count(node, *, closed_fold: bool, state: dict) -> tuple[int, int]:
    """The words under ``node`` (a parsed element that shows), in document order: see the
    module's docstring. Returns (visible, unfolded): with the folds closed, and with them open.

    ``closed_fold``: ``node`` is a ``<details>`` without ``open``, whose children other than its
    ``<summary>`` show only once it is opened; ``state["reference"]`` is whether the last ``<h2>``
    met opened a reference section (it lasts until the next one)."""
    visible = unfolded = 0
    for child in node.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            if not state["reference"]:
                words = sum(1 for w in child.text_content.split() if _WORD.search(w))
                visible, unfolded = visible + words, unfolded + words
            continue
        if tag.startswith("_") or tag.startswith("!"):  # a comment, the doctype
            continue
        attrs = child.attributes
        if tag == "h2":
            state["reference"] = attrs.get("id") in REFERENCE_SECTIONS
        if tag in _UNSEEN or "hidden" in attrs or "headerlink" in (attrs.get("class") or "").split():
            # Nothing in it shows (most of a page's elements: the code's highlighting), but an <h2>
            # in it still opens or closes a reference section, as in the document's order.
            headings = child.css("h2")
            if headings:
                state["reference"] = headings[-1].attributes.get("id") in REFERENCE_SECTIONS
            continue
        seen, opened = _count(child, closed_fold=tag == "details" and "open" not in attrs, state=state)
        unfolded += opened
        if not (closed_fold and tag != "summary"):  # inside a closed fold, only its summary shows
            visible += seen
    return visible, unfolded


def count_words(html: str) -> WordCount:
    """The words a reader reads in ``html`` (an article's HTML), with the folds closed and open.

    Parameters
    ----------
    html : str
        A page's converted HTML: the article, or a whole page (then everything in it counts, so
        pass the article).

    Returns
    -------
    WordCount
        Whitespace-separated words holding a letter or digit, outside code, hidden elements,
        permalinks and the `REFERENCE_SECTIONS`: ``visible`` counts a closed fold by its summary,
        ``unfolded`` counts all of it.
    """
    # Parsed by lexbor (selectolax): Python's HTMLParser took a fifth of MkDocs' time in every
    # build that converts the explainers (issue 26).
    # In a body, as MkDocs places the article: a fragment parsed as a document would begin in its
    # <head>, where a leading <noscript>'s text leaves the element.
    body = LexborHTMLParser("<!DOCTYPE html><body>" + html).body
    if body is None:
        return WordCount(0, 0)
    return WordCount(*_count(body, closed_fold=False, state={"reference": False}))


def visible_words(html: str) -> int:
    """The number of words a reader sees in ``html`` with every fold closed: `count_words`'s
    ``visible`` (see there)."""
    return count_words(html).visible


def reading_minutes(words: int) -> int:
    """Minutes to read ``words`` words at `WORDS_PER_MINUTE`, rounded up, at least 1.

    Raises ValueError for a negative count.
    """
    if words < 0:
        raise ValueError(f"`words` must be a count of words (0 or more), got {words}")
    return max(1, math.ceil(words / WORDS_PER_MINUTE))


def reading_time(words: WordCount) -> str:
    """The reading time a page states: "5 min read", or "5 min read, 12 with the details" where
    opening the folds adds a minute or more (`reading_minutes` of each count)."""
    minutes, unfolded = reading_minutes(words.visible), reading_minutes(words.unfolded)
    return f"{minutes} min read" + (f", {unfolded} with the details" if unfolded > minutes else "")


def over_word_budget(words: Mapping[str, int], *, budget: int = WORD_BUDGET) -> list[str]:
    """One line per explainer over ``budget`` visible words, longest first.

    ``words`` maps each explainer's slug to its page's visible words, as the build counted them
    for its reading time (``publishing.mkdocs_hooks.add_reading_time``; ``BuildReport.words``).
    An empty list when every page is within the budget.
    """
    counts = dict(words)
    return [f"{slug}: {n:,} visible words with folds closed, over the budget of about {budget:,} "
            f"({reading_minutes(n)} min at {WORDS_PER_MINUTE} words a minute)"
            for slug, n in sorted(counts.items(), key=lambda kv: -kv[1]) if n > budget]
