"""Stage 6, site: MkDocs builds the staged ``docs/`` into a staged ``site/`` (``build_site``; the
stage ``build.build`` reports as "mkdocs"), the build's manifest (``fairsite-manifest.json``: commit,
date, lock and numbers digests, page digests) is written at its root, and both are swapped in only
when everything succeeded (``staging``, ``swap_in``), so a failed or interrupted build leaves the
previous ones whole. ``build_lock`` keeps two builds of one tree apart, and ``record_outputs`` /
``outputs_current`` let a build with nothing changed skip this stage.

(Named for what it runs: ``site.py`` was the name of a standard-library module.)
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from mkdocs.commands.build import build as mkdocs_build
from mkdocs.config import load_config
from mkdocs.exceptions import MkDocsException

from site_src.errors import SiteError
from site_src.filestate import digest_parts, hash_file
from site_src.publishing import incremental, linkcheck, preconvert
from site_src.publishing.mkdocs_hooks import BYTECODE_DIR, PAGES, PREVIOUS_PAGES
from site_src.provenance import MANIFEST, MANIFEST_FORMAT, BuildFacts

STAGE = ".fairsite-stage"
LOCK = ".fairsite.lock"
LAST_BUILD = Path(".cache") / "fairsite-last-build.json"


@contextlib.contextmanager
def build_lock(root: Path):
    """Hold an exclusive lock for the whole build; a second build at once fails at the start."""
    path = root / LOCK
    with open(path, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            raise SiteError(f"another build holds {path} (pid {fh.read().strip() or '?'}); wait for it to finish") from None
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def staging(root: Path):
    """A fresh staging folder, removed afterwards whatever happens (failure, Ctrl-C)."""
    stage = root / STAGE
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    try:
        yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)


@dataclass
class SiteBuild:
    """What `build_site` did: MkDocs' warnings, each page's record (``{src_uri: {"url",
    "anchors", "words"}}``, for the next build and the word budget), the `incremental.site_key`
    it was built under, the pages converted again when the build was incremental (else None), and
    those whose conversion during the runs it used."""

    warnings: list[str]
    pages: dict
    key: str
    rebuilt: frozenset[str] | None = None
    preconverted: frozenset[str] = frozenset()  # pages converted while the runs went on, not again (`preconvert`)

    def words(self) -> dict[str, int]:
        """Each explainer's visible words, by slug (``explainers/<slug>/index.md``)."""
        return {Path(src).parent.name: rec["words"] for src, rec in self.pages.items()
                if src.startswith("explainers/") and "words" in rec}


def build_site(root: Path, docs_dir: Path, site_dir: Path, *, strict: bool, facts: BuildFacts | None = None,
               incremental_ok: bool = False, converted: preconvert.Preconverter | None = None) -> SiteBuild:
    """Run MkDocs on ``docs_dir`` into ``site_dir``; return its warnings (an error if strict).

    ``facts`` are the build's commit and date, which the footer of every page shows (the theme
    reads them from ``extra.build``); without them the hook reads the tree's. With
    ``incremental_ok``, MkDocs converts only the pages that changed since the last build when
    that gives the same site (``site_src.publishing.incremental``). ``converted``: pages already
    converted while the runs went on (``preconvert.Preconverter``), used where converting them
    again would give the same (``preconvert.reused``).
    """
    records: list[str] = []

    class _Collect(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                records.append(record.getMessage())

    handler = _Collect()
    log = logging.getLogger("mkdocs")
    log.addHandler(handler)
    quiet = incremental.QuietDirtyWarning()
    logging.getLogger("mkdocs.commands.build").addFilter(quiet)
    try:
        cfg = site_config(root, docs_dir, site_dir, strict=strict, facts=facts)
        key = incremental.site_key(root, cfg, facts)
        # The build's hooks give the pages MkDocs does not convert what the others read of them:
        # a site without them (a fork's own mkdocs.yml) is built whole.
        incremental_ok = incremental_ok and any(getattr(m, "PREVIOUS_PAGES", None) == PREVIOUS_PAGES
                                                for m in cfg.hooks.values())
        plan = incremental.plan(root, docs_dir, site_dir, key=key, record=_last_record(root)) if incremental_ok else None
        if plan is not None:
            setattr(cfg, PREVIOUS_PAGES, plan.previous_pages)
        # The pages' conversions of earlier builds, where they hold (a page added: every page is
        # built for its navigation, and only the new one converted); not in `check` or `--force`.
        kept = preconvert.Kept(root) if incremental_ok else None
        with preconvert.reused(converted.done if converted else {}, converted.searched if converted else {},
                               kept=kept) as reused:
            mkdocs_build(cfg, dirty=plan is not None)
        pages = getattr(cfg, PAGES, {})
        if plan is not None and incremental.anchors_removed(plan, pages):
            # A page converted again lost an anchor (a heading renamed): the links into it from the
            # pages MkDocs skipped are checked only when they are converted too. Build every page.
            shutil.rmtree(site_dir)
            records.clear()
            plan = None
            cfg = site_config(root, docs_dir, site_dir, strict=strict, facts=facts)
            mkdocs_build(cfg)
            pages = getattr(cfg, PAGES, {})
        if plan is not None:
            incremental.merge_search_index(root / "site", site_dir, {pages[p]["url"] for p in plan.changed if p in pages})
            incremental.order_tags_export(root / "site", site_dir)
        if kept is not None:
            kept.save(set(pages))
    except (MkDocsException, SystemExit) as err:
        detail = "\n  ".join(linkcheck.in_sources(records, root=root, docs_dir=docs_dir, site_dir=site_dir)) or str(err)
        raise SiteError(f"mkdocs build failed{' (strict)' if strict else ''}:\n  {detail}") from None
    finally:
        log.removeHandler(handler)
        logging.getLogger("mkdocs.commands.build").removeFilter(quiet)
    # A link's warning names the explainer's source and line, not the generated page (a new user's finding).
    records = linkcheck.in_sources(records, root=root, docs_dir=docs_dir, site_dir=site_dir)
    return SiteBuild(warnings=records, pages=pages, key=key, rebuilt=None if plan is None else plan.changed,
                     preconverted=frozenset(reused))


def site_config(root: Path, docs_dir: Path, site_dir: Path, *, strict: bool, facts: BuildFacts | None):
    """MkDocs' config of ``root/mkdocs.yml`` for this build: its folders, strictness and facts, and
    where the theme's compiled templates are kept (``mkdocs_hooks.BYTECODE_DIR``). Loaded before
    MkDocs' build (its plugins' ``on_config`` not run yet)."""
    cfg = load_config(str(root / "mkdocs.yml"), docs_dir=str(docs_dir), site_dir=str(site_dir), strict=strict)
    if facts is not None:
        cfg.extra["build"] = facts
    setattr(cfg, BYTECODE_DIR, str(root / ".cache" / "fairsite-jinja-theme"))
    return cfg


def swap_in(stage: Path, root: Path, names=("docs", "site")) -> None:
    """Replace ``root/docs`` and ``root/site`` with the staged ones, all or nothing.

    Every folder is checked first (the staged one is there; the current one, if any, is a folder
    that can be moved); then the current ones are moved aside into ``stage`` and the staged ones
    moved in, each by a rename. If any rename fails, the ones already done are undone in reverse
    order, so ``docs/`` and ``site/`` are both the previous build's, never one new and one old.

    Raises
    ------
    SiteError
        Naming the folder that could not be replaced and why (the previous ones are in place),
        or, if undoing failed too, where the previous folder was left.
    """
    for name in names:
        new, cur = stage / name, root / name
        if not new.is_dir():
            raise SiteError(f"cannot replace {name}/: the new {name}/ was not built ({new} is missing); "
                            "docs/ and site/ are as they were")
        if cur.is_symlink() or (cur.exists() and not cur.is_dir()):
            raise SiteError(f"cannot replace {cur}: it is not a folder; move it away and build again "
                            "(docs/ and site/ are as they were)")
        if cur.exists() and not os.access(cur, os.W_OK | os.X_OK):
            # Moving a folder to another parent rewrites its "..": it must be writable.
            raise SiteError(f"cannot replace {cur}: it is not writable; docs/ and site/ are as they were")
    done: list[tuple[Path, Path]] = []  # renames made, (from, to), to undo in reverse on failure
    try:
        for name in names:
            cur, old = root / name, stage / f"old-{name}"
            if cur.exists():
                _rename(cur, old, done)
        for name in names:
            _rename(stage / name, root / name, done)
    except OSError as err:
        failed = Path(err.filename or "?")
        what = next((n for n in names if failed in (root / n, stage / n, stage / f"old-{n}")), failed.name)
        lost = []
        for src, dst in reversed(done):
            try:
                os.rename(dst, src)
            except OSError as undo:
                lost.append(f"{dst} could not be moved back to {src} ({undo.strerror})")
        if lost:
            raise SiteError(f"cannot replace {what}/ ({err.strerror}), and undoing failed: "
                            + "; ".join(lost)) from None
        raise SiteError(f"cannot replace {what}/ in {root} ({err.strerror}); docs/ and site/ are both "
                        "the previous build's, unchanged") from None


def _rename(src: Path, dst: Path, done: list[tuple[Path, Path]]) -> None:
    os.rename(src, dst)
    done.append((src, dst))


def _tree_state(folder: Path, files: dict[str, list[int]] | None = None) -> str:
    """A cheap digest of a folder as it stands: every file's path, size and modification time
    (``files``: `_tree_files` of it, when the caller has it)."""
    files = _tree_files(folder) if files is None else files
    return digest_parts(f"{rel} {size} {mtime}" for rel, (size, mtime) in files.items())


def _tree_files(folder: Path) -> dict[str, list[int]]:
    """Each file under ``folder`` (relative, POSIX) -> its size and modification time (ns)."""
    return {p.relative_to(folder).as_posix(): [st.st_size, st.st_mtime_ns]
            for p in sorted(folder.rglob("*")) if p.is_file() for st in [p.stat()]}


def edited_outputs(root: Path) -> list[str]:
    """The files of ``docs/`` changed or added since the last successful build wrote it
    (``docs/explainers/x/index.md``), by size and modification time: a build replaces ``docs/``
    whole, so an edit there is lost, and a fresh user's was lost without a word."""
    try:
        written = json.loads((root / LAST_BUILD).read_text())["docs_files"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    docs = root / "docs"
    return [f"docs/{rel}" for rel, state in (_tree_files(docs).items() if docs.is_dir() else ())
            if written.get(rel) != state]


def record_outputs(root: Path, fingerprint: str, site: SiteBuild | None = None, *,
                   facts: BuildFacts | None = None) -> None:
    """Remember what the last successful build was made of and what it wrote (with ``site``,
    what an incremental build starts from: the site's key and each page's record; with
    ``facts``, what its pages showed of them, for `last_shown_facts`)."""
    docs_files = _tree_files(root / "docs")  # kept whole: `edited_outputs` names a file edited since
    state = {"fingerprint": fingerprint, "docs": _tree_state(root / "docs", docs_files), "docs_files": docs_files,
             "site": _tree_state(root / "site")}
    if site is not None:
        state.update(site_key=site.key, pages=site.pages)
    if facts is not None:
        state["shown"] = facts.shown()
    path = root / LAST_BUILD
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state))


def last_shown_facts(root: Path) -> dict | None:
    """What the last successful build's pages showed of its facts (`BuildFacts.shown`), or None."""
    try:
        shown = json.loads((root / LAST_BUILD).read_text()).get("shown")
    except (OSError, ValueError, AttributeError):
        return None
    return shown if isinstance(shown, dict) else None


def _last_record(root: Path) -> dict | None:
    """The last build's record, with ``untouched``: whether its docs/ and site/ are as it left them."""
    try:
        state = json.loads((root / LAST_BUILD).read_text())
    except (OSError, ValueError):
        return None
    state["untouched"] = ((root / "site").is_dir() and (root / "docs").is_dir()
                          and state.get("docs") == _tree_state(root / "docs")
                          and state.get("site") == _tree_state(root / "site"))
    return state


def outputs_current(root: Path, fingerprint: str) -> bool:
    """True when the last build had the same inputs and nobody has touched docs/ or site/ since."""
    try:
        state = json.loads((root / LAST_BUILD).read_text())
    except (OSError, ValueError):
        return False
    return (state.get("fingerprint") == fingerprint and (root / "site").is_dir()
            and state.get("docs") == _tree_state(root / "docs") and state.get("site") == _tree_state(root / "site"))


def write_manifest(site_dir: Path, facts: BuildFacts, *, runs: dict[str, str]) -> dict:
    """Write ``fairsite-manifest.json`` at the root of the built ``site_dir``; return what it holds.

    Parameters
    ----------
    site_dir : Path
        The built site (MkDocs has finished writing it).
    facts : BuildFacts
        Where the build came from (``site_src.provenance``).
    runs : dict
        ``{slug: run_id}``: each explainer's run, named by the digest of all its inputs.

    Returns
    -------
    dict
        ``{"format", "generator", "build", "runs", "pages"}``; ``pages`` maps every HTML file's
        path in the site (``"explainers/<slug>/index.html"``) to its sha256, so a served copy
        can be checked byte for byte against what this build wrote.
    """
    pages = {p.relative_to(site_dir).as_posix(): hash_file(p) for p in sorted(site_dir.rglob("*.html"))}
    manifest = {"format": MANIFEST_FORMAT, "generator": "fairsite", "build": facts.as_json(),
                "runs": dict(sorted(runs.items())), "pages": pages}
    (site_dir / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return manifest
