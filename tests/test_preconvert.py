"""Pages converted by MkDocs' own conversion while the runs go on (each explainer page as its run
ends, the pages that need no run before), used by MkDocs' build only where converting them again
gives the same (issue 26; ``site_src.publishing.preconvert``)."""

from __future__ import annotations

import filecmp
import logging
import shutil
from pathlib import Path

import pytest
from mkdocs.commands.build import build as mkdocs_build
from mkdocs.config import load_config

from site_src.publishing import preconvert

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _same_build_date(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")  # MkDocs' theme writes the build's date into the home page


def _project(tmp_path: Path, pages: dict[str, str]) -> Path:
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "mkdocs.yml").write_text("site_name: t\nuse_directory_urls: true\nvalidation:\n  anchors: warn\n"
                                     "markdown_extensions:\n  - toc:\n      permalink: true\n")
    for rel, text in pages.items():
        (root / "docs" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / rel).write_text(text)
    return root


def _config(root: Path, site: str):
    return load_config(str(root / "mkdocs.yml"), docs_dir=str(root / "docs"), site_dir=str(root / site))


def _build(root: Path, site: str, converted: dict | None, caplog) -> tuple[set[str], list[str]]:
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mkdocs"), preconvert.reused(converted or {}) as taken:
        mkdocs_build(_config(root, site))
    return set(taken), [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


PAGE = "# Page A\n\n## Method\n\nSee [B](b.md), [its part](b.md#part) and [the method](#method).\n\n```python\nx = 1\n```\n"


def test_a_page_converted_before_the_pages_it_links_to_exist_is_used_and_the_site_is_the_same(tmp_path, caplog):
    root = _project(tmp_path, {"index.md": "# Home\n", "a.md": PAGE})
    converter = preconvert.Preconverter(lambda: _config(root, "site"))
    converter.page("a.md")  # b.md is not written yet, as a later explainer's page
    assert set(converter.done) == {"a.md"}
    (root / "docs" / "b.md").write_text("# B\n\n## Part\n")
    taken, warnings = _build(root, "site", converter.done, caplog)
    assert taken == {"a.md"} and warnings == []
    reference, warnings = _build(root, "reference", None, caplog)
    assert reference == set() and warnings == []
    compared = filecmp.dircmp(root / "site", root / "reference")
    assert not compared.diff_files and not compared.left_only and not compared.right_only
    assert filecmp.cmp(root / "site" / "a" / "index.html", root / "reference" / "a" / "index.html", shallow=False)


def test_a_page_whose_link_leads_nowhere_in_the_end_is_converted_again_and_warned_about(tmp_path, caplog):
    root = _project(tmp_path, {"index.md": "# Home\n", "a.md": PAGE})
    converter = preconvert.Preconverter(lambda: _config(root, "site"))
    converter.page("a.md")
    assert set(converter.done) == {"a.md"}
    # b.md is never written: the link is broken, and only converting the page again says so.
    taken, warnings = _build(root, "site", converter.done, caplog)
    assert taken == set()
    assert any("contains a link 'b.md'" in w for w in warnings), warnings


def test_a_page_changed_after_its_conversion_is_converted_again(tmp_path, caplog):
    root = _project(tmp_path, {"index.md": "# Home\n", "a.md": PAGE, "b.md": "# B\n\n## Part\n"})
    converter = preconvert.Preconverter(lambda: _config(root, "site"))
    converter.page("a.md")
    (root / "docs" / "a.md").write_text(PAGE.replace("x = 1", "x = 2"))
    taken, _ = _build(root, "site", converter.done, caplog)
    assert taken == set()
    assert "x</span> <span class=\"o\">=</span> <span class=\"mi\">2" in (root / "site" / "a" / "index.html").read_text() \
        or "x = 2" in (root / "site" / "a" / "index.html").read_text()


def test_a_conversion_that_logged_is_not_kept(tmp_path):
    root = _project(tmp_path, {"index.md": "# Home\n", "a.md": "# A\n\n[nowhere](missing.png)\n"})
    converter = preconvert.Preconverter(lambda: _config(root, "site"))
    converter.page("a.md")  # MkDocs warns of the missing image: that page is left for MkDocs to convert and say so
    assert converter.done == {}


def test_another_config_is_not_the_same_conversion(tmp_path, caplog):
    root = _project(tmp_path, {"index.md": "# Home\n", "a.md": PAGE, "b.md": "# B\n\n## Part\n"})
    converter = preconvert.Preconverter(lambda: _config(root, "site"))
    converter.page("a.md")
    (root / "mkdocs.yml").write_text((root / "mkdocs.yml").read_text().replace("permalink: true", "permalink: false"))
    taken, _ = _build(root, "site", converter.done, caplog)
    assert taken == set()
    assert "headerlink" not in (root / "site" / "a" / "index.html").read_text()


def test_a_forced_build_uses_every_explainer_page_converted_during_the_runs_and_writes_the_same_site(tmp_path,
                                                                                                      monkeypatch):
    from site_src import build as build_module
    from site_src.build import BuildOptions, build
    from site_src.publishing.mkdocs_site import build_site

    root = tmp_path / "site-root"
    shutil.copytree(REPO / "tests" / "fixtures" / "tinysite", root)
    made, read_before = [], []
    monkeypatch.setattr(build_module, "build_site", lambda *a, **k: made.append(build_site(*a, **k)) or made[-1])
    real_feed = preconvert._ReadBefore.feed

    def feed(self, data):
        read_before.append(preconvert._digest(data) in self._read)
        return real_feed(self, data)

    monkeypatch.setattr(preconvert._ReadBefore, "feed", feed)
    report = build(BuildOptions(root=root, force_all=True))
    explainers = {f"explainers/{r.slug}/index.md" for r in report.runs}
    # Every page but the two made from every explainer's run (the home page, the tag index) was
    # converted while the runs went on: each explainer page as its run ended, the others before.
    pages = {p.relative_to(root / "docs").as_posix() for p in (root / "docs").rglob("*.md") if p.name != "README.md"}
    assert explainers < pages and {"index.md", "tags.md", "results/index.md", "glossary/index.md"} <= pages
    assert made[0].preconverted == pages - {"index.md", "tags.md"}
    # Search read each of those pages' final HTML from what was read then; the other two itself.
    assert read_before.count(True) == len(pages) - 2 and read_before.count(False) == 2
    # The same docs/ converted by MkDocs alone, page by page.
    reference = build_site(root, root / "docs", tmp_path / "reference", strict=True, facts=report.facts)
    assert reference.preconverted == frozenset()
    compared = [p.relative_to(root / "site") for p in (root / "site").rglob("*") if p.is_file()]
    assert {p for p in compared if p.name != "fairsite-manifest.json"} == {
        p.relative_to(tmp_path / "reference") for p in (tmp_path / "reference").rglob("*") if p.is_file()}
    different = [str(p) for p in compared if p.name != "fairsite-manifest.json"
                 and not filecmp.cmp(root / "site" / p, tmp_path / "reference" / p, shallow=False)]
    assert different == []


# ----------------------------------------------------------- conversions kept between builds (issue 48)

def _build_keeping(root: Path, site: str, caplog) -> tuple[set[str], list[str], list[str]]:
    """A build with the conversions the last one kept (`preconvert.Kept`), keeping this one's: the
    pages taken from the kept ones, the pages MkDocs converted itself, and the warnings."""
    from mkdocs.structure.pages import Page

    caplog.clear()
    converted, real = [], Page.render

    def render(page, config, files):
        converted.append(page.file.src_uri)
        return real(page, config, files)

    kept = preconvert.Kept(root)
    Page.render = render
    try:
        with caplog.at_level(logging.INFO, logger="mkdocs"), preconvert.reused({}, kept=kept) as taken:
            mkdocs_build(_config(root, site))
    finally:
        Page.render = real
    kept.save({p.relative_to(root / "docs").as_posix() for p in (root / "docs").rglob("*.md")})
    return set(taken), converted, [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_page_added_converts_only_itself_and_the_site_is_the_one_mkdocs_writes(tmp_path, caplog):
    root = _project(tmp_path, {"index.md": "# Home\n", "a.md": PAGE, "b.md": "# B\n\n## Part\n"})
    assert sorted(_build_keeping(root, "first", caplog)[1]) == ["a.md", "b.md", "index.md"]
    (root / "docs" / "c.md").write_text("# C\n\nA page added: every page's navigation lists it.\n")
    taken, converted, warnings = _build_keeping(root, "site", caplog)
    assert taken == {"index.md", "a.md", "b.md"} and converted == ["c.md"] and warnings == []
    _, warnings = _build(root, "reference", None, caplog)  # MkDocs alone, every page converted
    assert warnings == []
    compared = filecmp.dircmp(root / "site", root / "reference")
    assert not compared.diff_files and not compared.left_only and not compared.right_only
    for page in ("index.html", "a/index.html", "b/index.html", "c/index.html", "search/search_index.json"):
        assert filecmp.cmp(root / "site" / page, root / "reference" / page, shallow=False), page


def test_a_kept_page_whose_link_now_leads_nowhere_is_converted_again_and_warned_about(tmp_path, caplog):
    root = _project(tmp_path, {"index.md": "# Home\n", "a.md": PAGE, "b.md": "# B\n\n## Part\n"})
    _build_keeping(root, "first", caplog)
    (root / "docs" / "b.md").unlink()
    taken, converted, warnings = _build_keeping(root, "site", caplog)
    assert "a.md" in converted and "a.md" not in taken
    assert any("contains a link 'b.md'" in w for w in warnings), warnings
    # Converted with a warning: not kept, so the next build converts it and warns again.
    taken, converted, warnings = _build_keeping(root, "again", caplog)
    assert "a.md" in converted and any("contains a link 'b.md'" in w for w in warnings)


def test_kept_conversions_of_another_config_or_another_version_are_not_used(tmp_path, caplog, monkeypatch):
    root = _project(tmp_path, {"index.md": "# Home\n", "a.md": PAGE, "b.md": "# B\n\n## Part\n"})
    _build_keeping(root, "first", caplog)
    (root / "mkdocs.yml").write_text((root / "mkdocs.yml").read_text().replace("permalink: true", "permalink: false"))
    taken, converted, _ = _build_keeping(root, "site", caplog)
    assert taken == set() and sorted(converted) == ["a.md", "b.md", "index.md"]
    assert "headerlink" not in (root / "site" / "a" / "index.html").read_text()
    monkeypatch.setattr(preconvert, "_KEPT_FORMAT", "another")  # as a new version of a package would
    taken, converted, _ = _build_keeping(root, "again", caplog)
    assert taken == set() and sorted(converted) == ["a.md", "b.md", "index.md"]
