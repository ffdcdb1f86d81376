"""Issue 47, "The calculator and the pages" (a reader's findings), checked in a real browser.

The site is opened as a reader would: served, from a copy on disk (file://), as a page the browser
saved, and through Material's instant navigation. Expected numbers come from the Python library
(``faircode.significance``), never from the page's script.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from faircode.formatting import format_p_value
from faircode.significance import permutation_test, permutation_test_power, proportion_difference_ci

from tests.e2e.conftest import PREFIX, Guard, guarded_tab, rendered

CALC = "check-a-gap/"
POWER_PAGE = "explainers/small-samples-statistical-power/"
QUERY = "?la=women&na=140&ka=12&lb=men&nb=210&kb=31&out=flagged"
MILLION = "?la=women&na=1000000&ka=500000&lb=men&nb=1000000&kb=499000"


def _sample(k: int, n: int) -> np.ndarray:
    return np.r_[np.ones(k), np.zeros(n - k)]


def _power_done(page):
    page.locator("#fc-power-out[aria-busy=false]").wait_for(state="attached")


def _check_two_groups(page):
    """The calculator answered the journalist's counts with the library's p-value and power."""
    p = permutation_test(_sample(12, 140), _sample(31, 210))
    reading = page.locator("#fc-two-out .fc-calc-reading")
    reading.wait_for()
    assert reading.inner_text().startswith("Per 100 women, about 6 fewer are flagged than per 100 men")
    assert format_p_value(p) in page.locator("#fc-two-out").inner_text()
    _power_done(page)
    assert f"{100 * permutation_test_power(12 / 140, 31 / 210, 140, 210):.1f}%" in page.locator("#fc-power-out").inner_text()


def _check_power_figure(page):
    """The Power page's folded "Try it" figure opens and draws the library's power."""
    page.locator("details.fc-fig-fold > summary").click()
    readout = page.locator("[data-fc-power] .fc-fig-readout")
    page.wait_for_function("document.querySelector('[data-fc-power] .fc-fig-readout') !== null "
                           "&& document.querySelector('[data-fc-power] .fc-fig-readout').textContent.length > 0")
    assert re.search(r"An audit of [\d,]+ people finds a true gap of [−+]\d", readout.inner_text())


# --- 9. From disk, saved, and through instant navigation -------------------------------------------

def test_a_copy_of_the_site_opened_from_disk_runs_the_calculator_and_the_figure(site_root, browser):
    """Opened from disk, the calculator and the Power page's figure did nothing and said nothing:
    they started only from Material's `document$`, which never fires on file://."""
    guard = Guard()
    context, page = guarded_tab(browser, guard)
    site = site_root / "site"
    page.goto((site / CALC / "index.html").as_uri() + QUERY, wait_until="load")
    _check_two_groups(page)
    page.locator("#fc-na").fill("20")
    page.locator("#fc-ka").fill("2")
    assert "Small group: women has fewer than 30 people" in page.locator("#fc-two-out").inner_text()
    page.goto((site / POWER_PAGE / "index.html").as_uri(), wait_until="load")
    _check_power_figure(page)
    context.close()
    assert not guard.outside and not guard.errors, (guard.outside, guard.errors)


def test_a_page_the_browser_saved_still_calculates(site_root, browser, tmp_path):
    """A page saved with its files ("Save page as", complete) keeps the document as the scripts
    left it: a calculator marked as set up in its HTML would stay dead in the copy."""
    site = site_root / "site"
    shutil.copytree(site / "assets", tmp_path / "assets")
    (tmp_path / "check-a-gap").mkdir()
    guard = Guard()
    context, page = guarded_tab(browser, guard)
    page.goto((site / CALC / "index.html").as_uri() + QUERY, wait_until="load")
    _power_done(page)
    saved = tmp_path / "check-a-gap" / "index.html"
    saved.write_text(page.content(), encoding="utf-8")
    page.goto(saved.as_uri(), wait_until="load")
    page.locator("#fc-na").fill("20")
    page.locator("#fc-ka").fill("2")
    page.locator("#fc-nb").fill("210")
    page.locator("#fc-kb").fill("31")
    assert "Small group: women has fewer than 30 people" in page.locator("#fc-two-out").inner_text()
    context.close()
    assert not guard.outside and not guard.errors, (guard.outside, guard.errors)


def test_instant_navigation_loads_and_starts_what_each_page_needs(site_root, browser, prefixed_url):
    """Material's instant navigation swaps the page without loading it: the calculator's scripts,
    loaded only where a page needs them, load and start after such a swap too. (Material engages
    it only for the sitemap's URLs, which name the published address: here they name this server.)"""
    sitemap = (site_root / "site" / "sitemap.xml").read_text(encoding="utf-8")
    local = re.sub(r"https?://[^/]+/fair-code/", prefixed_url + PREFIX, sitemap)
    guard = Guard()
    context, page = guarded_tab(browser, guard)
    context.route("**/sitemap.xml", lambda route: route.fulfill(status=200, content_type="application/xml", body=local))
    page.goto(prefixed_url + PREFIX + "glossary/", wait_until="load")
    page.evaluate("window.fcSamePage = true")
    page.locator(".md-sidebar--primary a[href*='check-a-gap/']").first.click()
    _check_two_groups(page)
    page.locator(".md-sidebar--primary a[href*='small-samples-statistical-power/']").first.click()
    _check_power_figure(page)
    assert page.evaluate("window.fcSamePage") is True  # no page load: Material swapped the content
    context.close()
    assert not guard.outside and not guard.errors, (guard.outside, guard.errors)


# --- 10. A million people: in the background, with progress and a Stop ----------------------------

@pytest.mark.parametrize("where", ["served", "from disk"])
def test_a_million_people_are_computed_in_the_background_and_can_be_stopped(site_root, base_url, browser, where):
    """1,000,000 against 1,000,000 people froze the tab for 101 s behind "a few seconds"."""
    guard = Guard()
    context, page = guarded_tab(browser, guard)
    url = base_url + CALC if where == "served" else (site_root / "site" / CALC / "index.html").as_uri()
    page.goto(url + MILLION, wait_until="load")
    button = page.locator("#fc-power-out button")
    assert button.inner_text() == "Compute the power for 2,000,000 people"
    assert "few seconds" not in page.locator("#fc-power-out").inner_text()
    button.click()
    # The worker reports its progress while the page goes on answering the reader: the groups box
    # is computed again at once, and the power is still under way.
    page.wait_for_function("document.querySelector('#fc-power-out progress') !== null "
                           "&& document.querySelector('#fc-power-out progress').value > 0")
    page.locator("#fc-groups").fill("a, 10, 1\nb, 12, 6")
    assert "a vs b" in page.locator("#fc-groups-out").inner_text()
    assert page.locator("#fc-power-out").get_attribute("aria-busy") == "true"
    page.locator("#fc-power-out button.fc-calc-stop").click()
    _power_done(page)
    assert "Stopped: what is not shown above was not computed." in page.locator("#fc-power-out").inner_text()
    assert page.locator("#fc-power-out progress").count() == 0
    assert page.locator("#fc-power-out button").inner_text() == "Compute again"
    context.close()
    assert not guard.outside and not guard.errors, (guard.outside, guard.errors)


# --- 11. Messages in the reader's words -------------------------------------------------------------

def _errors(page, region: str) -> list[str]:
    return page.locator(f"{region} .fc-calc-error").all_inner_texts()


def test_a_field_that_is_not_a_count_is_named_and_marked_until_it_is_fixed(open_page):
    page = open_page(CALC + QUERY)
    _power_done(page)
    people = page.locator("#fc-na")
    people.fill("abc")
    assert _errors(page, "#fc-two-out") == ["People in women: “abc” is not a number."]
    assert people.get_attribute("aria-invalid") == "true"
    people.fill("12.5")
    assert _errors(page, "#fc-two-out") == ["People in women: must be a whole number of people; got 12.5."]
    people.fill("140")
    assert people.get_attribute("aria-invalid") is None and not _errors(page, "#fc-two-out")
    # Rates: a percentage from 0 to 100, said so (it read "whole number of people; got NaN").
    page.locator("input[name=fc-mode][value=rate]").check()
    page.locator("#fc-ra").fill("120")
    page.locator("#fc-rb").fill("15")
    assert _errors(page, "#fc-two-out") == ["Rate flagged in women: must be a percentage from 0 to 100; got 120."]
    assert page.locator("#fc-ra").get_attribute("aria-invalid") == "true"
    page.locator("#fc-ra").fill("8.6")
    assert page.locator("#fc-ra").get_attribute("aria-invalid") is None and not _errors(page, "#fc-two-out")
    assert "Taken as 12 of 140 women" in page.locator("#fc-two-out").inner_text()
    text = page.locator("form[data-fc-calc]").inner_text()
    assert "NaN" not in text and "`" not in text


def test_the_groups_box_names_the_line_and_refuses_a_name_given_twice(open_page):
    page = open_page(CALC)
    box = page.locator("#fc-groups")
    box.fill("a, 10, 1\nb, 10, 12\n\na, 5, 1\nc, x, 1")
    assert _errors(page, "#fc-groups-out") == [
        "Line 2: flagged (12) cannot be more than the people (10).",
        "Line 4: “a” is already the group on line 1: name each group once.",
        "Line 5: people “x” is not a number.",
    ]
    assert box.get_attribute("aria-invalid") == "true"
    box.fill("a, 10, 1\nb, 12, 6")
    assert box.get_attribute("aria-invalid") is None
    captions = page.locator("#fc-groups-out caption").all_inner_texts()
    assert "1 pairs" not in " ".join(captions) and captions[1].startswith("The pair: the exact test")
    page.locator("#fc-pvalues").fill("0.01")
    assert page.locator("#fc-pvalues-out caption").inner_text() == "1 p-value, adjusted for testing them together"
    assert "`" not in page.locator("form[data-fc-calc]").inner_text()


def test_rates_of_0_and_100_percent_get_the_exact_audit_size_not_a_false_ten_million(open_page):
    page = open_page(CALC + "?la=women&na=1&ka=1&lb=men&nb=1&kb=0")
    _power_done(page)
    text = page.locator("#fc-power-out").inner_text()
    rows = next(r for r in range(2, 1000) if permutation_test_power(1.0, 0.0, round(r / 2), r - round(r / 2)) >= 0.8)
    assert f"about {rows} people ({round(rows / 2)} women, {rows - round(rows / 2)} men)" in text
    assert "the sample-size formula has no answer" in text and "10,000,000" not in text


def test_at_a_million_people_the_interval_shows_that_it_holds_zero(open_page):
    """Issue 47: "0.0 to +0.2 pp" for an interval whose lower limit is -0.04 pp."""
    a, b = _sample(250400, 500000), _sample(249600, 500000)
    low, high = proportion_difference_ci(a, b)
    assert low < 0 < high and round(100 * low, 1) == 0  # one decimal would hide the sign
    page = open_page(CALC + "?la=women&na=500000&ka=250400&lb=men&nb=500000&kb=249600")
    shown = page.locator("#fc-two-out dd").nth(1).inner_text()
    m = re.match(r"([−+]?[\d.]+) to ([−+]?[\d.]+) pp", shown)
    assert m, shown
    lo, hi = (float(v.replace("−", "-")) for v in m.groups())
    digits = len(m.group(1).split(".")[1])
    assert lo < 0 < hi and (lo, hi) == (round(100 * low, digits), round(100 * high, digits)), shown


def test_an_interval_and_a_p_value_that_disagree_say_why(open_page):
    a, b = _sample(6, 20), _sample(1, 20)
    low, _ = proportion_difference_ci(a, b)
    assert low > 0 and permutation_test(a, b) >= 0.05  # the interval leaves out 0; the exact test does not reject
    page = open_page(CALC + "?la=women&na=20&ka=6&lb=men&nb=20&kb=1")
    note = page.locator("#fc-two-out .fc-calc-disagree")
    assert note.inner_text() == ("The interval leaves out 0, but p is above 0.05: they come from two methods (the interval is "
                                 "a score interval, the p-value an exact test), and near the 5% line they can disagree. "
                                 "For whether there is a gap, read the exact test.")
    page.locator("#fc-ka").fill("12")
    page.locator("#fc-na").fill("140")
    page.locator("#fc-kb").fill("31")
    page.locator("#fc-nb").fill("210")
    assert page.locator("#fc-two-out .fc-calc-disagree").count() == 0  # they agree: nothing to explain


# --- 15. The pages ----------------------------------------------------------------------------------

def test_no_table_on_any_page_has_an_empty_header_cell(pages, rendered_pages):
    """The data page's key/value tables had empty header cells (a screen reader announced blank
    column headings); so had the ProPublica page's table of coefficients."""
    empty = {path: len(rendered(rendered_pages, path)["empty_headers"]) for path in pages}
    assert {path: n for path, n in empty.items() if n} == {}


def _requested(page) -> list[str]:
    return page.evaluate("performance.getEntriesByType('resource').map(e => new URL(e.name).pathname)")


def test_a_page_loads_only_the_scripts_it_uses_and_the_search_index_when_search_is_used(browser, base_url):
    """Every first visit downloaded the 538 kB search index and 60 kB of calculator scripts."""
    guard = Guard()
    context, page = guarded_tab(browser, guard)
    loads = {}
    for path in (f"explainers/permutation-test-fairness-gaps/", CALC, POWER_PAGE,
                 "explainers/group-thresholds-mitigation/", "results/", "glossary/"):
        page.goto(base_url + path, wait_until="load")
        page.wait_for_load_state("networkidle")
        loads[path] = {p.rsplit("/", 1)[1] for p in _requested(page) if "/assets/" in p and p.endswith(".js")
                       and "/javascripts/" not in p} | {"search_index.json" for p in _requested(page) if "search_index" in p}
    assert loads["explainers/permutation-test-fairness-gaps/"] == {"pages.js", "terms.js"}
    # FairCalc's methods, a module each (issue 48); the calculator's modules (issue 45): the
    # numbers' writer and the equivalence tests; a figure page needs only the exact power's.
    methods = {"faircalc.js", "faircalc-core.js", "faircalc-exact.js", "faircalc-power.js"}
    assert loads[CALC] == {"pages.js", "helpers.js", *methods, "faircalc-groups.js", "faircalc-text.js", "faircalc-equivalence.js",
                           "faircalc-ui.js"}
    assert loads[POWER_PAGE] == {"pages.js", "helpers.js", *methods, "faircalc-text.js", "faircalc-figures.js", "terms.js"}
    assert {*methods, "faircalc-text.js", "faircalc-figures.js"} <= loads["explainers/group-thresholds-mitigation/"]
    assert {"pages.js", "helpers.js", "results.js"} <= loads["results/"] and not {n for n in loads["results/"] if n.startswith("faircalc")}
    # The search index comes when the reader turns to search, and search works.
    page.locator("input.md-search__input").focus()
    page.keyboard.type("permutation")
    page.wait_for_function("document.querySelector('.md-search-result__meta').textContent.includes('matching')")
    assert any("search_index.json" in p for p in _requested(page))
    assert page.locator(".md-search-result__item").count() > 0
    context.close()
    assert not guard.outside and not guard.errors, (guard.outside, guard.errors)


def test_a_significant_results_card_is_highlighted_whole_on_a_phone(browser, base_url):
    """On a phone each results row is a card: the highlight of a significant row covered each cell
    and left the gaps between them plain."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, service_workers="block")
    page = context.new_page()
    page.goto(base_url + "results/", wait_until="load")
    colours = page.locator("table[data-fc-results] tr.fc-significant").first.evaluate(
        "tr => [getComputedStyle(tr).backgroundColor, ...[...tr.cells].map(td => getComputedStyle(td).backgroundColor)]")
    context.close()
    transparent = "rgba(0, 0, 0, 0)"
    assert colours[0] != transparent and set(colours[1:]) == {transparent}, colours


@pytest.mark.parametrize("width", [1366, 390])
def test_the_404_pages_buttons_stand_apart(browser, prefixed_url, width):
    context = browser.new_context(viewport={"width": width, "height": 844}, service_workers="block")
    page = context.new_page()
    page.goto(prefixed_url + PREFIX + "no/such/page/", wait_until="load")
    first, second = (b.bounding_box() for b in page.locator("article .md-button").all())
    context.close()
    apart = max(second["x"] - (first["x"] + first["width"]), second["y"] - (first["y"] + first["height"]))
    assert apart >= 8, (first, second)  # CSS pixels between them, across or down


# Material centres the page's link in the left navigation; a link that lies partly in the solid
# part of the title's shadow and partly clear of all of it is cut.
_CUT_LINKS_JS = """() => {
    const wrap = document.querySelector('.md-sidebar--primary .md-sidebar__scrollwrap');
    const title = wrap.querySelector('.md-nav--primary > .md-nav__title');
    const [, , blur, spread] = (getComputedStyle(title).boxShadow.match(/-?[\\d.]+px/g) || []).map(parseFloat);
    const bottom = title.getBoundingClientRect().bottom;
    return {scrolled: wrap.scrollTop, cut: [...wrap.querySelectorAll('.md-nav__link')].map(a => [a, a.getBoundingClientRect()])
        .filter(([a, r]) => r.height > 0 && r.top < bottom + (spread || 0) && r.bottom > bottom + (spread || 0) + (blur || 0))
        .map(([a]) => a.textContent.trim())};
}"""


@pytest.mark.parametrize("height", [900, 768, 700])
def test_no_link_of_the_left_navigation_is_cut_by_its_title_on_a_laptop(browser, base_url, height):
    context = browser.new_context(viewport={"width": 1366, "height": height}, service_workers="block")
    page = context.new_page()
    scrolled, cut = 0, {}
    for slug in ("stratified-comparisons-simpsons-paradox", "small-samples-statistical-power", "multiple-comparisons",
                 "intersections-small-cells", "group-thresholds-mitigation", "propublica-compas-reproduced"):
        assert page.goto(base_url + f"explainers/{slug}/", wait_until="load").ok, slug
        # After Material's scroll (the first frame) and the correction (two frames later).
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(r))))")
        seen = page.evaluate(_CUT_LINKS_JS)
        scrolled += seen["scrolled"] > 0
        if seen["cut"]:
            cut[slug] = seen["cut"]
    context.close()
    assert scrolled, "the navigation never scrolled: nothing was checked"
    assert cut == {}


# --- What a reader sees ------------------------------------------------------------------------------

@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_screenshots_of_what_issue_47_changed_at_both_widths(browser, base_url, prefixed_url, scheme):
    """Screenshots to look at (tests/e2e/artifacts): the data page's tables, the 404 page, a results
    card, the Power page's figure, the calculator's messages and its progress; none scrolls sideways."""
    import os
    from pathlib import Path

    artifacts = Path(os.environ.get("FAIRSITE_SCREENSHOTS", Path(__file__).parent / "artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    shots = [("data", base_url + "data/", "article table >> nth=1"), ("404", prefixed_url + PREFIX + "no/such/page/", None),
             ("results", base_url + "results/", "table[data-fc-results] tr.fc-significant"),
             ("power-figure", base_url + POWER_PAGE, "details.fc-fig-fold"),
             ("calculator-messages", base_url + CALC + "?la=women&na=abc&ka=12&lb=men&nb=210&kb=31&groups=a,10,1;a,5,1",
              "form[data-fc-calc]"),
             ("calculator-progress", base_url + CALC + MILLION, "#fc-power-out")]
    for width, height in ((1366, 900), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme,
                                      service_workers="block")
        page = context.new_page()
        for name, url, selector in shots:
            page.goto(url, wait_until="load")
            if name == "power-figure":
                page.locator("details.fc-fig-fold > summary").click()
                page.wait_for_function("document.querySelector('[data-fc-power] .fc-fig-readout') !== null "
                                       "&& document.querySelector('[data-fc-power] .fc-fig-readout').textContent.length > 0")
            if name == "calculator-progress":
                page.locator("#fc-power-out button").click()
                page.wait_for_function("document.querySelector('#fc-power-out progress') !== null "
                                       "&& document.querySelector('#fc-power-out progress').value > 0")
            assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{name} scrolls sideways at {width} px"
            path = str(artifacts / f"issue47-{name}-{width}-{scheme}.png")
            if selector:
                page.locator(selector).first.screenshot(path=path)
            else:
                page.screenshot(path=path, full_page=True)
        context.close()
