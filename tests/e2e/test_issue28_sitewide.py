"""Issue 28, "Read in one sitting", the site-wide part, checked in a real browser.

Expected values come from outside the page under test: the glossary's source
(``site_src.rendering.glossary.TERMS``), the results CSV files read with the csv module, the
built files' sizes on disk, WCAG's contrast formula, and a count of visible words made in the
browser by the issue-17 counter (tests/e2e/conftest.py's VISIBLE_WORDS_JS, which
tests/e2e/test_readers.py's length test uses), not by the build's own counter.
"""

from __future__ import annotations

import csv
import math
import re
import urllib.parse
from pathlib import Path

import pytest

from tests.e2e.conftest import prefixed_handler, rendered, serve, share

SLUG = "permutation-test-fairness-gaps"
# Every kind of page the site has (a data page too, if the site has one).
PAGE_TYPES = {"home": "", "explainer": f"explainers/{SLUG}/", "glossary": "glossary/", "results": "results/",
              "checklist": "checklist/", "mistakes": "mistakes/", "tags": "tags/", "calculator": "check-a-gap/"}


# --- Accessibility ---------------------------------------------------------------------------------

def _page_types(site_root) -> dict[str, str]:
    types = dict(PAGE_TYPES)
    if (site_root / "site" / "data" / "index.html").exists():
        types["data"] = "data/"
    return types


# The page types in both schemes are a minute of axe: each scheme's are checked by AXE_PARTS
# tests, a part each (conftest's `share`), which run on several workers at once.
AXE_PARTS = 4


@pytest.mark.parametrize("part", range(AXE_PARTS), ids=lambda part: f"part{part + 1}of{AXE_PARTS}")
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious_or_critical_on_any_page_type(site_root, browser, base_url, prefixed_url, scheme,
                                                                part):
    """axe-core's full rule set (bundled with axe-playwright-python: no network) on every page
    type and the 404 page, folds open, in both schemes. Issue 28 found the search dialog and the
    progress bar unnamed (serious) on every page."""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    urls = {name: base_url + path for name, path in _page_types(site_root).items()}
    urls["404"] = prefixed_url + "/fair-code/no/such/page/"
    problems = []
    # One tab opens the part's pages in turn, as a reader would (a context per page would fetch
    # and compile the site's styles and scripts again for each: conftest's `visit_in_turn`).
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme,
                                  service_workers="block")
    page = context.new_page()
    for name in share(list(urls), part, AXE_PARTS):
        page.goto(urls[name], wait_until="load")
        page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
        results = axe.run(page)
        for v in results.response["violations"]:
            if v["impact"] in ("serious", "critical"):
                problems += [f"{scheme} {name}: {v['id']} ({v['impact']}): {n['target']}" for n in v["nodes"][:3]]
    context.close()
    assert problems == []


def _luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (0-255 channels)."""
    def channel(c):
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _rgb(css: str) -> tuple[float, float, float]:
    return tuple(float(x) for x in re.findall(r"[\d.]+", css)[:3])


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_focus_ring_stands_out_at_3_to_1_in_both_schemes(browser, base_url, scheme):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    page = context.new_page()
    page.goto(base_url + f"explainers/{SLUG}/")
    link = page.locator("article p a[href]").first
    link.focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Tab")  # focused by the keyboard: :focus-visible
    ring = page.evaluate("() => { const s = getComputedStyle(document.activeElement);"
                         " return [s.outlineStyle, s.outlineWidth, s.outlineColor]; }")
    background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
    lighter, darker = sorted((_luminance(_rgb(ring[2])), _luminance(_rgb(background))), reverse=True)
    assert ring[0] != "none" and float(ring[1].removesuffix("px")) >= 2, ring
    assert (lighter + 0.05) / (darker + 0.05) >= 3, (scheme, ring, background)
    context.close()


def test_the_keyboard_reaches_the_content_before_the_table_of_contents_and_permalinks(browser, base_url):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    def fresh_load(fragment: str = ""):
        # The first Tab must start from the top of a page whose scripts have settled: on a loaded
        # machine (two browser workers) a Tab pressed while the instant-navigation bundle was still
        # starting landed nowhere. A page loaded anew, not moved within (about:blank first).
        page.goto("about:blank")
        page.goto(base_url + f"explainers/{SLUG}/" + fragment)
        page.wait_for_load_state("networkidle")

    where = ("() => { const a = document.activeElement; return {skip: a.classList.contains('md-skip'),"
             " article: !!a.closest('article'), toc: !!a.closest('.md-sidebar--secondary'),"
             " permalink: a.classList.contains('headerlink'), nowhere: a === document.body,"
             " tag: a.tagName + (a.id ? '#' + a.id : '')}; }")
    fresh_load()
    page.keyboard.press("Tab")
    assert page.evaluate(where)["skip"]  # the first stop: "Skip to content"
    # Following the skip link is going to its fragment: the page loaded at it has its target as
    # :target and the place the next Tab starts from (HTML's "scroll to the fragment"). Pressing
    # Enter on the link raced Chromium under load (the URL moved, :target now and then did not; 5 s
    # waits and three tries, and still a failure at load 20: issue 47, item 8): the browser's click
    # is not the site's to test, where the link leads and what comes next is.
    fragment = page.evaluate("() => new URL(document.querySelector('.md-skip').href).hash")
    assert fragment.startswith("#")
    fresh_load(fragment)
    target = page.evaluate("() => { const t = document.querySelector(':target'); return t && '#' + t.id; }")
    assert target is not None and target == urllib.parse.unquote(fragment), (target, fragment)
    page.keyboard.press("Tab")
    after_skip = page.evaluate(where)
    assert after_skip["article"] and not after_skip["permalink"] and not after_skip["toc"], after_skip
    # Without the skip link: every stop up to the first one in the article is before the content
    # (header, site navigation), none in the table of contents, none a permalink.
    fresh_load()
    for _ in range(200):
        page.keyboard.press("Tab")
        state = page.evaluate(where)
        assert not state["toc"] and not state["permalink"], state
        if state["article"]:
            break
    else:
        pytest.fail("200 tab stops without reaching the article")
    assert page.locator(".md-sidebar--secondary a").count() > 3  # the table of contents is there, after it
    context.close()


# --- Hover definitions -----------------------------------------------------------------------------

def _definition(anchor: str) -> str:
    from site_src.rendering.glossary import TERMS

    term = next(t for t in TERMS if t.anchor == anchor)
    # The definition's words without its Markdown (links, ** and `), read from the source here.
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", term.definition).replace("**", "").replace("`", "")
    return " ".join(text.split())[:60]


def test_a_glossary_term_shows_its_definition_on_hover_and_focus_without_leaving_the_page(browser, base_url):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.goto(base_url + f"explainers/{SLUG}/")
    url = page.url
    term = page.locator("article p a[data-fc-term]").first
    anchor = term.get_attribute("data-fc-term")
    tip = page.locator("#fc-term-tip")
    term.hover()
    tip.wait_for(state="visible")
    assert _definition(anchor).split("*")[0][:40] in " ".join(tip.inner_text().split())
    page.mouse.move(0, 0)
    tip.wait_for(state="hidden")
    term.focus()
    assert tip.is_visible() and page.url == url
    page.keyboard.press("Escape")
    assert not tip.is_visible()
    # Screen readers get it as the link's description.
    described = page.evaluate("a => document.getElementById(a.getAttribute('aria-describedby')).textContent",
                              term.element_handle())
    assert _definition(anchor)[:40] in described
    context.close()


def test_on_a_touch_screen_the_first_tap_defines_and_the_second_follows(browser, base_url):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = context.new_page()
    page.goto(base_url + f"explainers/{SLUG}/")
    url = page.url
    term = page.locator("article p a[data-fc-term]").first
    term.scroll_into_view_if_needed()
    term.tap()
    tip = page.locator("#fc-term-tip")
    tip.wait_for(state="visible")
    assert page.url == url and "Tap the term again" in tip.inner_text()
    box = tip.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390  # readable on the phone's screen
    term.tap()
    page.wait_for_url("**/glossary/**")
    context.close()


# --- The key box and the reading time --------------------------------------------------------------

def test_the_key_box_is_at_body_size(open_page):
    page = open_page(f"explainers/{SLUG}/")
    body = page.evaluate("() => getComputedStyle(document.querySelector('article > p:not([class])')).fontSize")
    box = page.locator("article .admonition.tip").first
    assert box.count() == 1
    assert box.evaluate("b => getComputedStyle(b).fontSize") == body == "16px"
    assert box.locator("li, p").last.evaluate("e => getComputedStyle(e).fontSize") == "16px"


def _minutes(words: int) -> set[int]:
    # The build counts the same words its own way (an HTML parser): allow a few words' difference.
    return {math.ceil(words * 0.98 / 230), math.ceil(words * 1.02 / 230)}


def test_each_explainer_and_its_card_state_the_reading_time_of_its_visible_words(site_root, rendered_pages):
    """With the folds closed, and (issue 47: "5 min read" was true only with every fold closed)
    with them open, where that takes longer: "5 min read, 12 with the details"."""
    slugs = sorted(p.stem for p in (site_root / "explainers").glob("*.md"))
    lines, with_details = {}, 0
    for slug in slugs:
        read = rendered(rendered_pages, f"explainers/{slug}/")
        assert len(read["reading_times"]) == 1, slug  # article .fc-reading-time
        line = read["reading_times"][0]
        m = re.fullmatch(r"(\d+) min read(?:, (\d+) with the details)?", line)
        assert m, (slug, line)
        # The counter from the issue-17 test, in the browser, without the line itself (4 words):
        # `rendered_pages` ran it on the page as loaded, and with every fold opened.
        words, unfolded = read["visible_words"], read["unfolded_words"]
        assert int(m.group(1)) in _minutes(words), (slug, words, line)
        if m.group(2):
            with_details += 1
            assert int(m.group(2)) in _minutes(unfolded) and int(m.group(2)) > int(m.group(1)), (slug, unfolded, line)
        else:
            assert _minutes(unfolded) & _minutes(words), (slug, words, unfolded, line)
        lines[slug] = line
    assert with_details, "no explainer has folds that take a minute more to read: is the count of open folds wrong?"
    cards = rendered(rendered_pages, "")["cards"]  # the home page's .fc-cards li
    for slug in slugs:
        card = next((c for c in cards if any(h.endswith(f"/explainers/{slug}/") for h in c["hrefs"])), None)
        assert card is not None and len(card["times"]) == 1, (slug, card)  # its .fc-card-time
        assert card["times"][0] == f"· {lines[slug]}", slug


# --- The 404 page at any root ----------------------------------------------------------------------

@pytest.mark.parametrize("prefix", ["/", "/elsewhere/deep/"])
def test_the_404_page_works_at_a_root_it_was_not_built_for(site_root, browser, prefix):
    """The site is built for /fair-code/ (site_url); served at the domain's root or under another
    path, its 404 page is styled, its scripts run and its links lead back into the site."""
    site = site_root / "site"
    with serve(prefixed_handler(prefix), site) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
        errors = []
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        for missing in ("no/such/page/", "missing.html"):
            response = page.goto(url + prefix + missing)
            assert response.status == 404
            assert page.locator("h1").first.inner_text().rstrip("¶") == "Page not found"
            assert page.locator("header.md-header").evaluate("h => getComputedStyle(h).position") in ("sticky", "fixed")
            # Material's JavaScript ran: the search box opens and finds a page under this root.
            page.locator("label.md-search__icon, .md-search__input").first.click()
            page.locator("input.md-search__input").press_sequentially("hypergeometric", delay=20)
            hit = page.locator(f".md-search-result__item a[href*='{prefix}explainers/{SLUG}/']").first
            hit.wait_for(state="visible", timeout=10_000)
            page.keyboard.press("Escape")
            page.get_by_role("link", name="Back to the explainers").click()
            page.wait_for_url(url + prefix)
            assert page.locator("h1").first.inner_text().rstrip("¶") == "The Fair Code explainers"
        assert errors == []
        context.close()


# --- The results page ------------------------------------------------------------------------------

FIRST_LOAD_LIMIT = 300_000  # bytes of HTML, issue 28 (it was 1.7 MB)


def _csv(site_root, name):
    with open(site_root / "results" / name, newline="") as fh:
        return list(csv.DictReader(fh))


def test_the_results_page_loads_small_and_every_row_on_demand(site_root, browser, base_url):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(base_url + "results/", wait_until="load")
    assert len(page.request.get(base_url + "results/").body()) < FIRST_LOAD_LIMIT
    assert (site_root / "site" / "results" / "index.html").stat().st_size < FIRST_LOAD_LIMIT
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    rows = _csv(site_root, "results_fairness.csv")
    table = page.locator("table[data-fc-results]")
    first = table.locator("tbody tr").count()
    assert 0 < first < len(rows)
    # The page's rows are the file's first rows, each naming its groups with their rates.
    r = rows[0]
    # The groups' cell (the verdict's cell opens to a sentence of its own, issue 45).
    summary = table.locator("tbody tr").first.locator("td[data-col='groups'] summary")
    assert summary.inner_text().strip() == (f"{r['disadvantaged_group']}: {100 * float(r['value_disadvantaged']):.1f}%"
                                            f" vs {r['advantaged_group']}: {100 * float(r['value_advantaged']):.1f}%")
    summary.tap()
    sentence = table.locator("tbody tr").first.locator("td[data-col='groups'] details p")
    assert sentence.is_visible() and sentence.inner_text().count(". ") == 0
    # A filter loads every row, then shows them a page at a time.
    audit = sorted({r["audit"] for r in rows})[0]
    mine = [r for r in rows if r["audit"] == audit]
    page.locator("select[data-filter='audit']").select_option(audit)
    page.wait_for_function("() => document.querySelector('table[data-fc-results]').dataset.fcComplete")
    assert table.locator("tbody tr").count() == len(rows)
    shown = table.locator("tbody tr:visible").count()
    assert shown == min(50, len(mine))
    more = page.locator(".fc-explorer .fc-more-btn")
    while more.is_visible():
        more.click()
    assert table.locator("tbody tr:visible").count() == len(mine)
    assert set(table.locator("tbody tr:visible").evaluate_all("rs => rs.map(r => r.dataset.audit)")) == {audit}
    # Ratio rows: in the ratio column, the gap column empty.
    for row in table.locator("tbody tr:visible[data-metric='disparate_impact_ratio']").all()[:3]:
        assert row.locator("td[data-col='gap']").inner_text() == ""
        assert re.fullmatch(r"\d\.\d\d|—", row.locator("td[data-col='ratio']").inner_text().strip())
    context.close()


def test_the_every_group_table_has_a_phone_layout_names_in_its_filters_and_a_reachable_scroll_region(
        site_root, browser, base_url):
    rows = _csv(site_root, "results_by_group.csv")
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(base_url + "results/")
    for wrap in page.locator(".fc-table-wrap").all():
        assert wrap.get_attribute("tabindex") == "0" and wrap.get_attribute("role") == "region"
        assert wrap.get_attribute("aria-label")
    # Filters show the names the rows show (the audit's name, not its slug).
    names = {r["audit"]: r["audit_name"] for r in rows}
    options = page.locator("select[data-group-filter='audit'] option:not([value=''])")
    assert dict(zip(options.evaluate_all("os => os.map(o => o.value)"), options.all_inner_texts())) == names
    headings = page.locator("table[data-fc-groups] thead th").all_inner_texts()
    assert len(set(headings)) == len(headings), headings  # no two columns called "Rate"
    # On a phone each group is a card inside the screen, labelled by its column names.
    card = page.locator("table[data-fc-groups] tbody tr:visible").first
    card.scroll_into_view_if_needed()
    box = card.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert card.locator("td[data-col='rate']").evaluate("td => getComputedStyle(td, '::before').content") == '"Rate"'
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # Another comparison loads every row; the view shows exactly the file's rows for it.
    page.locator("select[data-group-filter='metric']").select_option("false_positive_rate")
    page.wait_for_function("() => document.querySelector('table[data-fc-groups]').dataset.fcComplete")
    chosen = {c: page.locator(f"select[data-group-filter='{c}']").input_value()
              for c in ("audit", "strategy", "model", "attribute", "metric")}
    expected = [r for r in rows if all(r[c] == v for c, v in chosen.items())]
    assert page.locator("table[data-fc-groups] tbody tr:visible").count() == len(expected) > 0
    context.close()


def test_the_results_charts_have_phone_versions(site_root, browser, base_url):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(base_url + "results/")
    images = page.locator("figure img")
    assert images.count() >= 1
    for i in range(images.count()):
        img = images.nth(i)
        img.scroll_into_view_if_needed()
        page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
        assert img.evaluate("img => img.currentSrc").endswith("-narrow.svg")
        # Drawn at about the phone's width: shown at 80% or more of its size, so its 10-point
        # labels stay at 10 px or more (the wide charts showed them at 4 to 5 px).
        natural, shown = img.evaluate("img => [img.naturalWidth, img.getBoundingClientRect().width]")
        assert shown / natural >= 0.8, (natural, shown)
    context.close()
