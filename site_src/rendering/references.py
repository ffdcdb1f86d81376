"""References: one bibliography, cited by key in the prose, every entry linked (issue 28).

The bibliography is ``explainers/references.json``, CSL-JSON (the format Zotero, pandoc's citeproc
and Crossref's citation service read and write): a list of items, each with an ``id`` (the key),
``type``, ``title``, ``author`` (``family``/``given``, or ``literal``), ``issued`` and a ``DOI``
or a ``URL``. Explainer prose cites an entry by its key, ``{{ cite("holm1979") }}`` ("Holm 1979",
linked to the entry on the page), and lists its further reading with
``{{ further_reading("good2005", ["fisher1935", "the lady tasting tea"]) }}``: each entry
rendered from the bibliography, its title linked to the DOI (or the URL), and every key the page
cites listed there even if the call does not name it.

Why a small step of our own rather than a MkDocs plugin: the citations live in Jinja prose that
the build renders before MkDocs sees it (the page cache, the notebook and the numbers checks read
the rendered prose), and the plugins for MkDocs (mkdocs-bibtex) cite with pandoc-style
``[@key]`` footnotes collected at the foot of the page, not a "Further reading" section with notes.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from markupsafe import Markup, escape

from faircode.formatting import did_you_mean
from site_src.errors import CheckError, ConfigError
from site_src.rendering.environment import markdown_text

BIBLIOGRAPHY = "references.json"  # in the explainers folder, beside reading-order.yaml
_KEY = re.compile(r"^[a-z][a-z0-9-]*$")
_BOOKS = {"book", "report", "thesis", "legislation", "dataset", "software"}  # titles in italics


@dataclass(frozen=True)
class Reference:
    """One bibliography entry: its ``key``, the ``label`` a citation shows ("Holm 1979"), the
    Markdown of the whole entry (``entry``, its title linked) and the ``link`` (a DOI's
    https://doi.org/ address, or the URL)."""

    key: str
    label: str
    entry: str
    link: str


def load_bibliography(path: Path) -> dict[str, Reference]:
    """The bibliography at ``path`` (CSL-JSON), by key; ``{}`` when the file does not exist.

    Raises
    ------
    ConfigError
        Not a JSON list of items, or an item without an ``id`` (lowercase letters, digits and
        ``-``), a ``title``, an ``author``, a year in ``issued``, or a ``DOI`` or ``URL``; a key
        used twice. Every problem is listed, each naming the file and the key.
    """
    path = Path(path)
    if not path.exists():
        return {}
    shown = f"{path.parent.name}/{path.name}"
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ConfigError(f"{shown}: not valid JSON: {err}") from None
    if not isinstance(items, list):
        raise ConfigError(f"{shown}: expected a CSL-JSON list of items, got {type(items).__name__}")
    problems, found = [], {}
    for i, item in enumerate(items):
        key = item.get("id") if isinstance(item, dict) else None
        where = f"{shown}: item {i + 1}" + (f" ('{key}')" if key else "")
        if not isinstance(key, str) or not _KEY.match(key):
            problems.append(f"{where}: 'id' must be a key of lowercase letters, digits and '-', got {key!r}")
            continue
        if key in found:
            problems.append(f"{where}: the key '{key}' is used twice")
            continue
        missing = [f for f in ("title", "author") if not item.get(f)]
        year = _year(item)
        if year is None:
            missing.append("issued (a year: {\"date-parts\": [[1979]]})")
        if not (item.get("DOI") or item.get("URL")):
            missing.append("DOI or URL (every entry links to the work or a catalogue page for it)")
        if missing:
            problems.append(f"{where}: missing {', '.join(missing)}")
            continue
        found[key] = Reference(key=key, label=_label(item, year), entry=_entry(item, year), link=_link(item))
    if problems:
        raise ConfigError("\n".join(problems))
    return found


def bibliography_digest(path: Path) -> str:
    """A digest of the bibliography file (the page cache's key: an edited entry re-renders the pages)."""
    path = Path(path)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


class PageCitations:
    """The ``cite(...)`` and ``further_reading(...)`` one explainer's prose calls.

    ``cite`` links to the entry in the page's further reading (``#ref-<key>``), so every key a
    page cites is listed there: ``further_reading`` adds the keys cited before it that its call
    does not name, and a key cited after it is an error (its link would lead nowhere).
    """

    def __init__(self, bibliography: dict[str, Reference], *, explainer: str):
        self.bibliography, self.explainer = bibliography, explainer
        self.cited: list[str] = []
        self.listed: list[str] | None = None

    def _reference(self, key) -> Reference:
        if not isinstance(key, str) or key not in self.bibliography:
            raise CheckError(f"no reference '{key}' in explainers/{BIBLIOGRAPHY}"
                             + did_you_mean(str(key), self.bibliography), explainer=self.explainer)
        return self.bibliography[key]

    def cite(self, *keys: str) -> Markup:
        """"Holm 1979" (or "Holm 1979; Benjamini and Hochberg 1995"), each linked to its entry."""
        if not keys:
            raise CheckError("cite() needs at least one key", explainer=self.explainer)
        refs = [self._reference(k) for k in keys]
        if self.listed is not None and any(k not in self.listed for k in keys):
            raise CheckError(f"cite({', '.join(repr(k) for k in keys)}) comes after further_reading(...) and "
                             "is not listed there; add the key to further_reading", explainer=self.explainer)
        for k in keys:
            if k not in self.cited:
                self.cited.append(k)
        return Markup("; ".join(f"[{escape(r.label)}](#ref-{r.key})" for r in refs))

    def further_reading(self, *items) -> Markup:
        """The page's further reading: a Markdown list, each entry linked, in the order given, then
        the keys cited but not named. An item is a key, or ``[key, note]``: a note (Markdown) that
        says what to read it for, printed after the entry."""
        if self.listed is not None:
            raise CheckError("further_reading(...) is called twice; list every entry in one call",
                             explainer=self.explainer)
        notes: dict[str, str] = {}
        for item in items:
            key, note = (item, "") if isinstance(item, str) else (tuple(item) + ("",))[:2]
            ref = self._reference(key)
            if ref.key in notes:
                raise CheckError(f"further_reading: '{key}' is listed twice", explainer=self.explainer)
            notes[ref.key] = str(note).strip()
        for key in self.cited:
            notes.setdefault(key, "")
        self.listed = list(notes)
        lines = []
        for key, note in notes.items():
            ref = self.bibliography[key]
            text = ref.entry if not note else f"{ref.entry.rstrip('.')}: {escape(note)}."
            lines.append(f'- <span id="ref-{key}" class="fc-ref"></span>{text}')
        return Markup("\n".join(lines))


def reference_link(bibliography: dict[str, Reference], key: str) -> Markup:
    """"Holm 1979" linked to the work itself (its DOI or URL): a citation on a page with no further
    reading of its own (the common mistakes, the checklist).

    Raises
    ------
    ConfigError
        ``key`` is not in the bibliography.
    """
    if key not in bibliography:
        raise ConfigError(f"no reference '{key}' in explainers/{BIBLIOGRAPHY}" + did_you_mean(str(key), bibliography))
    ref = bibliography[key]
    return Markup(f"[{escape(ref.label)}]({ref.link})")


def _year(item: dict) -> int | None:
    try:
        year = item["issued"]["date-parts"][0][0]
    except (KeyError, IndexError, TypeError):
        return None
    return int(year) if isinstance(year, int) or (isinstance(year, str) and year.isdigit()) else None


def _family(person: dict) -> str:
    return str(person.get("family") or person.get("literal") or "")


def _full(person: dict) -> str:
    if "literal" in person:
        return str(person["literal"])
    return " ".join(p for p in (person.get("given"), person.get("family")) if p)


def _label(item: dict, year: int) -> str:
    """"Holm 1979", "Benjamini and Hochberg 1995", "Kleinberg et al. 2017" (or ``citation-label``)."""
    if item.get("citation-label"):
        return str(item["citation-label"])
    authors = [a for a in item["author"] if _family(a) != "others"]
    names = [_family(a) for a in authors]
    if len(names) == 1 and len(item["author"]) == 1:
        who = names[0]
    elif len(names) == 2 and len(item["author"]) == 2:
        who = f"{names[0]} and {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who} {year}"


def _link(item: dict) -> str:
    if item.get("DOI"):
        # A DOI may hold characters a URL or Markdown gives a meaning to (<, >, ;): percent-encode them.
        return "https://doi.org/" + quote(str(item["DOI"]), safe="/:.-_")
    return str(item["URL"])


def _md(text) -> str:
    """Text shown as itself in Markdown (the explainer pages' own escaping of front-matter text)."""
    return str(markdown_text(text))


def _entry(item: dict, year: int) -> str:
    """The entry as Markdown: authors, the linked title, where it appeared, the year."""
    names = [_full(a) for a in item["author"]]
    authors = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    title = _md(item["title"])
    title = f"*{title}*" if item.get("type") in _BOOKS else f"“{title}”"
    parts = [_md(authors), f"[{title}]({_link(item)})"]
    if item.get("container-title"):
        parts.append(f"*{_md(item['container-title'])}*")
    if item.get("edition"):
        parts.append(_md(_ordinal(str(item["edition"])) + " edition"))
    if item.get("publisher"):
        parts.append(_md(item["publisher"]))
    # "1954a" when the label tells two works of one author and year apart.
    suffixed = re.search(r"\b(\d{4}[a-z])$", str(item.get("citation-label", "")))
    text = ", ".join(parts) + f" ({suffixed.group(1) if suffixed else year})"
    if item.get("note"):
        text += f"; {_md(item['note'])}"
    return text + "."


def _ordinal(n: str) -> str:
    if not n.isdigit():
        return n
    return n + ({1: "st", 2: "nd", 3: "rd"}.get(int(n) % 10 if int(n) % 100 not in (11, 12, 13) else 0, "th"))
