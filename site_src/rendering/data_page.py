"""The page "The four audits and their data", made from the datasheets and the manifests.

Each audit on the site is a scenario built on a public dataset. Where that dataset comes from
(who collected it, when, about whom, under what licence) is in its datasheet's front matter
(``data/<name>.md``); what the scenario does with it (filters, target, groups, proxies, the
file's sha256) is in its manifest (``audits/<slug>/audit.yaml``, read with
``faircode.manifest.load_manifest``); how many rows the file holds and how many pass the filters
is counted by faircode's own loading code (``faircode.data.read_data``, ``faircode.load_audit``).
The page is written from those three at every build: its row counts cannot drift; its
descriptions are written by hand in the datasheets and manifests. The published facts each
datasheet declares are listed with their citations, and the counts the site pins (``kind:
pinned``: the site's own figures, not published anywhere) in a table of their own;
``site_src.checking.published`` verifies both.

`scenario` is the template function every worked example calls to name its audit as a scenario
and link this page.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import jinja2
from markupsafe import Markup

from site_src.errors import ConfigError, SiteError
from site_src.rendering.environment import markdown_text

__all__ = ["AuditData", "PAGE", "audit_data", "render_data_page"]

PAGE = "data"  # written to docs/data/index.md


@dataclass(frozen=True)
class AuditData:
    """What the data page says about one audit: the scenario, its dataset and what is done to it.

    Text fields are as the datasheet or manifest gives them (not escaped). ``filters`` holds
    ``(condition, reason)`` pairs, ``groups`` ``(attribute, column, disadvantaged label and values,
    advantaged label and values, note)``, ``proxies`` ``(column, reason)``, ``files`` ``(path,
    sha256)``, ``facts`` ``(fact, published value, citation, url)`` and ``pinned`` the same for
    the counts the site pins (not published). ``target_means`` is what the target's positive value
    records in the data, ``flagged_means`` what being flagged (predicted positive) means in the
    scenario: the datasheet says both, so that the outcome and the prediction are not confused.
    """

    slug: str
    name: str
    scenario: str
    dataset: str
    collector: str
    collected: str
    population: str
    licence: str
    source: str
    source_url: str
    datasheet: str
    files: tuple
    rows_file: int
    rows_after: int
    rows_dropped: int
    filters: tuple
    target: str
    positive: str
    meaning: str
    target_means: str
    flagged_means: str
    favourable: str
    groups: tuple
    proxies: tuple
    facts: tuple
    pinned: tuple


# Front-matter keys every datasheet gives the page.
_FIELDS = ("dataset", "collector", "collected", "population", "licence", "source", "source_url",
           "target_means", "flagged_means")


def audit_data(root: Path) -> list[AuditData]:
    """One `AuditData` per ``audits/*/audit.yaml`` under ``root``, sorted by audit name.

    Reading the data is the slow part (pandas, a sha256 of each file): the answer is remembered in
    ``.cache/fairsite-data-page.json`` by the digests of the manifests, datasheets, data files and
    this module, as the glossary's table is.

    Raises
    ------
    ValueError
        A manifest that does not validate (faircode's ``ManifestError``), a manifest without a
        ``dataset.datasheet``, or a datasheet whose front matter lacks a field the page shows
        (each named with the file).
    """
    from site_src.filestate import digest_parts, hash_file

    root = Path(root)
    inputs = [*sorted((root / "audits").glob("*/audit.yaml")),
              *sorted(p for p in (root / "data").glob("*") if p.is_file()), Path(__file__)]
    key = digest_parts(f"{p.name} {hash_file(p)}" for p in inputs)
    memo = root / ".cache" / "fairsite-data-page.json"
    try:
        saved = json.loads(memo.read_text(encoding="utf-8"))
        if saved["key"] == key:
            return [AuditData(**{k: _tuples(v) for k, v in a.items()}) for a in saved["audits"]]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    out = sorted((_read(path, root) for path in sorted((root / "audits").glob("*/audit.yaml"))), key=lambda a: a.name)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(json.dumps({"key": key, "audits": [asdict(a) for a in out]}), encoding="utf-8")
    except OSError:
        pass  # read again next time
    return out


def render_data_page(env: jinja2.Environment, docs_dir: Path, root: Path) -> list[SiteError]:
    """Write ``docs/data/index.md`` and give the environment the ``scenario(slug)`` function.

    Call it before the explainer pages are rendered: their worked examples call ``scenario``.

    Parameters
    ----------
    env : jinja2.Environment
        The site's environment (``environment.make_environment``); ``scenario`` is added to its globals.
    docs_dir : Path
        The staged ``docs/`` folder.
    root : Path
        The repository root (``audits/``, ``data/``, ``.cache/``).

    Returns
    -------
    list of SiteError
        The problem that kept the page from being written (a manifest or datasheet that cannot be
        read), as a ``ConfigError`` naming the file; empty on success.
    """
    try:
        audits = audit_data(root)
    except (ValueError, OSError) as err:
        audits, problem = [], [ConfigError(f"data page: {err}")]
    else:
        problem = []
    by_slug = {a.slug: a for a in audits}

    def scenario(*slugs: str, inline: bool = False) -> Markup:
        """The sentence a worked example opens with: its audit named as a scenario, linked to its
        section of the data page. Several slugs name each audit and link the page; none speaks of
        every audit (a page built on the whole benchmark table). ``inline=True`` gives the words
        to put in a sentence of the page's own instead ("the [Benefits Denial scenario](...)"),
        for a page with no words to spare."""
        unknown = [s for s in slugs if s not in by_slug]
        if unknown and problem:
            # Not "no audit 'x'": every audit is unknown when one could not be read (a fresh user).
            raise ValueError(f"scenario({unknown[0]!r}): the audits could not be read (see the data page's problem, "
                             "an audit manifest's)")
        if unknown:
            from faircode.formatting import did_you_mean

            raise ValueError(f"scenario({unknown[0]!r}): no audit {unknown[0]!r}{did_you_mean(unknown[0], list(by_slug))}")
        # Only the audits' names: an explainer page is cached by its source and run, not by the
        # datasheets (rendering.pages._page_key), so the sentence must not quote them.
        names = [str(markdown_text(by_slug[s].name)) for s in slugs]
        page = f"../../{PAGE}/index.md"
        if inline:
            if not slugs:
                raise ValueError("scenario(inline=True) needs the slug of at least one audit")
            if len(slugs) == 1:
                return Markup(f"the [{names[0]} scenario]({page}#{slugs[0]})")
            return Markup(f"the [{', '.join(names[:-1])} and {names[-1]} scenarios]({page})")
        if len(slugs) == 1:
            return Markup(f"*{names[0]} is a scenario built on public data, not an audit of a system in use: "
                          f"[where its data come from and what the scenario imagines]({page}#{slugs[0]}).*")
        if not slugs:
            return Markup(f"*Every audit here is a scenario built on public data, not an audit of a system in use: "
                          f"[where their data come from and what each scenario imagines]({page}).*")
        return Markup(f"*{', '.join(names[:-1])} and {names[-1]} are scenarios built on public data, not audits of "
                      f"systems in use: [where their data come from and what each scenario imagines]({page}).*")

    env.globals["scenario"] = scenario
    (docs_dir / PAGE).mkdir(parents=True, exist_ok=True)
    text = env.get_template("data.md.j2").render(audits=audits)
    (docs_dir / PAGE / "index.md").write_text(text, encoding="utf-8")
    return problem


# --- reading ------------------------------------------------------------------------------------


def _tuples(value):
    """JSON gives lists back; the dataclass holds tuples (frozen, hashable)."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def _read(path: Path, root: Path) -> AuditData:
    from faircode import load_audit
    from faircode.data import read_data
    from faircode.manifest import load_manifest
    from site_src.checking.published import load_facts
    from site_src.sources.collect import split_front_matter

    m = load_manifest(path, root=root)
    shown_manifest = f"audits/{m.slug}/audit.yaml"
    if not m.dataset.datasheet:
        raise ValueError(f"{shown_manifest}: dataset.datasheet: required for the data page")
    sheet = m.resolve(m.dataset.datasheet)
    meta, _ = split_front_matter(sheet.read_text(encoding="utf-8").split("\n"), shown=m.dataset.datasheet)
    missing = [k for k in _FIELDS if not (isinstance(meta, dict) and meta.get(k))]
    if missing:
        raise ValueError(f"{m.dataset.datasheet}: front matter: missing {', '.join(missing)} (the data page shows them)")
    facts = [f for f in load_facts(sheet, shown=m.dataset.datasheet) if f.audit == m.slug]
    notes = meta.get("group_notes") or {}
    if not isinstance(notes, dict) or not all(isinstance(v, str) for v in notes.values()):
        raise ValueError(f"{m.dataset.datasheet}: front matter: group_notes: expected a mapping of protected "
                         f"attribute names to text")
    unknown = sorted(set(notes) - {p.name for p in m.protected})
    if unknown:
        raise ValueError(f"{m.dataset.datasheet}: front matter: group_notes: {unknown[0]!r} is not a protected "
                         f"attribute of {shown_manifest}")
    rows_file = len(read_data(m.resolve(m.dataset.file), m.dataset.parse))
    audit = load_audit(path, root=root)
    files = [(m.dataset.file, m.dataset.sha256)]
    if m.dataset.decode is not None:
        files.append((m.dataset.decode.file, m.dataset.decode.sha256))
    t = m.target
    return AuditData(
        slug=m.slug, name=m.name, scenario=" ".join((m.description or "").split()),
        **{k: str(meta[k]) for k in _FIELDS}, datasheet=m.dataset.datasheet, files=tuple(files),
        rows_file=rows_file, rows_after=len(audit.df), rows_dropped=int(audit.n_dropped),
        filters=tuple((_condition(f.column, f.op, f.value), f.reason or "") for f in m.filters),
        target=t.column, positive=", ".join(map(str, t.positive)), meaning=t.meaning,
        favourable="not being flagged" if t.favourable == "negative" else "being flagged",
        groups=tuple((p.name, p.column, _group(p.disadvantaged_label, p.disadvantaged),
                      _group(p.reference_label, p.advantaged) if p.advantaged else p.reference_label,
                      notes.get(p.name, ""))
                     for p in m.protected),
        proxies=tuple((p.column, p.reason) for p in m.proxies),
        facts=tuple((f.fact, f.expected_text, f.citation, f.url or "") for f in facts if not f.pinned),
        pinned=tuple((f.fact, f.expected_text, f.citation, f.url or "") for f in facts if f.pinned),
    )


def _group(label: str, values) -> str:
    """A group as its label, with the file's values when they differ from it: ``Black (African-American)``."""
    shown = ", ".join(map(str, values))
    return label if shown == label else f"{label} ({shown})"


def _condition(column: str, op: str, value) -> str:
    """A manifest filter as a reader reads it: ``days_b_screening_arrest`` between -30 and 30."""
    words = {"eq": "is", "ne": "is not", "lt": "<", "le": "≤", "gt": ">", "ge": "≥", "in": "is one of",
             "not_in": "is none of", "between": "between"}
    if op == "between" and isinstance(value, (list, tuple)) and len(value) == 2:
        return f"{column} between {value[0]} and {value[1]}"
    shown = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
    return f"{column} {words.get(op, op)} {shown}"
