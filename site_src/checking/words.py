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
"""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from collections.abc import Mapping

__all__ = ["REFERENCE_SECTIONS", "WORDS_PER_MINUTE", "WORD_BUDGET", "over_word_budget", "reading_minutes",
           "visible_words"]

WORD_BUDGET = 1200  # issue 28: about 1,200 visible words with folds closed
WORDS_PER_MINUTE = 230  # an adult's silent reading of non-fiction (Brysbaert 2019, doi:10.1016/j.jml.2019.104047)
REFERENCE_SECTIONS = ("further-reading", "source-and-verify", "related")

# Elements whose text a reader does not read as prose, wherever they are.
_UNSEEN = {"pre", "code", "svg", "script", "style", "template", "noscript"}
# Elements with no end tag (HTMLParser reports only their start).
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# A word has a letter or a digit ("—" and "·" alone are not words), as tests/e2e counts in the browser.
_WORD = re.compile(r"[^\W_]", re.UNICODE)


class _VisibleText(HTMLParser):
    """Collects the text a reader sees with every fold closed (see the module's docstring)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.words = 0
        self._stack: list[tuple[str, bool]] = []  # (tag, hides its content)
        self._hidden = 0  # how many open elements hide what they hold
        self._in_reference = False  # inside a reference section (until the next h2)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h2":
            self._in_reference = a.get("id") in REFERENCE_SECTIONS
        parent = self._stack[-1][0] if self._stack else None
        hides = (tag in _UNSEEN or "hidden" in a or "headerlink" in (a.get("class") or "").split()
                 # a closed fold: only its summary shows (the summary is a direct child of <details>)
                 or (parent == "details-closed" and tag != "summary"))
        if tag == "details" and "open" not in a:
            tag = "details-closed"
        if tag in _VOID:
            return
        self._stack.append((tag, hides))
        self._hidden += hides

    def handle_endtag(self, tag):
        # Pop to the matching element (browsers close what was left open; so do we).
        for i in range(len(self._stack) - 1, -1, -1):
            name = self._stack[i][0]
            if name == tag or (tag == "details" and name == "details-closed"):
                for _, hides in self._stack[i:]:
                    self._hidden -= hides
                del self._stack[i:]
                return

    def handle_data(self, data):
        if not self._hidden and not self._in_reference:
            self.words += sum(1 for w in data.split() if _WORD.search(w))


def visible_words(html: str) -> int:
    """The number of words a reader sees in ``html`` (an article's HTML) with every fold closed.

    Parameters
    ----------
    html : str
        A page's converted HTML: the article, or a whole page (then everything in it counts, so
        pass the article).

    Returns
    -------
    int
        Whitespace-separated words holding a letter or digit, outside code, hidden elements,
        closed folds (their summary counts), permalinks and the `REFERENCE_SECTIONS`.
    """
    parser = _VisibleText()
    parser.feed(html)
    parser.close()
    return parser.words


def reading_minutes(words: int) -> int:
    """Minutes to read ``words`` words at `WORDS_PER_MINUTE`, rounded up, at least 1.

    Raises ValueError for a negative count.
    """
    if words < 0:
        raise ValueError(f"`words` must be a count of words (0 or more), got {words}")
    return max(1, math.ceil(words / WORDS_PER_MINUTE))


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
