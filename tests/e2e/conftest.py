"""Fixtures for the end-to-end tests: the real site, built once in a copy of the repository,
served on localhost, and driven by Debian's Chromium through Playwright (no browser download).

Each page a test opens is guarded: a request for anything but the local server is aborted and
recorded, console errors and uncaught exceptions are recorded, and ``open_page`` asserts both
lists are empty when the test ends.

Tests that only read what every page shows take it from ``rendered_pages``: each page visited
once per test run (guarded the same way; `rendered` asserts the same), where each test loaded every
page itself. The contrast tests check one code token of each style per code block
(`contrast_context`), where axe checked thousands of tokens styled alike. A test that reads many
pages opens them in turn in one tab (`visit_in_turn`; its requests watched, not routed), and one
that reads every page is split into tests of a part of the pages each (`share`), which
pytest-xdist runs on several workers at once (issue 26).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
_CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"]
# What a fresh clone would hold: no caches, no previous output, no virtualenv.
_NOT_COPIED = shutil.ignore_patterns(".git", ".cache", "site", "docs", ".venv", ".fairsite-stage", ".fairsite.lock",
                                     ".hypothesis", ".pytest_cache", "__pycache__", "*.egg-info", "artifacts")


def pytest_collection_modifyitems(config, items):
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`, as .ci/run does)"
        for item in items:
            if "e2e" in item.nodeid:
                item.add_marker(pytest.mark.skip(reason=reason))


def _in_ci() -> bool:
    # CI services set CI=true (GitHub Actions, GitLab, .ci/run); "0", "false" and "" mean a local run.
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI a skipped browser test is a failure: a missing Chromium or Playwright must not
    leave the suite green with the browser tests quietly not run."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and _in_ci() and "e2e" in item.nodeid and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"browser test skipped under CI (CI={os.environ['CI']}): {reason}"


def _made_once(request, tmp_path_factory, name: str, make):
    """``make(folder)``'s result, made once per test run: in this session, or under pytest-xdist by
    the first worker to ask, holding a lock in the run's shared temporary folder while the others
    wait (the pattern pytest-xdist documents for a session fixture made once), then read by all.
    ``make`` returns a Path inside ``folder``, or JSON-able data kept in ``folder/data.json``."""
    if getattr(request.config, "workerinput", None) is None:  # one process: this session's own
        return make(tmp_path_factory.mktemp(name))
    shared = tmp_path_factory.getbasetemp().parent / name  # one folder per run, all workers
    shared.mkdir(exist_ok=True)
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        done = shared / "built"
        if not done.exists():
            made = make(shared)
            if not isinstance(made, Path):
                (shared / "data.json").write_text(json.dumps(made))
            done.write_text(json.dumps(str(made) if isinstance(made, Path) else None))
        made = json.loads(done.read_text())
    return Path(made) if made is not None else json.loads((shared / "data.json").read_text())


@pytest.fixture(scope="session")
def site_root(request, tmp_path_factory) -> Path:
    """A copy of the repository with the real site built in it (``site/``), once per test run.

    Under pytest-xdist the browser test files run on several workers; the first to ask builds the
    site in the run's shared temporary folder while holding a lock, and the others wait and read
    the same build (the pattern pytest-xdist documents for a session fixture made once). The tests
    only read it.
    """
    return _made_once(request, tmp_path_factory, "e2e-real-site", _build_real_site)


def _build_real_site(folder: Path) -> Path:
    """Copy the repository into ``folder/repo`` as a fresh clone would hold it, commit it and build the site."""
    from site_src.build import BuildOptions, build

    root = folder / "repo"
    shutil.rmtree(root, ignore_errors=True)  # a build that failed half-way
    shutil.copytree(REPO, root, ignore=_NOT_COPIED)
    # A clone has a commit: the pages name it (footer, "Source and verify"), so make one.
    git = ["git", "-C", str(root), "-c", "user.name=e2e", "-c", "user.email=e2e@localhost", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "e2e"], check=True)
    os.environ.setdefault("MPLBACKEND", "Agg")
    build(BuildOptions(root=root, jobs=2))
    return root


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@contextlib.contextmanager
def serve(handler_class, directory: Path):
    """Serve ``directory`` with ``handler_class`` on a free localhost port; yields the base URL (no slash)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler_class, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="session")
def base_url(site_root):
    """The built site served on a free localhost port for the whole session."""
    with serve(_QuietHandler, site_root / "site") as url:
        yield url + "/"


@pytest.fixture(scope="session")
def pages(site_root) -> list[str]:
    """Every page of the built site, as paths relative to its root ("" for the home page)."""
    site = site_root / "site"
    paths = sorted(p.relative_to(site).parent.as_posix() + "/" for p in site.rglob("index.html"))
    return ["" if p == "./" else p for p in paths]


def share(items: list, part: int, parts: int) -> list:
    """Part ``part`` (0 to ``parts`` - 1) of ``items`` split into ``parts`` that together hold every
    item once: every ``parts``-th item from the ``part``-th on (items of similar cost, sorted by
    name, are spread evenly). A test over every page that takes minutes is ``parts`` tests, one per
    part, which pytest-xdist runs on several workers at once (tests/conftest.py); the part a test
    checks is never empty, so none passes having checked nothing.
    """
    if not 0 <= part < parts:
        raise ValueError(f"part must be in [0, {parts}), got {part}")
    mine = items[part::parts]
    assert mine, f"{len(items)} items cannot be split into {parts} parts that each hold one"
    return mine


PREFIX = "/fair-code/"  # the path of the default site_url: where project pages serve the site


def prefixed_handler(prefix: str):
    """A handler serving the site under ``prefix`` (its directory given to `serve`), as project
    pages serve it: anything else, or a missing file, gets the site's 404.html with status 404."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            pass

        def send_head(self):
            path = urlsplit(self.path).path
            if path.startswith(prefix):
                self.path = "/" + path[len(prefix):]
                target = Path(self.translate_path(self.path))
                if target.is_file() or (target / "index.html").is_file():
                    return super().send_head()
            body = (Path(self.directory) / "404.html").read_bytes()
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None

    return Handler


_PrefixHandler = prefixed_handler(PREFIX)


@pytest.fixture
def prefixed_url(site_root):
    """The built site served under PREFIX, with GitHub-Pages-style 404s; the URL has no slash."""
    with serve(_PrefixHandler, site_root / "site") as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=_CHROMIUM_ARGS)
        yield browser
        browser.close()


class Guard:
    """What went wrong on the pages of one test: requests that left localhost, console errors.
    ``at``, when set, is the page being read (its path), and each entry then names it."""

    def __init__(self):
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.at: str | None = None

    def _named(self, what: str) -> str:
        return what if self.at is None else f"{self.at or 'home'}: {what}"

    def route(self, route):
        host = urlsplit(route.request.url).hostname
        if host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            self.outside.append(self._named(route.request.url))
            route.abort()

    def request(self, request):
        """Record a request that leaves localhost, as `route` does, without stopping it: for a tab
        that is not routed (`visit_in_turn`), since routing turns the browser's cache off."""
        parts = urlsplit(request.url)
        if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in ("127.0.0.1", "localhost"):
            self.outside.append(self._named(request.url))

    def console(self, msg):
        if msg.type == "error":
            self.errors.append(self._named(f"console: {msg.text} ({msg.location.get('url', '')})"))

    def uncaught(self, exc):
        self.errors.append(self._named(f"uncaught: {exc}"))


def guarded_tab(browser, guard: Guard, **options):
    """A tab whose requests, console errors and uncaught exceptions `guard` records (watched, not
    routed: Playwright does not route file:// requests). Returns ``(context, page)``."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block", **options)
    page = context.new_page()
    page.on("request", guard.request)
    page.on("console", guard.console)
    page.on("pageerror", guard.uncaught)
    return context, page


@pytest.fixture
def open_page(browser, base_url):
    """``open_page(path, color_scheme="light")`` -> a Playwright page at ``base_url + path``, guarded."""
    guard = Guard()
    contexts = []

    def _open(path: str = "", *, color_scheme: str = "light"):
        context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=color_scheme,
                                      accept_downloads=True, service_workers="block")
        contexts.append(context)
        context.route("**/*", guard.route)
        page = context.new_page()
        page.on("console", guard.console)
        page.on("pageerror", guard.uncaught)
        response = page.goto(base_url + path, wait_until="load")
        assert response is not None and response.ok, f"{path}: HTTP {response.status if response else 'no response'}"
        return page

    yield _open
    for context in contexts:
        context.close()
    assert not guard.outside, f"requests left localhost: {guard.outside}"
    assert not guard.errors, f"errors in the browser: {guard.errors}"


def visit_in_turn(browser, base_url: str, paths, *, color_scheme: str = "light"):
    """Open ``base_url + path`` for each of ``paths`` in turn in one tab, as a reader following links
    would, and yield ``(path, page)`` once each has loaded (HTTP 2xx); then assert that no request
    left localhost and nothing went wrong in the browser (console errors, uncaught exceptions) on
    any of them, each named with the page it happened on.

    What `open_page` checks, for tests that read many pages: a new browser context for each page,
    with its requests routed through `Guard.route`, fetches and compiles every style sheet and
    script again (routing turns the cache off) and starts a new renderer, about half a second of
    CPU a page on a 2-core machine (12 loads of 4 pages: 10 to 12 s in a context each, 5 to 8 s in
    one tab, issue 26). Here requests are watched (`Guard.request`), not routed: one leaving
    localhost fails the test after it has gone out instead of being stopped.
    """
    guard = Guard()
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=color_scheme,
                                  service_workers="block")
    try:
        page = context.new_page()
        page.on("request", guard.request)
        page.on("console", guard.console)
        page.on("pageerror", guard.uncaught)
        for path in paths:
            guard.at = path
            response = page.goto(base_url + path, wait_until="load")
            assert response is not None and response.ok, f"{path}: HTTP {response.status if response else 'no response'}"
            yield path, page
    finally:
        context.close()
    assert not guard.outside, f"requests left localhost: {guard.outside}"
    assert not guard.errors, f"errors in the browser: {guard.errors}"


# --- Every page, visited once for the tests that only read it --------------------------------------

# The reference sections every explainer ends with (citations, where the code lives and how to
# check it, links onward) are looked up, not read through: they do not count towards the length.
REFERENCE_SECTIONS = ("further-reading", "source-and-verify", "related")

# The issue-17 count of what a reader sees of the article without opening anything: hidden
# elements, closed <details> (their summary line shows), code, SVG, heading permalinks and the
# reading-time line do not count. With `unfolded` true, every fold is opened first (issue 47: what
# a reader who opens the folds reads).
VISIBLE_WORDS_JS = """([article, reference, unfolded]) => {
    const clone = article.cloneNode(true);
    if (unfolded) clone.querySelectorAll('details').forEach(d => d.setAttribute('open', ''));
    for (const id of reference) {  // the heading and everything up to the next h2
        const h = clone.querySelector('h2#' + id);
        if (!h) continue;
        let next = h.nextElementSibling;
        while (next && next.tagName !== 'H2') { const n = next.nextElementSibling; next.remove(); next = n; }
        h.remove();
    }
    clone.querySelectorAll('details:not([open])').forEach(d => {
        const summary = d.querySelector(':scope > summary');
        d.replaceWith(summary ? summary.textContent : '');
    });
    clone.querySelectorAll('[hidden], pre, code, svg, script, style, a.headerlink, .fc-reading-time').forEach(e => e.remove());
    return clone.textContent.split(/\\s+/).filter(w => /[\\p{L}\\p{N}]/u.test(w)).length;
}"""

# What the tests of `rendered_pages` read of a page, as they would through Playwright's locators:
# innerText (Playwright's inner_text), attribute values, and every match (the tests check there is
# exactly one where a locator would have insisted on one). Links into the site are kept relative to
# the site's root: under pytest-xdist another worker, serving the site on another port, reads them.
_READ_PAGE_JS = """([base, reference]) => {
    const all = sel => [...document.querySelectorAll(sel)];
    const inSite = href => href.startsWith(base) ? href.slice(base.length) : href;
    return {
        footers: all('footer').map(f => f.innerText),
        source_links: all('header a.md-source[href]').map(a => a.getAttribute('href')),
        build_links: all('footer .fc-build a[href]').map(a => [a.getAttribute('href'), a.innerText]),
        article_paths: all('article a[href]').map(a => new URL(a.href).pathname),
        verify_blocks: all('.fc-source').map(b => ({text: b.innerText,
                                                    hrefs: [...b.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))})),
        figures: all('figure.fc-figure').map(f => [...f.querySelectorAll('a.glightbox')].map(
            a => ({href: inSite(a.href), images: a.querySelectorAll('img').length}))),
        reading_times: all('article .fc-reading-time').map(e => e.innerText),
        reference_headings: Object.fromEntries(reference.map(id => [id, all('article h2#' + id).length])),
        cards: all('.fc-cards li').map(li => ({hrefs: [...li.querySelectorAll('a[href]')].map(a => a.getAttribute('href')),
                                              times: [...li.querySelectorAll('.fc-card-time')].map(e => e.innerText)})),
        empty_headers: all('article th').filter(th => !th.textContent.trim()).map(th => th.closest('table').innerText.slice(0, 60)),
    };
}"""


def _read_pages(browser, base_url: str, paths) -> dict[str, dict]:
    """Each of ``paths`` visited once, in one tab (`visit_in_turn` says why), with a guard of its
    own (as `open_page` guards a page, but watching requests instead of routing them): what the page
    shows, and what went wrong on it."""
    guard = [Guard()]  # the one of the page being read
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light",
                                  service_workers="block")
    reads = {}
    try:
        page = context.new_page()
        page.on("request", lambda request: guard[0].request(request))
        page.on("console", lambda msg: guard[0].console(msg))
        page.on("pageerror", lambda exc: guard[0].uncaught(exc))
        for path in paths:
            guard[0] = Guard()
            response = page.goto(base_url + path, wait_until="load")
            read = {"status": response.status if response is not None else None,
                    "h1_visible": page.locator("h1").first.is_visible()}
            read.update(page.evaluate(_READ_PAGE_JS, [base_url, list(REFERENCE_SECTIONS)]))
            article = page.locator("article")
            for key, unfolded in (("visible_words", False), ("unfolded_words", True)):
                read[key] = (page.evaluate(VISIBLE_WORDS_JS, [article.first.element_handle(), list(REFERENCE_SECTIONS),
                                                              unfolded])
                             if article.count() else None)
            read["outside"], read["errors"] = guard[0].outside, guard[0].errors
            reads[path] = read
    finally:
        context.close()
    return reads


@pytest.fixture(scope="session")
def rendered_pages(request, tmp_path_factory, browser, base_url, pages) -> dict[str, dict]:
    """Every page of the site as the browser rendered it, read once per test run for all the tests
    that only read the rendered pages (``{path: what _READ_PAGE_JS read, with "status",
    "h1_visible", "visible_words", "unfolded_words", "outside" and "errors"}``); get a page's with `rendered`.

    Each of those tests loaded every page itself, up to 40 s each for the same reads; under
    pytest-xdist the first worker to ask reads the pages and the others wait for its reading.
    """
    return _made_once(request, tmp_path_factory, "e2e-rendered-pages",
                      lambda folder: _read_pages(browser, base_url, pages))


def rendered(rendered_pages: dict[str, dict], path: str) -> dict:
    """What ``path``'s page showed, after the checks `open_page` makes: it loaded (HTTP 2xx), no
    request left localhost, no console error or uncaught exception."""
    assert path in rendered_pages, f"{path or 'home'}: not a page of the built site"
    read = rendered_pages[path]
    assert read["status"] is not None and 200 <= read["status"] < 300, f"{path}: HTTP {read['status']}"
    assert not read["outside"], f"{path or 'home'}: requests left localhost: {read['outside']}"
    assert not read["errors"], f"{path or 'home'}: errors in the browser: {read['errors']}"
    return read


# --- Contrast: each code token's style checked once ------------------------------------------------

# The contrast of a Pygments token in a code block is decided by its CSS alone: the same chain of
# elements and classes (its own up to the `.highlight` block) in the same block has the same
# colour, background and font. An explainer with its code open is thousands of token spans of
# some twenty classes (91% of the elements of the largest page), and axe's contrast check on each
# was most of the contrast tests' time. So in each block one span per chain is checked: the first
# that axe-core 4.12's color-contrast rule gives a verdict on, that is with at least two
# characters of its own text (one character is "too short", never a violation), a letter or digit
# among them (text that is only punctuation is skipped), laid out inside its <code>/<pre>
# (a span scrolled out of view is not checked) and clear of what is positioned over the block
# (the copy button: an overlap makes the verdict "incomplete"). Left out of axe's context: the
# other spans of a chain that has such a first one; spans of a chain axe gives no verdict on
# anywhere (its text is only white space and punctuation, or one character); elements with no
# text at all (the line anchors). An element is left out only with all its children.
#
# Few entries in the context keep axe fast (it compares every node with every entry): where the
# <code> element has no text of its own to check, it is excluded whole and what is kept in it is
# included again (axe includes a node whose nearest include lies inside its nearest exclude).
_MARK_REPEATED_CODE_TOKENS_JS = r"""() => {
    const ownText = e => [...e.childNodes].filter(c => c.nodeType === 3).map(c => c.nodeValue).join('')
        .replace(/\s+/g, ' ').trim();
    // axe's "punctuations" (removeUnicode in axe-core 4.12), and white space.
    const PUNCTUATION = /[\s\u2000-\u206F\u2E00-\u2E7F\\'!"#$%&\xa3\xa2\xa5\xa7\u20ac()*+,\-.\/:;<=>?@\[\]^_`{|}~\xb1]/g;
    const mayFail = e => { const t = ownText(e); return t.length >= 2 && t.replace(PUNCTUATION, '') !== ''; };
    const inside = (r, o) => r.left >= o.left && r.right <= o.right && r.top >= o.top && r.bottom <= o.bottom;
    const meets = (r, o) => r.left < o.right && o.left < r.right && r.top < o.bottom && o.top < r.bottom;
    const counts = {blocks: 0, checked: 0, skipped: 0};
    for (const block of document.querySelectorAll('.highlight')) {
        const code = block.querySelector('pre > code');
        if (!code) continue;
        counts.blocks++;
        const clips = [code.getBoundingClientRect(), code.parentElement.getBoundingClientRect()];
        const covers = [...block.querySelectorAll('*')]
            .filter(e => ['absolute', 'fixed', 'sticky'].includes(getComputedStyle(e).position))
            .map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0);
        const inner = [...code.querySelectorAll('*')];
        const keyOf = new Map();
        for (const e of inner) {
            if (e.tagName !== 'SPAN') continue;
            const chain = [];
            for (let a = e; a !== block; a = a.parentElement) chain.push(a.tagName + '.' + a.className);
            keyOf.set(e, chain.join(' < '));
        }
        const first = new Map(), judged = new Set();
        for (const [e, key] of keyOf) {
            if (!mayFail(e)) continue;
            judged.add(key);
            if (first.has(key) || !/[\p{L}\p{N}]/u.test(ownText(e))) continue;
            const r = e.getBoundingClientRect();
            if (r.width === 0 || r.height === 0 || !clips.every(c => inside(r, c)) || covers.some(c => meets(r, c))) continue;
            first.set(key, e);
        }
        const firsts = new Set(first.values());
        const skip = new Set();
        for (const e of inner.reverse()) {  // children before their parents
            const key = keyOf.get(e);
            const repeat = key !== undefined && !firsts.has(e) && (first.has(key) || !judged.has(key));
            if ((repeat || e.textContent.trim() === '') && [...e.children].every(c => skip.has(c))) skip.add(e);
        }
        counts.checked += inner.length - skip.size;
        counts.skipped += skip.size;
        if (mayFail(code)) {  // its own text is checked: leave the others out one by one
            skip.forEach(e => e.setAttribute('data-fc-axe-skip', ''));
            continue;
        }
        code.setAttribute('data-fc-axe-skip', '');
        for (const e of inner) {
            const inKept = e.parentElement !== code && !skip.has(e.parentElement);
            if (!skip.has(e) && !inKept) e.setAttribute('data-fc-axe-keep', '');
            else if (skip.has(e) && inKept) e.setAttribute('data-fc-axe-skip', '');
        }
    }
    return counts;
}"""


def contrast_context(page, exclude: tuple[str, ...] = ()) -> dict:
    """The axe context for the contrast rules on ``page`` (folds already open, laid out as axe will
    see it): the page, less ``exclude`` (CSS selectors) and less the code tokens whose style an
    earlier token of the same block stands for (see above). Marks the page's elements."""
    counts = page.evaluate(_MARK_REPEATED_CODE_TOKENS_JS)
    assert counts["blocks"] == 0 or counts["checked"] > 0, counts
    return {"include": [["html"], ["[data-fc-axe-keep]"]],
            "exclude": [[selector] for selector in exclude] + [["[data-fc-axe-skip]"]]}
