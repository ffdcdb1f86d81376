"""Incremental MkDocs builds (site_src.publishing.incremental, issue 26): after an edit MkDocs
converts only the pages that changed, and the site it leaves is the one a full build writes.

The oracle is a full build of the same sources: every file of ``site/`` is compared byte for byte
(the build date is fixed with ``SOURCE_DATE_EPOCH``, the reproducible-builds convention)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from site_src.build import BuildOptions, build
from site_src.errors import SiteError
from site_src.publishing.mkdocs_site import LAST_BUILD
from test_site_build import _add

from built_sites import copy_of_built_tinysite

_HOOKS = Path(__file__).resolve().parents[1] / "site_src" / "publishing" / "mkdocs_hooks.py"
_OTHER = """
    ---
    title: Other Page
    subtitle: A second page, for the navigation.
    summary: Another page.
    checks:
      - name: ran
        assert: done
    ---
    Prose of the other page.

    ## A section of its own

    More prose.

    ```python explainer
    done = True
    ```
    """


_EPOCH = "1764547200"


@pytest.fixture(scope="module")
def built_with_hooks(tmp_path_factory, built_tinysite):
    """The tiny site with the real site's hooks (what an incremental build needs) and a second
    explainer, built once in full for the module; never modified (`site` copies it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", _EPOCH)
        root = copy_of_built_tinysite(built_tinysite, tmp_path_factory.mktemp("hooks"))
        config = root / "mkdocs.yml"
        config.write_text(config.read_text() + f"hooks:\n  - {_HOOKS}\n")
        _add(root, "other", _OTHER)
        report = build(BuildOptions(root=root))
    assert report.pages_converted is None  # the config and the files changed: a full build
    return root


@pytest.fixture
def site(tmp_path, built_with_hooks, monkeypatch):
    """`built_with_hooks` copied and built again in the copy (runs and pages from its caches), so
    that the copy's record of its last build is its own."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", _EPOCH)
    return copy_of_built_tinysite(built_with_hooks, tmp_path)


def _site_files(root: Path) -> dict[str, bytes]:
    site = root / "site"
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _full_build(root: Path):
    (root / LAST_BUILD).unlink()  # no record of the last build: MkDocs converts every page
    report = build(BuildOptions(root=root))
    assert report.pages_converted is None
    return report


def _edit(root: Path, slug: str, old: str, new: str) -> None:
    path = root / "explainers" / f"{slug}.md"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_a_prose_edit_converts_its_page_and_the_home_page_and_writes_what_a_full_build_writes(site):
    _edit(site, "coin-flips", "A coin is fair when", "A coin is called fair when")
    report = build(BuildOptions(root=site))
    assert report.pages_converted == {"explainers/coin-flips/index.md", "index.md"}
    incremental = _site_files(site)
    assert b"A coin is called fair when" in incremental["explainers/coin-flips/index.html"]
    _full_build(site)
    full = _site_files(site)
    assert sorted(incremental) == sorted(full)
    assert [name for name in full if incremental[name] != full[name]] == []


def test_the_pages_not_converted_keep_their_search_entries_and_reading_times(site):
    _edit(site, "other", "More prose.", "More prose, and then some more words on the other page.")
    report = build(BuildOptions(root=site))
    assert report.pages_converted == {"explainers/other/index.md", "index.md"}
    index = (site / "site" / "search" / "search_index.json").read_text()
    assert "A coin is fair when" in index and "and then some more words" in index
    assert set(report.words) == {"coin-flips", "other"}  # the word budget sees every explainer


def test_a_changed_title_builds_every_page(site):
    _edit(site, "other", "title: Other Page", "title: Renamed Page")
    report = build(BuildOptions(root=site))
    assert report.pages_converted is None  # every page's navigation names it
    assert "Renamed Page" in (site / "site" / "explainers" / "coin-flips" / "index.html").read_text()


def test_links_into_a_page_not_converted_are_checked_against_its_anchors(site):
    _edit(site, "coin-flips", "A coin is fair when", "See [its section](../other/index.md#a-section-of-its-own). A coin is fair when")
    report = build(BuildOptions(root=site))
    assert report.pages_converted == {"explainers/coin-flips/index.md", "index.md"}
    assert not any("other/index.md" in w for w in report.warnings)
    _edit(site, "coin-flips", "#a-section-of-its-own", "#no-such-section")
    with pytest.raises(SiteError, match=r"does not contain an anchor '#no-such-section'"):
        build(BuildOptions(root=site))


def test_a_renamed_heading_that_a_page_not_converted_links_to_fails_the_build(site):
    _edit(site, "coin-flips", "A coin is fair when", "See [its section](../other/index.md#a-section-of-its-own). A coin is fair when")
    build(BuildOptions(root=site))
    _edit(site, "other", "## A section of its own", "## A section renamed")  # coin-flips is not converted
    with pytest.raises(SiteError, match=r"does not contain an anchor '#a-section-of-its-own'"):
        build(BuildOptions(root=site))


def test_a_site_touched_by_hand_is_built_whole(site):
    page = site / "site" / "explainers" / "other" / "index.html"
    page.write_text(page.read_text() + "<!-- edited by hand -->")
    _edit(site, "coin-flips", "A coin is fair when", "A coin is called fair when")
    report = build(BuildOptions(root=site))
    assert report.pages_converted is None
    assert "edited by hand" not in page.read_text()


def test_a_site_without_the_builds_hooks_is_built_whole(tmp_path, built_tinysite):
    root = copy_of_built_tinysite(built_tinysite, tmp_path)
    _edit(root, "coin-flips", "A coin is fair when", "A coin is called fair when")
    report = build(BuildOptions(root=root))
    assert report.pages_converted is None


def test_check_builds_every_page(site):
    from site_src import cli
    from site_src.build import check_options

    assert cli.main(["--root", str(site), "accept"]) == 0  # `check` wants accepted numbers
    _edit(site, "coin-flips", "A coin is fair when", "A coin is called fair when")
    assert cli.main(["--root", str(site), "build"]) == 0
    report = build(check_options(site))
    assert report.pages_converted is None


# ------------------------------------------------------------- pages added, renamed, moved (issue 48)

# A page added, renamed or moved changes every page's navigation, so MkDocs builds every page; but
# only the pages that show what changed are rendered again (the others read the same titles and
# reading order: site_src.rendering.reads), only the pages whose own text changed are converted
# again (site_src.publishing.preconvert.Kept), and the results page is not drawn again. The oracle
# is a build of the same sources with every page rendered, converted and indexed from scratch: the
# caches gone but the runs' (a run forced again has other times and memory, which every page shows).

_ORDER = """
parts:
  - title: The first part
    intro: The pages of the tiny site, in this order.
    explainers:
      - coin-flips
      - other
      - third
"""

_PAGE = """
    ---
    title: {title}
    subtitle: A page of the reading order.
    summary: A page the tests add, rename and move.
    checks:
      - name: ran
        assert: done
    ---
    Prose of the page titled {title}.

    ```python explainer
    done = True
    ```
    """


@pytest.fixture(scope="module")
def built_in_order(tmp_path_factory, built_with_hooks):
    """`built_with_hooks` with a third page and a reading order (coin-flips, other, third), built
    once for the module; never modified (`ordered` copies it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SOURCE_DATE_EPOCH", _EPOCH)
        root = copy_of_built_tinysite(built_with_hooks, tmp_path_factory.mktemp("ordered"))
        _add(root, "third", _PAGE.format(title="Third Page"))
        (root / "explainers" / "reading-order.yaml").write_text(_ORDER)
        build(BuildOptions(root=root))
    return root


@pytest.fixture
def ordered(tmp_path, built_in_order, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", _EPOCH)
    return copy_of_built_tinysite(built_in_order, tmp_path)


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _from_scratch(root: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """``site/`` and ``docs/`` as a build from scratch writes them from the same sources and runs."""
    for path in (root / ".cache").iterdir():
        if path.name != "fairsite":  # the runs (and the checks that passed)
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    for name in ("docs", "site"):
        shutil.rmtree(root / name)
    report = build(BuildOptions(root=root))
    assert report.pages_converted is None and set(report.pages_rendered) == {r.slug for r in report.runs}
    return _tree(root / "site"), _tree(root / "docs")


def _add_page(root: Path, after: str = "other") -> None:
    _add(root, "added", _PAGE.format(title="Added Page"))
    order = root / "explainers" / "reading-order.yaml"
    order.write_text(order.read_text().replace(f"      - {after}\n", f"      - {after}\n      - added\n"))


def _rename(root: Path, slug: str = "coin-flips") -> None:
    path = root / "explainers" / f"{slug}.md"
    path.write_text(re.sub(r"^title: (.*)$", r"title: \1, Renamed", path.read_text(), count=1, flags=re.M))


def _swap(root: Path, first: str = "coin-flips", second: str = "other") -> None:
    order = root / "explainers" / "reading-order.yaml"
    text = order.read_text()
    order.write_text(text.replace(f"      - {first}\n      - {second}\n", f"      - {second}\n      - {first}\n"))
    assert order.read_text() != text


def _remove(root: Path, slug: str = "other") -> None:
    (root / "explainers" / f"{slug}.md").unlink()
    order = root / "explainers" / "reading-order.yaml"
    order.write_text(order.read_text().replace(f"      - {slug}\n", ""))


@pytest.mark.parametrize("change", [_add_page, _rename, _swap, _remove], ids=["added", "renamed", "moved", "removed"])
def test_a_page_added_renamed_moved_or_removed_builds_what_a_build_from_scratch_builds(ordered, change):
    # The first page's title and place are on the others ("start here"); renaming or moving it
    # must reach them, and no cached page may keep what it showed before.
    change(ordered)
    build(BuildOptions(root=ordered))
    site, docs = _tree(ordered / "site"), _tree(ordered / "docs")
    full_site, full_docs = _from_scratch(ordered)
    assert sorted(site) == sorted(full_site) and sorted(docs) == sorted(full_docs)
    assert [name for name in full_site if site[name] != full_site[name]] == []
    assert [name for name in full_docs if docs[name] != full_docs[name]] == []


@pytest.fixture
def conversions(monkeypatch) -> list[str]:
    """The pages MkDocs converts (its own ``Page.render`` run, not a kept conversion used)."""
    from mkdocs.structure.pages import Page

    converted, real = [], Page.render

    def render(page, config, files):
        converted.append(page.file.src_uri)
        return real(page, config, files)

    monkeypatch.setattr(Page, "render", render)
    return converted


@pytest.fixture
def results_drawn(monkeypatch) -> list[int]:
    """One entry each time the results page is drawn (not copied from its cache)."""
    from site_src.rendering import results_page

    drawn, real = [], results_page._write_page
    monkeypatch.setattr(results_page, "_write_page", lambda *a, **k: drawn.append(1) or real(*a, **k))
    return drawn


_UNTOUCHED = {"explainers/coin-flips/index.md", "glossary/index.md", "data/index.md", "results/index.md"}


def test_a_page_added_renders_and_converts_only_the_pages_that_show_it(ordered, conversions, results_drawn):
    _add_page(ordered)  # after `other`: `third` moves down one place, its `order` with it
    report = build(BuildOptions(root=ordered))
    assert report.pages_converted is None  # every page's navigation lists the new page
    assert set(report.pages_rendered) == {"added", "third"}
    assert "explainers/added/index.md" in conversions and "index.md" in conversions  # its card
    assert not _UNTOUCHED & set(conversions) and results_drawn == []
    assert "Added Page" in (ordered / "site" / "explainers" / "coin-flips" / "index.html").read_text()


def test_a_page_renamed_renders_only_the_pages_that_show_its_title(ordered, conversions, results_drawn):
    _rename(ordered, "third")  # the last page: no other page names it
    report = build(BuildOptions(root=ordered))
    assert report.pages_converted is None and report.pages_rendered == ("third",)
    assert not _UNTOUCHED & set(conversions) and "explainers/other/index.md" not in conversions
    assert results_drawn == []
    assert "Third Page, Renamed" in (ordered / "site" / "explainers" / "other" / "index.html").read_text()


def test_pages_moved_are_rendered_again_but_not_converted_again(ordered, conversions, results_drawn):
    _swap(ordered, "other", "third")  # each keeps what it shows: only its `order` (front matter) moves
    report = build(BuildOptions(root=ordered))
    assert report.pages_converted is None and set(report.pages_rendered) == {"other", "third"}
    assert not {"explainers/other/index.md", "explainers/third/index.md"} & set(conversions)
    assert not _UNTOUCHED & set(conversions) and results_drawn == []
