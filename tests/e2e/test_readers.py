"""Issue 13, "Readers can verify every page, on any screen", checked in a real browser.

Expected values come from outside the page: the repository copy's git commit, mkdocs.yml read
with MkDocs' own YAML loader, the explainer's source (its `# %%` cells and their print calls),
the results CSV. The accessibility checks run axe-core (bundled with axe-playwright-python, no
network) on every page in both colour schemes.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import REFERENCE_SECTIONS, contrast_context, rendered, share, visit_in_turn

SLUG = "permutation-test-fairness-gaps"
PREFIX = "/fair-code/"  # as prefixed_url serves the site (conftest)


def _mkdocs_config(site_root) -> dict:
    from mkdocs.utils.yaml import yaml_load

    with open(site_root / "mkdocs.yml", encoding="utf-8") as fh:
        return yaml_load(fh)


def _commit(site_root) -> str:
    return subprocess.run(["git", "-C", str(site_root), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _cells(site_root) -> list[str]:
    """The explainer's `# %%` cells, read from its source."""
    text = (site_root / "explainers" / f"{SLUG}.md").read_text()
    code = text.split("```python explainer\n", 1)[1].split("\n```", 1)[0]
    return [c for c in re.split(r"^(?=# %%)", code, flags=re.M) if c.strip()]


# --- Verify ---------------------------------------------------------------------------------------

def test_every_page_links_the_repository_and_states_its_commit(site_root, pages, rendered_pages):
    repo_url = _mkdocs_config(site_root)["repo_url"].rstrip("/")
    commit = _commit(site_root)
    for path in pages:
        read = rendered(rendered_pages, path)
        assert read["source_links"].count(repo_url) == 1, path  # header a.md-source
        shown = [text for href, text in read["build_links"] if href == f"{repo_url}/tree/{commit}"]  # footer .fc-build
        assert len(shown) == 1, (path, read["build_links"])
        assert len(shown[0]) >= 7 and commit.startswith(shown[0]), (path, shown)  # an abbreviated hash of it


def test_each_explainer_says_how_to_verify_it(site_root, rendered_pages):
    repo_url = _mkdocs_config(site_root)["repo_url"].rstrip("/")
    commit = _commit(site_root)
    explainers = sorted(p.stem for p in (site_root / "explainers").glob("*.md"))
    for slug in explainers:
        blocks = rendered(rendered_pages, f"explainers/{slug}/")["verify_blocks"]  # .fc-source
        assert len(blocks) == 1, slug
        text = blocks[0]["text"]
        # Installed from a clone at the commit, never from the index, where "faircode" is another library.
        assert f"git clone {repo_url}.git" in text and f"git checkout {commit}" in text, slug
        # ... with the locked versions the page was built with, as the README installs them.
        assert "pip install --require-hashes -r requirements/site.txt" in text, slug
        assert "pip install --no-deps --no-build-isolation -e ." in text and "pip install faircode\n" not in text, slug
        assert f"python explainers/code/{slug}.py" in text, slug
        assert blocks[0]["hrefs"].count(f"{repo_url}/blob/{commit}/explainers/{slug}.numbers.json") == 1, slug
        assert 'should match "What it prints"' in text, slug


def test_sitemap_lists_every_page_at_the_site_address(site_root, pages):
    site_url = _mkdocs_config(site_root)["site_url"]
    tree = ET.parse(site_root / "site" / "sitemap.xml")
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = sorted(loc.text for loc in tree.findall("s:url/s:loc", ns))
    assert locs == sorted(site_url + p for p in pages)


def test_results_page_states_its_provenance(site_root, open_page):
    import hashlib

    digest = hashlib.sha256((site_root / "results" / "results_fairness.csv").read_bytes()).hexdigest()
    page = open_page("results/")
    repro = page.locator("#reproducibility ~ .fc-repro").inner_text()
    assert digest in repro and _commit(site_root)[:7] in repro
    assert "scikit-learn" in repro and "data/german.data" in repro


def test_site_under_a_sub_path_with_a_working_404_page(site_root, browser, prefixed_url):
    assert urlsplit(_mkdocs_config(site_root)["site_url"]).path == PREFIX  # the address it is built for
    repo_url = _mkdocs_config(site_root)["repo_url"].rstrip("/")
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    failed, errors = [], []
    context.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 and
               not r.url.endswith(("/no/such/page/", "/missing.html")) else None)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    for path in ("", f"explainers/{SLUG}/", "results/"):
        assert page.goto(prefixed_url + PREFIX + path).ok, path
        assert page.locator("h1").first.is_visible()
    # Deep and shallow missing pages: the 404 page with its styles, and links that lead home.
    for missing in ("no/such/page/", "missing.html"):
        response = page.goto(prefixed_url + PREFIX + missing)
        assert response.status == 404
        assert page.locator("h1").first.inner_text().rstrip("¶") == "Page not found"
        # Material's stylesheet applied: the header is fixed-positioned by it.
        assert page.locator("header.md-header").evaluate("h => getComputedStyle(h).position") in ("sticky", "fixed")
        assert page.locator(f"header a.md-source[href='{repo_url}']").count() == 1
        assert page.locator("footer .fc-build").inner_text().startswith("Built ")
        # Material's JavaScript works from there: its search loads the index from the site's
        # address and its hits lead back under the prefix.
        page.locator("label.md-search__icon, .md-search__input").first.click()
        page.locator("input.md-search__input").press_sequentially("hypergeometric", delay=20)
        hit = page.locator(f".md-search-result__item a[href*='{PREFIX}explainers/{SLUG}/']").first
        hit.wait_for(state="visible", timeout=10_000)
        page.keyboard.press("Escape")
        page.get_by_role("link", name="Back to the explainers").click()
        page.wait_for_url(prefixed_url + PREFIX)
        assert page.locator("h1").first.inner_text().rstrip("¶") == "The Fair Code explainers"
    assert failed == [] and errors == []
    context.close()


# The contrast rules, every violation with every node it found. Passing nodes are only counted
# (axe's resultTypes, the default of axe-playwright-python that options given here replace):
# axe builds a selector for each node it reports, which for the thousands of passing nodes of an
# explainer with its code open was over a quarter of the test's time (90 s of axe on 22 pages, 64 s without).
_CONTRAST = {"runOnly": ["color-contrast", "link-in-text-block"], "resultTypes": ["violations"]}


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_contrast_violation_on_the_404_page(browser, prefixed_url, scheme):
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.goto(prefixed_url + PREFIX + "no/such/page/")
    results = Axe().run(page, options=_CONTRAST)
    assert [(v["id"], [n["target"] for n in v["nodes"]]) for v in results.response["violations"]] == []
    context.close()


# --- Read -----------------------------------------------------------------------------------------

def test_figures_open_full_size(open_page):
    page = open_page(f"explainers/{SLUG}/")
    link = page.locator("figure.fc-figure a.glightbox").first
    img = link.locator("img")
    img.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    inline_width = img.bounding_box()["width"]
    img.click()
    full = page.locator(".glightbox-container .gslide.current img")
    full.wait_for(state="visible", timeout=10_000)
    # The opening effect (glightbox's CSS zoom) ends before the sizes are compared: waited for as
    # the browser's animations finishing, where a fixed 600 ms could fall short on a loaded machine.
    page.wait_for_function("() => document.getAnimations().every(a => a.playState !== 'running')")
    assert full.bounding_box()["width"] > inline_width
    page.keyboard.press("Escape")
    page.locator(".glightbox-container").wait_for(state="detached", timeout=10_000)


def test_every_figure_links_its_full_size_image(site_root, base_url, rendered_pages):
    from urllib.request import urlopen

    explainers = sorted(p.stem for p in (site_root / "explainers").glob("*.md"))
    figures = 0
    for slug in explainers:
        for links in rendered(rendered_pages, f"explainers/{slug}/")["figures"]:  # figure.fc-figure a.glightbox
            assert len(links) == 1 and links[0]["images"] == 1, slug  # the image opens the lightbox
            href = links[0]["href"]  # relative to the site's root when it is in the site
            with urlopen(href if "://" in href else base_url + href) as full:  # an HTTP error raises
                assert full.headers["content-type"].startswith("image/"), (slug, href)
            figures += 1
    assert figures >= len(explainers)


def test_figures_are_numbered_with_captions_that_are_not_the_alt_text(open_page):
    page = open_page(f"explainers/{SLUG}/")
    figures = page.locator("figure.fc-figure")
    for i in range(figures.count()):
        fig = figures.nth(i)
        caption = fig.locator("figcaption").inner_text()
        assert caption.startswith(f"Figure {i + 1}.")
        assert fig.locator("img").get_attribute("alt") not in caption
    assert "Figure 1" in page.locator("article").inner_text().split(figures.first.inner_text())[0]  # referred to


def test_figures_are_stacked_for_a_phone(browser, base_url):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(base_url + f"explainers/{SLUG}/")
    img = page.locator("figure.fc-figure img").first
    img.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    assert img.evaluate("img => img.currentSrc").endswith("-narrow.svg")
    box = img.bounding_box()
    wide = int(img.get_attribute("height")) / int(img.get_attribute("width"))  # the desktop figure's shape
    assert box["height"] / box["width"] > 1.8 * wide  # two panels, one above the other
    context.close()


def test_cells_are_shown_with_their_own_output_where_the_prose_places_them(site_root, open_page):
    cells = _cells(site_root)
    assert len(cells) >= 3
    # The technical layer (plotting, agreement checks) is placed with `cell(n, folded=True)`.
    source_text = (site_root / "explainers" / f"{SLUG}.md").read_text()
    folded = {int(n) for n in re.findall(r"cell\((\d+), folded=True\)", source_text)}
    assert len(folded) < len(cells)
    page = open_page(f"explainers/{SLUG}/")
    blocks = page.locator("details.fc-cell")
    assert blocks.count() == len(cells)
    outputs = []
    for i, source in enumerate(cells):
        block = blocks.nth(i)
        assert block.locator("summary").inner_text().startswith(f"Code, cell {i + 1}")
        assert block.get_attribute("open") is None, i + 1  # every cell's code starts folded
        code = block.locator("pre code").first.text_content()  # a folded cell's code is not rendered
        assert source.split("\n", 1)[1].strip().splitlines()[0] in code
        if i + 1 in folded:  # the technical layer: its output is inside the fold with its code
            inner = block.locator(".fc-cell-output")
            outputs.append(inner.text_content() if inner.count() else "")
        else:  # a teaching cell: its output shows under the folded code
            nxt = block.locator("xpath=following-sibling::*[1]")
            outputs.append(nxt.inner_text() if "fc-cell-output" in (nxt.get_attribute("class") or "") else "")
            assert not outputs[-1] or nxt.is_visible()
    # Each literal that a cell's print calls start with is in that cell's output and no other's.
    for i, source in enumerate(cells):
        for prefix in re.findall(r'print\(f?"([^"{]{4,})', source):
            assert prefix in outputs[i], (i + 1, prefix)
            assert all(prefix not in out for j, out in enumerate(outputs) if j != i), prefix
    # Placed in the prose: the first cell comes before the section that explains the code.
    article = page.locator("article").inner_text()
    assert article.index("Code, cell 1") < article.index("How often would a smaller audit")
    # A click opens a cell's code; the teaching output was visible all along.
    assert not blocks.first.locator("pre").first.is_visible()
    blocks.first.locator("summary").click()
    assert blocks.first.locator("pre").first.is_visible()


def test_notebook_carries_the_prose_and_the_runs_outputs(site_root, open_page):
    page = open_page(f"explainers/{SLUG}/")
    with page.expect_download() as info:
        page.locator(f"a[download='{SLUG}.ipynb']").click()
    nb = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    markdown = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert any("hypergeometric" in m for m in markdown)  # a word of the page's prose
    assert "{{" not in "".join(markdown)  # rendered, not the template
    printed = page.locator(".fc-cell-output pre").first.inner_text().strip()
    streams = ["".join(o["text"]) for c in code for o in c["outputs"] if o["output_type"] == "stream"]
    assert printed.splitlines()[0] in streams[0]
    images = [o for c in code for o in c["outputs"] if o["output_type"] == "display_data"]
    assert len(images) == page.locator("figure.fc-figure").count()
    # Page order: the prose that introduces the first cell comes before it.
    first_code = nb["cells"].index(code[0])
    assert any("The model flags" in "".join(c["source"]) for c in nb["cells"][1:first_code])


def test_key_results_columns_are_visible_on_a_phone(browser, base_url):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(base_url + "results/")
    row = page.locator("table[data-fc-results] tbody tr").first
    row.scroll_into_view_if_needed()
    for col in ("gap", "p_value", "q_value", "significant"):
        cell = row.locator(f"td[data-col='{col}']")
        box = cell.bounding_box()
        assert cell.is_visible() and box["x"] >= 0 and box["x"] + box["width"] <= 390, col
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scrolling
    context.close()


def test_table_help_opens_by_keyboard_and_touch(browser, base_url):
    for touch in (False, True):
        context = browser.new_context(viewport={"width": 390 if touch else 1280, "height": 844}, has_touch=touch)
        page = context.new_page()
        page.goto(base_url + "results/")
        button = page.locator("th[data-col='q_value'] .fc-help-btn")
        tip = page.locator("#fc-tip")
        if touch:
            button.tap()
        else:
            button.focus()
            page.keyboard.press("Enter")
        assert tip.is_visible() and "Benjamini-Hochberg" in tip.inner_text()
        assert button.get_attribute("aria-expanded") == "true"
        page.keyboard.press("Escape")
        assert not tip.is_visible()
        assert page.locator("table[data-fc-results] [title]").count() == 0  # no hover-only help left
        context.close()


def test_filters_show_the_names_the_table_shows(site_root, open_page):
    with open(site_root / "results" / "results_fairness.csv", newline="") as fh:
        names = {r["audit"]: r["audit_name"] for r in csv.DictReader(fh)}
    page = open_page("results/")
    options = page.locator("select[data-filter='audit'] option:not([value=''])")
    shown = dict(zip(options.evaluate_all("os => os.map(o => o.value)"), options.all_inner_texts()))
    assert shown == names


# Every page in both schemes is a few minutes of axe: each scheme's pages are checked by
# CONTRAST_PARTS tests, a part each (conftest's `share`), which run on several workers at once.
CONTRAST_PARTS = 4


@pytest.mark.parametrize("part", range(CONTRAST_PARTS), ids=lambda part: f"part{part + 1}of{CONTRAST_PARTS}")
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_contrast_violation_on_any_page(browser, base_url, pages, scheme, part):
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    problems = []
    for path, page in visit_in_turn(browser, base_url, share(pages, part, CONTRAST_PARTS), color_scheme=scheme):
        # Folded code and the table's many rows: contrast is the same in every one of them.
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        # The results table's rows are styled alike: its first rows stand for the rest (axe on
        # every cell of every row takes minutes). So do a code block's tokens: one of each chain of
        # classes in each block stands for the others (contrast_context says which, and why).
        context = contrast_context(page, exclude=("table[data-fc-results] tbody tr:nth-child(n+25)",))
        results = axe.run(page, context=context, options=_CONTRAST)
        for v in results.response["violations"]:
            problems += [f"{scheme} {path or 'home'}: {v['id']}: {n['target']} {n.get('failureSummary', '')[:160]}"
                         for n in v["nodes"][:5]]
    assert problems == [], "\n".join(problems)


def test_navigation_thumbnails_tags_and_related(site_root, open_page):
    page = open_page("")
    thumbs = page.locator(".fc-cards img.fc-thumb")
    with_figures = sum("{{ figure(1" in p.read_text() for p in (site_root / "explainers").glob("*.md"))
    assert thumbs.count() == with_figures
    page.evaluate("() => document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager')")
    page.wait_for_function("() => [...document.querySelectorAll('img.fc-thumb')].every(i => i.naturalWidth > 0)")
    page.locator(".fc-cards a.fc-tag", has_text="permutation test").first.click()
    page.wait_for_url("**/tags/**")
    assert page.locator("h1").inner_text().rstrip("¶") == "Explainers by tag"
    assert page.locator(f"article a[href*='{SLUG}']").count() >= 1
    page = open_page(f"explainers/{SLUG}/")
    assert page.locator("#related + ul a").count() >= 4  # explainers, then the reader's pages
    assert page.locator(".md-tags a.md-tag").count() >= 1  # the page's tags link to the index
    assert page.locator("article .admonition").count() >= 1  # a key caveat stands out


# --- Issue 17: the reader's pages, and length ------------------------------------------------------

def test_every_page_links_the_glossary_checklist_and_mistakes(pages, rendered_pages):
    """In the page's own text (not only the navigation, which the home page hides), each of the
    three reader's pages is linked from every other page."""
    readers = ("glossary/", "checklist/", "mistakes/")
    missing = []
    for path in pages:
        hrefs = rendered(rendered_pages, path)["article_paths"]  # article a[href], their URLs' paths
        missing += [f"{path or 'home'} -> {r}" for r in readers if r != path and not any(h.endswith("/" + r) for h in hrefs)]
    assert missing == []


# Issue 28's budget (site_src.checking.words.WORD_BUDGET, about 1,200 visible words with folds
# closed, which `fairsite check` reports page by page) is the ceiling; issue 17 aimed at about 1,000.
from site_src.checking.words import WORD_BUDGET  # noqa: E402 - the one home of the number

TARGET_WORDS = 1000
MAX_VISIBLE_WORDS = WORD_BUDGET
# The reference sections (REFERENCE_SECTIONS) do not count towards the length, nor what a reader
# does not see without opening it: the count is VISIBLE_WORDS_JS (tests/e2e/conftest.py), run on
# each page by `rendered_pages`.


def test_explainers_are_near_the_issue_17_length(site_root, rendered_pages):
    counts = {}
    for slug in sorted(p.stem for p in (site_root / "explainers").glob("*.md")):
        read = rendered(rendered_pages, f"explainers/{slug}/")
        counts[slug] = read["visible_words"]
        assert all(read["reference_headings"][r] == 1 for r in REFERENCE_SECTIONS), slug  # what is left out exists
    assert min(counts.values()) > 200  # the counting sees the prose
    too_long = {slug: n for slug, n in counts.items() if n > MAX_VISIBLE_WORDS}
    assert too_long == {}, (f"visible words above {MAX_VISIBLE_WORDS} (issue 28's budget; issue 17 aimed at about "
                            f"{TARGET_WORDS}): {too_long}")
