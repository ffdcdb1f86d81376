"""The two example audit reports of the real site (issue 46), built from a fresh copy of the
repository (`site_root`): pages in the navigation after the explainers, records that verify (and
one that does not when a number is changed), an export that works from file:// with the network
off, and a print (the print stylesheet, and Chromium's PDF).

Expected values come from the data files read with pandas and from the manifests, never from the
page under test. Screenshots and the PDF go to tests/e2e/artifacts/ for a person to look at.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from site_src import cli
from tests.pdf_text import pdf_pages, squeezed

ARTIFACTS = Path(__file__).parent / "artifacts"
REPORTS = {"compas-ll144": "data/compas-scores-two-years.csv", "adult-ll144": "data/adult.data"}
COMPAS = "compas-ll144"


def _record(site_root: Path, slug: str) -> dict:
    return json.loads((site_root / "site" / "reports" / slug / "report.json").read_text(encoding="utf-8"))


def test_both_reports_are_pages_in_a_section_after_the_explainers(site_root):
    home = (site_root / "site" / "index.html").read_text(encoding="utf-8")
    nav = home[home.index("md-nav--primary"):]
    explainers = nav.index("explainers/permutation-test-fairness-gaps/")
    for slug in REPORTS:
        assert (site_root / "site" / "reports" / slug / "index.html").is_file()
        assert nav.index(f'href="reports/{slug}/"') > explainers
    assert nav.index('href="reports/"') > explainers and "Audit reports" in nav


def test_the_compas_record_counts_every_row_and_holds_its_provenance(site_root):
    record = _record(site_root, COMPAS)
    data = pd.read_csv(site_root / REPORTS[COMPAS])
    assert record["data"]["rows"] == len(data) == 7214
    race = {r["category"]: r for t in record["tables"] if t["table"] == "race/ethnicity" for r in t["rows"]}
    counts = data["race"].value_counts()
    low = data[data["decile_score"] <= 4]["race"].value_counts()
    for category, row in race.items():
        assert (row["n"], row["n_selected"]) == (counts[category], low.get(category, 0)), category
    # The 2% rule: exactly the categories under 2% of the rows are left out of the impact ratios.
    assert {c for c, r in race.items() if r["excluded"]} == {c for c in counts.index if counts[c] < 0.02 * len(data)}
    assert all(r["impact_ratio"] is None for r in race.values() if r["excluded"])
    project = record["project"]
    assert re.fullmatch(r"[0-9a-f]{40}", project["commit"]) and re.fullmatch(r"[0-9a-f]{64}", project["lock_sha256"])
    assert re.fullmatch(r"[0-9a-f]{64}", record["manifest"]["sha256"]) and record["date"][:2] == "20"


@pytest.mark.parametrize("slug", sorted(REPORTS))
def test_each_example_record_verifies_against_its_data(site_root, slug, capsys):
    record = site_root / "site" / "reports" / slug / "report.json"
    assert cli.main(["audit", "verify", str(record), "--data", str(site_root / REPORTS[slug])]) == 0
    assert "verified: every number" in capsys.readouterr().out


def test_a_record_with_one_number_changed_does_not_verify_and_names_it(site_root, tmp_path, capsys):
    record = _record(site_root, COMPAS)
    row = next(r for t in record["tables"] if t["table"] == "race/ethnicity" for r in t["rows"]
               if r["category"] == "African-American")
    row["n_selected"] += 1
    changed = tmp_path / "report.json"
    changed.write_text(json.dumps(record), encoding="utf-8")
    capsys.readouterr()
    assert cli.main(["audit", "verify", str(changed), "--data", str(site_root / REPORTS[COMPAS])]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert f"race/ethnicity / African-American: n_selected: recorded {row['n_selected']}, recomputed " \
           f"{row['n_selected'] - 1}" in out


@pytest.fixture(scope="module")
def exported(site_root, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / COMPAS
    assert cli.main(["--root", str(site_root), "audit", "export", COMPAS, "--out", str(out)]) == 0
    return out


class _Offline:
    """A browser context with the network off: every request that is not a file of the export is
    aborted and recorded, as is every request that failed and every error in the console."""

    def __init__(self, browser, **options):
        self.context = browser.new_context(offline=True, service_workers="block", **options)
        self.outside, self.failed, self.errors = [], [], []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("requestfailed", lambda r: self.failed.append(f"{r.url}: {r.failure}"))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def check(self):
        assert (self.outside, self.failed, self.errors) == ([], [], [])


def test_the_export_opens_from_file_with_the_network_off(browser, exported, site_root):
    offline = _Offline(browser, viewport={"width": 1366, "height": 900})
    try:
        page = offline.page
        loaded = []
        page.on("requestfinished", lambda r: loaded.append(r.url))
        page.goto(exported.joinpath("index.html").as_uri(), wait_until="load")
        assert page.locator("h1").first.is_visible()
        assert page.locator("table.fc-report-table").count() == 3
        categories = page.locator("table.fc-report-table").nth(1).locator("tbody th").all_inner_texts()
        assert set(categories) == set(pd.read_csv(site_root / REPORTS[COMPAS])["race"].unique())
        # The stylesheets loaded from the folder and apply: Material's type, the report's tables.
        assert any(u.endswith("/assets/report.css") for u in loaded) and all(u.startswith("file://") for u in loaded)
        numeric = page.locator("table.fc-report-table").first.evaluate("t => getComputedStyle(t).fontVariantNumeric")
        assert numeric == "tabular-nums"
        assert page.locator(".md-sidebar, .md-header, script").count() == 0
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "report-export-file-1366.png"), full_page=True)
        offline.check()
    finally:
        offline.context.close()


def _print_rules(page) -> dict:
    return page.evaluate("""() => {
        const shown = sel => [...document.querySelectorAll(sel)].filter(e => getComputedStyle(e).display !== 'none').length;
        const rows = [...document.querySelectorAll('table.fc-report-table tr')];
        return {nav: shown('.md-header, .md-tabs, .md-sidebar, .md-footer, .fc-back'),
                rows: rows.length,
                whole: rows.filter(r => getComputedStyle(r).breakInside === 'avoid').length,
                heads: [...document.querySelectorAll('table.fc-report-table thead')].map(h => getComputedStyle(h).display)};
    }""")


def test_the_report_page_prints_without_navigation_and_no_row_split(open_page):
    page = open_page(f"reports/{COMPAS}/")
    assert _print_rules(page)["nav"] > 0  # on screen, the navigation is there
    page.emulate_media(media="print")
    rules = _print_rules(page)
    assert rules["nav"] == 0 and rules["rows"] > 20 and rules["whole"] == rules["rows"]
    assert rules["heads"] == ["table-header-group"] * 3  # repeated on each printed page a table spans


def test_the_export_prints_to_a_pdf_with_the_tables(browser, exported, site_root):
    offline = _Offline(browser)
    try:
        page = offline.page
        page.goto(exported.joinpath("index.html").as_uri(), wait_until="load")
        page.emulate_media(media="print")
        rules = _print_rules(page)
        assert rules["whole"] == rules["rows"] > 20 and rules["heads"] == ["table-header-group"] * 3
        pdf = page.pdf(format="A4", print_background=True)
        offline.check()
    finally:
        offline.context.close()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "report-export.pdf").write_bytes(pdf)
    assert pdf.startswith(b"%PDF-")
    pages = pdf_pages(pdf)
    assert len(pages) >= 2
    text = squeezed("".join(pages))
    import yaml

    front = (site_root / "reports" / COMPAS / "report.md").read_text(encoding="utf-8").split("\n---\n", 1)[0]
    assert squeezed(yaml.safe_load(front.removeprefix("---\n"))["title"]) in squeezed(pages[0])
    for category in ("African-American", "Caucasian", "NativeAmerican"):  # a table's categories, printed
        assert category in text, category
    # Each table's header row is printed on every page the table's rows are on.
    for number, page_text in enumerate(pages):
        if "Holm:" in page_text:  # a tested row of a table is on this page
            assert squeezed("Exact test (Holm-adjusted)") in squeezed(page_text), number


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_the_tables_scroll_in_their_box_and_their_captions_stay_in_view(browser, base_url, scheme):
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme=scheme, service_workers="block")
    try:
        page = context.new_page()
        page.goto(base_url + f"reports/{COMPAS}/", wait_until="load")
        seen = page.evaluate("""() => ({
            page: document.documentElement.scrollWidth, width: window.innerWidth,
            boxes: [...document.querySelectorAll('.fc-report-scroll')].map(b => ({
                overflow: getComputedStyle(b).overflowX, scrolls: b.scrollWidth > b.clientWidth,
                right: b.getBoundingClientRect().right})),
            captions: [...document.querySelectorAll('table.fc-report-table caption, .fc-report-caption')].map(c => c.getBoundingClientRect().right)})""")
        assert seen["page"] <= seen["width"]  # the page itself never scrolls sideways: nothing is cut
        assert len(seen["boxes"]) == 3 and all(b["overflow"] == "auto" and b["right"] <= seen["width"]
                                               for b in seen["boxes"])
        assert any(b["scrolls"] for b in seen["boxes"])  # at 390 px the wide tables scroll in their box
        assert len(seen["captions"]) == 3 and max(seen["captions"]) <= seen["width"]
        ARTIFACTS.mkdir(exist_ok=True)
        page.locator(".fc-report-caption").nth(1).scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / f"report-compas-390-{scheme}.png"))
    finally:
        context.close()


@pytest.mark.parametrize("path", [f"reports/{COMPAS}/", "explainers/reading-a-bias-audit-report/", "check-a-gap/"])
def test_on_a_phone_every_box_that_scrolls_sideways_is_reached_by_keyboard(browser, base_url, path):
    """A reader's review (issue 47): at 390 px axe found a serious scrollable-region-focusable on
    the report's excluded-categories table and the explainer's table (Material's scroll wrappers
    and code blocks are not in the tab order); pages.js gives each box that overflows tabindex 0."""
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(viewport={"width": 390, "height": 844}, service_workers="block")
    try:
        page = context.new_page()
        page.goto(base_url + path, wait_until="load")
        page.wait_for_function("() => window.fcOnEveryPage !== undefined")
        found = [(v["id"], [n["target"] for n in v["nodes"]]) for v in Axe().run(page).response["violations"]
                 if v["id"] == "scrollable-region-focusable"]
        assert found == [], found
    finally:
        context.close()
