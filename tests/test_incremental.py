"""Incremental MkDocs builds (site_src.publishing.incremental, issue 26): after an edit MkDocs
converts only the pages that changed, and the site it leaves is the one a full build writes.

The oracle is a full build of the same sources: every file of ``site/`` is compared byte for byte
(the build date is fixed with ``SOURCE_DATE_EPOCH``, the reproducible-builds convention)."""

from __future__ import annotations

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
