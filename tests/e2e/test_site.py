"""The built site in a real browser (Debian's Chromium via Playwright), served from localhost only.

Expected values come from the files the site is built from (the results CSV read with the csv
module, the generated code file), never from the page under test.
"""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest

from site_src.publishing.linkcheck import broken_links, external_loads
from tests.e2e.conftest import rendered

ARTIFACTS = Path(__file__).parent / "artifacts"  # screenshots, for a person to look at

SLUG = "permutation-test-fairness-gaps"
# A word from the explainer's body (not its title, subtitle or summary) that search must find.
BODY_WORD = "hypergeometric"


def _csv_rows(site_root):
    with open(site_root / "results" / "results_fairness.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_no_broken_link_or_anchor_and_nothing_loads_from_outside(site_root):
    from mkdocs.utils.yaml import yaml_load

    site = site_root / "site"
    with open(site_root / "mkdocs.yml", encoding="utf-8") as fh:
        site_url = yaml_load(fh)["site_url"]  # the 404 page's links start with its path
    assert broken_links(site, site_url=site_url) == []
    assert external_loads(site) == []
    assert "mathjax" not in "".join(p.read_text() for p in site.rglob("*.html")).lower()


def test_every_page_loads_without_errors_or_outside_requests(pages, rendered_pages):
    # The 404 page is built for the site's address (site_url's path): see test_readers's sub-path test.
    assert len(pages) >= 3, pages  # index, an explainer, results
    for path in pages:
        read = rendered(rendered_pages, path)  # loaded, no request left localhost, no error in the browser
        assert read["h1_visible"], path
        assert len(read["footers"]) == 1 and "The Fair Code Project" in read["footers"][0], path


def test_search_finds_an_explainer_by_a_word_from_its_body(site_root, open_page):
    source = (site_root / "explainers" / f"{SLUG}.md").read_text()
    front, body = source.split("\n---\n", 1)
    assert BODY_WORD in body and BODY_WORD not in front.lower()
    page = open_page("")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    page.locator("input.md-search__input").press_sequentially(BODY_WORD, delay=20)  # Material reads key events
    hit = page.locator(f".md-search-result__item a[href*='{SLUG}']").first
    hit.wait_for(state="visible", timeout=10_000)
    hit.click()
    page.wait_for_url(f"**/explainers/{SLUG}/**")
    assert page.locator("h1").first.inner_text().startswith("Permutation")


def _front_matter(path: Path) -> dict:
    import yaml

    return yaml.safe_load(path.read_text().split("\n---\n", 1)[0].removeprefix("---\n"))


def test_search_previews_show_each_pages_summary(site_root, open_page):
    """Typed into the real search box: the hit on each explainer (and on the results page) is
    previewed by the page's summary from its front matter, not by the back link, the glossary
    terms or code."""
    expected = {f"explainers/{p.stem}/": _front_matter(p) for p in sorted((site_root / "explainers").glob("*.md"))}
    results_fm = (site_root / "site_src" / "templates" / "results.md.j2").read_text()
    expected["results/"] = {"title": "Benchmark results",
                            "summary": re.search(r'set description = "([^"]+)"', results_fm).group(1)}
    page = open_page("")
    page.locator("label.md-search__icon, .md-search__input").first.click()
    box = page.locator("input.md-search__input")
    items = ".md-search-result__item"
    for location, meta in expected.items():
        # The previous query's hits are gone before this one is typed: one of them may be a hit on
        # this page too, a weak one shown without its summary, and must not be read as this query's.
        box.fill("")
        box.press("Backspace")  # Material searches on the box's keyup: an empty box empties the list
        page.wait_for_function(f"() => document.querySelectorAll('{items}').length === 0")
        # The title's words (punctuation would be read as query syntax), filled in but the last
        # character, which is typed (its keyup runs the search on the whole box): one search per
        # page, where typing every character ran one per character (most of this test's time).
        query = " ".join(re.findall(r"[A-Za-z0-9]+", meta["title"]))
        box.fill(query[:-1])
        box.press(query[-1])
        item = page.locator(items).filter(
            has=page.locator(f"a.md-search-result__link[href*='/{location}?h=']"))
        item.first.wait_for(state="visible", timeout=10_000)
        # The page-level hit is the item's first link; its article is the preview.
        preview = item.first.locator("a.md-search-result__link").first.locator("article")
        text = " ".join(preview.inner_text().split())
        assert text.startswith(" ".join(meta["title"].split())), (location, text)
        assert " ".join(meta["summary"].split()) in text, (location, text)
        assert "All explainers" not in text and "Terms used here" not in text, (location, text)
        assert preview.locator("pre, code").count() == 0, location


def test_results_table_filters_to_one_audit_and_sorts_by_p_value(site_root, open_page):
    rows = _csv_rows(site_root)
    audit = sorted({r["audit"] for r in rows})[-1]
    mine = [r for r in rows if r["audit"] == audit]
    page = open_page("results/")
    table = page.locator("table[data-fc-results]")
    # The page carries its first rows (issue 28: the first view must stay small); filtering,
    # sorting or "Show all" loads every row, shown 50 at a time.
    assert 0 < table.locator("tbody tr").count() < len(rows)

    page.locator("select[data-filter='audit']").select_option(audit)
    page.wait_for_function("() => document.querySelector('table[data-fc-results]').dataset.fcComplete")
    assert table.locator("tbody tr").count() == len(rows)
    assert table.locator("tbody tr.fc-significant").count() == sum(r["significant"] == "True" for r in rows)
    visible = table.locator("tbody tr:visible")
    more = page.locator(".fc-explorer .fc-more-btn")

    def show_all():
        while more.is_visible():
            more.click()

    assert visible.count() == min(50, len(mine))
    show_all()
    assert visible.count() == len(mine)
    assert set(visible.evaluate_all("rows => rows.map(r => r.dataset.audit)")) == {audit}
    assert page.locator(".fc-count").inner_text() == f"{len(mine):,} of {len(rows):,} rows"

    # Each heading's name (its sort button's text; the "?" help button beside it is not part of it).
    headers = table.locator("thead th").evaluate_all(
        "ths => ths.map(th => (th.querySelector('.fc-sort') || th).textContent.trim())")
    p_col = headers.index("p")
    p_header = table.locator("thead th").nth(p_col)
    get_p = f"rows => rows.map(r => r.cells[{p_col}].dataset.value)"
    p_header.locator("button.fc-sort").click()
    assert p_header.get_attribute("aria-sort") == "ascending"
    show_all()
    shown = visible.evaluate_all(get_p)
    expected = sorted(float(r["p_value"]) for r in mine if r["p_value"])
    defined = [float(v) for v in shown if v]
    assert defined == pytest.approx(expected, rel=1e-12)
    assert all(v == "" for v in shown[len(defined):])  # undefined p-values go last
    p_header.locator("button.fc-sort").click()
    assert p_header.get_attribute("aria-sort") == "descending"
    show_all()
    assert [float(v) for v in visible.evaluate_all(get_p) if v] == pytest.approx(expected[::-1], rel=1e-12)

    page.locator("[data-filter-significant]").check()
    show_all()
    assert visible.count() == sum(r["significant"] == "True" for r in mine)
    page.locator("[data-filter-reset]").click()
    assert visible.count() == min(50, len(rows))
    assert page.locator(".fc-count").inner_text() == f"{len(rows):,} of {len(rows):,} rows (showing 50)"


@pytest.mark.parametrize("path", [f"explainers/{SLUG}/", "results/"])
def test_figures_load_with_alt_text(open_page, path, base_url):
    page = open_page(path)
    images = page.locator("figure img")
    assert images.count() >= 1
    for i in range(images.count()):
        img = images.nth(i)
        img.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle(), timeout=10_000)
        assert len(img.get_attribute("alt")) > 40
        assert img.evaluate("img => img.currentSrc").endswith(".svg")
        svg = page.request.get(img.evaluate("img => img.currentSrc"))
        assert svg.ok and b"<svg" in svg.body()[:2000]


def test_code_and_notebook_downloads_match_the_generated_code(site_root, open_page):
    page = open_page(f"explainers/{SLUG}/")
    expected = (site_root / "explainers" / "code" / f"{SLUG}.py").read_bytes()
    with page.expect_download() as info:
        page.locator(f"a[download='{SLUG}.py']").click()
    assert Path(info.value.path()).read_bytes() == expected

    with page.expect_download() as info:
        page.locator(f"a[download='{SLUG}.ipynb']").click()
    nb = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    import nbformat
    nbformat.validate(nbformat.from_dict(nb))
    code_cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(code_cells) >= 2
    # Same code, line for line, as the script (less its two generated header comments and the
    # `# %%` lines that mark its cells: the notebook's cells are those cells).
    script_lines = [ln for ln in expected.decode().splitlines()[2:] if ln.strip() and not ln.startswith("# %%")]
    assert [ln for c in code_cells for ln in c.splitlines() if ln.strip()] == script_lines


# The screens issue 13 asks to be looked at: a laptop and a phone.
SCREENS = {"1366x900": {"width": 1366, "height": 900}, "390x844": {"width": 390, "height": 844}}


# What each page exists to show; its screenshot must hold a rendered picture of it.
KEY_REGIONS = {"index": ".fc-cards img.fc-thumb", "explainer": "#figure-1 img", "results": "table[data-fc-results]"}


def _image_stats(png: bytes) -> tuple[float, float]:
    """(median, standard deviation) of a screenshot's grey levels, 0 to 255 (Pillow)."""
    from io import BytesIO

    from PIL import Image, ImageStat

    stat = ImageStat.Stat(Image.open(BytesIO(png)).convert("L"))
    return stat.median[0], stat.stddev[0]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_screenshots_of_index_explainer_and_results(browser, base_url, scheme, screen):
    """What a reader first sees (the viewport) and the whole page, kept for a person to look at: in
    tests/e2e/artifacts/, or the folder FAIRSITE_SCREENSHOTS names. Nothing may scroll sideways.

    And looked at here: each screenshot is a page, not a blank (its grey levels spread), in the
    colour scheme asked for (a light page's background, its median grey, is light and a dark
    page's is dark), and the part the page exists for (the cards' figures, the explainer's first
    figure, the results table) is drawn on screen, not an empty box.
    """
    out = Path(os.environ.get("FAIRSITE_SCREENSHOTS") or ARTIFACTS)
    out.mkdir(parents=True, exist_ok=True)
    viewport = SCREENS[screen]
    # One tab opens the three pages in turn (a context each would fetch and compile the site's
    # styles and scripts again for each: conftest's `visit_in_turn`).
    context = browser.new_context(viewport=viewport, color_scheme=scheme, service_workers="block")
    page = context.new_page()
    for name, path in [("index", ""), ("explainer", f"explainers/{SLUG}/"), ("results", "results/")]:
        assert page.goto(base_url + path).ok
        expected = "slate" if scheme == "dark" else "default"
        assert page.locator("body").get_attribute("data-md-color-scheme") == expected
        page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager')")
        page.wait_for_function("() => [...document.images].every(i => i.complete)")
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], (name, screen)
        shot = page.screenshot(path=out / f"{name}-{screen}-{scheme}.png")
        page.screenshot(path=out / f"{name}-{screen}-{scheme}-full.png", full_page=True)
        median, spread = _image_stats(shot)
        assert spread > 20, (name, screen, scheme, "the viewport is nearly one colour", spread)
        if scheme == "light":
            assert median > 200, (name, screen, "a light page's background is light", median)
        else:
            assert median < 80, (name, screen, "a dark page's background is dark", median)
        key = page.locator(KEY_REGIONS[name]).first
        assert key.evaluate("el => el.tagName !== 'IMG' || el.naturalWidth > 0"), (name, "the image did not load")
        _, key_spread = _image_stats(key.screenshot())
        assert key_spread > 10, (name, screen, scheme, "the key region is drawn as an empty box", key_spread)
    context.close()
