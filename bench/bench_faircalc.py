"""Time FairCalc (site_src/templates/assets/faircalc.js and its methods' modules) in Chromium (issue 29).

Run from the repository root:  python bench/bench_faircalc.py

Loads the scripts into a blank page of Debian's Chromium (/usr/bin/chromium, through Playwright)
and prints, for 10^6 people (500,000 in each group), the time of an exact two-sided p-value
(``FairCalc.compare``: the issue's target is under 100 ms), the first call alone and the mean of
200 calls (the browser's clock is coarsened to about 0.1 ms, so single fast calls read as 0);
and, for scale, the exact power of the exact test at 10^4 and 10^6 people and the minimum
detectable gap at 10^4. For comparison, the library's exact test on the same counts in Python.
Then issue 47's case, 1,000,000 against 1,000,000 people (50% against 49.9%), computed as the
calculator page computes it, off the page's thread (``FairCalc.background``, a Web Worker): the
time of the power, the minimum detectable gap and the audit size, and the longest the page's own
thread went without running a task meanwhile (it froze for all of it before: 101 s on the
reader's laptop). Nothing here is asserted: tests/e2e/test_faircalc.py checks the numbers.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from faircode.significance import permutation_test

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "site_src" / "templates" / "assets"
# FairCalc and the modules of the methods timed here, in the order the site loads them (assets/pages.js).
SCRIPTS = ("faircalc.js", "faircalc-core.js", "faircalc-exact.js", "faircalc-power.js")
CHROMIUM = "/usr/bin/chromium"

TIMING = """() => {
    const FC = window.FairCalc, out = {};
    let t0 = performance.now();
    FC.compare(250300, 500000, 249700, 500000);
    out.p_first = performance.now() - t0;
    t0 = performance.now();
    for (let i = 0; i < 200; i++) FC.compare(250300 + i, 500000, 249700, 500000);
    out.p_mean = (performance.now() - t0) / 200;
    t0 = performance.now();
    FC.compare(400000, 500000, 350000, 500000);
    out.p_tiny = performance.now() - t0;
    t0 = performance.now();
    FC.power(0.10, 0.12, 5000, 5000);
    out.power_1e4 = performance.now() - t0;
    t0 = performance.now();
    FC.power(0.10, 0.12, 500000, 500000);
    out.power_1e6 = performance.now() - t0;
    t0 = performance.now();
    FC.detectableGap(5000, 5000, 0.10);
    out.mdg_1e4 = performance.now() - t0;
    return out;
}"""

BACKGROUND = """async () => {
    const FC = window.FairCalc, out = {};
    let longest = 0, last = performance.now(), running = true;
    (function tick() {
        const now = performance.now();
        longest = Math.max(longest, now - last);
        last = now;
        if (running) setTimeout(tick, 0);
    })();
    for (const [name, method, args] of [["power", "power", [0.5, 0.499, 1000000, 1000000]],
                                        ["mdg", "detectableGap", [1000000, 1000000, 0.499, {xtol: 1e-6}]],
                                        ["size", "auditSize", [0.5, 0.499, 0.5]]]) {
        const t0 = performance.now();
        await FC.background(method, args).result;
        out[name] = performance.now() - t0;
    }
    running = false;
    out.longest_block = longest;
    return out;
}"""


def main() -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.set_content("<!doctype html><title>bench</title>")
        for name in SCRIPTS:
            page.add_script_tag(content=(ASSETS / name).read_text(encoding="utf-8"))
        t = page.evaluate(TIMING)
        bg = page.evaluate(BACKGROUND)
        browser.close()
    a = np.r_[np.ones(250300), np.zeros(500000 - 250300)]
    b = np.r_[np.ones(249700), np.zeros(500000 - 249700)]
    start = time.perf_counter()
    permutation_test(a, b)
    python_ms = 1000 * (time.perf_counter() - start)
    print("FairCalc in Chromium, 10^6 people (500,000 a group):")
    print(f"  exact p-value: first call {t['p_first']:.2f} ms, mean of 200 calls {t['p_mean']:.3f} ms "
          f"(target < 100 ms); p below 10^-300: {t['p_tiny']:.2f} ms")
    print(f"  faircode.significance.permutation_test on the same counts (Python, 0/1 arrays): {python_ms:.1f} ms")
    print(f"  exact power: {t['power_1e4']:.0f} ms at 10^4 people, {t['power_1e6']:.0f} ms at 10^6")
    print(f"  minimum detectable gap (exact power, Brent's method) at 10^4 people: {t['mdg_1e4']:.0f} ms")
    print("Issue 47's case, 10^6 against 10^6 people, in the background (a Web Worker):")
    print(f"  power {bg['power'] / 1000:.1f} s, minimum detectable gap {bg['mdg'] / 1000:.1f} s, audit size "
          f"{bg['size'] / 1000:.1f} s; the page's own thread went at most {bg['longest_block']:.0f} ms without a task")


if __name__ == "__main__":
    main()
