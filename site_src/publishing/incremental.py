"""Stage 6 after an edit: MkDocs converts again only the pages that changed (issue 26).

A full MkDocs build converts every page: Markdown, highlighting, the theme's template, the search
index. After a word of prose is edited, one page of ``docs/`` differs from the last build's. When
nothing that every page shows has changed, the build starts from the last ``site/`` and lets
MkDocs' own dirty build (``mkdocs build --dirty``: a page is built when its source is newer than
its output) write the pages that changed:

- `site_key` names what every page shows: ``mkdocs.yml`` and the site's URLs, the build's own
  code (``cache.site_code_digest``) and the hooks and theme overrides ``mkdocs.yml`` names, the
  packages that make the HTML, and the footer's facts (commit, uncommitted changes, date).
  Another key: a full build.
- `plan` compares the staged ``docs/`` with the last build's, file by file. The same files must be
  there, and every page that changed must keep its front matter (titles, order and tags are in
  every page's navigation and in the tags index); else a full build. It then copies the last
  ``site/`` into the staging folder and sets each source's time so that MkDocs sees "newer" exactly
  where the bytes changed: a page, or a file in its folder (figures, fragments); and the home page,
  whose cards carry every explainer's reading time.
- MkDocs skips what it does not convert, so the build's hooks give those pages what the others read
  of them (``mkdocs_hooks._restore_unconverted``: front matter, anchors, words), from the record of
  the last build (`SiteRecord`, kept in ``.cache/fairsite-last-build.json``).
- A converted page that lost an anchor (a heading renamed) makes it a full build after all
  (`anchors_removed`): the links into it from the skipped pages are checked only when converted.
- `merge_search_index`: Material's search indexes only the pages built; the others' entries come
  from the last index, in the same order. `order_tags_export` keeps the tags plugin's export in
  the full build's order.

The site it writes is the one a full build writes, byte for byte (``tests/test_incremental.py``
builds both and compares every file).
"""

from __future__ import annotations

import filecmp
import importlib.metadata
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from site_src.execution.cache import site_code_digest
from site_src.filestate import digest_parts, hash_file

# The packages whose output is in the HTML, by their distribution names.
_PACKAGES = ("mkdocs", "mkdocs-material", "pymdown-extensions", "Markdown", "Pygments", "mkdocs-glightbox", "Jinja2")
_OLD = 946_684_800  # 2000-01-01: a source's time that is older than any output (MkDocs: "not modified")
_SEARCH_INDEX = Path("search") / "search_index.json"
_TAGS_EXPORT = Path("tags.json")  # Material's tags plugin, `export_file`


@dataclass(frozen=True)
class Plan:
    """An incremental build: the pages MkDocs converts again (``docs/``-relative paths) and what
    the last build recorded of every page (``{src_uri: {"url", "anchors", "words"}}``)."""

    changed: frozenset[str]
    previous_pages: dict


def site_key(root: Path, cfg, facts) -> str:
    """A digest of everything every page shows besides its own source (see the module's notes).

    ``cfg`` is MkDocs' loaded config (its URLs are in every page); ``facts`` the build's
    ``BuildFacts`` or None (the footer's commit, uncommitted changes and day).
    """
    # The build's code as it runs (site_code_digest, the key every page's render uses too), and
    # the hooks and theme overrides as mkdocs.yml names them (another folder in a copy).
    named = [Path(m.__file__) for m in cfg.hooks.values() if getattr(m, "__file__", None)]
    custom_dir = cfg.theme.custom_dir
    if custom_dir:
        named += [p for p in Path(custom_dir).rglob("*") if p.is_file()]
    versions = []
    for name in _PACKAGES:
        try:
            versions.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} missing")
    footer = (None if facts is None else (facts.commit, facts.dirty, facts.date[:10]))
    return digest_parts([
        hash_file(root / "mkdocs.yml"), repr((cfg.site_url, cfg.repo_url, cfg.repo_name, cfg.strict)),
        site_code_digest(), *(f"{p} {hash_file(p)}" for p in sorted(named)), *versions, repr(footer),
    ])


def plan(root: Path, docs_dir: Path, site_dir: Path, *, key: str, record: dict | None) -> Plan | None:
    """Prepare an incremental build of ``docs_dir`` into ``site_dir``, or return None (build all).

    Parameters
    ----------
    root : Path
        The repository: ``root/docs`` and ``root/site`` are the last build's.
    docs_dir, site_dir : Path
        The staged ``docs/`` (rendered) and ``site/`` (not yet there).
    key : str
        `site_key` of this build.
    record : dict or None
        What the last successful build recorded (``mkdocs_site.record_outputs``), if anything:
        its ``site_key``, its ``pages`` and whether ``root/docs`` and ``root/site`` are untouched
        since (``untouched``).

    Returns
    -------
    Plan or None
        None when a full build is needed (no record, another key, ``docs/`` or ``site/`` touched,
        a file added or removed, a page's front matter changed). Otherwise the pages to convert;
        ``site_dir`` then holds a copy of the last site, and the sources' times tell MkDocs which
        pages to write.
    """
    if not record or record.get("site_key") != key or not record.get("untouched") or "pages" not in record:
        return None
    old_docs = root / "docs"
    new_files = _files(docs_dir)
    if new_files != _files(old_docs):
        return None
    changed_files = {rel for rel in new_files if not filecmp.cmp(docs_dir / rel, old_docs / rel, shallow=False)}
    pages = {rel for rel in new_files if rel.endswith(".md")}
    changed: set[str] = set()
    for rel in changed_files:
        if rel in pages:
            if _front_matter(docs_dir / rel) != _front_matter(old_docs / rel):
                return None  # titles, order, tags: in every page's navigation
            changed.add(rel)
        else:
            # A figure or a fragment changed: the pages of its folder (a fragment's folder is
            # a dot-folder beside its page).
            folder = Path(rel).parent
            if folder.name.startswith("."):
                folder = folder.parent
            changed |= {p for p in pages if Path(p).parent == folder}
    if "index.md" in pages:
        changed.add("index.md")  # the home page's cards: every explainer's reading time
    shutil.copytree(root / "site", site_dir, copy_function=shutil.copy2)
    now = time.time() + 1  # newer than every output just copied
    for rel in new_files:
        # MkDocs writes a page, or copies another file, only when its source is the newer.
        fresh = rel in changed if rel in pages else rel in changed_files
        stamp = now if fresh else _OLD
        os.utime(docs_dir / rel, (stamp, stamp))
    return Plan(changed=frozenset(changed), previous_pages=record["pages"])


def anchors_removed(plan: Plan, pages: dict) -> bool:
    """True when a page converted again has lost an anchor it had at the last build (a heading
    renamed or removed): a link into it from a page MkDocs did not convert would go unchecked."""
    return any(set(plan.previous_pages.get(src, {}).get("anchors", ())) - set(pages.get(src, {}).get("anchors", ()))
               for src in plan.changed)


def merge_search_index(previous_site: Path, site_dir: Path, rebuilt_urls: set[str]) -> None:
    """Complete ``site_dir``'s search index, which holds only the pages just built, with the other
    pages' entries from ``previous_site``'s, each page where it was (Material writes a page's
    entries in the order of the pages; the set of pages has not changed)."""
    new = json.loads((site_dir / _SEARCH_INDEX).read_text(encoding="utf-8"))
    old = json.loads((previous_site / _SEARCH_INDEX).read_text(encoding="utf-8"))
    built: dict[str, list] = {}
    for entry in new["docs"]:
        built.setdefault(_page_of(entry), []).append(entry)
    docs, placed = [], set()
    for entry in old["docs"]:
        page = _page_of(entry)
        if page not in rebuilt_urls:
            docs.append(entry)
        elif page not in placed:
            docs.extend(built.get(page, []))
            placed.add(page)
    for page, entries in built.items():  # a page that had no entries before
        if page not in placed:
            docs.extend(entries)
    new["docs"] = docs
    # As Material writes it (material/plugins/search/plugin.py, generate_search_index).
    (site_dir / _SEARCH_INDEX).write_text(json.dumps(new, separators=(",", ":"), default=str), encoding="utf-8")


def order_tags_export(previous_site: Path, site_dir: Path) -> None:
    """Put the tags plugin's export (``tags.json``) in the order a full build writes it, the last
    build's: the pages not converted reach the plugin before the converted ones (their front
    matter is read first, ``mkdocs_hooks._restore_unconverted``), and the plugin writes pages in
    the order it met them. The set of pages and their tags are the same (`plan`)."""
    new_path, old_path = site_dir / _TAGS_EXPORT, previous_site / _TAGS_EXPORT
    if not new_path.exists() or not old_path.exists():
        return
    new = json.loads(new_path.read_text(encoding="utf-8"))
    rank = {m["item"]["url"]: i for i, m in enumerate(json.loads(old_path.read_text(encoding="utf-8"))["mappings"])}
    new["mappings"].sort(key=lambda m: rank.get(m["item"]["url"], len(rank)))
    with open(new_path, "w", encoding="utf-8") as fh:
        json.dump(new, fh)  # as the plugin writes it (material/plugins/tags/structure/mapping/storage)


class QuietDirtyWarning(logging.Filter):
    """Drops MkDocs' warning that a dirty build may show stale navigation: `plan` builds
    incrementally only when no page's navigation can have changed (and strict mode would fail on it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "A 'dirty' build is being performed" not in record.getMessage()


def _page_of(entry: dict) -> str:
    return entry["location"].split("#", 1)[0]


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def _front_matter(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return ""
    end = text.find("\n---", 3)
    return text[:end] if end >= 0 else text
